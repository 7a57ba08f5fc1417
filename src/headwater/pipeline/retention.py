"""Retention: delete the events older than a limit and keep in the model only what the remaining
events support, so that afterwards the model equals `pipeline rebuild` over them.

The model is refreshed, not rebuilt. Under the pipeline lock, with D the events past the limit
(store.retention_sql lists them; a run goes whole or stays) and only the events the model holds
(seq <= checkpoint) read:

1. D's frames are staged: their keys are what D contributed to (runs, datasets, jobs, sources,
   symlinks, parent links, elements and their edges, facet values, schemas).
2. R, every remaining event that can contribute to one of those keys, is staged: all events of the
   runs that read, wrote or ran an affected dataset or job (or a dataset of an affected source),
   every event without a run, and the generic events that share an element with D.
3. One transaction: D's runs and their rows go, D's facet assertions go, the rows of D's keys go
   and R's staged rows are merged back by the pipeline's own rules (for counted element rows, only
   D's keys); versions are recounted, namespaces recomputed from their datasets and jobs, facet
   values, schemas and column lineage no remaining assertion names are swept.
4. The events go, in bounded transactions; then the graph stage rebuilds the graph tables.

A crash between 3 and 4 leaves events the model already forgot; the next retention lists them again
and refreshing with them is harmless (their keys are recomputed from what remains).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from headwater.events.times import TICKS_PER_SECOND, format_ticks, now_ticks
from headwater.pipeline import publish
from headwater.pipeline import transforms as t
from headwater.pipeline.frames import model_frames
from headwater.pipeline.runner import Pipeline
from headwater.pipeline.source import EVENT_SCHEMA
from headwater.store import model
from headwater.store import retention_sql as sql
from headwater.store.base import EventStore
from headwater.store.model import refresh
from headwater.store.model.event_reads import events_where

log = logging.getLogger(__name__)
_DAY = 24 * 3600


@dataclass
class RetentionReport:
    """What a retention removed (or, dry, would remove from the event store)."""

    cutoff: str
    dry_run: bool
    events: int = 0
    runs: int = 0
    generic_events: int = 0
    dead_letters: int = 0
    model: dict[str, int] = field(default_factory=dict)  # rows removed per model table
    seconds: float = 0.0

    def lines(self) -> list[str]:
        verb = "would delete" if self.dry_run else "deleted"
        out = [
            f"events older than {self.cutoff}: {verb} {self.events} event(s) "
            f"({self.runs} run(s), {self.generic_events} generic event(s)) "
            f"and {self.dead_letters} dead letter(s)"
        ]
        if not self.dry_run:
            removed = ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in self.model.items() if n)
            out.append(f"model: removed {removed or 'nothing'}; in {self.seconds:.1f} s")
        return out


def cutoff_for(days: float, now: int | None = None) -> str:
    """The eventTime before which events are past a limit of `days` (a store time string)."""
    ticks = (now_ticks() if now is None else now) - int(
        timedelta(days=days).total_seconds() * TICKS_PER_SECOND
    )
    return format_ticks(ticks)


def apply_retention(
    store: EventStore,
    cutoff: str,
    *,
    pipeline: Callable[[], Pipeline] | None = None,
    dry_run: bool = False,
) -> RetentionReport:
    """Delete the events older than `cutoff` (eventTime; a run goes whole) and refresh the model.
    `pipeline` gives the Pipeline whose SparkSession refreshes the model; it is called only when
    the model holds events to forget. With `dry_run`, only counts."""
    started = time.perf_counter()
    report = RetentionReport(cutoff, dry_run)
    with model.pipeline_lock(store):
        try:
            sql.list_doomed(store, cutoff, store.last_seq())
            doomed = sql.count_doomed(store, cutoff)
            report.events, report.runs = doomed.events, doomed.runs
            report.generic_events, report.dead_letters = doomed.generic_events, doomed.dead_letters
            if dry_run:
                return report
            before = refresh.counts(store)
            checkpoint, _ = model.read_state(store)
            runner = None
            if sql.count_held(store, checkpoint):
                if pipeline is None:
                    raise ValueError("retention needs a pipeline to refresh a published model")
                runner = pipeline()
                runner.size_for(report.events)  # not as the session's last batch left it
                _refresh_model(runner, checkpoint)
            sql.delete_doomed(store, cutoff)
            if runner is not None:
                runner.graph_stage(checkpoint)
            after = refresh.counts(store)
            report.model = {name: before[name] - after[name] for name in refresh.COUNTED}
        finally:
            sql.drop_scratch(store, refresh.SCRATCH)
        model.mark_retention(store)
    report.seconds = time.perf_counter() - started
    return report


# -- the model refresh ---------------------------------------------------------------------------
def _events(pipeline: Pipeline, condition: str) -> DataFrame:
    """The parsed compact rows of the events `condition` (SQL over `events e`) picks."""
    return t.parse_events(pipeline.read_table(events_where(condition), EVENT_SCHEMA))


def _stage(pipeline: Pipeline, events: DataFrame) -> None:
    frames = model_frames(events, events)  # whole runs: every event of a run is in the set
    publish.stage(pipeline.store, frames.tables, pipeline.shuffle_partitions())
    frames.release()


def _refresh_model(pipeline: Pipeline, checkpoint: int) -> None:
    store: EventStore = pipeline.store
    model.prepare_staging(store)
    _stage(pipeline, _events(pipeline, refresh.doomed_events(checkpoint)))
    refresh.keep_doomed_keys(store)
    _stage(pipeline, _events(pipeline, refresh.remaining_events(checkpoint)))
    _keep_schemas(pipeline)
    refresh.refold(store)


def _keep_schemas(pipeline: Pipeline) -> None:
    """Of the schemas D named, those a remaining schema assertion still has (the schema hash is
    Spark's digest of the facet's fields, so Spark computes it)."""
    values = pipeline.read_table(refresh.SCHEMA_VALUES_SQL, "value_hash string, value string")
    fields = values.select(F.get_json_object("value", "$.fields").alias("fields")).where(
        F.col("fields").isNotNull()
    )
    hashes = {row[0] for row in fields.select(t.digest(F.col("fields"))).distinct().collect()}
    refresh.keep_schemas(pipeline.store, hashes)


# -- once a day ----------------------------------------------------------------------------------
def retain_daily(days: float, store: EventStore, pipeline: Callable[[], Pipeline]) -> RetentionReport | None:
    """For the continuous pipeline: apply a limit of `days` when a day has passed since the last
    retention on this store (0 days: never)."""
    if days <= 0:
        return None
    last = model.last_retention(store)
    if last is not None and last > format_ticks(now_ticks() - _DAY * TICKS_PER_SECOND):
        return None
    report = apply_retention(store, cutoff_for(days), pipeline=pipeline)
    log.info("retention: %s", "; ".join(report.lines()))
    return report
