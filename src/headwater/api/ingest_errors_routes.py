"""GET /api/v1/ingest/errors: the dead letters of the Kafka consumer, newest first."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from headwater.api.auth import require_read
from headwater.api.responses import JSONResponse
from headwater.ingest.dead_letters import dead_letter_json
from headwater.query.params import whole_number
from headwater.store.base import EventStore

router = APIRouter(tags=["ingest"], dependencies=[Depends(require_read)])
MAX_LIMIT = 1_000


@router.get("/api/v1/ingest/errors", summary="Dead letters: messages that could not become events")
def list_ingest_errors(
    request: Request, topic: str | None = None, limit: str | None = None, before: str | None = None
) -> JSONResponse:
    """Kafka messages that were empty, too large, not JSON or not a valid event, newest first:
    `{errors: [{id, topic, partition, offset, key, error, receivedAt, valueBytes, value |
    valueBase64}], totalCount, nextBefore}`. Pass `nextBefore` back as `before` for the next page;
    `topic` keeps one topic."""
    store: EventStore = request.app.state.store
    size = whole_number("limit", limit, 100, 1, MAX_LIMIT)
    before_id = whole_number("before", before, None, 1, 2**62)
    letters = store.dead_letters(topic=topic or None, limit=size, before_id=before_id)
    body = {
        "errors": [dead_letter_json(letter) for letter in letters],
        "totalCount": store.count_dead_letters(topic=topic or None),
        "nextBefore": letters[-1].id if len(letters) == size else None,
    }
    return JSONResponse(body)
