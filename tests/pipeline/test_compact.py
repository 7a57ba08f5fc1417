"""The pipeline's compact input: events as cores with hex facet hashes, each distinct value once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from headwater.demo.lineage import demo_events
from headwater.events.facet_refs import containers, facet_hash
from headwater.events.validate import validate_event
from headwater.pipeline.compact import Compactor, hex_of
from headwater.pipeline.source import EVENT_SCHEMA, events_here
from headwater.store import EventStore, open_store
from headwater.store.event_facets import MissingFacetValue
from headwater.store.packing import pack_core
from tests.pipeline.rows import facet, run_event, t
from tests.store.whole_payloads import cores_in_payload

_NAMES = [part.split()[0] for part in EVENT_SCHEMA.split(",")]


def _whole(row: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
    """The event a compact row stands for: its core with each hash replaced by its value."""
    doc: dict[str, Any] = orjson.loads(row["payload"])
    for _, holder, key, _ in containers(doc):
        refs = holder.get(key)
        if isinstance(refs, dict):
            holder[key] = {name: orjson.loads(values[digest]) for name, digest in refs.items()}
    return doc


def test_the_compact_rows_of_a_store_give_back_every_event(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/compact.db")
    docs = demo_events()[:300]
    store.append([validate_event(d, orjson.dumps(d)) for d in docs], "2026-11-25T00:00:00.0000000Z")
    table = events_here(store.url, 0, store.last_seq(), readback=False, limit=100_000)
    assert table is not None
    rows = table.to_pylist()
    events = [r for r in rows if r["facet_hash"] is None]
    values = [r for r in rows if r["facet_hash"] is not None]
    by_hash = {r["facet_hash"]: r["facet_value"] for r in values}
    assert len(by_hash) == len(values), "each distinct value is given once"
    canonical = {orjson.dumps(d, option=orjson.OPT_SORT_KEYS) for d in docs}  # equal events are one
    assert len(events) == len(canonical)
    assert {orjson.dumps(_whole(r, by_hash), option=orjson.OPT_SORT_KEYS) for r in events} == canonical
    # a facet's hash in the model is the store's hash of its canonical bytes, in hex
    for digest, value in by_hash.items():
        exact = orjson.dumps(orjson.loads(value), option=orjson.OPT_SORT_KEYS)
        assert digest == hex_of(facet_hash(exact)) and len(digest) == 32
    # the values were the bulk of the bytes: the events' cores are a fraction of them
    assert sum(len(r["payload"]) for r in events) < sum(len(orjson.dumps(d)) for d in docs) / 2
    store.close()


def _stored(doc: dict[str, Any], seq: int, kind: str = "run") -> tuple[Any, ...]:
    """A stored row kept whole (facet_count NULL, core NULL), shaped like EVENT_COLUMNS."""
    return (seq, kind, *([None] * 10), json.dumps(doc), None, None)


def test_a_whole_payload_is_split_like_a_stored_core() -> None:
    shared = facet(v=1, b=[1, 2])
    reordered = {key: shared[key] for key in reversed(list(shared))}  # same value, other key order
    first = run_event("r", "START", t(1), run_facets={"x": shared})
    second = run_event("r", "COMPLETE", t(2), run_facets={"x": reordered, "y": facet(n=10**30)})
    rows = Compactor(lambda _hashes: {}).rows([_stored(first, 1), _stored(second, 2)])
    events, values = rows[:2], {r[-2]: r[-1] for r in rows[2:]}
    assert len(rows) == 4, "the shared value is given once"
    refs = [orjson.loads(r[-3])["run"]["facets"] for r in events]
    assert (
        refs[0]["x"] == refs[1]["x"] == hex_of(facet_hash(orjson.dumps(shared, option=orjson.OPT_SORT_KEYS)))
    )
    assert '"n":1000000000000000000000000000000' in values[refs[1]["y"]], "big integers stay exact"


def test_a_facet_kept_inline_gets_the_hash_the_store_would_have_given_it() -> None:
    small = facet(n=1, s="x")
    doc = run_event("r", "START", t(1), run_facets={"nominalTime": small})
    event = validate_event(doc)
    assert event.core is not None and event.facet_values == ()  # every facet stays in the core
    inline = (2, "run", *([None] * 10), "", pack_core(event.core), 0)
    rows = Compactor(lambda _hashes: {}).rows([_stored(doc, 1), inline])
    events, values = rows[:2], {r[-2]: r[-1] for r in rows[2:]}
    refs = [orjson.loads(r[-3])["run"]["facets"]["nominalTime"] for r in events]
    assert refs[0] == refs[1] == hex_of(facet_hash(orjson.dumps(small, option=orjson.OPT_SORT_KEYS)))
    assert len(rows) == 3 and orjson.loads(values[refs[0]]) == small, "the value is given once"


def test_generic_events_pass_unchanged_and_a_missing_value_is_an_error() -> None:
    generic = {"type": "element", "anything": {"facets": {"a": {"b": 1}}}}
    rows = Compactor(lambda _hashes: {}).rows([_stored(generic, 1, kind="generic")])
    assert rows == [(1, "generic", *([None] * 10), json.dumps(generic), None, None)]
    core = {"run": {"runId": "r", "facets": {"x": facet_hash(b"{}")}}, "job": {"namespace": "n", "name": "j"}}
    counted = (1, "run", *([None] * 10), "", pack_core(orjson.dumps(core)), 1)
    with pytest.raises(MissingFacetValue):
        Compactor(lambda _hashes: {}).rows([counted])


def test_cores_kept_in_payload_or_in_core_give_the_same_compact_rows(store: EventStore) -> None:
    docs = demo_events()[:200]
    store.append([validate_event(d, orjson.dumps(d)) for d in docs], "2026-11-25T00:00:00.0000000Z")
    new = events_here(store.url, 0, store.last_seq(), readback=False, limit=100_000)
    cores_in_payload(store, every=2)  # a store upgraded to 0018, its cores not moved yet
    mixed = events_here(store.url, 0, store.last_seq(), readback=False, limit=100_000)
    cores_in_payload(store)
    old = events_here(store.url, 0, store.last_seq(), readback=False, limit=100_000)
    assert new is not None and mixed is not None and old is not None
    assert new.num_rows > len(docs) // 2
    assert _sorted(mixed.to_pylist()) == _sorted(new.to_pylist()) == _sorted(old.to_pylist())


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events by seq, then the values by hash (a read has no order: PostgreSQL moves an updated row)."""
    return sorted(rows, key=lambda r: (r["seq"] is None, r["seq"] or 0, r["facet_hash"] or ""))
