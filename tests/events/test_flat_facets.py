"""Facets of flat published schemas judged by compiled structs (`headwater.events.flat_facets`)
against the general checks: whenever a struct vouches for a facet, the facet has no reasons and its
canonical bytes are orjson's; whatever the struct cannot vouch for is left to the general checks."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headwater.events.facets import facet_reasons, schema_bundle
from headwater.events.flat_facets import FLAT, FlatFacets, _compile
from headwater.events.lean import VERDICTS
from tests.events.test_lean import assert_agree
from tests.factories import facet, run_event

_BASE = "https://openlineage.io/spec/facets/"
NOMINAL = f"{_BASE}1-0-1/NominalTimeRunFacet.json#/$defs/NominalTimeRunFacet"
STATISTICS = f"{_BASE}1-0-2/OutputStatisticsOutputDatasetFacet.json#/$defs/OutputStatisticsOutputDatasetFacet"
ENGINE = f"{_BASE}1-1-1/ProcessingEngineRunFacet.json#/$defs/ProcessingEngineRunFacet"
PARENT = f"{_BASE}1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet"
SCHEMA = f"{_BASE}1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet"


def agree(raw: bytes, kind: Any = "run") -> bytes | None:
    """The struct's canonical bytes, after checking them against the general checks."""
    canonical = FlatFacets().canonical(raw)
    if canonical is not None:
        value = orjson.loads(raw)
        assert facet_reasons(value, kind, remember=False) == []
        assert canonical == orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return canonical


def test_the_facets_events_carry_anew_are_flat() -> None:
    for url in (NOMINAL, STATISTICS, ENGINE, f"{_BASE}1-0-0/NominalTimeRunFacet.json"):
        assert _compile(url) is not None, url


def test_nested_schemas_and_unknown_urls_are_not() -> None:
    for url in (PARENT, SCHEMA, "https://example.com/MyFacet.json", f"{_BASE}9-9-9/Nope.json"):
        assert _compile(url) is None, url


def test_every_flat_definition_of_the_bundle_compiles_to_a_struct_of_its_properties() -> None:
    flat = 0
    for url, entry in schema_bundle().items():
        for name in entry.get("$defs", {}):
            if _compile(f"{url}#/$defs/{name}") is not None:
                flat += 1
    assert flat >= 10


def test_a_valid_facet_gets_its_canonical_bytes_without_reasons() -> None:
    raw = b'{ "nominalStartTime": "2024-01-01T00:00:00.000Z", "_schemaURL": "%s", "_producer": "p" }'
    assert agree(raw % NOMINAL.encode()) is not None
    stats = {"_producer": "p", "_schemaURL": STATISTICS, "size": 10, "rowCount": 3, "fileCount": 1}
    assert agree(orjson.dumps(stats), "output") is not None


@pytest.mark.parametrize(
    "change",
    [
        {"nominalStartTime": "2024-02-30T00:00:00Z"},  # no such day: a reason to write
        {"nominalStartTime": 5},
        {"nominalEndTime": "yesterday"},
        {"extra": 1},  # allowed by the base, but not the struct's to vouch for
        {"_producer": None},
        {"_deleted": True},
    ],
)
def test_what_the_struct_cannot_vouch_for_is_left_to_the_general_checks(change: dict[str, Any]) -> None:
    facet = {"_producer": "p", "_schemaURL": NOMINAL, "nominalStartTime": "2024-01-01T00:00:00Z", **change}
    assert FlatFacets().canonical(orjson.dumps(facet)) is None


def test_a_facet_with_an_escape_is_left_to_the_general_checks() -> None:
    raw = b'{"_producer": "p", "_schemaURL": "%s", "nominalStartTime": "2024-01-01T00:00:00\\u005a"}'
    assert json.loads(raw % NOMINAL.encode())["nominalStartTime"].endswith("Z")
    assert FlatFacets().canonical(raw % NOMINAL.encode()) is None


def test_bytes_orjson_reads_otherwise_are_left_too() -> None:
    stats = b'{"_producer": "p", "_schemaURL": "%s", "rowCount": %s}'
    for count in (b"18446744073709551616", b"18446744073709551615", b"-9223372036854775809", b"1e2"):
        assert FlatFacets().canonical(stats % (STATISTICS.encode(), count)) is None
    assert FlatFacets().canonical(stats % (STATISTICS.encode(), b"9223372036854775807")) is not None
    nominal = b'{"_producer": "p\xff", "_schemaURL": "%s", "nominalStartTime": "2024-01-01T00:00:00Z"}'
    assert FlatFacets().canonical(nominal % NOMINAL.encode()) is None  # not UTF-8
    twice = b'{"_producer": "p", "_producer": "q", "_schemaURL": "%s", "nominalStartTime": "2024-01-01Z"}'
    assert agree(twice % NOMINAL.encode()) is None  # not a date-time
    twice = twice.replace(b"01-01Z", b"01-01T00:00:00Z") % NOMINAL.encode()
    assert agree(twice) == orjson.dumps(orjson.loads(twice), option=orjson.OPT_SORT_KEYS)


def test_integral_floats_and_missing_required_fields_are_left_too() -> None:
    for value in (
        {"_producer": "p", "_schemaURL": STATISTICS, "rowCount": 1.0},
        {"_schemaURL": NOMINAL},
        {"_producer": "p", "_schemaURL": NOMINAL},
    ):
        assert FlatFacets().canonical(orjson.dumps(value)) is None
    assert FlatFacets().canonical(b"[1]") is None
    assert FlatFacets().canonical(b'{"_schemaURL": 3}') is None


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),  # orjson reads those beyond 64 bits as floats
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.sampled_from(
        ["2024-01-01T00:00:00Z", "2024-02-29T23:59:59.5+01:00", "2023-02-29T00:00:00Z", "é😀", "\u2028\x7f"]
    ),
    st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1]),
)
_FIELDS = st.sampled_from(
    ["_producer", "_schemaURL", "nominalStartTime", "nominalEndTime", "rowCount", "size", "fileCount", "name"]
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([NOMINAL, STATISTICS, ENGINE]),
    st.dictionaries(_FIELDS, _VALUES, max_size=5),
    st.booleans(),
)
def test_generated_facets_agree(url: str, fields: dict[str, Any], producer: bool) -> None:
    facet: dict[str, Any] = {"_producer": "p"} if producer else {}
    facet.update(fields)
    facet.setdefault("_schemaURL", url)
    agree(json.dumps(facet, ensure_ascii=False).encode())  # orjson writes no integer beyond 64 bits


def test_the_lean_path_counts_a_facet_it_judged_by_its_struct() -> None:
    VERDICTS.clear()
    before = VERDICTS.checks
    raw = orjson.dumps({"_producer": "p", "_schemaURL": NOMINAL, "nominalStartTime": "2024-01-01T00:00:00Z"})
    canonical, reasons, stored = VERDICTS.verdict(raw, "run")
    assert reasons == () and stored is not None and orjson.dumps(canonical) == stored[1]
    assert VERDICTS.checks == before + 1
    assert FLAT.canonical(raw) == stored[1]


@pytest.mark.parametrize("count", [3, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**70, 1.0])
@pytest.mark.parametrize("start", ["2024-05-01T10:00:00Z", "2024-02-30T10:00:00Z", "soon"])
def test_events_with_such_facets_agree_with_the_full_path(count: Any, start: str) -> None:
    VERDICTS.clear()
    statistics = facet("OutputStatisticsOutputDatasetFacet", "1-0-2", rowCount=count, size=1)
    output = {"namespace": "s3://b", "name": "out", "outputFacets": {"outputStatistics": statistics}}
    event = run_event(
        event_type="COMPLETE",
        outputs=[output],
        run_facets={"nominalTime": facet("NominalTimeRunFacet", "1-0-1", nominalStartTime=start)},
    )
    raw = json.dumps(event).encode()
    assert_agree(raw)
    assert_agree(raw)  # from the cache
