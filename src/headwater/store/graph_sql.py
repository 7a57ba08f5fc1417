"""The lineage graph in SQL (both backends): the `GraphReader` methods of the store.

Current edges come from the graph tables the pipeline publishes (`lineage_edges`, and
`ultimate_nodes`; dataset→dataset edges are joined from `lineage_edges`); elements and their
`event` edges from the tables it folds generic events into (`element_nodes`, `element_edges`).
Edges as of a past time are derived from job versions: a job's version at time T is the version
of its latest run whose first event came by T, and its inputs and outputs are that version's.
Facets at T are the assertions with the latest (valid_from, seq) not after T.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from headwater.events.schema_fields import SchemaField, facet_fields
from headwater.store.deletions_sql import DeletionsSql
from headwater.store.graph import (
    ColumnEdge,
    Direction,
    FieldRef,
    GraphEdge,
    GraphNode,
    RunInput,
    RunLink,
    UltimateEnd,
)
from headwater.store.in_force_sql import facet_in_force

# The job version in force at time ? for the job in column `{job}`.
_VERSION_AT = (
    "(SELECT r.job_version FROM runs r WHERE r.job_node_id = {job} AND r.first_event_time <= ? "
    "ORDER BY r.first_event_time DESC, r.run_id DESC LIMIT 1)"
)


# dataset→dataset edges through a job, next to the datasets: each input of the job to each of its
# outputs (but itself). Joined here, not kept: one job of 3,000 inputs and 3,000 outputs has 9
# million of them.
_CONDENSED = {
    "down": (
        "SELECT i.src_id, o.dst_id, i.dst_id FROM lineage_edges i "
        "JOIN lineage_edges o ON o.src_id = i.dst_id AND o.edge_type = 'output' "
        "WHERE i.edge_type = 'input' AND i.src_id IN ({marks}) AND o.dst_id <> i.src_id"
    ),
    "up": (
        "SELECT i.src_id, o.dst_id, o.src_id FROM lineage_edges o "
        "JOIN lineage_edges i ON i.dst_id = o.src_id AND i.edge_type = 'input' "
        "WHERE o.edge_type = 'output' AND o.dst_id IN ({marks}) AND i.src_id <> o.dst_id"
    ),
}


def _split(node_ids: Sequence[str]) -> tuple[list[str], list[str]]:
    datasets = [n for n in node_ids if n.startswith("dataset:")]
    jobs = [n for n in node_ids if n.startswith("job:")]
    return datasets, jobs


class GraphSql(DeletionsSql):
    """The `GraphReader` methods over the model tables; mixed into the SQL store."""

    # -- nodes and aliases -----------------------------------------------------------------------
    def graph_nodes(self, node_ids: Sequence[str]) -> dict[str, GraphNode]:
        hidden = self.hidden_nodes(node_ids)
        return (
            self._graph_nodes([n for n in node_ids if n not in hidden])
            if hidden
            else self._graph_nodes(node_ids)
        )

    def _graph_nodes(self, node_ids: Sequence[str]) -> dict[str, GraphNode]:
        datasets, jobs = _split(node_ids)
        found: dict[str, GraphNode] = {}
        with self._reading() as cur:
            query = (
                "SELECT d.node_id, d.namespace, d.name, d.created_at, d.updated_at, "
                "COALESCE(a.canonical_id, d.node_id), d.current_version, d.source_name, v.lifecycle, "
                "d.version_time FROM datasets d "
                "LEFT JOIN dataset_aliases a ON a.node_id = d.node_id "
                "LEFT JOIN dataset_versions v ON v.version_id = d.current_version "
                "WHERE d.node_id IN ({marks})"
            )
            rows = self._chunked(cur, query, datasets)
            tags = self._tags(cur, "dataset_tags", [r[0] for r in rows])
            for row in rows:
                found[row[0]] = GraphNode(
                    row[0],
                    "dataset",
                    row[1],
                    row[2],
                    row[3],
                    row[4],
                    row[5],
                    version=row[6],
                    source=row[7],
                    tags=tags.get(row[0], ()),
                    lifecycle=row[8],
                    lifecycle_time=row[9] if row[8] else None,
                )
            # jobs, then their latest runs by key: two index lookups, whatever the planner
            # thinks of a join between a key list and a table of millions of runs
            query = (
                "SELECT node_id, namespace, name, created_at, updated_at, current_version, latest_run_id "
                "FROM jobs WHERE node_id IN ({marks})"
            )
            rows = self._chunked(cur, query, jobs)
            query = "SELECT run_id, state, state_time FROM runs WHERE run_id IN ({marks})"
            states = {r[0]: (r[1], r[2]) for r in self._chunked(cur, query, [r[6] for r in rows if r[6]])}
            query = (
                "SELECT child_node_id, MIN(parent_node_id) FROM job_parents "
                "WHERE child_node_id IN ({marks}) GROUP BY child_node_id"
            )
            parents = dict(self._chunked(cur, query, [r[0] for r in rows])) if rows else {}
            tags = self._tags(cur, "job_tags", [r[0] for r in rows])
            for row in rows:
                state, state_time = states.get(row[6], (None, None))
                found[row[0]] = GraphNode(
                    row[0],
                    "job",
                    row[1],
                    row[2],
                    row[3],
                    row[4],
                    row[0],
                    version=row[5],
                    state=state,
                    state_time=state_time,
                    parent=parents.get(row[0]),
                    tags=tags.get(row[0], ()),
                )
        return found

    def _tags(self, cur: Any, table: str, node_ids: list[str]) -> dict[str, tuple[str, ...]]:
        """The tags of each node, by name, from `table` (dataset_tags or job_tags)."""
        found: dict[str, list[str]] = {}
        if node_ids:
            query = f"SELECT node_id, tag FROM {table} WHERE node_id IN ({{marks}}) ORDER BY node_id, tag"
            for node_id, tag in self._chunked(cur, query, node_ids):
                found.setdefault(node_id, []).append(tag)
        return {node_id: tuple(names) for node_id, names in found.items()}

    def _aliases(self, cur: Any, node_ids: Sequence[str], by: str) -> dict[str, str]:
        """name → canonical id for `node_ids` and the names found by the `by` column."""
        found = {node_id: node_id for node_id in node_ids}
        query = f"SELECT node_id, canonical_id FROM dataset_aliases WHERE {by} IN ({{marks}})"
        for node_id, canonical_id in self._chunked(cur, query, node_ids):
            found[node_id] = canonical_id
        return found

    def _names_of(self, cur: Any, canonical_ids: Sequence[str]) -> dict[str, str]:
        """Every dataset name merged into the given canonical ids → its canonical id."""
        return self._aliases(cur, canonical_ids, "canonical_id")

    def _canonical(self, cur: Any, node_ids: Sequence[str]) -> dict[str, str]:
        """The canonical id of each dataset name (itself when no symlink merged it)."""
        return self._aliases(cur, node_ids, "node_id")

    # -- dataset and job edges -------------------------------------------------------------------
    def graph_edges(
        self, node_ids: Sequence[str], direction: Direction, *, condensed: bool, as_of: str | None
    ) -> list[GraphEdge]:
        """The edges next to the nodes, without those that touch a deleted node (or pass through
        a deleted job), in a fixed order: the pipeline writes the graph tables in whatever order
        Spark's partitions come, and an answer (and where `limit` cuts it) must not follow that."""
        edges = self._graph_edges(node_ids, direction, condensed=condensed, as_of=as_of)
        edges.sort(key=lambda e: (e.src_id, e.dst_id, e.kind, e.job_id or ""))
        ends = {n for e in edges for n in (e.src_id, e.dst_id, e.job_id) if n}
        hidden = self.hidden_nodes(sorted(ends))
        if not hidden:
            return edges
        return [e for e in edges if not ({e.src_id, e.dst_id, e.job_id} & hidden)]

    def _graph_edges(
        self, node_ids: Sequence[str], direction: Direction, *, condensed: bool, as_of: str | None
    ) -> list[GraphEdge]:
        if not node_ids:
            return []
        with self._reading() as cur:
            if as_of is not None:
                return self._edges_at(cur, node_ids, direction, condensed, as_of)
            side = "dst_id" if direction == "up" else "src_id"
            if condensed:
                rows = self._chunked(cur, _CONDENSED[direction], _split(node_ids)[0])
                return [GraphEdge(src, dst, "condensed", job) for src, dst, job in rows]
            query = (
                f"SELECT src_id, dst_id, edge_type, job_id FROM lineage_edges WHERE {side} IN ({{marks}}) "
                "AND edge_type IN ('input', 'output')"
            )
            return [
                GraphEdge(src, dst, kind, job) for src, dst, kind, job in self._chunked(cur, query, node_ids)
            ]

    def _edges_at(
        self, cur: Any, node_ids: Sequence[str], direction: Direction, condensed: bool, as_of: str
    ) -> list[GraphEdge]:
        datasets, jobs = _split(node_ids)
        if not condensed:
            return self._dataset_edges_at(cur, datasets, direction, as_of) + self._job_edges_at(
                cur, jobs, direction, as_of
            )
        # dataset→dataset: through the jobs next to the datasets, to the datasets next to those jobs
        first = self._dataset_edges_at(cur, datasets, direction, as_of)
        via = [edge.dst_id if direction == "down" else edge.src_id for edge in first]
        second = self._job_edges_at(cur, list(dict.fromkeys(via)), direction, as_of)
        edges: dict[tuple[str, str, str], GraphEdge] = {}
        if direction == "down":
            outputs: dict[str, list[str]] = {}
            for edge in second:
                outputs.setdefault(edge.src_id, []).append(edge.dst_id)
            for edge in first:
                for dst in outputs.get(edge.dst_id, []):
                    if dst != edge.src_id:
                        edges[(edge.src_id, dst, edge.dst_id)] = GraphEdge(
                            edge.src_id, dst, "condensed", edge.dst_id
                        )
        else:
            inputs: dict[str, list[str]] = {}
            for edge in second:
                inputs.setdefault(edge.dst_id, []).append(edge.src_id)
            for edge in first:
                for src in inputs.get(edge.src_id, []):
                    if src != edge.dst_id:
                        edges[(src, edge.dst_id, edge.src_id)] = GraphEdge(
                            src, edge.dst_id, "condensed", edge.src_id
                        )
        return list(edges.values())

    def _dataset_edges_at(
        self, cur: Any, datasets: Sequence[str], direction: Direction, as_of: str
    ) -> list[GraphEdge]:
        """Jobs that read (`down`) or wrote (`up`) the datasets in their version at `as_of`."""
        if not datasets:
            return []
        names = self._names_of(cur, datasets)
        io = "input" if direction == "down" else "output"
        query = (
            "SELECT io.node_id, v.node_id FROM job_version_io io "
            "JOIN job_versions v ON v.version_id = io.version_id "
            f"WHERE io.node_id IN ({{marks}}) AND io.direction = ? AND v.version_id = "
            f"{_VERSION_AT.format(job='v.node_id')}"
        )
        edges = set()
        for name, job in self._chunked(cur, query, list(names), io, as_of):
            dataset = names[name]
            edges.add((dataset, job) if direction == "down" else (job, dataset))
        kind: Literal["input", "output"] = "input" if direction == "down" else "output"
        return [GraphEdge(src, dst, kind, dst if kind == "input" else src) for src, dst in sorted(edges)]

    def _job_edges_at(
        self, cur: Any, jobs: Sequence[str], direction: Direction, as_of: str
    ) -> list[GraphEdge]:
        """The outputs (`down`) or inputs (`up`) of the jobs' versions at `as_of`."""
        if not jobs:
            return []
        io = "output" if direction == "down" else "input"
        query = (
            "SELECT j.node_id, io.node_id FROM jobs j JOIN job_version_io io "
            f"ON io.version_id = {_VERSION_AT.format(job='j.node_id')} AND io.direction = ? "
            "WHERE j.node_id IN ({marks})"
        )
        rows = self._chunked(cur, query, jobs, before=(as_of, io))
        canonical = self._canonical(cur, [dataset for _, dataset in rows])
        edges = {(job, canonical[dataset]) for job, dataset in rows}
        kind: Literal["input", "output"] = "output" if direction == "down" else "input"
        if kind == "output":
            return [GraphEdge(job, dataset, kind, job) for job, dataset in sorted(edges)]
        return [GraphEdge(dataset, job, kind, job) for job, dataset in sorted(edges)]

    # -- elements folded from generic events ------------------------------------------------------
    def element_nodes(self, node_ids: Sequence[str], *, as_of: str | None = None) -> dict[str, GraphNode]:
        bound, after = ("", ()) if as_of is None else (" AND n.created_at <= ?", (as_of,))
        query = (
            "SELECT n.node_id, n.type, n.description, n.created_at, n.updated_at, n.event_count, g.id "
            "FROM element_nodes n LEFT JOIN generic_elements g "
            "ON g.type = n.type AND g.description = n.description "
            f"WHERE n.node_id IN ({{marks}}){bound}"
        )
        with self._reading() as cur:
            rows = self._chunked(cur, query, node_ids, *after)
        return {
            row[0]: GraphNode(
                row[0],
                "element",
                row[1],
                row[2],
                row[3],
                row[4],
                row[0],
                event_count=int(row[5]),
                element_id=int(row[6]) if row[6] is not None else None,
            )
            for row in rows
        }

    def event_edges(
        self, node_ids: Sequence[str], direction: Direction, *, as_of: str | None
    ) -> list[GraphEdge]:
        bound, after = ("", ()) if as_of is None else (" AND created_at <= ?", (as_of,))
        side = "dst_id" if direction == "up" else "src_id"
        query = (
            "SELECT src_id, dst_id, event_type, created_at, updated_at, event_count FROM element_edges "
            f"WHERE {side} IN ({{marks}}){bound}"
        )
        with self._reading() as cur:
            rows = self._chunked(cur, query, node_ids, *after)
        return [
            GraphEdge(src, dst, "event", "", label, created, updated, int(count))
            for src, dst, label, created, updated, count in rows
        ]

    def has_elements(self) -> bool:
        with self._reading() as cur:
            cur.execute("SELECT 1 FROM element_nodes LIMIT 1")
            return cur.fetchone() is not None

    # -- column lineage --------------------------------------------------------------------------
    def _lineage_facets(self, cur: Any, names: Sequence[str], as_of: str | None) -> list[tuple[str, str]]:
        """(dataset name, columnLineage facet hash) in force for the given dataset names."""
        query = facet_in_force("dataset_facets", "columnLineage", as_of, value=False)
        rows = self._chunked(cur, query.sql, names, before=query.before)
        return [(str(node), str(facet)) for node, facet in rows]

    def column_edges(
        self, fields: Sequence[FieldRef], direction: Direction, *, as_of: str | None
    ) -> list[ColumnEdge]:
        if not fields:
            return []
        with self._reading() as cur:
            if direction == "up":
                return self._column_edges_up(cur, fields, as_of)
            return self._column_edges_down(cur, fields, as_of)

    def _column_edges_up(self, cur: Any, fields: Sequence[FieldRef], as_of: str | None) -> list[ColumnEdge]:
        datasets = list(dict.fromkeys(ref.dataset_id for ref in fields))
        names = self._names_of(cur, datasets)
        owners: dict[str, set[str]] = {}
        for name, facet in self._lineage_facets(cur, list(names), as_of):
            owners.setdefault(facet, set()).add(names[name])
        query = (
            "SELECT facet_hash, field, input_node_id, input_field, type, subtype, description "
            "FROM column_lineage WHERE facet_hash IN ({marks})"
        )
        rows = self._chunked(cur, query, list(owners))
        canonical = self._canonical(cur, [row[2] for row in rows])
        wanted = {(ref.dataset_id, ref.field) for ref in fields}
        edges: dict[tuple[Any, ...], ColumnEdge] = {}
        for facet, field, source, source_field, kind, subtype, text in rows:
            for dataset in owners[facet]:
                # a dataset-level entry (field "") feeds every field of the dataset
                targets = [field] if field else [f for d, f in wanted if d == dataset]
                for target in targets:
                    if (dataset, target) not in wanted:
                        continue
                    edge = ColumnEdge(
                        FieldRef(canonical[source], source_field),
                        FieldRef(dataset, target),
                        kind,
                        subtype,
                        text,
                        dataset_level=not field,
                    )
                    edges[(edge.src, edge.dst, kind, subtype)] = edge
        return list(edges.values())

    def _column_edges_down(self, cur: Any, fields: Sequence[FieldRef], as_of: str | None) -> list[ColumnEdge]:
        datasets = list(dict.fromkeys(ref.dataset_id for ref in fields))
        names = self._names_of(cur, datasets)
        wanted = {(ref.dataset_id, ref.field) for ref in fields}
        query = (
            "SELECT facet_hash, field, input_node_id, input_field, type, subtype, description "
            "FROM column_lineage WHERE input_node_id IN ({marks})"
        )
        rows = [row for row in self._chunked(cur, query, list(names)) if (names[row[2]], row[3]) in wanted]
        if not rows:
            return []
        # the datasets that ever asserted one of these facets, then those that still do
        hashes = {row[0] for row in rows}
        query = (
            "SELECT DISTINCT f.node_id FROM dataset_facets f "
            "WHERE f.name = 'columnLineage' AND f.value_hash IN ({marks})"
        )
        asserted = [node for (node,) in self._chunked(cur, query, list(hashes))]
        owners: dict[str, set[str]] = {}
        for node_id, facet in self._lineage_facets(cur, asserted, as_of):
            if facet in hashes:
                owners.setdefault(facet, set()).add(node_id)
        canonical = self._canonical(cur, [node for nodes in owners.values() for node in nodes])
        edges: dict[tuple[Any, ...], ColumnEdge] = {}
        level_targets: dict[str, list[str]] = {}
        dataset_level = [row for row in rows if not row[1]]
        if dataset_level:
            targets = {canonical[node] for row in dataset_level for node in owners.get(row[0], ())}
            for dataset, found in self._fields(cur, list(targets), as_of).items():
                level_targets[dataset] = [path for path, *_ in found]
        for facet, field, source, source_field, kind, subtype, text in rows:
            src = FieldRef(names[source], source_field)
            for owner in owners.get(facet, ()):
                dataset = canonical[owner]
                for target in [field] if field else level_targets.get(dataset, []):
                    edge = ColumnEdge(src, FieldRef(dataset, target), kind, subtype, text, not field)
                    edges[(edge.src, edge.dst, kind, subtype)] = edge
        return list(edges.values())

    def dataset_fields(
        self, dataset_ids: Sequence[str], *, as_of: str | None
    ) -> dict[str, list[SchemaField]]:
        with self._reading() as cur:
            return self._fields(cur, dataset_ids, as_of)

    def _fields(
        self, cur: Any, dataset_ids: Sequence[str], as_of: str | None
    ) -> dict[str, list[SchemaField]]:
        names = self._names_of(cur, list(dataset_ids))
        query = facet_in_force("dataset_facets", "schema", as_of)
        found: dict[str, list[SchemaField]] = {}
        for node_id, value in self._chunked(cur, query.sql, list(names), before=query.before):
            canonical, fields = names[node_id], facet_fields(value)
            if canonical in found:  # another name merged into the same dataset: its new fields
                known = {path for path, *_ in found[canonical]}
                found[canonical] += [field for field in fields if field[0] not in known]
            else:
                found[canonical] = fields
        return found

    # -- augmentation ----------------------------------------------------------------------------
    def ultimate_ends(
        self, node_ids: Sequence[str], kind: Literal["source", "destination"]
    ) -> list[UltimateEnd]:
        query = (
            "SELECT node_id, other_id, distance FROM ultimate_nodes WHERE node_id IN ({marks}) AND kind = ?"
        )
        with self._reading() as cur:
            rows = self._chunked(cur, query, node_ids, kind)
        return [UltimateEnd(node, kind, other, int(distance)) for node, other, distance in rows]

    # -- run lineage -----------------------------------------------------------------------------
    def run_links(self, run_ids: Sequence[str]) -> dict[str, RunLink]:
        runs = (
            "SELECT r.run_id, j.namespace, j.name, r.job_version, r.state, r.started_at, r.ended_at "
            "FROM runs r JOIN jobs j ON j.node_id = r.job_node_id WHERE r.run_id IN ({marks})"
        )
        # the version of each input (under any of its symlinked names) written last before the run
        # started, and the run that wrote it
        inputs = (
            "SELECT io.run_id, io.node_id, d.namespace, d.name, "
            "(SELECT dvr.version_id || ' ' || dvr.run_id FROM dataset_version_runs dvr "
            "JOIN dataset_versions dv ON dv.version_id = dvr.version_id "
            "WHERE (dv.node_id = io.node_id OR dv.node_id IN (SELECT b.node_id FROM dataset_aliases a "
            "JOIN dataset_aliases b ON b.canonical_id = a.canonical_id WHERE a.node_id = io.node_id)) "
            "AND dvr.run_id <> io.run_id "
            "AND dvr.event_time <= COALESCE(r.started_at, r.first_event_time) "
            "ORDER BY dvr.event_time DESC, dvr.event_seq DESC LIMIT 1) "
            "FROM run_io io JOIN runs r ON r.run_id = io.run_id JOIN datasets d ON d.node_id = io.node_id "
            "WHERE io.direction = 'input' AND io.run_id IN ({marks}) ORDER BY io.run_id, d.namespace, d.name"
        )
        with self._reading() as cur:
            found = self._chunked(cur, runs, run_ids)
            read: dict[str, list[RunInput]] = {}
            for run_id, node_id, namespace, name, written in self._chunked(
                cur, inputs, [r[0] for r in found]
            ):
                version, _, producer = (written or "").partition(" ")
                read.setdefault(run_id, []).append(
                    RunInput(node_id, namespace, name, version or None, producer or None)
                )
        return {
            row[0]: RunLink(
                row[0], row[1], row[2], row[3], row[4], row[5], row[6], tuple(read.get(row[0], ()))
            )
            for row in found
        }

    def version_created_at(self, node_id: str, version: str) -> str | None:
        table = "dataset_versions" if node_id.startswith("dataset:") else "job_versions"
        with self._reading() as cur:
            cur.execute(
                self._sql(f"SELECT created_at FROM {table} WHERE version_id = ? AND node_id = ?"),
                (version, node_id),
            )
            row = cur.fetchone()
        return str(row[0]) if row and row[0] is not None else None
