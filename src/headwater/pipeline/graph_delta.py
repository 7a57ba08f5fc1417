"""The graph stage of a pass that changed a little: the published graph tables updated in place.

A pass over a few events changes a few jobs' current inputs and outputs, yet a full graph stage
recomputes all five tables: seconds on a graph of a few thousand datasets, and on a larger one
(when Spark computes it) one Spark job per step of the longest path, minutes in all. Here the
driver computes the new aliases and lineage edges (linear in the graph: `driver_graph`'s rules),
compares them with the published ones, and recomputes only what the difference reaches:

- the condensed edges of each job whose inputs or outputs changed, as before and as now;
- the ultimate sources of every dataset downstream of a changed condensed edge's target, and the
  ultimate destinations of every dataset upstream of its source. The ends of any other dataset
  depend only on a part of the graph that did not change, so they stay as published, and those
  next to a recomputed dataset seed its propagation;
- the depth of each dataset whose sources were recomputed.

Only the rows that differ from the published ones are written: a change near the top of a
graph reaches many datasets whose ends are mostly the same.

When the difference reaches more than `max_nodes` datasets, or the changed jobs have more than
`max_condensed` condensed edges (inputs times outputs: one very wide job), `graph_edits` gives up
(None) and the caller computes the whole graph. tests/pipeline/test_graph_delta.py checks that the tables
equal a full recompute after random changes, cycles and symlinks included.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from headwater.pipeline import driver_graph, ends
from headwater.store.graph import ENDS_CAP
from headwater.store.model.graph_inputs import PublishedGraph
from headwater.store.model.merge import GraphEdit

Row = tuple[Any, ...]
Kind = Literal["source", "destination"]
# the published ends of datasets: node → {end: distance}
EndsReader = Callable[[Sequence[str], Kind], dict[str, dict[str, int]]]

MAX_NODES = 20_000  # datasets whose ends a pass recomputes here, at most (else the full stage)
MAX_CONDENSED = 200_000  # condensed edges of the changed jobs compared here, at most (idem)


class _Bipartite:
    """Datasets and jobs from the lineage edges: the condensed graph's neighbours of a dataset
    (through the jobs next to it), without building the condensed edges."""

    def __init__(self, edges: Iterable[Row]) -> None:
        self.inputs: dict[str, set[str]] = defaultdict(set)  # job → datasets it reads
        self.outputs: dict[str, set[str]] = defaultdict(set)  # job → datasets it writes
        self.readers: dict[str, set[str]] = defaultdict(set)  # dataset → jobs reading it
        self.writers: dict[str, set[str]] = defaultdict(set)  # dataset → jobs writing it
        for src, dst, edge_type, *_ in edges:
            if edge_type == "input":
                self.inputs[dst].add(src)
                self.readers[src].add(dst)
            elif edge_type == "output":
                self.outputs[src].add(dst)
                self.writers[dst].add(src)

    def condensed(self, job: str) -> set[Row]:
        """(src_id, dst_id, job_id) of one job: each input to each output."""
        outputs = self.outputs.get(job, set())
        return {(src, dst, job) for src in self.inputs.get(job, ()) for dst in outputs if src != dst}

    def pairs(self, jobs: Iterable[str]) -> int:
        """How many condensed edges the jobs have, at most (inputs times outputs)."""
        return sum(len(self.inputs.get(job, ())) * len(self.outputs.get(job, ())) for job in jobs)

    def upstream(self, node: str) -> set[str]:
        return {src for job in self.writers.get(node, ()) for src in self.inputs[job] if src != node}

    def downstream(self, node: str) -> set[str]:
        return {dst for job in self.readers.get(node, ()) for dst in self.outputs[job] if dst != node}


def graph_edits(
    published: PublishedGraph,
    read_ends: EndsReader,
    *,
    max_nodes: int = MAX_NODES,
    max_condensed: int = MAX_CONDENSED,
    cap: int = ENDS_CAP,
) -> list[GraphEdit] | None:
    """The edits that make the published graph (its aliases and lineage edges, and the ends
    `read_ends` gives) the graph of `published.inputs`, in the order they apply; None when more
    than `max_nodes` datasets' ends would change, or the changed jobs are too wide. `cap`: see
    `ends`."""
    inputs = published.inputs
    alias_rows = driver_graph.aliases(inputs.symlinks)
    edge_rows = driver_graph.lineage_edges(inputs.current_io, inputs.parents, dict(alias_rows))
    before_edges = set(published.edges)
    gone_edges, new_edges = _diff(before_edges, set(edge_rows))
    jobs = {row[3] for row in (*gone_edges, *new_edges) if row[2] in ("input", "output")}
    before, after = _Bipartite(before_edges), _Bipartite(edge_rows)
    if before.pairs(jobs) + after.pairs(jobs) > max_condensed:
        return None
    gone, new = _diff(
        {row for job in jobs for row in before.condensed(job)},
        {row for job in jobs for row in after.condensed(job)},
    )
    # a changed edge's target and what lies downstream of it may reach other sources; its own
    # source only enters or leaves the graph (a dataset in no condensed edge has no ends)
    heads, tails = {src for src, _, _ in (*gone, *new)}, {dst for _, dst, _ in (*gone, *new)}
    sources = _closure(tails, after.downstream, max_nodes)
    destinations = _closure(heads, after.upstream, max_nodes - len(sources or ()))
    if (
        sources is None
        or destinations is None
        or len(sources | heads) + len(destinations | tails) > max_nodes
    ):
        return None
    sources |= heads
    destinations |= tails
    gone_ends: list[Row] = []
    new_ends: list[Row] = []
    gone_depth: list[Row] = []
    new_depth: list[Row] = []
    sides: tuple[tuple[Kind, set[str], Callable[[str], set[str]], Callable[[str], set[str]]], ...] = (
        ("source", sources, after.upstream, after.downstream),
        ("destination", destinations, after.downstream, after.upstream),
    )
    for kind, nodes, back, ahead in sides:
        reader = _reader(read_ends, kind)
        found, was = ends.propagate(nodes, back, ahead, reader, cap), reader(sorted(nodes))
        rows = _diff(set(_rows(was, kind)), set(_rows(found, kind)))
        gone_ends += [row[:3] for row in rows[0]]
        new_ends += rows[1]
        if kind == "source":  # the depth is the farthest source
            gone_depth, new_depth = _diff(_depths(was), _depths(found))
    gone_aliases, new_aliases = _diff(set(published.aliases), set(alias_rows))
    return [
        GraphEdit("dataset_aliases", ("node_id",), [row[:1] for row in gone_aliases], new_aliases),
        GraphEdit(
            "lineage_edges", ("src_id", "dst_id", "edge_type"), [row[:3] for row in gone_edges], new_edges
        ),
        GraphEdit("condensed_edges", ("src_id", "dst_id", "job_id"), gone, new),
        GraphEdit("ultimate_nodes", ("node_id", "kind", "other_id"), gone_ends, new_ends),
        GraphEdit("dataset_depth", ("node_id",), [row[:1] for row in gone_depth], new_depth),
    ]


def _reader(read_ends: EndsReader, kind: Kind) -> Callable[[Sequence[str]], dict[str, dict[str, int]]]:
    return lambda nodes: read_ends(nodes, kind)


def _depths(found: dict[str, ends.Ends]) -> set[Row]:
    return {(node, far) for node, reached in found.items() if (far := ends.depth(reached)) is not None}


def _rows(found: dict[str, dict[str, int]], kind: str) -> list[Row]:
    return [(node, kind, end, steps) for node, reached in found.items() for end, steps in reached.items()]


def _diff(before: set[Row], after: set[Row]) -> tuple[list[Row], list[Row]]:
    """(rows only before, rows only after): a row that changed outside its key is deleted by its
    key, then inserted."""
    return list(before - after), list(after - before)


def _closure(seeds: set[str], step: Callable[[str], set[str]], limit: int) -> set[str] | None:
    """The seeds and every node `step` reaches from them; None past `limit` nodes."""
    reached = set(seeds)
    queue = deque(seeds)
    while queue:
        if len(reached) > limit:
            return None
        for node in step(queue.popleft()):
            if node not in reached:
                reached.add(node)
                queue.append(node)
    return reached if len(reached) <= limit else None
