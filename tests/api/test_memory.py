"""The server hands the C allocator's free pages back once a minute, from its start to its stop."""

from __future__ import annotations

import ctypes.util
import threading
import time

import pytest
from fastapi.testclient import TestClient

from headwater.api.memory import MemoryTrimmer

GLIBC = bool(ctypes.util.find_library("c")) and hasattr(
    ctypes.CDLL(ctypes.util.find_library("c")), "malloc_trim"
)


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_the_trimmer_trims_until_stopped() -> None:
    trimmer = MemoryTrimmer(seconds=0.01).start()
    deadline = time.monotonic() + 10
    while trimmer.trims < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert trimmer.trims >= 3
    trimmer.stop()
    stopped_at = trimmer.trims
    time.sleep(0.05)
    assert trimmer.trims == stopped_at
    assert not any(t.name == "headwater-trim" and t.is_alive() for t in threading.enumerate())


def test_the_server_runs_one_trimmer_while_it_serves(client: TestClient) -> None:
    trimmer = client.app.state.trimmer  # type: ignore[attr-defined]
    assert trimmer.seconds == 60.0
    assert trimmer.available == GLIBC
    assert client.get("/api/atlas/v2/openlineage/health").status_code == 200
    alive = [t for t in threading.enumerate() if t.name == "headwater-trim" and t.is_alive()]
    assert len(alive) == (1 if GLIBC else 0)
