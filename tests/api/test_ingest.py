"""POST /api/v1/lineage and /batch: single events, arrays, NDJSON, gzip, limits, keys, bad input."""

from __future__ import annotations

import gzip
import json
import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from headwater.api.app import create_app
from headwater.config import Settings
from headwater.events.limits import DEPTH_REASON, MAX_JSON_DEPTH
from headwater.ingest import metrics
from headwater.store import EventStore, open_store
from tests.factories import facet, nested_event, run_event

JSON = {"content-type": "application/json"}


def test_one_event_is_stored_and_answered_with_its_event_id(client: TestClient, store: EventStore) -> None:
    response = client.post("/api/v1/lineage", json=run_event())
    assert response.status_code == 201
    event_id = response.json()["eventId"]
    assert uuid.UUID(event_id).version == 1
    assert store.get_event(event_id) is not None


def test_the_same_event_twice_succeeds_twice_with_one_id_and_one_row(
    client: TestClient, store: EventStore
) -> None:
    event = run_event()
    first = client.post("/api/v1/lineage", json=event)
    second = client.post("/api/v1/lineage", json=event)
    assert first.status_code == 201 and second.status_code == 200
    assert first.json()["eventId"] == second.json()["eventId"]
    assert second.json()["duplicate"] is True
    assert store.count_events(after_time=None, before_time=None) == 1


def test_a_bad_event_gets_400_naming_the_field(client: TestClient, store: EventStore) -> None:
    event = run_event()
    event["run"]["runId"] = ""  # any other string is a run id (one that is no UUID, with a warning)
    response = client.post("/api/v1/lineage", json=event)
    assert response.status_code == 400
    assert response.json()["message"] == "run.runId: must not be empty"
    assert store.count_events(after_time=None, before_time=None) == 0


def test_facet_warnings_are_returned_and_the_event_stored(client: TestClient, store: EventStore) -> None:
    event = run_event()
    event["inputs"][0]["facets"] = {"schema": facet("SchemaDatasetFacet", "1-1-1", fields="oops")}
    response = client.post("/api/v1/lineage", json=event)
    assert response.status_code == 201
    warnings = response.json()["warnings"]
    assert warnings and warnings[0].startswith("inputs[0].facets.schema: ")
    stored = store.get_event(response.json()["eventId"])
    assert stored is not None and stored.untrusted_facets == ("inputs[0].facets.schema",)


def test_a_batch_keeps_good_events_when_others_are_bad(client: TestClient, store: EventStore) -> None:
    bad = run_event()
    del bad["job"]["name"]
    batch = [run_event(job="a"), bad, run_event(job="b"), "not an event"]
    response = client.post("/api/v1/lineage/batch", json=batch)
    assert response.status_code == 207
    results = response.json()
    assert [r["index"] for r in results] == [0, 1, 2, 3]
    assert [r["status"] for r in results] == [201, 400, 201, 400]
    assert results[1]["error"] == "job.name: is required"
    assert "eventId" in results[0] and "eventId" not in results[1]
    assert store.count_events(after_time=None, before_time=None) == 2


def test_an_all_good_batch_is_200_and_an_all_bad_one_400(client: TestClient) -> None:
    assert client.post("/api/v1/lineage/batch", json=[run_event(), run_event()]).status_code == 200
    assert client.post("/api/v1/lineage/batch", json=[{}, []]).status_code == 400


def test_an_array_posted_to_lineage_is_a_batch(client: TestClient, store: EventStore) -> None:
    response = client.post("/api/v1/lineage", json=[run_event(), run_event()])
    assert response.status_code == 200
    assert len(response.json()) == 2
    assert store.count_events(after_time=None, before_time=None) == 2


def test_ndjson_with_a_malformed_line_stores_the_rest(client: TestClient, store: EventStore) -> None:
    body = "\n".join([json.dumps(run_event()), "{broken", "", json.dumps(run_event())]) + "\n"
    response = client.post(
        "/api/v1/lineage/batch", content=body, headers={"content-type": "application/x-ndjson"}
    )
    assert response.status_code == 207
    results = response.json()
    assert [r["status"] for r in results] == [201, 400, 201]
    assert results[1]["error"].startswith("line 2: malformed JSON")
    assert store.count_events(after_time=None, before_time=None) == 2


def test_a_batch_keeps_its_good_events_beside_ones_its_parsers_refuse(
    client: TestClient, store: EventStore
) -> None:
    # JSON's grammar allows an escaped lone surrogate and a number beyond a double; the parsers
    # refuse them, which used to make the whole array a 400 and lose the events beside them
    good = [run_event(job="a"), run_event(job="b"), run_event(job="c")]
    surrogate = json.dumps(run_event(job="x")).replace('"x"', '"\\ud800"', 1)
    too_large = json.dumps(run_event(job="y")).replace('"eventType"', '"n": 1e400, "eventType"', 1)
    items = [json.dumps(good[0]), surrogate, json.dumps(good[1]), too_large, json.dumps(good[2])]
    body = "[ " + " ,\n".join(items) + " ]"
    response = client.post("/api/v1/lineage/batch", content=body, headers=JSON)
    assert response.status_code == 207
    results = response.json()
    assert [r["status"] for r in results] == [201, 400, 201, 400, 201]
    assert "surrogate" in results[1]["error"] and "infinity" in results[3]["error"]
    listed = client.get("/api/v1/events/lineage", params={"limit": 10}).json()["events"]
    assert sorted(e["job"]["name"] for e in listed) == ["a", "b", "c"]
    assert {json.dumps(e, sort_keys=True) for e in listed} == {json.dumps(e, sort_keys=True) for e in good}


def test_events_nested_too_deep_are_refused_and_the_rest_of_a_batch_kept(
    client: TestClient, store: EventStore
) -> None:
    # Parsers recurse once a level: an event nested past about 1,000 was a 500 that lost the good
    # events of its batch; one a little less deep was taken on one ingest path and not another
    deepest = client.post(
        "/api/v1/lineage", content=nested_event(MAX_JSON_DEPTH, job="deepest"), headers=JSON
    )
    assert deepest.status_code == 201, deepest.text
    for depth in (MAX_JSON_DEPTH + 1, 990, 5000):
        single = client.post("/api/v1/lineage", content=nested_event(depth), headers=JSON)
        assert single.status_code == 400 and single.json()["errors"] == [DEPTH_REASON], (depth, single.text)
        zipped = client.post(
            "/api/v1/lineage",
            content=gzip.compress(nested_event(depth)),
            headers={**JSON, "Content-Encoding": "gzip"},
        )
        assert zipped.status_code == 400 and zipped.json()["errors"] == [DEPTH_REASON]
    good = [json.dumps(run_event(job=name)).encode() for name in ("a", "b", "c")]
    body = b"[" + b",".join([good[0], nested_event(5000), good[1], nested_event(600), good[2]]) + b"]"
    batch = client.post("/api/v1/lineage/batch", content=body, headers=JSON)
    assert batch.status_code == 207
    assert [(r["status"], r.get("errors")) for r in batch.json()] == [
        (201, None),
        (400, [DEPTH_REASON]),
        (201, None),
        (400, [DEPTH_REASON]),
        (201, None),
    ]
    lines = b"\n".join([good[0], nested_event(5000)])
    ndjson = client.post(
        "/api/v1/lineage/batch", content=lines, headers={"Content-Type": "application/x-ndjson"}
    )
    assert [(r["status"], r.get("errors")) for r in ndjson.json()] == [
        (200, None),
        (400, [f"line 2: {DEPTH_REASON}"]),
    ]
    listed = client.get("/api/v1/events/lineage", params={"limit": 10}).json()["events"]
    assert sorted(e["job"]["name"] for e in listed) == ["a", "b", "c", "deepest"]


def test_an_array_broken_between_its_items_is_still_one_400(client: TestClient) -> None:
    body = "[" + json.dumps(run_event()) + " " + json.dumps(run_event()) + "]"  # no comma
    response = client.post("/api/v1/lineage/batch", content=body, headers=JSON)
    assert response.status_code == 400
    assert "malformed JSON" in response.json()["message"]


def test_names_too_long_for_the_model_are_refused_and_the_rest_of_a_batch_kept(
    client: TestClient, store: EventStore
) -> None:
    # PostgreSQL refused them at the insert (a 503 its producer would retry forever), or took
    # them and then failed every pipeline pass on the model's indexes
    long_job = run_event(job="j" * 3000)
    long_input = run_event(inputs=[{"namespace": "ns", "name": "d" * 3000}])
    single = client.post("/api/v1/lineage", json=long_job)
    assert single.status_code == 400
    assert single.json()["message"] == "job.name: is 3000 bytes long; a name may have at most 600"
    batch = client.post("/api/v1/lineage/batch", json=[run_event(), long_input, run_event()])
    assert [r["status"] for r in batch.json()] == [201, 400, 201]
    assert batch.json()[1]["error"].startswith("inputs[0].name: is 3000 bytes long")
    assert store.count_events(after_time=None, before_time=None) == 2


def test_gzip_bodies_are_accepted(client: TestClient, store: EventStore) -> None:
    body = gzip.compress(json.dumps(run_event()).encode())
    response = client.post(
        "/api/v1/lineage",
        content=body,
        headers={"content-type": "application/json", "content-encoding": "gzip"},
    )
    assert response.status_code == 201
    assert store.get_event(response.json()["eventId"]) is not None


def test_broken_gzip_is_400(client: TestClient) -> None:
    response = client.post(
        "/api/v1/lineage",
        content=b"\x1f\x8bnot gzip at all",
        headers={"content-type": "application/json", "content-encoding": "gzip"},
    )
    assert response.status_code == 400
    assert "gzip" in response.json()["message"]


def test_malformed_json_is_400_with_its_position(client: TestClient) -> None:
    response = client.post(
        "/api/v1/lineage", content=b'{"eventTime": }', headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert "line 1, column 15" in response.json()["message"]


@pytest.mark.parametrize(
    "content_type", ["text/html", "application/xml", "application/x-www-form-urlencoded"]
)
def test_unsupported_content_types_are_415(client: TestClient, content_type: str) -> None:
    response = client.post("/api/v1/lineage", content=b"{}", headers={"content-type": content_type})
    assert response.status_code == 415


def test_unsupported_content_encoding_is_415(client: TestClient) -> None:
    response = client.post(
        "/api/v1/lineage",
        content=b"{}",
        headers={"content-type": "application/json", "content-encoding": "br"},
    )
    assert response.status_code == 415


def test_bodies_over_the_limit_are_413_even_when_gzipped(store: EventStore, database_url: str) -> None:
    settings = Settings(database_url=database_url, max_body_bytes=4096)
    with TestClient(create_app(settings, store)) as small:
        big = run_event(run_facets={"note": facet("Custom", text="x" * 5000)})
        assert small.post("/api/v1/lineage", json=big).status_code == 413
        bomb = gzip.compress(b"[" + b" " * 100_000 + b"]")
        response = small.post(
            "/api/v1/lineage",
            content=bomb,
            headers={"content-type": "application/json", "content-encoding": "gzip"},
        )
        assert response.status_code == 413
        assert small.post("/api/v1/lineage", json=run_event()).status_code == 201


def test_too_many_events_in_one_request_is_413(store: EventStore, database_url: str) -> None:
    settings = Settings(database_url=database_url, max_batch_events=3)
    with TestClient(create_app(settings, store)) as small:
        assert small.post("/api/v1/lineage/batch", json=[run_event() for _ in range(4)]).status_code == 413


def test_empty_bodies_are_400(client: TestClient) -> None:
    assert (
        client.post("/api/v1/lineage", content=b"", headers={"content-type": "application/json"}).status_code
        == 400
    )


@pytest.mark.parametrize(
    "body",
    [b"null", b"42", b'"text"', b"[[]]", b'{"run": {"runId": {"$gt": 1}}}', b"\xff\xfe", b"{" * 5000],
)
def test_strange_input_never_causes_a_500(client: TestClient, body: bytes) -> None:
    response = client.post("/api/v1/lineage", content=body, headers={"content-type": "application/json"})
    assert 400 <= response.status_code < 500


class TestApiKeys:
    @pytest.fixture
    def keyed(self, store: EventStore, database_url: str) -> TestClient:
        settings = Settings(database_url=database_url, write_keys=("w1", "w2"), read_keys=("r1",))
        with TestClient(create_app(settings, store)) as test_client:
            yield test_client  # type: ignore[misc]

    def test_writes_need_a_write_key(self, keyed: TestClient) -> None:
        assert keyed.post("/api/v1/lineage", json=run_event()).status_code == 401
        assert (
            keyed.post(
                "/api/v1/lineage", json=run_event(), headers={"Authorization": "Bearer nope"}
            ).status_code
            == 401
        )
        assert (
            keyed.post(
                "/api/v1/lineage", json=run_event(), headers={"Authorization": "Bearer r1"}
            ).status_code
            == 403
        )
        assert (
            keyed.post("/api/v1/lineage", json=run_event(), headers={"Authorization": "Basic w1"}).status_code
            == 401
        )
        assert (
            keyed.post(
                "/api/v1/lineage", json=run_event(), headers={"Authorization": "Bearer w2"}
            ).status_code
            == 201
        )

    def test_reads_need_a_read_key(self, keyed: TestClient) -> None:
        event = run_event()
        keyed.post("/api/v1/lineage", json=event, headers={"Authorization": "Bearer w1"})
        path = f"/api/atlas/v2/openlineage/runs/{event['run']['runId']}"
        assert keyed.get(path).status_code == 401
        assert keyed.get(path, headers={"Authorization": "Bearer w1"}).status_code == 403
        assert keyed.get(path, headers={"Authorization": "Bearer r1"}).status_code == 200
        assert keyed.get("/api/v1/events/lineage").status_code == 401

    def test_health_and_docs_stay_open(self, keyed: TestClient) -> None:
        assert keyed.get("/api/atlas/v2/openlineage/health").status_code == 200
        assert keyed.get("/openapi.json").status_code == 200


def test_openapi_documents_every_route(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for route in (
        "/api/v1/lineage",
        "/api/v1/lineage/batch",
        "/api/atlas/v2/openlineage/runs/{runId}",
        "/api/atlas/v2/openlineage/runs/{runId}/events/{eventId}",
        "/api/atlas/v2/openlineage/health",
        "/api/v1/events/lineage",
    ):
        assert route in paths
    assert client.get("/docs").status_code == 200


def test_nul_characters_in_names_are_stored_on_every_backend(client: TestClient, store: EventStore) -> None:
    event = run_event(job="odd\u0000name")
    response = client.post("/api/v1/lineage", json=event)
    assert response.status_code == 201
    stored = store.get_event(response.json()["eventId"])
    assert stored is not None and "\\u0000" in stored.payload


def test_several_worker_processes_share_one_store(database_url: str) -> None:
    import httpx

    from tests.conftest import LiveServer

    server = LiveServer(database_url, "--workers", "2")
    try:
        run_id = str(uuid.uuid4())
        with httpx.Client(base_url=server.url) as http:
            for second in range(20):
                event = run_event(run_id, event_type="RUNNING", event_time=f"2024-01-01T00:00:{second:02d}Z")
                assert http.post("/api/v1/lineage", json=event).status_code == 201
            body = http.get(f"/api/atlas/v2/openlineage/runs/{run_id}", params={"pageSize": 50}).json()
        assert body["eventCount"] == 20
    finally:
        server.stop()


# -- the lean path: LeanIngest answers these routes before FastAPI; a query string takes the route ----
def _cases() -> list[tuple[str, bytes, dict[str, str]]]:
    good, warned, bad = run_event(), run_event(), run_event()
    warned["inputs"][0]["facets"] = {"schema": facet("SchemaDatasetFacet", "1-1-1", fields="oops")}
    del bad["job"]["name"]
    plain = {"content-type": "application/json"}
    ndjson = {"content-type": "application/x-ndjson"}
    return [
        ("/api/v1/lineage", json.dumps(good).encode(), plain),
        ("/api/v1/lineage", json.dumps(good).encode(), plain),  # stored before: 200, duplicate
        ("/api/v1/lineage", json.dumps(warned, indent=2).encode(), plain),
        ("/api/v1/lineage", json.dumps(bad).encode(), plain),
        ("/api/v1/lineage", json.dumps([run_event(), bad, "x", warned]).encode(), plain),
        ("/api/v1/lineage/batch", json.dumps(run_event()).encode(), plain),
        ("/api/v1/lineage/batch", json.dumps([bad, {}]).encode(), plain),
        ("/api/v1/lineage/batch", f"{json.dumps(run_event())}\n{{broken\n".encode(), ndjson),
        ("/api/v1/lineage", b'{"eventTime": }', plain),
        ("/api/v1/lineage", b"", plain),
        ("/api/v1/lineage", json.dumps(good).encode(), {"content-type": "text/plain"}),
        (
            "/api/v1/lineage",
            gzip.compress(json.dumps(run_event()).encode()),
            {**plain, "content-encoding": "gzip"},
        ),
    ]


def test_the_lean_path_answers_byte_for_byte_like_the_routes(
    client: TestClient, store: EventStore, tmp_path: Path
) -> None:
    other_url = f"sqlite:///{tmp_path}/routed.db"
    other_store = open_store(other_url)
    try:
        with TestClient(create_app(Settings(database_url=other_url), other_store)) as routed:
            for path, body, headers in _cases():
                lean = client.post(path, content=body, headers=headers)
                # A query string goes through FastAPI's routing to the route functions.
                through_route = routed.post(f"{path}?via=route", content=body, headers=headers)
                assert (lean.status_code, lean.content) == (through_route.status_code, through_route.content)
                assert lean.headers["content-type"] == through_route.headers["content-type"]
    finally:
        other_store.close()


def test_each_event_of_an_array_is_stored_as_sent(client: TestClient, store: EventStore) -> None:
    """Equal as JSON: the store keeps each facet value once and gives the event back whole."""
    first, second = json.dumps(run_event(), indent=2), json.dumps(run_event(), separators=(", ", ": "))
    response = client.post("/api/v1/lineage/batch", content=f"[\n{first} ,\n  {second}\n]".encode())
    assert response.status_code == 200
    for answer, sent in zip(response.json(), (first, second), strict=True):
        stored = store.get_event(answer["eventId"])
        assert stored is not None and json.loads(stored.payload) == json.loads(sent)


def test_the_lean_path_counts_its_requests(client: TestClient) -> None:
    before = metrics.HTTP_REQUESTS.value(status=201), metrics.HTTP_REQUESTS.value(status=400)
    client.post("/api/v1/lineage", json=run_event())
    client.post("/api/v1/lineage", json={"eventTime": "now"})
    after = metrics.HTTP_REQUESTS.value(status=201), metrics.HTTP_REQUESTS.value(status=400)
    assert (after[0] - before[0], after[1] - before[1]) == (1, 1)


def test_events_of_a_batch_decoded_in_one_pass_may_still_leave_the_lean_path(
    client: TestClient, store: EventStore
) -> None:
    """An array of RunEvents is decoded in one pass without each event's bytes; an event kept
    whole (a facet that is not an object) or one the lean path leaves to the full one (a runId
    that is not a UUID) takes its own bytes then, and is answered as when sent alone."""
    whole = run_event()
    whole["run"]["facets"] = {"odd": 3}
    lenient = run_event()
    lenient["run"]["runId"] = "dag_run_2024-11-26"
    sent = [json.dumps(doc, indent=1) for doc in (run_event(), whole, lenient, run_event())]
    response = client.post("/api/v1/lineage/batch", content=("[" + ", ".join(sent) + "]").encode())
    assert response.status_code == 200
    for answer, text in zip(response.json(), sent, strict=True):
        stored = store.get_event(answer["eventId"])
        assert stored is not None and json.loads(stored.payload) == json.loads(text)
        alone = client.post("/api/v1/lineage", content=text.encode()).json()
        assert (alone["eventId"], alone.get("warnings")) == (answer["eventId"], answer.get("warnings"))
    assert [bool(answer.get("warnings")) for answer in response.json()] == [False, True, True, False]
