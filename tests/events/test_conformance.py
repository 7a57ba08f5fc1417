"""Conformance of whole events: Headwater's verdicts against the official OpenLineage schemas.

``validate_event`` is compared with an oracle (``tests/events/oracle.py``) that runs ``jsonschema``
(Draft 2020-12, a referencing Registry of every file under ``published/`` plus the spec's newest
``OpenLineage.json``, format assertion for ``uuid`` and ``date-time`` only) over the same event:

* **accepted** ⇔ the event, with every individual facet value replaced by the minimal valid facet
  ``{"_producer": "p", "_schemaURL": "u"}`` (containers kept as they are), is valid against the
  ``$defs`` entry of its kind in the newest core (2-0-2);
* **untrusted facets / warnings** (accepted events only) ⇔ the facet is not an object, or breaks core
  2-0-2's ``<Kind>Facet`` (``_producer``/``_schemaURL`` required strings, ``_deleted`` a boolean on
  job and dataset facets), or breaks the published definition its ``_schemaURL`` names (resolved as
  docs/events.md says); the set of untrusted facet paths must be exactly the oracle's;
* **errors** (rejected events): each jsonschema violation gives a group of paths an error may name
  (a missing key: the key's path; ``not required [job, run]``: the event or those keys; otherwise the
  instance path, the root being ``event``).  Every Headwater error must name a path of some group and
  every group must be named by some error: no error blames an innocent field, none is left out.

Deliberate differences from the official core schema, documented in docs/events.md and applied in
the oracle:

  D1. ``schemaURL`` may be missing (Marquez compatibility).
  D2. An ``eventTime`` without an offset is read as UTC.
  D3. The event is checked against the kind its ``schemaURL`` fragment names (last path segment:
      ``RunEvent``/``JobEvent``/``DatasetEvent``), else the structure's (``run`` → RunEvent, else
      ``job`` → JobEvent, else ``dataset`` → DatasetEvent), instead of requiring exactly one branch
      of the top-level ``oneOf``.  So a JobEvent that also carries ``dataset`` is accepted (the core
      matches both JobEvent and DatasetEvent), and an event whose schemaURL names JobEvent but which
      carries a ``run`` is rejected (the core would take it as a RunEvent).
  D4. A run id (``run.runId``, and the parent facet's ``run.runId`` and ``root.run.runId``) is any
      non-empty string; one that is not a UUID in the canonical 8-4-4-4-12 hex form (so also what
      jsonschema's ``uuid`` takes beyond it: a trailing ``-`` or ``}``, non-ASCII digits) is kept as
      sent and reported as a warning naming its path, which marks nothing untrusted.  The rest of the
      parent facet is still checked against its schema.

Further differences found by these tests, NOT in docs/events.md (reported; applied in the oracle so
that the differential test checks everything else, and pinned one by one in
``test_differences_from_the_core_schema``):

  F1. eventTime spellings beyond RFC 3339 are accepted: surrounding whitespace, a space between date
      and time, a comma before the fraction, ``+hh`` and ``+hhmm`` offsets, a leap second ``:60``
      (jsonschema's date-time rejects all of them).
  F2. eventTimes before 1582-10-15T00:00:00Z or after 5236-03-31T21:21:00.6846975Z are rejected: an
      eventId (version-1 UUID) cannot represent them (the core accepts years 0001-9999).

Bugs found (not applied in the oracle; the ``test_bug_*`` tests fail until they are fixed, and the
differential tests fail on the inputs that reach them):

  B1. ``eventType`` that is an array or object: ``validate_event`` raises TypeError (unhashable
      type) from ``raw_type in EVENT_TYPES`` (validate.py) instead of InvalidEvent naming eventType.
  B2. eventTime with non-ASCII digits (a year in fullwidth digits, U+FF10-FF19) is accepted:
      ``_RFC3339`` in times.py uses ``\\d`` without ``re.ASCII``.
  B3. eventTime with an offset ending in a bare colon (``"2024-05-01T10:00:00+05:"``) is accepted:
      ``_RFC3339`` in times.py has ``:?(\\d{2})?``.

Facet-level differences of ``check_facets`` (a date-time with a trailing newline, an unknown
``#/$defs/`` fragment; see tests/events/test_facets.py) are kept out of the generated inputs.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headwater.errors import InvalidEvent
from headwater.events.validate import validate_event
from tests.events import oracle
from tests.events.oracle import CORE, FACETS, HAVE_SPEC, NO_SPEC, SPEC_DIR

needs_spec = pytest.mark.skipif(not HAVE_SPEC, reason=NO_SPEC)

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark"
RUN_ID = "0190c1f2-7d3e-7b3a-9c1d-6f2a8e4b5c7d"
PARENT_ID = "0190c1f2-0000-7000-8000-000000000001"
ROOT_ID = "0190c1f2-0000-7000-8000-000000000002"


def facet(facet_name: str, facet_version: str, /, *, fragment: bool = False, **fields: Any) -> dict[str, Any]:
    url = f"{FACETS}{facet_version}/{facet_name}.json" + (f"#/$defs/{facet_name}" if fragment else "")
    return {"_producer": PRODUCER, "_schemaURL": url, **fields}


# ------------------------------------------------------------------------------------------------
# Valid base events
# ------------------------------------------------------------------------------------------------


def rich_run_event() -> dict[str, Any]:
    """A Spark-like COMPLETE event: two inputs, one output, the common standard facets."""
    fields = [
        {"name": "id", "type": "BIGINT"},
        {"name": "customer", "type": "STRUCT", "fields": [{"name": "email", "type": "STRING"}]},
        {"name": "amount", "type": "DECIMAL(10,2)", "description": "order total"},
    ]
    return {
        "eventType": "COMPLETE",
        "eventTime": "2024-05-01T10:15:30.123456+02:00",
        "producer": PRODUCER,
        "schemaURL": f"{CORE}#/$defs/RunEvent",
        "run": {
            "runId": RUN_ID,
            "facets": {
                "parent": facet(
                    "ParentRunFacet",
                    "1-1-0",
                    fragment=True,
                    run={"runId": PARENT_ID},
                    job={"namespace": "airflow", "name": "daily_orders"},
                    root={"run": {"runId": ROOT_ID}, "job": {"namespace": "airflow", "name": "daily"}},
                ),
                "nominalTime": facet(
                    "NominalTimeRunFacet",
                    "1-0-1",
                    nominalStartTime="2024-05-01T00:00:00Z",
                    nominalEndTime="2024-05-02T00:00:00Z",
                ),
                "processing_engine": facet(
                    "ProcessingEngineRunFacet",
                    "1-1-1",
                    version="3.5.1",
                    name="spark",
                    openlineageAdapterVersion="1.23.0",
                ),
                "environmentVariables": facet(
                    "EnvironmentVariablesRunFacet",
                    "1-0-0",
                    environmentVariables=[{"name": "SPARK_HOME", "value": "/opt/spark"}],
                ),
                "tags": facet(
                    "TagsRunFacet", "1-0-0", fragment=True, tags=[{"key": "team", "value": "sales"}]
                ),
                "spark.logicalPlan": {
                    "_producer": PRODUCER,
                    "_schemaURL": "https://example.com/spark/LogicalPlanFacet.json",
                    "plan": [{"class": "Project", "num-children": 1}],
                },
                "airflow": {
                    "_producer": PRODUCER,
                    "_schemaURL": "https://openlineage.io/spec/1-0-2/OpenLineage.json#/$defs/RunFacet",
                    "dag": {"dag_id": "daily"},
                },
            },
        },
        "job": {
            "namespace": "spark",
            "name": "daily_orders.load",
            "facets": {
                "sql": facet("SQLJobFacet", "1-1-0", query="INSERT INTO t SELECT * FROM s", dialect="spark"),
                "jobType": facet(
                    "JobTypeJobFacet", "2-0-3", processingType="BATCH", integration="SPARK", jobType="JOB"
                ),
                "ownership": facet(
                    "OwnershipJobFacet", "1-0-1", owners=[{"name": "team:sales", "type": "TEAM"}]
                ),
                "sourceCodeLocation": facet(
                    "SourceCodeLocationJobFacet",
                    "1-1-0",
                    type="git",
                    url="https://github.com/acme/etl/blob/main/load.py",
                    repoUrl="git@github.com:acme/etl.git",
                    path="load.py",
                    branch="main",
                ),
                "documentation": facet(
                    "DocumentationJobFacet", "1-1-0", description="Loads orders.", contentType="text/markdown"
                ),
            },
        },
        "inputs": [
            {
                "namespace": "postgres://db.acme:5432",
                "name": "shop.public.orders",
                "facets": {
                    "schema": facet("SchemaDatasetFacet", "1-1-1", fields=fields),
                    "dataSource": facet(
                        "DatasourceDatasetFacet", "1-0-1", name="shop", uri="postgres://db.acme:5432/shop"
                    ),
                    "symlinks": facet(
                        "SymlinksDatasetFacet",
                        "1-0-1",
                        identifiers=[{"namespace": "hive://meta", "name": "shop.orders", "type": "TABLE"}],
                    ),
                    "version": facet("DatasetVersionDatasetFacet", "1-0-1", datasetVersion="42"),
                    "ownership": facet("OwnershipDatasetFacet", "1-0-1", owners=[{"name": "dba"}]),
                },
                "inputFacets": {
                    "dataQualityMetrics": facet(
                        "DataQualityMetricsInputDatasetFacet",
                        "1-0-3",
                        rowCount=1000,
                        columnMetrics={"amount": {"nullCount": 0, "sum": 12.5, "quantiles": {"0.5": 3.0}}},
                    ),
                    "inputStatistics": facet("InputStatisticsInputDatasetFacet", "1-0-0", rowCount=1000),
                },
            },
            {"namespace": "s3://lake", "name": "dim/customers"},
        ],
        "outputs": [
            {
                "namespace": "s3://lake",
                "name": "marts/orders_daily",
                "facets": {
                    "schema": facet("SchemaDatasetFacet", "1-2-0", fields=[{"name": "id", "type": "BIGINT"}]),
                    "columnLineage": facet(
                        "ColumnLineageDatasetFacet",
                        "1-2-0",
                        fragment=True,
                        fields={
                            "id": {
                                "inputFields": [
                                    {
                                        "namespace": "postgres://db.acme:5432",
                                        "name": "shop.public.orders",
                                        "field": "id",
                                        "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                                    }
                                ]
                            }
                        },
                        dataset=[
                            {
                                "namespace": "postgres://db.acme:5432",
                                "name": "shop.public.orders",
                                "field": "status",
                                "transformations": [{"type": "INDIRECT", "subtype": "FILTER"}],
                            }
                        ],
                    ),
                    "dataSource": facet("DatasourceDatasetFacet", "1-0-1", name="lake", uri="s3://lake"),
                    "lifecycleStateChange": facet(
                        "LifecycleStateChangeDatasetFacet", "1-0-1", lifecycleStateChange="OVERWRITE"
                    ),
                    "storage": facet(
                        "StorageDatasetFacet", "1-0-1", storageLayer="iceberg", fileFormat="parquet"
                    ),
                    "datasetType": facet("DatasetTypeDatasetFacet", "1-0-1", datasetType="TABLE"),
                },
                "outputFacets": {
                    "outputStatistics": facet(
                        "OutputStatisticsOutputDatasetFacet", "1-0-2", rowCount=31, size=4096, fileCount=1
                    )
                },
            }
        ],
    }


def job_event() -> dict[str, Any]:
    return {
        "eventTime": "2024-05-01T08:00:00Z",
        "producer": "https://github.com/acme/catalog-sync/v2",
        "schemaURL": f"{CORE}#/$defs/JobEvent",
        "job": {
            "namespace": "dbt",
            "name": "analytics.orders",
            "facets": {
                "sql": facet("SQLJobFacet", "1-0-0", query="select * from {{ ref('stg_orders') }}"),
                "jobType": facet(
                    "JobTypeJobFacet", "2-0-2", processingType="BATCH", integration="DBT", jobType="MODEL"
                ),
                "ownership": facet("OwnershipJobFacet", "1-0-1", owners=[{"name": "analytics"}]),
            },
        },
        "inputs": [
            {
                "namespace": "snowflake://acme",
                "name": "RAW.ORDERS",
                "facets": {"schema": facet("SchemaDatasetFacet", "1-2-0", fields=[{"name": "ID"}])},
            }
        ],
        "outputs": [{"namespace": "snowflake://acme", "name": "ANALYTICS.ORDERS"}],
    }


def dataset_event() -> dict[str, Any]:
    return {
        "eventTime": "2024-05-01T08:00:00.5-05:00",
        "producer": "https://github.com/acme/catalog-sync/v2",
        "schemaURL": f"{CORE}#/$defs/DatasetEvent",
        "dataset": {
            "namespace": "snowflake://acme",
            "name": "ANALYTICS.ORDERS",
            "facets": {
                "schema": facet(
                    "SchemaDatasetFacet",
                    "1-2-0",
                    fields=[{"name": "ID", "type": "NUMBER", "ordinal_position": 1}],
                ),
                "symlinks": facet(
                    "SymlinksDatasetFacet",
                    "1-0-1",
                    identifiers=[{"namespace": "dbt://acme", "name": "model.orders", "type": "MODEL"}],
                ),
                "ownership": facet("OwnershipDatasetFacet", "1-0-1", owners=[{"name": "analytics"}]),
                "documentation": facet(
                    "DocumentationDatasetFacet", "1-1-0", description="Orders.", _deleted=False
                ),
                "lifecycleStateChange": facet(
                    "LifecycleStateChangeDatasetFacet",
                    "1-0-1",
                    lifecycleStateChange="RENAME",
                    previousIdentifier={"namespace": "snowflake://acme", "name": "ANALYTICS.ORDERS_OLD"},
                ),
            },
        },
    }


def legacy_run_event() -> dict[str, Any]:
    """A 1-0-5 event: ``#/definitions/`` schemaURL, 1-0-0 facet URLs."""
    return {
        "eventType": "START",
        "eventTime": "2023-07-17T10:54:22.355067Z",
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/0.30.0/integration/airflow",
        "schemaURL": "https://openlineage.io/spec/1-0-5/OpenLineage.json#/definitions/RunEvent",
        "run": {
            "runId": "f69a6e9b-9bac-3c9a-9cf6-eacb70ecc9a9",
            "facets": {
                "parent": facet(
                    "ParentRunFacet", "1-0-0", run={"runId": PARENT_ID}, job={"namespace": "a", "name": "dag"}
                ),
                "nominalTime": facet("NominalTimeRunFacet", "1-0-0", nominalStartTime="2023-07-17T00:00:00Z"),
            },
        },
        "job": {
            "namespace": "food_delivery",
            "name": "dbt.orders",
            "facets": {"sql": facet("SQLJobFacet", "1-0-0", query="SELECT 1")},
        },
        "inputs": [
            {
                "namespace": "postgres://food:5432",
                "name": "public.orders",
                "facets": {
                    "schema": facet("SchemaDatasetFacet", "1-0-0", fields=[{"name": "id", "type": "int"}]),
                    "dataSource": facet(
                        "DatasourceDatasetFacet", "1-0-0", name="food", uri="postgres://food"
                    ),
                },
            }
        ],
        "outputs": [],
    }


def marquez_run_event() -> dict[str, Any]:
    """As Marquez' clients send them: no schemaURL, an eventTime without offset (D1, D2)."""
    return {
        "eventType": "RUNNING",
        "eventTime": "2024-05-01T10:00:00.123456",
        "producer": "https://github.com/MarquezProject/marquez/blob/main/clients/java",
        "run": {"runId": RUN_ID.upper(), "facets": {}},
        "job": {"namespace": "marquez", "name": "etl"},
    }


def spec_full_event() -> dict[str, Any]:
    if not HAVE_SPEC:
        return marquez_run_event()
    doc: dict[str, Any] = json.loads((SPEC_DIR / "tests" / "example_full_event.json").read_text("utf-8"))
    return doc


BASES: dict[str, Callable[[], dict[str, Any]]] = {
    "rich_run": rich_run_event,
    "job": job_event,
    "dataset": dataset_event,
    "legacy_1_0_5": legacy_run_event,
    "marquez": marquez_run_event,
    "spec_full": spec_full_event,
}


# ------------------------------------------------------------------------------------------------
# Comparing verdicts
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    accepted: bool
    paths: frozenset[str]  # error paths when rejected, untrusted facet paths when accepted
    messages: tuple[str, ...]
    run_ids: frozenset[str] = frozenset()  # paths of run ids warned as not UUIDs (D4)


RUN_ID_PATHS = ("run.runId", "run.facets.parent.run.runId", "run.facets.parent.root.run.runId")


def _run_id_warning(warning: str, doc: Any) -> str | None:
    """The path of a run id this warning reports as not a UUID (D4), else None."""
    path, _, reason = warning.partition(": ")
    if path not in RUN_ID_PATHS:
        return None
    node: Any = doc
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    assert reason == f"{node!r} is not a UUID", warning
    return path


def headwater(doc: Any) -> Outcome:
    try:
        event = validate_event(doc)
    except InvalidEvent as exc:
        return Outcome(False, frozenset(e.partition(": ")[0] for e in exc.errors), tuple(exc.errors))
    untrusted = frozenset(event.untrusted_facets)
    run_ids = {w: _run_id_warning(w, doc) for w in event.warnings}
    facet_warnings = [w for w, run_id in run_ids.items() if run_id is None]
    for path in untrusted:  # every untrusted facet is explained by a warning, and the other way round
        assert any(w.startswith(f"{path}: ") for w in facet_warnings), (path, event.warnings)
    for warning in facet_warnings:
        assert any(warning.startswith(f"{path}: ") for path in untrusted), (warning, untrusted)
    return Outcome(True, untrusted, event.warnings, frozenset(p for p in run_ids.values() if p))


def disagreement(doc: Any) -> str | None:
    """Why Headwater's verdict on ``doc`` differs from the oracle's, or None."""
    before = json.dumps(doc, sort_keys=True)
    want = oracle.expected(doc)
    try:
        got = headwater(doc)
    except AssertionError as exc:
        return f"warnings and untrusted facets disagree: {exc}"
    except Exception as exc:  # a crash is a disagreement, whatever the oracle says
        return f"validate_event raised {exc!r}"
    if json.dumps(doc, sort_keys=True) != before:
        return "validate_event modified the event"
    if got.accepted != want.accepted:
        said = got.messages if not got.accepted else got.messages or "accepted"
        return f"headwater {'accepts' if got.accepted else 'rejects'} ({said}); jsonschema: {want.notes}"
    if got.accepted:
        if got.paths != want.untrusted:
            return f"untrusted {sorted(got.paths)} != expected {sorted(want.untrusted)} ({got.messages})"
        if got.run_ids != want.lenient_run_ids:
            return f"run ids warned {sorted(got.run_ids)} != expected {sorted(want.lenient_run_ids)}"
        return None
    allowed = set().union(*want.faults)
    blamed = sorted(p for p in got.paths if p not in allowed)
    if blamed:
        return f"errors name innocent paths {blamed}: {got.messages}; jsonschema: {want.notes}"
    missed = [sorted(group) for group in want.faults if not group & got.paths]
    if missed:
        return f"no error names {missed}: {got.messages}; jsonschema: {want.notes}"
    return None


@needs_spec
@pytest.mark.parametrize("name", list(BASES))
def test_base_events_are_valid_and_clean(name: str) -> None:
    doc = BASES[name]()
    assert oracle.expected(doc) == oracle.Expected(True), oracle.expected(doc)
    assert headwater(doc) == Outcome(True, frozenset(), ())
    assert disagreement(doc) is None


# ------------------------------------------------------------------------------------------------
# Conformance: the spec's examples
# ------------------------------------------------------------------------------------------------


@needs_spec
def test_example_full_event_is_accepted() -> None:
    doc = json.loads((SPEC_DIR / "tests" / "example_full_event.json").read_text("utf-8"))
    event = validate_event(doc)
    assert event.kind == "run"  # its schemaURL names RunEvent; it also carries a dataset
    assert (event.job_namespace, event.job_name) == ("food_delivery", "dbt")
    assert event.warnings == () and event.untrusted_facets == ()
    assert oracle.validator(CORE).is_valid(doc)  # the official verdict, oneOf and all
    assert disagreement(doc) is None


# Where a facet of each kind goes: (host event, path of its container).
PLACES: dict[str, list[tuple[str, str]]] = {
    "run": [("run", "run.facets")],
    "job": [("run", "job.facets")],
    "dataset": [("run", "outputs[0].facets"), ("dataset", "dataset.facets")],
    "input": [("run", "inputs[0].inputFacets")],
    "output": [("run", "outputs[0].outputFacets")],
}


def host_event(host: str) -> dict[str, Any]:
    if host == "dataset":
        return {
            "eventTime": "2024-05-01T10:00:00Z",
            "producer": PRODUCER,
            "schemaURL": f"{CORE}#/$defs/DatasetEvent",
            "dataset": {"namespace": "s3://lake", "name": "orders", "facets": {}},
        }
    return {
        "eventType": "COMPLETE",
        "eventTime": "2024-05-01T10:00:00Z",
        "producer": PRODUCER,
        "schemaURL": f"{CORE}#/$defs/RunEvent",
        "run": {"runId": RUN_ID, "facets": {}},
        "job": {"namespace": "ns", "name": "job", "facets": {}},
        "inputs": [{"namespace": "pg", "name": "in", "facets": {}, "inputFacets": {}}],
        "outputs": [{"namespace": "s3", "name": "out", "facets": {}, "outputFacets": {}}],
    }


def container_at(doc: dict[str, Any], path: str) -> dict[str, Any]:
    node: Any = doc
    for part in path.replace("[", ".").replace("]", "").split("."):
        node = node[int(part)] if part.isdigit() else node[part]
    assert isinstance(node, dict)
    return node


def example_kinds(folder: str, value: Any) -> set[str]:
    """Facet kinds from the allOf $ref of the schema the example's _schemaURL names, and of the
    spec's source schema the example's folder is named after."""
    docs = oracle.documents()
    kinds: set[str] = set()
    ref = oracle.target_ref(value.get("_schemaURL") if isinstance(value, dict) else None)
    if ref is not None:
        kinds |= oracle.schema_facet_kinds({"$ref": ref}, "", docs)
    source = oracle.source_facet(folder)
    if source is not None:
        local = {**docs, source["$id"]: source}
        for prop in source.get("properties", {}).values():
            kinds |= oracle.schema_facet_kinds(prop, source["$id"], local)
    return kinds


def _example_params() -> list[Any]:
    if not HAVE_SPEC:
        return [pytest.param(None, None, None, marks=pytest.mark.skip(reason=NO_SPEC))]
    params = []
    for path in sorted((SPEC_DIR / "tests").glob("*/*.json")):
        container = json.loads(path.read_text("utf-8"))
        for name in container:
            for kind in sorted(example_kinds(path.parent.name, container[name])):
                for host, where in PLACES[kind]:
                    label = f"{path.parent.name}/{path.name}:{name}@{host}:{where}"
                    params.append(pytest.param(path, name, (kind, host, where), id=label))
    return params


@pytest.mark.parametrize(("path", "name", "place"), _example_params())
def test_facet_example_wrapped_in_an_event(path: Path, name: str, place: tuple[str, str, str]) -> None:
    kind, host, where = place
    value = json.loads(path.read_text("utf-8"))[name]
    doc = host_event(host)
    container_at(doc, where)[name] = value
    event = validate_event(doc)  # facets never cost an event
    broken = oracle.facet_errors(value, kind)
    assert event.untrusted_facets == ((oracle.join(where, name),) if broken else ()), broken
    assert bool(event.warnings) == bool(broken)
    assert disagreement(doc) is None


@needs_spec
def test_every_facet_example_has_a_place_and_some_break_their_schema() -> None:
    verdicts: list[bool] = []
    for path in sorted((SPEC_DIR / "tests").glob("*/*.json")):
        for value in json.loads(path.read_text("utf-8")).values():
            kinds = example_kinds(path.parent.name, value)
            assert kinds, f"{path}: no facet kind found in its schemas"
            verdicts.extend(not oracle.facet_errors(value, kind) for kind in kinds)
    assert len(verdicts) >= 45
    assert 0 < verdicts.count(False) < len(verdicts) // 4  # the oracle neither accepts nor rejects all


# ------------------------------------------------------------------------------------------------
# Mutations
# ------------------------------------------------------------------------------------------------

CONTAINER_KEYS = frozenset({"facets", "inputFacets", "outputFacets"})
TIMES = [
    "2024-05-01T10:00:00Z",
    "2024-05-01t10:00:00.1234567891z",
    "2024-05-01T10:00:00-00:00",
    "2024-05-01T10:00:00+23:59",
    "2024-02-29T23:59:59.999Z",
    "1582-10-15T00:00:00Z",
    "2024-05-01T10:00:00",  # D2
    "2024-05-01T10:00:00.5",
    " 2024-05-01T10:00:00Z ",  # F1
    "2024-05-01T10:00:00Z\n",
    "2024-05-01 10:00:00Z",
    "2024-05-01T10:00:00,25Z",
    "2024-05-01T10:00:00+05",
    "2024-05-01T10:00:00+0530",
    "2016-12-31T23:59:60Z",
    "1582-10-14T23:59:59.9999999Z",  # F2
    "1000-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "2024-05-01T10:00:00+05:",  # B3
    "\uff12\uff10\uff12\uff14-05-01T10:00:00Z",  # B2
    "2024-02-30T10:00:00Z",
    "2023-02-29T10:00:00Z",
    "2024-05-01T24:00:00Z",
    "2024-05-01T10:60:00Z",
    "2024-05-01T10:00:00+24:00",
    "2024-05-01T10:00:00.Z",
    "2024-05-01T10:00Z",
    "2024-05-01",
    "20240501T100000Z",
    "0000-01-01T00:00:00Z",
    "yesterday",
    "",
]
UUIDS = [
    RUN_ID,
    RUN_ID.upper(),
    RUN_ID + "-",  # D4: jsonschema's uuid takes it, it is not the canonical form
    RUN_ID + "}",
    RUN_ID[:-1] + "\u0663",
    RUN_ID.replace("-", ""),
    "{" + RUN_ID + "}",
    "urn:uuid:" + RUN_ID,
    RUN_ID[:-1],
    RUN_ID[:-1] + "g",
    " " + RUN_ID,
    "run_id",  # D4
    "a/b c%",
    "",
]
EVENT_TYPES = ["START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER", "start", "DONE", "", None, 1, True]
SCHEMA_URLS = [
    f"{CORE}#/$defs/RunEvent",
    f"{CORE}#/$defs/JobEvent",
    f"{CORE}#/$defs/DatasetEvent",
    "https://openlineage.io/spec/1-0-5/OpenLineage.json#/definitions/RunEvent",
    "https://openlineage.io/spec/1-0-5/OpenLineage.json#/definitions/JobEvent",
    "https://openlineage.io/spec/1-0-5/OpenLineage.json#/definitions/DatasetEvent",
    "https://openlineage.io/spec/2-0-2/OpenLineage.json",
    f"{CORE}#/$defs/BaseEvent",
    f"{CORE}#",
    "",
    5,
    None,
]


def nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    out = [(path, value)]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(nodes(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(nodes(item, (*path, index)))
    return out


def in_facet(path: tuple[Any, ...]) -> bool:
    """Is ``path`` a facet value or inside one (rather than the core or a facets container)?"""
    return any(part in CONTAINER_KEYS for part in path[:-1])


def facet_paths(doc: Any) -> list[tuple[Any, ...]]:
    return [p for p, _ in nodes(doc) if len(p) >= 2 and p[-2] in CONTAINER_KEYS]


def put(doc: Any, path: tuple[Any, ...], value: Any = None, *, delete: bool = False) -> Any:
    if not path:
        return value
    node = doc
    for part in path[:-1]:
        node = node[part]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


def replacements(value: Any) -> list[Any]:
    """Retyped and corrupted stand-ins for ``value``."""
    if isinstance(value, bool):
        return [not value, "true", 1, None]
    if isinstance(value, int):
        return [0, -1, 1.0, 2.5, "1", True, None]
    if isinstance(value, float):
        return [1, "1.5", False]
    if isinstance(value, str):
        return [1, None, ["x"], {}, "", "OTHER", "x" * 3, *UUIDS[2:5], *TIMES[10:13], value.upper()]
    if isinstance(value, list):
        return [{}, "x", None, [], [1], [None], [{}], [[]], [*value, *value[:1]], [*value, {"zz": 1}]]
    if isinstance(value, dict):
        return [[], "x", 0, None, {}, {**value, "zz unknown": 1}, {**value, "type": "OTHER"}]
    return ["x", 1, {}]


def facet_pool() -> list[Any]:
    pool: list[Any] = []
    for make in BASES.values():
        pool.extend(v for p, v in nodes(make()) if len(p) >= 2 and p[-2] in CONTAINER_KEYS)
    return pool


FACET_POOL = facet_pool()
FACET_VERSIONS = sorted(
    {str(f["_schemaURL"]) for f in FACET_POOL if str(f["_schemaURL"]).startswith(FACETS)}
    | {f"{FACETS}{v}/SchemaDatasetFacet.json" for v in ("1-0-0", "1-1-0", "1-1-1", "1-2-0")}
    | {f"{FACETS}{v}/ParentRunFacet.json" for v in ("1-0-0", "1-0-1", "1-1-0", "1-2-0")}
    | {f"{FACETS}{v}/JobTypeJobFacet.json" for v in ("2-0-2", "2-0-3", "2-0-4")}
    | {f"{FACETS}1-0-0/BaseSubsetDatasetFacet.json", f"{FACETS}9-9-9/SQLJobFacet.json"}
)


def mutate_core(doc: Any, rng: random.Random) -> tuple[Any, str]:
    """A targeted change of a core field."""
    op = rng.randrange(8)
    if not isinstance(doc, dict):
        return {"eventTime": TIMES[0], "producer": PRODUCER, "job": doc}, "wrapped"
    if op == 0:
        doc["eventTime"] = rng.choice(TIMES)
        return doc, f"eventTime={doc['eventTime']!r}"
    if op == 1 and isinstance(doc.get("run"), dict):
        doc["run"]["runId"] = rng.choice(UUIDS)
        return doc, f"runId={doc['run']['runId']!r}"
    if op == 2:
        doc["eventType"] = rng.choice(EVENT_TYPES)
        return doc, f"eventType={doc['eventType']!r}"
    if op == 3:
        url = rng.choice([*SCHEMA_URLS, "<delete>"])
        if url == "<delete>":
            doc.pop("schemaURL", None)
        else:
            doc["schemaURL"] = url
        return doc, f"schemaURL={url!r}"
    key = rng.choice(["run", "job", "dataset", "inputs", "outputs", "eventTime", "producer"])
    if op in (4, 5):  # graft a part of another base event
        donor = BASES[rng.choice(sorted(BASES))]()
        if key in donor:
            doc[key] = donor[key]
            return doc, f"graft {key}"
        doc[key] = rng.choice([{"namespace": "n", "name": "x"}, [], "x"])
        return doc, f"add {key}={doc[key]!r}"
    doc.pop(key, None)
    return doc, f"drop {key}"


def mutate_facet(doc: Any, rng: random.Random) -> tuple[Any, str]:
    """A targeted change of one facet (or of a facets container)."""
    paths = facet_paths(doc)
    if not paths:
        containers = [p for p, v in nodes(doc) if p and p[-1] in CONTAINER_KEYS and isinstance(v, dict)]
        if not containers:
            return doc, "no facet"
        where = rng.choice(containers)
        name = rng.choice(["f", "my facet", "spark.x", "schema"])
        return put(doc, (*where, name), copy.deepcopy(rng.choice(FACET_POOL))), f"add facet {where}/{name}"
    op = rng.randrange(8)
    if op == 7:  # the container itself
        containers = sorted({p[:-1] for p in paths}, key=str)
        where = rng.choice(containers)
        new = rng.choice([[], "x", None, 0, [copy.deepcopy(rng.choice(FACET_POOL))]])
        return put(doc, where, new), f"{where}={new!r}"
    path = rng.choice(paths)
    value = copy.deepcopy(rng.choice(FACET_POOL))
    current: Any = doc
    for part in path:
        current = current[part]
    if op == 0:
        return put(doc, path, rng.choice([[], "x", None, 1, True, [current]])), f"{path} not an object"
    if op == 1:
        return put(doc, path, value), f"{path} replaced by another facet"
    if not isinstance(current, dict):
        return put(doc, path, value), f"{path} replaced by another facet"
    if op == 2:
        key = rng.choice(["_producer", "_schemaURL"])
        current.pop(key, None)
        return doc, f"{path} drop {key}"
    if op == 3:
        current[rng.choice(["_producer", "_schemaURL"])] = rng.choice([None, 1, [], {"u": 1}])
        return doc, f"{path} retype base field"
    if op == 4:
        current["_schemaURL"] = rng.choice(FACET_VERSIONS)
        return doc, f"{path} _schemaURL={current['_schemaURL']}"
    if op == 5:
        current["_deleted"] = rng.choice([True, False, "yes", 1, None])
        return doc, f"{path} _deleted={current['_deleted']!r}"
    return put(doc, path, {**current, "zz": {"nested": [1]}}), f"{path} extra property"


def mutate_node(doc: Any, rng: random.Random) -> tuple[Any, str]:
    """Drop, retype or corrupt any node: of the core half the time, of a facet otherwise."""
    all_nodes = nodes(doc)
    inside = [n for n in all_nodes if in_facet(n[0])]
    outside = [n for n in all_nodes if not in_facet(n[0])]
    path, value = rng.choice(inside if inside and rng.random() < 0.5 else outside)
    if path and rng.random() < 0.25:
        return put(doc, path, delete=True), f"drop {path}"
    new = rng.choice(replacements(value))
    return put(doc, path, copy.deepcopy(new)), f"{path}={new!r}"


def mutant(rng: random.Random) -> tuple[str, Any]:
    """One mutated event: a base event with 1-3 random mutations."""
    name = rng.choice(sorted(BASES))
    doc: Any = BASES[name]()
    labels = [name]
    count = rng.choices([1, 2, 3], weights=[65, 25, 10])[0]
    for _ in range(count):
        r = rng.random()
        operator = mutate_core if r < 0.3 else mutate_facet if r < 0.55 else mutate_node
        doc, label = operator(doc, rng)
        labels.append(label)
    return " | ".join(labels), doc


MUTANTS = 1500


@pytest.fixture(scope="module")
def mutants() -> list[tuple[str, Any]]:
    if not HAVE_SPEC:
        pytest.skip(NO_SPEC)
    rng = random.Random(20240501)
    return [mutant(rng) for _ in range(MUTANTS)]


def test_differential_against_the_official_schemas(mutants: list[tuple[str, Any]]) -> None:
    mismatches = []
    accepted = warned = 0
    for label, doc in mutants:
        want = oracle.expected(doc)
        accepted += want.accepted
        warned += bool(want.untrusted)
        why = disagreement(doc)
        if why is not None:
            mismatches.append(f"{label}: {why}")
    assert not mismatches, f"{len(mismatches)} of {len(mutants)} disagree:\n" + "\n".join(mismatches[:25])
    assert len(mutants) >= 1000
    # Plenty on every side: rejected, accepted clean, accepted with warnings.
    assert len(mutants) // 5 < accepted < len(mutants) * 4 // 5
    assert warned > len(mutants) // 10 and accepted - warned > len(mutants) // 10


@needs_spec
@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_mutations_with_hypothesis(rng: random.Random) -> None:
    label, doc = mutant(rng)
    assert disagreement(doc) is None, label


@needs_spec
@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.one_of(
        st.from_regex(
            r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}([.,][0-9]{1,9})?"
            r"([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)?",
            fullmatch=True,
        ),
        st.datetimes(timezones=st.timezones()).map(lambda d: d.isoformat()),
        st.datetimes().map(lambda d: d.isoformat(sep=" ") + "Z"),
    )
)
def test_event_times_with_hypothesis(value: str) -> None:
    doc = marquez_run_event()
    doc["eventTime"] = value
    assert disagreement(doc) is None, value


# ------------------------------------------------------------------------------------------------
# The differences, one by one: each is real (the official core schema decides otherwise)
# ------------------------------------------------------------------------------------------------


def _with(doc: dict[str, Any], **changes: Any) -> dict[str, Any]:
    for key, value in changes.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    return doc


def _job_event_with_dataset() -> dict[str, Any]:
    return _with(job_event(), dataset={"namespace": "n", "name": "d"})


def _job_event_with_run() -> dict[str, Any]:
    return _with(job_event(), run={"runId": RUN_ID})


DIFFERENCES: dict[str, tuple[Callable[[], dict[str, Any]], bool]] = {
    # name: (event, Headwater accepts it?) -- the core schema decides the other way.
    "D1 no schemaURL": (lambda: _with(rich_run_event(), schemaURL=None), True),
    "D2 no offset": (lambda: _with(rich_run_event(), eventTime="2024-05-01T10:00:00"), True),
    "D3 JobEvent carrying a dataset": (_job_event_with_dataset, True),
    "D3 JobEvent schemaURL, carrying a run": (_job_event_with_run, False),
    "F1 whitespace": (lambda: _with(rich_run_event(), eventTime=" 2024-05-01T10:00:00Z"), True),
    "F1 space separator": (lambda: _with(rich_run_event(), eventTime="2024-05-01 10:00:00Z"), True),
    "F1 decimal comma": (lambda: _with(rich_run_event(), eventTime="2024-05-01T10:00:00,5Z"), True),
    "F1 +hh offset": (lambda: _with(rich_run_event(), eventTime="2024-05-01T10:00:00+05"), True),
    "F1 +hhmm offset": (lambda: _with(rich_run_event(), eventTime="2024-05-01T10:00:00+0530"), True),
    "F1 leap second": (lambda: _with(rich_run_event(), eventTime="2016-12-31T23:59:60Z"), True),
    "F2 before 1582-10-15": (lambda: _with(rich_run_event(), eventTime="1000-01-01T00:00:00Z"), False),
    "F2 after 5236": (lambda: _with(rich_run_event(), eventTime="9999-01-01T00:00:00Z"), False),
    "D4 runId that is not a UUID": (lambda: _with(rich_run_event(), run={"runId": "run_id"}), True),
    "D4 runId of a scheduler": (lambda: _with(rich_run_event(), run={"runId": "dag_run_2024-11-26"}), True),
    "D4 runId with a slash, a space and a percent sign": (
        lambda: _with(rich_run_event(), run={"runId": "a/b c%"}),
        True,
    ),
}


@needs_spec
@pytest.mark.parametrize("name", list(DIFFERENCES))
def test_differences_from_the_core_schema(name: str) -> None:
    make, headwater_accepts = DIFFERENCES[name]
    assert oracle.validator(CORE).is_valid(make()) is not headwater_accepts  # a real difference
    assert headwater(make()).accepted is headwater_accepts
    assert oracle.expected(make()).accepted is headwater_accepts  # ... and one the oracle applies
    assert disagreement(make()) is None


@needs_spec
@pytest.mark.parametrize("run_id", [RUN_ID + "-", "{" + RUN_ID + "}", "run_id"])
def test_d4_a_run_id_not_in_canonical_form_is_kept_as_sent_with_a_warning(run_id: str) -> None:
    doc = _with(rich_run_event(), run={"runId": run_id})
    event = validate_event(doc)
    assert event.run_id == run_id and event.warnings == (f"run.runId: {run_id!r} is not a UUID",)
    assert headwater(doc).run_ids == oracle.expected(doc).lenient_run_ids == {"run.runId"}
    assert disagreement(doc) is None


@needs_spec
def test_d4_parent_run_ids_that_are_not_uuids_break_the_facet_schema_but_are_kept() -> None:
    doc = rich_run_event()
    parent = doc["run"]["facets"]["parent"]
    parent["run"]["runId"], parent["root"]["run"]["runId"] = "dag_run_2024-11-26", "a/b c%"
    assert oracle.facet_errors(parent, "run")  # the published ParentRunFacet says format: uuid
    event = validate_event(doc)
    assert (event.parent_run_id, event.root_run_id) == ("dag_run_2024-11-26", "a/b c%")
    assert event.untrusted_facets == ()
    assert headwater(doc).run_ids == {"run.facets.parent.run.runId", "run.facets.parent.root.run.runId"}
    assert disagreement(doc) is None
    del parent["job"]  # a fault of its own: the facet is untrusted, its ids still warned
    assert headwater(doc).paths == {"run.facets.parent"}
    assert disagreement(doc) is None


@pytest.mark.parametrize("run_id", ["", 7, None, [RUN_ID]])
def test_a_run_id_that_is_no_string_or_empty_is_still_rejected(run_id: Any) -> None:
    with pytest.raises(InvalidEvent) as caught:
        validate_event(_with(rich_run_event(), run={"runId": run_id}))
    assert [e.partition(": ")[0] for e in caught.value.errors] == ["run.runId"]


# ------------------------------------------------------------------------------------------------
# Bugs found (these fail until src/ is fixed)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("event_type", [[], {}, ["START"], {"type": "START"}])
def test_bug_event_type_of_an_unhashable_type_is_rejected(event_type: Any) -> None:
    # B1: validate.py `raw_type in EVENT_TYPES` raises TypeError: unhashable type.
    doc = _with(rich_run_event(), eventType=event_type)
    with pytest.raises(InvalidEvent) as caught:
        validate_event(doc)
    assert [e.partition(": ")[0] for e in caught.value.errors] == ["eventType"]


@pytest.mark.parametrize(
    "value",
    [
        "\uff12\uff10\uff12\uff14-05-01T10:00:00Z",  # B2: fullwidth digits
        "2024-05-01T10:00:0\u0660Z",  # B2: an Arabic-Indic digit
        "2024-05-01T10:00:00+05:",  # B3: an offset ending in a bare colon
    ],
)
def test_bug_malformed_event_times_are_rejected(value: str) -> None:
    doc = _with(rich_run_event(), eventTime=value)
    with pytest.raises(InvalidEvent) as caught:
        validate_event(doc)
    assert [e.partition(": ")[0] for e in caught.value.errors] == ["eventTime"]
