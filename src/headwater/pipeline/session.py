"""Starting Spark for the pipeline: Java check, SparkSession settings, the JVM options (quick
JVMs for small one-off passes, the class-data archive of `class_archive`).

Spark comes from the `pyspark` package (no downloads at run time). The executors run this
interpreter (`PYSPARK_PYTHON`), so they import Headwater and read the store themselves.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from headwater.errors import ConfigError
from headwater.pipeline import class_archive

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)
# Spark's log lines: warnings and errors, shaped like Headwater's, without those that ask nothing of
# the user (what they are: the file's comments)
LOG_CONFIG = Path(__file__).with_name("spark-log4j2.properties")
_JAVA_HINT = (
    "Spark needs a Java 17 (or newer) runtime. Install one (Debian/Ubuntu: "
    "`apt-get install openjdk-17-jre-headless`; ./scripts/run does it for you) or set JAVA_HOME."
)


class SparkUnavailable(ConfigError):
    """Spark cannot start here; the message says what is missing."""


_version_texts: dict[str, str] = {}


def java_version_text() -> str | None:
    """What `java -version` prints for the Java that Spark will use (asked once per process and
    Java), or None when there is none."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        return None
    if java not in _version_texts:
        try:
            out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return None
        _version_texts[java] = out.stderr + out.stdout
    return _version_texts[java]


def java_version() -> int | None:
    """The major version of the Java that Spark will use, or None when there is none."""
    text = java_version_text()
    match = re.search(r'version "(\d+)(?:\.(\d+))?', text or "")
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def check_java() -> None:
    version = java_version()
    if version is None:
        raise SparkUnavailable(f"no Java runtime found. {_JAVA_HINT}")
    if version < 17:
        raise SparkUnavailable(f"Java {version} found. {_JAVA_HINT}")


# A JVM without the C2 compiler and with the serial collector starts and runs small jobs in about
# half the time on a 2-core machine; long or large runs want the defaults (C2's faster code).
QUICK_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
QUICK_JVM_EVENTS = 20_000  # a one-off pass over fewer waiting events starts a quick JVM
# The collector of the driver's JVM (in local mode, the executors' too) unless the caller names
# one: the parallel collector spends less of the cores on collecting than G1, the default, which
# also works beside the application to keep pauses short, which a batch job does not need. A
# 201,000-event rebuild: executor time 99-106 s -> 85-98 s, 78-87 s -> 70-79 s (bench/README.md).
THROUGHPUT_COLLECTOR = "-XX:+UseParallelGC"
_COLLECTOR = re.compile(r"-XX:\+Use\w+GC\b")


def one_off_jvm_options(events: int) -> str:
    """The JVM options of a one-off pass (`pipeline run`, `rebuild`) over `events` events: a
    quick JVM below QUICK_JVM_EVENTS, the defaults above."""
    return QUICK_JVM_OPTIONS if events < QUICK_JVM_EVENTS else ""


BACKGROUND_NICENESS = 10


def run_in_background() -> None:
    """Lower this process's CPU priority (nice 10) before Spark starts, so that its JVM and
    Python workers inherit it: the continuous pipeline then takes the CPU the server leaves,
    and on a shared machine an event is acknowledged first and published after."""
    try:
        os.nice(BACKGROUND_NICENESS)
    except OSError as exc:  # not allowed here: run at the same priority
        log.warning("could not lower the pipeline's CPU priority: %s", exc)


def spark_session(
    master: str = "local[*]",
    *,
    app_name: str = "headwater-pipeline",
    driver_memory: str = "4g",
    java_options: str = "",
    ui: bool = False,
) -> SparkSession:
    """A SparkSession for the pipeline (the pipeline registers its `headwater` data source when
    it first reads through it). `ui`: Spark's web UI and its REST API on (bench/spark_profile.py
    reads each stage's timings there); off by default: it costs every job some bookkeeping."""
    check_java()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "true" if ui else "false")
        .config("spark.ui.showConsoleProgress", "false")
        # The pipeline sizes shuffles itself per batch (runner.py): adaptive execution re-plans
        # each of the ~30 shuffles of a batch one by one, which costs seconds on small batches.
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
        .config("spark.python.worker.reuse", "true")
        # PySpark's daemon, importing PySpark from the installed package rather than from
        # Spark's zip of it, which every daemon compiled again as it started (worker_daemon.py)
        .config("spark.python.daemon.module", "headwater.pipeline.worker_daemon")
        .config("spark.driver.memory", driver_memory)
        # PySpark reports the Python call site of every column function to the JVM (five py4j
        # calls each) for error messages; the pipeline builds ~900 of them a batch, so that was
        # ~4,500 of a small batch's ~12,000 calls into the JVM
        .config("spark.python.sql.dataFrameDebugging.enabled", "false")
        # A batch's queries generate ~450 classes; Spark keeps 100 by default, so every batch
        # and every pass compiled them all again (and the JIT compiled them again). 100,000
        # events in 4 batches: 1,812 -> 547 compilations, 92.8 -> 80.9 s, CPU 153 -> 134 s.
        .config("spark.sql.codegen.cache.maxEntries", "1000")
        # The frames a batch reads more than once are cached for that batch only: compressing
        # their columns cost more than it saved (a 201,000-event rebuild: 92-101 s -> 85-94 s,
        # bench/README.md); a cache that outgrows memory spills to disk (`frames.KEPT`).
        .config("spark.sql.inMemoryColumnarStorage.compressed", "false")
    )
    if java_options:  # e.g. tests: quick JIT start-up matters more than peak speed
        builder = builder.config("spark.executor.extraJavaOptions", java_options)
    builder = builder.config("spark.driver.extraJavaOptions", driver_java_options(java_options))
    if master.startswith("spark://"):
        builder = builder.config("spark.driver.host", os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"))
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # Spark reports JVM start-up failures as many exception types
        raise SparkUnavailable(f"Spark could not start with master {master!r}: {exc}") from None
    spark.sparkContext.setLogLevel("WARN")
    outlive_stop_signals(spark)
    look_up_functions_once(spark)
    return spark


def outlive_stop_signals(spark: SparkSession) -> None:
    """Have the driver's JVM ignore SIGTERM, as PySpark has it ignore SIGINT, so that Headwater
    stops Spark itself. A stop sent to a whole process group (systemd's `stop`, `kill -- -PGID`,
    `timeout`) reaches the JVM too, which ended at once, under the pipeline: the pipeline's own
    stop of Spark then failed with py4j tracebacks and exit status 1. The JVM still ends with the
    process that started it (it exits when its standard input closes), and on SIGKILL."""
    jvm = spark.sparkContext._jvm
    if jvm is None:
        return
    from py4j.protocol import Py4JError  # type: ignore[import-untyped]

    try:
        jvm.sun.misc.Signal.handle(jvm.sun.misc.Signal("TERM"), jvm.sun.misc.SignalHandler.SIG_IGN)
    except Py4JError as exc:  # a JVM started with -Xrs, or without sun.misc: left as it was
        log.debug("Spark's JVM keeps its SIGTERM handler: %s", exc)


def driver_java_options(java_options: str) -> str:
    """The options of the driver's JVM: the classes `headwater pipeline prepare` recorded, mapped
    when they are there; THROUGHPUT_COLLECTOR unless `java_options` names a collector; Spark's
    logging as LOG_CONFIG sets it; then `java_options` (the caller's win where they say
    otherwise: a `-Dlog4j2.configurationFile` of theirs, for one)."""
    archived = (
        ""
        if "ArchiveClassesAtExit" in java_options
        else class_archive.driver_options(java_version_text() or "")
    )
    collector = "" if _COLLECTOR.search(java_options) else THROUGHPUT_COLLECTOR
    logging_config = f"-Dlog4j2.configurationFile={LOG_CONFIG}"
    return " ".join(option for option in (archived, collector, logging_config, java_options) if option)


def stop_spark(spark: SparkSession) -> None:
    """Stop Spark as `spark.stop()` does, without waiting for PySpark's accumulator server to wind
    down: its request handler looks for the stop once a second and its loop every half second,
    so `stop()` waited 0.5-1.5 s for it (0.76 s of a one-off `pipeline run` of 9.5 s, py-spy).
    The JVM's SparkContext stops first, as in `stop()`; the server, on a daemon thread, is then
    shut down in the background, which a process about to exit does not wait for."""
    import threading

    context = spark.sparkContext
    server = getattr(context, "_accumulatorServer", None)
    if server is not None:
        context._accumulatorServer = None  # type: ignore[assignment]
    spark.stop()
    if server is not None:
        threading.Thread(target=server.shutdown, name="accumulator-server-stop", daemon=True).start()


# PySpark finds the JVM method behind each column function (`F.col`, `F.when`, …) anew at every
# call, in two round trips to the JVM (the class, then the method) before the call itself, and
# the same for the helper that turns a list of columns into a Scala one: 2,600 of the ~7,900
# round trips with which the pipeline built a batch of 1,000 events. A column named by a string
# (`select("name")`, `F.max("seq")`) reaches `col` through the short name `functions`, and the
# lambdas of higher-order functions (`F.filter`, `F.map_filter`) go through `PythonSQLUtils`:
# another 620 of a small pass's 5,200 round trips.
_LOOKED_UP_ONCE = ("org.apache.spark.sql.functions", "functions", "PythonUtils", "PythonSQLUtils")


class _StaticMethods:
    """A Java class as py4j shows it, whose static methods are looked up once each: a method
    found is kept as an attribute (so later lookups do not reach `__getattr__`); anything else
    (a field, whose value may change) is asked for every time."""

    def __init__(self, java_class: Any) -> None:
        self._java_class = java_class

    def __getattr__(self, name: str) -> Any:
        from py4j.java_gateway import JavaMember  # type: ignore[import-untyped]

        member = getattr(self._java_class, name)
        if isinstance(member, JavaMember):
            setattr(self, name, member)
        return member


def look_up_functions_once(spark: SparkSession) -> None:
    """Let PySpark's column functions find their JVM methods once per process, not at every call
    (`_StaticMethods`, put where PySpark looks each class up: an attribute of the gateway's JVM
    view named as PySpark names the class, which Python finds before asking the JVM)."""
    jvm = spark.sparkContext._jvm
    if jvm is None:
        return
    for name in _LOOKED_UP_ONCE:
        if not isinstance(vars(jvm).get(name), _StaticMethods):
            vars(jvm)[name] = _StaticMethods(getattr(jvm, name))
