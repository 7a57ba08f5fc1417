"""Generic events over HTTP: POST /lineage/1/events and every browse endpoint, on both backends."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient

from headwater.api.app import create_app
from headwater.config import Settings
from headwater.events.limits import DEPTH_REASON
from headwater.store import EventStore

# The FastScore manual's example event (without its trailing comma), then what its services report
# about one model: a schema attached, the model loaded into an engine, the engine's state changes.
MANUAL_EVENTS: list[dict[str, Any]] = [
    {
        "description": "put model: model1",
        "type": "put model",
        "elements": [
            {"description": "model1", "type": "model", "tags": {"model-hash": "abcd1234"}},
            {"description": "model-manage", "type": "fastscore-service"},
        ],
        "tags": {"timestamp": "5:15"},
    },
    {
        "description": "put schema: input1",
        "type": "put schema",
        "elements": [
            {"description": "input1", "type": "schema"},
            {"description": "model-manage", "type": "fastscore-service"},
        ],
        "tags": {"timestamp": "5:16"},
    },
    {
        "description": "load model: model1",
        "type": "load model",
        "elements": [
            {"description": "model1", "type": "model", "tags": {"model-hash": "ef567890"}},
            {"description": "engine-1", "type": "fastscore-service"},
            {"description": "input1", "type": "schema"},
        ],
        "tags": {"timestamp": "5:20"},
    },
    {
        "description": "engine state: RUNNING",
        "type": "engine state",
        "elements": [{"description": "engine-1", "type": "fastscore-service", "tags": {"state": "RUNNING"}}],
        "tags": {"timestamp": "5:21"},
    },
]


def post(client: TestClient, body: Any, **headers: str) -> Any:
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    return client.post(
        "/lineage/1/events", content=content, headers={"content-type": "application/json", **headers}
    )


def test_the_manual_events_through_every_browse_endpoint(client: TestClient) -> None:
    ids = [post(client, doc).json()["id"] for doc in MANUAL_EVENTS]
    assert all(isinstance(i, int) and i > 0 for i in ids) and ids == sorted(ids)

    assert client.get("/lineage/1/element_types").json() == ["fastscore-service", "model", "schema"]
    elements = client.get("/lineage/1/elements").json()
    assert [(e["type"], e["description"]) for e in elements] == [
        ("model", "model1"),
        ("fastscore-service", "model-manage"),
        ("schema", "input1"),
        ("fastscore-service", "engine-1"),
    ]
    services = client.get("/lineage/1/elements", params={"element_type": "fastscore-service"}).json()
    assert [e["description"] for e in services] == ["model-manage", "engine-1"]

    model = client.get(f"/lineage/1/elements/{elements[0]['id']}").json()
    assert (model["id"], model["type"], model["description"]) == (elements[0]["id"], "model", "model1")
    assert [e["id"] for e in model["events"]] == [ids[2], ids[0]]  # newest first
    assert set(model["events"][0]) == {"id", "description", "timestamp", "type"}
    assert model["events"][0]["type"] == "load model" and model["events"][0]["timestamp"].endswith("Z")
    assert model["tags"] == {"model-hash": "ef567890"}  # the latest value of each key

    events = client.get("/lineage/1/events").json()
    assert [e["id"] for e in events] == ids[::-1]
    assert [e["id"] for e in client.get("/lineage/1/events", params={"type": "put schema"}).json()] == [
        ids[1]
    ]

    loaded = client.get(f"/lineage/1/events/{ids[2]}").json()
    assert (loaded["description"], loaded["type"]) == ("load model: model1", "load model")
    assert [(e["type"], e["description"]) for e in loaded["elements"]] == [
        ("model", "model1"),
        ("fastscore-service", "engine-1"),
        ("schema", "input1"),
    ]
    assert [(t["key"], t["value"]) for t in loaded["elements"][0]["tags"]] == [("model-hash", "ef567890")]
    assert loaded["elements"][1]["tags"] == []
    assert [(t["key"], t["value"]) for t in loaded["tags"]] == [("timestamp", "5:20")]

    tags = client.get("/lineage/1/tags").json()
    assert {(t["key"], t["value"]) for t in tags} >= {("model-hash", "abcd1234"), ("state", "RUNNING")}
    assert [t["value"] for t in client.get("/lineage/1/tags", params={"key": "model-hash"}).json()] == [
        "abcd1234",
        "ef567890",
    ]
    hash_tag = loaded["elements"][0]["tags"][0]
    tag = client.get(f"/lineage/1/tags/{hash_tag['id']}").json()
    assert (tag["key"], tag["value"]) == ("model-hash", "ef567890")
    assert [e["description"] for e in tag["elements"]] == ["model1"]
    assert [e["id"] for e in tag["events"]] == [ids[2]]
    time_tag = loaded["tags"][0]
    assert [e["id"] for e in client.get(f"/lineage/1/tags/{time_tag['id']}").json()["events"]] == [ids[2]]


def test_the_manual_example_as_printed_with_its_trailing_comma_is_a_clear_400(client: TestClient) -> None:
    printed = b"""{
  "description" : "put model: model1",
  "type" : "put model",
  "elements" : [
    {
      "description" : "model1",
      "type" : "model",
      "tags" : {
        "model-hash" : "abcd1234"
      }
    },
    {
      "description" : "model-manage",
      "type" : "fastscore-service",
    }
  ],
  "tags" : {
    "timestamp" : "5:15"
  }
}"""
    answer = post(client, printed)
    assert answer.status_code == 400
    assert (
        answer.json()["message"]
        == "malformed JSON at line 14, column 35 (char 288): trailing comma is not allowed"
    )
    assert post(client, b'{"type": "t", "description": ').status_code == 400
    assert client.get("/lineage/1/events").json() == []


def test_an_invalid_event_is_a_400_naming_the_path(client: TestClient) -> None:
    doc = {**MANUAL_EVENTS[0], "elements": [{"description": "m", "type": "model"}, {"description": "x"}]}
    answer = post(client, doc)
    assert answer.status_code == 400
    assert answer.json()["errors"] == ["elements[1].type: missing"]


def test_a_client_id_makes_a_resend_idempotent(client: TestClient, store: EventStore) -> None:
    first = post(client, {**MANUAL_EVENTS[0], "id": "mm-0001"})
    again = post(client, {**MANUAL_EVENTS[0], "id": "mm-0001"})
    assert first.status_code == 201 and again.status_code == 200
    assert again.json() == {"id": first.json()["id"], "status": 200, "duplicate": True}
    without = [post(client, MANUAL_EVENTS[1]).json()["id"] for _ in range(2)]
    assert without[0] != without[1]
    assert len(client.get("/lineage/1/events").json()) == 3
    stored = store.list_events(after_time=None, before_time=None, descending=False, limit=10, offset=0)
    assert [e.kind for e in stored] == ["generic"] * 3
    assert orjson.loads(stored[0].payload) == {**MANUAL_EVENTS[0], "id": "mm-0001"}


def test_batches_answer_per_event(client: TestClient) -> None:
    bad = {"type": "t", "elements": []}
    answer = post(
        client, [MANUAL_EVENTS[0], bad, {**MANUAL_EVENTS[1], "id": "a"}, {**MANUAL_EVENTS[1], "id": "a"}]
    )
    assert answer.status_code == 207
    rows = answer.json()
    assert [r["status"] for r in rows] == [201, 400, 201, 200]
    assert rows[1]["error"] == "description: missing" and "id" not in rows[1]
    assert rows[2]["id"] == rows[3]["id"]

    ndjson = b"\n".join(orjson.dumps(doc) for doc in MANUAL_EVENTS[2:]) + b"\n{not json\n"
    answer = client.post(
        "/lineage/1/events",
        content=gzip.compress(ndjson),
        headers={"content-type": "application/x-ndjson", "content-encoding": "gzip"},
    )
    assert answer.status_code == 207
    assert [r["status"] for r in answer.json()] == [201, 201, 400]
    assert answer.json()[2]["error"].startswith("line 3: malformed JSON")
    assert post(client, [bad]).status_code == 400
    assert len(client.get("/lineage/1/events").json()) == 4


def test_a_batch_keeps_its_events_beside_one_nested_too_deep_to_parse(client: TestClient) -> None:
    # the array could not be split by a parser, and the whole batch was refused
    deep = b'{"description": "d", "type": "t", "elements": [], "x": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    good = [orjson.dumps(doc) for doc in MANUAL_EVENTS[:2]]
    answer = client.post("/lineage/1/events", content=b"[" + good[0] + b"," + deep + b"," + good[1] + b"]")
    assert answer.status_code == 207, answer.text
    assert [(row["status"], row.get("errors")) for row in answer.json()] == [
        (201, None),
        (400, [DEPTH_REASON]),
        (201, None),
    ]
    assert len(client.get("/lineage/1/events").json()) == 2


def test_the_latest_tag_of_a_key_is_decided_by_receive_order(client: TestClient) -> None:
    def engine(state: str, stamp: str) -> dict[str, Any]:
        return {
            "description": f"engine state: {state}",
            "type": "engine state",
            "elements": [
                {"description": "engine-1", "type": "engine", "tags": {"state": state, "at": stamp}}
            ],
            "tags": {"pneumo-timestamp": stamp},
        }

    # The second event carries an older timestamp: what Headwater received last still wins.
    post(client, engine("RUNNING", "2018-12-12T21:35:22Z"))
    post(client, engine("FINISHING", "2018-12-12T21:35:20Z"))
    element = client.get("/lineage/1/elements", params={"type": "engine"}).json()[0]
    answer = client.get(f"/lineage/1/elements/{element['id']}").json()
    assert answer["tags"] == {"state": "FINISHING", "at": "2018-12-12T21:35:20Z"}
    assert [e["description"] for e in answer["events"]] == [
        "engine state: FINISHING",
        "engine state: RUNNING",
    ]


def test_paging_and_filters(client: TestClient) -> None:
    ids = [post(client, {**MANUAL_EVENTS[3], "description": f"tick {n}"}).json()["id"] for n in range(5)]
    page = client.get("/lineage/1/events", params={"limit": 2, "offset": 1}).json()
    assert [e["id"] for e in page] == [ids[3], ids[2]]
    element = client.get("/lineage/1/elements").json()[0]
    assert len(client.get(f"/lineage/1/elements/{element['id']}", params={"limit": 3}).json()["events"]) == 3
    stamp = client.get(f"/lineage/1/events/{ids[0]}").json()["timestamp"]
    assert [e["id"] for e in client.get("/lineage/1/events", params={"before": stamp}).json()] == [ids[0]]
    assert len(client.get("/lineage/1/events", params={"after": "2000-01-01T00:00:00Z"}).json()) == 5
    assert (
        client.get("/lineage/1/events", params={"element": element["id"], "limit": 1}).json()[0]["id"]
        == ids[4]
    )


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/lineage/1/elements/999", 404, "no element with id 999"),
        ("/lineage/1/events/999", 404, "no generic event with id 999"),
        ("/lineage/1/tags/999", 404, "no tag with id 999"),
        ("/lineage/1/elements/abc", 400, "id: 'abc' is not a positive integer id"),
        ("/lineage/1/events/0", 400, "id: '0' is not a positive integer id"),
        ("/lineage/1/tags/-1", 400, "id: '-1' is not a positive integer id"),
        ("/lineage/1/events/99999999999999999999", 400, "is not a positive integer id"),
        ("/lineage/1/events?limit=0", 400, "limit: 0 is outside 1..1000"),
        ("/lineage/1/elements?offset=x", 400, "offset: 'x' is not a whole number"),
        ("/lineage/1/events?after=yesterday", 400, "after:"),
    ],
)
def test_unknown_ids_404_and_malformed_ones_400(
    client: TestClient, path: str, status: int, message: str
) -> None:
    answer = client.get(path)
    assert answer.status_code == status
    assert message in answer.json()["message"]


@pytest.fixture
def keyed_client(database_url: str, store: EventStore) -> Iterator[TestClient]:
    settings = Settings(database_url=database_url, write_keys=("w",), read_keys=("r",))
    with TestClient(create_app(settings, store)) as keyed:
        yield keyed


def test_writes_need_a_write_key_and_reads_a_read_key(keyed_client: TestClient) -> None:
    assert post(keyed_client, MANUAL_EVENTS[0]).status_code == 401
    assert post(keyed_client, MANUAL_EVENTS[0], authorization="Bearer r").status_code == 403
    assert post(keyed_client, MANUAL_EVENTS[0], authorization="Bearer w").status_code == 201
    assert keyed_client.get("/lineage/1/events").status_code == 401
    assert (
        keyed_client.get("/lineage/1/element_types", headers={"authorization": "Bearer w"}).status_code == 403
    )
    assert keyed_client.get("/lineage/1/element_types", headers={"authorization": "Bearer r"}).json() == [
        "fastscore-service",
        "model",
    ]
