"""GET /api/v1/overview (the UI's home page in one request) on the hand-written model of
model_fixture.py, on both backends: namespaces with their counts, the latest and the failed runs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.query.overview import overview
from headwater.store.base import EventStore
from tests.api.model_fixture import R1, R2, R3, fill_model


@pytest.fixture(autouse=True)
def model(store: EventStore) -> None:
    fill_model(store)


def get(client: TestClient, status: int = 200, **params: Any) -> Any:
    response = client.get("/api/v1/overview", params=params)
    assert response.status_code == status, response.text
    return response.json()


def test_namespaces_with_their_counts(client: TestClient) -> None:
    answer = get(client)
    by_name = {ns["name"]: ns for ns in answer["namespaces"]}
    assert list(by_name) == ["s3://lake", "warehouse"]
    assert {k: by_name["s3://lake"][k] for k in ("datasets", "jobs", "runs", "lastRunAt")} == {
        "datasets": 1,
        "jobs": 0,
        "runs": 0,
        "lastRunAt": None,
    }
    warehouse = by_name["warehouse"]
    assert (warehouse["datasets"], warehouse["jobs"], warehouse["runs"]) == (2, 2, 3)
    assert warehouse["lastRunAt"] == "2024-01-02T02:00:30Z"
    assert warehouse["recentRuns"] == 0  # the model's runs are from 2024


def test_recent_runs_count_the_last_seven_days(store: EventStore) -> None:
    answer = overview(store, runs=10, now=datetime(2024, 1, 8, 1, 30, tzinfo=UTC))
    warehouse = next(ns for ns in answer["namespaces"] if ns["name"] == "warehouse")
    assert warehouse["recentRuns"] == 2  # R2 and R3 ended on Jan 2nd after 01:30; R1 before
    assert answer["recentSince"] == "2024-01-01T01:30:00Z"


def test_latest_runs_newest_first_with_their_job_and_the_failed_ones(client: TestClient) -> None:
    answer = get(client)
    assert [r["id"] for r in answer["latestRuns"]] == [R3, R2, R1]
    assert answer["latestRuns"][0]["job"] == {"namespace": "warehouse", "name": "etl.clean_orders.report"}
    assert answer["latestRuns"][0]["state"] == "FAILED"
    assert [r["id"] for r in answer["failedRuns"]] == [R3]
    assert [r["id"] for r in get(client, runs="1")["latestRuns"]] == [R3]


@pytest.mark.parametrize("runs", ["0", "101", "x"])
def test_a_bad_runs_parameter_is_a_400_naming_it(client: TestClient, runs: str) -> None:
    assert get(client, 400, runs=runs)["message"].startswith("runs:")
