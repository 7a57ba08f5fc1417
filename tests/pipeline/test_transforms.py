"""Each transformation on a handful of rows."""

from __future__ import annotations

import json
from typing import Any

import orjson
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from headwater.pipeline import transforms as tr
from headwater.pipeline.facet_history import facet_history
from tests.pipeline.rows import PRODUCER, dataset, dataset_event, facet, parts, rows, run_event, t


def run_rows(spark: SparkSession, docs: list[dict[str, Any]]) -> dict[str, Any]:
    events, values = parts(spark, docs)
    out = tr.runs(events, values).collect()
    return {r["run_id"]: r for r in out}


def test_terminal_state_is_not_overridden_by_late_start_or_running(spark: SparkSession) -> None:
    runs = run_rows(
        spark,
        [
            run_event("r1", "COMPLETE", t(30)),  # arrives first
            run_event("r1", "START", t(10)),
            run_event("r1", "RUNNING", t(20)),
            run_event("r2", "START", t(5)),
            run_event("r2", "RUNNING", t(7)),
            run_event("r3", "START", t(1)),
            run_event("r3", "FAIL", t(4)),
            run_event("r3", "RUNNING", t(50)),  # later eventTime, still not a terminal
        ],
    )
    assert runs["r1"]["state"] == "COMPLETED"
    assert runs["r1"]["started_at"] == t(10) and runs["r1"]["ended_at"] == t(30)
    assert runs["r1"]["duration_ms"] == 20_000
    assert runs["r1"]["event_count"] == 3
    assert runs["r2"]["state"] == "RUNNING" and runs["r2"]["ended_at"] is None
    assert runs["r3"]["state"] == "FAILED" and runs["r3"]["duration_ms"] == 3_000


def test_run_without_start_starts_at_its_first_event(spark: SparkSession) -> None:
    runs = run_rows(spark, [run_event("r", "ABORT", t(9)), run_event("r", "OTHER", t(3))])
    assert runs["r"]["state"] == "ABORTED"
    assert runs["r"]["started_at"] == t(3)


def test_run_facets_latest_event_time_wins_and_parent_and_nominal(spark: SparkSession) -> None:
    parent = facet(
        run={"runId": "p1"},
        job={"namespace": "ns", "name": "dag"},
        root={"run": {"runId": "root1"}, "job": {"namespace": "ns", "name": "dag"}},
    )
    docs = [
        run_event("r", "COMPLETE", t(20), run_facets={"x": facet(v=2), "parent": parent}),
        run_event(
            "r",
            "START",
            t(10),
            run_facets={"x": facet(v=1), "nominalTime": facet(nominalStartTime="2026-01-01T00:00:00Z")},
        ),
    ]
    events, values = parts(spark, docs)
    text = {r["hash"]: r["value"] for r in values.frame.collect()}
    facets = {r["name"]: orjson.loads(text[r["value_hash"]]) for r in tr.run_facets(events).collect()}
    assert facets["x"]["v"] == 2
    assert set(facets) == {"x", "parent", "nominalTime"}
    run = tr.runs(events, values).collect()[0]
    assert run["parent_run_id"] == "p1"
    assert run["nominal_start"] == "2026-01-01T00:00:00Z"
    assert rows(tr.job_parents(events, values), "parent_node_id", "child_node_id") == [
        ("job:ns:dag", "job:ns:job")
    ]


def test_a_facet_value_is_hashed_alike_whole_or_split(spark: SparkSession) -> None:
    """A facet in a payload kept whole gets the hash the store gives it in a core: the same value
    is the same value_hash, whatever its keys' order."""
    from headwater.events.facet_refs import facet_hash
    from headwater.pipeline.compact import hex_of

    value = {"b": 1, "a": [1.5, "é"], "_producer": PRODUCER}
    events, values = parts(spark, [run_event("r", "START", t(1), run_facets={"x": value})])
    (row,) = tr.run_facets(events).collect()
    canonical = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    assert row["value_hash"] == hex_of(facet_hash(canonical))
    assert {r["hash"]: r["value"] for r in values.frame.collect()} == {row["value_hash"]: canonical.decode()}


def test_dataset_versions_follow_content_not_runs(spark: SparkSession) -> None:
    one = facet(fields=[{"name": "a", "type": "int"}])
    two = facet(fields=[{"name": "a", "type": "int"}, {"name": "b", "type": "int"}])
    docs = [
        run_event("r1", "COMPLETE", t(1), outputs=[dataset("db", "t", schema=one)]),
        run_event("r2", "COMPLETE", t(2), outputs=[dataset("db", "t", schema=one)]),
        run_event("r3", "COMPLETE", t(3), outputs=[dataset("db", "t", schema=two)]),
        run_event("r4", "COMPLETE", t(4), inputs=[dataset("db", "t", schema=two)]),  # reading: no version
        run_event("r5", "START", t(5), outputs=[dataset("db", "t")]),  # no schema yet: the same write
        run_event("r5", "COMPLETE", t(6), outputs=[dataset("db", "t", schema=two)]),
    ]
    events, values = parts(spark, docs)
    refs = tr.with_sources(tr.dataset_refs(events), values)
    versions = tr.dataset_versions(refs, values)
    version_rows = tr.dataset_version_rows(versions).collect()
    assert len(version_rows) == 2
    by_creator = {r["created_by_run"]: r for r in version_rows}
    assert set(by_creator) == {"r1", "r3"}
    links = rows(tr.dataset_version_runs(versions), "run_id")
    assert links == [("r1",), ("r2",), ("r3",), ("r5",)]
    current = tr.datasets(refs, versions).collect()[0]
    assert current["current_version"] == by_creator["r3"]["version_id"]
    assert current["version_time"] == t(6)


def test_job_version_ignores_the_order_of_inputs(spark: SparkSession) -> None:
    a, b, out = dataset("db", "a"), dataset("db", "b"), dataset("db", "out")
    code = {"sourceCodeLocation": facet(type="git", url="https://git/x", version="abc")}
    docs = [
        run_event("r1", "START", t(1), inputs=[a, b], job_facets=code),
        run_event("r1", "COMPLETE", t(2), outputs=[out]),
        run_event("r2", "COMPLETE", t(3), inputs=[b, a], outputs=[out], job_facets=code),
        run_event("r3", "COMPLETE", t(4), inputs=[a], outputs=[out], job_facets=code),
    ]
    events, values = parts(spark, docs)
    io = tr.run_io(tr.dataset_refs(events))
    versions = {r["run_id"]: r for r in tr.run_job_versions(tr.job_refs(events), io, values).collect()}
    assert versions["r1"]["version_id"] == versions["r2"]["version_id"] != versions["r3"]["version_id"]
    assert versions["r1"]["inputs"] == ["dataset:db:a", "dataset:db:b"]
    assert versions["r1"]["source_code_location"].startswith("git https://git/x")


def test_symlinks_give_alias_pairs(spark: SparkSession) -> None:
    links = facet(identifiers=[{"namespace": "hive://m", "name": "db.t", "type": "TABLE"}])
    docs = [run_event("r", "COMPLETE", t(1), outputs=[dataset("s3://lake", "db/t", symlinks=links)])]
    events, values = parts(spark, docs)
    pairs = rows(tr.symlinks(tr.dataset_refs(events), values), "node_id", "alias_node_id", "type")
    assert pairs == [("dataset:s3://lake:db/t", "dataset:hive://m:db.t", "TABLE")]


def test_namespaces_sources_and_jobs(spark: SparkSession) -> None:
    source = facet(name="warehouse", uri="postgres://w:5432")
    docs = [
        run_event("r1", "START", t(5), job=("etl", "load"), outputs=[dataset("pg", "t", dataSource=source)]),
        run_event("r1", "COMPLETE", t(9), job=("etl", "load")),
    ]
    events, values = parts(spark, docs)
    refs, jobs = tr.with_sources(tr.dataset_refs(events), values), tr.job_refs(events)
    assert rows(tr.namespaces(refs, jobs), "name", "created_at", "updated_at") == [
        ("etl", t(5), t(9)),
        ("pg", t(5), t(5)),
    ]
    assert rows(tr.sources(refs), "name", "uri") == [("warehouse", "postgres://w:5432")]
    versions = tr.run_job_versions(jobs, tr.run_io(refs), values)
    run = tr.runs_with_versions(tr.runs(events, values), versions)
    job = tr.jobs(jobs, run).collect()[0]
    assert job["node_id"] == "job:etl:load" and job["latest_run_id"] == "r1"
    assert job["current_version"] == versions.collect()[0]["version_id"]


def test_facet_lookups_agree_in_a_literal_map_and_by_join(spark: SparkSession) -> None:
    """A small batch looks facet values up in a literal map, a large one joins them: same rows."""
    parent = facet(run={"runId": "p"}, job={"namespace": "ns", "name": "dag"})
    out = dataset(
        "pg",
        "t",
        dataSource=facet(name="warehouse", uri="postgres://w"),
        schema=facet(fields=[{"name": "a", "type": "int"}]),
        version=facet(datasetVersion="7"),
        lifecycleStateChange=facet(lifecycleStateChange="OVERWRITE"),
        symlinks=facet(identifiers=[{"namespace": "hive", "name": "db.t", "type": "TABLE"}]),
    )
    code = {"sourceCodeLocation": facet(type="git", url="https://g/x"), "sql": facet(query="SELECT 1")}
    docs = [
        run_event(
            "r",
            "COMPLETE",
            t(2),
            outputs=[out],
            job_facets=code,
            run_facets={"parent": parent, "nominalTime": facet(nominalStartTime="2026-01-01T00:00:00Z")},
        ),
        dataset_event(t(3), dataset("pg", "t", documentation={"_deleted": True})),
        run_event("bare", "COMPLETE", t(4)),  # no code facets: NULL fields, not ''
    ]

    def model(inline: bool) -> dict[str, list[tuple[Any, ...]]]:
        events, values = parts(spark, docs, inline=inline)
        assert (values.literal is not None) == inline
        refs = tr.with_sources(tr.dataset_refs(events), values)
        frames = {
            "refs": refs.select("node_id", "source_name", "source_uri"),
            "versions": tr.dataset_versions(refs, values),
            "history": facet_history(refs, values),
            "symlinks": tr.symlinks(refs, values),
            "runs": tr.runs(events, values),
            "code": tr.run_job_versions(tr.job_refs(events), tr.run_io(refs), values),
            "parents": tr.job_parents(events, values),
        }
        return {name: sorted((tuple(r) for r in frame.collect()), key=repr) for name, frame in frames.items()}

    joined, mapped = model(False), model(True)
    assert joined == mapped
    assert (
        joined["symlinks"]
        and joined["parents"]
        and ("dataset:pg:t", "warehouse", "postgres://w") in joined["refs"]
    )
    # history rows: (node_id, name, valid_from, seq, value_hash, deleted, repeated)
    assert any(row[5] == 1 for row in joined["history"]), "the _deleted assertion"
    (bare,) = [row for row in joined["code"] if row[0] == "bare"]
    assert bare[2:4] == (None, None), "no source code location and no SQL"


def _canonical(value: Any) -> str:
    """A facet value's text as the store keeps it (sorted keys, compact; the standard library's
    where orjson cannot write it: integers beyond 64 bits, lone surrogates)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))


def test_values_are_parsed_once_as_get_json_object_reads_them(spark: SparkSession) -> None:
    """The texts `values_of` parses at each key (one json_tuple a value) are get_json_object's at
    "$.key", whatever the key holds: strings unquoted, numbers, objects, arrays, escapes."""
    parent = {"job": {"namespace": "n", "name": "j"}, "run": {"runId": "p"}}
    look_alike = {"job": '{"namespace":"n","name":"j"}'}
    tricky: list[Any] = [
        {"name": "warehouse", "uri": "postgres://w"},
        {"name": 1, "uri": 1.5, "fields": 1e20, "datasetVersion": -0.0, "type": 12345678901234567890},
        {"url": True, "path": None, "tag": False, "version": 0.1, "branch": 1e-7, "repoUrl": 5e-324},
        {"query": 2**70, "name": "\ud800 lone", "uri": 'é " \\ \n \u0001 ☃ 😀 \u2028'},
        {"fields": [{"name": "a", "type": "int", "fields": [{"name": "b", "description": "é\n"}]}]},
        {"fields": [{"name": "\udfff"}], "uri": "한 😀", "job": {"name": "\ud800", "namespace": "n"}},
        {"uri": "한 😀", "job": {"name": "j", "namespace": "\ud800"}},
        {"identifiers": "\\ud800 is not a surrogate", "tag": "\\"},
        {"fields": {"x": {"y": [1, 2.5, "s", None, True]}}, "identifiers": [], "Name": "case"},
        {"_deleted": True},
        {"_deleted": "true", "lifecycleStateChange": {"a": [1.0, 100.0, 1.5e300]}},
        {"_deleted": 1, "nominalStartTime": "2026-01-01T00:00:00Z", "nominalEndTime": ""},
        parent,
        look_alike,
        {"job": ["x", {"namespace": "n"}]},
        {"job": {"name": {"a": 1}, "namespace": 7}},
        {"job": None},
        {"job": {}},
        {},
        "a string",
        '{"name":"a string"}',
        [1, 2],
        [{"name": "in an array"}],
        3,
        None,
        True,
    ]
    texts = [_canonical(value) for value in tricky]
    frame = spark.createDataFrame(
        [(f"h{i}", text) for i, text in enumerate(texts)], "facet_hash string, facet_value string"
    )
    paths = [*tr.KEYS, *tr.NESTED]
    got = tr.values_of(frame).frame.select("hash", *[tr.key_column(p) for p in paths])
    want = frame.select(
        F.col("facet_hash").alias("hash"),
        *[F.get_json_object("facet_value", f"$.{p}").alias(tr.key_column(p)) for p in paths],
    )
    assert sorted(got.collect()) == sorted(want.collect())
    found = {r["hash"]: r for r in got.collect()}
    assert found[f"h{tricky.index(parent)}"][tr.key_column("job.namespace")] == "n"
    (string,) = [r for r in found.values() if r[tr.key_column("job")] == look_alike["job"]]
    assert string[tr.key_column("job.namespace")] is None, "a string is not an object"
