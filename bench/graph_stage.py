"""The graph stage on a large model: the whole graph, and a pass that changes one job.

A bulk-loaded model (bench/model_gen.py, the query benchmark's; --datasets, half as many jobs)
gets its graph computed whole, the way a first pass or a rebuild does (where the pipeline
chooses: in the driver up to runner.GRAPH_HERE_ROWS and GRAPH_HERE_ENDS, else on Spark; with
--spark on Spark first too); then one job of the middle layers gains an input, as one new event
would do, and the pass's graph stage is timed (it edits the published graph,
pipeline/graph_delta.py); then the input goes again; then a pass that changes no edge. Each is
`Pipeline.graph_stage` timed whole, the lock held, with what it published and how (edited,
driver, spark); then the whole graph once more, its Python allocations traced (the peak).
Nothing is asserted.

With --wide N, instead: one event of a job with N inputs and N outputs in an empty store, then one
event of a job reading one of its outputs, each `headwater ingest`ed and followed by `headwater
pipeline run` with its defaults, timed whole as a user runs them (seconds, and the largest
resident set of the command's Python process: the graph is computed there, Spark's JVM is not
counted), then the graph's rows and the store's size.

    .venv/bin/python bench/graph_stage.py                           # 20,000 datasets, SQLite
    .venv/bin/python bench/graph_stage.py --datasets 5000 --spark   # the whole graph on Spark too
    .venv/bin/python bench/graph_stage.py --backend postgresql
    .venv/bin/python bench/graph_stage.py --wide 3000               # one job of 3,000 x 3,000

The figures go to stdout, progress to stderr. More in bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

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
    parser.add_argument(
        "--wide",
        type=int,
        metavar="N",
        help="instead: one job of N inputs and N outputs, `headwater pipeline run` timed whole",
    )
    args = parser.parse_args()
    busy = machine_busy_now()
    if busy > 0.3:
        log(f"warning: the machine is {busy:.0%} busy: figures will be pessimistic")
    with tempfile.TemporaryDirectory(prefix="headwater-bench-graph-") as folder:
        db = Database(args.backend, Path(folder), "graph", args.pg_url)
        try:
            figures = _wide(db, Path(folder), args) if args.wide else _run(db.url, args)
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
            how = getattr(pipeline.graph_stage(checkpoint), "graph_how", "?")  # "?": code before it
            seconds = time.perf_counter() - tick
        note = f"{how}; {note}" if note else how
        log(f"{name}: {seconds:.2f} s ({how})")
        figures.append(Figure(args.backend, name, seconds, "s", target, higher_is_better=False, note=note))

    try:
        here = Pipeline(spark, store, dogfood=False)  # the pipeline's own choice: driver or Spark
        if args.spark:
            timed("whole graph, Spark", Pipeline(spark, store, dogfood=False, read_here_rows=0), 1)
        with store.transaction() as cur:  # the whole graph again, in the driver this time
            forget_graph(store, cur)
        ends = f"{io_rows:,} job inputs and outputs"
        timed("whole graph", here, 2, ends)
        with store.transaction() as cur:  # once more, its allocations traced (slower)
            forget_graph(store, cur)
        model.prepare_staging(store)
        tracemalloc.start()
        with model.pipeline_lock(store):
            here.graph_stage(2)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        log(f"whole graph: Python's allocations peaked at {peak:,.0f} MB")
        figures.append(Figure(args.backend, "whole graph: peak memory", peak, "MB", None, note="traced"))
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


def _wide_events(width: int) -> list[dict[str, Any]]:
    """A COMPLETE event of job `wide` (`width` inputs, `width` outputs), then one of job `reader`
    reading the first output."""

    def event(job: str, inputs: list[str], outputs: list[str], second: int) -> dict[str, Any]:
        return {
            "eventType": "COMPLETE",
            "eventTime": f"2026-11-29T08:00:{second:02d}Z",
            "producer": "https://github.com/headwater/bench/graph_stage",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": str(uuid.uuid4())},
            "job": {"namespace": "bench", "name": job},
            "inputs": [{"namespace": "bench", "name": name} for name in inputs],
            "outputs": [{"namespace": "bench", "name": name} for name in outputs],
        }

    ins = [f"in_{i}" for i in range(width)]
    outs = [f"out_{i}" for i in range(width)]
    return [event("wide", ins, outs, 0), event("reader", outs[:1], ["tail"], 1)]


def _command(args: list[str], url: str) -> tuple[float, int]:
    """`headwater ARGS --database-url URL` run whole: seconds, and the largest resident set (bytes)
    of its Python process."""
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: Spark's warnings never fill it
        tick = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "headwater", *args, "--database-url", url],
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - tick
        if os.waitstatus_to_exitcode(status) != 0:
            errors.seek(0)
            raise SystemExit(f"headwater {' '.join(args)} failed: {errors.read().decode()[-2000:]}")
    return seconds, usage.ru_maxrss * 1024


def _wide(db: Database, folder: Path, args: argparse.Namespace) -> list[Figure]:
    figures: list[Figure] = []
    for number, event in enumerate(_wide_events(args.wide), start=1):
        path = folder / f"event-{number}.json"
        path.write_text(json.dumps(event))
        _command(["ingest", "-q", str(path)], db.url)
        seconds, resident = _command(["pipeline", "run", "-q"], db.url)
        name = "pass, the wide job's event" if number == 1 else "pass, one small event after it"
        note = f"the command's Python at most {resident / 2**20:,.0f} MB resident"
        log(f"{name}: {seconds:.1f} s, {note}")
        figures.append(Figure(args.backend, name, seconds, "s", None, higher_is_better=False, note=note))
    store = open_store(db.url)
    try:
        rows = {table: _count(store, table) for table in ("ultimate_nodes", "lineage_edges")}
    finally:
        store.close()
    note = ", ".join(f"{count:,} {table}" for table, count in rows.items())
    figures.append(Figure(args.backend, "store size", db.size_bytes() / 2**20, "MB", None, note=note))
    return figures


if __name__ == "__main__":
    main()
