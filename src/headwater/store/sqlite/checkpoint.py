"""Copying the write-ahead log back into the SQLite database file, in a thread of its own.

SQLite checkpoints a WAL database in the connection that commits, once the log holds
`wal_autocheckpoint` pages, and inside that commit: its caller, and with it the events of a group
commit waiting for their acknowledgement, waits until tens of megabytes are copied and the
database file is synced, and so do the writers of other processes queued on the store's write
lock. `Checkpointer` takes that work out of the commit: after a commit it wakes a thread that runs
a PASSIVE checkpoint on a connection of its own, at most once every `CHECKPOINT_SECONDS`. A
PASSIVE checkpoint takes no write lock: commits go on meanwhile, and it copies what no reader
still needs. Once it has copied the whole log, the next commit starts the log again from its
beginning, so the log stays small. The writer keeps its `wal_autocheckpoint` as a backstop.

`bench/ingest.py --backend sqlite --scenarios 123` (2026-11-26, before and after alternating, two
pairs): the open loop's p99, after 100,000 single POSTs and 100 batches have filled the store, 43.6
and 39.9 ms with the checkpoints in the commits, 22.7 and 30.2 ms with them here (`--scenarios 23
--batches 50`: 24.3 and 22.5 -> 17.5 and 12.5 ms). Throughputs moved within the runs' noise.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from pathlib import Path

log = logging.getLogger(__name__)

CHECKPOINT_SECONDS = 0.5


class Checkpointer:
    """Runs PASSIVE checkpoints of one database after commits (`committed`), in a daemon thread
    started by the first commit of each process, until `stop`."""

    def __init__(self, path: Path, seconds: float = CHECKPOINT_SECONDS) -> None:
        self.path = path
        self.seconds = seconds
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._pid = 0  # the process that started the thread (a forked child starts its own)

    def committed(self) -> None:
        """A transaction was committed: checkpoint soon."""
        if self._pid != os.getpid():
            self._start()
        self._wake.set()

    def _start(self) -> None:
        with self._lock:
            if self._pid == os.getpid() or self._stop.is_set():
                return
            self._pid = os.getpid()  # set first: a thread that cannot start is not tried again
            thread = threading.Thread(target=self._run, name="headwater-checkpoint", daemon=True)
            try:
                thread.start()
            except RuntimeError as exc:  # out of threads: the commits' backstop checkpoints
                log.warning("cannot start the checkpoint thread of %s: %s", self.path, exc)
                return
            self._thread = thread

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            log.warning("cannot open %s to checkpoint it: %s", self.path, exc)
            return
        try:
            while True:
                self._wake.wait()
                if self._stop.is_set():
                    return
                self._wake.clear()
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                except sqlite3.Error as exc:  # the commits' backstop checkpoints instead
                    log.debug("checkpoint of %s failed: %s", self.path, exc)
                if self._stop.wait(self.seconds):
                    return
        finally:
            conn.close()

    def stop(self) -> None:
        """End the thread (a checkpoint under way finishes first)."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread.is_alive() and self._pid == os.getpid():
            thread.join(timeout=30)
