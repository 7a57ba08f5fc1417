"""Elements of generic events in the warehouse API over HTTP, on both backends: the FastScore
history of tests/pipeline/fastscore.py sent to POST /lineage/1/events and folded by the real
pipeline; the node types before and after, an element's horizontal and vertical lineage as
vertices and edges, its vertical view right after a new event (no pipeline pass), node search,
and the 400s of the queries that take no element (Marquez' lineage graph, ultimate ends)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pyspark.sql import SparkSession

from headwater.api.app import create_app
from headwater.config import Settings
from headwater.pipeline.runner import Pipeline
from tests.pipeline import fastscore as fs
from tests.pipeline.conftest import spark
from tests.query.conftest import published

__all__ = ["spark"]
API = "/api/warehouse/v1"


def get(client: TestClient, path: str, status: int = 200, **params: Any) -> Any:
    """GET a warehouse path (`/types`), or any path of the server (`/lineage/1/elements`)."""
    response = client.get(path if path.startswith("/lineage/1/") else f"{API}{path}", params=params)
    assert response.status_code == status, response.text
    return response.json()


def post_history(client: TestClient) -> None:
    for event in fs.HISTORY:
        assert client.post("/lineage/1/events", json=event).status_code == 201


def type_names(client: TestClient) -> tuple[set[str], set[str]]:
    types = get(client, "/types")
    return {t["name"] for t in types["nodeTypes"]}, {t["name"] for t in types["edgeTypes"]}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def folded(
    request: pytest.FixtureRequest, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TestClient]:
    """A server on a store holding the OpenLineage run that writes customers and the history sent
    over HTTP, folded by one pipeline pass."""
    with (
        published(request, spark, tmp_path_factory, [fs.CUSTOMERS_RUN]) as store,
        TestClient(create_app(Settings(database_url=store.url), store)) as client,
    ):
        post_history(client)
        Pipeline(spark, store, dogfood=False, partitions=2).run_once()
        yield client


def test_before_the_pipeline_folds_them_elements_have_only_their_vertical_view(client: TestClient) -> None:
    post_history(client)  # browsable at once, but no graph node yet
    nodes, edges = type_names(client)
    assert "element" not in nodes and "event" not in edges
    get(client, "/lineage/end-to-end", 404, nodeId=fs.CHURN)
    # its vertical view reads the browse tables: there before any pass
    view = get(client, "/lineage/vertical", nodeId=fs.ENGINE1)
    assert {v["displayName"] for v in view["vertices"] if v["nodeType"] == "elementTag"} == {
        "state=STOPPED",
        "replicas=0",
    }
    assert len([v for v in view["vertices"] if v["nodeType"] == "event"]) == 3
    assert get(client, "/lineage/vertical", nodeId=fs.CLICKS)["vertices"][0]["nodeType"] == "element"
    get(client, "/lineage/vertical", 404, nodeId="element:engine:engine-9")
    get(client, "/lineage/vertical", 404, nodeId=fs.ENGINE1, asOf="2000-01-01T00:00:00Z")


def test_element_types_once_folded(folded: TestClient) -> None:
    nodes, edges = type_names(folded)
    assert {"element", "event", "elementTag"} <= nodes and {"event", "in-event"} <= edges
    assert {"dataset", "job", "run"} <= nodes  # the others stay


def test_horizontal_lineage_of_an_element(folded: TestClient) -> None:
    answer = get(folded, "/lineage/downstream", nodeId=fs.CHURN, depth=1)
    assert answer["nodeID"] == fs.CHURN and answer["scope"] == "downstream"
    churn = next(v for v in answer["vertices"] if v["nodeID"] == fs.CHURN)
    ids = {e["description"]: e["id"] for e in get(folded, "/lineage/1/elements")}
    assert (churn["nodeType"], churn["displayName"], churn["qualifiedName"]) == (
        "element",
        "churn",
        "model:churn",
    )
    assert churn["properties"]["type"] == "model" and churn["properties"]["eventCount"] == 5
    assert churn["properties"]["elementId"] == ids["churn"]
    loads = [
        e for e in answer["edges"] if e["edgeType"] == "event" and e["properties"]["label"] == "load model"
    ]
    assert {(e["sourceNodeID"], e["destinationNodeID"]) for e in loads} >= {
        (fs.CHURN, fs.ENGINE1),
        (fs.CHURN, fs.ENGINE2),
    }
    to_engine1 = next(e for e in loads if e["destinationNodeID"] == fs.ENGINE1)
    engine = get(folded, f"/lineage/1/elements/{ids['engine-1']}")
    loaded_at = next(e["timestamp"] for e in engine["events"] if e["type"] == "load model")
    assert to_engine1["properties"] == {  # its one event, when the server received it
        "label": "load model",
        "eventCount": 1,
        "firstEventAt": loaded_at,
        "lastEventAt": loaded_at,
    }
    customers = next(v for v in answer["vertices"] if v["nodeID"] == fs.CUSTOMERS)
    assert customers["nodeType"] == "dataset"  # the OpenLineage dataset a generic event named


def test_vertical_lineage_of_an_element_reads_its_latest_events(folded: TestClient) -> None:
    before = get(folded, "/lineage/vertical", nodeId=fs.ENGINE2)
    tags = {v["displayName"] for v in before["vertices"] if v["nodeType"] == "elementTag"}
    assert tags == {"state=RUNNING"}
    # a new event is in the vertical view at once: it reads the browse tables, not the model
    sent = folded.post(
        "/lineage/1/events",
        json={
            "description": "engine state: PAUSED",
            "type": "engine state",
            "elements": [{"type": "engine", "description": "engine-2", "tags": {"state": "PAUSED"}}],
        },
    )
    after = get(folded, "/lineage/vertical", nodeId=fs.ENGINE2)
    tags = {v["displayName"] for v in after["vertices"] if v["nodeType"] == "elementTag"}
    assert tags == {"state=PAUSED"}
    events = [v for v in after["vertices"] if v["nodeType"] == "event"]
    assert events[0]["nodeID"] == f"event:{sent.json()['id']}"
    assert events[0]["properties"]["eventId"] == sent.json()["id"]
    assert {(e["edgeType"], e["sourceNodeID"]) for e in after["edges"]} == {
        ("tagged", fs.ENGINE2),
        ("in-event", fs.ENGINE2),
    }


def test_node_search_finds_elements(folded: TestClient) -> None:
    found = get(folded, "/nodes", type="element", name="engine")
    assert [n["nodeID"] for n in found["nodes"]] == [fs.ENGINE1, fs.ENGINE2]
    assert found["nodes"][0]["properties"]["type"] == "engine"


def test_queries_that_take_no_element_answer_400(folded: TestClient) -> None:
    marquez = folded.get("/api/v1/lineage", params={"nodeId": fs.CHURN})  # datasets and jobs only
    assert marquez.status_code == 400 and fs.CHURN in marquez.text
    ends = folded.get(f"{API}/lineage/ultimate-source", params={"nodeId": fs.CHURN})
    assert ends.status_code == 400 and "element" in ends.text
    assert get(folded, "/lineage/end-to-end", 400, nodeId="element:model")
