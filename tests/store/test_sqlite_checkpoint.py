"""SQLite's write-ahead log copied back into the database file by the checkpointer's thread, not by
the commits (headwater.store.sqlite.checkpoint)."""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from pathlib import Path

from headwater.events.validate import validate_event
from headwater.store.factory import open_store
from headwater.store.sqlite.store import SqliteEventStore
from tests.factories import run_event

RECEIVED = "2024-06-01T00:00:00.0000000Z"


def _in_database_file(path: Path) -> int | None:
    """Events in the database file itself, the log left out (`immutable` reads only the file);
    None while a checkpoint is writing the file (such a read may see it half written)."""
    conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM events").fetchone()[0])
    except sqlite3.OperationalError as exc:  # the schema itself is still in the log
        assert "no such table" in str(exc)
        return 0
    except sqlite3.DatabaseError:  # "malformed": caught mid-checkpoint
        return None
    finally:
        conn.close()


def _wait_in_database_file(path: Path, count: int) -> int | None:
    """What the file holds once it holds `count` events, or after 10 s."""
    deadline = time.monotonic() + 10
    while (found := _in_database_file(path)) != count and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _checkpoint_threads() -> int:
    return sum(thread.name == "headwater-checkpoint" for thread in threading.enumerate())


def test_committed_events_reach_the_database_file_without_a_commit_checkpointing(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.db"
    threads_before = _checkpoint_threads()
    store = open_store(f"sqlite:///{path}")
    assert isinstance(store, SqliteEventStore)
    try:
        for batch in range(5):
            events = [validate_event(run_event(str(uuid.uuid4()))) for _ in range(20)]
            store.append(events, RECEIVED)
            # far below the writer's wal_autocheckpoint (10,000 pages): only the thread copies them
            assert _wait_in_database_file(path, 20 * (batch + 1)) == 20 * (batch + 1)
        assert store.count_events(after_time=None, before_time=None) == 100
    finally:
        store.close()
    assert _checkpoint_threads() == threads_before  # close() ended the store's thread
