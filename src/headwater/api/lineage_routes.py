"""Marquez' lineage endpoints: GET /api/v1/lineage, /api/v1/column-lineage and
/api/v1/runlineage/upstream, directed and with `asOf` and `limit` on top of Marquez' parameters."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from headwater.api.auth import require_read
from headwater.api.responses import JSONResponse
from headwater.query import lineage as lineage_query
from headwater.query.lineage import LineageQuery, TraversalDirection
from headwater.query.lineage_json import marquez_column_graph, marquez_graph
from headwater.query.params import boolean, choice, whole_number
from headwater.query.run_lineage import upstream_runs, upstream_runs_json
from headwater.query.times import parse_time_param
from headwater.store.base import EventStore

router = APIRouter(prefix="/api/v1", tags=["lineage (Marquez)"], dependencies=[Depends(require_read)])
DIRECTIONS = ("both", "upstream", "downstream")


def _store(request: Request) -> EventStore:
    store: EventStore = request.app.state.store
    return store


def lineage_query_from(
    node_id: str | None,
    depth: str | None,
    limit: str | None,
    as_of: str | None,
    direction: TraversalDirection = "both",
    include_processes: bool = True,
) -> LineageQuery:
    """A LineageQuery from query parameters, or a 400 naming the bad one."""
    return LineageQuery(
        node_id=node_id or "",
        direction=direction,
        depth=whole_number("depth", depth, lineage_query.DEFAULT_DEPTH, 0, lineage_query.MAX_DEPTH),
        limit=whole_number("limit", limit, lineage_query.DEFAULT_LIMIT, 1, lineage_query.MAX_LIMIT),
        as_of=parse_time_param("asOf", as_of),
        include_processes=include_processes,
    )


@router.get("/lineage", summary="Lineage graph of a dataset or job")
def get_lineage(
    request: Request,
    nodeId: str | None = None,
    depth: str | None = None,
    direction: str | None = None,
    limit: str | None = None,
    asOf: str | None = None,
) -> JSONResponse:
    """The upstream and downstream of `nodeId` (`dataset:{namespace}:{name}` or
    `job:{namespace}:{name}`), `depth` jobs deep (default 20). Unlike Marquez the graph is
    directed: nodes that merely share a dataset with the node are not in it. `direction`
    (upstream, downstream, both), `limit` (nodes, default 500; `truncated` and `expandable` tell
    where to ask again), `asOf` (ISO 8601: the lineage as it stood then)."""
    way = choice("direction", direction, "both", DIRECTIONS)
    query = lineage_query_from(nodeId, depth, limit, asOf, way)  # type: ignore[arg-type]
    store = _store(request)
    with store.snapshot():
        result = lineage_query.lineage(store, query)
        if result.nodes and next(iter(result.nodes.values())).kind == "datasetField":
            return JSONResponse(marquez_column_graph(result))
        return JSONResponse(marquez_graph(store, result))


@router.get("/column-lineage", summary="Column lineage of a dataset or field")
def get_column_lineage(
    request: Request,
    nodeId: str | None = None,
    depth: str | None = None,
    withDownstream: str | None = None,
    limit: str | None = None,
    asOf: str | None = None,
) -> JSONResponse:
    """Field-level lineage of `nodeId` (`datasetField:{namespace}:{dataset}:{field}`, or a
    dataset for all its fields): the fields each is computed from, `depth` transformations deep
    (default 20); `withDownstream=true` adds the fields computed from them."""
    downstream = boolean("withDownstream", withDownstream, False)
    query = lineage_query_from(nodeId, depth, limit, asOf, "both" if downstream else "upstream")
    store = _store(request)
    with store.snapshot():
        return JSONResponse(marquez_column_graph(lineage_query.column_lineage(store, query)))


@router.get("/runlineage/upstream", summary="Runs upstream of a run")
def get_run_lineage_upstream(
    request: Request, runId: str | None = None, depth: str | None = None, limit: str | None = None
) -> JSONResponse:
    """The run, then the runs that wrote the dataset versions it read (the latest write before
    it started), and theirs, `depth` levels deep (default 20), at most `limit` runs (500)."""
    store = _store(request)
    with store.snapshot():
        runs, truncated = upstream_runs(
            store,
            runId or "",
            whole_number("depth", depth, lineage_query.DEFAULT_DEPTH, 0, lineage_query.MAX_DEPTH),
            whole_number("limit", limit, lineage_query.DEFAULT_LIMIT, 1, lineage_query.MAX_LIMIT),
        )
    return JSONResponse(upstream_runs_json(runs, truncated))
