"""The marquez-python client (PyPI) against a live Headwater: every read method it offers, on the
hand-written lineage published by the real pipeline (tests/query/lineage_graph.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from marquez_client import MarquezClient
from marquez_client.errors import APIError

from headwater.store import EventStore
from tests.conftest import LiveServer
from tests.query.lineage_graph import RUNS, field


@pytest.fixture(scope="module")
def marquez(model: EventStore) -> Iterator[MarquezClient]:
    server = LiveServer(model.url)
    try:
        yield MarquezClient(url=server.url)
    finally:
        server.stop()


def test_namespaces_and_sources(marquez: MarquezClient) -> None:
    names = {n["name"] for n in marquez.list_namespaces()["namespaces"]}
    assert names == {"ns", "warehouse"}
    assert marquez.get_namespace("ns")["name"] == "ns"
    assert [s["name"] for s in marquez.list_sources()["sources"]] == ["lake"]
    assert marquez.get_source("lake")["connectionUrl"] == "s3://lake"
    with pytest.raises(APIError):
        marquez.get_namespace("nope")


def test_datasets_and_their_versions(marquez: MarquezClient) -> None:
    listed = marquez.list_datasets("ns")
    assert {d["name"] for d in listed["datasets"]} == {"a", "b", "c", "d", "e", "f", "g", "h", "s"}
    d = marquez.get_dataset("ns", "d")
    assert [f["name"] for f in d["fields"]] == ["x", "y"]
    versions = marquez.list_dataset_versions("ns", "d")["versions"]
    assert versions, "d was written by two runs"
    one = marquez.get_dataset_version("ns", "d", versions[0]["version"])
    assert one["version"] == versions[0]["version"]
    # the same schema written twice is one version, not one per run (marquez#3082)
    assert len(versions) == 1
    # the other name of the symlinked dataset a
    assert marquez.get_dataset("warehouse", "public.a")["name"] == "public.a"


def test_jobs_and_runs(marquez: MarquezClient) -> None:
    jobs = {j["name"] for j in marquez.list_jobs("ns")["jobs"]}
    assert jobs == {
        "orchestrator",
        "load",
        "extract",
        "audit",
        "transform",
        "report",
        "enrich",
        "fix_e",
        "publish",
    }
    transform = marquez.get_job("ns", "transform")
    assert {i["name"] for i in transform["inputs"]} == {"b", "c"}
    runs = marquez.list_job_runs("ns", "transform")["runs"]
    assert [r["id"] for r in runs] == [RUNS["transform_v2"], RUNS["transform_v1"]]
    assert marquez.get_job_run(RUNS["report"])["state"] == "COMPLETED"


def test_tags(marquez: MarquezClient) -> None:
    marquez.create_tag("pii", "personal data")
    marquez.tag_dataset("ns", "d", "pii")
    marquez.tag_dataset_field("ns", "d", "y", "pii")
    assert "pii" in {t["name"] for t in marquez.list_tags()["tags"]}
    d = marquez.get_dataset("ns", "d")
    assert "pii" in d["tags"]
    assert "pii" in next(f for f in d["fields"] if f["name"] == "y")["tags"]


def test_events(marquez: MarquezClient) -> None:
    everything = marquez.list_events(limit=1000)
    assert everything["totalCount"] == len(everything["events"]) == 21  # 10 runs of 2 events, 1 symlink
    assert marquez.list_events("ns", limit=1000)["totalCount"] == 21  # every job and dataset event is in ns
    assert marquez.list_events("warehouse", limit=1000) == {"events": [], "totalCount": 0}
    assert len(marquez.list_events(limit=5)["events"]) == 5


def test_column_lineage(marquez: MarquezClient) -> None:
    by_field = marquez.get_column_lineage_by_dataset_field("ns", "d", "y")
    assert {n["id"] for n in by_field["graph"]} == {field("d", "y"), field("c", "y"), field("b", "flag")}
    by_dataset = marquez.get_column_lineage_by_dataset("ns", "d")
    assert {n["id"] for n in by_dataset["graph"]} >= {field("d", "x"), field("d", "y"), field("b", "x")}
    by_job = marquez.get_column_lineage_by_job("ns", "transform")
    assert {n["id"] for n in by_job["graph"]} == {n["id"] for n in by_dataset["graph"]}
    downstream = marquez.get_column_lineage_by_dataset_field("ns", "b", "x", with_downstream=True)
    assert {n["id"] for n in downstream["graph"]} == {field("b", "x"), field("d", "x")}
    version = marquez.list_dataset_versions("ns", "d")["versions"][0]["version"]
    pinned = marquez.get_column_lineage_by_dataset_field("ns", "d", "y", version=version)
    # the version was created on day 1, when d.y was computed from nothing declared yet
    assert {n["id"] for n in pinned["graph"]} == {field("d", "y")}
