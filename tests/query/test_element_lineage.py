"""Elements of generic events in the lineage queries, over the FastScore history of
tests/pipeline/fastscore.py folded by the real pipeline, on both backends: walks over `event`
edges (direction, depth, limit, as of a time), the vertical view of an element (tags and events,
now and as of a time), an OpenLineage dataset that generic events named, node search, and the
queries that do not take elements.

The edges, worked out from the history (each event links its elements in the order it lists
them; `load model` twice, from churn to two engines):

    churn ─put model─► model-manage-1 ◄─put schema─ churn-input
    churn ─attach schema, load model─► churn-input ◄─load model─ engine-1 ◄─load model─ churn
    churn ─load model─► engine-2
    churn ─score─► customers ─score─► raw.clicks ─score─► scratch   (and churn ─score─► each of them)
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from headwater.errors import BadRequest, NotFound
from headwater.pipeline.runner import Pipeline
from headwater.query.lineage import LineageQuery, LineageResult, lineage, ultimate
from headwater.query.vertical import find_nodes, vertical
from headwater.store import EventStore
from tests.pipeline import fastscore as fs
from tests.query.conftest import published

BETWEEN_3_AND_4 = "2024-05-01T00:03:30.0000000Z"  # after `attach schema`, before the first `load model`


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def folded(
    request: pytest.FixtureRequest, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EventStore]:
    """The OpenLineage run that writes customers, then the history, folded by a second pass."""
    with published(request, spark, tmp_path_factory, [fs.CUSTOMERS_RUN]) as store:
        fs.send(store)
        Pipeline(spark, store, dogfood=False, partitions=2).run_once()
        yield store


def walk(store: EventStore, node: str, direction: str = "both", **options: object) -> LineageResult:
    return lineage(store, LineageQuery(node, direction, events=True, **options))  # type: ignore[arg-type]


def event_edges(result: LineageResult) -> set[tuple[str, str, str | None]]:
    return {(e.src, e.dst, e.label) for e in result.edges if e.kind == "event"}


def test_an_element_walks_its_event_edges_up_and_down(folded: EventStore) -> None:
    result = walk(folded, fs.ENGINE1, depth=1)
    assert set(result.nodes) == {fs.ENGINE1, fs.CHURN, fs.SCHEMA, fs.MANAGER}
    assert event_edges(result) == {
        (fs.CHURN, fs.ENGINE1, "load model"),
        (fs.ENGINE1, fs.SCHEMA, "load model"),
        (fs.SCHEMA, fs.MANAGER, "put schema"),
    }
    engine = result.nodes[fs.ENGINE1]
    assert (engine.kind, engine.namespace, engine.name) == ("element", "engine", "engine-1")
    assert engine.properties["eventCount"] == 3 and isinstance(engine.properties["elementId"], int)
    # upstream only: what was loaded into engine-1; nothing it led to
    assert set(walk(folded, fs.ENGINE1, "upstream").nodes) == {fs.ENGINE1, fs.CHURN}


def test_depth_counts_two_event_steps_and_limit_cuts(folded: EventStore) -> None:
    none = walk(folded, fs.MANAGER, "upstream", depth=0)
    assert set(none.nodes) == {fs.MANAGER} and none.nodes[fs.MANAGER].expandable
    one = walk(folded, fs.MANAGER, "upstream", depth=1)  # engine-1 is two events away
    assert set(one.nodes) == {fs.MANAGER, fs.CHURN, fs.SCHEMA, fs.ENGINE1}
    assert one.nodes[fs.ENGINE1].expandable  # churn loaded it: a third step
    assert not one.nodes[fs.CHURN].expandable and not one.nodes[fs.SCHEMA].expandable
    cut = walk(folded, fs.CHURN, "downstream", limit=3)
    assert len(cut.nodes) == 3 and cut.truncated


def test_as_of_a_time_only_the_edges_events_had_made(folded: EventStore) -> None:
    then = walk(folded, fs.CHURN, "downstream", as_of=BETWEEN_3_AND_4)
    assert event_edges(then) == {
        (fs.CHURN, fs.MANAGER, "put model"),
        (fs.CHURN, fs.SCHEMA, "attach schema"),
        (fs.SCHEMA, fs.MANAGER, "put schema"),
    }
    with pytest.raises(NotFound, match="did not exist yet"):
        walk(folded, fs.ENGINE2, as_of=BETWEEN_3_AND_4)


def test_datasets_generic_events_named_are_the_openlineage_nodes(folded: EventStore) -> None:
    customers = walk(folded, fs.CUSTOMERS, depth=1)
    assert customers.nodes[fs.CUSTOMERS].kind == "dataset"  # the OpenLineage dataset itself
    assert "job:crm:export_customers" in customers.nodes and fs.CHURN in customers.nodes
    assert (fs.CUSTOMERS, fs.CLICKS, "score") in event_edges(customers)
    clicks = customers.nodes[fs.CLICKS]  # no OpenLineage event names it: known as an element
    assert (clicks.kind, clicks.properties["type"], clicks.name) == ("element", "dataset", "lake:raw.clicks")
    assert set(walk(folded, fs.CLICKS, "upstream", depth=1).nodes) >= {fs.CLICKS, fs.CHURN, fs.CUSTOMERS}
    assert fs.SCRATCH in walk(folded, fs.SCRATCH).nodes  # a `dataset` named without a namespace


def test_queries_without_elements_say_so(folded: EventStore) -> None:
    # Marquez' lineage graph (no `events`): a 400 naming the reason and where to ask
    with pytest.raises(BadRequest, match=r"generic events.*warehouse"):
        lineage(folded, LineageQuery(fs.CHURN))
    plain = lineage(folded, LineageQuery(fs.CUSTOMERS, depth=1))
    assert {n.kind for n in plain.nodes.values()} == {"dataset", "job"}
    with pytest.raises(NotFound):  # a dataset only generic events named is no OpenLineage dataset
        lineage(folded, LineageQuery(fs.CLICKS))
    with pytest.raises(BadRequest, match="no ultimate sources"):
        ultimate(folded, fs.CHURN, "source")
    with pytest.raises(BadRequest, match=r"element:\{type\}:\{description\}"):
        walk(folded, "element:model")
    with pytest.raises(NotFound):
        walk(folded, "element:model:unknown")


def test_vertical_view_of_an_element_now_and_as_of_a_time(folded: EventStore) -> None:
    now = vertical(folded, fs.ENGINE1, as_of=None, limit=100)
    tags = {v.properties["key"]: v.properties["value"] for v in now.nodes.values() if v.kind == "elementTag"}
    assert tags == {"state": "STOPPED", "replicas": "0"}
    events = [v for v in now.nodes.values() if v.kind == "event"]
    assert [e.name for e in events] == ["engine state: STOPPED", "engine state: RUNNING", "load model: churn"]
    assert [e.properties["timestamp"] for e in events] == [
        "2024-05-01T00:08:00Z",
        "2024-05-01T00:05:00Z",
        "2024-05-01T00:04:00Z",
    ]
    assert {(e.src, e.kind) for e in now.edges} == {(fs.ENGINE1, "tagged"), (fs.ENGINE1, "in-event")}

    then = vertical(folded, fs.CHURN, as_of=BETWEEN_3_AND_4, limit=100)
    shown = {v.name for v in then.nodes.values() if v.kind == "elementTag"}
    assert shown == {"model-hash=4b85", "model-type=Python3"}  # before the load's 9c21
    assert [v.name for v in then.nodes.values() if v.kind == "event"] == [
        "attach schema: churn-input",
        "put model: churn",
    ]
    small = vertical(folded, fs.CHURN, as_of=None, limit=3)
    assert len(small.nodes) == 3 and small.truncated


def test_vertical_view_of_datasets_generic_events_named(folded: EventStore) -> None:
    customers = vertical(folded, fs.CUSTOMERS, as_of=None, limit=100)
    assert "namespace:warehouse" in customers.nodes  # still the dataset's own view
    events = {v.name: v.properties["type"] for v in customers.nodes.values() if v.kind == "event"}
    # its generic events and the run events of the runs that wrote it: one history
    assert events["score: churn"] == "score"
    assert "COMPLETE" in {t for name, t in events.items() if name.startswith("run ")}
    clicks = vertical(folded, fs.CLICKS, as_of=None, limit=100)
    assert clicks.nodes[fs.CLICKS].kind == "element"
    assert [v.name for v in clicks.nodes.values() if v.kind == "event"] == ["score: churn"]


def test_node_search_finds_elements_once(folded: EventStore) -> None:
    engines, more = find_nodes(folded, "element", "ENGINE", 10)
    assert [n.id for n in engines] == [fs.ENGINE1, fs.ENGINE2] and not more
    everything, _ = find_nodes(folded, None, "customers", 100)
    assert {(n.id, n.kind) for n in everything} == {  # customers not again as an element
        (fs.CUSTOMERS, "dataset"),
        ("job:crm:export_customers", "job"),
    }
    clicks, _ = find_nodes(folded, "element", "raw.clicks", 10)
    assert [(n.id, n.kind) for n in clicks] == [(fs.CLICKS, "element")]
