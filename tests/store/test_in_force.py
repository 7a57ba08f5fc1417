"""The time-validity rule of facets (store/in_force_sql.py) against its definition, both backends.

Random assertions (repeated values, deletions, several assertions at the same time told apart by
seq) are written to the model's facet tables; every query must answer what the definition says:
the assertion in force at T is the latest by (valid_from, seq) with valid_from <= T, a deletion
meaning no value.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from headwater.store.base import EventStore
from headwater.store.in_force_sql import InForceQuery, facet_in_force, facets_in_force

NODES = [f"dataset:ns:d{i}" for i in range(6)]  # d5 has no facets at all
NAMES = ("schema", "dataSource", "columnLineage")
TIMES = [f"2026-01-0{day}T00:00:00Z" for day in range(1, 8)]
Assertion = tuple[str, str, str, int, str | None]  # node, name, valid_from, seq, value (None: deleted)


def _assertions(seed: int) -> list[Assertion]:
    rng = random.Random(seed)
    rows: list[Assertion] = []
    seq = 0
    for node in NODES[:5]:
        for name in rng.sample(NAMES, rng.randint(1, len(NAMES))):
            for _ in range(rng.randint(1, 12)):
                seq += 1
                value = None if rng.random() < 0.2 else f'{{"v": {rng.randint(1, 3)}}}'
                rows.append((node, name, rng.choice(TIMES[1:6]), seq, value))
    rng.shuffle(rows)  # stored in no particular order, as late events leave them
    return rows


def _load(store: EventStore, rows: list[Assertion]) -> None:
    with store.transaction() as cur:
        for node in NODES:
            cur.execute(
                store.sql(
                    "INSERT INTO datasets (node_id, namespace, name, created_at, updated_at) "
                    "VALUES (?, 'ns', ?, ?, ?)"
                ),
                (node, node.rsplit(":", 1)[1], TIMES[0], TIMES[0]),
            )
        for distinct in {row[4] for row in rows if row[4] is not None}:
            cur.execute(
                store.sql("INSERT INTO facet_values (hash, value) VALUES (?, ?)"), (f"h{distinct}", distinct)
            )
        for node, name, valid_from, seq, value in rows:
            cur.execute(
                store.sql(
                    "INSERT INTO dataset_facets (node_id, name, valid_from, seq, value_hash, deleted) "
                    "VALUES (?, ?, ?, ?, ?, ?)"
                ),
                (node, name, valid_from, seq, None if value is None else f"h{value}", int(value is None)),
            )


def _expected(rows: list[Assertion], as_of: str | None) -> dict[tuple[str, str], str]:
    """The definition: the latest assertion by (valid_from, seq) by `as_of`, deletions dropped."""
    latest: dict[tuple[str, str], Assertion] = {}
    for row in sorted(rows, key=lambda r: (r[2], r[3])):
        if as_of is None or row[2] <= as_of:
            latest[(row[0], row[1])] = row
    return {key: row[4] for key, row in latest.items() if row[4] is not None}


def _run(store: EventStore, query: InForceQuery, keys: list[str] | None) -> list[Any]:
    with store._reading() as cur:  # type: ignore[attr-defined]
        if keys is None:
            cur.execute(store.sql(query.sql), query.before)
            return list(cur.fetchall())
        return list(store._chunked(cur, query.sql, keys, *query.after, before=query.before))  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", [1, 2])
def test_in_force_queries_follow_the_rule(store: EventStore, seed: int) -> None:
    rows = _assertions(seed)
    _load(store, rows)
    asked = NODES[1:]  # one node with facets left out: not answered
    for as_of in [None, *TIMES]:
        expected = _expected(rows, as_of)
        wanted = {key: value for key, value in expected.items() if key[0] in asked}

        every_facet = _run(store, facets_in_force("dataset_facets", as_of), asked)
        assert {(node, name): value for node, name, value in every_facet} == wanted, as_of
        assert every_facet == sorted(every_facet)  # by node, then name

        for name in NAMES:
            one = {node: value for (node, facet), value in wanted.items() if facet == name}
            assert dict(_run(store, facet_in_force("dataset_facets", name, as_of), asked)) == one
            hashes = _run(store, facet_in_force("dataset_facets", name, as_of, value=False), asked)
            assert dict(hashes) == {node: f"h{value}" for node, value in one.items()}
            everywhere = _run(store, facet_in_force("dataset_facets", name, as_of, every=True), None)
            assert dict(everywhere) == {n: v for (n, f), v in expected.items() if f == name}


def test_an_assertion_at_the_same_time_wins_by_seq(store: EventStore) -> None:
    rows: list[Assertion] = [
        ("dataset:ns:d0", "schema", TIMES[2], 9, '{"v": 2}'),
        ("dataset:ns:d0", "schema", TIMES[2], 10, None),  # deleted at the same time, later
        ("dataset:ns:d1", "schema", TIMES[2], 12, '{"v": 1}'),
        ("dataset:ns:d1", "schema", TIMES[2], 11, '{"v": 3}'),
    ]
    _load(store, rows)
    found = dict(_run(store, facet_in_force("dataset_facets", "schema", None), NODES))
    assert found == {"dataset:ns:d1": '{"v": 1}'}
    before = _run(store, facets_in_force("dataset_facets", TIMES[1]), NODES)
    assert before == []
