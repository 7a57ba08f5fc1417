"""The facet history as the model keeps it: the changes of each node's facets, not every assertion.

Producers send the same dataset and job facets with every event, so nearly every assertion
repeats the one before it (0.1% of 1,224,076 dataset facet assertions changed the value in force,
bench/README). `dataset_facets` and `job_facets` keep, of each (node, facet name)'s assertions in
(valid_from, seq) order, those that answer "the facet in force at T" and "was this value ever
asserted":

- the first one, and the last one;
- one whose value differs from the one before it;
- a deletion, and the one after a deletion.

So a node's history of 10,000 identical assertions is two rows. `in_force_sql` reads it as it
read every assertion: the assertion in force at T has the same value either way.

**The merge** (`merge_history`) computes that rule over the staged assertions together with the
stored rows of the same (node, name)s: it inserts the staged rows the rule keeps and deletes the
stored rows it no longer keeps (an old last row, a change a late assertion made redundant). The
pipeline marks each staged assertion that repeats the batch's one before it and is not the
batch's last (`repeated`); where the batch's assertions all come after the stored ones, the rule
would drop those anyway, so the merge skips them and its window sorts a few rows per node, not
every assertion.

**Late assertions.** A staged assertion with an earlier time than a stored row of its (node, name),
and a value other than the one in force at its time, ends the value in force early: from the first
dropped assertion after it, the old value holds again, and that assertion must now be kept. It is
in the events, not in the model, so it is read back. `mark_late` lists each such (node, name)'s
window, from the late assertion's time to the next stored row's, and `readback_condition` picks
the events held in the model that can assert in those windows; the pipeline stages their
assertions too, before the merge. Kept first and last rows make the windows exact: assertions
arriving in time order never need a read-back.

Incremental passes and a rebuild keep the same rows: the rule depends only on the set of
assertions, and the stored rows plus the staged and read-back ones give the rule the same
neighbours it would find among all assertions.
"""

from __future__ import annotations

from typing import Any

from headwater.store.base import EventStore
from headwater.store.in_force_sql import in_force
from headwater.store.model.dialect import Dialect
from headwater.store.model.tables import FACT_TABLES, TABLES, Table

MOVES = "stage_history_moves"  # the rows a history merge inserts (stored = 0) or deletes (1)
LATE = "stage_late_windows"  # (node_id, name, from_time, to_time) to read back, per facets table
SCRATCH = (MOVES, LATE)
HISTORY_TABLES = tuple(t.name for t in FACT_TABLES if t.history)
# both history tables have the assertion's columns and key (`tables`)
_COLUMNS = TABLES["dataset_facets"].columns
_KEY = TABLES["dataset_facets"].key


def create_scratch(cur: Any, dialect: Dialect) -> None:
    """The scratch tables of the history merge and the read-back, typed like `dataset_facets`."""
    cols = ", ".join(_COLUMNS)
    cur.execute(
        f"CREATE {dialect.unlogged}TABLE IF NOT EXISTS {MOVES} AS "
        f"SELECT 0 AS stored, {cols} FROM dataset_facets {dialect.no_rows}"
    )
    cur.execute(
        f"CREATE {dialect.unlogged}TABLE IF NOT EXISTS {LATE} AS SELECT node_id, name, "
        f"valid_from AS from_time, valid_from AS to_time FROM dataset_facets {dialect.no_rows}"
    )


def _same_key(a: str, b: str) -> str:
    return " AND ".join(f"{a}.{c} = {b}.{c}" for c in _KEY)


# a staged assertion the pipeline did not mark `repeated` (rows staged without the flag count as not)
_FIRST_OR_CHANGE = "COALESCE(s.repeated, 0) = 0"


def _late_pairs(name: str, stage: str) -> str:
    """The (node, name)s of the staged assertions with a stored row as late as their earliest
    (a pair's earliest staged assertion never repeats the one before it)."""
    return (
        f"SELECT DISTINCT s.node_id, s.name FROM {stage} s WHERE {_FIRST_OR_CHANGE} AND EXISTS "
        f"(SELECT 1 FROM {name} f WHERE f.node_id = s.node_id AND f.name = s.name "
        "AND f.valid_from >= s.valid_from)"
    )


def merge_history(cur: Any, table: Table) -> int:
    """Merge `table`'s staged assertions by the history's rule (module docstring); returns how
    many rows it inserted or deleted. The rule runs over the stored rows of the staged (node,
    name)s and the staged assertions, but those the pipeline marked `repeated` only for the pairs
    with stored rows as late as their staged ones: elsewhere the batch's assertions all come after
    the stored ones, and a repeated one repeats its neighbour there too. Staged rows already stored
    are skipped."""
    name, stage = table.name, table.stage
    cols = ", ".join(_COLUMNS)
    kept = (
        "CASE WHEN z.prev_seq IS NULL OR z.next_seq IS NULL OR z.deleted <> 0 OR z.prev_deleted <> 0 "
        "OR z.value_hash <> z.prev_hash THEN 1 ELSE 0 END"
    )
    window = "PARTITION BY u.node_id, u.name ORDER BY u.valid_from, u.seq"
    cur.execute(
        f"INSERT INTO {MOVES} (stored, {cols}) "
        f"SELECT z.stored, {', '.join(f'z.{c}' for c in _COLUMNS)} FROM ("
        f"SELECT u.*, LAG(u.seq) OVER ({window}) AS prev_seq, "
        f"LAG(u.value_hash) OVER ({window}) AS prev_hash, "
        f"LAG(u.deleted) OVER ({window}) AS prev_deleted, "
        f"LEAD(u.seq) OVER ({window}) AS next_seq FROM ("
        f"SELECT 0 AS stored, {', '.join(f's.{c}' for c in _COLUMNS)} FROM {stage} s "
        f"WHERE ({_FIRST_OR_CHANGE} OR (s.node_id, s.name) IN ({_late_pairs(name, stage)})) "
        f"AND NOT EXISTS (SELECT 1 FROM {name} f WHERE {_same_key('f', 's')}) "
        "UNION ALL "
        f"SELECT 1, {', '.join(f'f.{c}' for c in _COLUMNS)} FROM "
        f"(SELECT DISTINCT s.node_id, s.name FROM {stage} s WHERE {_FIRST_OR_CHANGE}) p JOIN {name} f "
        "ON f.node_id = p.node_id AND f.name = p.name) u) z "
        f"WHERE {kept} = 1 - z.stored"
    )
    key = ", ".join(_KEY)
    cur.execute(f"DELETE FROM {name} WHERE ({key}) IN (SELECT {key} FROM {MOVES} WHERE stored = 1)")
    changed = int(cur.rowcount)
    cur.execute(
        f"INSERT INTO {name} ({cols}) SELECT {cols} FROM {MOVES} WHERE stored = 0 "
        f"ON CONFLICT ({key}) DO NOTHING"
    )
    changed += int(cur.rowcount)
    cur.execute(f"DELETE FROM {MOVES}")
    return changed


def stored_until(store: EventStore, *, staged: bool = False) -> dict[str, str | None]:
    """The time of the latest assertion each facet history table holds (None: it holds none), as
    the pipeline stages against it (`pipeline.frames.changes_to_stage`). A scan of each table:
    they keep changes only, a few rows per node and facet. `staged`: as it will be once the
    staged assertions are merged (the latest of the table's and the staged ones: a merge keeps
    each (node, name)'s last assertion, and deletes none later than one it keeps)."""
    until: dict[str, str | None] = {}
    with store.transaction() as cur:
        for name in HISTORY_TABLES:
            latest = f"SELECT MAX(valid_from) AS t FROM {name}"
            if staged:
                staged_latest = f"SELECT MAX(valid_from) FROM {TABLES[name].stage}"
                latest = f"SELECT MAX(t) FROM ({latest} UNION ALL {staged_latest}) u"
            cur.execute(latest)
            row = cur.fetchone()
            until[name] = None if row is None or row[0] is None else str(row[0])
    return until


def mark_late(store: EventStore) -> int:
    """With a batch's assertions staged: list in `LATE` each (node, name) with a late assertion
    whose value differs from the one in force at its time, and the window to read back (from it
    to the next stored row). Returns how many windows there are."""
    with store.transaction() as cur:
        cur.execute(f"DELETE FROM {LATE}")
        for name in HISTORY_TABLES:
            cur.execute(_late_windows(name, TABLES[name].stage))
        cur.execute(f"SELECT COUNT(*) FROM {LATE}")
        row = cur.fetchone()
    return int(row[0]) if row else 0


def _late_windows(name: str, stage: str) -> str:
    """The INSERT into `LATE` of `name`'s late windows: of the staged assertions of the pairs
    with stored rows as late as them (`_late_pairs`: few, one lookup each), those with a stored
    row before and after them and a value other than the one in force."""
    following = (
        f"(SELECT f.valid_from FROM {name} f WHERE f.node_id = s.node_id AND f.name = s.name "
        "AND f.valid_from >= s.valid_from AND NOT (f.valid_from = s.valid_from AND f.seq <= s.seq) "
        "ORDER BY f.valid_from, f.seq LIMIT 1)"
    )
    # the value in force just before the staged assertion: '' for a deletion, NULL for none
    before = in_force(name, "s.node_id", "s.name", at="s.valid_from", before_seq="s.seq", deleted="''")
    rows = (
        f"SELECT s.node_id, s.name, s.valid_from, s.value_hash, s.deleted, {following} AS next_from, "
        f"{before} AS prev_value FROM {stage} s JOIN ({_late_pairs(name, stage)}) l "
        "ON l.node_id = s.node_id AND l.name = s.name"
    )
    return (
        f"INSERT INTO {LATE} (node_id, name, from_time, to_time) "
        f"SELECT r.node_id, r.name, MIN(r.valid_from), MAX(r.next_from) FROM ({rows}) r "
        "WHERE r.next_from IS NOT NULL AND r.prev_value IS NOT NULL "
        "AND (r.deleted <> 0 OR r.prev_value = '' OR r.prev_value <> r.value_hash) "
        "GROUP BY r.node_id, r.name"
    )


def late_nodes(store: EventStore) -> list[str]:
    """The nodes `mark_late` listed windows of."""
    with store.transaction() as cur:
        cur.execute(f"SELECT DISTINCT node_id FROM {LATE} ORDER BY node_id")
        return [row[0] for row in cur.fetchall()]


def readback_condition(checkpoint: int) -> str:
    """The condition on `events e` that picks the events the model holds (seq <= `checkpoint`)
    that can assert a facet of a node of `LATE` inside its window: the events of the runs that
    read or wrote the dataset or ran the job in the window, and every run-less event (dataset
    and job events) in it. Each part is found by an index (`run_io_by_dataset`, `runs_by_job`,
    `events_by_run`, `events_by_time`)."""
    in_window = "x.event_time >= w.from_time AND x.event_time <= w.to_time"
    seqs = (
        f"SELECT x.seq FROM {LATE} w JOIN run_io r ON r.node_id = w.node_id "
        f"JOIN events x ON x.run_id = r.run_id WHERE {in_window} "
        f"UNION SELECT x.seq FROM {LATE} w JOIN runs r ON r.job_node_id = w.node_id "
        f"JOIN events x ON x.run_id = r.run_id WHERE {in_window} "
        f"UNION SELECT x.seq FROM {LATE} w JOIN events x ON {in_window} "
        "WHERE x.run_id IS NULL AND x.kind <> 'generic'"
    )
    return f"e.seq <= {int(checkpoint)} AND e.seq IN ({seqs})"
