"""Generic events through the ingest paths: validating candidate documents, per-event outcomes
once the store answered, and replaying files. HTTP, Kafka and file replay all go through here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from headwater.errors import InvalidEvent
from headwater.events.decode import Document
from headwater.events.generic import GenericEvent, validate_generic_event
from headwater.events.times import format_ticks, now_ticks
from headwater.ingest.replay import ReplaySummary, replay_documents
from headwater.ingest.service import CREATED, DUPLICATE, REJECTED, Outcome, parsed_value
from headwater.store.base import EventStore
from headwater.store.generic import GenericStored, generic_store


@dataclass(slots=True)
class GenericOutcome(Outcome):
    """An outcome whose event has a browse id (`GET /lineage/1/events/{id}`)."""

    id: int | None = None

    def as_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"index": self.index, "status": self.status}
        if self.id is not None:
            body["id"] = self.id
        if self.errors:
            body["error"] = "; ".join(self.errors)
            body["errors"] = self.errors
        return body


@dataclass(slots=True)
class GenericValidated:
    """The generic events fit to store, and a slot per document for its outcome."""

    events: list[GenericEvent]
    positions: list[int]  # index into outcomes of each event
    outcomes: list[GenericOutcome]


def validate_generic_documents(documents: Sequence[Document]) -> GenericValidated:
    events: list[GenericEvent] = []
    positions: list[int] = []
    outcomes: list[GenericOutcome] = []
    for doc in documents:
        if doc.error is not None:
            outcomes.append(GenericOutcome(doc.index, REJECTED, errors=[doc.error]))
            continue
        try:
            # a document left unparsed: an item of an array nested too deep to parse whole
            event = validate_generic_event(doc.value if doc.parsed else parsed_value(doc), doc.raw)
        except InvalidEvent as exc:
            outcomes.append(GenericOutcome(doc.index, REJECTED, errors=exc.errors))
            continue
        positions.append(len(outcomes))
        outcomes.append(GenericOutcome(doc.index, CREATED, event.event_id))
        events.append(event)
    return GenericValidated(events, positions, outcomes)


def record_generic_stored(
    validated: GenericValidated, stored: Sequence[GenericStored]
) -> list[GenericOutcome]:
    """Give each stored event its id, and mark those stored before as duplicates."""
    for position, answer in zip(validated.positions, stored, strict=True):
        outcome = validated.outcomes[position]
        outcome.id = answer.id
        if not answer.new:
            outcome.status = DUPLICATE
    return validated.outcomes


def replay_generic_files(
    store: EventStore,
    files: list[Path],
    *,
    batch_size: int = 1000,
    progress: bool = True,
    workers: int = 0,
) -> ReplaySummary:
    """`headwater ingest --generic`: generic events from files, validated as over HTTP."""
    target = generic_store(store)

    def append(validated: GenericValidated) -> Sequence[Outcome]:
        return record_generic_stored(
            validated, target.append_generic(validated.events, format_ticks(now_ticks()))
        )

    return replay_documents(
        files,
        validate_generic_documents,
        append,
        batch_size=batch_size,
        progress=progress,
        workers=workers,
    )
