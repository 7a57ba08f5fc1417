"""Retention on both backends: the events past the limit go (whole runs, generic events with their
browse rows), and the model left is the one `pipeline rebuild` makes of the remaining events."""

from __future__ import annotations

import uuid
from typing import Any

import orjson
from pyspark.sql import SparkSession

from headwater.demo.lineage import MIN_JOBS, DemoShape, demo_events
from headwater.events.generic import validate_generic_event
from headwater.pipeline.retention import apply_retention, retain_daily
from headwater.pipeline.runner import Pipeline
from headwater.store.base import EventStore
from headwater.store.generic import generic_store
from headwater.store.model import last_retention
from headwater.store.model.compare import model_rows
from tests.pipeline import fastscore as fs
from tests.pipeline.test_pipeline import ingest, query
from tests.test_cli_retention import run_event

DAY_TWO = "2025-03-04T00:00:00.0000000Z"  # the demo's second scheduled day starts
# the generic history received around it: five events before, four after
RECEIVED = [f"2025-03-03T23:5{m}:00.0000000Z" for m in range(5)] + [
    f"2025-03-04T00:0{m}:00.0000000Z" for m in range(1, 5)
]


def _events(store: EventStore) -> list[tuple[Any, ...]]:
    return query(store, "SELECT seq, run_id, event_time, kind FROM events ORDER BY seq")


def _browse_is_what_remains(store: EventStore) -> None:
    """The browse API knows only the remaining generic events: their elements, and each element's
    latest tags from them."""
    browse = generic_store(store)
    latest: dict[tuple[str, str], dict[str, str]] = {}
    for event in fs.HISTORY[5:]:
        for element in event["elements"]:
            tags = {
                k: v if isinstance(v, str) else orjson.dumps(v).decode()
                for k, v in element.get("tags", {}).items()
            }
            latest.setdefault((element["type"], element["description"]), {}).update(tags)
    elements = [e for e in browse.list_elements(element_type=None, limit=100, offset=0)]
    generic = [e for e in elements if e.type not in ("dataset", "job")]
    assert {(e.type, e.description) for e in generic} == {k for k in latest if k[0] not in ("dataset", "job")}
    for element in generic:
        tags = {t.key: t.value for t in browse.element_latest_tags(element.id)}
        assert tags == latest[(element.type, element.description)]
    seqs = [row[0] for row in _events(store) if row[3] == "generic"]
    listed = browse.list_generic_events(
        event_type=None, element_id=None, tag_id=None, after=None, before=None, limit=100, offset=0
    )
    assert [e.id for e in listed] == sorted(seqs, reverse=True)


def _rebuilt_equals_refreshed(pipeline: Pipeline, store: EventStore) -> None:
    refreshed = model_rows(store)
    pipeline.rebuild()
    assert model_rows(store) == refreshed


def test_the_model_after_retention_is_the_rebuild_of_what_remains(
    spark: SparkSession, store: EventStore
) -> None:
    ingest(store, demo_events(DemoShape(jobs=MIN_JOBS, runs_per_job=2)))
    ingest(store, [fs.CUSTOMERS_RUN])  # a 2024 run, of a job no other event names
    crossing = str(uuid.uuid4())  # a run that crosses the limit: it stays whole
    ingest(
        store,
        [
            run_event(crossing, "START", "2025-03-03T23:00:00Z"),
            run_event(crossing, "COMPLETE", "2025-03-04T01:00:00Z"),
        ],
    )
    browse = generic_store(store)
    for doc, received in zip(fs.HISTORY, RECEIVED, strict=True):
        browse.append_generic([validate_generic_event(doc)], received)
    pipeline = Pipeline(spark, store, dogfood=False, partitions=2)
    pipeline.run_once()
    model = model_rows(store)

    # the demo's first day, the 2024 run and the first five generic events are past the limit
    before = _events(store)
    dry = apply_retention(store, DAY_TWO, dry_run=True)
    assert dry.generic_events == 5 and dry.runs > 1
    assert _events(store) == before and model_rows(store) == model  # a dry run only counts

    report = apply_retention(store, DAY_TWO, pipeline=lambda: pipeline)
    assert (report.events, report.runs, report.generic_events) == (dry.events, dry.runs, 5)
    remaining = _events(store)
    gone = [row for row in before if row not in remaining]
    assert len(gone) == report.events and all(row[2] < DAY_TWO for row in gone)
    kept_runs = {row[1] for row in remaining} - {None}
    assert not kept_runs & {row[1] for row in gone}  # a run goes whole or stays whole
    assert [row[2] < DAY_TWO for row in remaining if row[1] == crossing] == [True, False]
    assert report.model["runs"] == report.runs
    assert {row[0] for row in query(store, "SELECT run_id FROM runs")} == kept_runs
    assert "job:crm:export_customers" not in {r[0] for r in query(store, "SELECT node_id FROM jobs")}
    assert fs.folded(store) == fs.expected(fs.HISTORY[5:], RECEIVED[5:])
    _browse_is_what_remains(store)
    _rebuilt_equals_refreshed(pipeline, store)


def test_a_store_without_old_events_needs_no_spark_and_retention_runs_once_a_day(store: EventStore) -> None:
    doc = dict(fs.CUSTOMERS_RUN, eventTime="2999-01-01T00:00:00Z")
    ingest(store, [doc])

    def no_spark() -> Pipeline:
        raise AssertionError("nothing past the limit: no pipeline needed")

    report = apply_retention(store, DAY_TWO, pipeline=no_spark)
    assert (report.events, report.runs, report.model["runs"]) == (0, 0, 0)
    first = last_retention(store)
    assert first is not None
    assert retain_daily(0, store, no_spark) is None  # 0 days: never
    assert retain_daily(30, store, no_spark) is None  # ran less than a day ago
    assert last_retention(store) == first
    (kept,) = store.list_events(after_time=None, before_time=None, descending=False, limit=10, offset=0)
    assert orjson.loads(kept.payload)["eventTime"] == doc["eventTime"]
