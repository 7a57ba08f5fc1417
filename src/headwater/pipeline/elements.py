"""Generic (FastScore-style) events folded into the lineage model: element nodes and `event` edges.

Every element a generic event names is a node; every two elements of one event are linked by an
edge in the order the event lists them (its first element, the subject, points at the others),
labelled with the event's type. An element of type `dataset` or `job` whose description is
`{namespace}:{name}` is the OpenLineage node of that name (the browse API already treats it as that
dataset or job); any other element is `element:{type}:{description}`.

Merge rules (docs/pipeline.md): created = the earliest receive time, updated = the latest, counts
summed; every event is read by exactly one batch, so an incremental pass equals a rebuild.
Migration 0009 applies the same rules in SQL to the events a store had folded before it.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, StringType, StructField, StructType

from headwater.events.limits import MAX_NODE_ID_BYTES

GENERIC_SCHEMA = StructType(
    [
        StructField("type", StringType()),
        StructField("description", StringType()),
        StructField(
            "elements",
            ArrayType(
                StructType([StructField("type", StringType()), StructField("description", StringType())])
            ),
        ),
    ]
)
OPENLINEAGE_TYPES = ("dataset", "job")
_PAIR = "\u001f"  # between an element's type and description while picking a node's smallest pair


def element_node(kind: Column, description: Column) -> Column:
    """The node id of an element (the rule of `headwater.query.node_ids.element_node_id`)."""
    openlineage = kind.isin(*OPENLINEAGE_TYPES) & description.rlike("(?s)^[^:]+:.+$")
    return F.when(openlineage, F.concat(kind, F.lit(":"), description)).otherwise(
        F.concat(F.lit("element:"), kind, F.lit(":"), description)
    )


def parse_generic(payload: Column) -> Column:
    """The parts of a generic event's payload the fold reads."""
    return F.from_json(payload, GENERIC_SCHEMA)


def _named(events: DataFrame) -> DataFrame:
    """(seq, event time, event type, node, first position, type\\x1fdescription) per element of
    each generic event; an element listed twice counts once, at its first place. An element whose
    node id is over MAX_NODE_ID_BYTES (stored before the limit on descriptions) is left out: two
    such ids key an edge, beyond what PostgreSQL's index takes."""
    listed = events.where(F.col("generic").isNotNull()).select(
        "seq",
        "event_time",
        F.col("generic.type").alias("event_type"),
        F.posexplode("generic.elements").alias("position", "e"),
    )
    listed = listed.where(F.col("e.type").isNotNull() & F.col("e.description").isNotNull()).withColumn(
        "node_id", element_node(F.col("e.type"), F.col("e.description"))
    )
    listed = listed.where(F.octet_length("node_id") <= MAX_NODE_ID_BYTES)
    return listed.groupBy("seq", "event_time", "event_type", "node_id").agg(
        F.min("position").alias("position"),
        F.min(F.concat(F.col("e.type"), F.lit(_PAIR), F.col("e.description"))).alias("pair"),
    )


def element_nodes(events: DataFrame) -> DataFrame:
    """One row per node: its (type, description), first and last receive time, events naming it.
    Two (type, description) pairs can spell one id (`element:a:b:c`): the smallest pair names it."""
    nodes = (
        _named(events)
        .groupBy("node_id")
        .agg(
            F.min("pair").alias("pair"),
            F.min("event_time").alias("created_at"),
            F.max("event_time").alias("updated_at"),
            F.count(F.lit(1)).alias("event_count"),
        )
    )
    at = F.instr(F.col("pair"), _PAIR)
    return nodes.select(
        "node_id",
        F.substring_index(F.col("pair"), _PAIR, 1).alias("type"),
        F.col("pair").substr(at + 1, F.length(F.col("pair"))).alias("description"),
        "created_at",
        "updated_at",
        "event_count",
    )


def element_edges(events: DataFrame) -> DataFrame:
    """One row per (earlier element, later element, event type) of the events: the first and last
    receive time of an event linking them that way, and how many did."""
    named = _named(events).select("seq", "event_time", "event_type", "node_id", "position")
    a, b = named.alias("a"), named.alias("b")
    pairs = a.join(b, (F.col("a.seq") == F.col("b.seq")) & (F.col("b.position") > F.col("a.position")))
    return pairs.groupBy(
        F.col("a.node_id").alias("src_id"),
        F.col("b.node_id").alias("dst_id"),
        F.col("a.event_type").alias("event_type"),
    ).agg(
        F.min("a.event_time").alias("created_at"),
        F.max("a.event_time").alias("updated_at"),
        F.count(F.lit(1)).alias("event_count"),
    )
