"""Run ids that are not UUIDs, end to end on both backends: accepted with a warning at ingest,
through a pipeline pass, and read back by every API that takes a run id (percent-encoded in paths,
as the web UI sends them)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from pyspark.sql import SparkSession

from headwater.pipeline.runner import Pipeline
from headwater.store.base import EventStore
from tests.factories import run_event
from tests.pipeline.conftest import spark

__all__ = ["spark"]

ATLAS = "/api/atlas/v2/openlineage/runs"
MARQUEZ = "/api/v1/jobs/runs"
ROOT = "run_id"  # a hand-written producer's id
PARENT = "dag_run_2024-11-26"  # a scheduler's own id
CHILD = "a/b c%"  # a slash, a space and a percent sign
ODD = "Ärger #7 \u65e5\u672c:x"  # non-ASCII, a hash and a colon (node ids hold it whole)
IDS = (ROOT, PARENT, CHILD, ODD)


def path_of(run_id: str) -> str:
    return quote(run_id, safe="")  # what encodeURIComponent gives


def post(client: TestClient, event: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/api/v1/lineage", json=event)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.fixture
def ingested(client: TestClient) -> dict[str, list[str]]:
    """START and COMPLETE of each run; CHILD's parent facet names PARENT and, as its root, ROOT.
    Answers each run's event ids, newest first."""
    events: dict[str, list[str]] = {}
    for hour, run_id in enumerate(IDS):
        child = run_id == CHILD
        job = f"job_{hour}"
        for minute, event_type in ((0, "START"), (5, "COMPLETE")):
            event = run_event(
                run_id,
                event_type=event_type,
                event_time=f"2024-11-26T0{hour}:0{minute}:00Z",
                job=job,
                inputs=[],
                outputs=[{"namespace": "lake", "name": f"out_{hour}"}],
                parent=PARENT if child else None,
                root=ROOT if child else None,
            )
            answer = post(client, event)
            expected = [f"run.runId: {run_id!r} is not a UUID"]
            if child:
                expected += [
                    f"run.facets.parent.run.runId: {PARENT!r} is not a UUID",
                    f"run.facets.parent.root.run.runId: {ROOT!r} is not a UUID",
                ]
            assert answer["warnings"] == expected
            events.setdefault(run_id, []).insert(0, answer["eventId"])
    return events


def read_run(client: TestClient, run_id: str, ingested: dict[str, list[str]]) -> None:
    """The run's events through the Atlas API, and the run through the node id `run:{runId}`."""
    body = client.get(f"{ATLAS}/{path_of(run_id)}").json()
    assert body["success"] is True, body
    assert body["runId"] == run_id and body["eventCount"] == 2
    assert [e["eventId"] for e in body["events"]] == ingested[run_id]  # newest first
    assert (
        {e["runId"] for e in body["events"]}
        == {e["event"]["run"]["runId"] for e in body["events"]}
        == {run_id}
    )
    vertical = client.get("/api/warehouse/v1/lineage/vertical", params={"nodeId": f"run:{run_id}"})
    assert vertical.status_code == 200, vertical.text
    run = next(v for v in vertical.json()["vertices"] if v["nodeID"] == f"run:{run_id}")
    assert run["displayName"] == run_id and run["properties"]["state"] == "COMPLETED"
    upstream = client.get("/api/v1/runlineage/upstream", params={"runId": run_id})
    assert upstream.status_code == 200, upstream.text
    assert upstream.json()["runs"][0]["run"]["id"] == run_id


def read_marquez_run(client: TestClient, run_id: str) -> None:
    run = client.get(f"{MARQUEZ}/{path_of(run_id)}")
    assert run.status_code == 200, run.text
    assert run.json()["id"] == run_id and run.json()["state"] == "COMPLETED"
    facets = client.get(f"{MARQUEZ}/{path_of(run_id)}/facets", params={"type": "run"})
    assert facets.status_code == 200 and facets.json()["runId"] == run_id


def test_run_ids_that_are_no_uuids_work_through_every_run_api(
    client: TestClient, store: EventStore, spark: SparkSession, ingested: dict[str, list[str]]
) -> None:
    Pipeline(spark, store, dogfood=False, partitions=2).run_once()
    for run_id in IDS:
        read_run(client, run_id, ingested)
        read_marquez_run(client, run_id)

    # parent and root ids that are no UUIDs link the runs
    child = store.get_run(CHILD)
    assert child is not None and (child.parent_run_id, child.root_run_id) == (PARENT, ROOT)
    for family in (PARENT, ROOT):
        tree = client.get(f"{ATLAS}/{path_of(family)}", params={"includeChildren": "true"}).json()
        assert {e["runId"] for e in tree["events"]} == {family, CHILD}, tree
    vertical = client.get("/api/warehouse/v1/lineage/vertical", params={"nodeId": f"run:{CHILD}"}).json()
    assert {f"run:{PARENT}", f"run:{ROOT}"} <= {v["nodeID"] for v in vertical["vertices"]}
    facets = client.get(f"{MARQUEZ}/{path_of(ROOT)}/facets", params={"type": "run"}).json()["facets"]
    assert facets == {}
    # the child's parent facet is in the model (trusted: the rest of it meets its schema)
    parent_facet = {f.name: f.value for f in child.facets}.get("parent")
    assert parent_facet is not None and f'"runId":"{PARENT}"' in parent_facet.replace(" ", "")


def test_one_event_of_a_run_whose_id_is_no_uuid(client: TestClient, ingested: dict[str, list[str]]) -> None:
    for run_id in IDS:
        event_id = ingested[run_id][0]
        one = client.get(f"{ATLAS}/{path_of(run_id)}/events/{event_id}").json()
        assert one["success"] is True and one["runId"] == run_id
        assert [e["eventId"] for e in one["events"]] == [event_id]
    assert client.get(f"{ATLAS}/{path_of(ROOT)}/events/{ingested[PARENT][0]}").status_code == 404


def test_run_ids_differ_by_case_unless_they_are_uuids(client: TestClient) -> None:
    post(client, run_event("Run_ID"))
    assert client.get(f"{ATLAS}/Run_ID").json()["eventCount"] == 1
    assert client.get(f"{ATLAS}/run_id").status_code == 404
    uuid_id = "0190C1F2-7D3E-7B3A-9C1D-6F2A8E4B5C7D"
    assert "warnings" not in post(client, run_event(uuid_id))
    for spelling in (uuid_id, uuid_id.lower()):
        assert client.get(f"{ATLAS}/{spelling}").json()["runId"] == uuid_id.lower()


@pytest.mark.parametrize(
    ("run_id", "reason"), [("", "must not be empty"), (7, "must be a string, got a number")]
)
def test_an_empty_or_non_string_run_id_is_still_400(client: TestClient, run_id: Any, reason: str) -> None:
    event = run_event()
    event["run"]["runId"] = run_id
    response = client.post("/api/v1/lineage", json=event)
    assert response.status_code == 400
    assert f"run.runId: {reason}" in response.json()["message"]


def test_bad_run_ids_in_paths_are_400_unknown_ones_404(client: TestClient) -> None:
    assert client.get(f"{ATLAS}/").status_code == 400
    assert client.get(f"{ATLAS}/a%00b").json()["message"] == "runId: holds a NUL character"
    unknown = client.get(f"{ATLAS}/{path_of('no such run')}")
    assert unknown.status_code == 404 and unknown.json()["runId"] == "no such run"
    assert client.get(f"{MARQUEZ}/{path_of('no such run')}").status_code == 404
