"""The Marquez catalog's answers as typed models (spec/openapi.yml of MarquezProject/marquez): one
model per response shape, built by `headwater.query.marquez` and declared by the routes, so the
OpenAPI document and the answers cannot drift apart."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

# Times as RFC 3339 text (`2024-01-02T03:04:05.12Z`), exactly as the store's form is displayed.
Time = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
# Facets by name; each value goes out as stored (raw JSON, never parsed on the way).
Facets = Annotated[
    dict[str, Any],
    WithJsonSchema(
        {
            "type": "object",
            "additionalProperties": {"type": "object"},
            "description": "OpenLineage facets by name",
        }
    ),
]
RunState = Literal["NEW", "RUNNING", "COMPLETED", "FAILED", "ABORTED"]


class Answer(BaseModel):
    """Base of every answer model: no field beyond the declared ones."""

    model_config = ConfigDict(extra="forbid")


class Namespace(Answer):
    name: str
    createdAt: Time
    updatedAt: Time
    ownerName: str
    description: str | None
    isHidden: bool


class Namespaces(Answer):
    namespaces: list[Namespace]


class DatasetId(Answer):
    namespace: str
    name: str


class VersionId(Answer):
    namespace: str
    name: str
    version: str


class DatasetField(Answer):
    name: str
    type: str | None
    tags: list[str]
    description: str | None


class Dataset(Answer):
    id: DatasetId
    type: Literal["DB_TABLE"]
    name: str
    physicalName: str
    createdAt: Time
    updatedAt: Time
    namespace: str
    sourceName: str | None
    fields: list[DatasetField]
    tags: list[str]
    lastModifiedAt: Time | None
    lastLifecycleState: str | None
    description: str | None
    facets: Facets
    currentVersion: str | None
    deleted: bool


class Datasets(Answer):
    totalCount: int
    datasets: list[Dataset]


class Run(Answer):
    id: str
    createdAt: Time
    updatedAt: Time
    nominalStartTime: Time | None
    nominalEndTime: Time | None
    state: RunState
    startedAt: Time | None
    endedAt: Time | None
    durationMs: int | None
    args: dict[str, str]
    jobVersion: VersionId | None
    facets: Facets


class Runs(Answer):
    totalCount: int
    runs: list[Run]


class RunFacets(Answer):
    """`GET /jobs/runs/{runId}/facets`: the run's facets, or its job's as they stood at the run."""

    runId: str
    facets: Facets


class Job(Answer):
    id: DatasetId
    type: Literal["BATCH", "STREAM"]
    name: str
    simpleName: str
    parentJobName: str | None
    createdAt: Time
    updatedAt: Time
    namespace: str
    inputs: list[DatasetId]
    outputs: list[DatasetId]
    location: str | None
    description: str | None
    latestRun: Run | None
    latestRuns: list[Run]
    facets: Facets
    currentVersion: str | None
    tags: list[str]


class Jobs(Answer):
    totalCount: int
    jobs: list[Job]


class Source(Answer):
    type: str = Field(description="The connection URL's scheme in capitals (S3, POSTGRES), else UNKNOWN")
    name: str
    createdAt: Time
    updatedAt: Time
    connectionUrl: str | None
    description: str | None


class Sources(Answer):
    sources: list[Source]


class DatasetVersion(Answer):
    id: VersionId
    type: Literal["DB_TABLE"]
    name: str
    physicalName: str
    createdAt: Time
    version: str
    datasetVersion: str | None
    namespace: str
    sourceName: str | None
    fields: list[DatasetField]
    tags: list[str]
    lifecycleState: str | None
    description: str | None
    createdByRun: Run | None
    facets: Facets


class DatasetVersions(Answer):
    totalCount: int
    versions: list[DatasetVersion]


class JobVersion(Answer):
    id: VersionId
    name: str
    version: str
    createdAt: Time | None
    updatedAt: Time | None
    namespace: str
    inputs: list[DatasetId]
    outputs: list[DatasetId]
    location: str | None
    runCount: int
    latestRun: Run | None
    facets: Facets


class JobVersions(Answer):
    totalCount: int
    versions: list[JobVersion]


class SearchResult(Answer):
    type: Literal["DATASET", "JOB"]
    name: str
    updatedAt: Time
    namespace: str
    nodeId: str


class SearchResults(Answer):
    totalCount: int
    results: list[SearchResult]


class Tag(Answer):
    name: str
    description: str | None


class Tags(Answer):
    tags: list[Tag]
