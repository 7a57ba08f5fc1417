"""Marquez' catalog over the lineage model: reads of namespaces, datasets, jobs, runs, versions,
sources, tags and search, and the rules they keep (a name must exist before it is read or tagged,
run-state and facet-kind parsing, whether an event belongs to a run). The HTTP routes and the CLI
call these; each raises BadRequest or NotFound naming what was wrong."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from headwater.errors import BadRequest, NotFound
from headwater.events.limits import MAX_TAG_BYTES, too_long
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
from headwater.query.marquez import (
    dataset_model,
    dataset_version_model,
    facets_json,
    job_model,
    job_version_model,
    namespace_model,
    run_model,
    search_model,
    source_model,
    tags_model,
)
from headwater.query.node_ids import dataset_id, job_id
from headwater.query.params import choice
from headwater.query.run_events import parse_run_id
from headwater.query.times import parse_time_param
from headwater.store.base import EventStore, StoredEvent
from headwater.store.model_rows import RUN_STATES, DatasetRow, JobRow, RunRow

DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000
MAX_OFFSET = 2**62
DEFAULT_SEARCH_LIMIT = 10
SEARCH_FILTERS = ("DATASET", "JOB")
SEARCH_SORTS = ("NAME", "UPDATE_AT")
FACET_KINDS = ("run", "job")
# Every tag, as PUT /tags answers them (Marquez answers the whole list).
ALL_TAGS = MAX_LIMIT


def text(name: str, value: str) -> str:
    """A name or text parameter; NUL, which no name holds and the databases refuse, is a 400."""
    if "\x00" in value:
        raise BadRequest(f"{name}: holds a NUL character")
    return value


def tag_name(value: str) -> str:
    """A tag's name: `text`, and at most MAX_TAG_BYTES bytes (it keys the tag tables, and a longer
    one failed PostgreSQL's index, a 503 its client would retry)."""
    size = too_long(text("tag", value), MAX_TAG_BYTES)
    if size is not None:
        raise BadRequest(f"tag: is {size} bytes long; a tag may have at most {MAX_TAG_BYTES}")
    return value


def run_states(values: Iterable[str]) -> list[str]:
    """`lastRunStates` values (repeatable or comma-separated, any case) as stored."""
    wanted: list[str] = []
    for value in values:
        for state in value.split(","):
            if state.strip().upper() not in RUN_STATES:
                raise BadRequest(f"lastRunStates: {state!r} is none of {', '.join(RUN_STATES)}")
            wanted.append(state.strip().upper())
    return wanted


def search_day(name: str, value: str | None) -> str | None:
    """`YYYY-MM-DD` (Marquez) or a full ISO 8601 time, in the stored form."""
    if value and len(value) == 10:
        value += "T00:00:00Z"
    return parse_time_param(name, value)


# -- namespaces ---------------------------------------------------------------------------------------
def namespaces(store: EventStore, *, limit: int, offset: int) -> Namespaces:
    return Namespaces(
        namespaces=[namespace_model(r) for r in store.list_namespaces(limit=limit, offset=offset)]
    )


def namespace(store: EventStore, name: str) -> Namespace:
    row = store.get_namespace(text("namespace", name))
    if row is None:
        raise NotFound(f"namespace '{name}' not found")
    return namespace_model(row)


# -- datasets -----------------------------------------------------------------------------------------
def datasets(store: EventStore, namespace_name: str, *, limit: int, offset: int) -> Datasets:
    namespace(store, namespace_name)
    rows = store.list_datasets(namespace_name, limit=limit, offset=offset)
    return Datasets(
        totalCount=store.count_datasets(namespace_name), datasets=[dataset_model(d) for d in rows]
    )


def _dataset_row(store: EventStore, namespace_name: str, name: str) -> DatasetRow:
    namespace(store, namespace_name)
    row = store.get_dataset(namespace_name, text("dataset", name))
    if row is None:
        raise NotFound(f"dataset '{name}' not found in namespace '{namespace_name}'")
    return row


def dataset(store: EventStore, namespace_name: str, name: str) -> Dataset:
    return dataset_model(_dataset_row(store, namespace_name, name))


def dataset_versions(
    store: EventStore, namespace_name: str, name: str, *, limit: int, offset: int
) -> DatasetVersions:
    """The dataset's versions, newest first."""
    _dataset_row(store, namespace_name, name)
    rows, total = store.list_dataset_versions(namespace_name, name, limit=limit, offset=offset)
    return DatasetVersions(totalCount=total, versions=[dataset_version_model(v) for v in rows])


def dataset_version(store: EventStore, namespace_name: str, name: str, version: str) -> DatasetVersion:
    _dataset_row(store, namespace_name, name)
    row = store.get_dataset_version(namespace_name, name, text("version", version))
    if row is None:
        raise NotFound(f"version '{version}' of dataset '{name}' not found")
    return dataset_version_model(row)


# -- jobs and runs ------------------------------------------------------------------------------------
def jobs(
    store: EventStore, namespace_name: str | None, *, states: Iterable[str] = (), limit: int, offset: int
) -> Jobs:
    """Jobs, latest update first, of one namespace or all; `states` keeps the jobs whose latest run
    is in one of them (see run_states)."""
    if namespace_name is not None:
        namespace(store, namespace_name)
    wanted = run_states(states) or None
    rows = store.list_jobs(namespace=namespace_name, states=wanted, limit=limit, offset=offset)
    total = store.count_jobs(namespace=namespace_name, states=wanted)
    return Jobs(totalCount=total, jobs=[job_model(j) for j in rows])


def _job_row(store: EventStore, namespace_name: str, name: str) -> JobRow:
    namespace(store, namespace_name)
    row = store.get_job(namespace_name, text("job", name))
    if row is None:
        raise NotFound(f"job '{name}' not found in namespace '{namespace_name}'")
    return row


def job(store: EventStore, namespace_name: str, name: str) -> Job:
    return job_model(_job_row(store, namespace_name, name))


def job_versions(
    store: EventStore, namespace_name: str, name: str, *, limit: int, offset: int
) -> JobVersions:
    """The job's versions, newest first."""
    _job_row(store, namespace_name, name)
    rows, total = store.list_job_versions(namespace_name, name, limit=limit, offset=offset)
    return JobVersions(totalCount=total, versions=[job_version_model(v) for v in rows])


def job_version(store: EventStore, namespace_name: str, name: str, version: str) -> JobVersion:
    _job_row(store, namespace_name, name)
    row = store.get_job_version(namespace_name, name, text("version", version))
    if row is None:
        raise NotFound(f"version '{version}' of job '{name}' not found")
    return job_version_model(row)


def runs(store: EventStore, namespace_name: str, job_name: str, *, limit: int, offset: int) -> Runs:
    """The job's runs, newest first."""
    _job_row(store, namespace_name, job_name)
    rows = store.list_runs(namespace_name, job_name, limit=limit, offset=offset)
    return Runs(totalCount=store.count_runs(namespace_name, job_name), runs=[run_model(r) for r in rows])


def _run_row(store: EventStore, run_id: str) -> RunRow:
    row = store.get_run(parse_run_id(run_id))
    if row is None:
        raise NotFound(f"run '{run_id}' not found")
    return row


def run(store: EventStore, run_id: str) -> Run:
    return run_model(_run_row(store, run_id))


def facet_kind(value: str | None) -> Literal["run", "job"]:
    """`type` of GET /jobs/runs/{runId}/facets: run or job, any case."""
    if value is None:
        raise BadRequest("type: required, run or job")
    if value.lower() not in FACET_KINDS:
        raise BadRequest(f"type: {value!r} is neither run nor job")
    return "run" if value.lower() == "run" else "job"


def run_facets(store: EventStore, run_id: str, kind: Literal["run", "job"]) -> RunFacets:
    """The run's facets (`run`), or its job's facets as they stood at the run's last event (`job`)."""
    row = _run_row(store, run_id)
    if kind == "run":
        return RunFacets(runId=row.run_id, facets=facets_json(row.facets))
    return RunFacets(runId=row.run_id, facets=facets_json(store.run_job_facets(row.run_id) or []))


def run_event(store: EventStore, run_id: str, event_id: str) -> StoredEvent:
    """One event of a run: the run's own, or one of a run whose parent or root it is."""
    wanted = parse_run_id(run_id)
    event = store.get_event(text("eventId", event_id).lower())
    if event is None or wanted not in (event.run_id, event.parent_run_id, event.root_run_id):
        raise NotFound(f"event {event_id} of run {wanted} not found")
    return event


# -- tags: set through the API, kept apart from the model the pipeline rebuilds -----------------------
def tag_dataset(
    store: EventStore,
    namespace_name: str,
    name: str,
    tag: str,
    *,
    field: str | None = None,
    tagged: bool,
    now: str,
) -> Dataset:
    """Tag (or untag) a dataset or one of its fields; the field must be in its current schema. An
    unknown tag is created. Answers the dataset as it is afterwards."""
    tag = tag_name(tag)
    row = _dataset_row(store, namespace_name, name)
    if field is not None and field not in {f.path for f in row.fields}:
        raise NotFound(f"field '{field}' not found in dataset '{name}'")
    store.set_tag(dataset_id(namespace_name, name), tag, field=field, tagged=tagged, now=now)
    return dataset_model(store.get_dataset(namespace_name, name) or row)


def tag_job(store: EventStore, namespace_name: str, name: str, tag: str, *, tagged: bool, now: str) -> Job:
    """Tag (or untag) a job; answers the job as it is afterwards."""
    tag = tag_name(tag)
    row = _job_row(store, namespace_name, name)
    store.set_tag(job_id(namespace_name, name), tag, field=None, tagged=tagged, now=now)
    return job_model(store.get_job(namespace_name, name) or row)


# -- deleting: markers hide a node until an event stored after the deletion names it again -------
def delete_dataset(store: EventStore, namespace_name: str, name: str, now: str) -> Dataset:
    """Hide the dataset from every read until an event stored after now mentions it; answers the
    dataset as it was (Marquez' answer). Its events stay in the event store."""
    found = dataset(store, namespace_name, name)
    store.hide_node(dataset_id(namespace_name, name), "dataset", namespace_name, now)
    return found


def delete_job(store: EventStore, namespace_name: str, name: str, now: str) -> Job:
    """Hide the job as `delete_dataset` hides a dataset; answers the job as it was."""
    found = job(store, namespace_name, name)
    store.hide_node(job_id(namespace_name, name), "job", namespace_name, now)
    return found


def delete_namespace(store: EventStore, name: str, now: str) -> Namespace:
    """Hide the namespace and every dataset and job in it; an event stored afterwards brings back
    its namespace and the datasets and jobs it names, not the rest. Answers the namespace as it
    was."""
    found = namespace(store, name)
    store.hide_namespace(name, now)
    return found


DELETABLE = ("dataset", "job", "namespace")


def delete_by_id(store: EventStore, kind: str, ident: str, now: str) -> Dataset | Job | Namespace:
    """`headwater delete KIND ID`: a namespace by name; a dataset or job by its node id
    (`dataset:{namespace}:{name}`, the `dataset:` or `job:` prefix optional), which the model
    keeps whole, as namespaces may hold colons."""
    if kind not in DELETABLE:
        raise BadRequest(f"kind: {kind!r} is none of {', '.join(DELETABLE)}")
    if kind == "namespace":
        return delete_namespace(store, ident, now)
    node_id = ident if ident.startswith(f"{kind}:") else f"{kind}:{text('id', ident)}"
    node = store.graph_nodes([node_id]).get(node_id)
    if node is None or node.kind != kind:
        raise NotFound(f"{kind} '{node_id}' not found")
    if kind == "dataset":
        return delete_dataset(store, node.namespace, node.name, now)
    return delete_job(store, node.namespace, node.name, now)


def put_tag(store: EventStore, name: str, description: str | None, now: str) -> Tags:
    """Create the tag or set its description; answers every tag, as Marquez does."""
    store.put_tag(tag_name(name), text("description", description) if description else description, now)
    return tags(store, limit=ALL_TAGS, offset=0)


def tags(store: EventStore, *, limit: int, offset: int) -> Tags:
    return tags_model(store.list_tags(limit=limit, offset=offset))


# -- sources and search -------------------------------------------------------------------------------
def sources(store: EventStore, *, limit: int, offset: int) -> Sources:
    return Sources(sources=[source_model(r) for r in store.list_sources(limit=limit, offset=offset)])


def source(store: EventStore, name: str) -> Source:
    found = store.get_source(text("source", name))
    if found is None:
        raise NotFound(f"source '{name}' not found")
    return source_model(found)


def search(
    store: EventStore,
    q: str,
    *,
    kind: str | None = None,
    namespace_name: str | None = None,
    sort: str | None = None,
    limit: int = DEFAULT_SEARCH_LIMIT,
    before: str | None = None,
    after: str | None = None,
) -> SearchResults:
    """Datasets and jobs whose name contains `q` (any case): `kind` DATASET or JOB, `sort` NAME
    (default) or UPDATE_AT (newest first), `before`/`after` (`YYYY-MM-DD` or a time) on the
    last update."""
    if not q:
        raise BadRequest("q: required, the text to look for in names")
    rows, total = store.search(
        text("q", q),
        kind=choice("filter", kind, "", SEARCH_FILTERS) or None,
        namespace=text("namespace", namespace_name) if namespace_name else None,
        sort=choice("sort", sort, "NAME", SEARCH_SORTS),
        limit=limit,
        before=search_day("before", before),
        after=search_day("after", after),
    )
    return search_model(rows, total)
