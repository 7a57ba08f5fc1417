"""Marquez' read API over the lineage model: namespaces, datasets, jobs, runs (GET only).

Names may hold slashes and colons (`s3://lake/raw/orders`): clients percent-encode them
(`s3%3A%2F%2Flake`). The routes below match the decoded path, which loses where a name ends, so
every namespace route reads its names back from the raw path, one encoded segment each.
"""

from __future__ import annotations

from urllib.parse import unquote

from fastapi import APIRouter, Depends, Query, Request

from headwater.api.auth import require_read
from headwater.api.responses import JSONResponse
from headwater.errors import BadRequest, NotFound
from headwater.query.marquez import dataset_json, facets_json, job_json, namespace_json, run_json
from headwater.query.params import whole_number
from headwater.query.run_events import parse_run_id
from headwater.store.base import EventStore
from headwater.store.model_rows import RUN_STATES, RunRow

router = APIRouter(prefix="/api/v1", tags=["lineage model (Marquez)"], dependencies=[Depends(require_read)])
NAMESPACES = "/api/v1/namespaces/"
DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000
MAX_OFFSET = 2**62


def _store(request: Request) -> EventStore:
    store: EventStore = request.app.state.store
    return store


def _paging(limit: str | None, offset: str | None) -> tuple[int, int]:
    return (
        whole_number("limit", limit, DEFAULT_LIMIT, 0, MAX_LIMIT),
        whole_number("offset", offset, 0, 0, MAX_OFFSET),
    )


def _segments(request: Request) -> list[str]:
    """The path after /api/v1/namespaces/, split at the slashes the client did not encode."""
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1") if isinstance(raw, bytes) else request.url.path
    _, found, rest = path.partition(NAMESPACES)
    if not found:
        raise NotFound(f"no route for {request.url.path}")
    return [unquote(part) for part in rest.split("/")]


def _namespace(store: EventStore, name: str) -> None:
    if store.get_namespace(name) is None:
        raise NotFound(f"namespace '{name}' not found")


def _namespace_answer(request: Request, limit: str | None, offset: str | None) -> JSONResponse:
    """Dispatch on the raw path. A name with unencoded slashes still works when it is the last
    name of the path (`/namespaces/ns/datasets/raw/orders`), except a job whose name ends in `/runs`."""
    store = _store(request)
    parts = _segments(request)
    namespace, kind, rest = parts[0], parts[1] if len(parts) > 1 else None, parts[2:]
    if kind is None:
        row = store.get_namespace(namespace)
        if row is None:
            raise NotFound(f"namespace '{namespace}' not found")
        return JSONResponse(namespace_json(row))
    if kind == "datasets":
        _namespace(store, namespace)
        if not rest:
            size, skip = _paging(limit, offset)
            datasets = store.list_datasets(namespace, limit=size, offset=skip)
            total = store.count_datasets(namespace)
            return JSONResponse({"totalCount": total, "datasets": [dataset_json(d) for d in datasets]})
        name = "/".join(rest)
        dataset = store.get_dataset(namespace, name)
        if dataset is None:
            raise NotFound(f"dataset '{name}' not found in namespace '{namespace}'")
        return JSONResponse(dataset_json(dataset))
    if kind == "jobs":
        _namespace(store, namespace)
        if not rest:
            return _jobs_answer(store, namespace, [], limit, offset)
        runs = len(rest) > 1 and rest[-1] == "runs"
        name = "/".join(rest[:-1] if runs else rest)
        job = store.get_job(namespace, name)
        if job is None:
            raise NotFound(f"job '{name}' not found in namespace '{namespace}'")
        if not runs:
            return JSONResponse(job_json(job))
        size, skip = _paging(limit, offset)
        rows = store.list_runs(namespace, name, limit=size, offset=skip)
        total = store.count_runs(namespace, name)
        return JSONResponse({"totalCount": total, "runs": [run_json(r) for r in rows]})
    raise NotFound(f"no route for {request.url.path}")


def _jobs_answer(
    store: EventStore, namespace: str | None, states: list[str], limit: str | None, offset: str | None
) -> JSONResponse:
    size, skip = _paging(limit, offset)
    wanted: list[str] = []
    for value in states:
        for state in value.split(","):
            if state.strip().upper() not in RUN_STATES:
                raise BadRequest(f"lastRunStates: {state!r} is none of {', '.join(RUN_STATES)}")
            wanted.append(state.strip().upper())
    jobs = store.list_jobs(namespace=namespace, states=wanted or None, limit=size, offset=skip)
    total = store.count_jobs(namespace=namespace, states=wanted or None)
    return JSONResponse({"totalCount": total, "jobs": [job_json(j) for j in jobs]})


@router.get("/namespaces", summary="Namespaces")
def list_namespaces(request: Request, limit: str | None = None, offset: str | None = None) -> JSONResponse:
    """Every namespace a job or dataset uses, by name: `{namespaces: [...]}`."""
    size, skip = _paging(limit, offset)
    rows = _store(request).list_namespaces(limit=size, offset=skip)
    return JSONResponse({"namespaces": [namespace_json(row) for row in rows]})


# The most specific paths first: `{namespace:path}` would match all of them.
@router.get("/namespaces/{namespace:path}/datasets/{dataset:path}", summary="A dataset")
def get_dataset(request: Request, namespace: str, dataset: str) -> JSONResponse:
    """The dataset with its current facets and the fields of its current version. Encode slashes
    and colons in names (`s3%3A%2F%2Flake`)."""
    return _namespace_answer(request, None, None)


@router.get("/namespaces/{namespace:path}/datasets", summary="Datasets of a namespace")
def list_datasets(
    request: Request, namespace: str, limit: str | None = None, offset: str | None = None
) -> JSONResponse:
    """Datasets by name, `limit` (default 100) from `offset`: `{totalCount, datasets: [...]}`."""
    return _namespace_answer(request, limit, offset)


@router.get("/namespaces/{namespace:path}/jobs/{job:path}/runs", summary="Runs of a job")
def list_runs(
    request: Request, namespace: str, job: str, limit: str | None = None, offset: str | None = None
) -> JSONResponse:
    """Runs newest first, `limit` (default 100) from `offset`: `{totalCount, runs: [...]}`."""
    return _namespace_answer(request, limit, offset)


@router.get("/namespaces/{namespace:path}/jobs/{job:path}", summary="A job")
def get_job(request: Request, namespace: str, job: str) -> JSONResponse:
    """The job with its current facets, its current version's inputs and outputs, and its latest
    runs."""
    return _namespace_answer(request, None, None)


@router.get("/namespaces/{namespace:path}/jobs", summary="Jobs of a namespace")
def list_namespace_jobs(
    request: Request, namespace: str, limit: str | None = None, offset: str | None = None
) -> JSONResponse:
    """Jobs, latest update first: `{totalCount, jobs: [...]}`."""
    return _namespace_answer(request, limit, offset)


@router.get("/namespaces/{namespace:path}", summary="A namespace")
def get_namespace(request: Request, namespace: str) -> JSONResponse:
    return _namespace_answer(request, None, None)


@router.get("/jobs", summary="Jobs of every namespace")
def list_jobs(
    request: Request,
    lastRunStates: list[str] = Query(default=[]),  # noqa: B008
    limit: str | None = None,
    offset: str | None = None,
) -> JSONResponse:
    """Jobs, latest update first; `lastRunStates` (repeatable or comma-separated: NEW, RUNNING,
    COMPLETED, FAILED, ABORTED) keeps the jobs whose latest run is in one of them."""
    return _jobs_answer(_store(request), None, lastRunStates, limit, offset)


def _run(store: EventStore, run_id: str) -> RunRow:
    run = store.get_run(parse_run_id(run_id))
    if run is None:
        raise NotFound(f"run '{run_id}' not found")
    return run


@router.get("/jobs/runs/{runId}", summary="A run")
def get_run(request: Request, runId: str) -> JSONResponse:
    return JSONResponse(run_json(_run(_store(request), runId)))


@router.get("/jobs/runs/{runId}/facets", summary="Run or job facets of a run")
def get_run_facets(request: Request, runId: str, type: str | None = None) -> JSONResponse:
    """`type=run`: the run's facets; `type=job`: its job's facets as they stood at the run's last
    event. Answer: `{runId, facets}`."""
    kind = (type or "").lower()
    if type is None:
        raise BadRequest("type: required, run or job")
    if kind not in ("run", "job"):
        raise BadRequest(f"type: {type!r} is neither run nor job")
    store = _store(request)
    run = _run(store, runId)
    if kind == "run":
        return JSONResponse({"runId": run.run_id, "facets": facets_json(run.facets)})
    facets = store.run_job_facets(run.run_id) or []
    return JSONResponse({"runId": run.run_id, "facets": facets_json(facets)})
