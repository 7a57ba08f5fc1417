"""The validated event: what the store keeps of one accepted OpenLineage event."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from headwater.events.facet_refs import FacetValue

EventKind = Literal["run", "dataset", "job"]
EVENT_KINDS: tuple[EventKind, ...] = ("run", "dataset", "job")
EVENT_TYPES = frozenset({"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"})


# Not frozen: a frozen dataclass sets each of its 18 fields through object.__setattr__, which made
# building an Event cost more than decoding the event's core (bench/ingest.py). Nothing changes one.
@dataclass(slots=True)
class Event:
    """One accepted event, its identities pulled out for indexing, its payload kept as sent."""

    kind: EventKind
    event_id: str
    event_time: str  # UTC, fixed width, 100 ns: "2024-01-31T12:00:00.1234567Z"
    event_type: str | None
    run_id: str | None
    parent_run_id: str | None
    root_run_id: str | None
    job_namespace: str | None
    job_name: str | None
    dataset_namespace: str | None
    dataset_name: str | None
    producer: str
    content_hash: str  # hex SHA-256 of the canonical JSON
    # The JSON as sent; None for an event the compiled path took or one of a batch decoded in one
    # pass (`headwater.events.lean`), which is always kept as its core and facet values.
    payload: str | None
    warnings: tuple[str, ...] = ()
    untrusted_facets: tuple[str, ...] = ()  # paths of facets that broke their published schema
    # What the store keeps (events/facet_refs.py): the core, each facet replaced by its hash, and
    # the facet values; None when the event is kept whole (`payload`).
    core: bytes | None = None  # JSON, as orjson writes it
    facet_values: tuple[FacetValue, ...] = ()
