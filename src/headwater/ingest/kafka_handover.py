"""Consumed batches handed over to a thread that stores them, so that the consumer decodes and
validates the next batch meanwhile.

A consumer that did everything in turn left its core idle while the store appended a batch and
fsynced it: `headwater consume` used about 60% of each core (bench/kafka.py). The HTTP server
overlaps the same two halves with its group-commit writer. The consumer's thread still makes
every call on the Kafka consumer, offset commits included: confluent-kafka lets one thread at a
time into a consumer, and a commit from another thread waited, 1 ms at a time, for a `consume` to
end that the consumer's thread called again at once.

What the hand-over keeps of the consumer's promises:
- Order: one thread stores the batches, in the order they were handed over, and `stored` gives
  them back in that order, so a partition's events are appended, and its offsets committed, in
  offset order.
- Nothing lost: the consumer commits a batch's offsets only once `stored` gave it back, that is
  after it is durable. When storing a batch fails, that batch and every batch handed over after
  it are set aside unstored (`failed`), until the consumer rewinds their partitions to the
  earliest offset among them (`rewind_offsets`) and `resume`s.
- Memory stays bounded: `put` returns once at most one batch waits. A batch handed over while
  one already waits is added beside it, then `put` waits for the storing thread to take them, so a
  slow store slows the consumer down instead of piling batches up: at most three batches are in
  hand (one being stored, two waiting), as many as when one waited in a queue and the consumer
  held the next.
- Batches that wait are stored together: the thread takes every batch waiting when it is free,
  and `store` writes them in one durable write. A store shared with other writers (SQLite's one
  writer, several consumer processes) then takes fewer, larger turns when it is busy, and none
  larger when it is not: a lone batch is stored alone, at once. (A queue of one could not do
  this: the thread, freed, took the waiting batch before the consumer, blocked on a full queue,
  woke up to add the next.)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

B = TypeVar("B")
K = TypeVar("K", bound=Hashable)


class Handover(Generic[B]):
    """A thread calling `store(batches)` on the batches `put` to it, in order: every batch that
    waited while the one before was stored, together. `store` returns None when the batches are
    durable, else why they are not (all of them: one write): from then on nothing is stored until
    `resume`."""

    def __init__(
        self, store: Callable[[Sequence[B]], str | None], name: str = "headwater-kafka-store"
    ) -> None:
        self._store = store
        self._waiting: list[B] = []  # handed over, not yet taken by the thread
        self._busy = False  # the thread is storing batches it took
        self._closing = False
        self._stored: list[B] = []  # durable, not yet given back by `stored`
        self._failed: list[B] = []  # the batch that failed, then the batches set aside after it
        self._reason = ""
        self._pending = 0  # handed over and not yet given back by `stored` or `failed`
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, batch: B) -> None:
        """Store the batch after those handed over before it; when another already waits, it is
        added beside that one and `put` waits until the thread takes them."""
        with self._changed:
            self._pending += 1
            self._waiting.append(batch)
            self._changed.notify_all()
            while len(self._waiting) > 1:
                self._changed.wait()

    @property
    def pending(self) -> int:
        """Batches handed over that `stored` or `failed` did not give back yet."""
        return self._pending

    @property
    def has_failed(self) -> bool:
        return bool(self._failed)

    def stored(self) -> list[B]:
        """The batches stored since the last call, in the order they were handed over."""
        with self._changed:
            done, self._stored = self._stored, []
            self._pending -= len(done)
        return done

    def drain(self) -> None:
        """Wait until every batch handed over is stored, or set aside after a failure."""
        with self._changed:
            while self._waiting or self._busy:
                self._changed.wait()

    def failed(self) -> tuple[list[B], str]:
        """After `drain`: the batch that failed and those set aside after it, in order (empty when
        none failed), and why the first one failed."""
        with self._changed:
            self._pending -= len(self._failed)
            return list(self._failed), self._reason

    def resume(self) -> None:
        """Store the batches handed over from now on (the failed ones were rewound)."""
        with self._changed:
            self._failed, self._reason = [], ""

    def close(self) -> None:
        """Store what was handed over (unless storing failed), then end the thread."""
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._waiting and not self._closing:
                    self._changed.wait()
                if not self._waiting:
                    return
                batches, self._waiting = self._waiting, []
                self._busy = True
                self._changed.notify_all()  # a `put` waiting for room returns
            try:
                self._take(batches)
            finally:
                with self._changed:
                    self._busy = False
                    self._changed.notify_all()

    def _take(self, batches: list[B]) -> None:
        with self._changed:
            if self._failed:
                self._failed += batches
                return
        try:
            reason = self._store(batches)
        except Exception as exc:  # the batches are rewound and read again, not lost
            log.exception("storing a Kafka batch failed")
            reason = f"{type(exc).__name__}: {exc}"
        with self._changed:
            if reason is None:
                self._stored += batches
            else:
                self._failed, self._reason = batches, reason


def rewind_offsets(firsts: Iterable[Mapping[K, int]]) -> dict[K, int]:
    """Where to rewind each partition of batches consumed in this order (each batch's first offset
    of each partition): the first offset of the earliest batch that holds the partition."""
    offsets: dict[K, int] = {}
    for first in firsts:
        for partition, offset in first.items():
            offsets.setdefault(partition, offset)
    return offsets
