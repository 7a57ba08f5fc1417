"""Impact analysis (GET /api/warehouse/v1/impact) on the hand-written model of model_fixture.py, on
both backends: distances, owners, run states, both directions, depth, asOf, column level, errors.
Added to the model: its current lineage edges, owners of public.orders_clean and of
etl.clean_orders, and column lineage raw/orders.id → orders_clean.{id,total} → report.revenue."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.store.base import EventStore
from tests.api.model_fixture import CLEAN, ETL, ORDERS, REPORT, REPORT_JOB, fill_model, t

URL = "/api/warehouse/v1/impact"
EXTRA_ROWS: dict[str, list[tuple[Any, ...]]] = {
    "facet_values": [
        ("h-owner-clean", '{"owners":[{"name":"team:analytics","type":"TEAM"},{"name":"ann"}]}'),
        ("h-owner-etl", '{"owners":[{"name":"team:platform"}]}'),
        ("h-cl-clean", '{"fields":{}}'),
        ("h-cl-report", '{"fields":{}}'),
    ],
    "dataset_facets": [
        (CLEAN, "ownership", t("2024-01-01T01:10:00"), 3, "h-owner-clean", 0),
        (CLEAN, "columnLineage", t("2024-01-01T01:10:00"), 3, "h-cl-clean", 0),
        (REPORT, "columnLineage", t("2024-01-02T02:00:30"), 10, "h-cl-report", 0),
    ],
    "lineage_edges": [  # the current graph, as the pipeline publishes it from the job versions
        (ORDERS, ETL, "input", ETL, "jv-clean-2"),
        (ETL, CLEAN, "output", ETL, "jv-clean-2"),
        (CLEAN, REPORT_JOB, "input", REPORT_JOB, "jv-report-1"),
        (REPORT_JOB, REPORT, "output", REPORT_JOB, "jv-report-1"),
    ],
    "job_facets": [(ETL, "ownership", t("2024-01-01T00:30:00"), 2, "h-owner-etl", 0)],
    "column_lineage": [
        ("h-cl-clean", "id", ORDERS, "id", "DIRECT", "IDENTITY", None, None),
        ("h-cl-clean", "total", ORDERS, "id", "DIRECT", "AGGREGATION", "count", None),
        ("h-cl-report", "revenue", CLEAN, "total", "DIRECT", "AGGREGATION", None, None),
    ],
}


@pytest.fixture(autouse=True)
def model(store: EventStore) -> None:
    fill_model(store)
    with store.transaction() as cur:
        for table, rows in EXTRA_ROWS.items():
            cur.executemany(store.sql(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})"), rows)


def impact(client: TestClient, node: str | None, status: int = 200, **params: Any) -> Any:
    response = client.get(URL, params={"nodeId": node, **params} if node else params)
    assert response.status_code == status, response.text
    return response.json()


def field(dataset: str, name: str) -> str:
    return f"datasetField:{dataset.removeprefix('dataset:')}:{name}"


def table(answer: Any) -> list[tuple[Any, ...]]:
    """(node, distance, owners, latest run state) of each row, in the answer's order."""
    return [(r["nodeID"], r["distance"], r["owners"], r["latestRunState"]) for r in answer["rows"]]


def distances(answer: Any) -> list[tuple[str, int]]:
    return [(r["nodeID"], r["distance"]) for r in answer["rows"]]


def test_downstream_of_a_dataset(client: TestClient) -> None:
    answer = impact(client, ORDERS)
    assert answer["nodeID"] == ORDERS and answer["direction"] == "downstream"
    assert answer["level"] == "dataset" and answer["truncated"] is False and answer["asOf"] is None
    assert answer["node"]["nodeType"] == "dataset" and answer["node"]["owners"] == []  # ownership deleted
    assert table(answer) == [
        (CLEAN, 1, ["team:analytics", "ann"], "COMPLETED"),  # the state of its writer, etl.clean_orders
        (ETL, 1, ["team:platform"], "COMPLETED"),
        (REPORT, 2, [], "FAILED"),
        (REPORT_JOB, 2, [], "FAILED"),
    ]
    clean = answer["rows"][0]
    assert clean == {
        "nodeID": CLEAN,
        "nodeType": "dataset",
        "namespace": "warehouse",
        "name": "public.orders_clean",
        "field": None,
        "distance": 1,
        "owners": ["team:analytics", "ann"],
        "latestRunState": "COMPLETED",
        "latestRunTime": "2024-01-02T01:05:00.500Z",
        "latestRunJob": ETL,
        "expandable": False,
    }


def test_upstream_of_a_dataset(client: TestClient) -> None:
    answer = impact(client, REPORT, direction="upstream")
    assert answer["direction"] == "upstream"
    assert answer["node"]["latestRunState"] == "FAILED"
    assert table(answer) == [
        (CLEAN, 1, ["team:analytics", "ann"], "COMPLETED"),
        (REPORT_JOB, 1, [], "FAILED"),
        (ORDERS, 2, [], None),  # nothing writes raw/orders
        (ETL, 2, ["team:platform"], "COMPLETED"),
    ]


def test_from_a_job_its_outputs_are_one_step_away(client: TestClient) -> None:
    answer = impact(client, ETL)
    assert answer["node"]["owners"] == ["team:platform"] and answer["node"]["latestRunState"] == "COMPLETED"
    assert [(r["nodeID"], r["distance"]) for r in answer["rows"]] == [
        (CLEAN, 1),
        (REPORT, 2),
        (REPORT_JOB, 2),
    ]
    upstream = impact(client, REPORT_JOB, direction="upstream")
    assert [(r["nodeID"], r["distance"]) for r in upstream["rows"]] == [(CLEAN, 1), (ORDERS, 2), (ETL, 2)]


def test_depth_and_limit_cut_the_list(client: TestClient) -> None:
    near = impact(client, ORDERS, depth="1")
    assert [(r["nodeID"], r["expandable"]) for r in near["rows"]] == [(CLEAN, True), (ETL, False)]
    assert near["truncated"] is False
    capped = impact(client, ORDERS, limit="2")
    assert len(capped["rows"]) == 1 and capped["truncated"] is True  # the node itself counts


def test_as_of_answers_with_the_owners_and_edges_of_then(client: TestClient) -> None:
    then = impact(client, ORDERS, asOf="2024-01-01T12:00:00Z")
    assert then["asOf"] == "2024-01-01T12:00:00Z"
    assert then["node"]["owners"] == ["team:data"]  # not deleted yet
    assert then["rows"] == []  # etl.clean_orders read raw/orders only from its second version
    clean = impact(client, CLEAN, direction="upstream", asOf="2024-01-01T12:00:00Z")
    assert [r["nodeID"] for r in clean["rows"]] == [ETL]


def test_column_level_from_a_field(client: TestClient) -> None:
    answer = impact(client, field(ORDERS, "id"))
    assert answer["level"] == "column" and answer["node"]["field"] == "id"
    assert answer["node"]["nodeType"] == "datasetField"
    assert table(answer) == [
        (field(CLEAN, "id"), 1, ["team:analytics", "ann"], "COMPLETED"),
        (field(CLEAN, "total"), 1, ["team:analytics", "ann"], "COMPLETED"),
        (field(REPORT, "revenue"), 2, [], "FAILED"),
    ]
    revenue = answer["rows"][2]
    assert (revenue["namespace"], revenue["name"], revenue["field"]) == (
        "warehouse",
        "public.report",
        "revenue",
    )
    upstream = impact(client, field(REPORT, "revenue"), direction="upstream")
    assert table(upstream) == [
        (field(CLEAN, "total"), 1, ["team:analytics", "ann"], "COMPLETED"),
        (field(ORDERS, "id"), 2, [], None),
    ]
    assert impact(client, field(CLEAN, "id"), depth="0")["rows"] == []


def test_column_level_of_a_whole_dataset(client: TestClient) -> None:
    answer = impact(client, ORDERS, level="column")
    assert answer["level"] == "column" and answer["nodeID"] == ORDERS
    assert answer["node"]["nodeType"] == "dataset"
    assert distances(answer) == [
        (field(CLEAN, "id"), 1),
        (field(CLEAN, "total"), 1),
        (field(REPORT, "revenue"), 2),
    ]


def test_errors(client: TestClient) -> None:
    assert "dataset:warehouse:nope" in impact(client, "dataset:warehouse:nope", 404)["message"]
    assert "total2" in impact(client, field(CLEAN, "total2"), 404)["message"]
    assert "nodeId" in impact(client, None, 400)["message"]
    assert "nodeId" in impact(client, "nope", 400)["message"]
    assert "nodeId" in impact(client, "run:11111111-1111-4111-8111-111111111111", 400)["message"]
    assert "direction" in impact(client, ORDERS, 400, direction="both")["message"]
    assert "level" in impact(client, ORDERS, 400, level="row")["message"]
    assert "level" in impact(client, ETL, 400, level="column")["message"]
    assert "level" in impact(client, field(CLEAN, "id"), 400, level="dataset")["message"]
    assert "depth" in impact(client, ORDERS, 400, depth="-1")["message"]
    assert "limit" in impact(client, ORDERS, 400, limit="0")["message"]
    assert "asOf" in impact(client, ORDERS, 400, asOf="yesterday")["message"]
    assert "did not exist yet" in impact(client, REPORT, 404, asOf="2024-01-01T00:00:00Z")["message"]
