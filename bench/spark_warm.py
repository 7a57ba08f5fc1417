"""What a cold JVM costs a large batch: build and run one batch's model frames several times in
one SparkSession, and print each round's seconds beside the JIT's and the garbage collector's.

    .venv/bin/python bench/pipeline.py --events 200000 --backend sqlite --skip-duckdb \\
        --skip-cluster --skip-continuous --keep --workdir /tmp/pb          # a store to read
    .venv/bin/python bench/spark_warm.py sqlite:////tmp/pb/pipeline.db
    .venv/bin/python bench/spark_warm.py URL --java-options=-XX:TieredStopAtLevel=1 --rounds 2

Each round reads every event of the store through the `headwater` data source (4 partitions),
parses them, keeps them in memory, builds `frames.model_frames` as a batch of all of them would,
and runs every table's frame to the end without writing it (Spark's `noop` format): the pipeline's
transformation without the staging, the merge and the store. Round 1 runs on a cold JVM, as a
`pipeline run` or `rebuild` does; the later rounds reuse the classes Spark generated and the code
the JIT compiled. Per round: the seconds building the frames (driver) and running them, the classes
Janino compiled so far (Spark keeps them: later rounds compile none), and the JIT's and the
collectors' accumulated time (the JVM's own counters; the JIT's is its compiler threads' time).
Nothing is written to the store; nothing is asserted.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from headwater.pipeline import source
from headwater.pipeline import transforms as t
from headwater.pipeline.frames import model_frames
from headwater.pipeline.session import spark_session
from headwater.store import open_store


def _jvm_counters(jvm: Any) -> str:
    compiles = jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME().getCount()
    management = jvm.java.lang.management.ManagementFactory
    jit = management.getCompilationMXBean().getTotalCompilationTime() / 1000
    gc = sum(bean.getCollectionTime() for bean in management.getGarbageCollectorMXBeans()) / 1000
    return f"Janino classes {compiles}, JIT {jit:.1f} s, GC {gc:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("url", help="the store whose events are read (nothing is written)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds in one session [3]")
    parser.add_argument("--java-options", default="", metavar="FLAGS", help="JVM flags to try")
    args = parser.parse_args()

    store = open_store(args.url)
    high = store.last_seq()
    store.close()
    spark = spark_session("local[2]", java_options=args.java_options)
    spark.dataSource.register(source.HeadwaterSource)
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    for round_ in range(1, args.rounds + 1):
        started = time.perf_counter()
        spark.conf.set("spark.sql.shuffle.partitions", str(max(2, min(512, high // 20_000))))
        raw = (
            spark.read.format("headwater")
            .schema(source.EVENT_SCHEMA)
            .option("url", args.url)
            .option("kind", "events")
            .option("low", "0")
            .option("high", str(high))
            .option("partitions", "4")
            .load()
        )
        events = t.parse_events(raw).persist()
        frames = model_frames(events, events)
        built = time.perf_counter()
        for frame in frames.tables.values():
            frame.write.format("noop").mode("overwrite").save()
        ran = time.perf_counter()
        print(
            f"round {round_}: frames built {built - started:.1f} s, run {ran - built:.1f} s; "
            f"{_jvm_counters(jvm)}",
            flush=True,
        )
        frames.release()
        events.unpersist()
    spark.stop()


if __name__ == "__main__":
    main()
