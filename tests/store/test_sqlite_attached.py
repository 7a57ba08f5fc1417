"""SQLite's attached transactions: rows of another SQLite file copied inside SQLite, under the
store's write locks, all or nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from headwater.events.validate import validate_event
from headwater.store.factory import open_store
from headwater.store.sqlite.store import SqliteEventStore
from tests.factories import run_event

RECEIVED = "2024-06-01T00:00:00.0000000Z"


def _store(tmp_path: Path) -> SqliteEventStore:
    store = open_store(f"sqlite:///{tmp_path / 'main.db'}")
    assert isinstance(store, SqliteEventStore)
    with store.transaction() as cur:
        cur.execute("CREATE TABLE copied (k TEXT, v INTEGER)")
    return store


def _part(tmp_path: Path, rows: list[tuple[str, int]]) -> Path:
    path = tmp_path / "part.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE rows (k TEXT, v INTEGER)")
    conn.executemany("INSERT INTO rows VALUES (?, ?)", rows)
    conn.commit()
    conn.close()
    return path


def _copied(store: SqliteEventStore) -> list[tuple[str, int]]:
    with store.transaction() as cur:
        cur.execute("SELECT k, v FROM copied ORDER BY v")
        return [tuple(row) for row in cur.fetchall()]


def test_rows_of_an_attached_file_are_copied_and_the_file_is_let_go(tmp_path: Path) -> None:
    store = _store(tmp_path)
    rows = [(f"k{i}", i) for i in range(1_000)]
    part = _part(tmp_path, rows)
    with store.attached_transaction({"part": part}) as cur:
        cur.execute("INSERT INTO main.copied SELECT k, v FROM part.rows")
    assert _copied(store) == rows
    part.unlink()  # nothing holds the file any more
    # the store's own writer goes on as before
    event = validate_event(run_event())
    assert store.append([event], RECEIVED) == [True]
    store.close()


def test_a_failed_attached_transaction_leaves_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    part = _part(tmp_path, [("a", 1), ("b", 2)])
    with pytest.raises(RuntimeError), store.attached_transaction({"part": part}) as cur:
        cur.execute("INSERT INTO main.copied SELECT k, v FROM part.rows")
        raise RuntimeError("stop half-way")
    assert _copied(store) == []
    with store.attached_transaction({"part": part}) as cur:  # the lock was given back
        cur.execute("INSERT INTO main.copied SELECT k, v FROM part.rows")
    assert _copied(store) == [("a", 1), ("b", 2)]
    store.close()
