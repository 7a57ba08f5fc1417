"""SQLite's read connections: lent per read from a small pool, so a server whose worker threads
come and go keeps a bounded number of connections (and of their caches)."""

from __future__ import annotations

import threading
from pathlib import Path

from headwater.events.validate import validate_event
from headwater.store.factory import open_store
from headwater.store.sqlite.store import IDLE_READERS, SqliteEventStore
from tests.factories import run_event

RECEIVED = "2024-06-01T00:00:00.0000000Z"


def _open(tmp_path: Path) -> SqliteEventStore:
    store = open_store(f"sqlite:///{tmp_path / 'readers.db'}")
    assert isinstance(store, SqliteEventStore)
    return store


def test_threads_that_come_and_go_leave_a_bounded_number_of_connections(tmp_path: Path) -> None:
    store = _open(tmp_path)
    try:
        event = validate_event(run_event())
        store.append([event], RECEIVED)
        start = threading.Barrier(20)
        found: list[bool] = []

        def read() -> None:
            start.wait()  # 20 reads at once, each on a thread that then ends
            for _ in range(5):
                found.append(store.get_event(event.event_id) is not None)

        for _round in range(10):
            threads = [threading.Thread(target=read) for _ in range(20)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        assert found == [True] * 1000
        # the writer and at most IDLE_READERS idle readers: 200 threads did not leave 200
        assert len(store._connections) <= 1 + IDLE_READERS
    finally:
        store.close()


def test_a_read_inside_a_read_uses_the_same_connection(tmp_path: Path) -> None:
    store = _open(tmp_path)
    try:
        with store._read_cursor() as outer, store._read_cursor() as inner:
            assert outer.connection is inner.connection
        with store._read_cursor() as again:  # given back, then lent again
            assert again.connection is outer.connection
    finally:
        store.close()


def test_a_snapshot_sees_one_state_and_its_connection_is_lent_again_clean(tmp_path: Path) -> None:
    store = _open(tmp_path)
    try:
        first = validate_event(run_event())
        store.append([first], RECEIVED)
        with store.snapshot():
            assert store.last_seq() == 1
            store.append([validate_event(run_event())], RECEIVED)
            assert store.last_seq() == 1  # the snapshot's state, not the newer one
        assert store.last_seq() == 2
    finally:
        store.close()
