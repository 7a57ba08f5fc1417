"""One pipeline per store: a second `pipeline run` fails at once instead of racing the first
(SQLite: a file lock beside the database; PostgreSQL: a session advisory lock)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

from headwater.errors import ConfigError
from headwater.store.base import EventStore
from headwater.store.model.connections import postgres_url, sqlite_file
from headwater.store.model.dialect import is_sqlite_url

_PG_LOCK = 0x4844_5049  # "HDPI"


class PipelineBusy(ConfigError):
    """Another pipeline is running on this store."""


@contextmanager
def pipeline_lock(store: EventStore) -> Iterator[None]:
    """Held while a pipeline writes the store's model; raises PipelineBusy when another holds it."""
    if is_sqlite_url(store.url):
        fd = os.open(f"{sqlite_file(store.url)}.pipeline-lock", os.O_RDWR | os.O_CREAT, 0o644)
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

    with psycopg.connect(postgres_url(store.url), autocommit=True) as conn:
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (_PG_LOCK,)).fetchone()
        if not row or not row[0]:
            raise PipelineBusy("another Headwater pipeline is running on this store")
        try:
            yield
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_PG_LOCK,))
