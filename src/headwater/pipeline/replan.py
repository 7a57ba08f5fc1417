"""Small batches' plans: built once a session, planned afresh for each pass.

Building a small batch's frames is driver work that does not depend on the batch's rows: about
6,000 calls into the JVM, each DataFrame step analysed there, then the staging query's analysis
(1.8 s of a 3.6 s pass of +1,000 events on 1,000,000). `BatchPlans` builds the frames of a batch
the driver read once per `Shape`, over two leaves that read Parquet files in a folder of its own
(the batch's events, and their runs' earlier events). Each pass writes its rows there, has the
leaves list their files again, and runs the same analysed plans in new query executions: a
query execution keeps its physical plan, and running that again would reuse its shuffle outputs
and its file listing. Only the optimizer and the physical planning run each pass.

Local masters only: on a cluster, the executors could not read the driver's folder. The folder
is in the driver's Spark folder (`SparkFiles.getRootDirectory()`), removed with it.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark import SparkFiles
from pyspark.sql import DataFrame, SparkSession

from headwater.pipeline import publish, source
from headwater.pipeline import transforms as t
from headwater.pipeline.frames import KEPT, model_frames
from headwater.store.base import EventStore


@dataclass(frozen=True)
class Shape:
    """What a batch's plan depends on besides its rows: whether it holds generic events (their
    tables are left out when it does not), and whether its runs have earlier events."""

    generic: bool
    earlier: bool


@dataclass(frozen=True)
class _Built:
    """The frames of one shape: those a pass keeps in memory (upstream first, so each one's
    cache is built from those before it) and the staged rows of every table."""

    kept: tuple[DataFrame, ...]
    rows: DataFrame


class _Leaf:
    """A frame reading the Parquet files of one folder, and its file listing (`refresh`)."""

    def __init__(self, spark: SparkSession, folder: Path) -> None:
        folder.mkdir()
        self.folder = folder
        files = spark.read.schema(source.EVENT_SCHEMA).parquet(str(folder))
        self.frame = files.coalesce(1)  # the same relation: refreshing its listing serves both
        self._files = files._jdf.queryExecution().analyzed().relation().location()
        self._count = itertools.count()

    def put(self, rows: pa.Table) -> None:
        """Make the leaf read `rows` (and nothing it read before)."""
        for old in self.folder.glob("*.parquet"):
            old.unlink()
        pq.write_table(rows, self.folder / f"rows-{next(self._count)}.parquet", compression="none")
        self._files.refresh()


class BatchPlans:
    """The frames of small batches read by the driver (`stage`), built once per shape."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        # inside the driver's own Spark folder, which Spark's JVM removes as it exits, even when
        # this process ends without running its exit handlers
        self.folder = Path(tempfile.mkdtemp(prefix="headwater-batch-", dir=SparkFiles.getRootDirectory()))
        weakref.finalize(self, shutil.rmtree, self.folder, True)
        self._leaves: tuple[_Leaf, _Leaf] | None = None  # the events, their runs' earlier events
        self._built: dict[Shape, _Built] = {}
        self._seen: set[Shape] = set()

    @staticmethod
    def usable(spark: SparkSession) -> bool:
        """Whether the session's executors read the driver's files (a local master)."""
        return (spark.sparkContext.master or "").startswith("local")

    def stage(
        self, store: EventStore, events: pa.Table, earlier: pa.Table | None, *, repeating: bool = False
    ) -> bool:
        """Stage the model rows of `events` (compact rows as `source.events_here` reads them),
        `earlier` holding their runs' earlier events (None: there are none), in one partition;
        False, having done nothing, the first time a shape comes, unless passes are `repeating`
        (a continuous pipeline's): building its plans costs a batch more than building its
        frames once (a cold JVM reading its first Parquet file), which a one-off run of one
        batch would never repay, but a batch built the usual way costs as much again, and
        repeated passes then build the plans at the next batch of the shape anyway
        (bench/README.md)."""
        shape = Shape(generic=source.holds_generic(events), earlier=earlier is not None)
        if shape not in self._seen and not repeating:
            self._seen.add(shape)
            return False
        if self._leaves is None:
            self._leaves = (
                _Leaf(self.spark, self.folder / "events"),
                _Leaf(self.spark, self.folder / "earlier"),
            )
        self._leaves[0].put(events)
        if earlier is not None:
            self._leaves[1].put(earlier)
        built = self._built.get(shape) or self._build(shape, *self._leaves)
        kept = [self._fresh(frame).persist(KEPT) for frame in built.kept]
        try:
            publish.stage_rows(store, self._fresh(built.rows))
        finally:
            for frame in kept:
                frame.unpersist()
        return True

    def _build(self, shape: Shape, events: _Leaf, earlier: _Leaf) -> _Built:
        new = t.parse_events(events.frame)
        firsts = [new]  # kept: the union of the batch and its earlier events as its two parts
        run_events = new
        if shape.earlier:
            firsts.append(t.parse_events(earlier.frame))
            run_events = t.union(*firsts)
        frames = model_frames(new, run_events, generic=shape.generic)
        frames.release()  # built to be run again: each pass keeps fresh ones (`stage`)
        built = _Built(tuple(firsts + frames.persisted), publish.staged_rows(frames.tables, 1))
        self._built[shape] = built
        return built

    def _fresh(self, frame: DataFrame) -> DataFrame:
        """The frame's analysed plan in a new query execution (optimised and planned anew when run)."""
        jvm = self.spark.sparkContext._jvm
        assert jvm is not None
        plan = frame._jdf.queryExecution().analyzed()
        return DataFrame(
            jvm.org.apache.spark.sql.classic.Dataset.ofRows(self.spark._jsparkSession, plan), self.spark
        )
