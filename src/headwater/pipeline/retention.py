"""Retention: delete the events older than a limit and keep in the model only what the remaining
events support, so that afterwards the model equals `pipeline rebuild` over them.

The model is refreshed, not rebuilt. Under the pipeline lock, with D the events past the limit
(store.retention_sql lists them; a run goes whole or stays) and only the events the model holds
(seq <= checkpoint) read:

1. D's frames are staged: their keys are what D contributed to (runs, datasets, jobs, sources,
   symlinks, parent links, elements and their edges, facet values, schemas).
2. R, every remaining event that can contribute to one of those keys, is staged: all events of the
   runs that read, wrote or ran an affected dataset or job (or a dataset of an affected source),
   every event without a run, and the generic events that share an element with D.
3. One transaction: D's runs and their rows go, D's facet assertions go, the rows of D's keys go
   and R's staged rows are merged back by the pipeline's own rules (for counted element rows, only
   D's keys); versions are recounted, namespaces recomputed from their datasets and jobs, facet
   values, schemas and column lineage no remaining assertion names are swept.
4. The events go, in bounded transactions; then the graph stage rebuilds the graph tables.

A crash between 3 and 4 leaves events the model already forgot; the next retention lists them again
and refreshing with them is harmless (their keys are recomputed from what remains).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from headwater.events.times import TICKS_PER_SECOND, format_ticks, now_ticks
from headwater.pipeline import publish
from headwater.pipeline import transforms as t
from headwater.pipeline.frames import model_frames
from headwater.pipeline.runner import Pipeline
from headwater.pipeline.source import EVENT_COLUMNS, EVENT_SCHEMA
from headwater.store import model
from headwater.store import retention_sql as sql
from headwater.store.base import EventStore
from headwater.store.model import merge
from headwater.store.model.checkpoint import forget_graph
from headwater.store.model.tables import RUN_SCOPED

log = logging.getLogger(__name__)

# what D contributed to, kept from its staged frames: table → key columns
_KEYS: dict[str, tuple[str, ...]] = {
    "runs": ("run_id",),
    "datasets": ("node_id",),
    "jobs": ("node_id",),
    "sources": ("name",),
    "namespaces": ("name",),
    "dataset_symlinks": ("node_id", "alias_node_id"),
    "job_parents": ("parent_node_id", "child_node_id"),
    "element_nodes": ("node_id",),
    "element_edges": ("src_id", "dst_id", "event_type"),
    "facet_values": ("hash",),
    "schema_fields": ("schema_hash",),
    "column_lineage": ("facet_hash",),
}
_REFOLDED = (
    "datasets",
    "jobs",
    "sources",
    "dataset_symlinks",
    "job_parents",
    "element_nodes",
    "element_edges",
)
_KEPT_SCHEMAS = "retention_kept_schemas"
_COUNTED = ("runs", "jobs", "datasets", "job_versions", "dataset_versions", "namespaces", "sources")
_DAY = 24 * 3600


def _key_table(name: str) -> str:
    return f"retention_{name}"


SCRATCH = (sql.DOOMED, *(_key_table(n) for n in _KEYS), _KEPT_SCHEMAS, "retention_lost_tags")


@dataclass
class RetentionReport:
    """What a retention removed (or, dry, would remove from the event store)."""

    cutoff: str
    dry_run: bool
    events: int = 0
    runs: int = 0
    generic_events: int = 0
    dead_letters: int = 0
    model: dict[str, int] = field(default_factory=dict)  # rows removed per model table
    seconds: float = 0.0

    def lines(self) -> list[str]:
        verb = "would delete" if self.dry_run else "deleted"
        out = [
            f"events older than {self.cutoff}: {verb} {self.events} event(s) "
            f"({self.runs} run(s), {self.generic_events} generic event(s)) "
            f"and {self.dead_letters} dead letter(s)"
        ]
        if not self.dry_run:
            removed = ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in self.model.items() if n)
            out.append(f"model: removed {removed or 'nothing'}; in {self.seconds:.1f} s")
        return out


def cutoff_for(days: float, now: int | None = None) -> str:
    """The eventTime before which events are past a limit of `days` (a store time string)."""
    ticks = (now_ticks() if now is None else now) - int(
        timedelta(days=days).total_seconds() * TICKS_PER_SECOND
    )
    return format_ticks(ticks)


def _counts(store: EventStore) -> dict[str, int]:
    with store.transaction() as cur:
        out = {}
        for name in _COUNTED:
            cur.execute(f"SELECT COUNT(*) FROM {name}")
            out[name] = int(cur.fetchone()[0])
        return out


def apply_retention(
    store: EventStore,
    cutoff: str,
    *,
    pipeline: Callable[[], Pipeline] | None = None,
    dry_run: bool = False,
) -> RetentionReport:
    """Delete the events older than `cutoff` (eventTime; a run goes whole) and refresh the model.
    `pipeline` gives the Pipeline whose SparkSession refreshes the model; it is called only when
    the model holds events to forget. With `dry_run`, only counts."""
    started = time.perf_counter()
    report = RetentionReport(cutoff, dry_run)
    with model.pipeline_lock(store):
        try:
            sql.list_doomed(store, cutoff, store.last_seq())
            doomed = sql.count_doomed(store, cutoff)
            report.events, report.runs = doomed.events, doomed.runs
            report.generic_events, report.dead_letters = doomed.generic_events, doomed.dead_letters
            if dry_run:
                return report
            before = _counts(store)
            checkpoint, _ = model.read_state(store)
            runner = None
            if sql.count_held(store, checkpoint):
                if pipeline is None:
                    raise ValueError("retention needs a pipeline to refresh a published model")
                runner = pipeline()
                _refresh_model(runner, checkpoint)
            sql.delete_doomed(store, cutoff)
            if runner is not None:
                runner.graph_stage(checkpoint)
            after = _counts(store)
            report.model = {name: before[name] - after[name] for name in _COUNTED}
        finally:
            sql.drop_scratch(store, SCRATCH)
        model.mark_retention(store)
    report.seconds = time.perf_counter() - started
    return report


# -- the model refresh ---------------------------------------------------------------------------
def _events(pipeline: Pipeline, where: str) -> DataFrame:
    cols = ", ".join(f"e.{c}" for c in EVENT_COLUMNS)
    raw = pipeline.read_table(f"SELECT {cols} FROM events e WHERE {where}", EVENT_SCHEMA)
    return t.parse_events(raw)


def _stage(pipeline: Pipeline, events: DataFrame) -> None:
    frames = model_frames(events, events)  # whole runs: every event of a run is in the set
    publish.stage(pipeline.store, frames.tables, pipeline.shuffle_partitions())
    frames.release()


def _refresh_model(pipeline: Pipeline, checkpoint: int) -> None:
    store: EventStore = pipeline.store
    model.prepare_staging(store)
    held = f"e.seq <= {int(checkpoint)}"
    doomed = f"e.seq IN (SELECT seq FROM {sql.DOOMED})"
    _stage(pipeline, _events(pipeline, f"{held} AND {doomed}"))
    with store.transaction() as cur:
        for name, key in _KEYS.items():
            cur.execute(f"DROP TABLE IF EXISTS {_key_table(name)}")
            cur.execute(
                f"CREATE TABLE {_key_table(name)} AS SELECT DISTINCT {', '.join(key)} FROM stage_{name}"
            )
        merge.clear_staged(cur)
        # the datasets of an affected source are affected too
        cur.execute(
            f"INSERT INTO {_key_table('datasets')} SELECT DISTINCT f.node_id FROM dataset_facets f "
            "JOIN facet_values v ON v.hash = f.value_hash JOIN datasets d ON d.node_id = f.node_id "
            f"WHERE f.name = 'dataSource' AND COALESCE({_json_name(store)}, d.namespace) IN "
            f"(SELECT name FROM {_key_table('sources')})"
        )
    runs = (
        f"SELECT run_id FROM run_io WHERE node_id IN (SELECT node_id FROM {_key_table('datasets')}) "
        f"UNION SELECT run_id FROM runs WHERE job_node_id IN (SELECT node_id FROM {_key_table('jobs')})"
    )
    shared = (
        "SELECT g.event_id FROM generic_event_elements g WHERE g.element_id IN (SELECT d.element_id "
        f"FROM generic_event_elements d WHERE d.event_id IN (SELECT seq FROM {sql.DOOMED}))"
    )
    # run-less events: every job event (their inputs and outputs are not indexed), the dataset
    # events of affected datasets
    affected = f"SELECT node_id FROM {_key_table('datasets')}"
    runless = (
        "e.run_id IS NULL AND e.kind <> 'generic' AND (e.job_name IS NOT NULL OR "
        f"'dataset:' || e.dataset_namespace || ':' || e.dataset_name IN ({affected}))"
    )
    remaining = f"{held} AND NOT {doomed} AND (({runless}) OR e.run_id IN ({runs}) OR e.seq IN ({shared}))"
    _stage(pipeline, _events(pipeline, remaining))
    _keep_schemas(pipeline)
    with store.transaction() as cur:
        _forget(cur)
        merge.merge_staged(store, cur)
        _recompute_namespaces(store, cur)
        _sweep(cur)
        merge.clear_staged(cur)
        forget_graph(store, cur)


def _json_name(store: EventStore) -> str:
    if store.backend == "postgresql":
        return "(v.value::json ->> 'name')"
    return "json_extract(v.value, '$.name')"


def _in_keys(name: str, alias: str = "") -> str:
    key = _KEYS[name]
    cols = ", ".join(f"{alias}{c}" for c in key)
    target = f"({cols})" if len(key) > 1 else cols
    return f"{target} IN (SELECT {', '.join(key)} FROM {_key_table(name)})"


def _forget(cur: Any) -> None:
    """D's runs, facet assertions and keyed rows leave the model; the staged rows of R that are
    counted (element nodes and edges) are kept only for D's keys."""
    runs = f"SELECT run_id FROM {_key_table('runs')}"
    cur.execute(
        "INSERT INTO stage_touched_versions SELECT job_version FROM runs "
        f"WHERE job_version IS NOT NULL AND run_id IN ({runs})"
    )
    cur.execute(
        f"INSERT INTO stage_touched_dataset_versions SELECT version_id FROM dataset_version_runs "
        f"WHERE run_id IN ({runs})"
    )
    for name in (*RUN_SCOPED, "runs"):
        cur.execute(f"DELETE FROM {name} WHERE run_id IN ({runs})")
    for name in ("dataset_facets", "job_facets"):
        cur.execute(f"DELETE FROM {name} WHERE seq IN (SELECT seq FROM {sql.DOOMED})")
    for name in _REFOLDED:
        cur.execute(f"DELETE FROM {name} WHERE {_in_keys(name)}")
    for name in ("element_nodes", "element_edges"):
        cur.execute(f"DELETE FROM stage_{name} WHERE NOT {_in_keys(name)}")


def _recompute_namespaces(store: EventStore, cur: Any) -> None:
    """A namespace spans its datasets and jobs (the same events name both)."""
    cur.execute(f"DELETE FROM namespaces WHERE {_in_keys('namespaces')}")
    cur.execute(
        "INSERT INTO namespaces (name, created_at, updated_at) SELECT namespace, MIN(created_at), "
        "MAX(updated_at) FROM (SELECT namespace, created_at, updated_at FROM datasets "
        "UNION ALL SELECT namespace, created_at, updated_at FROM jobs) n "
        f"WHERE namespace IN (SELECT name FROM {_key_table('namespaces')}) GROUP BY namespace"
    )


def _sweep(cur: Any) -> None:
    """Content D named that no remaining assertion names any more."""
    unnamed = " AND ".join(
        f"NOT EXISTS (SELECT 1 FROM {n} x WHERE x.value_hash = facet_values.hash)"
        for n in ("dataset_facets", "job_facets", "run_facets", "run_io_facets")
    )
    cur.execute(f"DELETE FROM facet_values WHERE {_in_keys('facet_values')} AND {unnamed}")
    cur.execute(
        f"DELETE FROM column_lineage WHERE {_in_keys('column_lineage')} AND NOT EXISTS "
        "(SELECT 1 FROM dataset_facets f WHERE f.value_hash = column_lineage.facet_hash "
        "AND f.name = 'columnLineage' AND f.deleted = 0)"
    )
    cur.execute(
        f"DELETE FROM schema_fields WHERE {_in_keys('schema_fields')} "
        f"AND schema_hash NOT IN (SELECT schema_hash FROM {_KEPT_SCHEMAS})"
    )


def _keep_schemas(pipeline: Pipeline) -> None:
    """Of the schemas D named, those a remaining schema assertion still has (the schema hash is
    Spark's digest of the facet's fields, so Spark computes it)."""
    store: EventStore = pipeline.store
    values = pipeline.read_table(
        "SELECT DISTINCT v.hash AS value_hash, v.value AS value FROM facet_values v "
        "WHERE v.hash IN (SELECT f.value_hash FROM dataset_facets f WHERE f.name = 'schema' "
        f"AND f.deleted = 0 AND f.seq NOT IN (SELECT seq FROM {sql.DOOMED}))",
        "value_hash string, value string",
    )
    fields = values.select(F.get_json_object("value", "$.fields").alias("fields")).where(
        F.col("fields").isNotNull()
    )
    hashes = {row[0] for row in fields.select(t.digest(F.col("fields"))).distinct().collect()}
    with store.transaction() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {_KEPT_SCHEMAS}")
        cur.execute(f"CREATE TABLE {_KEPT_SCHEMAS} (schema_hash TEXT)")
        cur.execute(f"SELECT schema_hash FROM {_key_table('schema_fields')}")
        wanted = {row[0] for row in cur.fetchall()} & hashes
        if wanted:
            cur.executemany(store.sql(f"INSERT INTO {_KEPT_SCHEMAS} VALUES (?)"), [(h,) for h in wanted])


# -- once a day ----------------------------------------------------------------------------------
def retain_daily(days: float, store: EventStore, pipeline: Callable[[], Pipeline]) -> RetentionReport | None:
    """For the continuous pipeline: apply a limit of `days` when a day has passed since the last
    retention on this store (0 days: never)."""
    if days <= 0:
        return None
    last = model.last_retention(store)
    if last is not None and last > format_ticks(now_ticks() - _DAY * TICKS_PER_SECOND):
        return None
    report = apply_retention(store, cutoff_for(days), pipeline=pipeline)
    log.info("retention: %s", "; ".join(report.lines()))
    return report
