"""The group commit (`headwater.ingest.writer`) on SQLite, where the writers of several processes
(`serve --workers N`) take turns: a request is answered only once committed, and the requests sent
while another writer holds the turn go into one commit."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from headwater.events.validate import validate_event
from headwater.ingest.writer import GroupCommitWriter
from headwater.store.factory import open_store
from headwater.store.sqlite.store import SqliteEventStore
from tests.factories import run_event

RECEIVED = "2024-06-01T00:00:00.0000000Z"


@pytest.fixture
def two_stores(tmp_path: Path) -> Iterator[tuple[SqliteEventStore, SqliteEventStore]]:
    """One SQLite file opened twice: the second stands for another process's store (each holds
    its own lock file descriptor, as another process would)."""
    url = f"sqlite:///{tmp_path / 'turns.db'}"
    ours, theirs = open_store(url), open_store(url)
    assert isinstance(ours, SqliteEventStore) and isinstance(theirs, SqliteEventStore)
    yield ours, theirs
    ours.close()
    theirs.close()


def _wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_requests_sent_while_another_writer_commits_go_into_one_commit(
    two_stores: tuple[SqliteEventStore, SqliteEventStore],
) -> None:
    ours, theirs = two_stores
    events = [validate_event(run_event()) for _ in range(3)]
    writer = GroupCommitWriter(ours)
    try:
        with theirs.write_turn():  # another process is committing
            first = writer.submit(events[:1])
            _wait_until(writer._queue.empty)  # the writer took it and waits for its turn
            later = [writer.submit(events[1:2]), writer.submit(events[2:])]
            time.sleep(0.1)
            assert not any(f.done() for f in [first, *later])  # nothing answered before its commit
        assert [f.result(timeout=5) for f in [first, *later]] == [[True], [True], [True]]
        assert writer.commits == 1  # the two sent meanwhile did not wait for a commit of their own
        assert all(ours.get_event(event.event_id) is not None for event in events)
    finally:
        writer.close()


def test_a_write_turn_keeps_other_writers_out_and_lets_its_own_transactions_in(
    two_stores: tuple[SqliteEventStore, SqliteEventStore],
) -> None:
    ours, theirs = two_stores
    mine, other = (validate_event(run_event()) for _ in range(2))
    done = threading.Event()

    def their_append() -> None:
        theirs.append([other], RECEIVED)
        done.set()

    with ours.write_turn():
        thread = threading.Thread(target=their_append)
        thread.start()
        assert ours.append([mine], RECEIVED) == [True]  # re-entered, not deadlocked
        with ours.write_turn(), ours.transaction() as cur:
            cur.execute("SELECT COUNT(*) FROM events")
            assert cur.fetchone()[0] == 1
        assert not done.wait(0.2)  # the other process waits for the turn
    assert done.wait(5)
    thread.join()
    assert ours.get_event(other.event_id) is not None


def test_a_writer_that_asks_again_at_once_does_not_keep_another_waiting(
    two_stores: tuple[SqliteEventStore, SqliteEventStore],
) -> None:
    """A lock released and asked for again at once goes back to its last holder before a waiting
    process wakes; the waiting writer must get the next turn, not wait out a run of them."""
    ours, theirs = two_stores
    turns = 0
    stop = threading.Event()

    def busy_writer() -> None:  # a worker whose next group is always waiting
        nonlocal turns
        while not stop.is_set():
            with ours.write_turn():
                turns += 1
                time.sleep(0.002)  # committing

    thread = threading.Thread(target=busy_writer)
    thread.start()
    try:
        _wait_until(lambda: turns > 0)
        waited = []
        for _ in range(10):
            asked = turns
            with theirs.write_turn():
                waited.append(turns - asked)
            time.sleep(0.005)  # the other writer's requests arrive meanwhile
    finally:
        stop.set()
        thread.join(timeout=5)
    assert max(waited) <= 3, f"turns taken by the other writer while this one waited: {waited}"
