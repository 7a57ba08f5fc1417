"""The continuous pipeline: a pass as soon as new events are stored, not after the interval; the
pipeline's own report waits for the interval (it would otherwise start a pass after every pass).
While events are being stored, passes are live: on a single-writer store their batches are sized
for short merges. A one-off `pipeline run` waits for a running continuous pipeline to publish
instead of starting Spark, and a one-off pass never stops the continuous pipeline."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from pyspark.sql import SparkSession

from headwater.demo.lineage import DemoShape, demo_events
from headwater.pipeline.runner import (
    LIVE_BATCH_FIRST,
    LIVE_BATCH_LEAST,
    LIVE_MERGE_SECONDS,
    PassResult,
    Pipeline,
    live_batch_size,
)
from headwater.store.base import EventStore
from headwater.store.model import PipelineBusy, pipeline_lock, read_state
from tests.pipeline.rows import CONDENSED_SQL
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
        assert not passes[0].live, "nothing was stored while it ran"
        reported = store.last_seq()
        assert reported > passes[0].checkpoint, "the pass reported itself as events"

        # the report alone starts no pass before the interval
        time.sleep(2.0)
        assert len(passes) == 1

        ingest(store, later)
        newest = store.last_seq()
        assert wait_for(lambda: bool(passes) and passes[-1].checkpoint >= newest)
        assert len(passes) == 2, "one pass, started by the new events, took them and the report"
        assert passes[1].live, "events were stored since the last pass"
    run_ids = {doc["run"]["runId"] for doc in later if "run" in doc}
    published = {row[0] for row in query(store, "SELECT run_id FROM runs")}
    assert run_ids <= published
    assert any(r[0] == "job:headwater:headwater.pipeline" for r in query(store, "SELECT node_id FROM jobs"))


def test_events_stored_during_a_pass_make_it_live_and_the_next_pass_takes_them(
    spark: SparkSession, store: EventStore
) -> None:
    docs = demo_events(DemoShape(jobs=10, runs_per_job=2))
    first, during = docs[: len(docs) // 2], docs[len(docs) // 2 :]
    ingest(store, first)
    stored_during: list[int] = []

    def progress(step: str) -> None:
        if step == "merge" and not stored_during:  # after the first batch's merge
            ingest(store, during)
            stored_during.append(store.last_seq())

    pipeline = Pipeline(spark, store, batch_events=len(first) // 2 + 1, partitions=2, dogfood=False)
    pipeline.progress = progress
    result = pipeline.run_once()
    assert result.live, "events were stored while the pass ran"
    assert result.batches == 2, "the pass ends at the newest event it saw when it started"
    assert result.checkpoint < stored_during[0]
    later = pipeline.run_once()
    assert later.live, "the events stored during the last pass came after it started"
    assert later.checkpoint == stored_during[0]
    run_ids = {doc["run"]["runId"] for doc in during if "run" in doc}
    assert run_ids <= {row[0] for row in query(store, "SELECT run_id FROM runs")}
    assert not pipeline.run_once().live, "nothing was stored since the last pass started"


def test_a_live_batch_holds_a_merge_about_a_second_within_bounds() -> None:
    assert live_batch_size(200_000, None) == LIVE_BATCH_FIRST
    assert live_batch_size(5_000, None) == 5_000
    per_event = LIVE_MERGE_SECONDS / 25_000  # merges took 40 µs an event
    assert live_batch_size(200_000, per_event) == 25_000
    assert live_batch_size(20_000, per_event) == 20_000
    assert live_batch_size(200_000, 1.0) == LIVE_BATCH_LEAST  # a slow merge: still progress
    assert live_batch_size(200_000, 0.0) == 200_000


def test_a_new_jobs_edges_are_published_before_its_ultimate_ends(
    spark: SparkSession, store: EventStore
) -> None:
    ingest(store, demo_events(DemoShape(jobs=10, runs_per_job=2)))
    # the graph on Spark (every read by the executors); a graph as small as this one is
    # otherwise computed in the driver and published whole (below)
    pipeline = Pipeline(spark, store, partitions=2, dogfood=False, read_here_rows=0)
    pipeline.run_once()
    _new_job(store, "new_job", 1)
    new_table = "dataset:fresh:new_job_out"
    seen: dict[str, list[tuple[Any, ...]]] = {}

    def progress(step: str) -> None:
        if step == "graph edges":  # the edges are committed; the ends are not computed yet
            seen["edges"] = [pair for pair in query(store, CONDENSED_SQL) if pair[1] == new_table]
            seen["ends"] = query(store, f"SELECT other_id FROM ultimate_nodes WHERE node_id = '{new_table}'")
            seen["state"] = query(store, "SELECT checkpoint, graph_checkpoint FROM pipeline_state")

    pipeline.progress = progress
    result = pipeline.run_once()
    assert result.graph
    assert seen["edges"] == [("dataset:fresh:source_table", new_table)], "the new job's edges were queryable"
    assert seen["ends"] == [], "before its ultimate source was known"
    [(checkpoint, graph_checkpoint)] = seen["state"]
    assert graph_checkpoint < checkpoint, "a crash there leaves the graph to be redone"
    ends = query(store, f"SELECT kind, other_id, distance FROM ultimate_nodes WHERE node_id = '{new_table}'")
    assert ("source", "dataset:fresh:source_table", 1) in ends
    assert query(store, "SELECT checkpoint - graph_checkpoint FROM pipeline_state") == [(0,)]

    # the published graph edited in the driver: the edges and the ends in one transaction, with
    # the checkpoint
    small = Pipeline(spark, store, partitions=2, dogfood=False)
    small.progress = progress
    _new_job(store, "newer_job", 2)
    new_table = "dataset:fresh:newer_job_out"
    assert small.run_once().graph
    assert seen["edges"] == [("dataset:fresh:source_table", new_table)]
    assert seen["ends"] and seen["state"] == [(checkpoint + 1,) * 2]


def _stderr_until(process: subprocess.Popen[bytes], text: str, seconds: float) -> str:
    """What `process` writes to stderr until it holds `text` (or by the deadline, or its end),
    read unbuffered so that nothing waits in a buffer select cannot see."""
    assert process.stderr is not None
    fd = process.stderr.fileno()
    seen = b""
    deadline = time.monotonic() + seconds
    while text.encode() not in seen and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.2)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            seen += chunk
    return seen.decode()


def test_a_one_off_run_waits_for_the_continuous_pipeline_whose_passes_wait_for_a_one_off(
    spark: SparkSession, store: EventStore
) -> None:
    ingest(store, demo_events(DemoShape(jobs=10, runs_per_job=2)))
    passes: list[PassResult] = []
    pipeline = Pipeline(spark, store, partitions=2, dogfood=False)
    with continuous(pipeline, passes):
        assert wait_for(lambda: len(passes) == 1)
        with pytest.raises(PipelineBusy, match="continuous Headwater pipeline is running"):
            Pipeline(spark, store, dogfood=False).continuous(1.0)

        one_off = [sys.executable, "-m", "headwater", "pipeline", "run", "-q", "--database-url", store.url]
        # The continuous pipeline's passes wait while the test holds the lock, so the new event
        # is still unpublished when the one-off starts, however fast either is.
        with pipeline_lock(store):
            _new_job(store, "while_up", 1)
            newest = store.last_seq()
            process = subprocess.Popen(one_off, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            first = _stderr_until(process, "waiting for it to publish", 120)
        out, rest = process.communicate(timeout=240)
        errors = first + rest.decode()
        assert process.returncode == 0, errors
        assert f"waiting for it to publish up to seq {newest}" in first, errors
        assert "published by the pipeline running on this store" in out.decode()
        assert "starting Spark" not in errors, "it started no Spark of its own"
        assert read_state(store)[0] >= newest

        # a one-off pass holds the lock (as one started before the continuous pipeline would):
        # the continuous pipeline's passes wait for it, and it carries on after
        with pipeline_lock(store):
            _new_job(store, "during_a_one_off", 2)
            time.sleep(1.0)  # passes are tried meanwhile
            assert read_state(store)[0] < store.last_seq()
        newest = store.last_seq()
        assert wait_for(lambda: read_state(store)[0] >= newest), "the continuous pipeline carried on"
    jobs = {row[0] for row in query(store, "SELECT node_id FROM jobs")}
    assert {"job:fresh:while_up", "job:fresh:during_a_one_off"} <= jobs


def _new_job(store: EventStore, name: str, n: int) -> None:
    """A new job reading fresh.source_table and writing fresh.<name>_out, in one COMPLETE."""
    ingest(
        store,
        [
            {
                "eventType": "COMPLETE",
                "eventTime": f"2026-11-25T10:0{n}:00Z",
                "run": {"runId": f"0193a1b2-0000-7000-8000-00000000000{n}"},
                "job": {"namespace": "fresh", "name": name},
                "inputs": [{"namespace": "fresh", "name": "source_table"}],
                "outputs": [{"namespace": "fresh", "name": f"{name}_out"}],
                "producer": "https://example.com/producer",
                "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            }
        ],
    )
