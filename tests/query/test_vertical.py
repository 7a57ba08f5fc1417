"""Vertical lineage (the containment around a node) over a small shop written by hand as
OpenLineage events and published by the real pipeline, on both backends; tags are set by hand,
as the tag API would. Every expected answer is worked out from the drawing below.

Namespace `shop`; day 1 is 2024-03-01, day 2 2024-03-02.

    raw_orders ─load_orders─► orders ≡ warehouse:sales.orders ≡ web:orders_view ─report─► daily
    (source pg)               (id, amount, customer.name)                                  (total)

- `nightly` (day 1 00:00) has run N; `load_orders` run L1 (day 1 01:00) is N's child; L2 (day 2
  01:00) has no parent; `report` run R (day 2 02:00) is L2's child, in the tree rooted at N.
- load_orders writes orders with orders.id ← raw_orders.id (DIRECT IDENTITY) and orders.amount ←
  raw_orders.amount (DIRECT TRANSFORMATION); report writes daily with daily.total ← orders.amount
  (DIRECT AGGREGATION).
- orders comes from source `lake` (s3://lake) and is owned by team:sales on day 1; from source
  `lakehouse` (s3://lakehouse) and owned by team:finance from day 2. A DatasetEvent (day 1 01:30)
  declares `warehouse:sales.orders` (TABLE) and `web:orders_view` (VIEW) symlinks of orders: both
  are merged into it. report reads orders as `warehouse:sales.orders`; no event names the view.
- `report` is owned by team:bi. Tags: `gold` on orders (day 1 02:00), `pii` on orders'
  customer.name (day 2 00:00), `critical` on report (day 2 03:00).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from pyspark.sql import SparkSession

from headwater.errors import BadRequest, NotFound
from headwater.query.lineage import LineageQuery, LineageResult, lineage
from headwater.query.vertical import vertical
from headwater.store import EventStore
from tests.factories import PRODUCER, facet
from tests.query.conftest import published

DAY1, DAY2 = "2024-03-01", "2024-03-02"
DAY1_NOON = f"{DAY1}T12:00:00.0000000Z"
N = "00000000-0000-4000-8000-0000000000a0"
L1 = "00000000-0000-4000-8000-0000000000b1"
L2 = "00000000-0000-4000-8000-0000000000b2"
R = "00000000-0000-4000-8000-0000000000c0"
ORDERS = "dataset:shop:orders"
ALIAS = "dataset:warehouse:sales.orders"
VIEW = "dataset:web:orders_view"
RAW = "dataset:shop:raw_orders"
DAILY = "dataset:shop:daily"


def fld(dataset: str, name: str) -> str:
    return f"datasetField:shop:{dataset}:{name}"


def _ref(name: str, namespace: str = "shop", **facets: Any) -> dict[str, Any]:
    return {"namespace": namespace, "name": name, "facets": facets}


def _schema(**fields: str) -> dict[str, Any]:
    entries: list[dict[str, Any]] = []
    for name, kind in fields.items():
        parent, _, child = name.partition("__")
        if child:
            entries.append({"name": parent, "type": kind, "fields": [{"name": child, "type": "STRING"}]})
        else:
            entries.append({"name": name, "type": kind})
    return facet("SchemaDatasetFacet", "1-1-1", fields=entries)


def _lineage(**fields: tuple[str, str, str, str]) -> dict[str, Any]:
    """field → (input dataset, input field, type, subtype)."""
    return facet(
        "ColumnLineageDatasetFacet",
        "1-2-0",
        fields={
            name: {
                "inputFields": [
                    {
                        "namespace": "shop",
                        "name": dataset,
                        "field": field,
                        "transformations": [{"type": kind, "subtype": subtype}],
                    }
                ]
            }
            for name, (dataset, field, kind, subtype) in fields.items()
        },
    )


def _owner(name: str, fragment: str = "OwnershipDatasetFacet") -> dict[str, Any]:
    return facet(fragment, "1-0-1", owners=[{"name": name, "type": "TEAM"}])


def _source(name: str) -> dict[str, Any]:
    return {**facet("DatasourceDatasetFacet", "1-0-1"), "name": name, "uri": f"s3://{name}"}


def _run(
    run_id: str,
    job: str,
    day: str,
    hour: int,
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    parent: tuple[str, str] | None = None,
    root: tuple[str, str] | None = None,
    job_facets: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """START and COMPLETE (outputs' facets on the COMPLETE), ten minutes apart; `parent` and
    `root` are (run id, job name)."""
    run_facets: dict[str, Any] = {}
    if parent is not None:
        value = facet(
            "ParentRunFacet", "1-1-0", run={"runId": parent[0]}, job={"namespace": "shop", "name": parent[1]}
        )
        if root is not None:
            value["root"] = {"run": {"runId": root[0]}, "job": {"namespace": "shop", "name": root[1]}}
        run_facets["parent"] = value
    return [
        {
            "eventType": event_type,
            "eventTime": f"{day}T{hour:02d}:{minute}:00Z",
            "run": {"runId": run_id, "facets": run_facets},
            "job": {"namespace": "shop", "name": job, "facets": job_facets or {}},
            "inputs": inputs,
            "outputs": outs,
            "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        }
        for event_type, minute, outs in (
            ("START", "00", [_ref(o["name"], o["namespace"]) for o in outputs]),
            ("COMPLETE", "10", outputs),
        )
    ]


def _orders(source: str, owner: str) -> dict[str, Any]:
    return _ref(
        "orders",
        schema=_schema(id="INTEGER", amount="DECIMAL", customer__name="STRUCT"),
        columnLineage=_lineage(
            id=("raw_orders", "id", "DIRECT", "IDENTITY"),
            amount=("raw_orders", "amount", "DIRECT", "TRANSFORMATION"),
        ),
        dataSource=_source(source),
        ownership=_owner(owner),
    )


def events() -> list[dict[str, Any]]:
    raw = _ref("raw_orders", schema=_schema(id="INTEGER", amount="DECIMAL"), dataSource=_source("pg"))
    symlink = {
        "eventTime": f"{DAY1}T01:30:00Z",
        "dataset": _ref(
            "orders",
            symlinks=facet(
                "SymlinksDatasetFacet",
                "1-0-1",
                identifiers=[
                    {"namespace": "warehouse", "name": "sales.orders", "type": "TABLE"},
                    {"namespace": "web", "name": "orders_view", "type": "VIEW"},
                ],
            ),
        ),
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
    }
    daily = _ref(
        "daily",
        schema=_schema(total="DECIMAL"),
        columnLineage=_lineage(total=("orders", "amount", "DIRECT", "AGGREGATION")),
    )
    return [
        *_run(N, "nightly", DAY1, 0, [], []),
        *_run(L1, "load_orders", DAY1, 1, [raw], [_orders("lake", "team:sales")], (N, "nightly")),
        symlink,
        *_run(L2, "load_orders", DAY2, 1, [raw], [_orders("lakehouse", "team:finance")]),
        *_run(
            R,
            "report",
            DAY2,
            2,
            [_ref("sales.orders", "warehouse")],
            [daily],
            (L2, "load_orders"),
            (N, "nightly"),
            {"ownership": _owner("team:bi", "OwnershipJobFacet")},
        ),
    ]


def _tag(store: EventStore, table: str, keys: tuple[str, ...], tag: str, when: str) -> None:
    columns = "node_id, field, tag, tagged_at" if len(keys) == 2 else "node_id, tag, tagged_at"
    with store.transaction() as cur:
        cur.execute(
            store.sql("INSERT INTO tags (name, created_at, updated_at) VALUES (?, ?, ?)"), (tag, when, when)
        )
        cur.execute(
            store.sql(f"INSERT INTO {table} ({columns}) VALUES ({', '.join('?' * (len(keys) + 2))})"),
            (*keys, tag, when),
        )


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def shop(
    request: pytest.FixtureRequest, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EventStore]:
    with published(request, spark, tmp_path_factory, events()) as store:
        _tag(store, "dataset_tags", (ORDERS,), "gold", f"{DAY1}T02:00:00.0000000Z")
        _tag(store, "field_tags", (ORDERS, "customer.name"), "pii", f"{DAY2}T00:00:00.0000000Z")
        _tag(store, "job_tags", ("job:shop:report",), "critical", f"{DAY2}T03:00:00.0000000Z")
        yield store


def answer(store: EventStore, node_id: str, as_of: str | None = None, limit: int = 500) -> LineageResult:
    result = vertical(store, node_id, as_of=as_of, limit=limit)
    assert all(e.src in result.nodes and e.dst in result.nodes for e in result.edges)
    assert len({(e.src, e.dst, e.kind) for e in result.edges}) == len(result.edges)
    return result


def edges(result: LineageResult) -> set[tuple[str, str, str]]:
    return {(e.src, e.dst, e.kind) for e in result.edges}


def vertices(result: LineageResult) -> set[str]:
    return set(result.nodes)


# orders' containment before its fields: what a small limit keeps
ORDERS_NEAR = {
    ("namespace:shop", ORDERS, "contains"),
    ("source:lakehouse", ORDERS, "source-of"),
    (ALIAS, ORDERS, "symlink"),
    (VIEW, ORDERS, "symlink"),
    (ORDERS, "owner:team:finance", "owned-by"),
    (ORDERS, "tag:gold", "tagged"),
}


def test_a_dataset_now(shop: EventStore) -> None:
    result = answer(shop, ORDERS)
    assert result.root == ORDERS and not result.truncated
    assert edges(result) == ORDERS_NEAR | {
        (ORDERS, fld("orders", "id"), "has-field"),
        (ORDERS, fld("orders", "amount"), "has-field"),
        (ORDERS, fld("orders", "customer"), "has-field"),
        (ORDERS, fld("orders", "customer.name"), "has-field"),
        (fld("orders", "customer.name"), "tag:pii", "tagged"),
        (fld("raw_orders", "id"), fld("orders", "id"), "column"),
        (fld("raw_orders", "amount"), fld("orders", "amount"), "column"),
        (fld("orders", "amount"), fld("daily", "total"), "column"),
    }
    assert vertices(result) == {ORDERS} | {n for edge in edges(result) for n in edge[:2]}
    nodes = result.nodes
    assert (nodes["namespace:shop"].kind, nodes["source:lakehouse"].kind) == ("namespace", "source")
    assert nodes["source:lakehouse"].properties == {"uri": "s3://lakehouse"}
    assert nodes[ALIAS].kind == "dataset" and nodes[ALIAS].properties == {"symlinkType": "TABLE"}
    assert nodes[ALIAS].node is not None and nodes[ALIAS].node.created_at == f"{DAY2}T02:00:00.0000000Z"
    view = nodes[VIEW]  # known only from the symlinks facet
    assert (view.namespace, view.name, view.node, view.properties) == (
        "web",
        "orders_view",
        None,
        {"symlinkType": "VIEW"},
    )
    assert nodes["owner:team:finance"].properties == {"type": "TEAM"}
    assert nodes["tag:pii"].kind == "tag"
    amount = nodes[fld("orders", "amount")]
    assert (amount.kind, amount.field, amount.field_type) == ("datasetField", "amount", "DECIMAL")
    assert nodes[fld("daily", "total")].field_type == "DECIMAL"  # the other end's type too
    assert nodes[fld("orders", "customer.name")].field_type == "STRING"
    transformations = {(e.src, e.dst): e.transformation for e in result.edges if e.kind == "column"}
    assert transformations == {
        (fld("raw_orders", "id"), fld("orders", "id")): "DIRECT/IDENTITY",
        (fld("raw_orders", "amount"), fld("orders", "amount")): "DIRECT/TRANSFORMATION",
        (fld("orders", "amount"), fld("daily", "total")): "DIRECT/AGGREGATION",
    }


def test_a_dataset_as_it_stood_on_day_one(shop: EventStore) -> None:
    result = answer(shop, ORDERS, DAY1_NOON)
    assert edges(result) == {
        ("namespace:shop", ORDERS, "contains"),
        ("source:lake", ORDERS, "source-of"),  # the dataSource facet of day 1
        (ALIAS, ORDERS, "symlink"),
        (VIEW, ORDERS, "symlink"),
        (ORDERS, "owner:team:sales", "owned-by"),  # the ownership facet then in force
        (ORDERS, "tag:gold", "tagged"),  # pii came on day 2
        (ORDERS, fld("orders", "id"), "has-field"),
        (ORDERS, fld("orders", "amount"), "has-field"),
        (ORDERS, fld("orders", "customer"), "has-field"),
        (ORDERS, fld("orders", "customer.name"), "has-field"),
        (fld("raw_orders", "id"), fld("orders", "id"), "column"),
        (fld("raw_orders", "amount"), fld("orders", "amount"), "column"),
        # daily was written on day 2: no column lineage down yet
    }
    assert result.nodes["source:lake"].properties == {"uri": "s3://lake"}
    assert result.nodes[ALIAS].node is None  # no event had named it yet: known from the facet
    assert result.as_of == DAY1_NOON


def test_another_name_answers_for_the_canonical_dataset(shop: EventStore) -> None:
    by_alias = answer(shop, ALIAS)
    assert by_alias.root == ORDERS
    assert edges(by_alias) == edges(answer(shop, ORDERS))
    assert answer(shop, RAW).nodes["source:pg"].properties == {"uri": "s3://pg"}


def test_a_name_only_a_symlinks_facet_declared_answers_too(shop: EventStore) -> None:
    # no event names web:orders_view: it is known only from orders' symlinks facet
    by_view = answer(shop, VIEW)
    assert by_view.root == ORDERS
    assert edges(by_view) == edges(answer(shop, ORDERS))
    downstream = lineage(shop, LineageQuery(VIEW, "downstream"))
    assert downstream.root == ORDERS
    assert set(downstream.nodes) == {ORDERS, "job:shop:report", DAILY}
    assert answer(shop, "datasetField:web:orders_view:amount").root == fld("orders", "amount")
    with pytest.raises(NotFound):
        answer(shop, "dataset:web:no_such_view")


def test_a_field(shop: EventStore) -> None:
    amount = answer(shop, fld("orders", "amount"))
    assert amount.root == fld("orders", "amount")
    assert edges(amount) == {
        (ORDERS, fld("orders", "amount"), "has-field"),
        ("namespace:shop", ORDERS, "contains"),
        (fld("raw_orders", "amount"), fld("orders", "amount"), "column"),
        (fld("orders", "amount"), fld("daily", "total"), "column"),
    }
    assert edges(answer(shop, fld("orders", "customer.name"))) == {
        (ORDERS, fld("orders", "customer.name"), "has-field"),
        ("namespace:shop", ORDERS, "contains"),
        (fld("orders", "customer.name"), "tag:pii", "tagged"),
    }
    assert edges(answer(shop, fld("orders", "customer.name"), DAY1_NOON)) == {
        (ORDERS, fld("orders", "customer.name"), "has-field"),
        ("namespace:shop", ORDERS, "contains"),
    }
    # a field named through the other name of the dataset
    assert answer(shop, "datasetField:warehouse:sales.orders:id").root == fld("orders", "id")


def test_a_job_now_and_on_day_one(shop: EventStore) -> None:
    load = answer(shop, "job:shop:load_orders")
    assert edges(load) == {
        ("namespace:shop", "job:shop:load_orders", "contains"),
        ("job:shop:nightly", "job:shop:load_orders", "parent"),
        ("job:shop:load_orders", "job:shop:report", "parent"),
        ("job:shop:load_orders", f"run:{L2}", "ran"),
        ("job:shop:load_orders", f"run:{L1}", "ran"),
    }
    runs = [n for n in load.nodes.values() if n.kind == "run"]
    assert [run.name for run in runs] == [L2, L1]  # newest first
    assert runs[0].properties == {
        "state": "COMPLETED",
        "startedAt": f"{DAY2}T01:00:00Z",
        "job": "job:shop:load_orders",
    }
    assert runs[0].namespace == "shop"
    then = answer(shop, "job:shop:load_orders", DAY1_NOON)
    assert {n for n in then.nodes if n.startswith("run:")} == {f"run:{L1}"}
    assert "job:shop:report" not in then.nodes  # the child job did not exist yet
    assert edges(answer(shop, "job:shop:report")) == {
        ("namespace:shop", "job:shop:report", "contains"),
        ("job:shop:load_orders", "job:shop:report", "parent"),
        ("job:shop:report", "owner:team:bi", "owned-by"),
        ("job:shop:report", "tag:critical", "tagged"),
        ("job:shop:report", f"run:{R}", "ran"),
    }


def test_runs_and_their_families(shop: EventStore) -> None:
    assert edges(answer(shop, f"run:{R}")) == {
        ("job:shop:report", f"run:{R}", "ran"),
        (f"run:{L2}", f"run:{R}", "parent"),
        (f"run:{N}", f"run:{R}", "root"),
    }
    nightly = answer(shop, f"run:{N}")
    assert edges(nightly) == {
        ("job:shop:nightly", f"run:{N}", "ran"),
        (f"run:{N}", f"run:{L1}", "parent"),
    }
    assert nightly.nodes[f"run:{L1}"].properties["job"] == "job:shop:load_orders"
    assert edges(answer(shop, f"run:{L1}")) == {  # its root is its parent: one edge
        ("job:shop:load_orders", f"run:{L1}", "ran"),
        (f"run:{N}", f"run:{L1}", "parent"),
    }
    assert answer(shop, f"run:{L2}", DAY2 + "T01:30:00.0000000Z").nodes.keys() == {
        f"run:{L2}",
        "job:shop:load_orders",
    }  # R, its child, began at 02:00
    assert answer(shop, f"run:{N.upper()}").root == f"run:{N}"


def test_limit_keeps_the_nearest_containment(shop: EventStore) -> None:
    alone = answer(shop, ORDERS, limit=1)
    assert vertices(alone) == {ORDERS} and alone.edges == [] and alone.truncated
    near = answer(shop, ORDERS, limit=7)
    assert near.truncated
    assert edges(near) == ORDERS_NEAR
    everything = answer(shop, ORDERS, limit=15)
    assert len(everything.nodes) == 15 and not everything.truncated
    assert answer(shop, ORDERS, limit=14).truncated


@pytest.mark.parametrize(
    ("node_id", "error", "message"),
    [
        ("dataset:shop:nope", NotFound, "dataset:shop:nope"),
        ("job:shop:nope", NotFound, "job:shop:nope"),
        (fld("orders", "nope"), NotFound, "field 'nope'"),
        (f"run:{uuid.UUID(int=9)}", NotFound, str(uuid.UUID(int=9))),
        (f"{ORDERS}#no-such-version", NotFound, "no-such-version"),
        ("nope", BadRequest, "nodeId"),
        ("dataset:orders", BadRequest, "dataset:orders"),
        ("datasetField:shop:orders", BadRequest, "datasetField"),
        ("run:not-a-uuid", NotFound, "not-a-uuid"),  # any run id is looked up
        (f"run:{N}#1", NotFound, f"{N}#1"),  # `#` is part of a run id: runs have no versions
    ],
)
def test_unknown_and_malformed_nodes(
    shop: EventStore, node_id: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        vertical(shop, node_id, as_of=None, limit=500)


def test_nodes_that_did_not_exist_yet(shop: EventStore) -> None:
    with pytest.raises(NotFound, match="did not exist yet"):
        vertical(shop, DAILY, as_of=DAY1_NOON, limit=500)
    with pytest.raises(NotFound, match="had not begun yet"):
        vertical(shop, f"run:{R}", as_of=DAY1_NOON, limit=500)
