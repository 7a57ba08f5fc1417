"""Spark on a Hive warehouse: tables dropped, created again and known by an alias keep their lineage.

One Spark application emits: drop t1 and t2 (`lifecycleStateChange: DROP`), create them again
(`CREATE`), insert into t1, then read t1 and insert into t2; its next run drops t1 again. Each
dataset is named by its path (`hdfs://…`, `/user/hive/warehouse/t1`) and declares its Hive table
in a `symlinks` facet (`hdfs://…/user/hive/warehouse`, `default.t1`), as Spark's OpenLineage
integration does. Whatever the order the events arrive in, and however they are split across
pipeline passes, the lineage holds t1 → insert → t2 and insert → t1, found by the path or by the
table name, and t1 stays in it marked as dropped, with the time, while t2 is not.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.sql import SparkSession

from headwater.pipeline.runner import Pipeline
from headwater.query.lineage import LineageQuery, lineage
from headwater.query.lineage_json import warehouse_graph
from headwater.store import EventStore
from headwater.store.model.compare import model_rows
from tests.pipeline.test_pipeline import ingest

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.25.0/integration/spark"
SPEC = "https://openlineage.io/spec"
STEPS = (  # (job, inputs, outputs, lifecycle state change of the outputs)
    ("execute_drop_table.default_t1", (), ("t1",), "DROP"),
    ("execute_drop_table.default_t2", (), ("t2",), "DROP"),
    ("execute_create_table.default_t1", (), ("t1",), "CREATE"),
    ("execute_create_table.default_t2", (), ("t2",), "CREATE"),
    ("execute_insert_into_hive_table.default_t1", (), ("t1",), None),
    ("execute_insert_into_hive_table.default_t2", ("t1",), ("t2",), None),
    ("execute_drop_table.default_t1", (), ("t1",), "DROP"),  # the next run of the application starts
)


def _facet(name: str, version: str, **fields: Any) -> dict[str, Any]:
    return {
        "_producer": PRODUCER,
        "_schemaURL": f"{SPEC}/facets/{version}/{name}.json#/$defs/{name}",
        **fields,
    }


def _dataset(cluster: str, table: str, lifecycle: str | None) -> dict[str, Any]:
    facets = {
        "symlinks": _facet(
            "SymlinksDatasetFacet",
            "1-0-1",
            identifiers=[
                {"namespace": f"{cluster}/user/hive/warehouse", "name": f"default.{table}", "type": "TABLE"}
            ],
        )
    }
    if lifecycle != "DROP":
        facets["schema"] = _facet("SchemaDatasetFacet", "1-1-1", fields=[{"name": "a", "type": "integer"}])
    if lifecycle is not None:
        facets["lifecycleStateChange"] = _facet(
            "LifecycleStateChangeDatasetFacet", "1-0-1", lifecycleStateChange=lifecycle
        )
    return {"namespace": cluster, "name": f"/user/hive/warehouse/{table}", "facets": facets}


def application(cluster: str, namespace: str) -> list[dict[str, Any]]:
    """The application's events in time order: a START and a COMPLETE per step, a second apart."""
    app_run = str(uuid.uuid4())
    start = datetime(2024, 11, 26, 10, 0, tzinfo=UTC)
    parent = _facet(
        "ParentRunFacet", "1-1-0", run={"runId": app_run}, job={"namespace": namespace, "name": "app"}
    )
    events = []
    for number, (job, inputs, outputs, lifecycle) in enumerate(STEPS):
        run_id = str(uuid.uuid4())
        for offset, event_type in enumerate(("START", "COMPLETE")):
            time = start + timedelta(seconds=2 * number + offset)
            events.append(
                {
                    "eventType": event_type,
                    "eventTime": time.isoformat().replace("+00:00", "Z"),
                    "run": {"runId": run_id, "facets": {"parent": parent}},
                    "job": {"namespace": namespace, "name": f"app.{job}"},
                    "inputs": [_dataset(cluster, t, None) for t in inputs],
                    "outputs": [_dataset(cluster, t, lifecycle) for t in outputs],
                    "producer": PRODUCER,
                    "schemaURL": f"{SPEC}/2-0-2/OpenLineage.json#/$defs/RunEvent",
                }
            )
    return events


def edges(store: EventStore, cluster: str, namespace: str) -> set[tuple[str, str]]:
    """Every edge of t2's upstream, asked by the table's name, with short names for its nodes;
    and the lifecycle states its vertices show."""
    t1, t2 = (f"dataset:{cluster}:/user/hive/warehouse/{t}" for t in ("t1", "t2"))
    result = lineage(store, LineageQuery(f"dataset:{cluster}/user/hive/warehouse:default.t2", "upstream"))
    assert result.root == t2
    vertices = {v["nodeID"]: v["properties"] for v in warehouse_graph(result, "upstream")["vertices"]}
    assert vertices[t1]["lifecycleState"] == "DROP"
    assert vertices[t1]["lifecycleStateTime"] == "2024-11-26T10:00:13Z"  # the second drop's COMPLETE
    assert "lifecycleState" not in vertices[t2]  # its latest write, the insert, declared none

    def name(node_id: str) -> str:
        return {t1: "t1", t2: "t2"}.get(node_id) or node_id.removeprefix(f"job:{namespace}:app.")

    return {(name(e.src), name(e.dst)) for e in result.edges}


EXPECTED = {
    ("t1", "execute_insert_into_hive_table.default_t2"),
    ("execute_insert_into_hive_table.default_t2", "t2"),
    ("execute_insert_into_hive_table.default_t1", "t1"),
    ("execute_create_table.default_t1", "t1"),
    ("execute_create_table.default_t2", "t2"),
    ("execute_drop_table.default_t1", "t1"),
    ("execute_drop_table.default_t2", "t2"),
}


def test_dropped_recreated_aliased_tables_keep_their_lineage_whatever_the_arrival_order(
    spark: SparkSession, store: EventStore
) -> None:
    # One application per arrival order, each on its own cluster, all in one store.
    apps = {order: (f"hdfs://cluster-{order}", f"spark-{order}") for order in ("a", "b", "c", "d")}
    events = {order: application(*names) for order, names in apps.items()}
    ddl, inserts, again = slice(0, 8), slice(8, 12), slice(12, 14)
    first = events["a"] + events["b"][::-1] + events["c"][inserts] + events["d"][ddl]
    late = events["c"][ddl][::-1] + events["c"][again] + events["d"][inserts] + events["d"][again]

    pipeline = Pipeline(spark, store, dogfood=False)
    ingest(store, first)
    pipeline.run_once()
    for order in ("a", "b"):
        assert edges(store, *apps[order]) == EXPECTED, order
    ingest(store, late)
    pipeline.run_once()
    for order, names in apps.items():
        assert edges(store, *names) == EXPECTED, order

    model = model_rows(store)
    pipeline.rebuild()
    assert model_rows(store) == model
