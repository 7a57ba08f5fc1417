"""The event → lineage-model transformations: each a function from DataFrames to a DataFrame.

The first step (`parse_events`) reads the compact rows the data source returns: events whose
facets are the hashes of their values, and each distinct value once (`headwater.pipeline.compact`).
The hash is the model's `value_hash`; a step that needs something inside a facet value looks it up
by hash (`lookup`), which reads each distinct value once. All of it runs on the
executors; nothing here collects to the driver.

Merge rules that make the model independent of arrival order and of batch boundaries:
- facts keyed by content (facet values, schema fields, column lineage, symlinks, versions) are
  inserted once;
- "latest" values are picked by (eventTime, seq), "first" values by the smallest (eventTime, seq);
- run-scoped results are computed from every event of the run (the reader returns a touched
  run's earlier events too), so a late START never overrides a COMPLETE.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce

import orjson
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from headwater.events.facet_messages import IDENTIFIER
from headwater.events.generic import GENERIC_KIND
from headwater.events.limits import MAX_NAME_BYTES, MAX_NAMESPACE_BYTES, MAX_RUN_ID_BYTES
from headwater.pipeline.elements import parse_generic

_FACETS = MapType(StringType(), StringType())
_DATASET = StructType(
    [
        StructField("namespace", StringType()),
        StructField("name", StringType()),
        StructField("facets", _FACETS),
        StructField("inputFacets", _FACETS),
        StructField("outputFacets", _FACETS),
    ]
)
PAYLOAD_SCHEMA = StructType(
    [
        StructField("run", StructType([StructField("runId", StringType()), StructField("facets", _FACETS)])),
        StructField(
            "job",
            StructType(
                [
                    StructField("namespace", StringType()),
                    StructField("name", StringType()),
                    StructField("facets", _FACETS),
                ]
            ),
        ),
        StructField("inputs", ArrayType(_DATASET)),
        StructField("outputs", ArrayType(_DATASET)),
        StructField("dataset", _DATASET),
    ]
)
SEP = "\u001f"
TERMINAL = ("COMPLETE", "FAIL", "ABORT")
_STATES = {
    "START": "RUNNING",
    "RUNNING": "RUNNING",
    "COMPLETE": "COMPLETED",
    "FAIL": "FAILED",
    "ABORT": "ABORTED",
    "OTHER": "NEW",
}


ONE_PARTITION = "headwater.pipeline.onePartition"
"""A session setting: "true" while the runner works on a batch small enough for one partition
(`runner.Pipeline.size_for`, which then also turns automatic broadcasts off). Its frames
then stay in one partition: unions are coalesced back to one (`union`) and lookups join without
broadcasting, so no aggregate or join needs a shuffle or a broadcast. Each shuffle is a stage and
each broadcast a job of its own: most of a small batch's time on the executors went there."""


def one_partition(frame: DataFrame) -> bool:
    """Whether the frame's session works on a batch in one partition (`ONE_PARTITION`)."""
    return frame.sparkSession.conf.get(ONE_PARTITION, "false") == "true"


def whole(frame: DataFrame) -> DataFrame:
    """The frame in one partition again when its batch is (`ONE_PARTITION`), after a step that
    loses track of it (a Python UDF's output is not known to be in one partition)."""
    return frame.coalesce(1) if one_partition(frame) else frame


def union(first: DataFrame, *others: DataFrame) -> DataFrame:
    """The frames' rows, matched by column name; in one partition when the batch is
    (`ONE_PARTITION`: a union's partitions are its inputs' together, which the next aggregate or
    join would otherwise shuffle back into one)."""
    return whole(reduce(DataFrame.unionByName, others, first))


def digest(*parts: Column) -> Column:
    """A short, stable content hash (first 32 hex digits of SHA-256) of the parts."""
    return F.substring(F.sha2(F.concat_ws(SEP, *[F.coalesce(p, F.lit("")) for p in parts]), 256), 1, 32)


def dataset_node(namespace: Column, name: Column) -> Column:
    return F.concat(F.lit("dataset:"), namespace, F.lit(":"), name)


def job_node(namespace: Column, name: Column) -> Column:
    return F.concat(F.lit("job:"), namespace, F.lit(":"), name)


def sql_text(text: str) -> str:
    """`text` as a Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


# The lambdas of higher-order functions (map_filter, forall) are written in SQL text, not with
# PySpark's `F.map_filter(col, lambda k, v: ...)`: PySpark names a lambda's variables afresh each
# time (`x_49`, then `x_79` in the next batch's frames), the names reach the generated code, and
# so the 33 largest generated classes of each large batch were new text: Spark's code cache
# missed, Janino compiled them again and the JIT compiled them again, on the executors' cores.
# In SQL the variables keep the names written (bench/README.md).
_NAME_IS_IDENTIFIER = f"k RLIKE {sql_text(f'^{IDENTIFIER}$')}"
_LAST_DOT = sql_text(r"\.$")


def _trusted(facets: str, prefix: str) -> Column:
    """The facets (`facets`, SQL naming a map of them) whose path is not listed as untrusted (a
    facet that broke its schema). Most events list none: their facets are not filtered (a path
    built and looked up per facet), as `headwater.events.facets.facet_path` writes it: `prefix`
    (SQL giving the container's path and a dot) and the name for a name that is an identifier,
    else the name quoted as JSON in brackets (`run.facets["spark.logicalPlan"]`).

    Its lambda is SQL text, as every lambda of the pipeline (above)."""
    every = f"coalesce({facets}, CAST(map() AS MAP<STRING, STRING>))"
    path = (
        f"CASE WHEN {_NAME_IS_IDENTIFIER} THEN concat({prefix}, k) "
        f"ELSE concat(regexp_replace({prefix}, {_LAST_DOT}, ''), to_json(array(k))) END"
    )
    return F.expr(
        f"CASE WHEN size(untrusted) = 0 THEN {every} "
        f"ELSE map_filter({every}, (k, v) -> NOT array_contains(untrusted, {path})) END"
    )


# ---------------------------------------------------------------------------------------------
# Parsing and exploding
# ---------------------------------------------------------------------------------------------
def parse_events(raw: DataFrame) -> DataFrame:
    """Compact rows → rows with the parsed core (`doc` of an OpenLineage event, its facets
    name → hash; `generic` of a generic one; a generic payload is never read as OpenLineage,
    whatever keys it carries) and the `untrusted` facet paths; the facet value rows pass through
    (`facet_hash`, `facet_value`: see `events_of` and `values_of`)."""
    generic = F.col("kind") == GENERIC_KIND
    return raw.select(
        "seq",
        "kind",
        "run_id",
        "parent_run_id",
        "root_run_id",
        "event_type",
        "event_time",
        F.when(~generic, F.from_json("payload", PAYLOAD_SCHEMA)).alias("doc"),
        F.when(generic, parse_generic(F.col("payload"))).alias("generic"),
        F.coalesce(
            F.from_json("untrusted_facets", ArrayType(StringType())), F.array().cast("array<string>")
        ).alias("untrusted"),
        "facet_hash",
        "facet_value",
    )


def events_of(parsed: DataFrame) -> DataFrame:
    """The events of parsed compact rows, but those whose own identities are over the limits of
    `headwater.events.limits`: ingest refuses them now, and one stored before the limits would
    key rows beyond what PostgreSQL's indexes take, failing every pass."""
    return parsed.where(F.col("facet_hash").isNull() & _within_limits())


def fits(text: Column | str, limit: int) -> Column:
    """Whether `text` is at most `limit` UTF-8 bytes long (NULL fits: it keys nothing)."""
    return F.coalesce(F.octet_length(text) <= limit, F.lit(True))


def named_within_limits(entity: str) -> str:
    """SQL: whether the namespace and name of `entity` (SQL naming a struct with both, a lambda's
    variable included) are within their limits (NULL fits), as `fits` reads them. In SQL text
    because lambdas are (above); the struct columns use it too, so the rule is written once."""
    return " AND ".join(
        f"coalesce(octet_length({entity}.{key}) <= {limit}, true)"
        for key, limit in (("namespace", MAX_NAMESPACE_BYTES), ("name", MAX_NAME_BYTES))
    )


def _within_limits() -> Column:
    checks = [
        *(fits(column, MAX_RUN_ID_BYTES) for column in ("run_id", "parent_run_id", "root_run_id")),
        F.expr(named_within_limits("doc.job")),
        F.expr(named_within_limits("doc.dataset")),
        *(
            F.coalesce(F.expr(f"forall(doc.{side}, entity -> {named_within_limits('entity')})"), F.lit(True))
            for side in ("inputs", "outputs")
        ),
    ]
    return reduce(operator.and_, checks)


# The text at each top-level key of a facet value that a lookup reads (`Key`). A batch's distinct
# values are parsed once, all these keys in one pass (`values_of`: json_tuple), instead of once per
# lookup and field with get_json_object: that opened a reader per field, ~20 per value, and per-run
# facets (nominalTime, parent) make most of a large batch's values distinct (253,000 in a batch of
# 201,000 events; JSON parsing was a fifth of the JVM's profile samples).
KEYS = (
    "name",  # dataSource
    "uri",
    "fields",  # schema
    "datasetVersion",  # version
    "lifecycleStateChange",  # lifecycleStateChange
    "_deleted",  # any facet
    "identifiers",  # symlinks
    "nominalStartTime",  # nominalTime
    "nominalEndTime",
    "type",  # sourceCodeLocation (`_LOCATION_KEYS`)
    "url",
    "repoUrl",
    "path",
    "version",
    "tag",
    "branch",
    "query",  # sql
    "job",  # parent: the object of `NESTED`
)
# paths below a top-level key (parent: the parent run's job), read where that key holds an object
NESTED = ("job.namespace", "job.name")


def key_column(path: str) -> str:
    """The column of the values frame holding the text at `path`."""
    return "at_" + path.replace(".", "_")


@dataclass(frozen=True)
class FacetValues:
    """The distinct facet values (hash, value) a batch's events name, with the text at each of
    `KEYS` and `NESTED` parsed once (a column each: `key_column`); for a small batch the driver read,
    the same as a literal map too, which lookups read without a join (each join with a broadcast
    side is a Spark job of its own: about half a second of a one-event pass)."""

    frame: DataFrame
    literal: Column | None = None


def values_of(parsed: DataFrame, inline: dict[str, str] | None = None) -> FacetValues:
    """The distinct facet values the events of parsed compact rows name; `inline`: the same, read
    in the driver, for a literal map (small batches only: a lookup in it scans its keys).

    The frame reads `KEYS` with one json_tuple per value, which reads a key as get_json_object
    reads "$.key" (a string unquoted, anything else as compact JSON, NULL where missing or where
    the value is not a JSON object); `NESTED` with get_json_object itself, only where the top-level
    key holds an object (its text starts with "{"; a string is unquoted, so the nested path is
    read with get_json_object, which finds nothing in a string that looks like an object). Values
    are canonical JSON (`headwater.pipeline.compact`: sorted keys, so no key twice, compact)."""
    rows = parsed.where(F.col("facet_hash").isNotNull())
    # A hash names one text (the hash is of the value's canonical bytes, and the text is those
    # bytes), so the distinct pairs are the distinct hashes. Spark finds distinct rows with a hash
    # aggregate, partly before the shuffle; keeping one value per hash (dropDuplicates) was a
    # sort aggregate, which sorted the batch's 250,000 values (bench/README.md).
    distinct = rows.select(F.col("facet_hash").alias("hash"), F.col("facet_value").alias("value")).distinct()
    tupled = [f"_tuple{i}" for i in range(len(KEYS))]
    keyed = distinct.select("hash", "value", F.json_tuple("value", *KEYS).alias(*tupled))
    value = F.col("value")
    # A lone surrogate (which only the standard library's canonical form holds, escaped: \udXXX)
    # fails json_tuple for every key, get_json_object only for the key holding it; such values
    # are read with get_json_object.
    escaped = value.contains("\\ud")
    top = {
        key: F.when(escaped, F.get_json_object(value, f"$.{key}")).otherwise(F.col(column))
        for key, column in zip(KEYS, tupled, strict=True)
    }
    nested = {
        path: F.when(top[path.split(".")[0]].startswith("{"), F.get_json_object(value, f"$.{path}"))
        for path in NESTED
    }
    frame = keyed.select(
        "hash", "value", *[text.alias(key_column(path)) for path, text in {**top, **nested}.items()]
    )
    if inline is None:
        return FacetValues(frame)
    # one literal, parsed once by the optimizer (constant folding), not a call into the JVM per value
    literal = F.from_json(F.lit(orjson.dumps(inline).decode()), MapType(StringType(), StringType()))
    return FacetValues(frame, literal)


Key = Callable[[str], Column]
"""A facet value's text at a path (one of `KEYS` or `NESTED`): get_json_object's "$.path"."""
Field = Callable[[Key], Column]  # an expression over the texts at a facet value's paths


def lookup(rows: DataFrame, ref: Column, values: FacetValues, **fields: Field) -> DataFrame:
    """`rows` with `fields`, expressions over the value of the facet value whose hash is `ref`
    (NULL where `ref` is NULL). Each field is computed once per distinct value, not per row, from
    the texts `values_of` parsed; the values of a batch are few (each distinct facet once), so
    they are broadcast (unless the batch is in one partition: `ONE_PARTITION`). With the values
    as a literal map, the fields are computed on the rows from the map instead, with
    get_json_object. (Few calls into the JVM: each DataFrame operation is analysed there, which
    small batches feel.)"""
    if values.literal is not None:
        value = values.literal[ref]

        def at(path: str) -> Column:
            return F.get_json_object(value, f"$.{path}")

        # NULL where there is no value, as the join gives (a field may be non-NULL on NULL input:
        # concat_ws of nothing is '')
        return rows.select(
            "*", *[F.when(value.isNotNull(), field(at)).alias(name) for name, field in fields.items()]
        )

    def parsed(path: str) -> Column:
        assert path in KEYS or path in NESTED, f"{path} is not read from facet values (KEYS, NESTED)"
        return F.col(key_column(path))

    known = values.frame.select(
        F.col("hash").alias("_found"), *[field(parsed).alias(name) for name, field in fields.items()]
    )
    # a value whose fields are all NULL gives what no value gives: only the others are broadcast
    # (most of a batch's values are not the facet a lookup reads)
    some = reduce(operator.or_, [F.col(name).isNotNull() for name in fields])
    side = known.where(some)
    if not one_partition(rows):  # in one partition, both sides are joined where they are
        side = F.broadcast(side)
    return rows.join(side, ref == F.col("_found"), "left").drop("_found")


def _values_named(hashes: DataFrame, values: FacetValues) -> DataFrame:
    """The values (hash, value) of the distinct `hash`es of a frame."""
    if values.literal is not None:
        return hashes.distinct().select("hash", values.literal[F.col("hash")].alias("value"))
    return values.frame.join(hashes.distinct(), "hash", "left_semi").select("hash", "value")


def _json(path: str) -> Field:
    """The text at `path` in a value (get_json_object's: a string unquoted, anything else as JSON)."""
    return lambda at: at(path)


_REF_COLUMNS = ["seq", "event_time", "run_id", "untrusted"]


def _side(events: DataFrame, side: str, role: str, io_key: str) -> DataFrame:
    """The datasets of one side of run and job events (`inputs` or `outputs`)."""

    def prefix(key: str) -> str:
        return f"concat({sql_text(side + '[')}, pos, {sql_text('].' + key + '.')})"

    return events.select(*_REF_COLUMNS, F.posexplode(f"doc.{side}").alias("pos", "d")).select(
        *_REF_COLUMNS,
        F.lit(role).alias("role"),
        "d.namespace",
        "d.name",
        _trusted("d.facets", prefix("facets")).alias("facets"),
        _trusted(f"d.{io_key}", prefix(io_key)).alias("io_facets"),
    )


def dataset_refs(events: DataFrame) -> DataFrame:
    """Every dataset an event names: role input, output or static (DatasetEvent), with its
    trusted dataset facets and input/output facets."""
    common = _REF_COLUMNS
    inputs = _side(events, "inputs", "input", "inputFacets")
    outputs = _side(events, "outputs", "output", "outputFacets")
    static = events.where(F.col("doc.dataset").isNotNull()).select(
        *common,
        F.lit("static").alias("role"),
        F.col("doc.dataset.namespace").alias("namespace"),
        F.col("doc.dataset.name").alias("name"),
        _trusted("doc.dataset.facets", sql_text("dataset.facets.")).alias("facets"),
        F.create_map().cast(_FACETS).alias("io_facets"),
    )
    refs = union(inputs, outputs, static)
    return refs.withColumn("node_id", dataset_node(F.col("namespace"), F.col("name"))).drop("untrusted")


def job_refs(events: DataFrame) -> DataFrame:
    """The job of every run and job event, with its trusted job facets."""
    return events.where(F.col("doc.job.name").isNotNull()).select(
        "seq",
        "event_time",
        "run_id",
        F.col("doc.job.namespace").alias("namespace"),
        F.col("doc.job.name").alias("name"),
        job_node(F.col("doc.job.namespace"), F.col("doc.job.name")).alias("node_id"),
        _trusted("doc.job.facets", sql_text("job.facets.")).alias("facets"),
    )


# ---------------------------------------------------------------------------------------------
# Entities
# ---------------------------------------------------------------------------------------------
def namespaces(datasets: DataFrame, jobs: DataFrame) -> DataFrame:
    names = union(datasets.select("namespace", "event_time"), jobs.select("namespace", "event_time"))
    return names.groupBy(F.col("namespace").alias("name")).agg(
        F.min("event_time").alias("created_at"), F.max("event_time").alias("updated_at")
    )


def with_sources(refs: DataFrame, values: FacetValues) -> DataFrame:
    """Dataset references with the source their dataSource facet names (`source_name`: its name,
    else, or when over MAX_NAME_BYTES, the dataset's namespace; `source_uri`), NULL without one."""
    found = lookup(
        refs, F.col("facets")["dataSource"], values, _source=_json("name"), source_uri=_json("uri")
    )
    source = F.when(fits("_source", MAX_NAME_BYTES), F.col("_source"))  # a longer name keys nothing
    named = F.when(F.col("facets")["dataSource"].isNotNull(), F.coalesce(source, "namespace"))
    return found.withColumn("source_name", named).drop("_source")


def sources(refs: DataFrame) -> DataFrame:
    """Sources from the dataSource facet (name, uri); the uri of the latest mention wins."""
    with_source = refs.where(F.col("source_name").isNotNull()).select(
        F.col("source_name").alias("name"),
        F.col("source_uri").alias("uri"),
        "event_time",
        "seq",
    )
    latest = F.max(F.struct("event_time", "seq", "uri"))
    return with_source.groupBy("name").agg(
        latest.uri.alias("uri"),
        F.min("event_time").alias("created_at"),
        F.max("event_time").alias("updated_at"),
        latest.event_time.alias("set_time"),
        latest.seq.alias("set_seq"),
    )


def _latest_value(value: Column) -> Column:
    return F.max(F.when(value.isNotNull(), F.struct("event_time", "seq", value.alias("v")))).getField("v")


def dataset_versions(run_refs: DataFrame, values: FacetValues) -> DataFrame:
    """The version each run wrote of each of its outputs.

    Its identity is the dataset, its schema fields, its datasetVersion and its lifecycle state,
    each the latest the run's events give (a START without schema and a COMPLETE with one are one
    write); not the run id: runs that write the same content share one version.
    """
    outputs = run_refs.where((F.col("role") == "output") & F.col("run_id").isNotNull())
    facets = F.col("facets")
    outputs = lookup(outputs, facets["schema"], values, _schema=lambda at: schema_hash(at("fields")))
    outputs = lookup(outputs, facets["version"], values, _version=_json("datasetVersion"))
    outputs = lookup(
        outputs, facets["lifecycleStateChange"], values, _lifecycle=_json("lifecycleStateChange")
    )
    written = outputs.groupBy("run_id", "node_id").agg(
        _latest_value(F.col("_schema")).alias("schema_hash"),
        _latest_value(F.col("_version")).alias("version_label"),
        _latest_value(F.col("_lifecycle")).alias("lifecycle"),
        F.max(F.struct("event_time", "seq")).alias("w"),
    )
    return written.select(
        "node_id",
        "run_id",
        F.col("w.event_time").alias("event_time"),
        F.col("w.seq").alias("seq"),
        "schema_hash",
        "version_label",
        "lifecycle",
        digest(F.col("node_id"), F.col("schema_hash"), F.col("version_label"), F.col("lifecycle")).alias(
            "version_id"
        ),
    )


def schema_hash(fields: Column) -> Column:
    """The key of a schema: the hash of its fields' JSON (NULL without fields)."""
    return F.when(fields.isNotNull(), digest(fields))


def dataset_version_rows(versions: DataFrame) -> DataFrame:
    first = F.min(F.struct("event_time", "seq", "run_id"))
    return versions.groupBy("version_id", "node_id", "schema_hash", "version_label", "lifecycle").agg(
        first.event_time.alias("created_at"),
        first.seq.alias("created_seq"),
        first.run_id.alias("created_by_run"),
    )


def dataset_version_runs(versions: DataFrame) -> DataFrame:
    return versions.select("version_id", "run_id", "event_time", F.col("seq").alias("event_seq"))


def datasets(refs: DataFrame, versions: DataFrame) -> DataFrame:
    """Datasets: first and last mention, the latest source, the latest written version."""
    source = F.when(F.col("source_name").isNotNull(), F.struct("event_time", "seq", "source_name"))
    base = refs.groupBy("node_id", "namespace", "name").agg(
        F.min("event_time").alias("created_at"),
        F.max("event_time").alias("updated_at"),
        F.max(source).alias("src"),
    )
    latest = versions.groupBy("node_id").agg(F.max(F.struct("event_time", "seq", "version_id")).alias("v"))
    return base.join(latest, "node_id", "left").select(
        "node_id",
        "namespace",
        "name",
        "created_at",
        "updated_at",
        F.col("src.source_name").alias("source_name"),
        F.col("src.event_time").alias("source_time"),
        F.col("src.seq").alias("source_seq"),
        F.col("v.version_id").alias("current_version"),
        F.col("v.event_time").alias("version_time"),
        F.col("v.seq").alias("version_seq"),
    )


def named_value() -> Column:
    """A facet row (name, value_hash) the model keeps: with a value, and a name within its limit
    (a longer one, stored before the limit, would not fit the facet tables' keys)."""
    return F.col("value_hash").isNotNull() & fits("name", MAX_NAME_BYTES)


def asserted(history: DataFrame, name: str, values: FacetValues) -> DataFrame:
    """The distinct values (hash, value) asserted (not deleted) as facet `name` in `history`."""
    hashes = history.where((F.col("name") == name) & (F.col("deleted") == 0)).select(
        F.col("value_hash").alias("hash")
    )
    return _values_named(hashes, values)


def facet_values(values: FacetValues, *frames: DataFrame) -> DataFrame:
    """The values the frames' `value_hash` name (each distinct value of the batch once)."""
    used = union(*[frame.select(F.col("value_hash").alias("hash")) for frame in frames])
    return _values_named(used, values)


def symlinks(refs: DataFrame, values: FacetValues) -> DataFrame:
    """dataset → alias pairs from the symlinks facet (any time it was asserted); an alias over the
    limits of `headwater.events.limits` is left out."""
    identifiers = F.from_json(
        F.col("_identifiers"),
        ArrayType(
            StructType(
                [
                    StructField("namespace", StringType()),
                    StructField("name", StringType()),
                    StructField("type", StringType()),
                ]
            )
        ),
    )
    linked = refs.where(F.col("facets")["symlinks"].isNotNull())
    linked = lookup(linked, F.col("facets")["symlinks"], values, _identifiers=_json("identifiers"))
    rows = linked.select("node_id", F.explode(identifiers).alias("i"))
    identified = F.col("i.name").isNotNull() & F.col("i.namespace").isNotNull()
    rows = rows.where(identified & F.expr(named_within_limits("i"))).select(
        "node_id",
        dataset_node(F.col("i.namespace"), F.col("i.name")).alias("alias_node_id"),
        F.coalesce(F.col("i.type"), F.lit("")).alias("type"),
    )
    rows = rows.where(F.col("node_id") != F.col("alias_node_id"))
    return rows.groupBy("node_id", "alias_node_id").agg(F.min("type").alias("type"))


# ---------------------------------------------------------------------------------------------
# Runs and jobs
# ---------------------------------------------------------------------------------------------
def _micros(text: Column) -> Column:
    """Fixed-width UTC text (100 ns) → microseconds since the epoch."""
    return F.unix_micros(F.to_timestamp(F.substring(text, 1, 26), "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"))


def runs(run_events: DataFrame, values: FacetValues) -> DataFrame:
    """One row per run, from all of its events: the state by event semantics, times from eventTime.

    A terminal event (COMPLETE, FAIL, ABORT) outranks START and RUNNING whatever their times or
    arrival order; among events of one rank the latest eventTime (then seq) decides.
    """
    ev = run_events.where(F.col("run_id").isNotNull() & F.col("doc.job.name").isNotNull())
    rank = (
        F.when(F.col("event_type").isin(*TERMINAL), 2)
        .when(F.col("event_type").isin("START", "RUNNING"), 1)
        .otherwise(0)
    )
    state_map = F.create_map(*[F.lit(x) for pair in _STATES.items() for x in pair])
    ev = ev.withColumn("rank", rank).withColumn(
        "job_node_id", job_node(F.col("doc.job.namespace"), F.col("doc.job.name"))
    )
    decided = F.max(F.struct("rank", "event_time", "seq", "event_type"))
    latest = F.max(F.struct("event_time", "seq", "job_node_id"))
    out = ev.groupBy("run_id").agg(
        latest.job_node_id.alias("job_node_id"),
        decided.alias("decided"),
        F.min(F.when(F.col("event_type") == "START", F.col("event_time"))).alias("start_time"),
        F.min(F.when(F.col("rank") == 1, F.col("event_time"))).alias("running_time"),
        F.min("event_time").alias("first_event_time"),
        F.max("event_time").alias("last_event_time"),
        F.max(
            F.when(F.col("parent_run_id").isNotNull(), F.struct("event_time", "seq", "parent_run_id"))
        ).alias("p"),
        F.max(F.when(F.col("root_run_id").isNotNull(), F.struct("event_time", "seq", "root_run_id"))).alias(
            "r"
        ),
        F.max(
            F.when(
                F.col("doc.run.facets")["nominalTime"].isNotNull(),
                F.struct("event_time", "seq", F.col("doc.run.facets")["nominalTime"].alias("v")),
            )
        ).alias("n"),
        F.count(F.lit(1)).alias("event_count"),
        F.max("seq").alias("updated_seq"),
    )
    out = lookup(
        out,
        F.col("n.v"),
        values,
        nominal_start=_json("nominalStartTime"),
        nominal_end=_json("nominalEndTime"),
    )
    started = F.coalesce("start_time", "running_time", "first_event_time")
    ended = F.when(F.col("decided.rank") == 2, F.col("decided.event_time"))
    return out.select(
        "run_id",
        "job_node_id",
        state_map[F.col("decided.event_type")].alias("state"),
        F.col("decided.event_time").alias("state_time"),
        started.alias("started_at"),
        ended.alias("ended_at"),
        F.when(ended.isNotNull(), F.floor((_micros(ended) - _micros(started)) / 1000).cast("long")).alias(
            "duration_ms"
        ),
        "nominal_start",
        "nominal_end",
        F.col("p.parent_run_id").alias("parent_run_id"),
        F.coalesce(F.col("r.root_run_id"), F.col("p.parent_run_id"), F.col("run_id")).alias("root_run_id"),
        "first_event_time",
        "last_event_time",
        "event_count",
        "updated_seq",
    )


def run_facets(run_events: DataFrame) -> DataFrame:
    """Run facets merged across the run's events: for one name, the latest eventTime wins."""
    rows = run_events.where(F.col("run_id").isNotNull()).select(
        "run_id",
        "event_time",
        "seq",
        F.explode(_trusted("doc.run.facets", sql_text("run.facets."))).alias("name", "value_hash"),
    )
    latest = F.max(F.struct("event_time", "seq", "value_hash"))
    return (
        rows.where(named_value())
        .groupBy("run_id", "name")
        .agg(latest.value_hash.alias("value_hash"), latest.event_time.alias("event_time"))
    )


def run_io(refs: DataFrame) -> DataFrame:
    return (
        refs.where(F.col("run_id").isNotNull() & F.col("role").isin("input", "output"))
        .select("run_id", F.col("role").alias("direction"), "node_id")
        .dropDuplicates()
    )


def run_io_facets(refs: DataFrame) -> DataFrame:
    rows = refs.where(F.col("run_id").isNotNull() & F.col("role").isin("input", "output")).select(
        "run_id",
        F.col("role").alias("direction"),
        "node_id",
        "event_time",
        "seq",
        F.explode("io_facets").alias("name", "value_hash"),
    )
    latest = F.max(F.struct("event_time", "seq", "value_hash"))
    return (
        rows.where(named_value())
        .groupBy("run_id", "direction", "node_id", "name")
        .agg(latest.value_hash.alias("value_hash"), latest.event_time.alias("event_time"))
    )


_LOCATION_KEYS = ("type", "url", "repoUrl", "path", "version", "tag", "branch")


def run_job_versions(run_jobs: DataFrame, io: DataFrame, values: FacetValues) -> DataFrame:
    """The job version each run ran: from the job, its code location and SQL (latest in the run)
    and the run's sorted inputs and outputs."""
    facets = run_jobs.where(F.col("run_id").isNotNull())
    location = F.max(
        F.when(
            F.col("facets")["sourceCodeLocation"].isNotNull(),
            F.struct("event_time", "seq", F.col("facets")["sourceCodeLocation"].alias("v")),
        )
    )
    query = F.max(
        F.when(
            F.col("facets")["sql"].isNotNull(),
            F.struct("event_time", "seq", F.col("facets")["sql"].alias("v")),
        )
    )
    code = facets.groupBy("run_id", F.col("node_id").alias("job_node_id")).agg(
        location.v.alias("location_facet"), query.v.alias("sql_facet")
    )
    sides = io.groupBy("run_id").agg(
        F.array_sort(F.collect_set(F.when(F.col("direction") == "input", F.col("node_id")))).alias("inputs"),
        F.array_sort(F.collect_set(F.when(F.col("direction") == "output", F.col("node_id")))).alias(
            "outputs"
        ),
    )

    def location_text(at: Key) -> Column:
        return F.concat_ws(" ", *[at(k) for k in _LOCATION_KEYS])

    code = lookup(code, F.col("location_facet"), values, source_code_location=location_text)
    code = lookup(code, F.col("sql_facet"), values, sql=_json("query"))
    joined = code.join(sides, "run_id", "left")
    return joined.select(
        "run_id",
        "job_node_id",
        "source_code_location",
        "sql",
        F.coalesce("inputs", F.array().cast("array<string>")).alias("inputs"),
        F.coalesce("outputs", F.array().cast("array<string>")).alias("outputs"),
    ).withColumn(
        "version_id",
        digest(
            F.col("job_node_id"),
            F.col("source_code_location"),
            F.col("sql"),
            F.array_join("inputs", "\u001e"),
            F.array_join("outputs", "\u001e"),
        ),
    )


def job_versions(versions: DataFrame) -> DataFrame:
    return versions.select(
        "version_id", F.col("job_node_id").alias("node_id"), "source_code_location", "sql"
    ).dropDuplicates(["version_id"])


def job_version_io(versions: DataFrame) -> DataFrame:
    ins = versions.select(
        "version_id", F.lit("input").alias("direction"), F.explode("inputs").alias("node_id")
    )
    outs = versions.select(
        "version_id", F.lit("output").alias("direction"), F.explode("outputs").alias("node_id")
    )
    return union(ins, outs).dropDuplicates()


def runs_with_versions(run_rows: DataFrame, versions: DataFrame) -> DataFrame:
    v = versions.select("run_id", F.col("version_id").alias("job_version"))
    return run_rows.join(v, "run_id", "left")


def jobs(job_rows: DataFrame, run_rows: DataFrame) -> DataFrame:
    """Jobs: first and last mention; the version of the latest run (by start time, then run id)."""
    times = job_rows.groupBy("node_id", "namespace", "name").agg(
        F.min("event_time").alias("created_at"), F.max("event_time").alias("updated_at")
    )
    latest = run_rows.groupBy(F.col("job_node_id").alias("node_id")).agg(
        F.max(F.struct(F.col("started_at"), F.col("run_id"), F.col("job_version"))).alias("l")
    )
    return times.join(latest, "node_id", "left").select(
        "node_id",
        "namespace",
        "name",
        "created_at",
        "updated_at",
        F.col("l.job_version").alias("current_version"),
        F.col("l.run_id").alias("latest_run_id"),
        F.col("l.started_at").alias("latest_run_time"),
    )


def job_parents(events: DataFrame, values: FacetValues) -> DataFrame:
    """parent job → child job pairs from the parent run facet (one naming its job beyond the
    limits of `headwater.events.limits` is untrusted, and left out here too: its node id would
    not fit the model's index)."""
    parent = F.col("doc.run.facets")["parent"]
    rows = events.where(parent.isNotNull() & F.col("doc.job.name").isNotNull())
    rows = lookup(rows, parent, values, _ns=_json("job.namespace"), _name=_json("job.name"))
    rows = rows.where(  # NULL (a parent facet naming no job) is left out too
        (F.octet_length("_ns") <= MAX_NAMESPACE_BYTES) & (F.octet_length("_name") <= MAX_NAME_BYTES)
    )
    return rows.select(
        job_node(F.col("_ns"), F.col("_name")).alias("parent_node_id"),
        job_node(F.col("doc.job.namespace"), F.col("doc.job.name")).alias("child_node_id"),
    ).dropDuplicates()
