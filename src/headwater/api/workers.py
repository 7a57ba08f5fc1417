"""`headwater serve --workers N`: N server processes, each accepting connections on a socket of its
own, bound with SO_REUSEPORT to the same address, so that the kernel spreads connections among them;
a worker passes a connection it accepts to one that holds fewer (`headwater.api.balance`).

uvicorn's own supervisor binds one socket and every worker accepts on it; the worker that wakes
first takes every connection waiting, so a client opening its connections at once (a producer's
pool, the benchmark's 32 or 4) gave one worker nearly all of them and left the other core idle
(bench/README.md, "Single POSTs and the two worker processes"). Like uvicorn's supervisor, this
one replaces a worker that died (`run_workers`); it leaves out its SIGHUP, SIGTTIN and SIGTTOU
controls. Without SO_REUSEPORT (not Linux or BSD) `serve` uses uvicorn's.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import multiprocessing
import os
import signal
import socket
import time
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType
from typing import Any

from headwater.api.balance import Balance, CountedProtocol
from headwater.ingest import metrics_shared
from headwater.lifetimes import end_with_parent

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
SETTLED_SECONDS = 5.0  # a worker that dies after serving this long is replaced (else it could not start)


def reuse_port_supported() -> bool:
    return hasattr(socket, "SO_REUSEPORT")


def reuse_port_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port beside the other workers' (not listening yet)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _worker(
    options: dict[str, Any], metrics_folder: Path, balance: Balance, number: int, parent: int
) -> None:
    """Worker `number`: uvicorn on a socket of its own (runs in a spawned process), its metrics
    shared with the other workers', its open connections kept even with theirs (`balance`). It
    stops when its supervisor `parent` ends, even killed outright."""
    import uvicorn

    end_with_parent(parent)

    config = uvicorn.Config(**{**options, "http": "headwater.api.balance:protocol"})
    try:
        sock = reuse_port_socket(config.host, config.port)
    except OSError as exc:
        log.error("cannot listen on %s:%d: %s", config.host, config.port, exc)
        raise SystemExit(1) from None
    balance.serve(number)
    metrics_shared.share(metrics_folder)
    try:
        _balanced_server(config, balance).run(sockets=[sock])
    finally:
        metrics_shared.stop_sharing()


def _balanced_server(config: Any, balance: Balance) -> Any:
    """uvicorn's server, also serving the connections other workers pass this one."""
    import uvicorn

    class BalancedServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            protocol = functools.partial(
                CountedProtocol,
                config=self.config,
                server_state=self.server_state,
                app_state=self.lifespan.state,
            )
            balance.receive(asyncio.get_running_loop(), protocol)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            balance.stop()
            await super().shutdown(sockets)

    return BalancedServer(config)


def run_workers(workers: int, options: dict[str, Any]) -> int:
    """Run `workers` server processes with uvicorn's `options` (an app factory's import string,
    host, port...) until SIGINT or SIGTERM stops them all gracefully. A worker that dies after it
    has served for `SETTLED_SECONDS` is replaced by a new one; one that dies sooner (it could not
    start) is not, and the others go on. Returns the exit status: 0, or that of a worker that
    failed before it was asked to stop and was not replaced."""
    # Fail here, once, when the port is taken by something else (a socket without SO_REUSEPORT).
    reuse_port_socket(options["host"], options["port"]).close()
    with metrics_shared.shared_folder() as metrics_folder:
        return _supervise(workers, options, metrics_folder)


def _supervise(workers: int, options: dict[str, Any], metrics_folder: Path) -> int:
    context = multiprocessing.get_context("spawn")
    balance = Balance(workers, metrics_folder, context)
    stopping = False
    running: dict[int, tuple[BaseProcess, float]] = {}  # worker number → (process, started)
    failed: list[int] = []

    def start(number: int) -> None:
        process = context.Process(
            target=_worker,
            args=(options, metrics_folder, balance, number, os.getpid()),
            name=f"headwater-worker-{number}",
        )
        process.start()
        running[number] = (process, time.monotonic())

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for process, _ in running.values():
            if process.exitcode is None:
                # SIGTERM: a worker that got Ctrl+C's SIGINT too then still shuts down gracefully
                # (a second SIGINT would make uvicorn drop its open connections).
                process.terminate()

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        for number in range(workers):
            if not stopping:
                start(number)
        while running:
            # a second at most: a stop signal is seen within it
            wait([process.sentinel for process, _ in running.values()], timeout=1.0)
            for number, (process, started) in list(running.items()):
                if process.exitcode is None:
                    continue
                del running[number]
                balance.gone(number)
                if stopping:
                    continue
                served = time.monotonic() - started
                if served >= SETTLED_SECONDS:
                    log.warning(
                        "server process %s exited with status %s after %.0f s: starting another",
                        process.pid,
                        process.exitcode,
                        served,
                    )
                    start(number)
                elif process.exitcode:
                    failed.append(process.exitcode)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0 if stopping or not failed else failed[0]
