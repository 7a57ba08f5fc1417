"""The graph stage of a pass that changed a little: the published graph tables updated in place.

A pass over a few events changes a few jobs' current inputs and outputs, yet a whole graph stage
recomputes every graph table: seconds on a graph of a few thousand datasets, and on a larger one
(when Spark computes it) one Spark job per step of the longest path, minutes in all. Here the
driver computes the new aliases and lineage edges (linear in the graph: `driver_graph`'s rules),
compares them with the published ones, and recomputes only what the difference reaches: the
ultimate ends of the changed jobs' inputs and outputs (before and after) and of everything
after them in the direction the ends flow, downstream for sources and upstream for
destinations (`ends`). The ends of any other dataset depend only on a part of the graph that did
not change, so they stay as published, and those next to a recomputed dataset seed its
propagation. The depth follows the recomputed sources.

Only the rows that differ from the published ones are written: a change near the top of a graph
reaches many datasets whose ends are mostly the same.

When the difference reaches more than `max_nodes` datasets and jobs, or the ends it recomputes
(the propagation's memory), or those it reads back, come to more than `max_ends`, `graph_edits`
gives up (None) and the caller computes the whole graph. A wide
job's datasets, past the cap, hold one end each: a change that reaches 160,000 of them is an
edit, not a whole graph. tests/pipeline/test_graph_delta.py checks that
the tables equal a whole recompute after random changes, cycles and symlinks included.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

from headwater.pipeline import driver_graph, ends
from headwater.store.graph import ENDS_CAP
from headwater.store.model.graph_inputs import PublishedGraph
from headwater.store.model.merge import GraphEdit

Row = ends.Row
# the published ends of datasets: node → {end: distance}
EndsReader = Callable[[Sequence[str], ends.Kind], dict[str, ends.Ends]]

MAX_NODES = 200_000  # datasets and jobs whose ends a pass recomputes here, at most (else the whole stage)
MAX_ENDS = 4_000_000  # and the ends they hold, at most
READ_SLICE = 5_000  # nodes whose published ends are read at once


def graph_edits(
    published: PublishedGraph,
    read_ends: EndsReader,
    *,
    max_nodes: int = MAX_NODES,
    max_ends: int = MAX_ENDS,
    cap: int = ENDS_CAP,
) -> list[GraphEdit] | None:
    """The edits that make the published graph (its aliases and lineage edges, and the ends
    `read_ends` gives) the graph of `published.inputs`, in the order they apply; None when the
    change reaches more than `max_nodes` datasets and jobs, or their ends come to more than
    `max_ends`. `cap`: see `ends`."""
    inputs = published.inputs
    alias_rows = driver_graph.aliases(inputs.symlinks)
    edge_rows = driver_graph.lineage_edges(inputs.current_io, inputs.parents, dict(alias_rows))
    before_edges = set(published.edges)
    gone_edges, new_edges = _diff(before_edges, set(edge_rows))
    jobs = {row[3] for row in (*gone_edges, *new_edges) if row[2] in ("input", "output")}
    before, after = ends.Bipartite(before_edges), ends.Bipartite(edge_rows)
    # a changed job's inputs and outputs may enter or leave the condensed graph, or become their
    # own ends or stop being so
    touched = {
        dataset
        for graph in (before, after)
        for job in jobs
        for dataset in (*graph.inputs.get(job, ()), *graph.outputs.get(job, ()))
    }
    gone_ends: list[Row] = []
    new_ends: list[Row] = []
    depth: tuple[list[Row], list[Row]] = ([], [])
    budget = max_nodes
    kinds: tuple[ends.Kind, ...] = ("source", "destination")
    for kind in kinds:
        side = after.side(kind)
        nodes = _closure(jobs | touched, side.after, budget)
        if nodes is None:
            return None
        budget -= len(nodes)
        reader = _reader(read_ends, kind, max_ends)
        try:
            found = ends.propagate(nodes, side, reader, cap, max_ends - len(new_ends))
            was = reader(sorted(node for node in nodes if not node.startswith("job:")))
        except ends.OverBudget:
            return None
        gone, new = _diff(set(ends.rows(was, kind)), set(ends.rows(found, kind)))
        gone_ends += [row[:3] for row in gone]
        new_ends += new
        if kind == "source":  # the depth is the farthest source
            depth = _diff(_depths(was), _depths(found))
    gone_aliases, new_aliases = _diff(set(published.aliases), set(alias_rows))
    return [
        GraphEdit("dataset_aliases", ("node_id",), [row[:1] for row in gone_aliases], new_aliases),
        GraphEdit(
            "lineage_edges", ("src_id", "dst_id", "edge_type"), [row[:3] for row in gone_edges], new_edges
        ),
        GraphEdit("ultimate_nodes", ("node_id", "kind", "other_id"), gone_ends, new_ends),
        GraphEdit("dataset_depth", ("node_id",), [row[:1] for row in depth[0]], depth[1]),
    ]


def _reader(read_ends: EndsReader, kind: ends.Kind, max_ends: int) -> ends.Published:
    """The published ends of `kind`, read READ_SLICE nodes at a time; raises ends.OverBudget once
    one call has read more than `max_ends`."""

    def read(nodes: Sequence[str]) -> dict[str, ends.Ends]:
        found: dict[str, ends.Ends] = {}
        held = 0
        for start in range(0, len(nodes), READ_SLICE):
            part = read_ends(nodes[start : start + READ_SLICE], kind)
            held += sum(len(reached) for reached in part.values())
            if held > max_ends:
                raise ends.OverBudget(f"more than {max_ends:,} published ends")
            found.update(part)
        return found

    return read


def _depths(found: dict[str, ends.Ends]) -> set[Row]:
    return {(node, far) for node, reached in found.items() if (far := ends.depth(reached)) is not None}


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
