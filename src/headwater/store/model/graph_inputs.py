"""The graph stage's inputs as the model holds them: the symlinks (with whether events named the
alias), the jobs' current inputs and outputs, and the parent jobs; read by Spark (the queries) or,
when small, here in the driver; and, for a pass that edits the graph in place, the published
graph (its aliases, its edges, and the ends of given datasets)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from headwater.store.base import EventStore
from headwater.store.model.checkpoint import state_in
from headwater.store.sql_reads import CHUNK

SYMLINKS_SQL = (
    "SELECT s.node_id, s.alias_node_id, CASE WHEN d.node_id IS NULL THEN 0 ELSE 1 END AS alias_known "
    "FROM dataset_symlinks s LEFT JOIN datasets d ON d.node_id = s.alias_node_id"
)
CURRENT_IO_SQL = (
    "SELECT j.node_id AS job_id, j.current_version AS version_id, v.direction, v.node_id "
    "FROM jobs j JOIN job_version_io v ON v.version_id = j.current_version"
)
PARENTS_SQL = "SELECT parent_node_id, child_node_id FROM job_parents"

Row = tuple[Any, ...]


@dataclass(frozen=True)
class GraphInputs:
    """The rows of SYMLINKS_SQL, CURRENT_IO_SQL and PARENTS_SQL."""

    symlinks: list[Row]
    current_io: list[Row]
    parents: list[Row]


def graph_size(store: EventStore) -> int:
    """An estimate of the graph stage's rows (four for each job version's input or output)."""
    with store.transaction() as cur:
        cur.execute("SELECT COUNT(*) FROM job_version_io")
        row = cur.fetchone()
    return int(row[0]) * 4 if row else 0


def small_graph_inputs(store: EventStore, limit: int | None) -> GraphInputs | None:
    """The graph stage's inputs read in one transaction, or None when one has more than `limit`
    rows (no limit: None)."""
    with store.transaction() as cur:
        return _inputs(cur, limit)


def _inputs(cur: Any, limit: int | None) -> GraphInputs | None:
    inputs: list[list[Row]] = []
    for query in (SYMLINKS_SQL, CURRENT_IO_SQL, PARENTS_SQL):
        cur.execute(query if limit is None else f"{query} LIMIT {limit + 1}")
        rows = cur.fetchall()
        if limit is not None and len(rows) > limit:
            return None
        inputs.append([tuple(row) for row in rows])
    return GraphInputs(*inputs)


@dataclass(frozen=True)
class PublishedGraph:
    """The rows of the published `dataset_aliases` and `lineage_edges`, and the inputs the
    graph now has."""

    aliases: list[Row]
    edges: list[Row]
    inputs: GraphInputs


def published_graph(store: EventStore) -> PublishedGraph | None:
    """The published graph and the current inputs, read in one transaction; None when the graph
    tables are not whole (never published, or to be rebuilt: the graph checkpoint is 0)."""
    with store.transaction() as cur:
        if state_in(store, cur)[1] <= 0:
            return None
        cur.execute("SELECT node_id, canonical_id FROM dataset_aliases")
        aliases = [tuple(row) for row in cur.fetchall()]
        cur.execute("SELECT src_id, dst_id, edge_type, job_id, version_id FROM lineage_edges")
        edges = [tuple(row) for row in cur.fetchall()]
        inputs = _inputs(cur, None)
    assert inputs is not None  # no limit
    return PublishedGraph(aliases, edges, inputs)


def published_ends(store: EventStore, node_ids: Sequence[str], kind: str) -> dict[str, dict[str, int]]:
    """{node: {end: distance}}: the published ultimate `kind`s of the nodes (none for a node in a
    cycle no end leads into)."""
    found: dict[str, dict[str, int]] = {node: {} for node in node_ids}
    with store.transaction() as cur:
        for start in range(0, len(node_ids), CHUNK):
            chunk = node_ids[start : start + CHUNK]
            marks = ", ".join("?" * len(chunk))
            query = (
                "SELECT node_id, other_id, distance FROM ultimate_nodes "
                f"WHERE kind = ? AND node_id IN ({marks})"
            )
            cur.execute(store.sql(query), (kind, *chunk))
            for node, other, distance in cur.fetchall():
                found[node][other] = int(distance)
    return found
