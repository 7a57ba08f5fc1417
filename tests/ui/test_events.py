"""The Events page in Chromium: the latest events filtered by event type and namespace, paged, one
click to a failed run and Back to the same filters; dead letters with their reasons, paged; at
1280x800 and on a 390-pixel-wide phone."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from headwater.store import open_store
from headwater.store.base import DeadLetter
from tests.conftest import LiveServer
from tests.ui.conftest import PageWatch, open_page, shot
from tests.ui.producer_events import ERROR, NAMESPACE, REPORT_JOB

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect
EVENT_ROWS = "table[aria-label='Events'] tbody tr:not(.raw-row)"
LETTER_ROWS = "table[aria-label='Dead letters'] tbody tr"
LETTERS = 30
DASH = "\N{EN DASH}"  # the pager counts "1 DASH 25 of 166"


def settled(page: Any) -> None:
    """Wait until the results of the latest filter change are drawn."""
    expect(page.locator("[aria-busy=true]")).to_have_count(0)


def status(page: Any) -> str:
    return str(page.locator(".pager [role=status]").inner_text())


def shows(page: Any, text: str) -> None:
    expect(page.locator(".pager [role=status]")).to_have_text(text)


def test_fail_filter_finds_the_shop_failure_and_one_click_opens_its_run(
    page: Any, ui_server: LiveServer
) -> None:
    page.goto(f"{ui_server.url}/events")
    page.locator(EVENT_ROWS).first.wait_for()
    assert page.locator(EVENT_ROWS).count() == 25
    shot(page, "events")

    page.get_by_role("checkbox", name="FAIL").check()
    page.wait_for_url(re.compile(r"eventType=FAIL"))
    settled(page)
    failure = page.locator(EVENT_ROWS, has_text=REPORT_JOB)
    failure.wait_for()
    rows = page.locator(EVENT_ROWS)
    assert all(row.locator(".badge").inner_text() == "FAIL" for row in rows.all())
    failure.get_by_role("button", name="JSON").click()
    raw = page.locator("tr.raw-row:not([hidden]) pre")
    assert ERROR in raw.inner_text() and '"eventType": "FAIL"' in raw.inner_text()
    shot(page, "events-fail")

    run_link = failure.get_by_role("link", name=re.compile(r"^Run "))
    run_id = str(run_link.get_attribute("title"))
    run_link.click()
    page.wait_for_url(f"{ui_server.url}/runs/{run_id}")
    assert ERROR in page.get_by_role("alert").inner_text()

    page.go_back()
    page.locator(EVENT_ROWS, has_text=REPORT_JOB).wait_for()
    assert page.get_by_role("checkbox", name="FAIL").is_checked()


def test_namespace_filter_and_paging_are_kept_in_the_url(page: Any, ui_server: LiveServer) -> None:
    page.goto(f"{ui_server.url}/events")
    page.locator(EVENT_ROWS).first.wait_for()
    total = int(re.sub(r"\D", "", status(page).split(" of ")[1]))
    assert total > 25 and status(page) == f"1{DASH}25 of {total}"
    page.get_by_role("button", name="Older →").click()
    page.wait_for_url(re.compile(r"offset=25"))
    expect(page.locator(".pager [role=status]")).to_have_text(re.compile(f"^26{DASH}"))
    page.reload()
    page.locator(EVENT_ROWS).first.wait_for()
    assert status(page).startswith(f"26{DASH}")

    page.get_by_label("Namespace").select_option(NAMESPACE)
    page.wait_for_url(re.compile(rf"namespace={NAMESPACE}(&|$)"))
    shows(page, f"1{DASH}8 of 8")
    namespaces = page.locator(f"{EVENT_ROWS} td[data-label='Namespace']").all_inner_texts()
    assert namespaces == [NAMESPACE] * 8
    jobs = set(page.locator(f"{EVENT_ROWS} td[data-label='Job or dataset']").all_inner_texts())
    assert jobs == {"shop_etl.clean_orders", REPORT_JOB}
    assert page.get_by_role("button", name="Older →").is_disabled()

    page.get_by_label("Job name").fill(REPORT_JOB)
    page.get_by_label("Job name").press("Enter")
    shows(page, f"1{DASH}4 of 4")
    page.get_by_label("After (UTC)").fill("2025-03-11T00:00")
    shows(page, f"1{DASH}2 of 2")
    assert "after=2025-03-11T00%3A00" in page.url
    page.get_by_role("button", name="Clear").click()
    shows(page, f"1{DASH}25 of {total}")


def test_events_on_a_phone(browser: Any, ui_server: LiveServer) -> None:
    context, page, watch = open_page(browser, ui_server.url, width=390, height=844)
    try:
        page.goto(f"{ui_server.url}/events?namespace={NAMESPACE}&eventType=FAIL")
        row = page.locator(EVENT_ROWS, has_text=REPORT_JOB)
        row.wait_for()
        box = row.bounding_box()
        assert box is not None and box["width"] <= 390  # stacked as a card, not a wide row
        shot(page, "events-phone")
    finally:
        context.close()
    assert not watch.problems(), "\n".join(watch.problems())


@pytest.fixture(scope="module")
def letters_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server whose store holds dead letters only: LETTERS malformed messages and one binary."""
    database_url = f"sqlite:///{Path(tmp_path_factory.mktemp('letters')) / 'headwater.db'}"
    store = open_store(database_url)
    letters = [
        DeadLetter(
            topic="openlineage.events",
            partition=offset % 3,
            offset=offset,
            key=b"run:shop/etl",
            value=b'{"eventType": "START", "eventTime": ',
            error=f"malformed JSON at line 1, column 37 (message {offset})",
            received_at=f"2025-03-10T06:{offset:02d}:00.0000000Z",
        )
        for offset in range(LETTERS - 1)
    ]
    letters.append(
        DeadLetter(
            topic="lineage.other",
            partition=0,
            offset=99,
            key=None,
            value=b"\xff\xfe binary",
            error="not UTF-8 JSON",
            received_at="2025-03-10T07:00:00.0000000Z",
        )
    )
    try:
        store.add_dead_letters(letters)
    finally:
        store.close()
    server = LiveServer(database_url)
    yield server
    server.stop()


@pytest.fixture
def letters_page(browser: Any, letters_server: LiveServer) -> Iterator[tuple[Any, PageWatch]]:
    context, page, watch = open_page(browser, letters_server.url)
    yield page, watch
    context.close()
    assert not watch.problems(), "\n".join(watch.problems())


def test_a_tab_clicked_while_the_page_still_loads_keeps_its_url(
    letters_page: tuple[Any, PageWatch], letters_server: LiveServer
) -> None:
    """The Events tab first waits for the namespaces. A click on Dead letters meanwhile wins: the
    late answer neither writes the Events tab's URL over the new one nor draws its filters."""
    page, _ = letters_page
    held: list[Any] = []
    page.route(re.compile(r"/api/v1/namespaces\?"), lambda route: held.append(route))
    page.goto(f"{letters_server.url}/events")
    page.get_by_role("link", name="Dead letters").click()
    page.wait_for_url(re.compile(r"tab=dead-letters"))
    page.locator(LETTER_ROWS).first.wait_for()
    assert len(held) == 1, "the Events tab asked for the namespaces"
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    with page.expect_response(re.compile(r"/api/v1/namespaces\?")):
        held[0].continue_()
    page.wait_for_load_state("networkidle")
    assert "tab=dead-letters" in page.url
    assert not [url for url in requests if "/api/v1/events/lineage" in url]
    expect(page.get_by_role("search", name="Filter events")).to_have_count(0)
    expect(page.get_by_role("search", name="Filter dead letters")).to_have_count(1)


def test_a_page_left_while_it_waits_for_the_server_draws_nothing_into_the_next(
    letters_page: tuple[Any, PageWatch], letters_server: LiveServer
) -> None:
    """The Jobs page waits for its jobs; the user goes to Events meanwhile. The jobs' late answer
    draws nothing into the Events page."""
    page, _ = letters_page
    held: list[Any] = []
    page.route(re.compile(r"/api/v1/jobs\?"), lambda route: held.append(route))
    page.goto(f"{letters_server.url}/jobs")
    deadline = time.monotonic() + 15  # a loaded machine runs the page's script late
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)  # lets Playwright hand the held request to the route
    assert len(held) == 1, "the Jobs page asked for its jobs"
    expect(page.get_by_role("heading", name="Jobs", exact=True)).to_have_count(0)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Events").click()
    page.wait_for_url(f"{letters_server.url}/events")
    expect(page.get_by_role("heading", name="Events", exact=True)).to_have_count(1)
    assert len(held) == 1, "and asked once"
    with page.expect_response(re.compile(r"/api/v1/jobs\?")):
        held[0].continue_()
    page.wait_for_load_state("networkidle")
    assert page.url == f"{letters_server.url}/events"
    expect(page.get_by_role("heading", name="Jobs", exact=True)).to_have_count(0)
    expect(page.locator("main h1")).to_have_count(1)


def test_dead_letters_with_their_reasons_paged(
    letters_page: tuple[Any, PageWatch], letters_server: LiveServer
) -> None:
    page, _ = letters_page
    page.goto(f"{letters_server.url}/events")
    page.get_by_role("link", name="Dead letters").click()
    page.wait_for_url(re.compile(r"tab=dead-letters"))
    page.locator(LETTER_ROWS).first.wait_for()
    assert page.get_by_role("heading", name=re.compile(rf"^{LETTERS} dead letters")).is_visible()
    assert "are not kept" in page.locator(".events-intro").inner_text()
    first = page.locator(LETTER_ROWS).first
    assert "not UTF-8 JSON" in first.locator("td[data-label='Reason']").inner_text()
    assert page.locator(f"{LETTER_ROWS}:not(.raw-row)").count() == 25
    second = page.locator(f"{LETTER_ROWS}:not(.raw-row)").nth(1)
    second.get_by_role("button", name="36 bytes").click()
    assert '"eventType": "START"' in page.locator("tr.raw-row:not([hidden]) pre").inner_text()
    shot(page, "events-dead-letters")

    page.get_by_role("button", name="Older →").click()
    page.wait_for_url(re.compile(r"before=\d+"))
    expect(page.locator(f"{LETTER_ROWS}:not(.raw-row)")).to_have_count(5)
    assert "message 0)" in page.locator(f"{LETTER_ROWS}:not(.raw-row)").last.inner_text()
    assert page.get_by_role("button", name="Older →").is_disabled()
    page.get_by_role("button", name="← Newer").click()
    expect(page.locator(f"{LETTER_ROWS}:not(.raw-row)")).to_have_count(25)

    page.get_by_label("Topic").fill("lineage.other")
    page.get_by_label("Topic").press("Enter")
    page.get_by_role("heading", name=re.compile(r"^1 dead letter\b")).wait_for()
    assert "(binary)" in page.locator(LETTER_ROWS).first.inner_text()
