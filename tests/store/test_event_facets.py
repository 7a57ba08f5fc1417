"""Content-addressed facets (issue 13): each distinct facet value is stored once, events refer to
them by hash, and every read gives the event back equal as JSON to what was sent; whole-payload
rows of an older store are converted in resumable batches; retention sweeps the values no event
refers to any more. On both backends."""

from __future__ import annotations

import gzip
import json
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from headwater.cli import main
from headwater.events.facet_refs import INLINE_BYTES, facet_hash, kept_inline
from headwater.events.model import Event
from headwater.events.validate import validate_event
from headwater.store import EventStore, open_store
from headwater.store.event_facets import RecentHashes, stored_core
from headwater.store.facet_conversion import convert_store, pack_store, pending_conversion
from headwater.store.packing import stored_text
from headwater.store.retention_sql import delete_doomed, list_doomed
from tests.factories import facet, run_event
from tests.store.whole_payloads import cores_in_payload, store_whole

RECEIVED = "2024-06-01T00:00:00.0000000Z"


def _events(runs: int = 3, per_run: int = 3) -> list[dict[str, Any]]:
    """Runs of one job whose events share the job's, the datasets' and the parent's facets; each
    event also carries a facet of its own (nominalTime)."""
    schema = facet(
        "SchemaDatasetFacet", "1-1-1", fields=[{"name": f"c{i}", "type": "INT"} for i in range(30)]
    )
    sql = facet("SQLJobFacet", "1-1-0", query="SELECT * FROM shop.orders")
    parent = str(uuid.uuid4())
    docs = []
    for run in range(runs):
        run_id = str(uuid.uuid4())
        for step, kind in enumerate(("START", "RUNNING", "COMPLETE")[:per_run]):
            doc = run_event(
                run_id,
                event_type=kind,
                event_time=f"2024-05-0{run + 1}T10:0{step}:00.000Z",
                parent=parent,
                inputs=[{"namespace": "pg", "name": "shop.orders", "facets": {"schema": schema}}],
                run_facets={
                    "nominalTime": facet(
                        "NominalTimeRunFacet", nominalStartTime=f"2024-05-0{run + 1}T10:0{step}:00Z"
                    )
                },
            )
            doc["job"]["facets"] = {"sql": sql}
            docs.append(doc)
    return docs


def _facet_rows(store: EventStore) -> list[tuple[str, str]]:
    """The facet values as text; each written since migration 0015 is packed."""
    with store.transaction() as cur:
        cur.execute("SELECT hash, value, packed FROM event_facets ORDER BY hash")
        rows = cur.fetchall()
    assert all(p is not None and v == "" for _, v, p in rows)
    return [(str(h), stored_text(p)) for h, _, p in rows]


def _facets(doc: dict[str, Any]) -> list[tuple[bytes, bool]]:
    """(canonical bytes, whether the store keeps it by hash) of each facet of the event: a job's
    or a dataset's always, a run's, input's or output's when it is larger than a core keeps inline."""
    containers = [(doc["run"].get("facets"), False), (doc["job"].get("facets"), True)]
    for dataset in doc.get("inputs", []) + doc.get("outputs", []):
        containers += [(dataset.get("facets"), True), (dataset.get("inputFacets"), False)]
        containers += [(dataset.get("outputFacets"), False)]
    found = []
    for container, deletable in containers:
        for value in (container or {}).values():
            canonical = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
            found.append((canonical, not kept_inline(canonical, (), deletable)))
    return found


def _distinct_facets(docs: list[dict[str, Any]]) -> set[str]:
    """The hashes of the facet values the store keeps by hash."""
    return {facet_hash(canonical) for doc in docs for canonical, hashed in _facets(doc) if hashed}


def _stored_cores(store: EventStore) -> list[tuple[str, int | None]]:
    """Payloads as text, with their facet_count; every core is packed, as bytes in `core` with
    `payload` empty, every whole payload is JSON."""
    with store.transaction() as cur:
        cur.execute("SELECT payload, core, facet_count FROM events ORDER BY seq")
        rows = cur.fetchall()
    for payload, core, count in rows:
        if count is None:
            assert payload.startswith("{") and core is None
        else:
            assert payload == "" and isinstance(core, bytes)
    return [(stored_text(stored_core(p, k)), None if c is None else int(c)) for p, k, c in rows]


def test_each_distinct_facet_value_is_stored_once_and_reads_are_whole(
    client: TestClient, store: EventStore
) -> None:
    docs = _events()
    ids = []
    for doc in docs[:4]:  # single POSTs (the lean path) and a batch (both paths' split)
        response = client.post("/api/v1/lineage", json=doc)
        assert response.status_code == 201, response.text
        ids.append(response.json()["eventId"])
    answers = client.post("/api/v1/lineage/batch", json=docs[4:]).json()
    ids += [a["eventId"] for a in answers]
    rows = _facet_rows(store)
    assert {h for h, _ in rows} == _distinct_facets(docs)
    # 1 schema, 1 sql, 1 output schema: shared facets are kept once; the run facets (9
    # nominalTimes, 1 parent) stay in the cores
    assert len(rows) == 3
    for h, value in rows:
        assert facet_hash(value.encode()) == h
    # the events hold their cores, not their dataset and job facets; facet_count counts hashes
    cores = _stored_cores(store)
    assert all(count is not None and count == 3 for _, count in cores)
    assert all('"fields"' not in core and '"nominalStartTime"' in core for core, _ in cores)

    sent = {event_id: doc for event_id, doc in zip(ids, docs, strict=True)}
    for event_id, doc in sent.items():
        one = store.get_event(event_id)
        assert one is not None and orjson.loads(one.payload) == doc
    run_id = docs[0]["run"]["runId"]
    atlas = client.get(f"/api/atlas/v2/openlineage/runs/{run_id}").json()
    assert [e["event"] for e in atlas["events"]] == [sent[e["eventId"]] for e in atlas["events"]]
    assert len(atlas["events"]) == 3
    parent = docs[0]["run"]["facets"]["parent"]["run"]["runId"]
    tree = client.get(f"/api/atlas/v2/openlineage/runs/{parent}", params={"includeChildren": "true"}).json()
    assert sorted(json.dumps(e["event"], sort_keys=True) for e in tree["events"]) == sorted(
        json.dumps(d, sort_keys=True) for d in docs
    )
    listing = client.get("/api/v1/events/lineage", params={"limit": 100}).json()
    assert sorted(json.dumps(e, sort_keys=True) for e in listing["events"]) == sorted(
        json.dumps(d, sort_keys=True) for d in docs
    )


def test_the_same_events_again_are_one_row_each_and_add_no_facet_value(store: EventStore) -> None:
    docs = _events(runs=2)
    events = [validate_event(doc) for doc in docs]
    assert store.append(events, RECEIVED) == [True] * len(events)
    rows = _facet_rows(store)
    again = [validate_event(doc) for doc in docs] + events[:1]
    assert store.append(again, RECEIVED) == [False] * len(again)
    assert _facet_rows(store) == rows
    with store.transaction() as cur:
        cur.execute("SELECT COUNT(*) FROM events")
        assert int(cur.fetchone()[0]) == len(docs)
    assert [e.event_id for e in again[:-1]] == [e.event_id for e in events]


def test_a_runs_small_facets_stay_in_its_core_and_large_or_untrusted_ones_are_stored_by_hash(
    client: TestClient, store: EventStore
) -> None:
    small = facet("NominalTimeRunFacet", nominalStartTime="2024-05-01T10:00:00Z")
    large = facet("SparkPropertiesRunFacet", properties={f"spark.k{i}": "v" * 20 for i in range(30)})
    untrusted = facet("NominalTimeRunFacet", nominalStartTime=12)  # not a date-time: a verdict to keep
    statistics = facet("OutputStatisticsOutputDatasetFacet", "1-0-2", rowCount=10, size=200)
    source = {**facet("DatasourceDatasetFacet"), "name": "shop", "uri": "postgres://db:5432/shop"}
    doc = run_event(
        run_facets={"nominalTime": small, "spark_properties": large, "odd": untrusted},
        outputs=[
            {
                "namespace": "pg",
                "name": "shop.totals",
                "facets": {"dataSource": source},
                "outputFacets": {"outputStatistics": statistics},
            }
        ],
    )
    assert len(orjson.dumps(large)) > INLINE_BYTES >= len(orjson.dumps(small))
    response = client.post("/api/v1/lineage", json=doc)  # the lean path
    assert response.status_code == 201, response.text
    other = {**doc, "eventType": "COMPLETE"}
    full = validate_event(other)  # the full path splits the same way
    assert store.append([full], RECEIVED) == [True]

    def canonical(value: dict[str, Any]) -> bytes:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)

    assert {h for h, _ in _facet_rows(store)} == {
        facet_hash(canonical(v)) for v in (large, untrusted, source)
    }
    assert {h for h, *_ in full.facet_values} == {
        facet_hash(canonical(v)) for v in (large, untrusted, source)
    }
    for core, count in _stored_cores(store):
        assert count == 3
        facets = orjson.loads(core)
        assert facets["run"]["facets"]["nominalTime"] == small
        assert facets["outputs"][0]["outputFacets"]["outputStatistics"] == statistics
        assert isinstance(facets["run"]["facets"]["spark_properties"], str)
        assert isinstance(facets["run"]["facets"]["odd"], str)
    assert response.json()["eventId"] != full.event_id
    for event_id, sent in ((response.json()["eventId"], doc), (full.event_id, other)):
        stored = store.get_event(event_id)
        assert stored is not None and orjson.loads(stored.payload) == sent
        assert "run.facets.odd" in stored.untrusted_facets


def test_an_event_whose_facets_all_stay_in_its_core_reads_back_whole(store: EventStore) -> None:
    nominal = facet("NominalTimeRunFacet", nominalStartTime="2024-05-01T10:00:00Z")
    doc = run_event(run_facets={"nominalTime": nominal}, outputs=[{"namespace": "pg", "name": "shop.totals"}])
    event = validate_event(doc)
    assert event.core is not None and event.facet_values == ()
    store.append([event], RECEIVED)
    assert _stored_cores(store)[0][1] == 0 and _facet_rows(store) == []
    stored = store.get_event(event.event_id)
    assert stored is not None and orjson.loads(stored.payload) == doc


def test_an_event_with_a_facet_that_is_no_object_is_kept_whole(store: EventStore) -> None:
    doc = run_event(run_facets={"odd": "not an object"})
    event = validate_event(doc)
    assert event.core is None and event.warnings
    store.append([event], RECEIVED)
    assert _stored_cores(store)[0][1] is None
    stored = store.get_event(event.event_id)
    assert stored is not None and orjson.loads(stored.payload) == doc


def _store_whole(store: EventStore, docs: list[dict[str, Any]]) -> None:
    """The events as a store before migration 0012 kept them: whole payloads."""
    validated = [validate_event(doc, json.dumps(doc, indent=1).encode()) for doc in docs]
    store_whole(store, validated, RECEIVED)


class _Interrupted(Exception):
    pass


def test_a_whole_payload_store_is_converted_in_batches_and_resumes_after_an_interruption(
    store: EventStore,
) -> None:
    docs = _events(runs=4)  # 12 events
    _store_whole(store, docs)
    store.append([validate_event(run_event(event_type="OTHER"))], RECEIVED)  # stored split already
    ids = [validate_event(doc).event_id for doc in docs]
    assert pending_conversion(store) == 12
    assert _facet_rows(store) != [] and all(count is None for _, count in _stored_cores(store)[:12])

    batches: list[int] = []

    def stop_after_two(events: int) -> None:
        batches.append(events)
        if len(batches) == 2:
            raise _Interrupted

    with pytest.raises(_Interrupted):
        convert_store(store, batch=5, progress=stop_after_two)
    assert batches == [5, 5] and pending_conversion(store) == 2
    cores = _stored_cores(store)
    assert [count is not None for _, count in cores[:12]] == [True] * 10 + [False] * 2
    _assert_whole(store, ids, docs)  # half-converted: every event still whole

    assert convert_store(store, batch=5) == 2  # goes on where it stopped
    assert pending_conversion(store) == 0
    assert convert_store(store, batch=5) == 0
    assert all(count == 3 for _, count in _stored_cores(store)[:12])
    _assert_whole(store, ids, docs)
    assert _distinct_facets(docs) <= {h for h, _ in _facet_rows(store)}
    listed = store.list_events(after_time=None, before_time=None, descending=False, limit=100, offset=0)
    assert len(listed) == 13 and len({e.event_id for e in listed}) == 13


def test_retention_sweeps_the_facet_values_no_event_refers_to(store: EventStore) -> None:
    old = _events(runs=2)
    for doc in old:  # their own facet values: a dataset and an sql nobody else sends
        doc["inputs"][0]["facets"]["schema"]["fields"].append({"name": "old_only", "type": "INT"})
        doc["job"]["facets"]["sql"]["query"] = "SELECT 1"
    new = _events(runs=1)
    for doc in new:  # after the cutoff
        doc["eventTime"] = doc["eventTime"].replace("2024-05-01", "2024-07-01")
    store.append([validate_event(doc) for doc in old + new], RECEIVED)
    assert {h for h, _ in _facet_rows(store)} == _distinct_facets(old + new)

    list_doomed(store, "2024-06-01T00:00:00.0000000Z", store.last_seq())
    delete_doomed(store, "2000-01-01T00:00:00Z")
    assert {h for h, _ in _facet_rows(store)} == _distinct_facets(new)
    for doc in new:
        stored = store.get_event(validate_event(doc).event_id)
        assert stored is not None and orjson.loads(stored.payload) == doc

    # the writer forgets what it wrote once a sweep ran: a swept value sent again is stored again
    again = validate_event(old[0])
    assert store.append([again], RECEIVED) == [True]
    stored = store.get_event(again.event_id)
    assert stored is not None and orjson.loads(stored.payload) == old[0]


def test_a_sweep_by_another_writer_makes_this_one_send_its_facet_values_again(
    store: EventStore, database_url: str
) -> None:
    old = _events(runs=1)
    store.append([validate_event(doc) for doc in old], RECEIVED)  # `store` remembers their values
    other = open_store(database_url)  # another process's writer, say a retention job
    try:
        list_doomed(other, "2024-06-01T00:00:00.0000000Z", other.last_seq())
        delete_doomed(other, "2000-01-01T00:00:00Z")
    finally:
        other.close()
    assert _facet_rows(store) == []
    again = validate_event(old[1])
    assert store.append([again], RECEIVED) == [True]
    stored = store.get_event(again.event_id)
    assert stored is not None and orjson.loads(stored.payload) == old[1]
    assert {h for h, _ in _facet_rows(store)} == _distinct_facets([old[1]])


def test_ingest_then_events_json_round_trip(tmp_path: Path, database_url: str) -> None:
    docs = _events(runs=2)
    path = tmp_path / "events.ndjson.gz"
    path.write_bytes(gzip.compress(b"\n".join(orjson.dumps(d) for d in docs)))
    env = {"HEADWATER_DATABASE_URL": database_url}
    result = CliRunner().invoke(main, ["ingest", "-q", str(path)], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    listed = CliRunner().invoke(main, ["events", "--json", "--limit", "100"], env=env, catch_exceptions=False)
    assert listed.exit_code == 0, listed.output
    got = json.loads(listed.output)
    assert sorted(json.dumps(e, sort_keys=True) for e in got) == sorted(
        json.dumps(d, sort_keys=True) for d in docs
    )


_HUGE = (2**70, -(2**63) - 1, 2**64 - 1, 10**30)  # beyond 64 bits, but 2**64 - 1 (orjson: exact)


def _huge_events() -> list[dict[str, Any]]:
    """Events carrying integers beyond 64 bits in facets of each kind: a run's (kept inline), a
    job's (stored by hash), an output's, a custom facet's, a flat schema's (outputStatistics)."""
    docs = []
    for step, number in enumerate(_HUGE):
        statistics = facet("OutputStatisticsOutputDatasetFacet", "1-0-2", rowCount=number, size=1)
        custom = {"_producer": "p", "_schemaURL": "https://example.com/Counter.json", "n": [number, 1.5]}
        doc = run_event(
            event_type="COMPLETE",
            event_time=f"2024-05-01T10:0{step}:00.000Z",
            outputs=[
                {"namespace": "s3://b", "name": "out", "outputFacets": {"outputStatistics": statistics}}
            ],
            run_facets={"counter": custom},
        )
        doc["job"]["facets"] = {"counter": {**custom, "big": [number] * 200}}
        docs.append(doc)
    return docs


@pytest.mark.parametrize("form", ["ndjson", "array"])
def test_integers_beyond_64_bits_come_back_as_they_were_sent(
    tmp_path: Path, database_url: str, form: str
) -> None:
    """orjson reads such an integer as a float; the event must still come back equal as JSON,
    and the same bytes sent again are the same event."""
    docs = _huge_events()
    lines = [json.dumps(d).encode() for d in docs]
    path = tmp_path / f"events.{'ndjson' if form == 'ndjson' else 'json'}"
    path.write_bytes(b"\n".join(lines) if form == "ndjson" else b"[" + b",".join(lines) + b"]")
    env = {"HEADWATER_DATABASE_URL": database_url}
    for _ in range(2):  # the second time: the same events, none stored again
        result = CliRunner().invoke(main, ["ingest", "-q", str(path)], env=env, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    listed = CliRunner().invoke(main, ["events", "--json", "--limit", "100"], env=env, catch_exceptions=False)
    got = json.loads(listed.output)
    assert sorted(json.dumps(e, sort_keys=True) for e in got) == sorted(
        json.dumps(d, sort_keys=True) for d in docs
    )
    assert {e["run"]["facets"]["counter"]["n"][0] for e in got} == set(_HUGE)


def test_db_upgrade_converts_the_events_of_an_older_store(database_url: str, store: EventStore) -> None:
    docs = _events(runs=1)
    _store_whole(store, docs)
    env = {"HEADWATER_DATABASE_URL": database_url}
    result = CliRunner().invoke(main, ["db", "upgrade", "-q"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "converted 3 event(s)" in result.output
    assert all(count == 3 for _, count in _stored_cores(store))
    again = CliRunner().invoke(main, ["db", "upgrade", "-q"], env=env, catch_exceptions=False)
    assert "converted" not in again.output


def test_the_memory_of_written_hashes_is_bounded_and_forgets_after_a_sweep() -> None:
    recent = RecentHashes(limit=3)
    recent.check(0)
    recent.add(["a", "b"])
    recent.add(["c", "d"])  # the young generation is full: it becomes the old one
    assert all(h in recent for h in "abcd")
    recent.add(["e", "f"])
    assert [h in recent for h in "abcdef"] == [False, False, True, True, True, True]
    recent.check(0)
    assert "f" in recent
    recent.check(1)  # a sweep ran: nothing written before it is vouched for
    assert not any(h in recent for h in "abcdef")


def _assert_whole(store: EventStore, ids: list[str], docs: list[dict[str, Any]]) -> None:
    """Each event read back by its id is equal as JSON to the document sent."""
    for event_id, doc in zip(ids, docs, strict=True):
        stored = store.get_event(event_id)
        assert stored is not None and orjson.loads(stored.payload) == doc


def _stored_runs(store: EventStore) -> tuple[list[dict[str, Any]], list[Event], list[str]]:
    """12 events of 4 runs, stored: the documents, the validated events and their ids."""
    docs = _events(runs=4)
    validated = [validate_event(doc) for doc in docs]
    store.append(validated, RECEIVED)
    return docs, validated, [event.event_id for event in validated]


def _unpack_all(store: EventStore) -> None:
    """The store as migration 0015 found it: facet values and cores kept as text."""
    with store.transaction() as cur:
        cur.execute("SELECT hash, packed FROM event_facets")
        values = [(stored_text(p), str(h)) for h, p in cur.fetchall()]
        cur.executemany(store.sql("UPDATE event_facets SET value = ?, packed = NULL WHERE hash = ?"), values)
        cur.execute("SELECT seq, core FROM events WHERE facet_count IS NOT NULL")
        cores = [(stored_text(p), int(s)) for s, p in cur.fetchall()]
        cur.executemany(store.sql("UPDATE events SET payload = ?, core = NULL WHERE seq = ?"), cores)


def test_values_and_cores_stored_as_text_are_packed_in_batches_and_resume_after_an_interruption(
    store: EventStore,
) -> None:
    docs, validated, ids = _stored_runs(store)  # 12 events
    _unpack_all(store)
    values = len(_distinct_facets(docs))
    cores = 12
    assert pending_conversion(store) == values + cores

    batches: list[int] = []

    stop = values // 5 + 2  # among the cores, after the values

    def interrupt(items: int) -> None:
        batches.append(items)
        if len(batches) == stop:
            raise _Interrupted

    with pytest.raises(_Interrupted):
        pack_store(store, batch=5, progress=interrupt)
    assert len(batches) == stop and 0 < pending_conversion(store) == values + cores - sum(batches)
    _assert_whole(store, ids, docs)  # half-packed: every event still whole

    assert pack_store(store, batch=5) == values + cores - sum(batches)  # goes on where it stopped
    assert pending_conversion(store) == 0 and pack_store(store, batch=5) == 0
    assert len(_facet_rows(store)) == values  # every value packed
    assert [core for core, _ in _stored_cores(store)] == [(event.core or b"").decode() for event in validated]
    _assert_whole(store, ids, docs)


def test_cores_kept_in_payload_read_back_whole_and_postgresql_moves_them_to_bytes(
    store: EventStore,
) -> None:
    docs, validated, ids = _stored_runs(store)  # 12 events
    cores_in_payload(store)
    store.append([validate_event(run_event(event_type="OTHER"))], RECEIVED)  # its core in `core`
    _assert_whole(store, ids, docs)
    old = 12 if store.backend == "postgresql" else 0  # SQLite's BLOBs stay in payload, as small
    assert pending_conversion(store) == old

    batches: list[int] = []

    def stop_after_one(events: int) -> None:
        batches.append(events)
        raise _Interrupted

    if old:
        with pytest.raises(_Interrupted):
            pack_store(store, batch=5, progress=stop_after_one)
        assert batches == [5] and pending_conversion(store) == old - 5
        run = store.run_events(validated[0].run_id or "", include_children=False, limit=10, after=None)
        assert [orjson.loads(e.payload) for e in run] == list(reversed(docs[:3]))  # both forms in one read
    assert pack_store(store, batch=5) == old - sum(batches)  # goes on where it stopped
    assert pending_conversion(store) == 0 and pack_store(store, batch=5) == 0
    with store.transaction() as cur:
        cur.execute("SELECT payload, core FROM events WHERE facet_count IS NOT NULL ORDER BY seq")
        rows = cur.fetchall()
    if store.backend == "postgresql":
        assert all(
            p == "" and stored_text(c).encode() == e.core for (p, c), e in zip(rows, validated, strict=False)
        )
    else:
        assert all(isinstance(p, bytes) and c is None for p, c in rows[:12]) and rows[12][1] is not None
    _assert_whole(store, ids, docs)


def test_db_upgrade_moves_the_cores_kept_as_text(database_url: str, store: EventStore) -> None:
    docs = _events(runs=2)
    validated = [validate_event(doc) for doc in docs]
    store.append(validated, RECEIVED)
    cores_in_payload(store)
    env = {"HEADWATER_DATABASE_URL": database_url}
    result = CliRunner().invoke(main, ["db", "upgrade", "-q"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    moved = "packed 6 facet value(s) and event core(s), each core as bytes"
    assert (moved in result.output) == (store.backend == "postgresql")
    assert pending_conversion(store) == 0
    if store.backend == "postgresql":
        assert [count for _, count in _stored_cores(store)] == [3] * 6
    for event, doc in zip(validated, docs, strict=True):
        stored = store.get_event(event.event_id)
        assert stored is not None and orjson.loads(stored.payload) == doc
