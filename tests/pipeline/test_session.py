"""Starting Spark: what the user is told when it cannot start."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import orjson
import pytest
from click.testing import CliRunner
from py4j.clientserver import ClientServerConnection
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from headwater.cli import main
from headwater.events.validate import validate_event
from headwater.pipeline.session import (
    QUICK_JVM_EVENTS,
    QUICK_JVM_OPTIONS,
    THROUGHPUT_COLLECTOR,
    SparkUnavailable,
    check_java,
    driver_java_options,
    java_version,
    one_off_jvm_options,
)
from headwater.store import open_store
from tests.conftest import REPO


def test_the_machine_has_a_java_17_or_newer() -> None:
    version = java_version()
    assert version is not None and version >= 17


def test_a_one_off_pass_over_few_events_starts_a_quick_jvm() -> None:
    assert one_off_jvm_options(0) == one_off_jvm_options(QUICK_JVM_EVENTS - 1) == QUICK_JVM_OPTIONS
    assert "TieredStopAtLevel=1" in QUICK_JVM_OPTIONS
    assert one_off_jvm_options(QUICK_JVM_EVENTS) == "", "a large pass wants the C2 compiler"


def test_the_driver_collects_garbage_for_throughput_unless_told_which_collector() -> None:
    assert THROUGHPUT_COLLECTOR in driver_java_options("")
    assert THROUGHPUT_COLLECTOR in driver_java_options("-Xss4m")
    quick = driver_java_options(QUICK_JVM_OPTIONS)
    assert "-XX:+UseSerialGC" in quick and THROUGHPUT_COLLECTOR not in quick, "the caller's collector"
    assert THROUGHPUT_COLLECTOR not in driver_java_options("-XX:+UseG1GC")


_SESSION_SCRIPT = """
from headwater.pipeline.session import spark_session
spark = spark_session("local[1]", driver_memory="512m")
jvm = spark.sparkContext._jvm
beans = jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
print(sorted(bean.getName() for bean in beans))
status = open(f"/proc/{spark.sparkContext._gateway.proc.pid}/status").read()
print(status.split("SigIgn:")[1].split()[0])
tasks = jvm.org.apache.logging.log4j.LogManager.getLogger("org.apache.spark.scheduler.TaskSetManager")
tasks.warn("Stage 7 contains a task of very large size (2048 KiB). The maximum recommended task size is ...")
tasks.warn("Lost task 0.0 in stage 7.0 (TID 9): a test's warning")
stages = jvm.org.apache.logging.log4j.LogManager.getLogger("org.apache.spark.scheduler.DAGScheduler")
stages.warn("Broadcasting large task binary with size 7.0 MiB")
spark.stop()
"""


@pytest.fixture(scope="module")
def started() -> subprocess.CompletedProcess[str]:
    """A process that started a session with the defaults (`_SESSION_SCRIPT`); the session
    fixture's Spark stays up for the other tests."""
    done = subprocess.run(
        [sys.executable, "-c", _SESSION_SCRIPT], capture_output=True, text=True, timeout=300, cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_a_session_started_with_the_defaults_runs_the_parallel_collector(
    started: subprocess.CompletedProcess[str],
) -> None:
    assert started.stdout.strip().splitlines()[-2] == "['PS MarkSweep', 'PS Scavenge']"


def test_sparks_jvm_ignores_sigterm_so_that_headwater_stops_it(
    started: subprocess.CompletedProcess[str],
) -> None:
    ignored = int(started.stdout.strip().splitlines()[-1], 16)
    assert ignored & (1 << (signal.SIGTERM - 1)), "a stop sent to the process group would end it"
    assert ignored & (1 << (signal.SIGINT - 1)), "PySpark's own choice, kept"


def test_spark_logs_warnings_shaped_like_headwaters_without_those_that_ask_nothing(
    started: subprocess.CompletedProcess[str],
) -> None:
    logged = started.stderr
    assert "WARN    spark.TaskSetManager: Lost task 0.0 in stage 7.0 (TID 9): a test's warning" in logged
    assert "very large size" not in logged, "a small batch read by the driver travels in its tasks"
    assert "large task binary" not in logged, "and so do its facet values, as one literal"
    for said_at_every_start in ("log4j profile", "Setting default log level", "native-hadoop", "loopback"):
        assert said_at_every_start not in logged, logged[-3000:]


def test_a_missing_java_is_named_with_the_way_to_install_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java-here"))
    with pytest.raises(SparkUnavailable, match=r"no Java runtime found.*openjdk-17-jre-headless"):
        check_java()
    url = f"sqlite:///{tmp_path / 'h.db'}"
    store = open_store(url)  # an event to publish: with nothing new, `pipeline run` needs no Spark
    doc = {
        "eventType": "START",
        "eventTime": "2024-05-01T10:00:00Z",
        "run": {"runId": "0190a0a0-0000-7000-8000-000000000001"},
        "job": {"namespace": "n", "name": "j"},
        "producer": "https://example.com/p",
    }
    store.append([validate_event(doc, orjson.dumps(doc))], "2024-05-01T10:00:01Z")
    store.close()
    result = CliRunner().invoke(main, ["pipeline", "run", "--database-url", url, "--quiet"])
    assert result.exit_code == 1
    assert "Java 17" in result.output


def test_an_old_java_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    java = tmp_path / "jdk8" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\necho 'openjdk version \"1.8.0_392\"' >&2\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk8"))
    assert java_version() == 8
    with pytest.raises(SparkUnavailable, match="Java 8 found"):
        check_java()


_T = TypeVar("_T")


def _lookups_while(build: Callable[[], _T], monkeypatch: pytest.MonkeyPatch) -> tuple[_T, list[str]]:
    """What `build` returns, and the lookups (py4j reflection commands) it sent to the JVM."""
    sent: list[str] = []
    send = ClientServerConnection.send_command

    def counted(self: ClientServerConnection, command: str) -> str:
        sent.append(command)
        return send(self, command)  # type: ignore[no-any-return]

    monkeypatch.setattr(ClientServerConnection, "send_command", counted)
    try:
        built = build()
    finally:
        monkeypatch.undo()
    assert sent, "it reached the JVM"
    return built, [command for command in sent if command.startswith("r\n")]


def test_column_functions_reach_the_jvm_in_one_round_trip(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PySpark looks up the class and the method of a column function before calling it; once
    # a method was found, only the call goes to the JVM
    def named() -> Column:
        return F.when(F.col("id") == 0, F.lit("zero")).otherwise(F.concat(F.lit("n"), F.col("id")))

    named()  # each method looked up once
    column, lookups = _lookups_while(named, monkeypatch)
    assert not lookups  # no reflection: calls only
    assert [r[0] for r in spark.range(2).select(column).collect()] == ["zero", "n1"]


def test_columns_named_by_strings_and_lambdas_reach_the_jvm_without_lookups(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a column named by a string goes through `functions.col`, a lambda through PythonSQLUtils
    def named() -> list[Column]:
        return [F.coalesce("id", F.lit(5)), F.filter(F.array("id", "id"), lambda x: x > 0)]

    named()
    columns, lookups = _lookups_while(named, monkeypatch)
    assert not lookups
    assert [tuple(r) for r in spark.range(2).select(*columns).collect()] == [(0, []), (1, [1, 1])]


_STOP_SCRIPT = """
import socket, sys, threading, time
from headwater.pipeline.session import spark_session, stop_spark
spark = spark_session("local[1]", driver_memory="512m")
context = spark.sparkContext
port = context._accumulatorServer.server_address[1]
assert spark.range(3).count() == 3
stop_spark(spark)
assert context._jsc is None, "the JVM's SparkContext is stopped"
threads = [t for t in threading.enumerate() if t.name == "accumulator-server-stop"]
deadline = time.monotonic() + 30
while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
    time.sleep(0.05)
try:
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    print("listening")
except OSError:
    print("closed" if threads and not any(t.is_alive() for t in threads) else "unstopped")
"""


def test_spark_stops_without_waiting_for_its_accumulator_server_which_stops_after() -> None:
    # In a process of its own: the session fixture's Spark stays up for the other tests.
    done = subprocess.run(
        [sys.executable, "-c", _STOP_SCRIPT], capture_output=True, text=True, timeout=300, cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "closed"
