"""Comparing published models: every model table of a store as a multiset of rows, and what
differs between two of them. The pipeline's promise that incremental passes, a rebuild, a cluster
and local mode all publish one model is checked with this (tests, and `bench/model_diff.py`
across two stores or two versions of the code)."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from headwater.store.base import EventStore
from headwater.store.model.tables import MODEL_TABLES, TABLES


def _queries() -> Iterator[tuple[str, str]]:
    for name in MODEL_TABLES:
        table = TABLES[name]
        yield name, f"SELECT {', '.join((*table.columns, *table.computed))} FROM {name}"


def model_rows(store: EventStore) -> dict[str, list[tuple[Any, ...]]]:
    """Every model table's rows, sorted: two equal results mean two identical models."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    with store.transaction() as cur:
        for name, sql in _queries():
            cur.execute(sql)
            out[name] = sorted((tuple(row) for row in cur.fetchall()), key=repr)
    return out


def _digest(row: tuple[Any, ...]) -> bytes:
    return hashlib.blake2b(repr(row).encode(), digest_size=16).digest()


def _scan(store: EventStore, sql: str, batch: int = 10_000) -> Iterator[tuple[bytes, tuple[Any, ...]]]:
    with store.transaction() as cur:
        cur.execute(sql)
        while chunk := cur.fetchmany(batch):
            for raw in chunk:
                row = tuple(raw)
                yield _digest(row), row


def model_digests(store: EventStore) -> dict[str, Counter[bytes]]:
    """Every model table as counts of row digests (16 bytes a row, whatever the row's size, so
    models of millions of rows compare in memory)."""
    return {name: Counter(key for key, _ in _scan(store, sql)) for name, sql in _queries()}


def _rows(store: EventStore, sql: str, wanted: Counter[bytes], most: int) -> list[tuple[Any, ...]]:
    """Up to `most` rows of `sql` whose digests are `wanted` (as many times as counted there)."""
    wanted = Counter(wanted)
    found: list[tuple[Any, ...]] = []
    for key, row in _scan(store, sql):
        if len(found) >= most:
            break
        if wanted[key] > 0:
            wanted[key] -= 1
            found.append(row)
    return found


@dataclass(frozen=True)
class TableDifference:
    """How one table differs between two models: its row counts, and up to a few rows found
    only in the first and only in the second (a row twice in one and once in the other counts)."""

    name: str
    rows_first: int
    rows_second: int
    only_first: list[tuple[Any, ...]]
    only_second: list[tuple[Any, ...]]


def compare_models(first: EventStore, second: EventStore, *, show: int = 5) -> list[TableDifference]:
    """The tables whose rows differ (as multisets) between the models of two stores; for each,
    up to `show` rows from either side that the other lacks (read again for those tables only)."""
    queries = dict(_queries())
    a, b = model_digests(first), model_digests(second)
    out: list[TableDifference] = []
    for name in sorted(queries):
        if a[name] == b[name]:
            continue
        only_a, only_b = a[name] - b[name], b[name] - a[name]
        out.append(
            TableDifference(
                name,
                a[name].total(),
                b[name].total(),
                _rows(first, queries[name], only_a, show),
                _rows(second, queries[name], only_b, show),
            )
        )
    return out
