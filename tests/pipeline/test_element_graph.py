"""Generic events folded into the lineage graph by the Spark pipeline, on both backends: element
nodes and `event` edges in event order, labelled by event type; the warehouse walks and the
vertical view of an element; incremental passes, a rebuild and another arrival order all give the
same tables; migration 0009 folds what a store had published before it."""

from __future__ import annotations

import dataclasses
import random
import string
from typing import Any

import orjson
from pyspark.sql import SparkSession

from headwater.errors import InvalidEvent
from headwater.events.generic import GenericElement, validate_generic_event
from headwater.events.validate import validate_event
from headwater.pipeline.runner import Pipeline
from headwater.query.lineage import LineageQuery, lineage
from headwater.query.vertical import vertical
from headwater.store import EventStore, open_store
from headwater.store.generic import generic_store
from headwater.store.model.compare import model_rows
from tests.pipeline import fastscore as fs


def _ol(store: EventStore) -> None:
    doc = fs.CUSTOMERS_RUN
    store.append([validate_event(doc, orjson.dumps(doc))], "2024-05-01T00:00:30.0000000Z")


def test_the_history_becomes_nodes_and_event_edges(spark: SparkSession, store: EventStore) -> None:
    _ol(store)
    fs.send(store)
    Pipeline(spark, store, dogfood=False, partitions=2).run_once()

    nodes, edges = fs.folded(store)
    assert (nodes, edges) == fs.expected(fs.HISTORY, fs.RECEIVED)
    # worked out by hand from the drawing in fastscore.py
    assert {n[0] for n in nodes} == {
        fs.CHURN, fs.MANAGER, fs.SCHEMA, fs.ENGINE1, fs.ENGINE2, fs.CUSTOMERS, fs.CLICKS, fs.SCRATCH
    }  # fmt: skip
    churn = next(n for n in nodes if n[0] == fs.CHURN)
    assert churn[1:] == ("model", "churn", fs.RECEIVED[0], fs.RECEIVED[8], 5)
    assert {(e[0], e[1], e[2], e[5]) for e in edges} == {
        (fs.CHURN, fs.MANAGER, "put model", 1),
        (fs.SCHEMA, fs.MANAGER, "put schema", 1),
        (fs.CHURN, fs.SCHEMA, "attach schema", 1),
        (fs.CHURN, fs.ENGINE1, "load model", 1),
        (fs.CHURN, fs.SCHEMA, "load model", 1),
        (fs.ENGINE1, fs.SCHEMA, "load model", 1),
        (fs.CHURN, fs.ENGINE2, "load model", 1),
        (fs.CHURN, fs.CUSTOMERS, "score", 1),
        (fs.CHURN, fs.CLICKS, "score", 1),
        (fs.CHURN, fs.SCRATCH, "score", 1),
        (fs.CUSTOMERS, fs.CLICKS, "score", 1),
        (fs.CUSTOMERS, fs.SCRATCH, "score", 1),
        (fs.CLICKS, fs.SCRATCH, "score", 1),
    }

    # "which engines ran model churn?": its `load model` edges downstream, one step
    ran = lineage(store, LineageQuery(fs.CHURN, "downstream", depth=1, events=True))
    loaded = {e.dst for e in ran.edges if e.kind == "event" and e.label == "load model" and e.src == fs.CHURN}
    assert loaded == {fs.ENGINE1, fs.ENGINE2, fs.SCHEMA}  # the schema was loaded along
    assert {n for n in loaded if ran.nodes[n].properties["type"] == "engine"} == {fs.ENGINE1, fs.ENGINE2}
    # "which models did engine-1 run?": upstream
    models = lineage(store, LineageQuery(fs.ENGINE1, "upstream", depth=1, events=True))
    assert set(models.nodes) == {fs.ENGINE1, fs.CHURN}
    # an OpenLineage dataset a generic event named is that dataset: its writer and the model
    customers = lineage(store, LineageQuery(fs.CUSTOMERS, "upstream", depth=1, events=True))
    assert set(customers.nodes) == {fs.CUSTOMERS, "job:crm:export_customers", fs.CHURN}
    assert customers.nodes[fs.CUSTOMERS].kind == "dataset"

    # "what happened to model churn?": its vertical view, read from the browse tables
    view = vertical(store, fs.CHURN, as_of=None, limit=100)
    tags = {v.name for v in view.nodes.values() if v.kind == "elementTag"}
    assert tags == {"model-hash=9c21", "model-type=Python3"}  # the latest value of each key
    events = [v for v in view.nodes.values() if v.kind == "event"]
    assert [e.name for e in events] == [  # newest first
        "score: churn",
        "load model: churn",
        "load model: churn",
        "attach schema: churn-input",
        "put model: churn",
    ]
    assert {(e.src, e.kind) for e in view.edges} == {(fs.CHURN, "tagged"), (fs.CHURN, "in-event")}


def test_incremental_passes_a_rebuild_and_another_arrival_order_agree(
    spark: SparkSession, store: EventStore, tmp_path: object
) -> None:
    pipeline = Pipeline(spark, store, dogfood=False, partitions=2, batch_events=5)
    _ol(store)
    order = [4, 0, 8, 2, 6, 1, 3, 7, 5]  # each event keeps its own receive time
    for part in (order[:3], order[3:6], order[6:]):
        fs.send(store, part)
        pipeline.run_once()
    incremental = model_rows(store)
    assert incremental["element_edges"] and incremental["element_nodes"]
    assert fs.folded(store) == fs.expected(fs.HISTORY, fs.RECEIVED)
    pipeline.rebuild()
    assert model_rows(store) == incremental

    other = open_store(f"sqlite:///{tmp_path}/other.db")  # the history as listed, in one pass
    try:
        _ol(other)
        fs.send(other)
        Pipeline(spark, other, dogfood=False, partitions=2).run_once()
        assert fs.folded(other) == fs.folded(store)
    finally:
        other.close()


def test_a_generic_payload_is_never_read_as_openlineage(spark: SparkSession, store: EventStore) -> None:
    # a generic event may carry keys of its own: one named like an OpenLineage job is no job
    sneaky = {
        "description": "deploy",
        "type": "deploy",
        "elements": [{"type": "model", "description": "churn"}],
        "job": {"namespace": "x", "name": "not-a-job"},
        "outputs": [{"namespace": "x", "name": "not-a-dataset"}],
    }
    generic_store(store).append_generic([validate_generic_event(sneaky)], fs.RECEIVED[0])
    Pipeline(spark, store, dogfood=False).run_once()
    model = model_rows(store)
    assert model["jobs"] == [] and model["datasets"] == []
    assert [row[0] for row in model["element_nodes"]] == [fs.CHURN]


def test_elements_stored_before_the_description_limit_are_left_out_and_the_pass_goes_on(
    spark: SparkSession, store: EventStore
) -> None:
    """Two 2,000-byte element names (accepted before descriptions had a limit) made an edge key
    that PostgreSQL's index refused: every pass failed. They are left out; the event's other
    elements are folded, and their edge."""
    rng = random.Random(3)
    long_names = ["".join(rng.choice(string.ascii_letters) for _ in range(2_000)) for _ in range(2)]
    doc: dict[str, Any] = {
        "description": "score: churn",
        "type": "score",
        "elements": [
            {"type": "model", "description": "churn"},
            *({"type": "stream", "description": name} for name in long_names),
            {"type": "engine", "description": "engine-1"},
        ],
    }
    assert any("longer than 600 bytes" in e for e in _errors_of(doc))  # refused at ingest now
    short = validate_generic_event({**doc, "elements": [doc["elements"][0]]})
    stored = dataclasses.replace(
        short,
        elements=tuple(GenericElement(e["type"], e["description"]) for e in doc["elements"]),
        payload=orjson.dumps(doc).decode(),
    )
    generic_store(store).append_generic([stored], fs.RECEIVED[0])
    Pipeline(spark, store, dogfood=False).run_once()
    nodes, edges = fs.folded(store)
    assert (nodes, edges) == fs.expected([doc], fs.RECEIVED[:1])
    assert {e[:3] for e in edges} == {(fs.CHURN, fs.ENGINE1, "score")}

    # a store upgraded across migration 9 with such an event folds it the same way (the migration
    # failed on PostgreSQL's index)
    with store.transaction() as cur:
        cur.execute("DROP TABLE element_nodes")
        cur.execute("DROP TABLE element_edges")
        cur.execute("DELETE FROM schema_migrations WHERE version = 9")
    assert store.migrate() == [9]
    assert fs.folded(store) == (nodes, edges)


def _errors_of(doc: dict[str, Any]) -> list[str]:
    try:
        validate_generic_event(doc)
    except InvalidEvent as error:
        return error.errors
    return []


def test_migration_9_folds_what_the_pipeline_had_published(spark: SparkSession, store: EventStore) -> None:
    _ol(store)
    fs.send(store, range(6))
    pipeline = Pipeline(spark, store, dogfood=False, partitions=2)
    pipeline.run_once()
    published = fs.folded(store)
    # a store from before migration 9: the pipeline's checkpoint went past these events; then
    # three more arrive
    with store.transaction() as cur:
        cur.execute("DROP TABLE element_nodes")
        cur.execute("DROP TABLE element_edges")
        cur.execute("DELETE FROM schema_migrations WHERE version = 9")
    fs.send(store, range(6, 9))
    assert store.migrate() == [9]
    assert fs.folded(store) == published  # only what the checkpoint covers

    pipeline.run_once()  # carries on from its checkpoint
    assert fs.folded(store) == fs.expected(fs.HISTORY, fs.RECEIVED)
    upgraded = model_rows(store)
    pipeline.rebuild()
    assert model_rows(store) == upgraded
