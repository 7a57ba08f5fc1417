"""The graph stage of a small graph, computed in the driver: the same four tables by the same
rules as `graph.py`, without Spark.

On Spark each propagation round of `graph.py` is a job of its own, and staging the results is
another: about 2-3 s of a pass over a few events, whatever the graph's size. A graph whose inputs
fit in a few thousand rows takes milliseconds here. The rules, and where each is defined for
Spark:

- aliases (`graph.aliases`): datasets joined by symlinks, each component named by its smallest
  label ("0" + id for a dataset events named, "1" + id for a name only a symlinks facet gave);
- lineage edges (`graph.lineage_edges`): input dataset → job, job → output dataset (datasets by
  their canonical id), parent job → child job; one edge per (src, dst, type);
- ultimate nodes (`graph.ultimate_nodes`): for each dataset of the condensed graph (each input of
  a job to each of its outputs but itself), the ends reached upstream (`source`) and downstream
  (`destination`) with the shortest distance; a dataset with no neighbour on a side is its own
  end at distance 0; past ENDS_CAP ends, one marker row. Found, here and on Spark, through the
  jobs, never through the condensed edges themselves (`ends`);
- depth (`graph.dataset_depth`): the longest of those shortest distances to a source.

tests/pipeline/test_driver_graph.py checks both give the same tables.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from headwater.pipeline import ends
from headwater.store.graph import ENDS_CAP

Row = tuple[Any, ...]


def aliases(symlinks: Iterable[tuple[str, str, int]]) -> list[Row]:
    """(node_id, canonical_id) of every dataset a symlink names, from rows (node_id,
    alias_node_id, alias_known)."""
    parent: dict[str, str] = {}
    known: dict[str, bool] = {}

    def root(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for node, alias, alias_known in symlinks:
        for name in (node, alias):
            parent.setdefault(name, name)
        known[node] = True
        known[alias] = known.get(alias, False) or alias_known == 1
        a, b = root(node), root(alias)
        if a != b:
            parent[a] = b
    label = {name: ("0" if known[name] else "1") + name for name in parent}
    smallest: dict[str, str] = {}
    for name in parent:
        top = root(name)
        if top not in smallest or label[name] < smallest[top]:
            smallest[top] = label[name]
    return [(name, smallest[root(name)][1:]) for name in parent]


def lineage_edges(
    current_io: Iterable[tuple[str, str, str, str]],
    parents: Iterable[tuple[str, str]],
    alias_map: dict[str, str],
) -> list[Row]:
    """(src_id, dst_id, edge_type, job_id, version_id) from the jobs' current inputs and outputs
    (job_id, version_id, direction, node_id) and the parent jobs (parent, child)."""
    edges: dict[tuple[str, str, str], Row] = {}
    for job, version, direction, node in current_io:
        dataset = alias_map.get(node, node)
        if direction == "input":
            edges.setdefault((dataset, job, "input"), (dataset, job, "input", job, version))
        elif direction == "output":
            edges.setdefault((job, dataset, "output"), (job, dataset, "output", job, version))
    for parent, child in parents:
        edges.setdefault((parent, child, "parent"), (parent, child, "parent", child, None))
    return list(edges.values())


def ultimate_nodes(edges: Iterable[Row], cap: int = ENDS_CAP, budget: int | None = None) -> list[Row]:
    """(node_id, kind, other_id, distance) from the lineage edges: every end each dataset of the
    condensed graph reaches upstream (kind `source`) and downstream (`destination`), at the
    shortest distance (in a cycle a node keeps its shortest path, and a cycle no end leads into
    has none); past `cap` ends, the marker row (`ends`). Raises `ends.OverBudget` once more than
    `budget` ends (rows and ends held by the propagation together) are found."""
    graph = ends.Bipartite(edges)
    nodes = {*graph.inputs, *graph.outputs, *graph.readers, *graph.writers}
    out: list[Row] = []
    for kind in ("source", "destination"):
        left = None if budget is None else budget - len(out)
        out += ends.rows(ends.propagate(nodes, graph.side(kind), lambda _outside: {}, cap, left), kind)
    return out


def dataset_depth(ultimate: Iterable[Row]) -> list[Row]:
    """(node_id, depth): the longest of a dataset's shortest distances to its ultimate sources
    (none past the cap)."""
    sources: dict[str, dict[str, int]] = defaultdict(dict)
    for node, kind, other, distance in ultimate:
        if kind == "source":
            sources[node][other] = distance
    return [(node, far) for node, reached in sources.items() if (far := ends.depth(reached)) is not None]


@dataclass(frozen=True)
class GraphTables:
    """The four graph tables' rows, in `headwater.store.model.GRAPH_TABLES`' column order."""

    dataset_aliases: list[Row]
    lineage_edges: list[Row]
    ultimate_nodes: list[Row]
    dataset_depth: list[Row]

    def by_table(self) -> dict[str, list[Row]]:
        return {
            "dataset_aliases": self.dataset_aliases,
            "lineage_edges": self.lineage_edges,
            "ultimate_nodes": self.ultimate_nodes,
            "dataset_depth": self.dataset_depth,
        }


def graph_tables(
    symlinks: Iterable[tuple[str, str, int]],
    current_io: Iterable[tuple[str, str, str, str]],
    parents: Iterable[tuple[str, str]],
    cap: int = ENDS_CAP,
    budget: int | None = None,
) -> GraphTables:
    """Every graph table from the graph stage's three inputs (see `runner.Pipeline._graph`);
    raises `ends.OverBudget` when the ultimate ends come to more than `budget` rows."""
    alias_rows = aliases(symlinks)
    edges = lineage_edges(current_io, parents, dict(alias_rows))
    ultimate = ultimate_nodes(edges, cap, budget)
    return GraphTables(alias_rows, edges, ultimate, dataset_depth(ultimate))
