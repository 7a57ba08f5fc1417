"""The store's side of generic events (FastScore style): the interface and the rows it returns.

Appending a generic event writes the event store row (kind `generic`) and the browse tables
(elements, tags, links) in one durable transaction, so every read after the write sees it.
Ids are positive integers that never change: an event's is its seq, elements and tags number
themselves in the order they are first seen. OpenLineage datasets and jobs are elements too
(numbered when the pipeline first publishes them, in the same sequence).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from headwater.errors import ConfigError
from headwater.events.generic import GenericEvent


@dataclass(frozen=True, slots=True)
class GenericStored:
    """What became of one appended event: its id, and whether it is new (False: already stored)."""

    id: int
    new: bool


@dataclass(frozen=True, slots=True)
class ElementRow:
    id: int
    type: str
    description: str


@dataclass(frozen=True, slots=True)
class GenericTagRow:
    id: int
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class GenericEventRow:
    id: int
    type: str
    description: str
    timestamp: str  # when Headwater received and stored it (stored form)


@dataclass(frozen=True, slots=True)
class EventElement:
    """An element as one event names it, with the tags it carries in that event."""

    element: ElementRow
    tags: tuple[GenericTagRow, ...]


@dataclass(frozen=True, slots=True)
class GenericEventDetail:
    event: GenericEventRow
    elements: tuple[EventElement, ...]
    tags: tuple[GenericTagRow, ...]


class GenericStore(ABC):
    """Generic events: appended durably with their browse rows, read back by id or in pages."""

    @abstractmethod
    def append_generic(self, events: Sequence[GenericEvent], received_at: str) -> list[GenericStored]:
        """Store the events and their browse rows in one durable transaction. An event whose
        event_id is stored already (a resend with the same client id) answers its existing id."""

    @abstractmethod
    def number_published_elements(self) -> None:
        """Give every published OpenLineage dataset and job its element id, once (what migration
        0007 did for a store published before it; the pipeline numbers new ones as it publishes)."""

    @abstractmethod
    def element_types(self) -> list[str]:
        """The types of the elements of stored events, sorted."""

    @abstractmethod
    def list_elements(self, *, element_type: str | None, limit: int, offset: int) -> list[ElementRow]:
        """Elements by id, of one type or all."""

    @abstractmethod
    def get_element(self, element_id: int) -> ElementRow | None:
        """One element by id."""

    @abstractmethod
    def element_latest_tags(self, element_id: int) -> list[GenericTagRow]:
        """The latest value (by receive order) of each key the element carried, by key."""

    @abstractmethod
    def list_generic_events(
        self,
        *,
        event_type: str | None,
        element_id: int | None,
        tag_id: int | None,
        after: str | None,
        before: str | None,
        limit: int,
        offset: int,
    ) -> list[GenericEventRow]:
        """Events newest first (by receive order): of a type, naming an element, carrying a tag
        (on the event or on one of its elements), received in [after, before]. The events of an
        OpenLineage dataset or job element include the run events of the runs that read, wrote
        or ran it (type the eventType, time the eventTime, which `after`/`before` bound)."""

    @abstractmethod
    def get_generic_event(self, event_id: int) -> GenericEventDetail | None:
        """One event with its elements (and their tags in it) and its tags; an OpenLineage run
        event answers with its run's job and datasets as elements."""

    @abstractmethod
    def list_generic_tags(self, *, key: str | None, limit: int, offset: int) -> list[GenericTagRow]:
        """Tags by id, of one key or all."""

    @abstractmethod
    def get_generic_tag(self, tag_id: int) -> GenericTagRow | None:
        """One tag by id."""

    @abstractmethod
    def tag_elements(self, tag_id: int, *, limit: int, offset: int) -> list[ElementRow]:
        """The elements that carried the tag in any event, by id."""


def generic_store(store: object) -> GenericStore:
    """The store as a GenericStore (both backends are one); a ConfigError for a store that is not."""
    if not isinstance(store, GenericStore):
        raise ConfigError(f"the {type(store).__name__} store does not keep generic events")
    return store
