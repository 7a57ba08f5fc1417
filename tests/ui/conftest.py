"""The web UI in a real browser: Debian's Chromium driven by Playwright, against `headwater serve`
on a store holding the demo lineage, events sent by the real openlineage-python client and a few
generic events (folded_events.py), after one pass of the Spark pipeline (`headwater pipeline run`).

Every page fixture fails its test on a console error, an uncaught page error, or a request that
leaves the server's origin; `shot(page, name)` saves a screenshot under build/ui-screenshots/.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headwater.config import Settings
from tests.conftest import REPO, LiveServer
from tests.ui.folded_events import send_folded_events
from tests.ui.producer_events import send_producer_events

SCREENSHOTS = REPO / "build" / "ui-screenshots"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def launch_browser(playwright: Any) -> Any:
    """Debian's Chromium (never a browser Playwright downloads)."""
    path = chromium_path()
    if path is None:
        pytest.skip("no chromium on PATH: scripts/test installs Debian's chromium package")
    return playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)


def run_pipeline(database_url: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "headwater", "pipeline", "run", "--quiet", "--database-url", database_url],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )
    if result.returncode != 0:
        raise RuntimeError(f"headwater pipeline run failed:\n{result.stdout}\n{result.stderr}")


@pytest.fixture(scope="session")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A live server on the demo lineage plus real-client events, with the lineage model built."""
    from headwater.cli import _load_demo

    database_url = f"sqlite:///{tmp_path_factory.mktemp('ui') / 'headwater.db'}"
    _load_demo(Settings(database_url=database_url))
    server = LiveServer(database_url)
    try:
        send_producer_events(server.url)
        send_folded_events(server.url)
        run_pipeline(database_url)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        chromium = launch_browser(playwright)
        yield chromium
        chromium.close()


class PageWatch:
    """What a page did wrong: console errors, page errors, requests to another origin."""

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        self.foreign_requests: list[str] = []
        self.allowed_console: list[str] = []  # substrings a test expects (e.g. a 401 before a key)

    def problems(self) -> list[str]:
        console = [m for m in self.console_errors if not any(a in m for a in self.allowed_console)]
        return (
            [f"console error: {m}" for m in console]
            + [f"page error: {m}" for m in self.page_errors]
            + [f"request outside {self.origin}: {u}" for u in self.foreign_requests]
        )


def open_page(
    browser: Any, origin: str, *, width: int = 1280, height: int = 800, color_scheme: str = "light"
) -> tuple[Any, Any, PageWatch]:
    """A fresh browser context and page watched by a PageWatch; requests to other hosts are cut."""
    context = browser.new_context(
        viewport={"width": width, "height": height}, accept_downloads=True, color_scheme=color_scheme
    )
    watch = PageWatch(origin)

    def guard(route: Any) -> None:
        url = route.request.url
        if url.startswith(origin + "/") or url == origin or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            watch.foreign_requests.append(url)
            route.abort()

    context.route("**/*", guard)
    page = context.new_page()
    page.on("console", lambda m: watch.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: watch.page_errors.append(str(e)))
    page.set_default_timeout(15_000)
    return context, page, watch


@pytest.fixture
def watched(browser: Any, ui_server: LiveServer) -> Iterator[tuple[Any, PageWatch]]:
    """A 1280 x 800 page on the UI server; the test fails on any console error or foreign request."""
    context, page, watch = open_page(browser, ui_server.url)
    yield page, watch
    context.close()
    assert not watch.problems(), "\n".join(watch.problems())


@pytest.fixture
def page(watched: tuple[Any, PageWatch]) -> Any:
    return watched[0]


def shot(page: Any, name: str) -> Path:
    """Save a screenshot of the page (full page) for people to look at."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path
