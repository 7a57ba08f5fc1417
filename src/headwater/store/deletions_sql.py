"""Soft deletion in SQL (both backends): the `deleted_nodes` markers (migration 0011) that hide a
dataset, a job or a namespace from the model's reads, the conditions the reads add, and the
clearing of markers by events stored after the deletion (the pipeline's merge calls it)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from headwater.store.event_facets import assemble_payloads, fetch_values, stored_core
from headwater.store.sql_reads import SqlReads

NAMESPACE_PREFIX = "namespace:"
_SCAN = 5_000  # events read at a time when clearing markers


def visible(alias: str) -> str:
    """The condition that keeps a row of `datasets` or `jobs` (as `alias`) whose node, and whose
    namespace, no marker hides."""
    return (
        f"NOT EXISTS (SELECT 1 FROM deleted_nodes x WHERE x.node_id = {alias}.node_id "
        f"OR x.node_id = '{NAMESPACE_PREFIX}' || {alias}.namespace)"
    )


def visible_namespace(column: str) -> str:
    """The condition that keeps a namespace (its name in `column`) no marker hides."""
    return f"NOT EXISTS (SELECT 1 FROM deleted_nodes x WHERE x.node_id = '{NAMESPACE_PREFIX}' || {column})"


def namespace_node(name: str) -> str:
    return f"{NAMESPACE_PREFIX}{name}"


def mentioned_nodes(payload: str) -> set[str]:
    """The node ids (`dataset:…`, `job:…`, `namespace:…`) an OpenLineage event names: its job
    and parent job, its inputs and outputs, a dataset event's dataset, and their namespaces."""
    try:
        doc = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return set()
    if not isinstance(doc, dict):
        return set()
    found: set[str] = set()

    def add(kind: str, ref: Any) -> None:
        if (
            isinstance(ref, dict)
            and isinstance(ref.get("namespace"), str)
            and isinstance(ref.get("name"), str)
        ):
            found.add(f"{kind}:{ref['namespace']}:{ref['name']}")
            found.add(namespace_node(ref["namespace"]))

    add("job", doc.get("job"))
    run = doc.get("run")
    facets = run.get("facets") if isinstance(run, dict) else None
    parent = facets.get("parent") if isinstance(facets, dict) else None
    if isinstance(parent, dict):  # the parent job, which the model keeps too
        add("job", parent.get("job"))
    add("dataset", doc.get("dataset"))
    for side in ("inputs", "outputs"):
        refs = doc.get(side)
        if isinstance(refs, list):
            for ref in refs:
                add("dataset", ref)
    return found


class DeletionsSql(SqlReads):
    """Markers of deleted nodes: written by the catalog's delete, read by every model read,
    cleared by the pipeline; mixed into the SQL store."""

    @abstractmethod
    def _writing(self) -> Any:
        """A cursor inside one write transaction."""

    def _mark(self, cur: Any, rows: Iterable[tuple[str, str, str]], now: str, after_seq: int) -> None:
        query = self._sql(
            "INSERT INTO deleted_nodes (node_id, kind, namespace, deleted_at, deleted_after_seq) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (node_id) DO UPDATE SET "
            "deleted_at = excluded.deleted_at, deleted_after_seq = excluded.deleted_after_seq"
        )
        for node_id, kind, namespace in rows:
            cur.execute(query, (node_id, kind, namespace, now, after_seq))

    def _newest_seq(self, cur: Any) -> int:
        cur.execute("SELECT COALESCE(MAX(seq), 0) FROM events")
        row = cur.fetchone()
        return int(row[0]) if row else 0

    def hide_node(self, node_id: str, kind: str, namespace: str, now: str) -> None:
        """Mark a dataset or job deleted as of the newest stored event."""
        with self._writing() as cur:
            self._mark(cur, [(node_id, kind, namespace)], now, self._newest_seq(cur))

    def hide_namespace(self, name: str, now: str) -> None:
        """Mark a namespace and every dataset and job the model holds in it deleted, in one
        transaction, as of the newest stored event."""
        with self._writing() as cur:
            rows: list[tuple[str, str, str]] = [(namespace_node(name), "namespace", name)]
            for table, kind in (("datasets", "dataset"), ("jobs", "job")):
                cur.execute(self._sql(f"SELECT node_id FROM {table} WHERE namespace = ?"), (name,))
                rows += [(str(r[0]), kind, name) for r in cur.fetchall()]
            self._mark(cur, rows, now, self._newest_seq(cur))

    def hidden_nodes(self, node_ids: Sequence[str]) -> set[str]:
        """Those of the dataset and job ids that a marker hides (their own or their namespace's)."""
        if not node_ids:
            return set()
        with self._reading() as cur:
            cur.execute("SELECT 1 FROM deleted_nodes LIMIT 1")
            if cur.fetchone() is None:
                return set()
            hidden = {
                str(r[0])
                for r in self._chunked(
                    cur, "SELECT node_id FROM deleted_nodes WHERE node_id IN ({marks})", node_ids
                )
            }
            for table in ("datasets", "jobs"):
                query = (
                    f"SELECT node_id FROM {table} WHERE node_id IN ({{marks}}) AND EXISTS (SELECT 1 "
                    f"FROM deleted_nodes x WHERE x.node_id = '{NAMESPACE_PREFIX}' || {table}.namespace)"
                )
                hidden |= {str(r[0]) for r in self._chunked(cur, query, node_ids)}
        return hidden

    def has_deletions(self) -> bool:
        with self._reading() as cur:
            cur.execute("SELECT 1 FROM deleted_nodes LIMIT 1")
            return cur.fetchone() is not None


def clear_deletions(cur: Any, sql: Any, checkpoint_from: int, checkpoint_to: int) -> int:
    """Inside the merge of the events `(checkpoint_from, checkpoint_to]`: remove each marker that
    one of those events mentions and that was stored after the deletion (seq above its mark).
    Whether a marker goes depends only on the events above its mark, each merged exactly once,
    so incremental passes and a rebuild leave the same markers. Returns how many went."""
    cur.execute("SELECT MIN(deleted_after_seq) FROM deleted_nodes")
    row = cur.fetchone()
    if row is None or row[0] is None or int(row[0]) >= checkpoint_to:
        return 0
    cur.execute("SELECT node_id, deleted_after_seq FROM deleted_nodes")
    marks = {str(r[0]): int(r[1]) for r in cur.fetchall()}
    query = sql(
        "SELECT seq, payload, facet_count, core FROM events WHERE seq > ? AND seq <= ? AND kind <> 'generic' "
        "ORDER BY seq LIMIT ?"
    )
    cleared: set[str] = set()
    last = max(checkpoint_from, min(marks.values()))
    while True:
        cur.execute(query, (last, checkpoint_to, _SCAN))
        rows = cur.fetchall()
        if not rows:
            break
        payloads = assemble_payloads(
            [(stored_core(p if isinstance(p, str) else bytes(p), core), count) for _, p, count, core in rows],
            lambda hashes: fetch_values(cur, sql, hashes),
        )
        for (seq, *_), payload in zip(rows, payloads, strict=True):
            for node in mentioned_nodes(payload):
                if node in marks and int(seq) > marks[node]:
                    cleared.add(node)
        last = int(rows[-1][0])
    for node in cleared:
        cur.execute(sql("DELETE FROM deleted_nodes WHERE node_id = ?"), (node,))
    return len(cleared)
