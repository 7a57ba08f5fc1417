"""Opening a store from a database URL."""

from __future__ import annotations

from headwater.errors import ConfigError
from headwater.store.base import EventStore


def open_store(url: str, *, migrate: bool = True) -> EventStore:
    """Open the store the URL names and, unless told otherwise, bring its schema up to date."""
    store: EventStore
    if url.startswith("sqlite:"):
        from headwater.store.sqlite.store import SqliteEventStore

        store = SqliteEventStore(url)
    elif url.startswith(("postgresql:", "postgres:", "postgresql+psycopg:")):
        from headwater.store.postgres.store import PostgresEventStore

        store = PostgresEventStore(url)
    else:
        raise ConfigError(
            f"database URL {url!r} is neither sqlite:///PATH nor postgresql://USER@HOST:PORT/DB"
        )
    if migrate:
        store.migrate()
    return store
