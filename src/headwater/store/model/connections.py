"""Connections the pipeline's executors open from the store's URL (a Spark task gets the URL, not
the store): reads of events and model tables, and the staging writes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from headwater.store.model.dialect import dialect_of_url, is_sqlite_url


def sqlite_file(url: str) -> Path:
    """The database file of a `sqlite:///…` URL."""
    from headwater.store.sqlite.store import sqlite_path

    return sqlite_path(url)


def postgres_url(url: str) -> str:
    """A PostgreSQL URL as psycopg takes it (the PostgreSQL store's rule)."""
    from headwater.store.postgres.store import libpq_url

    return libpq_url(url)


def connect(url: str) -> Any:
    """A DB-API connection for an executor: read only on SQLite (the driver is SQLite's one
    writer), read and write on PostgreSQL."""
    if is_sqlite_url(url):
        return sqlite3.connect(f"file:{sqlite_file(url)}?mode=ro", uri=True, timeout=30)
    import psycopg

    return psycopg.connect(postgres_url(url))


def placeholders(url: str, query: str) -> str:
    """`query`, written with `?` placeholders, for the driver of `url`'s backend."""
    return dialect_of_url(url).sql(query)


def in_subquery(url: str, column: str, subquery: str) -> str:
    """The condition that `column` is one of `subquery`'s values, as `url`'s backend reads it
    fastest (`Dialect.in_subquery`)."""
    return dialect_of_url(url).in_subquery(column, subquery)
