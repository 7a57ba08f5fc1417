"""Content-addressed facets: where an event's facets sit, the hash of a facet's canonical bytes, and
an event split into its core (each facet replaced by that hash) and its distinct facet values.

The store keeps each distinct facet value once (`headwater.store.event_facets`) and puts the
event back together on every read; both ends find the facets through `containers`, so whatever
the split takes out, the reassembly puts back where it was.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import orjson

from headwater.events.facets import FacetKind, facet_path
from headwater.events.ids import sha256

# (the hash of a facet's canonical bytes, those bytes, why it breaks its rules: empty when it is
# fine, whether it is a job's or a dataset's facet, which may carry `_deleted`)
FacetValue = tuple[str, bytes, tuple[str, ...], bool]
Reasons = Callable[[str, object, FacetKind], Sequence[str]]  # (facet path, value, kind) → reasons
DELETABLE: frozenset[FacetKind] = frozenset({"job", "dataset"})


def facet_hash(canonical: bytes) -> str:
    """The key of a facet value: 128 bits of the SHA-256 of its canonical bytes, in 22 characters
    of URL-safe base64 (an event's core carries one per facet)."""
    return base64.urlsafe_b64encode(sha256(canonical)[:16]).decode()[:22]


def containers(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], str, FacetKind]]:
    """(container path, the object holding it, its key, facet kind) of every facets container the
    event may carry, whether or not the container is there or is an object."""
    entities: tuple[tuple[str, FacetKind], ...] = (("run", "run"), ("job", "job"), ("dataset", "dataset"))
    for key, kind in entities:
        holder = doc.get(key)
        if isinstance(holder, dict):
            yield f"{key}.facets", holder, "facets", kind
    extras: tuple[tuple[str, str, FacetKind], ...] = (
        ("inputs", "inputFacets", "input"),
        ("outputs", "outputFacets", "output"),
    )
    for key, extra, extra_kind in extras:
        items = doc.get(key)
        if isinstance(items, list):
            for i, item in enumerate(items):
                if isinstance(item, dict):
                    yield f"{key}[{i}].facets", item, "facets", "dataset"
                    yield f"{key}[{i}].{extra}", item, extra, extra_kind


def _copy_holders(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of the event in which every object holding a facets container is a copy too."""
    core = dict(doc)
    for key in ("run", "job", "dataset"):
        if isinstance(core.get(key), dict):
            core[key] = dict(core[key])
    for key in ("inputs", "outputs"):
        if isinstance(core.get(key), list):
            core[key] = [dict(item) if isinstance(item, dict) else item for item in core[key]]
    return core


def split_event(doc: object, reasons: Reasons | None = None) -> tuple[str, tuple[FacetValue, ...]] | None:
    """The event's core as JSON and its facet values; None when it is kept whole: a facet that is
    not an object (the core could not tell it from a hash), or a value without canonical bytes
    (an integer beyond 64 bits, a lone surrogate)."""
    if not isinstance(doc, dict):
        return None
    core = _copy_holders(doc)
    values: list[FacetValue] = []
    try:
        for path, holder, key, kind in containers(core):
            container = holder.get(key)
            if not isinstance(container, dict):
                continue
            refs: dict[str, str] = {}
            for name, value in container.items():
                if not isinstance(value, dict):
                    return None
                canonical = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
                digest = facet_hash(canonical)
                refs[name] = digest
                why = tuple(reasons(facet_path(path, name), value, kind)) if reasons is not None else ()
                values.append((digest, canonical, why, kind in DELETABLE))
            holder[key] = refs
        return orjson.dumps(core).decode(), tuple(values)
    except orjson.JSONEncodeError:
        return None
