"""The server's memory over days: once a minute, the C allocator hands its free pages back.

Under steady ingest, glibc's malloc keeps what Python frees (event bodies and responses of a few
KB each are its, not Python's small-object allocator's) in per-thread arenas, and the resident size
creeps up with nothing leaking: `bench/soak.py --memwatch` showed 20-80 MB freed but held at any
minute. `malloc_trim(0)` returns those pages; it takes a few milliseconds. On a C library without
it (musl, macOS) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Callable

TRIM_SECONDS = 60.0


def malloc_trim() -> Callable[[], None] | None:
    """glibc's `malloc_trim(0)` as a call, or None where the C library has none."""
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: trim(0)


class MemoryTrimmer:
    """A daemon thread that calls `malloc_trim(0)` every `seconds` until `stop()`."""

    def __init__(self, seconds: float = TRIM_SECONDS) -> None:
        self.seconds = seconds
        self.trims = 0
        self._trim = malloc_trim()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="headwater-trim", daemon=True)

    @property
    def available(self) -> bool:
        return self._trim is not None

    def start(self) -> MemoryTrimmer:
        if self._trim is not None:
            self._thread.start()
        return self

    def _run(self) -> None:
        assert self._trim is not None
        while not self._stop.wait(self.seconds):
            self._trim()
            self.trims += 1

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
