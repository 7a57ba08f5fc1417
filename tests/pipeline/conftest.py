"""One SparkSession for the whole test session (per xdist worker), in local mode.

Its JVM keeps the JIT's full (C2) compiler: the session runs hundreds of passes, so the quick
JVM of one-off passes (`session.QUICK_JVM_OPTIONS`, C1 only) lost more on every warm pass than it
saved at start-up. The same 4 late-facet tests, one after the other: 183 s with the quick JVM,
117 s without; the whole suite's summed test time, 2 workers: 3,342 s -> 2,424 s (the web UI's
tests left out of both).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from headwater.pipeline.session import spark_session


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = spark_session("local[2]", app_name="headwater-tests")
    yield session
    session.stop()
