"""Shared pieces of Headwater's benchmarks: realistic events, the server under test, a lean HTTP
client, latency statistics, CPU accounting, profiling with py-spy, and the result table.

Nothing here imports the application's HTTP stack: the load generator must stay cheap because it
shares the machine's cores with the server it measures.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.24.2/integration/spark"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
_FACET_URL = "https://openlineage.io/spec/facets/{v}/{n}.json#/$defs/{n}"

# --------------------------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------------------------

_TYPES = (
    "BIGINT",
    "INT",
    "STRING",
    "VARCHAR(255)",
    "DECIMAL(18,2)",
    "TIMESTAMP",
    "DATE",
    "BOOLEAN",
    "DOUBLE",
    "ARRAY<STRING>",
    "MAP<STRING,STRING>",
    "BINARY",
)
_WORDS = (
    "order",
    "customer",
    "line",
    "item",
    "price",
    "amount",
    "status",
    "region",
    "country",
    "store",
    "product",
    "category",
    "discount",
    "tax",
    "currency",
    "channel",
    "session",
    "device",
    "campaign",
    "created",
    "updated",
    "shipped",
    "returned",
    "quantity",
    "weight",
    "score",
    "segment",
    "tier",
)
_DB_NAMESPACES = (
    "postgres://orders-db.prod:5432",
    "snowflake://acme.eu-west-1",
    "s3://acme-lake",
    "bigquery",
    "hive://metastore.prod:9083",
    "kafka://broker-1.prod:9092",
)


def _facet(facet: str, version: str, /, **fields: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": _FACET_URL.format(v=version, n=facet), **fields}


def _column(rng: random.Random, used: set[str]) -> str:
    while True:
        name = "_".join(rng.sample(_WORDS, rng.choice((1, 2, 2, 3))))
        if rng.random() < 0.3:
            name += f"_{rng.choice(('id', 'ts', 'code', 'name', 'key'))}"
        if name not in used:
            used.add(name)
            return name


def _schema_fields(rng: random.Random, count: int) -> list[dict[str, Any]]:
    used: set[str] = set()
    fields = []
    for position in range(count):
        item: dict[str, Any] = {"name": _column(rng, used), "type": rng.choice(_TYPES)}
        if rng.random() < 0.15:
            item["description"] = " ".join(rng.choices(_WORDS, k=rng.randint(3, 8)))
        if rng.random() < 0.2:
            item["ordinal_position"] = position + 1
        fields.append(item)
    return fields


def _dataset(rng: random.Random, n_fields: int, role: str) -> dict[str, Any]:
    namespace = rng.choice(_DB_NAMESPACES)
    name = f"{rng.choice(('sales', 'crm', 'web', 'finance', 'ops'))}.{role}_{rng.randrange(10**6):06d}"
    facets: dict[str, Any] = {
        "schema": _facet("SchemaDatasetFacet", "1-2-0", fields=_schema_fields(rng, n_fields)),
        "dataSource": _facet("DatasourceDatasetFacet", "1-0-1", name=namespace, uri=f"{namespace}/{name}"),
    }
    if rng.random() < 0.3:
        facets["symlinks"] = _facet(
            "SymlinksDatasetFacet",
            "1-0-1",
            identifiers=[{"namespace": "hive://metastore.prod:9083", "name": name, "type": "TABLE"}],
        )
    return {"namespace": namespace, "name": name, "facets": facets}


@dataclass(frozen=True)
class Job:
    """A job's unchanging part: its name, facets and datasets, shared by all its events."""

    namespace: str
    name: str
    facets: dict[str, Any]
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]


class EventFactory:
    """Realistic OpenLineage RunEvents of 4-8 KB serialized, deterministic for a seed.

    Each job carries schema facets of 20-60 fields, dataSource, columnLineage, a sql job facet and
    several inputs and outputs; each event adds its own runId, eventTime, eventType, parent run and
    statistics, so no two events of one factory are alike (nothing is deduplicated).
    """

    MIN_BYTES, MAX_BYTES = 4_096, 8_192

    def __init__(self, seed: int = 1, jobs: int = 200) -> None:
        self.rng = random.Random(seed)
        self.jobs = [self._job(i) for i in range(jobs)]

    def _job(self, index: int) -> Job:
        rng = self.rng
        # Draw shapes until the serialized event lands inside the size band (per-event parts add
        # up to ~900 bytes, hence the margins). The main input carries 20-60 schema fields; the
        # other datasets are narrower, as joined dimension tables and outputs usually are.
        wanted = rng.uniform(self.MIN_BYTES + 1_000, self.MAX_BYTES - 300)  # spread the sizes evenly
        for _attempt in range(10_000):
            n_in, n_out = rng.choice(((1, 1), (2, 1), (2, 1), (3, 1), (2, 2), (1, 2)))
            inputs = [_dataset(rng, rng.randint(20, 60), "src")]
            inputs += [_dataset(rng, rng.randint(3, 10), "dim") for _ in range(n_in - 1)]
            outputs = [_dataset(rng, rng.randint(4, 16), "out") for _ in range(n_out)]
            source_fields = [(d, f["name"]) for d in inputs for f in d["facets"]["schema"]["fields"]]
            for out in outputs:
                out_fields = out["facets"]["schema"]["fields"]
                lineage = {}
                for f in out_fields[: rng.randint(2, min(8, len(out_fields)))]:
                    picks = rng.sample(source_fields, rng.choice((1, 1, 2)))
                    entry: dict[str, Any] = {
                        "inputFields": [
                            {"namespace": d["namespace"], "name": d["name"], "field": col} for d, col in picks
                        ]
                    }
                    if rng.random() < 0.5:
                        for item in entry["inputFields"]:
                            item["transformations"] = [
                                {
                                    "type": "DIRECT",
                                    "subtype": rng.choice(("IDENTITY", "TRANSFORMATION", "AGGREGATION")),
                                }
                            ]
                    lineage[f["name"]] = entry
                out["facets"]["columnLineage"] = _facet("ColumnLineageDatasetFacet", "1-2-0", fields=lineage)
            cols = ", ".join(f["name"] for f in inputs[0]["facets"]["schema"]["fields"][: rng.randint(2, 20)])
            joins = " ".join(f"JOIN {d['name']} USING (order_id)" for d in inputs[1:])
            sql = f"INSERT INTO {outputs[0]['name']} SELECT {cols} FROM {inputs[0]['name']} {joins} WHERE 1=1"
            name = (
                f"etl_{index:04d}.{rng.choice(('load', 'merge', 'aggregate', 'export'))}_{rng.choice(_WORDS)}"
            )
            facets = {"sql": _facet("SQLJobFacet", "1-1-0", query=sql, dialect="spark")}
            if rng.random() < 0.5:
                facets["jobType"] = _facet(
                    "JobTypeJobFacet", "2-0-3", processingType="BATCH", integration="SPARK", jobType="SQL_JOB"
                )
            if rng.random() < 0.5:
                facets["sourceCodeLocation"] = _facet(
                    "SourceCodeLocationJobFacet",
                    "1-1-0",
                    type="git",
                    url=f"https://git.acme.example/data/etl/blob/main/jobs/{name}.py",
                )
            job = Job(rng.choice(("spark-prod", "spark-etl", "airflow")), name, facets, inputs, outputs)
            # Smallest form (START, no parent) and largest (COMPLETE with statistics and parent).
            run_id, moment = str(uuid.UUID(int=0)), "2025-01-01T00:00:00.000Z"
            small = len(orjson.dumps(self._event(job, run_id, "START", moment, None)))
            large = len(orjson.dumps(self._event(job, run_id, "COMPLETE", moment, (run_id, "dag_00.run"))))
            near = abs(large - wanted) < 200 + 10 * _attempt  # widen the band when it is hard to hit
            if small >= self.MIN_BYTES and large <= self.MAX_BYTES - 128 and near:
                return job
        raise RuntimeError("no job shape fits the event size band")

    def _event(
        self, job: Job, run_id: str, event_type: str, event_time: str, parent: tuple[str, str] | None
    ) -> dict[str, Any]:
        run_facets: dict[str, Any] = {
            "processing_engine": _facet(
                "ProcessingEngineRunFacet",
                "1-1-1",
                version="3.5.1",
                name="spark",
                openlineageAdapterVersion="1.24.2",
            ),
            "nominalTime": _facet("NominalTimeRunFacet", "1-0-1", nominalStartTime=event_time),
        }
        if parent is not None:
            run_facets["parent"] = _facet(
                "ParentRunFacet",
                "1-1-0",
                run={"runId": parent[0]},
                job={"namespace": "airflow", "name": parent[1]},
                root={"run": {"runId": parent[0]}, "job": {"namespace": "airflow", "name": parent[1]}},
            )
        outputs = job.outputs
        if event_type == "COMPLETE":
            outputs = [
                {
                    **out,
                    "outputFacets": {
                        "outputStatistics": _facet(
                            "OutputStatisticsOutputDatasetFacet",
                            "1-0-2",
                            rowCount=self.rng.randrange(10**7),
                            size=self.rng.randrange(10**10),
                            fileCount=3,
                        )
                    },
                }
                for out in outputs
            ]
        return {
            "eventType": event_type,
            "eventTime": event_time,
            "run": {"runId": run_id, "facets": run_facets},
            "job": {"namespace": job.namespace, "name": job.name, "facets": job.facets},
            "inputs": job.inputs,
            "outputs": outputs,
            "producer": PRODUCER,
            "schemaURL": SCHEMA_URL,
        }

    def run_events(
        self,
        run_id: str,
        n_events: int,
        start: datetime,
        *,
        job_index: int | None = None,
        parent: tuple[str, str] | None = None,
    ) -> list[dict[str, Any]]:
        """The events of one run: START, RUNNING..., COMPLETE (or FAIL), times strictly rising."""
        job = self.jobs[job_index if job_index is not None else self.rng.randrange(len(self.jobs))]
        out = []
        for i in range(n_events):
            if i == 0:
                kind = "START"
            elif i == n_events - 1:
                kind = "FAIL" if self.rng.random() < 0.05 else "COMPLETE"
            else:
                kind = "RUNNING"
            moment = start + timedelta(seconds=i * 7, microseconds=self.rng.randrange(10**6))
            out.append(self._event(job, run_id, kind, _iso(moment), parent))
        return out

    def stream(
        self, n: int, *, seed: int = 0, start: datetime | None = None, run_ids: str = "v4"
    ) -> Iterator[dict[str, Any]]:
        """n distinct events, grouped into runs of 2-6 events (what producers send), times rising.
        `run_ids`: "v4", random UUIDs; "v7", UUIDs that begin with their run's start time (in
        milliseconds, RFC 9562's version 7), which the OpenLineage Python client generates
        since its 1.15."""
        if run_ids not in RUN_ID_KINDS:
            raise ValueError(f"run_ids must be one of {RUN_ID_KINDS}, not {run_ids!r}")
        rng = random.Random(seed)
        moment = start or datetime(2025, 1, 1, tzinfo=UTC) + timedelta(days=seed % 1000)
        sent = 0

        def new_id() -> str:
            if run_ids == "v7":
                return _uuid7(rng, moment)
            return str(uuid.UUID(int=rng.getrandbits(128), version=4))

        parent = (new_id(), "dag_ingest.orders")
        while sent < n:
            size = min(rng.randint(2, 6), n - sent)
            if rng.random() < 0.1:
                parent = (new_id(), f"dag_{rng.randrange(50)}.run")
            run_id = new_id()
            yield from self.run_events(run_id, size, moment, parent=parent)
            sent += size
            moment += timedelta(seconds=1, microseconds=rng.randrange(10**6))


RUN_ID_KINDS = ("v4", "v7")


def _uuid7(rng: random.Random, moment: datetime) -> str:
    """A version-7 UUID: 48 bits of Unix milliseconds, then the version, 74 random bits and the
    RFC 4122 variant, so that ids of later runs sort after those of earlier ones."""
    millis = int(moment.timestamp() * 1000) & (2**48 - 1)
    tail = rng.getrandbits(74)
    value = (millis << 80) | (0x7 << 76) | ((tail >> 62) << 64) | (0b10 << 62) | (tail & (2**62 - 1))
    return str(uuid.UUID(int=value))


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def post_request(path: str, body: bytes, content_type: str = "application/json") -> bytes:
    """A complete HTTP/1.1 request, ready to write on a keep-alive connection."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    return head + body


def get_request(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()


# --------------------------------------------------------------------------------------------
# Databases
# --------------------------------------------------------------------------------------------


class Database:
    """A throwaway database: a SQLite file in a temporary folder, or a fresh PostgreSQL database;
    with `template`, a copy of that store instead of an empty one (a SQLite file, or the name of a
    database on the same PostgreSQL server, which nobody may be connected to)."""

    def __init__(
        self, backend: str, workdir: Path, label: str, pg_admin_url: str, template: str | None = None
    ) -> None:
        self.backend = backend
        self.pg_admin_url = pg_admin_url
        if backend == "sqlite":
            self.path = workdir / f"{label}.db"
            self.url = f"sqlite:///{self.path}"
            if template:
                for suffix in ("", "-wal"):  # a store not checkpointed keeps commits in its WAL
                    if Path(template + suffix).exists():
                        shutil.copyfile(template + suffix, str(self.path) + suffix)
        else:
            import psycopg

            self.name = f"headwater_bench_{label}_{os.getpid()}"
            copy = f' TEMPLATE "{template}"' if template else ""
            with psycopg.connect(pg_admin_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.name}"')
                conn.execute(f'CREATE DATABASE "{self.name}"{copy}')
            base = pg_admin_url.rsplit("/", 1)[0]
            self.url = f"{base}/{self.name}"

    def size_bytes(self) -> int:
        if self.backend == "sqlite":
            return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*"))
        import psycopg

        with psycopg.connect(self.pg_admin_url, autocommit=True) as conn:
            row = conn.execute("SELECT pg_database_size(%s)", (self.name,)).fetchone()
        return int(row[0]) if row else 0

    def drop(self) -> None:
        if self.backend == "sqlite":
            for p in self.path.parent.glob(self.path.name + "*"):  # -wal, -shm, locks, .staging/
                if p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink(missing_ok=True)
            return
        import psycopg

        with psycopg.connect(self.pg_admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


# --------------------------------------------------------------------------------------------
# The server under test
# --------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """`headwater serve` as a subprocess (uvicorn, uvloop, httptools, `workers` processes)."""

    def __init__(
        self,
        database_url: str,
        workdir: Path,
        *,
        log_level: str = "warning",
        workers: int | None = None,
        command: list[str] | None = None,
    ) -> None:
        """`workers` None: the setting's default (one per core, at most 4), as a user starts it.
        `command` runs in place of `headwater` (e.g. a wrapper that watches memory)."""
        self.port = free_port()
        self.log_path = workdir / f"server-{self.port}.log"
        exe = VENV_BIN / "headwater"
        cmd = command or ([str(exe)] if exe.exists() else [sys.executable, "-m", "headwater"])
        cmd += ["serve", "--port", str(self.port), "--database-url", database_url, "--log-level", log_level]
        if workers is not None:
            cmd += ["--workers", str(workers)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("HEADWATER_")}
        self._log = self.log_path.open("wb")
        # cwd is the scratch folder so that no ./headwater.toml changes the settings under test.
        self.proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        self._wait_ready()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _wait_ready(self, timeout: float = 60) -> None:
        url = f"http://127.0.0.1:{self.port}/api/atlas/v2/openlineage/health"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server not ready after {timeout}s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def cpu_seconds(self) -> float:
        return process_cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU of a process (all threads) and of its children (`--workers N`: the
    worker processes count as the server too), from /proc, in seconds."""
    total = 0.0
    for process in server_processes(pid):
        try:
            fields = Path(f"/proc/{process}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def server_processes(pid: int) -> list[int]:
    """The server's process and its worker processes (`--workers N`), from /proc."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return [pid] + [p for child in children for p in server_processes(int(child))]


def connections_per_worker(port: int, pids: list[int]) -> list[int]:
    """How many established connections to the local `port` each of `pids` that listens on it
    holds (Linux /proc): with `serve --workers N`, which worker the kernel gave each connection of
    the bench. Processes not listening there (the supervisor, multiprocessing's resource tracker)
    are left out."""
    sockets: dict[str, str] = {}  # socket inode → TCP state
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[1].endswith(f":{port:04X}") and fields[3] in ("01", "0A"):
                sockets[f"socket:[{fields[9]}]"] = fields[3]
    counts = []
    for pid in pids:
        states: list[str] = []
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                try:
                    states.append(sockets.get(os.readlink(fd), ""))
                except OSError:
                    continue
        except OSError:
            continue
        if "0A" in states:  # a worker: it listens on the port
            counts.append(states.count("01"))
    return counts


def machine_busy_seconds() -> float:
    """CPU seconds all cores spent busy since boot (everything but idle and iowait), from /proc/stat."""
    try:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except (OSError, ValueError):
        return 0.0
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


def machine_busy_now(seconds: float = 2.0) -> float:
    """Cores busy on average over the next few seconds (0.0-2.0 on 2 cores): is the machine quiet?"""
    start = machine_busy_seconds()
    time.sleep(seconds)
    return (machine_busy_seconds() - start) / seconds


class CpuMeter:
    """CPU used by the server and by this (load-generating) process over a stretch of wall time;
    after read(), `other` holds what the rest of the machine used meanwhile (PostgreSQL, the
    kernel's share outside both processes, anything else running: a large value flags a disturbed
    measurement)."""

    def __init__(self, server_pid: int | None) -> None:
        self.server_pid = server_pid
        self.wall0 = time.perf_counter()
        self.server0 = process_cpu_seconds(server_pid) if server_pid else 0.0
        self.client0 = time.process_time()
        self.machine0 = machine_busy_seconds()
        self.other = 0.0

    def read(self) -> tuple[float, float]:
        """(server cores busy, client cores busy) on average, e.g. 0.95 = 95% of one core."""
        wall = max(time.perf_counter() - self.wall0, 1e-9)
        server = (process_cpu_seconds(self.server_pid) - self.server0) if self.server_pid else 0.0
        client = time.process_time() - self.client0
        self.other = max(0.0, machine_busy_seconds() - self.machine0 - server - client) / wall
        return server / wall, client / wall


# --------------------------------------------------------------------------------------------
# A lean keep-alive HTTP/1.1 client (asyncio protocol; uvloop when installed)
# --------------------------------------------------------------------------------------------


class HttpConnection(asyncio.Protocol):
    """One keep-alive connection, one request in flight; parses only status and Content-Length."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._buf = bytearray()
        self._waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self._need = -1  # total bytes of the current response once its head is parsed
        self._status = 0
        self._head = 0

    @classmethod
    async def open(cls, port: int) -> HttpConnection:
        loop = asyncio.get_running_loop()
        _, proto = await loop.create_connection(cls, "127.0.0.1", port)
        return proto

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(ConnectionError(f"connection closed: {exc}"))

    def data_received(self, data: bytes) -> None:
        self._buf += data
        if self._need < 0:
            end = self._buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self._buf[:end]).lower()
            self._status = int(head[9:12])
            start = head.find(b"content-length:")
            if start < 0:
                assert self._waiter is not None
                self._waiter.set_exception(RuntimeError(f"response without Content-Length: {head[:200]!r}"))
                return
            stop = head.find(b"\r\n", start)
            length = int(head[start + 15 : stop if stop > 0 else None])
            self._head = end + 4
            self._need = self._head + length
        if len(self._buf) >= self._need:
            body = bytes(self._buf[self._head : self._need])
            del self._buf[: self._need]
            self._need = -1
            waiter, self._waiter = self._waiter, None
            if waiter is not None and not waiter.done():
                waiter.set_result((self._status, body))

    async def request(self, raw: bytes) -> tuple[int, bytes]:
        """Send a complete request; return (status, body)."""
        assert self.transport is not None and self._waiter is None
        self._waiter = asyncio.get_running_loop().create_future()
        self.transport.write(raw)
        return await self._waiter

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


def new_event_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop

        return uvloop.new_event_loop()
    except ImportError:  # pragma: no cover - uvicorn[standard] brings uvloop
        return asyncio.new_event_loop()


def run_async(coro: Any) -> Any:
    loop = new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()


# --------------------------------------------------------------------------------------------
# Statistics and the table
# --------------------------------------------------------------------------------------------


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of already sorted values (q in 0..100)."""
    if not sorted_values:
        return float("nan")
    rank = max(1, min(len(sorted_values), int(-(-q * len(sorted_values) // 100))))
    return sorted_values[rank - 1]


@dataclass
class Figure:
    """One line of the result table."""

    backend: str
    name: str
    value: float
    unit: str
    target: float | None = None
    higher_is_better: bool = True
    note: str = ""

    @property
    def verdict(self) -> str:
        if self.target is None:
            return "info"
        ok = self.value >= self.target if self.higher_is_better else self.value <= self.target
        return "pass" if ok else "SHORT"

    def shown(self, value: float) -> str:
        if value != value:  # nan
            return "n/a"
        if self.unit == "ms":
            return f"{value:,.2f} {self.unit}"
        if self.unit == "s":
            return f"{value:,.1f} {self.unit}"
        return f"{value:,.0f} {self.unit}"


def print_table(figures: Sequence[Figure], out: Any = sys.stdout) -> None:
    rows = [("backend", "figure", "value", "target", "verdict", "notes")]
    for f in figures:
        target = "" if f.target is None else ("≥ " if f.higher_is_better else "≤ ") + f.shown(f.target)
        rows.append((f.backend, f.name, f.shown(f.value), target, f.verdict, f.note))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for n, r in enumerate(rows):
        line = "  ".join(c.ljust(widths[i]) if i != 2 else c.rjust(widths[i]) for i, c in enumerate(r[:5]))
        print(f"{line}  {r[5]}".rstrip(), file=out)
        if n == 0:
            print("-" * (sum(widths) + 2 * 5 + 20), file=out)


# --------------------------------------------------------------------------------------------
# Profiling with py-spy
# --------------------------------------------------------------------------------------------


def find_py_spy() -> str | None:
    found = VENV_BIN / "py-spy"
    return str(found) if found.exists() else shutil.which("py-spy")


@dataclass
class Profiler:
    """`py-spy record --format raw` on the server for the length of one scenario.

    With gil=True (the default) only the thread holding the GIL is sampled: the server is one
    process whose Python code runs one thread at a time, so that is where its CPU goes. With
    gil=False every thread that is not idle is sampled, including time spent waiting in fsync or
    on the database with the GIL released."""

    pid: int
    out: Path
    rate: int = 200
    gil: bool = True
    proc: subprocess.Popen[bytes] | None = field(default=None, init=False)

    def __enter__(self) -> Profiler:
        exe = find_py_spy()
        if exe is None:
            raise RuntimeError("--profile needs py-spy: .venv/bin/pip install py-spy")
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                exe,
                "record",
                "--pid",
                str(self.pid),
                "--rate",
                str(self.rate),
                "--format",
                "raw",
                "--threads",
                "--nonblocking",
                "--subprocesses",  # `serve --workers N`: the workers are the parent's children
                *(["--gil"] if self.gil else []),
                "--output",
                str(self.out),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(1.0)  # let py-spy attach before the load starts
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        if not self.out.exists():
            print(f"py-spy wrote no profile: {err.decode(errors='replace')[-500:]}", file=sys.stderr)


def _frame_name(frame: str) -> str:
    """'append (headwater/store/sql.py:130)' → 'headwater/store/sql.py:append'."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")")
    path = where.rsplit(":", 1)[0]
    for marker in ("site-packages/", "/src/", "lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{path}:{name}" if path else name


def summarise_profile(path: Path, top: int = 25) -> str:
    """Self and inclusive time by function, and time by thread, from py-spy's raw (collapsed) output."""
    self_time: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")
        thread = frames[0] if frames and frames[0].startswith(("thread", "process")) else "?"
        frames = [f for f in frames if not f.startswith(("thread", "process"))]
        if not frames:
            continue
        total += count
        threads[thread.split(" ", 2)[-1] if thread != "?" else "?"] += count
        self_time[_frame_name(frames[-1])] += count
        for name in {_frame_name(f) for f in frames}:
            inclusive[name] += count
    if not total:
        return f"{path}: no samples"
    lines = [f"{path.name}: {total} samples", "  by thread:"]
    lines += [f"    {100 * n / total:5.1f}%  {name}" for name, n in threads.most_common(6)]
    lines.append("  self time:")
    lines += [f"    {100 * n / total:5.1f}%  {name}" for name, n in self_time.most_common(top)]
    lines.append("  inclusive time, Headwater's functions and the drivers:")
    keep = ("headwater/", "sqlite3", "psycopg", "orjson", "json/")
    skip = ("headwater/cli.py", "headwater/__main__.py")
    picked = [
        (name, n)
        for name, n in inclusive.most_common()
        if any(k in name for k in keep) and not any(k in name for k in skip)
    ]
    lines += [f"    {100 * n / total:5.1f}%  {name}" for name, n in picked[:top]]
    return "\n".join(lines)


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} GB"


def now_stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
