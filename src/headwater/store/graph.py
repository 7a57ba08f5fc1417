"""The lineage graph as the store serves it: nodes, directed edges (now or as of a past time),
column-level edges and the pipeline's ultimate sources and destinations.

Every method takes a bounded set of node ids and answers with indexed queries, so a traversal
reads only the part of the graph it visits. Traversal itself (depth, limits, cycles) lives in
`headwater.query.lineage`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal

from headwater.events.schema_fields import SchemaField

Direction = Literal["up", "down"]


@dataclass(frozen=True, slots=True)
class GraphNode:
    """A dataset, a job or an element of the model. `canonical_id` differs from `node_id` for a
    dataset that symlinks merged into another; the graph only holds canonical ids. An element
    (folded from generic events) keeps its type in `namespace` and its description in `name`."""

    node_id: str
    kind: Literal["dataset", "job", "element"]
    namespace: str
    name: str
    created_at: str
    updated_at: str
    canonical_id: str
    version: str | None = None  # the current version
    source: str | None = None  # a dataset's source name
    state: str | None = None  # a job's latest run state
    state_time: str | None = None
    parent: str | None = None  # a job's parent job (the first by id when it has several)
    tags: tuple[str, ...] = ()  # tags set through the API, by name
    # a dataset's lifecycle state as its latest write left it (lifecycleStateChange: DROP, CREATE,
    # OVERWRITE…; None when that write declared none) and that write's eventTime
    lifecycle: str | None = None
    lifecycle_time: str | None = None
    event_count: int | None = None  # an element's: the generic events naming it the pipeline folded
    element_id: int | None = None  # an element's browse id (`/lineage/1/elements/{id}`)


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """dataset→job (`input`), job→dataset (`output`), dataset→dataset through `job_id`
    (`condensed`), or an element to an element listed after it in generic events of one type
    (`event`, `label` the event type; no job)."""

    src_id: str
    dst_id: str
    kind: Literal["input", "output", "condensed", "event"]
    job_id: str
    label: str | None = None
    created_at: str | None = None  # an event edge's first and latest event (receive times)
    updated_at: str | None = None
    event_count: int | None = None


@dataclass(frozen=True, slots=True)
class FieldRef:
    """A field of a dataset (canonical dataset id); `field` is a dotted path for nested fields."""

    dataset_id: str
    field: str


@dataclass(frozen=True, slots=True)
class ColumnEdge:
    """`src` is used to compute `dst`. A dataset-level dependency of the columnLineage facet (an
    input that affects every field of the dataset, such as a filter) is an edge to each field,
    with `dataset_level` set."""

    src: FieldRef
    dst: FieldRef
    type: str  # DIRECT or INDIRECT
    subtype: str
    description: str | None
    dataset_level: bool = False


# The model keeps at most ENDS_CAP ultimate sources (and as many destinations) of a dataset: past
# that, one row names the end PAST_CAP at distance -1, and a query walks the graph instead (one
# job of 3,000 inputs and 3,000 outputs would otherwise keep 18 million rows, and a wider one
# would keep the graph stage from ever finishing).
ENDS_CAP = 1_000
PAST_CAP = "*"


@dataclass(frozen=True, slots=True)
class UltimateEnd:
    """An ultimate source (`kind="source"`) or destination of `node_id`, `distance` datasets away;
    `other_id` PAST_CAP: it has more than ENDS_CAP of them."""

    node_id: str
    kind: Literal["source", "destination"]
    other_id: str
    distance: int


@dataclass(frozen=True, slots=True)
class RunInput:
    """A dataset a run read: the version it found (the latest written before the run started)
    and the run that wrote that version."""

    dataset_id: str
    namespace: str
    name: str
    version: str | None
    produced_by_run: str | None


@dataclass(frozen=True, slots=True)
class RunLink:
    """A run with what it read, for upstream run lineage."""

    run_id: str
    job_namespace: str
    job_name: str
    job_version: str | None
    state: str
    started_at: str | None
    ended_at: str | None
    inputs: tuple[RunInput, ...]


class GraphReader(ABC):
    """Reads of the lineage graph; `as_of` (a stored time) answers from the model as it stood then."""

    @abstractmethod
    def snapshot(self) -> AbstractContextManager[None]:
        """Reads inside see one state of the model (a query of many reads wraps itself in it)."""

    @abstractmethod
    def graph_nodes(self, node_ids: Sequence[str]) -> dict[str, GraphNode]:
        """The datasets and jobs among `node_ids` (unknown ids are absent)."""

    @abstractmethod
    def graph_edges(
        self, node_ids: Sequence[str], direction: Direction, *, condensed: bool, as_of: str | None
    ) -> list[GraphEdge]:
        """Edges into (`up`) or out of (`down`) the given canonical node ids. `condensed` gives
        dataset→dataset edges instead of dataset→job→dataset. Current edges come from the graph
        the pipeline published; as of a time, from each job's version at that time (the version
        of its latest run started by then)."""

    @abstractmethod
    def element_nodes(self, node_ids: Sequence[str], *, as_of: str | None = None) -> dict[str, GraphNode]:
        """The elements among `node_ids` that the pipeline folded from generic events (known by
        `as_of` when given). An element of type dataset or job keeps that OpenLineage node id."""

    @abstractmethod
    def event_edges(
        self, node_ids: Sequence[str], direction: Direction, *, as_of: str | None
    ) -> list[GraphEdge]:
        """The `event` edges into (`up`) or out of (`down`) the given node ids (with `as_of`,
        those some event had made by then)."""

    @abstractmethod
    def has_elements(self) -> bool:
        """Whether the pipeline has folded any generic event's element into the graph."""

    @abstractmethod
    def column_edges(
        self, fields: Sequence[FieldRef], direction: Direction, *, as_of: str | None
    ) -> list[ColumnEdge]:
        """Column lineage into (`up`: what the fields are computed from, dataset-level entries
        included) or out of (`down`) the given fields, from each dataset's columnLineage facet
        current now or at `as_of`."""

    @abstractmethod
    def dataset_fields(
        self, dataset_ids: Sequence[str], *, as_of: str | None
    ) -> dict[str, list[SchemaField]]:
        """The flattened fields of each dataset's schema facet, current or valid at `as_of`
        (a canonical dataset answers with the fields of every name merged into it)."""

    @abstractmethod
    def ultimate_ends(
        self, node_ids: Sequence[str], kind: Literal["source", "destination"]
    ) -> list[UltimateEnd]:
        """The pipeline's precomputed ultimate sources or destinations of the given datasets."""

    @abstractmethod
    def run_links(self, run_ids: Sequence[str]) -> dict[str, RunLink]:
        """The given runs (unknown ids are absent) with the inputs they read."""

    @abstractmethod
    def version_created_at(self, node_id: str, version: str) -> str | None:
        """When the version (of the dataset or job) was created; None when it is not one of its."""
