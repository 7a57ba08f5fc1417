"""Headwater's optional filters on Marquez' event listing (namespace, job, eventType), on both
backends: what each keeps, how they combine with time and paging, and 400s naming the parameter."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.factories import PRODUCER, run_event

LISTING = "/api/v1/events/lineage"
DATASET_EVENT_SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent"


def post(client: TestClient, event: dict[str, Any]) -> None:
    response = client.post("/api/v1/lineage", json=event)
    assert response.status_code == 201, response.text


def dataset_event(namespace: str, name: str, event_time: str) -> dict[str, Any]:
    return {
        "eventTime": event_time,
        "producer": PRODUCER,
        "schemaURL": DATASET_EVENT_SCHEMA,
        "dataset": {"namespace": namespace, "name": name, "facets": {}},
    }


@pytest.fixture
def loaded(client: TestClient) -> TestClient:
    """shop.clean: START, COMPLETE; shop.report: START, FAIL; lake.load: START, RUNNING, ABORT;
    a dataset event in shop; one event a minute from 2024-06-01T00:00Z."""
    plan = [
        ("shop", "clean", "START"),
        ("shop", "clean", "COMPLETE"),
        ("shop", "report", "START"),
        ("shop", "report", "FAIL"),
        ("lake", "load", "START"),
        ("lake", "load", "RUNNING"),
        ("lake", "load", "ABORT"),
    ]
    runs: dict[str, str] = {}
    for minute, (namespace, job, event_type) in enumerate(plan):
        run_id = runs.setdefault(job, str(uuid.uuid4()))
        time = f"2024-06-01T00:{minute:02d}:00Z"
        post(client, run_event(run_id, event_type=event_type, event_time=time, namespace=namespace, job=job))
    post(client, dataset_event("shop", "orders", "2024-06-01T00:30:00Z"))
    return client


def listing(client: TestClient, path: str = LISTING, **params: Any) -> dict[str, Any]:
    response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["totalCount"] >= len(body["events"])
    return body


def summary(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(job or dataset name, eventType or DATASET) of every event, in the listing's order."""
    return [
        (e["job"]["name"], e["eventType"]) if "job" in e else (e["dataset"]["name"], "DATASET")
        for e in body["events"]
    ]


def test_without_filters_the_listing_is_unchanged(loaded: TestClient) -> None:
    body = listing(loaded)
    assert body["totalCount"] == 8
    assert summary(body)[:2] == [("orders", "DATASET"), ("load", "ABORT")]
    assert listing(loaded, namespace="", job="", eventType="") == body  # empty values mean no filter


def test_event_type_keeps_run_events_of_those_types(loaded: TestClient) -> None:
    assert summary(listing(loaded, eventType="FAIL")) == [("report", "FAIL")]
    comma = listing(loaded, eventType="fail,abort")
    repeated = loaded.get(LISTING, params=[("eventType", "FAIL"), ("eventType", "ABORT")]).json()
    assert comma == repeated
    assert summary(comma) == [("load", "ABORT"), ("report", "FAIL")] and comma["totalCount"] == 2
    assert listing(loaded, eventType="START")["totalCount"] == 3


def test_namespace_keeps_jobs_and_datasets_of_the_namespace(loaded: TestClient) -> None:
    shop = listing(loaded, namespace="shop")
    assert shop["totalCount"] == 5
    assert {name for name, _ in summary(shop)} == {"clean", "report", "orders"}
    assert shop == listing(loaded, "/api/v1/events/shop")  # the query parameter and the path agree
    assert listing(loaded, namespace="nowhere") == {"events": [], "totalCount": 0}


def test_job_with_or_without_its_namespace(loaded: TestClient) -> None:
    assert summary(listing(loaded, job="report")) == [("report", "FAIL"), ("report", "START")]
    assert listing(loaded, namespace="shop", job="report")["totalCount"] == 2
    assert listing(loaded, namespace="lake", job="report")["totalCount"] == 0
    assert listing(loaded, "/api/v1/events/lake", job="load", eventType="RUNNING")["totalCount"] == 1


def test_filters_combine_with_time_order_and_paging(loaded: TestClient) -> None:
    window = {"after": "2024-06-01T00:01:00Z", "before": "2024-06-01T00:04:00Z"}
    assert summary(listing(loaded, namespace="shop", eventType="START", sortDirection="asc", **window)) == [
        ("report", "START")
    ]
    first = listing(loaded, eventType="START", limit=2)
    second = listing(loaded, eventType="START", limit=2, offset=2)
    assert first["totalCount"] == second["totalCount"] == 3
    assert summary(first) == [("load", "START"), ("report", "START")]
    assert summary(second) == [("clean", "START")]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"eventType": "DONE"}, "eventType: 'DONE' is none of START, RUNNING, COMPLETE, FAIL, ABORT, OTHER"),
        ({"eventType": "FAIL,nope"}, "eventType: 'nope' is none of"),
        ({"after": "yesterday", "namespace": "shop"}, "after:"),
    ],
)
def test_bad_filters_are_400_naming_the_parameter(
    loaded: TestClient, params: dict[str, str], message: str
) -> None:
    for path in (LISTING, "/api/v1/events/shop"):
        response = loaded.get(path, params=params)
        assert response.status_code == 400
        assert response.json()["message"].startswith(message)
