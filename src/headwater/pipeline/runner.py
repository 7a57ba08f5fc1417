"""The pipeline's driver: batches of new events → staged model → one merge with the checkpoint,
then the graph stage; once (`run`), from scratch (`rebuild`) or forever (`continuous`).

The driver orchestrates: it reads seq numbers and counts; the events and entities it reads
itself are bounded by `read_here_rows` (small batches), and the graph it computes itself by
GRAPH_HERE_ROWS and GRAPH_HERE_ENDS.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pyarrow as pa
from pyspark.sql import DataFrame, DataFrameReader, SparkSession

from headwater.pipeline import driver_graph, ends, graph, graph_delta, publish, source
from headwater.pipeline import transforms as t
from headwater.pipeline.dogfood import Reporter
from headwater.pipeline.frames import KEPT, history_frames, model_frames
from headwater.pipeline.replan import BatchPlans
from headwater.store import model
from headwater.store.base import EventStore
from headwater.store.model import graph_inputs
from headwater.store.model.event_reads import events_where

log = logging.getLogger(__name__)
_EVENTS_PER_PARTITION = 20_000
POLL_SECONDS = 0.25  # how often the continuous pipeline asks the store for new events
_CODEGEN_ROWS = 20_000  # below, compiling generated code costs more than it saves (2 events: 9.0 → 5.6 s)
READ_HERE_ROWS = 20_000  # reads up to this size are done by the driver (source.read_here)
# The whole graph is computed in the driver (driver_graph) when each of its inputs has at most
# GRAPH_HERE_ROWS rows and the ends its propagation holds (the datasets' and the jobs') come to at
# most GRAPH_HERE_ENDS; else on Spark. A bulk-loaded model of 100,000 datasets (277,601 inputs
# and outputs, 7.0M ultimate rows, about 10M ends held): 58 s and about 800 MB of Python objects
# at the peak in the driver, where Spark takes many minutes (bench/graph_stage.py).
GRAPH_HERE_ROWS = 300_000
GRAPH_HERE_ENDS = 12_000_000
# A batch of this many events or more stages, of the facet history, the changes and not the
# assertions that repeat the one before (`frames.changes_to_stage`): the latest stored assertion
# it needs is a scan of the history tables, which would cost a small batch more than it saves.
STAGE_CHANGES_FROM = _EVENTS_PER_PARTITION
INLINE_VALUES = 1_000  # a driver-read batch naming at most this many facet values looks them up in a map
# While events are being ingested into a single-writer store (SQLite), ingest waits for each
# merge's write lock: a merge of 200,000 events held it 10-25 s (bench/soak.py). Then a batch
# takes as many events as its merge can take in about LIVE_MERGE_SECONDS, going by the last merge.
LIVE_MERGE_SECONDS = 1.0
LIVE_BATCH_FIRST = 10_000  # a live batch before any merge was timed
LIVE_BATCH_LEAST = 5_000  # below, a batch pays Spark's fixed cost of a pass (~7 s) for too little
# A batch in one partition (`transforms.ONE_PARTITION`) is neither broadcast nor shuffled: no
# automatic broadcasts, and a join of two sides in one partition each stays there whatever size
# the optimizer guesses for them (a cached frame not yet computed counts as huge, and above this
# size both sides of each join were shuffled, one stage each, though each side was one partition)
_ONE_PARTITION_SETTINGS = {
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.maxSinglePartitionBytes": str(2**63 - 1),
}


def live_batch_size(batch_events: int, merge_seconds_per_event: float | None) -> int:
    """Events one batch takes while ingest is live on a single-writer store: enough for a merge
    of about LIVE_MERGE_SECONDS at the rate of the last merges, within [LIVE_BATCH_LEAST,
    `batch_events`]."""
    if merge_seconds_per_event is None:
        return min(batch_events, LIVE_BATCH_FIRST)
    wanted = round(LIVE_MERGE_SECONDS / max(merge_seconds_per_event, 1e-9))
    return min(batch_events, max(LIVE_BATCH_LEAST, wanted))


@dataclass
class PassResult:
    """What one pass did: events read, batches published, whether the graph was updated."""

    events: int = 0
    batches: int = 0
    graph: bool = False
    graph_how: str = ""  # how the graph was updated: "edited", "driver" (whole) or "spark" (whole)
    live: bool = False  # events were being stored meanwhile: batches sized for short merges
    checkpoint: int = 0
    seconds: float = 0.0
    stages: dict[str, float] = field(default_factory=dict)


class _Merging:
    """A large batch's merge, run in a thread of its own while the Spark job of the next batch
    runs (`Pipeline._batch`): on 2 cores the executors sat idle through each merge, and the
    driver's single-threaded merge and frame building took a fifth of a 1,000,000-event pass.
    `until`: the facet histories' latest assertions once it is done, for the next batch's frames
    (`model.stored_until` with the staged ones)."""

    def __init__(
        self, low: int, high: int, until: dict[str, str | None], merge: Callable[[], object]
    ) -> None:
        self.low, self.high, self.until = low, high, until
        self.seconds = 0.0
        self.done = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(merge,), name="headwater-merge", daemon=True)
        self._thread.start()

    def _run(self, merge: Callable[[], object]) -> None:
        tick = time.perf_counter()
        try:
            merge()
        except BaseException as exc:  # raised again where the pipeline waits for it
            self._error = exc
        self.seconds = time.perf_counter() - tick

    def wait(self) -> None:
        """Wait for the merge; raise what it raised."""
        self._thread.join()
        self.done = True
        if self._error is not None:
            raise self._error


class Pipeline:
    """Builds the lineage model of one store with one SparkSession."""

    def __init__(
        self,
        spark: SparkSession,
        store: EventStore,
        *,
        batch_events: int = 200_000,
        partitions: int = 0,
        dogfood: bool = True,
        progress: Callable[[str], None] | None = None,
        read_here_rows: int = READ_HERE_ROWS,
    ) -> None:
        self.spark = spark
        self.store = store
        self.url = store.url
        self.batch_events = max(1, batch_events)
        self.parallelism = spark.sparkContext.defaultParallelism
        self.partitions = partitions or 2 * self.parallelism
        self.reporter = Reporter(store) if dogfood else None
        self.progress = progress or (lambda _step: None)
        self.read_here_rows = read_here_rows  # reads up to this many rows are done by the driver
        self._source_registered = False
        self._merge_per_event: float | None = None  # seconds a merge took per event, lately
        self._newest_seen: int | None = None  # the newest seq when the last pass started
        self._plans: BatchPlans | None = None  # small batches' plans, built once (`replan`)
        self._repeating = False  # passes follow each other in this session (`continuous`)

    # -- reading ---------------------------------------------------------------------------------
    def _read_here(self, low: int, high: int, *, readback: bool = False) -> pa.Table | None:
        """The events of (low, high] (or their runs' earlier events) read by the driver, when
        they are few enough (`read_here_rows`); else None."""
        if high - low > self.read_here_rows:
            return None
        return source.events_here(self.url, low, high, readback=readback, limit=self.read_here_rows)

    def _events(self, low: int, high: int, table: pa.Table | None, *, readback: bool = False) -> DataFrame:
        """The events of (low, high] (or their runs' earlier events): `table` when the driver
        read them (`_read_here`), else read by the executors."""
        if table is not None:
            return self._frame_of(table)
        # a small batch is read in fewer partitions: each one costs a task and a connection
        parts = max(1, min(self.partitions, (high - low) // _EVENTS_PER_PARTITION + 1))
        reader = (
            self._source(source.EVENT_SCHEMA)
            .option("kind", "events")
            .option("low", str(low))
            .option("high", str(high))
            .option("partitions", str(parts))
            .option("readback", "true" if readback else "false")
        )
        frame = reader.load()
        return frame.coalesce(1) if parts == 1 else frame

    def read_table(self, query: str, schema: str, *, rows: int | None = None) -> DataFrame:
        """The rows of a query over the model; read in the driver when `rows` (an estimate)
        says the table is small."""
        return self._table(query, schema, rows)[0]

    def _table(self, query: str, schema: str, rows: int | None) -> tuple[DataFrame, pa.Table | None]:
        """`read_table`, with the Arrow table the rows were read into when the driver read them."""
        if rows is not None and rows <= self.read_here_rows:
            table = source.table_here(self.url, query, schema, self.read_here_rows)
            if table is not None:
                return self._frame_of(table), table
        reader = self._source(schema).option("kind", "table").option("query", query).option("schema", schema)
        return reader.load(), None

    def _frame_of(self, table: pa.Table) -> DataFrame:
        """A DataFrame of rows the driver read, in one partition. Spark ships such rows inside
        its tasks (about 2 MB for 1,000 events and their facet values), and a small batch's
        plan scans them in many stages: with one partition, each stage has one such task instead
        of one per core."""
        return self.spark.createDataFrame(table).coalesce(1)

    def _source(self, schema: str) -> DataFrameReader:
        """A reader of the `headwater` data source with its schema given (Spark then asks no
        Python worker for it). The source is registered on first use: registering starts a
        Python worker (2.4 s of a one-off `pipeline run`), which small passes never need."""
        if not self._source_registered:
            self.spark.dataSource.register(source.HeadwaterSource)
            self._source_registered = True
        return self.spark.read.format("headwater").schema(schema).option("url", self.url)

    # -- one batch ------------------------------------------------------------------------------
    def _batch(
        self, low: int, high: int, result: PassResult, merging: _Merging | None, *, overlap: bool
    ) -> _Merging | None:
        """Stage and merge the events of (low, high]. `merging`: the batch before's merge, still
        running; its rows are staged meanwhile when both batches are large and the executors
        stage into files of their own (`StagingTarget.deferred`), else after it. `overlap`: a
        large batch follows; then this one's merge is returned running (`_Merging`)."""
        started = time.perf_counter()
        one = self.size_for(high - low)
        deferred = model.staging_target(self.store).deferred
        if merging is not None and (one or not deferred):
            self._merged(merging, result)
            merging = None
        table = self._read_here(low, high)
        known = self._read_here(low, high, readback=True) if low > 0 else None
        read_here = table is not None and (low == 0 or known is not None)
        earlier = known if known is not None and known.num_rows else None
        tick = time.perf_counter()
        plans = self._batch_plans() if read_here and one else None
        if (
            plans is None
            or table is None
            or not plans.stage(self.store, table, earlier, repeating=self._repeating)
        ):
            until = merging.until if merging is not None else None

            def merged() -> None:  # the batch before is merged before this one's rows are collected
                if merging is not None and not merging.done:
                    self._merged(merging, result)

            self._stage_batch(
                low, high, table, known, read_here=read_here, until=until, before_collect=merged
            )
        if merging is not None and not merging.done:
            self._merged(merging, result)
        if low > 0:
            self._stage_late(low)
        result.stages["transform+stage"] = (
            result.stages.get("transform+stage", 0.0) + time.perf_counter() - tick
        )
        self.progress("staged")
        if overlap and deferred and not one:
            until_next = model.stored_until(self.store, staged=True)
            return _Merging(low, high, until_next, lambda: model.merge_facts(self.store, low, high))
        tick = time.perf_counter()
        model.merge_facts(self.store, low, high)
        self._published(low, high, time.perf_counter() - tick, result, started)
        return None

    def _merged(self, merging: _Merging, result: PassResult) -> None:
        """Wait for a batch's merge running in its thread (`_Merging`), then count it."""
        merging.wait()
        self._published(merging.low, merging.high, merging.seconds, result, None)

    def _published(
        self, low: int, high: int, merged: float, result: PassResult, started: float | None
    ) -> None:
        """Count a merged batch: the merge's time (which sizes live batches) and its events."""
        rate = merged / max(1, high - low)
        previous = self._merge_per_event
        self._merge_per_event = rate if previous is None else (rate + previous) / 2
        result.stages["merge"] = result.stages.get("merge", 0.0) + merged
        self.progress("merge")
        result.batches += 1
        result.events += high - low  # seq numbers covered (an upper bound on events: seq has gaps)
        whole = f" in {time.perf_counter() - started:.1f} s" if started is not None else ""
        log.info(
            "pipeline batch (%d, %d] published%s (merge, holding the store's write lock: %.1f s)",
            low,
            high,
            whole,
            merged,
        )

    def _stage_batch(
        self,
        low: int,
        high: int,
        table: pa.Table | None,
        known: pa.Table | None,
        *,
        read_here: bool,
        until: dict[str, str | None] | None = None,
        before_collect: Callable[[], None] | None = None,
    ) -> None:
        """Build and stage the model rows of the events of (low, high]; `table` and `known`: the
        events and their runs' earlier events, where the driver read them (`_read_here`);
        `read_here`: the driver read all the batch needs; `until`: the facet histories' latest
        assertions, when the caller knows them (`_Merging`); `before_collect`: called once the
        executors have staged, before their rows go into the store (`publish.stage_rows`)."""
        new = t.parse_events(self._events(low, high, table)).persist(KEPT)
        kept = [new]
        try:
            run_events = new
            # new runs only (known empty): nothing to add. A large first batch (low 0) reads back
            # too, though there is nothing before it: its plans are then those of the large batches
            # after it, whose generated code Spark then takes from its cache, compiled and warm,
            # instead of compiling 154 classes of its own for the second batch (bench/README.md).
            if (low > 0 and (known is None or known.num_rows)) or (low == 0 and table is None):
                # the earlier events kept on their own: a kept union held a second copy of `new`
                earlier = t.parse_events(self._events(low, high, known, readback=True)).persist(KEPT)
                kept.append(earlier)
                run_events = t.union(new, earlier)
            # a batch the driver read is known to hold generic events or not; their tables need none
            generic = table is None or source.holds_generic(table)
            # facet values as a literal map when the driver read them all and they are few
            inline = source.few_values(table, known, INLINE_VALUES) if read_here else None
            if high - low < STAGE_CHANGES_FROM:
                until = None
            elif until is None:
                until = model.stored_until(self.store)
            frames = model_frames(new, run_events, generic=generic, inline=inline, stored_until=until)
            kept.extend(frames.persisted)
            publish.stage(self.store, frames.tables, self.shuffle_partitions(), before_collect)
        finally:  # a failed batch leaves nothing in memory either
            for frame in kept:
                frame.unpersist()

    def _stage_late(self, low: int) -> None:
        """With a batch staged: when some of its facet assertions are late, with a value other
        than the one in force at their time, stage the assertions the model dropped after them,
        read back from the events it holds (`headwater.store.model.history`)."""
        windows = model.mark_late(self.store)
        if not windows:
            return
        tick = time.perf_counter()
        nodes = model.late_nodes(self.store)
        query = events_where(model.readback_condition(low))
        events = t.parse_events(self.read_table(query, source.EVENT_SCHEMA))
        publish.stage(self.store, history_frames(events, nodes), self.shuffle_partitions())
        log.info(
            "late facet assertions on %d node(s): %d window(s) read back in %.1f s",
            len(nodes),
            windows,
            time.perf_counter() - tick,
        )

    def _batch_plans(self) -> BatchPlans | None:
        """The plans of small batches (`replan`), made on first use; None on a cluster."""
        if self._plans is None and BatchPlans.usable(self.spark):
            self._plans = BatchPlans(self.spark)
        return self._plans

    def shuffle_partitions(self) -> int:
        return int(self.spark.conf.get("spark.sql.shuffle.partitions") or self.parallelism)

    def size_for(self, rows: int) -> bool:
        """Set the session for a batch of about `rows` rows (every batch, the graph stage and
        retention's refresh do, before building their frames): about one shuffle partition per
        _EVENTS_PER_PARTITION rows, at least one per core (and one in all below that many rows:
        then the batch is read and kept in one partition, and neither shuffled nor broadcast,
        `transforms.ONE_PARTITION`); and whole-stage code generation only for batches large
        enough to repay compiling it (on a batch of a few events, compiling the generated code
        takes longer than running it)."""
        one = rows < _EVENTS_PER_PARTITION  # one task per stage: a second would only add overhead
        parts = 1 if one else max(self.parallelism, min(512, rows // _EVENTS_PER_PARTITION))
        self.spark.conf.set("spark.sql.shuffle.partitions", str(parts))
        self.spark.conf.set(t.ONE_PARTITION, "true" if one else "false")
        for name, value in _ONE_PARTITION_SETTINGS.items():
            if one:
                self.spark.conf.set(name, value)
            else:  # the session's own setting
                self.spark.conf.unset(name)
        compiled = rows >= _CODEGEN_ROWS
        self.spark.conf.set("spark.sql.codegen.wholeStage", "true" if compiled else "false")
        self.spark.conf.set("spark.sql.codegen.factoryMode", "FALLBACK" if compiled else "NO_CODEGEN")
        return one

    # -- the graph stage -----------------------------------------------------------------------
    def _graph(self, checkpoint: int, result: PassResult) -> None:
        tick = time.perf_counter()
        if self._graph_edited(checkpoint):
            result.graph_how = "edited"
        elif self._graph_here(checkpoint):
            result.graph_how = "driver"
        else:
            self._graph_on_spark(checkpoint)
            result.graph_how = "spark"
        result.graph = True
        result.stages["graph"] = result.stages.get("graph", 0.0) + time.perf_counter() - tick

    def _graph_edited(self, checkpoint: int) -> bool:
        """The published graph edited in place where this pass changed it (`graph_delta`), in one
        transaction; False, having done nothing, when it is not whole or the change reaches too
        many datasets, or the driver reads nothing (`read_here_rows` 0: every graph on Spark)."""
        if self.read_here_rows <= 0:
            return False
        published = graph_inputs.published_graph(self.store)
        if published is None:
            return False
        edits = graph_delta.graph_edits(
            published, lambda nodes, kind: graph_inputs.published_ends(self.store, nodes, kind)
        )
        if edits is None:
            return False
        model.edit_graph(self.store, edits, checkpoint)
        self.progress("graph edges")
        self.progress("graph")
        return True

    def _graph_here(self, checkpoint: int) -> bool:
        """The graph computed in the driver and published in one transaction, when each of its
        inputs has at most GRAPH_HERE_ROWS rows (or `read_here_rows`, when more; none when it is
        0) and its ends at most GRAPH_HERE_ENDS: a pass over a few events then spends milliseconds
        here instead of a Spark job per propagation round, and a large graph a minute instead of
        many; False, having published nothing, otherwise."""
        if self.read_here_rows <= 0:
            return False
        inputs = graph_inputs.small_graph_inputs(self.store, max(self.read_here_rows, GRAPH_HERE_ROWS))
        if inputs is None:
            return False
        try:
            tables = driver_graph.graph_tables(
                inputs.symlinks, inputs.current_io, inputs.parents, budget=GRAPH_HERE_ENDS
            )
        except ends.OverBudget:
            log.info(
                "pipeline: the graph's ends pass %s in the driver: computed on Spark", f"{GRAPH_HERE_ENDS:,}"
            )
            return False
        model.replace_graph_rows(self.store, tables.by_table(), checkpoint)
        self.progress("graph edges")
        self.progress("graph")
        return True

    def _graph_on_spark(self, checkpoint: int) -> None:
        size = graph_inputs.graph_size(self.store)
        self.size_for(size)
        symlinks, known = self._table(
            graph_inputs.SYMLINKS_SQL, "node_id string, alias_node_id string, alias_known int", size
        )
        current_io = self.read_table(
            graph_inputs.CURRENT_IO_SQL,
            "job_id string, version_id string, direction string, node_id string",
            rows=size,
        )
        parents = self.read_table(
            graph_inputs.PARENTS_SQL, "parent_node_id string, child_node_id string", rows=size
        )
        if known is not None and not known.num_rows:  # no symlinks: no aliases, and no Spark job to say so
            alias_map = self.spark.createDataFrame([], "node_id string, canonical_id string")
        else:
            alias_map = graph.aliases(symlinks)
        alias_map = alias_map.persist(KEPT)
        edges = graph.lineage_edges(current_io, parents, alias_map).persist(KEPT)
        # The edges first, in a transaction of their own: lineage queries read only them, and
        # the ends' propagation takes one Spark job per step of the longest path.
        near = {"dataset_aliases": alias_map, "lineage_edges": edges}
        publish.stage(self.store, near, self.shuffle_partitions())
        model.replace_graph(self.store, tuple(near))
        self.progress("graph edges")
        ultimate = graph.ultimate_nodes(edges).persist(KEPT)
        ends = {"ultimate_nodes": ultimate, "dataset_depth": graph.dataset_depth(ultimate)}
        publish.stage(self.store, ends, self.shuffle_partitions())
        model.replace_graph(self.store, tuple(ends), checkpoint)
        self.progress("graph")
        for frame in (ultimate, edges, alias_map):
            frame.unpersist()

    def graph_stage(self, checkpoint: int) -> PassResult:
        """Rebuild the graph tables from the model as of `checkpoint` (the caller holds the lock)."""
        result = PassResult(checkpoint=checkpoint)
        self._graph(checkpoint, result)
        return result

    def pending(self) -> tuple[int, int]:
        """(events waiting above the checkpoint, batches they make): what the next pass will do."""
        checkpoint, _ = model.read_state(self.store)
        waiting = max(0, self.store.last_seq() - checkpoint)
        return waiting, -(-waiting // self.batch_events)

    # -- passes ----------------------------------------------------------------------------------
    def run_once(self, stop: threading.Event | None = None) -> PassResult:
        """Process every event above the checkpoint, in bounded batches, then the graph; with
        `stop` set, no further batch starts (what is published stays consistent)."""
        result = PassResult()
        started = time.perf_counter()
        with model.pipeline_lock(self.store):
            checkpoint, graph_checkpoint = model.read_state(self.store)
            high = self.store.last_seq()
            if checkpoint < high or graph_checkpoint < checkpoint:  # else nothing to stage
                model.prepare_staging(self.store)
            own = self.reporter.is_own_range(checkpoint, high) if self.reporter else False
            # live: events were stored after the last pass started (its own report counts, but a
            # pass that only takes a report is one small batch anyway)
            result.live = self._newest_seen is not None and high > self._newest_seen
            merging: _Merging | None = None
            try:
                while checkpoint < high and not (stop and stop.is_set()):
                    upper = min(checkpoint + self._batch_size(result, high), high)
                    overlap = not result.live and high - upper >= _EVENTS_PER_PARTITION
                    merging = self._batch(checkpoint, upper, result, merging, overlap=overlap)
                    checkpoint = upper
                if merging is not None:
                    self._merged(merging, result)
            finally:  # the lock is held until the merge under way is done, whatever happened
                if merging is not None and not merging.done:
                    try:
                        merging.wait()
                    except Exception:
                        log.exception(
                            "pipeline: the merge of batch (%d, %d] failed", merging.low, merging.high
                        )
            checkpoint, graph_checkpoint = model.read_state(self.store)
            if graph_checkpoint < checkpoint and not (stop and stop.is_set()):
                self._graph(checkpoint, result)
        result.checkpoint = checkpoint
        result.seconds = time.perf_counter() - started
        if self.reporter and result.batches and not own:
            self.reporter.report(result)
        self._newest_seen = high
        return result

    def _batch_size(self, result: PassResult, high: int) -> int:
        """Events the next batch takes: `batch_events`, unless events are being stored while
        the pipeline runs (during the last pass or this one, or between) into a single-writer store:
        then few enough for a merge of about LIVE_MERGE_SECONDS, so ingest never waits long."""
        if not result.live and result.batches and self.store.last_seq() > high:
            result.live = True
        if not (result.live and self.store.single_writer):
            return self.batch_events
        return live_batch_size(self.batch_events, self._merge_per_event)

    def rebuild(self) -> PassResult:
        """Recompute the whole model from every event."""
        with model.pipeline_lock(self.store):
            model.reset_model(self.store)
        return self.run_once()

    def news(self, checkpoint: int) -> bool:
        """Whether events other than the pipeline's own last report are stored above
        `checkpoint` (one read of the newest seq: cheap enough to ask several times a second)."""
        high = self.store.last_seq()
        if high <= checkpoint:
            return False
        return not (self.reporter and self.reporter.is_own_range(checkpoint, high))

    def continuous(
        self,
        interval: float,
        stop: threading.Event | None = None,
        on_pass: Callable[[PassResult], None] | None = None,
        *,
        poll: float = POLL_SECONDS,
    ) -> None:
        """Passes until `stop` is set: one at least every `interval` seconds (it also publishes
        the pipeline's own report and calls `on_pass`), and one as soon as other new events are
        stored, which the store is asked every `poll` seconds; so an event waits for the pass
        under way, not for the interval. Raises PipelineBusy when another continuous pipeline
        runs on the store; a pass that finds a one-off `pipeline run` publishing is skipped."""
        stop = stop or threading.Event()
        self._repeating = True  # small batches' plans are built at a shape's first batch (`replan`)
        with model.continuous_lock(self.store):  # one-off `pipeline run`s wait for this one to publish
            self._continue(interval, stop, on_pass, poll)

    def _continue(
        self,
        interval: float,
        stop: threading.Event,
        on_pass: Callable[[PassResult], None] | None,
        poll: float,
    ) -> None:
        last, checkpoint, busy = float("-inf"), 0, False
        while not stop.is_set():
            if time.monotonic() - last >= interval or self.news(checkpoint):
                try:
                    result = self.run_once(stop)
                except model.PipelineBusy as exc:  # a one-off pass publishes meanwhile: its work counts
                    if not busy:
                        log.info("pipeline: %s; passes wait for it", exc.message)
                    busy = True
                    stop.wait(poll)
                    continue
                last, checkpoint, busy = time.monotonic(), result.checkpoint, False
                if on_pass:
                    on_pass(result)
                if result.batches:
                    log.info(
                        "pipeline: %d batch(es) up to seq %d in %.1f s",
                        result.batches,
                        result.checkpoint,
                        result.seconds,
                    )
            stop.wait(poll)
