"""The pipeline's event reads (store/model/event_reads), on both backends: a seq range, and the
earlier events of the runs a range touches, each run's read once across a batch's parts."""

from __future__ import annotations

import uuid
from typing import Any

from headwater.events.validate import validate_event
from headwater.store.base import EventStore
from headwater.store.model.connections import connect
from headwater.store.model.event_reads import EVENT_COLUMNS, events_where, read_earlier, read_range

RECEIVED = "2026-01-01T00:00:00.0000000Z"
SEQ, RUN = EVENT_COLUMNS.index("seq"), EVENT_COLUMNS.index("run_id")


def _event(run_id: str, minute: int, event_type: str = "RUNNING") -> dict[str, Any]:
    return {
        "eventType": event_type,
        "eventTime": f"2026-01-01T00:{minute:02d}:00Z",
        "run": {"runId": run_id},
        "job": {"namespace": "etl", "name": f"job-{run_id[:4]}"},
        "producer": "https://example.com/test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }


def _store_runs(store: EventStore, order: list[str]) -> list[tuple[int, str]]:
    """Store one event per entry of `order` (a run's name), in that order: (seq, run name)."""
    ids = {name: str(uuid.uuid4()) for name in dict.fromkeys(order)}
    names = {run_id: name for name, run_id in ids.items()}
    for minute, name in enumerate(order):
        store.append([validate_event(_event(ids[name], minute))], RECEIVED)
    return [
        (seq, names[run_id]) for seq, run_id in _rows(store, lambda cur: read_range(cur, store.url, 0, 10**9))
    ]


def _rows(store: EventStore, run: Any) -> list[tuple[int, str]]:
    conn = connect(store.url)
    try:
        cur = conn.cursor()
        run(cur)
        return sorted((int(row[SEQ]), str(row[RUN])) for row in cur.fetchall())
    finally:
        conn.close()


def test_a_range_reads_the_events_above_its_low_and_up_to_its_high(store: EventStore) -> None:
    stored = _store_runs(store, ["a", "b", "a", "c", "b"])
    seqs = [seq for seq, _ in stored]
    assert len(seqs) == 5
    got = _rows(store, lambda cur: read_range(cur, store.url, seqs[1], seqs[3]))
    assert [seq for seq, _ in got] == seqs[2:4]
    assert _rows(store, lambda cur: read_range(cur, store.url, seqs[4], seqs[4] + 10)) == []


def test_earlier_events_of_touched_runs_are_read_once_from_the_part_holding_their_first_new_event(
    store: EventStore,
) -> None:
    # seq order: a b a c | b a a c — the batch is the last four, split into two parts of two
    stored = _store_runs(store, ["a", "b", "a", "c", "b", "a", "a", "c"])
    seqs = [seq for seq, _ in stored]
    name = dict(stored)
    low = seqs[3]
    first_part = _rows(store, lambda cur: read_earlier(cur, store.url, low, low, seqs[5]))
    second_part = _rows(store, lambda cur: read_earlier(cur, store.url, low, seqs[5], seqs[7]))
    # part one (b, a) reads the earlier events of b and a; part two (a, c) reads c's only: a is
    # part one's
    assert sorted(name[seq] for seq, _ in first_part) == ["a", "a", "b"]
    assert [name[seq] for seq, _ in second_part] == ["c"]
    assert all(seq <= low for seq, _ in first_part + second_part)
    # the whole batch as one part reads each touched run's earlier events once
    whole = _rows(store, lambda cur: read_earlier(cur, store.url, low, low, seqs[7]))
    assert whole == sorted(first_part + second_part)


def test_a_condition_picks_events_with_every_column_the_pipeline_reads(store: EventStore) -> None:
    stored = _store_runs(store, ["a", "b"])
    conn = connect(store.url)
    try:
        cur = conn.cursor()
        cur.execute(events_where(f"e.seq = {stored[1][0]}"))
        rows = cur.fetchall()
    finally:
        conn.close()
    assert len(rows) == 1 and len(rows[0]) == len(EVENT_COLUMNS)
    assert int(rows[0][SEQ]) == stored[1][0]
