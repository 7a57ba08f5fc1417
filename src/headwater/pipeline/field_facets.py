"""The facets a Python function parses, once per distinct value: a schema's fields, nested ones
flattened to dotted paths (`schema_fields`), and a column lineage facet's edges
(`column_lineage`). Both tables are keyed by the value's hash, so a value seen in many events,
batches or datasets is parsed once and stored once."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, BooleanType, IntegerType, StringType, StructField, StructType

from headwater.events.limits import (
    MAX_NAME_BYTES,
    MAX_NAMESPACE_BYTES,
    MAX_TRANSFORMATION_BYTES,
    too_long,
)
from headwater.events.schema_fields import SchemaField, flatten_fields
from headwater.pipeline import transforms as t
from headwater.pipeline.transforms import FacetValues

_FIELD = StructType(
    [
        StructField("path", StringType()),
        StructField("position", IntegerType()),
        StructField("type", StringType()),
        StructField("description", StringType()),
    ]
)


@F.udf(returnType=ArrayType(_FIELD), useArrow=False)
def _flatten_fields(fields_json: str | None) -> list[SchemaField]:
    return flatten_fields(fields_json)


def schema_fields(history: DataFrame, values: FacetValues) -> DataFrame:
    """Fields (nested ones flattened to dotted paths) of every distinct schema, by schema hash."""
    schemas = (
        t.asserted(history, "schema", values)
        .select(F.get_json_object("value", "$.fields").alias("fields"))
        .where(F.col("fields").isNotNull())
        .dropDuplicates()
        .select(
            t.schema_hash(F.col("fields")).alias("schema_hash"),
            F.explode(_flatten_fields("fields")).alias("f"),
        )
    )
    fields = t.whole(schemas.select("schema_hash", "f.path", "f.position", "f.type", "f.description"))
    return fields.dropDuplicates(["schema_hash", "path"])


_LINEAGE = StructType(
    [
        StructField("field", StringType()),
        StructField("input_node_id", StringType()),
        StructField("input_field", StringType()),
        StructField("type", StringType()),
        StructField("subtype", StringType()),
        StructField("description", StringType()),
        StructField("masking", BooleanType()),
    ]
)


@F.udf(returnType=ArrayType(_LINEAGE), useArrow=False)
def _lineage_rows(value: str | None) -> list[tuple[str, str, str, str, str, str | None, bool | None]]:
    """The rows of a column lineage facet value. A row whose key is over the limits of
    `headwater.events.limits` (a facet of a schema Headwater does not know, or stored before the
    limits) is left out: the key would not fit PostgreSQL's index."""
    import orjson

    try:
        facet = orjson.loads(value) if value else {}
    except orjson.JSONDecodeError:
        return []
    if not isinstance(facet, dict):
        return []
    rows: dict[tuple[str, str, str, str, str], tuple[str | None, bool | None]] = {}

    def put(key: tuple[str, str, str, str, str], extra: tuple[str | None, bool | None]) -> None:
        if not (too_long(key[3], MAX_TRANSFORMATION_BYTES) or too_long(key[4], MAX_TRANSFORMATION_BYTES)):
            rows[key] = extra

    def add(field: str, inputs: object, legacy: dict[str, object]) -> None:
        if not isinstance(inputs, list) or too_long(field, MAX_NAME_BYTES):
            return
        for source in inputs:
            if not isinstance(source, dict):
                continue
            ns, name, src_field = source.get("namespace"), source.get("name"), source.get("field")
            if not (isinstance(ns, str) and isinstance(name, str)):
                continue
            if too_long(ns, MAX_NAMESPACE_BYTES) or too_long(name, MAX_NAME_BYTES):
                continue
            if isinstance(src_field, str) and too_long(src_field, MAX_NAME_BYTES):
                continue
            node = f"dataset:{ns}:{name}"
            src = src_field if isinstance(src_field, str) else ""
            transformations = source.get("transformations")
            if isinstance(transformations, list) and transformations:
                for t in transformations:
                    if isinstance(t, dict):
                        kind = t.get("type") if isinstance(t.get("type"), str) else "DIRECT"
                        sub = t.get("subtype") if isinstance(t.get("subtype"), str) else ""
                        text = t.get("description") if isinstance(t.get("description"), str) else None
                        mask = t.get("masking") if isinstance(t.get("masking"), bool) else None
                        put((field, node, src, str(kind), str(sub)), (text, mask))
            else:  # deprecated form: transformationType / transformationDescription on the field
                legacy_type = legacy.get("transformationType")
                legacy_text = legacy.get("transformationDescription")
                kind = "INDIRECT" if legacy_type == "INDIRECT" else "DIRECT"
                sub = (
                    legacy_type
                    if isinstance(legacy_type, str) and legacy_type not in ("DIRECT", "INDIRECT")
                    else ""
                )
                text = legacy_text if isinstance(legacy_text, str) else None
                put((field, node, src, kind, sub), (text, None))

    fields = facet.get("fields")
    if isinstance(fields, dict):
        for name, spec in fields.items():
            if isinstance(spec, dict):
                add(name, spec.get("inputFields"), spec)
    dataset_level = facet.get("dataset")
    if isinstance(dataset_level, list):
        add("", dataset_level, {})
    return [(*key, *extra) for key, extra in sorted(rows.items())]


def column_lineage(history: DataFrame, values: FacetValues) -> DataFrame:
    """Column lineage edges of every distinct columnLineage facet value, keyed by its hash."""
    facets = t.asserted(history, "columnLineage", values).select(F.col("hash").alias("facet_hash"), "value")
    rows = facets.select("facet_hash", F.explode(_lineage_rows("value")).alias("c"))
    return rows.select(
        "facet_hash",
        "c.field",
        "c.input_node_id",
        "c.input_field",
        "c.type",
        "c.subtype",
        "c.description",
        F.col("c.masking").cast("int").alias("masking"),
    )
