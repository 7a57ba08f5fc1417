"""Late facet assertions through the pipeline: the model keeps a facet's changes, and a late event
whose value differs from the one in force at its time brings back, read from the events, the
assertion after it that the model had dropped; incremental passes equal a rebuild."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pyspark.sql import SparkSession

from headwater.pipeline import runner
from headwater.pipeline.runner import Pipeline
from headwater.store.base import EventStore
from headwater.store.model.compare import model_rows
from tests.factories import PRODUCER, facet, run_event
from tests.pipeline.test_pipeline import ingest, query

_ORDERS = ("s3://lake", "orders_daily")


def _time(minute: float) -> str:
    seconds = round(minute * 60)
    return f"2024-05-01T10:{seconds // 60:02d}:{seconds % 60:02d}.000Z"


def _schema(*columns: str) -> dict[str, Any]:
    return facet("SchemaDatasetFacet", "1-1-1", fields=[{"name": c, "type": "STRING"} for c in columns])


def _load(minute: float, columns: tuple[str, ...], sql: str) -> list[dict[str, Any]]:
    """A run of the job that writes orders_daily: its START and COMPLETE."""
    run = f"00000000-0000-4000-8000-{round(minute * 60):012d}"
    output = {"namespace": _ORDERS[0], "name": _ORDERS[1], "facets": {"schema": _schema(*columns)}}
    events = []
    for event_type in ("START", "COMPLETE"):
        event = run_event(run, event_type=event_type, event_time=_time(minute), outputs=[output])
        event["job"]["facets"] = {"sql": facet("SQLJobFacet", query=sql)}
        events.append(event)
    return events


def _dataset_event(minute: float, columns: tuple[str, ...]) -> dict[str, Any]:
    return {
        "eventTime": _time(minute),
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
        "dataset": {"namespace": _ORDERS[0], "name": _ORDERS[1], "facets": {"schema": _schema(*columns)}},
    }


def _kept(store: EventStore, table: str, node: str, name: str) -> list[str]:
    rows = query(store, f"SELECT valid_from FROM {table} WHERE node_id = '{node}' AND name = '{name}'")
    return sorted(row[0][11:19] for row in rows)  # HH:MM:SS


@pytest.mark.parametrize("changes_only", [False, True], ids=["every assertion staged", "changes staged"])
def test_a_late_value_brings_back_the_dropped_assertion_after_it_and_equals_a_rebuild(
    spark: SparkSession,
    store: EventStore,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    changes_only: bool,
) -> None:
    # changes staged: every batch stages as a large one does, without the assertions that repeat
    # one later than every stored one (pipeline.frames.changes_to_stage)
    monkeypatch.setattr(runner, "STAGE_CHANGES_FROM", 0 if changes_only else 10**9)
    caplog.set_level(logging.INFO, logger="headwater.pipeline.runner")
    one, two = ("id",), ("id", "total")
    on_time = [e for m in range(6) for e in _load(m, one, "SELECT 1")]
    late = [*_load(2.5, two, "SELECT 2"), _dataset_event(3.5, two)]  # each between two runs
    later = [e for m in (6, 7) for e in _load(m, one, "SELECT 1")]
    pipeline = Pipeline(spark, store, dogfood=False, partitions=2, read_here_rows=0)
    for part in (on_time, late, later):
        ingest(store, part)
        pipeline.run_once()
    assert "late facet assertions on" in caplog.text

    dataset, job = f"dataset:{_ORDERS[0]}:{_ORDERS[1]}", "job:airflow:etl.load_orders"
    # first, the late value, the one after it read back (twice), the last: the schema in force
    # at any time is the one all 20 assertions give
    expected = ["10:00:00", "10:02:30", "10:03:00", "10:03:30", "10:04:00", "10:07:00"]
    assert _kept(store, "dataset_facets", dataset, "schema") == expected
    assert _kept(store, "job_facets", job, "sql") == ["10:00:00", "10:02:30", "10:03:00", "10:07:00"]
    incremental = model_rows(store)
    Pipeline(spark, store, dogfood=False, partitions=2).rebuild()
    assert model_rows(store) == incremental
