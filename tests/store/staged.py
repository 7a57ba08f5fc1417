"""Staging rows by hand, as the pipeline's executors would, for the tests of the model's merge."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from headwater.store.base import EventStore
from headwater.store.model import TAGGED, staging_target

DAY = "2026-01-0{}T00:00:00.0000000Z"


def tagged_batch(*rows: tuple[str, tuple[Any, ...]]) -> pa.RecordBatch:
    """Tagged rows as `pipeline.publish` hands them over: values as Spark casts them, text or null,
    a column each, NULL past the table's last column."""
    width = len(TAGGED.names) - 1
    texts = [[None if v is None else str(v) for v in row] + [None] * (width - len(row)) for _, row in rows]
    columns = [[table for table, _ in rows], *[list(column) for column in zip(*texts, strict=True)]]
    return pa.RecordBatch.from_arrays([pa.array(c, pa.string()) for c in columns], schema=TAGGED)


def stage_by_hand(store: EventStore, *partitions: list[tuple[str, tuple[Any, ...]]]) -> None:
    target = staging_target(store)
    for rows in partitions:  # each as one executor's task would
        target.write([tagged_batch(*rows)])
    target.collect(store)


def model_rows(store: EventStore, sql: str) -> list[tuple[Any, ...]]:
    with store.transaction() as cur:
        cur.execute(sql)
        return sorted(tuple(row) for row in cur.fetchall())
