"""The OpenLineage facets of the demo events: facet objects at the spec's newest versions, schemas,
column lineage, the SQL of SQL jobs, and the facets of each job and its datasets, built once."""

from __future__ import annotations

from typing import Any

from headwater.demo.nodes import Dataset, Derived, Job, Ref, Use
from headwater.demo.scenario import BIGQUERY, DATASOURCE_URIS, LAKE, REPOSITORY, Column

Facets = dict[str, Any]

_CORE = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/"
RUN_EVENT_SCHEMA = _CORE + "RunEvent"
JOB_EVENT_SCHEMA = _CORE + "JobEvent"
DATASET_EVENT_SCHEMA = _CORE + "DatasetEvent"

# The newest version of each facet schema in the OpenLineage spec (facets/<Name>.json "$id").
_FACET_VERSIONS: dict[str, str] = {
    "SchemaDatasetFacet": "1-2-0",
    "SymlinksDatasetFacet": "1-0-1",
    "ColumnLineageDatasetFacet": "1-2-0",
    "DatasourceDatasetFacet": "1-0-1",
    "SourceCodeLocationJobFacet": "1-1-0",
    "SQLJobFacet": "1-1-0",
    "ParentRunFacet": "1-2-0",
    "NominalTimeRunFacet": "1-0-1",
    "DatasetVersionDatasetFacet": "1-0-1",
    "LifecycleStateChangeDatasetFacet": "1-0-1",
    "JobTypeJobFacet": "2-0-4",
    "DocumentationJobFacet": "1-1-0",
    "DocumentationDatasetFacet": "1-1-0",
    "OwnershipJobFacet": "1-0-1",
    "OwnershipDatasetFacet": "1-0-1",
    "OutputStatisticsOutputDatasetFacet": "1-0-2",
    "DataQualityMetricsInputDatasetFacet": "1-0-3",
    "ErrorMessageRunFacet": "1-0-1",
    "ProcessingEngineRunFacet": "1-1-1",
}


def build_facet(producer: str, name: str, /, **fields: Any) -> Facets:
    version = _FACET_VERSIONS[name]
    return {
        "_producer": producer,
        "_schemaURL": f"https://openlineage.io/spec/facets/{version}/{name}.json#/$defs/{name}",
        **fields,
    }


def _schema_field(column: Column, position: int | None) -> dict[str, Any]:
    item: dict[str, Any] = {"name": column.name, "type": column.type}
    if column.description:
        item["description"] = column.description
    if position is not None:
        item["ordinal_position"] = position
    if column.fields:
        item["fields"] = [_schema_field(f, None) for f in column.fields]
    return item


def _lineage_facet(producer: str, derived: Derived, deprecated: bool) -> Facets:
    def input_field(use: Use, with_transformation: bool) -> dict[str, Any]:
        item: dict[str, Any] = {"namespace": use.ref[0], "name": use.ref[1], "field": use.field}
        if with_transformation:
            step: dict[str, Any] = {"type": use.type, "subtype": use.subtype, "description": use.description}
            step["masking"] = use.masking
            item["transformations"] = [step]
        return item

    fields: dict[str, Any] = {}
    for name, uses in derived.fields.items():
        if deprecated:
            direct = [u for u in uses if u.type == "DIRECT"] or uses
            fields[name] = {
                "inputFields": [input_field(u, False) for u in uses],
                "transformationDescription": "; ".join(u.description for u in direct),
                "transformationType": "MASKED" if any(u.masking for u in uses) else "IDENTITY",
            }
        else:
            fields[name] = {"inputFields": [input_field(u, True) for u in uses]}
    facet = build_facet(producer, "ColumnLineageDatasetFacet", fields=fields)
    if derived.dataset and not deprecated:
        facet["dataset"] = [input_field(u, True) for u in derived.dataset]
    return facet


def _table(ref: Ref) -> str:
    """How SQL names a dataset: lake paths as path tables, BigQuery names quoted."""
    if ref[0] == LAKE:
        return f"parquet.`{LAKE}/{ref[1]}`"
    if ref[0] == BIGQUERY:
        return f"`{ref[1]}`"
    return ref[1]


def _sql(job: Job, v2: bool) -> str:
    """The query of a SQL job, written from its column lineage."""
    derived = job.lineage[0][1 if v2 else 0]
    parts = []
    for column in derived.columns:
        direct = [u for u in derived.fields.get(column.name, ()) if u.type == "DIRECT"]
        if not direct and job.layer == "reconcile":
            continue  # a MERGE sets only the columns it has values for
        if not direct:
            parts.append(f"current_timestamp() AS {column.name}" if column.role == "meta" else column.name)
        elif direct[0].subtype == "IDENTITY":
            same = direct[0].field == column.name
            parts.append(column.name if same else f"{direct[0].field} AS {column.name}")
        else:
            parts.append(f"{direct[0].description} AS {column.name}")
    query = f"SELECT {', '.join(parts)} FROM {_table(job.inputs[0].ref)}"
    clauses = [u.description for uses in derived.fields.values() for u in uses if u.subtype == "JOIN"]
    clauses += [u.description for u in derived.dataset if u.subtype == "FILTER"]
    clauses += [u.description for u in derived.dataset if u.subtype == "GROUP_BY"]
    for clause in dict.fromkeys(clauses):
        query += f" {clause}"
    target = _table(job.outputs[0].ref)
    if job.layer == "reconcile":
        return f"MERGE INTO {target} USING ({query}) AS fix ON TRUE WHEN MATCHED THEN UPDATE SET *"
    if job.ns.integration.kind == "dbt":
        return query
    return f"INSERT INTO {target} {query}"


class FacetCache:
    """The facets of each job and of its inputs and outputs, built once per (job, schema version):
    the events that carry them share the objects."""

    def __init__(self) -> None:
        self._job_facets: dict[tuple[int, bool], Facets] = {}
        self._datasets: dict[tuple[int, bool], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
        self._names: dict[int, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}

    def job_facets(self, job: Job, v2: bool) -> Facets:
        key = (job.idx, v2 and job.code_change)
        found = self._job_facets.get(key)
        if found is not None:
            return found
        p = job.producer
        integration = job.ns.integration
        job_type: dict[str, Any] = {"processingType": "BATCH", "integration": integration.integration}
        job_type["jobType"] = job.job_type
        if job.layer == "orchestrator":
            job_type["emissionPattern"] = {"eventTrigger": "EVENT_BASED", "eventContentMode": "ACCUMULATIVE"}
        sha = job.sha[1] if key[1] else job.sha[0]
        facets: Facets = {
            "jobType": build_facet(p, "JobTypeJobFacet", **job_type),
            "sourceCodeLocation": build_facet(
                p,
                "SourceCodeLocationJobFacet",
                type="git",
                url=f"{REPOSITORY}/blob/{sha}/{job.code_path}",
                repoUrl=f"{REPOSITORY}.git",
                path=job.code_path,
                version=sha,
                branch="main",
            ),
        }
        if job.dialect is not None and job.lineage:
            facets["sql"] = build_facet(p, "SQLJobFacet", query=_sql(job, key[1]), dialect=job.dialect)
        if job.documented:
            facets["documentation"] = build_facet(
                p, "DocumentationJobFacet", description=job.description, contentType="text/markdown"
            )
        if job.owners:
            owners = [{"name": owner, "type": "MAINTAINER"} for owner in job.owners]
            facets["ownership"] = build_facet(p, "OwnershipJobFacet", owners=owners)
        self._job_facets[key] = facets
        return facets

    def dataset_facets(self, ds: Dataset, producer: str, *, v2: bool, via_alias: bool) -> Facets:
        ref = ds.alias if via_alias and ds.alias is not None else ds.ref
        positions = ref[0].startswith("postgres://")
        fields = [_schema_field(c, i + 1 if positions else None) for i, c in enumerate(ds.schema(v2))]
        facets: Facets = {
            "schema": build_facet(producer, "SchemaDatasetFacet", fields=fields),
            "dataSource": build_facet(
                producer, "DatasourceDatasetFacet", name=ref[0], uri=DATASOURCE_URIS[ref[0]]
            ),
        }
        if v2 and ds.alias is not None and not via_alias:
            identifiers = [{"namespace": ds.alias[0], "name": ds.alias[1], "type": "TABLE"}]
            facets["symlinks"] = build_facet(producer, "SymlinksDatasetFacet", identifiers=identifiers)
        return facets

    def datasets(self, job: Job, v2: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(inputs, outputs) with their dataset facets, as START and COMPLETE events carry them."""
        key = (job.idx, v2)
        found = self._datasets.get(key)
        if found is not None:
            return found
        p = job.producer
        inputs = [
            {
                "namespace": read.ref[0],
                "name": read.ref[1],
                "facets": self.dataset_facets(read.dataset, p, v2=v2, via_alias=read.via_alias),
            }
            for read in job.inputs
        ]
        outputs = []
        for index, ds in enumerate(job.outputs):
            facets = self.dataset_facets(ds, p, v2=v2, via_alias=False)
            if index in job.lineage:
                derived = job.lineage[index][1 if v2 else 0]
                facets["columnLineage"] = _lineage_facet(p, derived, index in job.deprecated_lineage)
            outputs.append({"namespace": ds.namespace, "name": ds.name, "facets": facets})
        self._datasets[key] = (inputs, outputs)
        return inputs, outputs

    def names(self, job: Job) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(inputs, outputs) by name only, as RUNNING, FAIL and ABORT events carry them."""
        found = self._names.get(job.idx)
        if found is None:
            found = (
                [{"namespace": r.ref[0], "name": r.ref[1]} for r in job.inputs],
                [{"namespace": d.namespace, "name": d.name} for d in job.outputs],
            )
            self._names[job.idx] = found
        return found
