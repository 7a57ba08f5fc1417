"""What vertical lineage reads around one node (facets in force, symlinked names, sources, tags,
parent and child jobs, runs and the runs around them, an element's tags at a past time), and
node search by name for the warehouse API."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from headwater.store.generic import GenericTagRow


@dataclass(frozen=True, slots=True)
class RunRef:
    """A run as vertical lineage shows it: its job, state, when it began, its parent and root."""

    run_id: str
    job_node_id: str
    job_namespace: str | None  # None when the job is not in the model
    state: str
    started_at: str | None
    first_event_time: str
    parent_run_id: str | None
    root_run_id: str | None


@dataclass(frozen=True, slots=True)
class FoundNode:
    """A node whose name matched a search. `name` is what matched: a dataset's or job's name, a
    field's path, a run id, a namespace's, source's or tag's name."""

    node_id: str
    node_type: str
    name: str
    namespace: str | None = None  # of a dataset, job or field; an element's type
    dataset: str | None = None  # a field's dataset name
    field_type: str | None = None
    uri: str | None = None  # a source's


class VerticalReader(ABC):
    """Reads of the containment around a node; `as_of` (a stored time) answers as it stood then."""

    @abstractmethod
    def facets_in_force(self, node_ids: Sequence[str], facet: str, *, as_of: str | None) -> dict[str, str]:
        """The JSON value of the facet in force (now, or at `as_of`) of each dataset or job that
        has one; a node whose facet was deleted, or never set, is absent."""

    @abstractmethod
    def dataset_names(self, node_id: str) -> list[tuple[str, str | None]]:
        """Every name merged with the dataset by symlinks (itself included), by id, with the type
        of the symlink declared between it and another name when known."""

    @abstractmethod
    def dataset_sources(self, node_ids: Sequence[str]) -> dict[str, tuple[str, str | None]]:
        """The current source (name, uri) of each dataset that has one."""

    @abstractmethod
    def node_tags(self, node_ids: Sequence[str], *, as_of: str | None) -> list[tuple[str, str | None, str]]:
        """Tags of datasets (and their fields) or jobs, tagged by `as_of` when given: (node id,
        None, tag) for the node, (node id, field, tag) for a dataset's field."""

    @abstractmethod
    def job_family(self, node_id: str) -> tuple[list[str], list[str]]:
        """(parent jobs, child jobs) of a job."""

    @abstractmethod
    def job_runs(self, node_id: str, *, limit: int, as_of: str | None) -> list[RunRef]:
        """The job's latest runs, newest first; with `as_of`, those begun by then."""

    @abstractmethod
    def runs_by_id(self, run_ids: Sequence[str]) -> dict[str, RunRef]:
        """The given runs (unknown ids are absent)."""

    @abstractmethod
    def child_runs(self, run_id: str, *, limit: int, as_of: str | None) -> list[RunRef]:
        """Runs whose parent is `run_id`, oldest first; with `as_of`, those begun by then."""

    @abstractmethod
    def element_browse_id(self, element_type: str, description: str) -> int | None:
        """The browse id of the element (type, description) of generic events, if one is stored."""

    @abstractmethod
    def element_tags_at(self, element_id: int, as_of: str) -> list[GenericTagRow]:
        """The latest value of each tag key the element carried in the generic events received
        by `as_of`, by key (now: `GenericStore.element_latest_tags`)."""

    @abstractmethod
    def find_nodes(self, node_type: str, name: str, *, limit: int) -> list[FoundNode]:
        """Namespaces, sources, tags, runs (`node_type`), fields of current schemas
        (`datasetField`) or elements the pipeline folded from generic events (`element`, by
        description; those that are datasets or jobs of the model are found as those) whose name
        holds `name` in any case: the first `limit` by name. (Datasets and jobs are found by
        `search`.)"""
