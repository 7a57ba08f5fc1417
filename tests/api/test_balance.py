"""`headwater.api.balance` in one process: whom a connection goes to, and what happens when it
cannot be passed (the workers themselves: tests/api/test_serve_workers.py)."""

from __future__ import annotations

import multiprocessing
import socket
from pathlib import Path

from headwater.api.balance import Balance


def _balance(tmp_path: Path, workers: int) -> Balance:
    balance = Balance(workers, tmp_path, multiprocessing.get_context("spawn"))
    balance.serve(0)
    return balance


def test_a_connection_goes_to_the_taking_worker_with_the_fewest(tmp_path: Path) -> None:
    balance = _balance(tmp_path, 3)
    balance.counts[:] = [2, 1, 0]
    balance.taking[:] = [1, 1, 0]  # worker 2 has not started taking connections
    assert balance.choose() == 1
    assert balance.counts[:] == [2, 2, 0]
    assert balance.choose() == 0  # a tie: kept where the kernel put it
    assert balance.counts[:] == [3, 2, 0]
    balance.closed()
    balance.gone(1)
    assert balance.choose() == 0 and balance.counts[:] == [3, 0, 0]


def test_a_connection_that_cannot_be_passed_stays_and_is_counted_here(tmp_path: Path) -> None:
    balance = _balance(tmp_path, 2)
    balance.counts[:] = [3, 0]
    balance.taking[:] = [1, 1]
    target = balance.choose()
    assert target == 1 and balance.counts[:] == [3, 1]
    left, right = socket.socketpair()
    try:
        assert not balance.pass_on(left.fileno(), target)  # worker 1 never bound its socket
    finally:
        left.close()
        right.close()
    balance.kept(target)
    assert balance.counts[:] == [4, 0]


def test_a_passed_socket_arrives_at_the_workers_address(tmp_path: Path) -> None:
    sender = _balance(tmp_path, 2)
    receiver = Balance(2, tmp_path, multiprocessing.get_context("spawn"))
    receiver.serve(1)
    left, right = socket.socketpair()
    try:
        assert sender.pass_on(left.fileno(), 1)
        assert receiver._receiver is not None
        _, fds, _, _ = socket.recv_fds(receiver._receiver, 1, 1)
        with socket.socket(fileno=fds[0]) as passed:
            passed.sendall(b"over")
            assert right.recv(4) == b"over"  # the same connection, now held by the receiver too
    finally:
        left.close()
        right.close()
