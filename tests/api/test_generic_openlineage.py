"""OpenLineage datasets and jobs through the browse API (`/lineage/1/elements?element_type=dataset`),
on the hand-written model of model_fixture.py with the run events behind it, on both backends."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.testclient import TestClient

from headwater.events.times import format_ticks, now_ticks
from headwater.events.validate import validate_event
from headwater.store import EventStore
from headwater.store.generic import generic_store
from tests.api.model_fixture import R1, R2, R3, fill_model

CLEAN = "warehouse:public.orders_clean"


def run_event(run_id: str, job: str, event_type: str, time: str) -> dict[str, Any]:
    return {
        "eventType": event_type,
        "eventTime": time,
        "run": {"runId": run_id},
        "job": {"namespace": "warehouse", "name": job},
        "producer": "https://example.com/scheduler",
    }


RUN_EVENTS = [
    run_event(R1, "etl.clean_orders", "START", "2024-01-01T01:00:00Z"),
    run_event(R1, "etl.clean_orders", "COMPLETE", "2024-01-01T01:10:00Z"),
    run_event(R2, "etl.clean_orders", "COMPLETE", "2024-01-02T01:05:00Z"),
    run_event(R3, "etl.clean_orders.report", "FAIL", "2024-01-02T02:00:00Z"),
]


def test_datasets_and_jobs_are_elements_with_their_runs_events(client: TestClient, store: EventStore) -> None:
    # a generic event first: it names the cleaned orders as a `dataset` element, with a tag
    posted = client.post(
        "/lineage/1/events",
        json={
            "description": "quality check: orders_clean",
            "type": "quality check",
            "elements": [
                {"description": "churn", "type": "model"},
                {"description": CLEAN, "type": "dataset", "tags": {"rows": 1200}},
            ],
        },
    )
    check_id = posted.json()["id"]
    store.append([validate_event(e, orjson.dumps(e)) for e in RUN_EVENTS], format_ticks(now_ticks()))
    stored = store.list_events(after_time=None, before_time=None, descending=False, limit=10, offset=0)
    seqs = [e.seq for e in stored if e.kind == "run"]
    fill_model(store)  # the pipeline's publish numbers what it publishes; here the model is hand-written
    generic_store(store).number_published_elements()

    elements = {(e["type"], e["description"]): e["id"] for e in client.get("/lineage/1/elements").json()}
    assert set(elements) == {
        ("model", "churn"),
        ("dataset", CLEAN),
        ("dataset", "s3://lake:raw/orders"),
        ("dataset", "warehouse:public.report"),
        ("job", "warehouse:etl.clean_orders"),
        ("job", "warehouse:etl.clean_orders.report"),
    }
    assert len(set(elements.values())) == 6 and min(elements.values()) > 0
    assert elements[("model", "churn")] < elements[("dataset", CLEAN)]  # the generic event named it first
    generic_store(store).number_published_elements()  # numbering twice changes nothing
    again = {(e["type"], e["description"]): e["id"] for e in client.get("/lineage/1/elements").json()}
    assert again == elements
    datasets = client.get("/lineage/1/elements", params={"element_type": "dataset"}).json()
    assert [d["description"] for d in datasets] == [CLEAN, "s3://lake:raw/orders", "warehouse:public.report"]
    assert client.get("/lineage/1/element_types").json() == ["dataset", "job", "model"]

    # the cleaned orders: written by R1 and R2, read by R3, and the generic quality check
    clean = client.get(f"/lineage/1/elements/{elements[('dataset', CLEAN)]}").json()
    assert [(e["id"], e["type"]) for e in clean["events"]] == [
        *((seq, t) for seq, t in zip(reversed(seqs), ["FAIL", "COMPLETE", "COMPLETE", "START"], strict=True)),
        (check_id, "quality check"),
    ]
    assert clean["events"][0] == {
        "id": max(seqs),
        "description": f"run {R3} of warehouse:etl.clean_orders.report",
        "timestamp": "2024-01-02T02:00:00Z",
        "type": "FAIL",
    }
    assert clean["tags"] == {"rows": "1200"}

    job = client.get(f"/lineage/1/elements/{elements[('job', 'warehouse:etl.clean_orders')]}").json()
    assert [e["type"] for e in job["events"]] == ["COMPLETE", "COMPLETE", "START"] and job["tags"] == {}
    completes = client.get(
        "/lineage/1/events",
        params={"element": elements[("job", "warehouse:etl.clean_orders")], "type": "COMPLETE"},
    ).json()
    assert [e["timestamp"] for e in completes] == ["2024-01-02T01:05:00Z", "2024-01-01T01:10:00Z"]
    early = client.get(
        "/lineage/1/events",
        params={"element": elements[("dataset", CLEAN)], "before": "2024-01-01T01:05:00Z"},
    ).json()
    assert [e["type"] for e in early] == ["START"]  # run events by eventTime; the generic one is newer

    # a run event's detail: the run's job and datasets as its elements
    fail = client.get(f"/lineage/1/events/{max(seqs)}").json()
    assert fail["type"] == "FAIL" and fail["tags"] == []
    assert [(e["type"], e["description"], e["tags"]) for e in fail["elements"]] == sorted(
        [
            ("dataset", CLEAN, []),
            ("dataset", "warehouse:public.report", []),
            ("job", "warehouse:etl.clean_orders.report", []),
        ],
        key=lambda e: elements[(e[0], e[1])],
    )
    # the generic events list stays generic
    assert [e["id"] for e in client.get("/lineage/1/events").json()] == [check_id]


def test_migration_7_numbers_what_was_published_before_it(store: EventStore) -> None:
    fill_model(store)
    with store.transaction() as cur:  # as if the store stood at version 6 with a published model
        cur.execute("DELETE FROM schema_migrations WHERE version = 7")
    assert store.migrate() == [7]
    numbered = generic_store(store).list_elements(element_type="job", limit=10, offset=0)
    assert [e.description for e in numbered] == [
        "warehouse:etl.clean_orders",
        "warehouse:etl.clean_orders.report",
    ]
