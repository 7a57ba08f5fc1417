"""Small batches run on plans built once a session (`headwater.pipeline.replan`), on SQLite and
PostgreSQL: the model they publish, how often their frames are built, and what a failed pass
leaves behind."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from headwater.demo.lineage import DemoShape, demo_events
from headwater.pipeline import publish, replan
from headwater.pipeline.runner import PassResult, Pipeline
from headwater.store.base import EventStore
from headwater.store.model.compare import model_rows
from tests.pipeline import fastscore
from tests.pipeline.test_pipeline import ingest


def _cache_empty(spark: SparkSession) -> bool:
    return bool(spark._jsparkSession.sharedState().cacheManager().isEmpty())


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[replan.Shape]:
    """The shape of each batch whose frames were built on the plans' leaves."""
    seen: list[replan.Shape] = []
    build = replan.BatchPlans._build

    def counted(plans: replan.BatchPlans, shape: replan.Shape, *leaves: Any) -> Any:
        seen.append(shape)
        return build(plans, shape, *leaves)

    monkeypatch.setattr(replan.BatchPlans, "_build", counted)
    return seen


def test_small_passes_build_each_shape_once_and_publish_the_model_of_a_rebuild(
    spark: SparkSession, store: EventStore, builds: list[replan.Shape]
) -> None:
    demo = demo_events(DemoShape(jobs=12, runs_per_job=3))
    pipeline = Pipeline(spark, store, dogfood=False, batch_events=40)
    batches, generic = 0, iter(range(len(fastscore.HISTORY)))
    # arrival in slices, the pipeline running after each: runs continue across passes (their
    # earlier events are read back), generic events arrive in some slices only
    for n, start in enumerate(range(0, len(demo), 12)):
        ingest(store, demo[start : start + 12])
        if n % 3 == 1:
            fastscore.send(store, [i for _, i in zip(range(3), generic, strict=False)])
        batches += pipeline.run_once().batches
        assert _cache_empty(spark), "a pass left frames cached"
    incremental = model_rows(store)
    assert incremental["runs"] and incremental["element_edges"] and incremental["column_lineage"]
    # each shape (generic events or not, earlier events of the runs or not) built once
    assert len(set(builds)) == len(builds) >= 3
    assert batches > 2 * len(builds)
    # executors reading every batch through the data source: the frames built for each batch
    Pipeline(spark, store, dogfood=False, partitions=2, read_here_rows=0).rebuild()
    assert model_rows(store) == incremental


def test_a_pass_that_fails_while_staging_leaves_nothing_cached_and_the_next_one_publishes(
    spark: SparkSession, store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = demo_events(DemoShape(jobs=10, runs_per_job=2))
    pipeline = Pipeline(spark, store, dogfood=False)
    ingest(store, demo[: len(demo) // 2])
    pipeline.run_once()  # builds the plans
    ingest(store, demo[len(demo) // 2 :])
    stage_each = publish.each_partition

    def broken(frame: DataFrame, write: Callable[[Iterable[pa.RecordBatch]], None]) -> None:
        raise RuntimeError("the staging job failed")

    monkeypatch.setattr(publish, "each_partition", broken)
    with pytest.raises(RuntimeError, match="staging job failed"):
        pipeline.run_once()
    assert _cache_empty(spark)
    monkeypatch.setattr(publish, "each_partition", stage_each)
    pipeline.run_once()
    published = model_rows(store)
    Pipeline(spark, store, dogfood=False, read_here_rows=0).rebuild()
    assert model_rows(store) == published


def test_a_continuous_pipeline_runs_a_shapes_first_small_batch_on_its_plans(
    spark: SparkSession, store: EventStore, builds: list[replan.Shape]
) -> None:
    """A one-off pass builds a small batch's frames the usual way the first time its shape
    comes; a continuous pipeline, whose passes follow, builds the plans at once."""
    demo = demo_events(DemoShape(jobs=10, runs_per_job=2))
    third = len(demo) // 3
    ingest(store, demo[:third])
    assert Pipeline(spark, store, dogfood=False).run_once().batches == 1
    assert builds == []  # a one-off pass: no plans for a shape seen once
    ingest(store, demo[third:])
    stop = threading.Event()
    passes: list[PassResult] = []

    def on_pass(result: PassResult) -> None:
        passes.append(result)
        stop.set()

    continuous = Pipeline(spark, store, dogfood=False)
    worker = threading.Thread(target=continuous.continuous, args=(60.0, stop, on_pass), kwargs={"poll": 0.05})
    worker.start()
    worker.join(timeout=300)
    stop.set()  # a pipeline still running (the assertion below fails) ends its pass and stops
    assert not worker.is_alive() and passes and passes[0].batches == 1
    assert len(builds) == 1  # its first batch ran on the plans of its shape
    assert _cache_empty(spark)
    published = model_rows(store)
    Pipeline(spark, store, dogfood=False, read_here_rows=0).rebuild()
    assert model_rows(store) == published
