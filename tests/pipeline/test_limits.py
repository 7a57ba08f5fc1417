"""Events stored before the length limits of `headwater.events.limits` (or facets of a schema
Headwater does not know, which ingest cannot judge) may name keys longer than PostgreSQL's indexes
take: one such event failed every pass. The pipeline leaves each such key out and builds the rest,
on both backends."""

from __future__ import annotations

import random
import string
import sys
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from pyspark.sql import SparkSession

from headwater.events.limits import MAX_NODE_ID_BYTES
from headwater.events.validate import validate_event
from headwater.pipeline.runner import Pipeline
from headwater.store import EventStore
from headwater.store.model.compare import model_rows
from tests.factories import facet, run_event

_RNG = random.Random(5)


def _long(size: int) -> str:
    """Random letters: a repeated one compresses, and PostgreSQL's index then takes it."""
    return "".join(_RNG.choice(string.ascii_letters) for _ in range(size))


# in facets: each over its limit, and over the 2,704 bytes a PostgreSQL index row takes
LONG_NAME, LONG_FIELD, LONG_KIND = _long(3_000), _long(3_000), _long(3_000)


@pytest.fixture
def limits_off(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Ingest as before the limits: no length is too long, no facet identity over one."""
    for name in ("headwater.events.validate", "headwater.events.lean", "headwater.events.facets"):
        module = sys.modules[name]
        monkeypatch.setattr(module, "too_long", lambda _value, _limit: None)
    monkeypatch.setattr(sys.modules["headwater.events.facets"], "identity_reasons", lambda *_: [])
    yield


def _stored(store: EventStore, docs: list[dict[str, Any]]) -> None:
    events = [validate_event(doc, orjson.dumps(doc)) for doc in docs]
    assert all(not e.untrusted_facets for e in events)  # as an earlier release took them
    store.append(events, "2024-05-01T10:00:30.0000000Z")


def _good_event() -> dict[str, Any]:
    """One event whose own identities fit, each of whose facets names one key over a limit
    beside one that fits."""
    source_input = {
        "namespace": "db",
        "name": "orders",
        "facets": {
            "dataSource": {
                **facet("DatasourceDatasetFacet", "1-0-1", uri="postgres://h/db"),
                "name": LONG_NAME,
            },
            "symlinks": facet(
                "SymlinksDatasetFacet",
                "1-0-1",
                identifiers=[
                    {"namespace": "hive", "name": "db.orders", "type": "TABLE"},
                    {"namespace": "hive", "name": LONG_NAME, "type": "TABLE"},
                ],
            ),
            "schema": facet(
                "SchemaDatasetFacet",
                "1-1-1",
                fields=[{"name": "id", "type": "INT"}, {"name": LONG_FIELD, "type": "INT"}],
            ),
            LONG_NAME: facet("DocumentationDatasetFacet", description="d"),
        },
        "inputFacets": {LONG_NAME: facet("DocumentationDatasetFacet", description="d")},
    }
    lineage = facet(
        "ColumnLineageDatasetFacet",
        "1-2-0",
        fields={
            "id": {
                "inputFields": [
                    {"namespace": "db", "name": "orders", "field": "id"},
                    {"namespace": "db", "name": LONG_NAME, "field": "id"},
                    {"namespace": "db", "name": "orders", "field": LONG_NAME},
                    {
                        "namespace": "db",
                        "name": "orders",
                        "field": "id",
                        "transformations": [{"type": "DIRECT", "subtype": LONG_KIND}],
                    },
                ]
            },
            LONG_NAME: {"inputFields": [{"namespace": "db", "name": "orders", "field": "id"}]},
        },
    )
    doc = run_event(
        event_type="COMPLETE",
        job="etl.good",
        inputs=[source_input],
        outputs=[{"namespace": "s3://lake", "name": "daily", "facets": {"columnLineage": lineage}}],
        run_facets={LONG_NAME: facet("ErrorMessageRunFacet", message="m", programmingLanguage="py")},
    )
    doc["job"]["facets"][LONG_NAME] = facet("DocumentationJobFacet", description="d")
    return doc


def test_keys_over_the_limits_are_left_out_and_the_rest_is_built(
    spark: SparkSession, store: EventStore, limits_off: None
) -> None:
    # an event's own identities, over their limits but within the event store's indexes; two of
    # them and the edge's type key one row of lineage_edges: beyond PostgreSQL's index
    over_own = [
        run_event(
            job=_long(1_000),
            inputs=[{"namespace": "db", "name": _long(1_000)}],
            outputs=[{"namespace": "db", "name": _long(1_000)}],
        ),
        run_event(namespace=_long(400)),
        run_event(outputs=[{"namespace": _long(400), "name": "x"}]),
        run_event(run_id=_long(400)),
    ]
    _stored(store, [_good_event(), *over_own])
    Pipeline(spark, store, dogfood=False).run_once()  # on PostgreSQL, this failed
    model = model_rows(store)

    assert [row[0] for row in model["jobs"]] == ["job:airflow:etl.good"]
    assert sorted(row[0] for row in model["datasets"]) == ["dataset:db:orders", "dataset:s3://lake:daily"]
    assert [row[0] for row in model["sources"]] == ["db"]  # the namespace, as for a nameless source
    assert [row[:2] for row in model["dataset_symlinks"]] == [("dataset:db:orders", "dataset:hive:db.orders")]
    assert [row[1] for row in model["schema_fields"]] == ["id"]
    lineage = {(row[1], row[2], row[3], row[5]) for row in model["column_lineage"]}
    assert lineage == {("id", "dataset:db:orders", "id", "")}
    for table in ("dataset_facets", "job_facets", "run_facets", "run_io_facets"):
        assert LONG_NAME not in str(model[table]), table
    for table, rows in model.items():
        if table == "facet_values":  # the values as sent: long strings in them key nothing
            continue
        for row in rows:
            long = [v for v in row if isinstance(v, str) and len(v.encode()) > MAX_NODE_ID_BYTES]
            assert not long, (table, row)
