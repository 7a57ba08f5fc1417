"""The lineage model in Marquez' JSON shapes (spec/openapi.yml of MarquezProject/marquez)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

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


def namespace_json(row: NamespaceRow) -> dict[str, Any]:
    return {
        "name": row.name,
        "createdAt": _time(row.created_at),
        "updatedAt": _time(row.updated_at),
        "ownerName": DEFAULT_OWNER,
        "description": None,
        "isHidden": False,
    }


def _ref_json(ref: DatasetRef) -> dict[str, str]:
    return {"namespace": ref.namespace, "name": ref.name}


def _fields_json(fields: Iterable[FieldRow], tags: Iterable[tuple[str, str]] = ()) -> list[dict[str, Any]]:
    by_field: dict[str, list[str]] = {}
    for path, tag in tags:
        by_field.setdefault(path, []).append(tag)
    return [
        {"name": f.path, "type": f.type, "tags": by_field.get(f.path, []), "description": f.description}
        for f in fields
    ]


def dataset_json(row: DatasetRow) -> dict[str, Any]:
    return {
        "id": {"namespace": row.namespace, "name": row.name},
        "type": "DB_TABLE",
        "name": row.name,
        "physicalName": row.name,
        "createdAt": _time(row.created_at),
        "updatedAt": _time(row.updated_at),
        "namespace": row.namespace,
        "sourceName": row.source_name,
        "fields": _fields_json(row.fields, row.field_tags),
        "tags": list(row.tags),
        "lastModifiedAt": _time(row.last_modified_at),
        "lastLifecycleState": row.lifecycle,
        "description": _facet_field(row.facets, "documentation", "description"),
        "facets": facets_json(row.facets),
        "currentVersion": row.current_version,
        "deleted": False,
    }


def run_json(row: RunRow) -> dict[str, Any]:
    return {
        "id": row.run_id,
        "createdAt": _time(row.created_at),
        "updatedAt": _time(row.updated_at),
        "nominalStartTime": _time(row.nominal_start),
        "nominalEndTime": _time(row.nominal_end),
        "state": row.state,
        "startedAt": _time(row.started_at),
        "endedAt": _time(row.ended_at),
        "durationMs": row.duration_ms,
        "args": {},
        "jobVersion": (
            {"namespace": row.job_namespace, "name": row.job_name, "version": row.job_version}
            if row.job_version
            else None
        ),
        "facets": facets_json(row.facets),
    }


def _job_type(facets: Iterable[Facet]) -> str:
    processing = _facet_field(facets, "jobType", "processingType")
    return "STREAM" if processing and processing.upper() == "STREAMING" else "BATCH"


def _simple_name(row: JobRow) -> str:
    if row.parent_name and row.name.startswith(row.parent_name + "."):
        return row.name[len(row.parent_name) + 1 :]
    return row.name


def job_json(row: JobRow) -> dict[str, Any]:
    return {
        "id": {"namespace": row.namespace, "name": row.name},
        "type": _job_type(row.facets),
        "name": row.name,
        "simpleName": _simple_name(row),
        "parentJobName": row.parent_name,
        "createdAt": _time(row.created_at),
        "updatedAt": _time(row.updated_at),
        "namespace": row.namespace,
        "inputs": [_ref_json(ref) for ref in row.inputs],
        "outputs": [_ref_json(ref) for ref in row.outputs],
        "location": _facet_field(row.facets, "sourceCodeLocation", "url"),
        "description": _facet_field(row.facets, "documentation", "description"),
        "latestRun": run_json(row.latest_run) if row.latest_run else None,
        "latestRuns": [run_json(run) for run in row.latest_runs],
        "facets": facets_json(row.facets),
        "currentVersion": row.current_version,
        "tags": list(row.tags),
    }


def source_json(row: SourceRow) -> dict[str, Any]:
    """Marquez' Source; the type is the URI's scheme (POSTGRES, S3, …), UNKNOWN without one."""
    scheme = (row.uri or "").partition("://")[0] if row.uri and "://" in row.uri else ""
    return {
        "type": scheme.upper() or "UNKNOWN",
        "name": row.name,
        "createdAt": _time(row.created_at),
        "updatedAt": _time(row.updated_at),
        "connectionUrl": row.uri,
        "description": None,
    }


def dataset_version_json(row: DatasetVersionRow) -> dict[str, Any]:
    return {
        "id": {"namespace": row.namespace, "name": row.name, "version": row.version_id},
        "type": "DB_TABLE",
        "name": row.name,
        "physicalName": row.name,
        "createdAt": _time(row.created_at),
        "version": row.version_id,
        "datasetVersion": row.version_label,
        "namespace": row.namespace,
        "sourceName": row.source_name,
        "fields": _fields_json(row.fields),
        "tags": list(row.tags),
        "lifecycleState": row.lifecycle,
        "description": _facet_field(row.facets, "documentation", "description"),
        "createdByRun": run_json(row.created_by_run) if row.created_by_run else None,
        "facets": facets_json(row.facets),
    }


def job_version_json(row: JobVersionRow) -> dict[str, Any]:
    return {
        "id": {"namespace": row.namespace, "name": row.name, "version": row.version_id},
        "name": row.name,
        "version": row.version_id,
        "createdAt": _time(row.created_at),
        "updatedAt": _time(row.updated_at),
        "namespace": row.namespace,
        "inputs": [_ref_json(ref) for ref in row.inputs],
        "outputs": [_ref_json(ref) for ref in row.outputs],
        # the URL of the code location, as Marquez gives it (row.location is the whole identity)
        "location": _facet_field(row.facets, "sourceCodeLocation", "url"),
        "runCount": row.run_count,
        "latestRun": run_json(row.latest_run) if row.latest_run else None,
        "facets": facets_json(row.facets),
    }


def search_json(rows: Iterable[SearchRow], total: int) -> dict[str, Any]:
    return {
        "totalCount": total,
        "results": [
            {
                "type": row.kind,
                "name": row.name,
                "updatedAt": _time(row.updated_at),
                "namespace": row.namespace,
                "nodeId": row.node_id,
            }
            for row in rows
        ],
    }


def tags_json(rows: Iterable[TagRow]) -> dict[str, Any]:
    return {"tags": [{"name": row.name, "description": row.description} for row in rows]}
