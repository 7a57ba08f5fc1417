"""Typed request parameters shared by the routes: what each accepts is stated once, so the OpenAPI
document says exactly what the server enforces (a value the document allows is never a 400)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Path, Query
from pydantic import WithJsonSchema

# No name or id holds a NUL, and neither database can keep one.
NO_NUL = "^[^\\x00]+$"
ANY_TEXT = "^[^\\x00]*$"  # an optional filter: empty means none
# Times the store can represent (eventIds count from 1582, up to 5236): RFC 3339.
RFC3339 = (
    "^(1[6-9]|[2-4][0-9]|5[01])[0-9]{2}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}"
    "([.,][0-9]+)?([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)?$"
)
_TIME_SCHEMA = {"type": "string", "format": "date-time", "pattern": RFC3339}
_DAY = "^(1[6-9]|[2-4][0-9]|5[01])[0-9]{2}-[0-9]{2}-[0-9]{2}$"


# Why a value breaks a pattern, for the 400's message (`'DONE' is none of NEW, RUNNING, …`).
EXPLAINED: dict[str, Callable[[str], str]] = {
    NO_NUL: lambda value: f"{value!r} holds a NUL character" if value else "must not be empty",
    ANY_TEXT: lambda value: f"{value!r} holds a NUL character",
}


def _explained(pattern: str, options: tuple[str, ...], *, listed: bool = False) -> str:
    two = len(options) == 2
    allowed = f"neither {options[0]} nor {options[1]}" if two else f"none of {', '.join(options)}"
    known = {option.lower() for option in options}

    def why(value: str) -> str:
        parts = value.split(",") if listed else [value]
        wrong = next((part for part in parts if part.lower() not in known and part), value)
        return f"{wrong!r} is {allowed}"

    EXPLAINED[pattern] = why
    return pattern


def _spelled(options: tuple[str, ...]) -> str:
    return "|".join("".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in o) for o in options)


def any_case(*options: str, empty: bool = True) -> str:
    """A pattern matching one of `options` in any case (and the empty string when `empty`)."""
    return _explained(f"^({_spelled(options)}){'?' if empty else ''}$", options)


def any_case_list(*options: str, empty: bool = False) -> str:
    """A pattern matching a comma-separated list of `options`, each in any case (and, when
    `empty`, empty items, which mean nothing)."""
    maybe = "?" if empty else ""
    return _explained(f"^({_spelled(options)}){maybe}(,({_spelled(options)}){maybe})*$", options, listed=True)


# A name or id in a path: one percent-encoded segment (`s3%3A%2F%2Flake` for `s3://lake`).
# RunId is read by `query.run_events.parse_run_id` (which says why an id is refused).
RunId = Annotated[
    str,
    Path(),
    WithJsonSchema(
        {"type": "string", "pattern": NO_NUL, "description": "Any non-empty id, percent-encoded (`a%2Fb`)"}
    ),
]
Name = Annotated[str, Path(pattern=NO_NUL, description="Percent-encoded (`s3%3A%2F%2Flake`)")]
Text = Annotated[str | None, Query(pattern=ANY_TEXT)]
EXPLAINED[RFC3339] = lambda value: f"{value!r} is not an RFC 3339 date-time of the years 1600 to 5199"
# A browse id of generic events: a positive integer (`headwater.query.generic.browse_id` reads it).
BROWSE_ID = "^[1-9][0-9]{0,18}$"
EXPLAINED[BROWSE_ID] = lambda value: f"{value!r} is not a positive integer id"
BrowseId = Annotated[
    str,
    Path(pattern=BROWSE_ID),
    WithJsonSchema({"type": "integer", "minimum": 1, "maximum": 2**63 - 1, "description": "A browse id"}),
]
Offset = Annotated[int, Query(ge=0, le=2**62, description="How many to skip")]
TIME_OR_EMPTY = f"^({RFC3339[1:-1]})?$"  # empty means no time, as an absent parameter
EXPLAINED[TIME_OR_EMPTY] = EXPLAINED[RFC3339]
Time = Annotated[
    str | None,
    Query(pattern=TIME_OR_EMPTY, description="An RFC 3339 date-time; no offset means UTC; empty means none"),
    WithJsonSchema({"anyOf": [_TIME_SCHEMA, {"type": "string", "enum": [""]}]}),
]
Day = Annotated[
    str | None,
    Query(description="`YYYY-MM-DD` or an RFC 3339 date-time; empty means none"),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": _DAY, "format": "date"},
                _TIME_SCHEMA,
                {"type": "string", "enum": [""], "description": "empty: no bound"},
            ]
        }
    ),
]

# Node ids by kind (`headwater.query.node_ids`). A namespace may hold colons (`postgres://db:5432`);
# the first segment may not be empty. `#version` pins a dataset or job to one of its versions.
NODE_IDS = {
    "dataset": "dataset:[^:#\\x00][^#\\x00]*:[^#\\x00]+(#[^#\\x00]+)?",
    "job": "job:[^:#\\x00][^#\\x00]*:[^#\\x00]+(#[^#\\x00]+)?",
    "datasetField": "datasetField:[^:#\\x00][^#\\x00]*:[^#\\x00]*:[^:#\\x00]+",
}

NODE_IDS.update(
    {
        "run": "run:[^\\x00]+",
        "element": "element:[^:\\x00]+:[^\\x00]+",
        "namespace": "namespace:[^\\x00]+",
    }
)
NODE_FORMS = {
    "dataset": "dataset:{namespace}:{name}",
    "job": "job:{namespace}:{name}",
    "datasetField": "datasetField:{namespace}:{dataset}:{field}",
    "run": "run:{runId}",
    "element": "element:{type}:{description}",
    "namespace": "namespace:{name}",
}


def node_id(*kinds: str) -> WithJsonSchema:
    """The schema of a node id of these kinds. Only documented: the query layer reads the id and
    says best what is wrong with it (400), or that no such node is known (404)."""
    forms = ", ".join(NODE_FORMS[kind] for kind in kinds)
    return WithJsonSchema(
        {
            "type": "string",
            "pattern": "^(" + "|".join(NODE_IDS[kind] for kind in kinds) + ")$",
            "description": f"A node id: {forms}",
        }
    )
