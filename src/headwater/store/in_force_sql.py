"""The one time-validity rule of the model's facets, in SQL for both backends.

A facets table (`dataset_facets`, `job_facets`) holds assertions: node `node_id` carried facet
`name` with value `value_hash` (or its deletion) from `valid_from`. The assertion *in force* at
a time T is the latest one by (valid_from, seq) with valid_from <= T; now, it is the latest of
all. A deleted facet is in force as "no value".

Producers re-send the same facets with every event, so a dataset or job collects thousands of
assertions of the same facet. Every query here is driven by the node keys and takes the
assertion in force with one backwards seek of the primary key (node_id, name, valid_from, seq)
per facet: its cost follows the nodes asked for, not how often their facets were re-asserted.
The names of a node's facets are walked the same way (a skip scan of the same key).

Each query has `IN ({marks})` for the node keys, as `SqlReads._chunked` expects, and says which
parameters come before the keys and which after.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_NODE_TABLES = {"dataset_facets": "datasets", "job_facets": "jobs"}


@dataclass(frozen=True)
class InForceQuery:
    """A query over a list of node keys, with the parameters before and after the keys."""

    sql: str
    before: list[Any]
    after: list[Any]


def in_force(
    table: str,
    node: str,
    name: str,
    *,
    at: str | None = None,
    before_seq: str | None = None,
    deleted: str = "NULL",
) -> str:
    """A scalar subquery: the value hash of the assertion of facet `name` of node `node` (SQL
    expressions) in force now, or at time `at` (an SQL expression), or with `before_seq` just
    before the assertion (`at`, `before_seq`); NULL when none is, `deleted` when it is a deletion.
    Every reader of the history, and the merge's late check, asks it this way."""
    bound = ""
    if at is not None:
        bound = f"AND f.valid_from <= {at} "
        if before_seq is not None:
            bound += f"AND NOT (f.valid_from = {at} AND f.seq >= {before_seq}) "
    return (
        f"(SELECT CASE WHEN f.deleted = 0 THEN f.value_hash ELSE {deleted} END FROM {table} f "
        f"WHERE f.node_id = {node} AND f.name = {name} {bound}"
        "ORDER BY f.valid_from DESC, f.seq DESC LIMIT 1)"
    )


def _in_force_hash(table: str, node: str, name: str, as_of: str | None) -> tuple[str, list[Any]]:
    """`in_force` now or at the parameter `as_of`, and the parameters it takes."""
    if as_of is None:
        return in_force(table, node, name), []
    return in_force(table, node, name, at="?"), [as_of]


def facet_in_force(
    table: str, facet: str, as_of: str | None, *, value: bool = True, every: bool = False
) -> InForceQuery:
    """(node_id, value) of facet `facet` in force for each listed node that has one; with
    `value=False`, (node_id, value_hash) without reading the value; with `every`, for every node
    of the table's kind (the query then has no list of keys)."""
    latest, params = _in_force_hash(table, "k.node_id", "?", as_of)
    keys = "" if every else " WHERE k.node_id IN ({marks})"
    inner = f"SELECT k.node_id, {latest} AS h FROM {_NODE_TABLES[table]} k{keys}"
    if value:
        sql = f"SELECT x.node_id, v.value FROM ({inner}) x JOIN facet_values v ON v.hash = x.h"
    else:
        sql = f"SELECT x.node_id, x.h FROM ({inner}) x WHERE x.h IS NOT NULL"
    return InForceQuery(sql, [facet, *params], [])


def facets_in_force(table: str, as_of: str | None) -> InForceQuery:
    """(node_id, name, value) of every facet in force for each listed node, by node and name."""
    latest, params = _in_force_hash(table, "n.node_id", "n.name", as_of)
    sql = (
        "WITH RECURSIVE names (node_id, name) AS ("
        f"SELECT k.node_id, (SELECT MIN(f.name) FROM {table} f WHERE f.node_id = k.node_id) "
        f"FROM {_NODE_TABLES[table]} k WHERE k.node_id IN ({{marks}}) "
        "UNION ALL "
        f"SELECT n.node_id, (SELECT MIN(f.name) FROM {table} f WHERE f.node_id = n.node_id "
        "AND f.name > n.name) FROM names n WHERE n.name IS NOT NULL) "
        f"SELECT x.node_id, x.name, v.value FROM (SELECT n.node_id, n.name, {latest} AS h FROM names n "
        "WHERE n.name IS NOT NULL) x JOIN facet_values v ON v.hash = x.h ORDER BY x.node_id, x.name"
    )
    return InForceQuery(sql, [], params)
