"""One job wider than the model keeps ends for: its inputs times its outputs are never written
(one job of 3,000 of each kept 27 million graph rows), its datasets keep the marker past
ENDS_CAP, and the queries answer as before, by a walk; the later pass that edits the graph
carries the marker on downstream; a graph over the driver's budget is computed on Spark, with the
same tables. Both backends,
the real pipeline."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import SparkSession

from headwater.pipeline import runner
from headwater.pipeline.runner import Pipeline
from headwater.query.lineage import LineageQuery, lineage, ultimate
from headwater.store import EventStore, model
from headwater.store.graph import ENDS_CAP, PAST_CAP
from headwater.store.model.checkpoint import forget_graph
from headwater.store.model.compare import model_rows
from tests.factories import run_event
from tests.pipeline.test_pipeline import ingest, query

WIDTH = ENDS_CAP + 30


def _datasets(prefix: str, count: int) -> list[dict[str, Any]]:
    return [{"namespace": "db", "name": f"{prefix}{i:04}"} for i in range(count)]


def _ends(store: EventStore, node: str, kind: str) -> dict[str, int | None]:
    answer = ultimate(store, node, kind, limit=10 * WIDTH)  # type: ignore[arg-type]
    assert not answer.truncated
    return {n: x.distance for n, x in answer.nodes.items() if n != node}


def test_a_job_wider_than_the_ends_cap_is_kept_small_and_answered_in_full(
    spark: SparkSession, store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest(
        store,
        [
            run_event("00000000-0000-4000-8000-000000000001", event_type="COMPLETE", job="wide",
                      inputs=_datasets("in", WIDTH), outputs=_datasets("out", WIDTH)),
            run_event("00000000-0000-4000-8000-000000000002", event_type="COMPLETE", job="report",
                      inputs=_datasets("out", 1), outputs=[{"namespace": "db", "name": "report"}]),
        ],
    )  # fmt: skip
    pipeline = Pipeline(spark, store, dogfood=False)
    assert pipeline.run_once().graph_how == "driver"
    rows = query(store, "SELECT node_id, kind, other_id, distance FROM ultimate_nodes")
    assert len(rows) < 5 * WIDTH, "a row or two a dataset, not the inputs times the outputs"
    assert ("dataset:db:out0000", "source", PAST_CAP, -1) in rows
    assert ("dataset:db:in0000", "destination", PAST_CAP, -1) in rows
    assert ("dataset:db:report", "source", PAST_CAP, -1) in rows
    assert not query(store, "SELECT node_id FROM dataset_depth WHERE node_id = 'dataset:db:out0000'")

    inputs = {f"dataset:db:in{i:04}": 1 for i in range(WIDTH)}
    assert _ends(store, "dataset:db:out0000", "source") == inputs
    assert _ends(store, "dataset:db:report", "source") == {n: 2 for n in inputs}
    destinations = {f"dataset:db:out{i:04}": 1 for i in range(1, WIDTH)} | {"dataset:db:report": 2}
    assert _ends(store, "dataset:db:in0000", "destination") == destinations
    condensed = lineage(
        store, LineageQuery("dataset:db:in0007", "downstream", 1, 10 * WIDTH, include_processes=False)
    )
    assert {(e.src, e.dst) for e in condensed.edges} == {
        ("dataset:db:in0007", f"dataset:db:out{i:04}") for i in range(WIDTH)
    }

    # a later pass, with the graph edited in place: the marker goes on downstream
    ingest(
        store,
        [run_event("00000000-0000-4000-8000-000000000003", event_type="COMPLETE", job="final",
                   inputs=[{"namespace": "db", "name": "report"}],
                   outputs=[{"namespace": "db", "name": "final"}])],
    )  # fmt: skip
    assert pipeline.run_once().graph_how == "edited"
    assert ("dataset:db:final", "source", PAST_CAP, -1) in query(
        store,
        "SELECT node_id, kind, other_id, distance FROM ultimate_nodes WHERE node_id = 'dataset:db:final'",
    )
    assert _ends(store, "dataset:db:final", "source") == {n: 3 for n in inputs}
    assert _ends(store, "dataset:db:report", "destination") == {"dataset:db:final": 1}

    # the whole graph again, with too small a budget for the driver: Spark computes it, through
    # the jobs too (never the inputs times the outputs), and publishes the same tables
    published = model_rows(store)
    monkeypatch.setattr(runner, "GRAPH_HERE_ENDS", WIDTH)
    with store.transaction() as cur:
        forget_graph(store, cur)
    model.prepare_staging(store)
    with model.pipeline_lock(store):
        done = Pipeline(spark, store, dogfood=False).graph_stage(model.read_state(store)[0])
    assert done.graph_how == "spark"
    assert model_rows(store) == published
