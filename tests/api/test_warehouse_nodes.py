"""The warehouse API's node search, its node and edge types, and its vertical scope over HTTP,
on the hand-written model of model_fixture.py, on both backends. Added to it: raw/orders'
dataSource facet (as the pipeline keeps it) and three tags."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.store.base import EventStore
from tests.api.model_fixture import CLEAN, ETL, ORDERS, R1, R2, R3, REPORT_JOB, fill_model, t

API = "/api/warehouse/v1"
TAGGED = t("2024-01-03T00:00:00")  # after the model's last day
EXTRA_ROWS: dict[str, list[tuple[Any, ...]]] = {
    "facet_values": [("h-source", '{"name":"lake","uri":"s3://lake"}')],
    "dataset_facets": [(ORDERS, "dataSource", t("2024-01-01T00:00:00"), 1, "h-source", 0)],
    "tags": [(name, None, TAGGED, TAGGED) for name in ("pii", "gold", "critical")],
    "field_tags": [(ORDERS, "customer.name", "pii", TAGGED)],
    "dataset_tags": [(CLEAN, "gold", TAGGED)],
    "job_tags": [(ETL, "critical", TAGGED)],
}


@pytest.fixture(autouse=True)
def model(store: EventStore) -> None:
    fill_model(store)
    with store.transaction() as cur:
        for table, rows in EXTRA_ROWS.items():
            cur.executemany(store.sql(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})"), rows)


def get(client: TestClient, path: str, status: int = 200, **params: Any) -> Any:
    response = client.get(f"{API}{path}", params=params)
    assert response.status_code == status, response.text
    return response.json()


def ids(answer: Any) -> list[str]:
    return [node["nodeID"] for node in answer["nodes"]]


def field(dataset: str, name: str) -> str:
    return f"datasetField:{dataset.removeprefix('dataset:')}:{name}"


def test_datasets_by_part_of_their_name(client: TestClient) -> None:
    assert get(client, "/nodes", type="dataset", name="ORDERS") == {
        "nodes": [
            {
                "nodeID": CLEAN,
                "nodeType": "dataset",
                "displayName": "public.orders_clean",
                "qualifiedName": "warehouse:public.orders_clean",
                "properties": {
                    "namespace": "warehouse",
                    "name": "public.orders_clean",
                    "createdAt": "2024-01-01T01:00:00Z",
                    "updatedAt": "2024-01-02T01:05:00.500Z",
                    "currentVersion": "dv-clean-1",
                    "tags": ["gold"],
                    "lifecycleState": "OVERWRITE",  # as its latest write declared it
                    "lifecycleStateTime": "2024-01-02T01:05:00.500Z",
                },
            },
            {
                "nodeID": ORDERS,
                "nodeType": "dataset",
                "displayName": "raw/orders",
                "qualifiedName": "s3://lake:raw/orders",
                "properties": {
                    "namespace": "s3://lake",
                    "name": "raw/orders",
                    "createdAt": "2024-01-01T00:00:00Z",
                    "updatedAt": "2024-01-02T00:00:00Z",
                    "currentVersion": "dv-orders-1",
                    "sourceName": "lake",
                },
            },
        ],
        "truncated": False,
    }
    assert ids(get(client, "/nodes", type="job", name="report")) == [REPORT_JOB]
    assert ids(get(client, "/nodes", type="dataset", name="nothing like it")) == []


def test_fields_of_current_schemas(client: TestClient) -> None:
    assert get(client, "/nodes", type="datasetField", name="ADDR")["nodes"] == [
        {
            "nodeID": field(ORDERS, "customer.address"),
            "nodeType": "datasetField",
            "displayName": "customer.address",
            "qualifiedName": "s3://lake:raw/orders:customer.address",
            "properties": {
                "namespace": "s3://lake",
                "name": "raw/orders",
                "field": "customer.address",
                "fieldType": "STRUCT",
            },
        },
        {
            "nodeID": field(ORDERS, "customer.address.city"),
            "nodeType": "datasetField",
            "displayName": "customer.address.city",
            "qualifiedName": "s3://lake:raw/orders:customer.address.city",
            "properties": {
                "namespace": "s3://lake",
                "name": "raw/orders",
                "field": "customer.address.city",
                "fieldType": "STRING",
            },
        },
    ]
    # the same path in two datasets: by path, then id
    assert ids(get(client, "/nodes", type="datasetfield", name="id")) == [
        field(ORDERS, "id"),
        field(CLEAN, "id"),
    ]
    one = get(client, "/nodes", type="datasetField", name="id", limit=1)
    assert ids(one) == [field(ORDERS, "id")] and one["truncated"]
    assert ids(get(client, "/nodes", type="datasetField", name="fields")) == []  # a JSON key, no field


def test_namespaces_sources_runs_and_tags(client: TestClient) -> None:
    assert get(client, "/nodes", name="lake") == {
        "nodes": [
            {
                "nodeID": "source:lake",
                "nodeType": "source",
                "displayName": "lake",
                "qualifiedName": "lake",
                "properties": {"namespace": "", "name": "lake", "uri": "s3://lake"},
            },
            {
                "nodeID": "namespace:s3://lake",
                "nodeType": "namespace",
                "displayName": "s3://lake",
                "qualifiedName": "s3://lake",
                "properties": {"namespace": "s3://lake", "name": "s3://lake"},
            },
        ],
        "truncated": False,
    }
    assert get(client, "/nodes", type="run", name="3333")["nodes"] == [
        {
            "nodeID": f"run:{R3}",
            "nodeType": "run",
            "displayName": R3,
            "qualifiedName": R3,
            "properties": {
                "namespace": "warehouse",
                "name": R3,
                "state": "FAILED",
                "startedAt": "2024-01-02T02:00:00Z",
                "job": REPORT_JOB,
            },
        }
    ]
    assert ids(get(client, "/nodes", type="tag", name="I")) == ["tag:critical", "tag:pii"]
    assert ids(get(client, "/nodes", type="namespace")) == ["namespace:s3://lake", "namespace:warehouse"]


def test_every_type_by_name_up_to_the_limit(client: TestClient) -> None:
    # run ids start with digits, which come before letters; then the tag "critical", the field
    # "customer" and the rest
    first = get(client, "/nodes", limit=3)
    assert ids(first) == [f"run:{R1}", f"run:{R2}", f"run:{R3}"] and first["truncated"]
    assert ids(get(client, "/nodes", limit=5)) == [
        f"run:{R1}",
        f"run:{R2}",
        f"run:{R3}",
        "tag:critical",
        field(ORDERS, "customer"),
    ]
    everything = get(client, "/nodes", limit=10_000)
    # 3 runs, 2 jobs, 3 datasets, 7 fields, 2 namespaces, 1 source, 3 tags
    assert len(everything["nodes"]) == 21 and not everything["truncated"]
    assert get(client, "/nodes")["truncated"] is False


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"type": "table"}, "type: 'table' is none of dataset, job, datasetField"),
        ({"type": "owner"}, "type: 'owner'"),
        ({"limit": "0"}, "limit: 0 is outside 1..10000"),
        ({"limit": "10001"}, "limit: 10001 is outside 1..10000"),
        ({"limit": "many"}, "limit: 'many' is not a whole number"),
    ],
)
def test_bad_search_parameters(client: TestClient, params: dict[str, str], message: str) -> None:
    assert message in get(client, "/nodes", 400, **params)["message"]


def vertical(client: TestClient, node_id: str, status: int = 200, **params: Any) -> Any:
    return get(client, "/lineage/vertical", status, nodeId=node_id, **params)


def edges(answer: Any) -> list[tuple[str, str, str]]:
    return [(e["sourceNodeID"], e["destinationNodeID"], e["edgeType"]) for e in answer["edges"]]


def test_vertical_of_a_dataset_whose_owner_went_away(client: TestClient) -> None:
    has_fields = [
        (ORDERS, field(ORDERS, path), "has-field")
        for path in ("id", "customer", "customer.name", "customer.address", "customer.address.city")
    ]
    now = vertical(client, ORDERS)
    assert edges(now) == [
        ("namespace:s3://lake", ORDERS, "contains"),
        ("source:lake", ORDERS, "source-of"),
        *has_fields,
        (field(ORDERS, "customer.name"), "tag:pii", "tagged"),
    ]
    assert (now["nodeID"], now["scope"], now["truncated"], now["expandable"], now["asOf"]) == (
        ORDERS,
        "vertical",
        False,
        [],
        None,
    )
    # on day 1 the ownership facet (deleted on day 2) named team:data; the tag came later
    then = vertical(client, ORDERS, asOf="2024-01-01T12:00:00Z")
    assert edges(then) == [
        ("namespace:s3://lake", ORDERS, "contains"),
        ("source:lake", ORDERS, "source-of"),
        (ORDERS, "owner:team:data", "owned-by"),
        *has_fields,
    ]
    assert then["asOf"] == "2024-01-01T12:00:00Z"
    vertices = {v["nodeID"]: v for v in then["vertices"]}
    assert vertices["owner:team:data"] == {
        "nodeID": "owner:team:data",
        "nodeType": "owner",
        "displayName": "team:data",
        "qualifiedName": "team:data",
        "properties": {"namespace": "", "name": "team:data"},
    }
    assert vertices["source:lake"]["properties"]["uri"] == "s3://lake"  # the dataSource facet then
    assert vertices[field(ORDERS, "customer.address.city")]["properties"]["fieldType"] == "STRING"
    cut = vertical(client, ORDERS, limit=2)
    assert edges(cut) == [("namespace:s3://lake", ORDERS, "contains")] and cut["truncated"]


def test_vertical_of_jobs_and_runs(client: TestClient) -> None:
    assert edges(vertical(client, ETL)) == [
        ("namespace:warehouse", ETL, "contains"),
        (ETL, REPORT_JOB, "parent"),
        (ETL, "tag:critical", "tagged"),
        (ETL, f"run:{R2}", "ran"),
        (ETL, f"run:{R1}", "ran"),
    ]
    assert [e for e in edges(vertical(client, ETL, asOf="2024-01-01T12:00:00Z")) if e[2] == "ran"] == [
        (ETL, f"run:{R1}", "ran")
    ]
    run = vertical(client, f"run:{R3}")
    assert edges(run) == [(REPORT_JOB, f"run:{R3}", "ran"), (f"run:{R2}", f"run:{R3}", "parent")]
    assert {v["nodeID"]: v["properties"] for v in run["vertices"]}[f"run:{R2}"] == {
        "namespace": "warehouse",
        "name": R2,
        "state": "COMPLETED",
        "startedAt": "2024-01-02T01:00:00Z",
        "job": ETL,
    }
    assert edges(vertical(client, f"run:{R2}")) == [
        (ETL, f"run:{R2}", "ran"),
        (f"run:{R2}", f"run:{R3}", "parent"),
    ]


def test_vertical_of_unknown_and_malformed_nodes(client: TestClient) -> None:
    assert "dataset:warehouse:nope" in vertical(client, "dataset:warehouse:nope", 404)["message"]
    unknown_run = "44444444-4444-4444-8444-444444444444"
    assert unknown_run in vertical(client, f"run:{unknown_run}", 404)["message"]
    assert "nodeId" in vertical(client, "nope", 400)["message"]
    assert "nodeId" in get(client, "/lineage/vertical", 400)["message"]
    assert "run '42' not found" in vertical(client, "run:42", 404)["message"]  # any id, not only UUIDs
    assert "names no run" in vertical(client, "run:", 400)["message"]
    assert "limit" in vertical(client, ORDERS, 400, limit="0")["message"]


def test_types_name_everything_an_answer_holds(client: TestClient) -> None:
    kinds = get(client, "/types")
    node_types = [k["name"] for k in kinds["nodeTypes"]]
    edge_types = [k["name"] for k in kinds["edgeTypes"]]
    assert node_types == ["dataset", "job", "datasetField", "run", "namespace", "source", "tag", "owner"]
    assert edge_types == [
        "input",
        "output",
        "condensed",
        "column",
        "ultimate-source",
        "ultimate-destination",
        "contains",
        "source-of",
        "has-field",
        "symlink",
        "tagged",
        "owned-by",
        "parent",
        "root",
        "ran",
    ]
    assert all(
        k["description"] and "\n" not in k["description"] for k in kinds["nodeTypes"] + kinds["edgeTypes"]
    )
    seen_nodes: set[str] = set()
    seen_edges: set[str] = set()
    answers = [vertical(client, node) for node in (ORDERS, ETL, f"run:{R3}")]
    answers.append(vertical(client, ORDERS, asOf="2024-01-01T12:00:00Z"))
    for scope in ("end-to-end", "ultimate-source", "ultimate-destination"):
        answers.append(get(client, f"/lineage/{scope}", nodeId=CLEAN))
    answers.append(get(client, "/lineage/end-to-end", nodeId=CLEAN, includeProcesses="false"))
    for answer in answers:
        seen_nodes |= {v["nodeType"] for v in answer["vertices"]}
        seen_edges |= {e["edgeType"] for e in answer["edges"]}
    seen_nodes |= {n["nodeType"] for n in get(client, "/nodes", limit=10_000)["nodes"]}
    assert seen_nodes <= set(node_types) and seen_edges <= set(edge_types)
    assert seen_nodes == set(node_types)  # the model shows every node type somewhere
