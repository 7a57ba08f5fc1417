"""How a facet's violations are named: the path of a value inside a facet or an event (bare
identifiers, bracketed indexes and quoted keys) and the message of each violation the facet schema
checks of `headwater.events.facets` find."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeAlias

Seg: TypeAlias = "str | int"
# One violation: (path inside the facet, message code, code argument).
Err: TypeAlias = "tuple[tuple[Seg, ...], str, Any]"
Check: TypeAlias = "Callable[[object], list[Err] | None]"

# a facet or key name written bare in a path (`run.facets.parent`); any other is quoted as JSON
IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_IDENT = re.compile(IDENTIFIER)


def join_path(prefix: str, seg: Seg) -> str:
    if isinstance(seg, int):
        return f"{prefix}[{seg}]"
    if _IDENT.fullmatch(seg):
        return f"{prefix}.{seg}" if prefix else seg
    return f"{prefix}[{json.dumps(seg, ensure_ascii=False)}]"  # as the pipeline's Spark writes it


def path_str(path: tuple[Seg, ...]) -> str:
    out = ""
    for seg in path:
        out = join_path(out, seg)
    return out


def _show(value: object) -> str:
    if isinstance(value, str):
        return "'" + value.replace("'", "\\'") + "'"
    return json.dumps(value)


_ARTICLE = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}
_FORMAT_NAMES = {"uuid": "uuid", "date-time": "RFC 3339 date-time"}


def message(err: Err) -> str:
    path, code, arg = err
    subject = path_str(path) or "facet"
    if code == "required":  # path is the object's path, arg the missing key
        return f"{path_str((*path, arg))} is missing" if path else f"missing {path_str((arg,))}"
    if code == "dependent":
        key, dep = arg
        missing = f"{path_str((*path, dep))} is missing" if path else f"missing {path_str((dep,))}"
        return f"{missing} (required when {key} is present)"
    if code == "type":
        return f"{subject} is not " + " or ".join(_ARTICLE.get(t, t) for t in arg)
    if code == "tooDeep":
        return "facet is nested too deep to be checked against its schema"
    if code == "enum":
        shown = ", ".join(_show(v) for v in arg[:6]) + (", ..." if len(arg) > 6 else "")
        return f"{subject} is not one of {shown}"
    if code == "const":
        return f"{subject} must be {_show(arg)}"
    if code == "format":
        return f"{subject} is not a valid {_FORMAT_NAMES.get(arg, arg)}"
    if code == "additional":
        return f"{subject} is not an allowed property"
    if code == "false":
        return f"{subject} is not allowed"
    if code == "minimum":
        return f"{subject} is less than {arg}"
    if code == "maximum":
        return f"{subject} is greater than {arg}"
    if code == "exclusiveMinimum":
        return f"{subject} must be greater than {arg}"
    if code == "exclusiveMaximum":
        return f"{subject} must be less than {arg}"
    if code == "minItems":
        return f"{subject} has fewer than {arg} items"
    if code == "maxItems":
        return f"{subject} has more than {arg} items"
    if code == "minLength":
        return f"{subject} is shorter than {arg} characters"
    if code == "maxLength":
        return f"{subject} is longer than {arg} characters"
    if code == "oneOfMany":
        return f"{subject} matches more than one allowed shape"
    if code == "noMatch":  # arg: the closest branch's first error, relative to this path
        if arg is None:
            return f"{subject} matches none of the allowed shapes"
        inner_path, inner_code, inner_arg = arg
        closest = message(((*path, *inner_path), inner_code, inner_arg))
        return f"{subject} matches none of the allowed shapes (closest: {closest})"
    return f"{subject} is invalid ({code})"  # pragma: no cover - every code is listed above


def prefixed(seg: Seg, errs: list[Err]) -> list[Err]:
    return [((seg, *p), c, a) for p, c, a in errs]
