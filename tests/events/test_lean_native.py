"""The lean path compiled (native/lean, built by scripts/setup.sh): it takes the common RunEvents,
alone and in arrays, and gives exactly the Events lean.py's own path gives (tests/events/
test_lean.py runs every one of its cases through both, `assert_native_agrees`); what it cannot
vouch for it leaves to that path."""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import replace
from typing import Any

import orjson
import pytest
from bench._common import EventFactory  # the benchmarks' realistic events

from headwater.errors import InvalidEvent
from headwater.events.lean import (
    NATIVE,
    VERDICTS,
    decode_batch,
    validate_array,
    validate_decoded,
    validate_object,
    validate_raw,
)
from headwater.events.model import Event
from headwater.events.validate import validate_event
from tests.factories import facet, run_event


def test_the_compiled_path_is_built() -> None:
    assert NATIVE, "scripts/setup.sh builds native/lean into headwater/events/: see its output"


@pytest.fixture(autouse=True)
def fresh_verdicts() -> None:
    VERDICTS.clear()


def python_array(body: bytes) -> list[Event | None]:
    decoded = decode_batch(body)
    assert decoded is not None
    return [validate_decoded(one, None) for one in decoded]


def kept(event: Event | None) -> Event | None:
    """`event` as the compiled path gives it: an event the store keeps as its core and facet
    values carries no payload (the bytes as sent are the caller's)."""
    if event is None or event.core is None:
        return event
    return replace(event, payload=None)


def taken_alone(doc: Any) -> Event:
    raw = orjson.dumps(doc)
    found = validate_object(raw)
    assert found is not None, "the compiled path left a common event"
    assert found == kept(validate_raw(raw))
    return found


def test_realistic_arrays_are_taken_whole_and_agree() -> None:
    docs = list(EventFactory(seed=7, jobs=30).stream(600, seed=2))
    for start in range(0, len(docs), 200):  # later arrays meet verdicts kept from earlier ones
        body = orjson.dumps(docs[start : start + 200])
        taken = validate_array(body)
        assert taken is not None and all(event is not None for event in taken)
        assert taken == python_array(body)


def test_the_factories_run_events_are_taken_alone() -> None:
    parent, root = str(uuid.uuid4()), str(uuid.uuid4())
    found = [
        taken_alone(event)
        for event in (
            run_event(),
            run_event(parent=parent, root=root, event_type="COMPLETE"),
            run_event(event_time="2024-05-01T12:00:00.123456789+02:00"),  # read by times.py
            run_event(event_time="2024-05-01T23:59:60Z"),  # a leap second: the next minute's first
            run_event(event_time="1970-01-01T00:00:00.5Z"),
            run_event(event_time="1601-03-01T00:00:00Z"),  # before the epoch
        )
    ]
    assert (found[1].parent_run_id, found[1].root_run_id) == (parent, root)
    assert found[3].event_time == "2024-05-02T00:00:00.0000000Z"
    assert found[5].event_time == "1601-03-01T00:00:00.0000000Z"


def test_strings_and_names_are_written_as_orjson_writes_them() -> None:
    odd = 'quote " backslash \\ tab \t newline \n nul \x00 bell \x07 esc \x1b vt \x0b del \x7f é 漢 🙂 \u2028'
    event = run_event(namespace="ns " + odd, job="job " + odd)
    event["producer"] = "https://example.com/" + odd
    event["job"]["facets"] = {
        "Zeta": {"_producer": "p", "_schemaURL": "u", "v": odd},
        "alpha": {"_producer": "p", "_schemaURL": "u"},
        "énorme": {"_producer": "p", "_schemaURL": "u"},
        'a"b': {"_producer": "p", "_schemaURL": "u"},
    }
    event["inputs"][0]["name"] = odd
    for doc in (event, json.loads(json.dumps(event, ensure_ascii=True))):  # escaped in the input too
        found = taken_alone(doc)
        body = orjson.dumps([doc, doc])
        assert validate_array(body) == python_array(body)
    assert found.job_name == "job " + odd


def test_what_it_cannot_vouch_for_is_left_to_lean_py() -> None:
    event = run_event()
    event["job"]["facets"] = {"sql": facet("SQLJobFacet", "1-1-0", query=1)}  # a warning
    raw = orjson.dumps(event)
    assert validate_object(raw) is None
    python = validate_raw(raw)
    assert python is not None and python.warnings
    taken = validate_array(b"[" + raw + b"," + orjson.dumps(run_event()) + b"]")
    assert taken is not None and taken[0] is None and taken[1] is not None
    # duplicate facet names: lean.py's decoder keeps the last, and judges it there
    duplicated = orjson.dumps(run_event()).replace(
        b'"job":{',
        b'"job":{"facets":{"sql":{"_producer":"p","_schemaURL":"u","query":"a"},'
        b'"sql":{"_producer":"p","_schemaURL":"u","query":"b"}},',
        1,
    )
    assert validate_object(duplicated) in (None, kept(validate_raw(duplicated)))
    assert validate_array(b"[1]") is None and validate_object(b'{"eventTime": null}') is None


def test_clearing_the_verdicts_clears_the_compiled_ones() -> None:
    docs = list(EventFactory(seed=8, jobs=3).stream(30, seed=1))
    body = orjson.dumps(docs)
    for _ in range(3):  # kept from the second sighting on
        validate_array(body)
    checks = VERDICTS.checks
    validate_array(body)
    assert VERDICTS.checks == checks  # answered from its own verdicts
    VERDICTS.clear()
    validate_array(body)
    assert VERDICTS.checks > checks  # asked lean.py's path again


def python_event(raw: bytes) -> Event | None:
    """What lean.py's own path makes of one object (`kept`): None when it is not JSON or not an
    event."""
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    try:
        return kept(validate_raw(raw) or validate_event(orjson.loads(raw), raw))
    except InvalidEvent:
        return None


def test_the_envelope_is_read_strictly_and_its_strings_decoded() -> None:
    raw = orjson.dumps(run_event(namespace="ns", job="j"))
    spaced = raw.replace(b'":', b'" :\t').replace(b',"', b' ,\r\n"')
    escaped = raw.replace(b'"producer":"', b'"producer":"\\u00e9\\"\\\\\\/\\n\\t', 1)
    for accepted in (b" \n" + spaced + b"\r\n", escaped):
        found = validate_object(accepted)
        assert found is not None and found == kept(validate_raw(accepted))
    assert found.producer.startswith('é"\\/\n\t')
    for refused in (
        raw + b"x",  # something after the object
        raw.replace(b"{", b"\x0c{", 1),  # whitespace JSON does not allow
        raw[:-1] + b",}",  # a trailing comma
        raw.replace(b'"producer":"', b'"producer":"\x01', 1),  # a control character in a string
        raw.replace(b'"producer":"', b'"producer":"\\ud83d', 1),  # a lone surrogate, escaped
        raw.replace(b'"producer":"', b'"producer":"\\x', 1),  # no such escape
        raw.replace(b'"producer":"', b'"producer":"\xff', 1),  # not UTF-8
        raw.replace(b'"producer"', b'"\\u0070roducer"', 1),  # an escaped key: lean.py's to read
        raw[:-1] + b',"producer":"again"}',  # a field twice
        raw.replace(b'"eventType":"START"', b'"eventType":null', 1),
    ):
        assert validate_object(refused) is None, refused
        assert validate_array(b"[" + refused + b"]") is None, refused


def test_bytes_that_are_not_utf8_anywhere_leave_the_event_to_python() -> None:
    """No check of the whole object: the envelope's reader checks its strings and each kept value
    is read whole when first judged. Broken UTF-8 in any of them, in a value seen before intact,
    is never taken, alone or in an array."""
    raw = orjson.dumps(next(iter(EventFactory(seed=12, jobs=5).stream(1, seed=4))))
    assert validate_object(raw) is not None and validate_object(raw) is not None  # judged, kept
    places = [b'"START', b'"spark', b"dag_ingest", b"INSERT INTO", b"etl_0001", b"quantity"]
    places += [b'"namespace":"', b"/integration/spark", b'"runId":"', b'"nominalStartTime":"2']
    for place in places:  # inside a string of the envelope, of a flat facet, of another facet
        at = raw.index(place) + len(place)
        for broken in (b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\xe2\x82", b"\xc0\xaf"):
            mutant = raw[:at] + broken + raw[at:]
            assert python_event(mutant) is None, (place, broken)
            assert validate_object(mutant) is None, (place, broken)
            taken = validate_array(b"[" + raw + b"," + mutant + b"]")
            assert taken is None or taken[1] is None, (place, broken)


def test_byte_mutants_are_taken_only_as_lean_py_takes_them() -> None:
    """Kept values (the job, the inputs, the outputs, the run's facets) are only delimited by the
    envelope's reader: whatever bytes a mutant breaks, an event it takes is JSON and the one
    lean.py's path gives."""
    rng = random.Random(11)
    docs = list(EventFactory(seed=12, jobs=5).stream(40, seed=4))
    significant = b'{}[]",:\\ \t0e-.tnu\x00\x1f\x7f\xc3\xa9'
    taken = 0
    for round_ in range(1500):
        raw = bytearray(orjson.dumps(docs[round_ % len(docs)]))
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(raw))
            what = rng.randrange(3)
            if what == 0:
                del raw[at]
            elif what == 1:
                raw.insert(at, rng.choice(significant))
            else:
                raw[at] = rng.choice(significant)
        mutant = bytes(raw)
        found = validate_object(mutant)
        in_array = validate_array(b"[" + mutant + b"]")
        if found is None:
            if in_array is not None and in_array[0] is not None:
                assert in_array[0] == python_array(b"[" + mutant + b"]")[0]
            continue
        taken += 1
        assert found == python_event(mutant), mutant
        assert in_array is not None and in_array[0] is not None
    assert taken > 100  # a mutant inside a string is still an event


NOMINAL = b'{"_producer":"p","_schemaURL":"https://openlineage.io/spec/facets/1-0-1/NominalTimeRunFacet.json#/$defs/NominalTimeRunFacet",'
STATISTICS = (
    b'{"_producer":"p","_schemaURL":"https://openlineage.io/spec/facets/1-0-2/'
    b'OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet",'
)
JOB_TYPE = b'{"_producer":"p","_schemaURL":"https://openlineage.io/spec/facets/2-0-3/JobTypeJobFacet.json#/$defs/JobTypeJobFacet",'


def with_flat_facets(nominal: bytes, statistics: bytes, job_type: bytes) -> bytes:
    """An event whose run carries `nominal`, whose output carries `statistics` and whose job
    carries `job_type`, each the bytes of a facet value as written."""
    event = run_event(outputs=[{"namespace": "ns", "name": "out"}])
    event["run"]["facets"] = {"nominalTime": "NOMINAL"}
    event["outputs"][0]["outputFacets"] = {"outputStatistics": "STATISTICS"}
    event["job"]["facets"] = {"jobType": "JOB_TYPE"}
    raw = orjson.dumps(event)
    for name, value in ((b"NOMINAL", nominal), (b"STATISTICS", statistics), (b"JOB_TYPE", job_type)):
        raw = raw.replace(b'"' + name + b'"', value, 1)
    return raw


def test_facet_values_of_flat_definitions_are_judged_without_python_and_agree() -> None:
    """A run's nominalTime, an output's statistics, a job's type: facets of flat published
    definitions that events carry anew, judged by the compiled path itself (flat.rs) without
    asking lean.py; whatever it takes must be the Event lean.py's path gives, and what it does
    not vouch for is left to that path, which decides."""
    good_nominal = NOMINAL + b'"nominalStartTime":"2024-05-01T10:00:00.000Z"}'
    good_statistics = STATISTICS + b'"rowCount":12,"size":3400}'
    good_job_type = JOB_TYPE + b'"integration":"SPARK","jobType":"SQL_JOB","processingType":"BATCH"}'
    for n in range(3):
        nominal = NOMINAL + b'"nominalStartTime":"2024-05-01T10:00:0%d.000Z"}' % n
        raw = with_flat_facets(nominal, good_statistics, good_job_type)
        checks = VERDICTS.checks
        taken = validate_object(raw)
        assert VERDICTS.checks == checks, "the compiled path asked lean.py to judge a flat facet"
        assert taken is not None and taken == kept(validate_raw(raw))

    times = [
        b"2024-05-01T10:00:00Z",
        b"2024-05-01t10:00:00z",
        b"2024-05-01T10:00:00.123456789+05:30",
        b"2024-02-29T00:00:00Z",
        b"2023-02-29T00:00:00Z",
        b"2000-02-29T23:59:59-23:59",
        b"1900-02-29T00:00:00Z",
        b"0000-01-01T00:00:00Z",
        b"2024-13-01T00:00:00Z",
        b"2024-04-31T00:00:00Z",
        b"2024-05-01T24:00:00Z",
        b"2024-05-01T23:60:00Z",
        b"2024-05-01T23:59:60Z",
        b"2024-05-01T10:00:00.Z",
        b"2024-05-01T10:00:00+0530",
        b"2024-05-01T10:00:00+24:00",
        b"2024-05-01 10:00:00Z",
        b"2024-05-01T10:00:00",
        b"\xd9\xa2024-05-01T10:00:00Z",
        b"2024-05-01T10:00:00Z\\n",
        b"2024-05-01T10:00:00\\u005a",
    ]
    nominals = [NOMINAL + b'"nominalStartTime":"' + t + b'"}' for t in times] + [
        NOMINAL + b'"nominalEndTime":"2024-05-01T11:00:00Z","nominalStartTime":"2024-05-01T10:00:00Z"}',
        NOMINAL + b'"nominalEndTime":"2024-05-01T11:00:00Z"}',  # the required start missing
        NOMINAL + b'"nominalStartTime":"2024-05-01T10:00:00Z","nominalStartTime":"2024-05-01T10:00:00Z"}',
        NOMINAL + b'"nominalStartTime":"2024-05-01T10:00:00Z","other":1}',
        NOMINAL + b'"nominalStartTime":null}',
        NOMINAL + b'"nominalStartTime": "2024-05-01T10:00:00Z" }',
        NOMINAL.replace(b'"p"', b'"' + "é🙂".encode() * 200 + b'"')
        + b'"nominalStartTime":"2024-05-01T10:00:00Z"}',
        NOMINAL.replace(b"1-0-1", b"1-0-0") + b'"nominalStartTime":"2024-05-01T10:00:00Z"}',
        NOMINAL.replace(b'"p"', b'"p\x01"') + b'"nominalStartTime":"2024-05-01T10:00:00Z"}',
        NOMINAL.replace(b'"p"', b'"p\xff"') + b'"nominalStartTime":"2024-05-01T10:00:00Z"}',
        NOMINAL.replace(b'"p"', b"3") + b'"nominalStartTime":"2024-05-01T10:00:00Z"}',
    ]
    counts = [
        b"0",
        b"-0",
        b"12",
        b"-7",
        b"9223372036854775807",
        b"9223372036854775808",
        b"-9223372036854775808",
        b"-9223372036854775809",
        b"1.0",
        b"1e3",
        b"01",
        b"-",
        b"true",
        b'"12"',
        b"null",
        b"123456789012345678901",
    ]
    statistics = [STATISTICS + b'"rowCount":' + c + b',"size":1}' for c in counts] + [
        STATISTICS[:-1] + b"}",
        STATISTICS + b'"fileCount":2,"rowCount":1,"size":1}',
        STATISTICS + b'"rowCount":1,}',
    ]
    job_types = [
        good_job_type,
        JOB_TYPE + b'"integration":"SPARK","processingType":"BATCH"}',  # jobType is optional
        JOB_TYPE + b'"integration":"SPARK","jobType":1,"processingType":"BATCH"}',
        JOB_TYPE.replace(b'"p"', b'"' + b"x" * 600 + b'"') + b'"integration":"S","processingType":"B"}',
    ]
    cases = [(n, good_statistics, good_job_type) for n in nominals]
    cases += [(good_nominal, s, good_job_type) for s in statistics]
    cases += [(good_nominal, good_statistics, j) for j in job_types]
    taken_by_native = 0
    for case in cases:
        raw = with_flat_facets(*case)
        python = python_event(raw)
        for _ in range(2):  # judged, then kept
            found = validate_object(raw)
            assert found is None or found == python, case
        body = b"[" + raw + b"," + raw + b"]"
        taken = validate_array(body)
        if taken is not None and any(taken):  # an array's events carry no payload of their own
            assert all(
                one is None or one == two for one, two in zip(taken, python_array(body), strict=True)
            ), case
        taken_by_native += found is not None
    assert taken_by_native >= 20  # the valid ones
