"""The facet history of a batch: every dataset or job facet assertion, in order per (node, facet
name), with what the merge needs to keep only the changes (`headwater.store.model.history`) and a
large batch to stage only those (`frames.changes_to_stage`)."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from headwater.pipeline.transforms import FacetValues, Key, lookup, named_value, one_partition


def deletion(at: Key) -> Column:
    """1 for a facet value that deletes the facet (`_deleted`: true); NULL, not 0, for any other
    value (a lookup then skips it)."""
    return F.when(at("_deleted") == "true", 1)


def facet_history(refs: DataFrame, values: FacetValues) -> DataFrame:
    """Every facet assertion of dataset or job references (`transforms.dataset_refs`,
    `transforms.job_refs`): (node, name, eventTime, seq) with its value hash; `_deleted` ends one;
    `repeated`: whether it repeats the batch's assertion before it and is not the batch's last;
    `prev_from`: the time of the batch's assertion before it (`frames.changes_to_stage`)."""
    facets = F.explode("facets").alias("name", "value_hash")
    rows = refs.select("node_id", "event_time", "seq", facets).where(named_value())
    if not one_partition(rows):  # one shuffle for both the aggregate and the window, not one each
        rows = rows.repartition("node_id", "name")
    asserted = rows.groupBy("node_id", "name", F.col("event_time").alias("valid_from"), "seq").agg(
        F.max("value_hash").alias("value_hash")
    )
    found = lookup(asserted, F.col("value_hash"), values, _deleted=deletion)
    history = found.withColumn("deleted", F.coalesce("_deleted", F.lit(0))).drop("_deleted")
    # 1 where the batch's assertion before this one had the same value, and a later one follows:
    # the model keeps none of those (`headwater.store.model.history`), so the merge skips them
    # unless the node's facet has stored assertions as late as the batch's
    order = Window.partitionBy("node_id", "name").orderBy("valid_from", "seq")
    same = (
        (F.lag("value_hash").over(order) == F.col("value_hash"))
        & (F.lag("deleted").over(order) == 0)
        & (F.col("deleted") == 0)
        & F.lead("seq").over(order).isNotNull()
    )
    return history.withColumn("repeated", F.when(same, 1).otherwise(0)).withColumn(
        "prev_from", F.lag("valid_from").over(order)
    )
