"""A throwaway Spark standalone cluster (a master and workers on 127.0.0.1) for tests.

It runs from the pyspark package itself (its bin/spark-class and jars), so it needs nothing but the
virtualenv and a Java 17+ runtime (scripts/setup.sh installs one).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

import pyspark

from headwater.pipeline.session import QUICK_JVM_OPTIONS

SPARK_HOME = Path(pyspark.__file__).resolve().parent
STARTUP_TIMEOUT = 60.0
STOP_GRACE = 10.0
LOG_TAIL_LINES = 40

# Short-lived test JVMs start quick (the pipeline's own choice for small one-off passes). Drivers
# may pass them on to their executors (spark.executor.extraJavaOptions) and their own JVM.

# The master's REST submission server binds the fixed port 6066 by default (Spark 4): two clusters at
# once, e.g. under pytest-xdist, would clash on it. Without port retries a clash on one of our ports
# makes the daemon exit at once, which is reported with its log, instead of moving to the next port.
_DAEMON_OPTS = f"{QUICK_JVM_OPTIONS} -Dspark.port.maxRetries=0"
_MASTER_OPTS = "-Dspark.master.rest.enabled=false"

_MASTER = "org.apache.spark.deploy.master.Master"
_WORKER = "org.apache.spark.deploy.worker.Worker"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(cannot read {path}: {exc})"
    return "\n".join(text.splitlines()[-lines:]) or "(empty)"


class _Daemon:
    """One spark-class process, in a process group of its own (a worker's executors join it)."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], logdir: Path) -> None:
        self.name = name
        self.log = logdir / f"{name}.log"
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [str(SPARK_HOME / "bin" / "spark-class"), *args],
                env=env,
                cwd=logdir,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def signal_group(self, signum: int) -> bool:
        """Send signum to the whole group; False when the group has no process left."""
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:
            return False
        return True

    def report(self) -> str:
        state = "running" if self.process.poll() is None else f"exited with {self.process.returncode}"
        return f"--- {self.name} ({state}), last lines of {self.log}:\n{_tail(self.log)}"


def _stop(daemons: list[_Daemon]) -> None:
    """SIGTERM to every group, then SIGKILL to those still there after STOP_GRACE seconds."""
    for daemon in daemons:
        daemon.signal_group(signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE
    for daemon in daemons:
        with suppress(subprocess.TimeoutExpired):
            daemon.process.wait(timeout=max(0.0, deadline - time.monotonic()))
    while time.monotonic() < deadline and any(daemon.signal_group(0) for daemon in daemons):
        time.sleep(0.1)  # executors a worker started may outlive it by a moment
    for daemon in daemons:
        daemon.signal_group(signal.SIGKILL)
        daemon.process.wait()


def _master_state(webui: str) -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(f"{webui}/json/", timeout=2) as response:
            state: dict[str, object] = json.load(response)
            return state
    except (OSError, ValueError):  # not listening yet, or a partial answer
        return None


def _alive_workers(state: dict[str, object]) -> int:
    alive = state.get("aliveworkers")
    if isinstance(alive, int):
        return alive
    workers = state.get("workers")
    if isinstance(workers, list):
        return sum(1 for worker in workers if isinstance(worker, dict) and worker.get("state") == "ALIVE")
    return 0


def _wait_for_master(
    daemons: list[_Daemon], webui: str, deadline: float, workers: int, timeout: float
) -> None:
    """Until the master's web UI answers and counts `workers` alive workers (0: the master alone)."""
    alive = 0
    while True:
        exited = [daemon.name for daemon in daemons if daemon.process.poll() is not None]
        if exited or time.monotonic() > deadline:
            problem = f"{', '.join(exited)} exited" if exited else f"not up after {timeout:.0f} s"
            progress = f"{alive} of {workers} workers registered" if workers else f"no answer from {webui}"
            logs = "\n".join(daemon.report() for daemon in daemons)
            raise RuntimeError(f"Spark standalone cluster failed to start ({problem}; {progress}):\n{logs}")
        state = _master_state(webui)
        if state is not None:
            alive = _alive_workers(state)
            if alive >= workers:
                return
        time.sleep(0.2)


@contextmanager
def standalone_cluster(
    workers: int = 2, cores: int = 1, memory: str = "1g", *, timeout: float = STARTUP_TIMEOUT
) -> Iterator[str]:
    """Start a master and `workers` workers of `cores` cores and `memory` each; yield the master URL.

    Every daemon runs in a process group of its own, which is terminated on exit together with the
    executors the workers started. Startup that takes longer than `timeout` seconds, or a daemon
    that exits, raises RuntimeError with the end of every daemon's log.
    """
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="headwater-spark-")))
        logdir, confdir = tmp / "logs", tmp / "conf"
        logdir.mkdir()
        confdir.mkdir()  # empty: no spark-defaults.conf or spark-env.sh from elsewhere
        env = {
            **os.environ,
            "SPARK_HOME": str(SPARK_HOME),
            "SPARK_CONF_DIR": str(confdir),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_DAEMON_JAVA_OPTS": _DAEMON_OPTS,
            "SPARK_MASTER_OPTS": _MASTER_OPTS,
        }
        port, webui_port = _free_port(), _free_port()
        master_url = f"spark://127.0.0.1:{port}"
        webui = f"http://127.0.0.1:{webui_port}"
        deadline = time.monotonic() + timeout

        daemons: list[_Daemon] = []
        stack.callback(_stop, daemons)  # runs before the temporary directory is removed
        master_args = ["--host", "127.0.0.1", "--port", str(port), "--webui-port", str(webui_port)]
        daemons.append(_Daemon("master", [_MASTER, *master_args], env, logdir))
        # A worker that finds no master retries only after 5 to 15 s: start them once it answers.
        _wait_for_master(daemons, webui, deadline, 0, timeout)
        for index in range(workers):
            workdir = tmp / f"worker-{index}"
            workdir.mkdir()
            worker_args = [
                master_url,
                *("--host", "127.0.0.1", "--cores", str(cores), "--memory", memory),
                *("--webui-port", str(_free_port()), "--work-dir", str(workdir)),
            ]
            daemons.append(_Daemon(f"worker-{index}", [_WORKER, *worker_args], env, logdir))
        _wait_for_master(daemons, webui, deadline, workers, timeout)
        yield master_url
