"""Open connections kept even across `headwater serve`'s worker processes (`headwater.api.workers`).

Each worker accepts on a SO_REUSEPORT socket of its own, and the kernel deals a new connection to
one of them by a hash of its addresses, blind to how many each already serves. A client's few
connections then often land unevenly: of 4, three or all four on one worker half the time, and a
worker serves its connections on one core (bench/README.md, "Connections passed to the worker with
the fewest"). So the workers count their open connections in memory they all share (`Balance`),
and a worker that accepts a connection while another holds fewer passes it, before reading a byte
of it, to the one with the fewest: its socket goes over a Unix datagram socket (SCM_RIGHTS), and
the receiver serves it as if it had accepted it. A connection is passed at most once; a worker
that is stopping or gone is passed none; when passing fails, the worker that accepted it keeps it.
"""

from __future__ import annotations

import array
import asyncio
import functools
import logging
import socket
from collections.abc import Callable
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import Any, cast

from headwater.api.http_protocol import IngestProtocol

log = logging.getLogger(__name__)


class Balance:
    """The open connections of each of the workers and whether each takes connections passed to
    it, in memory shared by the supervisor and the workers it starts, and where each worker
    receives them. Made by the supervisor; a worker calls `serve` as it starts."""

    def __init__(self, workers: int, folder: Path, context: BaseContext) -> None:
        self.counts = context.Array("i", workers)  # guarded by its lock, as `taking` is
        self.taking = context.Array("b", workers, lock=False)
        self.folder = folder
        self.me = -1
        self._sender: socket.socket | None = None
        self._receiver: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._protocol: Callable[[], asyncio.Protocol] | None = None

    def address(self, worker: int) -> str:
        return str(self.folder / f"connections-{worker}.sock")

    # ---- the supervisor's side

    def gone(self, worker: int) -> None:
        """A worker exited: it is passed nothing until its successor starts."""
        with self.counts.get_lock():
            self.counts[worker], self.taking[worker] = 0, 0

    # ---- a worker's side

    def serve(self, worker: int) -> None:
        """This process is worker number `worker`: it counts its connections from 0, and binds the
        socket the others will pass it theirs on."""
        self.me = worker
        with self.counts.get_lock():
            self.counts[worker] = 0
        address = self.address(worker)
        Path(address).unlink(missing_ok=True)  # a predecessor's, which died
        self._receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._receiver.bind(address)
        self._receiver.setblocking(False)
        self._sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        global _serving
        _serving = self

    def receive(self, loop: asyncio.AbstractEventLoop, protocol: Callable[[], asyncio.Protocol]) -> None:
        """Serve the connections passed to this worker on `loop` with `protocol` (uvicorn's
        factory, with its server's state), from now on: the worker has started, and the others
        may pass it theirs."""
        assert self._receiver is not None
        self._loop, self._protocol = loop, protocol
        loop.add_reader(self._receiver.fileno(), self._received)
        with self.counts.get_lock():
            self.taking[self.me] = 1

    def stop(self) -> None:
        """This worker is shutting down: pass it nothing more."""
        with self.counts.get_lock():
            self.taking[self.me] = 0
        if self._loop is not None and self._receiver is not None:
            self._loop.remove_reader(self._receiver.fileno())

    def choose(self) -> int:
        """The worker a connection this one just accepted goes to: the one with the fewest open
        connections, this one on a tie, counted as it from now on."""
        with self.counts.get_lock():
            counts, taking = self.counts[:], self.taking[:]
            target = self.me
            for worker, count in enumerate(counts):
                if taking[worker] and count < counts[target]:
                    target = worker
            self.counts[target] += 1
        return target

    def kept(self, target: int) -> None:
        """A connection meant for `target` stays here (passing it failed)."""
        with self.counts.get_lock():
            self.counts[target] -= 1
            self.counts[self.me] += 1

    def closed(self) -> None:
        """A connection of this worker's closed."""
        with self.counts.get_lock():
            self.counts[self.me] -= 1

    def pass_on(self, connection: int, target: int) -> bool:
        """Send the connection's socket (its file descriptor) to worker `target`; whether it
        went. It never waits: a worker not there, or not keeping up, is not passed it."""
        assert self._sender is not None
        try:
            # not socket.send_fds, which drops its flags and address (CPython 3.11-3.13)
            rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [connection]))]
            self._sender.sendmsg([b"c"], rights, socket.MSG_DONTWAIT, self.address(target))
        except OSError as exc:
            log.debug("could not pass a connection to worker %d: %s", target, exc)
            return False
        return True

    def _received(self) -> None:
        assert self._receiver is not None and self._loop is not None
        while True:
            try:
                _, fds, _, _ = socket.recv_fds(self._receiver, 1, 1)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # closed under it, as the worker stops
                log.debug("receiving passed connections: %s", exc)
                return
            for fd in fds:
                self._loop.create_task(self._serve_passed(socket.socket(fileno=fd)))

    async def _serve_passed(self, connection: socket.socket) -> None:
        assert self._loop is not None and self._protocol is not None
        try:
            await self._loop.connect_accepted_socket(self._protocol, connection)
        except Exception as exc:
            log.warning("could not serve a connection another worker passed: %s", exc)
            connection.close()
            self.closed()


_serving: Balance | None = None  # this worker's, once `Balance.serve` ran


class CountedProtocol(IngestProtocol):
    """`IngestProtocol` for a connection this worker serves: its count drops when it closes."""

    def connection_lost(self, exc: Exception | None) -> None:
        try:
            super().connection_lost(exc)
        finally:
            if _serving is not None:
                _serving.closed()


class _PassOn(asyncio.Protocol):
    """A connection accepted here for another worker: its socket is sent there as soon as the
    transport has it, before anything is read; if that fails it is served here after all."""

    def __init__(self, balance: Balance, target: int, protocol: Callable[[], asyncio.Protocol]) -> None:
        self.balance, self.target, self.protocol = balance, target, protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass, but is one
        sock = transport.get_extra_info("socket")
        if sock is not None and self.balance.pass_on(sock.fileno(), self.target):
            transport.abort()  # this process's descriptor only: the connection lives on there
            return
        self.balance.kept(self.target)
        protocol = self.protocol()
        transport.set_protocol(protocol)
        protocol.connection_made(transport)


def protocol(
    *, config: Any, server_state: Any, app_state: Any, _loop: asyncio.AbstractEventLoop | None = None
) -> asyncio.Protocol:
    """uvicorn's protocol factory in a balanced worker (`serve --workers N`): the protocol of a
    connection this worker keeps, or one that passes it on."""
    make = functools.partial(
        CountedProtocol, config=config, server_state=server_state, app_state=app_state, _loop=_loop
    )
    balance = _serving
    if balance is None:
        return make()
    target = balance.choose()
    return make() if target == balance.me else _PassOn(balance, target, make)
