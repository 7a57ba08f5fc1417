"""Retention in SQL (both backends): which events are past the limit, and their deletion with what
ingest derived from them (the generic-event browse rows), plus old dead letters, in bounded
transactions so that ingest never waits more than a moment.

An event is past the limit when its eventTime is older than the cutoff and, for a run event, every
event of its run is: a run goes whole or stays whole. The events to delete are listed first in
the scratch table `retention_doomed` (their seq), so that the model refresh (pipeline.retention)
and the deletion agree on one set; a scratch table is rebuilt by every retention, never read
otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from headwater.store.base import EventStore
from headwater.store.event_facets import core_hashes, load_core, stored_core
from headwater.store.model.dialect import dialect_of

DOOMED = "retention_doomed"
_LOST_TAGS = "retention_lost_tags"
_CHUNK = 5_000


@dataclass(frozen=True)
class Doomed:
    """What retention removes from the event store (counted before anything is deleted)."""

    events: int
    runs: int
    generic_events: int
    dead_letters: int


def _scratch(store: EventStore, cur: Any, name: str, columns: str) -> None:
    cur.execute(f"CREATE {dialect_of(store).unlogged}TABLE IF NOT EXISTS {name} ({columns})")
    cur.execute(f"DELETE FROM {name}")


def list_doomed(store: EventStore, cutoff: str, up_to_seq: int) -> None:
    """Fill `retention_doomed` with the seq of every event past the limit (eventTime < cutoff,
    run wholly before it) up to `up_to_seq`, walking the eventTime index in bounded transactions."""
    with store.transaction() as cur:
        _scratch(store, cur, DOOMED, "seq BIGINT PRIMARY KEY")
    after_time, after_seq = "", 0
    query = store.sql(
        "SELECT e.seq, e.event_time, e.run_id FROM events e "
        "WHERE e.event_time < ? AND (e.event_time > ? OR (e.event_time = ? AND e.seq > ?)) "
        "ORDER BY e.event_time, e.seq LIMIT ?"
    )
    whole_run = "SELECT DISTINCT x.run_id FROM events x WHERE x.run_id IN ({ids}) AND x.event_time >= ?"
    while True:
        with store.transaction() as cur:
            cur.execute(query, (cutoff, after_time, after_time, after_seq, _CHUNK))
            rows = cur.fetchall()
            if not rows:
                return
            after_seq, after_time = int(rows[-1][0]), str(rows[-1][1])
            candidates = [(int(seq), run_id) for seq, _, run_id in rows if int(seq) <= up_to_seq]
            runs = sorted({run_id for _, run_id in candidates if run_id is not None})
            kept: set[str] = set()
            for start in range(0, len(runs), 500):
                part = runs[start : start + 500]
                cur.execute(store.sql(whole_run.format(ids=", ".join("?" * len(part)))), (*part, cutoff))
                kept.update(str(r[0]) for r in cur.fetchall())
            doomed = [(seq,) for seq, run_id in candidates if run_id is None or run_id not in kept]
            if doomed:
                cur.executemany(store.sql(f"INSERT INTO {DOOMED} (seq) VALUES (?)"), doomed)


def count_doomed(store: EventStore, dead_letter_cutoff: str) -> Doomed:
    """How many events, runs and generic events `retention_doomed` lists, and dead letters older
    than the cutoff."""
    with store.transaction() as cur:
        cur.execute(
            "SELECT COUNT(*), COUNT(DISTINCT e.run_id), "
            "COALESCE(SUM(CASE WHEN e.kind = 'generic' THEN 1 ELSE 0 END), 0) "
            f"FROM events e WHERE e.seq IN (SELECT seq FROM {DOOMED})"
        )
        events, runs, generic = cur.fetchone()
        cur.execute(
            store.sql("SELECT COUNT(*) FROM dead_letters WHERE received_at < ?"), (dead_letter_cutoff,)
        )
        (letters,) = cur.fetchone()
    return Doomed(int(events), int(runs), int(generic), int(letters))


def count_held(store: EventStore, checkpoint: int) -> int:
    """How many of the listed events the model holds (seq <= the pipeline's checkpoint)."""
    with store.transaction() as cur:
        cur.execute(store.sql(f"SELECT COUNT(*) FROM {DOOMED} WHERE seq <= ?"), (checkpoint,))
        return int(cur.fetchone()[0])


def delete_doomed(store: EventStore, dead_letter_cutoff: str) -> None:
    """Delete the listed events, oldest seq first, `_CHUNK` to a transaction, with their generic
    browse rows (an element's latest tags fall back to its latest remaining event); then the
    generic elements and tags no event names any more, the facet values no event refers to any
    more, and the old dead letters."""
    with store.transaction() as cur:
        _scratch(store, cur, _LOST_TAGS, "element_id BIGINT, tag_key TEXT")
    chunk = f"SELECT seq FROM {DOOMED} WHERE seq <= ?"
    unreferenced: set[str] = set()  # facet values of deleted events: the sweep's candidates
    while True:
        with store.transaction() as cur:
            cur.execute(f"SELECT seq FROM {DOOMED} ORDER BY seq LIMIT {_CHUNK}")
            seqs = [int(r[0]) for r in cur.fetchall()]
            if not seqs:
                break
            upper = (seqs[-1],)
            cur.execute(
                store.sql(
                    f"INSERT INTO {_LOST_TAGS} SELECT element_id, key FROM generic_element_latest_tags "
                    f"WHERE event_id IN ({chunk})"
                ),
                upper,
            )
            cur.execute(
                store.sql(f"DELETE FROM generic_element_latest_tags WHERE event_id IN ({chunk})"), upper
            )
            for table in ("generic_event_elements", "generic_event_tags", "generic_element_tags"):
                cur.execute(store.sql(f"DELETE FROM {table} WHERE event_id IN ({chunk})"), upper)
            cur.execute(store.sql(f"DELETE FROM generic_events WHERE id IN ({chunk})"), upper)
            _latest_tags_again(cur)
            cur.execute(
                store.sql(f"SELECT payload, core FROM events WHERE seq IN ({chunk}) AND facet_count > 0"),
                upper,
            )
            for payload, core in cur.fetchall():
                unreferenced.update(core_hashes(load_core(stored_core(payload, core))))
            cur.execute(store.sql(f"DELETE FROM events WHERE seq IN ({chunk})"), upper)
            cur.execute(store.sql(f"DELETE FROM {DOOMED} WHERE seq <= ?"), upper)
    with store.transaction() as cur:
        cur.execute(
            "DELETE FROM generic_elements WHERE type NOT IN ('dataset', 'job') AND NOT EXISTS "
            "(SELECT 1 FROM generic_event_elements x WHERE x.element_id = generic_elements.id)"
        )
        cur.execute(
            "DELETE FROM generic_tags WHERE NOT EXISTS "
            "(SELECT 1 FROM generic_event_tags x WHERE x.tag_id = generic_tags.id) AND NOT EXISTS "
            "(SELECT 1 FROM generic_element_tags y WHERE y.tag_id = generic_tags.id)"
        )
    store.sweep_facet_values(unreferenced)
    while True:
        with store.transaction() as cur:
            cur.execute(
                store.sql(
                    "DELETE FROM dead_letters WHERE id IN (SELECT id FROM dead_letters "
                    f"WHERE received_at < ? ORDER BY id LIMIT {_CHUNK})"
                ),
                (dead_letter_cutoff,),
            )
            if cur.rowcount < _CHUNK:
                break


def _latest_tags_again(cur: Any) -> None:
    """An element whose latest value of a key came from a deleted event takes it from the latest
    remaining event that tagged it so."""
    cur.execute(
        "INSERT INTO generic_element_latest_tags (element_id, key, tag_id, event_id) "
        "SELECT et.element_id, t.key, MIN(t.id), et.event_id FROM generic_element_tags et "
        "JOIN generic_tags t ON t.id = et.tag_id "
        f"JOIN (SELECT DISTINCT element_id, tag_key FROM {_LOST_TAGS}) l "
        "ON l.element_id = et.element_id AND l.tag_key = t.key "
        "WHERE et.event_id = (SELECT MAX(e2.event_id) FROM generic_element_tags e2 "
        "JOIN generic_tags t2 ON t2.id = e2.tag_id WHERE e2.element_id = et.element_id AND t2.key = t.key) "
        "GROUP BY et.element_id, t.key, et.event_id"
    )
    cur.execute(f"DELETE FROM {_LOST_TAGS}")


def drop_scratch(store: EventStore, names: tuple[str, ...]) -> None:
    """Drop retention's scratch tables once it is done."""
    with store.transaction() as cur:
        for name in names:
            cur.execute(f"DROP TABLE IF EXISTS {name}")
