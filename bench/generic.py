"""Generic events (FastScore style) benchmark of Headwater on SQLite and PostgreSQL.

    .venv/bin/python bench/generic.py [--backend sqlite|postgresql|both] [--events 1000000] [--quick]

Scenarios (on a server started as a subprocess: `headwater serve`, as deployed):

  1. single-event `POST /lineage/1/events` from 32 keep-alive connections (closed loop): events/s,
     each answered after it is durable; the store's count is checked against the acknowledgements
  2. batch POSTs of 1,000 events (a JSON array each, 4 connections): events/s
  3. with --events events naming --elements elements (1,000,000 and 100,000 by default) bulk-loaded
     through the store's own write path (`GenericStore.append_generic`, 2,000 per transaction):
     p50/p99 of each browse endpoint, over HTTP on one connection and in this process through the
     functions the routes call

See bench/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    REPO,
    Database,
    Figure,
    Server,
    get_request,
    human_bytes,
    machine_busy_now,
    now_stamp,
    percentile,
    post_request,
    print_table,
    run_async,
)
from ingest import _batch_check, _status_note, closed_loop, sequential, stored_count

SINGLE_TARGET = 5_000.0  # the OpenLineage ingest targets: "the same quality as OpenLineage events"
BATCH_TARGET = 30_000.0
STATES = ("INIT", "RUNNING", "PAUSED", "FINISHED", "ERROR")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------------------------


class GenericFactory:
    """FastScore-like events over a fixed catalogue of elements, deterministic for a seed.

    The catalogue: 1 engine per 1,000 elements (at least 10), 5 services, and models, schemas,
    streams and sensors in equal shares. Event i is about catalogue element i (cycling), so every
    element occurs once the events outnumber them: a model is put (with a service) or loaded
    (into an engine, with a schema), a schema put, a stream attached to an engine, an engine
    changes state, a sensor reports a value, a service its health. Element tags: model-hash (one of
    1,000 per model), model-type, state, value (0-100), status; half the events carry a
    `pneumo-timestamp` tag of their own (a new tag each, as FastScore's services send it)."""

    def __init__(self, elements: int, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        engines = max(10, elements // 1_000)
        self.catalogue: list[tuple[str, str]] = [("engine", f"engine-{i}") for i in range(engines)]
        self.catalogue += [("fastscore-service", f"model-manage-{i}") for i in range(5)]
        kinds = ("model", "schema", "stream", "sensor")
        self.catalogue += [
            (kinds[i % 4], f"{kinds[i % 4]}-{i:06d}") for i in range(elements - len(self.catalogue))
        ]
        self.engines = self.catalogue[:engines]
        self.services = self.catalogue[engines : engines + 5]
        self.schemas = [e for e in self.catalogue if e[0] == "schema"] or self.engines
        self.counter = 0

    def _element(self, element: tuple[str, str], tags: dict[str, Any] | None = None) -> dict[str, Any]:
        item: dict[str, Any] = {"description": element[1], "type": element[0]}
        if tags:
            item["tags"] = tags
        return item

    def event(self) -> dict[str, Any]:
        rng, i = self.rng, self.counter
        self.counter += 1
        kind, name = primary = self.catalogue[i % len(self.catalogue)]
        if kind == "model":
            tags = {"model-hash": f"{name}:{rng.randrange(1_000):03d}", "model-type": "Python3"}
            if rng.random() < 0.5:
                event_type, others = "put model", [self._element(rng.choice(self.services))]
            else:
                event_type = "load model"
                others = [self._element(rng.choice(self.engines)), self._element(rng.choice(self.schemas))]
            elements = [self._element(primary, tags), *others]
        elif kind == "engine":
            event_type, elements = "engine state", [self._element(primary, {"state": rng.choice(STATES)})]
        elif kind == "schema":
            event_type, elements = (
                "put schema",
                [self._element(primary), self._element(rng.choice(self.services))],
            )
        elif kind == "stream":
            event_type = "attach stream"
            elements = [self._element(primary), self._element(rng.choice(self.engines))]
        elif kind == "sensor":
            event_type, elements = "sensor reading", [self._element(primary, {"value": rng.randrange(101)})]
        else:
            event_type, elements = "service health", [self._element(primary, {"status": "ok"})]
        doc: dict[str, Any] = {
            "description": f"{event_type}: {name}",
            "type": event_type,
            "elements": elements,
        }
        if rng.random() < 0.5:
            stamp = f"2018-12-12T21:35:{i // 1_000_000:02d}.{i % 1_000_000:06d}Z"
            doc["tags"] = {"pneumo-timestamp": stamp}
        return doc

    def stream(self, n: int) -> Iterator[dict[str, Any]]:
        for _ in range(n):
            yield self.event()


def single_bodies(factory: GenericFactory, n: int) -> list[bytes]:
    return [post_request("/lineage/1/events", orjson.dumps(doc)) for doc in factory.stream(n)]


def batch_bodies(factory: GenericFactory, batches: int, size: int) -> list[bytes]:
    return [
        post_request("/lineage/1/events", orjson.dumps(list(factory.stream(size)))) for _ in range(batches)
    ]


# --------------------------------------------------------------------------------------------
# Scenarios 1-2: ingest over HTTP
# --------------------------------------------------------------------------------------------


def _durable(url: str, acked: int) -> str:
    found = stored_count(url)
    return "acked = stored" if found == acked else f"MISMATCH acked {acked:,} stored {found:,}"


def ingest_scenarios(backend: str, args: argparse.Namespace, workdir: Path, figures: list[Figure]) -> None:
    db = Database(backend, workdir, "generic_ingest", args.pg_url)
    server: Server | None = None
    factory = GenericFactory(args.elements, seed=1)
    try:
        server = Server(db.url, workdir, workers=args.workers)
        log(f"{backend}: server pid {server.pid} on port {server.port}, store {db.url}")
        warm = single_bodies(factory, args.warmup)
        run_async(closed_loop(server.port, warm, args.connections, server.pid))
        acked = len(warm)
        if 1 in args.scenarios:
            bodies = single_bodies(factory, args.single_events)
            size = sum(len(b) for b in bodies) / len(bodies)
            log(
                f"{backend}: scenario 1, {len(bodies):,} POSTs (avg {size:,.0f} B) "
                f"on {args.connections} conns"
            )
            r = run_async(closed_loop(server.port, bodies, args.connections, server.pid))
            acked += r.statuses.get(201, 0)
            durable = _durable(db.url, acked)
            figures.append(
                Figure(
                    backend,
                    f"1. single POSTs, {args.connections} conns",
                    r.requests / r.wall,
                    "ev/s",
                    SINGLE_TARGET,
                    note=f"p50 {r.ms(50):.1f} ms, p99 {r.ms(99):.1f} ms; server CPU {r.server_cpu:.0%}, "
                    f"client {r.client_cpu:.0%}, other {r.other_cpu:.0%}; {durable}{_status_note(r, 201)}",
                )
            )
            log(f"{backend}: scenario 1: {r.requests / r.wall:,.0f} events/s")
        if 2 in args.scenarios:
            bodies = batch_bodies(factory, args.batches, args.batch_size)
            log(
                f"{backend}: scenario 2, {len(bodies)} POSTs of {args.batch_size:,} events "
                f"({sum(len(b) for b in bodies) / len(bodies) / 1e3:,.0f} KB each) "
                f"on {args.batch_connections} conns"
            )
            r = run_async(closed_loop(server.port, bodies, args.batch_connections, server.pid, _batch_check))
            acked += r.bodies_ok
            events = args.batches * args.batch_size
            durable = _durable(db.url, acked)
            figures.append(
                Figure(
                    backend,
                    f"2. batch POSTs of {args.batch_size:,}",
                    events / r.wall,
                    "ev/s",
                    BATCH_TARGET,
                    note=f"{args.batch_connections} conns, p50 {r.ms(50):.0f} ms per batch; server CPU "
                    f"{r.server_cpu:.0%}, client {r.client_cpu:.0%}, other {r.other_cpu:.0%}; "
                    f"{durable}{_status_note(r, 200)}",
                )
            )
            log(f"{backend}: scenario 2: {events / r.wall:,.0f} events/s")
    finally:
        if server is not None:
            server.stop()
        if not args.keep:
            db.drop()


# --------------------------------------------------------------------------------------------
# Scenario 3: bulk load through the store, then browse reads
# --------------------------------------------------------------------------------------------


def bulk_load(url: str, events: int, elements: int) -> tuple[int, float]:
    """Validate and append `events` events through GenericStore.append_generic, 2,000 at a time."""
    from headwater.events.generic import validate_generic_event
    from headwater.events.times import format_ticks, now_ticks
    from headwater.store import open_store
    from headwater.store.generic import generic_store

    store = open_store(url)
    factory = GenericFactory(elements, seed=3)
    loaded, start, last = 0, time.perf_counter(), time.perf_counter()
    try:
        target = generic_store(store)
        while loaded < events:
            chunk = [validate_generic_event(doc) for doc in factory.stream(min(2_000, events - loaded))]
            loaded += sum(s.new for s in target.append_generic(chunk, format_ticks(now_ticks())))
            if time.perf_counter() - last > 15:
                last = time.perf_counter()
                log(f"  bulk load {loaded:,}/{events:,} ({loaded / (last - start):,.0f} events/s)")
    finally:
        store.close()
    return loaded, time.perf_counter() - start


@dataclass(frozen=True)
class Endpoint:
    name: str
    path: Callable[[random.Random], str]


def endpoints(url: str) -> list[Endpoint]:
    """The browse endpoints with random arguments drawn from what the store holds."""
    from headwater.store import open_store

    store = open_store(url)
    try:
        with store.transaction() as cur:  # the bench's only peek under the store: the id ranges
            counts = {}
            for table in ("generic_elements", "generic_events", "generic_tags"):
                cur.execute(f"SELECT MIN(id), MAX(id) FROM {table}")
                counts[table] = tuple(int(v) for v in cur.fetchone())
            cur.execute("SELECT DISTINCT key FROM generic_tags")
            keys = sorted(row[0] for row in cur.fetchall())
            cur.execute("SELECT DISTINCT type FROM generic_events")
            event_types = sorted(row[0] for row in cur.fetchall())
    finally:
        store.close()
    types = ("model", "schema", "stream", "sensor", "engine")

    def pick(table: str) -> Callable[[random.Random], int]:
        low, high = counts[table]
        return lambda rng: rng.randint(low, high)

    element, event, tag = pick("generic_elements"), pick("generic_events"), pick("generic_tags")

    def offset(r: random.Random) -> str:
        return f"&offset={r.randrange(1_000)}"

    return [
        Endpoint(
            "elements?element_type",
            lambda r: f"/lineage/1/elements?element_type={r.choice(types)}" + offset(r),
        ),
        Endpoint("elements/{id}", lambda r: f"/lineage/1/elements/{element(r)}"),
        Endpoint(
            "events?type", lambda r: f"/lineage/1/events?type={quote(r.choice(event_types))}" + offset(r)
        ),
        Endpoint("events/{id}", lambda r: f"/lineage/1/events/{event(r)}"),
        Endpoint("tags?key", lambda r: f"/lineage/1/tags?key={quote(r.choice(keys))}" + offset(r)),
        Endpoint("tags/{id}", lambda r: f"/lineage/1/tags/{tag(r)}"),
    ]


def in_process(url: str, paths: list[str]) -> list[float]:
    """The same reads through the app in this process, without the server's HTTP: seconds each."""
    from fastapi.testclient import TestClient

    from headwater.api.app import create_app
    from headwater.config import Settings

    app = create_app(Settings(database_url=url))
    times = []
    with TestClient(app) as client:
        for path in paths[:20]:
            client.get(path)
        for path in paths:
            started = time.perf_counter()
            client.get(path)
            times.append(time.perf_counter() - started)
    return sorted(times)


def browse_scenario(
    backend: str, args: argparse.Namespace, workdir: Path, figures: list[Figure], results: dict[str, Any]
) -> None:
    db = Database(backend, workdir, "generic_browse", args.pg_url)
    server: Server | None = None
    try:
        log(f"{backend}: scenario 3, bulk-loading {args.events:,} events over {args.elements:,} elements")
        loaded, took = bulk_load(db.url, args.events, args.elements)
        size = db.size_bytes()
        figures.append(
            Figure(
                backend,
                "3. bulk load via store API",
                loaded / took,
                "ev/s",
                None,
                note=f"{loaded:,} events, {args.elements:,} elements, {human_bytes(size)} on disk",
            )
        )
        log(f"{backend}: loaded {loaded:,} in {took:,.0f} s, {human_bytes(size)}")
        if backend == "postgresql":  # what autovacuum would soon do: without statistics, plans scan
            import psycopg

            with psycopg.connect(db.url, autocommit=True) as conn:
                conn.execute("ANALYZE")
        server = Server(db.url, workdir, workers=args.workers)
        rng = random.Random(7)
        everything: list[float] = []
        for endpoint in endpoints(db.url):
            paths = [endpoint.path(rng) for _ in range(args.reads + args.read_warmup)]
            requests = [get_request(p) for p in paths]
            run_async(sequential(server.port, requests[: args.read_warmup], server.pid))
            r = run_async(sequential(server.port, requests[args.read_warmup :], server.pid))
            everything += r.latencies
            direct = in_process(db.url, paths[args.read_warmup :]) if args.in_process else []
            extra = f"; in-process p99 {percentile(direct, 99) * 1000:.2f} ms" if direct else ""
            figures.append(
                Figure(
                    backend,
                    f"3. GET {endpoint.name}, p99",
                    r.ms(99),
                    "ms",
                    None,
                    higher_is_better=False,
                    note=f"p50 {r.ms(50):.2f} ms, max {r.ms(100):.1f} ms, {r.requests:,} reads{extra}"
                    f"{_status_note(r, 200)}",
                )
            )
            results[f"{backend}.3.{endpoint.name}"] = {
                "p50_ms": r.ms(50),
                "p99_ms": r.ms(99),
                "max_ms": r.ms(100),
                "statuses": dict(r.statuses),
                "in_process_p99_ms": percentile(direct, 99) * 1000 if direct else None,
            }
            log(f"{backend}: {endpoint.name}: p50 {r.ms(50):.2f} ms, p99 {r.ms(99):.2f} ms")
        everything.sort()
        figures.append(
            Figure(
                backend,
                "3. browse, all endpoints, p99",
                percentile(everything, 99) * 1000,
                "ms",
                None,
                higher_is_better=False,
                note=f"p50 {percentile(everything, 50) * 1000:.2f} ms over {len(everything):,} reads, 1 conn",
            )
        )
        results[f"{backend}.3"] = {"loaded": loaded, "load_s": took, "db_bytes": size}
    finally:
        if server is not None:
            server.stop()
        if not args.keep:
            db.drop()


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench/generic.py",
        description="Measure Headwater's generic-event ingest (single and batch POSTs) and browse "
        "latency on SQLite and/or PostgreSQL. Prints one table; also writes "
        "bench/results/generic-<time>.json.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    p.add_argument("--quick", action="store_true", help="small sizes for a smoke check; indicative figures")
    p.add_argument("--scenarios", default="123", help="which scenarios to run, e.g. 12 or 3")
    p.add_argument("--events", type=int, help="events bulk-loaded for scenario 3 [1,000,000; quick 20,000]")
    p.add_argument("--elements", type=int, help="elements those events name [events / 10, at most 100,000]")
    p.add_argument("--single-events", type=int, help="POSTs timed in scenario 1 [50,000; quick 3,000]")
    p.add_argument("--connections", type=int, default=32, help="concurrent connections in scenario 1")
    p.add_argument(
        "--workers",
        type=int,
        help="server processes (`headwater serve --workers`) [its default: one per core, at most 4]",
    )
    p.add_argument("--batches", type=int, help="batch POSTs timed in scenario 2 [100; quick 5]")
    p.add_argument("--batch-size", type=int, default=1_000, help="events per batch POST")
    p.add_argument("--batch-connections", type=int, default=4, help="concurrent connections in scenario 2")
    p.add_argument("--reads", type=int, help="reads timed per browse endpoint [1,000; quick 100]")
    p.add_argument(
        "--in-process", action="store_true", help="also time each read through the app in this process"
    )
    p.add_argument(
        "--pg-url",
        default="postgresql://postgres@127.0.0.1:5432/postgres",
        help="PostgreSQL database to connect to for creating and dropping the throwaway ones",
    )
    p.add_argument(
        "--workdir", help="scratch folder for SQLite files and server logs (default: a new temp dir)"
    )
    p.add_argument("--keep", action="store_true", help="keep the databases (and workdir) afterwards")
    p.add_argument("--json", metavar="FILE", help="where to write the results (default bench/results/...)")
    args = p.parse_args(argv)
    args.scenarios = {int(c) for c in args.scenarios if c.isdigit()}
    sizes = {  # full, quick
        "events": (1_000_000, 20_000),
        "single_events": (50_000, 3_000),
        "batches": (100, 5),
        "reads": (1_000, 100),
        "warmup": (1_000, 200),
        "read_warmup": (50, 10),
    }
    for name, (full, quick) in sizes.items():
        if getattr(args, name, None) is None:
            setattr(args, name, quick if args.quick else full)
    if args.elements is None:
        args.elements = max(100, min(100_000, args.events // 10))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="headwater-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    busy = machine_busy_now()
    if busy > 0.2:
        log(f"WARNING: the machine is not quiet: {busy:.0%} of a core busy before the bench starts")
    figures: list[Figure] = []
    shown = {k: sorted(v) if isinstance(v, set) else v for k, v in vars(args).items()}
    results: dict[str, Any] = {"args": shown, "busy_before": busy}
    started = time.perf_counter()
    try:
        for backend in backends:
            if args.scenarios & {1, 2}:
                ingest_scenarios(backend, args, workdir, figures)
            if 3 in args.scenarios:
                browse_scenario(backend, args, workdir, figures, results)
    finally:
        if not args.keep and not args.workdir:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)
    print_table(figures)
    log(f"done in {time.perf_counter() - started:,.0f} s")
    results["figures"] = [vars(f) | {"verdict": f.verdict} for f in figures]
    out = Path(args.json) if args.json else REPO / "bench" / "results" / f"generic-{now_stamp()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, default=str))
    log(f"results in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
