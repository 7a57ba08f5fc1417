"""The graph stage in the driver (pipeline/driver_graph.py): the answers test_graph.py expects of
Spark's, and the same tables as Spark's on random graphs with cycles, symlinks and parents."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pyspark.sql import DataFrame, SparkSession

from headwater.pipeline import driver_graph, ends, graph
from headwater.store.graph import ENDS_CAP, PAST_CAP
from tests.pipeline.test_graph import CYCLE_IO, CYCLE_SOURCES

SYMLINKS = "node_id string, alias_node_id string, alias_known int"
IO = "job_id string, version_id string, direction string, node_id string"
PARENTS = "parent_node_id string, child_node_id string"


def test_aliases_name_each_component_by_a_dataset_events_named() -> None:
    path = "dataset:hdfs://cluster:/user/hive/warehouse/t1"
    table = "dataset:hdfs://cluster/user/hive/warehouse:default.t1"
    links = [("dataset:s3:b", "dataset:hive:a", 1), ("dataset:x:c", "dataset:s3:b", 1), (path, table, 0)]
    assert dict(driver_graph.aliases(links)) == {
        "dataset:hive:a": "dataset:hive:a",
        "dataset:s3:b": "dataset:hive:a",
        "dataset:x:c": "dataset:hive:a",
        path: path,  # the table sorts first, but only a symlinks facet named it
        table: path,
    }
    assert {c for _, c in driver_graph.aliases([(path, table, 1)])} == {table}


def test_a_cycle_keeps_shortest_distances_and_has_no_destination() -> None:
    tables = driver_graph.graph_tables(
        [("dataset:n:b", "dataset:n:b2", 1)], CYCLE_IO, [("job:n:dag", "job:n:j1")]
    )
    assert ("job:n:j3", "dataset:n:b", "output", "job:n:j3", "v3") in tables.lineage_edges
    assert ("job:n:dag", "job:n:j1", "parent", "job:n:j1", None) in tables.lineage_edges
    assert len(tables.lineage_edges) == 8
    assert {(n, o, d) for n, k, o, d in tables.ultimate_nodes if k == "source"} == CYCLE_SOURCES
    assert not [row for row in tables.ultimate_nodes if row[1] == "destination"]
    assert dict(tables.dataset_depth) == {
        "dataset:n:a": 0,
        "dataset:n:d": 0,
        "dataset:n:b": 2,
        "dataset:n:c": 2,
    }


def _random_graph(rng: random.Random) -> tuple[list[Any], list[Any], list[Any]]:
    datasets = [f"dataset:ns:d{i}" for i in range(14)]
    jobs = [f"job:ns:j{i}" for i in range(7)]
    io = []
    for job in jobs:
        version = f"v-{job}"
        for node in rng.sample(datasets, rng.randint(0, 3)):
            io.append((job, version, "input", node))
        for node in rng.sample(datasets, rng.randint(0, 2)):
            io.append((job, version, "output", node))
    aliases = [f"dataset:hive:t{i}" for i in range(3)]
    symlinks = [
        (rng.choice(datasets), rng.choice(aliases + datasets), rng.randint(0, 1))
        for _ in range(rng.randint(0, 5))
    ]
    parents = [(rng.choice(jobs), rng.choice(jobs)) for _ in range(rng.randint(0, 3))]
    return symlinks, io, parents


def _rows(frame: DataFrame) -> set[tuple[Any, ...]]:
    return {tuple(row) for row in frame.collect()}


@pytest.mark.parametrize("cap", [ENDS_CAP, 2])
def test_the_driver_and_spark_build_the_same_graph_tables(spark: SparkSession, cap: int) -> None:
    rng = random.Random(11)
    past: set[str] = set()
    for _ in range(5):
        symlinks, io, parents = _random_graph(rng)
        here = driver_graph.graph_tables(symlinks, io, parents, cap)
        alias_map = graph.aliases(spark.createDataFrame(symlinks, SYMLINKS))
        edges = graph.lineage_edges(
            spark.createDataFrame(io, IO), spark.createDataFrame(parents, PARENTS), alias_map
        )
        ultimate = graph.ultimate_nodes(edges, cap)
        on_spark = {
            "dataset_aliases": _rows(alias_map),
            "lineage_edges": _rows(edges),
            "ultimate_nodes": _rows(ultimate),
            "dataset_depth": _rows(graph.dataset_depth(ultimate)),
        }
        assert {name: set(rows) for name, rows in here.by_table().items()} == on_spark
        assert all(len(rows) == len(set(rows)) for rows in here.by_table().values()), "no row twice"
        assert any(other != node for node, _, other, _ in here.ultimate_nodes), "dataset-to-dataset lineage"
        past.update(row[0] for row in here.ultimate_nodes if row[2] == PAST_CAP)
    assert bool(past) == (cap == 2), "a small cap leaves some datasets with the marker only"


def _walked_ends(edges: list[Any], cap: int) -> set[tuple[Any, ...]]:
    """The ultimate ends by the definition: a breadth-first walk back from each end of the
    condensed graph (each input of a job to each of its outputs but itself), then the marker
    for every dataset with more than `cap` ends of a kind."""
    inputs: dict[str, set[str]] = {}
    outputs: dict[str, set[str]] = {}
    for src, dst, kind, *_ in edges:
        if kind == "input":
            inputs.setdefault(dst, set()).add(src)
        elif kind == "output":
            outputs.setdefault(src, set()).add(dst)
    pairs = {(i, o) for job in inputs for i in inputs[job] for o in outputs.get(job, ()) if i != o}
    found: set[tuple[Any, ...]] = set()
    for kind, forward in (("source", False), ("destination", True)):
        after: dict[str, set[str]] = {}
        for src, dst in pairs:
            node, nxt = (dst, src) if forward else (src, dst)
            after.setdefault(node, set()).add(nxt)
        nodes = {n for pair in pairs for n in pair}
        before = {node for src, dst in pairs for node in ((src,) if forward else (dst,))}
        reached: dict[str, dict[str, int]] = {}
        for end in nodes - before:
            distance, queue = {end: 0}, [end]
            for here in queue:  # grows as it goes: breadth first
                for n in after.get(here, ()):
                    if n not in distance:
                        distance[n] = distance[here] + 1
                        queue.append(n)
            for node, steps in distance.items():
                reached.setdefault(node, {})[end] = steps
        for node, reached_ends in reached.items():
            found |= (
                {(node, kind, PAST_CAP, -1)}
                if len(reached_ends) > cap
                else {(node, kind, e, d) for e, d in reached_ends.items()}
            )
    return found


@pytest.mark.parametrize("cap", [ENDS_CAP, 3, 1])
def test_ends_found_through_the_jobs_are_those_of_the_condensed_graph(cap: int) -> None:
    rng = random.Random(5)
    for _ in range(200):
        symlinks, io, parents = _random_graph(rng)
        tables = driver_graph.graph_tables(symlinks, io, parents, cap)
        assert set(tables.ultimate_nodes) == _walked_ends(tables.lineage_edges, cap)


def test_a_graph_with_more_ends_than_the_budget_is_left_to_spark() -> None:
    rng = random.Random(8)
    for _ in range(50):
        symlinks, io, parents = _random_graph(rng)
        tables = driver_graph.graph_tables(symlinks, io, parents)
        rows = len(tables.ultimate_nodes)
        # the budget counts the jobs' ends too (what the propagation holds): a budget of every
        # row and every job's ends is enough; of fewer rows than the tables have, it is not
        enough = rows + 2 * len({job for job, *_ in io}) * len({row[3] for row in io})
        assert driver_graph.graph_tables(symlinks, io, parents, budget=enough) == tables
        if rows:
            with pytest.raises(ends.OverBudget):
                driver_graph.graph_tables(symlinks, io, parents, budget=rows - 1)
