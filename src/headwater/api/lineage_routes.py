"""Marquez' lineage endpoints: GET /api/v1/lineage, /api/v1/column-lineage and
/api/v1/runlineage/upstream, directed and with `asOf` and `limit` on top of Marquez' parameters."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from headwater.api.auth import require_read
from headwater.api.models import ColumnLineageGraph, LineageGraph, UpstreamRuns
from headwater.api.params import NO_NUL, Time, any_case, node_id
from headwater.api.routing import ModelRoute, errors
from headwater.query import lineage as lineage_query
from headwater.query.lineage import LineageQuery, TraversalDirection
from headwater.query.lineage_json import marquez_column_graph, marquez_graph
from headwater.query.run_lineage import upstream_runs, upstream_runs_json
from headwater.query.times import parse_time_param
from headwater.store.base import EventStore

router = APIRouter(
    prefix="/api/v1",
    tags=["lineage (Marquez)"],
    dependencies=[Depends(require_read)],
    route_class=ModelRoute,
    responses=errors(401, 403),
)
DIRECTIONS: tuple[TraversalDirection, ...] = ("both", "upstream", "downstream")
Depth = Annotated[
    int,
    Query(
        ge=0,
        le=lineage_query.MAX_DEPTH,
        description=f"Jobs (or transformations) deep; default {lineage_query.DEFAULT_DEPTH}",
    ),
]
Limit = Annotated[
    int,
    Query(
        ge=1,
        le=lineage_query.MAX_LIMIT,
        description=f"At most this many nodes; default {lineage_query.DEFAULT_LIMIT}",
    ),
]
NOT_FOUND = errors(404)


def _store(request: Request) -> EventStore:
    store: EventStore = request.app.state.store
    return store


def typed_query(
    node: str,
    depth: int,
    limit: int,
    as_of: str | None,
    direction: TraversalDirection = "both",
    include_processes: bool = True,
) -> LineageQuery:
    """A LineageQuery from typed query parameters (`asOf` still to be read as a time)."""
    return LineageQuery(
        node_id=node,
        direction=direction,
        depth=depth,
        limit=limit,
        as_of=parse_time_param("asOf", as_of),
        include_processes=include_processes,
    )


@router.get("/lineage", summary="Lineage graph of a dataset or job", responses=NOT_FOUND)
def get_lineage(
    request: Request,
    nodeId: Annotated[str, Query(), node_id("dataset", "job", "datasetField")],
    depth: Depth = lineage_query.DEFAULT_DEPTH,
    direction: Annotated[str, Query(pattern=any_case(*DIRECTIONS))] = "both",
    limit: Limit = lineage_query.DEFAULT_LIMIT,
    asOf: Time = None,
) -> LineageGraph | ColumnLineageGraph:
    """The upstream and downstream of `nodeId`, `depth` jobs deep. Unlike Marquez the graph is
    directed: nodes that merely share a dataset with the node are not in it. `direction`
    (upstream, downstream, both), `limit` (nodes; `truncated` and `expandable` tell where to ask
    again), `asOf` (the lineage as it stood then). A field (`datasetField:…`) is answered with
    its column lineage."""
    way = next(d for d in DIRECTIONS if d == (direction.lower() or "both"))
    query = typed_query(nodeId, depth, limit, asOf, way)
    store = _store(request)
    with store.snapshot():
        result = lineage_query.lineage(store, query)
        if result.nodes and next(iter(result.nodes.values())).kind == "datasetField":
            return ColumnLineageGraph.model_validate(marquez_column_graph(result))
        return LineageGraph.model_validate(marquez_graph(store, result))


@router.get("/column-lineage", summary="Column lineage of a dataset or field", responses=NOT_FOUND)
def get_column_lineage(
    request: Request,
    nodeId: Annotated[str, Query(), node_id("dataset", "datasetField", "job")],
    depth: Depth = lineage_query.DEFAULT_DEPTH,
    withDownstream: bool = False,
    limit: Limit = lineage_query.DEFAULT_LIMIT,
    asOf: Time = None,
) -> ColumnLineageGraph:
    """Field-level lineage of `nodeId` (a field, a dataset for all its fields, or a job for the
    fields it writes): the fields each is computed from, `depth` transformations deep;
    `withDownstream=true` adds the fields computed from them."""
    query = typed_query(nodeId, depth, limit, asOf, "both" if withDownstream else "upstream")
    store = _store(request)
    with store.snapshot():
        return ColumnLineageGraph.model_validate(
            marquez_column_graph(lineage_query.column_lineage(store, query))
        )


@router.get("/runlineage/upstream", summary="Runs upstream of a run", responses=NOT_FOUND)
def get_run_lineage_upstream(
    request: Request,
    runId: Annotated[str, Query(pattern=NO_NUL)],
    depth: Depth = lineage_query.DEFAULT_DEPTH,
    limit: Limit = lineage_query.DEFAULT_LIMIT,
) -> UpstreamRuns:
    """The run, then the runs that wrote the dataset versions it read (the latest write before
    it started), and theirs, `depth` levels deep, at most `limit` runs."""
    store = _store(request)
    with store.snapshot():
        runs, truncated = upstream_runs(store, runId, depth, limit)
    return UpstreamRuns.model_validate(upstream_runs_json(runs, truncated))
