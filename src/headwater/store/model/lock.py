"""One pipeline per store: a second `pipeline run` fails at once instead of racing the first
(SQLite: a file lock beside the database; PostgreSQL: a session advisory lock). A continuous
pipeline also holds a lock of its own for as long as it runs, between its passes too, so that a
one-off `pipeline run` can wait for it to publish instead of starting Spark (`pipeline_running`)."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

from headwater.errors import ConfigError
from headwater.store.base import EventStore
from headwater.store.model.connections import postgres_url, sqlite_file
from headwater.store.model.dialect import is_sqlite_url

_PG_LOCK = 0x4844_5049  # "HDPI": a pass
_PG_CONTINUOUS = _PG_LOCK + 1  # a continuous pipeline, while it runs


class PipelineBusy(ConfigError):
    """Another pipeline is running on this store."""


@contextmanager
def _exclusive(store: EventStore, suffix: str, key: int, busy: str) -> Iterator[None]:
    """Hold one of the store's pipeline locks; PipelineBusy(`busy`) when another holds it."""
    if is_sqlite_url(store.url):
        fd = os.open(f"{sqlite_file(store.url)}.{suffix}", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise PipelineBusy(busy) from None
            yield
        finally:
            os.close(fd)
        return
    import psycopg

    with psycopg.connect(postgres_url(store.url), autocommit=True) as conn:
        row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
        if not row or not row[0]:
            raise PipelineBusy(busy)
        try:
            yield
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))


@contextmanager
def pipeline_lock(store: EventStore) -> Iterator[None]:
    """Held while a pipeline writes the store's model; raises PipelineBusy when another holds it."""
    with _exclusive(store, "pipeline-lock", _PG_LOCK, "another Headwater pipeline is running on this store"):
        yield


@contextmanager
def continuous_lock(store: EventStore) -> Iterator[None]:
    """Held by a continuous pipeline for as long as it runs; PipelineBusy when another holds it."""
    busy = "a continuous Headwater pipeline is running on this store already"
    with _exclusive(store, "pipeline-continuous", _PG_CONTINUOUS, busy):
        yield


def pipeline_running(store: EventStore) -> bool:
    """Whether another pipeline runs now: a continuous one, or a pass (each lock is taken and let
    go at once)."""
    for lock in (continuous_lock, pipeline_lock):
        try:
            with lock(store):
                pass
        except PipelineBusy:
            return True
    return False
