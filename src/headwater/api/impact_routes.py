"""Impact analysis over HTTP: GET /api/warehouse/v1/impact, everything downstream (or upstream) of
a node as a flat list with distance, owners and latest run state (`headwater.query.impact`)."""

from __future__ import annotations

from typing import cast

from fastapi import APIRouter, Depends, Request

from headwater.api.auth import require_read
from headwater.api.lineage_routes import lineage_query_from
from headwater.api.responses import JSONResponse
from headwater.query.impact import ImpactDirection, Level, impact, impact_json
from headwater.query.params import choice
from headwater.store.base import EventStore

router = APIRouter(
    prefix="/api/warehouse/v1", tags=["lineage warehouse (Egeria)"], dependencies=[Depends(require_read)]
)


@router.get("/impact", summary="Impact analysis: every node downstream or upstream, as a list")
def get_impact(
    request: Request,
    nodeId: str | None = None,
    direction: str | None = None,
    level: str | None = None,
    depth: str | None = None,
    limit: str | None = None,
    asOf: str | None = None,
) -> JSONResponse:
    """`nodeId`: a dataset, job or field (`datasetField:…`, answered at column level);
    `direction`: downstream (default) or upstream; `level`: dataset (default) or column (a
    dataset's fields); `depth` (transformations, default 20), `limit` (nodes, default 500),
    `asOf` (ISO 8601). Answer: `{nodeID, node, direction, level, rows: [{nodeID, nodeType,
    namespace, name, field, distance, owners, latestRunState, latestRunTime, latestRunJob,
    expandable}], truncated, asOf}`."""
    way = cast(ImpactDirection, choice("direction", direction, "downstream", ("downstream", "upstream")))
    chosen = cast(Level, choice("level", level, "", ("dataset", "column")) or None)
    query = lineage_query_from(nodeId, depth, limit, asOf, way)
    store: EventStore = request.app.state.store
    with store.snapshot():
        answer = impact(store, query, way, chosen)
    return JSONResponse(impact_json(answer))
