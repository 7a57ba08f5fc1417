"""Facet checking for OpenLineage events: owns every rule about the *contents* of a facets container.

:func:`check_facets` takes one already-confirmed-dict facets container (``run.facets``,
``job.facets``, ``inputs[0].facets``, ``inputs[0].inputFacets``, ``outputs[1].outputFacets``,
``dataset.facets``) and returns a list of :class:`FacetIssue` (empty when all is well).

Rules, per facet ``name -> value``:

* the value must be an object;
* ``_producer`` and ``_schemaURL`` must be present and be strings;
* ``_deleted``, when present on a job or dataset facet, must be a boolean (core 2-0-2 allows it only
  there; on run/input/output facets it is ignored unless the facet's own schema declares it);
* when ``_schemaURL`` names a published facet schema -- ``https://openlineage.io/spec/facets/
  <ver>/<Name>.json`` with an optional ``#/$defs/<Def>`` fragment; ``http://`` and surrounding
  whitespace are tolerated -- the facet is validated against that definition (no fragment: the
  definition named ``<Name>``, else the file's single top-level property) and at most
  :data:`MAX_ISSUES_PER_FACET` issues are reported per facet.  Any other URL (custom facets,
  core-embedded ``.../spec/1-0-2/OpenLineage.json#/$defs/...`` URLs, raw.githubusercontent URLs,
  unknown versions or definitions) gets the base checks only.

Validation semantics follow JSON Schema draft 2020-12 as implemented by the ``jsonschema``
library with format assertion for ``uuid`` and ``date-time``:

* ``uuid`` -- exactly jsonschema's rule (``uuid.UUID`` parses it and characters 8, 13, 18, 23 are
  ``-``), with a fast path for the canonical 8-4-4-4-12 hex form;
* ``date-time`` -- RFC 3339 ``date "T" time offset`` as jsonschema decides it with its checker
  (rfc3339-validator): the offset (``Z`` or ``+hh:mm``) is required, ``T``/``Z`` may be lower case,
  fractional seconds of any length, the day must exist in its month; no leap second (``:60``) and
  no year ``0000``.  One deliberate difference: a trailing newline, which that checker lets through,
  is rejected here;
* ``uri`` and every other format are annotations only (any string passes);
* ``integer`` accepts integral floats (``1.0``), booleans are never numbers.

The schemas come from ``facet_schemas.json`` next to this module (built by
``scripts/build_facet_schemas.py`` from the published spec), loaded and compiled into closures
lazily, one definition at a time, on first use.  The product never reads the spec folder.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

import orjson

from headwater.events.facet_messages import Check, Err, join_path, message, prefixed
from headwater.events.limits import MAX_NAME_BYTES, identity_reasons, too_long

__all__ = ["MAX_ISSUES_PER_FACET", "FacetIssue", "FacetKind", "check_facets", "facet_path", "facet_reasons"]

FacetKind = Literal["run", "job", "dataset", "input", "output"]

MAX_ISSUES_PER_FACET = 3


@dataclass(frozen=True, slots=True)
class FacetIssue:
    path: str  # full path of the facet, e.g. "inputs[0].facets.schema"
    reason: str  # e.g. "fields is not an array", "missing _producer", "fields[2].name is missing"

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


# --------------------------------------------------------------------------------------------
# Formats
# --------------------------------------------------------------------------------------------

_CANONICAL_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _is_uuid(value: str) -> bool:
    if _CANONICAL_UUID.fullmatch(value):
        return True
    # jsonschema's rule: whatever uuid.UUID accepts, provided the dashes sit at 8, 13, 18 and 23.
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return all(value[i] == "-" for i in (8, 13, 18, 23))


_DATE_TIME = re.compile(
    r"([0-9]{4})-(0[1-9]|1[0-2])-([0-9]{2})[Tt]"
    r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?"
    r"(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _is_date_time(value: str) -> bool:
    m = _DATE_TIME.fullmatch(value)
    if m is None:
        return False
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if year == 0:
        return False
    if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        return 1 <= day <= 29
    return 1 <= day <= _DAYS[month - 1]


_FORMATS: dict[str, Callable[[str], bool]] = {"uuid": _is_uuid, "date-time": _is_date_time}


# --------------------------------------------------------------------------------------------
# JSON-Schema-subset compiler (keywords: see scripts/build_facet_schemas.py)
# --------------------------------------------------------------------------------------------


def _ok(_value: object) -> list[Err] | None:
    return None


_MISSING: Any = object()


def _simple_type(schema: Any) -> type | None:
    """The Python type that alone decides ``schema`` (e.g. ``{"type": "string", "format": "uri"}``)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("type"), str):
        return None
    if any(k != "type" and not (k == "format" and schema[k] not in _FORMATS) for k in schema):
        return None
    return _PY_TYPES.get(schema["type"])


def _is_integer(v: object) -> bool:
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, float) and v.is_integer())


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


# Types a plain isinstance decides (bool is not an int here: "integer"/"number" need _TYPE_TESTS).
_PY_TYPES: dict[str, type] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}
_TYPE_TESTS: dict[str, Callable[[object], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _json_equal(a: object, b: object) -> bool:
    """Equality as JSON Schema defines it: 1 == 1.0, but True != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if _is_number(a) and _is_number(b):
        return a == b
    return type(a) is type(b) and a == b


class _Compiler:
    """Compiles bundle schemas into closures; ``$ref`` targets are compiled once and shared."""

    def __init__(self, bundle: Mapping[str, Any]) -> None:
        self.bundle = self._bundle = bundle
        self._refs: dict[str, Check] = {}

    def named(self, url: str, name: str, definition: str | None) -> tuple[str | None, Any] | None:
        """The schema a ``_schemaURL`` names in the bundle's file ``url`` (``name``.json): the
        ``$defs`` entry after ``#/$defs/``, else the one named like the file, as (its ``$defs``
        name, schema); else the file's single top-level property, as (None, schema); else None."""
        entry = self._bundle.get(url)
        if entry is None:
            return None
        defs = entry.get("$defs", {})
        if definition:
            return (definition, defs[definition]) if definition in defs else None
        if name in defs:
            return name, defs[name]
        props = entry.get("properties", {})
        return (None, next(iter(props.values()))) if len(props) == 1 else None

    def check(self, url: str, name: str, definition: str | None) -> Check | None:
        """The compiled schema `named` finds, or None."""
        found = self.named(url, name, definition)
        if found is None:
            return None
        key, schema = found
        return self._ref(url, f"#/$defs/{key}") if key is not None else self._node(schema, url)

    # -- helpers -------------------------------------------------------------------------------

    def _resolve(self, base: str, ref: str) -> tuple[str, Any]:
        target, _, fragment = ref.partition("#")
        url = target or base
        name = fragment.removeprefix("/$defs/")
        return url, self._bundle[url]["$defs"][name]

    def _ref(self, base: str, ref: str) -> Check:
        url, schema = self._resolve(base, ref)
        key = f"{url}#{ref.partition('#')[2]}"
        found = self._refs.get(key)
        if found is not None:
            return found
        cell: list[Check] = []

        def forward(v: object) -> list[Err] | None:  # used only by recursive references
            return cell[0](v)

        self._refs[key] = forward
        compiled = self._node(schema, url)
        cell.append(compiled)
        self._refs[key] = compiled
        return compiled

    def _discriminator(self, schema: Any, base: str, depth: int = 0) -> tuple[str, str] | None:
        """(property, value) if ``schema`` unconditionally pins a property to one string."""
        if not isinstance(schema, dict) or depth > 8:
            return None
        if "$ref" in schema:
            url, target = self._resolve(base, schema["$ref"])
            found = self._discriminator(target, url, depth + 1)
            if found is not None:
                return found
        for key, sub in schema.get("properties", {}).items():
            if isinstance(sub, dict):
                if isinstance(sub.get("const"), str):
                    return key, sub["const"]
                enum = sub.get("enum")
                if isinstance(enum, list) and len(enum) == 1 and isinstance(enum[0], str):
                    return key, enum[0]
        for sub in schema.get("allOf", []):
            found = self._discriminator(sub, base, depth + 1)
            if found is not None:
                return found
        return None

    # -- nodes ---------------------------------------------------------------------------------

    def _node(self, schema: Any, base: str) -> Check:
        if schema is True:
            return _ok
        if schema is False:
            return lambda v: [((), "false", None)]
        checks: list[Check] = []
        if "$ref" in schema:
            checks.append(self._ref(base, schema["$ref"]))
        if "enum" in schema:
            checks.append(self._enum(schema["enum"]))
        if "const" in schema:
            checks.append(self._const(schema["const"]))
        obj = self._object(schema, base)
        if obj is not None:
            checks.append(obj)
        arr = self._array(schema, base)
        if arr is not None:
            checks.append(arr)
        scalar = self._scalar(schema)
        if scalar is not None:
            checks.append(scalar)
        checks.extend(self._node(sub, base) for sub in schema.get("allOf", []))
        if "anyOf" in schema:
            checks.append(self._alternatives(schema["anyOf"], base, exactly_one=False))
        if "oneOf" in schema:
            checks.append(self._alternatives(schema["oneOf"], base, exactly_one=True))
        checks = [c for c in checks if c is not _ok]
        body = _sequence(checks)
        if "type" not in schema:
            return body
        return _typed(schema["type"], body)

    @staticmethod
    def _enum(values: list[Any]) -> Check:
        if all(isinstance(x, str) for x in values):
            allowed = frozenset(values)

            def enum_str(v: object) -> list[Err] | None:
                if isinstance(v, str) and v in allowed:
                    return None
                return [((), "enum", values)]

            return enum_str

        def enum_any(v: object) -> list[Err] | None:
            if any(_json_equal(v, x) for x in values):
                return None
            return [((), "enum", values)]

        return enum_any

    @staticmethod
    def _const(value: Any) -> Check:
        def const(v: object) -> list[Err] | None:
            return None if _json_equal(v, value) else [((), "const", value)]

        return const

    def _object(self, schema: Any, base: str) -> Check | None:
        # (key, python type for a bare {"type": T} subschema, else None, compiled subschema)
        props: list[tuple[str, type | None, Check]] = []
        for key, sub in schema.get("properties", {}).items():
            simple = _simple_type(sub)
            check = self._node(sub, base)
            if check is not _ok:
                props.append((key, simple, check))
        declared = frozenset(schema.get("properties", {}))
        required = tuple(schema.get("required", ()))
        dependent = tuple((k, tuple(deps)) for k, deps in schema.get("dependentRequired", {}).items() if deps)
        extra_schema = schema.get("additionalProperties", True)
        extra = None if extra_schema is True else self._node(extra_schema, base)
        if not (props or required or dependent or extra is not None):
            return None

        def check_object(v: object) -> list[Err] | None:
            if not isinstance(v, dict):
                return None
            errs: list[Err] | None = None
            for key in required:
                if key not in v:
                    if errs is None:
                        errs = []
                    errs.append(((), "required", key))
            for key, simple, check in props:
                value = v.get(key, _MISSING)
                if value is _MISSING or (simple is not None and isinstance(value, simple)):
                    continue
                found = check(value)
                if found:
                    if errs is None:
                        errs = []
                    errs.extend(prefixed(key, found))
                    if len(errs) >= MAX_ISSUES_PER_FACET:
                        return errs
            for key, deps in dependent:
                if key in v:
                    for dep in deps:
                        if dep not in v:
                            if errs is None:
                                errs = []
                            errs.append(((), "dependent", (key, dep)))
            if extra is not None:
                for key, item in v.items():
                    if key not in declared:
                        found = extra(item)
                        if found:
                            if errs is None:
                                errs = []
                            if found[0][1] == "false" and not found[0][0]:
                                errs.append(((key,), "additional", None))
                            else:
                                errs.extend(prefixed(key, found))
                            if len(errs) >= MAX_ISSUES_PER_FACET:
                                return errs
            return errs

        return check_object

    def _array(self, schema: Any, base: str) -> Check | None:
        items = self._node(schema["items"], base) if "items" in schema else _ok
        min_items = schema.get("minItems")
        max_items = schema.get("maxItems")
        if items is _ok and min_items is None and max_items is None:
            return None

        def check_array(v: object) -> list[Err] | None:
            if not isinstance(v, list):
                return None
            errs: list[Err] | None = None
            if min_items is not None and len(v) < min_items:
                errs = [((), "minItems", min_items)]
            elif max_items is not None and len(v) > max_items:
                errs = [((), "maxItems", max_items)]
            if items is not _ok:
                for i, item in enumerate(v):
                    found = items(item)
                    if found:
                        if errs is None:
                            errs = []
                        errs.extend(prefixed(i, found))
                        if len(errs) >= MAX_ISSUES_PER_FACET:
                            break
            return errs

        return check_array

    @staticmethod
    def _scalar(schema: Any) -> Check | None:
        fmt = schema.get("format")
        fmt_test = _FORMATS.get(fmt) if isinstance(fmt, str) else None
        min_len, max_len = schema.get("minLength"), schema.get("maxLength")
        bounds = [
            (word, schema[word])
            for word in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
            if word in schema
        ]
        if fmt_test is None and min_len is None and max_len is None and not bounds:
            return None

        def check_scalar(v: object) -> list[Err] | None:
            if isinstance(v, str):
                if fmt_test is not None and not fmt_test(v):
                    return [((), "format", fmt)]
                if min_len is not None and len(v) < min_len:
                    return [((), "minLength", min_len)]
                if max_len is not None and len(v) > max_len:
                    return [((), "maxLength", max_len)]
            elif bounds and _is_number(v):
                n: Any = v
                for word, limit in bounds:
                    if (
                        (word == "minimum" and n < limit)
                        or (word == "maximum" and n > limit)
                        or (word == "exclusiveMinimum" and n <= limit)
                        or (word == "exclusiveMaximum" and n >= limit)
                    ):
                        return [((), word, limit)]
            return None

        return check_scalar

    def _alternatives(self, branches: list[Any], base: str, *, exactly_one: bool) -> Check:
        checks = [self._node(b, base) for b in branches]
        if len(checks) == 1:
            return checks[0]
        tags = [self._discriminator(b, base) for b in branches]
        tag_key: str | None = None
        by_tag: dict[str, Check] = {}
        pinned = [t for t in tags if t is not None]
        if len(pinned) == len(tags) and len({k for k, _ in pinned}) == 1:
            values = [value for _, value in pinned]
            if len(set(values)) == len(values):
                tag_key = pinned[0][0]
                by_tag = dict(zip(values, checks, strict=True))
        tag_values = list(by_tag)

        def check_alternatives(v: object) -> list[Err] | None:
            if tag_key is not None and isinstance(v, dict) and tag_key in v:
                # Branches pin tag_key to distinct strings, so at most one can match: check just it.
                tag = v[tag_key]
                chosen = by_tag.get(tag) if isinstance(tag, str) else None
                if chosen is None:
                    return [((tag_key,), "enum", tag_values)]
                return chosen(v)
            results: list[list[Err]] = []
            valid = 0
            for check in checks:
                found = check(v)
                if found:
                    results.append(found)
                elif not exactly_one:
                    return None
                else:
                    valid += 1
            if valid == 1:
                return None
            if valid > 1:
                return [((), "oneOfMany", None)]
            closest = min(results, key=len)
            return [((), "noMatch", closest[0])]

        return check_alternatives


def _typed(type_: str | list[str], body: Check) -> Check:
    """Check the ``type`` keyword first; other keywords run only on a value of the right type."""
    types = [type_] if isinstance(type_, str) else list(type_)
    expected = tuple(types)
    py = _PY_TYPES.get(types[0]) if len(types) == 1 else None
    if py is not None and body is _ok:

        def type_only(v: object) -> list[Err] | None:
            return None if isinstance(v, py) else [((), "type", expected)]

        return type_only
    if py is not None:

        def typed(v: object) -> list[Err] | None:
            if not isinstance(v, py):
                return [((), "type", expected)]
            return body(v)

        return typed
    tests = [_TYPE_TESTS[t] for t in types]

    def typed_any(v: object) -> list[Err] | None:
        if not any(test(v) for test in tests):
            return [((), "type", expected)]
        return body(v)

    return typed_any


def _sequence(checks: list[Check]) -> Check:
    if not checks:
        return _ok
    if len(checks) == 1:
        return checks[0]

    def all_of(v: object) -> list[Err] | None:
        errs: list[Err] | None = None
        for check in checks:
            found = check(v)
            if found:
                if errs is None:
                    errs = found
                else:
                    errs.extend(found)
                if len(errs) >= MAX_ISSUES_PER_FACET:
                    break
        return errs

    return all_of


# --------------------------------------------------------------------------------------------
# Schema URL resolution (lazy, cached)
# --------------------------------------------------------------------------------------------

_FACET_PREFIX = "https://openlineage.io/spec/facets/"
_FACET_URL = re.compile(
    r"https?://openlineage\.io/spec/facets/([0-9]+-[0-9]+-[0-9]+)/([A-Za-z0-9_]+)\.json"
    r"(?:#(?:/\$defs/([A-Za-z0-9_]+)|/)?)?"
)
_MAX_CACHED_URLS = 4096

_lock = threading.Lock()
_compiler: _Compiler | None = None
_by_url: dict[str, Check | None] = {}


def _load_compiler() -> _Compiler:
    global _compiler
    if _compiler is None:
        text = (
            resources.files(__package__ or "headwater.events")
            .joinpath("facet_schemas.json")
            .read_text(encoding="utf-8")
        )
        _compiler = _Compiler(json.loads(text))
    return _compiler


def schema_bundle() -> Mapping[str, Any]:
    """The published facet schemas the checks compile (``facet_schemas.json``), by file URL."""
    with _lock:
        return _load_compiler().bundle


def format_test(name: str) -> Callable[[str], bool] | None:
    """The test of a string ``format`` the checks assert (uuid, date-time); None for annotations."""
    return _FORMATS.get(name)


def _facet_file(schema_url: str) -> tuple[str, str, str | None] | None:
    """(the bundle's file URL, file name, definition after ``#/$defs/``) of a published facet
    ``_schemaURL``, or None for any other URL."""
    m = _FACET_URL.fullmatch(schema_url.strip())
    if m is None:
        return None
    version, name, definition = m.groups()
    return f"{_FACET_PREFIX}{version}/{name}.json", name, definition


def named_schema(schema_url: str) -> tuple[str, Any] | None:
    """(file URL, schema) of the definition ``schema_url`` names, resolved as the checks resolve it
    (`_Compiler.named`), or None when it names no published definition."""
    file = _facet_file(schema_url)
    if file is None:
        return None
    with _lock:
        found = _load_compiler().named(*file)
    return None if found is None else (file[0], found[1])


def _validator_for(schema_url: str) -> Check | None:
    """The compiled definition ``schema_url`` names, or None when it names no published schema."""
    try:
        return _by_url[schema_url]
    except KeyError:
        pass
    file = _facet_file(schema_url)
    check: Check | None = None
    if file is not None:
        with _lock:
            check = _load_compiler().check(*file)
    if len(_by_url) < _MAX_CACHED_URLS:
        _by_url[schema_url] = check
    return check


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------

_DELETABLE: frozenset[str] = frozenset({"job", "dataset"})


def _base_reasons(facet: dict[str, object], deletable: bool) -> list[str]:
    reasons: list[str] = []
    if not isinstance(facet.get("_producer"), str):
        reasons.append("_producer is not a string" if "_producer" in facet else "missing _producer")
    if not isinstance(facet.get("_schemaURL"), str):
        reasons.append("_schemaURL is not a string" if "_schemaURL" in facet else "missing _schemaURL")
    if deletable and "_deleted" in facet and not isinstance(facet["_deleted"], bool):
        reasons.append("_deleted is not a boolean")
    return reasons


# Producers send the same facets over and over (a job's schema and column lineage on every run), so
# verdicts are remembered by the facet's exact bytes: a serialization costs a fraction of a check.
_VERDICTS_MAX = 20_000
_verdicts: dict[tuple[str, bytes], Sequence[Err]] = {}


def _cached_check(check: Check, schema_url: str, facet: dict[str, object]) -> Sequence[Err]:
    try:
        key = (schema_url, orjson.dumps(facet))
    except TypeError:  # integers beyond 64 bits: check without remembering
        return check(facet) or ()
    verdict = _verdicts.get(key)
    if verdict is None:
        verdict = tuple(check(facet) or ())
        if len(_verdicts) >= _VERDICTS_MAX:
            _verdicts.clear()
        _verdicts[key] = verdict
    return verdict


def facet_path(container_path: str, name: str) -> str:
    """The path of facet ``name`` of the container at ``container_path`` (bracket-quoted unless an
    identifier): what warnings name and what marks a facet untrusted."""
    return join_path(container_path, name)


def facet_reasons(facet: object, kind: FacetKind, *, remember: bool = True) -> list[str]:
    """Why one facet value breaks its rules (empty when it is fine), at most MAX_ISSUES_PER_FACET.

    The verdict depends on the value and on whether ``kind`` allows ``_deleted``, nothing else: a
    facet's name and where it sits only make the path of its warnings. ``remember``: keep the
    schema check's verdict by the facet's bytes (callers with their own cache pass False)."""
    if not isinstance(facet, dict):
        return ["facet is not an object"]
    deletable = kind in _DELETABLE
    schema_url = facet.get("_schemaURL")
    reasons = (
        _base_reasons(facet, deletable)
        if not isinstance(facet.get("_producer"), str)
        or not isinstance(schema_url, str)
        or (deletable and "_deleted" in facet and not isinstance(facet["_deleted"], bool))
        else None
    )
    if isinstance(schema_url, str):
        check = _by_url.get(schema_url, _MISSING)
        if check is _MISSING:
            check = _validator_for(schema_url)
        if check is not None:
            try:
                errs = _cached_check(check, schema_url, facet) if remember else check(facet)
            except RecursionError:  # the checks recurse a few calls a level (structs in structs)
                errs = [((), "tooDeep", None)]
            if errs:
                if reasons is None:
                    reasons = []
                for err in errs:
                    reason = message(err)
                    if reason not in reasons:
                        reasons.append(reason)
            file = _facet_file(schema_url)
            beyond = identity_reasons(file[1], facet) if file is not None else []
            if beyond:
                reasons = (reasons or []) + beyond
    return reasons[:MAX_ISSUES_PER_FACET] if reasons else []


def check_facets(container: Mapping[str, object], path: str, kind: FacetKind) -> list[FacetIssue]:
    """Check every facet of one facets container; ``path`` is the container's own path.

    Returns the issues in container order, at most MAX_ISSUES_PER_FACET per facet; each issue's
    ``path`` is the facet's path (``path`` + facet name, bracket-quoted unless an identifier).
    """
    issues: list[FacetIssue] = []
    for name, facet in container.items():
        reasons = facet_reasons(facet, kind)
        size = too_long(name, MAX_NAME_BYTES)
        if size is not None:  # facet names key the model's facet rows
            reasons = [f"its name is {size} bytes long; a facet name may have at most {MAX_NAME_BYTES}"]
        if reasons:
            where = join_path(path, name)
            issues.extend(FacetIssue(where, r) for r in reasons)
    return issues
