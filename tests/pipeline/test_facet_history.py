"""The batch's facet history (headwater.pipeline.facet_history): assertions in order, deletions,
the batch's repeats marked."""

from __future__ import annotations

from pyspark.sql import SparkSession

from headwater.pipeline import transforms as tr
from headwater.pipeline.facet_history import facet_history
from tests.pipeline.rows import dataset, dataset_event, facet, parts, rows, run_event, t


def test_dataset_facet_history_deleted_and_untrusted(spark: SparkSession) -> None:
    docs = [
        dataset_event(t(1), dataset("db", "t", documentation=facet(description="one"))),
        dataset_event(t(2), dataset("db", "t", documentation={"_deleted": True})),
        run_event("r", "START", t(3), outputs=[dataset("db", "t", schema=facet(fields="broken"))]),
    ]
    events, values = parts(spark, docs, untrusted={3: ["outputs[0].facets.schema"]})
    history = facet_history(tr.dataset_refs(events), values)
    assert rows(history, "node_id", "name", "valid_from", "deleted") == [
        ("dataset:db:t", "documentation", t(1), 0),
        ("dataset:db:t", "documentation", t(2), 1),
    ]


def test_facet_history_marks_the_batchs_repeats_but_not_its_last(spark: SparkSession) -> None:
    # the merge skips a repeat where the batch comes after the stored rows (store/model/history)
    one, two = facet(description="one"), facet(description="two")
    gone = {"_deleted": True}
    values = [one, one, one, two, gone, gone, two, two]
    docs = [dataset_event(t(i + 1), dataset("db", "t", documentation=v)) for i, v in enumerate(values)]
    events, facet_values = parts(spark, docs)
    history = facet_history(tr.dataset_refs(events), facet_values)
    # the first; two repeats; a change; a deletion and one repeating it (a deletion is never
    # marked); the one after a deletion; the batch's last, a repeat but the last
    assert [r[1] for r in rows(history, "valid_from", "repeated")] == [0, 1, 1, 0, 0, 0, 0, 0]
