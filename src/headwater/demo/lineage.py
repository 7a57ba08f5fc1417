"""A deterministic, realistic OpenLineage history: the lineage behind `headwater up --demo`, the
end-to-end tests of the lineage pipeline and the benchmarks.

The graph
---------
Task jobs form layered pipelines over six dataset namespaces::

    postgres://appdb:5432, kafka://broker:9092     source tables and topics (read, never written)
      → ingest   (Spark)          s3://lake raw/<domain>          (+ raw/_rejects/<domain> on some)
      → staging  (dbt or Spark)   bigquery acme-analytics.staging.stg_<domain>
                                  or postgres://warehouse:5432 warehouse.staging.stg_<domain>
      → marts    (dbt)            bigquery acme-analytics.marts.fct_<domain> | dim_<domain>
      → reports  (Airflow)        postgres://warehouse:5432 warehouse.reporting.rpt_<domain>_<period>
                                  or s3://lake exports/rpt_<domain>_<period>

Staging and mart jobs join two or three inputs (fan-in) and many datasets feed several jobs
(fan-out); the longest dataset path is five datasets long (source → raw → staging → mart →
report). One Airflow task, ``reconcile_<domain>``, reads the first mart and writes the staging
table that mart is built from: the one deliberate cycle.

Job namespaces come in threes, ``spark-lake``, ``dbt-analytics``, ``airflow-prod``, then the same
with ``-2``, ``-3``... Each holds an orchestrator job (``lake_etl``, ``dbt-run-analytics``,
``daily_pipeline``, suffixed ``_2``... likewise) whose run is the parent of its namespace's task
runs. The Airflow DAG ``airflow-prod/daily_pipeline`` is the root of everything: the other
orchestrator runs are its children, and every ParentRunFacet names it as ``root``.

The history
-----------
One scheduled run of every job a day from 2025-03-03 (02:00 UTC), times rising as a scheduler
would produce them. About 5% of task runs FAIL (with an errorMessage facet) and are retried once;
about 1.5% ABORT; about 6% send a RUNNING event. From the *change day* (the middle of the
history) on:

* a few datasets get a new schema (a column added, in staging also widened decimals) with the
  code change of the job writing them (new git sha, new SQL); a few other jobs change code too;
* the raw lake datasets also known as Hive tables (``s3://lake raw/<d>`` =
  ``hive://metastore:9083 raw.<d>``, read by dbt under the Hive name) carry the symlinks facet:
  before, both names were used unlinked.

Static metadata: on the first day DatasetEvents (documentation, ownership) and JobEvents (one for
a running job, one for ``daily_pipeline.export_partner_feed`` which never runs); on the change
day a DatasetEvent deleting (``_deleted``) the ownership facet of the first mart.

Delivery: every day's events are returned in *arrival* order: about 3% arrive late (some STARTs
after their COMPLETE, RUNNINGs after it, others a few places late) and about 1% twice.

`demo_facts` lists the names a test needs (namespaces, jobs, symlinks, the cycle...).

The parts: `scenario.json` (read by `scenario`) holds the domains, integrations, people and teams;
`graph` builds the jobs and datasets (`nodes`, `column_lineage`); `history` runs them day by day,
with `facets`, `static_events` and `timeline` (event times, arrival order).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import orjson

from headwater.demo.facets import DATASET_EVENT_SCHEMA, JOB_EVENT_SCHEMA, RUN_EVENT_SCHEMA
from headwater.demo.graph import Graph
from headwater.demo.history import FAIL_RATE, RUNNING_RATE, History
from headwater.demo.nodes import Ref
from headwater.demo.timeline import DUPLICATE_RATE

__all__ = [
    "DATASET_EVENT_SCHEMA",
    "JOB_EVENT_SCHEMA",
    "RUN_EVENT_SCHEMA",
    "DemoFacts",
    "DemoShape",
    "demo_events",
    "demo_facts",
    "stream_events",
    "stream_shape",
]

MIN_JOBS = 10
_MAX_STREAM_NAMESPACES = 12


@dataclass(frozen=True)
class DemoShape:
    """Size of a demo lineage. `jobs` counts task jobs (the orchestrator job of each namespace and
    the static-only job come on top); `runs_per_job` is the number of scheduled days, so retried
    jobs run a little more often. The graph depends on (namespaces, jobs, seed) only."""

    namespaces: int = 3
    jobs: int = 20
    runs_per_job: int = 3
    seed: int = 7

    def __post_init__(self) -> None:
        if self.namespaces < 3:
            raise ValueError(f"namespaces must be at least 3 (Spark, dbt, Airflow), got {self.namespaces}")
        if self.jobs < MIN_JOBS:
            raise ValueError(f"jobs must be at least {MIN_JOBS}, got {self.jobs}")
        if self.runs_per_job < 2:
            raise ValueError(
                f"runs_per_job must be at least 2 (a change day needs a before), got {self.runs_per_job}"
            )


@dataclass(frozen=True)
class DemoFacts:
    """What a demo lineage contains, by name: (namespace, name) pairs unless said otherwise."""

    job_namespaces: tuple[str, ...]
    dataset_namespaces: tuple[str, ...]
    root_job: Ref  # the Airflow DAG every run descends from
    orchestrators: tuple[Ref, ...]  # one per job namespace, root_job first
    tasks: tuple[Ref, ...]  # task jobs that run, in pipeline order
    static_jobs: tuple[Ref, ...]  # jobs known only from JobEvents
    datasets: tuple[Ref, ...]  # every dataset name used by run events (both names of symlinked ones)
    symlinks: tuple[tuple[Ref, Ref], ...]  # (storage name carrying the facet later, table name)
    cycle_job: Ref
    cycle: tuple[Ref, Ref]  # (dataset the cycle job reads, upstream dataset it writes)
    deepest_path: tuple[Ref, ...]  # a longest dataset path: source → raw → staging → mart → report
    schema_changes: tuple[Ref, ...]  # datasets whose schema changes on change_day
    code_changes: tuple[Ref, ...]  # jobs whose code (sourceCodeLocation version) changes on change_day
    # (job, output) pairs whose columnLineage uses the deprecated transformationType/Description
    deprecated_lineage: tuple[tuple[Ref, Ref], ...]
    deleted_facet: tuple[Ref, str]  # dataset and facet deleted by a DatasetEvent on change_day
    change_day: int  # day index (0-based) of the changes and of the first symlinks facet


def _change_day(days: int) -> int:
    return max(1, days // 2)


def demo_events(shape: DemoShape = DemoShape()) -> list[dict[str, Any]]:
    """The complete demo history of `shape`, in arrival order; every event an independent dict."""
    history = History(Graph(shape.namespaces, shape.jobs, shape.seed), _change_day(shape.runs_per_job))
    events = [event for day in range(shape.runs_per_job) for event in history.day(day)]
    return cast(list[dict[str, Any]], orjson.loads(orjson.dumps(events)))


def stream_shape(n_events: int, *, seed: int = 7, jobs: int | None = None) -> DemoShape:
    """The shape `stream_events(n_events, seed=seed, jobs=jobs)` draws from: about n/2000 jobs (at
    least 20), more namespaces as jobs grow, and the days n events take (`runs_per_job`)."""
    if n_events < 0:
        raise ValueError(f"n_events must not be negative, got {n_events}")
    if jobs is None:
        jobs = max(20, n_events // 2000)
    namespaces = min(_MAX_STREAM_NAMESPACES, 3 + jobs // 100)
    per_day = (jobs * (2 + RUNNING_RATE + 2 * FAIL_RATE) + 2 * namespaces) * (1 + DUPLICATE_RATE)
    days = max(2, math.ceil(n_events / per_day))
    return DemoShape(namespaces=namespaces, jobs=jobs, runs_per_job=days, seed=seed)


def stream_events(n_events: int, *, seed: int = 7, jobs: int | None = None) -> Iterator[dict[str, Any]]:
    """Exactly `n_events` events of a history as large as needed, generated lazily one day at a time
    (memory bounded by the graph, not by n). Events share their unchanging facet objects: treat
    them as read-only (serialize, don't mutate)."""
    shape = stream_shape(n_events, seed=seed, jobs=jobs)
    return _stream(shape, n_events)


def _stream(shape: DemoShape, n_events: int) -> Iterator[dict[str, Any]]:
    if n_events == 0:
        return
    history = History(Graph(shape.namespaces, shape.jobs, shape.seed), _change_day(shape.runs_per_job))
    sent = 0
    for day in itertools.count():
        for event in history.day(day):
            yield event
            sent += 1
            if sent == n_events:
                return


def demo_facts(shape: DemoShape = DemoShape()) -> DemoFacts:
    """Names and features of the lineage `demo_events(shape)` generates (and `stream_events` for
    `stream_shape(n)`), for tests to be written against."""
    g = Graph(shape.namespaces, shape.jobs, shape.seed)
    used: dict[Ref, None] = {}
    for job in g.tasks:
        for read in job.inputs:
            used[read.ref] = None
        for ds in job.outputs:
            used[ds.ref] = None
    cycle_job = g.cycle_job
    return DemoFacts(
        job_namespaces=tuple(ns.name for ns in g.namespaces),
        dataset_namespaces=tuple(dict.fromkeys(ns for ns, _ in used)),
        root_job=g.orchestrators[2].ref,
        orchestrators=(g.orchestrators[2].ref, *(o.ref for i, o in enumerate(g.orchestrators) if i != 2)),
        tasks=tuple(job.ref for job in g.tasks),
        static_jobs=(g.static_job.ref,),
        datasets=tuple(used),
        symlinks=tuple((ds.ref, ds.alias) for ds in g.raws if ds.alias is not None),
        cycle_job=cycle_job.ref,
        cycle=(cycle_job.inputs[0].ref, cycle_job.outputs[0].ref),
        deepest_path=g.deepest_path(),
        schema_changes=tuple(ds.ref for ds in g.schema_changes),
        code_changes=tuple(job.ref for job in g.tasks if job.code_change),
        deprecated_lineage=tuple(
            (job.ref, job.outputs[i].ref) for job in g.tasks for i in sorted(job.deprecated_lineage)
        ),
        deleted_facet=(g.marts[0].ref, "ownership"),
        change_day=_change_day(shape.runs_per_job),
    )
