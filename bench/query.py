"""Lineage query latency on a large model (issue 4): p50 and p99 over random nodes of lineage at
depth 5 and 20, ultimate source, search and column lineage, on SQLite and PostgreSQL; and the same
depth-20 lineage as a plain recursive SQL query over a bare edge table, for comparison.

The model (100,000 datasets, 50,000 jobs, 1,000,000 runs by default) is bulk-loaded into the
model tables by bench/model_gen.py, with the pipeline's rules. Each query is timed in this
process, as the server runs it: the store query plus the JSON answer (`--http` adds the
same lineage through the ASGI app, HTTP parsing and all). Nothing is asserted: figures are
printed, with the targets of the issue beside them.

    .venv/bin/python bench/query.py --quick                 # a small model, both backends, ~1 min
    .venv/bin/python bench/query.py --reuse --http          # the full size, both backends, ~15 min
    .venv/bin/python bench/query.py --backend sqlite --reuse   # keep and reuse the loaded SQLite file

Each figure is the p50 or p99 over the same --samples random nodes (80% datasets, 20% jobs;
seeded), after two warm-up asks; notes give the max, the median answer size and how many
answers hit the 500-node cap; PASS/SHORT against the issue's targets (p99: lineage depth 20
≤ 100 ms, ultimate source ≤ 10 ms, search ≤ 50 ms). The table goes to stdout, progress to stderr,
and every figure with the raw timings (and the node of each) to bench/results/query-<time>.json
(git-ignored; --json FILE). More in bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, Database, Figure, machine_busy_now, now_stamp, percentile, print_table
from headwater.query.lineage import LineageQuery, column_lineage, lineage, ultimate
from headwater.query.lineage_json import marquez_column_graph, marquez_graph, warehouse_graph
from headwater.store import EventStore, open_store
from model_gen import GENERATOR_VERSION, Shape, load, stamp

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
TARGETS = {"lineage depth 20": 100.0, "ultimate source": 10.0, "search": 50.0}

# The same traversal in plain SQL: every node within 2 * depth edges, upstream and downstream.
BASELINE = """
WITH RECURSIVE up(node, hops) AS (
    SELECT ?, 0
    UNION SELECT e.src, up.hops + 1 FROM bare_edges e JOIN up ON e.dst = up.node WHERE up.hops < ?
), down(node, hops) AS (
    SELECT ?, 0
    UNION SELECT e.dst, down.hops + 1 FROM bare_edges e JOIN down ON e.src = down.node WHERE down.hops < ?
)
SELECT COUNT(*) FROM (SELECT node FROM up UNION SELECT node FROM down) AS reached
"""


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def timed(samples: list[str], ask: Callable[[str], int]) -> tuple[list[str], list[float], list[int]]:
    """The samples, milliseconds per sample and the size of each answer (after two warm-up asks)."""
    for sample in samples[:2]:
        ask(sample)
    times, sizes = [], []
    for sample in samples:
        started = time.perf_counter()
        sizes.append(ask(sample))
        times.append((time.perf_counter() - started) * 1000)
    return samples, times, sizes


class Results:
    """The figures of the table, and the raw timings behind them for the JSON file."""

    def __init__(self) -> None:
        self.figures: list[Figure] = []
        self.raw: dict[str, dict[str, Any]] = {}

    def add(
        self,
        backend: str,
        name: str,
        timing: tuple[list[str], list[float], list[int]],
        note: str = "",
    ) -> None:
        samples, times, sizes = timing
        ordered = sorted(times)
        sizes_note = f"median answer {statistics.median(sizes):,.0f} nodes" if sizes else ""
        detail = "; ".join(x for x in (f"max {ordered[-1]:,.1f} ms", sizes_note, note) if x)
        self.figures += [
            Figure(backend, f"{name} p50", percentile(ordered, 50), "ms", None, False),
            Figure(backend, f"{name} p99", percentile(ordered, 99), "ms", TARGETS.get(name), False, detail),
        ]
        self.raw[f"{backend} {name}"] = {"samples": samples, "ms": times, "sizes": sizes}


def rows(store: EventStore, query: str) -> list[Any]:
    with store.transaction() as cur:
        cur.execute(query)
        return [row[0] for row in cur.fetchall()]


def bench_backend(store: EventStore, args: argparse.Namespace, results: Results) -> None:
    backend = store.backend
    rng = random.Random(args.seed)
    datasets = rows(
        store,
        "SELECT node_id FROM datasets WHERE node_id NOT IN "
        "(SELECT node_id FROM dataset_aliases WHERE node_id <> canonical_id) ORDER BY node_id",
    )
    jobs = rows(store, "SELECT node_id FROM jobs ORDER BY node_id")
    written = rows(store, "SELECT node_id FROM dataset_facets WHERE name = 'columnLineage' ORDER BY node_id")
    nodes = rng.sample(datasets, args.samples * 4 // 5) + rng.sample(
        jobs, args.samples - args.samples * 4 // 5
    )
    rng.shuffle(nodes)
    truncated: list[bool] = []

    def answer(node: str, depth: int, as_of: str | None = None) -> int:
        with store.snapshot():  # as the server answers: one snapshot per request
            result = lineage(store, LineageQuery(node, "both", depth=depth, as_of=as_of))
            orjson.dumps(marquez_graph(store, result))
        truncated.append(result.truncated)
        return len(result.nodes)

    def cap_note(samples: int) -> str:
        count = sum(truncated[-samples:])  # not the warm-up asks before them
        truncated.clear()
        return f"{count} of {samples} truncated at the 500-node cap"

    log(f"{backend}: lineage depth 5 and 20 over {len(nodes)} nodes")
    results.add(backend, "lineage depth 5", timed(nodes, lambda n: answer(n, 5)), cap_note(len(nodes)))
    depth20 = timed(nodes, lambda n: answer(n, 20))
    results.add(backend, "lineage depth 20", depth20, cap_note(len(nodes)))

    log(f"{backend}: ultimate source")

    def sources(node: str) -> int:
        with store.snapshot():
            answer = orjson.dumps(warehouse_graph(ultimate(store, node, "source"), "ultimate-source"))
        return len(orjson.loads(answer)["vertices"])

    results.add(backend, "ultimate source", timed(nodes, sources))

    log(f"{backend}: search")
    words = []
    for name in [n.split(":", 2)[2] for n in rng.sample(datasets, 100) + rng.sample(jobs, 100)]:
        size = rng.randint(3, 6)
        at = rng.randrange(0, max(1, len(name) - size))
        words.append(name[at : at + size])

    def search(word: str) -> int:
        found = store.search(word, kind=None, namespace=None, sort="NAME", limit=20, before=None, after=None)
        return len(found[0])

    results.add(backend, "search", timed(words, search), "limit 20, with totalCount")

    log(f"{backend}: column lineage")
    fields = []
    for dataset in rng.sample(written, min(len(written), args.samples)):
        names_of = store.dataset_fields([dataset], as_of=None).get(dataset, [])
        namespace, name = dataset.removeprefix("dataset:").split(":", 1)
        fields.append(f"datasetField:{namespace}:{name}:{rng.choice(names_of)[0]}")

    def columns(node: str) -> int:
        with store.snapshot():
            result = column_lineage(store, LineageQuery(node, "upstream", depth=20))
            orjson.dumps(marquez_column_graph(result))
        return len(result.nodes)

    results.add(backend, "column lineage depth 20", timed(fields, columns), "upstream of one field")

    log(f"{backend}: lineage depth 20 as of a past time")
    newest = rows(store, "SELECT MAX(created_at) FROM job_versions")[0]
    as_of = stamp(datetime.fromisoformat(newest[:19]) - timedelta(days=30))  # many jobs on older versions
    past = nodes[: max(10, len(nodes) // 4)]
    then = timed(past, lambda n: answer(n, 20, as_of))
    results.add(backend, "lineage depth 20, asOf", then, f"asOf {as_of[:10]}; {cap_note(len(past))}")

    if args.http:
        from fastapi.testclient import TestClient

        from headwater.api.app import create_app
        from headwater.config import Settings

        log(f"{backend}: lineage depth 20 over HTTP (in-process ASGI)")
        with TestClient(create_app(Settings(database_url=store.url), store)) as client:

            def http(node: str) -> int:
                response = client.get("/api/v1/lineage", params={"nodeId": node, "depth": 20})
                response.raise_for_status()
                return len(response.json()["graph"])

            results.add(backend, "lineage depth 20 (HTTP)", timed(nodes, http), "GET /api/v1/lineage")

    log(f"{backend}: the same depth-20 lineage as a recursive query over a bare edge table")
    with store.transaction() as cur:
        cur.execute("DROP TABLE IF EXISTS bare_edges")
        cur.execute("CREATE TABLE bare_edges (src TEXT NOT NULL, dst TEXT NOT NULL)")
        cur.execute(
            "INSERT INTO bare_edges SELECT src_id, dst_id FROM lineage_edges "
            "WHERE edge_type IN ('input', 'output')"
        )
        cur.execute("CREATE INDEX bare_edges_src ON bare_edges (src)")
        cur.execute("CREATE INDEX bare_edges_dst ON bare_edges (dst)")
        if backend == "postgresql":  # as the model tables (SQLite: Headwater never runs ANALYZE)
            cur.execute("ANALYZE bare_edges")
    baseline_sql = store.sql(BASELINE)

    def plain(node: str) -> int:
        with store.transaction() as cur:
            cur.execute(baseline_sql, (node, 40, node, 40))
            row = cur.fetchone()
        return int(row[0]) if row else 0

    try:
        baseline = timed(nodes, plain)
    finally:
        with store.transaction() as cur:
            cur.execute("DROP TABLE bare_edges")
    results.add(
        backend,
        "plain recursive SQL, depth 20",
        baseline,
        "40 edge hops, no node cap, ids only",
    )
    for q in (50, 99):
        ours, theirs = percentile(sorted(depth20[1]), q), percentile(sorted(baseline[1]), q)
        results.figures.append(
            Figure(
                backend,
                f"Headwater / plain SQL, p{q}",
                ours / max(theirs, 1e-9),
                "x",
                note=f"{ours:,.1f} / {theirs:,.1f} ms; Headwater answers ≤ 500 nodes with their data",
            )
        )


def open_model(
    backend: str, shape: Shape, args: argparse.Namespace, workdir: Path, results: Results
) -> tuple[EventStore, Database | None]:
    """A store holding the model: loaded now, or (SQLite with --reuse) the cached file. The cached
    file is loaded under another name and renamed when complete, so a cut load is never reused."""
    cached = (
        REPO
        / "bench"
        / "results"
        / (f"query-model-{shape.datasets}-{shape.jobs}-{shape.runs}-{shape.seed}-v{GENERATOR_VERSION}.db")
    )
    if backend == "sqlite" and args.reuse and cached.exists():
        log(f"sqlite: reusing {cached.relative_to(REPO)}")
        return open_store(f"sqlite:///{cached}"), None
    database = Database(backend, workdir, "query", args.pg_url)
    store = open_store(database.url)
    log(f"{backend}: loading {shape}")
    started = time.perf_counter()
    try:
        load(store, shape, progress=lambda step: log(f"{backend}: {step}"))
        if backend == "postgresql":  # what autovacuum does soon after a load like this one
            with store.transaction() as cur:
                cur.execute("ANALYZE")
    except BaseException:
        store.close()
        database.drop()
        raise
    seconds = time.perf_counter() - started
    results.figures.append(Figure(backend, "bulk load of the model", seconds, "s", note=str(shape)))
    if backend == "sqlite" and args.reuse:
        store.close()
        cached.parent.mkdir(parents=True, exist_ok=True)
        database.path.rename(cached)
        database.drop()  # what is left: -wal, -shm, locks
        log(f"sqlite: model kept as {cached.relative_to(REPO)}")
        return open_store(f"sqlite:///{cached}"), None
    return store, database


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--datasets", type=int, default=100_000, help="datasets in the model (default 100,000)"
    )
    parser.add_argument("--jobs", type=int, default=50_000, help="jobs in the model (default 50,000)")
    parser.add_argument("--runs", type=int, default=1_000_000, help="runs in the model (default 1,000,000)")
    parser.add_argument("--samples", type=int, default=200, help="random nodes per query (default 200)")
    parser.add_argument(
        "--backend", choices=("sqlite", "postgresql", "both"), default="both", help="(default both)"
    )
    parser.add_argument(
        "--seed", type=int, default=42, help="seed of the model and of the samples (default 42)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 5,000 datasets, 2,500 jobs, 50,000 runs"
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="SQLite: keep the loaded model under bench/results/ (keyed by size, seed and generator "
        "version) and reuse it next time instead of loading again",
    )
    parser.add_argument("--http", action="store_true", help="also time GET /api/v1/lineage through the app")
    parser.add_argument("--pg-url", default=PG_ADMIN, help=f"PostgreSQL admin URL (default {PG_ADMIN})")
    parser.add_argument(
        "--json", metavar="FILE", help="where to write the results (default bench/results/...)"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.datasets, args.jobs, args.runs = 5_000, 2_500, 50_000
    # SIGTERM unwinds like Ctrl-C: the PostgreSQL database and scratch files are removed
    signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(143))
    shape = Shape(args.datasets, args.jobs, args.runs, seed=args.seed)
    busy = machine_busy_now()
    if busy > 0.2:
        log(f"WARNING: the machine is not quiet: {busy:.0%} of a core busy before the bench starts")
    results = Results()
    started = time.perf_counter()
    for backend in ("sqlite", "postgresql") if args.backend == "both" else (args.backend,):
        workdir = Path(tempfile.mkdtemp(prefix="headwater-bench-query-"))
        store, database = open_model(backend, shape, args, workdir, results)
        try:
            bench_backend(store, args, results)
        finally:
            store.close()
            if database is not None:
                database.drop()
            shutil.rmtree(workdir, ignore_errors=True)
    print()
    print(
        f"Headwater query benchmark: {shape.datasets:,} datasets, {shape.jobs:,} jobs, {shape.runs:,} runs, "
        f"{args.samples} samples, seed {args.seed}; {time.perf_counter() - started:,.0f} s"
        + (f"; machine NOT quiet at start ({busy:.0%} of a core busy)" if busy > 0.2 else "")
    )
    print_table(results.figures)
    out = Path(args.json) if args.json else REPO / "bench" / "results" / f"query-{now_stamp()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    figures = [{**asdict(f), "verdict": f.verdict} for f in results.figures]
    out.write_text(json.dumps({"args": vars(args), "figures": figures, "raw": results.raw}, default=str))
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
