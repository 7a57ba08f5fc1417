"""Lineage queries on the generated, realistic demo lineage (headwater.demo) built by the real
pipeline, checked against a plain-Python oracle that reads the whole published edge table."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from headwater.demo.lineage import DemoShape, demo_events
from headwater.query.lineage import LineageQuery, lineage, ultimate
from headwater.store import EventStore
from tests.pipeline.rows import CONDENSED_SQL
from tests.query.conftest import published


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def demo(
    request: pytest.FixtureRequest, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EventStore]:
    with published(
        request, spark, tmp_path_factory, demo_events(DemoShape(jobs=20, runs_per_job=2))
    ) as store:
        yield store


def rows(store: EventStore, sql: str) -> list[tuple[str, ...]]:
    with store.transaction() as cur:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()]


def oracle(edges: list[tuple[str, str]], root: str, direction: str, hops: int) -> set[tuple[str, str]]:
    """Edges reachable from root within `hops` edges, walking only one way per direction."""
    found: set[tuple[str, str]] = set()
    for way in ("up", "down") if direction == "both" else (direction,):
        seen, level = {root}, [root]
        for _ in range(hops):
            following = []
            for node in level:
                for src, dst in edges:
                    here, other = (dst, src) if way == "up" else (src, dst)
                    if here == node:
                        found.add((src, dst))
                        if other not in seen:
                            seen.add(other)
                            following.append(other)
            level = following
    return found


@pytest.mark.parametrize("depth", [1, 2, 20])
def test_lineage_matches_a_walk_over_every_edge(demo: EventStore, depth: int) -> None:
    edges = rows(demo, "SELECT src_id, dst_id FROM lineage_edges WHERE edge_type IN ('input', 'output')")
    nodes = sorted({n for edge in edges for n in edge})
    assert len(nodes) > 30
    for root in nodes[:: max(1, len(nodes) // 25)]:
        hops = 2 * depth + (1 if root.startswith("job:") else 0)
        for direction, way in (("upstream", "up"), ("downstream", "down"), ("both", "both")):
            got = lineage(demo, LineageQuery(root, direction, depth=depth))  # type: ignore[arg-type]
            assert {(e.src, e.dst) for e in got.edges} == oracle(edges, root, way, hops), (root, direction)
            assert not got.truncated


def test_ultimate_ends_agree_with_a_walk_for_every_dataset(demo: EventStore) -> None:
    datasets = sorted({n for edge in rows(demo, CONDENSED_SQL) for n in edge})
    far_future = "2100-01-01T00:00:00.0000000Z"
    for dataset in datasets:
        for kind in ("source", "destination"):
            stored = ultimate(demo, dataset, kind)  # type: ignore[arg-type]
            walked = ultimate(demo, dataset, kind, as_of=far_future)  # type: ignore[arg-type]
            assert {n: x.distance for n, x in stored.nodes.items()} == {
                n: x.distance for n, x in walked.nodes.items()
            }, (dataset, kind)


def test_the_limit_holds_and_every_edge_joins_nodes_of_the_answer(demo: EventStore) -> None:
    roots = [r[0] for r in rows(demo, "SELECT node_id FROM jobs ORDER BY node_id")]
    for root in roots:
        for limit in (1, 3, 10):
            got = lineage(demo, LineageQuery(root, "both", limit=limit))
            assert len(got.nodes) <= limit
            assert all(e.src in got.nodes and e.dst in got.nodes for e in got.edges)
            if got.truncated:
                assert got.expandable
