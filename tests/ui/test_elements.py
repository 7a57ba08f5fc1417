"""The elements pages in Chromium, on FastScore-style generic events sent over HTTP (browsable at
once, no pipeline pass): element types as tabs, the latest events opening inline, tags by key; an
element's latest tag values and its events with the other elements as links; element → event →
other element, reload and Back; at 1280x800 and on a 390-pixel-wide phone. Elements the server's
pipeline pass folded (folded_events.py) link to their lineage graph."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import LiveServer
from tests.ui.conftest import open_page, shot
from tests.ui.folded_events import ENGINE as FOLDED_ENGINE
from tests.ui.folded_events import FRAUD
from tests.ui.folded_events import MANAGER as FOLDED_MANAGER
from tests.ui.folded_events import SCHEMA as FOLDED_SCHEMA

sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect

MODEL = "churn"
ENGINE = "engine-1"
SCHEMA = "churn-input"
MANAGER = "model-manage-1"
EVENTS: list[dict[str, Any]] = [
    {
        "description": "put model: churn",
        "type": "put model",
        "elements": [
            {"description": MODEL, "type": "model", "tags": {"model-hash": "4b85", "model-type": "Python3"}},
            {"description": MANAGER, "type": "fastscore-service"},
        ],
        "tags": {"pneumo-timestamp": "2018-12-12T21:35:21.613138Z"},
    },
    {
        "description": "attach schema: churn-input",
        "type": "attach schema",
        "elements": [
            {"description": MODEL, "type": "model"},
            {"description": SCHEMA, "type": "schema", "tags": {"schema-hash": "77aa"}},
        ],
    },
    {
        "description": "load model: churn",
        "type": "load model",
        "elements": [
            {"description": MODEL, "type": "model", "tags": {"model-hash": "9c21"}},
            {"description": ENGINE, "type": "engine"},
        ],
    },
    {
        "description": "engine state: RUNNING",
        "type": "engine state",
        "elements": [{"description": ENGINE, "type": "engine", "tags": {"state": "RUNNING", "replicas": 2}}],
    },
]


@pytest.fixture(scope="module")
def generic(ui_server: LiveServer) -> dict[str, int]:
    """The events sent (one at a time, in order), and the ids of the elements they name."""
    for event in EVENTS:
        answer = httpx.post(f"{ui_server.url}/lineage/1/events", json=event, timeout=30)
        assert answer.status_code == 201, answer.text
    elements = httpx.get(f"{ui_server.url}/lineage/1/elements", params={"limit": 1000}, timeout=30).json()
    return {el["description"]: el["id"] for el in elements}


def events_list(page: Any) -> Any:
    return page.get_by_role("list", name=re.compile(r"^(Latest events|Events of this element)$"))


def test_elements_page_lists_types_elements_events_and_tags(
    page: Any, ui_server: LiveServer, generic: dict[str, int]
) -> None:
    page.goto(f"{ui_server.url}/elements")
    tabs = page.get_by_role("navigation", name="Element types")
    for name in ("All types", "engine", "fastscore-service", "model", "schema"):
        expect(tabs.get_by_role("link", name=name, exact=True)).to_be_visible()
    # no type in the URL: the first generic type (OpenLineage datasets and jobs may be many)
    expect(tabs.get_by_role("link", name="engine", exact=True)).to_have_attribute("aria-current", "page")
    elements = page.get_by_role("table", name="Elements")
    expect(elements.get_by_role("link", name=ENGINE, exact=True)).to_be_visible()

    # newest first: the engine's state change, then the load, the schema, the put
    summaries = events_list(page).locator("summary .el-desc")
    texts = [str(t) for t in summaries.all_inner_texts()]
    order = [texts.index(e["description"]) for e in reversed(EVENTS)]
    assert order == sorted(order), texts
    put = events_list(page).locator("details", has_text="put model: churn")
    put.locator("summary").click()
    body = put.get_by_role("list", name=re.compile(r"^Elements of event"))
    expect(body.get_by_role("link", name=MANAGER)).to_be_visible()
    expect(put.locator(".el-event-tags")).to_contain_text("pneumo-timestamp=2018-12-12T21:35:21.613138Z")
    shot(page, "elements")

    # a type tab keeps its choice in the URL
    tabs.get_by_role("link", name="model", exact=True).click()
    page.wait_for_url(f"{ui_server.url}/elements?type=model")
    expect(page.get_by_role("heading", name="Elements of type model")).to_be_visible()
    expect(elements.get_by_role("link", name=MODEL, exact=True)).to_be_visible()
    expect(elements.get_by_role("link", name=ENGINE, exact=True)).to_have_count(0)
    tabs.get_by_role("link", name="engine", exact=True).click()
    page.wait_for_url(f"{ui_server.url}/elements?type=engine")
    expect(elements.get_by_role("link", name=ENGINE, exact=True)).to_be_visible()
    tabs.get_by_role("link", name="All types").click()
    page.wait_for_url(re.compile(r"/elements\?type=(\*|%2A)$"))
    expect(page.get_by_role("heading", name="Elements of every type")).to_be_visible()
    page.go_back()
    page.wait_for_url(f"{ui_server.url}/elements?type=engine")
    expect(page.get_by_role("heading", name="Elements of type engine")).to_be_visible()
    page.go_back()
    page.wait_for_url(f"{ui_server.url}/elements?type=model")
    expect(page.get_by_role("heading", name="Elements of type model")).to_be_visible()

    # a tag key filters the tags to that key; its values are all there
    tags = page.get_by_role("table", name="Tags")
    tags.get_by_role("link", name="model-hash").first.click()
    page.wait_for_url(re.compile(r"key=model-hash"))
    expect(page.get_by_role("heading", name="Tags with key model-hash")).to_be_visible()
    values = tags.locator("tbody td:nth-child(2)").all_inner_texts()
    assert {"4b85", "9c21"} <= set(values), values
    assert "Python3" not in values
    page.reload()
    expect(page.get_by_role("heading", name="Tags with key model-hash")).to_be_visible()
    expect(page.get_by_role("heading", name="Elements of type model")).to_be_visible()
    page.go_back()
    page.wait_for_url(f"{ui_server.url}/elements?type=model")
    expect(page.get_by_role("heading", name="Tags", exact=True)).to_be_visible()


def test_element_page_latest_tags_events_and_the_way_to_another_element(
    page: Any, ui_server: LiveServer, generic: dict[str, int]
) -> None:
    page.goto(f"{ui_server.url}/elements?type=model")
    page.get_by_role("table", name="Elements").get_by_role("link", name=MODEL, exact=True).click()
    page.wait_for_url(f"{ui_server.url}/elements/{generic[MODEL]}")
    expect(page.get_by_role("heading", name=MODEL, exact=True, level=1)).to_be_visible()

    # the latest value of each key: the load's hash replaced the put's
    tags = page.get_by_role("table", name="Current tags")
    rows = {
        str(r.locator("td").nth(0).inner_text()): str(r.locator("td").nth(1).inner_text())
        for r in tags.locator("tbody tr").all()
    }
    assert rows["model-hash"] == "9c21" and rows["model-type"] == "Python3", rows

    # its events newest first, each with the other elements as links (not the model itself)
    events = events_list(page)
    texts = [str(t) for t in events.locator("summary .el-desc").all_inner_texts()]
    assert texts[:3] == ["load model: churn", "attach schema: churn-input", "put model: churn"], texts
    load = events.locator("details", has_text="load model: churn")
    expect(load.get_by_role("link", name=ENGINE)).to_be_visible()
    expect(load.get_by_role("link", name=MODEL, exact=True)).to_have_count(0)
    expect(load.locator(".el-own")).to_contain_text("model-hash=9c21")
    attach = events.locator("details", has_text="attach schema")
    expect(attach.get_by_role("link", name=SCHEMA)).to_be_visible()
    # no lineage link: these events came after the pipeline pass, so the model is no graph node
    expect(page.get_by_role("link", name="Lineage", exact=True)).to_have_count(0)
    shot(page, "element")

    # element → event → other element
    load.get_by_role("link", name=re.compile(r"^Event \d+$")).click()
    page.wait_for_url(re.compile(r"/elements\?event=\d+$"))
    focus = page.locator(".el-focus")
    expect(focus).to_contain_text("load model: churn")
    expect(focus.locator(".el-event-body")).to_contain_text("model-hash=9c21")
    focus.get_by_role("link", name=ENGINE).click()
    page.wait_for_url(f"{ui_server.url}/elements/{generic[ENGINE]}")
    engine_tags = page.get_by_role("table", name="Current tags")
    expect(engine_tags).to_contain_text("RUNNING")
    expect(engine_tags).to_contain_text("replicas")
    expect(events_list(page).locator("details").first).to_contain_text("engine state: RUNNING")

    page.reload()
    expect(page.get_by_role("heading", name=ENGINE, level=1)).to_be_visible()
    page.go_back()
    page.wait_for_url(re.compile(r"/elements\?event=\d+$"))
    expect(page.locator(".el-focus")).to_contain_text("load model: churn")
    page.go_back()
    page.wait_for_url(f"{ui_server.url}/elements/{generic[MODEL]}")
    expect(page.get_by_role("table", name="Current tags")).to_contain_text("9c21")


def test_elements_pages_on_a_phone(browser: Any, ui_server: LiveServer, generic: dict[str, int]) -> None:
    context, page, watch = open_page(browser, ui_server.url, width=390, height=844)
    try:
        page.goto(f"{ui_server.url}/elements")
        expect(page.get_by_role("table", name="Elements")).to_be_visible()
        shot(page, "elements-phone")
        page.goto(f"{ui_server.url}/elements/{generic[MODEL]}")
        expect(page.get_by_role("table", name="Current tags")).to_be_visible()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the element page scrolls sideways ({width} px)"
        shot(page, "element-phone")
        page.emulate_media(color_scheme="dark")
        page.get_by_role("link", name=ENGINE).first.click()
        page.wait_for_url(f"{ui_server.url}/elements/{generic[ENGINE]}")
        expect(page.get_by_role("table", name="Current tags")).to_contain_text("RUNNING")
        shot(page, "element-phone-dark")
    finally:
        context.close()
    assert not watch.problems(), "\n".join(watch.problems())


def test_an_openlineage_dataset_element_links_to_its_page_and_lineage(
    page: Any, ui_server: LiveServer, generic: dict[str, int]
) -> None:
    """Once the pipeline numbers OpenLineage datasets as elements (`element_type=dataset`)."""
    types = httpx.get(f"{ui_server.url}/lineage/1/element_types", timeout=30).json()
    if "dataset" not in types:
        pytest.skip("this server does not serve OpenLineage datasets as elements")
    page.goto(f"{ui_server.url}/elements?type=dataset")
    first = page.get_by_role("table", name="Elements").locator("tbody a").first
    description = str(first.inner_text())
    first.click()
    page.wait_for_url(re.compile(r"/elements/\d+$"))
    expect(page.get_by_role("heading", name=description, level=1)).to_be_visible()
    expect(page.get_by_role("link", name="Lineage", exact=True)).to_have_attribute(
        "href", re.compile(r"^/lineage\?node=dataset%3A")
    )
    shot(page, "element-dataset")
    page.get_by_role("link", name="Dataset page").click()
    page.wait_for_url(re.compile(r"/datasets/"))
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    page.go_back()
    expect(page.get_by_role("heading", name=description, level=1)).to_be_visible()


def test_an_empty_server_teaches_how_to_send_a_generic_event(browser: Any, tmp_path: Path) -> None:
    server = LiveServer(f"sqlite:///{tmp_path / 'empty.db'}")
    context, page, watch = open_page(browser, server.url)
    try:
        page.goto(f"{server.url}/elements")
        expect(page.get_by_role("heading", name="No generic events yet")).to_be_visible()
        curl = page.locator(".el-curl")
        expect(curl).to_contain_text(f"curl -X POST {server.url}/lineage/1/events")
        expect(curl).to_contain_text('"type": "put model"')
        shot(page, "elements-empty")
    finally:
        context.close()
        server.stop()
    assert not watch.problems(), "\n".join(watch.problems())


def test_an_elements_events_are_paged_in_the_url(
    page: Any, ui_server: LiveServer, generic: dict[str, int]
) -> None:
    states = [
        {
            "description": f"engine state: {i}",
            "type": "engine state",
            "elements": [{"description": "engine-2", "type": "engine", "tags": {"state": f"S{i}"}}],
        }
        for i in range(1, 23)
    ]
    answer = httpx.post(f"{ui_server.url}/lineage/1/events", json=states, timeout=30)
    assert answer.status_code == 200, answer.text
    engines = httpx.get(f"{ui_server.url}/lineage/1/elements", params={"type": "engine"}, timeout=30).json()
    engine = next(el["id"] for el in engines if el["description"] == "engine-2")

    page.goto(f"{ui_server.url}/elements/{engine}")
    expect(page.get_by_role("table", name="Current tags")).to_contain_text("S22")
    summaries = events_list(page).locator("summary .el-desc")
    expect(summaries).to_have_count(20)
    expect(summaries.first).to_have_text("engine state: 22")
    pages = page.get_by_role("navigation", name="Events pages")
    pages.get_by_role("link", name="Next →").click()
    page.wait_for_url(f"{ui_server.url}/elements/{engine}?offset=20")
    expect(summaries).to_have_count(2)
    expect(summaries.last).to_have_text("engine state: 1")
    page.reload()
    expect(summaries).to_have_count(2)
    page.go_back()
    page.wait_for_url(f"{ui_server.url}/elements/{engine}")
    expect(summaries).to_have_count(20)


def test_a_folded_elements_lineage_link_opens_its_graph(page: Any, ui_server: LiveServer) -> None:
    """The server's pipeline pass folded folded_events.py's generic events into the lineage graph:
    model fraud's page links to its lineage, a graph of elements joined by `event` edges."""
    elements = httpx.get(f"{ui_server.url}/lineage/1/elements", params={"limit": 1000}, timeout=30).json()
    ids = {el["description"]: el["id"] for el in elements}
    page.goto(f"{ui_server.url}/elements/{ids[FRAUD]}")
    lineage = page.get_by_role("link", name="Lineage", exact=True)
    expect(lineage).to_have_attribute("href", f"/lineage?node=element%3Amodel%3A{FRAUD}")
    lineage.click()

    page.wait_for_url(re.compile(r"/lineage\?node=element%3Amodel%3Afraud"))

    def node(kind: str, name: str) -> Any:
        return page.locator(f'.node[data-id="element:{kind}:{name}"]')

    for kind, name in (("model", FRAUD), ("engine", FOLDED_ENGINE), ("schema", FOLDED_SCHEMA)):
        expect(node(kind, name)).to_be_visible()
        expect(node(kind, name).locator("text.name")).to_have_text(name)
    expect(node("fastscore-service", FOLDED_MANAGER)).to_be_visible()
    # the event edges carry the event type: model → engine, model → schema and engine → schema by `load model`
    loads = page.locator("path.edge > title", has_text="load model (1 event)")
    expect(loads).to_have_count(3)
    expect(page.locator(".toolbar .title")).to_contain_text(FRAUD)
    shot(page, "element-lineage")

    node("engine", FOLDED_ENGINE).click()
    side = page.get_by_role("complementary", name="Selected node")
    expect(side).to_contain_text("element of type engine")
    side.get_by_role("link", name="Open", exact=True).click()
    page.wait_for_url(f"{ui_server.url}/elements/{ids[FOLDED_ENGINE]}")
    expect(page.get_by_role("table", name="Current tags")).to_contain_text("RUNNING")
    page.go_back()
    page.wait_for_url(re.compile(r"/lineage\?node=element%3Amodel%3Afraud"))
    expect(node("engine", FOLDED_ENGINE)).to_be_visible()
