"""The model's write interface (store/model) without Spark, on both backends: rows staged as
executors stage them (Arrow batches of tagged rows, several writers), merged with the checkpoint
in one transaction by each table's rule; leftovers of a crash never reach the model; the graph
replaced whole; one pipeline per store, and a wait for the one that runs."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any

import pyarrow as pa
import pytest

from headwater.store.base import EventStore
from headwater.store.model import (
    TAGGED,
    PipelineBusy,
    continuous_lock,
    merge_facts,
    pipeline_lock,
    pipeline_running,
    prepare_staging,
    published_by_other,
    read_state,
    replace_graph_rows,
    reset_model,
    staging_target,
    waiting,
)
from headwater.store.model.merge import LARGE_BATCH

DAY = "2026-01-0{}T00:00:00.0000000Z"


def _batch(*rows: tuple[str, tuple[Any, ...]]) -> pa.RecordBatch:
    """Tagged rows as `pipeline.publish` hands them over: values as Spark casts them, text or null,
    a column each, NULL past the table's last column."""
    width = len(TAGGED.names) - 1
    texts = [[None if v is None else str(v) for v in row] + [None] * (width - len(row)) for _, row in rows]
    columns = [[table for table, _ in rows], *[list(column) for column in zip(*texts, strict=True)]]
    return pa.RecordBatch.from_arrays([pa.array(c, pa.string()) for c in columns], schema=TAGGED)


def _stage(store: EventStore, *partitions: list[tuple[str, tuple[Any, ...]]]) -> None:
    target = staging_target(store)
    for rows in partitions:  # each as one executor's task would
        target.write([_batch(*rows)])
    target.collect(store)


def _rows(store: EventStore, sql: str) -> list[tuple[Any, ...]]:
    with store.transaction() as cur:
        cur.execute(sql)
        return sorted(tuple(row) for row in cur.fetchall())


def test_staged_rows_merge_by_their_rules_with_the_checkpoint(store: EventStore) -> None:
    prepare_staging(store)
    _stage(
        store,
        [("namespaces", ("etl", DAY.format(2), DAY.format(3)))],
        [
            ("namespaces", ("dbt", DAY.format(1), DAY.format(1))),
            ("sources", ("pg", "postgres://a", DAY.format(1), DAY.format(1), DAY.format(1), 1)),
        ],
    )
    assert _rows(store, "SELECT name FROM namespaces") == []  # staged is not published
    assert merge_facts(store, 0, 10) is False
    assert read_state(store) == (10, 10)  # the graph had nothing to change: current with the model

    # a later batch: spans widen (least / greatest), the later (time, seq) value wins
    _stage(
        store,
        [
            ("namespaces", ("etl", DAY.format(1), DAY.format(2))),
            ("sources", ("pg", "postgres://b", DAY.format(2), DAY.format(2), DAY.format(2), 5)),
        ],
    )
    merge_facts(store, 10, 20)
    assert _rows(store, "SELECT name, created_at, updated_at FROM namespaces") == [
        ("dbt", DAY.format(1), DAY.format(1)),
        ("etl", DAY.format(1), DAY.format(3)),
    ]
    assert _rows(store, "SELECT name, uri, set_seq FROM sources") == [("pg", "postgres://b", 5)]
    assert read_state(store) == (20, 20)
    with store.transaction() as cur:  # the merge emptied staging
        cur.execute("SELECT COUNT(*) FROM stage_namespaces")
        assert cur.fetchone()[0] == 0


def test_a_batchs_new_rows_go_in_as_they_are_and_a_key_taken_after_all_merges_by_the_rule(
    store: EventStore, caplog: pytest.LogCaptureFixture
) -> None:
    # facet assertions are keyed by their event's seq, so a batch's are new and skip the conflict
    # clause; should a key be taken all the same, the table's rule merges them and none is lost
    assertion = ("dataset:ns:a", "schema", DAY.format(1), 3, "h1", 0)
    prepare_staging(store)
    job_assertion = ("job:ns:j", "sql", DAY.format(1), 3, "q", 0)
    _stage(store, [("dataset_facets", assertion), ("job_facets", job_assertion)])
    merge_facts(store, 0, 5)
    assert _rows(store, "SELECT node_id, seq, value_hash FROM dataset_facets") == [("dataset:ns:a", 3, "h1")]
    assert "key was taken" not in caplog.text

    later = ("dataset:ns:a", "schema", DAY.format(2), 7, "h2", 0)
    _stage(store, [("dataset_facets", assertion), ("dataset_facets", later)])  # one staged twice
    merge_facts(store, 5, 9)
    assert "dataset_facets: a staged row's key was taken" in caplog.text
    assert _rows(store, "SELECT node_id, seq, value_hash FROM dataset_facets") == [
        ("dataset:ns:a", 3, "h1"),
        ("dataset:ns:a", 7, "h2"),
    ]
    assert _rows(store, "SELECT node_id, seq FROM job_facets") == [("job:ns:j", 3)]
    assert read_state(store) == (9, 9)


def _staging_pages(store: EventStore) -> int:
    with store.transaction() as cur:
        cur.execute("SELECT pg_relation_size('stage_namespaces')")
        return int(cur.fetchone()[0])


def test_a_large_batch_leaves_no_dead_staging_rows_behind_on_postgresql(store: EventStore) -> None:
    # a DELETE leaves PostgreSQL a table's dead rows and pages, which later merges scanned; the
    # merge of a large batch gives them back, a small one's DELETE costs less than doing so
    if store.backend != "postgresql":
        pytest.skip("SQLite's DELETE of a whole table frees its pages")
    rows = [("namespaces", (f"ns{i}", DAY.format(1), DAY.format(1))) for i in range(2_000)]
    prepare_staging(store)
    _stage(store, rows)
    merge_facts(store, 0, 10)  # small: rows deleted, pages kept
    assert _staging_pages(store) > 0
    _stage(store, rows)
    merge_facts(store, 10, 10 + LARGE_BATCH)
    assert _staging_pages(store) == 0
    assert len(_rows(store, "SELECT name FROM namespaces")) == 2_000
    with store.transaction() as cur:  # nor does the writer compile its statements
        cur.execute("SHOW jit")
        assert cur.fetchone()[0] == "off"


def test_a_merge_changing_the_graphs_inputs_leaves_the_graph_behind(store: EventStore) -> None:
    prepare_staging(store)
    _stage(store, [("job_parents", ("job:ns:parent", "job:ns:child"))])
    assert merge_facts(store, 0, 7) is True
    assert read_state(store) == (7, 0)
    assert waiting(store) == 0  # no event above the checkpoint, but the graph is behind

    replace_graph_rows(store, {"dataset_depth": [("dataset:ns:a", 0), ("dataset:ns:b", 1)]}, 7)
    assert _rows(store, "SELECT node_id, depth FROM dataset_depth") == [
        ("dataset:ns:a", 0),
        ("dataset:ns:b", 1),
    ]
    assert read_state(store) == (7, 7)
    replace_graph_rows(store, {"dataset_depth": [("dataset:ns:c", 2)]}, 7)  # replaced whole
    assert _rows(store, "SELECT node_id, depth FROM dataset_depth") == [("dataset:ns:c", 2)]
    with pytest.raises(ValueError, match="not a graph table"):
        replace_graph_rows(store, {"runs": []}, 7)
    assert waiting(store) is None


def test_a_graph_input_inserted_as_new_rows_still_leaves_the_graph_behind(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the merge counts a table's inserted rows itself: after the new-rows insert, the cursor's
    # count is its savepoint's release, which would hide a changed parent link from the graph
    from headwater.store.model import merge

    tables = tuple(replace(t, new_rows=True) if t.name == "job_parents" else t for t in merge.FACT_TABLES)
    monkeypatch.setattr(merge, "FACT_TABLES", tables)
    prepare_staging(store)
    _stage(store, [("job_parents", ("job:ns:parent", "job:ns:child"))])
    assert merge_facts(store, 0, 7) is True
    assert read_state(store) == (7, 0)
    _stage(store, [("namespaces", ("ns", DAY.format(1), DAY.format(1)))])
    assert merge_facts(store, 7, 9) is False  # no graph input in the batch


def test_rows_staged_before_a_crash_never_reach_the_model(store: EventStore) -> None:
    prepare_staging(store)
    _stage(store, [("namespaces", ("lost", DAY.format(1), DAY.format(1)))])
    prepare_staging(store)  # the next run starts over
    _stage(store, [("namespaces", ("kept", DAY.format(1), DAY.format(1)))])
    merge_facts(store, 0, 3)
    assert _rows(store, "SELECT name FROM namespaces") == [("kept",)]


def test_a_merge_from_a_moved_checkpoint_is_refused_and_changes_nothing(store: EventStore) -> None:
    prepare_staging(store)
    _stage(store, [("namespaces", ("etl", DAY.format(1), DAY.format(1)))])
    merge_facts(store, 0, 5)
    _stage(store, [("namespaces", ("late", DAY.format(1), DAY.format(1)))])
    with pytest.raises(PipelineBusy, match="checkpoint moved from 3 to 5"):
        merge_facts(store, 3, 9)
    assert _rows(store, "SELECT name FROM namespaces") == [("etl",)]
    assert read_state(store) == (5, 5)

    reset_model(store)
    assert _rows(store, "SELECT name FROM namespaces") == []
    assert read_state(store) == (0, 0)


def test_one_pipeline_per_store(store: EventStore) -> None:
    with (
        pipeline_lock(store),
        pytest.raises(PipelineBusy, match="another Headwater pipeline"),
        pipeline_lock(store),
    ):
        pass
    with pipeline_lock(store):  # released
        pass


def test_a_running_pipeline_is_seen_without_holding_its_locks(store: EventStore) -> None:
    assert not pipeline_running(store)
    with pipeline_lock(store):  # a pass
        assert pipeline_running(store)
    with continuous_lock(store):  # a continuous pipeline, between its passes too
        assert pipeline_running(store)
        with pytest.raises(PipelineBusy, match="continuous Headwater pipeline"), continuous_lock(store):
            pass
        with pipeline_lock(store):  # its passes take the pass lock as well
            pass
    assert not pipeline_running(store)


def test_waiting_for_a_running_pipeline_ends_once_it_published_or_stopped(store: EventStore) -> None:
    held = threading.Event()
    release = threading.Event()

    def running_pipeline() -> None:
        with continuous_lock(store):
            held.set()
            release.wait(30)

    thread = threading.Thread(target=running_pipeline)
    thread.start()
    try:
        assert held.wait(30)
        threading.Timer(0.5, lambda: _publish(store, 0, 5)).start()
        started = time.monotonic()
        assert published_by_other(store, 5, poll=0.05), "it published up to the target meanwhile"
        assert time.monotonic() - started >= 0.4, "it waited for the publication"
        threading.Timer(0.5, release.set).start()
        assert not published_by_other(store, 9, poll=0.05), "it stopped short of seq 9"
    finally:
        release.set()
        thread.join(30)
    assert not published_by_other(store, 9), "no pipeline runs: no wait"
    assert published_by_other(store, 5)


def _publish(store: EventStore, low: int, high: int) -> None:
    prepare_staging(store)
    _stage(store, [("namespaces", ("etl", DAY.format(1), DAY.format(1)))])
    merge_facts(store, low, high)
