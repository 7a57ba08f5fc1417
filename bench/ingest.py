"""Ingest and run-read benchmark of Headwater on SQLite and PostgreSQL.

    .venv/bin/python bench/ingest.py [--backend sqlite|postgresql|both] [--events-stored 1000000] [--quick]

Scenarios (each on a server started as a subprocess: `headwater serve`, one process):

  1. single-event POSTs from 32 concurrent keep-alive connections (closed loop): events/s
  2. batches of 1,000 events per POST (/api/v1/lineage/batch, 4 connections): events/s
  3. single-event POSTs at a steady open-loop 1,000 events/s: p50/p99 latency, measured from each
     request's scheduled send time (so a stalled server cannot hide its queue)
  4. with N events stored (bulk-loaded through the store API), one run page (pageSize 25) of a
     random run, some with pagingState: p50/p99 over HTTP and directly at the store API

See bench/README.md for what each figure means.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import sqlite3
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    REPO,
    CpuMeter,
    Database,
    EventFactory,
    Figure,
    HttpConnection,
    Profiler,
    Server,
    connections_per_worker,
    get_request,
    human_bytes,
    machine_busy_now,
    now_stamp,
    percentile,
    post_request,
    print_table,
    run_async,
    server_processes,
    summarise_profile,
)

SINGLE_TARGET = 5_000.0
BATCH_TARGET = 30_000.0
OPEN_LOOP_P99_TARGET_MS = 20.0
READ_P99_TARGET_MS = 5.0
STORE_BYTES_TARGET = 1_536.0  # store bytes per realistic event (1.5 KB)
PAGE_SIZE = 25


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Load patterns
# --------------------------------------------------------------------------------------------


@dataclass
class LoadResult:
    requests: int
    wall: float
    latencies: list[float]  # seconds, sorted
    statuses: Counter[int]
    server_cpu: float  # cores busy on average
    client_cpu: float
    other_cpu: float  # the rest of the machine (PostgreSQL, other processes)
    bodies_ok: int = 0  # events the answers reported as stored (batches)
    dealt: list[int] = field(default_factory=list)  # the connections each worker held

    def dealt_note(self) -> str:
        """E.g. "conns per worker 3/1": how the kernel spread the connections (`--workers N`)."""
        if len(self.dealt) < 2:
            return ""
        return "conns per worker " + "/".join(str(count) for count in sorted(self.dealt, reverse=True))

    def ms(self, q: float) -> float:
        return percentile(self.latencies, q) * 1000


async def _open_connections(port: int, count: int) -> list[HttpConnection]:
    return list(await asyncio.gather(*(HttpConnection.open(port) for _ in range(count))))


async def closed_loop(
    port: int,
    requests: Sequence[bytes],
    connections: int,
    server_pid: int,
    check: Callable[[int, bytes], int] | None = None,
) -> LoadResult:
    """Each connection sends its next request as soon as the previous answer is in."""
    conns = await _open_connections(port, connections)
    await asyncio.sleep(0.05)  # the workers accept them
    dealt = connections_per_worker(port, server_processes(server_pid))
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    next_index = 0
    stored = 0
    clock = time.perf_counter

    async def worker(conn: HttpConnection) -> None:
        nonlocal next_index, stored
        while next_index < len(requests):
            raw = requests[next_index]
            next_index += 1
            start = clock()
            status, body = await conn.request(raw)
            latencies.append(clock() - start)
            statuses[status] += 1
            if check is not None:
                stored += check(status, body)

    meter = CpuMeter(server_pid)
    start = clock()
    await asyncio.gather(*(worker(c) for c in conns))
    wall = clock() - start
    server_cpu, client_cpu = meter.read()
    other_cpu = meter.other
    for c in conns:
        c.close()
    latencies.sort()
    return LoadResult(
        len(requests), wall, latencies, statuses, server_cpu, client_cpu, other_cpu, stored, dealt
    )


async def open_loop(
    port: int, requests: Sequence[bytes], rate: float, server_pid: int, pool: int = 256
) -> LoadResult:
    """Request i is due at start + i/rate whatever happened before; latency counts from that moment.
    Up to `pool` requests are in flight; beyond that a request waits (FIFO) for a free connection,
    and its latency includes the wait."""
    conns = await _open_connections(port, pool)
    idle: asyncio.Queue[HttpConnection] = asyncio.Queue()
    for conn in conns:
        idle.put_nowait(conn)
    latencies: list[float] = []
    statuses: Counter[int] = Counter()
    clock = time.perf_counter
    tasks: set[asyncio.Task[None]] = set()

    async def send(raw: bytes, due: float) -> None:
        conn = await idle.get()
        status, _ = await conn.request(raw)
        latencies.append(clock() - due)
        statuses[status] += 1
        idle.put_nowait(conn)

    meter = CpuMeter(server_pid)
    start = clock() + 0.05
    interval = 1.0 / rate
    for i, raw in enumerate(requests):
        due = start + i * interval
        delay = due - clock()
        if delay > 0:
            await asyncio.sleep(delay)
        task = asyncio.create_task(send(raw, due))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    while tasks:
        await asyncio.gather(*list(tasks))
    wall = clock() - start
    server_cpu, client_cpu = meter.read()
    other_cpu = meter.other
    for c in conns:
        c.close()
    latencies.sort()
    return LoadResult(len(requests), wall, latencies, statuses, server_cpu, client_cpu, other_cpu)


async def sequential(port: int, requests: Sequence[bytes], server_pid: int) -> LoadResult:
    """One connection, one request at a time: the latency of a request on an otherwise idle server."""
    return await closed_loop(port, requests, 1, server_pid)


# --------------------------------------------------------------------------------------------
# Scenarios 1-3: ingest over HTTP
# --------------------------------------------------------------------------------------------


def single_bodies(factory: EventFactory, n: int, seed: int) -> list[bytes]:
    return [post_request("/api/v1/lineage", orjson.dumps(e)) for e in factory.stream(n, seed=seed)]


def batch_bodies(factory: EventFactory, batches: int, size: int, seed: int) -> list[bytes]:
    out = []
    stream = factory.stream(batches * size, seed=seed)
    for _ in range(batches):
        body = b"[" + b",".join(orjson.dumps(next(stream)) for _ in range(size)) + b"]"
        out.append(post_request("/api/v1/lineage/batch", body))
    return out


def _batch_check(status: int, body: bytes) -> int:
    return body.count(b'"status":201') if status == 200 else 0


def _cpu_per_event(result: LoadResult, rate: float) -> str:
    """Server CPU per event: the figure a busy machine disturbs least (events/s falls when other
    processes take the cores; the CPU each event costs the server changes much less)."""
    return f"{1e6 * result.server_cpu / rate:,.0f} µs/event" if rate else "n/a"


def _with_sep(note: str) -> str:
    return f"{note}; " if note else ""


def _status_note(result: LoadResult, expected: int) -> str:
    bad = {s: n for s, n in result.statuses.items() if s != expected}
    return "" if not bad else f"; UNEXPECTED statuses {bad}"


def stored_count(url: str) -> int:
    from headwater.store import open_store

    store = open_store(url)
    try:
        return store.count_events(after_time=None, before_time=None)
    finally:
        store.close()


def ingest_scenarios(
    backend: str,
    args: argparse.Namespace,
    workdir: Path,
    factory: EventFactory,
    figures: list[Figure],
    results: dict[str, Any],
) -> None:
    template = args.from_sqlite if backend == "sqlite" else args.from_pg
    if template:
        log(f"{backend}: copying {template} as the store of scenarios 1-3")
    db = Database(backend, workdir, "ingest", args.pg_url, template)
    server: Server | None = None
    try:
        acked = stored_count(db.url) if template else 0  # what the copy held: counted as acked
        server = Server(db.url, workdir, workers=args.workers)
        log(f"{backend}: server pid {server.pid} on port {server.port}, store {db.url}")

        if 1 in args.scenarios:
            warm = single_bodies(factory, args.warmup, seed=101)
            run_async(closed_loop(server.port, warm, args.connections, server.pid))
            acked += len(warm)
            log(f"{backend}: scenario 1, generating {args.single_events:,} single-event bodies")
            bodies = single_bodies(factory, args.single_events, seed=1)
            size = sum(len(b) for b in bodies) / len(bodies)
            log(
                f"{backend}: scenario 1, {len(bodies):,} POSTs (avg {size:,.0f} B) "
                f"on {args.connections} conns"
            )
            with _profiled(args, server, f"{backend}-1-single"):
                r = run_async(closed_loop(server.port, bodies, args.connections, server.pid))
            del bodies
            acked += r.statuses.get(201, 0)
            rate = r.requests / r.wall
            found = stored_count(db.url)
            durable = "acked = stored" if found == acked else f"MISMATCH acked {acked:,} stored {found:,}"
            figures.append(
                Figure(
                    backend,
                    f"1. single POSTs, {args.connections} conns",
                    rate,
                    "ev/s",
                    SINGLE_TARGET,
                    note=f"p50 {r.ms(50):.1f} ms, p99 {r.ms(99):.1f} ms; server CPU {r.server_cpu:.0%} "
                    f"({_cpu_per_event(r, rate)}), client {r.client_cpu:.0%}, other {r.other_cpu:.0%}; "
                    f"{_with_sep(r.dealt_note())}{durable}{_status_note(r, 201)}",
                )
            )
            results[f"{backend}.1"] = _result_json(r)
            log(f"{backend}: scenario 1: {rate:,.0f} events/s")

        if 2 in args.scenarios:
            log(f"{backend}: scenario 2, generating {args.batches} batches of {args.batch_size}")
            warm = batch_bodies(factory, 2, args.batch_size, seed=102)
            run_async(closed_loop(server.port, warm, 2, server.pid))
            acked += 2 * args.batch_size
            bodies = batch_bodies(factory, args.batches, args.batch_size, seed=2)
            log(
                f"{backend}: scenario 2, {len(bodies)} POSTs of {args.batch_size} events "
                f"({sum(len(b) for b in bodies) / len(bodies) / 1e6:.1f} MB each) "
                f"on {args.batch_connections} conns"
            )
            with _profiled(args, server, f"{backend}-2-batch"):
                r = run_async(
                    closed_loop(server.port, bodies, args.batch_connections, server.pid, _batch_check)
                )
            del bodies
            events = args.batches * args.batch_size
            acked += r.bodies_ok
            rate = events / r.wall
            found = stored_count(db.url)
            durable = "acked = stored" if found == acked else f"MISMATCH acked {acked:,} stored {found:,}"
            stored_note = "" if r.bodies_ok == events else f"; only {r.bodies_ok:,} of {events:,} stored"
            figures.append(
                Figure(
                    backend,
                    f"2. batch POSTs of {args.batch_size:,}",
                    rate,
                    "ev/s",
                    BATCH_TARGET,
                    note=f"{args.batch_connections} conns, p50 {r.ms(50):.0f} ms per batch; server CPU "
                    f"{r.server_cpu:.0%} ({_cpu_per_event(r, rate)}), client {r.client_cpu:.0%}, "
                    f"other {r.other_cpu:.0%}; "
                    f"{_with_sep(r.dealt_note())}{durable}{stored_note}{_status_note(r, 200)}",
                )
            )
            results[f"{backend}.2"] = _result_json(r)
            log(f"{backend}: scenario 2: {rate:,.0f} events/s")

        if 3 in args.scenarios:
            n = int(args.rate * args.open_loop_seconds)
            bodies = single_bodies(factory, n, seed=3)
            log(f"{backend}: scenario 3, {n:,} POSTs at {args.rate:,.0f}/s open loop")
            r = run_async(open_loop(server.port, bodies, args.rate, server.pid))
            del bodies
            note = (
                f"{n:,} POSTs, achieved {r.requests / r.wall:,.0f}/s; p99.9 {r.ms(99.9):.1f} ms, "
                f"max {r.ms(100):.1f} ms; server CPU {r.server_cpu:.0%}, client {r.client_cpu:.0%}, "
                f"other {r.other_cpu:.0%}{_status_note(r, 201)}"
            )
            figures.append(
                Figure(
                    backend,
                    f"3. open loop {args.rate:,.0f}/s, p50",
                    r.ms(50),
                    "ms",
                    None,
                    higher_is_better=False,
                )
            )
            figures.append(
                Figure(
                    backend,
                    f"3. open loop {args.rate:,.0f}/s, p99",
                    r.ms(99),
                    "ms",
                    OPEN_LOOP_P99_TARGET_MS,
                    higher_is_better=False,
                    note=note,
                )
            )
            results[f"{backend}.3"] = _result_json(r)
            log(f"{backend}: scenario 3: p50 {r.ms(50):.2f} ms, p99 {r.ms(99):.2f} ms")
    finally:
        if server is not None:
            server.stop()
        if not args.keep:
            db.drop()


class _profiled:
    def __init__(self, args: argparse.Namespace, server: Server, name: str) -> None:
        self.profiler = None
        if args.profile:
            suffix = "" if args.profile_mode == "gil" else "-wall"
            self.profiler = Profiler(
                server.pid, Path(args.profile) / f"{name}{suffix}.txt", gil=args.profile_mode == "gil"
            )

    def __enter__(self) -> None:
        if self.profiler is not None:
            self.profiler.__enter__()

    def __exit__(self, *exc: object) -> None:
        if self.profiler is not None:
            self.profiler.__exit__(*exc)
            if self.profiler.out.exists():
                summary = summarise_profile(self.profiler.out)
                self.profiler.out.with_suffix(".summary.txt").write_text(summary + "\n")
                print(summary, file=sys.stderr)


def _result_json(r: LoadResult) -> dict[str, Any]:
    return {
        "requests": r.requests,
        "wall_s": r.wall,
        "statuses": dict(r.statuses),
        "p50_ms": r.ms(50),
        "p99_ms": r.ms(99),
        "p999_ms": r.ms(99.9),
        "max_ms": r.ms(100),
        "server_cpu": r.server_cpu,
        "other_cpu": r.other_cpu,
        "connections_per_worker": r.dealt,
        "client_cpu": r.client_cpu,
    }


# --------------------------------------------------------------------------------------------
# Scenario 4: bulk load through the store API, then run page reads
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSpec:
    run_id: str
    events: int
    start: datetime
    job: int
    parent: tuple[str, str]


def plan_runs(total: int, seed: int = 4) -> list[RunSpec]:
    """Runs whose sizes add up to total: most of 2-6 events, some of 10-60, about 1% of 100-800."""
    rng = random.Random(seed)
    runs: list[RunSpec] = []
    left = total
    moment = datetime(2024, 6, 1, tzinfo=UTC)
    parent = ("", "")
    while left > 0:
        roll = rng.random()
        size = (
            rng.randint(100, 800) if roll < 0.01 else rng.randint(10, 60) if roll < 0.1 else rng.randint(2, 6)
        )
        size = min(size, left)
        if len(runs) % 8 == 0:
            parent = (str(uuid.UUID(int=rng.getrandbits(128), version=4)), f"dag_{rng.randrange(300)}.run")
        runs.append(
            RunSpec(
                str(uuid.UUID(int=rng.getrandbits(128), version=4)), size, moment, rng.randrange(200), parent
            )
        )
        left -= size
        moment += timedelta(seconds=rng.randint(1, 30), microseconds=rng.randrange(10**6))
    return runs


_EVENT_FIELDS: tuple[str, ...] = ()
_worker_factory: EventFactory | None = None


def _worker_init(seed: int) -> None:
    global _EVENT_FIELDS
    from headwater.events.model import Event

    assert _worker_factory is not None, "workers are forked from the loading process"
    _worker_factory.rng.seed(seed + (multiprocessing.current_process().pid or 0))
    _EVENT_FIELDS = tuple(f.name for f in fields(Event))


def _validate_chunk(specs: list[RunSpec]) -> list[tuple[Any, ...]]:
    """Generate and validate a chunk of runs; Events go back as plain tuples (pickled cheaply)."""
    from headwater.events.validate import validate_event

    assert _worker_factory is not None
    out = []
    for spec in specs:
        for doc in _worker_factory.run_events(
            spec.run_id, spec.events, spec.start, job_index=spec.job, parent=spec.parent
        ):
            event = validate_event(doc, orjson.dumps(doc))
            out.append(tuple(getattr(event, name) for name in _EVENT_FIELDS))
    return out


def _chunks(runs: list[RunSpec], target: int) -> list[list[RunSpec]]:
    chunks, current, size = [], [], 0
    for spec in runs:
        current.append(spec)
        size += spec.events
        if size >= target:
            chunks.append(current)
            current, size = [], 0
    if current:
        chunks.append(current)
    return chunks


def bulk_load(
    url: str, runs: list[RunSpec], factory: EventFactory, seed: int, workers: int
) -> tuple[int, float]:
    """Append every planned event through EventStore.append, 2,000 per transaction; forked
    processes generate and validate the events meanwhile."""
    global _worker_factory
    from headwater.events.model import Event
    from headwater.events.times import format_ticks, now_ticks
    from headwater.store import open_store

    store = open_store(url)
    total = sum(r.events for r in runs)
    loaded = 0
    start = time.perf_counter()
    last_report = start
    ctx = multiprocessing.get_context("fork")
    _worker_factory = factory
    try:
        with ctx.Pool(workers, initializer=_worker_init, initargs=(seed,)) as pool:
            for rows in pool.imap_unordered(_validate_chunk, _chunks(runs, 2_000)):
                stored = store.append([Event(*row) for row in rows], format_ticks(now_ticks()))
                loaded += sum(stored)
                now = time.perf_counter()
                if now - last_report > 15:
                    last_report = now
                    log(f"  bulk load {loaded:,}/{total:,} ({loaded / (now - start):,.0f} events/s)")
    finally:
        store.close()
    return loaded, time.perf_counter() - start


@dataclass(frozen=True)
class Read:
    run_id: str
    paging_state: str | None

    def path(self) -> str:
        query = f"pageSize={PAGE_SIZE}" + (f"&pagingState={self.paging_state}" if self.paging_state else "")
        return f"/api/atlas/v2/openlineage/runs/{self.run_id}?{query}"


def plan_reads(url: str, runs: list[RunSpec], count: int, seed: int = 5) -> list[Read]:
    """70% first pages of random runs; 30% later pages (pagingState) of runs with 100+ events,
    at a random depth. Paging states are collected by walking those runs at the store API."""
    from headwater.query.run_events import read_run_events
    from headwater.store import open_store

    rng = random.Random(seed)
    big = [r for r in runs if r.events > PAGE_SIZE * 4] or [r for r in runs if r.events > PAGE_SIZE]
    states: list[tuple[str, str]] = []
    store = open_store(url)
    try:
        for spec in rng.sample(big, min(len(big), 150)):
            state: str | None = None
            while True:
                page = read_run_events(
                    store, spec.run_id, page_size=PAGE_SIZE, paging_state=state, include_children=False
                )
                state = page.next_paging_state
                if state is None:
                    break
                states.append((spec.run_id, state))
    finally:
        store.close()
    reads = []
    for _ in range(count):
        if states and rng.random() < 0.3:
            reads.append(Read(*rng.choice(states)))
        else:
            reads.append(Read(rng.choice(runs).run_id, None))
    return reads


def store_reads(url: str, reads: Sequence[Read]) -> list[float]:
    """Latency of read_run_events (what the HTTP route calls) in this process, seconds, sorted."""
    from headwater.query.run_events import read_run_events
    from headwater.store import open_store

    store = open_store(url)
    out = []
    clock = time.perf_counter
    try:
        for read in reads:
            start = clock()
            page = read_run_events(
                store,
                read.run_id,
                page_size=PAGE_SIZE,
                paging_state=read.paging_state,
                include_children=False,
            )
            out.append(clock() - start)
            if not page.events:
                raise RuntimeError(f"run {read.run_id} returned no events")
    finally:
        store.close()
    return sorted(out)


def read_scenario(
    backend: str,
    args: argparse.Namespace,
    workdir: Path,
    factory: EventFactory,
    figures: list[Figure],
    results: dict[str, Any],
) -> None:
    db = Database(backend, workdir, "reads", args.pg_url)
    server: Server | None = None
    try:
        runs = plan_runs(args.events_stored)
        big = sum(1 for r in runs if r.events >= 100)
        log(
            f"{backend}: scenario 4, bulk-loading {args.events_stored:,} events in {len(runs):,} runs "
            f"({big:,} with 100+ events) through the store API"
        )
        loaded, took = bulk_load(db.url, runs, factory, seed=4, workers=args.load_workers)
        if backend == "sqlite":  # the WAL's pages into the file, so the size is the store's own
            with sqlite3.connect(db.path) as conn:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = db.size_bytes()
        log(
            f"{backend}: loaded {loaded:,} events in {took:,.0f} s ({loaded / took:,.0f}/s), "
            f"database {human_bytes(size)}"
        )
        figures.append(
            Figure(
                backend,
                "4. bulk load via store API",
                loaded / took,
                "ev/s",
                None,
                note=f"{loaded:,} events, {len(runs):,} runs, {human_bytes(size)} on disk; "
                f"{args.load_workers} validating processes",
            )
        )
        figures.append(
            Figure(
                backend,
                "4. store size per event",
                size / max(loaded, 1),
                "B",
                STORE_BYTES_TARGET,
                higher_is_better=False,
                note=f"{human_bytes(size)} for {loaded:,} events (database file, indexes, facet values)",
            )
        )
        reads = plan_reads(db.url, runs, args.reads + args.read_warmup)
        paged = sum(1 for r in reads if r.paging_state)
        warm, timed = reads[: args.read_warmup], reads[args.read_warmup :]
        store_reads(db.url, warm)
        direct = store_reads(db.url, timed)
        server = Server(db.url, workdir, workers=args.workers)
        requests = [get_request(r.path()) for r in reads]
        run_async(sequential(server.port, requests[: args.read_warmup], server.pid))
        r = run_async(sequential(server.port, requests[args.read_warmup :], server.pid))
        mix = f"{len(timed):,} reads, {paged / len(reads):.0%} with pagingState"
        figures.append(
            Figure(backend, "4. run page, HTTP, p50", r.ms(50), "ms", None, higher_is_better=False)
        )
        figures.append(
            Figure(
                backend,
                "4. run page, HTTP, p99",
                r.ms(99),
                "ms",
                READ_P99_TARGET_MS,
                higher_is_better=False,
                note=f"{mix}, 1 conn; {r.requests / r.wall:,.0f} reads/s; server CPU {r.server_cpu:.0%}, "
                f"other {r.other_cpu:.0%}{_status_note(r, 200)}",
            )
        )
        figures.append(
            Figure(
                backend,
                "4. run page, store API, p50",
                percentile(direct, 50) * 1000,
                "ms",
                None,
                higher_is_better=False,
            )
        )
        figures.append(
            Figure(
                backend,
                "4. run page, store API, p99",
                percentile(direct, 99) * 1000,
                "ms",
                READ_P99_TARGET_MS,
                higher_is_better=False,
                note="read_run_events in the bench process, same reads",
            )
        )
        results[f"{backend}.4"] = {
            "loaded": loaded,
            "load_s": took,
            "db_bytes": size,
            "runs": len(runs),
            "http": _result_json(r),
            "store_p50_ms": percentile(direct, 50) * 1000,
            "store_p99_ms": percentile(direct, 99) * 1000,
        }
        log(
            f"{backend}: scenario 4: HTTP p99 {r.ms(99):.2f} ms, "
            f"store p99 {percentile(direct, 99) * 1000:.2f} ms"
        )
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
        prog="bench/ingest.py",
        description="Measure Headwater's ingest throughput, ingest latency and run-page reads on SQLite "
        "and/or PostgreSQL, against the targets, on this machine. Prints one table; also writes "
        "bench/results/ingest-<time>.json.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    p.add_argument(
        "--events-stored",
        type=int,
        help="events bulk-loaded before the read scenario (4) [1,000,000; quick 20,000]",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="small sizes for a smoke check (under a minute per backend); figures are indicative only",
    )
    p.add_argument("--scenarios", default="1234", help="which scenarios to run, e.g. 12 or 4")
    p.add_argument("--single-events", type=int, help="POSTs timed in scenario 1 [100,000; quick 3,000]")
    p.add_argument("--connections", type=int, default=32, help="concurrent connections in scenario 1")
    p.add_argument(
        "--workers",
        type=int,
        help="server processes (`headwater serve --workers`) [its default: one per core, at most 4]",
    )
    p.add_argument("--batches", type=int, help="batch POSTs timed in scenario 2 [100; quick 5]")
    p.add_argument("--batch-size", type=int, default=1_000, help="events per batch POST")
    p.add_argument("--batch-connections", type=int, default=4, help="concurrent connections in scenario 2")
    p.add_argument("--rate", type=float, default=1_000.0, help="events/s offered in scenario 3")
    p.add_argument("--open-loop-seconds", type=float, help="length of scenario 3 [30; quick 3]")
    p.add_argument("--reads", type=int, help="run page reads timed in scenario 4 [5,000; quick 300]")
    p.add_argument(
        "--load-workers", type=int, default=2, help="processes validating events for the bulk load"
    )
    p.add_argument(
        "--pg-url",
        default="postgresql://postgres@127.0.0.1:5432/postgres",
        help="PostgreSQL database to connect to for creating and dropping the throwaway ones",
    )
    p.add_argument(
        "--workdir", help="scratch folder for SQLite files and server logs (default: a new temp dir)"
    )
    p.add_argument(
        "--from-sqlite",
        metavar="FILE",
        help="scenarios 1-3 on SQLite start from a copy of this store instead of an empty one (a store "
        "`bench/pipeline.py --keep` left: what a store of 1,000,000 events does to ingest)",
    )
    p.add_argument(
        "--from-pg",
        metavar="DATABASE",
        help="the same on PostgreSQL: a copy of this database of --pg-url's server (CREATE DATABASE "
        "... TEMPLATE; nobody may be connected to it)",
    )
    p.add_argument("--keep", action="store_true", help="keep the databases (and workdir) afterwards")
    p.add_argument(
        "--profile",
        metavar="DIR",
        help="record the server with py-spy during scenarios 1 and 2 (raw collapsed stacks in DIR, "
        "plus a summary by function); needs `.venv/bin/pip install py-spy`; lowers the figures",
    )
    p.add_argument(
        "--profile-mode",
        choices=("gil", "wall"),
        default="gil",
        help="gil: sample only the thread holding the GIL (where the server's CPU goes); "
        "wall: every non-idle thread, including waits on fsync and the database",
    )
    p.add_argument("--json", metavar="FILE", help="where to write the results (default bench/results/...)")
    args = p.parse_args(argv)
    args.scenarios = {int(c) for c in args.scenarios if c.isdigit()}
    sizes = {  # full, quick
        "single_events": (100_000, 3_000),
        "batches": (100, 5),
        "open_loop_seconds": (30.0, 3.0),
        "reads": (5_000, 300),
        "events_stored": (1_000_000, 20_000),
        "warmup": (1_000, 200),
        "read_warmup": (200, 50),
    }
    for name, (full, quick) in sizes.items():
        if getattr(args, name, None) is None:
            setattr(args, name, quick if args.quick else full)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="headwater-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    busy = machine_busy_now()
    if busy > 0.2:
        log(
            f"WARNING: the machine is not quiet: {busy:.0%} of a core busy before the bench starts; "
            "the figures will be low (see 'other' in the notes)"
        )
    log(f"workdir {workdir}; generating the job catalogue")
    factory = EventFactory(seed=1)
    figures: list[Figure] = []
    results: dict[str, Any] = {}
    started = time.perf_counter()
    try:
        for backend in backends:
            if args.scenarios & {1, 2, 3}:
                ingest_scenarios(backend, args, workdir, factory, figures, results)
            if 4 in args.scenarios:
                read_scenario(backend, args, workdir, factory, figures, results)
    finally:
        if not args.keep and not args.workdir:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)
    print()
    mode = "QUICK (smoke sizes; not comparable to the targets)" if args.quick else "full"
    print(
        f"Headwater ingest benchmark, {mode}, {multiprocessing.cpu_count()} cores, "
        f"{time.perf_counter() - started:,.0f} s"
        + (f"; machine NOT quiet at start ({busy:.0%} of a core busy)" if busy > 0.2 else "")
    )
    print_table(figures)
    out = Path(args.json) if args.json else REPO / "bench" / "results" / f"ingest-{now_stamp()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "args": {k: (sorted(v) if isinstance(v, set) else v) for k, v in vars(args).items()},
                "figures": [{**asdict(f), "verdict": f.verdict} for f in figures],
                "results": results,
            },
            indent=2,
            default=str,
        )
    )
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
