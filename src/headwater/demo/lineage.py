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
"""

from __future__ import annotations

import itertools
import math
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple, cast

import orjson

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

Event = dict[str, Any]
Facets = dict[str, Any]
Ref = tuple[str, str]  # (namespace, name)

_CORE = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/"
RUN_EVENT_SCHEMA = _CORE + "RunEvent"
JOB_EVENT_SCHEMA = _CORE + "JobEvent"
DATASET_EVENT_SCHEMA = _CORE + "DatasetEvent"

# The newest version of each facet schema in the OpenLineage spec (facets/<Name>.json "$id").
_FACET_VERSIONS: dict[str, str] = {
    "SchemaDatasetFacet": "1-2-0",
    "SymlinksDatasetFacet": "1-0-1",
    "ColumnLineageDatasetFacet": "1-2-0",
    "DatasourceDatasetFacet": "1-0-1",
    "SourceCodeLocationJobFacet": "1-1-0",
    "SQLJobFacet": "1-1-0",
    "ParentRunFacet": "1-2-0",
    "NominalTimeRunFacet": "1-0-1",
    "DatasetVersionDatasetFacet": "1-0-1",
    "LifecycleStateChangeDatasetFacet": "1-0-1",
    "JobTypeJobFacet": "2-0-4",
    "DocumentationJobFacet": "1-1-0",
    "DocumentationDatasetFacet": "1-1-0",
    "OwnershipJobFacet": "1-0-1",
    "OwnershipDatasetFacet": "1-0-1",
    "OutputStatisticsOutputDatasetFacet": "1-0-2",
    "DataQualityMetricsInputDatasetFacet": "1-0-3",
    "ErrorMessageRunFacet": "1-0-1",
    "ProcessingEngineRunFacet": "1-1-1",
}

# Dataset namespaces.
APPDB = "postgres://appdb:5432"
KAFKA = "kafka://broker:9092"
LAKE = "s3://lake"
HIVE = "hive://metastore:9083"
WAREHOUSE = "postgres://warehouse:5432"
BIGQUERY = "bigquery"
_DATASOURCE_URIS = {
    APPDB: APPDB,
    KAFKA: KAFKA,
    LAKE: LAKE,
    HIVE: HIVE,
    WAREHOUSE: WAREHOUSE,
    BIGQUERY: "https://bigquery.googleapis.com/bigquery/v2/projects/acme-analytics",
}

CATALOG_PRODUCER = "https://git.example.com/acme/catalog-sync/tree/v3.2.0"
_REPO = "https://git.example.com/acme/data-platform"

# Rates of the history (per task run) and of its delivery (per event).
FAIL_RATE = 0.05
ABORT_RATE = 0.015
RUNNING_RATE = 0.06
RETRY_FAIL_RATE = 0.15
LATE_RATE = 0.03
DUPLICATE_RATE = 0.01

_START_MS = int(datetime(2025, 3, 3, tzinfo=UTC).timestamp()) * 1000
_DAY_MS = 86_400_000
_SCHEDULE_MS = 2 * 3_600_000  # pipelines are scheduled at 02:00 UTC
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

MIN_JOBS = 10
_MAX_STREAM_NAMESPACES = 12


def _iso(ms: int) -> str:
    moment = _EPOCH + timedelta(milliseconds=ms)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def _facet(producer: str, name: str, /, **fields: Any) -> Facets:
    version = _FACET_VERSIONS[name]
    return {
        "_producer": producer,
        "_schemaURL": f"https://openlineage.io/spec/facets/{version}/{name}.json#/$defs/{name}",
        **fields,
    }


def _new_id(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _quota(rate: float, per_day: int, day: int) -> int:
    """How many of `per_day` items of `day` get a feature of frequency `rate`, spread evenly over days."""
    expected = rate * per_day
    return math.floor(expected * (day + 1) + 0.5) - math.floor(expected * day + 0.5)


# ------------------------------------------------------------------------------------------------
# Shape and facts
# ------------------------------------------------------------------------------------------------


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


# ------------------------------------------------------------------------------------------------
# Domains: the business entities the pipelines move
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Column:
    name: str
    type: str
    role: str  # key, fk, measure, time, dim, text, pii, pii_hash, struct, flag, meta
    fields: tuple[_Column, ...] = ()
    description: str | None = None


def _col(spec: str, *fields: _Column, description: str | None = None) -> _Column:
    name, type_, role = spec.split(":")
    return _Column(name, type_, role, fields, description)


def _struct(name: str, *specs: str) -> _Column:
    members = tuple(_col(s) for s in specs)
    return _Column(name, "STRUCT", "struct", members)


@dataclass(frozen=True)
class _Domain:
    name: str
    namespace: str  # where its source lives
    table: str  # source name, "{}" replaced by the domain instance's name
    entity: bool  # dimension (dim_) rather than fact (fct_) in the marts
    columns: tuple[_Column, ...]


_DOMAINS: tuple[_Domain, ...] = (
    _Domain(
        "orders",
        APPDB,
        "shop.public.{}",
        False,
        (
            _col("order_id:BIGINT:key", description="Primary key"),
            _col("customer_id:BIGINT:fk"),
            _col("store_id:INT:fk"),
            _col("status:VARCHAR(16):dim"),
            _col("order_total:DECIMAL(12,2):measure"),
            _col("currency:CHAR(3):dim"),
            _col("ordered_at:TIMESTAMP:time"),
        ),
    ),
    _Domain(
        "customers",
        APPDB,
        "shop.public.{}",
        True,
        (
            _col("customer_id:BIGINT:key", description="Primary key"),
            _col("email:VARCHAR(255):pii", description="Personal data: hashed downstream"),
            _col("full_name:VARCHAR(200):pii"),
            _struct(
                "address",
                "street:VARCHAR(200):text",
                "city:VARCHAR(100):dim",
                "postal_code:VARCHAR(12):dim",
                "country:CHAR(2):dim",
            ),
            _col("segment:VARCHAR(32):dim"),
            _col("created_at:TIMESTAMP:time"),
        ),
    ),
    _Domain(
        "payments",
        APPDB,
        "billing.public.{}",
        False,
        (
            _col("payment_id:BIGINT:key", description="Primary key"),
            _col("order_id:BIGINT:fk"),
            _col("method:VARCHAR(24):dim"),
            _col("amount:DECIMAL(12,2):measure"),
            _col("paid_at:TIMESTAMP:time"),
        ),
    ),
    _Domain(
        "products",
        APPDB,
        "shop.public.{}",
        True,
        (
            _col("product_id:BIGINT:key", description="Primary key"),
            _col("sku:VARCHAR(32):dim"),
            _col("title:VARCHAR(255):text"),
            _col("category:VARCHAR(64):dim"),
            _col("unit_price:DECIMAL(10,2):measure"),
            _struct("attributes", "color:VARCHAR(32):dim", "size:VARCHAR(16):dim", "weight_g:INT:measure"),
            _col("updated_at:TIMESTAMP:time"),
        ),
    ),
    _Domain(
        "sessions",
        KAFKA,
        "clickstream.{}",
        False,
        (
            _col("session_id:STRING:key", description="Primary key"),
            _col("customer_id:BIGINT:fk"),
            _struct("device", "os:STRING:dim", "browser:STRING:dim", "app_version:STRING:dim"),
            _col("page_views:INT:measure"),
            _col("started_at:TIMESTAMP:time"),
        ),
    ),
    _Domain(
        "order_items",
        APPDB,
        "shop.public.{}",
        False,
        (
            _col("order_item_id:BIGINT:key", description="Primary key"),
            _col("order_id:BIGINT:fk"),
            _col("product_id:BIGINT:fk"),
            _col("quantity:INT:measure"),
            _col("unit_price:DECIMAL(10,2):measure"),
            _col("created_at:TIMESTAMP:time"),
        ),
    ),
    _Domain(
        "shipments",
        APPDB,
        "logistics.public.{}",
        False,
        (
            _col("shipment_id:BIGINT:key", description="Primary key"),
            _col("order_id:BIGINT:fk"),
            _col("carrier:VARCHAR(40):dim"),
            _struct(
                "tracking", "code:VARCHAR(40):dim", "status:VARCHAR(20):dim", "updated_at:TIMESTAMP:time"
            ),
            _col("shipped_at:TIMESTAMP:time"),
        ),
    ),
    _Domain(
        "stock_levels",
        APPDB,
        "warehouse_ops.public.{}",
        False,
        (
            _col("stock_id:BIGINT:key", description="Primary key"),
            _col("product_id:BIGINT:fk"),
            _col("warehouse_code:VARCHAR(8):dim"),
            _col("on_hand:INT:measure"),
            _col("counted_at:TIMESTAMP:time"),
        ),
    ),
    _Domain(
        "refunds",
        APPDB,
        "billing.public.{}",
        False,
        (
            _col("refund_id:BIGINT:key", description="Primary key"),
            _col("order_id:BIGINT:fk"),
            _col("reason:VARCHAR(64):dim"),
            _col("amount:DECIMAL(12,2):measure"),
            _col("refunded_at:TIMESTAMP:time"),
        ),
    ),
    _Domain(
        "campaigns",
        APPDB,
        "marketing.public.{}",
        True,
        (
            _col("campaign_id:BIGINT:key", description="Primary key"),
            _col("channel:VARCHAR(32):dim"),
            _col("campaign_name:VARCHAR(120):text"),
            _col("budget:DECIMAL(14,2):measure"),
            _col("starts_on:DATE:time"),
        ),
    ),
    _Domain(
        "stores",
        APPDB,
        "shop.public.{}",
        True,
        (
            _col("store_id:INT:key", description="Primary key"),
            _col("store_name:VARCHAR(120):text"),
            _col("region:VARCHAR(32):dim"),
            _col("opened_on:DATE:time"),
        ),
    ),
    _Domain(
        "support_tickets",
        KAFKA,
        "helpdesk.{}",
        False,
        (
            _col("ticket_id:STRING:key", description="Primary key"),
            _col("customer_id:BIGINT:fk"),
            _col("priority:STRING:dim"),
            _col("ticket_status:STRING:dim"),
            _col("opened_at:TIMESTAMP:time"),
        ),
    ),
    _Domain(
        "reviews",
        KAFKA,
        "catalog.{}",
        False,
        (
            _col("review_id:STRING:key", description="Primary key"),
            _col("product_id:BIGINT:fk"),
            _col("customer_id:BIGINT:fk"),
            _col("rating:INT:measure"),
            _col("body:STRING:text"),
            _col("posted_at:TIMESTAMP:time"),
        ),
    ),
    _Domain(
        "invoices",
        APPDB,
        "billing.public.{}",
        False,
        (
            _col("invoice_id:BIGINT:key", description="Primary key"),
            _col("customer_id:BIGINT:fk"),
            _col("invoice_status:VARCHAR(16):dim"),
            _col("amount_due:DECIMAL(12,2):measure"),
            _col("due_on:DATE:time"),
        ),
    ),
)
_REGIONS = ("eu", "us", "apac", "latam", "mea")
_PERIODS = (("daily", "day"), ("weekly", "week"), ("monthly", "month"))
_PEOPLE = ("user:akhan", "user:mlopez", "user:jchen", "user:sbauer", "user:pnair", "user:ofarouk")


def _domain_instance(i: int) -> tuple[_Domain, str]:
    """The i-th domain and its unique name (orders, customers, ..., orders_eu, ..., orders_r7)."""
    domain = _DOMAINS[i % len(_DOMAINS)]
    k = i // len(_DOMAINS)
    if k == 0:
        return domain, domain.name
    suffix = _REGIONS[k - 1] if k <= len(_REGIONS) else f"r{k}"
    return domain, f"{domain.name}_{suffix}"


# ------------------------------------------------------------------------------------------------
# Integrations and namespaces
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Integration:
    kind: str
    stem: str  # namespace stem
    producer: str
    integration: str  # JobTypeJobFacet.integration
    orchestrator_type: str
    task_type: str
    engine: tuple[str, str, str]  # ProcessingEngineRunFacet name, version, adapter version
    error: str  # ErrorMessageRunFacet message of a failed task
    language: str


_INTEGRATIONS = {
    "spark": _Integration(
        "spark",
        "spark-lake",
        "https://github.com/OpenLineage/OpenLineage/tree/1.26.0/integration/spark",
        "SPARK",
        "APPLICATION",
        "SQL_JOB",
        ("spark", "3.5.3", "1.26.0"),
        "org.apache.spark.SparkException: Job aborted due to stage failure: Task 7 in stage 12.0 "
        "failed 4 times, most recent failure: ExecutorLostFailure (executor 3 exited)",
        "JAVA",
    ),
    "dbt": _Integration(
        "dbt",
        "dbt-analytics",
        "https://github.com/OpenLineage/OpenLineage/tree/1.26.0/integration/dbt",
        "DBT",
        "JOB",
        "MODEL",
        ("dbt", "1.9.1", "1.26.0"),
        "Database Error in model: Resources exceeded during query execution",
        "PYTHON",
    ),
    "airflow": _Integration(
        "airflow",
        "airflow-prod",
        "https://github.com/apache/airflow/tree/providers-openlineage/2.1.0",
        "AIRFLOW",
        "DAG",
        "TASK",
        ("Airflow", "2.10.4", "2.1.0"),
        "psycopg2.errors.QueryCanceled: canceling statement due to statement timeout",
        "PYTHON",
    ),
}
_KINDS = ("spark", "dbt", "airflow")
_TEAMS = {"spark": "team:data-platform", "dbt": "team:analytics-engineering", "airflow": "team:bi"}


@dataclass(frozen=True)
class _Namespace:
    name: str
    integration: _Integration
    orchestrator: str  # the orchestrator job's name
    project: str  # dbt project / Spark application / DAG id used in task names


def _namespace(i: int) -> _Namespace:
    integration = _INTEGRATIONS[_KINDS[i % 3]]
    n = i // 3 + 1
    dash, under = ("", "") if n == 1 else (f"-{n}", f"_{n}")
    if integration.kind == "spark":
        project = f"lake_etl{under}"
        orchestrator = project
    elif integration.kind == "dbt":
        project = f"analytics{under}"
        orchestrator = f"dbt-run-analytics{under}"
    else:
        project = f"daily_pipeline{under}"
        orchestrator = project
    return _Namespace(integration.stem + dash, integration, orchestrator, project)


# ------------------------------------------------------------------------------------------------
# The graph: datasets, jobs, column lineage
# ------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Dataset:
    idx: int
    namespace: str
    name: str
    layer: str  # source, raw, rejects, staging, mart, report, export
    domain: str  # domain instance name
    entity: bool
    columns: list[_Column]
    base_rows: int
    columns_v2: list[_Column] | None = None  # schema from the change day on
    alias: Ref | None = None  # the Hive table name of a lake dataset (symlinked from the change day)
    versioned: bool = False  # carries the datasetVersion facet when written
    lifecycle: str | None = None  # CREATE (first write) or OVERWRITE (every write)

    @property
    def ref(self) -> Ref:
        return (self.namespace, self.name)

    def schema(self, v2: bool) -> list[_Column]:
        return self.columns_v2 if v2 and self.columns_v2 is not None else self.columns


@dataclass(frozen=True, eq=False)
class _Read:
    dataset: _Dataset
    via_alias: bool = False  # read under its Hive table name

    @property
    def ref(self) -> Ref:
        if self.via_alias and self.dataset.alias is not None:
            return self.dataset.alias
        return self.dataset.ref


@dataclass(frozen=True)
class _Use:
    """One input field an output field (or the whole output) depends on."""

    ref: Ref
    field: str
    type: str  # DIRECT | INDIRECT
    subtype: str
    description: str
    masking: bool = False


@dataclass
class _Derived:
    columns: list[_Column] = field(default_factory=list)
    fields: dict[str, list[_Use]] = field(default_factory=dict)
    dataset: list[_Use] = field(default_factory=list)

    def add(self, column: _Column, uses: list[_Use]) -> None:
        name, n = column.name, 2
        taken = {c.name for c in self.columns}
        while name in taken:
            name, n = f"{column.name}_{n}", n + 1
        if name != column.name:
            column = _Column(name, column.type, column.role, column.fields, column.description)
        self.columns.append(column)
        if uses:
            self.fields[name] = uses


@dataclass(eq=False)
class _Job:
    idx: int
    ns: _Namespace
    name: str
    layer: str  # orchestrator, ingest, staging, marts, reports, reconcile, static
    job_type: str
    description: str
    inputs: list[_Read] = field(default_factory=list)
    outputs: list[_Dataset] = field(default_factory=list)
    lineage: dict[int, tuple[_Derived, _Derived]] = field(default_factory=dict)  # by output: (v1, v2)
    deprecated_lineage: set[int] = field(default_factory=set)
    code_path: str = ""
    sha: tuple[str, str] = ("", "")
    code_change: bool = False
    dialect: str | None = None  # SQL jobs: the sql facet's dialect
    owners: tuple[str, ...] = ()
    documented: bool = True
    duration: tuple[int, int] = (30_000, 300_000)  # ms
    quality_checks: bool = False  # dataQualityMetrics on the primary input when complete

    @property
    def ref(self) -> Ref:
        return (self.ns.name, self.name)

    @property
    def producer(self) -> str:
        return self.ns.integration.producer


def _first(columns: list[_Column], *roles: str) -> _Column | None:
    return next((c for c in columns if c.role in roles), None)


def _short(ref: Ref) -> str:
    return ref[1].replace("/", ".").rsplit(".", 1)[-1]


def _join_uses(p: _Read, q: _Read) -> list[_Use]:
    """The INDIRECT JOIN dependencies of joining q to p: on q's key, or a column both share."""
    pcols, qcols = p.dataset.columns, q.dataset.columns
    qkey = _first(qcols, "key")
    assert qkey is not None
    names = {c.name for c in pcols}
    shared = next((c.name for c in qcols if c.role in ("key", "fk") and c.name in names), None)
    pkey = _first(pcols, "key")
    assert pkey is not None
    pjoin, qjoin = (shared, shared) if shared is not None else (pkey.name, qkey.name)
    on = f"JOIN {_short(q.ref)} ON {_short(p.ref)}.{pjoin} = {_short(q.ref)}.{qjoin}"
    return [_Use(p.ref, pjoin, "INDIRECT", "JOIN", on), _Use(q.ref, qjoin, "INDIRECT", "JOIN", on)]


def _derive_raw(source: _Read) -> _Derived:
    out = _Derived()
    for c in source.dataset.columns:
        out.add(c, [_Use(source.ref, c.name, "DIRECT", "IDENTITY", f"{c.name} copied as is")])
    out.add(_Column("_ingested_at", "TIMESTAMP", "meta"), [])
    return out


def _derive_staging(p: _Read, q: _Read | None) -> _Derived:
    out = _Derived()
    for c in p.dataset.columns:
        use = _Use(p.ref, c.name, "DIRECT", "IDENTITY", c.name)
        if c.role in ("key", "fk", "struct") or (c.role == "time" and c.type == "DATE"):
            out.add(c, [use])
        elif c.role == "pii":
            expr = f"sha2(lower(trim({c.name})), 256)"
            uses = [_Use(p.ref, c.name, "DIRECT", "TRANSFORMATION", expr, masking=True)]
            out.add(_Column(f"{c.name}_sha256", "STRING", "pii_hash"), uses)
        elif c.role in ("dim", "text"):
            expr = f"lower(trim({c.name}))" if c.role == "dim" else f"trim({c.name})"
            out.add(
                _Column(c.name, "STRING", c.role), [_Use(p.ref, c.name, "DIRECT", "TRANSFORMATION", expr)]
            )
        elif c.role == "measure":
            if c.type.startswith("DECIMAL"):
                expr = f"CAST({c.name} AS DECIMAL(18,2))"
                uses = [_Use(p.ref, c.name, "DIRECT", "TRANSFORMATION", expr)]
                out.add(_Column(c.name, "DECIMAL(18,2)", "measure"), uses)
            else:
                out.add(c, [use])
        elif c.role == "time":
            expr = f"to_utc_timestamp({c.name}, 'UTC')"
            out.add(
                _Column(c.name, "TIMESTAMP", "time"), [_Use(p.ref, c.name, "DIRECT", "TRANSFORMATION", expr)]
            )
    if q is not None:
        pick = _first(q.dataset.columns, "dim", "text") or _first(q.dataset.columns, "key")
        assert pick is not None
        uses = [_Use(q.ref, pick.name, "DIRECT", "IDENTITY", pick.name), *_join_uses(p, q)]
        out.add(_Column(f"{q.dataset.domain}_{pick.name}", "STRING", "dim"), uses)
    out.add(_Column("_loaded_at", "TIMESTAMP", "meta"), [])
    return out


def _derive_mart(p: _Read, others: list[_Read], with_dataset_deps: bool) -> _Derived:
    out = _Derived()
    key = _first(p.dataset.columns, "key")
    assert key is not None
    for c in p.dataset.columns:
        if c.role in ("key", "fk", "dim", "measure", "struct"):
            out.add(c, [_Use(p.ref, c.name, "DIRECT", "IDENTITY", c.name)])
        elif c.role == "time":
            expr = f"CAST({c.name} AS DATE)"
            uses = [_Use(p.ref, c.name, "DIRECT", "TRANSFORMATION", expr)]
            out.add(_Column(f"{c.name.removesuffix('_at').removesuffix('_on')}_date", "DATE", "time"), uses)
    for q in others:
        joins = _join_uses(p, q)
        measure = _first(q.dataset.columns, "measure")
        if measure is not None:
            agg = _Use(q.ref, measure.name, "DIRECT", "AGGREGATION", f"sum({measure.name})")
            column = _Column(f"{q.dataset.domain}_{measure.name}_total", "DECIMAL(18,2)", "measure")
        else:
            qkey = _first(q.dataset.columns, "key")
            assert qkey is not None
            agg = _Use(q.ref, qkey.name, "DIRECT", "AGGREGATION", f"count(DISTINCT {qkey.name})")
            column = _Column(f"{q.dataset.domain}_count", "BIGINT", "measure")
        out.add(column, [agg, *joins])
        if with_dataset_deps:
            out.dataset.extend(joins)
    if with_dataset_deps:
        out.dataset.insert(0, _Use(p.ref, key.name, "INDIRECT", "GROUP_BY", f"GROUP BY {key.name}"))
        dim = _first(p.dataset.columns, "dim")
        if dim is not None:
            where = f"WHERE {dim.name} IS NOT NULL"
            out.dataset.append(_Use(p.ref, dim.name, "INDIRECT", "FILTER", where))
    return out


def _derive_report(m: _Read, other: _Read | None, unit: str, with_dataset_deps: bool) -> _Derived:
    out = _Derived()
    cols = m.dataset.columns
    time_col, dim, measure, key = (
        _first(cols, "time"),
        _first(cols, "dim"),
        _first(cols, "measure"),
        _first(cols, "key"),
    )
    assert key is not None
    if time_col is not None:
        expr = f"date_trunc('{unit}', {time_col.name})"
        uses = [_Use(m.ref, time_col.name, "DIRECT", "TRANSFORMATION", expr)]
        out.add(_Column("report_date", "DATE", "time"), uses)
    if dim is not None:
        out.add(dim, [_Use(m.ref, dim.name, "DIRECT", "IDENTITY", dim.name)])
    if measure is not None:
        uses = [_Use(m.ref, measure.name, "DIRECT", "AGGREGATION", f"sum({measure.name})")]
        out.add(_Column(f"total_{measure.name}", "DECIMAL(18,2)", "measure"), uses)
    out.add(
        _Column("row_count", "BIGINT", "measure"),
        [_Use(m.ref, key.name, "DIRECT", "AGGREGATION", "count(*)")],
    )
    if other is not None:
        joins = _join_uses(m, other)
        other_measure = _first(other.dataset.columns, "measure")
        if other_measure is not None:
            agg = _Use(other.ref, other_measure.name, "DIRECT", "AGGREGATION", f"avg({other_measure.name})")
            out.add(_Column(f"avg_{other_measure.name}", "DOUBLE", "measure"), [agg, *joins])
    if with_dataset_deps and time_col is not None:
        window = f"WHERE {time_col.name} >= current_date - INTERVAL '90' DAY"
        out.dataset.append(_Use(m.ref, time_col.name, "INDIRECT", "FILTER", window))
        out.dataset.append(_Use(m.ref, time_col.name, "INDIRECT", "SORT", f"ORDER BY {time_col.name}"))
    if with_dataset_deps and dim is not None:
        out.dataset.append(_Use(m.ref, dim.name, "INDIRECT", "GROUP_BY", f"GROUP BY {dim.name}"))
    return out


def _derive_reconcile(mart: _Read, target: list[_Column]) -> _Derived:
    """Columns of `target` filled back from the mart: the cycle's column lineage."""
    out = _Derived()
    found = {c.name for c in mart.dataset.columns}
    key = _first(mart.dataset.columns, "key")
    assert key is not None
    for c in target:
        uses = []
        if c.name in found and c.role != "meta":
            uses = [_Use(mart.ref, c.name, "DIRECT", "IDENTITY", f"corrected {c.name}")]
        out.columns.append(c)
        if uses:
            out.fields[c.name] = uses
    where = f"WHERE {key.name} IN (SELECT {key.name} FROM corrections)"
    out.dataset.append(_Use(mart.ref, key.name, "INDIRECT", "FILTER", where))
    return out


def _partners(primary: _Dataset, pool: list[_Dataset], start: int, count: int) -> list[_Dataset]:
    """Up to `count` datasets of `pool` to join to `primary`: first those sharing a key with it,
    looking from `start` on, then any other."""
    keys = {c.name for c in primary.columns if c.role in ("key", "fk")}
    rotation = [pool[(start + i) % len(pool)] for i in range(len(pool))]
    candidates = [d for d in rotation if d is not primary]
    sharing = [d for d in candidates if any(c.name in keys for c in d.columns if c.role in ("key", "fk"))]
    chosen = list(dict.fromkeys([*sharing, *candidates]))
    return chosen[:count]


def _layer_sizes(jobs: int) -> tuple[int, int, int, int]:
    """(ingest, staging, marts, reports) task counts; one more job is the reconcile (cycle) task."""
    rest = jobs - 1
    ingest = max(2, round(rest * 0.3))
    staging = max(2, round(rest * 0.3))
    reports = max(1, round(rest * 0.15))
    marts = rest - ingest - staging - reports
    return ingest, staging, marts, reports


class _Graph:
    """Datasets and jobs of one demo lineage, built from (namespaces, jobs, seed) alone."""

    def __init__(self, namespaces: int, jobs: int, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(f"headwater-demo:graph:{seed}:{namespaces}:{jobs}")
        self.namespaces = [_namespace(i) for i in range(namespaces)]
        self.root_ns = self.namespaces[2]
        self.datasets: list[_Dataset] = []
        self.jobs: list[_Job] = []  # every job, orchestrators and the static-only one included
        self._dataset_names: set[Ref] = set()
        self._job_names: set[Ref] = set()
        self._turn: dict[str, int] = {}
        self._lineage_outputs = 0

        self.orchestrators = [self._orchestrator(ns) for ns in self.namespaces]
        n_ingest, n_staging, n_marts, n_reports = _layer_sizes(jobs)
        self.sources: list[_Dataset] = []
        self.raws: list[_Dataset] = []
        ingest = [self._ingest(i) for i in range(n_ingest)]
        staging_kinds = ["spark" if j % 3 == 1 else "dbt" for j in range(n_staging)]
        self._link_lake_tables(staging_kinds)
        self.stagings: list[_Dataset] = []
        staging = [self._staging(j, kind) for j, kind in enumerate(staging_kinds)]
        self.marts: list[_Dataset] = []
        marts = [self._mart(k) for k in range(n_marts)]
        self.reports: list[_Dataset] = []
        reports = [self._report(k) for k in range(n_reports)]
        self.cycle_job = self._reconcile()
        self.layers: list[list[_Job]] = [ingest, staging, marts, [*reports, self.cycle_job]]
        self.tasks = [job for layer in self.layers for job in layer]
        self.static_job = self._static_job()
        self.schema_changes = self._schema_changes()
        for job in self.tasks:
            if job.idx % 5 == 3:
                job.code_change = True
        empty = [ns.name for ns in self.namespaces if not any(job.ns is ns for job in self.tasks)]
        if empty:
            raise ValueError(f"{jobs} jobs leave namespace(s) {', '.join(empty)} without tasks: use fewer")

    def writer(self, ds: _Dataset) -> _Job:
        """The job that creates `ds` (the cycle job only writes into a table another job creates)."""
        return next(job for job in self.tasks if job.outputs[:1] == [ds] and job.layer != "reconcile")

    def deepest_path(self) -> tuple[Ref, ...]:
        """source → raw → staging → mart → report, each read under the name it was written as."""
        for report_job in self.layers[3]:
            for mart in report_job.inputs:
                for staging in self.writer(mart.dataset).inputs:
                    for raw in self.writer(staging.dataset).inputs:
                        if raw.ref == raw.dataset.ref:
                            source = self.writer(raw.dataset).inputs[0]
                            return (source.ref, raw.ref, staging.ref, mart.ref, report_job.outputs[0].ref)
        raise AssertionError("the layered graph always has a path through storage names")

    # -- naming -----------------------------------------------------------------------------------

    @staticmethod
    def _unique(taken: set[Ref], namespace: str, name: str) -> str:
        candidate, n = name, 2
        while (namespace, candidate) in taken:
            candidate, n = f"{name}_{n}", n + 1
        taken.add((namespace, candidate))
        return candidate

    def _pick(self, kind: str) -> _Namespace:
        pool = [ns for ns in self.namespaces if ns.integration.kind == kind]
        turn = self._turn.get(kind, 0)
        self._turn[kind] = turn + 1
        return pool[turn % len(pool)]

    def _sha(self) -> str:
        return f"{self.rng.getrandbits(160):040x}"

    # -- building blocks --------------------------------------------------------------------------

    def _dataset(
        self, namespace: str, name: str, layer: str, domain: str, columns: list[_Column]
    ) -> _Dataset:
        ds = _Dataset(
            idx=len(self.datasets),
            namespace=namespace,
            name=self._unique(self._dataset_names, namespace, name),
            layer=layer,
            domain=domain,
            entity=False,
            columns=columns,
            base_rows=0,
        )
        self.datasets.append(ds)
        return ds

    def _job(self, ns: _Namespace, name: str, layer: str, description: str, code_path: str) -> _Job:
        integration = ns.integration
        job_type = integration.orchestrator_type if layer == "orchestrator" else integration.task_type
        owners = [_TEAMS[integration.kind]]
        if self.rng.random() < 0.4:
            owners.append(self.rng.choice(_PEOPLE))
        job = _Job(
            idx=len(self.jobs),
            ns=ns,
            name=self._unique(self._job_names, ns.name, name),
            layer=layer,
            job_type=job_type,
            description=description,
            code_path=code_path,
            sha=(self._sha(), self._sha()),
            owners=tuple(owners) if layer == "orchestrator" or self.rng.random() < 0.6 else (),
            documented=layer == "orchestrator" or self.rng.random() < 0.7,
        )
        self.jobs.append(job)
        return job

    def _attach(self, job: _Job, output: _Dataset, derived: _Derived, *, lineage: bool = True) -> None:
        """Make `output` an output of `job`, with the schema and (optionally) column lineage derived."""
        index = len(job.outputs)
        job.outputs.append(output)
        if lineage:
            job.lineage[index] = (derived, derived)
            if self._lineage_outputs % 4 == 1:
                job.deprecated_lineage.add(index)
            self._lineage_outputs += 1

    def _orchestrator(self, ns: _Namespace) -> _Job:
        kind = ns.integration.kind
        if kind == "spark":
            text = f"Spark application `{ns.project}`: lands source tables and topics in the lake."
            path = f"spark/apps/{ns.project}/main.py"
        elif kind == "dbt":
            text = f"`dbt build` of the `{ns.project}` project: staging models and marts."
            path = f"dbt/{ns.project}/dbt_project.yml"
        else:
            text = f"Airflow DAG `{ns.project}`: the daily run of the data platform, 02:00 UTC."
            path = f"airflow/dags/{ns.project}.py"
        return self._job(ns, ns.orchestrator, "orchestrator", text, path)

    def _ingest(self, i: int) -> _Job:
        domain, instance = _domain_instance(i)
        source = self._dataset(
            domain.namespace, domain.table.format(instance), "source", instance, list(domain.columns)
        )
        source.entity = domain.entity
        source.base_rows = self.rng.randint(20_000, 5_000_000)
        self.sources.append(source)
        ns = self._pick("spark")
        job = self._job(
            ns,
            f"{ns.project}.ingest_{instance}",
            "ingest",
            f"Copies `{source.name}` ({source.namespace}) into the lake as `raw/{instance}`.",
            f"spark/apps/{ns.project}/ingest_{domain.name}.py",
        )
        job.duration = (120_000, 900_000)
        read = _Read(source)
        job.inputs.append(read)
        derived = _derive_raw(read)
        raw = self._dataset(LAKE, f"raw/{instance}", "raw", instance, derived.columns)
        raw.entity, raw.base_rows, raw.versioned = domain.entity, source.base_rows, True
        self.raws.append(raw)
        self._attach(job, raw, derived)
        if i % 4 == 1:  # rows failing validation go to a quarantine table: a job with two outputs
            rejects = self._dataset(
                LAKE,
                f"raw/_rejects/{instance}",
                "rejects",
                instance,
                [*derived.columns, _Column("_error", "STRING", "meta")],
            )
            rejects.base_rows = max(1, source.base_rows // 2000)
            self._attach(job, rejects, derived, lineage=False)
        return job

    def _link_lake_tables(self, staging_kinds: list[str]) -> None:
        """The raw datasets dbt reads under their Hive table names (a few; never the first)."""
        chosen: list[_Dataset] = []
        cap = max(3, len(self.raws) // 10)
        for j, kind in enumerate(staging_kinds):
            raw = self.raws[j % len(self.raws)]
            if kind == "dbt" and raw is not self.raws[0] and raw not in chosen and len(chosen) < cap:
                chosen.append(raw)
        for raw in chosen:
            raw.alias = (HIVE, self._unique(self._dataset_names, HIVE, f"raw.{raw.domain}"))

    def _staging(self, j: int, kind: str) -> _Job:
        raws = self.raws
        primary = raws[j % len(raws)]
        second = _partners(primary, raws, j + len(raws) // 2, 1)[0] if j % 3 == 2 else None
        ns = self._pick(kind)
        via_alias = kind == "dbt"
        p = _Read(primary, via_alias)
        q = _Read(second, via_alias) if second is not None else None
        derived = _derive_staging(p, q)
        model = f"stg_{primary.domain}"
        if kind == "dbt":
            output = self._dataset(BIGQUERY, f"acme-analytics.staging.{model}", "staging", primary.domain, [])
            name = f"{ns.project}.staging.{model}"
            path = f"dbt/{ns.project}/models/staging/{model}.sql"
        else:
            output = self._dataset(WAREHOUSE, f"warehouse.staging.{model}", "staging", primary.domain, [])
            name = f"{ns.project}.stage_{primary.domain}"
            path = f"spark/apps/{ns.project}/stage_{primary.domain}.py"
        output.columns, output.entity, output.base_rows = derived.columns, primary.entity, primary.base_rows
        job = self._job(ns, name, "staging", f"Cleans and types `{p.ref[1]}`; hashes personal data.", path)
        job.inputs.append(p)
        if q is not None:
            job.inputs.append(q)
        job.dialect = "bigquery" if kind == "dbt" else None
        job.quality_checks = j % 2 == 0
        job.duration = (30_000, 240_000)
        self.stagings.append(output)
        self._attach(job, output, derived)
        return job

    def _mart(self, k: int) -> _Job:
        stagings = self.stagings
        primary = stagings[k % len(stagings)]
        others = _partners(primary, stagings, k + 1, 2 if k % 3 == 0 else 1)
        p = _Read(primary)
        qs = [_Read(d) for d in others]
        derived = _derive_mart(p, qs, with_dataset_deps=k % 2 == 0)
        model = f"{'dim' if primary.entity else 'fct'}_{primary.domain}"
        ns = self._pick("dbt")
        output = self._dataset(
            BIGQUERY, f"acme-analytics.marts.{model}", "mart", primary.domain, derived.columns
        )
        output.entity, output.lifecycle = primary.entity, "CREATE"
        output.base_rows = primary.base_rows if not primary.entity else max(1, primary.base_rows // 3)
        kind_text = "Dimension" if primary.entity else "Fact table"
        joined = ", ".join(d.domain for d in others) or "nothing"
        job = self._job(
            ns,
            f"{ns.project}.marts.{model}",
            "marts",
            f"{kind_text} of {primary.domain}, joined with {joined}.",
            f"dbt/{ns.project}/models/marts/{model}.sql",
        )
        job.inputs.extend([p, *qs])
        job.dialect = "bigquery"
        job.duration = (60_000, 480_000)
        self.marts.append(output)
        self._attach(job, output, derived)
        return job

    def _report(self, k: int) -> _Job:
        marts = self.marts
        primary = marts[k % len(marts)]
        other = _partners(primary, marts, k + 1, 1)[0] if k % 2 == 0 and len(marts) > 1 else None
        period, unit = _PERIODS[k % len(_PERIODS)]
        m = _Read(primary)
        o = _Read(other) if other is not None else None
        derived = _derive_report(m, o, unit, with_dataset_deps=k % 2 == 1)
        report = f"rpt_{primary.domain}_{period}"
        if k % 3 == 2:
            output = self._dataset(LAKE, f"exports/{report}", "export", primary.domain, derived.columns)
        else:
            output = self._dataset(WAREHOUSE, f"warehouse.reporting.{report}", "report", primary.domain, [])
            output.columns = derived.columns
        output.lifecycle, output.base_rows = "OVERWRITE", self.rng.randint(30, 5_000)
        ns = self._pick("airflow")
        job = self._job(
            ns,
            f"{ns.project}.{report}",
            "reports",
            f"{period.capitalize()} {primary.domain} report for the BI dashboards.",
            f"airflow/dags/{ns.project}.py",
        )
        job.inputs.append(m)
        if o is not None:
            job.inputs.append(o)
        job.dialect = "postgres"
        job.duration = (20_000, 120_000)
        self.reports.append(output)
        self._attach(job, output, derived)
        return job

    def _reconcile(self) -> _Job:
        """The cycle: reads the first mart, writes the staging table that mart is built from."""
        mart = self.marts[0]
        target = self.stagings[0]
        ns = self.root_ns
        job = self._job(
            ns,
            f"{ns.project}.reconcile_{target.domain}",
            "reconcile",
            f"Writes late corrections found in `{mart.name}` back into `{target.name}` "
            "(read by the next run of the mart: a cycle).",
            f"airflow/dags/{ns.project}.py",
        )
        m = _Read(mart)
        job.inputs.append(m)
        job.dialect = "bigquery"
        job.duration = (20_000, 90_000)
        self._attach(job, target, _derive_reconcile(m, target.columns))
        return job

    def _static_job(self) -> _Job:
        """A job declared by a JobEvent only: it never runs."""
        ns = self.root_ns
        job = self._job(
            ns,
            f"{ns.project}.export_partner_feed",
            "static",
            "Planned: a nightly feed of the first report for a partner (not scheduled yet).",
            f"airflow/dags/{ns.project}.py",
        )
        source = self.reports[0]
        job.inputs.append(_Read(source))
        feed = self._dataset(LAKE, "exports/partner_feed", "export", source.domain, list(source.columns))
        job.outputs.append(feed)
        job.dialect = "postgres"
        return job

    def _schema_changes(self) -> list[_Dataset]:
        """Datasets whose schema changes on the change day, with the code of their writer."""
        picked = [self.raws[0], self.stagings[1 % len(self.stagings)], self.marts[0]]
        outputs = [d for d in self.datasets if d.layer in ("raw", "staging", "mart")]
        picked += [d for i, d in enumerate(outputs) if i % 25 == 24 and d not in picked]
        for ds in picked:
            writer = self.writer(ds)
            writer.code_change = True
            derived = writer.lineage[0][0]
            v2 = _Derived(list(derived.columns), dict(derived.fields), list(derived.dataset))
            if ds.layer == "raw":
                v2.add(
                    _Column("_cdc_lsn", "BIGINT", "meta", description="Log sequence number of the change"), []
                )
            elif ds.layer == "staging":
                v2.columns = [
                    _Column(c.name, "DECIMAL(38,6)", c.role) if c.type == "DECIMAL(18,2)" else c
                    for c in v2.columns
                ]
                basis = _first(writer.inputs[0].dataset.columns, "dim", "pii", "key")
                assert basis is not None
                expr = f"{basis.name} IN ('test', 'qa') OR {basis.name} LIKE '%@example.com'"
                use = _Use(writer.inputs[0].ref, basis.name, "DIRECT", "TRANSFORMATION", expr)
                v2.add(_Column("is_test", "BOOLEAN", "flag"), [use])
            else:
                measure = next((c for c in v2.columns if c.role == "measure" and c.name in v2.fields), None)
                if measure is not None:
                    uses = [
                        _Use(u.ref, u.field, u.type, "TRANSFORMATION", f"{u.description} * fx.rate_to_usd")
                        for u in v2.fields[measure.name]
                        if u.type == "DIRECT"
                    ]
                    v2.add(_Column(f"{measure.name}_usd", "DECIMAL(18,2)", "measure"), uses)
                else:
                    v2.add(_Column("refreshed_at", "TIMESTAMP", "meta"), [])
            ds.columns_v2 = v2.columns
            writer.lineage[0] = (derived, v2)
        # The cycle job writes the first staging table too: its lineage follows that schema.
        cycle_target = self.cycle_job.outputs[0]
        mart_read = self.cycle_job.inputs[0]
        self.cycle_job.lineage[0] = (
            _derive_reconcile(mart_read, cycle_target.columns),
            _derive_reconcile(mart_read, cycle_target.schema(True)),
        )
        return picked


# ------------------------------------------------------------------------------------------------
# Facets
# ------------------------------------------------------------------------------------------------


def _schema_field(column: _Column, position: int | None) -> dict[str, Any]:
    item: dict[str, Any] = {"name": column.name, "type": column.type}
    if column.description:
        item["description"] = column.description
    if position is not None:
        item["ordinal_position"] = position
    if column.fields:
        item["fields"] = [_schema_field(f, None) for f in column.fields]
    return item


def _lineage_facet(producer: str, derived: _Derived, deprecated: bool) -> Facets:
    def input_field(use: _Use, with_transformation: bool) -> dict[str, Any]:
        item: dict[str, Any] = {"namespace": use.ref[0], "name": use.ref[1], "field": use.field}
        if with_transformation:
            step: dict[str, Any] = {"type": use.type, "subtype": use.subtype, "description": use.description}
            step["masking"] = use.masking
            item["transformations"] = [step]
        return item

    fields: dict[str, Any] = {}
    for name, uses in derived.fields.items():
        if deprecated:
            direct = [u for u in uses if u.type == "DIRECT"] or uses
            fields[name] = {
                "inputFields": [input_field(u, False) for u in uses],
                "transformationDescription": "; ".join(u.description for u in direct),
                "transformationType": "MASKED" if any(u.masking for u in uses) else "IDENTITY",
            }
        else:
            fields[name] = {"inputFields": [input_field(u, True) for u in uses]}
    facet = _facet(producer, "ColumnLineageDatasetFacet", fields=fields)
    if derived.dataset and not deprecated:
        facet["dataset"] = [input_field(u, True) for u in derived.dataset]
    return facet


def _table(ref: Ref) -> str:
    """How SQL names a dataset: lake paths as path tables, BigQuery names quoted."""
    if ref[0] == LAKE:
        return f"parquet.`{LAKE}/{ref[1]}`"
    if ref[0] == BIGQUERY:
        return f"`{ref[1]}`"
    return ref[1]


def _sql(job: _Job, v2: bool) -> str:
    """The query of a SQL job, written from its column lineage."""
    derived = job.lineage[0][1 if v2 else 0]
    parts = []
    for column in derived.columns:
        direct = [u for u in derived.fields.get(column.name, ()) if u.type == "DIRECT"]
        if not direct and job.layer == "reconcile":
            continue  # a MERGE sets only the columns it has values for
        if not direct:
            parts.append(f"current_timestamp() AS {column.name}" if column.role == "meta" else column.name)
        elif direct[0].subtype == "IDENTITY":
            same = direct[0].field == column.name
            parts.append(column.name if same else f"{direct[0].field} AS {column.name}")
        else:
            parts.append(f"{direct[0].description} AS {column.name}")
    query = f"SELECT {', '.join(parts)} FROM {_table(job.inputs[0].ref)}"
    clauses = [u.description for uses in derived.fields.values() for u in uses if u.subtype == "JOIN"]
    clauses += [u.description for u in derived.dataset if u.subtype == "FILTER"]
    clauses += [u.description for u in derived.dataset if u.subtype == "GROUP_BY"]
    for clause in dict.fromkeys(clauses):
        query += f" {clause}"
    target = _table(job.outputs[0].ref)
    if job.layer == "reconcile":
        return f"MERGE INTO {target} USING ({query}) AS fix ON TRUE WHEN MATCHED THEN UPDATE SET *"
    if job.ns.integration.kind == "dbt":
        return query
    return f"INSERT INTO {target} {query}"


# ------------------------------------------------------------------------------------------------
# The history: one day at a time
# ------------------------------------------------------------------------------------------------


class _Timed(NamedTuple):
    ms: int
    seq: int
    event: Event
    run: str  # runId, "" for static events
    kind: str  # eventType, "" for static events


class _History:
    """Events of the days of one graph; a day's events depend on (graph, change day, day) only."""

    def __init__(self, graph: _Graph, change_day: int) -> None:
        self.graph = graph
        self.change_day = change_day
        self._job_facets: dict[tuple[int, bool], Facets] = {}
        self._datasets: dict[tuple[int, bool], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
        self._names: dict[int, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
        self._engines = {
            kind: _facet(
                integration.producer,
                "ProcessingEngineRunFacet",
                name=integration.engine[0],
                version=integration.engine[1],
                openlineageAdapterVersion=integration.engine[2],
            )
            for kind, integration in _INTEGRATIONS.items()
        }

    # -- cached parts -----------------------------------------------------------------------------

    def job_facets(self, job: _Job, v2: bool) -> Facets:
        key = (job.idx, v2 and job.code_change)
        found = self._job_facets.get(key)
        if found is not None:
            return found
        p = job.producer
        integration = job.ns.integration
        job_type: dict[str, Any] = {"processingType": "BATCH", "integration": integration.integration}
        job_type["jobType"] = job.job_type
        if job.layer == "orchestrator":
            job_type["emissionPattern"] = {"eventTrigger": "EVENT_BASED", "eventContentMode": "ACCUMULATIVE"}
        sha = job.sha[1] if key[1] else job.sha[0]
        facets: Facets = {
            "jobType": _facet(p, "JobTypeJobFacet", **job_type),
            "sourceCodeLocation": _facet(
                p,
                "SourceCodeLocationJobFacet",
                type="git",
                url=f"{_REPO}/blob/{sha}/{job.code_path}",
                repoUrl=f"{_REPO}.git",
                path=job.code_path,
                version=sha,
                branch="main",
            ),
        }
        if job.dialect is not None and job.lineage:
            facets["sql"] = _facet(p, "SQLJobFacet", query=_sql(job, key[1]), dialect=job.dialect)
        if job.documented:
            facets["documentation"] = _facet(
                p, "DocumentationJobFacet", description=job.description, contentType="text/markdown"
            )
        if job.owners:
            owners = [{"name": owner, "type": "MAINTAINER"} for owner in job.owners]
            facets["ownership"] = _facet(p, "OwnershipJobFacet", owners=owners)
        self._job_facets[key] = facets
        return facets

    def dataset_facets(self, ds: _Dataset, producer: str, *, v2: bool, via_alias: bool) -> Facets:
        ref = ds.alias if via_alias and ds.alias is not None else ds.ref
        positions = ref[0].startswith("postgres://")
        fields = [_schema_field(c, i + 1 if positions else None) for i, c in enumerate(ds.schema(v2))]
        facets: Facets = {
            "schema": _facet(producer, "SchemaDatasetFacet", fields=fields),
            "dataSource": _facet(
                producer, "DatasourceDatasetFacet", name=ref[0], uri=_DATASOURCE_URIS[ref[0]]
            ),
        }
        if v2 and ds.alias is not None and not via_alias:
            identifiers = [{"namespace": ds.alias[0], "name": ds.alias[1], "type": "TABLE"}]
            facets["symlinks"] = _facet(producer, "SymlinksDatasetFacet", identifiers=identifiers)
        return facets

    def datasets(self, job: _Job, v2: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(inputs, outputs) with their dataset facets, as START and COMPLETE events carry them."""
        key = (job.idx, v2)
        found = self._datasets.get(key)
        if found is not None:
            return found
        p = job.producer
        inputs = [
            {
                "namespace": read.ref[0],
                "name": read.ref[1],
                "facets": self.dataset_facets(read.dataset, p, v2=v2, via_alias=read.via_alias),
            }
            for read in job.inputs
        ]
        outputs = []
        for index, ds in enumerate(job.outputs):
            facets = self.dataset_facets(ds, p, v2=v2, via_alias=False)
            if index in job.lineage:
                derived = job.lineage[index][1 if v2 else 0]
                facets["columnLineage"] = _lineage_facet(p, derived, index in job.deprecated_lineage)
            outputs.append({"namespace": ds.namespace, "name": ds.name, "facets": facets})
        self._datasets[key] = (inputs, outputs)
        return inputs, outputs

    def names(self, job: _Job) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(inputs, outputs) by name only, as RUNNING, FAIL and ABORT events carry them."""
        found = self._names.get(job.idx)
        if found is None:
            found = (
                [{"namespace": r.ref[0], "name": r.ref[1]} for r in job.inputs],
                [{"namespace": d.namespace, "name": d.name} for d in job.outputs],
            )
            self._names[job.idx] = found
        return found

    # -- events -----------------------------------------------------------------------------------

    @staticmethod
    def _run_event(
        job: _Job,
        event_type: str,
        ms: int,
        run: dict[str, Any],
        job_facets: Facets | None,
        inputs: list[dict[str, Any]],
        outputs: list[dict[str, Any]],
    ) -> Event:
        job_part: dict[str, Any] = {"namespace": job.ns.name, "name": job.name}
        if job_facets is not None:
            job_part["facets"] = job_facets
        return {
            "eventType": event_type,
            "eventTime": _iso(ms),
            "run": run,
            "job": job_part,
            "inputs": inputs,
            "outputs": outputs,
            "producer": job.producer,
            "schemaURL": RUN_EVENT_SCHEMA,
        }

    def _completed_outputs(
        self, job: _Job, outputs: list[dict[str, Any]], day: int, v2: bool, rng: random.Random
    ) -> list[dict[str, Any]]:
        p = job.producer
        done = []
        for ds, base in zip(job.outputs, outputs, strict=True):
            facets = dict(base["facets"])
            if ds.versioned:
                facets["version"] = _facet(p, "DatasetVersionDatasetFacet", datasetVersion=str(day + 1))
            change = None
            if ds.lifecycle == "OVERWRITE" or (ds.lifecycle == "CREATE" and day == 0):
                change = ds.lifecycle
            if day == self.change_day and ds.columns_v2 is not None and job.layer != "reconcile":
                change = "ALTER"
            if change is not None:
                facets["lifecycleStateChange"] = _facet(
                    p, "LifecycleStateChangeDatasetFacet", lifecycleStateChange=change
                )
            rows = max(1, int(ds.base_rows * (1 + 0.002 * day) * rng.uniform(0.92, 1.08)))
            width = 24 + 16 * len(ds.columns)
            stats: dict[str, Any] = {"rowCount": rows, "size": rows * width}
            if ds.namespace == LAKE:
                stats["fileCount"] = 1 + rows * width // 134_217_728
            done.append(
                {
                    "namespace": ds.namespace,
                    "name": ds.name,
                    "facets": facets,
                    "outputFacets": {
                        "outputStatistics": _facet(p, "OutputStatisticsOutputDatasetFacet", **stats)
                    },
                }
            )
        return done

    def _checked_inputs(
        self, job: _Job, inputs: list[dict[str, Any]], day: int, rng: random.Random
    ) -> list[dict[str, Any]]:
        if not job.quality_checks:
            return inputs
        read = job.inputs[0].dataset
        rows = max(1, int(read.base_rows * (1 + 0.002 * day) * rng.uniform(0.92, 1.08)))
        metrics: dict[str, Any] = {}
        key = _first(read.columns, "key")
        if key is not None:
            metrics[key.name] = {"nullCount": 0, "distinctCount": rows, "count": rows}
        measure = _first(read.columns, "measure")
        if measure is not None:
            mean = rng.uniform(5, 250)
            metrics[measure.name] = {
                "nullCount": rows // 500,
                "count": rows - rows // 500,
                "sum": round(mean * rows, 2),
                "min": 0,
                "max": round(mean * 40, 2),
                "quantiles": {
                    "0.25": round(mean * 0.4, 2),
                    "0.5": round(mean * 0.8, 2),
                    "0.75": round(mean * 1.5, 2),
                },
            }
        facet = _facet(
            job.producer,
            "DataQualityMetricsInputDatasetFacet",
            rowCount=rows,
            bytes=rows * (24 + 16 * len(read.columns)),
            columnMetrics=metrics,
        )
        first = {**inputs[0], "inputFacets": {"dataQualityMetrics": facet}}
        return [first, *inputs[1:]]

    def _task_run(
        self,
        add: Callable[[int, Event, str, str], None],
        rng: random.Random,
        job: _Job,
        start: int,
        run_facets: Facets,
        outcome: str,
        running: bool,
        day: int,
    ) -> int:
        """The events of one task run; returns the time it ended."""
        v2 = day >= self.change_day
        run_id = _new_id(rng)
        low, high = job.duration
        end = start + rng.randint(low, high)
        facets = self.job_facets(job, v2)
        inputs, outputs = self.datasets(job, v2)
        run = {"runId": run_id, "facets": run_facets}
        add(start, self._run_event(job, "START", start, run, facets, inputs, outputs), run_id, "START")
        names_in, names_out = self.names(job)
        if running:
            at = start + (end - start) // 2
            add(at, self._run_event(job, "RUNNING", at, run, None, names_in, names_out), run_id, "RUNNING")
        if outcome == "COMPLETE":
            done_in = self._checked_inputs(job, inputs, day, rng)
            done_out = self._completed_outputs(job, outputs, day, v2, rng)
            event = self._run_event(job, "COMPLETE", end, run, facets, done_in, done_out)
        else:
            end_facets = dict(run_facets)
            if outcome == "FAIL":
                integration = job.ns.integration
                end_facets["errorMessage"] = _facet(
                    job.producer,
                    "ErrorMessageRunFacet",
                    message=integration.error,
                    programmingLanguage=integration.language,
                )
            end_run = {"runId": run_id, "facets": end_facets}
            event = self._run_event(job, outcome, end, end_run, facets, names_in, names_out)
        add(end, event, run_id, outcome)
        return end

    def _parent(self, producer: str, parent: _Job, parent_run: str, root: _Job, root_run: str) -> Facets:
        return _facet(
            producer,
            "ParentRunFacet",
            run={"runId": parent_run},
            job={"namespace": parent.ns.name, "name": parent.name},
            root={"run": {"runId": root_run}, "job": {"namespace": root.ns.name, "name": root.name}},
        )

    def day(self, day: int) -> list[Event]:
        """The events of one scheduled day, in arrival order."""
        g = self.graph
        rng = random.Random(f"headwater-demo:day:{g.seed}:{len(g.namespaces)}:{len(g.tasks)}:{day}")
        v2 = day >= self.change_day
        base = _START_MS + day * _DAY_MS + _SCHEDULE_MS
        timeline: list[_Timed] = []

        def add(ms: int, event: Event, run: str = "", kind: str = "") -> None:
            timeline.append(_Timed(ms, len(timeline), event, run, kind))

        for at, event in self._static_events(day, base):
            add(at, event)

        orchestrators = {ns.name: job for ns, job in zip(g.namespaces, g.orchestrators, strict=True)}
        root = orchestrators[g.root_ns.name]
        orch_runs = {name: _new_id(rng) for name in orchestrators}
        root_run = orch_runs[root.ns.name]
        nominal = _facet(
            _INTEGRATIONS["airflow"].producer,
            "NominalTimeRunFacet",
            nominalStartTime=_iso(base),
            nominalEndTime=_iso(base + _DAY_MS),
        )
        task_facets: dict[str, Facets] = {}
        for name, orch in orchestrators.items():
            integration = orch.ns.integration
            facets: Facets = {
                "parent": self._parent(integration.producer, orch, orch_runs[name], root, root_run),
                "processing_engine": self._engines[integration.kind],
            }
            if integration.kind == "airflow":  # scheduled runs say which interval they process
                facets["nominalTime"] = nominal
            task_facets[name] = facets

        tasks = g.tasks
        count = len(tasks)
        fails = set(rng.sample(range(count), _quota(FAIL_RATE, count, day)))
        healthy = [i for i in range(count) if i not in fails]
        aborts = set(rng.sample(healthy, min(len(healthy), _quota(ABORT_RATE, count, day))))
        running = set(rng.sample(range(count), _quota(RUNNING_RATE, count, day)))

        root_start = base + rng.randint(0, 20_000)
        cursor = root_start + rng.randint(10_000, 25_000)
        windows: dict[str, tuple[int, int]] = {}
        failed: set[str] = set()
        index = 0
        for layer in g.layers:
            layer_end = cursor
            for job in layer:
                start = cursor + rng.randint(0, 90_000)
                outcome = "FAIL" if index in fails else "ABORT" if index in aborts else "COMPLETE"
                facets = task_facets[job.ns.name]
                end = self._task_run(add, rng, job, start, facets, outcome, index in running, day)
                if outcome == "FAIL":  # the scheduler retries once
                    retry = "FAIL" if rng.random() < RETRY_FAIL_RATE else "COMPLETE"
                    end = self._task_run(
                        add, rng, job, end + rng.randint(60_000, 300_000), facets, retry, False, day
                    )
                    if retry == "FAIL":
                        failed.add(job.ns.name)
                first, last = windows.get(job.ns.name, (start, end))
                windows[job.ns.name] = (min(first, start), max(last, end))
                layer_end = max(layer_end, end)
                index += 1
            cursor = layer_end + rng.randint(10_000, 60_000)

        root_end = cursor
        for name, orch in orchestrators.items():
            first, last = windows[name]
            integration = orch.ns.integration
            run_facets: Facets = {"processing_engine": self._engines[integration.kind]}
            if orch is root:
                start, end = root_start, root_end
                state = "FAIL" if failed else "COMPLETE"
            else:
                start, end = first - rng.randint(1_000, 5_000), last + rng.randint(1_000, 10_000)
                state = "FAIL" if name in failed else "COMPLETE"
                run_facets["parent"] = self._parent(integration.producer, root, root_run, root, root_run)
            if integration.kind == "airflow":
                run_facets["nominalTime"] = nominal
            run = {"runId": orch_runs[name], "facets": run_facets}
            facets = self.job_facets(orch, v2)
            add(start, self._run_event(orch, "START", start, run, facets, [], []), orch_runs[name], "START")
            add(end, self._run_event(orch, state, end, run, facets, [], []), orch_runs[name], state)

        timeline.sort()
        return self._deliver(timeline, rng, day)

    # -- static metadata --------------------------------------------------------------------------

    def _static_events(self, day: int, base: int) -> list[tuple[int, Event]]:
        g = self.graph
        p = CATALOG_PRODUCER
        events: list[Event] = []

        def dataset_event(ds: _Dataset, facets: Facets) -> None:
            dataset = {"namespace": ds.namespace, "name": ds.name, "facets": facets}
            events.append(
                {"eventTime": "", "producer": p, "schemaURL": DATASET_EVENT_SCHEMA, "dataset": dataset}
            )

        def docs(text: str) -> Facets:
            return _facet(p, "DocumentationDatasetFacet", description=text, contentType="text/markdown")

        def owners(*names: str) -> Facets:
            return _facet(p, "OwnershipDatasetFacet", owners=[{"name": n, "type": "OWNER"} for n in names])

        mart, source = g.marts[0], g.sources[0]
        if day == 0:
            at = base - 50 * 60_000
            dataset_event(
                source, {"documentation": docs(f"Operational `{source.domain}` table of the shop.")}
            )
            dataset_event(
                mart,
                {
                    "documentation": docs(f"Curated {mart.domain}: the reference for finance and BI."),
                    "ownership": owners("team:analytics-engineering", "user:mlopez"),
                },
            )
            dataset_event(g.reports[0], {"documentation": docs("Feeds the executive dashboard.")})
            for other in g.marts[1::4]:
                dataset_event(other, {"ownership": owners("team:analytics-engineering")})
            mart_job = next(job for job in g.tasks if job.outputs[0] is mart)
            events.append(self._job_event(mart_job, CATALOG_PRODUCER, with_schema=False))
            events.append(self._job_event(g.static_job, g.static_job.producer, with_schema=True))
        elif day == self.change_day:
            at = base - 40 * 60_000
            deleted = {"ownership": {"_producer": p, "_schemaURL": owners()["_schemaURL"], "_deleted": True}}
            dataset_event(mart, deleted)
            dataset_event(
                source, {"documentation": docs(f"Operational `{source.domain}` table (CDC enabled).")}
            )
        else:
            return []
        timed = []
        for i, event in enumerate(events):
            event["eventTime"] = _iso(at + i * 1_500)
            timed.append((at + i * 1_500, event))
        return timed

    def _job_event(self, job: _Job, producer: str, *, with_schema: bool) -> Event:
        if producer == job.producer:
            facets = self.job_facets(job, False)
        else:
            facets = {
                "documentation": _facet(
                    producer,
                    "DocumentationJobFacet",
                    description=job.description,
                    contentType="text/markdown",
                ),
                "ownership": _facet(
                    producer,
                    "OwnershipJobFacet",
                    owners=[
                        {"name": owner, "type": "MAINTAINER"} for owner in job.owners or (_TEAMS["dbt"],)
                    ],
                ),
            }
        inputs, outputs = self.names(job)
        if with_schema:
            outputs = [
                {**item, "facets": self.dataset_facets(ds, producer, v2=False, via_alias=False)}
                for item, ds in zip(outputs, job.outputs, strict=True)
            ]
        return {
            "eventTime": "",
            "producer": producer,
            "schemaURL": JOB_EVENT_SCHEMA,
            "job": {"namespace": job.ns.name, "name": job.name, "facets": facets},
            "inputs": inputs,
            "outputs": outputs,
        }

    # -- delivery ---------------------------------------------------------------------------------

    @staticmethod
    def _deliver(timeline: list[_Timed], rng: random.Random, day: int) -> list[Event]:
        """Event-time order → arrival order: a few events late, a few twice."""
        n = len(timeline)
        last: dict[str, int] = {}
        for i, item in enumerate(timeline):
            if item.run:
                last[item.run] = i
        late = int(LATE_RATE * n + rng.random())
        # Late events arrive a few places late, or (half of the STARTs and RUNNINGs) after their
        # run's end. On the first day one RUNNING and one START surely do, so even a small demo
        # has both.
        wanted = []
        if day == 0:
            for kind in ("RUNNING", "START"):
                found = [i for i, t in enumerate(timeline) if t.kind == kind and last[t.run] > i]
                if found:
                    wanted.append(rng.choice(found))
        others = [i for i in range(n) if i not in wanted]
        picks = wanted + rng.sample(others, min(len(others), max(0, late - len(wanted))))
        keys = [float(i) for i in range(n)]
        for i in picks:
            item = timeline[i]
            end = last.get(item.run, i)
            if item.kind in ("START", "RUNNING") and end > i and (i in wanted or rng.random() < 0.5):
                keys[i] = end + rng.uniform(0.1, 3.0)
            else:
                keys[i] = i + rng.uniform(1.5, 12.0)
        arrived = [timeline[i].event for i in sorted(range(n), key=keys.__getitem__)]
        twice = int(DUPLICATE_RATE * n + rng.random())
        if day == 0:
            twice = max(twice, 1)
        for i in sorted(rng.sample(range(len(arrived)), min(twice, len(arrived))), reverse=True):
            arrived.insert(min(len(arrived), i + 1 + rng.randrange(4)), dict(arrived[i]))
        return arrived


# ------------------------------------------------------------------------------------------------
# Public API
# ------------------------------------------------------------------------------------------------


def _change_day(days: int) -> int:
    return max(1, days // 2)


def demo_events(shape: DemoShape = DemoShape()) -> list[dict[str, Any]]:
    """The complete demo history of `shape`, in arrival order; every event an independent dict."""
    history = _History(_Graph(shape.namespaces, shape.jobs, shape.seed), _change_day(shape.runs_per_job))
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
    history = _History(_Graph(shape.namespaces, shape.jobs, shape.seed), _change_day(shape.runs_per_job))
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
    g = _Graph(shape.namespaces, shape.jobs, shape.seed)
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
