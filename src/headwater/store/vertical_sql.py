"""Vertical lineage reads and node search in SQL (both backends): the `VerticalReader` methods."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from headwater.events.schema_fields import facet_fields
from headwater.store.generic import GenericTagRow
from headwater.store.in_force_sql import facet_in_force
from headwater.store.sql_reads import SqlReads
from headwater.store.vertical import FoundNode, RunRef

_RUN = (
    "SELECT r.run_id, r.job_node_id, j.namespace, r.state, r.started_at, r.first_event_time, "
    "r.parent_run_id, r.root_run_id FROM runs r LEFT JOIN jobs j ON j.node_id = r.job_node_id"
)
_MATCH = "LOWER({column}) LIKE ? ESCAPE '\\'"
_NAMED = {  # node type → (query of the names, ending where the pattern's condition goes; node id prefix)
    "namespace": (  # a deleted namespace is not found (until an event brings it back)
        "SELECT name, NULL FROM namespaces WHERE NOT EXISTS "
        "(SELECT 1 FROM deleted_nodes x WHERE x.node_id = 'namespace:' || name) AND",
        "namespace:",
    ),
    "source": ("SELECT name, uri FROM sources WHERE", "source:"),
    "tag": ("SELECT name, NULL FROM tags WHERE", "tag:"),
}
_BATCH = 500  # schema facets parsed at a time by a field search


def _like(text: str) -> str:
    """A LIKE pattern matching `text` (lower-cased) anywhere, its own % and _ taken literally."""
    escaped = text.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _run(row: Sequence[Any]) -> RunRef:
    return RunRef(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7])


class VerticalSql(SqlReads):
    """The `VerticalReader` methods over the model tables; mixed into the SQL store."""

    def facets_in_force(self, node_ids: Sequence[str], facet: str, *, as_of: str | None) -> dict[str, str]:
        found: dict[str, str] = {}
        with self._reading() as cur:
            for table, prefix in (("dataset_facets", "dataset:"), ("job_facets", "job:")):
                query = facet_in_force(table, facet, as_of)
                keys = [n for n in node_ids if n.startswith(prefix)]
                found.update(self._chunked(cur, query.sql, keys, before=query.before))
        return found

    def dataset_names(self, node_id: str) -> list[tuple[str, str | None]]:
        with self._reading() as cur:
            cur.execute(
                self._sql(
                    "SELECT b.node_id FROM dataset_aliases a "
                    "JOIN dataset_aliases b ON b.canonical_id = a.canonical_id "
                    "WHERE a.node_id = ? ORDER BY b.node_id"
                ),
                (node_id,),
            )
            names = [row[0] for row in cur.fetchall()] or [node_id]
            pairs = self._chunked(
                cur,
                "SELECT node_id, alias_node_id, type FROM dataset_symlinks WHERE node_id IN ({marks})",
                names,
            )
        kinds: dict[str, str] = {}
        for declaring, alias, kind in sorted(pairs):
            kinds.setdefault(alias, kind)
            kinds.setdefault(declaring, kind)
        return [(name, kinds.get(name)) for name in names]

    def dataset_sources(self, node_ids: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        query = (
            "SELECT d.node_id, d.source_name, s.uri FROM datasets d LEFT JOIN sources s "
            "ON s.name = d.source_name WHERE d.source_name IS NOT NULL AND d.node_id IN ({marks})"
        )
        with self._reading() as cur:
            return {row[0]: (row[1], row[2]) for row in self._chunked(cur, query, node_ids)}

    def node_tags(self, node_ids: Sequence[str], *, as_of: str | None) -> list[tuple[str, str | None, str]]:
        bound, after = ("", ()) if as_of is None else (" AND tagged_at <= ?", (as_of,))
        datasets = [n for n in node_ids if n.startswith("dataset:")]
        jobs = [n for n in node_ids if n.startswith("job:")]
        found: list[tuple[str, str | None, str]] = []
        with self._reading() as cur:
            for table, field, keys in (
                ("dataset_tags", "NULL", datasets),
                ("field_tags", "field", datasets),
                ("job_tags", "NULL", jobs),
            ):
                query = f"SELECT node_id, {field}, tag FROM {table} WHERE node_id IN ({{marks}}){bound}"
                found += [(row[0], row[1], row[2]) for row in self._chunked(cur, query, keys, *after)]
        return sorted(found, key=lambda row: (row[0], row[1] or "", row[2]))

    def job_family(self, node_id: str) -> tuple[list[str], list[str]]:
        with self._reading() as cur:
            cur.execute(
                self._sql(
                    "SELECT parent_node_id, child_node_id FROM job_parents "
                    "WHERE child_node_id = ? OR parent_node_id = ? ORDER BY 1, 2"
                ),
                (node_id, node_id),
            )
            pairs = cur.fetchall()
        parents = [p for p, c in pairs if c == node_id and p != node_id]
        return parents, [c for p, c in pairs if p == node_id and c != node_id]

    def job_runs(self, node_id: str, *, limit: int, as_of: str | None) -> list[RunRef]:
        bound = "" if as_of is None else " AND r.first_event_time <= ?"
        query = (
            f"{_RUN} WHERE r.job_node_id = ?{bound} ORDER BY r.first_event_time DESC, r.run_id DESC LIMIT ?"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), (node_id, limit) if as_of is None else (node_id, as_of, limit))
            return [_run(row) for row in cur.fetchall()]

    def runs_by_id(self, run_ids: Sequence[str]) -> dict[str, RunRef]:
        with self._reading() as cur:
            rows = self._chunked(cur, f"{_RUN} WHERE r.run_id IN ({{marks}})", run_ids)
        return {row[0]: _run(row) for row in rows}

    def child_runs(self, run_id: str, *, limit: int, as_of: str | None) -> list[RunRef]:
        bound = "" if as_of is None else " AND r.first_event_time <= ?"
        query = (
            f"{_RUN} WHERE r.parent_run_id = ? AND r.run_id <> ?{bound} "
            "ORDER BY r.first_event_time, r.run_id LIMIT ?"
        )
        params = (run_id, run_id, limit) if as_of is None else (run_id, run_id, as_of, limit)
        with self._reading() as cur:
            cur.execute(self._sql(query), params)
            return [_run(row) for row in cur.fetchall()]

    def element_browse_id(self, element_type: str, description: str) -> int | None:
        with self._reading() as cur:
            cur.execute(
                self._sql("SELECT id FROM generic_elements WHERE type = ? AND description = ?"),
                (element_type, description),
            )
            row = cur.fetchone()
        return int(row[0]) if row else None

    def element_tags_at(self, element_id: int, as_of: str) -> list[GenericTagRow]:
        # "latest" is by receive order (the event's id is its seq), as generic_element_latest_tags keeps it
        query = (
            "SELECT id, key, value FROM (SELECT t.id, t.key, t.value, ROW_NUMBER() OVER "
            "(PARTITION BY t.key ORDER BY x.event_id DESC) AS r FROM generic_element_tags x "
            "JOIN generic_tags t ON t.id = x.tag_id JOIN generic_events e ON e.id = x.event_id "
            "WHERE x.element_id = ? AND e.received_at <= ?) latest WHERE r = 1 ORDER BY key"
        )
        with self._reading() as cur:
            cur.execute(self._sql(query), (element_id, as_of))
            return [GenericTagRow(int(row[0]), row[1], row[2]) for row in cur.fetchall()]

    # -- node search -----------------------------------------------------------------------------
    def find_nodes(self, node_type: str, name: str, *, limit: int) -> list[FoundNode]:
        with self._reading() as cur:
            if node_type == "datasetField":
                return self._find_fields(cur, name, limit)
            if node_type == "element":
                query = (
                    "SELECT n.node_id, n.type, n.description FROM element_nodes n "
                    f"WHERE {_MATCH.format(column='n.description')} "
                    "AND NOT EXISTS (SELECT 1 FROM datasets d WHERE d.node_id = n.node_id) "
                    "AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.node_id = n.node_id) "
                    "ORDER BY n.description, n.node_id LIMIT ?"
                )
                cur.execute(self._sql(query), (_like(name), limit))
                return [FoundNode(row[0], "element", row[2], row[1]) for row in cur.fetchall()]
            if node_type == "run":
                query = (
                    f"SELECT run_id FROM runs WHERE {_MATCH.format(column='run_id')} ORDER BY run_id LIMIT ?"
                )
                cur.execute(self._sql(query), (_like(name), limit))
                return [FoundNode(f"run:{run_id}", "run", run_id) for (run_id,) in cur.fetchall()]
            select, prefix = _NAMED[node_type]
            query = f"{select} {_MATCH.format(column='name')} ORDER BY name LIMIT ?"
            cur.execute(self._sql(query), (_like(name), limit))
            return [FoundNode(prefix + found, node_type, found, uri=uri) for found, uri in cur.fetchall()]

    def _find_fields(self, cur: Any, name: str, limit: int) -> list[FoundNode]:
        """Fields of the schema facets in force whose path holds `name`. Facet values are JSON, so
        SQL can only narrow them down to those holding the text; the paths are matched here, over
        batches, keeping the first `limit` (by path and canonical dataset) as it goes."""
        text = name.lower()
        schemas = facet_in_force("dataset_facets", "schema", None, every=True)
        query = (
            f"SELECT COALESCE(a.canonical_id, s.node_id), s.value FROM ({schemas.sql}) s "
            "LEFT JOIN dataset_aliases a ON a.node_id = s.node_id"
        )
        params: list[Any] = list(schemas.before)
        if text.isascii() and '"' not in text and "\\" not in text:  # spelt the same inside JSON
            query += f" WHERE {_MATCH.format(column='s.value')}"
            params.append(_like(text))
        kept: dict[tuple[str, str], str | None] = {}  # (path, dataset id) → field type
        cur.execute(self._sql(query), params)
        while rows := cur.fetchmany(_BATCH):
            for dataset_id, value in rows:
                for path, _, kind, _ in facet_fields(value):
                    if text in path.lower():
                        kept.setdefault((path, dataset_id), kind)
            if len(kept) > 2 * limit:
                kept = {key: kept[key] for key in heapq.nsmallest(limit, kept)}
        first = sorted(kept)[:limit]
        datasets = {
            row[0]: (row[1], row[2])
            for row in self._chunked(
                cur,
                "SELECT node_id, namespace, name FROM datasets WHERE node_id IN ({marks})",
                [dataset_id for _, dataset_id in first],
            )
        }
        found = []
        for path, dataset_id in first:
            if dataset_id in datasets:
                namespace, dataset = datasets[dataset_id]
                found.append(
                    FoundNode(
                        f"datasetField:{namespace}:{dataset}:{path}",
                        "datasetField",
                        path,
                        namespace,
                        dataset=dataset,
                        field_type=kept[(path, dataset_id)],
                    )
                )
        return found
