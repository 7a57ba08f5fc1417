"""Schema fields and column lineage: the facets parsed by Python once per distinct value."""

from __future__ import annotations

from pyspark.sql import SparkSession

from headwater.pipeline import field_facets as ff
from headwater.pipeline import transforms as tr
from headwater.pipeline.facet_history import facet_history
from tests.pipeline.rows import dataset, facet, parts, rows, run_event, t


def test_schema_fields_are_flattened_with_paths(spark: SparkSession) -> None:
    fields = [
        {"name": "id", "type": "int"},
        {
            "name": "address",
            "type": "struct",
            "fields": [{"name": "city", "type": "string", "description": "c"}],
        },
    ]
    events, values = parts(
        spark, [run_event("r", "COMPLETE", t(1), outputs=[dataset("db", "t", schema=facet(fields=fields))])]
    )
    history = facet_history(tr.dataset_refs(events), values)
    assert rows(ff.schema_fields(history, values), "path", "position", "type", "description") == [
        ("address", 1, "struct", None),
        ("address.city", 2, "string", "c"),
        ("id", 0, "int", None),
    ]


def test_column_lineage_reads_new_and_deprecated_forms(spark: SparkSession) -> None:
    new_form = facet(
        fields={
            "total": {
                "inputFields": [
                    {
                        "namespace": "db",
                        "name": "orders",
                        "field": "amount",
                        "transformations": [
                            {
                                "type": "DIRECT",
                                "subtype": "AGGREGATION",
                                "description": "sum",
                                "masking": False,
                            }
                        ],
                    },
                ]
            }
        },
        dataset=[
            {
                "namespace": "db",
                "name": "orders",
                "field": "status",
                "transformations": [{"type": "INDIRECT", "subtype": "FILTER"}],
            }
        ],
    )
    old_form = facet(
        fields={
            "id": {
                "inputFields": [{"namespace": "db", "name": "users", "field": "id"}],
                "transformationType": "IDENTITY",
                "transformationDescription": "copied",
            }
        }
    )
    docs = [
        run_event(
            "r",
            "COMPLETE",
            t(1),
            outputs=[dataset("db", "a", columnLineage=new_form), dataset("db", "b", columnLineage=old_form)],
        )
    ]
    events, values = parts(spark, docs)
    history = facet_history(tr.dataset_refs(events), values)
    lineage = rows(
        ff.column_lineage(history, values),
        "field",
        "input_node_id",
        "input_field",
        "type",
        "subtype",
        "description",
    )
    assert lineage == [
        ("", "dataset:db:orders", "status", "INDIRECT", "FILTER", None),
        ("id", "dataset:db:users", "id", "DIRECT", "IDENTITY", "copied"),
        ("total", "dataset:db:orders", "amount", "DIRECT", "AGGREGATION", "sum"),
    ]
