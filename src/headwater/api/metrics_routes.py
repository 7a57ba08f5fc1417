"""GET /metrics in the Prometheus text format, and the measuring of HTTP ingest requests."""

from __future__ import annotations

import logging
import time

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from headwater.api.auth import require_read
from headwater.api.routing import ModelRoute, errors
from headwater.errors import HeadwaterError
from headwater.events.times import TICKS_PER_SECOND, parse_event_time
from headwater.ingest import metrics, metrics_shared
from headwater.query.overview import WAITING_COUNTED
from headwater.store.base import EventStore

log = logging.getLogger(__name__)

router = APIRouter(
    tags=["operations"],
    dependencies=[Depends(require_read)],
    route_class=ModelRoute,
    responses=errors(401, 403),
)

INGEST_PATHS = frozenset({"/api/v1/lineage", "/api/v1/lineage/batch"})
PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


class PrometheusText(Response):
    media_type = PROMETHEUS_TEXT


@router.get(
    "/metrics",
    summary="Ingest counters, latencies and Kafka consumer lag (Prometheus)",
    response_class=PrometheusText,
    responses={200: {"content": {PROMETHEUS_TEXT: {"schema": {"type": "string"}}}}},
)
def get_metrics(request: Request) -> PrometheusText:
    """Events by entry point and outcome, HTTP ingest requests and latency, and for the Kafka
    consumer: messages consumed, dead letters, lag and committed offset per partition. With
    several server processes, the sum of all of them (the others' as of a tenth of a second ago).
    Then the pipeline's progress, read from the store: events waiting, seqs stored and published,
    when it last published (left out while the store does not answer)."""
    return PrometheusText(metrics_shared.render() + pipeline_metrics(request.app.state.store))


def pipeline_metrics(store: EventStore) -> str:
    """The store's pipeline gauges in the Prometheus text format (the same for every server
    process: read at each scrape, never summed)."""
    try:
        progress = store.pipeline_progress(count_up_to=WAITING_COUNTED)
    except HeadwaterError as exc:
        log.warning("/metrics without the pipeline's progress: %s", exc.message)
        return ""
    gauges: list[tuple[str, str, float]] = [
        (
            "events_waiting",
            f"Events stored and not yet published by the pipeline (counted up to {WAITING_COUNTED}).",
            progress.waiting,
        ),
        ("stored_seq", "Seq of the last event stored.", progress.stored_through),
        (
            "published_seq",
            "The pipeline's checkpoint: every event up to this seq is in the model.",
            progress.published_through,
        ),
        ("graph_seq", "The lineage graph reflects every event up to this seq.", progress.graph_through),
    ]
    if progress.published_at is not None:
        seconds = parse_event_time(progress.published_at) / TICKS_PER_SECOND
        gauges.append(
            ("last_published_timestamp_seconds", "When the pipeline last published (Unix time).", seconds)
        )
    lines: list[str] = []
    for name, text, value in gauges:
        lines += [f"# HELP headwater_pipeline_{name} {text}", f"# TYPE headwater_pipeline_{name} gauge"]
        lines.append(f"headwater_pipeline_{name} {value}")
    return "\n".join(lines) + "\n"


class IngestMetricsMiddleware:
    """Counts HTTP ingest requests by status and times them until the answer is sent; every other
    request passes straight through."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] not in INGEST_PATHS or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            metrics.HTTP_REQUESTS.inc(status=status)
            metrics.HTTP_SECONDS.observe(time.perf_counter() - started)
