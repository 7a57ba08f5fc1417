"""GET /api/v1/overview: what the UI's home page shows, in one request; GET /api/v1/pipeline: how
far the pipeline has published the events stored."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from headwater.api.auth import require_read
from headwater.api.models import Overview, PipelineProgress
from headwater.api.routing import ModelRoute, errors
from headwater.query.overview import overview, pipeline_progress
from headwater.store.base import EventStore

router = APIRouter(
    prefix="/api/v1",
    tags=["overview"],
    dependencies=[Depends(require_read)],
    route_class=ModelRoute,
    responses=errors(401, 403),
)


@router.get("/overview", summary="Namespaces with their counts, the latest and the failed runs")
def get_overview(
    request: Request,
    runs: Annotated[int, Query(ge=1, le=100, description="Runs in each list (default 10)")] = 10,
) -> Overview:
    """Each namespace with how many datasets and jobs it holds and how many runs its jobs made
    (in all, and in the 7 days before now); the `runs` latest runs of every job, and the latest
    FAILED or ABORTED ones, newest first. Each run is Marquez' with its `job`."""
    store: EventStore = request.app.state.store
    return Overview.model_validate(overview(store, runs=runs))


@router.get("/pipeline", summary="How far the pipeline has published the events stored")
def get_pipeline(request: Request) -> PipelineProgress:
    """The last seq stored, the checkpoints of the model and of its graph, how many events wait for
    the pipeline and when it last published: what to watch when lineage just sent does not show
    yet (a pipeline that is not running, or one that is behind)."""
    store: EventStore = request.app.state.store
    return PipelineProgress.model_validate(pipeline_progress(store))
