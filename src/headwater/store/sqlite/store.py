"""SQLite behind the store interface: WAL, synchronous=FULL, one write connection, and read
connections lent from a small pool.

Read connections are lent to a thread for the length of a read (a thread that asks again while
it holds one gets the same one back), then returned. A server's worker threads come and go;
a connection per thread, kept for the life of the store, made a new connection, with its own
page and statement caches, for every new thread, and the server's memory grew without end."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from headwater.errors import ConfigError, StoreUnavailable
from headwater.store.generic_sql import GenericSql
from headwater.store.sql import SqlEventStore
from headwater.store.sqlite.checkpoint import Checkpointer

IDLE_READERS = 8  # read connections kept between reads; reads beyond run on short-lived ones


def sqlite_path(url: str) -> Path:
    """`sqlite:///relative.db` → relative.db; `sqlite:////abs.db` → /abs.db."""
    if not url.startswith("sqlite:///"):
        raise ConfigError(f"SQLite URL {url!r} must look like sqlite:///path/to/file.db")
    path = url.removeprefix("sqlite:///").split("?", 1)[0]
    if not path:
        raise ConfigError(f"SQLite URL {url!r} names no file")
    return Path(path)


class SqliteEventStore(GenericSql, SqlEventStore):
    backend = "sqlite"
    single_writer = True
    migrations_package = "headwater.store.sqlite.migrations"

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = sqlite_path(url)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable(f"cannot create the folder of {self.path}: {exc}") from None
        self._local = threading.local()
        self._idle: list[sqlite3.Connection] = []  # read connections waiting to be lent
        # Held by the thread whose turn it is to write (re-entered by its transactions), beside
        # the process lock: `_turns` counts how deep, under it.
        self._write_lock = threading.RLock()
        self._turns = 0
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._writer = self._connect()
        # A new store's pages hold 8 KB: an event's row (about 1.5 KB once its facets are kept
        # apart) leaves less of a page unused than in 4 KB pages (12% smaller store,
        # bench/ingest.py). An existing store keeps its page size.
        self._writer.execute("PRAGMA page_size=8192")
        self._writer.execute("PRAGMA journal_mode=WAL")
        # Appends touch the same index pages commit after commit: a larger cache keeps them, and
        # checkpointing every 10,000 WAL pages instead of 1,000 copies each page back less often
        # (about 15% less CPU and 30% less time per appended event, bench/ingest.py). The
        # checkpointer's thread copies the log back before that, outside the commits; a commit
        # checkpoints only if it falls behind.
        self._writer.execute("PRAGMA cache_size=-32768")
        self._writer.execute("PRAGMA wal_autocheckpoint=10000")
        self._checkpointer = Checkpointer(self.path)
        # Writers in other processes (`serve --workers N`, `ingest` beside `serve`) queue on this
        # lock: SQLite's own busy handler would make them sleep in steps of up to 100 ms.
        self._lock_fd = os.open(f"{self.path}.write-lock", os.O_RDWR | os.O_CREAT, 0o644)
        # The lock is not fair: a process that releases it and asks again at once (its writer
        # has the next group waiting) takes it back before a process queued on it wakes, turn
        # after turn. The next writer therefore waits at this door, holding it, while the lock is
        # held; whoever ends a turn must pass the door before its next one, and finds it held.
        self._door_fd = os.open(f"{self.path}.write-door", os.O_RDWR | os.O_CREAT, 0o644)

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            # FULL: a commit is on disk (WAL fsynced) before append() returns and the event is acked.
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"cannot open SQLite database {self.path}: {exc}") from None
        with self._connections_lock:
            self._connections.append(conn)
        return conn

    @contextmanager
    def _lent_reader(self) -> Iterator[sqlite3.Connection]:
        """A read connection for this thread: the one it already holds, else one from the pool
        (or a new one), given back when the outermost use ends. At most IDLE_READERS wait in
        the pool; any more are closed."""
        held: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if held is not None:
            self._local.depth += 1
            try:
                yield held
            finally:
                self._local.depth -= 1
            return
        with self._connections_lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._connect()
        self._local.conn, self._local.depth = conn, 0
        try:
            yield conn
        finally:
            self._local.conn = None
            self._give_back(conn)

    def _give_back(self, conn: sqlite3.Connection) -> None:
        with self._connections_lock:
            if conn not in self._connections:  # the store was closed meanwhile, and this with it
                return
            if conn.in_transaction:  # a read left open by an error: never lend a stale snapshot
                conn.rollback()
            if len(self._idle) < IDLE_READERS:
                self._idle.append(conn)
                return
            self._connections.remove(conn)
        conn.close()

    @contextmanager
    def _read_cursor(self) -> Iterator[Any]:
        try:
            with self._lent_reader() as conn:
                cur = conn.cursor()
                try:
                    yield cur
                finally:
                    cur.close()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                raise
            raise StoreUnavailable(f"SQLite read failed: {exc}") from None

    @contextmanager
    def write_turn(self) -> Iterator[None]:
        """This thread's turn to write, among the threads of this process and the writers of
        other processes (which queue on the lock file); the transactions inside keep it. Turns
        alternate between processes that all have writes waiting: passing the door first, a
        writer cannot take turn after turn while another waits (bench/README.md, "Turns that
        alternate")."""
        with self._write_lock:
            if self._turns == 0:
                fcntl.flock(self._door_fd, fcntl.LOCK_EX)
                try:
                    fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
                finally:
                    fcntl.flock(self._door_fd, fcntl.LOCK_UN)
            self._turns += 1
            try:
                yield
            finally:
                self._turns -= 1
                if self._turns == 0:
                    fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    @contextmanager
    def _writing(self) -> Iterator[Any]:
        with self.write_turn():
            cur = self._writer.cursor()
            try:
                cur.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreUnavailable(f"SQLite write failed: {exc}") from None
            try:
                yield cur
                cur.execute("COMMIT")
            except BaseException as exc:
                if self._writer.in_transaction:
                    self._writer.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError):
                    raise StoreUnavailable(f"SQLite write failed: {exc}") from None
                raise
            else:  # committed: nothing here may make the commit look failed
                self._checkpointer.committed()
            finally:
                cur.close()

    @contextmanager
    def attached_transaction(self, files: dict[str, Path]) -> Iterator[Any]:
        """A cursor inside one write transaction in which each SQLite file of `files` is attached
        under its alias, serialized with every other writer: rows move between the files inside
        SQLite, not through Python. SQLite attaches only outside a transaction, so this runs on a
        connection of its own, under the same locks as the store's writer."""
        with self.write_turn():
            try:
                conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
                conn.execute("PRAGMA synchronous=FULL")
                for alias, path in files.items():
                    conn.execute(f"ATTACH DATABASE ? AS {alias}", (str(path),))
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreUnavailable(f"SQLite write failed: {exc}") from None
            cur = conn.cursor()
            try:
                yield cur
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.OperationalError):
                    raise StoreUnavailable(f"SQLite write failed: {exc}") from None
                raise
            else:
                self._checkpointer.committed()
            finally:
                cur.close()
                conn.close()

    def _name_match(self, index: str, q: str) -> tuple[str, str]:
        """Names holding `q` through the trigram tables of migration 0005 (3 characters or more;
        shorter ones scan)."""
        if len(q) < 3:
            return super()._name_match(index, q)
        return f"rowid IN (SELECT rowid FROM {index} WHERE {index} MATCH ?)", '"' + q.replace('"', '""') + '"'

    def _run_script(self, cursor: Any, script: str) -> None:
        # executescript would COMMIT the open transaction; run the statements one by one instead.
        for statement in _statements(script):
            cursor.execute(statement)

    def close(self) -> None:
        self._checkpointer.stop()
        with self._connections_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
            self._idle.clear()
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            os.close(self._door_fd)
            self._lock_fd = self._door_fd = -1


def _statements(script: str) -> Iterator[str]:
    buffer = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer.strip()
            buffer = ""
    if buffer.strip():
        yield buffer.strip()
