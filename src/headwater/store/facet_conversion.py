"""Converting a store's whole-payload events (stored before migration 0012) in place: each event
split into its core and its facet values (`headwater.events.facet_refs`), a bounded batch of
events per transaction, resumable.

Then `pack_store` packs what was written before migration 0015 (store/packing.py), the facet
values and the event cores kept as JSON text, and moves the cores kept in `payload` to `core`
(migration 0018): on PostgreSQL the `~` and base64 of packed bytes become the bytes, a quarter
smaller. A bounded batch per transaction as well; SQLite's cores kept as a BLOB in `payload` stay
there, as small.

Each batch commits its events' facet values, their cores and how far the conversion has come
(`store_state.facet_conversion_seq`, `core_bytes_seq`) together: an interrupted conversion goes on
after the last batch it committed, and an event is either whole or split, never lost nor
half-written. Readers take both kinds at any time (`headwater.store.event_facets`), so a store
serves while it is converted. Events that arrive meanwhile are stored split already.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from headwater.events.decode import loads
from headwater.events.facet_refs import FacetValue, split_event
from headwater.events.facets import FacetKind, facet_reasons
from headwater.store.base import EventStore
from headwater.store.event_facets import facet_rows, insert_values
from headwater.store.packing import pack_core, pack_value, packed_bytes

BATCH = 2_000  # events per transaction
_DONE = "facet_conversion_seq"
_MOVED = "core_bytes_seq"
_UNPACKED_VALUES = "SELECT {what} FROM event_facets WHERE packed IS NULL"
# cores kept as text in `payload`: JSON (before migration 0015), or `~` and the base64 of packed
# bytes (PostgreSQL, before 0018); SQLite's packed ones are a BLOB, never equal to text
_TEXT_CORES = (
    "FROM events WHERE seq > ? AND facet_count IS NOT NULL AND core IS NULL "
    "AND substr(payload, 1, 1) IN ('{', '~')"
)


def _done(cur: Any, store: EventStore, name: str = _DONE) -> int:
    cur.execute(store.sql("SELECT value FROM store_state WHERE name = ?"), (name,))
    row = cur.fetchone()
    return int(row[0]) if row else 0


def pending_conversion(store: EventStore) -> int:
    """How many events (and facet values written as text) are still to convert."""
    with store.transaction() as cur:
        query = "SELECT COUNT(*) FROM events WHERE seq > ? AND facet_count IS NULL AND kind <> 'generic'"
        cur.execute(store.sql(query), (_done(cur, store),))
        pending = int(cur.fetchone()[0])
        cur.execute(_UNPACKED_VALUES.format(what="COUNT(*)"))
        pending += int(cur.fetchone()[0])
        cur.execute(store.sql(f"SELECT COUNT(*) {_TEXT_CORES}"), (_done(cur, store, _MOVED),))
        pending += int(cur.fetchone()[0])
    return pending


def convert_store(
    store: EventStore, *, batch: int = BATCH, progress: Callable[[int], None] | None = None
) -> int:
    """Convert the whole-payload events stored up to now, `batch` to a transaction; returns how
    many were split (an event whose facets are not all objects stays whole). `progress` is told
    how many events each batch went through."""
    with store.transaction() as cur:
        cur.execute("SELECT COALESCE(MAX(seq), 0) FROM events")
        target = int(cur.fetchone()[0])

    def reasons(_path: str, value: object, kind: FacetKind) -> list[str]:
        return facet_reasons(value, kind)  # remembered by the facet's bytes

    query = store.sql(
        "SELECT seq, payload FROM events WHERE seq > ? AND seq <= ? AND facet_count IS NULL "
        "AND kind <> 'generic' ORDER BY seq LIMIT ?"
    )
    split_count = 0
    while True:
        with store.transaction() as cur:
            done = _done(cur, store)
            if done >= target:
                return split_count
            cur.execute(query, (done, target, batch))
            rows = cur.fetchall()
            reached = int(rows[-1][0]) if len(rows) == batch else target
            cores: list[tuple[bytes, int, int]] = []
            values: list[FacetValue] = []
            for seq, payload in rows:
                split = split_event(loads(payload), reasons)
                if split is not None:
                    cores.append((pack_core(split[0]), len(split[1]), int(seq)))
                    values.extend(split[1])
            rows_of_values = facet_rows(values)
            if rows_of_values:
                insert_values(cur, store.sql, rows_of_values.values())
            if cores:
                cur.executemany(
                    store.sql("UPDATE events SET payload = '', core = ?, facet_count = ? WHERE seq = ?"),
                    cores,
                )
            cur.execute(store.sql("UPDATE store_state SET value = ? WHERE name = ?"), (reached, _DONE))
        split_count += len(cores)
        if progress is not None:
            progress(len(rows))


def pack_store(
    store: EventStore, *, batch: int = BATCH, progress: Callable[[int], None] | None = None
) -> int:
    """Pack the facet values and the event cores kept as JSON text, and move the cores kept as
    text to `core`, `batch` to a transaction, resumable; returns how many were packed or moved.
    `progress` as in `convert_store`."""
    packed = 0
    after = ""  # facet values by hash; a value packed is not selected again
    while True:
        with store.transaction() as cur:
            query = _UNPACKED_VALUES.format(what="hash, value") + " AND hash > ? ORDER BY hash LIMIT ?"
            cur.execute(store.sql(query), (after, batch))
            rows = cur.fetchall()
            cur.executemany(
                store.sql("UPDATE event_facets SET value = '', packed = ? WHERE hash = ?"),
                [(pack_value(str(value).encode()), digest) for digest, value in rows],
            )
        if not rows:
            break
        after = str(rows[-1][0])
        packed += len(rows)
        if progress is not None:
            progress(len(rows))
    with store.transaction() as cur:
        cur.execute("SELECT COALESCE(MAX(seq), 0) FROM events")
        target = int(cur.fetchone()[0])
    query = store.sql(f"SELECT seq, payload {_TEXT_CORES} AND seq <= ? ORDER BY seq LIMIT ?")
    while True:
        with store.transaction() as cur:
            done = _done(cur, store, _MOVED)
            if done >= target:
                return packed
            cur.execute(query, (done, target, batch))
            rows = cur.fetchall()
            reached = int(rows[-1][0]) if len(rows) == batch else target
            cur.executemany(
                store.sql("UPDATE events SET payload = '', core = ? WHERE seq = ?"),
                [(_core_bytes(str(payload)), seq) for seq, payload in rows],
            )
            cur.execute(store.sql("UPDATE store_state SET value = ? WHERE name = ?"), (reached, _MOVED))
        packed += len(rows)
        if progress is not None:
            progress(len(rows))


def _core_bytes(payload: str) -> bytes:
    """A core kept as text, packed: JSON is packed, `~` and base64 decoded (the same bytes)."""
    return packed_bytes(payload) if payload.startswith("~") else pack_core(payload.encode())
