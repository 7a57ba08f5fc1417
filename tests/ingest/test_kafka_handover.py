"""The Kafka consumer's hand-over to its storing thread: batches stored in the order handed over,
the batches that waited while another was stored written together, given back once stored, and
after a failure that write's batches and every later one set aside until the consumer rewinds
them and resumes."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from headwater.ingest.kafka_handover import Handover, rewind_offsets


class Recorder:
    """A `store` that records the batches it stored, and each write's batches; it fails a write
    holding a batch named in `failing`, and waits at `gate` before storing while the gate is
    closed."""

    def __init__(self, failing: set[int] | None = None) -> None:
        self.stored: list[int] = []
        self.writes: list[list[int]] = []
        self.failing = failing or set()
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()

    def __call__(self, batches: Sequence[int]) -> str | None:
        self.entered.set()
        assert self.gate.wait(10)
        for batch in batches:
            if batch in self.failing:
                self.failing.discard(batch)
                return f"batch {batch} failed"
        self.stored += batches
        self.writes.append(list(batches))
        return None


def test_batches_are_stored_in_order_and_given_back_once() -> None:
    store = Recorder()
    handover: Handover[int] = Handover(store)
    for batch in range(20):
        handover.put(batch)
    handover.drain()
    assert store.stored == list(range(20))
    assert handover.pending == 20
    assert handover.stored() == list(range(20))
    assert handover.stored() == []
    assert handover.pending == 0
    handover.close()


def test_a_failure_sets_aside_that_batch_and_every_later_one_until_resumed() -> None:
    store = Recorder(failing={2})
    handover: Handover[int] = Handover(store)
    for batch in range(5):
        handover.put(batch)
        handover.drain()  # each batch alone: none waits for another
    assert handover.has_failed
    assert handover.stored() == [0, 1]  # stored before the failure: theirs to commit
    failed, reason = handover.failed()
    assert failed == [2, 3, 4] and reason == "batch 2 failed"
    assert store.stored == [0, 1]
    assert handover.pending == 0

    handover.resume()  # the consumer rewound them: they come again, in order
    for batch in (2, 3, 4, 5):
        handover.put(batch)
    handover.close()
    assert not handover.has_failed
    assert store.stored == [0, 1, 2, 3, 4, 5]
    assert handover.stored() == [2, 3, 4, 5]


def test_an_exception_counts_as_a_failure_with_its_message(caplog: pytest.LogCaptureFixture) -> None:
    def store(batches: Sequence[int]) -> str | None:
        raise RuntimeError("disk on fire")

    handover: Handover[int] = Handover(store)
    handover.put(1)
    handover.drain()
    assert handover.failed() == ([1], "RuntimeError: disk on fire")
    assert "storing a Kafka batch failed" in caplog.text
    handover.close()


def test_one_batch_waits_while_another_is_stored() -> None:
    store = Recorder()
    store.gate.clear()
    handover: Handover[int] = Handover(store)
    handover.put(1)
    assert store.entered.wait(10)  # batch 1 is being stored
    handover.put(2)  # waits in the queue
    third = threading.Thread(target=handover.put, args=(3,))
    third.start()
    third.join(0.3)
    assert third.is_alive()  # a third batch is held back: memory stays bounded
    store.gate.set()
    third.join(10)
    assert not third.is_alive()
    handover.close()
    assert store.stored == [1, 2, 3]


def _put_aside(handover: Handover[int], batch: int) -> threading.Thread:
    """Hand the batch over from a thread of its own (`put` waits when a batch already waits), and
    return once it was added."""
    before = handover.pending
    thread = threading.Thread(target=handover.put, args=(batch,))
    thread.start()
    for _ in range(1000):
        if handover.pending > before:
            break
        thread.join(0.01)
    assert handover.pending > before
    return thread


def test_the_batches_that_waited_are_stored_together() -> None:
    store = Recorder()
    store.gate.clear()
    handover: Handover[int] = Handover(store)
    handover.put(1)
    assert store.entered.wait(10)  # batch 1 is being stored, alone: nothing else waited
    handover.put(2)  # waits while 1 is stored
    third = _put_aside(handover, 3)  # beside it, and its `put` waits
    third.join(0.2)
    assert third.is_alive()
    store.gate.set()
    third.join(10)
    handover.drain()
    assert store.writes == [[1], [2, 3]]
    assert handover.stored() == [1, 2, 3]
    handover.put(4)  # nothing waits: stored alone
    handover.close()
    assert store.writes[2:] == [[4]]


def test_a_failed_write_sets_aside_every_batch_in_it_and_those_after() -> None:
    store = Recorder(failing={3})
    store.gate.clear()
    handover: Handover[int] = Handover(store)
    handover.put(1)
    assert store.entered.wait(10)
    handover.put(2)
    third = _put_aside(handover, 3)
    store.gate.set()
    third.join(10)
    handover.drain()
    handover.put(4)
    handover.drain()
    assert store.stored == [1]  # 2 was written with 3, which failed: neither is durable
    assert handover.stored() == [1]
    failed, reason = handover.failed()
    assert failed == [2, 3, 4] and reason == "batch 3 failed"
    handover.close()


def test_close_stores_what_was_handed_over() -> None:
    store = Recorder()
    handover: Handover[int] = Handover(store)
    for batch in range(3):
        handover.put(batch)
    handover.close()
    assert store.stored == [0, 1, 2]


def test_each_partition_is_rewound_to_the_earliest_batch_holding_it() -> None:
    batches = [{"a": 10, "b": 20}, {"b": 25, "c": 30}, {"a": 12, "d": 40}]
    assert rewind_offsets(batches) == {"a": 10, "b": 20, "c": 30, "d": 40}
    assert rewind_offsets([]) == {}
