"""Opening a store from a database URL, and naming it."""

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


def store_namespace(store: EventStore) -> str:
    """The OpenLineage namespace of the store's own tables (the pipeline's lineage of itself):
    `sqlite` for a SQLite file, the URL without password or options for PostgreSQL."""
    if store.backend == "sqlite":
        return "sqlite"
    from headwater.config import redact_url

    return redact_url(store.url).split("?", 1)[0]
