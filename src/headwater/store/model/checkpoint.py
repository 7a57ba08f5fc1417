"""The pipeline's place in the event store (`pipeline_state`): the checkpoint (the last seq whose
events are in the model), the graph checkpoint (the last seq the graph tables reflect), and when
retention last ran; emptying the model for a rebuild; and waiting for another pipeline to publish."""

from __future__ import annotations

import time
from typing import Any

from headwater.events.times import format_ticks, now_ticks
from headwater.store.base import EventStore
from headwater.store.model.lock import pipeline_running
from headwater.store.model.tables import MODEL_TABLES

_LINEAGE = "lineage"
_RETENTION = "retention"


def _now() -> str:
    return format_ticks(now_ticks())


def state_in(store: EventStore, cur: Any) -> tuple[int, int]:
    """(checkpoint, graph checkpoint) inside the caller's transaction; (0, 0), written, when the
    pipeline never ran."""
    cur.execute(
        store.sql("SELECT checkpoint, graph_checkpoint FROM pipeline_state WHERE name = ?"), (_LINEAGE,)
    )
    row = cur.fetchone()
    if row is None:
        cur.execute(store.sql("INSERT INTO pipeline_state VALUES (?, 0, 0, 0, ?)"), (_LINEAGE, _now()))
        return (0, 0)
    return (int(row[0]), int(row[1]))


def read_state(store: EventStore) -> tuple[int, int]:
    """(checkpoint, graph checkpoint): the last seq whose events are in the model and graph."""
    with store.transaction() as cur:
        return state_in(store, cur)


def advance(store: EventStore, cur: Any, checkpoint: int, graph_checkpoint: int) -> None:
    """Inside the caller's transaction (the merge's): both checkpoints move, one more batch."""
    cur.execute(
        store.sql(
            "UPDATE pipeline_state SET checkpoint = ?, graph_checkpoint = ?, batches = batches + 1, "
            "updated_at = ? WHERE name = ?"
        ),
        (checkpoint, graph_checkpoint, _now(), _LINEAGE),
    )


def advance_graph(store: EventStore, cur: Any, graph_checkpoint: int) -> None:
    """Inside the caller's transaction: the graph is current up to `graph_checkpoint`."""
    cur.execute(
        store.sql("UPDATE pipeline_state SET graph_checkpoint = ?, updated_at = ? WHERE name = ?"),
        (graph_checkpoint, _now(), _LINEAGE),
    )


def forget_graph(store: EventStore, cur: Any) -> None:
    """Inside the caller's transaction: the graph must be rebuilt whatever the checkpoint."""
    cur.execute(store.sql("UPDATE pipeline_state SET graph_checkpoint = 0 WHERE name = ?"), (_LINEAGE,))


def waiting(store: EventStore) -> int | None:
    """Events stored above the checkpoint (0 when only the graph is behind), or None when the
    model, graph included, is current: a pass would do nothing."""
    checkpoint, graph_checkpoint = read_state(store)
    events = max(0, store.last_seq() - checkpoint)
    return events if events or graph_checkpoint < checkpoint else None


def reset_model(store: EventStore) -> None:
    """Empty every model table and the checkpoint (for `pipeline rebuild`)."""
    with store.transaction() as cur:
        for name in MODEL_TABLES:
            cur.execute(f"DELETE FROM {name}")
        cur.execute("DELETE FROM pipeline_state")


def mark_retention(store: EventStore) -> None:
    """Retention ran now."""
    with store.transaction() as cur:
        cur.execute(store.sql("DELETE FROM pipeline_state WHERE name = ?"), (_RETENTION,))
        cur.execute(store.sql("INSERT INTO pipeline_state VALUES (?, 0, 0, 0, ?)"), (_RETENTION, _now()))


def last_retention(store: EventStore) -> str | None:
    """When retention last ran on this store (None: never)."""
    with store.transaction() as cur:
        cur.execute(store.sql("SELECT updated_at FROM pipeline_state WHERE name = ?"), (_RETENTION,))
        row = cur.fetchone()
    return str(row[0]) if row else None


def published_by_other(store: EventStore, target: int, *, poll: float = 0.25) -> bool:
    """Wait while another pipeline runs until the model, graph included, holds every
    event up to seq `target`: True when it does, False as soon as no pipeline runs and it does
    not (the other pipeline stopped short of `target`, or was a one-off that started earlier)."""
    while True:
        checkpoint, graph_checkpoint = read_state(store)
        if min(checkpoint, graph_checkpoint) >= target:
            return True
        if not pipeline_running(store):
            checkpoint, graph_checkpoint = read_state(store)  # it may have published as it stopped
            return min(checkpoint, graph_checkpoint) >= target
        time.sleep(poll)
