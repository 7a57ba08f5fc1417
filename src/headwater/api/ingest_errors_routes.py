"""GET /api/v1/ingest/errors: the dead letters of the Kafka consumer, newest first."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from headwater.api.auth import require_read
from headwater.api.models import DeadLetters
from headwater.api.params import Text
from headwater.api.routing import ModelRoute, errors
from headwater.ingest.dead_letters import dead_letter_json
from headwater.store.base import EventStore

router = APIRouter(
    tags=["ingest"], dependencies=[Depends(require_read)], route_class=ModelRoute, responses=errors(401, 403)
)
MAX_LIMIT = 1_000


@router.get("/api/v1/ingest/errors", summary="Dead letters: messages that could not become events")
def list_ingest_errors(
    request: Request,
    topic: Text = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Default 100")] = 100,
    before: Annotated[int | None, Query(ge=1, le=2**62, description="`nextBefore` of the last page")] = None,
) -> DeadLetters:
    """Kafka messages that were empty, too large, not JSON or not a valid event, newest first.
    Pass `nextBefore` back as `before` for the next page; `topic` keeps one topic."""
    store: EventStore = request.app.state.store
    letters = store.dead_letters(topic=topic or None, limit=limit, before_id=before)
    return DeadLetters.model_validate(
        {
            "errors": [dead_letter_json(letter) for letter in letters],
            "totalCount": store.count_dead_letters(topic=topic or None),
            "nextBefore": letters[-1].id if len(letters) == limit else None,
        }
    )
