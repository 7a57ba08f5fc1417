"""Job vertices of lineage answers name their parent job (`properties.parentJob`), which the UI
uses to fold a DAG's tasks into one node; on the hand-written model, both backends."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from headwater.store.base import EventStore
from tests.api.model_fixture import ETL, REPORT_JOB, fill_model


@pytest.fixture(autouse=True)
def model(store: EventStore) -> None:
    fill_model(store)


def job_properties(client: TestClient, job: str) -> dict[str, object]:
    answer = client.get("/api/warehouse/v1/lineage/end-to-end", params={"nodeId": job}).json()
    properties: dict[str, object] = next(v["properties"] for v in answer["vertices"] if v["nodeID"] == job)
    return properties


def test_a_child_job_names_its_parent_and_a_top_job_names_none(client: TestClient) -> None:
    assert job_properties(client, REPORT_JOB)["parentJob"] == ETL
    assert "parentJob" not in job_properties(client, ETL)
