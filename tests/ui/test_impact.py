"""The impact analysis page in Chromium: the list of a demo dataset's downstream nodes against the
API's answer, filters, sorting by a header, the CSV export, the upstream switch, a reload, column
level from a field, and the phone layout."""

from __future__ import annotations

import csv
import io
import json
import re
import urllib.parse
import urllib.request
from typing import Any

from tests.conftest import LiveServer
from tests.ui.conftest import open_page, shot
from tests.ui.producer_events import CLEAN, NAMESPACE, RAW

SOURCE = "dataset:postgres://appdb:5432:shop.public.orders"  # a demo source table: a long way down


def api(server: LiveServer, **params: str) -> Any:
    url = f"{server.url}/api/warehouse/v1/impact?{urllib.parse.urlencode(params)}"
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


def impact_url(server: LiveServer, node: str, **settings: str) -> str:
    return f"{server.url}/impact?{urllib.parse.urlencode({'node': node, **settings})}"


def shown(page: Any) -> dict[str, str]:
    """node id → the distance cell, for each row of the table."""
    rows = page.locator("table.impact-table tbody tr")
    return {
        row.get_attribute("data-node"): row.locator("td").first.inner_text().strip() for row in rows.all()
    }


def wait_rows(page: Any, count: int) -> None:
    page.wait_for_function(
        "n => document.querySelectorAll('table.impact-table tbody tr').length === n", arg=count
    )


def test_downstream_filter_sort_export_upstream(page: Any, ui_server: LiveServer) -> None:
    answer = api(ui_server, nodeId=SOURCE)
    expected = {row["nodeID"]: str(row["distance"]) for row in answer["rows"]}
    assert len(expected) >= 8 and max(row["distance"] for row in answer["rows"]) >= 3
    page.goto(impact_url(ui_server, SOURCE))
    wait_rows(page, len(expected))
    assert page.get_by_role("heading", level=1).inner_text() == "shop.public.orders"
    assert shown(page) == expected
    summary = page.locator(".impact-summary").inner_text()
    assert f"{len(expected)} nodes downstream" in summary
    shot(page, "impact")

    # filters: by type, then by name; the URL keeps them
    jobs = [row for row in answer["rows"] if row["nodeType"] == "job"]
    page.get_by_label("Filter by type").select_option("job")
    wait_rows(page, len(jobs))
    assert set(shown(page)) == {row["nodeID"] for row in jobs}
    assert "type=job" in page.url
    page.get_by_label("Filter by name", exact=True).fill("stg")
    stg = [row["nodeID"] for row in jobs if "stg" in row["name"]]
    assert stg
    wait_rows(page, len(stg))
    assert set(shown(page)) == set(stg)
    page.get_by_role("button", name="Clear filters").click()
    wait_rows(page, len(expected))

    # sort by name: the header says so (aria-sort), a second click reverses
    name_header = page.locator("th", has=page.get_by_role("button", name="Name", exact=True))
    page.get_by_role("button", name="Name", exact=True).click()
    assert name_header.get_attribute("aria-sort") == "ascending"
    names = page.locator("table.impact-table tbody tr td:nth-child(2)").all_inner_texts()
    assert names == sorted(names, key=str.lower)
    page.get_by_role("button", name="Name", exact=True).click()
    assert name_header.get_attribute("aria-sort") == "descending"
    assert page.locator("table.impact-table tbody tr td:nth-child(2)").all_inner_texts() == names[::-1]
    assert "sort=name" in page.url and "desc=1" in page.url

    # export: the rows shown, in the order shown
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export the rows shown as CSV").click()
    download = download_info.value
    assert download.suggested_filename == "impact-shop.public.orders-downstream.csv"
    with open(download.path(), encoding="utf-8") as exported:
        lines = list(csv.DictReader(io.StringIO(exported.read())))
    assert [line["node_id"] for line in lines] == [
        row.get_attribute("data-node") for row in page.locator("table.impact-table tbody tr").all()
    ]
    by_id = {row["nodeID"]: row for row in answer["rows"]}
    for line in lines:
        row = by_id[line["node_id"]]
        assert line["distance"] == str(row["distance"]) and line["namespace"] == row["namespace"]
        assert line["owners"] == "; ".join(row["owners"])
        assert line["latest_run_state"] == (row["latestRunState"] or "")

    # a reload keeps the view; upstream asks again
    page.reload()
    wait_rows(page, len(expected))
    assert name_header.get_attribute("aria-sort") == "descending"
    page.get_by_role("button", name="Upstream").click()
    page.wait_for_url(re.compile(r"direction=upstream"))
    upstream = api(ui_server, nodeId=SOURCE, direction="upstream")
    page.wait_for_selector("text=Nothing upstream of shop.public.orders" if not upstream["rows"] else "table")
    assert page.get_by_role("button", name="Upstream").get_attribute("aria-pressed") == "true"
    middle = "dataset:bigquery:acme-analytics.marts.fct_orders"
    page.goto(impact_url(ui_server, middle, direction="upstream", depth="1"))
    upstream = api(ui_server, nodeId=middle, direction="upstream", depth="1")
    wait_rows(page, len(upstream["rows"]))
    assert shown(page) == {row["nodeID"]: str(row["distance"]) for row in upstream["rows"]}
    assert set(shown(page).values()) == {"1"}


def test_column_level_from_a_field(page: Any, ui_server: LiveServer) -> None:
    field = f"datasetField:{NAMESPACE}:{RAW}:id"
    answer = api(ui_server, nodeId=field)
    assert answer["level"] == "column"
    clean_id = f"datasetField:{NAMESPACE}:{CLEAN}:order_id"
    assert {row["nodeID"]: row["distance"] for row in answer["rows"]}.get(clean_id) == 1
    page.goto(impact_url(ui_server, field))
    wait_rows(page, len(answer["rows"]))
    assert shown(page) == {row["nodeID"]: str(row["distance"]) for row in answer["rows"]}
    assert page.locator(".impact-query .tag", has_text="column level").is_visible()
    row = page.locator(f'tr[data-node="{clean_id}"]')
    assert row.locator("td").nth(2).inner_text().strip() == "field"
    assert "team:shop-data" in row.inner_text()  # the owners of the field's dataset
    shot(page, "impact-columns")


def test_phone_width(browser: Any, ui_server: LiveServer) -> None:
    context, page, watch = open_page(browser, ui_server.url, width=390, height=844)
    try:
        answer = api(ui_server, nodeId=SOURCE)
        page.goto(impact_url(ui_server, SOURCE))
        wait_rows(page, len(answer["rows"]))
        assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing sticks out sideways
        page.get_by_label("Sort by").select_option("distance-desc")
        first = page.locator("table.impact-table tbody tr").first.get_attribute("data-node")
        assert first in {
            r["nodeID"] for r in answer["rows"] if r["distance"] == answer["rows"][-1]["distance"]
        }
        page.evaluate("document.querySelector('.impact-summary').scrollIntoView()")
        shot(page, "impact-phone")
    finally:
        context.close()
    assert not watch.problems(), "\n".join(watch.problems())
