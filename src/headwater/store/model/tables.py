"""The model tables as the pipeline publishes them: each one's columns (the Python side of the
migrations' definition: tests/store/test_model_tables.py checks that they agree), key, and merge
rule.

Each time rule of the merge is written once, here: a row's span widens (`_span`), a value set at
a later (time, seq) replaces the stored one (`_latest`), a row first written at an earlier
(time, seq) takes its creation from it (`_earliest`), a run's rows replace what was there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Table:
    """A model table as the pipeline writes it: the columns it stages (in this order), its key,
    and how a staged row merges into a stored one."""

    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]
    # SET clause on conflict ({least}/{greatest} become the dialect's functions), "" = ignore
    on_conflict: str = ""
    # columns the merge computes from other tables (never staged): the table's other columns
    computed: tuple[str, ...] = ()
    # a batch's staged rows are all new: they replace their runs' rows, deleted first
    # (RUN_SCOPED); `merge` then inserts them
    # without a conflict clause, with which PostgreSQL inserts each row speculatively (about 1.6
    # times the cost)
    new_rows: bool = False
    # a facet history: the merge keeps each (node, name)'s changes, first and last assertions
    # (`headwater.store.model.history`), not every staged row
    history: bool = False
    # columns staged with the rows that the model does not keep (after `columns`)
    staged_only: tuple[str, ...] = ()

    @property
    def stage(self) -> str:
        return f"stage_{self.name}"

    @property
    def staged(self) -> tuple[str, ...]:
        """The columns of the table's staged rows, in their order."""
        return self.columns + self.staged_only


def _latest(table: str, time: str, seq: str, columns: Sequence[str], *, ties: bool = False) -> str:
    """Columns taken from the staged row when its (time, seq) is later than the stored one."""
    op = ">=" if ties else ">"
    newer = (
        f"excluded.{time} IS NOT NULL AND ({table}.{time} IS NULL OR "
        f"(excluded.{time}, excluded.{seq}) {op} ({table}.{time}, {table}.{seq}))"
    )
    return ", ".join(f"{c} = CASE WHEN {newer} THEN excluded.{c} ELSE {table}.{c} END" for c in columns)


def _earliest(table: str, time: str, seq: str, columns: Sequence[str]) -> str:
    """Columns taken from the staged row when its (time, seq) is earlier than the stored one."""
    older = f"(excluded.{time}, excluded.{seq}) < ({table}.{time}, {table}.{seq})"
    return ", ".join(f"{c} = CASE WHEN {older} THEN excluded.{c} ELSE {table}.{c} END" for c in columns)


def _span(table: str) -> str:
    return (
        f"created_at = {{least}}({table}.created_at, excluded.created_at), "
        f"updated_at = {{greatest}}({table}.updated_at, excluded.updated_at)"
    )


def _replace(columns: Sequence[str], key: Sequence[str]) -> str:
    return ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key)


_RUN_COLUMNS = (
    "run_id", "job_node_id", "state", "state_time", "started_at", "ended_at", "duration_ms",
    "nominal_start", "nominal_end", "parent_run_id", "root_run_id", "job_version",
    "first_event_time", "last_event_time", "event_count", "updated_seq",
)  # fmt: skip

# a facet assertion: the rows the in-force rule reads (headwater.store.in_force_sql)
_ASSERTION_COLUMNS = ("node_id", "name", "valid_from", "seq", "value_hash", "deleted")
_ASSERTION_KEY = ("node_id", "name", "valid_from", "seq")
_ELEMENT_NODE_COLUMNS = ("node_id", "type", "description", "created_at", "updated_at", "event_count")
_ELEMENT_EDGE_COLUMNS = ("src_id", "dst_id", "event_type", "created_at", "updated_at", "event_count")
# generic events folded into the graph (pipeline.elements): spans widen, counts add up (every
# event is in exactly one batch)
ELEMENT_TABLES: tuple[Table, ...] = (
    Table(
        "element_nodes",
        _ELEMENT_NODE_COLUMNS,
        ("node_id",),
        _span("element_nodes") + ", event_count = element_nodes.event_count + excluded.event_count",
    ),
    Table(
        "element_edges",
        _ELEMENT_EDGE_COLUMNS,
        ("src_id", "dst_id", "event_type"),
        _span("element_edges") + ", event_count = element_edges.event_count + excluded.event_count",
    ),
)
FACT_TABLES: tuple[Table, ...] = (
    Table("namespaces", ("name", "created_at", "updated_at"), ("name",), _span("namespaces")),
    Table(
        "sources",
        ("name", "uri", "created_at", "updated_at", "set_time", "set_seq"),
        ("name",),
        _span("sources") + ", " + _latest("sources", "set_time", "set_seq", ("uri", "set_time", "set_seq")),
    ),
    Table(
        "datasets",
        (
            "node_id",
            "namespace",
            "name",
            "created_at",
            "updated_at",
            "source_name",
            "source_time",
            "source_seq",
            "current_version",
            "version_time",
            "version_seq",
        ),
        ("node_id",),
        _span("datasets")
        + ", "
        + _latest("datasets", "source_time", "source_seq", ("source_name", "source_time", "source_seq"))
        + ", "
        + _latest(
            "datasets", "version_time", "version_seq", ("current_version", "version_time", "version_seq")
        ),
    ),
    Table("facet_values", ("hash", "value"), ("hash",)),
    Table("dataset_facets", _ASSERTION_COLUMNS, _ASSERTION_KEY, history=True, staged_only=("repeated",)),
    Table("job_facets", _ASSERTION_COLUMNS, _ASSERTION_KEY, history=True, staged_only=("repeated",)),
    Table(
        "schema_fields", ("schema_hash", "path", "position", "type", "description"), ("schema_hash", "path")
    ),
    Table(
        "column_lineage",
        ("facet_hash", "field", "input_node_id", "input_field", "type", "subtype", "description", "masking"),
        ("facet_hash", "field", "input_node_id", "input_field", "type", "subtype"),
    ),
    Table("dataset_symlinks", ("node_id", "alias_node_id", "type"), ("node_id", "alias_node_id")),
    Table(
        "dataset_versions",
        (
            "version_id",
            "node_id",
            "schema_hash",
            "version_label",
            "lifecycle",
            "created_at",
            "created_seq",
            "created_by_run",
        ),
        ("version_id",),
        _earliest(
            "dataset_versions", "created_at", "created_seq", ("created_at", "created_seq", "created_by_run")
        ),
    ),
    Table(
        "dataset_version_runs",
        ("version_id", "run_id", "event_time", "event_seq"),
        ("version_id", "run_id"),
        new_rows=True,
    ),
    Table("job_parents", ("parent_node_id", "child_node_id"), ("parent_node_id", "child_node_id")),
    # run-scoped: staged rows are complete for their runs and replace what was there
    Table("runs", _RUN_COLUMNS, ("run_id",), _replace(_RUN_COLUMNS, ("run_id",))),
    Table("run_facets", ("run_id", "name", "value_hash", "event_time"), ("run_id", "name"), new_rows=True),
    Table("run_io", ("run_id", "direction", "node_id"), ("run_id", "direction", "node_id"), new_rows=True),
    Table(
        "run_io_facets",
        ("run_id", "direction", "node_id", "name", "value_hash", "event_time"),
        ("run_id", "direction", "node_id", "name"),
        new_rows=True,
    ),
    # counts kept by every merge as runs join or leave a version (merge._recount_job_versions)
    Table(
        "job_versions",
        ("version_id", "node_id", "source_code_location", "sql"),
        ("version_id",),
        computed=("created_at", "updated_at", "run_count"),
    ),
    Table("job_version_io", ("version_id", "direction", "node_id"), ("version_id", "direction", "node_id")),
    Table(
        "jobs",
        (
            "node_id",
            "namespace",
            "name",
            "created_at",
            "updated_at",
            "current_version",
            "latest_run_id",
            "latest_run_time",
        ),
        ("node_id",),
        _span("jobs")
        + ", "
        + _latest(
            "jobs",
            "latest_run_time",
            "latest_run_id",
            ("current_version", "latest_run_id", "latest_run_time"),
            ties=True,
        ),
    ),
    *ELEMENT_TABLES,
)
GRAPH_TABLES: tuple[Table, ...] = (
    Table("dataset_aliases", ("node_id", "canonical_id"), ("node_id",)),
    Table(
        "lineage_edges",
        ("src_id", "dst_id", "edge_type", "job_id", "version_id"),
        ("src_id", "dst_id", "edge_type"),
    ),
    Table("ultimate_nodes", ("node_id", "kind", "other_id", "distance"), ("node_id", "kind", "other_id")),
    Table("dataset_depth", ("node_id", "depth"), ("node_id",)),
)
TABLES = {t.name: t for t in (*FACT_TABLES, *GRAPH_TABLES)}
RUN_SCOPED = ("run_facets", "run_io", "run_io_facets", "dataset_version_runs")
MODEL_TABLES = tuple(TABLES)
# a merge that adds to one of these changes the graph
GRAPH_INPUTS = ("job_parents", "dataset_symlinks", "job_version_io")
