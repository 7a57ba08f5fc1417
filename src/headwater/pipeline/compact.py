"""The pipeline's compact input: stored event rows → event rows whose facets are hashes, and the
distinct facet values they refer to, once each.

The store keeps an event as its core (each facet replaced by the URL-safe base64 of 128 bits of
the SHA-256 of the facet's canonical bytes, but small facets of runs, inputs and outputs kept
inline, `headwater.events.facet_refs.kept_inline`) and each distinct facet value once
(`headwater.store.event_facets`). Spark gets the core with each hash in hex (the model's
`value_hash`: the same 128 bits) and, beside the events of a read, one row per distinct value
they name. So a batch moves each facet value into Spark once, Spark parses it once, and the
events it parses are their small cores instead of 4-8 KB payloads.

A row kept whole (a generic event, a row stored before migration 0012, an event with a facet that
is not an object) is split here the same way, and a facet kept inline is hashed here: the same
facet gives the same hash whichever way it was stored.

A stored core is compacted by compiled code where the README's set-up built it (`native/lean`,
`compact.rs`: the same core, values and hashes; the read a fifth shorter), else, and for
whatever that code leaves (a float in a facet kept inline, say), by `Compactor._core`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from headwater.events.facet_refs import containers
from headwater.events.generic import GENERIC_KIND
from headwater.events.ids import sha256
from headwater.store.event_facets import MissingFacetValue, fetch_values, stored_core
from headwater.store.packing import stored_json, stored_text

Given = list[tuple[str, str]]
Compiled = Callable[[bytes, set[str]], tuple[str, Given, Given] | None]  # compact.rs's compact_core
try:  # built by scripts/setup.sh (native/lean); without it the same rows come from Python
    from headwater.events import _lean_native  # type: ignore[attr-defined]

    compact_core: Compiled | None = _lean_native.compact_core
except ImportError:  # a checkout without the compiled module
    compact_core = None

Row = tuple[Any, ...]
# (low, high] reads: kind, payload, core and facet_count sit at these positions of the stored row
KIND, PAYLOAD, CORE, COUNT = 1, -3, -2, -1


def hex_of(store_hash: str) -> str:
    """A store facet hash (22 characters of URL-safe base64) as the model's 32 hex digits."""
    return base64.urlsafe_b64decode(store_hash + "==").hex()


def hex_hash(canonical: bytes) -> str:
    """The model's `value_hash` of a facet value's canonical bytes: the 128 bits `facet_hash`
    keeps, in hex (`hex_of(facet_hash(canonical))`, without the base64 between)."""
    return sha256(canonical)[:16].hex()


def _canonical(value: object) -> bytes:
    """The canonical bytes of a facet value as the store makes them (sorted keys, compact), or
    where the store could not (an integer beyond 64 bits, a lone surrogate), the same with the
    standard library, non-ASCII escaped."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


class Compactor:
    """Turns stored rows (EVENT_COLUMNS: …, payload, core, facet_count) into compact rows (…, core,
    facet_hash, facet_value) for one reader: event rows carry NULL in the last two columns; each
    facet value the events name follows them in a row of its own, the first time this compactor
    meets it."""

    def __init__(self, fetch: Callable[[list[str]], dict[str, str]], *, compiled: bool = True) -> None:
        self.fetch = fetch  # store hashes → canonical values
        self.sent: set[str] = set()  # hex hashes whose value was emitted already
        self.hexes: dict[str, str] = {}
        self.compiled = compact_core if compiled else None  # compact.rs, when built

    def rows(self, stored: Sequence[Row]) -> list[Row]:
        out: list[Row] = []
        wanted: dict[str, str] = {}  # store hash → hex, values still to fetch
        values: dict[str, str] = {}  # hex → value, of values met in whole payloads
        for row in stored:
            payload, count = stored_core(row[PAYLOAD], row[CORE]), row[COUNT]
            if count is not None:  # a core: with hashes (count > 0), facets kept inline, or neither
                core = self._core(payload, wanted, values)
            elif row[KIND] == GENERIC_KIND:
                core = stored_text(payload)
            else:
                core = self._split(stored_text(payload), values)
            out.append((*row[:PAYLOAD], core, None, None))
        facets: dict[str, str] = values
        if wanted:
            found = self.fetch(sorted(wanted))
            missing = set(wanted).difference(found)
            if missing:
                raise MissingFacetValue(
                    f"stored events refer to facet values the store lacks: {sorted(missing)[:5]}"
                )
            facets.update((wanted[digest], value) for digest, value in found.items())
        blank = (None,) * (len(stored[0]) - 2 if stored else 0)  # the event columns, NULL
        for digest, value in facets.items():
            out.append((*blank, digest, value))
        return out

    def _hex(self, store_hash: str) -> str:
        found = self.hexes.get(store_hash)
        if found is None:
            found = self.hexes[store_hash] = hex_of(store_hash)
        return found

    def _core(self, payload: str | bytes, wanted: dict[str, str], values: dict[str, str]) -> str:
        """The core with each hash in hex; a facet kept inline (an object) gets the hash the store
        would have given it, and its value joins `values`."""
        text = stored_json(payload)
        if self.compiled is not None:
            done = self.compiled(text if isinstance(text, bytes) else text.encode(), self.sent)
            if done is not None:
                compacted, fetched, inline = done
                wanted.update(fetched)
                values.update(inline)
                return str(compacted)
        core = orjson.loads(text)
        for _, holder, key, _ in containers(core):
            refs = holder.get(key)
            if isinstance(refs, dict):
                converted = {}
                for name, ref in refs.items():
                    if isinstance(ref, str):
                        hexed = converted[name] = self._hex(ref)
                        if hexed not in self.sent:
                            self.sent.add(hexed)
                            wanted[ref] = hexed
                    else:
                        converted[name] = self._value(ref, values)
                holder[key] = converted
        return orjson.dumps(core).decode()

    def _value(self, value: object, values: dict[str, str]) -> str:
        """A facet value's hash in hex, as the store makes it; the value joins `values` the first
        time this compactor meets it."""
        canonical = _canonical(value)
        hexed = hex_hash(canonical)
        if hexed not in self.sent:
            self.sent.add(hexed)
            values[hexed] = canonical.decode()
        return hexed

    def _split(self, text: str, values: dict[str, str]) -> str:
        try:
            doc = json.loads(text)  # exact integers of any size, as the payload was sent
        except ValueError:
            return text
        if not isinstance(doc, dict):
            return text
        for _, holder, key, _ in containers(doc):
            container = holder.get(key)
            if isinstance(container, dict):
                holder[key] = {name: self._value(value, values) for name, value in container.items()}
        return json.dumps(doc, separators=(",", ":"))


def compactor(conn: Any, sql: Callable[[str], str]) -> Compactor:
    """A compactor that reads facet values on another cursor of `conn`."""
    cur = conn.cursor()
    return Compactor(lambda hashes: fetch_values(cur, sql, hashes))
