"""Reading a run's events newest first, page by page, with an opaque and stable paging state."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

import orjson

from headwater.errors import BadRequest, NotFound
from headwater.events.validate import normal_run_id
from headwater.query.params import whole_number
from headwater.store.base import EventStore, RunCursor, StoredEvent

DEFAULT_PAGE_SIZE = 25
MAX_PAGE_SIZE = 1_000


@dataclass(frozen=True, slots=True)
class RunEventsPage:
    run_id: str
    events: list[StoredEvent]
    page_size: int
    next_paging_state: str | None


def parse_run_id(value: str) -> str:
    """A run id as ingest stores it: any non-empty string, a UUID in lower case. Clients
    percent-encode ids holding `/`, `%`, spaces or other characters a URL path cannot carry."""
    if not value:
        raise BadRequest("runId: required, the id of a run")
    if "\x00" in value:  # the databases keep no NUL in an id (ingest stores U+FFFD in its place)
        raise BadRequest("runId: holds a NUL character")
    return normal_run_id(value)


def parse_page_size(value: str | None) -> int:
    return whole_number("pageSize", value, DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE)


# The paging state is a keyset position, not an offset: events inserted while a client pages
# shift no page boundary, so every event present when paging began is returned exactly once.
def encode_paging_state(run_id: str, include_children: bool, cursor: RunCursor) -> str:
    packed = orjson.dumps([1, run_id, include_children, cursor.event_time, cursor.event_id])
    return base64.urlsafe_b64encode(packed).decode().rstrip("=")


def decode_paging_state(token: str, run_id: str, include_children: bool) -> RunCursor:
    problem = "pagingState: not a paging state this server returned"
    try:
        packed = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        version, token_run, token_children, event_time, event_id = orjson.loads(packed)
    except (binascii.Error, ValueError, TypeError):
        raise BadRequest(problem) from None
    if version != 1 or not isinstance(event_time, str) or not isinstance(event_id, str):
        raise BadRequest(problem)
    if token_run != run_id or token_children != include_children:
        raise BadRequest("pagingState: belongs to another query (runId or includeChildren differ)")
    return RunCursor(event_time, event_id)


def read_run_events(
    store: EventStore, run_id: str, *, page_size: int, paging_state: str | None, include_children: bool
) -> RunEventsPage:
    """One page of a run's events; NotFound when the run has no event at all."""
    cursor = decode_paging_state(paging_state, run_id, include_children) if paging_state else None
    rows = store.run_events(run_id, include_children=include_children, limit=page_size + 1, after=cursor)
    if not rows and cursor is None and not store.has_run(run_id, include_children=include_children):
        raise NotFound(f"run {run_id} has no events")
    more = len(rows) > page_size
    rows = rows[:page_size]
    next_state = None
    if more:
        last = rows[-1]
        next_state = encode_paging_state(run_id, include_children, RunCursor(last.event_time, last.event_id))
    return RunEventsPage(run_id, rows, page_size, next_state)
