"""The run whose JVM records Spark's classes (`class_archive.prepare` starts it as a child
process): the demo lineage in a scratch SQLite store, a SparkSession whose driver JVM writes the
classes it loaded into the file named on the command line as it exits, and the passes that load
them.

    python -m headwater.pipeline.class_recording FILE
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import orjson

from headwater.demo.lineage import demo_events
from headwater.events.times import format_ticks, now_ticks
from headwater.events.validate import validate_event
from headwater.pipeline import runner
from headwater.pipeline.class_archive import recording_options
from headwater.pipeline.runner import Pipeline
from headwater.pipeline.session import QUICK_JVM_OPTIONS, spark_session
from headwater.store import open_store

JVM_EXIT_SECONDS = 300.0  # writing the archive takes 10-20 s on 2 cores


def record(partial: Path) -> int:
    """Run the passes, end the JVM and wait for it to write `partial`; the JVM's exit status."""
    from pyspark import SparkContext

    with tempfile.TemporaryDirectory(prefix="headwater-classes-") as folder:
        store = open_store(f"sqlite:///{folder}/classes.db")
        try:
            events = [validate_event(doc, orjson.dumps(doc)) for doc in demo_events()]
            store.append(events, format_ticks(now_ticks()))
            options = f"{QUICK_JVM_OPTIONS} {recording_options(partial)}"
            spark = spark_session("local[2]", app_name="headwater-classes", java_options=options)
            # what users' passes run: a small batch the driver reads, then the pipeline's own
            # reports, whose shape's plans are built at its second sight and reused at its third
            # (`replan`); then every event read by the executors through the data source, with
            # generated code, and the graph computed on Spark
            pipeline = Pipeline(spark, store)
            for _ in range(4):
                pipeline.run_once()
            # as a large batch runs: with generated code (Janino's classes), below its usual size
            runner._CODEGEN_ROWS = 0
            Pipeline(spark, store, dogfood=False, read_here_rows=0).rebuild()
            gateway = SparkContext._gateway
            spark.stop()
        finally:
            store.close()
    # Spark's gateway JVM exits when its standard input ends, and records its classes then
    proc = getattr(gateway, "proc", None)
    if proc is None or proc.stdin is None:
        return 1
    proc.stdin.close()
    return int(proc.wait(timeout=JVM_EXIT_SECONDS))


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(record(Path(sys.argv[1])))


if __name__ == "__main__":
    main()
