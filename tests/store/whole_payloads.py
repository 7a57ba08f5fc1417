"""Events as older stores kept them: whole payloads and no facet values (before migration 0012),
cores in `payload` (before 0018)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import orjson

from headwater.events.model import Event
from headwater.store import EventStore
from headwater.store.event_facets import RecentHashes, write_facets
from headwater.store.packing import pack_core

_COLUMNS = (
    "event_id, kind, run_id, parent_run_id, root_run_id, event_type, event_time, job_namespace, "
    "job_name, dataset_namespace, dataset_name, producer, received_at, content_hash, untrusted_facets, "
    "payload"
)


def store_whole(store: EventStore, events: Sequence[Event], received_at: str) -> None:
    """Insert the events with their payloads whole, in order; one already stored is skipped."""
    _insert(store, [(_params(e, received_at, e.payload), None) for e in events])


def store_cores_in_payload(store: EventStore, events: Sequence[Event], received_at: str) -> None:
    """Insert the events as migrations 0015-0017 wrote them, on a store of such a schema: the
    packed core in `payload` (a BLOB on SQLite, `~` and base64 on PostgreSQL), the facet values
    in `event_facets`."""
    text = store.backend == "postgresql"
    rows = []
    for e in events:
        assert e.core is not None
        packed = pack_core(e.core)
        kept: str | bytes = "~" + base64.b64encode(packed).decode() if text else packed
        rows.append((_params(e, received_at, kept), len(e.facet_values)))
    with store.transaction() as cur:
        write_facets(cur, store.sql, events, RecentHashes())
    _insert(store, rows)


def _params(e: Event, received_at: str, payload: str | bytes | None) -> tuple[Any, ...]:
    untrusted = orjson.dumps(list(e.untrusted_facets)).decode() if e.untrusted_facets else None
    return (
        e.event_id,
        e.kind,
        e.run_id,
        e.parent_run_id,
        e.root_run_id,
        e.event_type,
        e.event_time,
        e.job_namespace,
        e.job_name,
        e.dataset_namespace,
        e.dataset_name,
        e.producer,
        received_at,
        e.content_hash,
        untrusted,
        payload,
    )


def _insert(store: EventStore, rows: Sequence[tuple[tuple[Any, ...], int | None]]) -> None:
    """Insert (params, facet_count) rows in order; an event already stored is skipped. Whole
    payloads leave facet_count out: a store before migration 0012 has no such column."""
    counted = any(count is not None for _, count in rows)
    columns = f"{_COLUMNS}, facet_count" if counted else _COLUMNS
    marks = ", ".join("?" * (17 if counted else 16))
    query = store.sql(f"INSERT INTO events ({columns}) VALUES ({marks}) ON CONFLICT (event_id) DO NOTHING")
    with store.transaction() as cur:
        for params, count in rows:
            cur.execute(query, (*params, count) if counted else params)


def cores_in_payload(store: EventStore, every: int = 1) -> None:
    """Every `every`th core as migrations 0015-0017 kept it, in `payload`: a BLOB on SQLite, `~`
    and the base64 of the same bytes in PostgreSQL's TEXT; the others stay in `core`."""
    with store.transaction() as cur:
        cur.execute("SELECT seq, core FROM events WHERE core IS NOT NULL ORDER BY seq")
        rows = cur.fetchall()[::every]
        text = store.backend == "postgresql"
        cur.executemany(
            store.sql("UPDATE events SET payload = ?, core = NULL WHERE seq = ?"),
            [("~" + base64.b64encode(core).decode() if text else bytes(core), seq) for seq, core in rows],
        )
