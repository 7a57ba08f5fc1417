"""Dead letters in the store, on both backends: kept once per (topic, partition, offset), with their
bytes as they came, newest first; and the upgrade of a version-1 store that already holds events."""

from __future__ import annotations

from importlib import resources

from headwater.events.validate import validate_event
from headwater.store import EventStore, open_store
from headwater.store.base import DeadLetter
from tests.factories import migration_versions, run_event

RECEIVED = "2024-06-01T00:00:00.0000000Z"


def letter(offset: int, topic: str = "openlineage.events", **changes: object) -> DeadLetter:
    values: dict[str, object] = {
        "topic": topic,
        "partition": 2,
        "offset": offset,
        "key": b"run:airflow/etl",
        "value": b'{"eventType": ',
        "error": "malformed JSON at line 1, column 15",
        "received_at": RECEIVED,
    }
    values.update(changes)
    return DeadLetter(**values)  # type: ignore[arg-type]


def test_dead_letters_are_kept_once_with_their_bytes(store: EventStore) -> None:
    odd = letter(7, key=None, value=b"\xff\x00\xfe not utf-8", error="bad \x00 byte")
    assert store.add_dead_letters([letter(5), letter(6, value=None), odd]) == 3
    assert store.add_dead_letters([letter(5), letter(8)]) == 1  # 5 again: redelivered, kept once
    assert store.add_dead_letters([]) == 0
    kept = store.dead_letters(topic=None, limit=10, before_id=None)
    assert [d.offset for d in kept] == [8, 7, 6, 5]
    assert kept[1].key is None and kept[1].value == b"\xff\x00\xfe not utf-8"
    assert kept[1].error == "bad \ufffd byte"  # PostgreSQL text holds no NUL
    assert kept[2].value is None and kept[3].key == b"run:airflow/etl"
    assert all(d.id is not None for d in kept)
    page = store.dead_letters(topic=None, limit=2, before_id=kept[1].id)
    assert [d.offset for d in page] == [6, 5]
    assert store.count_dead_letters(topic=None) == 4


def test_dead_letters_by_topic(store: EventStore) -> None:
    store.add_dead_letters([letter(1, topic="a"), letter(1, topic="b"), letter(2, topic="a")])
    assert [d.offset for d in store.dead_letters(topic="a", limit=10, before_id=None)] == [2, 1]
    assert store.count_dead_letters(topic="b") == 1
    assert store.count_dead_letters(topic="c") == 0


def test_a_version_1_store_is_upgraded_keeping_its_events(database_url: str) -> None:
    store = open_store(database_url, migrate=False)
    try:
        folder = resources.files(type(store).migrations_package)  # type: ignore[attr-defined]
        script = folder.joinpath("0001_events.sql").read_text()
        with store._writing() as cur:  # type: ignore[attr-defined]
            cur.execute(
                "CREATE TABLE schema_migrations "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            store._run_script(cur, script)  # type: ignore[attr-defined]
            cur.execute(store._sql("INSERT INTO schema_migrations VALUES (1, '0001_events', ?)"), (RECEIVED,))  # type: ignore[attr-defined]
            # an event as that release wrote it (whole payload)
            event = validate_event(run_event())
            cur.execute(
                store._sql(  # type: ignore[attr-defined]
                    "INSERT INTO events (event_id, kind, run_id, root_run_id, event_type, event_time, "
                    "job_namespace, job_name, producer, received_at, content_hash, payload) "
                    "VALUES (?, 'run', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                ),
                (
                    event.event_id,
                    event.run_id,
                    event.root_run_id,
                    event.event_type,
                    event.event_time,
                    event.job_namespace,
                    event.job_name,
                    event.producer,
                    RECEIVED,
                    event.content_hash,
                    event.payload,
                ),
            )
        assert store.schema_version() == 1
        assert store.migrate() == migration_versions()[1:]
        stored = store.get_event(event.event_id)
        assert stored is not None and stored.payload == event.payload
        assert store.append([event], RECEIVED) == [False]  # the same event, once
        assert store.add_dead_letters([letter(1)]) == 1
    finally:
        store.close()
