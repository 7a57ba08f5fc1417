"""Staging: the model rows of a batch, written by the pipeline's executors in parallel into
`stage_<table>` before one transaction merges them (`merge`). Staged rows are not part of the
model; a crash while staging leaves only staging rows, emptied by the next `prepare_staging`.

The pipeline hands each executor's share over as Arrow batches of tagged rows (`TAGGED`): the
table's name, then the row's values in the table's column order as text, one column each (`v0`,
`v1`, ...; the columns a table does not have are NULL). On
PostgreSQL each executor COPYs its rows into the staging tables; on SQLite each writes a scratch
SQLite file of its own, which the driver (SQLite's single writer) then copies in, in bounded
chunks (`StagingTarget.collect`).
"""

from __future__ import annotations

import io
import shutil
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from headwater.store.base import EventStore
from headwater.store.model import history
from headwater.store.model.connections import connect, sqlite_file
from headwater.store.model.dialect import dialect_of, is_sqlite_url
from headwater.store.model.tables import TABLES

# the Arrow schema of tagged rows: a model table's name, then its row's values as text, a column
# each in the table's column order, as many columns as the widest table has (the rest NULL)
WIDTH = max(len(table.staged) for table in TABLES.values())
TAGGED = pa.schema([("table", pa.string()), *[(f"v{i}", pa.string()) for i in range(WIDTH)]])
Rows = tuple[str, list[tuple[Any, ...]]]  # a table's name and some of its rows
# (job version, +1 or -1) for each run that joined or left a version in a merge (0: touched)
VERSION_RUNS = "stage_version_runs"
# the merge's scratch tables: those job versions, and the dataset versions touched
SCRATCH = {
    VERSION_RUNS: "version_id TEXT, delta INTEGER",
    "stage_touched_dataset_versions": "version_id TEXT",
}


def staging_folder(store: EventStore) -> Path:
    """SQLite: where executors write their staged rows, one small SQLite file per partition."""
    return Path(f"{sqlite_file(store.url)}.staging")


def prepare_staging(store: EventStore) -> None:
    """Create the staging tables when missing and empty them (a crashed run's leftovers)."""
    dialect = dialect_of(store)
    if is_sqlite_url(store.url):
        folder = staging_folder(store)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
    with store.transaction() as cur:
        for table in TABLES.values():
            extra = "".join(f", CAST(0 AS INTEGER) AS {column}" for column in table.staged_only)
            if extra:  # made again: a store staged before such a column was added lacks it
                cur.execute(f"DROP TABLE IF EXISTS {table.stage}")
            cur.execute(
                f"CREATE {dialect.unlogged}TABLE IF NOT EXISTS {table.stage} AS "
                f"SELECT {', '.join(table.columns)}{extra} FROM {table.name} {dialect.no_rows}"
            )
        cur.execute("DROP TABLE IF EXISTS stage_touched_versions")  # before stage_version_runs
        for scratch, columns in SCRATCH.items():
            cur.execute(f"CREATE {dialect.unlogged}TABLE IF NOT EXISTS {scratch} ({columns})")
        history.create_scratch(cur, dialect)
        scratch_tables = list(SCRATCH) + list(history.SCRATCH)
        for statement in dialect.emptying([table.stage for table in TABLES.values()] + scratch_tables):
            cur.execute(statement)


@dataclass(frozen=True)
class StagingTarget:
    """Where a store's staged rows go: made in the driver (`staging_target`), pickled to the
    executors, whose `write` stages their share; then the driver calls `collect` once."""

    url: str
    folder: str | None  # SQLite: the folder of the executors' files; PostgreSQL: None (COPY)

    def write(self, batches: Iterable[pa.RecordBatch]) -> None:
        """On an executor: stage one partition's tagged rows (batches shaped like TAGGED)."""
        if self.folder is None:
            _copy_partition(self.url, batches)
        else:
            _sqlite_partition(self.folder, table_rows(batches))

    @property
    def deferred(self) -> bool:
        """Whether the executors' rows reach the store only when the driver collects them (SQLite:
        files of their own), so that the merge of the batch before may run while they stage."""
        return self.folder is not None

    def collect(self, store: EventStore) -> None:
        """In the driver, once every executor has written: SQLite copies the executors' files
        into the staging tables (PostgreSQL's executors wrote there already)."""
        if self.folder is not None:
            _collect_sqlite_parts(store, Path(self.folder))


def staging_target(store: EventStore) -> StagingTarget:
    """The target executors stage `store`'s rows into (`prepare_staging` made it ready)."""
    return StagingTarget(store.url, str(staging_folder(store)) if is_sqlite_url(store.url) else None)


_NUL, _REPLACEMENT = "\x00", "\ufffd"


def _may_hold_nul(column: pa.Array) -> bool:
    """Whether a text column's values hold a zero byte: their bytes searched at memchr's speed
    (pyarrow's match_substring took 0.3 µs a staged row)."""
    if not pa.types.is_string(column.type) or len(column) == 0:
        return False
    _, offsets, data = column.buffers()
    if data is None:
        return False
    bounds = memoryview(offsets).cast("i")  # int32 offsets; a slice starts at `offset`
    start, end = bounds[column.offset], bounds[column.offset + len(column)]
    return b"\x00" in data.slice(start, end - start).to_pybytes()


def _without_nul(batch: pa.RecordBatch) -> pa.RecordBatch:
    """The batch with each U+0000 in its text replaced by U+FFFD. JSON allows the character in
    a string, PostgreSQL's text does not: an event naming a dataset, a column or a query with it
    made every later pass fail on COPY. The event store's columns make the same replacement
    (`headwater.store.sql`), and so does this on both backends, so that their models agree."""
    columns = batch.columns
    dirty = [i for i, column in enumerate(columns) if _may_hold_nul(column)]
    if not dirty:
        return batch
    arrays = list(columns)
    for i in dirty:
        arrays[i] = pc.replace_substring(arrays[i], _NUL, _REPLACEMENT)
    return pa.RecordBatch.from_arrays(arrays, schema=batch.schema)


def table_slices(batches: Iterable[pa.RecordBatch]) -> Iterator[tuple[str, pa.RecordBatch]]:
    """(table, its rows' values) from Arrow batches shaped like TAGGED: one pair per run of a
    table's rows in a batch, with as many value columns as the table has; no row goes through
    Python."""
    for batch in batches:
        if batch.num_rows == 0:
            continue
        batch = _without_nul(batch)
        runs = pc.run_end_encode(batch.column(0))
        start = 0
        for name, end in zip(runs.values.to_pylist(), runs.run_ends.to_pylist(), strict=True):
            width = len(TABLES[name].staged)
            yield name, batch.slice(start, end - start).select(list(range(1, 1 + width)))
            start = end


def table_rows(batches: Iterable[pa.RecordBatch]) -> Iterator[Rows]:
    """(table, rows) from Arrow batches shaped like TAGGED (`table_slices`), as Python tuples."""
    for name, part in table_slices(batches):
        yield name, list(zip(*[column.to_pylist() for column in part.columns], strict=True))


def _copy_partition(url: str, batches: Iterable[pa.RecordBatch]) -> None:
    """An executor's share of a PostgreSQL stage: each table's rows written by Arrow as CSV (a
    value quoted, NULL empty) and COPYed, then one commit. (`bench/staging.py`: 0.17 µs of CPU a
    row, against 1.08 row by row through Python and psycopg's `write_row`.)"""
    conn = connect(url)
    options = pa_csv.WriteOptions(include_header=False)
    try:
        with conn.cursor() as cur:
            for table, part in table_slices(batches):
                spec = TABLES[table]
                data = io.BytesIO()
                pa_csv.write_csv(part, data, options)
                columns = ", ".join(spec.staged)
                with cur.copy(f"COPY {spec.stage} ({columns}) FROM STDIN (FORMAT csv)") as copy:
                    copy.write(data.getbuffer())
        conn.commit()
    finally:
        conn.close()


def _sqlite_partition(folder: str, rows: Iterable[Rows]) -> None:
    """An executor's share of a SQLite stage: its rows into a SQLite file of its own, renamed
    into place once complete (a failed task leaves only a `.tmp` file, which is ignored)."""
    final = Path(folder) / f"part-{uuid.uuid4().hex}.db"
    temporary = final.with_suffix(".tmp")
    conn = sqlite3.connect(temporary)
    created: set[str] = set()
    try:
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        for table, chunk in rows:
            spec = TABLES[table]
            if table not in created:
                conn.execute(f"CREATE TABLE {spec.stage} ({', '.join(spec.staged)})")
                created.add(table)
            conn.executemany(f"INSERT INTO {spec.stage} VALUES ({', '.join('?' * len(spec.staged))})", chunk)
        conn.commit()
    finally:
        conn.close()
    if created:
        temporary.rename(final)
    else:
        temporary.unlink()


def _collect_sqlite_parts(store: EventStore, folder: Path) -> None:
    """The driver, SQLite's single writer, copies every executor's file into the staging tables:
    each file attached to the store, its tables copied inside SQLite, one transaction a file. (A
    copy through Python, 50,000 rows at a time, took 6 s of a 200,000-event batch's 85.)"""
    from headwater.store.sqlite.store import SqliteEventStore

    assert isinstance(store, SqliteEventStore)
    for part in sorted(folder.glob("part-*.db")):
        with store.attached_transaction({"part": part}) as cur:
            cur.execute("SELECT name FROM part.sqlite_master WHERE type = 'table'")
            for (name,) in cur.fetchall():
                spec = TABLES[name.removeprefix("stage_")]
                cols = ", ".join(spec.staged)
                cur.execute(f"INSERT INTO main.{spec.stage} ({cols}) SELECT {cols} FROM part.{name}")
        part.unlink()
