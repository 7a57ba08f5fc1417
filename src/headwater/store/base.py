"""The store interface every backend implements, and the rows it returns."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

from headwater.events.model import Event
from headwater.store.deletions import DeletionMarkers
from headwater.store.graph import GraphReader
from headwater.store.model_rows import (
    DatasetRow,
    DatasetVersionRow,
    Facet,
    JobRow,
    JobVersionRow,
    NamespaceRow,
    NamespaceSummary,
    PipelineProgress,
    RunRow,
    SearchRow,
    SourceRow,
    TagRow,
)
from headwater.store.stats import StatsReader
from headwater.store.vertical import VerticalReader


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as the store keeps it: ingest sequence number, ids, times and the payload."""

    seq: int
    event_id: str
    kind: str
    run_id: str | None
    parent_run_id: str | None
    root_run_id: str | None
    event_type: str | None
    event_time: str
    job_namespace: str | None
    job_name: str | None
    dataset_namespace: str | None
    dataset_name: str | None
    producer: str
    received_at: str
    payload: str
    untrusted_facets: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RunCursor:
    """A position in a run's events, newest first: the last (eventTime, eventId) already read."""

    event_time: str
    event_id: str


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """A Kafka message that could not become an event, kept with where it came from and why."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    error: str
    received_at: str
    id: int | None = None  # assigned by the store


class EventStore(GraphReader, VerticalReader, StatsReader, DeletionMarkers, ABC):
    """The event store: append-only, idempotent by eventId, durable when `append` returns; and
    the read side of the lineage model the pipeline publishes into it."""

    url: str
    backend: str
    # Whether one write transaction holds every other writer back (SQLite: one writer at a time
    # for the whole file), so that a long one stalls ingest; PostgreSQL locks rows.
    single_writer: bool = False

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Any]:
        """A cursor inside one durable write transaction, serialized with every other writer.
        The pipeline publishes the lineage model through it (queries take `?` placeholders
        after `sql()`)."""

    @abstractmethod
    def sql(self, query: str) -> str:
        """The query with `?` placeholders turned into the driver's."""

    @abstractmethod
    def last_seq(self) -> int:
        """The seq of the newest stored event (0 when there is none)."""

    @abstractmethod
    def pipeline_progress(self, *, count_up_to: int) -> PipelineProgress:
        """How far the pipeline has published the stored events; the events waiting are counted
        up to `count_up_to` (a backlog of millions is not worth a full count)."""

    @abstractmethod
    def migrate(self) -> list[int]:
        """Apply the schema migrations not applied yet; return their versions."""

    @abstractmethod
    def schema_version(self) -> int:
        """The newest migration applied (0 for an empty database)."""

    @contextmanager
    def write_turn(self) -> Iterator[None]:
        """Wait until this process may write, and keep that turn for the writes made inside
        (transactions included). Where writers take turns (SQLite), the group commit gathers its
        events only once its turn has come, so that the events sent while another process
        committed join this commit instead of waiting for the next. A no-op elsewhere."""
        yield

    @abstractmethod
    def append(self, events: Sequence[Event], received_at: str) -> list[bool]:
        """Store the events in one durable transaction; True for each newly stored, False for a
        duplicate (already stored, or earlier in the same call)."""

    @abstractmethod
    def sweep_facet_values(self, candidates: set[str]) -> int:
        """Delete the facet values among `candidates` (hashes) that no stored event refers to any
        more; returns how many went."""

    @abstractmethod
    def run_events(
        self, run_id: str, *, include_children: bool, limit: int, after: RunCursor | None
    ) -> list[StoredEvent]:
        """Events of a run (and of runs whose parent or root it is), newest first, after a cursor."""

    @abstractmethod
    def has_run(self, run_id: str, *, include_children: bool) -> bool:
        """Whether any event of the run (or its tree) is stored."""

    @abstractmethod
    def get_event(self, event_id: str) -> StoredEvent | None:
        """One event by eventId."""

    @abstractmethod
    def list_events(
        self,
        *,
        after_time: str | None,
        before_time: str | None,
        descending: bool,
        limit: int,
        offset: int,
        namespace: str | None = None,
        job: str | None = None,
        event_types: Sequence[str] = (),
    ) -> list[StoredEvent]:
        """Events with after_time <= eventTime <= before_time, by eventTime; with `namespace`, only
        events whose job (or, for a dataset event, dataset) is in it; with `job`, only events of
        the job of that name; with `event_types`, only run events of those eventTypes."""

    @abstractmethod
    def count_events(
        self,
        *,
        after_time: str | None,
        before_time: str | None,
        namespace: str | None = None,
        job: str | None = None,
        event_types: Sequence[str] = (),
    ) -> int:
        """How many events list_events would page through."""

    @abstractmethod
    def add_dead_letters(self, letters: Sequence[DeadLetter]) -> int:
        """Keep the dead letters in one durable transaction; one already kept (same topic, partition
        and offset) is skipped. Returns how many were new."""

    @abstractmethod
    def dead_letters(self, *, topic: str | None, limit: int, before_id: int | None) -> list[DeadLetter]:
        """Dead letters, newest first, of one topic or all, with an id below before_id."""

    @abstractmethod
    def count_dead_letters(self, *, topic: str | None) -> int:
        """How many dead letters are kept, of one topic or all."""

    # -- the lineage model (read only) -----------------------------------------------------------
    @abstractmethod
    def list_namespaces(self, *, limit: int, offset: int) -> list[NamespaceRow]:
        """Namespaces by name."""

    @abstractmethod
    def get_namespace(self, name: str) -> NamespaceRow | None:
        """One namespace by name."""

    @abstractmethod
    def list_datasets(self, namespace: str, *, limit: int, offset: int) -> list[DatasetRow]:
        """Datasets of a namespace by name, with their current facets and fields."""

    @abstractmethod
    def count_datasets(self, namespace: str) -> int:
        """How many datasets list_datasets pages through."""

    @abstractmethod
    def get_dataset(self, namespace: str, name: str) -> DatasetRow | None:
        """One dataset with its current facets and the fields of its current version."""

    @abstractmethod
    def list_jobs(
        self, *, namespace: str | None, states: Sequence[str] | None, limit: int, offset: int
    ) -> list[JobRow]:
        """Jobs of one namespace (or all), latest update first; with `states`, only jobs whose
        latest run is in one of them."""

    @abstractmethod
    def count_jobs(self, *, namespace: str | None, states: Sequence[str] | None) -> int:
        """How many jobs list_jobs pages through."""

    @abstractmethod
    def get_job(self, namespace: str, name: str) -> JobRow | None:
        """One job with its current facets, current version's inputs and outputs, latest runs."""

    @abstractmethod
    def list_runs(self, namespace: str, job: str, *, limit: int, offset: int) -> list[RunRow]:
        """Runs of a job, newest start first, with their facets."""

    @abstractmethod
    def count_runs(self, namespace: str, job: str) -> int:
        """How many runs list_runs pages through."""

    @abstractmethod
    def namespace_summaries(self, *, since: str) -> list[NamespaceSummary]:
        """Every namespace by name with its counts of datasets, jobs and runs (of its jobs), and
        of the runs whose last event is at or after `since`."""

    @abstractmethod
    def latest_runs(self, *, states: Sequence[str] | None, limit: int) -> list[RunRow]:
        """Runs of every job, the latest event first; with `states`, only runs in one of them."""

    @abstractmethod
    def get_run(self, run_id: str) -> RunRow | None:
        """One run with its facets."""

    @abstractmethod
    def run_job_facets(self, run_id: str) -> list[Facet] | None:
        """The facets of the run's job as they stood at the run's last event; None for an unknown run."""

    # -- catalog: sources, versions, search, tags --------------------------------------------------
    @abstractmethod
    def list_sources(self, *, limit: int, offset: int) -> list[SourceRow]:
        """Sources by name."""

    @abstractmethod
    def get_source(self, name: str) -> SourceRow | None:
        """One source by name."""

    @abstractmethod
    def list_dataset_versions(
        self, namespace: str, name: str, *, limit: int, offset: int
    ) -> tuple[list[DatasetVersionRow], int]:
        """A dataset's versions, newest first, and how many there are."""

    @abstractmethod
    def get_dataset_version(self, namespace: str, name: str, version: str) -> DatasetVersionRow | None:
        """One version of a dataset."""

    @abstractmethod
    def list_job_versions(
        self, namespace: str, name: str, *, limit: int, offset: int
    ) -> tuple[list[JobVersionRow], int]:
        """A job's versions, newest first, and how many there are."""

    @abstractmethod
    def get_job_version(self, namespace: str, name: str, version: str) -> JobVersionRow | None:
        """One version of a job."""

    @abstractmethod
    def search(
        self,
        q: str,
        *,
        kind: str | None,
        namespace: str | None,
        sort: str,
        limit: int,
        before: str | None,
        after: str | None,
    ) -> tuple[list[SearchRow], int]:
        """Datasets (`kind="DATASET"`) and/or jobs whose name holds `q` (any case), updated in
        [after, before], sorted by NAME or UPDATE_AT (newest first); and how many match, counted
        up to 1,000."""

    @abstractmethod
    def list_tags(self, *, limit: int, offset: int) -> list[TagRow]:
        """Tags by name."""

    @abstractmethod
    def put_tag(self, name: str, description: str | None, now: str) -> TagRow:
        """Create the tag, or set its description."""

    @abstractmethod
    def set_tag(self, node_id: str, tag: str, *, field: str | None, tagged: bool, now: str) -> None:
        """Tag (or untag) a dataset, one of its fields, or a job, by node id. Tagging creates an
        unknown tag."""

    @abstractmethod
    def ping(self) -> None:
        """Raise StoreUnavailable unless the store answers."""

    @abstractmethod
    def close(self) -> None:
        """Release connections."""
