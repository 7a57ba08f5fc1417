"""Building realistic OpenLineage events for tests."""

from __future__ import annotations

import json
import uuid
from importlib import resources
from typing import Any

PRODUCER = "https://github.com/example/headwater-tests/v1"
SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
FACET_URL = "https://openlineage.io/spec/facets/{version}/{name}.json#/$defs/{name}"


def facet(name: str, version: str = "1-0-0", **fields: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": FACET_URL.format(version=version, name=name), **fields}


def run_event(
    run_id: str | None = None,
    *,
    event_type: str = "START",
    event_time: str = "2024-05-01T10:00:00.000Z",
    namespace: str = "airflow",
    job: str = "etl.load_orders",
    inputs: list[dict[str, Any]] | None = None,
    outputs: list[dict[str, Any]] | None = None,
    run_facets: dict[str, Any] | None = None,
    parent: str | None = None,
    root: str | None = None,
) -> dict[str, Any]:
    facets = dict(run_facets or {})
    if parent is not None:
        parent_facet = facet(
            "ParentRunFacet", "1-1-0", run={"runId": parent}, job={"namespace": namespace, "name": "parent"}
        )
        if root is not None:
            parent_facet["root"] = {"run": {"runId": root}, "job": {"namespace": namespace, "name": "root"}}
        facets["parent"] = parent_facet
    return {
        "eventType": event_type,
        "eventTime": event_time,
        "run": {"runId": run_id or str(uuid.uuid4()), "facets": facets},
        "job": {"namespace": namespace, "name": job, "facets": {}},
        "inputs": inputs
        if inputs is not None
        else [{"namespace": "postgres://db:5432", "name": "shop.orders"}],
        "outputs": outputs
        if outputs is not None
        else [
            {
                "namespace": "s3://lake",
                "name": "orders_daily",
                "facets": {
                    "schema": facet("SchemaDatasetFacet", "1-1-1", fields=[{"name": "id", "type": "INT"}])
                },
            }
        ],
        "producer": PRODUCER,
        "schemaURL": SCHEMA,
    }


def nested_event(depth: int, *, job: str = "nested") -> bytes:
    """A RunEvent's JSON nesting exactly `depth` levels (its own braces the first): a run facet
    holding arrays inside arrays. As text, since a parser or a writer of Python values would
    recurse as deep."""
    deep = {"deep": {"_producer": PRODUCER, "_schemaURL": "https://e.x/D.json", "v": 0}}
    doc = run_event(job=job, inputs=[], outputs=[], run_facets=deep)
    levels = depth - 4  # the event, its run, the run's facets and the facet
    return json.dumps(doc).replace('"v": 0', '"v": ' + "[" * levels + "]" * levels).encode()


def migration_versions() -> list[int]:
    """The schema versions the migrations folder holds, in order (the same for both backends)."""
    folder = resources.files("headwater.store.sqlite.migrations")
    names = [entry.name for entry in folder.iterdir() if entry.name.endswith(".sql")]
    return sorted(int(name.split("_", 1)[0]) for name in names)
