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

When the difference reaches more than `max_nodes` datasets, `graph_edits` gives up (None) and
the caller computes the whole graph. tests/pipeline/test_graph_delta.py checks that the tables
equal a full recompute after random changes, cycles and symlinks included.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from headwater.pipeline import driver_graph
from headwater.store.model.graph_inputs import PublishedGraph
from headwater.store.model.merge import GraphEdit

Row = tuple[Any, ...]
Kind = Literal["source", "destination"]
# the published ends of datasets: node → {end: distance}
EndsReader = Callable[[Sequence[str], Kind], dict[str, dict[str, int]]]

MAX_NODES = 20_000  # datasets whose ends a pass recomputes here, at most (else the full stage)


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

    def upstream(self, node: str) -> set[str]:
        return {src for job in self.writers.get(node, ()) for src in self.inputs[job] if src != node}

    def downstream(self, node: str) -> set[str]:
        return {dst for job in self.readers.get(node, ()) for dst in self.outputs[job] if dst != node}


def graph_edits(
    published: PublishedGraph, read_ends: EndsReader, *, max_nodes: int = MAX_NODES
) -> list[GraphEdit] | None:
    """The edits that make the published graph (its aliases and lineage edges, and the ends
    `read_ends` gives) the graph of `published.inputs`, in the order they apply; None when more
    than `max_nodes` datasets' ends would change."""
    inputs = published.inputs
    alias_rows = driver_graph.aliases(inputs.symlinks)
    edge_rows = driver_graph.lineage_edges(inputs.current_io, inputs.parents, dict(alias_rows))
    before_edges = set(published.edges)
    gone_edges, new_edges = _diff(before_edges, set(edge_rows))
    jobs = {row[3] for row in (*gone_edges, *new_edges) if row[2] in ("input", "output")}
    before, after = _Bipartite(before_edges), _Bipartite(edge_rows)
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
        found, was = _ends(nodes, back, ahead, reader), reader(sorted(nodes))
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


def _depths(ends: dict[str, dict[str, int]]) -> set[Row]:
    return {(node, max(reached.values())) for node, reached in ends.items() if reached}


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


def _ends(
    nodes: set[str],
    back: Callable[[str], set[str]],
    ahead: Callable[[str], set[str]],
    published: Callable[[Sequence[str]], dict[str, dict[str, int]]],
) -> dict[str, dict[str, int]]:
    """{node: {end: shortest distance}} for `nodes`: a node with nothing `back` (and something
    ahead) is its own end; else its ends are those of the nodes back from it, one step further.
    Nodes outside the set keep their published ends (the caller makes sure those stay right);
    inside it the propagation goes in topological order, then round a cycle until nothing
    shortens (a cycle no end leads into has none). A node with no neighbour at all is in no
    condensed edge and has no row."""
    before = {node: back(node) for node in nodes}
    outside = {other for others in before.values() for other in others if other not in nodes}
    known = published(sorted(outside)) if outside else {}
    found: dict[str, dict[str, int]] = {}
    for node, others in before.items():
        if not others:
            if ahead(node):
                found[node] = {node: 0}
            continue
        reached: dict[str, int] = {}
        for other in others:
            if other not in nodes:
                _merge(reached, known.get(other, {}))
        found[node] = reached
    inside = {node: [o for o in others if o in nodes] for node, others in before.items()}
    queue = deque(_order(nodes, inside, ahead))
    queued = set(queue)
    while queue:
        node = queue.popleft()
        queued.discard(node)
        here = found.get(node)
        if here is None:  # in no condensed edge
            continue
        grew = False
        for other in inside[node]:
            grew = _merge(here, found.get(other, {})) or grew
        if grew:
            for later in ahead(node):
                if later in nodes and later not in queued:
                    queue.append(later)
                    queued.add(later)
    return found


def _merge(reached: dict[str, int], other: dict[str, int]) -> bool:
    """Add `other`'s ends one step further; True when one was new or got shorter."""
    grew = False
    for end, steps in other.items():
        if steps + 1 < reached.get(end, steps + 2):
            reached[end] = steps + 1
            grew = True
    return grew


def _order(nodes: set[str], inside: dict[str, list[str]], ahead: Callable[[str], set[str]]) -> list[str]:
    """`nodes` in topological order (each after the nodes back from it), those on or after a
    cycle last, in any order."""
    waiting = {node: len(inside[node]) for node in nodes}
    ready = deque(node for node, count in waiting.items() if not count)
    order: list[str] = []
    while ready:
        node = ready.popleft()
        order.append(node)
        for later in ahead(node):
            if later in waiting:
                waiting[later] -= 1
                if not waiting[later]:
                    ready.append(later)
    placed = set(order)
    return order + sorted(node for node in nodes if node not in placed)
