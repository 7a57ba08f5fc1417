"""What lineage vertices carry for the UI: a job's parent job (`properties.parentJob`, to fold a
DAG's tasks into one node) and a node's tags (`properties.tags`, to filter by tag); on the
hand-written model, both backends."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from headwater.store.base import EventStore
from tests.api.model_fixture import ETL, ORDERS, REPORT_JOB, fill_model


@pytest.fixture(autouse=True)
def model(store: EventStore) -> None:
    fill_model(store)


def vertex_properties(client: TestClient, node_id: str) -> dict[str, object]:
    answer = client.get("/api/warehouse/v1/lineage/end-to-end", params={"nodeId": node_id}).json()
    properties: dict[str, object] = next(
        v["properties"] for v in answer["vertices"] if v["nodeID"] == node_id
    )
    return properties


def test_a_child_job_names_its_parent_and_a_top_job_names_none(client: TestClient) -> None:
    assert vertex_properties(client, REPORT_JOB)["parentJob"] == ETL
    assert "parentJob" not in vertex_properties(client, ETL)


def test_tags_set_through_the_api_show_on_vertices(client: TestClient) -> None:
    assert "tags" not in vertex_properties(client, ETL)
    for tag in ("critical", "billing"):
        response = client.post(f"/api/v1/namespaces/warehouse/jobs/etl.clean_orders/tags/{tag}")
        assert response.status_code == 200, response.text
    assert client.post("/api/v1/namespaces/s3%3A%2F%2Flake/datasets/raw%2Forders/tags/pii").status_code == 200
    assert vertex_properties(client, ETL)["tags"] == ["billing", "critical"]
    assert vertex_properties(client, ORDERS)["tags"] == ["pii"]
