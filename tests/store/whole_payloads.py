"""Events as older stores kept them: whole payloads and no facet values (before migration 0012),
cores in `payload` (before 0018)."""

from __future__ import annotations

import base64
from collections.abc import Sequence

import orjson

from headwater.events.model import Event
from headwater.store import EventStore

_COLUMNS = (
    "event_id, kind, run_id, parent_run_id, root_run_id, event_type, event_time, job_namespace, "
    "job_name, dataset_namespace, dataset_name, producer, received_at, content_hash, untrusted_facets, "
    "payload"
)


def store_whole(store: EventStore, events: Sequence[Event], received_at: str) -> None:
    """Insert the events with their payloads whole, in order; one already stored is skipped."""
    query = store.sql(
        f"INSERT INTO events ({_COLUMNS}) VALUES ({', '.join('?' * 16)}) ON CONFLICT (event_id) DO NOTHING"
    )
    with store.transaction() as cur:
        for e in events:
            untrusted = orjson.dumps(list(e.untrusted_facets)).decode() if e.untrusted_facets else None
            cur.execute(
                query,
                (
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
                    e.payload,
                ),
            )


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
