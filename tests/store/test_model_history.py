"""The facet history's merge (headwater.store.model.history): a node's facet keeps its changes, its
first and last assertions, whatever order and batches the assertions arrive in, provided the
late windows' dropped assertions are staged again (the pipeline reads them back from events)."""

from __future__ import annotations

import random
from itertools import groupby
from typing import Any

from headwater.store.base import EventStore
from headwater.store.in_force_sql import facet_in_force
from headwater.store.model import late_nodes, mark_late, merge_facts, prepare_staging, stored_until
from tests.store.staged import DAY, model_rows, stage_by_hand

Assertion = tuple[str, str, str, int, str | None, int]  # node_id, name, valid_from, seq, hash, deleted
_HISTORY = "SELECT node_id, name, valid_from, seq, value_hash, deleted FROM dataset_facets"


def _kept(assertions: list[Assertion]) -> list[Assertion]:
    """The rule, over every assertion at once (what a rebuild keeps)."""
    out: list[Assertion] = []
    ordered = sorted(assertions, key=lambda a: (a[0], a[1], a[2], a[3]))
    for _pair, group in groupby(ordered, key=lambda a: (a[0], a[1])):
        rows = list(group)
        for i, row in enumerate(rows):
            prev = rows[i - 1] if i else None
            if prev is None or i == len(rows) - 1 or row[5] or prev[5] or row[4] != prev[4]:
                out.append(row)
    return sorted(out)


def _flagged(
    assertions: list[Assertion], *, changes_only: bool = False, until: str | None = None
) -> list[tuple[str, tuple[Any, ...]]]:
    """Staged rows with `repeated` as the pipeline sets it: the one before has the same value,
    neither is a deletion, and a later one follows (within the staged set). `changes_only`: the
    rows a large batch stages (`pipeline.frames.changes_to_stage`), without the repeated ones
    after one later than `until`, the latest stored assertion's time (None: none stored)."""
    ordered = sorted(assertions, key=lambda a: (a[0], a[1], a[2], a[3]))
    rows = []
    for i, a in enumerate(ordered):
        prev = ordered[i - 1] if i and ordered[i - 1][:2] == a[:2] else None
        follows = i + 1 < len(ordered) and ordered[i + 1][:2] == a[:2]
        same = prev is not None and prev[4] == a[4] and not prev[5] and not a[5]
        repeated = same and follows
        after = prev is not None and (until is None or prev[2] > until)
        if changes_only and repeated and after:
            continue
        rows.append(("dataset_facets", (*a, 1 if repeated else 0)))
    return rows


def _publish(
    store: EventStore,
    batch: list[Assertion],
    merged: list[Assertion],
    low: int,
    high: int,
    *,
    changes_only: bool = False,
) -> None:
    """Stage a batch (`changes_only`: as a large batch does), read back what `mark_late` asks for
    from the assertions merged before (as the pipeline reads back their events), and merge."""
    until = stored_until(store)["dataset_facets"]
    stage_by_hand(store, _flagged(batch, changes_only=changes_only, until=until))
    if mark_late(store):
        with store.transaction() as cur:
            cur.execute("SELECT node_id, name, from_time, to_time FROM stage_late_windows")
            windows = cur.fetchall()
        assert late_nodes(store) == sorted({w[0] for w in windows})
        again = [
            a for a in merged if any(a[0] == w[0] and a[1] == w[1] and w[2] <= a[2] <= w[3] for w in windows)
        ]
        stage_by_hand(store, _flagged(again))
    # what the next batch stages against while this one merges (pipeline.runner._Merging)
    until_merged = stored_until(store, staged=True)
    merge_facts(store, low, high)
    assert stored_until(store) == until_merged


def _at(second: int) -> str:
    return f"2026-01-01T00:{second // 60:02d}:{second % 60:02d}.0000000Z"


def test_repeated_assertions_keep_their_first_last_and_changes(store: EventStore) -> None:
    prepare_staging(store)
    node = "dataset:ns:a"
    first = [(node, "schema", DAY.format(d), d, "h1" if d < 3 else "h2", 0) for d in range(1, 6)]
    _publish(store, first, [], 0, 5)
    kept = [first[0], first[2], first[4]]  # first, the change, the last
    assert model_rows(store, _HISTORY) == sorted(kept)

    later = [(node, "schema", DAY.format(d), d, "h2", 0) for d in (6, 7)]
    _publish(store, later, first, 5, 7)
    assert model_rows(store, _HISTORY) == sorted([first[0], first[2], later[1]])  # the old last went

    gone = [(node, "schema", DAY.format(8), 8, None, 1), (node, "schema", DAY.format(9), 9, None, 1)]
    _publish(store, gone, first + later, 7, 9)
    # deletions stay, even repeated; the last h2 is no longer the last and repeats the one before
    assert model_rows(store, _HISTORY) == sorted([first[0], first[2], *gone])


def test_a_late_assertion_with_another_value_brings_back_the_one_after_it(store: EventStore) -> None:
    # h1 asserted at seconds 0, 10, ..., 50: the model keeps 0 and 50. A late h2 at 25 holds
    # until 30, where h1 holds again: 30 is kept from then on, read back
    prepare_staging(store)
    node = "dataset:ns:a"
    on_time = [(node, "schema", _at(s), i + 1, "h1", 0) for i, s in enumerate(range(0, 60, 10))]
    _publish(store, on_time, [], 0, 6)
    assert model_rows(store, _HISTORY) == [on_time[0], on_time[-1]]

    late = [(node, "schema", _at(25), 7, "h2", 0)]
    _publish(store, late, on_time, 6, 7)
    assert model_rows(store, _HISTORY) == sorted([on_time[0], late[0], on_time[3], on_time[-1]])
    with store.transaction() as cur:
        cur.execute(
            store.sql(
                "INSERT INTO datasets (node_id, namespace, name, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?)"
            ),
            (node, "ns", "a", _at(0), _at(50)),
        )
        for second, value in ((24, "h1"), (25, "h2"), (29, "h2"), (30, "h1"), (99, "h1")):
            query = facet_in_force("dataset_facets", "schema", _at(second), value=False)
            cur.execute(store.sql(query.sql.replace("{marks}", "?")), [*query.before, node])
            assert cur.fetchall() == [(node, value)], f"in force at {second} s"


def test_any_order_and_batching_keeps_what_all_the_assertions_at_once_keep(store: EventStore) -> None:
    prepare_staging(store)
    seq = 0
    for trial in range(12):
        rng = random.Random(trial)
        node = f"dataset:ns:t{trial}"
        arrived: list[Assertion] = []
        for _ in range(rng.randint(5, 40)):
            seq += 1
            value = rng.choice(["h1", "h1", "h1", "h2", "h3", None])
            name = rng.choice(["schema", "schema", "dataSource"])
            arrived.append((node, name, _at(rng.randint(0, 90)), seq, value, 1 if value is None else 0))
        merged: list[Assertion] = []
        low = arrived[0][3] - 1
        while len(merged) < len(arrived):
            batch = arrived[len(merged) : len(merged) + rng.randint(1, 8)]
            _publish(store, batch, merged, low, batch[-1][3])
            low = batch[-1][3]
            merged += batch
            rows: list[Any] = model_rows(store, f"{_HISTORY} WHERE node_id = '{node}'")
            assert rows == _kept(merged), f"trial {trial}, after {len(merged)} assertions"


def test_batches_staging_only_changes_keep_what_all_the_assertions_at_once_keep(store: EventStore) -> None:
    # as a large batch stages them: without the assertions repeating one later than every stored
    # one; assertions mostly arrive in time order, some late, some with the time of another
    prepare_staging(store)
    assert stored_until(store) == {"dataset_facets": None, "job_facets": None}
    seq, left_out, clock = 0, 0, 0  # one clock: the latest stored assertion is the table's
    for trial in range(12):
        rng = random.Random(100 + trial)
        node = f"dataset:ns:c{trial}"
        arrived: list[Assertion] = []
        for _ in range(rng.randint(10, 60)):
            seq += 1
            clock += rng.choice([0, 1, 1, 2])
            when = clock - rng.randint(1, 20) if rng.random() < 0.15 else clock
            value = rng.choice(["h1"] * 6 + ["h2", None])
            name = rng.choice(["schema", "schema", "dataSource"])
            arrived.append((node, name, _at(max(0, when)), seq, value, 1 if value is None else 0))
        merged: list[Assertion] = []
        low = arrived[0][3] - 1
        while len(merged) < len(arrived):
            batch = arrived[len(merged) : len(merged) + rng.randint(1, 12)]
            until = stored_until(store)["dataset_facets"]
            left_out += len(_flagged(batch)) - len(_flagged(batch, changes_only=True, until=until))
            _publish(store, batch, merged, low, batch[-1][3], changes_only=True)
            low = batch[-1][3]
            merged += batch
            rows: list[Any] = model_rows(store, f"{_HISTORY} WHERE node_id = '{node}'")
            assert rows == _kept(merged), f"trial {trial}, after {len(merged)} assertions"
            latest = max(row[2] for row in model_rows(store, _HISTORY))
            assert stored_until(store)["dataset_facets"] == latest
    assert left_out > 50  # the trials do leave rows out
