"""The HTTP protocol `headwater serve` runs: uvicorn's (httptools), but POSTs to the two ingest
routes are answered by the protocol itself, without an ASGI request.

A producer sends each event in a request of its own, so what the server does per request weighs
as much as validating and storing the event. Through ASGI, uvicorn builds a scope, a
request-response cycle and a task for each request, and writes an answer's head and body in two
system calls; here the body is taken as the parser hands it over, validated at once, given to
the group commit with a callback, and the answer written in one call when its commit is durable
(bench/ingest.py: about a third of the server's CPU per single-event POST went to uvicorn's
request machinery, half of it to those writes). The answers are those of
`headwater.api.ingest_routes.LeanIngest`, which still serves whatever this protocol leaves to the
app: another route or method, a query string, write keys (their check is the app's), Expect:
100-continue, a request pipelined behind one not yet answered, access logging.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from typing import Any

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from headwater.api.app import _App
from headwater.api.ingest_routes import (
    BATCH_PATH,
    LINEAGE_PATH,
    body_headers,
    error_answer,
    stored_answer,
    too_large_answer,
    validated_request,
)
from headwater.config import Settings
from headwater.ingest import metrics
from headwater.ingest.service import Validated

log = logging.getLogger(__name__)

_ROUTES = {LINEAGE_PATH.encode(): False, BATCH_PATH.encode(): True}  # path → is the batch route


class _NobodyWaits:
    """uvicorn's protocol wakes a request's reader when the connection is lost; nobody reads here."""

    @staticmethod
    def set() -> None:
        pass


class _Request:
    """An ingest request answered by the protocol, and its state as uvicorn's protocol reads a
    request-response cycle's (`response_complete`, `disconnected`, `keep_alive`, `message_event`)."""

    __slots__ = (
        "batch_route",
        "chunks",
        "content_encoding",
        "content_type",
        "disconnected",
        "keep_alive",
        "limit",
        "message_event",
        "path",
        "response_complete",
        "settings",
        "size",
        "started",
    )

    def __init__(self, path: str, batch_route: bool, settings: Settings, keep_alive: bool) -> None:
        self.path = path
        self.batch_route = batch_route
        self.settings = settings
        self.limit = settings.max_body_bytes
        self.keep_alive = keep_alive
        self.started = time.perf_counter()
        self.chunks: list[bytes] = []
        self.size = 0
        self.content_type: str | None = None
        self.content_encoding: str | None = None
        self.response_complete = False
        self.disconnected = False
        self.message_event = _NobodyWaits


def _headwater_app(app: Any) -> _App | None:
    """The Headwater app inside uvicorn's wrappers (proxy headers, message logger), if it is one."""
    for _ in range(8):
        if isinstance(app, _App):
            return app
        app = getattr(app, "app", None)
    return None


class IngestProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, answering the ingest POSTs itself (see the module's doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._headwater = _headwater_app(self.app)
        self._request: _Request | None = None

    def on_headers_complete(self) -> None:
        request = self._ingest_request()
        self._request = request
        if request is None:
            super().on_headers_complete()
            return
        self.cycle = request  # type: ignore[assignment]  # what uvicorn reads of it is there
        declared, request.content_type, request.content_encoding = body_headers(self.headers)
        if declared and declared.isdigit() and int(declared) > request.limit:
            self._answer(request, *too_large_answer(request.limit, declared))

    def _ingest_request(self) -> _Request | None:
        """A request this protocol answers, or None for the app."""
        batch_route = _ROUTES.get(self.url)
        if (
            batch_route is None
            or self._headwater is None
            or self.parser.get_method() != b"POST"
            or self.root_path
            or self.expect_100_continue
            or self.access_log
            or self.limit_concurrency is not None
            or (self.cycle is not None and not self.cycle.response_complete)  # pipelined
            or self.parser.should_upgrade()
        ):
            return None
        state = self._headwater.state
        settings: Settings = state.settings
        if settings.write_keys or getattr(state, "writer", None) is None:
            return None
        keep_alive = self.parser.get_http_version() != "1.0" and self.parser.should_keep_alive()
        return _Request(self.url.decode(), batch_route, settings, keep_alive)

    def on_body(self, body: bytes) -> None:
        request = self._request
        if request is None:
            super().on_body(body)
            return
        if request.response_complete:  # answered early (too large): the rest is read and dropped
            return
        request.size += len(body)
        if request.size > request.limit:
            request.chunks.clear()
            self._answer(request, *too_large_answer(request.limit, None))
            return
        request.chunks.append(body)

    def on_message_complete(self) -> None:
        request = self._request
        if request is None:
            super().on_message_complete()
            return
        self._request = None
        if request.response_complete:
            return
        chunks = request.chunks
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        request.chunks = []
        try:
            validated, is_batch = validated_request(
                request.settings, body, request.content_type, request.content_encoding
            )
            waiter = self._headwater.state.writer.enqueue(validated.events)  # type: ignore[union-attr]
        except Exception as exc:
            self._answer(request, *error_answer(exc, request.path))
            return
        waiter.add_done_callback(functools.partial(self._stored, request, validated, is_batch))

    def _stored(
        self, request: _Request, validated: Validated, is_batch: bool, waiter: asyncio.Future[list[bool]]
    ) -> None:
        """The group commit answered: durable (or failed)."""
        try:
            answer = stored_answer(validated, is_batch, waiter.result(), request.batch_route)
        except BaseException as exc:
            answer = error_answer(exc if isinstance(exc, Exception) else RuntimeError(), request.path)
        self._answer(request, *answer)

    def _answer(self, request: _Request, status: int, body: bytes) -> None:
        """Write the whole answer in one call, and let uvicorn go on with the connection."""
        request.response_complete = True
        metrics.HTTP_REQUESTS.inc(status=status)
        metrics.HTTP_SECONDS.observe(time.perf_counter() - request.started)
        if request.disconnected or self.transport.is_closing():
            return
        head = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            head += (name, b": ", value, b"\r\n")
        head.append(b"content-length: %d\r\ncontent-type: application/json\r\n" % len(body))
        if not request.keep_alive:
            head.append(b"connection: close\r\n")
        head += (b"\r\n", body)
        self.transport.write(b"".join(head))
        if not request.keep_alive:
            self.transport.close()
        self.on_response_complete()
