"""The graph stage on a large model: the whole graph, and a pass that changes one job.

A bulk-loaded model (bench/model_gen.py, the query benchmark's; --datasets, half as many jobs)
gets its graph computed whole, the way a first pass or a rebuild does (in the driver, or with
--spark on Spark, as a model over 20,000 input rows would be); then one job of the middle
layers gains an input, as one new event would do, and the pass's graph stage is timed (it edits
the published graph, pipeline/graph_delta.py); then the input goes again; then a pass that
changes no edge. Each is `Pipeline.graph_stage` timed whole, the lock held, with what it
published. Nothing is asserted.

    .venv/bin/python bench/graph_stage.py                           # 20,000 datasets, SQLite
    .venv/bin/python bench/graph_stage.py --datasets 5000 --spark   # the whole graph on Spark too
    .venv/bin/python bench/graph_stage.py --backend postgresql

The figures go to stdout, progress to stderr. More in bench/README.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Database, Figure, machine_busy_now, print_table
from headwater.pipeline.runner import Pipeline
from headwater.pipeline.session import spark_session
from headwater.store import EventStore, model, open_store
from headwater.store.model.checkpoint import forget_graph
from model_gen import Shape, load

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
TARGET_SECONDS = 3.0  # a pass of +1,000 events, graph included (issue 13)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _count(store: EventStore, table: str) -> int:
    with store.transaction() as cur:
        cur.execute(f"SELECT COUNT(*) FROM {table}")
        row = cur.fetchone()
    return int(row[0]) if row else 0


def _one_input(store: EventStore, datasets: int) -> tuple[str, str, str]:
    """(version_id, "input", node_id): an input that a job's current version lacks, a dataset of
    a middle layer."""
    with store.transaction() as cur:
        cur.execute(f"SELECT current_version FROM jobs ORDER BY node_id LIMIT 1 OFFSET {datasets // 6}")
        version = cur.fetchone()[0]
        cur.execute(f"SELECT node_id FROM datasets ORDER BY node_id LIMIT 1 OFFSET {datasets // 2}")
        dataset = cur.fetchone()[0]
    return (version, "input", dataset)


def _change(store: EventStore, row: tuple[str, str, str], add: bool) -> None:
    sql = (
        "INSERT INTO job_version_io (version_id, direction, node_id) VALUES (?, ?, ?)"
        if add
        else "DELETE FROM job_version_io WHERE version_id = ? AND direction = ? AND node_id = ?"
    )
    with store.transaction() as cur:
        cur.execute(store.sql(sql), row)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--datasets", type=int, default=20_000)
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--spark", action="store_true", help="also compute the whole graph on Spark")
    parser.add_argument("--pg-url", default=PG_ADMIN)
    args = parser.parse_args()
    busy = machine_busy_now()
    if busy > 0.3:
        log(f"warning: the machine is {busy:.0%} busy: figures will be pessimistic")
    with tempfile.TemporaryDirectory(prefix="headwater-bench-graph-") as folder:
        db = Database(args.backend, Path(folder), "graph", args.pg_url)
        try:
            figures = _run(db.url, args)
        finally:
            db.drop()
    print_table(figures)


def _run(url: str, args: argparse.Namespace) -> list[Figure]:
    store = open_store(url)
    n = args.datasets
    log(f"loading a model of {n:,} datasets and {n // 2:,} jobs")
    load(store, Shape(datasets=n, jobs=n // 2, runs=n * 2), log, bars=False)
    model.read_state(store)
    spark = spark_session("local[2]")
    figures: list[Figure] = []
    io_rows = _count(store, "job_version_io")

    def timed(
        name: str, pipeline: Pipeline, checkpoint: int, note: str = "", target: float | None = None
    ) -> None:
        model.prepare_staging(store)
        with model.pipeline_lock(store):
            tick = time.perf_counter()
            pipeline.graph_stage(checkpoint)
            seconds = time.perf_counter() - tick
        log(f"{name}: {seconds:.2f} s")
        figures.append(Figure(args.backend, name, seconds, "s", target, higher_is_better=False, note=note))

    try:
        here = Pipeline(spark, store, dogfood=False, read_here_rows=10**9)
        if args.spark:
            timed("whole graph, Spark", Pipeline(spark, store, dogfood=False, read_here_rows=0), 1)
        with store.transaction() as cur:  # the whole graph again, in the driver this time
            forget_graph(store, cur)
        ends = f"{io_rows:,} job inputs and outputs"
        timed("whole graph, driver", here, 2, ends)
        note = f"{_count(store, 'ultimate_nodes'):,} ultimate rows"
        row = _one_input(store, n)
        _change(store, row, add=True)
        timed("one job gains an input (edited)", here, 3, note, TARGET_SECONDS)
        _change(store, row, add=False)
        timed("and loses it again (edited)", here, 4, note, TARGET_SECONDS)
        timed("a pass that changes no edge", here, 5, note, TARGET_SECONDS)
    finally:
        spark.stop()
        store.close()
    return figures


if __name__ == "__main__":
    main()
