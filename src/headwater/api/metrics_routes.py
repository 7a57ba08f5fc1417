"""GET /metrics in the Prometheus text format, and the measuring of HTTP ingest requests."""

from __future__ import annotations

import time

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from headwater.api.auth import require_read
from headwater.api.routing import ModelRoute, errors
from headwater.ingest import metrics, metrics_shared
from headwater.query.pipeline_gauges import pipeline_metrics

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
