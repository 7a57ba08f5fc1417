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
- At most one batch waits while another is stored: memory stays bounded, and a slow store slows
  the consumer down instead of piling batches up.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

B = TypeVar("B")
K = TypeVar("K", bound=Hashable)


class Handover(Generic[B]):
    """A thread calling `store(batch)` on each batch `put` to it, in order. `store` returns None
    when the batch is durable, else why it is not: from then on nothing is stored until
    `resume`."""

    def __init__(self, store: Callable[[B], str | None], name: str = "headwater-kafka-store") -> None:
        self._store = store
        self._queue: queue.Queue[tuple[B] | None] = queue.Queue(maxsize=1)
        self._stored: list[B] = []  # durable, not yet given back by `stored`
        self._failed: list[B] = []  # the batch that failed, then the batches set aside after it
        self._reason = ""
        self._pending = 0  # handed over and not yet given back by `stored` or `failed`
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, batch: B) -> None:
        """Store the batch after those handed over before it; waits while one already waits."""
        with self._lock:
            self._pending += 1
        self._queue.put((batch,))

    @property
    def pending(self) -> int:
        """Batches handed over that `stored` or `failed` did not give back yet."""
        return self._pending

    @property
    def has_failed(self) -> bool:
        return bool(self._failed)

    def stored(self) -> list[B]:
        """The batches stored since the last call, in the order they were handed over."""
        with self._lock:
            done, self._stored = self._stored, []
            self._pending -= len(done)
        return done

    def drain(self) -> None:
        """Wait until every batch handed over is stored, or set aside after a failure."""
        self._queue.join()

    def failed(self) -> tuple[list[B], str]:
        """After `drain`: the batch that failed and those set aside after it, in order (empty when
        none failed), and why the first one failed."""
        with self._lock:
            self._pending -= len(self._failed)
            return list(self._failed), self._reason

    def resume(self) -> None:
        """Store the batches handed over from now on (the failed ones were rewound)."""
        with self._lock:
            self._failed, self._reason = [], ""

    def close(self) -> None:
        """Store what was handed over (unless storing failed), then end the thread."""
        self._queue.put(None)
        self._thread.join()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                self._take(item[0])
            finally:
                self._queue.task_done()

    def _take(self, batch: B) -> None:
        with self._lock:
            if self._failed:
                self._failed.append(batch)
                return
        try:
            reason = self._store(batch)
        except Exception as exc:  # the batch is rewound and read again, not lost
            log.exception("storing a Kafka batch failed")
            reason = f"{type(exc).__name__}: {exc}"
        with self._lock:
            if reason is None:
                self._stored.append(batch)
            else:
                self._failed, self._reason = [batch], reason


def rewind_offsets(firsts: Iterable[Mapping[K, int]]) -> dict[K, int]:
    """Where to rewind each partition of batches consumed in this order (each batch's first offset
    of each partition): the first offset of the earliest batch that holds the partition."""
    offsets: dict[K, int] = {}
    for first in firsts:
        for partition, offset in first.items():
            offsets.setdefault(partition, offset)
    return offsets
