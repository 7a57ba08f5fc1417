"""Impact analysis over HTTP: GET /api/warehouse/v1/impact, everything downstream (or upstream) of
a node as a flat list with distance, owners and latest run state (`headwater.query.impact`)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request

from headwater.api.auth import require_read
from headwater.api.lineage_routes import Depth, Limit, typed_query
from headwater.api.models import Impact
from headwater.api.params import Time, node_id
from headwater.api.routing import ModelRoute, errors
from headwater.query import lineage as lineage_query
from headwater.query.impact import impact, impact_json
from headwater.store.base import EventStore

router = APIRouter(
    prefix="/api/warehouse/v1",
    tags=["lineage warehouse (Egeria)"],
    dependencies=[Depends(require_read)],
    route_class=ModelRoute,
    responses=errors(401, 403),
)


@router.get(
    "/impact", summary="Impact analysis: every node downstream or upstream, as a list", responses=errors(404)
)
def get_impact(
    request: Request,
    nodeId: Annotated[str, Query(), node_id("dataset", "job", "datasetField")],
    direction: Literal["downstream", "upstream"] = "downstream",
    level: Literal["dataset", "column"] | None = None,
    depth: Depth = lineage_query.DEFAULT_DEPTH,
    limit: Limit = lineage_query.DEFAULT_LIMIT,
    asOf: Time = None,
) -> Impact:
    """`nodeId`: a dataset, job or field (`datasetField:…`, answered at column level);
    `direction`: downstream (default) or upstream; `level`: dataset (the default, except for a
    field) or column (a dataset's fields); `level=column` does not start from a job, nor
    `level=dataset` from a field (400); `depth` (transformations), `limit` (nodes), `asOf`.
    Each row: the node's distance, owners and the latest run that wrote it."""
    query = typed_query(nodeId, depth, limit, asOf, direction)
    store: EventStore = request.app.state.store
    with store.snapshot():
        answer = impact(store, query, direction, level)
    return Impact.model_validate(impact_json(answer))
