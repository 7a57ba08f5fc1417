"""The lineage warehouse API (Egeria's open lineage query service): horizontal lineage
(upstream, downstream, end-to-end, ultimate source and destination) and vertical lineage of a
node, as vertices and edges; node search and the node and edge types. Its graph holds the
elements the pipeline folded from generic events too, linked by `event` edges."""

from __future__ import annotations

import dataclasses
from typing import Literal

from fastapi import APIRouter, Depends, Request

from headwater.api.auth import require_read
from headwater.api.lineage_routes import lineage_query_from
from headwater.api.responses import JSONResponse
from headwater.errors import NotFound
from headwater.query import lineage as lineage_query
from headwater.query import vertical as vertical_query
from headwater.query.lineage import LineageResult, TraversalDirection
from headwater.query.lineage_json import warehouse_graph
from headwater.query.params import boolean, choice, whole_number
from headwater.store.base import EventStore

router = APIRouter(
    prefix="/api/warehouse/v1", tags=["lineage warehouse (Egeria)"], dependencies=[Depends(require_read)]
)
HORIZONTAL: dict[str, TraversalDirection] = {
    "end-to-end": "both",
    "upstream": "upstream",
    "downstream": "downstream",
}
SCOPES = (*HORIZONTAL, "ultimate-source", "ultimate-destination", "vertical")


def _store(request: Request) -> EventStore:
    store: EventStore = request.app.state.store
    return store


@router.get("/lineage/{scope}", summary="Lineage of a node in one scope")
def get_lineage(
    request: Request,
    scope: str,
    nodeId: str | None = None,
    includeProcesses: str | None = None,
    depth: str | None = None,
    limit: str | None = None,
    asOf: str | None = None,
) -> JSONResponse:
    """`scope`: end-to-end, upstream, downstream, ultimate-source, ultimate-destination or
    vertical. `nodeId`: a dataset, job, dataset field (`datasetField:…` answers at column
    level) or element of generic events (`element:{type}:{description}`: its `event` edges, or
    in the vertical scope its tags and events; an element has no ultimate ends);
    `includeProcesses=false` leaves jobs out and joins their inputs to their outputs with
    `condensed` edges. `nodeId` may also be a whole namespace (`namespace:{name}`): every
    dataset and job in it, and what is `depth` jobs away from them. `depth` (jobs, or
    transformations for fields; default 20), `limit` (nodes,
    default 500), `asOf` (ISO 8601). Answer: `{vertices, edges, truncated, expandable}`."""
    if scope not in SCOPES:
        raise NotFound(f"scope '{scope}' is none of {', '.join(SCOPES)}")
    processes = boolean("includeProcesses", includeProcesses, True)
    direction = HORIZONTAL.get(scope, "both")
    query = dataclasses.replace(
        lineage_query_from(nodeId, depth, limit, asOf, direction, processes), events=True
    )
    store = _store(request)
    result: LineageResult
    with store.snapshot():
        if scope in HORIZONTAL and query.node_id.startswith("namespace:"):
            result = lineage_query.namespace_lineage(store, query.node_id.removeprefix("namespace:"), query)
        elif scope in HORIZONTAL:
            result = lineage_query.lineage(store, query)
        elif scope == "vertical":
            result = vertical_query.vertical(store, query.node_id, as_of=query.as_of, limit=query.limit)
        else:
            end: Literal["source", "destination"] = "source" if scope == "ultimate-source" else "destination"
            result = lineage_query.ultimate(store, query.node_id, end, as_of=query.as_of, limit=query.limit)
    return JSONResponse(warehouse_graph(result, scope))


NODE_TYPES = {
    "dataset": "a dataset (`dataset:{namespace}:{name}`)",
    "job": "a job (`job:{namespace}:{name}`)",
    "datasetField": "a field of a dataset's schema (`datasetField:{namespace}:{dataset}:{field}`)",
    "run": "a run of a job (`run:{runId}`); `properties`: state, startedAt, job",
    "namespace": "a namespace (`namespace:{name}`)",
    "source": "a data source named by the dataSource facet (`source:{name}`); `properties.uri`",
    "tag": "a tag set through the API (`tag:{name}`)",
    "owner": "an owner named by the ownership facet (`owner:{name}`); `properties.type`",
}
# listed once the pipeline has folded a generic event's element into the graph
ELEMENT_NODE_TYPES = {
    "element": "an element of generic events (`element:{type}:{description}`); `properties`: type, "
    "description, eventCount, elementId (its id in `/lineage/1/elements`)",
    "event": "a generic event that names the element (`event:{id}`, vertical); `properties`: type, "
    "timestamp, eventId",
    "elementTag": "a tag of the element, the latest value of its key (`elementTag:{id}`, vertical); "
    "`properties`: key, value, tagId",
}
EDGE_TYPES = {
    "input": "dataset → the job that reads it",
    "output": "job → the dataset it writes",
    "condensed": "dataset → dataset through a job (includeProcesses=false); `properties.job` names it",
    "column": "field → field computed from it; `properties.transformation` e.g. DIRECT/IDENTITY",
    "ultimate-source": "ultimate source → the node asked; the vertex carries `distance`",
    "ultimate-destination": "the node asked → ultimate destination; the vertex carries `distance`",
    "contains": "namespace → dataset or job (vertical)",
    "source-of": "source → dataset (vertical)",
    "has-field": "dataset → field of its schema (vertical)",
    "symlink": "another name of the dataset (a symlink) → the dataset (vertical)",
    "tagged": "dataset, field or job → tag (vertical)",
    "owned-by": "dataset or job → owner (vertical)",
    "parent": "parent job → child job, parent run → child run (vertical)",
    "root": "root run of the run's tree → the run, when not its parent (vertical)",
    "ran": "job → run (vertical)",
}
ELEMENT_EDGE_TYPES = {
    "event": "element → an element listed after it in generic events of one type; `properties`: "
    "label (the event type), eventCount, firstEventAt, lastEventAt",
    "in-event": "element → a generic event that names it, newest first (vertical)",
}
DEFAULT_NODES = 100
MAX_NODES = 10_000


@router.get("/nodes", summary="Find nodes by name")
def find_nodes(
    request: Request, name: str | None = None, type: str | None = None, limit: str | None = None
) -> JSONResponse:
    """Nodes whose name (a field's path, a run's id, an element's description) contains `name` in
    any case, of one `type` (dataset, job, datasetField, namespace, source, run, tag, element) or
    of all, the first `limit` by name (default 100, at most 10,000): `{nodes: [{nodeID, nodeType,
    displayName, qualifiedName, properties}], truncated}`, each node as lineage vertices show it."""
    kind = choice("type", type, "", vertical_query.NODE_TYPES) or None
    size = whole_number("limit", limit, DEFAULT_NODES, 1, MAX_NODES)
    found, more = vertical_query.find_nodes(_store(request), kind, name or "", size)
    vertices = warehouse_graph(LineageResult("", {node.id: node for node in found}), "nodes")["vertices"]
    return JSONResponse({"nodes": vertices, "truncated": more})


@router.get("/types", summary="Node and edge types")
def types(request: Request) -> JSONResponse:
    """Every node type and edge type a warehouse answer can hold, with what it means:
    `{nodeTypes: [{name, description}], edgeTypes: [{name, description}]}`. The element types
    (element, event, elementTag; edges event, in-event) are listed once the pipeline has folded
    a generic event into the graph."""
    nodes, edges = NODE_TYPES, EDGE_TYPES
    if _store(request).has_elements():
        nodes, edges = {**nodes, **ELEMENT_NODE_TYPES}, {**edges, **ELEMENT_EDGE_TYPES}
    return JSONResponse(
        {
            "nodeTypes": [{"name": k, "description": v} for k, v in nodes.items()],
            "edgeTypes": [{"name": k, "description": v} for k, v in edges.items()],
        }
    )
