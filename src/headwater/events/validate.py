"""Validation of OpenLineage events against the core of the newest spec (2-0-2), in plain Python.

The core decides acceptance; facets never cost an event: a facet that breaks its published
schema is kept, reported as a warning and marked untrusted (see `headwater.events.facets`).
Run ids (`run.runId`, and the parent facet's `run.runId` and `root.run.runId`) may be any
non-empty string: one that is not a UUID is kept as sent and reported as a warning.

Namespaces, names and run ids have a length limit in bytes (`headwater.events.limits`): they
become the lineage model's keys. A longer one is refused, naming the field, and so is an event
nested deeper than `MAX_JSON_DEPTH` levels.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from headwater.errors import InvalidEvent
from headwater.events.decode import dumps
from headwater.events.facet_refs import split_event
from headwater.events.facets import FacetKind, check_facets
from headwater.events.ids import content_hash, event_id
from headwater.events.limits import DEPTH_REASON, MAX_RUN_ID_BYTES, NAME_LIMITS, deeper_than, too_long
from headwater.events.model import EVENT_TYPES, Event, EventKind
from headwater.events.times import EventTimeError, format_ticks, parse_event_time

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Checks the parent facet's schema with its lenient run ids replaced (they are reported apart).
_STAND_IN_UUID = "00000000-0000-0000-0000-000000000000"
_KIND_FROM_FRAGMENT: dict[str, EventKind] = {
    "RunEvent": "run",
    "DatasetEvent": "dataset",
    "JobEvent": "job",
}
_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}


def _describe(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return _JSON_TYPES[type(value)]
    if isinstance(value, int | float):
        return "a number"
    return _JSON_TYPES.get(type(value), type(value).__name__)


def is_uuid(value: object) -> bool:
    return isinstance(value, str) and _UUID.fullmatch(value) is not None


def normal_run_id(value: str) -> str:
    """A run id as it is stored and looked up: a UUID in lower case (UUIDs ignore case), any other
    id exactly as sent."""
    return value.lower() if is_uuid(value) else value


def _lenient(run_id: object) -> bool:
    """A run id accepted with a warning: a non-empty string that is not a UUID."""
    return isinstance(run_id, str) and run_id != "" and not is_uuid(run_id)


def _parent_runs(parent: object) -> list[tuple[str, dict[str, Any]]]:
    """(path inside the parent facet, object holding `runId`) of the parent run and the root run."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(parent, dict):
        for path, holder in (("run", parent), ("root.run", parent.get("root"))):
            run = holder.get("run") if isinstance(holder, dict) else None
            if isinstance(run, dict):
                found.append((path, run))
    return found


class _Checker:
    """Collects `path: reason` errors and facet warnings while walking one event."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.untrusted: list[str] = []
        self.reasons: dict[str, list[str]] = {}  # facet path → why it breaks its rules

    def fail(self, path: str, reason: str) -> None:
        self.errors.append(f"{path}: {reason}")

    def string(self, obj: dict[str, Any], key: str, path: str, *, required: bool = True) -> str | None:
        value = obj.get(key)
        if value is None and key not in obj:
            if required:
                self.fail(f"{path}{key}", "is required")
            return None
        if not isinstance(value, str):
            self.fail(f"{path}{key}", f"must be a string, got {_describe(value)}")
            return None
        return value

    def obj(self, parent: dict[str, Any], key: str, path: str, *, required: bool) -> dict[str, Any] | None:
        if key not in parent:
            if required:
                self.fail(path, "is required")
            return None
        value = parent[key]
        if not isinstance(value, dict):
            self.fail(path, f"must be an object, got {_describe(value)}")
            return None
        return value

    def run_id(self, value: str, path: str) -> str | None:
        """A run id: any non-empty string; one that is not a UUID is kept as sent, with a warning."""
        if not value:
            self.fail(path, "must not be empty")
            return None
        if not is_uuid(value):
            size = too_long(value, MAX_RUN_ID_BYTES)
            if size is not None:
                self.fail(path, f"is {size} bytes long; a run id may have at most {MAX_RUN_ID_BYTES}")
                return None
            self.warnings.append(f"{path}: {value!r} is not a UUID")
        return normal_run_id(value)

    def lenient_parent(self, container: dict[str, Any], path: str) -> dict[str, Any]:
        """The run facets to check against their schemas: the parent facet's run ids follow the rule
        of `run.runId` (warned here), so a stand-in UUID takes the place of each non-UUID one."""
        parent = container.get("parent")
        if not has_lenient_parent(parent):
            return container
        checked = copy.deepcopy(parent)
        for where, run in _parent_runs(checked):
            if _lenient(run.get("runId")):
                size = too_long(run["runId"], MAX_RUN_ID_BYTES)
                if size is None:
                    self.run_id(run["runId"], f"{path}.parent.{where}.runId")
                else:  # a facet never costs the event: this one is untrusted, its ids not read
                    where_facet = f"{path}.parent"
                    limit = MAX_RUN_ID_BYTES
                    reason = f"{where}.runId is {size} bytes long; a run id may have at most {limit}"
                    self.warnings.append(f"{where_facet}: {reason}")
                    self.untrusted.append(where_facet)
                    self.reasons.setdefault(where_facet, []).append(reason)
                run["runId"] = _STAND_IN_UUID
        return {**container, "parent": checked}

    def facets(self, parent: dict[str, Any], key: str, path: str, kind: FacetKind) -> None:
        container = self.obj(parent, key, f"{path}{key}", required=False)
        if container:
            if kind == "run":
                container = self.lenient_parent(container, f"{path}{key}")
            for issue in check_facets(container, f"{path}{key}", kind):
                self.warnings.append(str(issue))
                self.untrusted.append(issue.path)
                self.reasons.setdefault(issue.path, []).append(issue.reason)

    def identity(self, parent: dict[str, Any], key: str, facet_kind: FacetKind) -> tuple[str, str] | None:
        entity = self.obj(parent, key, key, required=True)
        if entity is None:
            return None
        return self.named(entity, f"{key}.", facet_kind)

    def named(self, entity: dict[str, Any], path: str, facet_kind: FacetKind) -> tuple[str, str] | None:
        namespace = self.limited(self.string(entity, "namespace", path), "namespace", path)
        name = self.limited(self.string(entity, "name", path), "name", path)
        self.facets(entity, "facets", path, facet_kind)
        if namespace is None or name is None:
            return None
        return namespace, name

    def limited(self, value: str | None, key: str, path: str) -> str | None:
        """A namespace or a name within its length limit (`NAME_LIMITS`), else a failure."""
        size = None if value is None else too_long(value, NAME_LIMITS[key])
        if size is None:
            return value
        self.fail(f"{path}{key}", f"is {size} bytes long; a {key} may have at most {NAME_LIMITS[key]}")
        return None

    def datasets(self, event: dict[str, Any], key: str) -> None:
        if key not in event:
            return
        items = event[key]
        if not isinstance(items, list):
            self.fail(key, f"must be an array of datasets, got {_describe(items)}")
            return
        extra_kind: FacetKind
        extra_key, extra_kind = "outputFacets", "output"
        if key == "inputs":
            extra_key, extra_kind = "inputFacets", "input"
        for i, item in enumerate(items):
            path = f"{key}[{i}]"
            if not isinstance(item, dict):
                self.fail(path, f"must be a dataset object, got {_describe(item)}")
                continue
            self.named(item, f"{path}.", "dataset")
            self.facets(item, extra_key, f"{path}.", extra_kind)


def kind_of_schema_url(url: str) -> EventKind | None:
    """The kind a schemaURL's fragment names (`…#/$defs/RunEvent` → run), if any."""
    _, _, fragment = url.partition("#")
    return _KIND_FROM_FRAGMENT.get(fragment.rsplit("/", 1)[-1]) if fragment else None


def infer_kind(event: dict[str, Any]) -> EventKind | None:
    """The kind named by the schemaURL fragment, else read from the structure (DESIGN.md)."""
    url = event.get("schemaURL")
    if isinstance(url, str):
        kind = kind_of_schema_url(url)
        if kind is not None:
            return kind
    if "run" in event:
        return "run"
    if "job" in event:
        return "job"
    if "dataset" in event:
        return "dataset"
    return None


def parent_ids(parent: object) -> tuple[str | None, str | None]:
    """(parent run id, root run id) named by a run's `parent` facet; the root is the parent when
    the facet names none."""
    if not isinstance(parent, dict):
        return None, None

    def run_id_of(holder: object) -> str | None:
        if isinstance(holder, dict):
            inner = holder.get("run")
            value = inner.get("runId") if isinstance(inner, dict) else None
            if isinstance(value, str) and value and (is_uuid(value) or not too_long(value, MAX_RUN_ID_BYTES)):
                return normal_run_id(value)
        return None

    parent_id = run_id_of(parent)
    root_id = run_id_of(parent.get("root")) or parent_id
    return parent_id, root_id


def has_lenient_parent(parent: object) -> bool:
    """Whether a `parent` facet names a run by an id that is not a UUID (checked with a warning)."""
    return any(_lenient(run.get("runId")) for _, run in _parent_runs(parent))


def _parent_ids(run: dict[str, Any]) -> tuple[str | None, str | None]:
    facets = run.get("facets")
    return parent_ids(facets.get("parent") if isinstance(facets, dict) else None)


def validate_event(doc: object, raw: bytes | None = None) -> Event:
    """Check one decoded event; return it ready to store, or raise InvalidEvent naming each field."""
    if not isinstance(doc, dict):
        raise InvalidEvent([f"event: must be a JSON object, got {_describe(doc)}"])
    try:
        canonical = dumps(doc, sort_keys=True)
    except RecursionError:
        canonical = None
    if canonical is None or deeper_than(canonical):
        raise InvalidEvent([DEPTH_REASON])
    check = _Checker()
    ticks = 0
    time_value = check.string(doc, "eventTime", "")
    if time_value is not None:
        try:
            ticks = parse_event_time(time_value)
        except EventTimeError as exc:
            check.fail("eventTime", str(exc))
    producer = check.string(doc, "producer", "")
    check.string(doc, "schemaURL", "", required=False)
    kind = infer_kind(doc)

    run_id = parent_run_id = root_run_id = None
    job: tuple[str, str] | None = None
    dataset: tuple[str, str] | None = None
    event_type: str | None = None
    if kind is None:
        check.fail("event", "has none of run, job or dataset, so it is no RunEvent, JobEvent or DatasetEvent")
    elif kind == "dataset":
        if "job" in doc and "run" in doc:
            check.fail("event", "a DatasetEvent must not carry both job and run")
        dataset = check.identity(doc, "dataset", "dataset")
    else:
        if kind == "run":
            raw_type = doc.get("eventType")
            if raw_type is not None or "eventType" in doc:
                if isinstance(raw_type, str) and raw_type in EVENT_TYPES:
                    event_type = str(raw_type)
                else:
                    allowed = "/".join(sorted(EVENT_TYPES))
                    check.fail("eventType", f"{raw_type!r} is not one of {allowed}")
            run = check.obj(doc, "run", "run", required=True)
            if run is not None:
                raw_run_id = check.string(run, "runId", "run.")
                if raw_run_id is not None:
                    run_id = check.run_id(raw_run_id, "run.runId")
                check.facets(run, "facets", "run.", "run")
                parent_run_id, root_run_id = _parent_ids(run)
                root_run_id = root_run_id or run_id
        elif "run" in doc:
            check.fail("run", "a JobEvent must not carry a run")
        job = check.identity(doc, "job", "job")
        check.datasets(doc, "inputs")
        check.datasets(doc, "outputs")

    if check.errors:
        raise InvalidEvent(check.errors)
    assert kind is not None and producer is not None
    digest = content_hash(canonical)
    try:
        payload = raw.decode() if raw is not None else dumps(doc).decode()
    except UnicodeDecodeError:  # a body in another encoding is kept as its JSON value
        payload = dumps(doc).decode()
    split = split_event(doc, lambda path, _value, _kind: check.reasons.get(path, ()))
    return Event(
        kind=kind,
        event_id=event_id(ticks, digest),
        event_time=format_ticks(ticks),
        event_type=event_type,
        run_id=run_id,
        parent_run_id=parent_run_id,
        root_run_id=root_run_id,
        job_namespace=job[0] if job else None,
        job_name=job[1] if job else None,
        dataset_namespace=dataset[0] if dataset else None,
        dataset_name=dataset[1] if dataset else None,
        producer=producer,
        content_hash=digest.hex(),
        payload=payload,
        warnings=tuple(check.warnings),
        untrusted_facets=tuple(dict.fromkeys(check.untrusted)),
        core=split[0] if split else None,
        facet_values=split[1] if split else (),
    )
