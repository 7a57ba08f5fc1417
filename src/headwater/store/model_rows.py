"""Rows of the lineage model as the store's read methods return them (times in the stored form)."""

from __future__ import annotations

from dataclasses import dataclass

# Run states as the model stores them (Marquez' names).
RUN_STATES = ("NEW", "RUNNING", "COMPLETED", "FAILED", "ABORTED")


@dataclass(frozen=True, slots=True)
class Facet:
    """One facet: its name and its JSON value as stored in facet_values."""

    name: str
    value: str


@dataclass(frozen=True, slots=True)
class NamespaceRow:
    name: str
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class NamespaceSummary:
    """A namespace with what it holds: counts of datasets, jobs and runs, the last run's time."""

    name: str
    datasets: int
    jobs: int
    runs: int
    recent_runs: int  # runs whose last event is at or after the `since` asked for
    last_run_at: str | None


# The job the pipeline reports its own passes as (pipeline/dogfood.py): (namespace, name).
PIPELINE_REPORT_JOB = ("headwater", "headwater.pipeline")


@dataclass(frozen=True, slots=True)
class PipelineProgress:
    """How far the pipeline has published the events stored: seqs (the store's ingest order), the
    events stored above the checkpoint, counted up to the bound asked for, how many of those are
    the pipeline's reports of its own passes (published with the next pass), and when the model
    last changed (None: never)."""

    stored_through: int  # the last seq stored
    published_through: int  # the checkpoint: every event up to it is in the model
    graph_through: int  # the graph tables reflect every event up to it
    waiting: int  # events stored above the checkpoint (at most the bound asked for)
    waiting_reports: int  # of those, events of PIPELINE_REPORT_JOB
    published_at: str | None


@dataclass(frozen=True, slots=True)
class FieldRow:
    """A schema field; nested fields have dotted paths (`address.city`) and follow their parent."""

    path: str
    position: int
    type: str | None
    description: str | None


@dataclass(frozen=True, slots=True)
class DatasetRef:
    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class DatasetRow:
    namespace: str
    name: str
    created_at: str
    updated_at: str
    source_name: str | None
    current_version: str | None
    lifecycle: str | None
    last_modified_at: str | None  # the end of the latest COMPLETED run that wrote it
    fields: tuple[FieldRow, ...]
    facets: tuple[Facet, ...]  # current: not ended, not deleted
    tags: tuple[str, ...] = ()
    field_tags: tuple[tuple[str, str], ...] = ()  # (field path, tag)


@dataclass(frozen=True, slots=True)
class RunRow:
    run_id: str
    job_namespace: str
    job_name: str
    state: str
    state_time: str
    started_at: str | None
    ended_at: str | None
    duration_ms: int | None
    nominal_start: str | None
    nominal_end: str | None
    parent_run_id: str | None
    root_run_id: str | None
    job_version: str | None
    created_at: str  # the run's first event
    updated_at: str  # the run's last event
    facets: tuple[Facet, ...]


@dataclass(frozen=True, slots=True)
class JobRow:
    namespace: str
    name: str
    created_at: str
    updated_at: str
    current_version: str | None
    parent_name: str | None
    inputs: tuple[DatasetRef, ...]  # of the current version
    outputs: tuple[DatasetRef, ...]
    facets: tuple[Facet, ...]  # current: not ended, not deleted
    latest_run: RunRow | None
    latest_runs: tuple[RunRow, ...]  # newest first, at most LATEST_RUNS
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SourceRow:
    """A data source named by datasets' dataSource facet."""

    name: str
    uri: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class DatasetVersionRow:
    """A version of a dataset: one distinct written content (schema, datasetVersion, lifecycle)."""

    version_id: str
    namespace: str
    name: str
    source_name: str | None
    version_label: str | None
    lifecycle: str | None
    created_at: str
    fields: tuple[FieldRow, ...]
    facets: tuple[Facet, ...]  # the dataset's facets as they stood when the version was created
    created_by_run: RunRow | None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class JobVersionRow:
    """A version of a job: one distinct (code location, SQL, inputs, outputs)."""

    version_id: str
    namespace: str
    name: str
    location: str | None
    created_at: str | None
    updated_at: str | None
    run_count: int
    inputs: tuple[DatasetRef, ...]
    outputs: tuple[DatasetRef, ...]
    latest_run: RunRow | None
    facets: tuple[Facet, ...]  # the job's facets as they stood at its latest run


@dataclass(frozen=True, slots=True)
class SearchRow:
    kind: str  # DATASET or JOB
    namespace: str
    name: str
    node_id: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class TagRow:
    name: str
    description: str | None
