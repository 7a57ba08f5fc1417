"""What the model's SQL says differently on SQLite and PostgreSQL, decided once from the store's
backend or URL: the rest of the model's SQL is written once for both."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from headwater.store.base import EventStore


@dataclass(frozen=True)
class Dialect:
    """The few phrases of the model's SQL that differ between the backends."""

    backend: str
    least: str  # the two-argument minimum
    greatest: str
    unlogged: str  # before TABLE for scratch tables no crash needs back
    no_rows: str  # after `CREATE TABLE … AS SELECT … FROM t`, to copy the columns without rows
    marks: str  # the driver's placeholder for `?`

    def sql(self, query: str) -> str:
        """The query with `?` placeholders turned into the driver's."""
        return query if self.marks == "?" else query.replace("?", self.marks)

    def emptying(self, tables: Sequence[str], *, large: bool = False) -> list[str]:
        """The statements that empty `tables`; `large`: they hold many rows (a large batch's).
        PostgreSQL's DELETE leaves a table its dead rows, and its pages, until a vacuum: after a
        batch of 200,000 events the staging tables held 212 MB of them, which every later merge
        scanned and the planner counted as rows (it then hashed whole model tables against a few
        staged runs: the merge of +1,000 events on 1,000,000 took 1.6 s, 0.2 s on SQLite). Its
        TRUNCATE gives the pages back, but costs about 100 ms for the ~30 staging tables, more
        than a small batch's DELETE."""
        if large and self.backend == "postgresql":
            return [f"TRUNCATE {', '.join(tables)}"] if tables else []
        return [f"DELETE FROM {table}" for table in tables]

    def is_duplicate_key(self, exc: BaseException) -> bool:
        """Whether the driver raised `exc` for a row whose key is taken (a unique index)."""
        if self.backend == "postgresql":
            from psycopg import errors

            return isinstance(exc, errors.UniqueViolation)
        return isinstance(exc, sqlite3.IntegrityError) and "UNIQUE" in str(exc)

    def json_text(self, column: str, key: str) -> str:
        """The text of `key` in the JSON object held as text in `column`."""
        if self.backend == "postgresql":
            return f"({column}::json ->> '{key}')"
        return f"json_extract({column}, '$.{key}')"

    def in_subquery(self, column: str, subquery: str) -> str:
        """`column` is one of the values of `subquery`. SQLite looks each value up in the index
        of `column`. PostgreSQL's planner hash-joins `IN (subquery)` with a scan of the whole
        table (58 ms at 100,000 events, growing with the store); given the values as one array,
        it reads their rows from the index (2.5 ms)."""
        if self.backend == "postgresql":
            return f"{column} = ANY(ARRAY({subquery}))"
        return f"{column} IN ({subquery})"


SQLITE = Dialect("sqlite", "MIN", "MAX", "", "WHERE 0", "?")
POSTGRESQL = Dialect("postgresql", "LEAST", "GREATEST", "UNLOGGED ", "WITH NO DATA", "%s")


def is_sqlite_url(url: str) -> bool:
    return url.startswith("sqlite:")


def dialect_of(store: EventStore) -> Dialect:
    return SQLITE if store.backend == "sqlite" else POSTGRESQL


def dialect_of_url(url: str) -> Dialect:
    return SQLITE if is_sqlite_url(url) else POSTGRESQL
