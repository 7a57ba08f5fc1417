"""Marquez' catalog endpoints (sources, dataset and job versions, search, tags) over the
hand-written model of model_fixture.py, on both backends."""

from __future__ import annotations

import random
import string
from typing import Any

import pytest
from fastapi.testclient import TestClient

from headwater.api.app import create_app
from headwater.config import Settings
from headwater.events.limits import MAX_TAG_BYTES
from headwater.store.base import EventStore
from tests.api.model_fixture import ORDERS, R1, R2, R3, fill_model, t

API = "/api/v1"
LAKE = "s3%3A%2F%2Flake"  # the namespace s3://lake, encoded


@pytest.fixture(autouse=True)
def model(store: EventStore) -> None:
    fill_model(store)


def get(client: TestClient, path: str, status: int = 200, **params: Any) -> Any:
    response = client.get(f"{API}{path}", params=params)
    assert response.status_code == status, response.text
    return response.json()


def test_sources(client: TestClient) -> None:
    assert get(client, "/sources") == {
        "sources": [
            {
                "type": "S3",
                "name": "lake",
                "createdAt": "2024-01-01T00:00:00Z",
                "updatedAt": "2024-01-01T00:00:00Z",
                "connectionUrl": "s3://lake",
                "description": None,
            }
        ]
    }
    assert get(client, "/sources/lake")["connectionUrl"] == "s3://lake"
    assert "source 'nope' not found" in get(client, "/sources/nope", 404)["message"]
    assert get(client, "/sources", limit=0) == {"sources": []}
    assert "limit" in get(client, "/sources", 400, limit="many")["message"]


def test_dataset_versions(client: TestClient) -> None:
    listed = get(client, "/namespaces/warehouse/datasets/public.orders_clean/versions")
    assert listed["totalCount"] == 1
    (version,) = listed["versions"]
    assert version["id"] == {"namespace": "warehouse", "name": "public.orders_clean", "version": "dv-clean-1"}
    assert [f["name"] for f in version["fields"]] == ["id", "total"]
    assert version["lifecycleState"] == "OVERWRITE"
    assert version["createdAt"] == "2024-01-01T01:10:00Z"
    assert version["createdByRun"]["id"] == R1
    one = get(client, "/namespaces/warehouse/datasets/public.orders_clean/versions/dv-clean-1")
    assert one == version
    # the facets as they stood when the version was created: the old documentation, the owner
    orders = get(client, f"/namespaces/{LAKE}/datasets/raw%2Forders/versions/dv-orders-1")
    assert orders["facets"]["documentation"] == {"description": "orders, raw"}
    assert "ownership" in orders["facets"]
    assert [f["name"] for f in orders["fields"]][:3] == ["id", "customer", "customer.name"]
    assert (
        get(client, "/namespaces/warehouse/datasets/public.orders_clean/versions", limit=0)["versions"] == []
    )
    missing = get(client, "/namespaces/warehouse/datasets/public.orders_clean/versions/nope", 404)
    assert "version 'nope'" in missing["message"]
    assert "dataset 'nope'" in get(client, "/namespaces/warehouse/datasets/nope/versions", 404)["message"]
    assert get(client, "/namespaces/warehouse/datasets/public.orders_clean/versions", 400, limit=-1)


def test_dataset_versions_newest_first_by_page(client: TestClient, store: EventStore) -> None:
    """A second version of raw/orders (a new schema, written by R2): newest first, each with the
    fields of its own schema; limit and offset page through them, totalCount counts them all."""
    with store.transaction() as cur:
        cur.executemany(
            store.sql("INSERT INTO schema_fields VALUES (?, ?, ?, ?, ?)"),
            [("sh-orders-2", "id", 0, "BIGINT", None), ("sh-orders-2", "amount", 1, "DECIMAL", "total")],
        )
        cur.execute(
            store.sql("INSERT INTO dataset_versions VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
            ("dv-orders-2", ORDERS, "sh-orders-2", "v2", "ALTER", t("2024-01-02T01:05:00"), 8, R2),
        )
    path = f"/namespaces/{LAKE}/datasets/raw%2Forders/versions"
    listed = get(client, path)
    assert listed["totalCount"] == 2
    assert [v["version"] for v in listed["versions"]] == ["dv-orders-2", "dv-orders-1"]
    newest, oldest = listed["versions"]
    assert [(f["name"], f["type"], f["description"]) for f in newest["fields"]] == [
        ("id", "BIGINT", None),
        ("amount", "DECIMAL", "total"),
    ]
    assert len(oldest["fields"]) == 5 and oldest["fields"][0] == {
        "name": "id",
        "type": "INTEGER",
        "tags": [],
        "description": None,
    }
    assert (newest["datasetVersion"], newest["lifecycleState"]) == ("v2", "ALTER")
    assert newest["createdByRun"]["id"] == R2 and oldest["createdByRun"]["id"] == R1
    assert newest["createdAt"] == "2024-01-02T01:05:00Z"
    # the facets as they stood then: the documentation replaced, the owner deleted at 2024-01-02
    assert newest["facets"]["documentation"] == {"description": "raw orders"}
    assert "ownership" not in newest["facets"] and "ownership" in oldest["facets"]
    second = get(client, path, limit=1, offset=1)
    assert second == {"totalCount": 2, "versions": [oldest]}
    assert get(client, path, offset=2) == {"totalCount": 2, "versions": []}
    assert get(client, f"{path}/dv-orders-2") == newest


def test_job_versions(client: TestClient) -> None:
    listed = get(client, "/namespaces/warehouse/jobs/etl.clean_orders/versions")
    assert listed["totalCount"] == 2
    assert [v["version"] for v in listed["versions"]] == ["jv-clean-2", "jv-clean-1"]  # newest first
    newest, oldest = listed["versions"]
    assert newest["inputs"] == [{"namespace": "s3://lake", "name": "raw/orders"}]
    assert oldest["inputs"] == []
    assert newest["outputs"] == [{"namespace": "warehouse", "name": "public.orders_clean"}]
    assert newest["latestRun"]["id"] == R2 and oldest["latestRun"]["id"] == R1
    assert oldest["facets"]["sql"] == {"query": "SELECT 1"}  # as it stood at that version's run
    assert newest["facets"]["sql"] == {"query": "SELECT 2"}
    assert newest["location"] == "https://git.example/etl/clean_orders.py"
    one = get(client, "/namespaces/warehouse/jobs/etl.clean_orders/versions/jv-clean-1")
    assert one == oldest
    assert "job 'nope'" in get(client, "/namespaces/warehouse/jobs/nope/versions", 404)["message"]
    report = get(client, "/namespaces/warehouse/jobs/etl.clean_orders.report/versions")
    assert report["versions"][0]["latestRun"]["id"] == R3
    assert get(client, "/namespaces/warehouse/jobs/etl.clean_orders/versions", limit=1, offset=1) == {
        "totalCount": 2,
        "versions": [oldest],
    }
    for bad in ({"limit": "x"}, {"offset": "-1"}, {"limit": "10001"}):
        assert get(client, "/namespaces/warehouse/jobs/etl.clean_orders/versions", 400, **bad)["code"] == 400
    missing = get(client, "/namespaces/warehouse/jobs/etl.clean_orders/versions/nope", 404)
    assert "version 'nope' of job 'etl.clean_orders'" in missing["message"]
    assert (
        "namespace 'nope'" in get(client, "/namespaces/nope/jobs/etl.clean_orders/versions", 404)["message"]
    )


def test_search(client: TestClient) -> None:
    found = get(client, "/search", q="ORDERS")
    names = [(r["type"], r["name"]) for r in found["results"]]
    assert names == [
        ("JOB", "etl.clean_orders"),
        ("JOB", "etl.clean_orders.report"),
        ("DATASET", "public.orders_clean"),
        ("DATASET", "raw/orders"),
    ]
    assert found["totalCount"] == 4
    assert found["results"][3]["nodeId"] == "dataset:s3://lake:raw/orders"
    assert [r["name"] for r in get(client, "/search", q="orders", filter="dataset")["results"]] == [
        "public.orders_clean",
        "raw/orders",
    ]
    newest = get(client, "/search", q="orders", sort="UPDATE_AT", limit=2)
    assert [r["name"] for r in newest["results"]] == ["etl.clean_orders.report", "etl.clean_orders"]
    assert newest["totalCount"] == 4
    assert [r["name"] for r in get(client, "/search", q="orders", namespace="s3://lake")["results"]] == [
        "raw/orders"
    ]
    assert [
        r["name"] for r in get(client, "/search", q="orders", after="2024-01-02T01:30:00Z")["results"]
    ] == ["etl.clean_orders.report"]
    assert get(client, "/search", q="orders", before="2024-01-02")["results"] == []
    assert get(client, "/search", q="100%_")["results"] == []  # LIKE wildcards taken literally
    assert get(client, "/search", q="rd")["totalCount"] == 4  # under 3 characters: no trigram, a scan
    for bad in (
        {},
        {"q": "x", "filter": "table"},
        {"q": "x", "sort": "size"},
        {"q": "x", "limit": "0"},
        {"q": "x", "before": "yesterday"},
        {"q": "x", "after": "2024-13-01"},
        {"q": "a\x00b"},  # NUL: no name holds one, and the databases refuse it
    ):
        assert get(client, "/search", 400, **bad)["code"] == 400


def test_tags_round_trip(client: TestClient) -> None:
    created = client.put(f"{API}/tags/pii", json={"description": "personal data"})
    assert created.status_code == 200
    assert created.json() == {"tags": [{"name": "pii", "description": "personal data"}]}
    dataset = client.post(f"{API}/namespaces/{LAKE}/datasets/raw%2Forders/tags/pii")
    assert dataset.status_code == 200, dataset.text
    assert dataset.json()["tags"] == ["pii"]
    field = client.post(f"{API}/namespaces/{LAKE}/datasets/raw%2Forders/fields/customer.name/tags/sensitive")
    assert field.status_code == 200, field.text
    fields = {f["name"]: f["tags"] for f in field.json()["fields"]}
    assert fields["customer.name"] == ["sensitive"] and fields["id"] == []
    job = client.post(f"{API}/namespaces/warehouse/jobs/etl.clean_orders/tags/critical")
    assert job.status_code == 200 and job.json()["tags"] == ["critical"]
    assert [t["name"] for t in get(client, "/tags")["tags"]] == ["critical", "pii", "sensitive"]
    assert get(client, "/namespaces/warehouse/jobs/etl.clean_orders")["tags"] == ["critical"]
    untagged = client.delete(f"{API}/namespaces/{LAKE}/datasets/raw%2Forders/tags/pii")
    assert untagged.status_code == 200 and untagged.json()["tags"] == []
    assert (
        client.delete(f"{API}/namespaces/warehouse/jobs/etl.clean_orders/tags/critical").json()["tags"] == []
    )
    assert client.post(f"{API}/namespaces/warehouse/datasets/nope/tags/pii").status_code == 404
    assert (
        client.post(f"{API}/namespaces/{LAKE}/datasets/raw%2Forders/fields/nope/tags/pii").status_code == 404
    )
    assert client.post(f"{API}/namespaces/warehouse/jobs/nope/tags/pii").status_code == 404
    missing = client.post(f"{API}/namespaces/nope/datasets/raw%2Forders/tags/pii")
    assert missing.status_code == 404 and "namespace 'nope'" in missing.json()["message"]
    assert client.put(f"{API}/tags/bad", content=b"{not json").status_code == 400
    assert client.put(f"{API}/tags/bad", json={"description": 3}).status_code == 400
    assert client.put(f"{API}/tags/bad%00").status_code == 400


def test_a_tag_name_over_its_limit_is_a_400_on_every_tag_route(client: TestClient) -> None:
    """A tag keys the tag tables: one too long for PostgreSQL's index was a 503, which a client
    retries for ever. Random letters: a repeated one compresses and fits the index."""
    rng = random.Random(7)
    longest = "é" * (MAX_TAG_BYTES // 2)  # 2 bytes a character: at the limit exactly
    over = "".join(rng.choice(string.ascii_letters) for _ in range(3_000))
    routes = [
        ("PUT", "/tags/{}"),
        ("POST", f"/namespaces/{LAKE}/datasets/raw%2Forders/tags/{{}}"),
        ("POST", f"/namespaces/{LAKE}/datasets/raw%2Forders/fields/customer.name/tags/{{}}"),
        ("POST", "/namespaces/warehouse/jobs/etl.clean_orders/tags/{}"),
    ]
    for method, route in routes:
        refused = client.request(method, API + route.format(over))
        assert refused.status_code == 400, (route, refused.text)
        assert refused.json()["message"] == f"tag: is 3000 bytes long; a tag may have at most {MAX_TAG_BYTES}"
        assert client.request(method, API + route.format(longest)).status_code == 200, route
    assert [t["name"] for t in get(client, "/tags")["tags"]] == [longest]
    assert get(client, "/namespaces/warehouse/jobs/etl.clean_orders")["tags"] == [longest]


def test_tags_outlive_the_model(client: TestClient, store: EventStore) -> None:
    """Tags are kept apart from the model: `pipeline rebuild` empties the model tables (and not
    the tag tables), and the rebuilt datasets, fields and jobs have their tags again."""
    from headwater.store.model import MODEL_TABLES, reset_model

    assert not {"tags", "dataset_tags", "field_tags", "job_tags"} & set(MODEL_TABLES)
    client.put(f"{API}/tags/pii", json={"description": "personal data"})
    client.post(f"{API}/namespaces/{LAKE}/datasets/raw%2Forders/tags/pii")
    client.post(f"{API}/namespaces/{LAKE}/datasets/raw%2Forders/fields/customer.name/tags/pii")
    client.post(f"{API}/namespaces/warehouse/jobs/etl.clean_orders/tags/pii")
    reset_model(store)
    assert get(client, f"/namespaces/{LAKE}/datasets/raw%2Forders", 404)
    fill_model(store)
    dataset = get(client, f"/namespaces/{LAKE}/datasets/raw%2Forders")
    assert dataset["tags"] == ["pii"]
    assert {f["name"]: f["tags"] for f in dataset["fields"]}["customer.name"] == ["pii"]
    assert get(client, "/namespaces/warehouse/jobs/etl.clean_orders")["tags"] == ["pii"]
    assert get(client, "/tags") == {"tags": [{"name": "pii", "description": "personal data"}]}


def test_tag_writes_need_a_write_key(store: EventStore) -> None:
    settings = Settings(database_url=store.url, write_keys=("writer",), read_keys=("reader",))
    with TestClient(create_app(settings, store)) as client:
        path = f"{API}/namespaces/warehouse/jobs/etl.clean_orders/tags/critical"
        assert client.post(path).status_code == 401
        assert client.post(path, headers={"Authorization": "Bearer reader"}).status_code == 403
        assert client.post(path, headers={"Authorization": "Bearer writer"}).status_code == 200
        assert client.get(f"{API}/tags", headers={"Authorization": "Bearer reader"}).status_code == 200


def _bulk_rows() -> dict[str, list[tuple[str, str, str, str]]]:
    """Names laid out so that every way the search answers is taken: a cluster of matches early
    in name order and one late (past where a walk in name order gives up), the late one also the
    oldest (past where a walk newest first gives up), names in two namespaces, many equal times."""

    def at(day: int) -> str:
        return f"2024-{1 + day // 28:02d}-{1 + day % 28:02d}T00:00:00.0000000Z"

    datasets = [("bulk", f"aaa.part_{n:05d}", at(100 + n % 50)) for n in range(3_600)]
    datasets += [("bulk", f"zzz.late_{n:05d}", at(n % 7)) for n in range(1_200)]
    datasets += [("other", f"zzz.late_{n:05d}", at(n % 7)) for n in range(0, 1_200, 40)]
    datasets += [("other", f"mid/Odd_Name-{n}", at(60)) for n in range(30)]
    jobs = [("bulk", f"dag.late_{n:04d}", at(3 + n % 5)) for n in range(400)]
    jobs += [("other", f"aaa.part_{n:05d}", at(149)) for n in range(0, 3_600, 90)]
    return {"datasets": datasets, "jobs": jobs}


def test_search_against_every_name(client: TestClient, store: EventStore) -> None:
    """Over 1,000 matches, few, late clusters, filters, both sorts: the answer is what sorting
    every name would give, and totalCount counts matches up to 1,000."""
    tables = _bulk_rows()
    with store.transaction() as cur:
        for table, rows in tables.items():
            kind = "dataset" if table == "datasets" else "job"
            cur.executemany(
                store.sql(
                    f"INSERT INTO {table} (node_id, namespace, name, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?)"
                ),
                [(f"{kind}:{ns}:{name}", ns, name, time, time) for ns, name, time in rows],
            )
    everything = [("DATASET", *row) for row in tables["datasets"]] + [("JOB", *row) for row in tables["jobs"]]

    def expected(q: str, **params: Any) -> tuple[list[tuple[str, str, str]], int]:
        after = params.get("after", "").replace("Z", ".0000000Z")
        before = params.get("before", "").replace("Z", ".0000000Z")
        found = [
            (kind, ns, name, time)
            for kind, ns, name, time in everything
            if q.lower() in name.lower()
            and params.get("filter", kind) == kind
            and params.get("namespace", ns) == ns
            and (not after or time >= after)
            and (not before or time < before)
        ]
        found.sort(key=lambda r: (r[2], r[1], r[0]))
        if params.get("sort") == "UPDATE_AT":
            found.sort(key=lambda r: r[3], reverse=True)
        return [r[:3] for r in found[: int(params.get("limit", 10))]], min(len(found), 1000)

    for q, params in [
        ("PART_", {"limit": 5}),  # many matches, first ones early
        ("late_", {"limit": 20}),  # many, past a first cluster of non-matches
        ("late_", {"limit": 20, "sort": "UPDATE_AT"}),  # many, the oldest of all
        ("zzz.late_0", {"limit": 25, "namespace": "bulk"}),
        ("part_", {"limit": 9, "after": "2024-05-01T00:00:00Z"}),
        ("part_0", {"limit": 8, "sort": "UPDATE_AT", "namespace": "bulk"}),
        ("zzz.", {"limit": 15, "filter": "DATASET", "after": "2024-01-03T00:00:00Z"}),
        ("ate_", {"limit": 30, "sort": "UPDATE_AT", "before": "2024-01-05T00:00:00Z"}),
        ("art_0", {"limit": 12, "sort": "UPDATE_AT"}),  # ties of time broken by name, namespace
        ("a", {"limit": 7}),  # under 3 characters
        ("_0119", {"limit": 50, "sort": "UPDATE_AT"}),  # few
        ("d/odd_n", {"limit": 3}),  # `/` and `_` are themselves, in any case
        ("dxodd", {"limit": 3}),
        ("1199", {"limit": 2000}),
    ]:
        answer = get(client, "/search", q=q, **params)
        rows, total = expected(q, **params)
        assert [(r["type"], r["namespace"], r["name"]) for r in answer["results"]] == rows, (q, params)
        assert answer["totalCount"] == total, (q, params)
    assert get(client, "/search", q="dag.late_0399")["results"][0]["nodeId"] == "job:bulk:dag.late_0399"
