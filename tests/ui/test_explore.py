"""A newcomer's path through the UI in Chromium: home, search, a dataset's page and fields, its
lineage (upstream and downstream names, a selected node, column mode, as of a past time), reload
and Back, expanding a capped node, a failed run's events, a job's page."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import expect

from tests.conftest import LiveServer
from tests.ui.conftest import shot
from tests.ui.producer_events import CLEAN, CLEAN_JOB, ERROR, RAW, REPORT_JOB, REVENUE

CLEAN_ID = f"dataset:shop:{CLEAN}"


def node(page: Any, node_id: str) -> Any:
    return page.locator(f'.node[data-id="{node_id}"]')


def graph_names(page: Any) -> set[str]:
    """The names the lineage graph shows, read from the DOM (each node's title holds its whole name)."""
    texts = page.locator(".node > title").all_text_contents()
    return {text.split("\n")[0] for text in texts}


def test_home_lists_namespaces_and_the_failed_run_first(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + "/")
    failed = page.locator("section.error-box")
    failed.get_by_role("link", name=REPORT_JOB).first.wait_for()
    namespaces = page.locator("section[aria-labelledby=ns-h]")
    for name in ("shop", "spark-lake", "bigquery"):
        assert namespaces.get_by_role("link", name=name, exact=True).count() == 1
    # the failed runs come before everything else on the page
    assert page.locator("section").first.get_attribute("class") == "card error-box"
    shot(page, "home")


def test_search_dataset_fields_lineage_columns_as_of_reload_back(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + "/")
    search = page.get_by_role("searchbox", name="Search datasets and jobs")
    search.fill("ORDERS_cl")  # name contains, any case
    suggestion = page.locator("#search-results").get_by_role("link", name=re.compile(re.escape(CLEAN)))
    suggestion.wait_for()
    shot(page, "search-suggestions")
    suggestion.click()

    page.wait_for_url(re.compile(r"/datasets/shop/analytics\.orders_clean$"))
    fields = page.get_by_role("table", name="Fields")
    fields.wait_for()
    names = fields.locator("tbody tr td:first-child").all_text_contents()
    assert names == ["order_id", "customer", "amount", "address", "address.city"]
    assert "DECIMAL(12,2)" in fields.inner_text()
    assert "team:shop-data" in page.locator("section[aria-labelledby=about-h]").inner_text()
    assert "Orders without test orders" in page.locator("section[aria-labelledby=facets-h]").inner_text()
    shot(page, "dataset")

    page.get_by_role("link", name="Lineage", exact=True).click()
    page.wait_for_url(re.compile(r"/lineage\?"))
    node(page, CLEAN_ID).wait_for()
    assert {RAW, CLEAN_JOB, CLEAN, REPORT_JOB, REVENUE} <= graph_names(page)
    assert "state-FAILED" in (node(page, f"job:shop:{REPORT_JOB}").get_attribute("class") or "")
    node(page, f"dataset:shop:{RAW}").click()
    side = page.get_by_role("complementary", name="Selected node")
    side.get_by_role("heading", name=RAW).wait_for()
    shot(page, "lineage")

    page.get_by_role("button", name="Columns").click()
    page.locator(".node .frow").first.wait_for()
    rows = node(page, CLEAN_ID).locator("g.frow").evaluate_all("rows => rows.map(r => r.dataset.field)")
    assert {"order_id", "amount", "customer"} <= set(rows)
    assert page.locator("path.edge.indirect").count() >= 1  # amount is filtered by status
    assert page.locator("path.edge:not(.indirect)").count() >= 3
    shot(page, "lineage-columns")

    page.get_by_role("button", name="Columns").click()  # back to datasets and jobs
    node(page, f"job:shop:{CLEAN_JOB}").wait_for()
    as_of = page.get_by_label("As of (UTC)")
    as_of.fill("2025-03-10T06:04:30")  # after the first clean run, before the report job's first event
    as_of.dispatch_event("change")
    page.wait_for_url(re.compile(r"asOf=2025-03-10T06%3A04%3A30Z"))
    page.get_by_text("as of 2025-03-10 06:04:30 UTC").wait_for()
    node(page, CLEAN_ID).wait_for()
    assert graph_names(page) == {RAW, CLEAN_JOB, CLEAN}
    shot(page, "lineage-as-of")

    page.reload()
    node(page, CLEAN_ID).wait_for()
    assert graph_names(page) == {RAW, CLEAN_JOB, CLEAN}
    assert parse_qs(urlparse(page.url).query)["asOf"] == ["2025-03-10T06:04:30Z"]
    page.go_back()
    page.wait_for_url(re.compile(r"/datasets/shop/analytics\.orders_clean$"))
    page.get_by_role("table", name="Fields").wait_for()


def test_expanding_a_node_fetches_what_is_beyond_it(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + "/lineage?node=dataset:s3://lake:raw/orders&depth=1&direction=downstream")
    page.locator(".node").first.wait_for()
    before = page.locator(".node").count()
    expander = page.locator(".node .expander").first
    expanded_id = expander.evaluate("el => el.closest('.node').dataset.id")
    expander.click()
    expect(page.locator(".node")).not_to_have_count(before)
    assert page.locator(".node").count() > before
    assert "expand=" in page.url
    assert page.locator(f'.node[data-id="{expanded_id}"] .expander').count() == 0
    after = page.locator(".node").count()
    page.reload()  # the expansion is part of the view's URL
    expect(page.locator(".node")).to_have_count(after)
    shot(page, "lineage-expanded")


def test_a_failed_run_shows_its_error_and_its_events(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + "/")
    page.locator("section.error-box").get_by_role("link", name=REPORT_JOB).first.wait_for()
    page.locator("section.error-box tbody tr", has_text=REPORT_JOB).first.locator("a.mono").click()
    page.wait_for_url(re.compile(r"/runs/[0-9a-f-]{36}$"))
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert ERROR in alert.inner_text()
    events = page.get_by_role("table", name="Run events")
    assert [t.strip() for t in events.locator("tbody tr td:first-child").all_text_contents()] == [
        "FAIL",
        "START",
    ]
    shot(page, "run-failed")


def test_a_job_page_shows_runs_versions_and_parent(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + "/jobs/airflow-prod/daily_pipeline.rpt_orders_daily")
    runs = page.get_by_role("table", name="Runs")
    runs.wait_for()
    assert runs.locator("tbody tr").count() >= 3
    assert page.locator("svg.chart rect").count() >= 3
    family = page.locator("section[aria-labelledby=family-h]")
    assert family.get_by_role("link", name="daily_pipeline", exact=True).count() == 1
    shot(page, "job")


def test_api_docs_are_served_offline(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + "/docs")
    page.get_by_text("/api/v1/lineage", exact=False).first.wait_for()
    shot(page, "api-docs")


def test_the_jobs_list_filters_by_the_latest_runs_state(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + "/jobs")
    jobs = page.get_by_role("table", name="Jobs")
    jobs.wait_for()
    report = jobs.locator("tbody tr", has_text=REPORT_JOB)
    assert report.locator(".run-states i").evaluate_all("runs => runs.map(r => r.className)") == [
        "state-COMPLETED",
        "state-FAILED",
    ]
    page.get_by_role("navigation", name="Latest run state").get_by_role("link", name="failed").click()
    page.wait_for_url(re.compile(r"/jobs\?state=FAILED$"))
    # the report job is listed before and after the filtered list arrives: wait for the list itself
    expect(jobs.locator("tbody td:nth-child(3)", has_text="COMPLETED")).to_have_count(0)
    expect(jobs.locator("tbody tr", has_text=REPORT_JOB)).to_have_count(1)
    assert set(jobs.locator("tbody td:nth-child(3)").all_text_contents()) == {"FAILED"}
    expect(page.get_by_text("1 job whose latest run is FAILED, latest update first")).to_be_visible()
    shot(page, "jobs")
