"""Metrics of sibling processes: `headwater serve` with several workers, and `headwater consume
--processes N`, ingest in several processes, each counting its own; `GET /metrics` is answered by
whichever one the connection reached, and shows the sum of all of them.

The processes share a folder that their parent creates (`shared_folder`) and removes. Each writes a
snapshot of its registry to a file of its own there (`<pid>.json`, replaced atomically) within
`PUBLISH_SECONDS` of a change, and reads its siblings' files when it renders. Counters and
histograms add up every process that wrote, a worker that died and was replaced included, so
totals never go back while the server runs; gauges (a Kafka partition's lag and committed offset)
are taken only from processes still alive.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import orjson

from headwater.ingest import metrics

log = logging.getLogger(__name__)

PUBLISH_SECONDS = 0.1
_GAUGES = frozenset(metric.name for metric in metrics.REGISTRY.metrics if isinstance(metric, metrics.Gauge))


_PREFIX = "headwater-metrics-"
STALE_SECONDS = 60.0


@contextlib.contextmanager
def shared_folder(parent: Path | None = None) -> Iterator[Path]:
    """A folder for the snapshots of the processes about to be started, removed afterwards. The
    folders of parents that were killed (SIGKILL leaves theirs behind) go first."""
    parent = Path(parent or tempfile.gettempdir())
    remove_stale_folders(parent)
    folder = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=parent))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def remove_stale_folders(parent: Path) -> None:
    """Remove the shared folders in `parent` untouched for a minute whose processes are all gone."""
    now = time.time()
    for folder in parent.glob(f"{_PREFIX}*"):
        try:
            if now - folder.stat().st_mtime < STALE_SECONDS:
                continue
            pids = [int(path.stem) for path in folder.glob("*.json") if path.stem.isdigit()]
            if not any(_alive(pid) for pid in pids):
                shutil.rmtree(folder)
        except OSError:  # another user's, or removed meanwhile
            continue


class SharedMetrics:
    """This process's part of the folder: a thread publishing its snapshot, and the siblings'."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.pid = os.getpid()
        self._written = b""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="headwater-metrics-share", daemon=True)

    def start(self) -> None:
        self.publish()
        self._thread.start()
        atexit.register(self.close)

    def close(self) -> None:
        """Stop publishing, after a last snapshot (what this process counted stays in the sum)."""
        if os.getpid() != self.pid:  # inherited by a forked process: the file is its parent's
            return
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(5)
        with contextlib.suppress(OSError):  # the parent removed the folder already
            self.publish()

    def _run(self) -> None:
        while not self._stop.wait(PUBLISH_SECONDS):
            try:
                self.publish()
            except OSError as exc:  # the folder went away (the parent is stopping): nothing to share
                log.debug("metrics snapshot not written: %s", exc)

    def publish(self) -> None:
        """Write this process's snapshot, unless it is what the file already holds."""
        data = orjson.dumps(metrics.REGISTRY.snapshot())
        if data == self._written:
            return
        temporary = self.folder / f"{self.pid}.json.tmp"
        temporary.write_bytes(data)
        temporary.replace(self.folder / f"{self.pid}.json")
        self._written = data

    def siblings(self) -> list[metrics.Snapshot]:
        """The other processes' snapshots, gauges only from those still alive."""
        found = []
        for path in self.folder.glob("*.json"):
            pid = int(path.stem) if path.stem.isdigit() else None
            if pid is None or pid == self.pid:
                continue
            try:
                snapshot: metrics.Snapshot = orjson.loads(path.read_bytes())
            except (OSError, orjson.JSONDecodeError):
                continue
            if not _alive(pid):
                snapshot = {name: samples for name, samples in snapshot.items() if name not in _GAUGES}
            found.append(snapshot)
        return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_shared: SharedMetrics | None = None


def share(folder: Path) -> None:
    """Publish this process's metrics into `folder` and render its siblings' with them (call once
    in each process, after any fork)."""
    global _shared
    _shared = SharedMetrics(folder)
    _shared.start()


def stop_sharing() -> None:
    """Publish this process's last snapshot and stop (processes that end with `os._exit`, as
    multiprocessing's do, run no `atexit` handler)."""
    global _shared
    if _shared is not None:
        _shared.close()
        _shared = None


def render() -> str:
    """The Prometheus text of this process, with its siblings' when it shares a folder."""
    return metrics.REGISTRY.render(_shared.siblings() if _shared is not None else ())
