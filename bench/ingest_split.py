"""The batch ingest path in-process, split in two: the CPU an event costs to split and validate
(what the server does on its event loop) and to append durably (its group-commit writer).

    .venv/bin/python bench/ingest_split.py [--backend sqlite|postgresql] [--batches 20] [--size 1000]
    PYTHONPATH=/tmp/base/src:. .venv/bin/python bench/ingest_split.py     # another checkout's code

`--batches` JSON arrays of `--size` EventFactory events (after 2 warm-up batches) go through
`read_documents` + `validate_documents` and `EventStore.append` on a fresh store (SQLite in a
temporary folder, or a PostgreSQL database created and dropped on `--pg-url`'s server), with the
cyclic collector as the server has it. Figures: process CPU (every thread of this process, not
PostgreSQL's) per event for each half, and an append's wall time; on PostgreSQL also the CPU its
backend serving the writer's connection used per event (read from /proc: the server must run on
this machine). No HTTP, no concurrency: it moves much less than the server's µs/event on a busy
machine, so it is the figure to compare commits by (alternate them). `--size 8` is about what a
group commit of single POSTs holds.

`--writer-thread` appends in a second thread while the next batch is validated, one batch in its
hands at a time, as the server's event loop and its group-commit writer do: each half's CPU is then
its thread's, and the line adds the process's CPU and its context switches per event (both
threads contend for the GIL; bench/README.md, "The GIL handed over on every event").
"""

from __future__ import annotations

import argparse
import os
import queue
import resource
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from _common import EventFactory
from headwater.events.times import format_ticks, now_ticks
from headwater.ingest.bodies import read_documents
from headwater.ingest.service import collector_paused, validate_documents, young_collections_rarer
from headwater.store import open_store
from headwater.store.base import EventStore

MAX_BODY = 256 * 1024 * 1024


def batch_bodies(factory: EventFactory, batches: int, size: int, seed: int) -> list[bytes]:
    stream = factory.stream(batches * size, seed=seed)
    return [b"[" + b",".join(orjson.dumps(next(stream)) for _ in range(size)) + b"]" for _ in range(batches)]


def ingest(store: EventStore, body: bytes) -> tuple[float, float, float, int]:
    """Process CPU seconds to validate the body's events and to append them, the append's wall
    seconds, and the events' count."""
    start = time.process_time()
    with collector_paused():
        documents, _ = read_documents(body, "application/json", None, MAX_BODY, lazy=True)
        validated = validate_documents(documents)
    validated_at = time.process_time()
    wall = time.perf_counter()
    with collector_paused():
        stored = store.append(validated.events, format_ticks(now_ticks()))
    appended_at = time.process_time()
    wall = time.perf_counter() - wall
    if len(validated.events) != len(documents) or not all(stored):
        raise SystemExit("an event was rejected or already stored: the figures would mean nothing")
    return validated_at - start, appended_at - validated_at, wall, len(stored)


def threaded(store: EventStore, bodies: list[bytes]) -> tuple[float, float, int]:
    """Validate in this thread and append in another, one batch handed over at a time: each
    half's thread CPU seconds, and the events stored."""
    handed: queue.Queue[list[Any] | None] = queue.Queue(maxsize=1)
    spent = {"append": 0.0, "events": 0}

    failed: list[BaseException] = []

    def writer() -> None:
        while (events := handed.get()) is not None:
            if failed:  # keep taking batches, so that the validating thread never waits forever
                continue
            start = time.thread_time()
            try:
                with collector_paused():
                    stored = store.append(events, format_ticks(now_ticks()))
            except BaseException as exc:
                failed.append(exc)
                continue
            spent["append"] += time.thread_time() - start
            spent["events"] += sum(stored)

    thread = threading.Thread(target=writer, name="writer")
    thread.start()
    validate = 0.0
    try:
        for body in bodies:
            start = time.thread_time()
            with collector_paused():
                documents, _ = read_documents(body, "application/json", None, MAX_BODY, lazy=True)
                validated = validate_documents(documents)
            validate += time.thread_time() - start
            if len(validated.events) != len(documents):
                raise SystemExit("an event was rejected: the figures would mean nothing")
            handed.put(list(validated.events))
    finally:
        handed.put(None)
        thread.join()
    if failed:
        raise failed[0]
    return validate, spent["append"], int(spent["events"])


def _switches() -> int:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_nvcsw + usage.ru_nivcsw


def backend_cpu(store: EventStore) -> Callable[[], float]:
    """A clock of the CPU seconds used by the PostgreSQL backend of the store's writer connection."""
    with store._writer_conn().cursor() as cur:  # type: ignore[attr-defined]
        cur.execute("SELECT pg_backend_pid()")
        pid = cur.fetchone()[0]
    ticks = os.sysconf("SC_CLK_TCK")

    def read() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime

    return read


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--batches", type=int, default=20, help="timed batches [20]")
    parser.add_argument("--size", type=int, default=1_000, help="events per batch [1,000]")
    parser.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument(
        "--writer-thread", action="store_true", help="append in a second thread, as the server does"
    )
    parser.add_argument(
        "--sqlite-file",
        help="append to this SQLite file (made if missing, kept) instead of a fresh one: two of these "
        "processes with other --seed values then share a store, as `serve` and `consume` processes do",
    )
    parser.add_argument("--seed", type=int, default=2, help="the timed events' seed [2]")
    args = parser.parse_args()

    factory = EventFactory()
    warm = batch_bodies(factory, 2, args.size, seed=100 + args.seed)
    timed = batch_bodies(factory, args.batches, args.size, seed=args.seed)
    young_collections_rarer()
    database = f"headwater_bench_split_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    folder = None
    if args.sqlite_file:
        url = f"sqlite:///{Path(args.sqlite_file).resolve()}"
    elif args.backend == "sqlite":
        folder = tempfile.mkdtemp(prefix="headwater-split-")
        url = f"sqlite:///{folder}/split.db"
    else:
        import psycopg

        with psycopg.connect(args.pg_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{database}"')
        url = f"{args.pg_url.rsplit('/', 1)[0]}/{database}"
    store = open_store(url)
    try:
        for body in warm:
            ingest(store, body)
        validate = append = wall = 0.0
        events = 0
        backend = backend_cpu(store) if args.backend == "postgresql" else None
        backend_start = backend() if backend else 0.0
        if args.writer_thread:
            cpu, switches = time.process_time(), _switches()
            validate, append, events = threaded(store, timed)
            cpu, switches = time.process_time() - cpu, _switches() - switches
            print(
                f"{args.backend}, writer thread: validate {1e6 * validate / events:.1f} µs/event, append "
                f"{1e6 * append / events:.1f} µs/event, process {1e6 * cpu / events:.1f} µs/event, "
                f"{switches / events:.2f} context switches/event ({events:,} events)"
            )
            return
        for body in timed:
            v, a, w, n = ingest(store, body)
            validate, append, wall, events = validate + v, append + a, wall + w, events + n
        used = ""
        if backend is not None:
            used = f"; PostgreSQL's backend {1e6 * (backend() - backend_start) / events:.1f} µs/event"
        print(
            f"{args.backend}: validate {1e6 * validate / events:.1f} µs/event, append "
            f"{1e6 * append / events:.1f} µs/event, total {1e6 * (validate + append) / events:.1f} "
            f"({events:,} events); an append's wall time {1e3 * wall / len(timed):.2f} ms{used}"
        )
    finally:
        store.close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            import psycopg

            with psycopg.connect(args.pg_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{database}"')


if __name__ == "__main__":
    main()
