"""Spark reads the store through the Python Data Source API (`format("headwater")`): no JDBC jars.

Two kinds of reads, each split into partitions that executors read in parallel:
- `events`: the events with `low < seq <= high`, partitioned by seq range; with `readback=true`,
  the events with `seq <= low` of the runs that have an event in `(low, high]` (a run's earlier
  events, so run-scoped results are recomputed from all of a run's events);
- `table`: the rows of one `query` over model tables with the given `schema`, for the graph stage.

Rows travel as Arrow record batches. Executors open their own connection from the URL
(`headwater.store.model.connections`). Events
reach Spark compact (`headwater.pipeline.compact`): each payload is the event's core, its facets
replaced by their hashes, and each distinct facet value the events name follows them once, in a
row of its own (`facet_hash`, `facet_value`; the event columns NULL).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from headwater.events.generic import GENERIC_KIND
from headwater.pipeline.compact import compactor
from headwater.store.model.connections import connect, placeholders
from headwater.store.model.event_reads import read_earlier, read_range

EVENT_SCHEMA = (
    "seq long, kind string, run_id string, parent_run_id string, root_run_id string, "
    "event_type string, event_time string, job_namespace string, job_name string, "
    "dataset_namespace string, dataset_name string, untrusted_facets string, payload string, "
    "facet_hash string, facet_value string"
)
_FETCH = 5_000


@dataclass(frozen=True)
class SeqRange(InputPartition):
    """Events with low < seq <= high (or, for read-back, runs touched in that range)."""

    low: int
    high: int

    def __init__(self, low: int, high: int) -> None:
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)


def seq_ranges(low: int, high: int, parts: int) -> list[tuple[int, int]]:
    """Split (low, high] into at most `parts` contiguous ranges."""
    if high <= low:
        return []
    parts = max(1, min(parts, high - low))
    step = -(-(high - low) // parts)
    return [(start, min(start + step, high)) for start in range(low, high, step)]


def _batches(
    cursor: Any,
    names: Sequence[str],
    schema: pa.Schema,
    whole: Callable[[list[Any]], list[Any]] | None = None,
) -> Iterator[pa.RecordBatch]:
    while True:
        rows = cursor.fetchmany(_FETCH)
        if not rows:
            return
        if whole is not None:
            rows = whole(rows)
        columns = list(zip(*rows, strict=True))
        yield pa.RecordBatch.from_arrays(
            [pa.array(col, type=schema.field(i).type) for i, col in enumerate(columns)], names=list(names)
        )


def _arrow_schema(names: Sequence[str], types: Sequence[str]) -> pa.Schema:
    mapping = {"long": pa.int64(), "string": pa.string(), "int": pa.int32()}
    return pa.schema([(n, mapping[t]) for n, t in zip(names, types, strict=True)])


def _split_schema(schema: str) -> tuple[list[str], list[str]]:
    names, types = [], []
    for part in schema.split(","):
        name, kind = part.split()
        names.append(name)
        types.append(kind)
    return names, types


def _compact_events(conn: Any, url: str) -> Callable[[list[Any]], list[Any]]:
    """Rows of `event_reads.EVENT_COLUMNS` → rows of EVENT_SCHEMA: the events' cores, then the facet values
    they name that this read has not given yet, read on another cursor of `conn`."""
    return compactor(conn, lambda query: placeholders(url, query)).rows


class _EventReader(DataSourceReader):
    def __init__(self, options: dict[str, str]) -> None:
        self.url = options["url"]
        self.low = int(options.get("low", "0"))
        self.high = int(options["high"])
        self.parts = int(options.get("partitions", "2"))
        self.readback = options.get("readback", "false") == "true"

    def partitions(self) -> Sequence[InputPartition]:
        ranges = seq_ranges(self.low, self.high, self.parts)
        return [SeqRange(lo, hi) for lo, hi in ranges] or [SeqRange(0, 0)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, SeqRange)
        if partition.high <= partition.low:
            return
        names, types = _split_schema(EVENT_SCHEMA)
        schema = _arrow_schema(names, types)
        conn = connect(self.url)
        try:
            cur = conn.cursor()
            if self.readback:
                read_earlier(cur, self.url, self.low, partition.low, partition.high)
            else:
                read_range(cur, self.url, partition.low, partition.high)
            yield from _batches(cur, names, schema, _compact_events(conn, self.url))
        finally:
            conn.close()


class _QueryReader(DataSourceReader):
    """One query's rows (a model table, or a join of a few), in one partition; with EVENT_SCHEMA,
    events (the query selects `event_reads.EVENT_COLUMNS`), made compact."""

    def __init__(self, options: dict[str, str], schema: str) -> None:
        self.url = options["url"]
        self.query = options["query"]
        self.names, self.types = _split_schema(schema)
        self.events = schema == EVENT_SCHEMA

    def partitions(self) -> Sequence[InputPartition]:
        return [InputPartition(0)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        conn = connect(self.url)
        try:
            cur = conn.cursor()
            cur.execute(self.query)
            compact = _compact_events(conn, self.url) if self.events else None
            yield from _batches(cur, self.names, _arrow_schema(self.names, self.types), compact)
        finally:
            conn.close()


def read_here(
    reader: _EventReader | _QueryReader, partition: InputPartition, schema: str, limit: int
) -> pa.Table | None:
    """What `reader` gives for `partition`, read in this process (the driver), or None when it
    comes to more than `limit` rows. For small reads: a DataFrame made from the table needs no
    executor task and no planning in a Python worker, which on a batch of a few events cost
    more than the work itself."""
    names, types = _split_schema(schema)
    arrow = _arrow_schema(names, types)
    batches, rows = [], 0
    for batch in reader.read(partition):
        rows += batch.num_rows
        if rows > limit:
            return None
        batches.append(batch)
    return pa.Table.from_batches(batches, schema=arrow)


def events_here(url: str, low: int, high: int, *, readback: bool, limit: int) -> pa.Table | None:
    """The events `format("headwater")` reads for (low, high] (or their runs' earlier events),
    read in the driver; None beyond `limit` rows."""
    options = {"url": url, "low": str(low), "high": str(high), "readback": str(readback).lower()}
    return read_here(_EventReader(options), SeqRange(low, high), EVENT_SCHEMA, limit)


def few_values(events: pa.Table, earlier: pa.Table | None, most: int) -> dict[str, str] | None:
    """The facet values (hash → value) of events read in the driver and of their runs' earlier
    events (`earlier`, when there are some), when there are at most `most`; else None."""
    values: dict[str, str] = {}
    for table in (events, earlier):
        if table is None:
            continue
        hashes = table.column("facet_hash")
        if len(values) + hashes.length() - hashes.null_count > most:
            return None
        found = table.filter(hashes.is_valid())
        values.update(
            zip(found.column("facet_hash").to_pylist(), found.column("facet_value").to_pylist(), strict=True)
        )
    return values


def holds_generic(events: pa.Table) -> bool:
    """Whether events read in the driver hold a generic (FastScore) event."""
    return GENERIC_KIND in events.column("kind").to_pylist()


def table_here(url: str, query: str, schema: str, limit: int) -> pa.Table | None:
    """The rows of `query` as `kind=table` reads them, read in the driver; None beyond `limit`."""
    return read_here(_QueryReader({"url": url, "query": query}, schema), InputPartition(0), schema, limit)


class HeadwaterSource(DataSource):
    """`spark.read.format("headwater").option("url", …).option("kind", "events"|"table")`."""

    @classmethod
    def name(cls) -> str:
        return "headwater"

    def schema(self) -> str:
        if self.options.get("kind", "events") == "table":
            return self.options["schema"]
        return EVENT_SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        if self.options.get("kind", "events") == "table":
            return _QueryReader(dict(self.options), self.options["schema"])
        return _EventReader(dict(self.options))
