"""Deletions undone by the pipeline, on both backends: an event stored after a delete that names
the node brings it back once published; one stored before the delete never does, even published
afterwards; a rebuild keeps the markers no later event cleared (incremental == rebuild)."""

from __future__ import annotations

import orjson
from fastapi.testclient import TestClient

from headwater.pipeline.runner import Pipeline
from headwater.store.base import EventStore
from headwater.store.deletions_sql import mentioned_nodes
from tests.api.test_delete import (
    CLEAN,
    LOAD,
    delete,
    get,
    graph_ids,
    lineage_events,
    pipeline,
    post,
    published,
    search_names,
    spark,
)
from tests.factories import run_event

__all__ = ["pipeline", "published", "spark"]


def test_a_newer_event_brings_back_what_it_names_an_older_one_does_not(
    published: TestClient, pipeline: Pipeline, store: EventStore
) -> None:
    client = published
    stored_before = lineage_events(hour=2)[0]  # names raw and clean: stored, not yet published
    post(client, stored_before)
    delete(client, "/namespaces/lake")
    pipeline.run_once()  # publishes the event stored before the delete
    get(client, "/namespaces/lake", 404)
    get(client, "/namespaces/lake/datasets/clean", 404)

    post(client, run_event(event_time="2024-11-26T03:00:00Z", namespace="etl", job="load", inputs=[],
                           outputs=[{"namespace": "lake", "name": "clean"}]))  # fmt: skip
    pipeline.run_once()
    assert get(client, "/namespaces/lake")["name"] == "lake"
    assert get(client, "/namespaces/lake/datasets/clean")["name"] == "clean"
    # only what the event names comes back: raw and report stay deleted
    assert [d["name"] for d in get(client, "/namespaces/lake/datasets")["datasets"]] == ["clean"]
    get(client, "/namespaces/lake/datasets/raw", 404)
    assert search_names(client, "clean") == {"lake.clean"}
    assert CLEAN in graph_ids(client, LOAD)[0]


def test_a_rebuild_keeps_the_markers_no_newer_event_cleared(
    published: TestClient, pipeline: Pipeline, store: EventStore
) -> None:
    client = published
    delete(client, "/namespaces/lake/datasets/clean")
    delete(client, "/namespaces/etl/jobs/summarise")
    post(client, run_event(event_time="2024-11-26T04:00:00Z", namespace="etl", job="summarise",
                           inputs=[{"namespace": "lake", "name": "report"}], outputs=[]))  # fmt: skip
    pipeline.run_once()
    incremental = markers(store)
    assert incremental == {CLEAN}
    pipeline.rebuild()
    assert markers(store) == incremental
    get(client, "/namespaces/lake/datasets/clean", 404)
    assert get(client, "/namespaces/etl/jobs/summarise")["name"] == "summarise"


def markers(store: EventStore) -> set[str]:
    with store.transaction() as cur:
        cur.execute("SELECT node_id FROM deleted_nodes")
        return {str(r[0]) for r in cur.fetchall()}


def test_what_an_event_mentions() -> None:
    event = run_event(namespace="etl", job="load", parent="11111111-1111-4111-8111-111111111111")
    assert mentioned_nodes(orjson.dumps(event).decode()) == {
        "job:etl:load",
        "job:etl:parent",  # the parent facet's job
        "dataset:postgres://db:5432:shop.orders",
        "dataset:s3://lake:orders_daily",
        "namespace:etl",
        "namespace:postgres://db:5432",
        "namespace:s3://lake",
    }
    dataset_event = {"eventTime": "2024-11-26T00:00:00Z", "dataset": {"namespace": "lake", "name": "t"}}
    assert mentioned_nodes(orjson.dumps(dataset_event).decode()) == {"dataset:lake:t", "namespace:lake"}
    assert mentioned_nodes("[]") == mentioned_nodes("{not json") == mentioned_nodes('{"job": 1}') == set()
