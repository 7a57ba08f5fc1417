"""bench/model_gen.py, the bulk loader of the query benchmark, builds a model the pipeline could
have published: checked on a tiny model, on both backends, against plain-Python oracles."""

from __future__ import annotations

import importlib.util
import sys
from collections import deque
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest

from headwater.store import EventStore

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _model_gen() -> ModuleType:
    if "model_gen" not in sys.modules:  # a plain module of bench/, not a package
        spec = importlib.util.spec_from_file_location("model_gen", BENCH / "model_gen.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["model_gen"] = module
        spec.loader.exec_module(module)
    return sys.modules["model_gen"]


def _rows(store: EventStore, query: str) -> list[tuple[Any, ...]]:
    with store.transaction() as cur:
        cur.execute(query)
        return [tuple(row) for row in cur.fetchall()]


@pytest.fixture
def model(store: EventStore) -> Any:
    gen = _model_gen()
    shape = gen.Shape(datasets=300, jobs=150, runs=3_000, seed=7)
    return shape, gen.load(store, shape, progress=lambda _step: None, bars=False)


def _ends(neighbours: dict[str, set[str]], start: str) -> dict[str, int]:
    """Breadth-first from `start`: the nodes with no further neighbour, at their shortest distance."""
    seen, queue, ends = {start: 0}, deque([start]), {}
    while queue:
        node = queue.popleft()
        if not neighbours.get(node):
            ends[node] = seen[node]
        for other in neighbours.get(node, ()):
            if other not in seen:
                seen[other] = seen[node] + 1
                queue.append(other)
    return ends


def test_sizes_and_nodes(store: EventStore, model: Any) -> None:
    shape, built = model
    datasets = {r[0] for r in _rows(store, "SELECT node_id FROM datasets")}
    canonical = dict(_rows(store, "SELECT node_id, canonical_id FROM dataset_aliases"))
    jobs = {r[0] for r in _rows(store, "SELECT node_id FROM jobs")}
    assert len(jobs) == shape.jobs
    assert _rows(store, "SELECT COUNT(*) FROM runs")[0][0] == shape.runs
    assert len(datasets) == shape.datasets + shape.datasets // 100  # 1% have a second name
    assert set(built.datasets) | set(canonical) == datasets
    # aliases: both names of a pair map to the smaller, which is a dataset; symlinks say the same
    for node, target in canonical.items():
        assert target in datasets and target <= node and canonical[target] == target
    symlinks = _rows(store, "SELECT node_id, alias_node_id FROM dataset_symlinks")
    assert symlinks and all(canonical[a] == n for n, a in symlinks)
    # every edge joins existing nodes, datasets by their canonical id, jobs at their current version
    current = dict(_rows(store, "SELECT node_id, current_version FROM jobs"))
    edges = _rows(store, "SELECT src_id, dst_id, edge_type, job_id, version_id FROM lineage_edges")
    for src, dst, kind, job, version in edges:
        dataset, other = (src, dst) if kind == "input" else (dst, src)
        assert kind in ("input", "output") and other == job and job in jobs
        assert dataset in datasets and canonical.get(dataset, dataset) == dataset
        assert version == current[job]
    io = _rows(
        store,
        "SELECT j.node_id, v.direction, v.node_id FROM jobs j "
        "JOIN job_version_io v ON v.version_id = j.current_version",
    )
    assert {
        (canonical.get(n, n), j, "input") if d == "input" else (j, canonical.get(n, n), "output")
        for j, d, n in io
    } == {e[:3] for e in edges}
    assert any(n != canonical.get(n, n) for _, _, n in io)  # some jobs read a dataset by its alias


def test_ultimate_nodes_and_depth(store: EventStore, model: Any) -> None:
    edges = _rows(store, "SELECT src_id, dst_id, edge_type FROM lineage_edges")
    ins = [(s, d) for s, d, k in edges if k == "input"]
    outs = [(s, d) for s, d, k in edges if k == "output"]
    pairs = {(a, c) for a, j in ins for j2, c in outs if j == j2 and a != c}
    up: dict[str, set[str]] = {}
    down: dict[str, set[str]] = {}
    for src, dst in pairs:
        up.setdefault(dst, set()).add(src)
        down.setdefault(src, set()).add(dst)
    nodes = set(up) | set(down)
    expected = {
        (node, kind, end, distance)
        for kind, neighbours in (("source", up), ("destination", down))
        for node in nodes
        for end, distance in _ends(neighbours, node).items()
    }
    stored = set(_rows(store, "SELECT node_id, kind, other_id, distance FROM ultimate_nodes"))
    assert stored == expected
    sources = [row for row in stored if row[1] == "source"]
    assert all(not up.get(end) for _, _, end, _ in sources)  # an ultimate source has no upstream
    assert {(n, e) for n, _, e, d in sources if d == 0} == {(n, n) for n in nodes if not up.get(n)}
    assert max(d for *_, d in stored) >= 20  # deep enough for lineage at depth 20
    deepest: dict[str, int] = {}
    for node, _, _, distance in sources:
        deepest[node] = max(distance, deepest.get(node, 0))
    assert dict(_rows(store, "SELECT node_id, depth FROM dataset_depth")) == deepest


def test_versions_in_force(store: EventStore, model: Any) -> None:
    runs = _rows(store, "SELECT job_node_id, run_id, first_event_time, job_version FROM runs")
    versions = {
        v: (job, created, updated, count)
        for v, job, created, updated, count in _rows(
            store, "SELECT version_id, node_id, created_at, updated_at, run_count FROM job_versions"
        )
    }
    jobs = {
        j: (cv, latest)
        for j, cv, latest in _rows(store, "SELECT node_id, current_version, latest_run_id FROM jobs")
    }
    by_job: dict[str, list[tuple[str, str, str]]] = {}
    for job, run_id, first, version in runs:
        assert versions[version][0] == job
        by_job.setdefault(job, []).append((first, run_id, version))
    changed = 0
    for job, own in by_job.items():
        own.sort()
        # the version in force at T is the version of the latest run with first_event_time <= T:
        # versions follow one another in order of creation and never come back
        order = [v for n, (_, _, v) in enumerate(own) if n == 0 or own[n - 1][2] != v]
        assert order == sorted(set(order), key=lambda v: versions[v][1])
        changed += len(order) > 1
        for version in order:
            used = [first for first, _, v in own if v == version]
            assert (versions[version][1], versions[version][3]) == (min(used), len(used))
        assert jobs[job] == (own[-1][2], own[-1][1])
    assert changed > len(by_job) // 5  # time travel has something to find
    # every version reads and writes something
    io = {
        v for (v,) in _rows(store, "SELECT DISTINCT version_id FROM job_version_io WHERE direction = 'input'")
    }
    assert io == set(versions)


def test_facets_and_column_lineage(store: EventStore, model: Any) -> None:
    _, built = model
    values = dict(_rows(store, "SELECT hash, value FROM facet_values"))
    facets = _rows(store, "SELECT node_id, name, value_hash FROM dataset_facets")
    schema = {
        n: {f["name"] for f in orjson.loads(values[h])["fields"]} for n, name, h in facets if name == "schema"
    }
    assert set(schema) == set(built.datasets) and all(5 <= len(f) <= 20 for f in schema.values())
    lineage = {h: n for n, name, h in facets if name == "columnLineage"}
    assert set(lineage.values()) == set(built.written)
    expected = set()
    for value_hash, node in lineage.items():
        for out_field, entry in orjson.loads(values[value_hash])["fields"].items():
            assert out_field in schema[node]
            for pick in entry["inputFields"]:
                source = f"dataset:{pick['namespace']}:{pick['name']}"
                assert pick["field"] in schema[source]
                assert pick["transformations"][0]["type"] == "DIRECT"
                expected.add((value_hash, out_field, source, pick["field"]))
    stored = _rows(store, "SELECT facet_hash, field, input_node_id, input_field, type FROM column_lineage")
    assert {r[:4] for r in stored} == expected
    assert {r[4] for r in stored} == {"DIRECT"}
