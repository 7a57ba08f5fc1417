"""The demo's scenario, read once from `scenario.json`: the business domains and their columns, the
producer integrations, the data sources, people, teams, regions and report periods."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

# The dataset namespaces the graph writes to (the scenario's sources live in others).
LAKE = "s3://lake"
HIVE = "hive://metastore:9083"
WAREHOUSE = "postgres://warehouse:5432"
BIGQUERY = "bigquery"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    role: str  # key, fk, measure, time, dim, text, pii, pii_hash, struct, flag, meta
    fields: tuple[Column, ...] = ()
    description: str | None = None


@dataclass(frozen=True)
class Domain:
    """A business entity the pipelines move, from its source table to the reports."""

    name: str
    namespace: str  # where its source lives
    table: str  # source name, "{}" replaced by the domain instance's name
    entity: bool  # dimension (dim_) rather than fact (fct_) in the marts
    columns: tuple[Column, ...]


@dataclass(frozen=True)
class Integration:
    kind: str
    stem: str  # namespace stem
    producer: str
    integration: str  # JobTypeJobFacet.integration
    orchestrator_type: str
    task_type: str
    engine: tuple[str, str, str]  # ProcessingEngineRunFacet name, version, adapter version
    error: str  # ErrorMessageRunFacet message of a failed task
    language: str


def _column(item: dict[str, Any]) -> Column:
    fields = tuple(_column(member) for member in item.get("fields", ()))
    return Column(item["name"], item["type"], item["role"], fields, item.get("description"))


def _domain(item: dict[str, Any]) -> Domain:
    columns = tuple(_column(column) for column in item["columns"])
    return Domain(item["name"], item["namespace"], item["table"], item["entity"], columns)


def _integration(kind: str, item: dict[str, Any]) -> Integration:
    engine = item["engine"]
    return Integration(
        kind,
        item["stem"],
        item["producer"],
        item["integration"],
        item["orchestrator_type"],
        item["task_type"],
        (engine["name"], engine["version"], engine["adapter_version"]),
        item["error"],
        item["language"],
    )


_SCENARIO: dict[str, Any] = json.loads(
    resources.files(__package__ or "headwater.demo").joinpath("scenario.json").read_text(encoding="utf-8")
)

REPOSITORY: str = _SCENARIO["repository"]  # the git repository of every job's code
CATALOG_PRODUCER: str = _SCENARIO["catalog_producer"]  # producer of the static metadata events
DATASOURCE_URIS: dict[str, str] = _SCENARIO["datasources"]  # dataset namespace → data source URI
INTEGRATIONS: dict[str, Integration] = {
    kind: _integration(kind, item) for kind, item in _SCENARIO["integrations"].items()
}
TEAMS: dict[str, str] = _SCENARIO["teams"]  # integration kind → owning team
PEOPLE: tuple[str, ...] = tuple(_SCENARIO["people"])
DOMAINS: tuple[Domain, ...] = tuple(_domain(item) for item in _SCENARIO["domains"])
REGIONS: tuple[str, ...] = tuple(_SCENARIO["regions"])  # suffixes of repeated domains
PERIODS: tuple[tuple[str, str], ...] = tuple((p["name"], p["unit"]) for p in _SCENARIO["periods"])
