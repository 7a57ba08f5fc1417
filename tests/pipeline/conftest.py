"""One SparkSession for the whole test session (per xdist worker), in local mode."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from headwater.pipeline.session import spark_session
from tests.pipeline.spark_cluster import QUICK_JVM_OPTIONS


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = spark_session("local[2]", app_name="headwater-tests", java_options=QUICK_JVM_OPTIONS)
    yield session
    session.stop()
