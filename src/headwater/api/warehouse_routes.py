"""The lineage warehouse API (Egeria's open lineage query service): horizontal lineage
(upstream, downstream, end-to-end, ultimate source and destination) and vertical lineage of a
node, as vertices and edges; node search and the node and edge types. Its graph holds the
elements the pipeline folded from generic events too, linked by `event` edges."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request

from headwater.api.auth import require_read
from headwater.api.lineage_routes import Depth, Limit, typed_query
from headwater.api.models import Nodes, Types, WarehouseGraph
from headwater.api.params import Time, any_case, node_id
from headwater.api.routing import ModelRoute, errors
from headwater.query import lineage as lineage_query
from headwater.query import vertical as vertical_query
from headwater.query.lineage import LineageResult, TraversalDirection
from headwater.query.lineage_json import warehouse_graph
from headwater.store.base import EventStore

router = APIRouter(
    prefix="/api/warehouse/v1",
    tags=["lineage warehouse (Egeria)"],
    dependencies=[Depends(require_read)],
    route_class=ModelRoute,
    responses=errors(401, 403),
)
HORIZONTAL: dict[str, TraversalDirection] = {
    "end-to-end": "both",
    "upstream": "upstream",
    "downstream": "downstream",
}
SCOPES = (*HORIZONTAL, "ultimate-source", "ultimate-destination", "vertical")
# The node kinds each scope takes (the OpenAPI document states them, one operation per scope).
SCOPE_NODES = {
    **dict.fromkeys(HORIZONTAL, ("dataset", "job", "datasetField", "element", "namespace")),
    "ultimate-source": ("dataset", "job", "datasetField"),
    "ultimate-destination": ("dataset", "job", "datasetField"),
    "vertical": ("dataset", "job", "datasetField", "run", "element"),
}


def _store(request: Request) -> EventStore:
    store: EventStore = request.app.state.store
    return store


def _lineage(
    request: Request,
    scope: str,
    nodeId: str,
    includeProcesses: bool = True,
    depth: int = lineage_query.DEFAULT_DEPTH,
    limit: int = lineage_query.DEFAULT_LIMIT,
    asOf: str | None = None,
) -> WarehouseGraph:
    """`nodeId`: a dataset, job, dataset field (`datasetField:…` answers at column level) or
    element of generic events (`element:{type}:{description}`: its `event` edges, or in the
    vertical scope its tags and events; an element has no ultimate ends);
    `includeProcesses=false` leaves jobs out and joins their inputs to their outputs with
    `condensed` edges. In the horizontal scopes `nodeId` may also be a whole namespace
    (`namespace:{name}`): every dataset and job in it, and what is `depth` jobs away from them.
    `depth`: jobs, or transformations for fields; `limit`: nodes."""
    direction = HORIZONTAL.get(scope, "both")
    query = dataclasses.replace(
        typed_query(nodeId, depth, limit, asOf, direction, includeProcesses), events=True
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
    return WarehouseGraph.model_validate(warehouse_graph(result, scope))


def _scope_endpoint(scope: str) -> Callable[..., WarehouseGraph]:
    """GET /lineage/{scope}: `_lineage` with the scope fixed and its own node kinds declared."""

    def endpoint(request: Request, **params: object) -> WarehouseGraph:
        return _lineage(request, scope, **params)  # type: ignore[arg-type]

    kinds = SCOPE_NODES[scope]
    parameter = inspect.Parameter
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            parameter("request", parameter.POSITIONAL_OR_KEYWORD, annotation=Request),
            parameter("nodeId", parameter.KEYWORD_ONLY, annotation=Annotated[str, Query(), node_id(*kinds)]),
            parameter("includeProcesses", parameter.KEYWORD_ONLY, annotation=bool, default=True),
            parameter("depth", parameter.KEYWORD_ONLY, annotation=Depth, default=lineage_query.DEFAULT_DEPTH),
            parameter("limit", parameter.KEYWORD_ONLY, annotation=Limit, default=lineage_query.DEFAULT_LIMIT),
            parameter("asOf", parameter.KEYWORD_ONLY, annotation=Time, default=None),
        ],
        return_annotation=WarehouseGraph,
    )
    endpoint.__doc__ = _lineage.__doc__
    endpoint.__name__ = f"get_lineage_{scope.replace('-', '_')}"
    return endpoint


for _scope in SCOPES:
    router.add_api_route(
        f"/lineage/{_scope}",
        _scope_endpoint(_scope),
        methods=["GET"],
        summary=f"Lineage of a node: {_scope}",
        responses=errors(404),
    )

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
    request: Request,
    name: Annotated[str | None, Query(pattern="^[^\\x00]*$")] = None,
    type: Annotated[str | None, Query(pattern=any_case(*vertical_query.NODE_TYPES))] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_NODES, description=f"Default {DEFAULT_NODES}")] = DEFAULT_NODES,
) -> Nodes:
    """Nodes whose name (a field's path, a run's id, an element's description) contains `name` in
    any case, of one `type` (dataset, job, datasetField, namespace, source, run, tag, element) or
    of all, the first `limit` by name (default 100, at most 10,000): `{nodes: [{nodeID, nodeType,
    displayName, qualifiedName, properties}], truncated}`, each node as lineage vertices show it."""
    kind = next((t for t in vertical_query.NODE_TYPES if t.lower() == (type or "").lower()), None)
    found, more = vertical_query.find_nodes(_store(request), kind, name or "", limit)
    vertices = warehouse_graph(LineageResult("", {node.id: node for node in found}), "nodes")["vertices"]
    return Nodes.model_validate({"nodes": vertices, "truncated": more})


@router.get("/types", summary="Node and edge types")
def types(request: Request) -> Types:
    """Every node type and edge type a warehouse answer can hold, with what it means:
    `{nodeTypes: [{name, description}], edgeTypes: [{name, description}]}`. The element types
    (element, event, elementTag; edges event, in-event) are listed once the pipeline has folded
    a generic event into the graph."""
    nodes, edges = NODE_TYPES, EDGE_TYPES
    if _store(request).has_elements():
        nodes, edges = {**nodes, **ELEMENT_NODE_TYPES}, {**edges, **ELEMENT_EDGE_TYPES}
    return Types.model_validate(
        {
            "nodeTypes": [{"name": k, "description": v} for k, v in nodes.items()],
            "edgeTypes": [{"name": k, "description": v} for k, v in edges.items()],
        }
    )
