"""The graph stage: from the published entity tables to the lineage graph and its augmentation.

Inputs are model tables (jobs' current versions, job version inputs/outputs, parent jobs,
symlinks), read back through the data source; outputs replace the graph tables. Every algorithm
is iterative DataFrame code (no GraphFrames): connected components for symlink aliases, and a
cycle-safe propagation for ultimate sources and destinations and topological depth.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from headwater.store.graph import ENDS_CAP, PAST_CAP

MAX_ROUNDS = 10_000  # a bound no real graph reaches; each round extends paths by one edge


def _fingerprint(df: DataFrame, value: str | Column) -> tuple[int, int]:
    """(rows, XOR of a hash of `value`): equal before and after a round when nothing changed."""
    row = df.agg(F.count(F.lit(1)), F.bit_xor(F.xxhash64(value))).first()
    return (int(row[0]), int(row[1] or 0)) if row else (0, 0)


def aliases(symlinks: DataFrame) -> DataFrame:
    """Datasets joined by symlinks → one canonical dataset per connected component.

    `symlinks` holds (node_id, alias_node_id, alias_known): alias_known is 1 when an event named
    the alias as a dataset itself. The canonical id is the smallest id of the component among the
    datasets events named (every component has one: the dataset that declared the symlink), so the
    answer does not depend on which name arrived first or on which side declared the symlink, and
    it is always a dataset of the model: a name that only a symlinks facet declared (Spark's
    `default.t1` for the path `/user/hive/warehouse/t1`) is an alias, never the canonical one, even
    when it sorts first.
    """
    edges = symlinks.select(
        F.col("node_id").alias("a"), F.col("alias_node_id").alias("b"), F.col("alias_known").alias("b_known")
    )
    both = (
        edges.select("a", "b")
        .unionByName(edges.select(F.col("b").alias("a"), F.col("a").alias("b")))
        .distinct()
        .cache()
    )
    # A label sorts known datasets ("0…") before names only a symlinks facet declared ("1…").
    alias_known = F.coalesce(F.col("b_known") == 1, F.lit(False)).alias("known")
    known = edges.select(F.col("a").alias("node_id"), F.lit(True).alias("known")).unionByName(
        edges.select(F.col("b").alias("node_id"), alias_known)
    )
    labels = (
        known.groupBy("node_id")
        .agg(F.max("known").alias("known"))
        .select("node_id", F.concat(F.when(F.col("known"), "0").otherwise("1"), "node_id").alias("label"))
    )
    labels = labels.localCheckpoint(eager=False)
    before = _fingerprint(labels, "label")
    for _ in range(MAX_ROUNDS):
        proposed = (
            both.join(labels, both.b == labels.node_id)
            .select(both.a.alias("node_id"), F.col("label"))
            .unionByName(labels)
            .groupBy("node_id")
            .agg(F.min("label").alias("label"))
            .localCheckpoint(eager=False)
        )
        labels = proposed
        after = _fingerprint(labels, "label")  # the round's one job: it also materialises `labels`
        if after == before:  # labels only ever decrease: an unchanged fingerprint means done
            break
        before = after
    both.unpersist()
    return labels.select("node_id", F.expr("substring(label, 2)").alias("canonical_id"))


def canonical(df: DataFrame, column: str, alias_map: DataFrame) -> DataFrame:
    """Replace dataset ids in `column` by their canonical id."""
    m = alias_map.select(F.col("node_id").alias("_n"), F.col("canonical_id").alias("_c"))
    return (
        df.join(m, df[column] == m._n, "left").withColumn(column, F.coalesce("_c", column)).drop("_n", "_c")
    )


def lineage_edges(current_io: DataFrame, parents: DataFrame, alias_map: DataFrame) -> DataFrame:
    """Directed edges of the current graph: dataset→job (input), job→dataset (output),
    parent job→child job (parent). `current_io` is (job_id, version_id, direction, node_id)."""
    io = canonical(current_io, "node_id", alias_map)
    inputs = io.where(F.col("direction") == "input").select(
        F.col("node_id").alias("src_id"),
        F.col("job_id").alias("dst_id"),
        F.lit("input").alias("edge_type"),
        "job_id",
        "version_id",
    )
    outputs = io.where(F.col("direction") == "output").select(
        F.col("job_id").alias("src_id"),
        F.col("node_id").alias("dst_id"),
        F.lit("output").alias("edge_type"),
        "job_id",
        "version_id",
    )
    parent = parents.select(
        F.col("parent_node_id").alias("src_id"),
        F.col("child_node_id").alias("dst_id"),
        F.lit("parent").alias("edge_type"),
        F.col("child_node_id").alias("job_id"),
        F.lit(None).cast("string").alias("version_id"),
    )
    return inputs.unionByName(outputs).unionByName(parent).dropDuplicates(["src_id", "dst_id", "edge_type"])


def _bipartite(edges: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(job, dataset) of the lineage edges' inputs, and of their outputs."""
    ins = edges.where(F.col("edge_type") == "input").select(
        F.col("dst_id").alias("job"), F.col("src_id").alias("dataset")
    )
    outs = edges.where(F.col("edge_type") == "output").select(
        F.col("src_id").alias("job"), F.col("dst_id").alias("dataset")
    )
    return ins, outs


def _condensed_ends(here: DataFrame, there: DataFrame) -> DataFrame:
    """The datasets of `here` (job, dataset) that a condensed edge reaches from `there`: their job
    has a dataset on the other side that is not themselves. Counted per job, never joined pair by
    pair (a job of 3,000 inputs and 3,000 outputs has 9 million condensed edges)."""
    per_job = there.groupBy("job").agg(F.count(F.lit(1)).alias("_n"), F.min("dataset").alias("_first"))
    reached = (F.col("_n") >= 2) | (F.col("_first") != F.col("dataset"))
    return here.join(per_job, "job").where(reached).select("dataset").distinct()


def ultimate_nodes(edges: DataFrame, cap: int = ENDS_CAP) -> DataFrame:
    """Ultimate sources (upstream ends) and destinations (downstream ends) of every dataset of the
    condensed graph (each input of a job to each of its outputs but itself), from the lineage
    edges, by the rule of `pipeline/ends.py`: a dataset no condensed edge reaches from a side is
    its own end on that side (distance 0); any other's ends are those of the datasets next to it,
    one step further, the shortest distance kept, so the propagation stops once no (kind, node,
    end) gets shorter or new. The ends pass through the jobs, never through the condensed pairs:
    each round, a job takes its datasets' ends (capped), then the datasets on its other side take
    the job's, one step further. A node with more than `cap` ends keeps the one row (PAST_CAP, -1)
    instead, which the nodes after it take on: their ends are a superset. Each round is one Spark
    job (its check materialises the round).
    """
    ins, outs = _bipartite(edges)
    ins, outs = ins.distinct().localCheckpoint(), outs.distinct().localCheckpoint()
    upstream = _condensed_ends(outs, ins)  # a condensed edge ends at these
    downstream = _condensed_ends(ins, outs)  # and starts at these
    in_graph = upstream.unionByName(downstream).distinct()

    def kind(name: str, frame: DataFrame) -> DataFrame:
        return frame.select(F.lit(name).alias("kind"), "*")

    starts = kind("source", in_graph.join(upstream, "dataset", "left_anti")).unionByName(
        kind("destination", in_graph.join(downstream, "dataset", "left_anti"))
    )
    found = starts.select(
        "kind",
        F.col("dataset").alias("node_id"),
        F.col("dataset").alias("other_id"),
        F.lit(0).alias("distance"),
    ).localCheckpoint(eager=False)
    # a job takes the ends of the datasets before it; a dataset, those of the jobs before it.
    # Every frame of a round is hash-partitioned by its node (kind, node_id), so that a round
    # shuffles twice (the ends into the jobs, then into the datasets): each grouping and window
    # by node, and each join on a node, finds its rows in place.
    into_jobs = _by_node(
        kind("source", ins).unionByName(kind("destination", outs)).withColumnRenamed("dataset", "node_id")
    ).localCheckpoint()
    into_datasets = (
        kind("source", outs)
        .unionByName(kind("destination", ins))
        .repartition("kind", "job")
        .localCheckpoint()
    )
    found = _by_node(found).localCheckpoint(eager=False)
    pair = F.concat_ws("|", "kind", "node_id", "other_id", "distance")
    before = _fingerprint(found, pair)
    for _ in range(MAX_ROUNDS):
        at_jobs = _capped(
            _nearest(
                into_jobs.join(found, ["kind", "node_id"]).select(
                    "kind", F.col("job").alias("node_id"), "other_id", "distance"
                )
            ),
            cap,
        )
        past = F.col("other_id") == PAST_CAP
        further = F.when(past, F.lit(-1)).otherwise(F.col("distance") + 1)
        step = into_datasets.join(at_jobs.withColumnRenamed("node_id", "job"), ["kind", "job"]).select(
            "kind", F.col("dataset").alias("node_id"), "other_id", further.alias("distance")
        )
        found = _capped(_nearest(found.unionByName(step)), cap).localCheckpoint(eager=False)
        after = _fingerprint(found, pair)  # the round's one job: it also materialises `found`
        if after == before:  # pairs are only added and distances only shrink
            break
        before = after
    return found.select("node_id", "kind", "other_id", "distance")


def _by_node(frame: DataFrame) -> DataFrame:
    return frame.repartition("kind", "node_id")


def _nearest(rows: DataFrame) -> DataFrame:
    """The shortest distance of each (kind, node_id, other_id), partitioned by node."""
    return _by_node(rows).groupBy("kind", "node_id", "other_id").agg(F.min("distance").alias("distance"))


def _capped(found: DataFrame, cap: int) -> DataFrame:
    """The rows of nodes with at most `cap` ends and no PAST_CAP row; one PAST_CAP row for each
    other node. One window by node, no union: a frame partitioned by node stays so."""
    node = Window.partitionBy("kind", "node_id")
    marked = found.select(
        "*",
        F.count(F.lit(1)).over(node).alias("_ends"),
        F.max((F.col("other_id") == PAST_CAP).cast("int")).over(node).alias("_past"),
    )
    over = (F.col("_ends") > cap) | (F.col("_past") == 1)
    return marked.select(
        "kind",
        "node_id",
        F.when(over, F.lit(PAST_CAP)).otherwise(F.col("other_id")).alias("other_id"),
        F.when(over, F.lit(-1)).otherwise(F.col("distance")).alias("distance"),
    ).dropDuplicates()


def dataset_depth(ultimate: DataFrame) -> DataFrame:
    """Topological depth: the longest of the shortest paths from the dataset's ultimate sources
    (none past the cap)."""
    past = ultimate.where((F.col("kind") == "source") & (F.col("other_id") == PAST_CAP)).select("node_id")
    return (
        ultimate.where(F.col("kind") == "source")
        .join(past, "node_id", "left_anti")
        .groupBy("node_id")
        .agg(F.max("distance").cast("int").alias("depth"))
    )
