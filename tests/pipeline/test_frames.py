"""The model's frames as a batch stages them (headwater.pipeline.frames)."""

from __future__ import annotations

from pyspark.sql import SparkSession

from headwater.pipeline.frames import changes_to_stage

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
