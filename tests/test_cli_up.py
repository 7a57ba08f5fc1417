"""`headwater up` never leaves its server behind, nor `headwater serve` its workers: killed outright
(SIGKILL, no handler runs), their children still stop and free the port."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import free_port

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except (urllib.error.URLError, OSError):
        return False


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has stopped; only its parent (init here) has yet to reap it


def _wait(condition: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


def _descendants(pid: int) -> list[int]:
    found = []
    for child in _children(pid):
        found += [child, *_descendants(child)]
    return found


def _killed_outright_then_children_stop(
    tmp_path: Path, command: list[str], child_is: bytes, count: int
) -> None:
    """Start `headwater COMMAND`, wait until it serves, SIGKILL it: its `count` children whose
    command line holds `child_is` must stop, and the port with them."""
    port = free_port()
    env = {**os.environ, "HEADWATER_LOG_LEVEL": "warning"}
    env.pop("HEADWATER_CONFIG", None)
    database = f"sqlite:///{tmp_path}/up.db"
    started = subprocess.Popen(
        [sys.executable, "-m", "headwater", *command, "--database-url", database, "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    url = f"http://127.0.0.1:{port}/api/v1/namespaces"
    left: list[int] = []
    try:
        assert _wait(lambda: _answers(url) or started.poll() is not None, 120), "it never answered"
        assert started.poll() is None, started.stderr.read().decode()[-3000:] if started.stderr else ""
        left = _descendants(started.pid)
        children = [
            pid for pid in _children(started.pid) if child_is in Path(f"/proc/{pid}/cmdline").read_bytes()
        ]
        assert len(children) == count, children
        started.send_signal(signal.SIGKILL)
        started.wait(timeout=10)
        for child in children:
            assert _wait(lambda: not _running(child), 30), f"{child_is.decode()} outlived its parent"  # noqa: B023
        assert _wait(lambda: not _answers(url), 10), "the port still answers"
    finally:
        if started.poll() is None:
            started.kill()
        for pid in left:
            if _running(pid):
                os.kill(pid, signal.SIGTERM)


def test_the_server_stops_when_up_is_killed_outright(tmp_path: Path) -> None:
    command = ["up", "--master", "local[1]", "--no-dogfood"]
    _killed_outright_then_children_stop(tmp_path, command, b"serve", 1)


def test_the_workers_stop_when_serve_is_killed_outright(tmp_path: Path) -> None:
    _killed_outright_then_children_stop(tmp_path, ["serve", "--workers", "2"], b"multiprocessing-fork", 2)
