"""A lineage answer as text for `headwater lineage`: a table by distance from the node, or
Graphviz dot."""

from __future__ import annotations

from headwater.query.lineage import LineageResult

SHAPES = {"dataset": "box", "job": "ellipse", "datasetField": "note"}


def levels(result: LineageResult) -> dict[str, int]:
    """Each node's signed distance in edges from the root: upstream negative, downstream positive."""
    forward: dict[str, list[str]] = {}
    backward: dict[str, list[str]] = {}
    for edge in result.edges:
        forward.setdefault(edge.src, []).append(edge.dst)
        backward.setdefault(edge.dst, []).append(edge.src)
    found = {result.root: 0}
    for step, links in ((-1, backward), (1, forward)):
        level = [result.root]
        while level:
            following = []
            for node in level:
                for other in links.get(node, []):
                    if other not in found:
                        found[other] = found[node] + step
                        following.append(other)
            level = following
    return found


def _detail(result: LineageResult, node_id: str) -> str:
    node = result.nodes[node_id]
    parts = []
    if node.node is not None and node.node.kind == "job" and node.node.state:
        parts.append(node.node.state.lower())
    if node.field_type:
        parts.append(node.field_type)
    if node.distance is not None:
        parts.append(f"distance {node.distance}")
    if node.expandable:
        parts.append("more beyond")
    return ", ".join(parts)


def as_table(result: LineageResult) -> str:
    """One line per node, upstream first, with its level, kind and what is worth knowing."""
    found = levels(result)
    rows = sorted(result.nodes, key=lambda n: (found.get(n, 0), result.nodes[n].kind, n))
    width = max((len(n) for n in rows), default=4)
    lines = [f"{'LEVEL':>5}  {'KIND':<12}  {'NODE':<{width}}  DETAIL"]
    for node_id in rows:
        level = found.get(node_id)
        shown = "-" if level is None else f"{level:+d}" if level else "0"
        kind = result.nodes[node_id].kind
        lines.append(f"{shown:>5}  {kind:<12}  {node_id:<{width}}  {_detail(result, node_id)}".rstrip())
    lines.append(f"{len(result.nodes)} node(s), {len(result.edges)} edge(s).")
    if result.truncated:
        lines.append("Truncated at --limit: ask again from a node marked 'more beyond'.")
    return "\n".join(lines)


def _quote(*lines: str) -> str:
    """A dot string of the given lines (escaped, joined by dot's line break)."""
    escaped = (line.replace("\\", "\\\\").replace('"', '\\"') for line in lines)
    return '"' + "\\n".join(escaped) + '"'


def as_dot(result: LineageResult) -> str:
    """A Graphviz digraph (`dot -Tsvg`): datasets as boxes, jobs as ellipses, the node in bold."""
    lines = ["digraph lineage {", "  rankdir=LR;", "  node [fontname=Helvetica];"]
    for node_id, node in result.nodes.items():
        label = _quote(node.namespace, node.name, *([node.field] if node.field else []))
        style = ", style=bold" if node_id == result.root else ""
        lines.append(f"  {_quote(node_id)} [label={label}, shape={SHAPES.get(node.kind, 'box')}{style}];")
    for edge in result.edges:
        label = f" [label={_quote(edge.transformation)}]" if edge.transformation else ""
        lines.append(f"  {_quote(edge.src)} -> {_quote(edge.dst)}{label};")
    lines.append("}")
    return "\n".join(lines)
