"""Generic events beside the Spark pipeline: a rebuild keeps their browse ids, and they add nothing
to the OpenLineage model; the datasets and jobs the pipeline publishes become elements whose ids a
rebuild keeps too."""

from __future__ import annotations

import orjson
from pyspark.sql import SparkSession

from headwater.events.generic import validate_generic_event
from headwater.events.times import format_ticks, now_ticks
from headwater.events.validate import validate_event
from headwater.pipeline.runner import Pipeline
from headwater.store import EventStore, open_store
from headwater.store.generic import generic_store
from headwater.store.model.compare import model_rows

RUN = {
    "eventType": "COMPLETE",
    "eventTime": "2024-05-01T10:00:00Z",
    "run": {"runId": "0190a0a0-0000-7000-8000-000000000001"},
    "job": {"namespace": "demo", "name": "load_orders"},
    "outputs": [{"namespace": "warehouse", "name": "public.orders"}],
    "producer": "https://example.com/scheduler",
}


def browse(store: EventStore) -> tuple[object, ...]:
    g = generic_store(store)
    return (
        g.list_elements(element_type=None, limit=100, offset=0),
        g.list_generic_tags(key=None, limit=100, offset=0),
        [g.get_generic_event(e.id) for e in g.list_generic_events(
            event_type=None, element_id=None, tag_id=None, after=None, before=None, limit=100, offset=0
        )],
    )  # fmt: skip


def test_a_rebuild_keeps_browse_ids_and_the_model_ignores_generic_events(
    spark: SparkSession, store: EventStore
) -> None:
    received = format_ticks(now_ticks())
    store.append([validate_event(RUN, orjson.dumps(RUN))], received)
    events = [
        validate_generic_event(
            {
                "description": f"load model: m{n}",
                "type": "load model",
                "elements": [{"description": f"m{n}", "type": "model", "tags": {"n": n}}],
                "tags": {"engine": "engine-1"},
            }
        )
        for n in range(3)
    ]
    generic_store(store).append_generic(events, received)
    before = browse(store)

    pipeline = Pipeline(spark, store, dogfood=False)
    pipeline.run_once()
    model = model_rows(store)
    assert [row[1:3] for row in model["jobs"]] == [("demo", "load_orders")]
    published = browse(store)
    assert published[1:] == before[1:]
    elements = published[0]
    assert isinstance(elements, list) and elements[:3] == before[0]
    assert [(e.type, e.description) for e in elements[3:]] == [
        ("dataset", "warehouse:public.orders"),
        ("job", "demo:load_orders"),
    ]
    assert elements[3].id > elements[2].id
    g = generic_store(store)
    runs = g.list_generic_events(
        event_type=None, element_id=elements[3].id, tag_id=None, after=None, before=None, limit=9, offset=0
    )
    assert [(e.id, e.type) for e in runs] == [(1, "COMPLETE")]

    pipeline.rebuild()
    assert model_rows(store) == model
    assert browse(store) == published

    reopened = open_store(store.url)  # a restart: same ids
    try:
        assert browse(reopened) == published
    finally:
        reopened.close()
