"""Marquez' read API over the lineage model: namespaces, datasets, jobs, runs (GET only).

Names may hold slashes and colons (`s3://lake/raw/orders`): clients percent-encode them
(`s3%3A%2F%2Flake`). The routes below match the decoded path, which loses where a name ends, so
every namespace route reads its names back from the raw path, one encoded segment each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import unquote

import orjson
from fastapi import APIRouter, Depends, Query, Request

from headwater.api.auth import require_read, require_tag_write
from headwater.api.responses import JSONResponse
from headwater.errors import BadRequest, NotFound
from headwater.events.times import format_ticks, now_ticks
from headwater.query.marquez import (
    dataset_json,
    dataset_version_json,
    facets_json,
    job_json,
    job_version_json,
    namespace_json,
    run_json,
    search_json,
    source_json,
    tags_json,
)
from headwater.query.node_ids import dataset_id, job_id
from headwater.query.params import choice, whole_number
from headwater.query.run_events import parse_run_id
from headwater.query.times import parse_time_param
from headwater.store.base import EventStore
from headwater.store.model_rows import RUN_STATES, RunRow

Row = TypeVar("Row")
router = APIRouter(prefix="/api/v1", tags=["lineage model (Marquez)"], dependencies=[Depends(require_read)])
# Tag writes need a write key (not a read key): a router of their own.
tag_router = APIRouter(prefix="/api/v1", tags=["tags (Marquez)"], dependencies=[Depends(require_tag_write)])
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


def _text(name: str, value: str) -> str:
    """A name or text parameter; NUL, which no name holds and the databases refuse, is a 400."""
    if "\x00" in value:
        raise BadRequest(f"{name}: holds a NUL character")
    return value


def _segments(request: Request) -> list[str]:
    """The path after /api/v1/namespaces/, split at the slashes the client did not encode."""
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1") if isinstance(raw, bytes) else request.url.path
    _, found, rest = path.partition(NAMESPACES)
    if not found:
        raise NotFound(f"no route for {request.url.path}")
    return [_text("path", unquote(part)) for part in rest.split("/")]


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
        if len(rest) in (2, 3) and rest[1] == "versions":
            return _versions_answer(store, "dataset", namespace, rest[0], rest[2:], limit, offset)
        name = "/".join(rest)
        dataset = store.get_dataset(namespace, name)
        if dataset is None:
            raise NotFound(f"dataset '{name}' not found in namespace '{namespace}'")
        return JSONResponse(dataset_json(dataset))
    if kind == "jobs":
        _namespace(store, namespace)
        if not rest:
            return _jobs_answer(store, namespace, [], limit, offset)
        if len(rest) in (2, 3) and rest[1] == "versions":
            return _versions_answer(store, "job", namespace, rest[0], rest[2:], limit, offset)
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


def _pages(
    version: list[str],
    one: Callable[[str], Row | None],
    many: Callable[[int, int], tuple[list[Row], int]],
    shape: Callable[[Row], dict[str, Any]],
    limit: str | None,
    offset: str | None,
    what: str,
) -> JSONResponse:
    """One version (`version` = [id]) or a page of them: `{totalCount, versions}`."""
    if version:
        found = one(version[0])
        if found is None:
            raise NotFound(f"version '{version[0]}' of {what} not found")
        return JSONResponse(shape(found))
    versions, total = many(*_paging(limit, offset))
    return JSONResponse({"totalCount": total, "versions": [shape(v) for v in versions]})


def _versions_answer(
    store: EventStore,
    kind: str,
    namespace: str,
    name: str,
    version: list[str],
    limit: str | None,
    offset: str | None,
) -> JSONResponse:
    """`…/{dataset|job}/versions` (newest first) or `…/versions/{version}`."""
    what = f"{kind} '{name}'"
    if kind == "dataset":
        if store.get_dataset(namespace, name) is None:
            raise NotFound(f"{what} not found in namespace '{namespace}'")
        return _pages(
            version,
            lambda v: store.get_dataset_version(namespace, name, v),
            lambda size, skip: store.list_dataset_versions(namespace, name, limit=size, offset=skip),
            dataset_version_json,
            limit,
            offset,
            what,
        )
    if store.get_job(namespace, name) is None:
        raise NotFound(f"{what} not found in namespace '{namespace}'")
    return _pages(
        version,
        lambda v: store.get_job_version(namespace, name, v),
        lambda size, skip: store.list_job_versions(namespace, name, limit=size, offset=skip),
        job_version_json,
        limit,
        offset,
        what,
    )


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
def get_dataset(
    request: Request, namespace: str, dataset: str, limit: str | None = None, offset: str | None = None
) -> JSONResponse:
    """The dataset with its current facets and the fields of its current version. Encode slashes
    and colons in names (`s3%3A%2F%2Flake`). Also `…/{dataset}/versions` (newest first, `limit`,
    `offset`) and `…/{dataset}/versions/{version}`."""
    return _namespace_answer(request, limit, offset)


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
def get_job(
    request: Request, namespace: str, job: str, limit: str | None = None, offset: str | None = None
) -> JSONResponse:
    """The job with its current facets, its current version's inputs and outputs, and its latest
    runs. Also `…/{job}/versions` (newest first, `limit`, `offset`) and `…/{job}/versions/{version}`."""
    return _namespace_answer(request, limit, offset)


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


# -- tags: set through the API, kept apart from the model the pipeline rebuilds ----------------------
def _now() -> str:
    return format_ticks(now_ticks())


def _tag_answer(request: Request, tagged: bool) -> JSONResponse:
    """POST (tag) or DELETE (untag) .../datasets/{dataset}/tags/{tag},
    .../datasets/{dataset}/fields/{field}/tags/{tag} or .../jobs/{job}/tags/{tag}."""
    store = _store(request)
    parts = _segments(request)
    if len(parts) in (5, 7):
        _namespace(store, parts[0])
    if len(parts) == 5 and parts[1] == "datasets" and parts[3] == "tags":
        namespace, _, name, _, tag = parts
        field = None
    elif len(parts) == 7 and parts[1] == "datasets" and parts[3] == "fields" and parts[5] == "tags":
        namespace, _, name, _, field, _, tag = parts
    elif len(parts) == 5 and parts[1] == "jobs" and parts[3] == "tags":
        namespace, _, name, _, tag = parts
        job = store.get_job(namespace, name)
        if job is None:
            raise NotFound(f"job '{name}' not found in namespace '{namespace}'")
        store.set_tag(job_id(namespace, name), tag, field=None, tagged=tagged, now=_now())
        return JSONResponse(job_json(store.get_job(namespace, name) or job))
    else:
        raise NotFound(f"no route for {request.method} {request.url.path}")
    dataset = store.get_dataset(namespace, name)
    if dataset is None:
        raise NotFound(f"dataset '{name}' not found in namespace '{namespace}'")
    if field is not None and field not in {f.path for f in dataset.fields}:
        raise NotFound(f"field '{field}' not found in dataset '{name}'")
    store.set_tag(dataset_id(namespace, name), tag, field=field, tagged=tagged, now=_now())
    return JSONResponse(dataset_json(store.get_dataset(namespace, name) or dataset))


@tag_router.post("/namespaces/{namespace:path}/datasets/{dataset:path}")
def tag_dataset(request: Request, namespace: str, dataset: str) -> JSONResponse:
    """Tag a dataset (`…/datasets/{dataset}/tags/{tag}`) or one of its fields
    (`…/datasets/{dataset}/fields/{field}/tags/{tag}`); answers the dataset. An unknown tag is
    created."""
    return _tag_answer(request, tagged=True)


@tag_router.delete("/namespaces/{namespace:path}/datasets/{dataset:path}")
def untag_dataset(request: Request, namespace: str, dataset: str) -> JSONResponse:
    """Remove a tag from a dataset or one of its fields; answers the dataset."""
    return _tag_answer(request, tagged=False)


@tag_router.post("/namespaces/{namespace:path}/jobs/{job:path}")
def tag_job(request: Request, namespace: str, job: str) -> JSONResponse:
    """Tag a job (`…/jobs/{job}/tags/{tag}`); answers the job."""
    return _tag_answer(request, tagged=True)


@tag_router.delete("/namespaces/{namespace:path}/jobs/{job:path}")
def untag_job(request: Request, namespace: str, job: str) -> JSONResponse:
    """Remove a tag from a job; answers the job."""
    return _tag_answer(request, tagged=False)


@router.get("/tags", summary="Tags")
def list_tags(request: Request, limit: str | None = None, offset: str | None = None) -> JSONResponse:
    """Tags by name: `{tags: [{name, description}]}`."""
    size, skip = _paging(limit, offset)
    return JSONResponse(tags_json(_store(request).list_tags(limit=size, offset=skip)))


@tag_router.put("/tags/{tag}", summary="Create a tag")
async def put_tag(request: Request, tag: str) -> JSONResponse:
    """Create the tag or set its description (body `{"description": "..."}`, optional); answers
    every tag, as Marquez does."""
    body = await request.body()
    description = None
    if body.strip():
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise BadRequest(f"body: not JSON ({exc})") from None
        value = document.get("description") if isinstance(document, dict) else None
        if value is not None and not isinstance(value, str):
            raise BadRequest("description: must be a string")
        description = _text("description", value) if value is not None else None
    store = _store(request)
    store.put_tag(_text("tag", tag), description, _now())
    return JSONResponse(tags_json(store.list_tags(limit=MAX_LIMIT, offset=0)))


# -- sources and search -------------------------------------------------------------------------------
@router.get("/sources", summary="Sources")
def list_sources(request: Request, limit: str | None = None, offset: str | None = None) -> JSONResponse:
    """Data sources named by datasets' dataSource facet: `{sources: [...]}`."""
    size, skip = _paging(limit, offset)
    return JSONResponse(
        {"sources": [source_json(r) for r in _store(request).list_sources(limit=size, offset=skip)]}
    )


@router.get("/sources/{source:path}", summary="A source")
def get_source(request: Request, source: str) -> JSONResponse:
    found = _store(request).get_source(_text("source", source))
    if found is None:
        raise NotFound(f"source '{source}' not found")
    return JSONResponse(source_json(found))


SEARCH_FILTERS = ("DATASET", "JOB")
SEARCH_SORTS = ("NAME", "UPDATE_AT")


def _day(name: str, value: str | None) -> str | None:
    """`YYYY-MM-DD` (Marquez) or a full ISO 8601 time, in the stored form."""
    if value and len(value) == 10:
        value += "T00:00:00Z"
    return parse_time_param(name, value)


@router.get("/search", summary="Search datasets and jobs")
def search(
    request: Request,
    q: str | None = None,
    filter: str | None = None,
    sort: str | None = None,
    limit: str | None = None,
    namespace: str | None = None,
    before: str | None = None,
    after: str | None = None,
) -> JSONResponse:
    """Datasets and jobs whose name contains `q` (any case): `filter` DATASET or JOB, `sort` NAME
    (default) or UPDATE_AT (newest first), `limit` (default 10), `namespace`, and `before` /
    `after` (`YYYY-MM-DD` or a time) on the last update. Answer: `{totalCount, results}`."""
    if not q:
        raise BadRequest("q: required, the text to look for in names")
    kind = choice("filter", filter, "", SEARCH_FILTERS) or None
    rows, total = _store(request).search(
        _text("q", q),
        kind=kind,
        namespace=_text("namespace", namespace) if namespace else None,
        sort=choice("sort", sort, "NAME", SEARCH_SORTS),
        limit=whole_number("limit", limit, 10, 1, MAX_LIMIT),
        before=_day("before", before),
        after=_day("after", after),
    )
    return JSONResponse(search_json(rows, total))
