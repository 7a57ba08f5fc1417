"""The lineage page's views in Chromium: the diff of the graph between two times, filters, the
paths between two selected nodes, export as SVG and PNG, keyboard use, a phone screen, and the
API key prompt of a server that requires read keys."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.conftest import LiveServer
from tests.ui.conftest import open_page, shot
from tests.ui.producer_events import ARCHIVE, CLEAN, CLEAN_JOB, DROPPED_AT, RAW, REPORT_JOB, REVENUE, SNAPSHOT

CLEAN_ID = f"dataset:shop:{CLEAN}"
SHOP_LINEAGE = f"/lineage?node={CLEAN_ID}"


def node(page: Any, node_id: str) -> Any:
    return page.locator(f'.node[data-id="{node_id}"]')


def classes(locator: Any) -> set[str]:
    return set((locator.get_attribute("class") or "").split())


def test_compare_marks_what_appeared_since_an_earlier_time(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + SHOP_LINEAGE + "&compare=2025-03-10T06:04:30Z")
    changes = page.get_by_role("status", name="Changes")
    expect(changes).to_contain_text("+2 added")
    expect(changes).to_contain_text("\N{MINUS SIGN}0 removed")
    assert "diff-added" in classes(node(page, f"job:shop:{REPORT_JOB}"))
    assert "diff-added" in classes(node(page, f"dataset:shop:{REVENUE}"))
    assert "diff-changed" in classes(node(page, CLEAN_ID))  # it gained a reader
    assert not {"diff-added", "diff-changed"} & classes(node(page, f"dataset:shop:{RAW}"))
    assert page.locator("path.edge.diff-added").count() == 2
    shot(page, "lineage-compare")

    # the other way round: as of the earlier time, compared with now, they are removed
    page.goto(ui_server.url + SHOP_LINEAGE + "&asOf=2025-03-10T06:04:30Z&compare=2025-03-12T00:00:00Z")
    expect(page.get_by_role("status", name="Changes")).to_contain_text("\N{MINUS SIGN}2 removed")
    assert "diff-removed" in classes(node(page, f"dataset:shop:{REVENUE}"))


def test_filter_hides_jobs_and_keeps_it_in_the_url(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + SHOP_LINEAGE)
    node(page, f"job:shop:{CLEAN_JOB}").wait_for()
    page.get_by_text("Filter", exact=True).click()
    page.get_by_role("checkbox", name="jobs").uncheck()
    page.wait_for_url(re.compile(r"hide=kind%3Ajob"))
    node(page, CLEAN_ID).wait_for()
    assert page.locator(".node.job").count() == 0
    assert node(page, f"dataset:shop:{RAW}").count() == 1
    page.reload()
    node(page, CLEAN_ID).wait_for()
    assert page.locator(".node.job").count() == 0


def test_the_paths_between_two_nodes_are_highlighted(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + "/lineage?node=dataset:bigquery:acme-analytics.marts.fct_orders&depth=2")
    source = node(page, "dataset:s3://lake:raw/orders")
    source.wait_for()
    page.get_by_role("button", name="Fit").click()  # the whole graph in view
    total = page.locator(".node").count()
    source.click()
    node(page, "dataset:postgres://warehouse:5432:warehouse.reporting.rpt_orders_daily").click(
        modifiers=["Shift"]
    )
    side = page.get_by_role("complementary", name="Selected node")
    expect(side).to_contain_text("nodes on the paths between")
    dimmed = page.locator(".node.dim").count()
    assert 0 < dimmed < total
    assert page.locator("path.edge.hl").count() >= 4
    assert "dim" not in classes(node(page, "dataset:bigquery:acme-analytics.marts.fct_orders"))
    side.get_by_role("button", name="Only the path").click()
    assert page.locator(".node:visible").count() == total - dimmed
    assert "path=" in page.url and "only=1" in page.url
    shot(page, "lineage-path")


def test_export_as_svg_and_png(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + SHOP_LINEAGE)
    node(page, CLEAN_ID).wait_for()
    with page.expect_download() as svg_download:
        page.get_by_role("button", name="SVG").click()
    svg = Path(svg_download.value.path()).read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "xmlns" in svg
    for name in (RAW, CLEAN, REVENUE):
        assert name in svg
    with page.expect_download() as png_download:
        page.get_by_role("button", name="PNG").click()
    png = Path(png_download.value.path()).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000


def test_keyboard_selects_a_node(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + SHOP_LINEAGE)
    raw = node(page, f"dataset:shop:{RAW}")
    raw.focus()
    page.keyboard.press("Enter")
    side = page.get_by_role("complementary", name="Selected node")
    side.get_by_role("heading", name=RAW).wait_for()
    assert raw.get_attribute("aria-pressed") == "true"


def test_on_a_phone_the_graph_pans(browser: Any, ui_server: LiveServer) -> None:
    context, page, watch = open_page(browser, ui_server.url, width=390, height=844)
    try:
        page.goto(ui_server.url + SHOP_LINEAGE)
        node(page, CLEAN_ID).wait_for()
        world = page.locator("g.world")
        before = world.get_attribute("transform")
        box = page.locator(".canvas svg").bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + 30  # an empty part of the canvas
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + 120, y - 40, steps=6)
        page.mouse.up()
        assert world.get_attribute("transform") != before
        shot(page, "lineage-phone")
        page.goto(ui_server.url + "/")
        page.locator("section[aria-labelledby=ns-h]").wait_for()
        shot(page, "home-phone")
    finally:
        context.close()
    assert not watch.problems(), watch.problems()


@pytest.fixture
def keyed_server(ui_server: LiveServer) -> Iterator[LiveServer]:
    """A second server on the same store that requires a read key."""
    database_url = ui_server.process.args[ui_server.process.args.index("--database-url") + 1]
    server = LiveServer(database_url, "--read-key", "reader-secret", "--write-key", "writer-secret")
    yield server
    server.stop()


def test_a_server_with_read_keys_asks_for_one(browser: Any, keyed_server: LiveServer) -> None:
    context, page, watch = open_page(browser, keyed_server.url)
    watch.allowed_console.append("401")  # the first request, before the key
    try:
        page.goto(keyed_server.url + "/")
        dialog = page.get_by_role("dialog", name="API key")
        dialog.wait_for()
        shot(page, "api-key")
        dialog.get_by_label("Key").fill("reader-secret")
        dialog.get_by_role("button", name="Use key").click()
        page.locator("section[aria-labelledby=ns-h]").get_by_role("link", name="shop", exact=True).wait_for()
        page.goto(keyed_server.url + SHOP_LINEAGE)  # the key is kept for the tab
        node(page, CLEAN_ID).wait_for()
    finally:
        context.close()
    assert not watch.problems(), watch.problems()


def test_group_folds_the_tasks_of_a_dag_into_one_node(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + "/lineage?node=dataset:bigquery:acme-analytics.marts.fct_orders&depth=2")
    tasks = page.locator('.node[data-id^="job:airflow-prod:daily_pipeline."]')
    tasks.first.wait_for()
    folded = tasks.count()
    assert folded >= 2
    page.get_by_role("button", name="Group").click()
    dag = node(page, "group:job:airflow-prod:daily_pipeline")
    dag.wait_for()
    assert tasks.count() == 0
    assert f"{folded} jobs" in (dag.text_content() or "")
    page.get_by_role("button", name="Fit").click()
    dag.click()
    side = page.get_by_role("complementary", name="Selected node")
    side.get_by_role("button", name=f"Show its {folded} jobs").click()
    expect(tasks).to_have_count(folded)
    assert "group=1" in page.url and "open=job%3Aairflow-prod%3Adaily_pipeline" in page.url
    shot(page, "lineage-grouped")


def test_a_whole_namespace_as_one_graph(page: Any, ui_server: LiveServer) -> None:
    page.goto(ui_server.url + "/namespaces/shop")
    page.get_by_role("link", name="Lineage of the whole namespace").click()
    page.wait_for_url(re.compile(r"node=namespace%3Ashop"))
    node(page, CLEAN_ID).wait_for()
    ids = set(page.locator(".node").evaluate_all("nodes => nodes.map(n => n.dataset.id)"))
    assert ids == {
        CLEAN_ID,
        f"dataset:shop:{RAW}",
        f"dataset:shop:{REVENUE}",
        f"job:shop:{CLEAN_JOB}",
        f"job:shop:{REPORT_JOB}",
    }


def test_the_dark_theme_follows_the_system_setting(browser: Any, ui_server: LiveServer) -> None:
    context, page, watch = open_page(browser, ui_server.url, color_scheme="dark")
    try:
        page.goto(ui_server.url + SHOP_LINEAGE + "&columns=1")
        node(page, CLEAN_ID).wait_for()
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(13, 17, 23)", background
        shot(page, "lineage-columns-dark")
    finally:
        context.close()
    assert not watch.problems(), watch.problems()


def test_filter_by_tag(page: Any, ui_server: LiveServer) -> None:
    tagged = httpx.post(f"{ui_server.url}/api/v1/namespaces/shop/datasets/{RAW}/tags/pii")
    assert tagged.status_code == 200, tagged.text
    page.goto(ui_server.url + SHOP_LINEAGE)
    node(page, CLEAN_ID).wait_for()
    page.get_by_text("Filter", exact=True).click()
    page.get_by_role("combobox", name="Only the nodes tagged").select_option("pii")
    page.wait_for_url(re.compile(r"tag=pii"))
    expect(page.locator(".node")).to_have_count(1)
    assert node(page, f"dataset:shop:{RAW}").count() == 1
    expect(page.locator("summary", has_text="Filter")).to_have_text("Filter (tag pii)")


def test_a_dropped_table_stays_in_the_lineage_marked_with_the_time(page: Any, ui_server: LiveServer) -> None:
    snapshot = f"dataset:{ARCHIVE}:{SNAPSHOT}"
    page.goto(ui_server.url + f"/lineage?node={snapshot}")
    dropped = node(page, snapshot)
    expect(dropped).to_have_class(re.compile(r"\bdropped\b"))
    assert "dropped" in (dropped.locator("text.sub").text_content() or "")
    assert "dropped" not in classes(node(page, f"job:{ARCHIVE}:archive.snapshot_orders"))
    # both jobs that wrote it, the creator and the dropper, stay its upstream
    expect(node(page, f"job:{ARCHIVE}:archive.retire_snapshot")).to_have_count(1)
    expect(node(page, f"job:{ARCHIVE}:archive.snapshot_orders")).to_have_count(1)
    dropped.click()
    side = page.locator("aside")
    expect(side).to_contain_text("DROP at")
    response = page.request.get(ui_server.url + f"/api/warehouse/v1/lineage/upstream?nodeId={snapshot}")
    vertex = next(v for v in response.json()["vertices"] if v["nodeID"] == snapshot)
    assert vertex["properties"]["lifecycleStateTime"] == DROPPED_AT
    shot(page, "lineage-dropped-table")
