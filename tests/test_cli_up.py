"""`headwater up` never leaves its server behind: killed outright (SIGKILL, no handler runs), its
`headwater serve` child still stops and frees the port."""

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


def test_the_server_stops_when_up_is_killed_outright(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "HEADWATER_LOG_LEVEL": "warning"}
    env.pop("HEADWATER_CONFIG", None)
    database = f"sqlite:///{tmp_path}/up.db"
    command = ["up", "--database-url", database, "--port", str(port), "--master", "local[1]", "--no-dogfood"]
    up = subprocess.Popen(
        [sys.executable, "-m", "headwater", *command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    url = f"http://127.0.0.1:{port}/api/v1/namespaces"
    servers: list[int] = []
    try:
        assert _wait(lambda: _answers(url) or up.poll() is not None, 120), "the server never answered"
        assert up.poll() is None, up.stderr.read().decode()[-3000:] if up.stderr else ""
        servers = [pid for pid in _children(up.pid) if b"serve" in Path(f"/proc/{pid}/cmdline").read_bytes()]
        assert len(servers) == 1, servers
        up.send_signal(signal.SIGKILL)
        up.wait(timeout=10)
        assert _wait(lambda: not _running(servers[0]), 30), "the server outlived `headwater up`"
        assert _wait(lambda: not _answers(url), 10), "the port still answers"
    finally:
        if up.poll() is None:
            up.kill()
        for pid in servers:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
