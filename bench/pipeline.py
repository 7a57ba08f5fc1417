"""Benchmark of Headwater's Spark lineage pipeline on SQLite and/or PostgreSQL.

    .venv/bin/python bench/pipeline.py [--events 1000000] [--backend sqlite|postgresql|both]

Steps, for each backend, on one fresh store:

  1. load N realistic events (bench/_common.EventFactory, many runs open at once) through
     validate_event + EventStore.append, in chunks of 5,000: events/s
  2. Pipeline(spark_session("local[2]")).run_once() from an empty model: events/s, slowest stages
     (if it fails, the failure is a line of the table and a rebuild with smaller batches follows)
  3. the same transformation as a single-machine DuckDB script over the same events: seconds,
     Spark/DuckDB ratio, and a table-by-table comparison with the model Spark published
  4. incremental: 1,000 more events of the same stream (some continue runs already in the model),
     then run_once() again, five times in one session: the median pass's seconds
  5. continuous: `headwater serve` on the store and Pipeline.continuous(interval=1) in a thread;
     single-event POSTs of new runs, each timed from its 201 until the run is in `runs`
  6. a rebuild on a Spark standalone cluster (2 workers of 1 core) against the local[2] pass

See bench/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import http.client
import importlib.util
import itertools
import json
import multiprocessing
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime, timedelta
from multiprocessing.pool import AsyncResult, Pool
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypedDict

import orjson
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    REPO,
    Database,
    EventFactory,
    Figure,
    Server,
    human_bytes,
    machine_busy_now,
    now_stamp,
    percentile,
    print_table,
)
from headwater.store.graph import ENDS_CAP, PAST_CAP

if TYPE_CHECKING:
    import duckdb
    from pyspark.sql import SparkSession

    from headwater.pipeline.runner import PassResult
    from headwater.store.base import EventStore

SPARK_TARGET = 25_000.0  # events/s, first pass from an empty model
INCREMENTAL_TARGET_S = 3.0  # issue 13: +1,000 events on 1,000,000 published
CONTINUOUS_TARGET_S = 3.0  # median, 201 → run in the model (issue 13)
DUCKDB_RATIO_TARGET = 2.0  # issue 13: the pipeline's first pass at most 2x the DuckDB script's time
LOAD_CHUNK = 5_000
POLL_INTERVAL = 0.1


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class Fig(Figure):
    """A table line whose value keeps `digits` decimals; no value (nan) means the step failed."""

    digits: int = 0

    @property
    def verdict(self) -> str:
        if self.value != self.value:
            return "n/a"
        return super().verdict

    def shown(self, value: float) -> str:
        if value != value:
            return "n/a"
        return f"{value:,.{self.digits}f} {self.unit}".rstrip()


NAN = float("nan")


class PipelineOptions(TypedDict, total=False):
    """Pipeline constructor settings the bench may change from their defaults."""

    batch_events: int


# --------------------------------------------------------------------------------------------
# The event stream: runs overlap in time, as producers send them
# --------------------------------------------------------------------------------------------


def _when(doc: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(doc["eventTime"])


class EventStream:
    """An endless, deterministic stream of RunEvents in eventTime order, many runs open at once.

    A run (2-6 events: START, RUNNING..., COMPLETE or FAIL, 7 s apart, from EventFactory) starts
    every 1-2 s, so about 15 runs are open at any point: where the stream is cut, the events that
    follow continue runs whose first events came before the cut.
    """

    def __init__(self, factory: EventFactory, seed: int = 7) -> None:
        self.factory = factory
        self.rng = random.Random(seed)
        self.moment = datetime(2025, 3, 1, tzinfo=UTC)
        self.parent = (self._uuid(), "dag_ingest.orders")
        self._pending: list[tuple[datetime, int, list[dict[str, Any]], int]] = []  # heap
        self._tie = itertools.count()

    def _uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _start_run(self) -> None:
        if self.rng.random() < 0.1:
            self.parent = (self._uuid(), f"dag_{self.rng.randrange(50)}.run")
        events = self.factory.run_events(
            self._uuid(), self.rng.randint(2, 6), self.moment, parent=self.parent
        )
        heapq.heappush(self._pending, (_when(events[0]), next(self._tie), events, 0))
        self.moment += timedelta(seconds=1, microseconds=self.rng.randrange(10**6))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self

    def __next__(self) -> dict[str, Any]:
        while not self._pending or self._pending[0][0] > self.moment:
            self._start_run()
        _, _, events, index = heapq.heappop(self._pending)
        if index + 1 < len(events):
            heapq.heappush(self._pending, (_when(events[index + 1]), next(self._tie), events, index + 1))
        return events[index]

    def take(self, n: int) -> list[dict[str, Any]]:
        return [next(self) for _ in range(n)]

    def open_runs(self) -> int:
        return len(self._pending)

    def new_run(self) -> tuple[str, dict[str, Any]]:
        """The START event of a run of its own (not part of the stream's interleaving)."""
        run_id = self._uuid()
        return run_id, self.factory.run_events(run_id, 1, self.moment, parent=self.parent)[0]


# --------------------------------------------------------------------------------------------
# Step 1: loading the store (forked processes validate while this one generates and appends)
# --------------------------------------------------------------------------------------------

_EVENT_FIELDS: tuple[str, ...] = ()


def _worker_init() -> None:
    """In a worker: the default SIGTERM (Pool.terminate ends workers with it), not the bench's."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _validate_chunk(raws: list[bytes]) -> list[tuple[Any, ...]]:
    """In a worker: decode and validate serialized events; Events go back as plain tuples."""
    global _EVENT_FIELDS
    from headwater.events.model import Event
    from headwater.events.validate import validate_event

    if not _EVENT_FIELDS:
        _EVENT_FIELDS = tuple(f.name for f in fields(Event))
    out = []
    for raw in raws:
        event = validate_event(orjson.loads(raw), raw)
        out.append(tuple(getattr(event, name) for name in _EVENT_FIELDS))
    return out


def _now_text() -> str:
    from headwater.events.times import format_ticks, now_ticks

    return format_ticks(now_ticks())


def load_events(store: EventStore, stream: EventStream, total: int, pool: Pool) -> tuple[int, float]:
    """Append `total` events of the stream in chunks of LOAD_CHUNK; at most a few chunks in flight,
    so memory stays bounded whatever the total. Returns (events stored, seconds)."""
    from headwater.events.model import Event

    started = last_report = time.perf_counter()
    inflight: deque[AsyncResult[list[tuple[Any, ...]]]] = deque()
    produced = stored = 0

    def submit() -> None:
        nonlocal produced
        size = min(LOAD_CHUNK, total - produced)
        raws = [orjson.dumps(doc) for doc in stream.take(size)]
        produced += size
        inflight.append(pool.apply_async(_validate_chunk, (raws,)))

    while produced < total and len(inflight) < 4:
        submit()
    while inflight:
        rows = inflight.popleft().get()
        if produced < total:
            submit()
        stored += sum(store.append([Event(*row) for row in rows], _now_text()))
        now = time.perf_counter()
        if now - last_report > 15:
            last_report = now
            log(f"  load {stored:,}/{total:,} ({stored / (now - started):,.0f} events/s)")
    return stored, time.perf_counter() - started


def append_inline(store: EventStore, docs: Sequence[dict[str, Any]]) -> int:
    from headwater.events.validate import validate_event

    events = []
    for doc in docs:
        raw = orjson.dumps(doc)
        events.append(validate_event(doc, raw))
    return sum(store.append(events, _now_text()))


# --------------------------------------------------------------------------------------------
# Reading the store without Spark
# --------------------------------------------------------------------------------------------


def read_connection(url: str) -> Any:
    """A read-only connection to the store; a SQLite one may be used from any thread (DuckDB pulls
    Arrow batches from its own threads, one at a time)."""
    if url.startswith("sqlite:"):
        from headwater.store.sqlite.store import sqlite_path

        return sqlite3.connect(
            f"file:{sqlite_path(url)}?mode=ro", uri=True, timeout=30, check_same_thread=False
        )
    import psycopg

    return psycopg.connect(url.replace("postgresql+psycopg:", "postgresql:", 1))


def store_scalar(url: str, query: str) -> Any:
    conn = read_connection(url)
    try:
        cur = conn.cursor()
        cur.execute(query)
        row = cur.fetchone()
        return row[0] if row else None
    finally:
        conn.close()


def store_reader(
    url: str, query: str, names: Sequence[str], types: Sequence[pa.DataType], *, whole: bool = False
) -> pa.RecordBatchReader:
    """The rows of one query as a stream of Arrow record batches (10,000 rows each). With
    `whole`, the query's last three columns are an event's stored `payload`, `core` and
    `facet_count`, and the stream's last column (`names[-1]`) is the payload made whole (a stored
    core gets its facet values back, as the store's own reads give events back)."""
    from headwater.store.event_facets import assemble_payloads, fetch_values, stored_core

    schema = pa.schema(list(zip(names, types, strict=True)))

    def batches() -> Iterator[pa.RecordBatch]:
        conn = read_connection(url)
        try:
            values = conn.cursor()
            sqlite = url.startswith("sqlite:")

            def sql(text: str) -> str:
                return text if sqlite else text.replace("?", "%s")

            if sqlite:
                cur = conn.cursor()
            else:
                cur = conn.cursor(name="headwater_bench")  # server-side: rows arrive as fetched
                cur.itersize = 10_000
            cur.execute(query)
            while True:
                rows = cur.fetchmany(10_000)
                if not rows:
                    return
                if whole:
                    payloads = assemble_payloads(
                        [(stored_core(row[-3], row[-2]), row[-1]) for row in rows],
                        lambda hashes: fetch_values(values, sql, hashes),
                    )
                    rows = [(*row[:-3], payload) for row, payload in zip(rows, payloads, strict=True)]
                columns = list(zip(*rows, strict=True))
                yield pa.RecordBatch.from_arrays(
                    [pa.array(col, type=types[i]) for i, col in enumerate(columns)], schema=schema
                )
        finally:
            conn.close()

    return pa.RecordBatchReader.from_batches(schema, batches())


# --------------------------------------------------------------------------------------------
# Step 3: the transformation as a DuckDB script
# --------------------------------------------------------------------------------------------

_MAP = "MAP(VARCHAR, JSON)"
_DATASET = {
    "namespace": "VARCHAR",
    "name": "VARCHAR",
    "facets": _MAP,
    "inputFacets": _MAP,
    "outputFacets": _MAP,
}
_PAYLOAD = json.dumps(
    {
        "run": {"runId": "VARCHAR", "facets": _MAP},
        "job": {"namespace": "VARCHAR", "name": "VARCHAR", "facets": _MAP},
        "inputs": [_DATASET],
        "outputs": [_DATASET],
        "dataset": _DATASET,
    }
)
_FIELDS_SHAPE = json.dumps([{"name": "VARCHAR", "type": "VARCHAR", "description": "VARCHAR"}])
_TRANSFORMATION = {"type": "VARCHAR", "subtype": "VARCHAR", "description": "VARCHAR", "masking": "BOOLEAN"}
_LINEAGE_INPUTS = [
    {"namespace": "VARCHAR", "name": "VARCHAR", "field": "VARCHAR", "transformations": [_TRANSFORMATION]}
]
_LINEAGE_SPEC = json.dumps(
    {"inputFields": _LINEAGE_INPUTS, "transformationType": "VARCHAR", "transformationDescription": "VARCHAR"}
)
_LINEAGE_FACET = json.dumps({"fields": _MAP, "dataset": _LINEAGE_INPUTS})
_SYMLINKS_SHAPE = json.dumps([{"namespace": "VARCHAR", "name": "VARCHAR", "type": "VARCHAR"}])
_EVENT_READ = ("seq", "kind", "run_id", "parent_run_id", "root_run_id", "event_type", "event_time")


def _digest(*parts: str) -> str:
    """The pipeline's content hash: first 32 hex digits of SHA-256 of the parts joined by U+001F."""
    inner = ", ".join(f"coalesce(CAST({p} AS VARCHAR), '')" for p in parts)
    return f"substr(sha256(concat_ws(chr(31), {inner})), 1, 32)"


def _max_struct(where: str | None = None, **parts: str) -> str:
    """max() of a struct whose first fields order the rows: the latest (or largest) row's values."""
    value = "struct_pack(" + ", ".join(f"{k} := {v}" for k, v in parts.items()) + ")"
    return f"max({f'CASE WHEN {where} THEN {value} END' if where else value})"


def _latest(alias: str, where: str | None = None, **parts: str) -> str:
    return f"{_max_struct(where, **parts)} AS {alias}"


def _facet_rows(source: str, keys: str, facets: str, where: str = "true") -> str:
    """(keys, event_time, seq, name, value, value_hash) for every non-null facet of the rows."""
    return f"""
        SELECT {keys}, event_time, seq, e.key AS name, CAST(e.value AS VARCHAR) AS value,
               {_digest("CAST(e.value AS VARCHAR)")} AS value_hash
        FROM (SELECT {keys}, event_time, seq, unnest(map_entries({facets})) AS e FROM {source} WHERE {where})
        WHERE e.value IS NOT NULL"""


def _history(source: str) -> str:
    """Every facet assertion of dataset or job rows, one per (node, name, eventTime, seq)."""
    return f"""
        SELECT node_id, name, valid_from, seq, p.h AS value_hash,
               CASE WHEN json_extract_string(p.v, '$._deleted') = 'true' THEN 1 ELSE 0 END AS deleted,
               p.v AS value
        FROM (SELECT node_id, name, event_time AS valid_from, seq, {_latest("p", h="value_hash", v="value")}
              FROM ({_facet_rows(source, "node_id", "facets")})
              GROUP BY node_id, name, event_time, seq)"""


def _changes(history: str) -> str:
    """Of each (node, name)'s assertions, those the model keeps: the first and the last, a value
    other than the one before, a deletion and the one after it."""
    return f"""
        SELECT node_id, name, valid_from, seq, value_hash, deleted FROM (
            SELECT node_id, name, valid_from, seq, value_hash, deleted,
                   LAG(seq) OVER w AS prev_seq, LAG(value_hash) OVER w AS prev_hash,
                   LAG(deleted) OVER w AS prev_deleted, LEAD(seq) OVER w AS next_seq
            FROM {history} WINDOW w AS (PARTITION BY node_id, name ORDER BY valid_from, seq))
        WHERE prev_seq IS NULL OR next_seq IS NULL OR deleted <> 0 OR prev_deleted <> 0
              OR value_hash <> prev_hash"""


def _refs_side(side: str, extra: str, role: str) -> str:
    """One row per dataset of the events' inputs or outputs, with its trusted facets."""
    return f"""
        SELECT seq, event_time, run_id, '{role}' AS role, x.d.namespace AS namespace, x.d.name AS name,
               trusted(x.d.facets, untrusted, '{side}[' || x.pos || '].facets.') AS facets,
               trusted(x.d.{extra}, untrusted, '{side}[' || x.pos || '].{extra}.') AS io_facets
        FROM (SELECT seq, event_time, run_id, untrusted,
                     unnest(list_transform(doc.{side}, lambda d, i: struct_pack(d := d, pos := i - 1))) AS x
              FROM ev)"""


def _location_text() -> str:
    keys = ("type", "url", "repoUrl", "path", "version", "tag", "branch")
    parts = ", ".join(f"json_extract_string(location_facet, '$.{k}')" for k in keys)
    return f"CASE WHEN location_facet IS NOT NULL THEN concat_ws(' ', {parts}) END"


_STATE = """CASE decided.t WHEN 'START' THEN 'RUNNING' WHEN 'RUNNING' THEN 'RUNNING'
                 WHEN 'COMPLETE' THEN 'COMPLETED' WHEN 'FAIL' THEN 'FAILED' WHEN 'ABORT' THEN 'ABORTED'
                 WHEN 'OTHER' THEN 'NEW' END"""
_STARTED = "coalesce(start_time, running_time, first_event_time)"
_SOURCE_NAME = "coalesce(json_extract_string(CAST(facets['dataSource'] AS VARCHAR), '$.name'), namespace)"
_SCHEMA_FIELDS = (
    "nullif(CAST(json_extract(CAST(facets['schema'] AS VARCHAR), '$.fields') AS VARCHAR), 'null')"
)
_PARENT_JOB = (
    "'job:' || json_extract_string(p, '$.job.namespace') || ':' || json_extract_string(p, '$.job.name')"
)

DUCKDB_STEPS: tuple[tuple[str, str], ...] = (
    # -- per-dataset and per-job rows of every event (the pipeline's dataset_refs and job_refs)
    (
        "refs",
        f"""CREATE TEMP TABLE refs AS
        SELECT *, 'dataset:' || namespace || ':' || name AS node_id FROM (
            {_refs_side("inputs", "inputFacets", "input")}
            UNION ALL {_refs_side("outputs", "outputFacets", "output")}
            UNION ALL
            SELECT seq, event_time, run_id, 'static', doc.dataset.namespace, doc.dataset.name,
                   trusted(doc.dataset.facets, untrusted, 'dataset.facets.'), NULL
            FROM ev WHERE doc.dataset IS NOT NULL)""",
    ),
    (
        "job_refs",
        """CREATE TEMP TABLE job_refs AS
        SELECT seq, event_time, run_id, doc.job.namespace AS namespace, doc.job.name AS name,
               'job:' || doc.job.namespace || ':' || doc.job.name AS node_id,
               trusted(doc.job.facets, untrusted, 'job.facets.') AS facets
        FROM ev WHERE doc.job.name IS NOT NULL""",
    ),
    # -- runs: state by event semantics (a terminal event outranks START/RUNNING whatever its time)
    (
        "runs_base",
        f"""CREATE TEMP TABLE runs_base AS
        SELECT run_id, latest.j AS job_node_id, {_STATE} AS state, decided.e AS state_time,
               {_STARTED} AS started_at,
               CASE WHEN decided.r = 2 THEN decided.e END AS ended_at,
               CASE WHEN decided.r = 2
                    THEN CAST(floor((micros(decided.e) - micros({_STARTED})) / 1000) AS BIGINT)
               END AS duration_ms,
               json_extract_string(n.v, '$.nominalStartTime') AS nominal_start,
               json_extract_string(n.v, '$.nominalEndTime') AS nominal_end,
               p.v AS parent_run_id, coalesce(r.v, p.v, run_id) AS root_run_id,
               first_event_time, last_event_time, event_count, updated_seq
        FROM (
            SELECT run_id,
                   {_latest("latest", e="event_time", s="seq", j="job_node_id")},
                   {_latest("decided", r="rank", e="event_time", s="seq", t="event_type")},
                   min(CASE WHEN event_type = 'START' THEN event_time END) AS start_time,
                   min(CASE WHEN rank = 1 THEN event_time END) AS running_time,
                   min(event_time) AS first_event_time, max(event_time) AS last_event_time,
                   {_latest("p", "parent_run_id IS NOT NULL", e="event_time", s="seq", v="parent_run_id")},
                   {_latest("r", "root_run_id IS NOT NULL", e="event_time", s="seq", v="root_run_id")},
                   {_latest("n", "nominal IS NOT NULL", e="event_time", s="seq", v="nominal")},
                   count(*) AS event_count, max(seq) AS updated_seq
            FROM (
                SELECT run_id, seq, event_time, event_type, parent_run_id, root_run_id,
                       CAST(doc.run.facets['nominalTime'] AS VARCHAR) AS nominal,
                       'job:' || doc.job.namespace || ':' || doc.job.name AS job_node_id,
                       CASE WHEN event_type IN ('COMPLETE', 'FAIL', 'ABORT') THEN 2
                            WHEN event_type IN ('START', 'RUNNING') THEN 1 ELSE 0 END AS rank
                FROM ev WHERE run_id IS NOT NULL AND doc.job.name IS NOT NULL)
            GROUP BY run_id)""",
    ),
    (
        "run_facets",
        f"""CREATE TEMP TABLE run_facets_full AS
        SELECT run_id, name, l.h AS value_hash, l.e AS event_time, l.v AS value
        FROM (SELECT run_id, name, {_latest("l", e="event_time", s="seq", h="value_hash", v="value")}
              FROM ({
            _facet_rows(
                "ev", "run_id", "trusted(doc.run.facets, untrusted, 'run.facets.')", "run_id IS NOT NULL"
            )
        })
              GROUP BY run_id, name)""",
    ),
    (
        "job_parents",
        f"""CREATE TABLE job_parents AS
        SELECT DISTINCT {_PARENT_JOB} AS parent_node_id, 'job:' || ns || ':' || name AS child_node_id
        FROM (SELECT CAST(doc.run.facets['parent'] AS VARCHAR) AS p, doc.job.namespace AS ns,
                     doc.job.name AS name
              FROM ev)
        WHERE p IS NOT NULL AND name IS NOT NULL AND json_extract_string(p, '$.job.namespace') IS NOT NULL
              AND json_extract_string(p, '$.job.name') IS NOT NULL""",
    ),
    ("drop events", "DROP TABLE ev"),
    # -- entities
    (
        "namespaces",
        """CREATE TABLE namespaces AS
        SELECT namespace AS name, min(event_time) AS created_at, max(event_time) AS updated_at
        FROM (SELECT namespace, event_time FROM refs UNION ALL SELECT namespace, event_time FROM job_refs)
        GROUP BY namespace""",
    ),
    (
        "sources",
        f"""CREATE TABLE sources AS
        SELECT name, l.u AS uri, created_at, updated_at, l.e AS set_time, l.s AS set_seq
        FROM (SELECT name, {_latest("l", e="event_time", s="seq", u="uri")},
                     min(event_time) AS created_at, max(event_time) AS updated_at
              FROM (SELECT coalesce(json_extract_string(ds, '$.name'), namespace) AS name,
                           json_extract_string(ds, '$.uri') AS uri, event_time, seq
                    FROM (SELECT namespace, event_time, seq, CAST(facets['dataSource'] AS VARCHAR) AS ds
                          FROM refs)
                    WHERE ds IS NOT NULL)
              GROUP BY name)""",
    ),
    (
        "dataset_version_rows",
        f"""CREATE TEMP TABLE dv AS
        SELECT node_id, run_id, w.e AS event_time, w.s AS seq, schema_hash, version_label, lifecycle,
               {_digest("node_id", "schema_hash", "version_label", "lifecycle")} AS version_id
        FROM (SELECT node_id, run_id, w, version_label, lifecycle,
                     CASE WHEN fields IS NOT NULL THEN {_digest("fields")} END AS schema_hash
              FROM (SELECT run_id, node_id, max(struct_pack(e := event_time, s := seq)) AS w,
                           {_max_struct("fields IS NOT NULL", e="event_time", s="seq", v="fields")}.v
                               AS fields,
                           {_max_struct("label IS NOT NULL", e="event_time", s="seq", v="label")}.v
                               AS version_label,
                           {_max_struct("lifecycle IS NOT NULL", e="event_time", s="seq", v="lifecycle")}.v
                               AS lifecycle
                    FROM (SELECT run_id, node_id, event_time, seq, {_SCHEMA_FIELDS} AS fields,
                                 json_extract_string(CAST(facets['version'] AS VARCHAR), '$.datasetVersion')
                                     AS label,
                                 json_extract_string(CAST(facets['lifecycleStateChange'] AS VARCHAR),
                                                     '$.lifecycleStateChange') AS lifecycle
                          FROM refs WHERE role = 'output' AND run_id IS NOT NULL)
                    GROUP BY run_id, node_id))""",
    ),
    (
        "dataset_versions",
        """CREATE TABLE dataset_versions AS
        SELECT version_id, node_id, schema_hash, version_label, lifecycle,
               f.e AS created_at, f.s AS created_seq, f.r AS created_by_run
        FROM (SELECT version_id, node_id, schema_hash, version_label, lifecycle,
                     min(struct_pack(e := event_time, s := seq, r := run_id)) AS f
              FROM dv GROUP BY version_id, node_id, schema_hash, version_label, lifecycle)""",
    ),
    (
        "dataset_version_runs",
        """CREATE TABLE dataset_version_runs AS
        SELECT version_id, run_id, event_time, seq AS event_seq FROM dv""",
    ),
    (
        "datasets",
        f"""CREATE TABLE datasets AS
        SELECT b.node_id, namespace, name, created_at, updated_at,
               src.n AS source_name, src.e AS source_time, src.s AS source_seq,
               l.v.v AS current_version, l.v.e AS version_time, l.v.s AS version_seq
        FROM (SELECT node_id, namespace, name, min(event_time) AS created_at, max(event_time) AS updated_at,
                     {
            _latest("src", "facets['dataSource'] IS NOT NULL", e="event_time", s="seq", n=_SOURCE_NAME)
        }
              FROM refs GROUP BY node_id, namespace, name) b
        LEFT JOIN (SELECT node_id, {_latest("v", e="event_time", s="seq", v="version_id")}
                   FROM dv GROUP BY node_id) l ON l.node_id = b.node_id""",
    ),
    # -- facet history: every assertion with its value hash; the values once per hash
    ("dataset_facets", f"CREATE TEMP TABLE dataset_history AS {_history('refs')}"),
    ("job_facets", f"CREATE TEMP TABLE job_history AS {_history('job_refs')}"),
    (
        "run_io_facets",
        f"""CREATE TEMP TABLE run_io_facets_full AS
        SELECT run_id, direction, node_id, name, l.h AS value_hash, l.e AS event_time, l.v AS value
        FROM (SELECT run_id, role AS direction, node_id, name,
                     {_latest("l", e="event_time", s="seq", h="value_hash", v="value")}
              FROM ({
            _facet_rows(
                "refs",
                "run_id, role, node_id",
                "io_facets",
                "run_id IS NOT NULL AND role IN ('input', 'output')",
            )
        })
              GROUP BY run_id, role, node_id, name)""",
    ),
    (
        "facet_values",
        """CREATE TABLE facet_values AS
        SELECT value_hash AS hash, any_value(value) AS value
        FROM (SELECT value_hash, value FROM dataset_history
              UNION ALL SELECT value_hash, value FROM job_history
              UNION ALL SELECT value_hash, value FROM run_facets_full
              UNION ALL SELECT value_hash, value FROM run_io_facets_full)
        GROUP BY value_hash""",
    ),
    (
        "facet tables",
        f"""CREATE TABLE dataset_facets AS {_changes("dataset_history")};
        CREATE TABLE job_facets AS {_changes("job_history")};
        CREATE TABLE run_facets AS SELECT run_id, name, value_hash, event_time FROM run_facets_full;
        CREATE TABLE run_io_facets AS
            SELECT run_id, direction, node_id, name, value_hash, event_time FROM run_io_facets_full""",
    ),
    (
        "schema_fields",
        f"""CREATE TABLE schema_fields AS
        SELECT schema_hash, path, position, type, description
        FROM (SELECT schema_hash, x.f.name AS path,
                     CAST(row_number() OVER (PARTITION BY schema_hash ORDER BY x.i) - 1 AS INTEGER)
                         AS position,
                     x.f.type AS type, x.f.description AS description
              FROM (SELECT {_digest("fields")} AS schema_hash,
                           unnest(list_transform(json_transform(fields, '{_FIELDS_SHAPE}'),
                                                 lambda f, i: struct_pack(f := f, i := i))) AS x
                    FROM (SELECT DISTINCT nullif(CAST(json_extract(value, '$.fields') AS VARCHAR), 'null')
                                              AS fields
                          FROM dataset_history WHERE name = 'schema' AND deleted = 0)
                    WHERE fields IS NOT NULL)
              WHERE x.f.name IS NOT NULL)
        QUALIFY row_number() OVER (PARTITION BY schema_hash, path ORDER BY position) = 1""",
    ),
    (
        "column_lineage",
        f"""CREATE TABLE column_lineage AS
        WITH facets AS (
            SELECT value_hash AS facet_hash, any_value(value) AS value FROM dataset_history
            WHERE name = 'columnLineage' AND deleted = 0 GROUP BY value_hash),
        parsed AS (SELECT facet_hash, json_transform(value, '{_LINEAGE_FACET}') AS f FROM facets),
        specs AS (
            SELECT facet_hash, e.key AS field,
                   json_transform(CAST(e.value AS VARCHAR), '{_LINEAGE_SPEC}') AS s
            FROM (SELECT facet_hash, unnest(map_entries(f.fields)) AS e FROM parsed)),
        inputs AS (
            SELECT facet_hash, field, s.transformationType AS legacy_type,
                   s.transformationDescription AS legacy_text, unnest(s.inputFields) AS i
            FROM specs
            UNION ALL SELECT facet_hash, '', NULL, NULL, unnest(f.dataset) FROM parsed),
        named AS (
            SELECT *, 'dataset:' || i.namespace || ':' || i.name AS input_node_id,
                   coalesce(i.field, '') AS input_field
            FROM inputs WHERE i.namespace IS NOT NULL AND i.name IS NOT NULL),
        edges AS (
            SELECT facet_hash, field, input_node_id, input_field, coalesce(t.type, 'DIRECT') AS type,
                   coalesce(t.subtype, '') AS subtype, t.description, CAST(t.masking AS INTEGER) AS masking
            FROM (SELECT *, unnest(i.transformations) AS t FROM named WHERE len(i.transformations) > 0)
            UNION ALL  -- the deprecated form: transformationType / transformationDescription on the field
            SELECT facet_hash, field, input_node_id, input_field,
                   CASE WHEN legacy_type = 'INDIRECT' THEN 'INDIRECT' ELSE 'DIRECT' END,
                   CASE WHEN legacy_type NOT IN ('DIRECT', 'INDIRECT') THEN legacy_type ELSE '' END,
                   legacy_text, CAST(NULL AS INTEGER)
            FROM named WHERE coalesce(len(i.transformations), 0) = 0)
        SELECT facet_hash, field, input_node_id, input_field, type, subtype,
               any_value(description) AS description, any_value(masking) AS masking
        FROM edges GROUP BY ALL""",
    ),
    (
        "dataset_symlinks",
        f"""CREATE TABLE dataset_symlinks AS
        SELECT node_id, alias_node_id, min(type) AS type
        FROM (SELECT node_id, 'dataset:' || i.namespace || ':' || i.name AS alias_node_id,
                     coalesce(i.type, '') AS type
              FROM (SELECT node_id,
                           unnest(json_transform(json_extract(CAST(facets['symlinks'] AS VARCHAR),
                                                              '$.identifiers'),
                                                 '{_SYMLINKS_SHAPE}')) AS i
                    FROM refs WHERE facets['symlinks'] IS NOT NULL)
              WHERE i.namespace IS NOT NULL AND i.name IS NOT NULL)
        WHERE node_id <> alias_node_id GROUP BY node_id, alias_node_id""",
    ),
    # -- runs, their inputs and outputs, job versions, jobs
    (
        "run_io",
        """CREATE TABLE run_io AS
        SELECT DISTINCT run_id, role AS direction, node_id FROM refs
        WHERE run_id IS NOT NULL AND role IN ('input', 'output')""",
    ),
    (
        "run_job_versions",
        f"""CREATE TEMP TABLE run_versions AS
        SELECT *, {
            _digest(
                "job_node_id",
                "source_code_location",
                "sql",
                "array_to_string(inputs, chr(30))",
                "array_to_string(outputs, chr(30))",
            )
        } AS version_id
        FROM (SELECT c.run_id, job_node_id, {_location_text()} AS source_code_location,
                     json_extract_string(sql_facet, '$.query') AS sql,
                     coalesce(s.inputs, CAST([] AS VARCHAR[])) AS inputs,
                     coalesce(s.outputs, CAST([] AS VARCHAR[])) AS outputs
              FROM (SELECT run_id, job_node_id, location.v AS location_facet, query.v AS sql_facet
                    FROM (SELECT run_id, node_id AS job_node_id,
                                 {
            _latest(
                "location",
                "facets['sourceCodeLocation'] IS NOT NULL",
                e="event_time",
                s="seq",
                v="CAST(facets['sourceCodeLocation'] AS VARCHAR)",
            )
        },
                                 {
            _latest(
                "query",
                "facets['sql'] IS NOT NULL",
                e="event_time",
                s="seq",
                v="CAST(facets['sql'] AS VARCHAR)",
            )
        }
                          FROM job_refs WHERE run_id IS NOT NULL GROUP BY run_id, node_id)) c
              LEFT JOIN (SELECT run_id,
                                list_sort(list_distinct(list(node_id) FILTER (WHERE direction = 'input')))
                                    AS inputs,
                                list_sort(list_distinct(list(node_id) FILTER (WHERE direction = 'output')))
                                    AS outputs
                         FROM run_io GROUP BY run_id) s ON s.run_id = c.run_id)""",
    ),
    (
        "runs",
        """CREATE TABLE runs AS
        SELECT b.run_id, job_node_id, state, state_time, started_at, ended_at, duration_ms, nominal_start,
               nominal_end, parent_run_id, root_run_id, v.version_id AS job_version, first_event_time,
               last_event_time, event_count, updated_seq
        FROM runs_base b LEFT JOIN (SELECT run_id, version_id FROM run_versions) v ON v.run_id = b.run_id""",
    ),
    (
        "job_versions",
        """CREATE TABLE job_versions AS
        SELECT v.version_id, node_id, source_code_location, sql, c.created_at, c.updated_at,
               coalesce(c.run_count, 0) AS run_count
        FROM (SELECT version_id, any_value(job_node_id) AS node_id,
                     any_value(source_code_location) AS source_code_location, any_value(sql) AS sql
              FROM run_versions GROUP BY version_id) v
        LEFT JOIN (SELECT job_version, min(coalesce(started_at, first_event_time)) AS created_at,
                          max(coalesce(started_at, first_event_time)) AS updated_at, count(*) AS run_count
                   FROM runs GROUP BY job_version) c ON c.job_version = v.version_id""",
    ),
    (
        "job_version_io",
        """CREATE TABLE job_version_io AS
        SELECT DISTINCT version_id, 'input' AS direction, unnest(inputs) AS node_id FROM run_versions
        UNION SELECT DISTINCT version_id, 'output', unnest(outputs) FROM run_versions""",
    ),
    (
        "jobs",
        f"""CREATE TABLE jobs AS
        SELECT t.node_id, namespace, name, created_at, updated_at,
               l.l.v AS current_version, l.l.r AS latest_run_id, l.l.s AS latest_run_time
        FROM (SELECT node_id, namespace, name, min(event_time) AS created_at, max(event_time) AS updated_at
              FROM job_refs GROUP BY node_id, namespace, name) t
        LEFT JOIN (SELECT job_node_id, {_latest("l", s="started_at", r="run_id", v="job_version")}
                   FROM runs GROUP BY job_node_id) l ON l.job_node_id = t.node_id""",
    ),
    # -- the graph
    (
        "dataset_aliases",
        """CREATE TABLE dataset_aliases AS
        WITH RECURSIVE pairs(a, b) AS (
            SELECT node_id, alias_node_id FROM dataset_symlinks
            UNION SELECT alias_node_id, node_id FROM dataset_symlinks),
        reach(node_id, other) AS (
            SELECT a, a FROM pairs
            UNION SELECT r.node_id, p.b FROM reach r JOIN pairs p ON p.a = r.other),
        -- a component is named by its smallest dataset that events named ('0' + id) before names
        -- only a symlinks facet gave ('1' + id)
        labels AS (
            SELECT n AS node_id, CASE WHEN bool_or(k) THEN '0' ELSE '1' END || n AS label FROM (
                SELECT node_id AS n, true AS k FROM dataset_symlinks
                UNION ALL SELECT alias_node_id, alias_node_id IN (SELECT node_id FROM datasets)
                FROM dataset_symlinks) GROUP BY n)
        SELECT r.node_id, substr(min(l.label), 2) AS canonical_id
        FROM reach r JOIN labels l ON l.node_id = r.other GROUP BY r.node_id""",
    ),
    (
        "lineage_edges",
        """CREATE TABLE lineage_edges AS
        WITH io AS (
            SELECT j.node_id AS job_id, j.current_version AS version_id, v.direction,
                   coalesce(a.canonical_id, v.node_id) AS node_id
            FROM jobs j JOIN job_version_io v ON v.version_id = j.current_version
            LEFT JOIN dataset_aliases a ON a.node_id = v.node_id),
        edges AS (
            SELECT node_id AS src_id, job_id AS dst_id, 'input' AS edge_type, job_id, version_id
            FROM io WHERE direction = 'input'
            UNION ALL SELECT job_id, node_id, 'output', job_id, version_id FROM io WHERE direction = 'output'
            UNION ALL SELECT parent_node_id, child_node_id, 'parent', child_node_id, CAST(NULL AS VARCHAR)
            FROM job_parents)
        SELECT src_id, dst_id, edge_type, any_value(job_id) AS job_id, any_value(version_id) AS version_id
        FROM edges GROUP BY src_id, dst_id, edge_type""",
    ),
    (
        "condensed_edges",
        """CREATE TEMP TABLE condensed_edges AS
        SELECT DISTINCT i.src_id, o.dst_id, i.dst_id AS job_id
        FROM lineage_edges i JOIN lineage_edges o ON o.src_id = i.dst_id AND o.edge_type = 'output'
        WHERE i.edge_type = 'input' AND i.src_id <> o.dst_id""",
    ),
)
# Tables the pipeline publishes that the steps above also write (the comparison reads these).
DUCKDB_TABLES = (
    "namespaces", "sources", "datasets", "facet_values", "dataset_facets", "job_facets", "schema_fields",
    "column_lineage", "dataset_symlinks", "dataset_versions", "dataset_version_runs", "job_parents", "runs",
    "run_facets", "run_io", "run_io_facets", "job_versions", "job_version_io", "jobs", "dataset_aliases",
    "lineage_edges", "ultimate_nodes", "dataset_depth",
)  # fmt: skip
DUCKDB_COVERAGE = (
    "DuckDB script: one SQL statement per model table over the same stored events (read with Python "
    "sqlite3/psycopg into Arrow batches, as DuckDB's sqlite/postgres scanners cannot be installed offline), "
    "each payload parsed once with json_transform, results written into tables of a DuckDB file. It "
    "computes all 23 tables the pipeline publishes from OpenLineage events (entities, facet history and "
    "values, schema fields, column lineage, symlinks and aliases, dataset and job versions, runs with state "
    "by event semantics, run io, lineage edges, ultimate nodes capped at 1,000 ends a dataset, depth; the "
    "condensed edges as an intermediate) with the same rules and hashes, and is "
    "checked against the pipeline's tables (line 3. tables equal). It does NOT do what makes the pipeline "
    "incremental and safe: no batches with read-back of earlier run events, no staging and merge into the "
    "store, no checkpoint, no lock, no executors; nested schema fields are not flattened (the generated "
    "events have none)."
)


def _ultimate_nodes(con: duckdb.DuckDBPyConnection) -> None:
    """Ultimate sources and destinations by the pipeline's iterative propagation (shortest distance
    to every end; an end is a dataset with no neighbour that way), then topological depth."""
    con.execute(
        "CREATE TABLE ultimate_nodes (node_id VARCHAR, kind VARCHAR, other_id VARCHAR, distance INTEGER)"
    )
    con.execute("CREATE TEMP TABLE flat AS SELECT DISTINCT src_id, dst_id FROM condensed_edges")
    for kind, node, nxt in (("source", "dst_id", "src_id"), ("destination", "src_id", "dst_id")):
        con.execute(f"CREATE OR REPLACE TEMP TABLE pairs AS SELECT {node} AS node, {nxt} AS next FROM flat")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE found AS SELECT n AS node_id, n AS other_id, 0 AS distance FROM "
            "(SELECT node AS n FROM pairs UNION SELECT next FROM pairs) WHERE NOT EXISTS "
            "(SELECT 1 FROM pairs p WHERE p.node = n)"
        )
        for _ in range(10_000):
            con.execute(
                "CREATE OR REPLACE TEMP TABLE merged AS "
                "SELECT node_id, other_id, min(distance) AS distance FROM ("
                "SELECT * FROM found UNION ALL SELECT p.node, f.other_id, f.distance + 1 FROM pairs p "
                "JOIN found f ON p.next = f.node_id) GROUP BY node_id, other_id"
            )
            changed = _scalar(con, "SELECT count(*) FROM (SELECT * FROM merged EXCEPT SELECT * FROM found)")
            con.execute("CREATE OR REPLACE TEMP TABLE found AS SELECT * FROM merged")
            if changed == 0:
                break
        # past ENDS_CAP ends, one marker row: the cap applied at the end gives what the pipeline's
        # propagation gives, since a node's ends include those of every node before it
        con.execute(
            "CREATE OR REPLACE TEMP TABLE past AS SELECT node_id FROM found GROUP BY node_id "
            f"HAVING count(*) > {ENDS_CAP}"
        )
        con.execute(
            f"INSERT INTO ultimate_nodes SELECT node_id, '{kind}', other_id, distance FROM found "
            f"WHERE node_id NOT IN (SELECT node_id FROM past) "
            f"UNION ALL SELECT node_id, '{kind}', '{PAST_CAP}', -1 FROM past"
        )
    con.execute(
        "CREATE TABLE dataset_depth AS SELECT node_id, CAST(max(distance) AS INTEGER) AS depth "
        "FROM ultimate_nodes "
        f"WHERE kind = 'source' GROUP BY node_id HAVING bool_and(other_id <> '{PAST_CAP}')"
    )


@dataclass
class DuckResult:
    seconds: float = 0.0
    events: int = 0
    steps: dict[str, float] = field(default_factory=dict)
    path: Path | None = None


def duckdb_model(
    url: str, high: int, workdir: Path, label: str, memory: str = "6GB"
) -> tuple[DuckResult, duckdb.DuckDBPyConnection]:
    """The model of the events with seq <= high, computed by DuckDB into a DuckDB file."""
    import duckdb

    out = DuckResult(path=workdir / f"{label}-model.duckdb")
    assert out.path is not None
    out.path.unlink(missing_ok=True)
    spill = workdir / f"{label}-duckdb-tmp"
    started = time.perf_counter()
    con = duckdb.connect(str(out.path))
    con.execute(f"SET temp_directory = '{spill}'")
    con.execute(f"SET memory_limit = '{memory}'")
    con.execute("SET preserve_insertion_order = false")
    con.execute(
        "CREATE TEMP MACRO trusted(facets, untrusted, prefix) AS "
        "CASE WHEN len(untrusted) = 0 OR facets IS NULL "
        "THEN facets ELSE map_from_entries(list_filter(map_entries(facets), "
        "lambda e: NOT list_contains(untrusted, prefix || e.key))) END"
    )
    con.execute("CREATE TEMP MACRO micros(t) AS epoch_us(strptime(substr(t, 1, 26), '%Y-%m-%dT%H:%M:%S.%f'))")
    names = (*_EVENT_READ, "untrusted_facets", "payload")
    types = [pa.int64()] + [pa.string()] * (len(names) - 1)
    reader = store_reader(
        url,
        f"SELECT {', '.join(names)}, core, facet_count FROM events WHERE seq <= {int(high)}",
        names,
        types,
        whole=True,
    )
    con.register("raw_events", reader)
    tick = time.perf_counter()
    con.execute(
        f"CREATE TEMP TABLE ev AS SELECT {', '.join(_EVENT_READ)}, "
        "coalesce(CAST(json_transform(untrusted_facets, '[\"VARCHAR\"]') AS VARCHAR[]), "
        "CAST([] AS VARCHAR[])) "
        f"AS untrusted, json_transform(payload, '{_PAYLOAD}') AS doc FROM raw_events"
    )
    con.unregister("raw_events")
    out.steps["read + parse"] = time.perf_counter() - tick
    out.events = _scalar(con, "SELECT count(*) FROM ev")
    for name, sql in DUCKDB_STEPS:
        tick = time.perf_counter()
        con.execute(sql)
        out.steps[name] = time.perf_counter() - tick
    tick = time.perf_counter()
    _ultimate_nodes(con)
    out.steps["ultimate_nodes + depth"] = time.perf_counter() - tick
    con.execute("CHECKPOINT")
    out.seconds = time.perf_counter() - started
    shutil.rmtree(spill, ignore_errors=True)
    return out, con


def compare_models(con: duckdb.DuckDBPyConnection, url: str, max_rows: int) -> tuple[int, list[str]]:
    """Each DuckDB table against the pipeline's table in the store: row counts, and (for tables of up
    to `max_rows` rows) the rows themselves, every column both have, as text. Returns (tables
    equal, differences)."""
    equal, differences = 0, []
    for table in DUCKDB_TABLES:
        ours = _scalar(con, f"SELECT count(*) FROM {table}")
        theirs = int(store_scalar(url, f"SELECT COUNT(*) FROM {table}"))
        if max(ours, theirs) > max_rows:
            if ours == theirs:
                equal += 1
            else:
                differences.append(f"{table}: {ours:,} rows in DuckDB, {theirs:,} in the store")
            continue
        stored = set(_store_columns(url, table))
        columns = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall() if r[0] in stored]
        cast = ", ".join(f"CAST({c} AS TEXT)" for c in columns)
        reader = store_reader(url, f"SELECT {cast} FROM {table}", columns, [pa.string()] * len(columns))
        con.register("store_rows", reader)
        con.execute("CREATE OR REPLACE TEMP TABLE store_copy AS SELECT * FROM store_rows")
        con.unregister("store_rows")
        mine = ", ".join(f"CAST({c} AS VARCHAR)" for c in columns)
        only_duck = f"SELECT {mine} FROM {table} EXCEPT ALL SELECT * FROM store_copy"
        only_store = f"SELECT * FROM store_copy EXCEPT ALL SELECT {mine} FROM {table}"
        a = _scalar(con, f"SELECT count(*) FROM ({only_duck})")
        b = _scalar(con, f"SELECT count(*) FROM ({only_store})")
        if table == "facet_values" and b and not a:
            # facet_values is insert-only: a run's value that a later batch superseded stays behind
            referenced = _scalar(
                con,
                f"SELECT count(*) FROM ({only_store}) s WHERE s.hash IN ("
                "SELECT value_hash FROM dataset_facets UNION ALL SELECT value_hash FROM job_facets "
                "UNION ALL SELECT value_hash FROM run_facets "
                "UNION ALL SELECT value_hash FROM run_io_facets)",
            )
            if not referenced:
                equal += 1
                differences.append(f"facet_values: equal but for {b:,} values the store keeps unreferenced")
                continue
        if a or b:
            differences.append(f"{table}: {a:,} rows only in DuckDB, {b:,} only in the store (of {theirs:,})")
            log(f"  {table} columns {columns}")
            log(f"  {table} only in DuckDB, e.g. {con.execute(only_duck + ' LIMIT 2').fetchall()}")
            log(f"  {table} only in the store, e.g. {con.execute(only_store + ' LIMIT 2').fetchall()}")
        else:
            equal += 1
    con.execute("DROP TABLE IF EXISTS store_copy")
    return equal, differences


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    rows = con.execute(sql).fetchall()
    return int(rows[0][0]) if rows and rows[0][0] is not None else 0


def _store_columns(url: str, table: str) -> list[str]:
    conn = read_connection(url)
    try:
        cur = conn.cursor()
        cur.execute(f"SELECT * FROM {table} WHERE 1 = 0")
        names = [d[0] for d in cur.description]
        cur.close()
        return names
    finally:
        conn.close()


# --------------------------------------------------------------------------------------------
# Spark helpers
# --------------------------------------------------------------------------------------------


def stop_spark() -> None:
    """Stop the active SparkSession; when its JVM is gone (Spark exits the JVM on an
    OutOfMemoryError), forget it so that the next spark_session() starts a new one."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    try:
        active = SparkSession.getActiveSession()
        if active is not None:
            active.stop()
        return
    except Exception as exc:
        log(f"  Spark's JVM is gone ({type(exc).__name__}); starting afresh next time")
    context = SparkContext._active_spark_context
    if context is not None:
        with contextlib.suppress(Exception):
            context.stop()
    SparkContext._active_spark_context = None
    SparkContext._gateway = None
    SparkContext._jvm = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
    # Module-level UDFs (transforms.py) keep the Java UDF made in the old JVM: make them anew.
    for name, module in list(sys.modules.items()):
        if name.startswith("headwater.pipeline"):
            for value in list(vars(module).values()):
                udf = getattr(value, "_unwrapped", None)
                if udf is not None and hasattr(udf, "_judf_placeholder"):
                    udf._judf_placeholder = None


def jvm_alive(spark: SparkSession) -> bool:
    try:
        return not spark.sparkContext._jsc.sc().isStopped()
    except Exception:
        return False


def stage_note(result: PassResult, top: int = 5) -> str:
    slowest = sorted(result.stages.items(), key=lambda kv: -kv[1])[:top]
    return ", ".join(f"{name} {secs:.1f}s" for name, secs in slowest)


def cli_rebuild(url: str, master: str, options: PipelineOptions) -> tuple[float, str]:
    """`headwater pipeline rebuild --master MASTER` on the store in a process of its own, as a
    user runs it, timed whole (the JVM's start included); its log lines (a line a batch) go to
    this bench's stderr. A second SparkContext in the bench's process would also work, but every
    task's accumulator update then fails against the first one's Python server, with an ERROR and
    a stack trace in the log each (a process that starts one context, as `headwater` does, has
    none). Returns the seconds and the command's summary line."""
    command = [sys.executable, "-m", "headwater", "pipeline", "rebuild", "--quiet", "--no-dogfood"]
    command += ["--master", master, "--database-url", url]
    if "batch_events" in options:
        command += ["--batch-events", str(options["batch_events"])]
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    seconds = time.perf_counter() - start
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0:
        raise RuntimeError(f"exit status {done.returncode} after {seconds:.1f} s: {lines[-1:]}")
    return seconds, lines[-1] if lines else ""


class StageLog:
    """Pipeline progress callback: logs each finished stage with the seconds since the previous."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.last = time.perf_counter()

    def __call__(self, step: str) -> None:
        now = time.perf_counter()
        log(f"  {self.label}: {step} ({now - self.last:.1f} s)")
        self.last = now


class SparkWatch:
    """Logs what Spark is busy with every `every` seconds while a long pass runs: progress on a
    pass that may take many minutes (the pipeline reports only after each batch)."""

    def __init__(self, spark: SparkSession, label: str, every: float = 60.0) -> None:
        self.spark, self.label, self.every = spark, label, every
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"watch-{label}", daemon=True)
        self.started = time.perf_counter()

    def __enter__(self) -> SparkWatch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=10)

    def _run(self) -> None:
        tracker = self.spark.sparkContext.statusTracker()
        while not self.stop.wait(self.every):
            try:
                infos = [i for i in map(tracker.getStageInfo, tracker.getActiveStageIds()) if i is not None]
                done = sum(i.numCompletedTasks for i in infos)
                total = sum(i.numTasks for i in infos)
                running = sum(i.numActiveTasks for i in infos)
                busy = (
                    f"{len(infos)} stage(s) active, tasks {done}/{total} done, {running} running"
                    if infos
                    else "no Spark stage active (driver-side work: copying staged rows, merging)"
                )
                log(f"  {self.label}: {time.perf_counter() - self.started:,.0f} s, {busy}")
            except Exception as exc:  # a session being stopped: stop watching
                log(f"  {self.label}: watch stopped ({type(exc).__name__})")
                return


def load_cluster_module() -> ModuleType:
    """tests/pipeline/spark_cluster.py (a test helper, not part of the package)."""
    path = REPO / "tests" / "pipeline" / "spark_cluster.py"
    deadline = time.monotonic() + 300
    while not path.exists():
        if time.monotonic() > deadline:
            raise FileNotFoundError(path)
        log(f"waiting for {path} to appear")
        time.sleep(15)
    spec = importlib.util.spec_from_file_location("headwater_bench_spark_cluster", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------------------------
# Step 5: continuous mode, latency from 201 to the run in the model
# --------------------------------------------------------------------------------------------


@dataclass
class ContinuousResult:
    latencies: list[float] = field(default_factory=list)
    timeouts: int = 0
    rejected: int = 0
    passes: list[tuple[int, float]] = field(default_factory=list)  # (events, seconds) of passes with events
    error: str = ""


def visible_runs(conn: Any, url: str, run_ids: Sequence[str]) -> set[str]:
    """Which of the runs are in the model's `runs` table now."""
    mark = "?" if url.startswith("sqlite:") else "%s"
    cur = conn.cursor()
    cur.execute(
        f"SELECT run_id FROM runs WHERE run_id IN ({', '.join([mark] * len(run_ids))})", tuple(run_ids)
    )
    found = {str(row[0]) for row in cur.fetchall()}
    cur.close()
    if not url.startswith("sqlite:"):
        conn.rollback()  # a fresh snapshot for the next poll
    return found


def post_event(port: int, doc: dict[str, Any]) -> int:
    """One POST /api/v1/lineage on a connection of its own; the answer's status once it is read."""
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        client.request("POST", "/api/v1/lineage", orjson.dumps(doc), {"Content-Type": "application/json"})
        response = client.getresponse()
        response.read()
        return response.status
    finally:
        client.close()


def continuous_latency(
    spark: SparkSession,
    store: EventStore,
    stream: EventStream,
    workdir: Path,
    args: argparse.Namespace,
    options: PipelineOptions,
) -> ContinuousResult:
    """`headwater serve` on the store, Pipeline.continuous(interval=1) in a thread of this process
    (same SparkSession); one new run POSTed every 1-3 s; each timed from its 201 until a poll
    (every 100 ms) finds it in `runs`."""
    from headwater.pipeline.runner import Pipeline

    out = ContinuousResult()
    server = Server(store.url, workdir)
    stop = threading.Event()

    def on_pass(result: PassResult) -> None:
        if result.batches:
            out.passes.append((result.events, result.seconds))
            log(f"  continuous: pass of {result.events} event(s) in {result.seconds:.1f} s")

    def loop() -> None:
        try:
            pipeline = Pipeline(spark, store, dogfood=False, **options)
            pipeline.continuous(interval=1.0, stop=stop, on_pass=on_pass)
        except Exception as exc:  # reported in the table; the posting loop stops waiting
            out.error = f"{type(exc).__name__}: {exc}"
            log(traceback.format_exc())

    worker = threading.Thread(target=loop, name="pipeline-continuous", daemon=True)
    worker.start()
    rng = random.Random(11)
    conn = read_connection(store.url)
    waiting: dict[str, float] = {}  # run id → when its 201 arrived
    posted = 0
    try:
        time.sleep(3.0)  # the first (empty) passes
        next_post = time.perf_counter()
        while not out.error and (posted < args.continuous or waiting):
            now = time.perf_counter()
            if posted < args.continuous and now >= next_post:
                run_id, doc = stream.new_run()
                status = post_event(server.port, doc)
                posted += 1
                if status == 201:
                    waiting[run_id] = time.perf_counter()
                else:
                    out.rejected += 1
                    log(f"  continuous: POST answered {status}")
                next_post = now + rng.uniform(1.0, 3.0)
            if waiting:
                seen = visible_runs(conn, store.url, list(waiting))
                now = time.perf_counter()
                for run_id in seen:
                    out.latencies.append(now - waiting.pop(run_id))
                    log(f"  continuous: run {len(out.latencies)} in runs after {out.latencies[-1]:.1f} s")
                for run_id, acked in list(waiting.items()):
                    if now - acked > args.continuous_timeout:
                        out.timeouts += 1
                        del waiting[run_id]
                        log(f"  continuous: a run not in runs {args.continuous_timeout:.0f} s after its 201")
            time.sleep(POLL_INTERVAL)
        out.timeouts += len(waiting)
    finally:
        conn.close()
        stop.set()
        worker.join(timeout=900)
        server.stop()
    return out


# --------------------------------------------------------------------------------------------
# One backend, all steps
# --------------------------------------------------------------------------------------------


def describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # Py4JJavaError's str() needs the JVM, which may be gone
        text = ""
    return f"{type(exc).__name__}: {text.splitlines()[0][:150] if text else '(no message)'}"


def _failed(
    figures: list[Figure], backend: str, name: str, unit: str, exc: BaseException, note: str = ""
) -> None:
    log(traceback.format_exc())
    figures.append(Fig(backend, name, NAN, unit, note=f"FAILED: {describe(exc)}{note}"))


def bench_backend(
    backend: str,
    args: argparse.Namespace,
    workdir: Path,
    pool: Pool,
    figures: list[Figure],
    results: dict[str, Any],
) -> None:
    from headwater.pipeline.runner import Pipeline
    from headwater.pipeline.session import spark_session
    from headwater.store import open_store

    record: dict[str, Any] = {}
    results[backend] = record
    db = Database(backend, workdir, "pipeline", args.pg_url)
    log(f"{backend}: fresh store {db.url}")
    store = open_store(db.url)
    stream = EventStream(EventFactory(seed=1), seed=args.seed)
    try:
        # 1. load
        log(f"{backend}: 1. loading {args.events:,} events")
        loaded, seconds = load_events(store, stream, args.events, pool)
        size = db.size_bytes()
        record["load"] = {"events": loaded, "seconds": seconds, "bytes": size}
        log(f"{backend}: loaded {loaded:,} events in {seconds:.1f} s ({loaded / seconds:,.0f} events/s)")
        figures.append(
            Fig(
                backend,
                "1. load: validate + append (5,000/txn)",
                loaded / seconds,
                "ev/s",
                note=f"{loaded:,} events in {seconds:,.0f} s; store {human_bytes(size)}; "
                f"{stream.open_runs()} runs left open at the cut",
            )
        )

        # 2. Spark from an empty model, with the pipeline's defaults; if that fails, once more with
        # smaller batches (the pipeline_batch_events setting), so that steps 3-6 still have figures
        log(f"{backend}: 2. Spark local[2], run_once() from an empty model")
        first: PassResult | None = None
        options: PipelineOptions = {}
        attempts: list[PipelineOptions] = [{}]
        if args.fallback_batch_events:
            attempts.append({"batch_events": args.fallback_batch_events})
        for attempt in attempts:
            label = "2. Spark local[2], first pass" + "".join(f", {k}={v:,}" for k, v in attempt.items())
            spark = spark_session("local[2]")
            tick = time.perf_counter()
            try:
                with SparkWatch(spark, "local[2]"):
                    pipeline = Pipeline(spark, store, dogfood=False, progress=StageLog("local[2]"), **attempt)
                    first = pipeline.rebuild() if attempt else pipeline.run_once()
            except Exception as exc:
                died = "" if jvm_alive(spark) else "; Spark's JVM exited (its log above says why)"
                _failed(
                    figures, backend, label, "ev/s", exc, f" after {time.perf_counter() - tick:,.0f} s{died}"
                )
                record.setdefault("spark_failures", []).append({"options": attempt, "error": describe(exc)})
                stop_spark()
                continue
            options = attempt
            record["spark_first"] = {**asdict(first), "options": options}
            log(
                f"{backend}: first pass {first.events:,} events in {first.seconds:.1f} s; "
                + stage_note(first, 30)
            )
            note = f"{first.events:,} events, {first.batches} batch(es), {first.seconds:,.1f} s"
            figures.append(Fig(backend, label, first.events / first.seconds, "ev/s", SPARK_TARGET, note=note))
            for name, secs in sorted(first.stages.items(), key=lambda kv: -kv[1])[:5]:
                figures.append(Fig(backend, f"   stage {name}", secs, "s", digits=1))
            break
        if first is None:
            log(f"{backend}: no first pass: steps 4-6 need one and are left out")

        # 3. DuckDB
        if not args.skip_duckdb:
            log(f"{backend}: 3. the same transformation in DuckDB")
            try:
                high = first.checkpoint if first else int(store_scalar(db.url, "SELECT MAX(seq) FROM events"))
                duck, con = duckdb_model(db.url, high, workdir, backend, args.duckdb_memory)
                record["duckdb"] = {"seconds": duck.seconds, "events": duck.events, "steps": duck.steps}
                slowest = sorted(duck.steps.items(), key=lambda kv: -kv[1])[:4]
                log(f"{backend}: DuckDB {duck.events:,} events in {duck.seconds:.1f} s; " + str(duck.steps))
                figures.append(
                    Fig(
                        backend,
                        "3. DuckDB script, same model",
                        duck.seconds,
                        "s",
                        digits=1,
                        note=f"{duck.events / duck.seconds:,.0f} ev/s; "
                        + ", ".join(f"{n} {s:.1f}s" for n, s in slowest),
                    )
                )
                if first is not None:
                    figures.append(
                        Fig(
                            backend,
                            "3. Spark / DuckDB time",
                            first.seconds / duck.seconds,
                            "x",
                            DUCKDB_RATIO_TARGET,
                            higher_is_better=False,
                            digits=2,
                            note="> 1: Spark slower (Spark also writes the model into the store)",
                        )
                    )
                    log(f"{backend}: comparing the DuckDB tables with the store's")
                    equal, differences = compare_models(con, db.url, args.compare_rows)
                    record["duckdb"]["equal_tables"] = equal
                    record["duckdb"]["differences"] = differences
                    figures.append(
                        Fig(
                            backend,
                            "3. tables equal to Spark's",
                            equal,
                            f"of {len(DUCKDB_TABLES)}",
                            note=("; ".join(differences) if differences else "all equal")
                            + f" (rows compared for tables up to {args.compare_rows:,} rows, counts above)",
                        )
                    )
                con.close()
                if duck.path is not None and not args.keep:
                    duck.path.unlink(missing_ok=True)
            except Exception as exc:
                _failed(figures, backend, "3. DuckDB script, same model", "s", exc)

        # 4. incremental
        if first is None:
            return
        log(
            f"{backend}: 4. {args.incremental_passes} x {args.incremental:,} more events, "
            "each followed by run_once()"
        )
        try:
            pipeline = Pipeline(spark, store, dogfood=False, progress=StageLog("incremental"), **options)
            passes: list[tuple[PassResult, int, int, int]] = []  # (pass, appended, runs, runs known)
            for _ in range(args.incremental_passes):
                docs = stream.take(args.incremental)
                touched = {d["run"]["runId"] for d in docs}
                appended = append_inline(store, docs)
                known_runs = int(
                    store_scalar(
                        db.url,
                        "SELECT COUNT(*) FROM runs WHERE run_id IN ("
                        + ", ".join(f"'{r}'" for r in sorted(touched))
                        + ")",
                    )
                )
                passes.append((pipeline.run_once(), appended, len(touched), known_runs))
            record["incremental"] = [asdict(result) for result, *_ in passes]
            ordered = sorted(passes, key=lambda p: p[0].seconds)
            middle, appended, runs, known_runs = ordered[(len(ordered) - 1) // 2]  # the median pass
            figures.append(
                Fig(
                    backend,
                    f"4. incremental pass, +{appended:,} events (median of {len(passes)})",
                    middle.seconds,
                    "s",
                    INCREMENTAL_TARGET_S,
                    higher_is_better=False,
                    digits=1,
                    note="passes "
                    + ", ".join(f"{result.seconds:.1f}" for result, *_ in passes)
                    + f" s; median pass: {runs} runs, {known_runs} already in the model; "
                    + stage_note(middle, 3),
                )
            )
        except Exception as exc:
            _failed(figures, backend, "4. incremental pass", "s", exc)

        # 5. continuous
        if not args.skip_continuous:
            log(f"{backend}: 5. continuous mode, {args.continuous:,} single POSTs")
            try:
                cont = continuous_latency(spark, store, stream, workdir, args, options)
                record["continuous"] = asdict(cont)
                values = sorted(cont.latencies + [float("inf")] * cont.timeouts)
                median = statistics.median(values) if values else NAN
                p90 = percentile(values, 90) if values else NAN
                busy = cont.passes
                mean_pass = statistics.mean(s for _, s in busy) if busy else NAN
                note = f"{len(cont.latencies)} seen, {cont.timeouts} timed out, {cont.rejected} rejected; "
                note += f"{len(busy)} passes with events, mean {mean_pass:.1f} s"
                if cont.error:
                    note += f"; pipeline FAILED: {cont.error[:120]}"
                figures.append(
                    Fig(
                        backend,
                        "5. continuous: 201 → in runs, median",
                        median,
                        "s",
                        CONTINUOUS_TARGET_S,
                        higher_is_better=False,
                        digits=1,
                        note=note,
                    )
                )
                figures.append(Fig(backend, "5. continuous: 201 → in runs, p90", p90, "s", digits=1))
            except Exception as exc:
                _failed(figures, backend, "5. continuous: 201 → in runs", "s", exc)

        # 6. cluster
        if not args.skip_cluster:
            log(f"{backend}: 6. rebuild on a standalone cluster, 2 workers x 1 core")
            try:
                cluster = load_cluster_module()
                stop_spark()
                with cluster.standalone_cluster(workers=2, cores=1) as master:
                    seconds, summary = cli_rebuild(db.url, master, options)
                events = store.last_seq()
                record["cluster_rebuild"] = {"seconds": seconds, "events": events, "summary": summary}
                figures.append(
                    Fig(
                        backend,
                        "6. cluster 2x1 core, rebuild" + "".join(f", {k}={v:,}" for k, v in options.items()),
                        seconds,
                        "s",
                        digits=1,
                        note=f"{events / seconds:,.0f} ev/s, {events:,} events, "
                        f"`headwater pipeline rebuild --master` timed whole; it said: {summary}",
                    )
                )
                figures.append(
                    Fig(
                        backend,
                        "6. cluster / local[2] time",
                        seconds / first.seconds,
                        "x",
                        digits=2,
                        note=f"local[2] first pass {first.seconds:,.1f} s for {first.events:,} events",
                    )
                )
            except Exception as exc:
                _failed(figures, backend, "6. cluster 2x1 core, rebuild", "s", exc)
    finally:
        stop_spark()
        store.close()
        if not args.keep:
            db.drop()


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench/pipeline.py",
        description="Measure Headwater's Spark lineage pipeline (first pass, incremental pass, continuous "
        "latency, cluster rebuild) against a DuckDB script of the same transformation. Prints one table; "
        "also writes bench/results/pipeline-<time>.json.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--events", type=int, default=1_000_000, help="events loaded before the first pass")
    p.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="sqlite")
    p.add_argument("--skip-duckdb", action="store_true", help="skip step 3 (the DuckDB script)")
    p.add_argument("--skip-continuous", action="store_true", help="skip step 5 (continuous mode)")
    p.add_argument("--skip-cluster", action="store_true", help="skip step 6 (standalone cluster rebuild)")
    p.add_argument(
        "--incremental", type=int, default=1_000, help="events appended before each incremental pass"
    )
    p.add_argument(
        "--incremental-passes",
        type=int,
        default=5,
        help="incremental passes, each after --incremental more events, in one session (the figure is "
        "their median: the first small pass after the first one runs code the JVM has not compiled yet)",
    )
    p.add_argument("--continuous", type=int, default=20, help="single-event POSTs timed in continuous mode")
    p.add_argument(
        "--continuous-timeout",
        type=float,
        default=180.0,
        help="seconds to wait for one run to reach the model",
    )
    p.add_argument(
        "--compare-rows",
        type=int,
        default=1_500_000,
        help="DuckDB tables up to this size are compared row by row with the store's, larger ones by count",
    )
    p.add_argument("--duckdb-memory", default="6GB", help="DuckDB's memory_limit (it spills beyond it)")
    p.add_argument(
        "--fallback-batch-events",
        type=int,
        default=100_000,
        help="when the first pass fails with the pipeline's defaults, rebuild once more with this "
        "batch_events (the pipeline_batch_events setting) and use it for steps 3-6; 0: no second try",
    )
    p.add_argument("--seed", type=int, default=7, help="seed of the event stream")
    p.add_argument("--load-workers", type=int, default=2, help="processes validating events for the load")
    p.add_argument(
        "--pg-url",
        default="postgresql://postgres@127.0.0.1:5432/postgres",
        help="PostgreSQL database to connect to for creating and dropping the throwaway one",
    )
    p.add_argument(
        "--workdir", help="scratch folder for SQLite and DuckDB files, logs (default: a new temp dir)"
    )
    p.add_argument("--keep", action="store_true", help="keep the databases and DuckDB files afterwards")
    p.add_argument("--json", metavar="FILE", help="where to write the results (default bench/results/...)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # SIGTERM unwinds like Ctrl-C: databases, scratch files, the server and the cluster are cleaned up
    signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(143))
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    workdir = (
        Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="headwater-pipeline-bench-"))
    )
    workdir.mkdir(parents=True, exist_ok=True)
    busy = machine_busy_now()
    if busy > 0.2:
        log(f"WARNING: the machine is not quiet: {busy:.0%} of a core busy before the bench starts")
    log(f"workdir {workdir}")
    figures: list[Figure] = []
    results: dict[str, Any] = {}
    started = time.perf_counter()
    # Forked before Spark starts, and kept: validation workers for every backend's load.
    pool = multiprocessing.get_context("fork").Pool(args.load_workers, initializer=_worker_init)
    try:
        for backend in backends:
            bench_backend(backend, args, workdir, pool, figures, results)
    finally:
        pool.terminate()
        pool.join()
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    print()
    print(
        f"Headwater pipeline benchmark: {args.events:,} events, {multiprocessing.cpu_count()} cores, "
        f"{time.perf_counter() - started:,.0f} s"
        + (f"; machine NOT quiet at start ({busy:.0%} of a core busy)" if busy > 0.2 else "")
    )
    print_table(figures)
    if not args.skip_duckdb:
        print()
        print(DUCKDB_COVERAGE)
    out = Path(args.json) if args.json else REPO / "bench" / "results" / f"pipeline-{now_stamp()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "args": vars(args),
                "figures": [{**asdict(f), "verdict": f.verdict} for f in figures],
                "results": results,
            },
            indent=2,
            default=str,
        )
    )
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
