"""Validating candidate events and turning the store's answer into per-event outcomes.

HTTP, file replay and (later) Kafka all go through `validate_documents` and `outcomes`, so every
entry point accepts and rejects the same events with the same messages.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from headwater.errors import InvalidEvent
from headwater.events.decode import Document, MalformedJSON, loads
from headwater.events.lean import decode_one, validate_decoded, validate_raw
from headwater.events.limits import DEPTH_REASON, deeper_than
from headwater.events.model import Event
from headwater.events.validate import validate_event

CREATED, DUPLICATE, REJECTED = 201, 200, 400


# The cyclic collector's first threshold in processes that ingest (`young_collections_rarer`).
YOUNG_THRESHOLD = 50_000


def young_collections_rarer() -> None:
    """Let the cyclic garbage collector look at young objects after 50,000 net allocations instead
    of 700, in a process that ingests (the server's workers, a Kafka consumer).

    Each collection walks every young object still alive, and while requests are in flight those
    are mostly their documents, events and outcomes, alive until answered: after a 1,000-event
    batch, re-enabling the collector (`collector_paused`) made it walk about 4,000 of them, 2-8 ms a
    batch for nothing (bench/ingest.py). Ingest makes no reference cycles; what dies is freed by
    reference counts, so the young generation stays small and collections become rare."""
    young, middle, old = gc.get_threshold()
    if 0 < young < YOUNG_THRESHOLD:
        gc.set_threshold(YOUNG_THRESHOLD, middle, old)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Keep the cyclic garbage collector out of a burst of decoding and validation.

    Parsing a batch allocates hundreds of thousands of dicts and strings that are all alive, so
    the collector would walk them again and again for nothing: pausing it halves the CPU cost of
    a 1,000-event batch. Only for sections with no await: the pause is process-wide. Threads may
    pause it at the same time (a request's decoding and the writer's commit): whoever found it
    enabled enables it again, so it always ends enabled.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(slots=True)
class Outcome:
    """What became of one candidate event: stored (201), already stored (200) or rejected (400)."""

    index: int
    status: int
    event_id: str | None = None
    errors: list[str] = field(default_factory=list)
    warnings: tuple[str, ...] = ()

    @property
    def accepted(self) -> bool:
        return self.status != REJECTED

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"index": self.index, "status": self.status}
        if self.event_id is not None:
            body["eventId"] = self.event_id
        if self.errors:
            body["error"] = "; ".join(self.errors)
            body["errors"] = self.errors
        if self.warnings:
            body["warnings"] = list(self.warnings)
        return body


@dataclass(slots=True)
class Validated:
    """The events fit to store, and a slot per document for its outcome."""

    events: list[Event]
    positions: list[int]  # index into outcomes of each event
    outcomes: list[Outcome]


def validate_document(doc: Document) -> Event:
    """The event of one document, or InvalidEvent naming each field (MalformedJSON for an
    unparsed document that is not JSON after all). An unparsed one goes the lean way first."""
    if doc.parsed:
        return validate_event(doc.value, doc.raw)
    if doc.event is not None:  # accepted by the compiled lean path
        accepted: Event = doc.event
        return accepted
    event: Event | None
    if doc.raw is None and doc.decoded is None:  # an array's event the compiled path left
        decoded = decode_one(doc.own_bytes())  # then as if the array had been decoded here
        event = None if decoded is None else validate_decoded(decoded, None)
    elif doc.decoded is not None:
        event = validate_decoded(doc.decoded, doc.raw)
    else:
        assert doc.raw is not None
        event = validate_raw(doc.raw)
    if event is not None:
        return event
    return validate_event(parsed_value(doc), doc.own_bytes())


def parsed_value(doc: Document) -> Any:
    """The JSON value of a document left unparsed, or InvalidEvent saying why it has none (nested
    too deep, or not JSON after all)."""
    raw = doc.own_bytes()
    if deeper_than(raw):  # before a parser recurses that deep
        raise InvalidEvent([f"{doc.where}{DEPTH_REASON}"])
    try:
        return loads(raw)
    except MalformedJSON as exc:
        raise InvalidEvent([f"{doc.where}{exc.message}"]) from None


def validate_documents(documents: Sequence[Document]) -> Validated:
    events: list[Event] = []
    positions: list[int] = []
    outcomes: list[Outcome] = []
    for doc in documents:
        if doc.error is not None:
            outcomes.append(Outcome(doc.index, REJECTED, errors=[doc.error]))
            continue
        try:
            event = validate_document(doc)
        except InvalidEvent as exc:
            outcomes.append(Outcome(doc.index, REJECTED, errors=exc.errors))
            continue
        positions.append(len(outcomes))
        outcomes.append(Outcome(doc.index, CREATED, event.event_id, warnings=event.warnings))
        events.append(event)
    return Validated(events, positions, outcomes)


def record_stored(validated: Validated, stored: Sequence[bool]) -> list[Outcome]:
    """Mark duplicates once the store said which events were new."""
    for position, new in zip(validated.positions, stored, strict=True):
        if not new:
            validated.outcomes[position].status = DUPLICATE
    return validated.outcomes
