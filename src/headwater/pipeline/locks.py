"""One pipeline per store: a second `pipeline run` fails at once instead of racing the first."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

from headwater.errors import ConfigError
from headwater.store.base import EventStore

_PG_LOCK = 0x4844_5049  # "HDPI"


class PipelineBusy(ConfigError):
    """Another pipeline is running on this store."""


@contextmanager
def pipeline_lock(store: EventStore) -> Iterator[None]:
    if store.backend == "sqlite":
        from headwater.store.sqlite.store import sqlite_path

        fd = os.open(f"{sqlite_path(store.url)}.pipeline-lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise PipelineBusy("another Headwater pipeline is running on this store") from None
            yield
        finally:
            os.close(fd)
        return
    import psycopg

    with psycopg.connect(store.url.replace("postgresql+psycopg:", "postgresql:", 1), autocommit=True) as conn:
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (_PG_LOCK,)).fetchone()
        if not row or not row[0]:
            raise PipelineBusy("another Headwater pipeline is running on this store")
        try:
            yield
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_PG_LOCK,))
