"""The official OpenLineage schemas, through ``jsonschema``, as an oracle for whole events.

Written independently of ``headwater.events``: it knows the spec folder and Headwater's documented
behaviour, not its code.  ``expected(doc)`` gives the verdict Headwater should reach for one decoded
event: accepted or not, the paths an error must name, and the facets to report as untrusted.  The
rules, and each deliberate difference from the official core schema, are listed in the docstring of
``tests/events/test_conformance.py``.
"""

from __future__ import annotations

import calendar
import copy
import functools
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

REPO = Path(__file__).resolve().parents[2]
SPEC_DIR = Path(os.environ.get("HEADWATER_SPEC_DIR") or REPO.parent / "shared" / "openlineage-spec")
HAVE_SPEC = (SPEC_DIR / "OpenLineage.json").is_file() and (SPEC_DIR / "published" / "facets").is_dir()
NO_SPEC = f"OpenLineage spec folder not found at {SPEC_DIR} (set HEADWATER_SPEC_DIR)"

CORE = "https://openlineage.io/spec/2-0-2/OpenLineage.json"
FACETS = "https://openlineage.io/spec/facets/"
KIND_DEF = {"run": "RunEvent", "job": "JobEvent", "dataset": "DatasetEvent"}
FACET_KIND_DEF = {
    "run": "RunFacet",
    "job": "JobFacet",
    "dataset": "DatasetFacet",
    "input": "InputDatasetFacet",
    "output": "OutputDatasetFacet",
}
MINIMAL_FACET = {"_producer": "p", "_schemaURL": "u"}

# ------------------------------------------------------------------------------------------------
# Schemas
# ------------------------------------------------------------------------------------------------


@functools.cache
def documents() -> dict[str, Any]:
    """Every published schema by its $id; the newest core (the spec's own OpenLineage.json) last."""
    docs: dict[str, Any] = {}
    for path in sorted((SPEC_DIR / "published").glob("**/*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        docs[doc["$id"]] = doc
    newest = json.loads((SPEC_DIR / "OpenLineage.json").read_text(encoding="utf-8"))
    assert newest["$id"] == CORE, f"the newest core is {newest['$id']}, this oracle is written for {CORE}"
    docs[CORE] = newest
    return docs


@functools.cache
def source_facet(name: str) -> Any | None:
    """The spec's unpublished source schema ``facets/<name>.json`` (for examples named after it)."""
    path = SPEC_DIR / "facets" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


@functools.cache
def _registry() -> Registry[Any]:
    return Registry().with_resources((url, Resource.from_contents(doc)) for url, doc in documents().items())


@functools.cache
def _format_checker() -> FormatChecker:
    """uuid and date-time asserted with jsonschema's own checkers; uri and the rest annotations."""
    official = Draft202012Validator.FORMAT_CHECKER.checkers
    assert "date-time" in official, "jsonschema needs rfc3339-validator for date-time"
    checker = FormatChecker(formats=())
    checker.checkers["uuid"] = official["uuid"]
    checker.checkers["date-time"] = official["date-time"]
    return checker


@functools.cache
def validator(ref: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": ref}, registry=_registry(), format_checker=_format_checker())


def conforms(value: str, fmt: str) -> bool:
    return _format_checker().conforms(value, fmt)


# ------------------------------------------------------------------------------------------------
# Facets
# ------------------------------------------------------------------------------------------------

_FACET_URL = re.compile(
    r"https?://openlineage\.io/spec/facets/([0-9]+-[0-9]+-[0-9]+)/([A-Za-z0-9_]+)\.json(?:#(.*))?"
)


def target_ref(schema_url: object) -> str | None:
    """The published definition a ``_schemaURL`` names, as a $ref; None when it names none.

    Resolution as docs/events.md and headwater.events.facets document it: the fragment's ``$defs``
    entry, else the definition named like the file, else the file's single top-level property.
    """
    if not isinstance(schema_url, str):
        return None
    m = _FACET_URL.fullmatch(schema_url.strip())
    if m is None:
        return None
    version, name, fragment = m.groups()
    url = f"{FACETS}{version}/{name}.json"
    doc = documents().get(url)
    if doc is None:
        return None
    if fragment in (None, "", "/"):
        if name in doc.get("$defs", {}):
            return f"{url}#/$defs/{name}"
        props = doc.get("properties", {})
        return f"{url}#/properties/{next(iter(props))}" if len(props) == 1 else None
    if fragment.startswith("/$defs/") and fragment.removeprefix("/$defs/") in doc.get("$defs", {}):
        return f"{url}#{fragment}"
    return None


def facet_errors(value: Any, kind: str) -> list[str]:
    """Why a facet found in a container of ``kind`` breaks core 2-0-2 or its published schema."""
    return list(_facet_errors(json.dumps([kind, value], sort_keys=True)))


@functools.lru_cache(maxsize=65536)
def _facet_errors(key: str) -> tuple[str, ...]:
    kind, value = json.loads(key)
    if not isinstance(value, dict):
        return ("facet is not an object",)
    refs = [f"{CORE}#/$defs/{FACET_KIND_DEF[kind]}"]
    target = target_ref(value.get("_schemaURL"))
    if target is not None:
        refs.append(target)
    return tuple(f"{e.json_path}: {e.message}" for ref in refs for e in validator(ref).iter_errors(value))


def schema_facet_kinds(schema: Any, base: str, docs: dict[str, Any], depth: int = 0) -> set[str]:
    """Facet kinds a facet schema builds on: core ``<Kind>Facet`` definitions reached through
    ``$ref``, ``allOf``, ``anyOf`` and ``oneOf`` (not through properties)."""
    if not isinstance(schema, dict) or depth > 10:
        return set()
    kinds: set[str] = set()
    ref = schema.get("$ref")
    if isinstance(ref, str):
        url, _, pointer = ref.partition("#")
        url = url or base
        last = pointer.rsplit("/", 1)[-1]
        if url.endswith("/OpenLineage.json"):
            kinds |= {k for k, d in FACET_KIND_DEF.items() if d == last}
        elif url in docs:
            node: Any = docs[url]
            for part in pointer.strip("/").split("/") if pointer.strip("/") else []:
                node = node[part]
            kinds |= schema_facet_kinds(node, url, docs, depth + 1)
    for word in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(word, []):
            kinds |= schema_facet_kinds(sub, base, docs, depth + 1)
    return kinds


# ------------------------------------------------------------------------------------------------
# Events
# ------------------------------------------------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def join(prefix: str, seg: str | int) -> str:
    """Headwater's path syntax: ``a.b``, ``a[0]``, ``a["not an identifier"]``."""
    if isinstance(seg, int):
        return f"{prefix}[{seg}]"
    if _IDENT.fullmatch(seg):
        return f"{prefix}.{seg}" if prefix else seg
    return f"{prefix}[{json.dumps(seg)}]"


def event_kind(doc: dict[str, Any]) -> str | None:
    """The kind the schemaURL fragment names (its last segment), else run > job > dataset."""
    url = doc.get("schemaURL")
    if isinstance(url, str) and "#" in url:
        last = url.split("#", 1)[1].rsplit("/", 1)[-1]
        for kind, name in KIND_DEF.items():
            if last == name:
                return kind
    for kind in ("run", "job", "dataset"):
        if kind in doc:
            return kind
    return None


def facet_containers(doc: dict[str, Any], kind: str) -> Iterator[tuple[str, dict[str, Any], str]]:
    """(path, container, facet kind) of every facets container the core schema of ``kind`` defines."""

    def container(entity: Any, key: str, path: str, facet_kind: str) -> Iterator[tuple[str, Any, str]]:
        if isinstance(entity, dict) and isinstance(entity.get(key), dict):
            yield f"{path}.{key}", entity[key], facet_kind

    if kind == "dataset":
        yield from container(doc.get("dataset"), "facets", "dataset", "dataset")
        return
    if kind == "run":
        yield from container(doc.get("run"), "facets", "run", "run")
    yield from container(doc.get("job"), "facets", "job", "job")
    for key, extra, extra_kind in (("inputs", "inputFacets", "input"), ("outputs", "outputFacets", "output")):
        items = doc.get(key)
        if isinstance(items, list):
            for i, item in enumerate(items):
                yield from container(item, "facets", f"{key}[{i}]", "dataset")
                yield from container(item, extra, f"{key}[{i}]", extra_kind)


# eventTime spellings Headwater reads beyond RFC 3339 (see the test module docstring, F1): surrounding
# whitespace, " " between date and time, "," before the fraction, no offset, "+hh" and "+hhmm" offsets,
# a leap second.  ASCII digits only.
_LENIENT_TIME = re.compile(
    r"([0-9]{4}-[0-9]{2}-[0-9]{2})[Tt ]([0-9]{2}:[0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?"
    r"([Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?",
    re.ASCII,
)
# eventIds are version-1 UUIDs: 60 bits of 100 ns ticks from 1582-10-15T00:00:00Z (F2).
_FIRST_TICK = calendar.timegm((1582, 10, 15, 0, 0, 0)) * 10_000_000
_LAST_TICK = _FIRST_TICK + (1 << 60) - 1


def headwater_time(value: str) -> tuple[str, int | None]:
    """(the RFC 3339 spelling of an eventTime Headwater reads as the same instant, its 100 ns ticks
    since the epoch when the date-time is well formed), or (value, None) when no rewrite applies."""
    m = _LENIENT_TIME.fullmatch(value.strip())
    if m is None:
        return value, None
    date, hour_minute, second, fraction, offset = m.groups()
    leap = second == "60"
    if offset is None:
        offset = "Z"  # D2: no offset means UTC
    elif offset[0] in "+-":
        digits = offset[1:].replace(":", "")
        offset = f"{offset[0]}{digits[:2]}:{digits[2:] or '00'}"
    strict = f"{date}T{hour_minute}:{'59' if leap else second}{'.' + fraction if fraction else ''}{offset}"
    if not conforms(strict, "date-time"):
        return strict, None
    year, month, day = (int(x) for x in date.split("-"))
    hour, minute = (int(x) for x in hour_minute.split(":"))
    seconds = calendar.timegm((year, month, day, hour, minute, 59 if leap else int(second))) + leap
    if offset not in ("Z", "z"):
        shift = int(offset[1:3]) * 3600 + int(offset[4:6]) * 60
        seconds += -shift if offset[0] == "+" else shift
    ticks = seconds * 10_000_000 + (int((fraction + "0000000")[:7]) if fraction else 0)
    return strict, ticks


_CANONICAL_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


@dataclass(frozen=True)
class Expected:
    accepted: bool
    # One group per violation: the paths an error reporting it may name.  Every error of a rejection
    # must name a path of some group, and every group must be named by some error.
    faults: frozenset[frozenset[str]] = frozenset()
    untrusted: frozenset[str] = frozenset()  # facet paths an accepted event reports
    # run ids an accepted event keeps with a "not a UUID" warning (D4), by path
    lenient_run_ids: frozenset[str] = frozenset()
    notes: tuple[str, ...] = field(default=())  # jsonschema's own messages, for failure reports


def _fault_paths(error: Any) -> frozenset[str]:
    path = ""
    for seg in error.absolute_path:
        path = join(path, seg)
    here = path or "event"
    if error.validator == "required":
        missing = error.message.split("'")[1]  # "'name' is a required property"
        return frozenset({join(path, missing)})
    if error.validator == "not":  # JobEvent: not run; DatasetEvent: not (job and run)
        present = [k for k in error.validator_value.get("required", []) if k in error.instance]
        return frozenset({here, *(join(path, k) for k in present)})
    return frozenset({here})


def expected(doc: Any) -> Expected:
    """The verdict Headwater should reach for one decoded event."""
    if not isinstance(doc, dict):
        return Expected(False, frozenset({frozenset({"event"})}), notes=("not an object",))
    kind = event_kind(doc)
    core = copy.deepcopy(doc)
    if kind is not None:
        for _, container, _ in facet_containers(core, kind):
            for name in container:
                container[name] = dict(MINIMAL_FACET)
    core.setdefault("schemaURL", f"{CORE}#/$defs/{KIND_DEF.get(kind or 'run')}")  # D1
    faults: set[frozenset[str]] = set()
    notes: list[str] = []
    if isinstance(core.get("eventTime"), str):
        core["eventTime"], ticks = headwater_time(core["eventTime"])
        if ticks is not None and not _FIRST_TICK <= ticks <= _LAST_TICK:
            faults.add(frozenset({"eventTime"}))
            notes.append("eventTime: outside the eventId range")
    lenient: set[str] = set()
    run = core.get("run")
    if kind == "run" and isinstance(run, dict) and lenient_run_id(run.get("runId")):  # D4
        run["runId"] = STAND_IN_UUID
        lenient.add("run.runId")
    if kind is None:
        faults.add(frozenset({"event"}))
        notes.append("event: none of run, job, dataset")
        ref = f"{CORE}#/$defs/BaseEvent"
    else:
        ref = f"{CORE}#/$defs/{KIND_DEF[kind]}"
    for error in validator(ref).iter_errors(core):
        faults.add(_fault_paths(error))
        notes.append(f"{error.json_path}: {error.message}")
    if faults:
        return Expected(False, frozenset(faults), notes=tuple(notes))
    untrusted = set()
    for path, container, facet_kind in facet_containers(doc, kind or "run"):
        for name, value in container.items():
            if path == "run.facets" and name == "parent":
                value, ids = lenient_parent(value)
                lenient |= {f"run.facets.parent.{where}" for where in ids}
            if facet_errors(value, facet_kind):
                untrusted.add(join(path, name))
    return Expected(True, untrusted=frozenset(untrusted), lenient_run_ids=frozenset(lenient))


# D4: a run id is any non-empty string; one that is not an 8-4-4-4-12 hex UUID is kept with a
# warning, in run.runId and in the parent facet's run.runId and root.run.runId alike. The facet's
# schema judges the rest of the facet (its ids replaced by a valid UUID).
STAND_IN_UUID = "00000000-0000-4000-8000-000000000000"


def lenient_run_id(value: Any) -> bool:
    return isinstance(value, str) and value != "" and not _CANONICAL_UUID.fullmatch(value)


def lenient_parent(facet: Any) -> tuple[Any, list[str]]:
    """The parent facet with its lenient run ids replaced, and their paths inside the facet."""
    if not isinstance(facet, dict):
        return facet, []
    facet = copy.deepcopy(facet)
    ids = []
    for where, holder in (("run", facet), ("root.run", facet.get("root"))):
        run = holder.get("run") if isinstance(holder, dict) else None
        if isinstance(run, dict) and lenient_run_id(run.get("runId")):
            run["runId"] = STAND_IN_UUID
            ids.append(f"{where}.runId")
    return facet, ids
