"""Marquez' catalog API over the lineage model: namespaces, datasets, jobs, runs, their versions,
sources, search and tags. Each route translates HTTP to one `headwater.query.catalog` call."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from headwater.api.auth import require_delete, require_read, require_tag_write
from headwater.api.params import NO_NUL, Day, Name, Offset, Text, any_case, any_case_list
from headwater.api.routing import ModelRoute, errors
from headwater.events.times import format_ticks, now_ticks
from headwater.query import catalog
from headwater.query.catalog_models import (
    Dataset,
    Datasets,
    DatasetVersion,
    DatasetVersions,
    Job,
    Jobs,
    JobVersion,
    JobVersions,
    Namespace,
    Namespaces,
    Run,
    RunFacets,
    Runs,
    SearchResults,
    Source,
    Sources,
    Tags,
)
from headwater.store.base import EventStore
from headwater.store.model_rows import RUN_STATES

router = APIRouter(
    prefix="/api/v1",
    tags=["lineage model (Marquez)"],
    dependencies=[Depends(require_read)],
    route_class=ModelRoute,
    responses=errors(401, 403),
)
# Tag writes need a write key (not a read key): a router of their own.
tag_router = APIRouter(
    prefix="/api/v1",
    tags=["tags (Marquez)"],
    dependencies=[Depends(require_tag_write)],
    route_class=ModelRoute,
    responses=errors(401, 403),
)
# Deleting (soft: the events stay) needs a write key too.
delete_router = APIRouter(
    prefix="/api/v1",
    tags=["deleting (Marquez)"],
    dependencies=[Depends(require_delete)],
    route_class=ModelRoute,
    responses=errors(401, 403),
)
Limit = Annotated[
    int, Query(ge=0, le=catalog.MAX_LIMIT, description=f"At most this many (default {catalog.DEFAULT_LIMIT})")
]


def _store(request: Request) -> EventStore:
    store: EventStore = request.app.state.store
    return store


@router.get("/namespaces", summary="Namespaces")
def list_namespaces(request: Request, limit: Limit = catalog.DEFAULT_LIMIT, offset: Offset = 0) -> Namespaces:
    """Every namespace a job or dataset uses, by name."""
    return catalog.namespaces(_store(request), limit=limit, offset=offset)


@router.get("/namespaces/{namespace:name}", summary="A namespace")
def get_namespace(request: Request, namespace: Name) -> Namespace:
    return catalog.namespace(_store(request), namespace)


@router.get("/namespaces/{namespace:name}/datasets", summary="Datasets of a namespace")
def list_datasets(
    request: Request, namespace: Name, limit: Limit = catalog.DEFAULT_LIMIT, offset: Offset = 0
) -> Datasets:
    """Datasets by name."""
    return catalog.datasets(_store(request), namespace, limit=limit, offset=offset)


@router.get("/namespaces/{namespace:name}/datasets/{dataset:name}/versions", summary="Versions of a dataset")
def list_dataset_versions(
    request: Request, namespace: Name, dataset: Name, limit: Limit = catalog.DEFAULT_LIMIT, offset: Offset = 0
) -> DatasetVersions:
    """The dataset's versions, newest first: one per distinct written content (schema,
    datasetVersion, lifecycle state), not one per run."""
    return catalog.dataset_versions(_store(request), namespace, dataset, limit=limit, offset=offset)


@router.get(
    "/namespaces/{namespace:name}/datasets/{dataset:name}/versions/{version:name}",
    summary="A version of a dataset",
)
def get_dataset_version(request: Request, namespace: Name, dataset: Name, version: Name) -> DatasetVersion:
    """The version with its fields and the dataset's facets as they stood when it was created."""
    return catalog.dataset_version(_store(request), namespace, dataset, version)


@router.get("/namespaces/{namespace:name}/datasets/{dataset:names}", summary="A dataset")
def get_dataset(request: Request, namespace: Name, dataset: Name) -> Dataset:
    """The dataset with its current facets and the fields of its current version. Encode slashes
    and colons in names (`s3%3A%2F%2Flake`); a dataset name may keep its slashes here, the end of
    the path."""
    return catalog.dataset(_store(request), namespace, dataset)


@router.get("/namespaces/{namespace:name}/jobs", summary="Jobs of a namespace")
def list_namespace_jobs(
    request: Request, namespace: Name, limit: Limit = catalog.DEFAULT_LIMIT, offset: Offset = 0
) -> Jobs:
    """Jobs, latest update first."""
    return catalog.jobs(_store(request), namespace, limit=limit, offset=offset)


@router.get("/namespaces/{namespace:name}/jobs/{job:name}/versions", summary="Versions of a job")
def list_job_versions(
    request: Request, namespace: Name, job: Name, limit: Limit = catalog.DEFAULT_LIMIT, offset: Offset = 0
) -> JobVersions:
    """The job's versions, newest first: one per distinct code location, SQL, inputs and outputs."""
    return catalog.job_versions(_store(request), namespace, job, limit=limit, offset=offset)


@router.get(
    "/namespaces/{namespace:name}/jobs/{job:name}/versions/{version:name}", summary="A version of a job"
)
def get_job_version(request: Request, namespace: Name, job: Name, version: Name) -> JobVersion:
    """The version with the job's facets as they stood at its latest run."""
    return catalog.job_version(_store(request), namespace, job, version)


@router.get("/namespaces/{namespace:name}/jobs/{job:names}/runs", summary="Runs of a job")
def list_runs(
    request: Request, namespace: Name, job: Name, limit: Limit = catalog.DEFAULT_LIMIT, offset: Offset = 0
) -> Runs:
    """Runs newest first."""
    return catalog.runs(_store(request), namespace, job, limit=limit, offset=offset)


@router.get("/namespaces/{namespace:name}/jobs/{job:names}", summary="A job")
def get_job(request: Request, namespace: Name, job: Name) -> Job:
    """The job with its current facets, its current version's inputs and outputs, and its latest
    runs."""
    return catalog.job(_store(request), namespace, job)


@router.get("/jobs", summary="Jobs of every namespace")
def list_jobs(
    request: Request,
    lastRunStates: Annotated[
        list[Annotated[str, Field(pattern=any_case_list(*RUN_STATES))]],
        Query(description=f"Repeatable or comma-separated, any case: {', '.join(RUN_STATES)}"),
    ] = [],  # noqa: B006 - FastAPI copies it
    limit: Limit = catalog.DEFAULT_LIMIT,
    offset: Offset = 0,
) -> Jobs:
    """Jobs, latest update first; `lastRunStates` keeps the jobs whose latest run is in one of them."""
    return catalog.jobs(_store(request), None, states=lastRunStates, limit=limit, offset=offset)


@router.get("/jobs/runs/{runId:name}", summary="A run")
def get_run(request: Request, runId: Name) -> Run:
    """A run; ids that are not UUIDs are percent-encoded like names."""
    return catalog.run(_store(request), runId)


@router.get("/jobs/runs/{runId:name}/facets", summary="Run or job facets of a run")
def get_run_facets(
    request: Request,
    runId: Name,
    type: Annotated[str, Query(pattern=any_case(*catalog.FACET_KINDS, empty=False))],
) -> RunFacets:
    """`type=run`: the run's facets; `type=job`: its job's facets as they stood at the run's last
    event."""
    return catalog.run_facets(_store(request), runId, catalog.facet_kind(type))


# -- tags: set through the API, kept apart from the model the pipeline rebuilds ----------------------
def _now() -> str:
    return format_ticks(now_ticks())


@tag_router.post(
    "/namespaces/{namespace:name}/datasets/{dataset:name}/tags/{tag:name}", summary="Tag a dataset"
)
def tag_dataset(request: Request, namespace: Name, dataset: Name, tag: Name) -> Dataset:
    """An unknown tag is created. Answers the dataset."""
    return catalog.tag_dataset(_store(request), namespace, dataset, tag, tagged=True, now=_now())


@tag_router.delete(
    "/namespaces/{namespace:name}/datasets/{dataset:name}/tags/{tag:name}", summary="Untag a dataset"
)
def untag_dataset(request: Request, namespace: Name, dataset: Name, tag: Name) -> Dataset:
    return catalog.tag_dataset(_store(request), namespace, dataset, tag, tagged=False, now=_now())


@tag_router.post(
    "/namespaces/{namespace:name}/datasets/{dataset:name}/fields/{field:name}/tags/{tag:name}",
    summary="Tag a field of a dataset",
)
def tag_field(request: Request, namespace: Name, dataset: Name, field: Name, tag: Name) -> Dataset:
    """The field must be in the dataset's current schema. Answers the dataset."""
    return catalog.tag_dataset(_store(request), namespace, dataset, tag, field=field, tagged=True, now=_now())


@tag_router.delete(
    "/namespaces/{namespace:name}/datasets/{dataset:name}/fields/{field:name}/tags/{tag:name}",
    summary="Untag a field of a dataset",
)
def untag_field(request: Request, namespace: Name, dataset: Name, field: Name, tag: Name) -> Dataset:
    store = _store(request)
    return catalog.tag_dataset(store, namespace, dataset, tag, field=field, tagged=False, now=_now())


@tag_router.post("/namespaces/{namespace:name}/jobs/{job:name}/tags/{tag:name}", summary="Tag a job")
def tag_job(request: Request, namespace: Name, job: Name, tag: Name) -> Job:
    """An unknown tag is created. Answers the job."""
    return catalog.tag_job(_store(request), namespace, job, tag, tagged=True, now=_now())


@tag_router.delete("/namespaces/{namespace:name}/jobs/{job:name}/tags/{tag:name}", summary="Untag a job")
def untag_job(request: Request, namespace: Name, job: Name, tag: Name) -> Job:
    return catalog.tag_job(_store(request), namespace, job, tag, tagged=False, now=_now())


@router.get("/tags", summary="Tags")
def list_tags(request: Request, limit: Limit = catalog.DEFAULT_LIMIT, offset: Offset = 0) -> Tags:
    """Tags by name."""
    return catalog.tags(_store(request), limit=limit, offset=offset)


class TagDescription(BaseModel):
    """The body of PUT /tags/{tag}."""

    model_config = ConfigDict(extra="ignore")
    description: Annotated[str | None, Field(pattern=NO_NUL)] = None


@tag_router.put("/tags/{tag:name}", summary="Create a tag")
def put_tag(request: Request, tag: Name, body: Annotated[TagDescription | None, Body()] = None) -> Tags:
    """Create the tag or set its description (optional body `{"description": "..."}`); answers
    every tag, as Marquez does."""
    description = body.description if body is not None else None
    return catalog.put_tag(_store(request), tag, description, _now())


# -- deleting: hidden from the model's reads until a newer event names it again ---------------------
@delete_router.delete("/namespaces/{namespace:name}/datasets/{dataset:names}", summary="Delete a dataset")
def delete_dataset(request: Request, namespace: Name, dataset: Name) -> Dataset:
    """Hide the dataset from lists, search and lineage until an event stored afterwards mentions
    it (its events stay stored). Answers the dataset as it was."""
    return catalog.delete_dataset(_store(request), namespace, dataset, _now())


@delete_router.delete("/namespaces/{namespace:name}/jobs/{job:names}", summary="Delete a job")
def delete_job(request: Request, namespace: Name, job: Name) -> Job:
    """Hide the job as a deleted dataset is hidden. Answers the job as it was."""
    return catalog.delete_job(_store(request), namespace, job, _now())


@delete_router.delete("/namespaces/{namespace:name}", summary="Delete a namespace")
def delete_namespace(request: Request, namespace: Name) -> Namespace:
    """Hide the namespace and every dataset and job in it; an event stored afterwards brings back
    the namespace and what it names. Answers the namespace as it was."""
    return catalog.delete_namespace(_store(request), namespace, _now())


# -- sources and search -------------------------------------------------------------------------------
@router.get("/sources", summary="Sources")
def list_sources(request: Request, limit: Limit = catalog.DEFAULT_LIMIT, offset: Offset = 0) -> Sources:
    """Data sources named by datasets' dataSource facet."""
    return catalog.sources(_store(request), limit=limit, offset=offset)


@router.get("/sources/{source:names}", summary="A source")
def get_source(request: Request, source: Name) -> Source:
    return catalog.source(_store(request), source)


@router.get("/search", summary="Search datasets and jobs")
def search(
    request: Request,
    q: Annotated[str, Query(pattern=NO_NUL, description="Text to look for in names, any case")],
    filter: Annotated[str | None, Query(pattern=any_case(*catalog.SEARCH_FILTERS))] = None,
    sort: Annotated[str | None, Query(pattern=any_case(*catalog.SEARCH_SORTS))] = None,
    limit: Annotated[int, Query(ge=1, le=catalog.MAX_LIMIT)] = catalog.DEFAULT_SEARCH_LIMIT,
    namespace: Text = None,
    before: Day = None,
    after: Day = None,
) -> SearchResults:
    """Datasets and jobs whose name contains `q`: `filter` DATASET or JOB, `sort` NAME (default)
    or UPDATE_AT (newest first), `namespace`, and `before` / `after` on the last update."""
    return catalog.search(
        _store(request),
        q,
        kind=filter,
        namespace_name=namespace,
        sort=sort,
        limit=limit,
        before=before,
        after=after,
    )
