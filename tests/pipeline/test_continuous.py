"""The continuous pipeline: a pass as soon as new events are stored, not after the interval; the
pipeline's own report waits for the interval (it would otherwise start a pass after every pass)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

from headwater.demo.lineage import DemoShape, demo_events
from headwater.pipeline.runner import PassResult, Pipeline
from headwater.store.base import EventStore
from tests.pipeline.test_pipeline import ingest, query

LONG_INTERVAL = 3_600.0  # no pass in these tests is due to the interval, but the first


@contextmanager
def continuous(pipeline: Pipeline, passes: list[PassResult]) -> Iterator[None]:
    stop = threading.Event()
    thread = threading.Thread(
        target=pipeline.continuous, args=(LONG_INTERVAL, stop, passes.append), kwargs={"poll": 0.1}
    )
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=300)
    assert not thread.is_alive()


def wait_for(condition: Callable[[], bool], timeout: float = 240.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_new_events_start_a_pass_and_the_pipelines_own_report_does_not(
    spark: SparkSession, store: EventStore
) -> None:
    docs = demo_events(DemoShape(jobs=10, runs_per_job=2))
    first, later = docs[: len(docs) // 2], docs[len(docs) // 2 :]
    ingest(store, first)
    passes: list[PassResult] = []
    pipeline = Pipeline(spark, store, partitions=2)  # with its own report, as `headwater up` runs it
    with continuous(pipeline, passes):
        assert wait_for(lambda: len(passes) == 1), "the first pass starts at once"
        assert passes[0].batches == 1
        reported = store.last_seq()
        assert reported > passes[0].checkpoint, "the pass reported itself as events"

        # the report alone starts no pass before the interval
        time.sleep(2.0)
        assert len(passes) == 1

        ingest(store, later)
        newest = store.last_seq()
        assert wait_for(lambda: bool(passes) and passes[-1].checkpoint >= newest)
        assert len(passes) == 2, "one pass, started by the new events, took them and the report"
    run_ids = {doc["run"]["runId"] for doc in later if "run" in doc}
    published = {row[0] for row in query(store, "SELECT run_id FROM runs")}
    assert run_ids <= published
    assert any(r[0] == "job:headwater:headwater.pipeline" for r in query(store, "SELECT node_id FROM jobs"))
