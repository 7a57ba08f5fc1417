"""Content-addressed facets: where an event's facets sit, the hash of a facet's canonical bytes, and
an event split into its core (each facet replaced by that hash) and its distinct facet values.

The store keeps each distinct facet value once (`headwater.store.event_facets`) and puts the
event back together on every read; both ends find the facets through `containers`, so whatever
the split takes out, the reassembly puts back where it was.

A small facet of a run, an input or an output stays in the core as its canonical value instead
(`kept_inline`): those describe one run and mostly come once (nominalTime, parent,
outputStatistics), so a row of their own, keyed by a random hash, cost the store a write to a
random page of the hash index for each of them (on a store of 1,000,000 events, 16 KB written
and 29 µs an event, bench/README). A core's container maps a facet's name to its hash (a
string) or to its value (an object); readers tell them apart by type, and the pipeline hashes an
inline value as the store would have, so the model does not see the difference.
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
INLINE_BYTES = 512  # the largest facet value a core keeps inline (`kept_inline`)


def kept_inline(canonical: bytes, reasons: Sequence[str], deletable: bool) -> bool:
    """Whether a facet value stays in its event's core instead of being stored by its hash: a
    run's, input's or output's facet (not a job's or a dataset's: those come back event after
    event, and may carry `_deleted`) of at most INLINE_BYTES canonical bytes (a repeated one
    costs the core little more than its hash would) that breaks no rule (a verdict is kept with
    a stored value)."""
    return not deletable and not reasons and len(canonical) <= INLINE_BYTES


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


def split_event(doc: object, reasons: Reasons | None = None) -> tuple[bytes, tuple[FacetValue, ...]] | None:
    """The event's core as JSON and its facet values stored by hash (`kept_inline` ones stay in the
    core); None when it is kept whole: a facet that is not an object (the core could not tell it
    from a hash), or a value without canonical bytes (an integer beyond 64 bits, a lone
    surrogate)."""
    if not isinstance(doc, dict):
        return None
    core = _copy_holders(doc)
    values: list[FacetValue] = []
    try:
        for path, holder, key, kind in containers(core):
            container = holder.get(key)
            if not isinstance(container, dict):
                continue
            refs: dict[str, str | orjson.Fragment] = {}
            for name, value in container.items():
                if not isinstance(value, dict):
                    return None
                canonical = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
                why = tuple(reasons(facet_path(path, name), value, kind)) if reasons is not None else ()
                if kept_inline(canonical, why, kind in DELETABLE):
                    refs[name] = orjson.Fragment(canonical)
                    continue
                digest = facet_hash(canonical)
                refs[name] = digest
                values.append((digest, canonical, why, kind in DELETABLE))
            holder[key] = refs
        return orjson.dumps(core), tuple(values)
    except orjson.JSONEncodeError:
        return None
