"""The graph stage's algorithms on small hand-drawn graphs."""

from __future__ import annotations

from pyspark.sql import SparkSession

from headwater.pipeline import graph

# a → j1 → b → j2 → c, and j3 reads c and writes b2 (an alias of b: a cycle b ⇄ c); d → j2 as well
CYCLE_IO = [
    ("job:n:j1", "v1", "input", "dataset:n:a"),
    ("job:n:j1", "v1", "output", "dataset:n:b"),
    ("job:n:j2", "v2", "input", "dataset:n:b"),
    ("job:n:j2", "v2", "input", "dataset:n:d"),
    ("job:n:j2", "v2", "output", "dataset:n:c"),
    ("job:n:j3", "v3", "input", "dataset:n:c"),
    ("job:n:j3", "v3", "output", "dataset:n:b2"),
]
# (dataset, ultimate source, distance) of that graph: shortest paths, the cycle left by none
CYCLE_SOURCES = {
    ("dataset:n:a", "dataset:n:a", 0),
    ("dataset:n:d", "dataset:n:d", 0),
    ("dataset:n:b", "dataset:n:a", 1),
    ("dataset:n:b", "dataset:n:d", 2),
    ("dataset:n:c", "dataset:n:a", 2),
    ("dataset:n:c", "dataset:n:d", 1),
}


def test_aliases_form_components_whatever_the_direction_of_the_links(spark: SparkSession) -> None:
    links = spark.createDataFrame(
        [
            ("dataset:s3:b", "dataset:hive:a", 1),
            ("dataset:x:c", "dataset:s3:b", 1),
            ("dataset:p:q", "dataset:p:r", 1),
        ],
        "node_id string, alias_node_id string, alias_known int",
    )
    result = {r["node_id"]: r["canonical_id"] for r in graph.aliases(links).collect()}
    assert result == {
        "dataset:hive:a": "dataset:hive:a",
        "dataset:s3:b": "dataset:hive:a",
        "dataset:x:c": "dataset:hive:a",
        "dataset:p:q": "dataset:p:q",
        "dataset:p:r": "dataset:p:q",
    }


def test_a_name_only_a_symlinks_facet_declared_is_never_the_canonical_dataset(spark: SparkSession) -> None:
    # Spark on Hive: the path is the dataset events name, the table only its symlink; the table's id
    # sorts first ('/' < ':'), yet the canonical dataset must be one the model holds.
    path = "dataset:hdfs://cluster:/user/hive/warehouse/t1"
    table = "dataset:hdfs://cluster/user/hive/warehouse:default.t1"
    other = "dataset:hdfs://cluster:/user/hive/warehouse/t1_copy"
    links = spark.createDataFrame(
        [(path, table, 0), (other, table, 0)], "node_id string, alias_node_id string, alias_known int"
    )
    assert table < path < other
    result = {r["node_id"]: r["canonical_id"] for r in graph.aliases(links).collect()}
    assert result == {path: path, table: path, other: path}
    # once an event names the table itself, it is a dataset of the model and the smallest id wins
    known = spark.createDataFrame([(path, table, 1)], "node_id string, alias_node_id string, alias_known int")
    assert {r["canonical_id"] for r in graph.aliases(known).collect()} == {table}


def test_edges_ultimate_and_depth_with_a_cycle(spark: SparkSession) -> None:
    # a → j1 → b → j2 → c, and j3 reads c and writes b (cycle b ⇄ c); d → j2 as well
    io = spark.createDataFrame(CYCLE_IO, "job_id string, version_id string, direction string, node_id string")
    aliases = spark.createDataFrame([("dataset:n:b2", "dataset:n:b")], "node_id string, canonical_id string")
    parents = spark.createDataFrame(
        [("job:n:dag", "job:n:j1")], "parent_node_id string, child_node_id string"
    )
    edges = graph.lineage_edges(io, parents, aliases)
    triples = sorted((r["src_id"], r["dst_id"], r["edge_type"]) for r in edges.collect())
    assert ("job:n:j3", "dataset:n:b", "output") in triples  # b2 became its canonical b
    assert ("job:n:dag", "job:n:j1", "parent") in triples
    assert len(triples) == 8
    ultimate = graph.ultimate_nodes(edges)
    found = {(r["node_id"], r["kind"], r["other_id"], r["distance"]) for r in ultimate.collect()}
    sources = {(n, o, d) for n, k, o, d in found if k == "source"}
    assert sources == CYCLE_SOURCES
    # nothing leaves the b ⇄ c cycle: it has no ultimate destination but reaches none outside
    destinations = {(n, o) for n, k, o, _ in found if k == "destination"}
    assert destinations == set()
    depth = {r["node_id"]: r["depth"] for r in graph.dataset_depth(ultimate).collect()}
    assert depth == {"dataset:n:a": 0, "dataset:n:d": 0, "dataset:n:b": 2, "dataset:n:c": 2}
