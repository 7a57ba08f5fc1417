"""A model's history as FastScore's services report it, in generic events, for the fold of generic
events into the lineage graph (tests/pipeline/test_element_graph.py, tests/query, tests/api), and
an oracle that works out the folded nodes and edges from the events themselves.

    minute 1  put model: churn            model churn (model-hash 4b85, model-type Python3), model-manage-1
    minute 2  put schema: churn-input     schema churn-input, model-manage-1
    minute 3  attach schema: churn-input  model churn, schema churn-input
    minute 4  load model: churn           model churn (model-hash 9c21), engine-1, schema churn-input
    minute 5  engine state: RUNNING       engine-1 (state RUNNING)
    minute 6  load model: churn           model churn, engine-2
    minute 7  engine state: RUNNING       engine-2 (state RUNNING)
    minute 8  engine state: STOPPED       engine-1 (state STOPPED)
    minute 9  score: churn                model churn, dataset warehouse:public.customers (an OpenLineage
                                          dataset `CUSTOMERS_RUN` writes), dataset lake:raw.clicks (no
                                          OpenLineage event names it), dataset `scratch` (no namespace)

Each event is received at its minute of 2024-05-01 (`RECEIVED`), whatever order it is sent in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from headwater.events.generic import validate_generic_event
from headwater.events.limits import MAX_NODE_ID_BYTES
from headwater.query.node_ids import element_node_id
from headwater.store.base import EventStore
from headwater.store.generic import generic_store

CHURN = "element:model:churn"
MANAGER = "element:fastscore-service:model-manage-1"
SCHEMA = "element:schema:churn-input"
ENGINE1 = "element:engine:engine-1"
ENGINE2 = "element:engine:engine-2"
CUSTOMERS = "dataset:warehouse:public.customers"
CLICKS = "dataset:lake:raw.clicks"
SCRATCH = "element:dataset:scratch"


def _el(kind: str, description: str, **tags: Any) -> dict[str, Any]:
    return {"type": kind, "description": description, **({"tags": tags} if tags else {})}


HISTORY: list[dict[str, Any]] = [
    {
        "description": "put model: churn",
        "type": "put model",
        "elements": [
            _el("model", "churn", **{"model-hash": "4b85", "model-type": "Python3"}),
            _el("fastscore-service", "model-manage-1"),
        ],
        "tags": {"pneumo-timestamp": "2018-12-12T21:35:21.613138Z"},
    },
    {
        "description": "put schema: churn-input",
        "type": "put schema",
        "elements": [_el("schema", "churn-input"), _el("fastscore-service", "model-manage-1")],
    },
    {
        "description": "attach schema: churn-input",
        "type": "attach schema",
        "elements": [_el("model", "churn"), _el("schema", "churn-input")],
    },
    {
        "description": "load model: churn",
        "type": "load model",
        "elements": [
            _el("model", "churn", **{"model-hash": "9c21"}),
            _el("engine", "engine-1"),
            _el("schema", "churn-input"),
        ],
    },
    {
        "description": "engine state: RUNNING",
        "type": "engine state",
        "elements": [_el("engine", "engine-1", state="RUNNING")],
    },
    {
        "description": "load model: churn",
        "type": "load model",
        "elements": [_el("model", "churn"), _el("engine", "engine-2")],
    },
    {
        "description": "engine state: RUNNING",
        "type": "engine state",
        "elements": [_el("engine", "engine-2", state="RUNNING")],
    },
    {
        "description": "engine state: STOPPED",
        "type": "engine state",
        "elements": [_el("engine", "engine-1", state="STOPPED", replicas=0)],
    },
    {
        "description": "score: churn",
        "type": "score",
        "elements": [
            _el("model", "churn"),
            _el("dataset", "warehouse:public.customers"),
            _el("dataset", "lake:raw.clicks"),
            _el("dataset", "scratch"),
            _el("model", "churn"),  # named twice: once, at its first place
        ],
    },
]
RECEIVED = [f"2024-05-01T00:{minute:02d}:00.0000000Z" for minute in range(1, len(HISTORY) + 1)]
CUSTOMERS_RUN: dict[str, Any] = {
    "eventType": "COMPLETE",
    "eventTime": "2024-05-01T00:00:30Z",
    "run": {"runId": "0190a0a0-0000-7000-8000-0000000000c1"},
    "job": {"namespace": "crm", "name": "export_customers"},
    "outputs": [{"namespace": "warehouse", "name": "public.customers"}],
    "producer": "https://example.com/crm",
}


def send(store: EventStore, order: Sequence[int] | None = None) -> None:
    """Append the history's events one at a time (in `order`, default as listed), each with its
    own receive time."""
    browse = generic_store(store)
    for index in order if order is not None else range(len(HISTORY)):
        browse.append_generic([validate_generic_event(HISTORY[index])], RECEIVED[index])


def expected(events: Sequence[dict[str, Any]], received: Sequence[str]) -> tuple[set[Any], set[Any]]:
    """The element nodes (node id, type, description, created, updated, events) and the event edges
    (src, dst, event type, created, updated, events) the fold must make of `events`."""
    nodes: dict[str, list[Any]] = {}
    edges: dict[tuple[str, str, str], list[Any]] = {}
    for event, at in zip(events, received, strict=True):
        ids: list[str] = []
        for element in event["elements"]:
            node = element_node_id(element["type"], element["description"])
            if len(node.encode()) > MAX_NODE_ID_BYTES:  # stored before the limits: left out
                continue
            if node not in ids:
                ids.append(node)
                row = nodes.setdefault(node, [element["type"], element["description"], at, at, 0])
                row[2], row[3], row[4] = min(row[2], at), max(row[3], at), row[4] + 1
        for i, src in enumerate(ids):
            for dst in ids[i + 1 :]:
                row = edges.setdefault((src, dst, event["type"]), [at, at, 0])
                row[0], row[1], row[2] = min(row[0], at), max(row[1], at), row[2] + 1
    return (
        {(node, *row) for node, row in nodes.items()},
        {(*key, *row) for key, row in edges.items()},
    )


def folded(store: EventStore) -> tuple[set[Any], set[Any]]:
    """The element nodes and event edges the pipeline published, as `expected` gives them."""
    times = "created_at, updated_at, event_count"
    with store.transaction() as cur:
        cur.execute(f"SELECT node_id, type, description, {times} FROM element_nodes")
        nodes = {(*row[:5], int(row[5])) for row in cur.fetchall()}
        cur.execute(f"SELECT src_id, dst_id, event_type, {times} FROM element_edges")
        edges = {(*row[:5], int(row[5])) for row in cur.fetchall()}
    return nodes, edges
