"""Run every `headwater` command in an install made of the runtime dependencies alone.

Called by scripts/check-install with the Python of that install: it imports nothing but the
standard library and Headwater itself, runs `--help` of every command found in the command tree,
then each command against a fresh store in a temporary folder (the server and the pipeline
included), and fails when a command fails, when a command of the tree has no run below (add
one), or when a development-only package is importable (the install would prove nothing).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

from headwater.cli import main

HEADWATER = str(Path(sys.executable).parent / "headwater")
DEV_ONLY = ("pytest", "httpx", "hypothesis", "jsonschema")


def fail(message: str) -> None:
    print(f"check-install: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def command_paths(group: click.Group = main, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name in sorted(group.commands):
        command = group.commands[name]
        if isinstance(command, click.Group):
            yield from command_paths(command, (*path, name))
        else:
            yield (*path, name)


def command_of(args: tuple[str, ...]) -> tuple[str, ...]:
    """The command path the arguments name: ("db", "backup") for `db backup copy.db`."""
    command: click.Command = main
    path: tuple[str, ...] = ()
    for arg in args:
        if not isinstance(command, click.Group) or arg not in command.commands:
            break
        command = command.commands[arg]
        path = (*path, arg)
    return path


def runnable(paths: list[tuple[str, ...]]) -> set[tuple[str, ...]]:
    """The commands that do something when run: every leaf, and groups that run without a
    subcommand (`headwater elements`)."""
    found = set()
    for path in paths:
        command = main if not path else _command(path)
        if path and (not isinstance(command, click.Group) or command.invoke_without_command):
            found.add(path)
    return found


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
    return command


RAN: set[tuple[str, ...]] = set()


def run(*args: str, ok: tuple[int, ...] = (0,), timeout: float = 600) -> str:
    """`headwater ARGS` through the installed script; its output, or a failure naming it."""
    RAN.add(command_of(args))
    started = time.monotonic()
    done = subprocess.run([HEADWATER, *args], capture_output=True, text=True, timeout=timeout)
    print(f"  headwater {' '.join(args)}: exit {done.returncode} ({time.monotonic() - started:.1f} s)")
    if done.returncode not in ok:
        fail(f"headwater {' '.join(args)} exited {done.returncode}\n{done.stdout}\n{done.stderr}")
    if "Traceback" in done.stderr:
        fail(f"headwater {' '.join(args)} printed a traceback\n{done.stderr}")
    return done.stdout + done.stderr


def start(*args: str) -> subprocess.Popen[str]:
    """`headwater ARGS` in the background, output kept for stop()."""
    RAN.add(command_of(args))
    return subprocess.Popen([HEADWATER, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def http(url: str, body: bytes | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_for(url: str, process: subprocess.Popen[str], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            fail(f"{process.args} exited {process.returncode} before {url} answered")
        try:
            if http(url)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    fail(f"{url} did not answer within {seconds:.0f} s")


def stop(process: subprocess.Popen[str], sig: int = signal.SIGINT) -> str:
    process.send_signal(sig)
    try:
        output, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        fail(f"{process.args} did not stop on signal {sig}\n{output}")
    # Interrupted in the middle of a Spark job, py4j logs tracebacks of the calls it cut short:
    # what this check is after is a missing module, or a failing exit.
    if "ModuleNotFoundError" in output or "ImportError" in output or process.returncode not in (0, -sig):
        fail(f"{process.args} stopped with {process.returncode}\n{output[-5000:]}")
    return output


def check_no_dev_packages() -> None:
    present = [name for name in DEV_ONLY if importlib.util.find_spec(name) is not None]
    if present:
        fail(f"development packages are installed ({', '.join(present)}): not a runtime-only install")


def check_help(paths: list[tuple[str, ...]]) -> None:
    print(f"--help of {len(paths)} commands")
    runner = CliRunner()
    for path in paths:
        result = runner.invoke(main, [*path, "--help"], prog_name="headwater")
        if result.exit_code != 0 or not result.output.startswith("Usage: headwater"):
            fail(f"headwater {' '.join(path)} --help: exit {result.exit_code}\n{result.output}")
    run("--help")
    run("--version")


def check_commands(work: Path) -> None:
    """Each command against a fresh store in `work` (the working directory: the default store)."""
    events = work / "events.ndjson"
    generic = work / "generic.ndjson"
    from headwater.demo.lineage import demo_events

    events.write_text("".join(json.dumps(event) + "\n" for event in demo_events()))
    generic.write_text(
        json.dumps(
            {
                "type": "put model",
                "description": "a model put by check-install",
                "elements": [{"type": "model", "description": "check-model", "tags": {"version": "1"}}],
                "tags": {"by": "check-install"},
            }
        )
        + "\n"
    )
    print("commands against a fresh store")
    run("settings")
    if "applied migrations" not in run("db", "upgrade"):
        fail("db upgrade of a fresh store applied nothing")
    run("ingest", str(events), "--quiet")
    run("ingest", str(generic), "--generic", "--quiet")
    run("events")
    run("events", "--generic")
    run("elements")
    run("elements", "show", "1")
    run("errors")
    if "no metrics" not in run("status", "--url", f"http://127.0.0.1:{free_port()}"):
        fail("status without a server did not say so")

    port = free_port()
    server = start("serve", "--port", str(port), "--log-level", "warning")
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(f"{base}/api/atlas/v2/openlineage/health", server, 60)
        status, _ = http(f"{base}/api/v1/lineage", events.read_text().splitlines()[0].encode())
        if status not in (200, 201):
            fail(f"POST /api/v1/lineage answered {status}")
        for page in ("/docs", "/", "/api/v1/namespaces", "/metrics"):
            if http(base + page)[0] != 200:
                fail(f"GET {page} did not answer 200")
        if "server " + base not in run("status", "--url", base):
            fail("status did not read the server's metrics")
    finally:
        stop(server, signal.SIGTERM)
    print("  headwater serve: answered, stopped")

    consumer = start(
        "consume", "--bootstrap-servers", "127.0.0.1:1", "--topic", "check", "--log-level", "error"
    )
    time.sleep(5)
    if "message(s) consumed" not in stop(consumer, signal.SIGTERM) or consumer.returncode != 0:
        fail(f"consume did not stop cleanly (exit {consumer.returncode})")
    print("  headwater consume: started without a broker, stopped on SIGTERM")

    # Spark's classes recorded in this folder (not the user's cache); `up` and the pipeline
    # commands below then start from them
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")
    if "prepared" not in run("pipeline", "prepare"):
        fail("pipeline prepare recorded no classes")
    if run("pipeline", "prepare", "--quiet").strip():
        fail("pipeline prepare --quiet said something with the classes recorded already")

    port = free_port()
    up = start("up", "--port", str(port), "--interval", "1", "--no-dogfood")
    published = False
    try:
        wait_for(f"http://127.0.0.1:{port}/api/atlas/v2/openlineage/health", up, 120)
        deadline = time.monotonic() + 600
        while not published and time.monotonic() < deadline and up.poll() is None:
            published = b'"bigquery"' in http(f"http://127.0.0.1:{port}/api/v1/namespaces")[1]
            time.sleep(0 if published else 2)
    finally:
        output = stop(up)
    if not published:
        fail(f"headwater up: the pipeline published nothing within 10 minutes\n{output[-3000:]}")
    print("  headwater up: server and pipeline ran, stopped")

    run("pipeline", "run", "--no-dogfood", "--quiet")
    run("pipeline", "rebuild", "--no-dogfood")
    graph = run("lineage", "dataset:bigquery:acme-analytics.marts.fct_orders", "--format", "json")
    if "acme-analytics" not in graph:
        fail("lineage did not answer the demo's lineage")
    jobs = re.findall(r'"(job:[^"]+)"', graph)
    if not jobs:
        fail("the demo's lineage holds no job")
    run("delete", "job", jobs[0])
    run("delete", "dataset", "dataset:bigquery:acme-analytics.marts.fct_orders")
    run("lineage", "dataset:bigquery:acme-analytics.marts.fct_orders", ok=(1,))  # hidden now
    run("delete", "namespace", "bigquery")
    backup = work / "backup.db"
    run("db", "backup", str(backup))
    if "event(s)" not in run("events", "--database-url", f"sqlite:///{backup}", "--limit", "1"):
        fail("the backup does not open")
    if "would delete" not in run("retention", "--older-than", "1d", "--dry-run"):
        fail("retention --dry-run counted nothing")
    run("retention", "--older-than", "36500d")  # nothing that old: the model stays, no Spark


def main_check() -> None:
    check_no_dev_packages()
    paths = list(command_paths())
    check_help(paths)
    with tempfile.TemporaryDirectory(prefix="headwater-check-install-") as folder:
        os.chdir(folder)
        check_commands(Path(folder))
    missing = sorted(" ".join(path) for path in runnable(paths) - RAN)
    if missing:
        fail(
            f"nothing ran `headwater {'`, `headwater '.join(missing)}`: add a run to scripts/check_install.py"
        )
    print(f"check-install: every command ran in a runtime-only install ({sys.prefix})")


if __name__ == "__main__":
    for name in list(os.environ):
        if name.startswith("HEADWATER_") and name not in (
            "HEADWATER_SPARK_MASTER",
            "HEADWATER_SPARK_DRIVER_MEMORY",
        ):
            del os.environ[name]
    os.environ.setdefault("HEADWATER_SPARK_MASTER", "local[2]")
    os.environ.setdefault("HEADWATER_SPARK_DRIVER_MEMORY", "1g")
    main_check()
