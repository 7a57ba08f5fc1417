"""The model's frames as a batch stages them (headwater.pipeline.frames)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import DataFrame, SparkSession

from headwater.pipeline import transforms as tr
from headwater.pipeline.frames import ModelFrames, changes_to_stage, model_frames
from tests.pipeline.rows import dataset, dataset_event, facet, run_event, stored, t

_COLUMNS = (
    "node_id string, name string, valid_from string, seq long, value_hash string, deleted long, "
    "repeated int, prev_from string"
)


def _at(minute: int) -> str:
    return f"2024-05-01T10:{minute:02d}:00.000Z"


def test_a_large_batch_stages_no_assertion_repeating_one_later_than_every_stored_one(
    spark: SparkSession,
) -> None:
    node = "dataset:s3://lake:orders"
    # the batch's schema assertions at minutes 1-5, all h1 but a change at 4; `repeated` and
    # `prev_from` as facet_history.facet_history sets them
    rows = [
        (node, "schema", _at(1), 1, "h1", 0, 0, None),  # the batch's first
        (node, "schema", _at(2), 2, "h1", 0, 1, _at(1)),
        (node, "schema", _at(3), 3, "h1", 0, 1, _at(2)),
        (node, "schema", _at(4), 4, "h2", 0, 0, _at(3)),  # a change
        (node, "schema", _at(5), 5, "h2", 0, 0, _at(4)),  # the batch's last
    ]
    history = spark.createDataFrame(rows, _COLUMNS)

    def staged(until: str | None) -> list[int]:
        return sorted(row.seq for row in changes_to_stage(history, until).collect())

    assert staged(None) == [1, 4, 5]  # nothing stored: no repeated assertion is needed
    # a stored assertion at 10:01:30 may fall between 1 and 2: 2 stays; 3 follows 2, later than it
    assert staged("2024-05-01T10:01:30.000Z") == [1, 2, 4, 5]
    assert staged(_at(2)) == [1, 2, 3, 4, 5]  # one stored as late as 2 may sort after it
    assert staged(_at(9)) == [1, 2, 3, 4, 5]


@contextmanager
def _whole_stage_code(spark: SparkSession) -> Iterator[None]:
    """Whole-stage code generation on, as a large batch has it (`Pipeline.size_for`)."""
    names = ("spark.sql.codegen.wholeStage", "spark.sql.codegen.factoryMode")
    before = {name: spark.conf.get(name, None) for name in names}
    spark.conf.set("spark.sql.codegen.wholeStage", "true")
    spark.conf.set("spark.sql.codegen.factoryMode", "FALLBACK")
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                spark.conf.unset(name)
            else:
                spark.conf.set(name, value)


def _generated_code(frame: DataFrame) -> list[str]:
    """The Java source of the frame's whole-stage generated code, one text per stage."""
    jvm = frame.sparkSession.sparkContext._jvm
    assert jvm is not None
    plan = frame._jdf.queryExecution().executedPlan()
    stages = jvm.org.apache.spark.sql.execution.debug.package.codegenStringSeq(plan)
    return [stages.apply(i)._2() for i in range(stages.size())]


def _code_of(frames: ModelFrames) -> dict[str, list[str]]:
    """Each table's generated code; the frames kept to build them are freed (a later test in the
    session's Spark finds its cache empty)."""
    try:
        return {name: _generated_code(frame) for name, frame in frames.tables.items()}
    finally:
        frames.release()


def test_a_batch_s_frames_built_again_generate_the_same_code(spark: SparkSession) -> None:
    """Spark compiles generated code once per text (its code cache), and the JVM's compilers then
    work on it: frames built for the next batch must generate the same text, or each large batch
    pays both again. PySpark's higher-order functions named their lambdas' variables afresh each
    time (`x_49`, then `x_79`), and those names are in the code."""
    schema = facet(fields=[{"name": "id", "type": "int"}])
    docs = [
        run_event(
            "r1",
            "COMPLETE",
            t(1),
            inputs=[dataset("s3://lake", "orders", schema=schema)],
            outputs=[dataset("s3://lake", "totals", **{"schema": schema, "odd.name": facet(v=1)})],
            run_facets={"nominalTime": facet(nominalStartTime="2026-01-01T00:00:00Z")},
            job_facets={"sql": facet(query="select 1")},
        ),
        dataset_event(t(2), dataset("s3://lake", "orders", schema=schema)),
    ]
    # a facet that broke its schema: its path is filtered, which is where the lambdas run
    # kept as a batch keeps its events: a plan over local rows is folded away, with no code
    events = stored(spark, docs, untrusted={1: ['outputs[0].facets["odd.name"]']}).persist()
    with _whole_stage_code(spark):
        builds = [model_frames(events, events) for _ in range(2)]
        try:
            first, second = ({name: _generated_code(f) for name, f in b.tables.items()} for b in builds)
        finally:  # a later test in the session's Spark finds its cache empty
            for build in builds:
                build.release()
    events.unpersist()
    assert spark._jsparkSession.sharedState().cacheManager().isEmpty(), "nothing left cached"
    assert first == second
    lambdas = [code for codes in first.values() for code in codes if "AtomicReference" in code]
    assert lambdas, "the lambdas' variables are in the generated code (what the test compares)"


def test_a_first_batch_generates_the_code_of_the_batches_after_it(spark: SparkSession) -> None:
    """A large first batch reads its runs' earlier events back (there are none) and compares
    with no stored assertion as with one (`Pipeline._stage_batch`, `changes_to_stage`): its plans
    are those of the large batches after it, which then compile no code of their own."""
    orders = dataset("s3://lake", "orders", schema=facet(fields=[{"name": "id", "type": "int"}]))
    docs = [run_event(f"r{i}", "COMPLETE", t(10 + i), outputs=[orders]) for i in range(3)]
    tables = ("dataset_facets", "job_facets")

    def code(earlier_docs: list[dict[str, object]], until: str | None) -> dict[str, list[str]]:
        new = stored(spark, docs).persist()
        run_events = tr.union(new, stored(spark, earlier_docs)).persist()
        found = _code_of(model_frames(new, run_events, stored_until=dict.fromkeys(tables, until)))
        run_events.unpersist()
        new.unpersist()
        return found

    with _whole_stage_code(spark):
        first = code([], None)  # nothing before it, nothing stored
        later = code([run_event("r0", "START", t(5), outputs=[orders])], t(4))
    assert first == later
    assert spark._jsparkSession.sharedState().cacheManager().isEmpty(), "nothing left cached"
