"""The ASGI application: routers, error mapping, and the store and writer it serves from."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from headwater import __version__
from headwater.api import (
    atlas_routes,
    events_routes,
    generic_routes,
    impact_routes,
    ingest_errors_routes,
    ingest_routes,
    lineage_routes,
    marquez_routes,
    metrics_routes,
    openapi,
    overview_routes,
    stats_routes,
    ui_routes,
    warehouse_routes,
)
from headwater.api.memory import MemoryTrimmer
from headwater.api.responses import JSONResponse, error_response
from headwater.api.routing import ModelRoute
from headwater.config import Settings, load_settings
from headwater.errors import HeadwaterError
from headwater.ingest.service import young_collections_rarer
from headwater.ingest.writer import GroupCommitWriter
from headwater.store import EventStore, open_store

log = logging.getLogger(__name__)

DESCRIPTION = """Headwater receives OpenLineage events, keeps every one durably, and answers lineage
questions.

Send events to `POST /api/v1/lineage` (what the OpenLineage HTTP transport calls) and read a run's
events back from `GET /api/atlas/v2/openlineage/runs/{runId}`."""


class _App(FastAPI):
    """FastAPI, but the two ingest routes producers call for every event are answered before its
    per-request work (`ingest_routes.LeanIngest`)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._lean = ingest_routes.LeanIngest(functools.partial(FastAPI.__call__, self))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["app"] = self
        await self._lean(scope, receive, send)


def create_app(settings: Settings, store: EventStore | None = None) -> FastAPI:
    """Build the app; it opens (and migrates) the store at startup unless one is given."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own_store = store is None
        app.state.store = store if store is not None else open_store(settings.database_url)
        app.state.writer = GroupCommitWriter(app.state.store, settings.commit_batch_events)
        young_collections_rarer()
        app.state.trimmer = MemoryTrimmer().start()
        app.state.kafka = None
        if settings.kafka_enabled:
            from headwater.ingest.kafka import KafkaIngester

            app.state.kafka = KafkaIngester(settings, app.state.store, writer=app.state.writer)
            app.state.kafka.start()
        try:
            yield
        finally:
            if app.state.kafka is not None:
                app.state.kafka.stop()
            app.state.writer.close()
            app.state.trimmer.stop()
            if own_store:
                app.state.store.close()

    app = _App(
        title="Headwater",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        default_response_class=JSONResponse,
        docs_url=None,  # served offline by ui_routes
        redoc_url=None,
    )
    app.state.settings = settings
    app.include_router(ingest_routes.router)
    app.include_router(atlas_routes.router)
    app.include_router(events_routes.router)
    app.include_router(marquez_routes.router)
    app.include_router(marquez_routes.tag_router)
    app.include_router(marquez_routes.delete_router)
    app.include_router(lineage_routes.router)
    app.include_router(warehouse_routes.router)
    app.include_router(impact_routes.router)
    app.include_router(ingest_errors_routes.router)
    app.include_router(generic_routes.ingest_router)
    app.include_router(generic_routes.router)
    app.include_router(metrics_routes.router)
    app.include_router(overview_routes.router)
    app.include_router(stats_routes.router)
    ui_routes.install(app)
    openapi.install(app)
    app.add_middleware(metrics_routes.IngestMetricsMiddleware)

    @app.exception_handler(HeadwaterError)
    async def headwater_error(request: Request, exc: HeadwaterError) -> Response:
        if exc.status >= 500:
            log.error("%s %s: %s", request.method, request.url.path, exc.message)
        errors = getattr(exc, "errors", None)
        return error_response(exc.status, exc.message, errors)

    @app.exception_handler(RequestValidationError)
    async def bad_parameters(request: Request, exc: RequestValidationError) -> Response:
        route = request.scope.get("route")
        errors = [openapi.parameter_error(dict(err), route) for err in exc.errors()]
        return error_response(400, "; ".join(errors), errors)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return error_response(404, f"no route for {request.method} {request.url.path}")
        if exc.status_code == 405:
            starlette_allows = (exc.headers or {}).get("Allow", "")
            methods = ModelRoute.allowed_methods(request.scope) or set(starlette_allows.split(", "))
            allowed = ", ".join(sorted(methods - {""}))
            message = f"{request.method} is not allowed on {request.url.path}: use {allowed}"
            return error_response(405, message, headers={"Allow": allowed})
        return error_response(exc.status_code, str(exc.detail), headers=exc.headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, f"internal error: {type(exc).__name__}")

    return app


def create_app_from_environment() -> FastAPI:
    """The app of one worker process, configured by the `HEADWATER_*` variables `serve` set."""
    return create_app(load_settings())
