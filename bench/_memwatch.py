"""Run `headwater ARGS...` in this process and write, once a minute, where its memory is.

    python bench/_memwatch.py OUT.jsonl serve --port ... --database-url ...

Each line of OUT.jsonl: the time, the resident set size, what Python's allocator holds as traced
by tracemalloc (one frame per allocation: cheap enough for a soak; MEMWATCH_TRACE=0 turns it off
and reports the small-object allocator's arenas instead) and its 12 sites that grew most since
the first report, and what SQLite's own allocator holds (`sqlite3_memory_used`, the page
caches of every connection), then the resident set size again after `malloc_trim(0)` hands the
C allocator's free pages back. RSS that grows while the others stay flat is memory the C allocator
keeps (fragmentation, per-thread arenas), not a leak in Headwater's code. Used by
`bench/soak.py --memwatch`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import sys
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

PERIOD = 60.0


def _sqlite_memory() -> int | None:
    """Bytes SQLite's allocator holds in this process (the library _sqlite3 loaded), if found."""
    import _sqlite3  # noqa: F401  (loads the library so that the name below finds it)

    name = ctypes.util.find_library("sqlite3")
    if not name:
        return None
    try:
        function = ctypes.CDLL(name).sqlite3_memory_used
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_int64
    return int(function())


def _status(field: str = "VmRSS") -> int:
    """A field of /proc/self/status: kB as bytes, counts as they are."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            parts = line.split()
            return int(parts[1]) * (1024 if parts[-1] == "kB" else 1)
    return 0


def _rss() -> int:
    return _status("VmRSS")


def _pymalloc_arenas() -> int | None:
    """Bytes of the arenas Python's small-object allocator holds (live objects and the free
    blocks around them), read from `sys._debugmallocstats`, which writes to stderr (nothing
    while tracemalloc runs: its hooks replace the allocator)."""
    import re
    import tempfile

    with tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        try:
            os.dup2(sink.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        text = sink.read().decode(errors="replace")
    found = re.search(r"arenas \* \d+ bytes/arena\s*=\s*([\d,]+)", text)
    return int(found.group(1).replace(",", "")) if found else None


def _watch(out: Path) -> None:
    from headwater.api.memory import malloc_trim

    trim = malloc_trim()
    tracing = tracemalloc.is_tracing()
    first = tracemalloc.take_snapshot() if tracing else None
    started = time.monotonic()
    with out.open("a") as sink:
        while True:
            time.sleep(PERIOD)
            grown = []
            if first is not None:
                grown = tracemalloc.take_snapshot().compare_to(first, "lineno")[:12]
            report: dict[str, Any] = {
                "minute": round((time.monotonic() - started) / 60, 1),
                "rss": _rss(),
                "traced": tracemalloc.get_traced_memory()[0] if tracing else None,
                "tracemalloc_itself": tracemalloc.get_tracemalloc_memory() if tracing else None,
                "sqlite": _sqlite_memory(),
                "pymalloc_arenas": _pymalloc_arenas(),
                "rss_anon": _status("RssAnon"),
                "rss_file": _status("RssFile"),
                "threads": _status("Threads"),
                "grown": [
                    {"site": str(stat.traceback[0]), "bytes": stat.size_diff, "now": stat.size}
                    for stat in grown
                ],
            }
            if trim is not None:
                trim()
            report["rss_trimmed"] = _rss()
            sink.write(json.dumps(report) + "\n")
            sink.flush()


def main() -> None:
    out, args = Path(sys.argv[1]), sys.argv[2:]
    if os.environ.get("MEMWATCH_TRACE", "1") != "0":  # 0: no tracemalloc (and pymalloc's stats)
        tracemalloc.start(1)
    threading.Thread(target=_watch, args=(out,), daemon=True, name="memwatch").start()
    from headwater.cli import main as headwater

    sys.argv = ["headwater", *args]
    headwater()


if __name__ == "__main__":
    main()
