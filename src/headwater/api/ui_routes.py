"""The web UI and the API documentation, both served with no request to another host: the UI's
pages (one HTML shell, its assets under /assets) and /docs, /redoc from assets shipped in packages."""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response

from headwater import ui

DOCS_ASSETS = Path(fastapi_offline.__file__).parent / "static"
# The UI's pages fetch only from this server; the policy makes a stray request fail loudly.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
_NO_CACHE = {"Cache-Control": "no-cache", "Content-Security-Policy": CONTENT_SECURITY_POLICY}


def _page(request: Request) -> Response:
    """Every page of the UI is the same shell; its script draws the page the URL names."""
    return FileResponse(ui.INDEX, media_type="text/html", headers=_NO_CACHE)


def install(app: FastAPI) -> None:
    """Add the UI's pages and assets, the favicon, and the offline /docs and /redoc to `app`
    (created with docs_url=None and redoc_url=None)."""
    for path in ui.PAGES:
        app.add_api_route(path, _page, methods=["GET"], include_in_schema=False)
    for prefix in ui.PAGE_PREFIXES:
        app.add_api_route(prefix + "{rest:path}", _page, methods=["GET"], include_in_schema=False)
    app.mount("/assets", StaticFiles(directory=ui.ASSETS), name="ui-assets")
    app.mount("/docs/assets", StaticFiles(directory=DOCS_ASSETS), name="docs-assets")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        return FileResponse(ui.ASSETS / "favicon.svg", media_type="image/svg+xml")

    @app.get("/docs", include_in_schema=False)
    def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="Headwater API",
            swagger_js_url="/docs/assets/swagger-ui-bundle.js",
            swagger_css_url="/docs/assets/swagger-ui.css",
            swagger_favicon_url="/favicon.ico",
        )

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url="/openapi.json",
            title="Headwater API",
            redoc_js_url="/docs/assets/redoc.standalone.js",
            redoc_favicon_url="/favicon.ico",
            with_google_fonts=False,
        )
