"""What every SQL module of the store shares: a read cursor (pinned to one snapshot inside
`snapshot()`), the driver's placeholders, and reading by a long list of keys in chunks."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from contextvars import ContextVar
from typing import Any

CHUNK = 500  # keys per IN list: well under SQLite's and PostgreSQL's parameter limits

# the store and the cursor that `snapshot()` pinned in this thread or task
_PINNED: ContextVar[tuple[object, Any] | None] = ContextVar("headwater_pinned_read", default=None)


class SqlReads(ABC):
    """Base of the SQL store and of its mixins (graph, catalog). Queries use `?` placeholders;
    a backend whose driver wants `%s` sets `paramstyle`."""

    paramstyle = "qmark"
    snapshot_begin = "BEGIN"  # the statement that opens a read-only snapshot

    @abstractmethod
    def _read_cursor(self) -> AbstractContextManager[Any]:
        """A cursor of a connection for reads (the backend's pool or per-thread connection)."""

    @contextmanager
    def _reading(self) -> Iterator[Any]:
        """A cursor for reads: the pinned one inside `snapshot()`, else a fresh one."""
        pinned = _PINNED.get()
        if pinned is not None and pinned[0] is self:
            yield pinned[1]
            return
        with self._read_cursor() as cur:
            yield cur

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read inside sees the model as it stood at the first one (one transaction on one
        connection: a walk of many queries never mixes the graph before and after a publish,
        and on PostgreSQL borrows a pooled connection once). Nested calls share the outer one."""
        pinned = _PINNED.get()
        if pinned is not None and pinned[0] is self:
            yield
            return
        with self._read_cursor() as cur:
            cur.execute(self.snapshot_begin)
            token = _PINNED.set((self, cur))
            try:
                yield
            except BaseException:
                with suppress(Exception):  # the error that got us here says more
                    cur.execute("ROLLBACK")
                raise
            else:
                cur.execute("COMMIT")
            finally:
                _PINNED.reset(token)

    def _sql(self, query: str) -> str:
        return query.replace("?", "%s") if self.paramstyle == "format" else query

    def _chunked(
        self, cur: Any, query: str, keys: Sequence[Any], *after: Any, before: Sequence[Any] = ()
    ) -> list[Any]:
        """Rows of `query` for every key: `IN ({marks})` in the query is the list of keys, `before`
        the parameters that come before it and `after` those after it. SQLite takes the keys a
        chunk at a time; PostgreSQL as one array (`= ANY(%s)`)."""
        rows: list[Any] = []
        unique = list(dict.fromkeys(keys))
        if not unique:
            return rows
        if self.paramstyle == "format":  # PostgreSQL: one array parameter, one plan for any length
            cur.execute(self._sql(query.replace("IN ({marks})", "= ANY(?)")), [*before, unique, *after])
            return list(cur.fetchall())
        for start in range(0, len(unique), CHUNK):
            chunk = unique[start : start + CHUNK]
            marks = ", ".join("?" * len(chunk))
            cur.execute(self._sql(query.replace("{marks}", marks)), [*before, *chunk, *after])
            rows += cur.fetchall()
        return rows
