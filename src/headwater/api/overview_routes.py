"""GET /api/v1/overview: what the UI's home page shows, in one request."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from headwater.api.auth import require_read
from headwater.api.responses import JSONResponse
from headwater.query.overview import overview
from headwater.query.params import whole_number
from headwater.store.base import EventStore

router = APIRouter(prefix="/api/v1", tags=["overview"], dependencies=[Depends(require_read)])


@router.get("/overview", summary="Namespaces with their counts, the latest and the failed runs")
def get_overview(request: Request, runs: str | None = None) -> JSONResponse:
    """`{namespaces: [{name, datasets, jobs, runs, recentRuns, lastRunAt}], latestRuns: [Run],
    failedRuns: [Run], recentSince}`: each namespace with how many datasets and jobs it holds and
    how many runs its jobs made (in all, and in the 7 days before now); the `runs` latest runs of
    every job (default 10, at most 100), and the latest FAILED or ABORTED ones, newest first.
    Each Run is Marquez' with its `job` (`{namespace, name}`)."""
    store: EventStore = request.app.state.store
    return JSONResponse(overview(store, runs=whole_number("runs", runs, 10, 1, 100)))
