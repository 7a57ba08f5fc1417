"""Deleting datasets, jobs and namespaces through the Marquez-compatible routes, on both backends:
hidden from lists, gets, search, the overview and lineage; 404 for what is unknown (or already
deleted); write-key auth; the events stay stored."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pyspark.sql import SparkSession

from headwater.api.app import create_app
from headwater.config import Settings
from headwater.pipeline.runner import Pipeline
from headwater.store.base import EventStore
from tests.factories import run_event
from tests.pipeline.conftest import spark

__all__ = ["spark"]

API = "/api/v1"
RAW, CLEAN, REPORT = "dataset:lake:raw", "dataset:lake:clean", "dataset:lake:report"
LOAD, SUMMARISE = "job:etl:load", "job:etl:summarise"


def lineage_events(hour: int = 1) -> list[dict[str, Any]]:
    """etl.load reads lake.raw and writes lake.clean; etl.summarise reads lake.clean and writes
    lake.report."""
    ds = [{"namespace": "lake", "name": n} for n in ("raw", "clean", "report")]
    found = []
    for job, inputs, outputs in (("load", ds[:1], ds[1:2]), ("summarise", ds[1:2], ds[2:])):
        found.append(
            run_event(
                event_type="COMPLETE",
                event_time=f"2024-11-26T0{hour}:00:00Z",
                namespace="etl",
                job=job,
                inputs=inputs,
                outputs=outputs,
            )
        )
    return found


def post(client: TestClient, *events: dict[str, Any]) -> None:
    for event in events:
        response = client.post(f"{API}/lineage", json=event)
        assert response.status_code == 201, response.text


def get(client: TestClient, path: str, status: int = 200, **params: Any) -> Any:
    response = client.get(f"{API}{path}", params=params)
    assert response.status_code == status, response.text
    return response.json()


def delete(client: TestClient, path: str, status: int = 200) -> Any:
    response = client.delete(f"{API}{path}")
    assert response.status_code == status, response.text
    return response.json()


def graph_ids(client: TestClient, node_id: str) -> tuple[set[str], set[tuple[str, str]]]:
    """The nodes and edges of the node's Marquez lineage graph."""
    graph = get(client, "/lineage", nodeId=node_id, depth=5)["graph"]
    nodes = {n["id"] for n in graph}
    edges = {(e["origin"], e["destination"]) for n in graph for e in n["outEdges"] + n["inEdges"]}
    return nodes, edges


def search_names(client: TestClient, q: str) -> set[str]:
    return {f"{r['namespace']}.{r['name']}" for r in get(client, "/search", q=q, limit=100)["results"]}


@pytest.fixture
def pipeline(spark: SparkSession, store: EventStore) -> Pipeline:
    return Pipeline(spark, store, dogfood=False, partitions=2)


@pytest.fixture
def published(client: TestClient, pipeline: Pipeline) -> TestClient:
    post(client, *lineage_events())
    pipeline.run_once()
    return client


def test_a_deleted_dataset_is_hidden_everywhere_and_its_events_stay(
    published: TestClient, store: EventStore
) -> None:
    client = published
    events_before = store.last_seq()
    assert CLEAN in graph_ids(client, LOAD)[0]
    assert get(client, "/namespaces/lake/datasets")["totalCount"] == 3

    answer = delete(client, "/namespaces/lake/datasets/clean")
    assert answer["id"] == {"namespace": "lake", "name": "clean"}  # the dataset as it was
    assert answer["name"] == "clean"

    assert "dataset 'clean' not found" in get(client, "/namespaces/lake/datasets/clean", 404)["message"]
    listed = get(client, "/namespaces/lake/datasets")
    assert listed["totalCount"] == 2
    assert [d["name"] for d in listed["datasets"]] == ["raw", "report"]
    assert search_names(client, "clean") == set()
    assert search_names(client, "a") == {"lake.raw", "etl.load", "etl.summarise"}
    get(client, "/namespaces/lake/datasets/clean/versions", 404)
    # lineage: the walk skips the node and its edges, so load and summarise are no longer joined
    nodes, edges = graph_ids(client, LOAD)
    assert CLEAN not in nodes and REPORT not in nodes and SUMMARISE not in nodes
    assert nodes == {LOAD, RAW}
    assert all(CLEAN not in edge for edge in edges)
    get(client, "/lineage", 404, nodeId=CLEAN)
    vertical = client.get("/api/warehouse/v1/lineage/vertical", params={"nodeId": CLEAN})
    assert vertical.status_code == 404, vertical.text  # nor as an element of generic events
    overview = {n["name"]: n for n in get(client, "/overview")["namespaces"]}
    assert overview["lake"]["datasets"] == 2
    # a second delete finds nothing; the event store kept every event
    delete(client, "/namespaces/lake/datasets/clean", 404)
    assert store.last_seq() == events_before


def test_a_deleted_job_is_hidden_and_its_runs_leave_the_overview(published: TestClient) -> None:
    client = published
    answer = delete(client, "/namespaces/etl/jobs/load")
    assert (
        answer["id"] == {"namespace": "etl", "name": "load"} and answer["latestRun"]["state"] == "COMPLETED"
    )
    run_id = answer["latestRun"]["id"]
    get(client, "/namespaces/etl/jobs/load", 404)
    get(client, "/namespaces/etl/jobs/load/runs", 404)
    get(client, f"/jobs/runs/{run_id}", 404)  # a deleted job's runs go with it
    get(client, f"/jobs/runs/{run_id}/facets", 404, type="run")
    vertical = client.get("/api/warehouse/v1/lineage/vertical", params={"nodeId": f"run:{run_id}"})
    assert vertical.status_code == 404, vertical.text
    assert [j["name"] for j in get(client, "/namespaces/etl/jobs")["jobs"]] == ["summarise"]
    assert get(client, "/jobs")["totalCount"] == 1
    assert search_names(client, "load") == set()
    overview = get(client, "/overview")
    assert {n["name"]: n["jobs"] for n in overview["namespaces"]}["etl"] == 1
    assert {r["job"]["name"] for r in overview["latestRuns"]} == {"summarise"}
    nodes, _ = graph_ids(client, CLEAN)
    assert LOAD not in nodes and RAW not in nodes and SUMMARISE in nodes


def test_a_deleted_namespace_hides_everything_in_it(published: TestClient) -> None:
    client = published
    answer = delete(client, "/namespaces/lake")
    assert answer["name"] == "lake"
    get(client, "/namespaces/lake", 404)
    get(client, "/namespaces/lake/datasets", 404)
    assert [n["name"] for n in get(client, "/namespaces")["namespaces"]] == ["etl"]
    assert search_names(client, "a") == {"etl.load", "etl.summarise"}
    assert [n["name"] for n in get(client, "/overview")["namespaces"]] == ["etl"]
    assert graph_ids(client, LOAD)[0] == {LOAD}
    found = client.get("/api/warehouse/v1/nodes", params={"type": "namespace", "name": "l"}).json()["nodes"]
    assert [n["nodeID"] for n in found] == ["namespace:etl"]  # the warehouse's node search too
    delete(client, "/namespaces/lake", 404)


def test_unknown_names_are_404(client: TestClient) -> None:
    assert "namespace 'nope' not found" in delete(client, "/namespaces/nope", 404)["message"]
    post(client, *lineage_events())  # stored, not yet in the model
    delete(client, "/namespaces/lake/datasets/clean", 404)
    delete(client, "/namespaces/etl/jobs/load", 404)


@pytest.fixture
def keyed(store: EventStore, database_url: str) -> Iterator[TestClient]:
    settings = Settings(database_url=database_url, write_keys=("w-key",), read_keys=("r-key",))
    with TestClient(create_app(settings, store)) as test_client:
        yield test_client


def test_deleting_takes_a_write_key(keyed: TestClient, store: EventStore, pipeline: Pipeline) -> None:
    write = {"Authorization": "Bearer w-key"}
    for event in lineage_events():
        assert keyed.post(f"{API}/lineage", json=event, headers=write).status_code == 201
    pipeline.run_once()
    path = f"{API}/namespaces/lake/datasets/clean"
    assert keyed.delete(path).status_code == 401
    refused = keyed.delete(path, headers={"Authorization": "Bearer r-key"})
    assert refused.status_code == 403 and "may not delete" in refused.json()["message"]
    assert keyed.get(path, headers={"Authorization": "Bearer r-key"}).status_code == 200
    assert keyed.delete(path, headers=write).status_code == 200
    assert keyed.get(path, headers={"Authorization": "Bearer r-key"}).status_code == 404
