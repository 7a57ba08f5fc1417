"""The answers of the API families beside the Marquez catalog (whose models are in
`headwater.query.catalog_models`): ingest, raw events, Atlas run events, lineage graphs, impact,
overview, dead letters and generic events. One model per response shape; the routes declare
them and pass the query layer's answers through them, so an answer that left its documented
shape fails loudly in the tests instead of surprising a generated client."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, RootModel, WithJsonSchema

from headwater.query.catalog_models import Answer, DatasetId, Run, Time

JSONObject = dict[str, Any]
# A JSON object kept as the bytes it was sent as (an orjson.Fragment), written out unparsed.
RawJSON = Annotated[Any, WithJsonSchema({"type": "object"})]


# -- ingest -------------------------------------------------------------------------------------------
class Stored(Answer):
    """One event stored (201) or stored before (200)."""

    eventId: str
    status: Literal[200, 201]
    duplicate: bool = Field(default=False, description="Present (true) when it was stored before")
    warnings: list[str] = Field(default_factory=list, description="Facets that break their schema, by path")


class Outcome(Answer):
    """One event of a batch: stored (201), stored before (200) or rejected (400)."""

    index: int
    status: Literal[200, 201, 400]
    eventId: str | None = None
    error: str | None = Field(default=None, description="Rejected: every problem, `; `-separated")
    errors: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


class Outcomes(RootModel[list[Outcome]]):
    """Each event's outcome, in the order sent."""


# -- raw events and the Atlas run-events API ----------------------------------------------------------
class LineageEvents(Answer):
    events: list[RawJSON] = Field(description="Each event exactly as it was sent")
    totalCount: int


class AtlasEvent(Answer):
    eventId: str
    source: str = Field(description="The event's producer")
    jobName: str | None
    runId: str | None
    eventTime: Time
    event: RawJSON = Field(description="The event exactly as it was sent")
    status: str | None = Field(description="The eventType")


class AtlasRunEvents(Answer):
    """Atlas' envelope, on success and on error alike (then `success` is false)."""

    success: bool
    message: str
    error: str | None = Field(description="The error's class name, e.g. NotFound, BadRequest")
    runId: str | None
    eventCount: int
    events: list[AtlasEvent]
    pageSize: int | None
    nextPagingState: str | None = Field(description="Pass back as `pagingState`; null on the last page")


class Health(Answer):
    success: bool
    message: str
    error: str | None
    store: str | None = Field(default=None, description="The store's backend: sqlite or postgresql")


# -- lineage graphs (Marquez) -------------------------------------------------------------------------
class Edge(Answer):
    origin: str
    destination: str


class GraphField(Answer):
    name: str
    type: str | None
    tags: list[str]
    description: str | None


class DatasetData(Answer):
    id: DatasetId
    type: Literal["DB_TABLE"]
    name: str
    physicalName: str
    createdAt: Time | None
    updatedAt: Time | None
    namespace: str
    sourceName: str | None
    fields: list[GraphField]
    tags: list[str]
    lastModifiedAt: Time | None
    description: str | None
    currentVersion: str | None
    lastLifecycleState: str | None
    expandable: bool


class LatestRunState(Answer):
    state: str
    updatedAt: Time | None


class JobData(Answer):
    id: DatasetId
    type: Literal["BATCH"]
    name: str
    simpleName: str
    parentJobName: str | None
    createdAt: Time | None
    updatedAt: Time | None
    namespace: str
    inputs: list[DatasetId]
    outputs: list[DatasetId]
    location: str | None
    description: str | None
    latestRun: LatestRunState | None
    currentVersion: str | None
    expandable: bool


class GraphNode(Answer):
    id: str = Field(description="The node id (`dataset:{namespace}:{name}`, `job:…`)")
    type: str = Field(description="DATASET, JOB, …")
    data: DatasetData | JobData | JSONObject
    inEdges: list[Edge]
    outEdges: list[Edge]


class Paging(Answer):
    truncated: bool = Field(description="`limit` cut the answer short")
    expandable: list[str] = Field(description="Ids of nodes with more lineage beyond the answer")
    asOf: Time | None


class LineageGraph(Paging):
    graph: list[GraphNode]


class Transformation(Answer):
    type: str | None
    subtype: str | None
    description: str | None


class InputField(Answer):
    namespace: str
    dataset: str
    datasetVersion: str | None
    field: str | None
    transformationDescription: str | None
    transformationType: str | None
    transformations: list[Transformation]


class FieldData(Answer):
    namespace: str
    dataset: str
    datasetVersion: str | None
    field: str | None
    fieldType: str | None
    transformationDescription: str | None
    transformationType: str | None
    inputFields: list[InputField]
    expandable: bool


class FieldNode(Answer):
    id: str = Field(description="`datasetField:{namespace}:{dataset}:{field}`")
    type: Literal["DATASET_FIELD"]
    data: FieldData
    inEdges: list[Edge]
    outEdges: list[Edge]


class ColumnLineageGraph(Paging):
    graph: list[FieldNode]


class UpstreamJob(Answer):
    namespace: str
    name: str
    version: str | None


class UpstreamRun(Answer):
    id: str
    start: Time | None
    end: Time | None
    status: str


class UpstreamInput(Answer):
    namespace: str
    name: str
    version: str | None
    producedByRunId: str | None


class RunUpstream(Answer):
    job: UpstreamJob
    run: UpstreamRun
    inputs: list[UpstreamInput]


class UpstreamRuns(Answer):
    runs: list[RunUpstream]
    truncated: bool


# -- the lineage warehouse (Egeria style) -------------------------------------------------------------
class Vertex(Answer):
    nodeID: str
    nodeType: str
    displayName: str
    qualifiedName: str
    properties: JSONObject


class WarehouseEdge(Answer):
    edgeType: str
    sourceNodeID: str
    destinationNodeID: str
    properties: JSONObject | None = None


class WarehouseGraph(Paging):
    nodeID: str = Field(description="The node asked")
    scope: str
    vertices: list[Vertex]
    edges: list[WarehouseEdge]


class Nodes(Answer):
    nodes: list[Vertex]
    truncated: bool


class NamedType(Answer):
    name: str
    description: str


class Types(Answer):
    nodeTypes: list[NamedType]
    edgeTypes: list[NamedType]


class ImpactNode(Answer):
    nodeID: str
    nodeType: str
    namespace: str | None
    name: str | None
    field: str | None
    owners: list[str]
    latestRunState: str | None
    latestRunTime: Time | None
    latestRunJob: str | None
    expandable: bool


class ImpactRow(ImpactNode):
    distance: int


class Impact(Answer):
    nodeID: str
    node: ImpactNode
    direction: Literal["downstream", "upstream"]
    level: Literal["dataset", "column"]
    rows: list[ImpactRow]
    truncated: bool
    asOf: Time | None


# -- the home page ------------------------------------------------------------------------------------
class NamespaceCounts(Answer):
    name: str
    datasets: int
    jobs: int
    runs: int
    recentRuns: int
    lastRunAt: Time | None


class RunOfJob(Run):
    job: DatasetId


class PipelineProgress(Answer):
    """How far the pipeline has published the events stored, by their seq (the store's ingest
    order): every event up to `publishedThrough` is in the model, and the lineage graph reflects
    those up to `graphThrough`. `waitingEvents` are stored and not yet published, counted up to
    100,000 (`waitingMore` when there are more); `waitingReports` of them are the pipeline's
    reports of its own passes (job `headwater.pipeline`), which the next pass publishes.
    `publishedAt`: when the model last changed (null: the pipeline never ran on this store)."""

    storedThrough: int
    publishedThrough: int
    graphThrough: int
    waitingEvents: int
    waitingMore: bool
    waitingReports: int
    publishedAt: Time | None


class Overview(Answer):
    namespaces: list[NamespaceCounts]
    latestRuns: list[RunOfJob]
    failedRuns: list[RunOfJob]
    recentSince: Time
    pipeline: PipelineProgress


# -- Kafka dead letters -------------------------------------------------------------------------------
class DeadLetter(Answer):
    """`key` and `value` as text when they are UTF-8, else `keyBase64` / `valueBase64`."""

    id: int | None
    topic: str
    partition: int
    offset: int
    key: str | None = None
    keyBase64: str | None = None
    error: str
    receivedAt: str
    valueBytes: int
    value: str | None = None
    valueBase64: str | None = None


class DeadLetters(Answer):
    errors: list[DeadLetter]
    totalCount: int
    nextBefore: int | None = Field(description="Pass back as `before` for the next page")


# -- generic events (FastScore style) -----------------------------------------------------------------
class GenericStored(Answer):
    id: int
    status: Literal[200, 201]
    duplicate: bool = Field(default=False, description="Present (true) when it was stored before")


class GenericOutcome(Answer):
    index: int
    status: Literal[200, 201, 400]
    id: int | None = None
    error: str | None = None
    errors: list[str] = Field(default_factory=list)


class GenericOutcomes(RootModel[list[GenericOutcome]]):
    """Each event's outcome, in the order sent."""


class Element(Answer):
    id: int
    type: str
    description: str


class Elements(RootModel[list[Element]]):
    pass


class ElementTypes(RootModel[list[str]]):
    pass


class GenericEvent(Answer):
    id: int
    description: str
    timestamp: Time
    type: str | None = Field(description="Null for an OpenLineage run event without an eventType")


class GenericEvents(RootModel[list[GenericEvent]]):
    pass


class ElementDetail(Element):
    events: list[GenericEvent]
    tags: dict[str, str] = Field(description="Each tag key's latest value")


class GenericTag(Answer):
    id: int
    key: str
    value: str


class GenericTags(RootModel[list[GenericTag]]):
    pass


class TaggedElement(Element):
    tags: list[GenericTag]


class GenericEventDetail(GenericEvent):
    elements: list[TaggedElement]
    tags: list[GenericTag]


class TagDetail(GenericTag):
    elements: list[Element]
    events: list[GenericEvent]
