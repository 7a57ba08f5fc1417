"""`headwater serve --workers N` (`headwater.api.workers`): each worker accepts on a socket of its
own, so connections opened at once are spread over the workers; a worker that dies is replaced;
the server stops on SIGTERM."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import orjson

from headwater.api.workers import SETTLED_SECONDS
from tests.api.test_ingest_protocol import Connection, post
from tests.conftest import LiveServer
from tests.factories import run_event

GET_METRICS = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
CREATED = re.compile(rb'headwater_http_ingest_requests_total\{status="201"\} (\d+)')


def _listening_sockets(port: int) -> int:
    """How many sockets listen on the loopback port (Linux: /proc/net/tcp, state 0A)."""
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for row in rows if row.split()[1].endswith(f":{port:04X}") and row.split()[3] == "0A")


def test_connections_opened_at_once_are_spread_over_the_workers(tmp_path: Path) -> None:
    server = LiveServer(f"sqlite:///{tmp_path / 'workers.db'}", "--workers", "2")
    deadline = time.monotonic() + 30  # the server answers once one worker is up: wait for both
    while _listening_sockets(server.port) < 2:
        assert time.monotonic() < deadline, "the second worker did not listen"
        time.sleep(0.05)
    connections = [Connection(server.port) for _ in range(16)]
    try:
        for conn in connections:
            conn.send(post("/api/v1/lineage", orjson.dumps(run_event())))
            assert conn.answer()[0] == 201
        # Each process counts the POSTs it answered: 16 on every connection would mean one worker
        # took them all (the kernel puts all 16 on one of two sockets once in 32,768 runs).
        answered = []
        for conn in connections:
            conn.send(GET_METRICS)
            status, _, body = conn.answer()
            found = CREATED.search(body)
            assert status == 200 and found is not None
            answered.append(int(found.group(1)))
        assert max(answered) < 16
        assert sum(set(answered)) == 16 or set(answered) == {8}
    finally:
        for conn in connections:
            conn.close()
        server.stop()
    assert server.process.returncode == 0  # stopped by SIGTERM, gracefully


def _listening_pids(port: int) -> set[int]:
    """The processes holding a socket that listens on the loopback port (Linux: /proc)."""
    inodes = set()
    for row in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = row.split()
        if fields[1].endswith(f":{port:04X}") and fields[3] == "0A":
            inodes.add(f"socket:[{fields[9]}]")
    pids = set()
    for fd_folder in Path("/proc").glob("[0-9]*/fd"):
        try:
            if any(os.readlink(fd) in inodes for fd in fd_folder.iterdir()):
                pids.add(int(fd_folder.parent.name))
        except OSError:  # a process that ended, or one not ours
            continue
    return pids


def test_a_worker_that_dies_is_replaced(tmp_path: Path) -> None:
    server = LiveServer(f"sqlite:///{tmp_path / 'replaced.db'}", "--workers", "2")
    try:
        deadline = time.monotonic() + 30
        while len(_listening_pids(server.port)) < 2:
            assert time.monotonic() < deadline, "the second worker did not listen"
            time.sleep(0.05)
        first = _listening_pids(server.port)
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
