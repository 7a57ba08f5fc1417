"""Retention's model refresh in SQL (`pipeline.retention` says the steps): the keys the forgotten
events D contributed to, the conditions that pick D's and the remaining events R to stage, and the
transaction that takes D out of the model and merges R's staged rows back by the pipeline's rules.
"""

from __future__ import annotations

from typing import Any

from headwater.store.base import EventStore
from headwater.store.model import checkpoint
from headwater.store.model.dialect import dialect_of
from headwater.store.model.merge import clear_staged, merge_staged
from headwater.store.model.staging import VERSION_RUNS
from headwater.store.model.tables import RUN_SCOPED
from headwater.store.retention_sql import DOOMED

# what D contributed to, kept from its staged frames: table → key columns
_KEYS: dict[str, tuple[str, ...]] = {
    "runs": ("run_id",),
    "datasets": ("node_id",),
    "jobs": ("node_id",),
    "sources": ("name",),
    "namespaces": ("name",),
    "dataset_symlinks": ("node_id", "alias_node_id"),
    "job_parents": ("parent_node_id", "child_node_id"),
    "element_nodes": ("node_id",),
    "element_edges": ("src_id", "dst_id", "event_type"),
    "facet_values": ("hash",),
    "schema_fields": ("schema_hash",),
    "column_lineage": ("facet_hash",),
}
_REFOLDED = (
    "datasets",
    "jobs",
    "sources",
    "dataset_symlinks",
    "job_parents",
    "element_nodes",
    "element_edges",
)
_KEPT_SCHEMAS = "retention_kept_schemas"
COUNTED = ("runs", "jobs", "datasets", "job_versions", "dataset_versions", "namespaces", "sources")


def _key_table(name: str) -> str:
    return f"retention_{name}"


# retention's scratch tables, dropped when it is done (retention_sql.drop_scratch)
SCRATCH = (DOOMED, *(_key_table(n) for n in _KEYS), _KEPT_SCHEMAS, "retention_lost_tags")
# the values of the schema facets a remaining event asserts, (value_hash, value): the history
# keeps a node's changes only, so an assertion R repeats may be staged and not stored
SCHEMA_VALUES_SQL = (
    "SELECT DISTINCT v.hash AS value_hash, v.value AS value FROM facet_values v "
    "WHERE v.hash IN (SELECT f.value_hash FROM dataset_facets f WHERE f.name = 'schema' "
    f"AND f.deleted = 0 AND f.seq NOT IN (SELECT seq FROM {DOOMED}) "
    "UNION SELECT s.value_hash FROM stage_dataset_facets s WHERE s.name = 'schema' AND s.deleted = 0)"
)


def counts(store: EventStore) -> dict[str, int]:
    """Rows of the model tables retention reports on."""
    with store.transaction() as cur:
        out = {}
        for name in COUNTED:
            cur.execute(f"SELECT COUNT(*) FROM {name}")
            out[name] = int(cur.fetchone()[0])
        return out


def _held(checkpoint: int) -> str:
    return f"e.seq <= {int(checkpoint)}"


_DOOMED_EVENT = f"e.seq IN (SELECT seq FROM {DOOMED})"


def doomed_events(checkpoint: int) -> str:
    """The condition on `events e` that picks D: the listed events the model holds."""
    return f"{_held(checkpoint)} AND {_DOOMED_EVENT}"


def remaining_events(checkpoint: int) -> str:
    """The condition on `events e` that picks R: every remaining event the model holds that can
    contribute to one of D's keys (`keep_doomed_keys` listed them)."""
    runs = (
        f"SELECT run_id FROM run_io WHERE node_id IN (SELECT node_id FROM {_key_table('datasets')}) "
        f"UNION SELECT run_id FROM runs WHERE job_node_id IN (SELECT node_id FROM {_key_table('jobs')})"
    )
    shared = (
        "SELECT g.event_id FROM generic_event_elements g WHERE g.element_id IN (SELECT d.element_id "
        f"FROM generic_event_elements d WHERE d.event_id IN (SELECT seq FROM {DOOMED}))"
    )
    # run-less events: every job event (their inputs and outputs are not indexed), the dataset
    # events of affected datasets
    affected = f"SELECT node_id FROM {_key_table('datasets')}"
    runless = (
        "e.run_id IS NULL AND e.kind <> 'generic' AND (e.job_name IS NOT NULL OR "
        f"'dataset:' || e.dataset_namespace || ':' || e.dataset_name IN ({affected}))"
    )
    return (
        f"{_held(checkpoint)} AND NOT {_DOOMED_EVENT} "
        f"AND (({runless}) OR e.run_id IN ({runs}) OR e.seq IN ({shared}))"
    )


def keep_doomed_keys(store: EventStore) -> None:
    """With D's frames staged: D's keys into retention's key tables (the datasets of an affected
    source are affected too), and staging emptied for R."""
    with store.transaction() as cur:
        for name, key in _KEYS.items():
            cur.execute(f"DROP TABLE IF EXISTS {_key_table(name)}")
            cur.execute(
                f"CREATE TABLE {_key_table(name)} AS SELECT DISTINCT {', '.join(key)} FROM stage_{name}"
            )
        clear_staged(store, cur)
        source = dialect_of(store).json_text("v.value", "name")
        cur.execute(
            f"INSERT INTO {_key_table('datasets')} SELECT DISTINCT f.node_id FROM dataset_facets f "
            "JOIN facet_values v ON v.hash = f.value_hash JOIN datasets d ON d.node_id = f.node_id "
            f"WHERE f.name = 'dataSource' AND COALESCE({source}, d.namespace) IN "
            f"(SELECT name FROM {_key_table('sources')})"
        )


def keep_schemas(store: EventStore, asserted: set[str]) -> None:
    """Of the schemas D named, those whose hash is in `asserted` (the schema hashes of
    SCHEMA_VALUES_SQL's values: Spark's digest of their fields) are kept by the sweep."""
    with store.transaction() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {_KEPT_SCHEMAS}")
        cur.execute(f"CREATE TABLE {_KEPT_SCHEMAS} (schema_hash TEXT)")
        cur.execute(f"SELECT schema_hash FROM {_key_table('schema_fields')}")
        wanted = {row[0] for row in cur.fetchall()} & asserted
        if wanted:
            cur.executemany(store.sql(f"INSERT INTO {_KEPT_SCHEMAS} VALUES (?)"), [(h,) for h in wanted])


def refold(store: EventStore) -> None:
    """One transaction: D leaves the model, R's staged rows are merged back, namespaces are
    recomputed, what no remaining assertion names is swept, and the graph must be rebuilt."""
    with store.transaction() as cur:
        _forget(cur)
        merge_staged(store, cur)
        _recompute_namespaces(cur)
        _sweep(cur)
        clear_staged(store, cur)
        checkpoint.forget_graph(store, cur)


def _in_keys(name: str, alias: str = "") -> str:
    key = _KEYS[name]
    cols = ", ".join(f"{alias}{c}" for c in key)
    target = f"({cols})" if len(key) > 1 else cols
    return f"{target} IN (SELECT {', '.join(key)} FROM {_key_table(name)})"


def _forget(cur: Any) -> None:
    """D's runs, facet assertions and keyed rows leave the model; the staged rows of R that are
    counted (element nodes and edges) are kept only for D's keys."""
    runs = f"SELECT run_id FROM {_key_table('runs')}"
    cur.execute(  # each forgotten run leaves its job version
        f"INSERT INTO {VERSION_RUNS} SELECT job_version, -1 FROM runs "
        f"WHERE job_version IS NOT NULL AND run_id IN ({runs})"
    )
    cur.execute(
        f"INSERT INTO stage_touched_dataset_versions SELECT version_id FROM dataset_version_runs "
        f"WHERE run_id IN ({runs})"
    )
    for name in (*RUN_SCOPED, "runs"):
        cur.execute(f"DELETE FROM {name} WHERE run_id IN ({runs})")
    for name in ("dataset_facets", "job_facets"):
        cur.execute(f"DELETE FROM {name} WHERE seq IN (SELECT seq FROM {DOOMED})")
    for name in _REFOLDED:
        cur.execute(f"DELETE FROM {name} WHERE {_in_keys(name)}")
    for name in ("element_nodes", "element_edges"):
        cur.execute(f"DELETE FROM stage_{name} WHERE NOT {_in_keys(name)}")


def _recompute_namespaces(cur: Any) -> None:
    """A namespace spans its datasets and jobs (the same events name both)."""
    cur.execute(f"DELETE FROM namespaces WHERE {_in_keys('namespaces')}")
    cur.execute(
        "INSERT INTO namespaces (name, created_at, updated_at) SELECT namespace, MIN(created_at), "
        "MAX(updated_at) FROM (SELECT namespace, created_at, updated_at FROM datasets "
        "UNION ALL SELECT namespace, created_at, updated_at FROM jobs) n "
        f"WHERE namespace IN (SELECT name FROM {_key_table('namespaces')}) GROUP BY namespace"
    )


def _sweep(cur: Any) -> None:
    """Content D named that no remaining assertion names any more."""
    unnamed = " AND ".join(
        f"NOT EXISTS (SELECT 1 FROM {n} x WHERE x.value_hash = facet_values.hash)"
        for n in ("dataset_facets", "job_facets", "run_facets", "run_io_facets")
    )
    cur.execute(f"DELETE FROM facet_values WHERE {_in_keys('facet_values')} AND {unnamed}")
    cur.execute(
        f"DELETE FROM column_lineage WHERE {_in_keys('column_lineage')} AND NOT EXISTS "
        "(SELECT 1 FROM dataset_facets f WHERE f.value_hash = column_lineage.facet_hash "
        "AND f.name = 'columnLineage' AND f.deleted = 0)"
    )
    cur.execute(
        f"DELETE FROM schema_fields WHERE {_in_keys('schema_fields')} "
        f"AND schema_hash NOT IN (SELECT schema_hash FROM {_KEPT_SCHEMAS})"
    )
