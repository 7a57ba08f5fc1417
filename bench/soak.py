"""Soak test of Headwater on SQLite: a steady ingest, readers and the continuous pipeline together.

    .venv/bin/python bench/soak.py                      # 20 minutes: 1,000 events/s, 32 readers
    .venv/bin/python bench/soak.py --minutes 3          # a short proof that it all works

`headwater serve` and `headwater pipeline run --continuous` run on one SQLite store (what
`headwater up` runs) while this process offers single-event POSTs at a steady rate (open loop:
latency counts from when each was due) and 32 readers read lineage graphs and run pages. Every
minute it prints the p99 of each request type, the errors, the server's and the pipeline's
memory (RSS) and how far the pipeline is behind. It fails (exit 1) on any error answer, on
"database is locked" anywhere, or when the store holds fewer events than were acknowledged.
See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    REPO,
    VENV_BIN,
    Database,
    EventFactory,
    Figure,
    HttpConnection,
    Server,
    get_request,
    human_bytes,
    machine_busy_now,
    now_stamp,
    percentile,
    post_request,
    print_table,
    process_cpu_seconds,
    run_async,
)

TYPES = ("ingest", "lineage", "run page")
LOCKED = "database is locked"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Processes: memory and CPU from /proc
# --------------------------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def rss_bytes(pid: int) -> int:
    """Resident memory of a process and its descendants (worker processes, Spark's JVM)."""
    total = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total = int(line.split()[1]) * 1024
    except OSError:
        return 0
    return total + sum(rss_bytes(child) for child in _children(pid))


class Pipeline:
    """`headwater pipeline run --continuous` on the store, as `headwater up` runs it."""

    def __init__(self, url: str, workdir: Path, args: argparse.Namespace) -> None:
        self.log_path = workdir / "pipeline.log"
        exe = VENV_BIN / "headwater"
        cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "headwater"]
        cmd += ["pipeline", "run", "--continuous", "--database-url", url, "--log-level", "info"]
        cmd += ["--interval", str(args.interval), "--master", args.spark_master]
        env = {k: v for k, v in os.environ.items() if not k.startswith("HEADWATER_")}
        if args.driver_memory:
            env["HEADWATER_SPARK_DRIVER_MEMORY"] = args.driver_memory
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=self._log, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def progress(path: Path) -> tuple[int, int]:
    """(newest stored seq, the pipeline's checkpoint), read without disturbing the writers."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
            last = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0]
            row = conn.execute("SELECT checkpoint FROM pipeline_state WHERE name = 'lineage'").fetchone()
    except sqlite3.Error:
        return 0, 0
    return int(last), int(row[0]) if row else 0


def log_size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def log_problems(path: Path, upto: int) -> tuple[int, list[str]]:
    """("database is locked" count, error lines) in the first `upto` bytes of a process log (what
    was written by the end of the measured period: stopping a pipeline in the middle of a Spark
    job makes py4j log the calls it cut short)."""
    text = path.read_bytes()[:upto].decode(errors="replace") if path.exists() else ""
    lines = text.splitlines()
    errors = [line for line in lines if " ERROR " in line or "Traceback" in line or LOCKED in line]
    return text.count(LOCKED), errors


# --------------------------------------------------------------------------------------------
# The load
# --------------------------------------------------------------------------------------------


@dataclass
class Sample:
    kind: str
    done: float  # seconds since the start of the measured period
    latency: float  # seconds
    status: int  # 0: the connection was lost before an answer
    locked: bool = False

    @property
    def error(self) -> bool:
        return not 200 <= self.status < 300


@dataclass
class Minute:
    minute: int
    counts: dict[str, int]
    p50_ms: dict[str, float]
    p99_ms: dict[str, float]
    errors: dict[str, int]
    locked: int
    ingest_rate: float
    server_rss: int
    pipeline_rss: int
    server_cpu: float
    pipeline_cpu: float
    stored_seq: int
    checkpoint: int
    passes: int
    db_bytes: int


@dataclass
class Load:
    """What the load generator knows: runs whose events were acknowledged, and every sample."""

    nodes: list[str]
    acked_runs: list[str] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    acked: int = 0
    sent: int = 0  # offered: due within the period
    unsent: int = 0  # offered, but still waiting for a connection when the period ended
    resent: int = 0  # requests sent again: the server had closed their idle connection
    error_bodies: Counter[str] = field(default_factory=Counter)

    def record(self, kind: str, start: float, due: float, status: int, body: bytes) -> None:
        locked = LOCKED.encode() in body
        if not 200 <= status < 300:
            self.error_bodies[f"{kind} {status}: {body[:200].decode(errors='replace')}"] += 1
        self.samples.append(
            Sample(kind, time.perf_counter() - start, time.perf_counter() - due, status, locked)
        )


def event_stream(factory: EventFactory, seed: int) -> Iterator[tuple[bytes, str]]:
    """Request bytes and run id of each event, runs of 2-6 events, times rising; never ends."""
    rng = random.Random(seed)
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    while True:
        run_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        for event in factory.run_events(run_id, rng.randint(2, 6), moment):
            yield post_request("/api/v1/lineage", orjson.dumps(event)), run_id
        moment += timedelta(seconds=1, microseconds=rng.randrange(10**6))


async def exchange(
    conn: HttpConnection, raw: bytes, port: int, load: Load
) -> tuple[int, bytes, HttpConnection]:
    """One request and its answer, on `conn` or on the connection that replaced it.

    The server may close a keep-alive connection it saw idle (uvicorn: after 5 s) just as a
    request is sent on it; like HTTP clients do, the request is then sent again on a new
    connection, once, when not a byte of an answer had come (counted in `load.resent`). A
    connection lost in the middle of an answer, or twice, is an error (status 0)."""
    for attempt in range(2):
        if conn.transport is None or conn.transport.is_closing():
            conn.close()
            conn = await HttpConnection.open(port)
        try:
            status, body = await conn.request(raw)
            return status, body, conn
        except (ConnectionError, RuntimeError) as exc:  # RuntimeError: written on a closed transport
            answered = bool(conn._buf) or conn._need >= 0
            conn.close()
            conn = await HttpConnection.open(port)
            if answered or attempt:
                return 0, f"connection lost with the request in flight: {exc}".encode(), conn
            load.resent += 1
    raise AssertionError("unreachable")


async def ingest(
    port: int,
    load: Load,
    stream: Iterator[tuple[bytes, str]],
    rate: float,
    start: float,
    end: float,
    pool: int,
) -> None:
    """Open loop: event i is due at start + i/rate whatever happened before."""
    conns = [await HttpConnection.open(port) for _ in range(pool)]
    idle: asyncio.Queue[HttpConnection] = asyncio.Queue()
    for conn in conns:
        idle.put_nowait(conn)
    tasks: set[asyncio.Task[None]] = set()
    seen: set[str] = set()
    clock = time.perf_counter

    async def send(raw: bytes, run_id: str, due: float) -> None:
        conn = await idle.get()
        if clock() >= end:  # the server fell behind the offered rate: this one is never sent
            idle.put_nowait(conn)
            load.unsent += 1
            return
        status, body, conn = await exchange(conn, raw, port, load)
        idle.put_nowait(conn)
        load.record("ingest", start, due, status, body)
        if status == 201:
            load.acked += 1
            if run_id not in seen:
                seen.add(run_id)
                load.acked_runs.append(run_id)

    i = 0
    while True:
        due = start + i / rate
        if due >= end:
            break
        delay = due - clock()
        if delay > 0:
            await asyncio.sleep(delay)
        raw, run_id = next(stream)
        task = asyncio.create_task(send(raw, run_id, due))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        load.sent += 1
        i += 1
    while tasks:
        await asyncio.gather(*list(tasks))
    while not idle.empty():  # every connection is back, some of them replacements
        idle.get_nowait().close()


async def reader(port: int, load: Load, seed: int, think: float, start: float, end: float) -> None:
    """Half lineage graphs (depth 20) of catalogue datasets and jobs, half first run pages of
    acknowledged runs (most of them recent); `think` seconds on average between two reads."""
    rng = random.Random(seed)
    conn = await HttpConnection.open(port)
    clock = time.perf_counter
    try:
        while clock() < end:
            if rng.random() < 0.5 or not load.acked_runs:
                kind = "lineage"
                node = urllib.parse.quote(rng.choice(load.nodes), safe="")
                path = f"/api/v1/lineage?nodeId={node}&depth=20"
            else:
                kind = "run page"
                runs = load.acked_runs
                run = (
                    runs[-1 - rng.randrange(min(len(runs), 1_000))]
                    if rng.random() < 0.7
                    else rng.choice(runs)
                )
                path = f"/api/atlas/v2/openlineage/runs/{run}?pageSize=25"
            sent = clock()
            status, body, conn = await exchange(conn, get_request(path), port, load)
            load.record(kind, start, sent, status, body)
            if think > 0:
                await asyncio.sleep(rng.uniform(0, 2 * think))
    finally:
        conn.close()


# --------------------------------------------------------------------------------------------
# The soak
# --------------------------------------------------------------------------------------------


def warm_up(server: Server, db: Database, factory: EventFactory, pipeline: Pipeline) -> list[str]:
    """Store one run of every catalogue job and wait for the pipeline to publish it: the readers'
    lineage nodes exist before the clock starts. Returns those node ids."""
    events = []
    moment = datetime(2025, 12, 31, tzinfo=UTC)
    for index in range(len(factory.jobs)):
        events += factory.run_events(f"00000000-0000-4000-8000-{index:012d}", 2, moment, job_index=index)
    body = b"[" + b",".join(orjson.dumps(e) for e in events) + b"]"

    async def post() -> tuple[int, bytes]:
        conn = await HttpConnection.open(server.port)
        try:
            return await conn.request(post_request("/api/v1/lineage/batch", body))
        finally:
            conn.close()

    status, answer = run_async(post())
    if status != 200 or answer.count(b'"status":201') != len(events):
        raise RuntimeError(f"warm-up batch answered {status}: {answer[:300]!r}")
    deadline = time.monotonic() + 900
    while progress(db.path)[1] < len(events):
        if pipeline.proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(
                f"the pipeline did not publish the warm-up events:\n{pipeline.log_path.read_text()[-3000:]}"
            )
        time.sleep(2)
    nodes = {f"job:{job.namespace}:{job.name}" for job in factory.jobs}
    nodes |= {
        f"dataset:{d['namespace']}:{d['name']}" for job in factory.jobs for d in job.inputs + job.outputs
    }
    return sorted(nodes)


def minute_stats(
    load: Load,
    minute: int,
    server: Server,
    pipeline: Pipeline,
    db: Database,
    cpu: dict[str, float],
    passes: int,
) -> Minute:
    lo, hi = minute * 60.0, (minute + 1) * 60.0
    window = [s for s in load.samples if lo <= s.done < hi]
    by_kind: dict[str, list[float]] = defaultdict(list)
    errors: Counter[str] = Counter()
    for s in window:
        by_kind[s.kind].append(s.latency)
        if s.error:
            errors[s.kind] += 1
    for values in by_kind.values():
        values.sort()
    stored, checkpoint = progress(db.path)
    server_cpu, pipeline_cpu = process_cpu_seconds(server.pid), process_cpu_seconds(pipeline.proc.pid)
    minute_row = Minute(
        minute + 1,
        {k: len(by_kind[k]) for k in TYPES},
        {k: percentile(by_kind[k], 50) * 1000 for k in TYPES},
        {k: percentile(by_kind[k], 99) * 1000 for k in TYPES},
        dict(errors),
        sum(s.locked for s in window),
        len(by_kind["ingest"]) / 60.0,
        rss_bytes(server.pid),
        rss_bytes(pipeline.proc.pid),
        (server_cpu - cpu["server"]) / 60.0,
        (pipeline_cpu - cpu["pipeline"]) / 60.0,
        stored,
        checkpoint,
        passes,
        db.size_bytes(),
    )
    cpu["server"], cpu["pipeline"] = server_cpu, pipeline_cpu
    return minute_row


def show(row: Minute) -> str:
    p99 = " ".join(f"{k} {row.p99_ms[k]:.0f}" for k in TYPES)
    return (
        f"min {row.minute:>3}: ingest {row.ingest_rate:,.0f}/s, p99 ms {p99}; reads "
        f"{row.counts['lineage'] + row.counts['run page']:,}; errors {sum(row.errors.values())}, locked "
        f"{row.locked}; RSS server {human_bytes(row.server_rss)}, pipeline {human_bytes(row.pipeline_rss)}; "
        f"CPU server {row.server_cpu:.0%} pipeline {row.pipeline_cpu:.0%}; pipeline behind "
        f"{row.stored_seq - row.checkpoint:,} events ({row.passes} passes); store {human_bytes(row.db_bytes)}"
    )


def pipeline_passes(path: Path) -> int:
    text = path.read_text(errors="replace") if path.exists() else ""
    return text.count("published in")


def soak(args: argparse.Namespace, workdir: Path) -> tuple[list[Figure], dict[str, Any], bool]:
    db = Database("sqlite", workdir, "soak", "")
    factory = EventFactory(seed=7)
    watch = None
    if args.memwatch:
        wrapper = Path(__file__).with_name("_memwatch.py")
        watch = [sys.executable, str(wrapper), str(Path(args.memwatch).resolve())]
    server = Server(db.url, workdir, workers=args.workers, command=watch)
    pipeline = Pipeline(db.url, workdir, args)
    minutes: list[Minute] = []
    try:
        log(f"server on port {server.port} (pid {server.pid}), pipeline pid {pipeline.proc.pid}; warming up")
        nodes = warm_up(server, db, factory, pipeline)
        log(f"warm-up published; {len(nodes)} lineage nodes to read; soaking {args.minutes} min")
        load = Load(nodes)
        stream = event_stream(factory, seed=11)
        cpu = {"server": process_cpu_seconds(server.pid), "pipeline": process_cpu_seconds(pipeline.proc.pid)}

        async def run() -> None:
            start = time.perf_counter()
            end = start + args.minutes * 60
            tasks = [asyncio.create_task(ingest(server.port, load, stream, args.rate, start, end, args.pool))]
            tasks += [
                asyncio.create_task(reader(server.port, load, 100 + n, args.think, start, end))
                for n in range(args.readers)
            ]
            for minute in range(args.minutes):
                await asyncio.sleep(max(0.0, start + (minute + 1) * 60 - time.perf_counter()))
                if minute == args.minutes - 1:
                    await asyncio.gather(*tasks)  # the last answers come in before the last line
                passes = pipeline_passes(pipeline.log_path)
                minutes.append(minute_stats(load, minute, server, pipeline, db, cpu, passes))
                log(show(minutes[-1]))
                if pipeline.proc.poll() is not None:
                    raise RuntimeError(f"the pipeline exited with {pipeline.proc.returncode}")
                if server.proc.poll() is not None:
                    raise RuntimeError(f"the server exited with {server.proc.returncode}")
            await asyncio.gather(*tasks)

        run_async(run())
        stored = progress(db.path)[0]
        logged = {"server": log_size(server.log_path), "pipeline": log_size(pipeline.log_path)}
    finally:
        pipeline.stop()
        server.stop()
    server_locked, server_errors = log_problems(server.log_path, logged["server"])
    pipeline_locked, pipeline_errors = log_problems(pipeline.log_path, logged["pipeline"])
    expected_stored = load.acked + 400  # the warm-up's 200 runs of 2 events
    locked = sum(s.locked for s in load.samples) + server_locked + pipeline_locked
    answers_bad = sum(1 for s in load.samples if s.error)
    figures = [
        Figure(
            "sqlite",
            "ingest offered",
            load.sent / (args.minutes * 60),
            "ev/s",
            note=f"{load.sent:,} events; {load.unsent:,} never sent (waiting for a connection at the end)",
        ),
        Figure(
            "sqlite",
            "ingest acknowledged",
            load.acked / (args.minutes * 60),
            "ev/s",
            args.rate * 0.99,
            note=f"stored {stored:,}, expected {expected_stored:,}"
            + ("" if stored >= expected_stored else " MISMATCH"),
        ),
        Figure(
            "sqlite",
            "error answers",
            answers_bad,
            "",
            0,
            higher_is_better=False,
            note=f"{load.resent:,} requests sent again after the server closed an idle connection; "
            + "; ".join(f"{n} x {b}" for b, n in load.error_bodies.most_common(3)),
        ),
        Figure(
            "sqlite",
            '"database is locked"',
            locked,
            "",
            0,
            higher_is_better=False,
            note=f"answers, server log {server_locked}, pipeline log {pipeline_locked}",
        ),
        Figure(
            "sqlite",
            "log errors",
            len(server_errors) + len(pipeline_errors),
            "",
            0,
            higher_is_better=False,
            note="; ".join((server_errors + pipeline_errors)[:2])[:200],
        ),
    ]
    for kind in TYPES:
        values = sorted(s.latency for s in load.samples if s.kind == kind)
        worst = max((m.p99_ms[kind] for m in minutes if m.counts[kind]), default=float("nan"))
        figures.append(
            Figure(
                "sqlite",
                f"{kind} p99, whole run",
                percentile(values, 99) * 1000,
                "ms",
                higher_is_better=False,
                note=f"{len(values):,} requests; p50 {percentile(values, 50) * 1000:.1f} ms; "
                f"worst minute p99 {worst:.0f} ms",
            )
        )
    if minutes:
        first = minutes[min(1, len(minutes) - 1)]  # minute 2: past the first minute's growth
        last = minutes[-1]
        for name, attr in (("server RSS", "server_rss"), ("pipeline RSS (Python + JVM)", "pipeline_rss")):
            values = [getattr(m, attr) for m in minutes]
            figures.append(
                Figure(
                    "sqlite",
                    name,
                    getattr(last, attr) / 2**20,
                    "MiB",
                    higher_is_better=False,
                    note=f"minute {first.minute} {getattr(first, attr) / 2**20:,.0f} MiB, "
                    f"max {max(values) / 2**20:,.0f} MiB",
                )
            )
        figures.append(
            Figure(
                "sqlite",
                "pipeline behind at the end",
                last.stored_seq - last.checkpoint,
                "events",
                higher_is_better=False,
                note=f"{last.passes} passes",
            )
        )
    ok = (
        answers_bad == 0
        and locked == 0
        and not server_errors
        and not pipeline_errors
        and stored >= expected_stored
    )
    results = {
        "minutes": [asdict(m) for m in minutes],
        "server_errors": server_errors[:50],
        "pipeline_errors": pipeline_errors[:50],
        "error_bodies": dict(load.error_bodies.most_common(20)),
        "stored": stored,
        "acked": load.acked,
        "offered": load.sent,
        "never_sent": load.unsent,
        "resent": load.resent,
    }
    if not args.keep:
        db.drop()
    return figures, results, ok


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="bench/soak.py",
        description="Soak Headwater on SQLite: steady ingest, readers and the continuous pipeline for "
        "--minutes; a line per minute on stderr, a table on stdout, JSON in bench/results/.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--minutes", type=int, default=20, help="length of the measured period")
    p.add_argument(
        "--rate", type=float, default=1_000.0, help="events/s offered (single-event POSTs, open loop)"
    )
    p.add_argument("--pool", type=int, default=64, help="connections the ingest may have in flight")
    p.add_argument("--readers", type=int, default=32, help="concurrent readers (one connection each)")
    p.add_argument(
        "--think",
        type=float,
        default=0.5,
        help="mean seconds a reader waits between two reads (0: back to back)",
    )
    p.add_argument(
        "--workers",
        type=int,
        help="server processes (`headwater serve --workers`) [its default: one per core, at most 4]",
    )
    p.add_argument("--interval", type=float, default=5.0, help="seconds between continuous pipeline passes")
    p.add_argument("--spark-master", default="local[*]", help="the pipeline's Spark master")
    p.add_argument("--driver-memory", help="the pipeline's Spark driver memory (default: the setting's, 4g)")
    p.add_argument("--workdir", help="scratch folder for the store and the logs (default: a new temp dir)")
    p.add_argument("--keep", action="store_true", help="keep the store and the logs afterwards")
    p.add_argument("--json", metavar="FILE", help="where to write the results (default bench/results/...)")
    p.add_argument(
        "--memwatch",
        metavar="FILE",
        help="run the server under bench/_memwatch.py: where its memory is, each minute, to FILE "
        "(tracemalloc slows it: not for the figures)",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="headwater-soak-"))
    workdir.mkdir(parents=True, exist_ok=True)
    busy = machine_busy_now()
    if busy > 0.2:
        log(f"WARNING: the machine is not quiet: {busy:.0%} of a core busy before the soak starts")
    started = time.perf_counter()
    try:
        figures, results, ok = soak(args, workdir)
    finally:
        if not args.keep and not args.workdir:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)
    print()
    print(
        f"Headwater soak, SQLite, {args.minutes} min at {args.rate:,.0f} events/s offered, {args.readers} "
        f"readers, continuous pipeline; {os.cpu_count()} cores, {time.perf_counter() - started:,.0f} s"
        + (f"; machine NOT quiet at start ({busy:.0%} of a core busy)" if busy > 0.2 else "")
    )
    print_table(figures)
    print(
        "\nminute  ingest/s  p99 ms ingest / lineage / run page  errors locked  server RSS  "
        "pipeline RSS  behind"
    )
    for m in results["minutes"]:
        print(
            f"{m['minute']:>6}  {m['ingest_rate']:>8,.0f}  {m['p99_ms']['ingest']:>13,.0f} / "
            f"{m['p99_ms']['lineage']:>7,.0f} / {m['p99_ms']['run page']:>8,.0f}  "
            f"{sum(m['errors'].values()):>6} {m['locked']:>6}  {human_bytes(m['server_rss']):>10}  "
            f"{human_bytes(m['pipeline_rss']):>12}  {m['stored_seq'] - m['checkpoint']:>6,}"
        )
    out = Path(args.json) if args.json else REPO / "bench" / "results" / f"soak-{now_stamp()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "args": vars(args),
                "figures": [{**asdict(f), "verdict": f.verdict} for f in figures],
                **results,
            },
            indent=2,
            default=str,
        )
    )
    print(f"\nresults: {out}")
    kept_up = results["acked"] >= 0.99 * args.rate * args.minutes * 60
    print(
        "soak: "
        + ("no error" if ok else "FAILED: errors, locks or lost events (see above)")
        + (
            ""
            if kept_up
            else "; the server did NOT keep up with the offered rate (see `ingest acknowledged`)"
        )
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
