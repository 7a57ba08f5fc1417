"""The graph edited in place (pipeline/graph_delta.py): after random changes to random graphs
(cycles, jobs that read what they write, symlinks, parents, jobs gone), the edited tables equal
the whole graph computed afresh, in memory and in both stores."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from headwater.pipeline import driver_graph, graph_delta
from headwater.store import model
from headwater.store.base import EventStore
from headwater.store.graph import ENDS_CAP, PAST_CAP
from headwater.store.model import GraphEdit
from headwater.store.model.graph_inputs import GraphInputs, PublishedGraph, published_ends, published_graph

Row = tuple[Any, ...]
DATASETS = [f"dataset:ns:d{i:02}" for i in range(24)]
ALIASES = [f"dataset:hive:t{i}" for i in range(3)]
JOBS = [f"job:ns:j{i:02}" for i in range(12)]


def _job_io(rng: random.Random, job: str, version: str) -> list[Row]:
    rows = [(job, version, "input", node) for node in rng.sample(DATASETS, rng.randint(0, 3))]
    return rows + [(job, version, "output", node) for node in rng.sample(DATASETS, rng.randint(0, 2))]


def _random_inputs(rng: random.Random) -> GraphInputs:
    io = [row for job in JOBS for row in _job_io(rng, job, "v0")]
    symlinks = [
        (rng.choice(DATASETS), rng.choice(ALIASES + DATASETS), rng.randint(0, 1))
        for _ in range(rng.randint(0, 3))
    ]
    parents = [(rng.choice(JOBS), rng.choice(JOBS)) for _ in range(rng.randint(0, 3))]
    return GraphInputs(symlinks, io, parents)


def _changed(rng: random.Random, inputs: GraphInputs, step: int) -> GraphInputs:
    """A pass's worth of change: a few jobs with a new version (other inputs and outputs, or
    none), and now and then a symlink or a parent more or fewer."""
    io = list(inputs.current_io)
    for job in rng.sample(JOBS, rng.randint(1, 3)):
        io = [row for row in io if row[0] != job] + _job_io(rng, job, f"v{step}")
    symlinks, parents = list(inputs.symlinks), list(inputs.parents)
    if rng.random() < 0.3:
        symlinks.append((rng.choice(DATASETS), rng.choice(ALIASES + DATASETS), rng.randint(0, 1)))
    if rng.random() < 0.2 and symlinks:
        symlinks.remove(rng.choice(symlinks))
    if rng.random() < 0.2:
        parents.append((rng.choice(JOBS), rng.choice(JOBS)))
    return GraphInputs(symlinks, io, parents)


def _tables(inputs: GraphInputs, cap: int = ENDS_CAP) -> dict[str, set[Row]]:
    whole = driver_graph.graph_tables(inputs.symlinks, inputs.current_io, inputs.parents, cap)
    return {name: set(rows) for name, rows in whole.by_table().items()}


def _apply(tables: dict[str, set[Row]], edits: list[GraphEdit]) -> None:
    """The edits on in-memory tables, as `model.edit_graph` applies them in SQL."""
    for edit in edits:
        columns = model.TABLES[edit.table].columns
        at = [columns.index(column) for column in edit.by]
        doomed = set(edit.delete)
        tables[edit.table] = {row for row in tables[edit.table] if tuple(row[i] for i in at) not in doomed}
        assert not set(edit.insert) & tables[edit.table], f"{edit.table}: a row inserted twice"
        tables[edit.table] |= set(edit.insert)


def _ends_of(tables: dict[str, set[Row]]) -> graph_delta.EndsReader:
    def read(nodes: Any, kind: str) -> dict[str, dict[str, int]]:
        found: dict[str, dict[str, int]] = {node: {} for node in nodes}
        for node, row_kind, other, distance in tables["ultimate_nodes"]:
            if row_kind == kind and node in found:
                found[node][other] = distance
        return found

    return read


@pytest.mark.parametrize("cap", [ENDS_CAP, 2])
def test_edits_after_random_changes_give_the_graph_computed_afresh(cap: int) -> None:
    rng = random.Random(7)
    edited_rows = whole_rows = past_cap = 0
    for _ in range(40):
        inputs = _random_inputs(rng)
        tables = _tables(inputs, cap)
        for step in range(1, 6):
            inputs = _changed(rng, inputs, step)
            published = PublishedGraph(list(tables["dataset_aliases"]), list(tables["lineage_edges"]), inputs)
            edits = graph_delta.graph_edits(published, _ends_of(tables), cap=cap)
            assert edits is not None
            _apply(tables, edits)
            expected = _tables(inputs, cap)
            assert tables == expected
            edited_rows += sum(len(e.insert) for e in edits)
            whole_rows += sum(len(rows) for rows in expected.values())
            past_cap += sum(1 for row in expected["ultimate_nodes"] if row[2] == PAST_CAP)
    assert edited_rows < whole_rows / 2, "a pass rewrites what its change reaches, not the whole graph"
    assert (past_cap > 0) == (cap == 2), "a small cap leaves some datasets with the marker"


def test_a_cycle_no_end_leads_into_keeps_no_ends_and_gains_them_when_one_does() -> None:
    cycle = [("job:n:a", "v", "input", "dataset:n:x"), ("job:n:a", "v", "output", "dataset:n:y")]
    cycle += [("job:n:b", "v", "input", "dataset:n:y"), ("job:n:b", "v", "output", "dataset:n:x")]
    before = GraphInputs([], cycle, [])
    tables = _tables(before)
    assert not {row for row in tables["ultimate_nodes"] if row[1] == "source"}
    into = [("job:n:c", "v", "input", "dataset:n:w"), ("job:n:c", "v", "output", "dataset:n:x")]
    after = GraphInputs([], cycle + into, [])
    published = PublishedGraph(list(tables["dataset_aliases"]), list(tables["lineage_edges"]), after)
    edits = graph_delta.graph_edits(published, _ends_of(tables))
    assert edits is not None
    _apply(tables, edits)
    assert tables == _tables(after)
    sources = {(n, o, d) for n, k, o, d in tables["ultimate_nodes"] if k == "source"}
    assert sources == {
        ("dataset:n:w", "dataset:n:w", 0),
        ("dataset:n:x", "dataset:n:w", 1),
        ("dataset:n:y", "dataset:n:w", 2),
    }


def test_a_change_that_reaches_more_than_the_bound_is_left_to_the_whole_stage() -> None:
    chain = [
        row
        for i in range(30)
        for row in (
            (f"job:n:j{i}", "v", "input", f"dataset:n:d{i}"),
            (f"job:n:j{i}", "v", "output", f"dataset:n:d{i + 1}"),
        )
    ]
    tables = _tables(GraphInputs([], chain, []))
    top = [("job:n:top", "v", "input", "dataset:n:root"), ("job:n:top", "v", "output", "dataset:n:d0")]
    published = PublishedGraph([], list(tables["lineage_edges"]), GraphInputs([], chain + top, []))
    assert graph_delta.graph_edits(published, _ends_of(tables), max_nodes=20) is None
    assert graph_delta.graph_edits(published, _ends_of(tables), max_nodes=200) is not None
    # the root becomes a source of every dataset and job of the chain: over 60 ends held, not 200
    assert graph_delta.graph_edits(published, _ends_of(tables), max_ends=60) is None
    assert graph_delta.graph_edits(published, _ends_of(tables), max_ends=200) is not None


def _published_rows(store: EventStore) -> dict[str, set[Row]]:
    found = {}
    with store.transaction() as cur:
        for table in model.GRAPH_TABLES:
            cur.execute(f"SELECT {', '.join(table.columns)} FROM {table.name}")
            found[table.name] = {tuple(row) for row in cur.fetchall()}
    return found


def test_the_store_edits_its_graph_tables_to_the_graph_computed_afresh(store: EventStore) -> None:
    rng = random.Random(3)
    inputs = _random_inputs(rng)
    model.read_state(store)  # the pipeline's state row
    assert published_graph(store) is None, "a graph never published is not edited"
    model.replace_graph_rows(store, driver_graph.graph_tables(*dataclasses.astuple(inputs)).by_table(), 1)
    for step in range(1, 8):
        inputs = _changed(rng, inputs, step)
        published = published_graph(store)
        assert published is not None
        edits = graph_delta.graph_edits(
            dataclasses.replace(published, inputs=inputs),
            lambda nodes, kind: published_ends(store, nodes, kind),
        )
        assert edits is not None
        model.edit_graph(store, edits, 1 + step)
        assert _published_rows(store) == _tables(inputs)
        assert model.read_state(store)[1] == 1 + step


@pytest.mark.parametrize("names", [("dataset_aliases", "lineage_edges")])
def test_a_graph_published_in_part_is_computed_afresh(store: EventStore, names: tuple[str, ...]) -> None:
    """The edges published without their ends (the Spark graph stage's first transaction, then a
    crash): the graph is not whole, and the next pass must not edit it."""
    model.read_state(store)
    model.replace_graph_rows(store, driver_graph.graph_tables([], [], []).by_table(), 5)
    assert published_graph(store) is not None
    model.prepare_staging(store)
    model.replace_graph(store, names)
    assert published_graph(store) is None
