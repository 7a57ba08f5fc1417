"""The compactor compiled (native/lean's compact.rs, built by scripts/setup.sh): every stored core
gives the same compact core, the same values and hashes, and marks the same values given, as
Python's `Compactor._core`; what it leaves to Python (a float in a facet kept inline, say) is
Python's, with the same result."""

from __future__ import annotations

import base64
import json
from typing import Any

import orjson
from bench._common import EventFactory  # the benchmarks' realistic events
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from headwater.events.facet_refs import facet_hash
from headwater.events.validate import validate_event
from headwater.pipeline.compact import Compactor, compact_core
from headwater.store.packing import pack_core, stored_json


def _both(payloads: list[bytes | str]) -> list[tuple[Any, ...]]:
    """Each payload through a compiled and a Python compactor (each keeping its state across
    them): (compact core as JSON, values to fetch, inline values, the hashes given so far)."""
    compiled, python = Compactor(lambda _h: {}), Compactor(lambda _h: {}, compiled=False)
    assert compiled.compiled is not None and python.compiled is None
    results = []
    for payload in payloads:
        pair = []
        for compactor in (compiled, python):
            wanted: dict[str, str] = {}
            values: dict[str, str] = {}
            core = compactor._core(payload, wanted, values)
            pair.append((json.loads(core), wanted, values, set(compactor.sent)))
        results.append(tuple(pair))
    return results


def test_the_compiled_compactor_is_built() -> None:
    assert compact_core is not None, "scripts/setup.sh builds native/lean into headwater/events/"


def test_realistic_cores_compact_alike() -> None:
    docs = list(EventFactory(seed=3).stream(400))
    cores: list[bytes | str] = []
    for doc in docs:
        event = validate_event(doc, orjson.dumps(doc))
        assert event.core is not None
        cores.append(pack_core(event.core))
    for compiled, python in _both(cores):
        assert compiled == python
    # the compiled path took every one of them (else the comparison above compared Python with itself)
    assert all(compact_core(stored_json(core), set()) is not None for core in cores)
    assert compact_core(b'{"run":{"runId":"r","facets":{"x":1.5}}}', set()) is None, "a float is Python's"


# any character but a lone surrogate (not JSON), those JSON escapes more often
_TEXT = st.text(
    st.sampled_from('a\t\n\r\b\f"\\/\x00\x1f\x7f\u00e9\u2028\U0001f600')
    | st.characters(exclude_categories=["Cs"]),
    max_size=8,
)
_SCALARS = (
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1) | _TEXT
)  # no float: a core with one in a value kept inline is Python's (the last test)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=8,
)
_STORE_HASHES = st.binary(min_size=4, max_size=8).map(facet_hash)
# a container maps a name to a store hash or to a value kept inline (never to other text: such an
# event is kept whole, `facet_refs.split_event`)
_INLINE = (
    st.dictionaries(_TEXT, _JSON, max_size=3)
    | st.lists(_JSON, max_size=3)
    | _SCALARS.filter(lambda v: not isinstance(v, str))
)
_FACETS = st.dictionaries(_TEXT, _STORE_HASHES | _INLINE, max_size=3)
_NOT_OBJECT = st.lists(_JSON, max_size=2) | _SCALARS  # where an object is looked into, anything else
_DATASET = st.fixed_dictionaries(
    {"namespace": _TEXT, "name": _TEXT},
    optional={
        "facets": _FACETS | _NOT_OBJECT,
        "inputFacets": _FACETS,
        "outputFacets": _FACETS,
        "other": _JSON,
    },
)
_CORES = st.fixed_dictionaries(
    {},
    optional={
        "eventType": _TEXT,
        "run": st.fixed_dictionaries({"runId": _TEXT}, optional={"facets": _FACETS | _NOT_OBJECT}),
        "job": st.fixed_dictionaries({"namespace": _TEXT}, optional={"facets": _FACETS}) | _NOT_OBJECT,
        "dataset": st.fixed_dictionaries({"name": _TEXT}, optional={"facets": _FACETS}),
        "inputs": st.lists(_DATASET | _NOT_OBJECT, max_size=3),
        "outputs": st.lists(_DATASET, max_size=3) | _JSON,
        "producer": _JSON,
    },
)


def _written(core: dict[str, Any], how: bool) -> bytes | str:
    """A core as the store may hold it: packed (0018), or text (before 0018)."""
    text = b""
    try:
        text = orjson.dumps(core)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: such an event is kept whole
        assume(False)
    return pack_core(text) if how else text.decode()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_CORES, st.booleans()), min_size=1, max_size=4))
def test_any_core_compacts_alike(cores: list[tuple[dict[str, Any], bool]]) -> None:
    payloads = [_written(core, how) for core, how in cores]
    for compiled, python in _both(payloads):
        assert compiled == python
    assert all(compact_core(stored_json(p) if isinstance(p, bytes) else p.encode(), set()) for p in payloads)


def test_escapes_and_integers_are_written_as_orjson_writes_them() -> None:
    value = {
        "z": '\u00e9\n\t"\\\u0001\u001f\u007f\u2028 \U0001f600',
        "a": [0, 0, 2**63 - 1, -(2**63), 2**64 - 1],
    }
    stored = b'{"run":{"facets":{"v":{"z":"\\u00e9\\n\\t\\"\\\\\\u0001\\u001F\x7f\\u2028\\/ \\ud83d\\ude00",'
    stored += b' "a" : [ 0 , -0 , 9223372036854775807,-9223372036854775808,18446744073709551615]}}}}'
    done = compact_core(stored, set())
    assert done is not None
    core, fetched, inline = done
    canonical = orjson.dumps({**value, "z": value["z"].replace(" ", "/ ", 1)}, option=orjson.OPT_SORT_KEYS)
    assert inline == [(json.loads(core)["run"]["facets"]["v"], canonical.decode())]
    assert fetched == []
    # beyond 64 bits, a lone surrogate, a name twice, a store hash that is not one: Python's
    for odd in (b"18446744073709551616", b'"\\ud800"', b'{"a":1,"a":2}'):
        assert compact_core(b'{"run":{"facets":{"v":' + odd + b"}}}", set()) is None
    bad_hash = base64.urlsafe_b64encode(b"\x00" * 15).decode()  # 20 characters
    assert compact_core(b'{"job":{"facets":{"v":"' + bad_hash.encode() + b'"}}}', set()) is None
