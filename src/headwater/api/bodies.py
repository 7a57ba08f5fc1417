"""The request bodies of the ingest routes as OpenAPI states them: what `headwater.events.validate`
and `headwater.events.generic` accept, neither more nor less (the routes read the raw bytes
themselves: gzip, NDJSON and size limits come first)."""

from __future__ import annotations

from typing import Any

from headwater.api.params import RFC3339
from headwater.events import generic
from headwater.events.limits import MAX_NAME_BYTES, MAX_NAMESPACE_BYTES, MAX_RUN_ID_BYTES

_STRING = {"type": "string"}
_OBJECT = {"type": "object"}
# Facets never cost an event: any object is kept (a facet that breaks its schema is a warning).
_FACETS = {"type": "object", "description": "Facets by name"}


def _limited(limit: int, what: str) -> dict[str, Any]:
    """A string of at most `limit` UTF-8 bytes (maxLength counts characters: the same number,
    exact for ASCII text)."""
    return {"type": "string", "maxLength": limit, "description": f"{what}; at most {limit} bytes"}


def _named(*extra: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["namespace", "name"],
        "properties": {
            "namespace": _limited(MAX_NAMESPACE_BYTES, "The namespace"),
            "name": _limited(MAX_NAME_BYTES, "The name"),
            **dict.fromkeys(("facets", *extra), _FACETS),
        },
    }


def _schema_url(kind: str) -> dict[str, Any]:
    """A schemaURL whose fragment names no other kind of event (the fragment decides the kind)."""
    others = "|".join(k for k in ("RunEvent", "JobEvent", "DatasetEvent") if k != kind)
    return {"type": "string", "not": {"pattern": f"#(.*/)?({others})$"}}


_CORE = {
    "eventTime": {"type": "string", "format": "date-time", "pattern": RFC3339},
    "producer": {"type": "string", "description": "A URI naming the code that sent the event"},
}
_INPUTS_OUTPUTS = {
    "inputs": {"type": "array", "items": _named("inputFacets")},
    "outputs": {"type": "array", "items": _named("outputFacets")},
}
RUN_EVENT: dict[str, Any] = {
    "title": "RunEvent",
    "type": "object",
    "required": ["eventTime", "producer", "run", "job"],
    "properties": {
        **_CORE,
        "schemaURL": _schema_url("RunEvent"),
        "eventType": {"type": "string", "enum": ["START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"]},
        "run": {
            "type": "object",
            "required": ["runId"],
            "properties": {
                "runId": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_RUN_ID_BYTES,
                    "description": "Any non-empty string of at most "
                    f"{MAX_RUN_ID_BYTES} bytes; one that is not a UUID is kept with a warning",
                },
                "facets": _FACETS,
            },
        },
        "job": _named(),
        **_INPUTS_OUTPUTS,
    },
}
JOB_EVENT: dict[str, Any] = {
    "title": "JobEvent",
    "type": "object",
    "required": ["eventTime", "producer", "job"],
    "not": {"required": ["run"]},
    "properties": {**_CORE, "schemaURL": _schema_url("JobEvent"), "job": _named(), **_INPUTS_OUTPUTS},
}
DATASET_EVENT: dict[str, Any] = {
    "title": "DatasetEvent",
    "type": "object",
    "required": ["eventTime", "producer", "dataset"],
    "not": {"anyOf": [{"required": ["run"]}, {"required": ["job"]}]},
    "properties": {**_CORE, "schemaURL": _schema_url("DatasetEvent"), "dataset": _named()},
}
OPENLINEAGE_EVENT: dict[str, Any] = {
    "description": "An OpenLineage event (spec 2-0-2): its core decides acceptance, facets never do",
    "anyOf": [RUN_EVENT, JOB_EVENT, DATASET_EVENT],
}

# Generic events (FastScore style). Limits are in UTF-8 bytes; maxLength (characters) is the same
# number, exact for ASCII text.
_NAME_BYTES, _TEXT_BYTES = generic.MAX_NAME_BYTES, generic.MAX_TEXT_BYTES
# Not empty, not only what Python's str.strip() takes away (the validators' rule), no NUL.
_SPACE = "\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
_FILLED = f"^[^\\x00]*[^\\x00{_SPACE}][^\\x00]*$"


def _text(limit: int, what: str) -> dict[str, Any]:
    return {"type": "string", "pattern": _FILLED, "maxLength": limit, "description": f"{what}; {limit} bytes"}


_TAGS = {
    "type": "object",
    "description": "Tags: key → value (a string, number or boolean)",
    "propertyNames": {"pattern": _FILLED, "maxLength": _NAME_BYTES},
    "additionalProperties": {
        "anyOf": [
            {"type": "string", "pattern": "^[^\\x00]*$", "maxLength": _TEXT_BYTES},
            {"type": "number"},
            {"type": "boolean"},
        ]
    },
}
GENERIC_EVENT: dict[str, Any] = {
    "title": "GenericEvent",
    "type": "object",
    "required": ["description", "type", "elements"],
    "properties": {
        "id": _text(_NAME_BYTES, "The client's id: the same id again is stored once"),
        "description": _text(_TEXT_BYTES, "What happened"),
        "type": _text(_NAME_BYTES, "The event's type"),
        "elements": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "description"],
                "properties": {
                    "type": _text(_NAME_BYTES, "The element's type"),
                    "description": _text(generic.MAX_ELEMENT_BYTES, "The element's name"),
                    "tags": _TAGS,
                },
            },
        },
        "tags": _TAGS,
    },
}


def request_body(event: dict[str, Any], example: dict[str, Any] | None = None) -> dict[str, Any]:
    """`openapi_extra` of an ingest route: one event or an array of them as JSON (an empty array
    stores nothing). NDJSON (`application/x-ndjson`, one event per line) and gzip are accepted
    too."""
    json: dict[str, Any] = {"schema": {"anyOf": [event, {"type": "array", "items": event}]}}
    if example is not None:
        json["example"] = example
    return {"requestBody": {"required": True, "content": {"application/json": json}}}
