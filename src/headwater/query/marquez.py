"""The lineage model in Marquez' JSON shapes (spec/openapi.yml of MarquezProject/marquez): rows of
the store → the typed answers of `headwater.query.catalog_models`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, cast

import orjson

from headwater.query.catalog_models import (
    Dataset,
    DatasetField,
    DatasetId,
    DatasetVersion,
    Job,
    JobVersion,
    Namespace,
    Run,
    RunState,
    SearchResult,
    SearchResults,
    Source,
    Tag,
    Tags,
    VersionId,
)
from headwater.query.times import display_time
from headwater.store.model_rows import (
    DatasetRef,
    DatasetRow,
    DatasetVersionRow,
    Facet,
    FieldRow,
    JobRow,
    JobVersionRow,
    NamespaceRow,
    RunRow,
    SearchRow,
    SourceRow,
    TagRow,
)

# Marquez' owner of the namespaces that lineage events create.
DEFAULT_OWNER = "anonymous"


def _time(stored: str | None) -> str | None:
    return display_time(stored) if stored else None


def facets_json(facets: Iterable[Facet]) -> dict[str, Any]:
    """{name: value}; the stored values are JSON already and go out unparsed."""
    return {facet.name: orjson.Fragment(facet.value) for facet in facets}


def _facet_field(facets: Iterable[Facet], name: str, field: str) -> str | None:
    """A string field of one facet, or None when the facet or the field is missing or malformed."""
    for facet in facets:
        if facet.name != name:
            continue
        try:
            value = orjson.loads(facet.value)
        except orjson.JSONDecodeError:
            return None
        found = value.get(field) if isinstance(value, dict) else None
        return found if isinstance(found, str) else None
    return None


def namespace_model(row: NamespaceRow) -> Namespace:
    return Namespace(
        name=row.name,
        createdAt=display_time(row.created_at),
        updatedAt=display_time(row.updated_at),
        ownerName=DEFAULT_OWNER,
        description=None,
        isHidden=False,
    )


def _ref(ref: DatasetRef) -> DatasetId:
    return DatasetId(namespace=ref.namespace, name=ref.name)


def _fields(fields: Iterable[FieldRow], tags: Iterable[tuple[str, str]] = ()) -> list[DatasetField]:
    by_field: dict[str, list[str]] = {}
    for path, tag in tags:
        by_field.setdefault(path, []).append(tag)
    return [
        DatasetField(name=f.path, type=f.type, tags=by_field.get(f.path, []), description=f.description)
        for f in fields
    ]


def dataset_model(row: DatasetRow) -> Dataset:
    return Dataset(
        id=DatasetId(namespace=row.namespace, name=row.name),
        type="DB_TABLE",
        name=row.name,
        physicalName=row.name,
        createdAt=display_time(row.created_at),
        updatedAt=display_time(row.updated_at),
        namespace=row.namespace,
        sourceName=row.source_name,
        fields=_fields(row.fields, row.field_tags),
        tags=list(row.tags),
        lastModifiedAt=_time(row.last_modified_at),
        lastLifecycleState=row.lifecycle,
        description=_facet_field(row.facets, "documentation", "description"),
        facets=facets_json(row.facets),
        currentVersion=row.current_version,
        deleted=False,
    )


def run_model(row: RunRow) -> Run:
    return Run(
        id=row.run_id,
        createdAt=display_time(row.created_at),
        updatedAt=display_time(row.updated_at),
        nominalStartTime=_time(row.nominal_start),
        nominalEndTime=_time(row.nominal_end),
        state=cast(RunState, row.state),  # one of RUN_STATES; the model checks it
        startedAt=_time(row.started_at),
        endedAt=_time(row.ended_at),
        durationMs=row.duration_ms,
        args={},
        jobVersion=(
            VersionId(namespace=row.job_namespace, name=row.job_name, version=row.job_version)
            if row.job_version
            else None
        ),
        facets=facets_json(row.facets),
    )


def run_json(row: RunRow) -> dict[str, Any]:
    """A run as a JSON-ready dict (facets as raw JSON fragments), for answers built around it."""
    return run_model(row).model_dump()


def _job_type(facets: Iterable[Facet]) -> Literal["BATCH", "STREAM"]:
    processing = _facet_field(facets, "jobType", "processingType")
    return "STREAM" if processing and processing.upper() == "STREAMING" else "BATCH"


def _simple_name(row: JobRow) -> str:
    if row.parent_name and row.name.startswith(row.parent_name + "."):
        return row.name[len(row.parent_name) + 1 :]
    return row.name


def job_model(row: JobRow) -> Job:
    return Job(
        id=DatasetId(namespace=row.namespace, name=row.name),
        type=_job_type(row.facets),
        name=row.name,
        simpleName=_simple_name(row),
        parentJobName=row.parent_name,
        createdAt=display_time(row.created_at),
        updatedAt=display_time(row.updated_at),
        namespace=row.namespace,
        inputs=[_ref(ref) for ref in row.inputs],
        outputs=[_ref(ref) for ref in row.outputs],
        location=_facet_field(row.facets, "sourceCodeLocation", "url"),
        description=_facet_field(row.facets, "documentation", "description"),
        latestRun=run_model(row.latest_run) if row.latest_run else None,
        latestRuns=[run_model(run) for run in row.latest_runs],
        facets=facets_json(row.facets),
        currentVersion=row.current_version,
        tags=list(row.tags),
    )


def source_model(row: SourceRow) -> Source:
    """Marquez' Source; the type is the URI's scheme (POSTGRES, S3, …), UNKNOWN without one."""
    scheme = (row.uri or "").partition("://")[0] if row.uri and "://" in row.uri else ""
    return Source(
        type=scheme.upper() or "UNKNOWN",
        name=row.name,
        createdAt=display_time(row.created_at),
        updatedAt=display_time(row.updated_at),
        connectionUrl=row.uri,
        description=None,
    )


def dataset_version_model(row: DatasetVersionRow) -> DatasetVersion:
    return DatasetVersion(
        id=VersionId(namespace=row.namespace, name=row.name, version=row.version_id),
        type="DB_TABLE",
        name=row.name,
        physicalName=row.name,
        createdAt=display_time(row.created_at),
        version=row.version_id,
        datasetVersion=row.version_label,
        namespace=row.namespace,
        sourceName=row.source_name,
        fields=_fields(row.fields),
        tags=list(row.tags),
        lifecycleState=row.lifecycle,
        description=_facet_field(row.facets, "documentation", "description"),
        createdByRun=run_model(row.created_by_run) if row.created_by_run else None,
        facets=facets_json(row.facets),
    )


def job_version_model(row: JobVersionRow) -> JobVersion:
    return JobVersion(
        id=VersionId(namespace=row.namespace, name=row.name, version=row.version_id),
        name=row.name,
        version=row.version_id,
        createdAt=_time(row.created_at),
        updatedAt=_time(row.updated_at),
        namespace=row.namespace,
        inputs=[_ref(ref) for ref in row.inputs],
        outputs=[_ref(ref) for ref in row.outputs],
        # the URL of the code location, as Marquez gives it (row.location is the whole identity)
        location=_facet_field(row.facets, "sourceCodeLocation", "url"),
        runCount=row.run_count,
        latestRun=run_model(row.latest_run) if row.latest_run else None,
        facets=facets_json(row.facets),
    )


def search_model(rows: Iterable[SearchRow], total: int) -> SearchResults:
    return SearchResults(
        totalCount=total,
        results=[
            SearchResult(
                type=cast(Literal["DATASET", "JOB"], row.kind),
                name=row.name,
                updatedAt=display_time(row.updated_at),
                namespace=row.namespace,
                nodeId=row.node_id,
            )
            for row in rows
        ],
    )


def tags_model(rows: Iterable[TagRow]) -> Tags:
    return Tags(tags=[Tag(name=row.name, description=row.description) for row in rows])
