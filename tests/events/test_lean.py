"""The lean path (`validate_raw`) against the full one (`validate_event`): whenever the lean path
accepts an event, it must give exactly the Event the full path gives (eventId, identities,
warnings, untrusted facets, payload); it must never accept what the full path rejects; and it
must take the common events, or it would be no faster."""

from __future__ import annotations

import copy
import json
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from bench._common import EventFactory  # the benchmarks' realistic events
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headwater.errors import InvalidEvent
from headwater.events.lean import (
    NATIVE,
    VERDICTS,
    FacetVerdicts,
    decode_batch,
    validate_array,
    validate_decoded,
    validate_object,
    validate_raw,
)
from headwater.events.model import Event
from headwater.events.validate import validate_event
from tests.events.oracle import HAVE_SPEC, NO_SPEC
from tests.events.test_conformance import _example_params, container_at, host_event, mutant
from tests.factories import facet, run_event

needs_spec = pytest.mark.skipif(not HAVE_SPEC, reason=NO_SPEC)


def full(raw: bytes) -> Event | list[str]:
    """What the full path makes of `raw`: the Event, or the errors."""
    try:
        return validate_event(orjson.loads(raw), raw)
    except InvalidEvent as exc:
        return exc.errors


def assert_agree(raw: bytes) -> Event | None:
    lean = validate_raw(raw)
    expected = full(raw)
    assert_native_agrees(raw, lean)
    if lean is not None:
        assert isinstance(expected, Event), f"lean accepted what the full path rejects: {expected}"
        # the cores (what the store keeps) are equal as JSON; their keys come in another order
        assert replace(lean, core=None) == replace(expected, core=None)
        assert (lean.core is None) == (expected.core is None)
        if lean.core is not None and expected.core is not None:
            assert orjson.loads(lean.core) == orjson.loads(expected.core)
    return lean


def assert_native_agrees(raw: bytes, lean: Event | None) -> None:
    """The compiled path (native/lean) gives exactly what this module's path gives, for the object
    alone and as the one event of an array, whenever it takes the event."""
    if not NATIVE:
        return
    alone = validate_object(raw)
    if alone is not None:  # without a payload: the store keeps the core and the facet values
        assert lean is not None and alone == replace(lean, payload=None)
    array = b"[" + raw + b"]"
    taken = validate_array(array)
    if taken is not None and taken[0] is not None:
        decoded = decode_batch(array)
        assert decoded is not None, "the compiled path took an array the decoder refuses"
        assert taken[0] == validate_decoded(decoded[0], None)


@pytest.fixture(autouse=True)
def fresh_verdicts() -> None:
    VERDICTS.clear()


def test_realistic_events_take_the_lean_path_and_agree() -> None:
    factory = EventFactory(seed=3, jobs=20)
    for doc in factory.stream(300, seed=5):
        assert assert_agree(orjson.dumps(doc)) is not None


def test_a_batch_decoded_in_one_pass_gives_the_same_events_without_payloads() -> None:
    docs = list(EventFactory(seed=4, jobs=20).stream(200, seed=6))
    decoded = decode_batch(orjson.dumps(docs))
    assert decoded is not None and len(decoded) == len(docs)
    for doc, one in zip(docs, decoded, strict=True):
        alone = validate_raw(orjson.dumps(doc))
        assert alone is not None
        assert validate_decoded(one, None) == replace(alone, payload=None)
    assert decode_batch(orjson.dumps([*docs[:3], {**docs[3], "extra": 1}])) is None


def test_every_run_event_of_the_factories_takes_the_lean_path() -> None:
    parent, root = str(uuid.uuid4()), str(uuid.uuid4())
    for event in (
        run_event(),
        run_event(parent=parent),
        run_event(event_time="2024-05-01T12:00:00.123456789+02:00"),
        run_event(parent=parent, root=root, event_type="COMPLETE"),
    ):
        found = assert_agree(orjson.dumps(event))
        assert found is not None
    assert found.parent_run_id == parent and found.root_run_id == root


def test_the_payload_is_the_bytes_as_sent() -> None:
    raw = json.dumps(run_event(), indent=2).encode()  # whitespace and key order kept
    event = assert_agree(raw)
    assert event is not None and event.payload == raw.decode()


def test_key_order_and_spacing_do_not_change_the_event_id() -> None:
    doc = run_event()
    compact = orjson.dumps(doc)
    shuffled = json.dumps(dict(reversed(list(doc.items()))), indent=1).encode()
    first, second = validate_raw(compact), validate_raw(shuffled)
    assert first is not None and second is not None
    assert first.event_id == second.event_id and first.content_hash == second.content_hash


def test_facet_warnings_are_the_same_from_the_cache_as_without_it() -> None:
    event = run_event(run_facets={"nominalTime": facet("NominalTimeRunFacet", "1-0-1", nominalStartTime=3)})
    event["job"]["facets"] = {
        "sql": facet("SQLJobFacet", "1-1-0", query=1),
        "ownership": {"_producer": "p", "_schemaURL": "u", "_deleted": "yes"},
        "broken": "not an object",
        "odd name": {"_schemaURL": "u"},
    }
    event["inputs"][0]["facets"] = {"schema": facet("SchemaDatasetFacet", "1-1-1", fields="oops")}
    event["inputs"][0]["inputFacets"] = {"x": {"_producer": 1, "_schemaURL": "u", "_deleted": "no"}}
    raw = orjson.dumps(event)
    first = assert_agree(raw)
    second = assert_agree(raw)  # judged again: a value is kept from its second sighting on
    checks = VERDICTS.checks
    third = assert_agree(raw)  # every verdict from the cache now
    assert VERDICTS.checks == checks
    assert first is not None and first == second == third
    assert len(first.warnings) >= 6
    assert 'job.facets["odd name"]' in first.untrusted_facets
    # `_deleted` is checked on job and dataset facets only: the same bytes in inputFacets pass it.
    assert not any("_deleted" in w for w in first.warnings if w.startswith("inputs[0].inputFacets"))
    assert any("_deleted" in w for w in first.warnings if w.startswith("job.facets.ownership"))


def test_facets_seen_twice_are_not_checked_again() -> None:
    factory = EventFactory(seed=4, jobs=5)
    docs = list(factory.stream(50, seed=6))
    for doc in docs:
        validate_raw(orjson.dumps(doc))
    first = VERDICTS.checks
    for doc in docs:
        validate_raw(orjson.dumps(doc))
    second = VERDICTS.checks - first
    for doc in docs:
        validate_raw(orjson.dumps(doc))
    assert VERDICTS.checks - first == second  # kept from the second sighting on
    assert second < first  # what repeated within the first pass was kept already


def test_a_small_cache_forgets_but_keeps_judging_the_same() -> None:
    small = FacetVerdicts(max_bytes=4_000)
    hot = orjson.dumps(facet("SQLJobFacet", "1-1-0", query=1))
    for i in range(200):
        cold = orjson.dumps(facet("SQLJobFacet", "1-1-0", query=f"select {i}"))
        for raw in (hot, cold):
            canonical, reasons, ref = small.verdict(raw, "job")
            expected_canonical, expected_reasons, expected_ref = FacetVerdicts().verdict(raw, "job")
            assert (orjson.dumps(canonical), reasons, ref) == (
                orjson.dumps(expected_canonical),
                expected_reasons,
                expected_ref,
            )
    assert small.checks < 200 + 20  # the hot facet stayed (moved back from the old generation)
    assert sum(len(key[2]) for generation in (small._young, small._old) for key in generation) < 4_000


@pytest.mark.parametrize(
    "change",
    [
        lambda e: e["run"].update(runId="not-a-uuid"),  # kept with a warning: the full path's
        lambda e: e["run"].update(runId=str(uuid.uuid4()).upper()),
        lambda e: e["run"]["facets"].update(
            parent=facet(
                "ParentRunFacet", "1-1-0", run={"runId": "dag_1"}, job={"namespace": "a", "name": "b"}
            )
        ),
        lambda e: e.update(extra={"a": 1}),
        lambda e: e.update(schemaURL="https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"),
        lambda e: e.update(eventType="DONE"),
        lambda e: e.update(eventTime="2024-02-30T00:00:00Z"),
        lambda e: e.pop("eventType"),
        lambda e: e.pop("schemaURL"),
        lambda e: e.update(inputs=[]),
        lambda e: e["inputs"][0].update(outputFacets={"x": 1}),  # not the inputs' container: ignored
        lambda e: e["job"].update(facets={"big": {"_producer": "p", "_schemaURL": "u", "n": 2**70}}),
        lambda e: e["job"].pop("facets"),
        lambda e: e.update(run=None),
        lambda e: e["job"].update(name="é" * 300),  # exactly 600 bytes: the limit
        lambda e: e["job"].update(name="é" * 300 + "x"),  # over it: the full path refuses
        lambda e: e["inputs"][0].update(namespace="n" * 257),
        lambda e: e["outputs"][0].update(name="o" * 601),
        lambda e: e["run"]["facets"]["parent"]["run"].update(runId="p" * 257),
        lambda e: e["run"]["facets"]["parent"]["job"].update(name="p" * 601),
        lambda e: e["job"]["facets"].update({"f" * 601: {"_producer": "p", "_schemaURL": "u"}}),
        lambda e: e["outputs"][0]["facets"]["schema"]["fields"][0].update(name="c" * 1501),
    ],
)
def test_unusual_events_agree(change: Any) -> None:
    event = run_event(parent=str(uuid.uuid4()))
    change(event)
    try:
        raw = orjson.dumps(event)
    except TypeError:  # beyond 64 bits
        raw = json.dumps(event).encode()
    assert_agree(raw)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_KEYS = [
    "eventTime",
    "eventType",
    "producer",
    "schemaURL",
    "run",
    "job",
    "inputs",
    "outputs",
    "runId",
    "facets",
    "namespace",
    "name",
    "inputFacets",
    "outputFacets",
    "parent",
    "_producer",
    "_schemaURL",
    "_deleted",
    "root",
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, (*prefix, i))
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_events_agree(data: st.DataObject) -> None:
    event = run_event(parent=str(uuid.uuid4()), root=str(uuid.uuid4()))
    event["job"]["facets"] = {"sql": facet("SQLJobFacet", "1-1-0", query="select 1")}
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(event)))
        holder: Any = event
        for key in path[:-1]:
            holder = holder[key]
        action = data.draw(st.sampled_from(["replace", "delete", "add"]))
        if not path:
            continue
        if action == "replace":
            holder[path[-1]] = data.draw(_JSON)
        elif action == "delete":
            del holder[path[-1]]
        elif isinstance(holder[path[-1]], dict):
            holder[path[-1]][data.draw(st.sampled_from(_KEYS))] = data.draw(_JSON)
    raw = orjson.dumps(copy.deepcopy(event))
    assert_agree(raw)


def _raw(doc: Any) -> bytes:
    try:
        return orjson.dumps(doc)
    except TypeError:  # integers beyond 64 bits
        return json.dumps(doc).encode()


@needs_spec
@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.randoms(use_true_random=False))
def test_the_conformance_mutants_agree(rng: Any) -> None:
    _, doc = mutant(rng)
    assert_agree(_raw(doc))


@pytest.mark.parametrize(("path", "name", "place"), _example_params())
def test_the_spec_facet_examples_agree(path: Path, name: str, place: tuple[str, str, str]) -> None:
    _, host, where = place
    doc = host_event(host)
    container_at(doc, where)[name] = json.loads(path.read_text("utf-8"))[name]
    found = assert_agree(_raw(doc))
    assert (found is not None) == (host != "dataset")  # the lean path takes RunEvents only


def test_a_container_seen_before_warns_at_its_own_path() -> None:
    broken = {"schema": facet("SchemaDatasetFacet", "1-1-1", fields="oops"), "odd name": 1}
    event = run_event(inputs=[{"namespace": "a", "name": f"t{i}", "facets": dict(broken)} for i in range(3)])
    found = assert_agree(orjson.dumps(event))
    assert found is not None
    assert found.untrusted_facets == tuple(
        f"inputs[{i}].facets{suffix}" for i in range(3) for suffix in (".schema", '["odd name"]')
    )
