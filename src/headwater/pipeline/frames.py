"""The model tables of a set of parsed events: one DataFrame per fact table, as `stage()` takes
them. The pipeline's batches and retention's refresh build their frames here, so both fold events
into the model by the same rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from headwater.pipeline import elements, field_facets
from headwater.pipeline import transforms as t
from headwater.pipeline.facet_history import facet_history

# How the pipeline keeps the frames it reads more than once: as Spark built them (the default of
# `DataFrame.cache()`). MEMORY_AND_DISK serialised every cached batch a second time: 10 of 37
# jstack samples of a large batch's executor threads were there.
KEPT = StorageLevel.MEMORY_AND_DISK_DESER


@dataclass
class ModelFrames:
    """The frames of every fact table, and the intermediate frames kept in memory to build them
    (`release()` frees those once the frames are staged)."""

    tables: dict[str, DataFrame]
    persisted: list[DataFrame] = field(default_factory=list)

    def release(self) -> None:
        for frame in self.persisted:
            frame.unpersist()


def model_frames(
    new: DataFrame,
    run_events: DataFrame,
    *,
    generic: bool = True,
    inline: dict[str, str] | None = None,
    stored_until: Mapping[str, str | None] | None = None,
) -> ModelFrames:
    """Frames of the fact tables for the parsed compact rows `new`; `run_events` holds `new` and
    the earlier events of the runs `new` touches (run-scoped rows come from all of a run's
    events). With `generic` False (the events are known to hold no generic event) the element
    tables, which only generic events feed, are left out: building their frames costs a small
    batch about a tenth of its time for no row. `inline`: every facet value of `run_events`, when
    the driver read them and they are few (`transforms.values_of`). `stored_until`: the latest
    stored assertion of each facet history table (`changes_to_stage`), when the caller read it;
    else every assertion is staged."""
    kept: list[DataFrame] = []

    def keep(frame: DataFrame) -> DataFrame:
        kept.append(frame.persist(KEPT))
        return frame

    values = t.values_of(run_events, inline)  # every facet value the events name, once
    if values.literal is None:  # else the lookups read the literal map, never the frame
        keep(values.frame)
    events = t.events_of(new)
    every_event = events if run_events is new else t.events_of(run_events)
    refs = keep(t.with_sources(t.dataset_refs(events), values))
    job_rows = t.job_refs(events)
    run_refs = t.dataset_refs(every_event) if run_events is not new else refs
    run_jobs = t.job_refs(every_event)

    versions = keep(t.dataset_versions(run_refs, values))
    dataset_history = keep(facet_history(refs, values))
    job_history = facet_history(job_rows, values)
    facets_of_runs = t.run_facets(every_event)
    io = t.run_io(run_refs)
    io_facets = t.run_io_facets(run_refs)
    run_versions = keep(t.run_job_versions(run_jobs, io, values))
    run_rows = keep(t.runs_with_versions(t.runs(every_event, values), run_versions))

    tables: dict[str, DataFrame] = {
        "namespaces": t.namespaces(refs, job_rows),
        "sources": t.sources(refs),
        "datasets": t.datasets(refs, versions),
        "facet_values": t.facet_values(values, dataset_history, job_history, facets_of_runs, io_facets),
        "dataset_facets": _to_stage(dataset_history, "dataset_facets", stored_until),
        "job_facets": _to_stage(job_history, "job_facets", stored_until),
        "schema_fields": field_facets.schema_fields(dataset_history, values),
        "column_lineage": field_facets.column_lineage(dataset_history, values),
        "dataset_symlinks": t.symlinks(refs, values),
        "dataset_versions": t.dataset_version_rows(versions),
        "dataset_version_runs": t.dataset_version_runs(versions),
        "job_parents": t.job_parents(events, values),
        "runs": run_rows,
        "run_facets": facets_of_runs,
        "run_io": io,
        "run_io_facets": io_facets,
        "job_versions": t.job_versions(run_versions),
        "job_version_io": t.job_version_io(run_versions),
        "jobs": t.jobs(job_rows, run_rows),
    }
    if generic:
        tables["element_nodes"] = elements.element_nodes(events)
        tables["element_edges"] = elements.element_edges(events)
    return ModelFrames(tables, kept)


def _to_stage(history: DataFrame, table: str, stored_until: Mapping[str, str | None] | None) -> DataFrame:
    return history if stored_until is None else changes_to_stage(history, stored_until[table])


def changes_to_stage(history: DataFrame, stored_until: str | None) -> DataFrame:
    """The assertions of a `facet_history.facet_history` frame that the merge can use, when the
    latest stored assertion of its table is at `stored_until` (None: none is stored): without
    those that repeat the batch's assertion before them when that one comes after every stored
    assertion.

    No stored assertion can come between two such assertions: the model keeps neither the
    repeating one nor anything else because of it (`headwater.store.model.history`), and the
    merge reads repeated assertions only of a node whose stored ones are as late as the batch's.
    Nearly every assertion repeats the one before it (all but about 3,000 of a 200,000-event
    batch's 1.5 million): not staging them spares the executors' Python, the staging files and
    the merge's read of them (bench/README.md)."""
    # With none stored, every earlier assertion is later than "": the same plan as with one
    # stored, so a first batch's generated code serves the batches after it (`Pipeline._stage_batch`).
    # (A repeated assertion always has one before it: `prev_from` is never NULL there.)
    repeated = (F.col("repeated") == 1) & (F.col("prev_from") > F.lit(stored_until or ""))
    return history.where(~repeated)


def history_frames(parsed: DataFrame, nodes: list[str]) -> dict[str, DataFrame]:
    """The dataset and job facet assertions of the parsed compact rows `parsed` about `nodes`,
    by the rules `model_frames` uses: what a batch stages of the events it reads back for late
    assertions (`headwater.store.model.history`)."""
    values = t.values_of(parsed, None)
    events = t.events_of(parsed)
    about = F.col("node_id").isin(nodes)
    return {
        "dataset_facets": facet_history(t.dataset_refs(events), values).where(about),
        "job_facets": facet_history(t.job_refs(events), values).where(about),
    }
