"""Publishing the model: staging tables first, then one transaction that merges and checkpoints.

1. `stage()` fills `stage_<table>` from every table's DataFrame in one Spark job: on PostgreSQL
   each executor COPYs its partitions in parallel; on SQLite each executor writes a scratch
   SQLite file of its own, which the driver (SQLite's single writer) copies in bounded chunks.
   Staged rows are not part of the model; a crash here leaves only staging rows, cleared on the
   next start.
2. `merge_facts()` runs in one store transaction: every staged table is merged into its model table
   by its rule (insert once, keep the earliest/latest, add up counts, replace a run's rows), the job versions
   are recounted from their runs, new datasets and jobs get their browse (element) ids, the
   checkpoint advances, and staging is emptied. Either all of a batch is in the model with its
   checkpoint, or none of it is.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame

from headwater.pipeline.locks import PipelineBusy
from headwater.pipeline.source import connect
from headwater.store.base import EventStore
from headwater.store.deletions_sql import clear_deletions
from headwater.store.generic_sql import number_model_elements

log = logging.getLogger(__name__)
_CHUNK = 5_000
_DONE = pa.schema([("done", pa.int32())])


@dataclass(frozen=True)
class Table:
    """A model table as the pipeline writes it."""

    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]
    # SET clause on conflict ({least}/{greatest} become the dialect's functions), "" = ignore
    on_conflict: str = ""

    @property
    def stage(self) -> str:
        return f"stage_{self.name}"


def _latest(table: str, time: str, seq: str, columns: Sequence[str], *, ties: bool = False) -> str:
    """Columns taken from the staged row when its (time, seq) is later than the stored one."""
    op = ">=" if ties else ">"
    newer = (
        f"excluded.{time} IS NOT NULL AND ({table}.{time} IS NULL OR "
        f"(excluded.{time}, excluded.{seq}) {op} ({table}.{time}, {table}.{seq}))"
    )
    return ", ".join(f"{c} = CASE WHEN {newer} THEN excluded.{c} ELSE {table}.{c} END" for c in columns)


def _earliest(table: str, time: str, seq: str, columns: Sequence[str]) -> str:
    """Columns taken from the staged row when its (time, seq) is earlier than the stored one."""
    older = f"(excluded.{time}, excluded.{seq}) < ({table}.{time}, {table}.{seq})"
    return ", ".join(f"{c} = CASE WHEN {older} THEN excluded.{c} ELSE {table}.{c} END" for c in columns)


def _span(table: str) -> str:
    return (
        f"created_at = {{least}}({table}.created_at, excluded.created_at), "
        f"updated_at = {{greatest}}({table}.updated_at, excluded.updated_at)"
    )


def _replace(columns: Sequence[str], key: Sequence[str]) -> str:
    return ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)


_RUN_COLUMNS = (
    "run_id", "job_node_id", "state", "state_time", "started_at", "ended_at", "duration_ms",
    "nominal_start", "nominal_end", "parent_run_id", "root_run_id", "job_version",
    "first_event_time", "last_event_time", "event_count", "updated_seq",
)  # fmt: skip

_ELEMENT_NODE_COLUMNS = ("node_id", "type", "description", "created_at", "updated_at", "event_count")
_ELEMENT_EDGE_COLUMNS = ("src_id", "dst_id", "event_type", "created_at", "updated_at", "event_count")
# generic events folded into the graph (pipeline.elements): spans widen, counts add up (every
# event is in exactly one batch)
ELEMENT_TABLES: tuple[Table, ...] = (
    Table(
        "element_nodes",
        _ELEMENT_NODE_COLUMNS,
        ("node_id",),
        _span("element_nodes") + ", event_count = element_nodes.event_count + excluded.event_count",
    ),
    Table(
        "element_edges",
        _ELEMENT_EDGE_COLUMNS,
        ("src_id", "dst_id", "event_type"),
        _span("element_edges") + ", event_count = element_edges.event_count + excluded.event_count",
    ),
)
FACT_TABLES: tuple[Table, ...] = (
    Table("namespaces", ("name", "created_at", "updated_at"), ("name",), _span("namespaces")),
    Table(
        "sources",
        ("name", "uri", "created_at", "updated_at", "set_time", "set_seq"),
        ("name",),
        _span("sources") + ", " + _latest("sources", "set_time", "set_seq", ("uri", "set_time", "set_seq")),
    ),
    Table(
        "datasets",
        (
            "node_id",
            "namespace",
            "name",
            "created_at",
            "updated_at",
            "source_name",
            "source_time",
            "source_seq",
            "current_version",
            "version_time",
            "version_seq",
        ),
        ("node_id",),
        _span("datasets")
        + ", "
        + _latest("datasets", "source_time", "source_seq", ("source_name", "source_time", "source_seq"))
        + ", "
        + _latest(
            "datasets", "version_time", "version_seq", ("current_version", "version_time", "version_seq")
        ),
    ),
    Table("facet_values", ("hash", "value"), ("hash",)),
    Table(
        "dataset_facets",
        ("node_id", "name", "valid_from", "seq", "value_hash", "deleted"),
        ("node_id", "name", "valid_from", "seq"),
    ),
    Table(
        "job_facets",
        ("node_id", "name", "valid_from", "seq", "value_hash", "deleted"),
        ("node_id", "name", "valid_from", "seq"),
    ),
    Table(
        "schema_fields", ("schema_hash", "path", "position", "type", "description"), ("schema_hash", "path")
    ),
    Table(
        "column_lineage",
        ("facet_hash", "field", "input_node_id", "input_field", "type", "subtype", "description", "masking"),
        ("facet_hash", "field", "input_node_id", "input_field", "type", "subtype"),
    ),
    Table("dataset_symlinks", ("node_id", "alias_node_id", "type"), ("node_id", "alias_node_id")),
    Table(
        "dataset_versions",
        (
            "version_id",
            "node_id",
            "schema_hash",
            "version_label",
            "lifecycle",
            "created_at",
            "created_seq",
            "created_by_run",
        ),
        ("version_id",),
        _earliest(
            "dataset_versions", "created_at", "created_seq", ("created_at", "created_seq", "created_by_run")
        ),
    ),
    Table(
        "dataset_version_runs", ("version_id", "run_id", "event_time", "event_seq"), ("version_id", "run_id")
    ),
    Table("job_parents", ("parent_node_id", "child_node_id"), ("parent_node_id", "child_node_id")),
    # run-scoped: staged rows are complete for their runs and replace what was there
    Table("runs", _RUN_COLUMNS, ("run_id",), _replace(_RUN_COLUMNS, ("run_id",))),
    Table("run_facets", ("run_id", "name", "value_hash", "event_time"), ("run_id", "name")),
    Table("run_io", ("run_id", "direction", "node_id"), ("run_id", "direction", "node_id")),
    Table(
        "run_io_facets",
        ("run_id", "direction", "node_id", "name", "value_hash", "event_time"),
        ("run_id", "direction", "node_id", "name"),
    ),
    Table("job_versions", ("version_id", "node_id", "source_code_location", "sql"), ("version_id",)),
    Table("job_version_io", ("version_id", "direction", "node_id"), ("version_id", "direction", "node_id")),
    Table(
        "jobs",
        (
            "node_id",
            "namespace",
            "name",
            "created_at",
            "updated_at",
            "current_version",
            "latest_run_id",
            "latest_run_time",
        ),
        ("node_id",),
        _span("jobs")
        + ", "
        + _latest(
            "jobs",
            "latest_run_time",
            "latest_run_id",
            ("current_version", "latest_run_id", "latest_run_time"),
            ties=True,
        ),
    ),
    *ELEMENT_TABLES,
)
GRAPH_TABLES: tuple[Table, ...] = (
    Table("dataset_aliases", ("node_id", "canonical_id"), ("node_id",)),
    Table(
        "lineage_edges",
        ("src_id", "dst_id", "edge_type", "job_id", "version_id"),
        ("src_id", "dst_id", "edge_type"),
    ),
    Table("condensed_edges", ("src_id", "dst_id", "job_id"), ("src_id", "dst_id", "job_id")),
    Table("ultimate_nodes", ("node_id", "kind", "other_id", "distance"), ("node_id", "kind", "other_id")),
    Table("dataset_depth", ("node_id", "depth"), ("node_id",)),
)
TABLES = {t.name: t for t in (*FACT_TABLES, *GRAPH_TABLES)}
RUN_SCOPED = ("run_facets", "run_io", "run_io_facets", "dataset_version_runs")
MODEL_TABLES = tuple(TABLES)


def _dialect(store: EventStore, sql: str) -> str:
    if store.backend == "postgresql":
        return store.sql(sql.replace("{least}", "LEAST").replace("{greatest}", "GREATEST"))
    return sql.replace("{least}", "MIN").replace("{greatest}", "MAX")


def staging_folder(store: EventStore) -> Path:
    """SQLite: where executors write their staged rows, one small SQLite file per partition."""
    from headwater.store.sqlite.store import sqlite_path

    return Path(f"{sqlite_path(store.url)}.staging")


def prepare_staging(store: EventStore) -> None:
    """Create the staging tables when missing and empty them (a crashed run's leftovers)."""
    if store.backend == "sqlite":
        folder = staging_folder(store)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
    with store.transaction() as cur:
        for table in TABLES.values():
            if store.backend == "postgresql":
                cur.execute(
                    f"CREATE UNLOGGED TABLE IF NOT EXISTS {table.stage} AS "
                    f"SELECT {', '.join(table.columns)} FROM {table.name} WITH NO DATA"
                )
            else:
                cur.execute(
                    f"CREATE TABLE IF NOT EXISTS {table.stage} AS "
                    f"SELECT {', '.join(table.columns)} FROM {table.name} WHERE 0"
                )
            cur.execute(f"DELETE FROM {table.stage}")
        for scratch in ("stage_touched_versions", "stage_touched_dataset_versions"):
            unlogged = "UNLOGGED " if store.backend == "postgresql" else ""
            cur.execute(f"CREATE {unlogged}TABLE IF NOT EXISTS {scratch} (version_id TEXT)")
            cur.execute(f"DELETE FROM {scratch}")


def _tagged(frames: Mapping[str, DataFrame]) -> DataFrame:
    """All the frames as one: (table, JSON array of the row's values as text), so that staging
    every table is one Spark job instead of one per table. Written as one SQL statement over a
    view per frame: built with the DataFrame API, each of the ~400 expressions and unions was a
    call into the JVM that analysed the growing plan again (a fifth of a small batch's time)."""
    spark = next(iter(frames.values())).sparkSession
    parts = []
    for name, frame in frames.items():
        view = f"headwater_staged_{name}"
        frame.createOrReplaceTempView(view)
        values = ", ".join(f"CAST(`{column}` AS STRING)" for column in TABLES[name].columns)
        parts.append(f"SELECT '{name}' AS t, to_json(array({values})) AS v FROM {view}")
    return spark.sql("\nUNION ALL\n".join(parts))


def _grouped(rows: Iterable[Any]) -> Iterator[tuple[str, list[tuple[Any, ...]]]]:
    """(table, bounded chunk of its rows) from the tagged rows, in order."""
    import orjson

    current, chunk = "", list[tuple[Any, ...]]()
    for row in rows:
        table, values = row[0], tuple(orjson.loads(row[1]))
        if (table != current or len(chunk) >= _CHUNK) and chunk:
            yield current, chunk
            chunk = []
        current = table
        chunk.append(values)
    if chunk:
        yield current, chunk


def _copy_partition(url: str, rows: Iterable[Any]) -> None:
    """An executor's share of a PostgreSQL stage: COPY its rows, table by table, then commit."""
    conn = connect(url)
    try:
        with conn.cursor() as cur:
            for table, chunk in _grouped(rows):
                spec = TABLES[table]
                with cur.copy(f"COPY {spec.stage} ({', '.join(spec.columns)}) FROM STDIN") as copy:
                    for values in chunk:
                        copy.write_row(values)
        conn.commit()
    finally:
        conn.close()


def _sqlite_partition(folder: str, rows: Iterable[Any]) -> None:
    """An executor's share of a SQLite stage: its rows into a SQLite file of its own, renamed
    into place once complete (a failed task leaves only a `.tmp` file, which is ignored)."""
    import sqlite3
    import uuid

    final = Path(folder) / f"part-{uuid.uuid4().hex}.db"
    temporary = final.with_suffix(".tmp")
    conn = sqlite3.connect(temporary)
    created: set[str] = set()
    try:
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        for table, chunk in _grouped(rows):
            spec = TABLES[table]
            if table not in created:
                conn.execute(f"CREATE TABLE {spec.stage} ({', '.join(spec.columns)})")
                created.add(table)
            conn.executemany(f"INSERT INTO {spec.stage} VALUES ({', '.join('?' * len(spec.columns))})", chunk)
        conn.commit()
    finally:
        conn.close()
    if created:
        temporary.rename(final)
    else:
        temporary.unlink()


def _collect_sqlite_parts(store: EventStore) -> None:
    """The driver, SQLite's single writer, copies every executor's file into the staging tables:
    each file attached to the store, its tables copied inside SQLite, one transaction a file. (A
    copy through Python, 50,000 rows at a time, took 6 s of a 200,000-event batch's 85.)"""
    from headwater.store.sqlite.store import SqliteEventStore

    assert isinstance(store, SqliteEventStore)
    for part in sorted(staging_folder(store).glob("part-*.db")):
        with store.attached_transaction({"part": part}) as cur:
            cur.execute("SELECT name FROM part.sqlite_master WHERE type = 'table'")
            for (name,) in cur.fetchall():
                spec = TABLES[name.removeprefix("stage_")]
                cols = ", ".join(spec.columns)
                cur.execute(f"INSERT INTO main.{spec.stage} ({cols}) SELECT {cols} FROM part.{name}")
        part.unlink()


def _arrow_rows(batches: Iterable[pa.RecordBatch]) -> Iterator[tuple[str, str]]:
    """The (table, values) rows of the tagged frame's Arrow batches."""
    for batch in batches:
        yield from zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True)


def each_partition(frame: DataFrame, write: Callable[[Iterable[tuple[str, str]]], None]) -> None:
    """Run `write` on every partition's rows, on the executors, and wait for them all.

    Spark's `foreachPartition` goes through `DataFrame.rdd`, which analyses, optimises and
    plans the whole query a second time to turn its rows into Python objects: about 1 s of a
    small pass's 4 (bench/cli_pass.sh). `mapInArrow` stays in the query's own plan and hands the
    rows over as Arrow batches. It is called through the UDF it is made of, as PySpark's
    `mapInArrow` would, because that method asks for pandas, which neither side uses."""
    from pyspark.sql.udf import UserDefinedFunction
    from pyspark.util import PythonEvalType

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        write(_arrow_rows(batches))
        yield pa.RecordBatch.from_pydict({"done": [1]}, schema=_DONE)

    udf = UserDefinedFunction(run, returnType="done int", evalType=PythonEvalType.SQL_MAP_ARROW_ITER_UDF)
    column = udf(*[frame[name] for name in frame.columns])
    jdf = frame._jdf.mapInArrow(column._jc, False, None)
    DataFrame(jdf, frame.sparkSession).collect()


def stage(store: EventStore, url: str, frames: Mapping[str, DataFrame], partitions: int) -> None:
    """Fill `stage_<table>` for every frame (columns in the table's order), in one Spark job.

    Executors write in parallel: on PostgreSQL with COPY into the staging tables, on SQLite into
    files of their own that the driver, SQLite's single writer, then copies in."""
    tagged = _tagged(frames).coalesce(max(1, partitions))
    if store.backend == "postgresql":
        each_partition(tagged, lambda rows: _copy_partition(url, rows))
        return
    folder = str(staging_folder(store))
    each_partition(tagged, lambda rows: _sqlite_partition(folder, rows))
    _collect_sqlite_parts(store)


def _merge_table(store: EventStore, cur: Any, table: Table) -> None:
    cols = ", ".join(table.columns)
    action = f"DO UPDATE SET {table.on_conflict}" if table.on_conflict else "DO NOTHING"
    cur.execute(
        _dialect(
            store,
            f"INSERT INTO {table.name} ({cols}) SELECT {cols} FROM {table.stage} WHERE true "
            f"ON CONFLICT ({', '.join(table.key)}) {action}",
        )
    )


GRAPH_INPUTS = ("job_parents", "dataset_symlinks", "job_version_io")


def merge_facts(store: EventStore, checkpoint_from: int, checkpoint_to: int) -> bool:
    """One transaction: staged facts → model, job versions recounted, checkpoint advanced.

    Returns whether the graph's inputs changed (a job's current version, a new job version's
    inputs or outputs, a parent job, a symlink). When they did not and the graph was current, the
    graph checkpoint advances with the checkpoint and the graph stage can be skipped."""
    with store.transaction() as cur:
        state = _read_state(store, cur)
        if state[0] != checkpoint_from:
            raise PipelineBusy(
                f"the checkpoint moved from {checkpoint_from} to {state[0]} while this batch ran: "
                "another pipeline is writing this store's model"
            )
        graph_changed = merge_staged(store, cur)
        # an operator's deletions end where an event stored after them names the node again
        clear_deletions(cur, store.sql, checkpoint_from, checkpoint_to)
        graph_checkpoint = state[1]
        if not graph_changed and graph_checkpoint == checkpoint_from:
            graph_checkpoint = checkpoint_to
        cur.execute(
            store.sql(
                "UPDATE pipeline_state SET checkpoint = ?, graph_checkpoint = ?, batches = batches + 1, "
                "updated_at = ? WHERE name = ?"
            ),
            (checkpoint_to, graph_checkpoint, _now(), "lineage"),
        )
        clear_staged(cur)
    return graph_changed


def merge_staged(store: EventStore, cur: Any) -> bool:
    """Inside the caller's transaction: the staged facts merged into the model by each table's
    rule, job and dataset versions recounted, browse ids for new datasets and jobs. Returns
    whether the graph's inputs changed."""
    # job versions the touched runs used before, to recount after the runs change
    cur.execute(
        "INSERT INTO stage_touched_versions SELECT r.job_version FROM runs r "
        "WHERE r.job_version IS NOT NULL AND r.run_id IN (SELECT run_id FROM stage_runs)"
    )
    cur.execute(
        "INSERT INTO stage_touched_versions SELECT job_version FROM stage_runs WHERE job_version IS NOT NULL"
    )
    cur.execute(
        "INSERT INTO stage_touched_dataset_versions SELECT version_id FROM dataset_version_runs "
        "WHERE run_id IN (SELECT run_id FROM stage_runs)"
    )
    cur.execute(
        "INSERT INTO stage_touched_dataset_versions SELECT version_id FROM stage_dataset_version_runs"
    )
    for name in RUN_SCOPED:
        cur.execute(f"DELETE FROM {name} WHERE run_id IN (SELECT run_id FROM stage_runs)")
    cur.execute(
        "SELECT COUNT(*) FROM stage_jobs s LEFT JOIN jobs j ON j.node_id = s.node_id "
        "WHERE s.current_version IS NOT NULL "
        "AND (j.current_version IS NULL OR j.current_version <> s.current_version)"
    )
    row = cur.fetchone()
    graph_changed = bool(row and row[0])
    for table in FACT_TABLES:
        if table.name == "job_versions":
            cols = ", ".join(table.columns)
            cur.execute(
                f"INSERT INTO job_versions ({cols}, run_count) SELECT {cols}, 0 FROM stage_job_versions "
                "WHERE true ON CONFLICT (version_id) DO NOTHING"
            )
            continue
        _merge_table(store, cur, table)
        if table.name in GRAPH_INPUTS and cur.rowcount:
            graph_changed = True
    _recount_job_versions(store, cur)
    _recount_dataset_versions(cur)
    number_model_elements(cur, "stage_datasets", "stage_jobs")  # browse ids on first sight
    return graph_changed


def clear_staged(cur: Any) -> None:
    """Empty the fact tables' staging and the recount scratch tables."""
    for table in FACT_TABLES:
        cur.execute(f"DELETE FROM {table.stage}")
    cur.execute("DELETE FROM stage_touched_versions")
    cur.execute("DELETE FROM stage_touched_dataset_versions")


def _recount_job_versions(store: EventStore, cur: Any) -> None:
    touched = "SELECT version_id FROM stage_touched_versions"
    started = "COALESCE(r.started_at, r.first_event_time)"
    cur.execute(
        "UPDATE job_versions SET "
        f"created_at = (SELECT MIN({started}) FROM runs r WHERE r.job_version = job_versions.version_id), "
        f"updated_at = (SELECT MAX({started}) FROM runs r WHERE r.job_version = job_versions.version_id), "
        "run_count = (SELECT COUNT(*) FROM runs r WHERE r.job_version = job_versions.version_id) "
        f"WHERE version_id IN ({touched})"
    )
    cur.execute(
        "DELETE FROM job_version_io WHERE version_id IN "
        f"(SELECT v.version_id FROM job_versions v WHERE v.run_count = 0 AND v.version_id IN ({touched}))"
    )
    cur.execute(f"DELETE FROM job_versions WHERE run_count = 0 AND version_id IN ({touched})")


def _recount_dataset_versions(cur: Any) -> None:
    """A dataset version's creation is its earliest write; a version no run wrote any more (a
    run's early events named content its later events replaced) is removed."""
    touched = "SELECT version_id FROM stage_touched_dataset_versions"
    first = (
        "(SELECT {col} FROM dataset_version_runs l WHERE l.version_id = dataset_versions.version_id "
        "ORDER BY l.event_time, l.event_seq LIMIT 1)"
    )
    cur.execute(
        f"DELETE FROM dataset_versions WHERE version_id IN ({touched}) AND NOT EXISTS "
        "(SELECT 1 FROM dataset_version_runs l WHERE l.version_id = dataset_versions.version_id)"
    )
    cur.execute(
        f"UPDATE dataset_versions SET created_at = {first.format(col='l.event_time')}, "
        f"created_seq = {first.format(col='l.event_seq')}, created_by_run = {first.format(col='l.run_id')} "
        f"WHERE version_id IN ({touched})"
    )


def replace_graph(store: EventStore, names: Sequence[str], graph_checkpoint: int | None = None) -> None:
    """One transaction: the staged graph tables `names` replace the published ones; with
    `graph_checkpoint`, the graph is then current up to it (the graph stage publishes its edges,
    then its ends: a crash in between leaves the checkpoint behind, and the next pass redoes it)."""
    with store.transaction() as cur:
        for name in names:
            table = TABLES[name]
            cur.execute(f"DELETE FROM {table.name}")
            cols = ", ".join(table.columns)
            cur.execute(f"INSERT INTO {table.name} ({cols}) SELECT {cols} FROM {table.stage}")
            cur.execute(f"DELETE FROM {table.stage}")
        if graph_checkpoint is not None:
            _advance_graph(store, cur, graph_checkpoint)


def replace_graph_rows(
    store: EventStore, tables: Mapping[str, Sequence[tuple[Any, ...]]], graph_checkpoint: int
) -> None:
    """One transaction: the graph tables' rows computed in the driver (`driver_graph`) replace
    the published ones, and the graph is then current up to `graph_checkpoint`."""
    with store.transaction() as cur:
        for name, rows in tables.items():
            table = TABLES[name]
            cur.execute(f"DELETE FROM {table.name}")
            if rows:
                cols, marks = ", ".join(table.columns), ", ".join("?" * len(table.columns))
                cur.executemany(store.sql(f"INSERT INTO {table.name} ({cols}) VALUES ({marks})"), rows)
        _advance_graph(store, cur, graph_checkpoint)


def _advance_graph(store: EventStore, cur: Any, graph_checkpoint: int) -> None:
    cur.execute(
        store.sql("UPDATE pipeline_state SET graph_checkpoint = ?, updated_at = ? WHERE name = ?"),
        (graph_checkpoint, _now(), "lineage"),
    )


def _read_state(store: EventStore, cur: Any) -> tuple[int, int]:
    cur.execute(
        store.sql("SELECT checkpoint, graph_checkpoint FROM pipeline_state WHERE name = ?"), ("lineage",)
    )
    row = cur.fetchone()
    if row is None:
        cur.execute(
            store.sql("INSERT INTO pipeline_state VALUES (?, 0, 0, 0, ?)"),
            ("lineage", _now()),
        )
        return (0, 0)
    return (int(row[0]), int(row[1]))


def read_state(store: EventStore) -> tuple[int, int]:
    """(checkpoint, graph checkpoint): the last seq whose events are in the model and graph."""
    with store.transaction() as cur:
        return _read_state(store, cur)


def waiting(store: EventStore) -> int | None:
    """Events stored above the checkpoint (0 when only the graph is behind), or None when the
    model, graph included, is current: a pass would do nothing."""
    checkpoint, graph_checkpoint = read_state(store)
    events = max(0, store.last_seq() - checkpoint)
    return events if events or graph_checkpoint < checkpoint else None


def reset_model(store: EventStore) -> None:
    """Empty every model table and the checkpoint (for `pipeline rebuild`)."""
    with store.transaction() as cur:
        for name in MODEL_TABLES:
            cur.execute(f"DELETE FROM {name}")
        cur.execute("DELETE FROM pipeline_state")


def _now() -> str:
    from headwater.events.times import format_ticks, now_ticks

    return format_ticks(now_ticks())
