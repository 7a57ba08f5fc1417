"""End to end: events in the store → `Pipeline` → the published model, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import orjson
import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from headwater.demo.lineage import DemoShape, demo_events
from headwater.events.validate import validate_event
from headwater.pipeline import publish, runner
from headwater.pipeline.runner import Pipeline
from headwater.store.base import EventStore
from headwater.store.model import read_state
from headwater.store.model.compare import model_rows
from tests.conftest import SPEC_DIR
from tests.factories import facet, run_event
from tests.pipeline import fastscore
from tests.pipeline.oracle import expected_model
from tests.pipeline.rows import CONDENSED_SQL
from tests.pipeline.spark_cluster import standalone_cluster

SPEC_EXAMPLE = SPEC_DIR / "tests" / "example_full_event.json"


def ingest(store: EventStore, docs: Iterable[dict[str, Any]]) -> int:
    events = [validate_event(doc, orjson.dumps(doc)) for doc in docs]
    stored = 0
    for start in range(0, len(events), 500):
        stored += sum(store.append(events[start : start + 500], "2026-11-22T00:00:00.0000000Z"))
    return stored


def query(store: EventStore, sql: str) -> list[tuple[Any, ...]]:
    with store.transaction() as cur:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()]


@pytest.fixture(scope="module")
def demo() -> list[dict[str, Any]]:
    docs = demo_events(DemoShape(jobs=20, runs_per_job=2))
    if SPEC_EXAMPLE.exists():
        docs.append(json.loads(SPEC_EXAMPLE.read_text()))
    return docs


def test_model_matches_the_events(spark: SparkSession, store: EventStore, demo: list[dict[str, Any]]) -> None:
    ingest(store, demo)
    Pipeline(spark, store, dogfood=False, partitions=3).run_once()
    exp = expected_model(store)

    assert {r[0] for r in query(store, "SELECT name FROM namespaces")} == exp.namespaces
    assert {r[0] for r in query(store, "SELECT node_id FROM datasets")} == exp.datasets
    assert {r[0] for r in query(store, "SELECT node_id FROM jobs")} == exp.jobs
    runs = {
        r[0]: {"state": r[1], "started_at": r[2], "ended_at": r[3], "job_node_id": r[4], "event_count": r[5]}
        for r in query(
            store, "SELECT run_id, state, started_at, ended_at, job_node_id, event_count FROM runs"
        )
    }
    assert runs == exp.runs
    assert set(query(store, "SELECT run_id, direction, node_id FROM run_io")) == exp.run_io
    assert set(query(store, "SELECT parent_node_id, child_node_id FROM job_parents")) == exp.job_parents
    assert exp.job_parents, "the demo lineage has parent runs"

    # symlinks: one canonical dataset per component, and the graph uses only canonical ids
    assert set(query(store, "SELECT node_id, alias_node_id FROM dataset_symlinks")) == exp.symlink_pairs
    assert dict(query(store, "SELECT node_id, canonical_id FROM dataset_aliases")) == exp.canonical
    assert exp.canonical, "the demo lineage has symlinks"
    non_canonical = {n for n, c in exp.canonical.items() if n != c}
    edge_nodes = {n for row in query(store, "SELECT src_id, dst_id FROM lineage_edges") for n in row}
    assert not edge_nodes & non_canonical

    # current facets: the latest assertion per (dataset, facet), gone when `_deleted`
    current = {
        (r[0], r[1]): (None if r[2] else r[1])
        for r in query(
            store, "SELECT node_id, name, deleted FROM dataset_facet_history WHERE valid_to IS NULL"
        )
    }
    assert current == exp.current_facets
    assert any(v is None for v in exp.current_facets.values()), "the demo lineage deletes a facet"

    # versions: far fewer dataset versions than writes (no version per run)
    writes = len([1 for r in exp.run_io if r[1] == "output"])
    versions = query(store, "SELECT COUNT(*) FROM dataset_versions")[0][0]
    assert 0 < versions < writes
    # every run links to its job's version, every job version is used by a run
    assert query(store, "SELECT COUNT(*) FROM runs WHERE job_version IS NULL")[0][0] == 0
    assert (
        query(
            store,
            "SELECT COUNT(*) FROM job_versions v WHERE run_count <> "
            "(SELECT COUNT(*) FROM runs r WHERE r.job_version = v.version_id)",
        )[0][0]
        == 0
    )
    assert query(store, "SELECT COUNT(*) FROM column_lineage")[0][0] > 0
    assert query(store, "SELECT COUNT(*) FROM schema_fields WHERE path LIKE '%.%'")[0][0] > 0, "nested fields"

    # augmentation: a dataset without upstream is its own ultimate source; others have one upstream
    condensed = query(store, CONDENSED_SQL)
    assert condensed
    has_upstream = {d for _, d in condensed}
    sources = query(store, "SELECT node_id, other_id, distance FROM ultimate_nodes WHERE kind = 'source'")
    for node, other, distance in sources:
        assert other not in has_upstream
        assert (distance == 0) == (node == other)
    assert {n for n, _, _ in sources} >= {s for s, _ in condensed} - has_upstream
    assert read_state(store) == (query(store, "SELECT MAX(seq) FROM events")[0][0],) * 2


def test_incremental_runs_build_the_same_model_as_a_rebuild(
    spark: SparkSession, store: EventStore, demo: list[dict[str, Any]]
) -> None:
    # executors read every batch through the data source (read_here_rows=0); the rebuild's small
    # batches are read by the driver: both ways give one model
    pipeline = Pipeline(spark, store, dogfood=False, partitions=2, batch_events=150, read_here_rows=0)
    # arrival in three slices, the pipeline running in between (late events cross batches), with
    # generic events among them
    third = len(demo) // 3
    for n, part in enumerate((demo[:third], demo[third : 2 * third], demo[2 * third :])):
        ingest(store, part)
        fastscore.send(store, range(n, len(fastscore.HISTORY), 3))
        pipeline.run_once()
    incremental = model_rows(store)
    assert incremental["runs"] and incremental["lineage_edges"] and incremental["element_edges"]
    Pipeline(spark, store, dogfood=False, partitions=2, batch_events=150).rebuild()
    assert model_rows(store) == incremental


def test_a_batch_in_one_partition_builds_the_model_a_spread_batch_builds(
    spark: SparkSession, store: EventStore, demo: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a small batch stays in one partition and its lookups join without broadcasting; the same
    # events, each batch spread over partitions as large ones are, give the same model
    ingest(store, demo)
    fastscore.send(store, range(len(fastscore.HISTORY)))
    plans: list[str] = []
    stage_each = publish.each_partition

    def seen(frame: DataFrame, write: Callable[[Iterable[pa.RecordBatch]], None]) -> None:
        plans.append(frame._jdf.queryExecution().executedPlan().toString())
        stage_each(frame, write)

    monkeypatch.setattr(publish, "each_partition", seen)
    Pipeline(spark, store, dogfood=False, batch_events=150).rebuild()
    one_partition = model_rows(store)
    assert one_partition["runs"] and one_partition["element_edges"]
    assert plans and not any("BroadcastExchange" in plan for plan in plans)
    plans.clear()
    monkeypatch.setattr(runner, "_EVENTS_PER_PARTITION", 50)  # a batch of 150 is "large"
    monkeypatch.setattr(runner, "STAGE_CHANGES_FROM", 50)  # and stages the facet history's changes
    Pipeline(spark, store, dogfood=False, batch_events=150).rebuild()
    assert any("BroadcastExchange" in plan for plan in plans)
    assert model_rows(store) == one_partition


def _large_batches_of(monkeypatch: pytest.MonkeyPatch, events: int) -> list[tuple[int, int]]:
    """Batches of `events` or more count as large (spread over partitions, the facet history's
    changes staged); returns the list of the batches whose merge ran beside the next batch."""
    monkeypatch.setattr(runner, "_EVENTS_PER_PARTITION", events)
    monkeypatch.setattr(runner, "STAGE_CHANGES_FROM", events)
    overlapped: list[tuple[int, int]] = []
    merging = runner._Merging

    class Counted(merging):  # type: ignore[misc, valid-type]
        def __init__(self, low: int, high: int, *rest: Any) -> None:
            overlapped.append((low, high))
            super().__init__(low, high, *rest)

    monkeypatch.setattr(runner, "_Merging", Counted)
    return overlapped


def test_large_batches_merged_beside_the_next_one_build_the_model_of_one_batch(
    spark: SparkSession, store: EventStore, demo: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # on SQLite a large batch's merge runs while the next large batch is staged on Spark; its
    # rows reach the store once that merge is done
    ingest(store, demo)
    Pipeline(spark, store, dogfood=False, batch_events=len(demo) + 10).rebuild()
    whole = model_rows(store)
    overlapped = _large_batches_of(monkeypatch, 20)
    # batches of 30, the last of them smaller than 20 (in one partition: staged after the merge)
    assert store.last_seq() % 30 < 20
    result = Pipeline(spark, store, dogfood=False, batch_events=30).rebuild()
    assert model_rows(store) == whole
    assert result.batches == -(-store.last_seq() // 30)
    assert read_state(store) == (store.last_seq(),) * 2
    if "sqlite" in store.url:  # PostgreSQL's executors write to the staging tables themselves
        assert len(overlapped) >= 2
    else:
        assert not overlapped


def test_a_merge_that_fails_beside_the_next_batch_fails_the_pass_and_publishes_nothing_after_it(
    spark: SparkSession, store: EventStore, demo: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    if "sqlite" not in store.url:
        pytest.skip("merges run beside the next batch on SQLite only")
    ingest(store, demo)
    Pipeline(spark, store, dogfood=False, batch_events=len(demo) + 10).rebuild()
    whole = model_rows(store)
    overlapped = _large_batches_of(monkeypatch, 20)
    merge = runner.model.merge_facts
    calls: list[int] = []

    def second_fails(target: EventStore, low: int, high: int) -> bool:
        calls.append(low)
        if len(calls) == 2:
            raise OSError("disk full")
        return merge(target, low, high)

    monkeypatch.setattr(runner.model, "merge_facts", second_fails)
    pipeline = Pipeline(spark, store, dogfood=False, batch_events=30)
    with pytest.raises(OSError, match="disk full"):
        pipeline.rebuild()
    assert overlapped and read_state(store)[0] == 30  # the first batch only
    monkeypatch.setattr(runner.model, "merge_facts", merge)
    pipeline.run_once()  # the next pass goes on from the checkpoint
    assert model_rows(store) == whole


def _run_cli(database_url: str, *args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "HEADWATER_DATABASE_URL": database_url, "HEADWATER_LOG_LEVEL": "warning"}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "headwater",
            "pipeline",
            "run",
            "--master",
            "local[2]",
            "--no-dogfood",
            "-q",
            *args,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def test_rebuild_from_the_command_line_recomputes_the_model(
    store: EventStore, demo: list[dict[str, Any]]
) -> None:
    ingest(store, demo[:60])
    command = [sys.executable, "-m", "headwater", "pipeline", "rebuild", "--no-dogfood"]
    done = subprocess.run(
        [*command, "--database-url", store.url], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"1 batch(es), seq up to {store.last_seq()}, graph updated" in done.stdout
    run_ids = {doc["run"]["runId"] for doc in demo[:60] if "run" in doc}
    assert run_ids == {row[0] for row in query(store, "SELECT run_id FROM runs")}


def _kill_after_a_commit(store: EventStore, process: subprocess.Popen[bytes], wait: float) -> bool:
    """SIGKILL `process` `wait` seconds after its first committed batch moved the checkpoint, while
    it works on the next ones; True when the kill left events out of the model. Led by the
    pipeline's progress, not by the clock: a fast machine finishes a whole pass in any fixed delay."""
    start, _ = read_state(store)
    while process.poll() is None:
        if read_state(store)[0] > start:
            time.sleep(wait)
            if process.poll() is not None:
                return False
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return read_state(store)[0] < store.last_seq()
        time.sleep(0.02)
    return False


def test_sigkilled_runs_then_a_rerun_build_the_uninterrupted_model(
    spark: SparkSession, store: EventStore, demo: list[dict[str, Any]]
) -> None:
    rng = random.Random(3)
    kills = 0
    third = len(demo) // 3
    for part in (demo[:third], demo[third : 2 * third], demo[2 * third :]):
        ingest(store, part)
        process = _run_cli(store.url, "--batch-events", "15")
        kills += _kill_after_a_commit(store, process, rng.uniform(0.0, 0.25))
        process.wait()
    assert kills >= 2, "the runs ended before they could be killed mid-pass"
    finished = _run_cli(store.url, "--batch-events", "15")
    output, _ = finished.communicate(timeout=600)
    assert finished.returncode == 0, output.decode()[-3000:]
    after_kills = model_rows(store)
    Pipeline(spark, store, dogfood=False).rebuild()
    assert model_rows(store) == after_kills


def test_a_nul_in_names_and_facets_is_published_as_the_replacement_character(
    spark: SparkSession, store: EventStore
) -> None:
    # JSON allows U+0000; PostgreSQL's text does not: such an event used to fail every later pass
    schema = facet("SchemaDatasetFacet", "1-1-1", fields=[{"name": "c\x00l", "type": "INT"}])
    sql = facet("SQLJobFacet", query="SELECT '\x00'")
    doc = run_event(
        event_type="COMPLETE",
        job="load\x00orders",
        inputs=[{"namespace": "db", "name": "in\x00put", "facets": {"schema": schema}}],
        outputs=[{"namespace": "db", "name": "out"}],
    )
    doc["job"]["facets"]["sql"] = sql
    ingest(store, [doc])
    Pipeline(spark, store, dogfood=False).run_once()
    assert read_state(store)[0] == store.last_seq()
    assert ("job:airflow:load\ufffdorders",) in query(store, "SELECT node_id FROM jobs")
    assert ("dataset:db:in\ufffdput",) in query(store, "SELECT node_id FROM datasets")
    edges = query(store, "SELECT src_id, dst_id FROM lineage_edges")
    assert ("dataset:db:in\ufffdput", "job:airflow:load\ufffdorders") in edges


def test_identities_beyond_the_limits_never_stop_a_pass(spark: SparkSession, store: EventStore) -> None:
    # Incompressible 3,000-byte identities in facets: each one failed every PostgreSQL pass (an
    # index row of the model holds 2,704 bytes); the facets are untrusted and left out now.
    rng = random.Random(7)
    huge = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(3000))
    schema = facet("SchemaDatasetFacet", "1-1-1", fields=[{"name": huge, "type": "int"}])
    symlinks = facet(
        "SymlinksDatasetFacet", "1-0-1", identifiers=[{"namespace": "n", "name": huge, "type": "T"}]
    )
    lineage = facet(
        "ColumnLineageDatasetFacet",
        "1-2-0",
        fields={"a": {"inputFields": [{"namespace": "n", "name": "t", "field": huge}]}},
    )
    doc = run_event(
        event_type="COMPLETE",
        parent=str(uuid.uuid4()),
        outputs=[
            {
                "namespace": "db",
                "name": "out",
                "facets": {"schema": schema, "symlinks": symlinks, "columnLineage": lineage},
            }
        ],
    )
    doc["run"]["facets"]["parent"]["job"]["name"] = huge
    doc["job"]["facets"][huge] = facet("DocumentationJobFacet", description="d")
    ingest(store, [doc])
    Pipeline(spark, store, dogfood=False).run_once()
    assert read_state(store)[0] == store.last_seq()
    assert ("dataset:db:out",) in query(store, "SELECT node_id FROM datasets")
    assert query(store, "SELECT COUNT(*) FROM job_parents") == [(0,)]


def test_untrusted_facets_whose_names_are_not_identifiers_are_left_out(
    spark: SparkSession, store: EventStore
) -> None:
    # their paths are quoted (`run.facets["spark.logicalPlan"]`): the pipeline used to look for
    # `run.facets.spark.logicalPlan`, find nothing, and take the broken facet in
    broken = {"_schemaURL": "https://example.com/custom#/F"}  # no _producer: untrusted
    fine = facet("DocumentationJobFacet", description="kept")
    doc = run_event(event_type="COMPLETE")
    doc["run"]["facets"].update(
        {"spark.logicalPlan": broken, "façade": broken, "plain": broken, "ok-run": fine}
    )
    doc["job"]["facets"].update({"my-facet": broken, "ok.job": fine})
    ingest(store, [doc])
    Pipeline(spark, store, dogfood=False).run_once()
    assert {r[0] for r in query(store, "SELECT name FROM run_facets")} == {"ok-run"}
    assert {r[0] for r in query(store, "SELECT name FROM job_facets")} == {"ok.job"}


def test_the_pipeline_reports_itself(
    spark: SparkSession, store: EventStore, demo: list[dict[str, Any]]
) -> None:
    ingest(store, demo[:40])
    pipeline = Pipeline(spark, store, partitions=2)
    pipeline.run_once()
    own = query(store, "SELECT event_type FROM events WHERE job_name = 'headwater.pipeline' ORDER BY seq")
    assert own == [("START",), ("COMPLETE",)]
    pipeline.run_once()  # publishes the report; its own report of that pass is not needed
    assert len(query(store, "SELECT 1 FROM events WHERE job_name = 'headwater.pipeline'")) == 2
    edges = query(
        store, "SELECT src_id, dst_id FROM lineage_edges WHERE job_id = 'job:headwater:headwater.pipeline'"
    )
    assert any(src.endswith(":events") for src, _ in edges)
    assert any(dst.endswith(":lineage_edges") for _, dst in edges)
    runs = query(store, "SELECT state FROM runs WHERE job_node_id = 'job:headwater:headwater.pipeline'")
    assert runs == [("COMPLETED",)]


# One backend: the cluster's own path is the executors' (separate JVMs and Python workers); the
# SQLite one is the stricter (executors write staging files the driver collects).
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_standalone_cluster_builds_the_same_model_as_local_mode(
    spark: SparkSession, store: EventStore, demo: list[dict[str, Any]]
) -> None:
    ingest(store, demo)
    with standalone_cluster(workers=2, cores=1) as master:
        process = _run_cli(store.url, "--master", master)
        output, _ = process.communicate(timeout=900)
    assert process.returncode == 0, output.decode()[-3000:]
    on_cluster = model_rows(store)
    assert on_cluster["runs"] and on_cluster["lineage_edges"]
    Pipeline(spark, store, dogfood=False).rebuild()
    assert model_rows(store) == on_cluster
