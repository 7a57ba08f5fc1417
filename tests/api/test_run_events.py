"""The Atlas-style run-events API and Marquez' event listing, read over HTTP."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from fastapi.testclient import TestClient

from headwater.api.app import create_app
from headwater.config import Settings
from headwater.store.postgres.store import PostgresEventStore
from tests.factories import run_event

RUNS = "/api/atlas/v2/openlineage/runs"


def post(client: TestClient, event: dict) -> str:  # type: ignore[type-arg]
    response = client.post("/api/v1/lineage", json=event)
    assert response.status_code == 201, response.text
    return str(response.json()["eventId"])


def test_a_run_reads_back_newest_first_in_the_atlas_envelope(client: TestClient) -> None:
    run_id = str(uuid.uuid4())
    start = post(client, run_event(run_id, event_type="START", event_time="2024-01-01T00:00:00Z"))
    done = post(client, run_event(run_id, event_type="COMPLETE", event_time="2024-01-01T00:05:00.25Z"))
    body = client.get(f"{RUNS}/{run_id}").json()
    assert body["success"] is True and body["error"] is None
    assert body["runId"] == run_id and body["eventCount"] == 2 and body["pageSize"] == 25
    assert body["nextPagingState"] is None
    first, second = body["events"]
    assert [first["eventId"], second["eventId"]] == [done, start]
    assert first["status"] == "COMPLETE" and first["jobName"] == "etl.load_orders"
    assert first["eventTime"] == "2024-01-01T00:05:00.250Z"
    assert first["source"] == "https://github.com/example/headwater-tests/v1"
    assert first["event"]["run"]["runId"] == run_id and first["event"]["eventType"] == "COMPLETE"


def test_paging_returns_every_event_once(client: TestClient) -> None:
    run_id = str(uuid.uuid4())
    sent = {
        post(client, run_event(run_id, event_type="RUNNING", event_time=f"2024-01-01T00:00:{s:02d}Z"))
        for s in range(7)
    }
    seen: list[str] = []
    state = None
    pages = 0
    while True:
        params = {"pageSize": 3, **({"pagingState": state} if state else {})}
        body = client.get(f"{RUNS}/{run_id}", params=params).json()
        seen += [e["eventId"] for e in body["events"]]
        pages += 1
        state = body["nextPagingState"]
        if state is None:
            break
    assert pages == 3 and len(seen) == 7 and set(seen) == sent


def test_include_children(client: TestClient) -> None:
    parent, child = str(uuid.uuid4()), str(uuid.uuid4())
    post(client, run_event(parent, event_time="2024-01-01T00:00:00Z"))
    post(client, run_event(child, parent=parent, event_time="2024-01-01T00:00:01Z"))
    assert client.get(f"{RUNS}/{parent}").json()["eventCount"] == 1
    tree = client.get(f"{RUNS}/{parent}", params={"includeChildren": "true"}).json()
    assert [e["runId"] for e in tree["events"]] == [child, parent]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"pageSize": "0"}, "pageSize: 0 is outside"),
        ({"pageSize": "ten"}, "pageSize: 'ten' is not a whole number"),
        ({"pageSize": "100000"}, "pageSize: 100000 is outside"),
        ({"pagingState": "garbage!"}, "pagingState:"),
    ],
)
def test_bad_paging_parameters_are_400_in_the_envelope(
    client: TestClient, params: dict, message: str
) -> None:  # type: ignore[type-arg]
    run_id = str(uuid.uuid4())
    post(client, run_event(run_id))
    response = client.get(f"{RUNS}/{run_id}", params=params)
    assert response.status_code == 400
    body = response.json()
    assert body["success"] is False and body["message"].startswith(message) and body["events"] == []


def test_a_paging_state_of_another_run_is_refused(client: TestClient) -> None:
    one, two = str(uuid.uuid4()), str(uuid.uuid4())
    for run_id in (one, two):
        for second in range(3):
            post(client, run_event(run_id, event_time=f"2024-01-01T00:00:0{second}Z"))
    state = client.get(f"{RUNS}/{one}", params={"pageSize": 1}).json()["nextPagingState"]
    response = client.get(f"{RUNS}/{two}", params={"pagingState": state})
    assert response.status_code == 400 and "another query" in response.json()["message"]


def test_unknown_runs_and_events_are_404_bad_ids_400(client: TestClient) -> None:
    assert client.get(f"{RUNS}/{uuid.uuid4()}").status_code == 404
    response = client.get(f"{RUNS}/not-a-uuid")  # any run id is looked up (docs/events.md)
    assert response.status_code == 404 and response.json()["message"] == "run not-a-uuid has no events"
    assert client.get(f"{RUNS}/").json()["message"] == "runId: required, the id of a run"
    run_id = str(uuid.uuid4())
    event_id = post(client, run_event(run_id))
    assert client.get(f"{RUNS}/{run_id}/events/{uuid.uuid4()}").status_code == 404
    assert client.get(f"{RUNS}/{uuid.uuid4()}/events/{event_id}").status_code == 404
    one = client.get(f"{RUNS}/{run_id}/events/{event_id}").json()
    assert one["success"] and one["events"][0]["eventId"] == event_id


def test_marquez_event_listing(client: TestClient) -> None:
    for day in range(1, 6):
        post(client, run_event(event_time=f"2024-03-0{day}T12:00:00Z"))
    body = client.get("/api/v1/events/lineage", params={"limit": 2}).json()
    assert body["totalCount"] == 5
    assert [e["eventTime"] for e in body["events"]] == ["2024-03-05T12:00:00Z", "2024-03-04T12:00:00Z"]
    window = client.get(
        "/api/v1/events/lineage",
        params={"after": "2024-03-02T00:00:00Z", "before": "2024-03-04T00:00:00Z", "sortDirection": "asc"},
    ).json()
    assert window["totalCount"] == 2
    assert [e["eventTime"][:10] for e in window["events"]] == ["2024-03-02", "2024-03-03"]
    paged = client.get("/api/v1/events/lineage", params={"limit": 2, "offset": 4}).json()
    assert len(paged["events"]) == 1


@pytest.mark.parametrize(
    "params", [{"limit": "-1"}, {"offset": "x"}, {"sortDirection": "up"}, {"before": "soon"}]
)
def test_marquez_listing_rejects_bad_parameters(client: TestClient, params: dict) -> None:  # type: ignore[type-arg]
    response = client.get("/api/v1/events/lineage", params=params)
    assert response.status_code == 400
    assert response.json()["message"].startswith(next(iter(params)))


def test_health_is_503_when_the_store_is_unreachable(postgres_admin_url: str) -> None:
    name = f"headwater_gone_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = postgres_admin_url.rsplit("/", 1)[0] + "/" + name
    store = PostgresEventStore(url)
    store.migrate()
    try:
        with TestClient(create_app(Settings(database_url=url), store)) as client:
            assert client.get("/api/atlas/v2/openlineage/health").status_code == 200
            with psycopg.connect(postgres_admin_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
            response = client.get("/api/atlas/v2/openlineage/health")
            assert response.status_code == 503
            assert response.json()["success"] is False
            write = client.post("/api/v1/lineage", json=run_event())
            assert write.status_code == 503
    finally:
        store.close()
