"""Ultimate sources and destinations by propagation, in the driver: the rule the whole graph
(`driver_graph`) and a graph edited in place (`graph_delta`) share.

The condensed graph has an edge from each input of a job to each of its outputs (but itself). A
dataset in it with nothing upstream is its own ultimate source, at distance 0; any other's
sources are those of the datasets just upstream of it, one step further, the shortest distance
kept (destinations: the same, downstream). A cycle no end leads into has none.

The propagation runs over datasets and jobs, never over the condensed edges themselves (a job's
inputs times its outputs: 9 million for one job of 3,000 of each): a job's ends are those of its
inputs, and a dataset's those of the jobs that write it, one step further. A job that reads and
writes the same dataset passes it only its own ends again, longer, which changes nothing; and
whether a dataset is its own end (or in the graph at all) is decided by the condensed rule,
`Bipartite.has_upstream`. Nodes go in topological order, then round each cycle until nothing
shortens.

A node with more than `cap` ends keeps only the marker {PAST_CAP: -1}, and so does every node
after it (its ends are a superset): the query walks the graph for those datasets
(`headwater.store.graph.ENDS_CAP`). The cost follows the edges times at most `cap`.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from headwater.store.graph import PAST_CAP

Row = tuple[Any, ...]
Kind = Literal["source", "destination"]
Ends = dict[str, int]  # end → shortest distance; {PAST_CAP: -1} past the cap
PAST: Ends = {PAST_CAP: -1}
Published = Callable[[Sequence[str]], dict[str, Ends]]  # datasets → their published ends


class Bipartite:
    """Datasets and jobs from lineage edges (src_id, dst_id, edge_type, …)."""

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

    def has_upstream(self, dataset: str) -> bool:
        """Whether a condensed edge ends at the dataset: a job writes it and reads another."""
        return any(_other_than(self.inputs[job], dataset) for job in self.writers.get(dataset, ()))

    def has_downstream(self, dataset: str) -> bool:
        return any(_other_than(self.outputs[job], dataset) for job in self.readers.get(dataset, ()))

    def side(self, kind: Kind) -> Side:
        if kind == "source":
            return Side(self, self.writers, self.inputs, self.readers, self.outputs, self.has_upstream)
        return Side(self, self.readers, self.outputs, self.writers, self.inputs, self.has_downstream)


class Side:
    """The graph as one kind of end flows through it: from `jobs_before` a dataset and
    `datasets_before` a job, to `jobs_after` and `datasets_after`; `has_before` says whether a
    condensed edge reaches the dataset from that side."""

    def __init__(
        self,
        graph: Bipartite,
        jobs_before: dict[str, set[str]],
        datasets_before: dict[str, set[str]],
        jobs_after: dict[str, set[str]],
        datasets_after: dict[str, set[str]],
        has_before: Callable[[str], bool],
    ) -> None:
        self.graph = graph
        self.jobs_before, self.datasets_before = jobs_before, datasets_before
        self.jobs_after, self.datasets_after = jobs_after, datasets_after
        self.has_before = has_before

    def before(self, node: str) -> set[str]:
        table = self.datasets_before if node.startswith("job:") else self.jobs_before
        return table.get(node, set())

    def after(self, node: str) -> set[str]:
        table = self.datasets_after if node.startswith("job:") else self.jobs_after
        return table.get(node, set())

    def in_graph(self, dataset: str) -> bool:
        return self.graph.has_upstream(dataset) or self.graph.has_downstream(dataset)


class OverBudget(Exception):
    """The propagation found more ends than its budget allowed."""


def propagate(
    nodes: set[str], side: Side, published: Published, cap: int, budget: int | None = None
) -> dict[str, Ends]:
    """{dataset: its ends} for the datasets among `nodes` (datasets and jobs, closed in the
    direction the ends flow); a dataset in no condensed edge has no entry. Datasets outside the
    set keep their `published` ends, and a job outside it takes those of its datasets (which are
    outside too): they seed the nodes next to them. Raises OverBudget as soon as the nodes hold
    more than `budget` ends in all (what the propagation's memory follows)."""
    before = {node: side.before(node) for node in nodes}
    outside = {other for others in before.values() for other in others if other not in nodes}
    outside_jobs = {node for node in outside if node.startswith("job:")}
    needed = (outside - outside_jobs) | {d for job in outside_jobs for d in side.before(job)}
    known = published(sorted(needed)) if needed else {}
    for job in outside_jobs:
        reached: Ends = {}
        for dataset in side.before(job):
            _merge(reached, known.get(dataset, {}), 0, cap)
        known[job] = reached
    found: dict[str, Ends] = {}
    for node, others in before.items():
        if not node.startswith("job:"):
            if not side.in_graph(node):
                continue
            if not side.has_before(node):
                found[node] = {node: 0}
                continue
        reached = {}
        for other in others:
            if other not in nodes:
                _merge(reached, known.get(other, {}), _step(node), cap)
        found[node] = reached
    inside = {node: [o for o in others if o in nodes] for node, others in before.items()}
    queue = deque(_order(nodes, inside, side.after))
    queued = set(queue)
    held = sum(len(reached) for reached in found.values())
    while queue:
        node = queue.popleft()
        queued.discard(node)
        here = found.get(node)
        if here is None:  # a dataset in no condensed edge
            continue
        grew, size = False, len(here)
        for other in inside[node]:
            grew = _merge(here, found.get(other, {}), _step(node), cap) or grew
        held += len(here) - size
        if budget is not None and held > budget:
            raise OverBudget(f"more than {budget:,} ends")
        if grew:
            for later in side.after(node):
                if later in nodes and later not in queued:
                    queue.append(later)
                    queued.add(later)
    return {node: reached for node, reached in found.items() if not node.startswith("job:")}


def _step(node: str) -> int:
    """Distances count datasets: one more into a dataset, none into a job."""
    return 0 if node.startswith("job:") else 1


def _merge(reached: Ends, other: Ends, step: int, cap: int) -> bool:
    """Add `other`'s ends `step` further, in place; True when one was new or got shorter."""
    if PAST_CAP in reached:
        return False
    if PAST_CAP in other:
        reached.clear()
        reached.update(PAST)
        return True
    grew = False
    for end, steps in other.items():
        if steps + step < reached.get(end, steps + step + 1):
            reached[end] = steps + step
            grew = True
    if len(reached) > cap:
        reached.clear()
        reached.update(PAST)
    return grew


def depth(ends: Ends) -> int | None:
    """The farthest of a dataset's sources; None past the cap (or with none)."""
    return None if not ends or PAST_CAP in ends else max(ends.values())


def rows(found: dict[str, Ends], kind: str) -> list[Row]:
    """`ultimate_nodes` rows (node_id, kind, other_id, distance)."""
    return [(node, kind, end, steps) for node, reached in found.items() for end, steps in reached.items()]


def _order(nodes: set[str], inside: dict[str, list[str]], after: Callable[[str], set[str]]) -> list[str]:
    """`nodes` in topological order (each after the nodes before it), those on or after a cycle
    last, sorted."""
    waiting = {node: len(inside[node]) for node in nodes}
    ready = deque(node for node, count in waiting.items() if not count)
    order: list[str] = []
    while ready:
        node = ready.popleft()
        order.append(node)
        for later in after(node):
            if later in waiting:
                waiting[later] -= 1
                if not waiting[later]:
                    ready.append(later)
    placed = set(order)
    return order + sorted(node for node in nodes if node not in placed)


def _other_than(datasets: set[str], dataset: str) -> bool:
    """Whether `datasets` holds one other than `dataset` (in constant time: a job may have
    hundreds of thousands)."""
    return len(datasets) > 1 or (len(datasets) == 1 and dataset not in datasets)
