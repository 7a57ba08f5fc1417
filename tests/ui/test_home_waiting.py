"""The home page while stored events wait for the pipeline, in Chromium: the demo lineage stored
and never published, then `headwater pipeline run` while the page is open; the page says how many
events wait, draws the namespaces by itself once the pipeline has published them, and says
nothing of the pass's report of itself, which waits for the next pass."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headwater.config import Settings
from tests.conftest import LiveServer
from tests.ui.conftest import PageWatch, open_page, run_pipeline, shot

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect


@pytest.fixture
def unpublished(tmp_path: Path) -> Iterator[tuple[LiveServer, str, int]]:
    """A server on a store holding the demo lineage, which no pipeline has published yet."""
    from headwater.cli import _load_demo

    database_url = f"sqlite:///{tmp_path / 'headwater.db'}"
    stored = _load_demo(Settings(database_url=database_url))
    server = LiveServer(database_url)
    try:
        yield server, database_url, stored
    finally:
        server.stop()


@pytest.fixture
def fresh_page(browser: Any, unpublished: tuple[LiveServer, str, int]) -> Iterator[tuple[Any, PageWatch]]:
    context, page, watch = open_page(browser, unpublished[0].url)
    yield page, watch
    context.close()
    assert not watch.problems(), "\n".join(watch.problems())


def test_home_says_what_waits_and_shows_it_once_published(
    fresh_page: tuple[Any, PageWatch], unpublished: tuple[LiveServer, str, int]
) -> None:
    page, _ = fresh_page
    server, database_url, stored = unpublished
    page.goto(server.url + "/")
    note = page.get_by_role("status").filter(has_text="waiting for the pipeline")
    expect(note).to_contain_text(f"{stored} events are waiting for the pipeline")
    expect(note).to_contain_text("has not run on this store yet")
    assert "No lineage published yet." in page.locator("section[aria-labelledby=ns-h]").inner_text()
    shot(page, "home-waiting")

    run_pipeline(database_url)  # while the page is open: it draws the published lineage by itself
    namespaces = page.locator("section[aria-labelledby=ns-h]")
    expect(namespaces.get_by_role("link", name="bigquery", exact=True)).to_be_visible(timeout=20_000)
    # the pass's report of itself (two events) waits for the next pass: not worth a note
    expect(page.get_by_role("status").filter(has_text="waiting for the pipeline")).to_have_count(0)
    assert page.evaluate("fetch('/api/v1/pipeline').then(r => r.json())")["waitingReports"] == 2
    shot(page, "home-published")
