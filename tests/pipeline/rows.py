"""Tiny event DataFrames for the transformation tests: rows shaped like the data source's."""

from __future__ import annotations

from typing import Any

import orjson
from pyspark.sql import DataFrame, SparkSession

from headwater.pipeline import transforms as tr
from headwater.pipeline.compact import Compactor
from headwater.pipeline.source import EVENT_SCHEMA
from headwater.pipeline.transforms import parse_events

RUN_SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
PRODUCER = "https://example.com/tests"

# dataset→dataset pairs through a job (each input to each output but itself), as queries join them
CONDENSED_SQL = (
    "SELECT DISTINCT i.src_id, o.dst_id FROM lineage_edges i "
    "JOIN lineage_edges o ON o.src_id = i.dst_id AND o.edge_type = 'output' "
    "WHERE i.edge_type = 'input' AND i.src_id <> o.dst_id"
)


def facet(**fields: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/X.json", **fields}


def dataset(namespace: str, name: str, **facets: Any) -> dict[str, Any]:
    return {"namespace": namespace, "name": name, "facets": facets}


def run_event(
    run_id: str,
    event_type: str,
    time: str,
    *,
    job: tuple[str, str] = ("ns", "job"),
    inputs: list[dict[str, Any]] | None = None,
    outputs: list[dict[str, Any]] | None = None,
    run_facets: dict[str, Any] | None = None,
    job_facets: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "eventType": event_type,
        "eventTime": time,
        "run": {"runId": run_id, "facets": run_facets or {}},
        "job": {"namespace": job[0], "name": job[1], "facets": job_facets or {}},
        "inputs": inputs or [],
        "outputs": outputs or [],
        "producer": PRODUCER,
        "schemaURL": RUN_SCHEMA_URL,
    }


def dataset_event(time: str, ds: dict[str, Any]) -> dict[str, Any]:
    return {
        "eventTime": time,
        "dataset": ds,
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
    }


def stored(
    spark: SparkSession, docs: list[dict[str, Any]], untrusted: dict[int, list[str]] | None = None
) -> DataFrame:
    """The docs as parsed compact rows (events, then their facet values), seq 1, 2, … in list
    order (= arrival order).

    eventTime must be given in the store's fixed-width form (YYYY-MM-DDTHH:MM:SS.fffffffZ)."""
    rows = []
    for seq, doc in enumerate(docs, start=1):
        run = doc.get("run") or {}
        parent = ((run.get("facets") or {}).get("parent") or {}).get("run", {}).get("runId")
        rows.append(
            (
                seq,
                "run" if "run" in doc else ("dataset" if "dataset" in doc else "job"),
                run.get("runId"),
                parent,
                None,
                doc.get("eventType"),
                doc["eventTime"],
                (doc.get("job") or {}).get("namespace"),
                (doc.get("job") or {}).get("name"),
                (doc.get("dataset") or {}).get("namespace"),
                (doc.get("dataset") or {}).get("name"),
                orjson.dumps((untrusted or {}).get(seq, [])).decode(),
                orjson.dumps(doc).decode(),
                None,  # core: none, the payload is whole
                None,  # facet_count: a whole payload, split as the data source splits one
            )
        )
    compact = Compactor(lambda _hashes: {}).rows(rows)
    return parse_events(spark.createDataFrame(compact, EVENT_SCHEMA))


def t(second: int) -> str:
    """A store-format time `second` seconds after 2026-01-01T00:00:00."""
    minutes, seconds = divmod(second, 60)
    return f"2026-01-01T00:{minutes:02d}:{seconds:02d}.0000000Z"


def rows(df: DataFrame, *columns: str) -> list[tuple[Any, ...]]:
    """The frame's rows as tuples of `columns`, sorted."""
    return sorted(tuple(r[c] for c in columns) for r in df.collect())


def parts(
    spark: SparkSession, docs: list[dict[str, Any]], *, inline: bool = False, **kw: Any
) -> tuple[DataFrame, tr.FacetValues]:
    """The docs' events and the facet values they name, as the data source gives them; with
    `inline`, the values as a literal map too (as for a small batch the driver read)."""
    parsed = stored(spark, docs, **kw)
    values = tr.values_of(parsed)
    if inline:
        values = tr.values_of(parsed, {r["hash"]: r["value"] for r in values.frame.collect()})
    return tr.events_of(parsed), values
