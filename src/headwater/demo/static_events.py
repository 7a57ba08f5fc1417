"""The static metadata of the demo history: DatasetEvents (documentation, ownership, a deleted
facet) and JobEvents (one for a running job, one for a job that never runs), on the first day and
the change day."""

from __future__ import annotations

from headwater.demo.facets import DATASET_EVENT_SCHEMA, JOB_EVENT_SCHEMA, FacetCache, Facets, build_facet
from headwater.demo.graph import Graph
from headwater.demo.nodes import Dataset, Job
from headwater.demo.scenario import CATALOG_PRODUCER, TEAMS
from headwater.demo.timeline import Event, iso_time


def static_events(
    graph: Graph, cache: FacetCache, day: int, base: int, change_day: int
) -> list[tuple[int, Event]]:
    """The static events of `day` (on the first day and the change day only), stamped a little
    before the day's runs start at `base`."""
    p = CATALOG_PRODUCER
    events: list[Event] = []

    def dataset_event(ds: Dataset, facets: Facets) -> None:
        dataset = {"namespace": ds.namespace, "name": ds.name, "facets": facets}
        events.append({"eventTime": "", "producer": p, "schemaURL": DATASET_EVENT_SCHEMA, "dataset": dataset})

    def docs(text: str) -> Facets:
        return build_facet(p, "DocumentationDatasetFacet", description=text, contentType="text/markdown")

    def owners(*names: str) -> Facets:
        return build_facet(p, "OwnershipDatasetFacet", owners=[{"name": n, "type": "OWNER"} for n in names])

    mart, source = graph.marts[0], graph.sources[0]
    if day == 0:
        at = base - 50 * 60_000
        dataset_event(source, {"documentation": docs(f"Operational `{source.domain}` table of the shop.")})
        dataset_event(
            mart,
            {
                "documentation": docs(f"Curated {mart.domain}: the reference for finance and BI."),
                "ownership": owners("team:analytics-engineering", "user:mlopez"),
            },
        )
        dataset_event(graph.reports[0], {"documentation": docs("Feeds the executive dashboard.")})
        for other in graph.marts[1::4]:
            dataset_event(other, {"ownership": owners("team:analytics-engineering")})
        mart_job = next(job for job in graph.tasks if job.outputs[0] is mart)
        events.append(_job_event(cache, mart_job, CATALOG_PRODUCER, with_schema=False))
        events.append(_job_event(cache, graph.static_job, graph.static_job.producer, with_schema=True))
    elif day == change_day:
        at = base - 40 * 60_000
        deleted = {"ownership": {"_producer": p, "_schemaURL": owners()["_schemaURL"], "_deleted": True}}
        dataset_event(mart, deleted)
        dataset_event(source, {"documentation": docs(f"Operational `{source.domain}` table (CDC enabled).")})
    else:
        return []
    timed = []
    for i, event in enumerate(events):
        event["eventTime"] = iso_time(at + i * 1_500)
        timed.append((at + i * 1_500, event))
    return timed


def _job_event(cache: FacetCache, job: Job, producer: str, *, with_schema: bool) -> Event:
    if producer == job.producer:
        facets = cache.job_facets(job, False)
    else:
        facets = {
            "documentation": build_facet(
                producer,
                "DocumentationJobFacet",
                description=job.description,
                contentType="text/markdown",
            ),
            "ownership": build_facet(
                producer,
                "OwnershipJobFacet",
                owners=[{"name": owner, "type": "MAINTAINER"} for owner in job.owners or (TEAMS["dbt"],)],
            ),
        }
    inputs, outputs = cache.names(job)
    if with_schema:
        outputs = [
            {**item, "facets": cache.dataset_facets(ds, producer, v2=False, via_alias=False)}
            for item, ds in zip(outputs, job.outputs, strict=True)
        ]
    return {
        "eventTime": "",
        "producer": producer,
        "schemaURL": JOB_EVENT_SCHEMA,
        "job": {"namespace": job.ns.name, "name": job.name, "facets": facets},
        "inputs": inputs,
        "outputs": outputs,
    }
