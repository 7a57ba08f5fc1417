"""`headwater serve --workers N` (`headwater.api.workers`): by default a worker per core; each worker
accepts on a socket of its own, and connections are kept even across the workers; /metrics
counts every worker's requests; a worker that dies is replaced; the server stops on SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import orjson

from headwater.api.workers import SETTLED_SECONDS
from headwater.config import process_count
from tests.api.test_ingest_protocol import Connection, post
from tests.conftest import LiveServer
from tests.factories import run_event

GET_METRICS = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
CREATED = re.compile(rb'headwater_http_ingest_requests_total\{status="201"\} (\d+)')


def _socket_owners(port: int, state: str) -> Counter[int]:
    """How many sockets on the loopback port, in that TCP state (`0A` listening, `01`
    established), each process holds (Linux: /proc)."""
    inodes = set()
    for row in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = row.split()
        if fields[1].endswith(f":{port:04X}") and fields[3] == state:
            inodes.add(f"socket:[{fields[9]}]")
    owners: Counter[int] = Counter()
    for fd_folder in Path("/proc").glob("[0-9]*/fd"):
        try:
            owners[int(fd_folder.parent.name)] += sum(os.readlink(fd) in inodes for fd in fd_folder.iterdir())
        except OSError:  # a process that ended, or one not ours
            continue
    return +owners


def _listening_pids(port: int) -> set[int]:
    """The processes holding a socket that listens on the loopback port."""
    return set(_socket_owners(port, "0A"))


def _wait_for_workers(server: LiveServer, count: int) -> set[int]:
    """The server answers once one worker is up: wait for `count` of them to listen."""
    deadline = time.monotonic() + 30
    while len(pids := _listening_pids(server.port)) < count:
        assert time.monotonic() < deadline, f"{len(pids)} of {count} workers listen"
        time.sleep(0.05)
    return pids


def _server_ends(port: int) -> dict[int, tuple[str, str]]:
    """The server's end of each established connection to the loopback port: client port → (its
    socket's inode, TCP state)."""
    ends = {}
    for row in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = row.split()
        if fields[1].endswith(f":{port:04X}"):
            ends[int(fields[2].split(":")[1], 16)] = (f"socket:[{fields[9]}]", fields[3])
    return ends


def _worker_of(conn: Connection, port: int, workers: set[int]) -> int:
    """The worker process holding the server's end of `conn`."""
    inode = _server_ends(port)[conn.sock.getsockname()[1]][0]
    for pid in workers:
        if any(os.readlink(fd) == inode for fd in Path(f"/proc/{pid}/fd").iterdir()):
            return pid
    raise AssertionError("no worker holds the connection")


def _answered(connections: list[Connection]) -> None:
    for conn in connections:
        conn.send(post("/api/v1/lineage", orjson.dumps(run_event())))
        assert conn.answer()[0] == 201


def test_connections_are_spread_evenly_over_the_workers(tmp_path: Path) -> None:
    server = LiveServer(f"sqlite:///{tmp_path / 'workers.db'}", "--workers", "2")
    workers = _wait_for_workers(server, 2)
    connections = [Connection(server.port) for _ in range(16)]
    try:
        _answered(connections)
        # The server's end of a connection is a socket of the worker that serves it. The kernel
        # deals connections unevenly (8/8 in about one run in five); a worker passes one it
        # accepts to the other when that one holds fewer (`headwater.api.balance`).
        held = _socket_owners(server.port, "01")
        assert set(held) == workers and sorted(held.values()) == [8, 8]
        # One worker's connections close: the next ones all go to it.
        first = _worker_of(connections[0], server.port, workers)
        leaving = [conn for conn in connections if _worker_of(conn, server.port, workers) == first]
        for conn in leaving:
            conn.close()
        deadline = time.monotonic() + 10
        while any(state in ("08", "09") for _, state in _server_ends(server.port).values()):
            assert time.monotonic() < deadline, "the worker has not closed its ends"
            time.sleep(0.02)
        time.sleep(0.1)  # the descriptor closes first, the protocol hears of it next
        connections = [conn for conn in connections if conn not in leaving]
        arriving = [Connection(server.port) for _ in range(6)]
        connections += arriving
        _answered(arriving)
        assert {_worker_of(conn, server.port, workers) for conn in arriving} == {first}
        assert sorted(_socket_owners(server.port, "01").values()) == [6, 8]
    finally:
        for conn in connections:
            conn.close()
        server.stop()
    assert server.process.returncode == 0  # stopped by SIGTERM, gracefully


def _created(port: int) -> int:
    """headwater_http_ingest_requests_total{status="201"} as /metrics answers on a new connection."""
    conn = Connection(port)
    try:
        conn.send(GET_METRICS)
        status, _, body = conn.answer()
    finally:
        conn.close()
    found = CREATED.search(body)
    assert status == 200 and found is not None, body[:500]
    return int(found.group(1))


def test_serve_runs_a_worker_per_core_and_each_counts_the_requests_of_all(tmp_path: Path) -> None:
    server = LiveServer(f"sqlite:///{tmp_path / 'default.db'}")  # the workers setting's default
    try:
        workers = _wait_for_workers(server, process_count(0))
        time.sleep(0.5)
        assert _listening_pids(server.port) == workers  # and no more
        connections = [Connection(server.port) for _ in range(16)]
        try:
            for conn in connections:
                conn.send(post("/api/v1/lineage", orjson.dumps(run_event())))
                assert conn.answer()[0] == 201
            answering = set(_socket_owners(server.port, "01"))
        finally:
            for conn in connections:
                conn.close()
        assert answering == workers
        # Whichever worker a new connection reaches counts the requests every worker answered
        # (the others' as they published them, a tenth of a second ago at most).
        deadline = time.monotonic() + 10
        seen = [_created(server.port) for _ in range(8)]
        while set(seen) != {16}:
            assert time.monotonic() < deadline and max(seen) <= 16, seen
            time.sleep(0.1)
            seen = [_created(server.port) for _ in range(8)]
    finally:
        server.stop()
    assert server.process.returncode == 0


def test_a_worker_that_dies_is_replaced(tmp_path: Path) -> None:
    server = LiveServer(f"sqlite:///{tmp_path / 'replaced.db'}", "--workers", "2")
    try:
        first = _wait_for_workers(server, 2)
        time.sleep(SETTLED_SECONDS)  # a worker dying sooner could not start: it is not replaced
        os.kill(min(first), signal.SIGKILL)
        deadline = time.monotonic() + 60
        while len(pids := _listening_pids(server.port)) < 2 or pids & first != first - {min(first)}:
            assert time.monotonic() < deadline, "the dead worker was not replaced"
            time.sleep(0.1)
        assert min(first) not in pids
        for _ in range(8):  # both answer: the new one has its own socket
            conn = Connection(server.port)
            try:
                conn.send(post("/api/v1/lineage", orjson.dumps(run_event())))
                assert conn.answer()[0] == 201
            finally:
                conn.close()
    finally:
        server.stop()
    assert server.process.returncode == 0


def test_serve_with_workers_refuses_a_port_already_taken(tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        command = [sys.executable, "-m", "headwater", "serve", "--port", str(port), "--workers", "2"]
        command += ["--database-url", f"sqlite:///{tmp_path / 'taken.db'}"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    finally:
        taken.close()
    assert done.returncode != 0
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
