"""The model's write interface (store/model) without Spark, on both backends: rows staged as
executors stage them (Arrow batches of tagged rows, several writers), merged with the checkpoint
in one transaction by each table's rule; leftovers of a crash never reach the model; the graph
replaced whole; one pipeline per store, and a wait for the one that runs."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from headwater.store.base import EventStore
from headwater.store.model import (
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
    waiting,
)
from headwater.store.model.merge import LARGE_BATCH
from tests.store.staged import DAY, model_rows, stage_by_hand


def test_staged_rows_merge_by_their_rules_with_the_checkpoint(store: EventStore) -> None:
    prepare_staging(store)
    stage_by_hand(
        store,
        [("namespaces", ("etl", DAY.format(2), DAY.format(3)))],
        [
            ("namespaces", ("dbt", DAY.format(1), DAY.format(1))),
            ("sources", ("pg", "postgres://a", DAY.format(1), DAY.format(1), DAY.format(1), 1)),
        ],
    )
    assert model_rows(store, "SELECT name FROM namespaces") == []  # staged is not published
    assert merge_facts(store, 0, 10) is False
    assert read_state(store) == (10, 10)  # the graph had nothing to change: current with the model

    # a later batch: spans widen (least / greatest), the later (time, seq) value wins
    stage_by_hand(
        store,
        [
            ("namespaces", ("etl", DAY.format(1), DAY.format(2))),
            ("sources", ("pg", "postgres://b", DAY.format(2), DAY.format(2), DAY.format(2), 5)),
        ],
    )
    merge_facts(store, 10, 20)
    assert model_rows(store, "SELECT name, created_at, updated_at FROM namespaces") == [
        ("dbt", DAY.format(1), DAY.format(1)),
        ("etl", DAY.format(1), DAY.format(3)),
    ]
    assert model_rows(store, "SELECT name, uri, set_seq FROM sources") == [("pg", "postgres://b", 5)]
    assert read_state(store) == (20, 20)
    with store.transaction() as cur:  # the merge emptied staging
        cur.execute("SELECT COUNT(*) FROM stage_namespaces")
        assert cur.fetchone()[0] == 0


def test_a_batchs_new_rows_go_in_as_they_are_and_a_key_taken_after_all_merges_by_the_rule(
    store: EventStore, caplog: pytest.LogCaptureFixture
) -> None:
    # a run's rows replace its stored ones, deleted first, so a batch's are new and skip the
    # conflict clause; should a key be taken all the same (here: a run's facet staged without its
    # run), the table's rule merges them and none is lost
    facet = ("run-1", "nominalTime", "h1", DAY.format(1))
    prepare_staging(store)
    stage_by_hand(store, [("run_facets", facet)])
    merge_facts(store, 0, 5)
    assert model_rows(store, "SELECT run_id, name, value_hash FROM run_facets") == [
        ("run-1", "nominalTime", "h1")
    ]
    assert "key was taken" not in caplog.text

    other = ("run-1", "processing_engine", "h2", DAY.format(2))
    stage_by_hand(store, [("run_facets", facet), ("run_facets", other)])  # one staged twice
    merge_facts(store, 5, 9)
    assert "run_facets: a staged row's key was taken" in caplog.text
    assert model_rows(store, "SELECT run_id, name, value_hash FROM run_facets") == [
        ("run-1", "nominalTime", "h1"),
        ("run-1", "processing_engine", "h2"),
    ]
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
    stage_by_hand(store, rows)
    merge_facts(store, 0, 10)  # small: rows deleted, pages kept
    assert _staging_pages(store) > 0
    stage_by_hand(store, rows)
    merge_facts(store, 10, 10 + LARGE_BATCH)
    assert _staging_pages(store) == 0
    assert len(model_rows(store, "SELECT name FROM namespaces")) == 2_000
    with store.transaction() as cur:  # nor does the writer compile its statements
        cur.execute("SHOW jit")
        assert cur.fetchone()[0] == "off"


def test_a_merge_changing_the_graphs_inputs_leaves_the_graph_behind(store: EventStore) -> None:
    prepare_staging(store)
    stage_by_hand(store, [("job_parents", ("job:ns:parent", "job:ns:child"))])
    assert merge_facts(store, 0, 7) is True
    assert read_state(store) == (7, 0)
    assert waiting(store) == 0  # no event above the checkpoint, but the graph is behind

    replace_graph_rows(store, {"dataset_depth": [("dataset:ns:a", 0), ("dataset:ns:b", 1)]}, 7)
    assert model_rows(store, "SELECT node_id, depth FROM dataset_depth") == [
        ("dataset:ns:a", 0),
        ("dataset:ns:b", 1),
    ]
    assert read_state(store) == (7, 7)
    replace_graph_rows(store, {"dataset_depth": [("dataset:ns:c", 2)]}, 7)  # replaced whole
    assert model_rows(store, "SELECT node_id, depth FROM dataset_depth") == [("dataset:ns:c", 2)]
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
    stage_by_hand(store, [("job_parents", ("job:ns:parent", "job:ns:child"))])
    assert merge_facts(store, 0, 7) is True
    assert read_state(store) == (7, 0)
    stage_by_hand(store, [("namespaces", ("ns", DAY.format(1), DAY.format(1)))])
    assert merge_facts(store, 7, 9) is False  # no graph input in the batch


def test_rows_staged_before_a_crash_never_reach_the_model(store: EventStore) -> None:
    prepare_staging(store)
    stage_by_hand(store, [("namespaces", ("lost", DAY.format(1), DAY.format(1)))])
    prepare_staging(store)  # the next run starts over
    stage_by_hand(store, [("namespaces", ("kept", DAY.format(1), DAY.format(1)))])
    merge_facts(store, 0, 3)
    assert model_rows(store, "SELECT name FROM namespaces") == [("kept",)]


def test_a_merge_from_a_moved_checkpoint_is_refused_and_changes_nothing(store: EventStore) -> None:
    prepare_staging(store)
    stage_by_hand(store, [("namespaces", ("etl", DAY.format(1), DAY.format(1)))])
    merge_facts(store, 0, 5)
    stage_by_hand(store, [("namespaces", ("late", DAY.format(1), DAY.format(1)))])
    with pytest.raises(PipelineBusy, match="checkpoint moved from 3 to 5"):
        merge_facts(store, 3, 9)
    assert model_rows(store, "SELECT name FROM namespaces") == [("etl",)]
    assert read_state(store) == (5, 5)

    reset_model(store)
    assert model_rows(store, "SELECT name FROM namespaces") == []
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
    stage_by_hand(store, [("namespaces", ("etl", DAY.format(1), DAY.format(1)))])
    merge_facts(store, low, high)


_AWKWARD = ["", '"', 'a "quoted", value', "two\nlines\r\n", "back\\slash \\N", "\\.", "tab\there", "é😀", " "]


def test_staged_text_arrives_as_the_pipeline_wrote_it(store: EventStore) -> None:
    """Empty text is not NULL, and quotes, separators, line ends, backslashes and COPY's own
    markers arrive unchanged (PostgreSQL: written as CSV by Arrow and COPYed)."""
    rows = [("facet_values", (f"h{i}", value)) for i, value in enumerate(_AWKWARD)] + [
        ("facet_values", ("null", None))
    ]
    prepare_staging(store)
    stage_by_hand(store, rows[:4], rows[4:])
    got = dict(model_rows(store, "SELECT hash, value FROM stage_facet_values"))
    assert got == {f"h{i}": value for i, value in enumerate(_AWKWARD)} | {"null": None}


def test_a_nul_in_staged_text_arrives_as_the_replacement_character_on_both_backends(
    store: EventStore,
) -> None:
    """JSON allows U+0000 in a name or a facet's text; PostgreSQL's text does not (COPY failed,
    and with it every later pass). It arrives as U+FFFD, as in the event store's own columns."""
    rows = [
        ("facet_values", ("h0", "a\x00b\x00")),
        ("facet_values", ("h\x001", "clean")),
        ("facet_values", ("h2", None)),
    ]
    prepare_staging(store)
    stage_by_hand(store, rows[:1], rows[1:])
    got = dict(model_rows(store, "SELECT hash, value FROM stage_facet_values"))
    assert got == {"h0": "a\ufffdb\ufffd", "h\ufffd1": "clean", "h2": None}


def _run(run_id: str, version: str, started: str) -> tuple[str, tuple[object, ...]]:
    """A run's staged row (`runs`' columns), of job etl.load at `version`, started and ended at once."""
    times = (started, started, started)
    return (
        "runs",
        (run_id, "job:etl:load", "COMPLETE", *times, 0, None, None, None, run_id, version, *times[:2], 1, 1),
    )


def _versions(store: EventStore) -> list[tuple[object, ...]]:
    """(version, created_at, updated_at, run_count) of each job version; each count checked."""
    rows = model_rows(store, "SELECT version_id, created_at, updated_at, run_count FROM job_versions")
    count = "SELECT COUNT(*) FROM runs r WHERE r.job_version = v.version_id"
    assert [(row[0], row[3]) for row in rows] == model_rows(
        store, f"SELECT v.version_id, ({count}) FROM job_versions v"
    )
    return rows


def test_job_versions_count_the_runs_that_join_and_leave_them(store: EventStore) -> None:
    version = [("job_versions", (v, "job:etl:load", None, None)) for v in ("v1", "v2")]
    day = [DAY.format(i) for i in range(7)]
    prepare_staging(store)
    stage_by_hand(store, [version[0], _run("r1", "v1", day[2]), _run("r2", "v1", day[3])])
    merge_facts(store, 0, 2)
    assert _versions(store) == [("v1", day[2], day[3], 2)]
    # r2 moves to v2 (its later events changed the job), r3 is new there
    stage_by_hand(store, [version[1], _run("r2", "v2", day[4]), _run("r3", "v2", day[5])])
    merge_facts(store, 2, 4)
    assert _versions(store) == [("v1", day[2], day[2], 1), ("v2", day[4], day[5], 2)]
    stage_by_hand(store, [_run("r3", "v2", day[6])])  # a run merged again stays counted once
    merge_facts(store, 4, 5)
    assert _versions(store) == [("v1", day[2], day[2], 1), ("v2", day[4], day[6], 2)]
    stage_by_hand(store, [_run("r1", "v2", day[1])])  # v1's last run leaves it: v1 goes
    merge_facts(store, 5, 6)
    assert _versions(store) == [("v2", day[1], day[6], 3)]
