"""The browse answers of generic events (`/lineage/1/…`, FastScore's shapes): elements, events and
tags as JSON, with their paging and filter parameters checked (400 naming the parameter, 404 for
an unknown id)."""

from __future__ import annotations

from typing import Any

from headwater.errors import BadRequest, NotFound
from headwater.query.params import whole_number
from headwater.query.times import display_time, parse_time_param
from headwater.store.generic import ElementRow, GenericEventRow, GenericStore, GenericTagRow

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
_MAX_ID = 2**63 - 1


def browse_id(name: str, value: str) -> int:
    """A path id: a positive integer, else 400."""
    text = value.strip()
    if not text.isdigit() or not 1 <= int(text) <= _MAX_ID:
        raise BadRequest(f"{name}: {value!r} is not a positive integer id")
    return int(text)


def page(limit: str | None, offset: str | None) -> tuple[int, int]:
    """(limit, offset) from the query: limit 1..1000 (default 100), offset 0 or more."""
    return (
        whole_number("limit", limit, DEFAULT_LIMIT, 1, MAX_LIMIT),
        whole_number("offset", offset, 0, 0, 2**62),
    )


def element_json(row: ElementRow) -> dict[str, Any]:
    return {"id": row.id, "type": row.type, "description": row.description}


def event_json(row: GenericEventRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "description": row.description,
        "timestamp": display_time(row.timestamp),
        "type": row.type,
    }


def tag_json(row: GenericTagRow) -> dict[str, Any]:
    return {"id": row.id, "key": row.key, "value": row.value}


def elements(
    store: GenericStore, element_type: str | None, limit: str | None, offset: str | None
) -> list[dict[str, Any]]:
    size, skip = page(limit, offset)
    kind = element_type or None
    return [element_json(row) for row in store.list_elements(element_type=kind, limit=size, offset=skip)]


def element(store: GenericStore, element_id: str, limit: str | None, offset: str | None) -> dict[str, Any]:
    """An element with its events (newest first, paged) and the latest value of each tag key."""
    size, skip = page(limit, offset)
    row = store.get_element(browse_id("id", element_id))
    if row is None:
        raise NotFound(f"no element with id {element_id}")
    events = store.list_generic_events(
        event_type=None, element_id=row.id, tag_id=None, after=None, before=None, limit=size, offset=skip
    )
    return {
        **element_json(row),
        "events": [event_json(event) for event in events],
        "tags": {tag.key: tag.value for tag in store.element_latest_tags(row.id)},
    }


def events(
    store: GenericStore,
    *,
    event_type: str | None,
    element_id: str | None,
    after: str | None,
    before: str | None,
    limit: str | None,
    offset: str | None,
) -> list[dict[str, Any]]:
    size, skip = page(limit, offset)
    rows = store.list_generic_events(
        event_type=event_type or None,
        element_id=browse_id("element", element_id) if element_id else None,
        tag_id=None,
        after=parse_time_param("after", after),
        before=parse_time_param("before", before),
        limit=size,
        offset=skip,
    )
    return [event_json(row) for row in rows]


def event(store: GenericStore, event_id: str) -> dict[str, Any]:
    """An event with its elements (each with its tags in this event) and its own tags."""
    found = store.get_generic_event(browse_id("id", event_id))
    if found is None:
        raise NotFound(f"no generic event with id {event_id}")
    return {
        **event_json(found.event),
        "elements": [
            {**element_json(item.element), "tags": [tag_json(tag) for tag in item.tags]}
            for item in found.elements
        ],
        "tags": [tag_json(tag) for tag in found.tags],
    }


def tags(store: GenericStore, key: str | None, limit: str | None, offset: str | None) -> list[dict[str, Any]]:
    size, skip = page(limit, offset)
    return [tag_json(row) for row in store.list_generic_tags(key=key or None, limit=size, offset=skip)]


def tag(store: GenericStore, tag_id: str, limit: str | None, offset: str | None) -> dict[str, Any]:
    """A tag with the elements that carried it and the events that carry it (each paged)."""
    size, skip = page(limit, offset)
    row = store.get_generic_tag(browse_id("id", tag_id))
    if row is None:
        raise NotFound(f"no tag with id {tag_id}")
    carried = store.list_generic_events(
        event_type=None, element_id=None, tag_id=row.id, after=None, before=None, limit=size, offset=skip
    )
    return {
        **tag_json(row),
        "elements": [element_json(el) for el in store.tag_elements(row.id, limit=size, offset=skip)],
        "events": [event_json(ev) for ev in carried],
    }
