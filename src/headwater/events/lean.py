"""The lean path of event validation: a RunEvent's core decoded by compiled msgspec structs straight
from its bytes, its facets left as raw bytes and judged once per distinct value.

`validate_raw` returns the same `Event` as `validate_event(decode.loads(raw), raw)` — same eventId,
identities, warnings and untrusted facets — or None for any event it cannot vouch for: another
kind of event, a field it does not know, a run id that is not a UUID, anything invalid. Those go
to `validate_event`, which has the final say and writes every message. The lean path never
rejects an event; it only accepts the common ones faster. tests/events/test_lean.py checks that
both paths agree. A JSON array of such events is decoded in one pass (`decode_batch`: split and
decoded at once); its events have no payload, and one that leaves the lean path takes its own
bytes then.

Facet verdicts are remembered by each facet's exact bytes, with the canonical bytes that go into
the content hash: producers resend the same schema, column lineage and job facets run after run,
so a facet seen before costs a dictionary lookup instead of a parse, a schema check and a
serialization.

The same path compiled (native/lean, `validate_array` and `validate_object` at the end of this
module) goes first when it is built, and asks this module for what it has not judged yet.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import msgspec
import orjson
from msgspec import UNSET, Raw, Struct, UnsetType

from headwater.events.decode import EXACT_JSON
from headwater.events.facet_refs import INLINE_BYTES, FacetValue, facet_hash, kept_inline
from headwater.events.facets import FacetKind, facet_path, facet_reasons
from headwater.events.flat_facets import FLAT
from headwater.events.flat_facets import definition as flat_definition
from headwater.events.ids import content_hash, event_id
from headwater.events.limits import MAX_JSON_DEPTH, MAX_NAME_BYTES, MAX_NAMESPACE_BYTES, deeper_than, too_long
from headwater.events.model import EVENT_TYPES, Event
from headwater.events.times import EventTimeError, format_ticks, parse_event_time
from headwater.events.validate import has_lenient_parent, is_uuid, kind_of_schema_url, parent_ids

Facets = Raw  # a facets container, kept as its bytes (`FacetVerdicts.container` reads it)
_DELETABLE = frozenset({"job", "dataset"})
_CONTAINER = msgspec.json.Decoder(dict[str, Raw])


class _Run(Struct, forbid_unknown_fields=True, gc=False):
    runId: str
    facets: Facets | UnsetType = UNSET


class _Job(Struct, forbid_unknown_fields=True, gc=False):
    namespace: str
    name: str
    facets: Facets | UnsetType = UNSET


class _Input(Struct, forbid_unknown_fields=True, gc=False):
    namespace: str
    name: str
    facets: Facets | UnsetType = UNSET
    inputFacets: Facets | UnsetType = UNSET


class _Output(Struct, forbid_unknown_fields=True, gc=False):
    namespace: str
    name: str
    facets: Facets | UnsetType = UNSET
    outputFacets: Facets | UnsetType = UNSET


class _RunEvent(Struct, forbid_unknown_fields=True, gc=False):
    """What the lean path takes: a RunEvent made of the core's fields only, each of its type. The
    job and the datasets are kept as their bytes: they come back unchanged event after event, so
    each distinct one is decoded once (`Part`)."""

    eventTime: str
    producer: str
    run: _Run
    job: Raw
    eventType: str | UnsetType = UNSET
    schemaURL: str | UnsetType = UNSET
    inputs: Raw | UnsetType = UNSET
    outputs: Raw | UnsetType = UNSET


_DECODER = msgspec.json.Decoder(_RunEvent)
_JOB = msgspec.json.Decoder(_Job)
_INPUTS = msgspec.json.Decoder(list[_Input])
_OUTPUTS = msgspec.json.Decoder(list[_Output])


class _NotLean(Exception):
    """The event leaves the lean path for `validate_event`."""


# canonical bytes, reasons the facet breaks its rules, and the facet's value as the store keeps it
# (None for a value that is not an object: such an event is stored whole)
Verdict = tuple[orjson.Fragment, tuple[str, ...], FacetValue | None]
# A container's canonical bytes, the (facet name, reasons) of each facet that breaks its rules,
# the bytes of its `parent` facet if it has one, the container as the event's core holds it (each
# facet replaced by its hash, but those `kept_inline`) and the facet values stored by hash; both
# None when a facet is not an object.
ContainerVerdict = tuple[
    orjson.Fragment,
    tuple[tuple[str, tuple[str, ...]], ...],
    bytes | None,
    orjson.Fragment | None,
    tuple[FacetValue, ...] | None,
]
# The verdict of an event's job, inputs or outputs: its canonical bytes, its form in the core (None
# when a facet is not an object), its warnings, untrusted facet paths and facet values (None with
# the core), and for the job its (namespace, name).
Part = tuple[
    orjson.Fragment,
    orjson.Fragment | None,
    tuple[str, ...],
    tuple[str, ...],
    tuple[FacetValue, ...] | None,
    tuple[str, str] | None,
]
PartName = Literal["job", "inputs", "outputs"]
# (what the bytes are: "container", "value" or a PartName; may its facets carry _deleted?, bytes)
_Key = tuple[str, bool, bytes]
_V = TypeVar("_V")
_A = TypeVar("_A")
_B = TypeVar("_B")
_SEEN_MAX = 200_000


class FacetVerdicts:
    """Verdicts of facets containers and of facet values, by their exact bytes. A job's facets
    or a dataset's come back the same run after run: one lookup answers for the whole container;
    a container seen for the first time is judged facet by facet, and its facets seen before
    cost a lookup each. A value is kept from its second sighting on. Two generations bound the
    memory: when the young one fills up it becomes the old one, and an entry found in the old one
    moves back, so what producers keep sending stays. Job and dataset facets are told apart from
    the others: they may carry `_deleted`, the only thing besides the value that changes a
    verdict."""

    def __init__(self, max_bytes: int = 32 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._young: dict[_Key, Any] = {}
        self._old: dict[_Key, Any] = {}
        self._bytes = 0
        self._seen: set[int] = set()  # hashes of the values judged once and not kept
        self._lock = threading.Lock()
        self.checks = 0  # facet values parsed and checked (misses), for tests and benchmarks
        self.on_clear: list[Callable[[], None]] = []  # what else keeps these verdicts (`_NATIVE`)

    def part(self, name: PartName, raw: bytes) -> Part:
        key = (name, False, raw)
        found: Part | None = self._young.get(key)
        if found is not None:
            return found
        return self._missed(key, _judge_part, name, raw)

    def container(self, raw: bytes, kind: FacetKind) -> ContainerVerdict:
        key = ("container", kind in _DELETABLE, raw)
        found: ContainerVerdict | None = self._young.get(key)
        if found is not None:  # most containers: answered without a call
            return found
        return self._missed(key, self._judge_container, raw, kind)

    def verdict(self, raw: bytes, kind: FacetKind) -> Verdict:
        key = ("value", kind in _DELETABLE, raw)
        found: Verdict | None = self._young.get(key)
        if found is not None:
            return found
        return self._missed(key, self._judge, raw, kind)

    def _missed(self, key: _Key, judge: Callable[[_A, _B], _V], first: _A, second: _B) -> _V:
        """The verdict of `key`, not in the young generation: from the old one, else
        `judge(first, second)`'s, remembered from its second sighting."""
        found: _V | None = self._old.get(key)
        if found is None:
            found = judge(first, second)
            if not self._seen_before(key):
                return found
        self._keep(key, found)
        return found

    def _seen_before(self, key: _Key) -> bool:
        """Whether a value judged now was judged once before: only those are kept. Facets that
        hold an event's own time or counts (nominalTime, outputStatistics) never come back, and
        keeping them would push out the ones that do."""
        digest = hash(key)
        if digest in self._seen:
            return True
        if len(self._seen) >= _SEEN_MAX:
            self._seen.clear()
        self._seen.add(digest)
        return False

    def _judge_container(self, raw: bytes, kind: FacetKind) -> ContainerVerdict:
        try:
            facets = _CONTAINER.decode(raw)
        except msgspec.DecodeError:  # not an object: the full path names it
            raise _NotLean from None
        canonical: dict[str, orjson.Fragment] = {}
        issues: list[tuple[str, tuple[str, ...]]] = []
        hashes: dict[str, str | orjson.Fragment] | None = {}  # a hash, or the value kept inline
        values: list[FacetValue] = []
        for name, value in facets.items():
            if too_long(name, MAX_NAME_BYTES):  # the full path makes the facet untrusted
                raise _NotLean
            fragment, reasons, stored = self.verdict(bytes(value), kind)
            canonical[name] = fragment
            if reasons:
                issues.append((name, reasons))
            if stored is None or hashes is None:
                hashes = None
            elif not stored[0]:  # kept inline (`_facet_value`)
                hashes[name] = fragment
            else:
                hashes[name] = stored[0]
                values.append(stored)
        parent = facets.get("parent")
        whole = orjson.Fragment(orjson.dumps(canonical, option=orjson.OPT_SORT_KEYS))
        if hashes is None:
            return whole, tuple(issues), None if parent is None else bytes(parent), None, None
        return (
            whole,
            tuple(issues),
            None if parent is None else bytes(parent),
            orjson.Fragment(orjson.dumps(hashes)),
            tuple(values),
        )

    def _judge(self, raw: bytes, kind: FacetKind) -> Verdict:
        canonical = FLAT.canonical(raw)
        if canonical is not None:  # valid, of a flat schema: no parse, no Python walk of checks
            self.checks += 1
            return orjson.Fragment(canonical), (), _facet_value(canonical, (), kind in _DELETABLE)
        # A facet is at most four levels into its event (an output's facets); a deeper one leaves
        # for the full path, which refuses the event if it is too deep as a whole. (A flat facet
        # is one level deep.)
        if deeper_than(raw, MAX_JSON_DEPTH - 4):
            raise _NotLean
        try:
            value = EXACT_JSON.decode(raw)  # an integer beyond 64 bits stays one (orjson: a float)
            canonical = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError, TypeError):
            raise _NotLean from None  # such an integer (orjson cannot write it) and the like: the full path
        self.checks += 1
        reasons = tuple(facet_reasons(value, kind, remember=False))
        stored = _facet_value(canonical, reasons, kind in _DELETABLE) if isinstance(value, dict) else None
        return orjson.Fragment(canonical), reasons, stored

    def _keep(self, key: _Key, verdict: Any) -> None:
        with self._lock:
            size = 2 * len(key[2]) + 200
            if self._bytes + size > self.max_bytes // 2:
                self._old, self._young, self._bytes = self._young, {}, 0
            self._young[key] = verdict
            self._bytes += size

    def clear(self) -> None:
        with self._lock:
            self._young, self._old, self._bytes, self._seen = {}, {}, 0, set()
        for forget in self.on_clear:
            forget()


def _facet_value(canonical: bytes, reasons: tuple[str, ...], deletable: bool) -> FacetValue:
    """A facet value's verdict for the store; a value its event's core keeps inline is never
    stored, and gets no hash (an empty one: hashing those, a run's nominalTime or an output's
    statistics, was about a tenth of validating an event)."""
    inline = kept_inline(canonical, reasons, deletable)
    return ("" if inline else facet_hash(canonical)), canonical, reasons, deletable


VERDICTS = FacetVerdicts()


class _Judged:
    """Warnings, untrusted facet paths and facet values of one event, in the order
    `validate_event` finds them."""

    __slots__ = ("untrusted", "values", "warnings")

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.untrusted: list[str] = []
        self.values: list[FacetValue] | None = []  # None: the event is stored whole

    def facets(
        self, container: Facets, path: str, kind: FacetKind
    ) -> tuple[orjson.Fragment, bytes | None, orjson.Fragment | None]:
        """The container's canonical bytes, its parent facet's, and the container as the core
        holds it, noting its warnings and facet values."""
        canonical, issues, parent, core, values = VERDICTS.container(bytes(container), kind)
        for name, reasons in issues:
            where = facet_path(path, name)
            self.warnings.extend(f"{where}: {reason}" for reason in reasons)
            self.untrusted.append(where)
        if values is None:
            self.values = None
        elif self.values is not None:
            self.values.extend(values)
        return canonical, parent, core

    def add(self, part: Part) -> None:
        """Note the warnings, untrusted facets and facet values of a part of the event."""
        self.warnings.extend(part[2])
        self.untrusted.extend(part[3])
        if part[4] is None:
            self.values = None
        elif self.values is not None:
            self.values.extend(part[4])

    def dataset(
        self, item: _Input | _Output, path: str, extra_key: str, extra: Facets | UnsetType, kind: FacetKind
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The dataset's canonical form and its core."""
        out: dict[str, Any] = {"namespace": item.namespace, "name": item.name}
        core = dict(out)
        if item.facets is not UNSET:
            out["facets"], _, core["facets"] = self.facets(item.facets, f"{path}.facets", "dataset")
        if extra is not UNSET:
            out[extra_key], _, core[extra_key] = self.facets(extra, f"{path}.{extra_key}", kind)
        return out, core


def _within_limits(entity: _Job | _Input | _Output) -> None:
    """A namespace or name over its limit leaves the lean path: the full one names it."""
    if too_long(entity.namespace, MAX_NAMESPACE_BYTES) or too_long(entity.name, MAX_NAME_BYTES):
        raise _NotLean


def _judge_part(name: PartName, raw: bytes) -> Part:
    """Decode and judge an event's job, inputs or outputs (see `Part`)."""
    judged = _Judged()
    canonical: Any
    core: Any
    identity = None
    if name == "job":
        job = _JOB.decode(raw)
        _within_limits(job)
        canonical = {"namespace": job.namespace, "name": job.name}
        core = dict(canonical)
        if job.facets is not UNSET:
            canonical["facets"], _, core["facets"] = judged.facets(job.facets, "job.facets", "job")
        identity = (job.namespace, job.name)
    else:
        kind: FacetKind = "input" if name == "inputs" else "output"
        extra = f"{kind}Facets"
        items: Sequence[_Input | _Output] = (_INPUTS if name == "inputs" else _OUTPUTS).decode(raw)
        for item in items:
            _within_limits(item)
        pairs = [
            judged.dataset(item, f"{name}[{i}]", extra, getattr(item, extra), kind)
            for i, item in enumerate(items)
        ]
        canonical, core = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
    values = None if judged.values is None else tuple(judged.values)
    try:
        whole = orjson.Fragment(orjson.dumps(canonical, option=orjson.OPT_SORT_KEYS))
        stored = None if values is None else orjson.Fragment(orjson.dumps(core))
    except TypeError:  # a string orjson cannot write (a lone surrogate): the full path decides
        raise _NotLean from None
    return whole, stored, tuple(judged.warnings), tuple(judged.untrusted), values, identity


_PARENTS_MAX = 10_000
_parents: dict[bytes, tuple[str | None, str | None]] = {}


def _parent_ids(raw: bytes) -> tuple[str | None, str | None]:
    """The parent and root run ids a `parent` facet names (the events of a run, and the runs of
    one parent, send the same one)."""
    found = _parents.get(raw)
    if found is None:
        value = orjson.loads(raw)
        if has_lenient_parent(value):  # the full path warns about each such id
            raise _NotLean
        found = parent_ids(value)
        if len(_parents) >= _PARENTS_MAX:
            _parents.clear()
        _parents[raw] = found
    return found


_BATCH = msgspec.json.Decoder(list[_RunEvent])
_SKIPPED = (
    _NotLean,
    msgspec.DecodeError,
    orjson.JSONDecodeError,
    EventTimeError,
    UnicodeDecodeError,
    RecursionError,
)


def decode_one(raw: bytes) -> _RunEvent | None:
    """`raw` decoded for `validate_decoded` (its syntax checked on the way), or None when it is
    not one JSON object of a RunEvent's core fields."""
    try:
        return _DECODER.decode(raw)
    except (msgspec.DecodeError, RecursionError):  # nested deeper than msgspec goes: not lean
        return None


def decode_batch(body: bytes) -> list[_RunEvent] | None:
    """A JSON array's events decoded in one pass, or None unless every one is an object of a
    RunEvent's core fields (then the array is split and each event goes its own way)."""
    try:
        return _BATCH.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return None


def validate_raw(raw: bytes) -> Event | None:
    """The event in `raw` (one JSON object) accepted on the lean path, or None: then only
    `validate_event` can say whether and how it is accepted or rejected."""
    try:
        return _validate(_DECODER.decode(raw), raw)
    except _SKIPPED:
        return None


def validate_decoded(doc: _RunEvent, raw: bytes | None) -> Event | None:
    """`validate_raw` of an event `decode_one` or `decode_batch` decoded. Without its bytes
    (`raw` None: an event of a batch decoded in one pass) the Event has no payload, and an event
    the store must keep whole is left to the caller (None)."""
    try:
        return _validate(doc, raw)
    except _SKIPPED:
        return None


_SCHEMA_URLS_MAX = 1_000
_run_schema_urls: dict[str, bool] = {}  # schemaURL → whether it names a RunEvent (or no kind)


def _names_a_run_event(url: str) -> bool:
    """Whether an event's schemaURL leaves it a RunEvent; producers send one or two URLs, each
    read once."""
    found = _run_schema_urls.get(url)
    if found is None:
        found = kind_of_schema_url(url) in (None, "run")
        if len(_run_schema_urls) >= _SCHEMA_URLS_MAX:
            _run_schema_urls.clear()
        _run_schema_urls[url] = found
    return found


def _validate(doc: _RunEvent, raw: bytes | None) -> Event:
    if doc.schemaURL is not UNSET and not _names_a_run_event(doc.schemaURL):
        raise _NotLean
    if doc.eventType is not UNSET and doc.eventType not in EVENT_TYPES:
        raise _NotLean
    run = doc.run
    if not is_uuid(run.runId):  # the full path warns about it
        raise _NotLean
    ticks = parse_event_time(doc.eventTime)
    judged = _Judged()
    canonical: dict[str, Any] = {"eventTime": doc.eventTime, "producer": doc.producer}
    core = dict(canonical)
    run_id = run.runId.lower()
    parent_run_id = root_run_id = None
    canonical_run: dict[str, Any] = {"runId": run.runId}
    core["run"] = core_run = dict(canonical_run)
    if run.facets is not UNSET:
        canonical_run["facets"], parent, core_run["facets"] = judged.facets(run.facets, "run.facets", "run")
        if parent is not None:
            parent_run_id, root_run_id = _parent_ids(parent)
    canonical["run"] = canonical_run
    job = VERDICTS.part("job", bytes(doc.job))
    canonical["job"], core["job"] = job[0], job[1]
    judged.add(job)
    assert job[5] is not None
    job_namespace, job_name = job[5]
    if doc.inputs is not UNSET:
        inputs = VERDICTS.part("inputs", bytes(doc.inputs))
        canonical["inputs"], core["inputs"] = inputs[0], inputs[1]
        judged.add(inputs)
    if doc.outputs is not UNSET:
        outputs = VERDICTS.part("outputs", bytes(doc.outputs))
        canonical["outputs"], core["outputs"] = outputs[0], outputs[1]
        judged.add(outputs)
    if doc.eventType is not UNSET:
        canonical["eventType"] = core["eventType"] = doc.eventType
    if doc.schemaURL is not UNSET:
        canonical["schemaURL"] = core["schemaURL"] = doc.schemaURL
    if judged.values is None and raw is None:  # kept whole: only with its bytes as sent
        raise _NotLean
    try:
        digest = content_hash(orjson.dumps(canonical, option=orjson.OPT_SORT_KEYS))
        stored_core = orjson.dumps(core) if judged.values is not None else None
    except TypeError:  # a string orjson cannot write (a lone surrogate): the full path decides
        raise _NotLean from None
    return Event(
        kind="run",
        event_id=event_id(ticks, digest),
        event_time=format_ticks(ticks),
        event_type=doc.eventType if doc.eventType is not UNSET else None,
        run_id=run_id,
        parent_run_id=parent_run_id,
        root_run_id=root_run_id or run_id,
        job_namespace=job_namespace,
        job_name=job_name,
        dataset_namespace=None,
        dataset_name=None,
        producer=doc.producer,
        content_hash=digest.hex(),
        payload=None if raw is None else raw.decode(),
        warnings=tuple(judged.warnings),
        untrusted_facets=tuple(dict.fromkeys(judged.untrusted)),
        core=stored_core,
        facet_values=tuple(judged.values) if judged.values is not None else (),
    )


# -- the same path compiled -------------------------------------------------------------------------
# native/lean (Rust, built by scripts/setup.sh into headwater/events/_lean_native*.so) does what
# `_validate` does for a whole array, or one object, and asks the functions above for what it has
# not judged yet: the same Events, without a bytecode per field. Without the build, this module's
# own path does it all.
try:
    from headwater.events import _lean_native  # type: ignore[attr-defined]
except ImportError:  # not built: the Python path
    _lean_native = None


def _native_validator() -> Any:
    if _lean_native is None:
        return None
    validator = _lean_native.Lean(
        VERDICTS.part,
        VERDICTS.container,
        VERDICTS.verdict,
        _parent_ids,
        _names_a_run_event,
        parse_event_time,
        orjson.dumps,
        Event,
        flat_definition,
        INLINE_BYTES,
    )
    VERDICTS.on_clear.append(validator.clear)
    return validator


_NATIVE = _native_validator()
NATIVE = _NATIVE is not None  # whether the compiled path is built (tests, benchmarks)


def validate_array(body: bytes) -> list[Event | None] | None:
    """The events of a JSON array as the compiled path accepts them (None for an event it leaves
    to `decode_one` and `validate_decoded`, then `validate_event`), or None when it takes none
    of them (not built, or the array is not one of RunEvents' cores)."""
    if _NATIVE is None:
        return None
    found: list[Event | None] | None = _NATIVE.validate_array(body)
    return found


def validate_object(raw: bytes) -> Event | None:
    """The event of one JSON object as the compiled path accepts it, without a payload (the store
    keeps its core and facet values; `raw` is the caller's); None when it leaves it to this
    module's path (or is not built)."""
    if _NATIVE is None:
        return None
    found: Event | None = _NATIVE.validate_one(raw)
    return found
