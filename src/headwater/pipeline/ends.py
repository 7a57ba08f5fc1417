"""Ultimate sources and destinations by propagation, in the driver: the rule the whole graph
(`driver_graph`) and a graph edited in place (`graph_delta`) share.

A dataset with nothing upstream (and something downstream) is its own ultimate source, at
distance 0; any other's sources are those of the datasets just upstream of it, one step further,
the shortest distance kept (destinations: the same, downstream). Datasets are visited in
topological order, then round each cycle until nothing shortens; a cycle no end leads into has
no ends. A dataset with more than `cap` ends keeps only the marker {PAST_CAP: -1}, and so does
every dataset after it (its ends are a superset): the query walks the graph for those
(`headwater.store.graph.ENDS_CAP`). The cost follows the edges times at most `cap`, not the
number of paths.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

from headwater.store.graph import PAST_CAP

Ends = dict[str, int]  # end → shortest distance; {PAST_CAP: -1} past the cap
PAST: Ends = {PAST_CAP: -1}


def propagate(
    nodes: set[str],
    back: Callable[[str], set[str]],
    ahead: Callable[[str], set[str]],
    published: Callable[[Sequence[str]], dict[str, Ends]],
    cap: int,
) -> dict[str, Ends]:
    """{node: its ends} for `nodes`; a node in no condensed edge (nothing back or ahead) has no
    entry. Nodes outside the set keep their `published` ends (the caller makes sure those stay
    right), which seed the nodes next to them."""
    before = {node: back(node) for node in nodes}
    outside = {other for others in before.values() for other in others if other not in nodes}
    known = published(sorted(outside)) if outside else {}
    found: dict[str, Ends] = {}
    for node, others in before.items():
        if not others:
            if ahead(node):
                found[node] = {node: 0}
            continue
        reached: Ends = {}
        for other in others:
            if other not in nodes:
                merge(reached, known.get(other, {}), cap)
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
            grew = merge(here, found.get(other, {}), cap) or grew
        if grew:
            for later in ahead(node):
                if later in nodes and later not in queued:
                    queue.append(later)
                    queued.add(later)
    return found


def merge(reached: Ends, other: Ends, cap: int) -> bool:
    """Add `other`'s ends one step further, in place; True when one was new or got shorter."""
    if PAST_CAP in reached:
        return False
    if PAST_CAP in other:
        reached.clear()
        reached.update(PAST)
        return True
    grew = False
    for end, steps in other.items():
        if steps + 1 < reached.get(end, steps + 2):
            reached[end] = steps + 1
            grew = True
    if len(reached) > cap:
        reached.clear()
        reached.update(PAST)
    return grew


def depth(ends: Ends) -> int | None:
    """The farthest of a dataset's sources; None past the cap (or with none)."""
    return None if not ends or PAST_CAP in ends else max(ends.values())


def _order(nodes: set[str], inside: dict[str, list[str]], ahead: Callable[[str], set[str]]) -> list[str]:
    """`nodes` in topological order (each after the nodes back from it), those on or after a
    cycle last, sorted."""
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
