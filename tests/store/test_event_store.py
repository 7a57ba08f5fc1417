"""The event store on both backends: migrations, idempotent appends, reads newest first."""

from __future__ import annotations

import sqlite3
import uuid

import orjson
import psycopg
import pytest

from headwater.events.generic import validate_generic_event
from headwater.events.validate import validate_event
from headwater.store import EventStore, RunCursor, open_store
from headwater.store.generic import generic_store
from headwater.store.sql import _AFTER, RUN_TREE
from tests.factories import migration_versions, run_event
from tests.store.whole_payloads import store_cores_in_payload

RECEIVED = "2024-06-01T00:00:00.0000000Z"


def test_migrations_run_once(database_url: str) -> None:
    store = open_store(database_url, migrate=False)
    try:
        assert store.schema_version() == 0
        assert store.migrate() == migration_versions()
        assert store.migrate() == []
        assert store.schema_version() == migration_versions()[-1]
    finally:
        store.close()


def test_an_event_sent_twice_is_stored_once(store: EventStore) -> None:
    event = validate_event(run_event())
    assert store.append([event], RECEIVED) == [True]
    assert store.append([event], RECEIVED) == [False]
    assert store.count_events(after_time=None, before_time=None) == 1


def test_duplicates_inside_one_append_are_stored_once(store: EventStore) -> None:
    one, two = validate_event(run_event(job="a")), validate_event(run_event(job="b"))
    assert store.append([one, two, one], RECEIVED) == [True, True, False]
    assert store.count_events(after_time=None, before_time=None) == 2


def test_an_append_of_stored_and_new_events_stores_the_new_in_their_order(store: EventStore) -> None:
    """Redeliveries mix events stored before with new ones: only the new are stored, whole, with
    their facets, and seq follows the order they were given in (PostgreSQL inserts the batch a
    second time, skipping the stored eventIds, when its plain insert meets one)."""
    schema = {"schema": {"_producer": "p", "_schemaURL": "s", "fields": [{"name": "id"}]}}
    outputs = [[{"namespace": "ns", "name": f"d{n}", "facets": schema}] for n in range(4)]
    events = [validate_event(run_event(job=f"j{n}", outputs=outputs[n])) for n in range(4)]
    assert store.append([events[1], events[3]], RECEIVED) == [True, True]
    assert store.append(events, RECEIVED) == [True, False, True, False]
    with store.transaction() as cur:
        cur.execute("SELECT event_id FROM events ORDER BY seq")
        order = [row[0] for row in cur.fetchall()]
    assert order == [events[n].event_id for n in (1, 3, 0, 2)]
    for event in events:
        stored = store.get_event(event.event_id)
        assert stored is not None
        assert orjson.loads(stored.payload) == orjson.loads(event.payload)


def test_stored_event_keeps_every_column(store: EventStore) -> None:
    parent = str(uuid.uuid4())
    event = validate_event(run_event(parent=parent, event_type="COMPLETE"))
    store.append([event], RECEIVED)
    stored = store.get_event(event.event_id)
    assert stored is not None
    assert stored.seq >= 1
    assert (stored.kind, stored.run_id, stored.parent_run_id, stored.root_run_id) == (
        "run",
        event.run_id,
        parent,
        parent,
    )
    assert (stored.event_type, stored.event_time, stored.producer) == (
        "COMPLETE",
        event.event_time,
        event.producer,
    )
    assert (stored.job_namespace, stored.job_name) == ("airflow", "etl.load_orders")
    assert orjson.loads(stored.payload) == orjson.loads(event.payload)  # equal as JSON
    assert stored.received_at == RECEIVED


def test_rows_keep_no_content_hash(store: EventStore) -> None:
    """An event's content hash (SHA-256 of its canonical JSON) is read by nothing and the stored
    event gives it back: rows keep it empty, OpenLineage and generic events alike."""
    event = validate_event(run_event())
    store.append([event], RECEIVED)
    generic = validate_generic_event(
        {"type": "put model", "description": "m", "elements": [{"type": "model", "description": "m"}]}
    )
    generic_store(store).append_generic([generic], RECEIVED)
    with store.transaction() as cur:
        cur.execute("SELECT kind, content_hash FROM events ORDER BY seq")
        assert cur.fetchall() == [("run", ""), ("generic", "")]
    stored = store.get_event(event.event_id)
    assert stored is not None and orjson.loads(stored.payload) == orjson.loads(event.payload)


def test_seq_grows_with_every_append(store: EventStore) -> None:
    events = [validate_event(run_event(job=f"j{i}")) for i in range(5)]
    for event in events:
        store.append([event], RECEIVED)
    seqs = [store.get_event(e.event_id).seq for e in events]  # type: ignore[union-attr]
    assert seqs == sorted(seqs) and len(set(seqs)) == 5


def test_run_events_are_newest_first_and_page_by_cursor(store: EventStore) -> None:
    run_id = str(uuid.uuid4())
    times = ["2024-01-01T00:00:03Z", "2024-01-01T00:00:01Z", "2024-01-01T00:00:02Z", "2024-01-01T00:00:02Z"]
    events = [
        validate_event(run_event(run_id, event_time=t, event_type="RUNNING", job=f"j{i}"))
        for i, t in enumerate(times)
    ]
    store.append(events, RECEIVED)
    expected = sorted(events, key=lambda e: (e.event_time, e.event_id), reverse=True)
    first = store.run_events(run_id, include_children=False, limit=2, after=None)
    assert [e.event_id for e in first] == [e.event_id for e in expected[:2]]
    cursor = RunCursor(first[-1].event_time, first[-1].event_id)
    rest = store.run_events(run_id, include_children=False, limit=10, after=cursor)
    assert [e.event_id for e in rest] == [e.event_id for e in expected[2:]]


def test_children_are_included_only_when_asked(store: EventStore) -> None:
    root, child, grandchild = (str(uuid.uuid4()) for _ in range(3))
    store.append(
        [
            validate_event(run_event(root, event_time="2024-01-01T00:00:00Z")),
            validate_event(run_event(child, parent=root, event_time="2024-01-01T00:00:01Z")),
            validate_event(run_event(grandchild, parent=child, root=root, event_time="2024-01-01T00:00:02Z")),
        ],
        RECEIVED,
    )
    own = store.run_events(root, include_children=False, limit=10, after=None)
    tree = store.run_events(root, include_children=True, limit=10, after=None)
    assert [e.run_id for e in own] == [root]
    assert [e.run_id for e in tree] == [grandchild, child, root]
    assert store.has_run(child, include_children=False)
    assert not store.has_run(str(uuid.uuid4()), include_children=True)


def test_a_root_without_events_of_its_own_is_found_through_a_grandchild(store: EventStore) -> None:
    root, child, grandchild = (str(uuid.uuid4()) for _ in range(3))
    deep = validate_event(run_event(grandchild, parent=child, root=root))
    store.append([deep], RECEIVED)
    assert store.has_run(root, include_children=True)
    assert not store.has_run(root, include_children=False)
    assert [e.run_id for e in store.run_events(root, include_children=True, limit=10, after=None)] == [
        grandchild
    ]


@pytest.mark.parametrize("after", ["", _AFTER])
@pytest.mark.parametrize(
    ("where", "index"), list(zip(RUN_TREE, ["run", "parent_run", "root_run"], strict=True))
)
def test_each_key_of_a_run_tree_is_read_from_its_index(
    store: EventStore, where: str, index: str, after: str
) -> None:
    """The root's index is partial (migration 0014): its query must repeat the index's condition.
    SQLite reads a page in order from the index; PostgreSQL's run and parent-run indexes keep no
    order (its migration 0017): it reads the key's rows from its index, then sorts them, and the
    cursor never sends it to events_by_time."""
    page = store.run_page.format(columns="seq, event_time, event_id", where=where, after=after)  # type: ignore[attr-defined]
    params = ("r", "2024-01-01T00:00:00Z", "x", 5) if after else ("r", 5)
    with store.transaction() as cur:
        if store.backend == "sqlite":
            cur.execute(f"EXPLAIN QUERY PLAN {store.sql(page)}", params)
            plan = " ".join(str(row[-1]) for row in cur.fetchall())
            assert f"INDEX events_by_{index} " in plan and "TEMP B-TREE" not in plan, plan
        else:
            cur.execute("SET LOCAL enable_seqscan = off")
            cur.execute(f"EXPLAIN {store.sql(page)}", params)
            plan = " ".join(str(row[0]) for row in cur.fetchall())
            assert f" events_by_{index} " in plan and "events_by_time" not in plan, plan


def test_a_run_page_is_newest_first_whatever_the_order_of_arrival(store: EventStore) -> None:
    """Pages of a run and of its tree, with ties in eventTime, from events appended out of order:
    the order is the API's (eventTime, then eventId, newest first) on either kind of index."""
    run_id, child = str(uuid.uuid4()), str(uuid.uuid4())
    events = [validate_event(doc) for doc in _tree(run_id, child)]
    for start in range(0, len(events), 9):
        store.append(events[start : start + 9], RECEIVED)
    for include_children, runs in ((False, {run_id}), (True, {run_id, child})):
        expected = sorted((e for e in events if e.run_id in runs), key=lambda e: (e.event_time, e.event_id))
        read = [event_id for page in _pages(store, run_id, include_children) for event_id, _ in page]
        assert read == [e.event_id for e in reversed(expected)]


def _tree(run_id: str, child: str) -> list[dict[str, object]]:
    """A run and a child run, 40 events each, with ties in eventTime, in no order of time."""
    docs: list[dict[str, object]] = []
    for i in range(40):
        second = (i * 7) % 13
        docs.append(run_event(run_id, event_time=f"2024-01-01T00:00:{second:02d}Z", job=f"j{i}"))
        docs.append(
            run_event(child, parent=run_id, event_time=f"2024-01-01T00:01:{second:02d}Z", job=f"c{i}")
        )
    return docs


def _pages(store: EventStore, run_id: str, include_children: bool) -> list[list[tuple[str, object]]]:
    pages, after = [], None
    while page := store.run_events(run_id, include_children=include_children, limit=7, after=after):
        pages.append([(e.event_id, orjson.loads(e.payload)) for e in page])
        after = RunCursor(page[-1].event_time, page[-1].event_id)
    return pages


def test_a_store_upgraded_over_migration_0017_reads_the_same_pages(database_url: str) -> None:
    """Migration 0017 changes PostgreSQL's run indexes, not the rows: a store of schema 16 gives
    the pages of a run and of its tree in the API's order once upgraded, each event equal to what
    was sent (its cores still where schema 16 kept them, in `payload`: this code reads a store of
    schema 18 only)."""
    from tests.store.test_upgrade import migrate_to

    store = open_store(database_url, migrate=False)
    try:
        migrate_to(store, 16)
        run_id, child = str(uuid.uuid4()), str(uuid.uuid4())
        docs = _tree(run_id, child)
        events = [validate_event(doc) for doc in docs]
        for start in range(0, len(events), 9):  # as the code of schema 16 wrote them
            store_cores_in_payload(store, events[start : start + 9], RECEIVED)
        assert store.migrate() == [v for v in migration_versions() if v > 16]
        sent = {e.event_id: doc for e, doc in zip(events, docs, strict=True)}
        for include_children, runs in ((False, {run_id}), (True, {run_id, child})):
            expected = sorted(
                (e for e in events if e.run_id in runs), key=lambda e: (e.event_time, e.event_id)
            )
            newest_first = [(e.event_id, sent[e.event_id]) for e in reversed(expected)]
            pages = _pages(store, run_id, include_children)
            assert pages == [newest_first[i : i + 7] for i in range(0, len(newest_first), 7)]
        assert len(pages) == 12  # 80 events, 7 a page
    finally:
        store.close()


def test_list_events_filters_by_time_and_sorts(store: EventStore) -> None:
    events = [validate_event(run_event(event_time=f"2024-01-0{d}T00:00:00Z")) for d in range(1, 6)]
    store.append(events, RECEIVED)
    window = store.list_events(
        after_time="2024-01-02T00:00:00.0000000Z",
        before_time="2024-01-04T00:00:00.0000000Z",
        descending=True,
        limit=10,
        offset=0,
    )
    assert [e.event_time[:10] for e in window] == ["2024-01-04", "2024-01-03", "2024-01-02"]
    ascending = store.list_events(after_time=None, before_time=None, descending=False, limit=2, offset=1)
    assert [e.event_time[:10] for e in ascending] == ["2024-01-02", "2024-01-03"]


def test_data_survives_reopening(database_url: str) -> None:
    event = validate_event(run_event())
    first = open_store(database_url)
    first.append([event], RECEIVED)
    first.close()
    second = open_store(database_url)
    try:
        assert second.get_event(event.event_id) is not None
    finally:
        second.close()


def test_unknown_database_urls_are_refused() -> None:
    from headwater.errors import ConfigError

    with pytest.raises(ConfigError, match="neither sqlite"):
        open_store("mysql://localhost/db")


def test_reads_inside_a_snapshot_see_one_state(store: EventStore) -> None:
    store.append([validate_event(run_event(job="first"))], RECEIVED)
    with store.snapshot():
        assert store.last_seq() == 1
        store.append([validate_event(run_event(job="second"))], RECEIVED)  # committed meanwhile
        with store.snapshot():  # nested: the same snapshot
            assert store.last_seq() == 1
        assert store.count_events(after_time=None, before_time=None) == 1
    assert store.last_seq() == 2


def test_an_error_inside_a_snapshot_leaves_the_store_usable(store: EventStore) -> None:
    with pytest.raises(ZeroDivisionError), store.snapshot():
        store.last_seq()
        _ = 1 / 0
    undefined = (sqlite3.OperationalError, psycopg.errors.UndefinedTable)
    with pytest.raises(undefined), store.snapshot(), store._reading() as cur:  # a failing statement
        cur.execute("SELECT * FROM no_such_table")
    store.append([validate_event(run_event(job="after"))], RECEIVED)
    assert store.last_seq() == 1
    with store.snapshot():
        assert store.count_events(after_time=None, before_time=None) == 1
