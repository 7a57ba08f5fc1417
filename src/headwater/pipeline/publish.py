"""Staging the model's frames: every table's DataFrame, tagged with its table, goes to the store
in one Spark job, each executor handing its share to the store's staging target as Arrow batches
(`headwater.store.model.staging`). The store then merges a batch with its checkpoint in one
transaction (`headwater.store.model.merge`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

import pyarrow as pa
from pyspark.sql import DataFrame

from headwater.store import model
from headwater.store.base import EventStore

_DONE = pa.schema([("done", pa.int32())])


def _tagged(frames: Mapping[str, DataFrame]) -> DataFrame:
    """All the frames as one, shaped like `model.TAGGED`: the table's name, then the row's values
    as text in the table's column order (`v0`, `v1`, ...; NULL past its last column), so that
    staging every table is one Spark job instead of one per table. Written as one SQL statement
    over a view per frame: built with the DataFrame API, each of the ~400 expressions and unions
    was a call into the JVM that analysed the growing plan again (a fifth of a small batch's
    time). (Each row was one JSON array before, which Spark wrote and the executors parsed back:
    1-4% of a 205,000-event rebuild, bench/README.)"""
    spark = next(iter(frames.values())).sparkSession
    names = model.TAGGED.names
    parts = []
    for name, frame in frames.items():
        view = f"headwater_staged_{name}"
        frame.createOrReplaceTempView(view)
        columns = model.TABLES[name].staged
        values = [f"CAST(`{column}` AS STRING) AS `{names[1 + i]}`" for i, column in enumerate(columns)]
        blanks = [f"CAST(NULL AS STRING) AS `{label}`" for label in names[1 + len(columns) :]]
        parts.append(f"SELECT '{name}' AS `{names[0]}`, {', '.join(values + blanks)} FROM {view}")
    return spark.sql("\nUNION ALL\n".join(parts))


def each_partition(frame: DataFrame, write: Callable[[Iterable[pa.RecordBatch]], None]) -> None:
    """Run `write` on every partition's Arrow batches, on the executors, and wait for them all.

    Spark's `foreachPartition` goes through `DataFrame.rdd`, which analyses, optimises and
    plans the whole query a second time to turn its rows into Python objects: about 1 s of a
    small pass's 4 (bench/cli_pass.sh). `mapInArrow` stays in the query's own plan and hands the
    rows over as Arrow batches. It is called through the UDF it is made of, as PySpark's
    `mapInArrow` would, because that method asks for pandas, which neither side uses."""
    from pyspark.sql.udf import UserDefinedFunction
    from pyspark.util import PythonEvalType

    def run(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        write(batches)
        yield pa.RecordBatch.from_pydict({"done": [1]}, schema=_DONE)

    udf = UserDefinedFunction(run, returnType="done int", evalType=PythonEvalType.SQL_MAP_ARROW_ITER_UDF)
    column = udf(*[frame[name] for name in frame.columns])
    jdf = frame._jdf.mapInArrow(column._jc, False, None)
    DataFrame(jdf, frame.sparkSession).collect()


def staged_rows(frames: Mapping[str, DataFrame], partitions: int) -> DataFrame:
    """Every frame's rows as one frame in at most `partitions` partitions: what `stage_rows`
    stages (`stage` does both; `replan` builds this once and stages it in many passes)."""
    return _tagged(frames).coalesce(max(1, partitions))


def stage_rows(store: EventStore, rows: DataFrame, before_collect: Callable[[], None] | None = None) -> None:
    """Stage the rows of `staged_rows` in one Spark job whose executors write in parallel;
    `before_collect` is called once they have, before their rows go into the staging tables."""
    target = model.staging_target(store)
    each_partition(rows, target.write)
    if before_collect is not None:
        before_collect()
    target.collect(store)


def stage(
    store: EventStore,
    frames: Mapping[str, DataFrame],
    partitions: int,
    before_collect: Callable[[], None] | None = None,
) -> None:
    """Stage every frame (a model table's rows: `model.TABLES` names its columns) in one Spark
    job whose executors write in parallel, in at most `partitions` tasks (`stage_rows`)."""
    stage_rows(store, staged_rows(frames, partitions), before_collect)
