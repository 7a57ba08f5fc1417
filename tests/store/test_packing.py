"""Packed cores and facet values (`headwater.store.packing`): cores in format 3, values in format 1,
and whatever an earlier release packed read back the same."""

from __future__ import annotations

import orjson
import pytest
import zstandard
from bench._common import EventFactory  # the benchmarks' realistic events

from headwater.events.validate import validate_event
from headwater.store import packing
from headwater.store.packing import PackingError, pack_core, pack_value, stored_text, unpack


def _cores(n: int = 50) -> list[bytes]:
    cores = []
    for doc in EventFactory(seed=4, jobs=10).stream(n, seed=4):
        event = validate_event(doc)
        assert event.core is not None
        cores.append(event.core)
    return cores


def test_cores_are_packed_in_format_3_and_values_in_format_1() -> None:
    for core in _cores():
        packed = pack_core(core)
        assert packed[0] == 3 and len(packed) < len(core) / 2
        assert unpack(packed) == core.decode() == stored_text(packed)
        assert unpack(b"\x02" + packed[1:]) == core.decode(), "format 2: the same frames"
    value = orjson.dumps({"_producer": "p", "_schemaURL": "u", "nominalStartTime": "2024-01-01T00:00:00Z"})
    assert pack_value(value)[0] == 1 and unpack(memoryview(pack_value(value))) == value.decode()


def test_cores_packed_by_an_earlier_release_in_format_1_are_read() -> None:
    params = zstandard.ZstdCompressionParameters.from_level(
        3, format=zstandard.FORMAT_ZSTD1_MAGICLESS, write_checksum=0, write_content_size=1, write_dict_id=0
    )
    format_1 = zstandard.ZstdCompressor(dict_data=packing._RAW, compression_params=params)
    for core in _cores(10):
        assert unpack(b"\x01" + format_1.compress(core)) == core.decode()


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(PackingError, match="unknown format 4"):
        unpack(b"\x04" + pack_core(b"{}")[1:])


def test_format_2s_dictionary_is_the_pinned_one(monkeypatch: pytest.MonkeyPatch) -> None:
    assert packing._cores_2().as_bytes() == packing._TRAINED.as_bytes()
    monkeypatch.setattr(packing, "_CORES_2_SHA256", "0" * 64)
    with pytest.raises(RuntimeError, match="not the dictionary of packing format 2"):
        packing._cores_2()
