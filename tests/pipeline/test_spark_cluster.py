"""A PySpark job with a Python UDF on a two-worker standalone cluster (tests/pipeline/spark_cluster.py).

The driver runs in a child process (this module run with `python -m`): a JVM holds one SparkContext,
and the `spark.*` settings of the first session in a process stay in its JVM as system properties, so
a driver in the pytest process could neither coexist with nor be undone for other tests' sessions.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.pipeline.spark_cluster import QUICK_JVM_OPTIONS, standalone_cluster

REPO = Path(__file__).resolve().parents[2]
WORKERS = 2
ROWS = 1000
DRIVER_TIMEOUT = 120.0


def test_python_udf_runs_on_every_executor_of_a_standalone_cluster() -> None:
    with standalone_cluster(workers=WORKERS, cores=1, memory="1g") as master_url:
        driver = subprocess.Popen(
            [sys.executable, "-m", "tests.pipeline.test_spark_cluster", master_url, str(WORKERS)],
            cwd=REPO,
            env={**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its JVM too, to kill both on a timeout
        )
        try:
            out, err = driver.communicate(timeout=DRIVER_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(driver.pid, signal.SIGKILL)
            out, err = driver.communicate()
        output = f"driver exited with {driver.returncode}\nstdout:\n{out}\nstderr (end):\n{err[-6000:]}"
        assert driver.returncode == 0, output
        result = json.loads(out.strip().splitlines()[-1])

    assert result["master"] == master_url, output
    assert result["registered_executors"] == WORKERS, output
    assert result["rows"] == ROWS, output
    assert result["sum_of_squares"] == sum(n * n for n in range(ROWS)), output
    # An executor runs in <its worker's work dir>/<app id>/<executor id>, and so do the Python
    # workers it starts: as many directories as workers means every executor ran the UDF.
    assert len(result["udf_dirs"]) == WORKERS, output


def _drive(master_url: str, executors: int) -> dict[str, object]:
    """Run the job against master_url (in the child process) and describe what happened."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType

    spark = (
        SparkSession.builder.master(master_url)
        .appName("headwater-test-standalone-cluster")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.executor.memory", "512m")
        .config("spark.cores.max", str(executors))
        # Creating the context waits (up to 30 s) until every executor has registered: all get tasks.
        .config("spark.scheduler.minRegisteredResourcesRatio", "1.0")
        .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "30s")
        .config("spark.driver.extraJavaOptions", QUICK_JVM_OPTIONS)
        .config("spark.executor.extraJavaOptions", QUICK_JVM_OPTIONS)
        .getOrCreate()
    )
    try:
        spark.sparkContext.setLogLevel("WARN")
        jsc = spark.sparkContext._jsc
        assert jsc is not None
        deadline = time.monotonic() + 30
        registered = jsc.sc().getExecutorMemoryStatus().size() - 1  # minus the driver
        while registered < executors and time.monotonic() < deadline:
            time.sleep(0.2)
            registered = jsc.sc().getExecutorMemoryStatus().size() - 1

        @F.udf(returnType=LongType(), useArrow=False)
        def square(n: int) -> int:
            return n * n

        @F.udf(returnType=StringType(), useArrow=False)
        def worker_dir(_: int) -> str:
            return os.getcwd()

        rows = (
            spark.range(0, ROWS, numPartitions=4)
            .select(square("id").alias("square"), worker_dir("id").alias("dir"))
            .collect()
        )
        return {
            "master": spark.sparkContext.master,
            "registered_executors": registered,
            "rows": len(rows),
            "sum_of_squares": sum(row["square"] for row in rows),
            "udf_dirs": sorted({row["dir"] for row in rows}),
        }
    finally:
        spark.stop()


if __name__ == "__main__":
    print(json.dumps(_drive(sys.argv[1], int(sys.argv[2]))))
