"""A small lineage written by hand as OpenLineage events, for lineage queries with answers worked
out by hand (tests/query/test_lineage.py).

Day 1 (2024-01-01) and day 2 (2024-01-02), namespace `ns` unless written:

    s ─load─► warehouse:public.a ≡ a ─extract─► b ─transform─► d ─report─► e ─enrich─► g ─publish─► h
                                                │          ▲                 ▲             │
                                              audit        c (day 2)         └────fix_e────┘
                                                ▼
                                                f

- `load` (day 1 00:00) writes `warehouse:public.a`; a DatasetEvent (00:30) declares it a symlink
  of `ns:a`, so both are one dataset, canonical id `dataset:ns:a` (the smaller id).
- `extract` (day 1 01:00) reads a, writes b (fields x, y, flag); its run's parent is a run of
  `orchestrator`.
- `audit` (day 1 01:30) reads b, writes f: a sibling of `transform`, never in d's lineage.
- `transform` version 1 (day 1 02:00) reads b, writes d (x, y) with column lineage d.x ← b.x;
  version 2 (day 2 02:00) reads b and c (field y) and writes d with d.x ← b.x (DIRECT
  IDENTITY), d.y ← c.y (DIRECT TRANSFORMATION) and a dataset-level b.flag (INDIRECT FILTER).
  d is owned by team:ingest from day 1, by team:analytics from day 2.
- `report` (day 2 03:00) reads d, writes e; `enrich` (04:00) e → g; `fix_e` (05:00) g → e: a
  cycle e ⇄ g; `publish` (06:00) g → h, the way out of the cycle.
"""

from __future__ import annotations

from typing import Any

from tests.factories import PRODUCER, facet

RUNS = {
    "orchestrator": "00000000-0000-4000-8000-00000000000a",
    "load": "00000000-0000-4000-8000-000000000000",
    "extract": "00000000-0000-4000-8000-000000000001",
    "audit": "00000000-0000-4000-8000-000000000004",
    "transform_v1": "00000000-0000-4000-8000-000000000021",
    "transform_v2": "00000000-0000-4000-8000-000000000022",
    "report": "00000000-0000-4000-8000-000000000003",
    "enrich": "00000000-0000-4000-8000-000000000005",
    "fix_e": "00000000-0000-4000-8000-000000000006",
    "publish": "00000000-0000-4000-8000-000000000007",
}
DAY1 = "2024-01-01"
DAY2 = "2024-01-02"


def ds(name: str) -> str:
    return f"dataset:ns:{name}"


def job(name: str) -> str:
    return f"job:ns:{name}"


def field(dataset: str, name: str) -> str:
    return f"datasetField:ns:{dataset}:{name}"


def _schema(*names: str) -> dict[str, Any]:
    return facet("SchemaDatasetFacet", "1-1-1", fields=[{"name": n, "type": "STRING"} for n in names])


def _owner(name: str) -> dict[str, Any]:
    return facet("OwnershipDatasetFacet", "1-0-1", owners=[{"name": name, "type": "TEAM"}])


def _input_field(dataset: str, name: str, kind: str, subtype: str) -> dict[str, Any]:
    return {
        "namespace": "ns",
        "name": dataset,
        "field": name,
        "transformations": [{"type": kind, "subtype": subtype}],
    }


def _column_lineage(
    fields: dict[str, list[dict[str, Any]]], dataset: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    value = facet(
        "ColumnLineageDatasetFacet", "1-2-0", fields={k: {"inputFields": v} for k, v in fields.items()}
    )
    if dataset:
        value["dataset"] = dataset
    return value


def _ref(name: str, namespace: str = "ns", **facets: Any) -> dict[str, Any]:
    return {"namespace": namespace, "name": name, "facets": facets}


def _run(
    run: str,
    job_name: str,
    day: str,
    hour: int,
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    parent: str | None = None,
) -> list[dict[str, Any]]:
    """START and COMPLETE of one run (outputs' facets on the COMPLETE), ten minutes apart."""
    run_facets: dict[str, Any] = {}
    if parent is not None:
        run_facets["parent"] = facet(
            "ParentRunFacet", "1-1-0", run={"runId": parent}, job={"namespace": "ns", "name": "orchestrator"}
        )
    events = []
    for event_type, minute, outs in (
        ("START", 0, [_ref(o["name"], o["namespace"]) for o in outputs]),
        ("COMPLETE", 10, outputs),
    ):
        events.append(
            {
                "eventType": event_type,
                "eventTime": f"{day}T{hour:02d}:{minute:02d}:00Z",
                "run": {"runId": run, "facets": run_facets},
                "job": {"namespace": "ns", "name": job_name, "facets": {}},
                "inputs": inputs,
                "outputs": outs,
                "producer": PRODUCER,
                "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            }
        )
    return events


def events() -> list[dict[str, Any]]:
    symlink = {
        "eventTime": f"{DAY1}T00:30:00Z",
        "dataset": _ref(
            "a",
            symlinks=facet(
                "SymlinksDatasetFacet",
                "1-0-1",
                identifiers=[{"namespace": "warehouse", "name": "public.a", "type": "TABLE"}],
            ),
        ),
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
    }
    orchestrator = _run(RUNS["orchestrator"], "orchestrator", DAY1, 0, [], [])
    return [
        *orchestrator,
        *_run(
            RUNS["load"],
            "load",
            DAY1,
            0,
            [
                _ref(
                    "s",
                    dataSource={
                        **facet("DatasourceDatasetFacet", "1-0-1"),
                        "name": "lake",
                        "uri": "s3://lake",
                    },
                )
            ],
            [_ref("public.a", "warehouse", schema=_schema("x"))],
        ),
        symlink,
        *_run(
            RUNS["extract"],
            "extract",
            DAY1,
            1,
            [_ref("a")],
            [_ref("b", schema=_schema("x", "y", "flag"))],
            parent=RUNS["orchestrator"],
        ),
        *_run(RUNS["audit"], "audit", DAY1, 1, [_ref("b")], [_ref("f", schema=_schema("x"))]),
        *_run(
            RUNS["transform_v1"],
            "transform",
            DAY1,
            2,
            [_ref("b")],
            [
                _ref(
                    "d",
                    schema=_schema("x", "y"),
                    columnLineage=_column_lineage({"x": [_input_field("b", "x", "DIRECT", "IDENTITY")]}),
                    ownership=_owner("team:ingest"),
                )
            ],
        ),
        *_run(
            RUNS["transform_v2"],
            "transform",
            DAY2,
            2,
            [_ref("b"), _ref("c", schema=_schema("y"))],
            [
                _ref(
                    "d",
                    schema=_schema("x", "y"),
                    ownership=_owner("team:analytics"),
                    columnLineage=_column_lineage(
                        {
                            "x": [_input_field("b", "x", "DIRECT", "IDENTITY")],
                            "y": [_input_field("c", "y", "DIRECT", "TRANSFORMATION")],
                        },
                        dataset=[_input_field("b", "flag", "INDIRECT", "FILTER")],
                    ),
                )
            ],
        ),
        *_run(RUNS["report"], "report", DAY2, 3, [_ref("d")], [_ref("e", schema=_schema("x"))]),
        *_run(RUNS["enrich"], "enrich", DAY2, 4, [_ref("e")], [_ref("g", schema=_schema("x"))]),
        *_run(RUNS["fix_e"], "fix_e", DAY2, 5, [_ref("g")], [_ref("e")]),
        *_run(RUNS["publish"], "publish", DAY2, 6, [_ref("g")], [_ref("h", schema=_schema("x"))]),
    ]
