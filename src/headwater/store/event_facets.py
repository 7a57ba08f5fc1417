"""The distinct facet values of the stored events (table `event_facets`, migration 0012): written
once by hash in the transaction of the events that refer to them, put back into whole payloads
on every read of an event (`assemble_payloads`, the one place that does it), and swept once no
event refers to them.

An event row whose `facet_count` is not NULL keeps its core: the event with each facet replaced by
the hash of its canonical bytes, but small facets of its run, inputs and outputs, kept inline as
their values (`headwater.events.facet_refs`); `facet_count` counts the hashes. The core is packed
in `core` since migration 0018, in `payload` before (`stored_core` takes whichever the row has). A NULL
`facet_count` marks a whole payload: rows stored before migration 0012 until `headwater db
upgrade` converts them (`headwater.store.facet_conversion`), generic events, and the rare event
whose facets are not all objects. Both kinds are read alike, at any time. Cores and values
written since migration 0015 are packed (`headwater.store.packing`); reads take both forms.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import orjson

from headwater.events.facet_refs import FacetValue, containers
from headwater.events.model import Event
from headwater.store.packing import pack_value, stored_json, stored_text

Fetch = Callable[[list[str]], dict[str, str]]  # hashes → their values (canonical JSON)
_CHUNK = 500
_SCAN = 5_000
_INSERT = (
    "INSERT INTO event_facets (hash, value, packed, reasons, deletable) VALUES (?, '', ?, ?, ?) "
    "ON CONFLICT (hash) DO NOTHING"
)
SWEEPS = "facet_sweeps"  # store_state's counter of sweeps


class MissingFacetValue(LookupError):
    """An event refers to a facet value the store does not hold (a bug: never expected)."""


def core_hashes(core: dict[str, Any]) -> Iterator[str]:
    """The hashes an event's core refers to (a facet kept inline is an object, not a hash)."""
    for _, holder, key, _ in containers(core):
        container = holder.get(key)
        if isinstance(container, dict):
            yield from (ref for ref in container.values() if isinstance(ref, str))


def stored_core(payload: str | bytes, core: bytes | None) -> str | bytes:
    """What a row keeps of its event, from its `payload` and `core` columns: the packed core when
    `core` is set (migration 0018), else `payload` (JSON, or a core written before 0018)."""
    return payload if core is None else core


def load_core(payload: str | bytes) -> dict[str, Any]:
    """A stored core (facet_count not NULL) as a dict: text, or packed (store/packing.py)."""
    core: dict[str, Any] = orjson.loads(stored_json(payload))
    return core


def assemble_payloads(rows: Sequence[tuple[str | bytes, int | None]], fetch: Fetch) -> list[str]:
    """The whole payloads of rows of (payload, facet_count): a core gets its facet values back (all
    the rows' values read in one `fetch`), a whole payload is returned as it is."""
    cores: dict[int, dict[str, Any]] = {}
    needed: set[str] = set()
    for position, (payload, count) in enumerate(rows):
        if count is not None and count > 0:
            cores[position] = load_core(payload)
            needed.update(core_hashes(cores[position]))
    if not cores:
        return [stored_text(payload) for payload, _ in rows]
    values = fetch(sorted(needed))
    missing = needed.difference(values)
    if missing:
        raise MissingFacetValue(f"stored events refer to facet values the store lacks: {sorted(missing)[:5]}")
    payloads: list[str] = []
    for position, (payload, _) in enumerate(rows):
        found = cores.get(position)
        if found is None:
            payloads.append(stored_text(payload))  # whole, or a core without hashes (no facet, or all inline)
            continue
        core = found
        for _, holder, key, _ in containers(core):
            container = holder.get(key)
            if isinstance(container, dict):
                holder[key] = {
                    name: orjson.Fragment(values[ref]) if isinstance(ref, str) else ref
                    for name, ref in container.items()
                }
        payloads.append(orjson.dumps(core).decode())
    return payloads


def fetch_values(cur: Any, sql: Callable[[str], str], hashes: Sequence[str]) -> dict[str, str]:
    """The values of the hashes, read on `cur` (any connection: the store's, or an executor's)."""
    values: dict[str, str] = {}
    for start in range(0, len(hashes), _CHUNK):
        chunk = list(hashes[start : start + _CHUNK])
        marks = ", ".join("?" * len(chunk))
        cur.execute(sql(f"SELECT hash, value, packed FROM event_facets WHERE hash IN ({marks})"), chunk)
        values.update((str(h), str(v) if p is None else stored_text(p)) for h, v, p in cur.fetchall())
    return values


def facet_rows(
    values: Iterable[FacetValue], young: AbstractSet[str] = frozenset(), old: AbstractSet[str] = frozenset()
) -> dict[str, tuple[Any, ...]]:
    """The event_facets rows of the values, one per hash, but those in `young` or `old` (written
    lately: `RecentHashes.generations`)."""
    rows: dict[str, tuple[Any, ...]] = {}
    for digest, canonical, reasons, deletable in values:
        if digest in rows or digest in young or digest in old:
            continue
        verdict = orjson.dumps(list(reasons)).decode() if reasons else None
        rows[digest] = (digest, pack_value(canonical), verdict, int(deletable))
    return rows


def insert_values(cur: Any, sql: Callable[[str], str], rows: Iterable[tuple[Any, ...]]) -> None:
    cur.executemany(sql(_INSERT), list(rows))


def sweeps(cur: Any, sql: Callable[[str], str]) -> int:
    cur.execute(sql("SELECT value FROM store_state WHERE name = ?"), (SWEEPS,))
    row = cur.fetchone()
    return int(row[0]) if row else 0


class RecentHashes:
    """Hashes of facet values this process wrote lately, so a group commit skips re-inserting them
    (most facets of an event were written with the run's earlier events). Two generations bound
    the memory; valid only as long as no sweep deleted values since (`generation`)."""

    def __init__(self, limit: int = 200_000) -> None:
        self.limit = limit
        self.generation: int | None = None
        self._young: set[str] = set()
        self._old: set[str] = set()
        self._lock = threading.Lock()

    def __contains__(self, digest: str) -> bool:
        return digest in self._young or digest in self._old

    def generations(self) -> tuple[set[str], set[str]]:
        """Both sets, to test many hashes without a call each (only the writer adds to them)."""
        return self._young, self._old

    def check(self, generation: int) -> None:
        """Forget everything when a sweep ran since the hashes were remembered."""
        if generation != self.generation:
            with self._lock:
                self._young, self._old, self.generation = set(), set(), generation

    def add(self, hashes: Sequence[str]) -> None:
        if not hashes:
            return
        with self._lock:
            if len(self._young) + len(hashes) > self.limit:
                self._old, self._young = self._young, set()
            self._young.update(hashes)


def write_facets(
    cur: Any, sql: Callable[[str], str], events: Sequence[Event], recent: RecentHashes
) -> list[str]:
    """Insert the facet values of the events that this process did not write lately, inside the
    events' own transaction; returns the hashes to remember once it commits."""
    recent.check(sweeps(cur, sql))
    rows = facet_rows((value for event in events for value in event.facet_values), *recent.generations())
    if rows:
        insert_values(cur, sql, rows.values())
    return list(rows)


def scan_references(cur: Any, sql: Callable[[str], str], after_seq: int, candidates: set[str]) -> int:
    """Remove from `candidates` every hash an event with seq above `after_seq` refers to; returns
    the last seq read."""
    last = after_seq
    query = sql(
        "SELECT seq, payload, core FROM events WHERE seq > ? AND facet_count > 0 ORDER BY seq LIMIT ?"
    )
    while candidates:
        cur.execute(query, (last, _SCAN))
        rows = cur.fetchall()
        if not rows:
            break
        for seq, payload, core in rows:
            candidates.difference_update(core_hashes(load_core(stored_core(payload, core))))
            last = int(seq)
    return last
