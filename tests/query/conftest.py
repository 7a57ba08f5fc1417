"""Lineage query tests share one model per backend: the hand-written lineage of
lineage_graph.py, published by the real pipeline on the session's SparkSession."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import psycopg
import pytest
from pyspark.sql import SparkSession

from headwater.events.validate import validate_event
from headwater.pipeline.runner import Pipeline
from headwater.store import EventStore, open_store
from tests.pipeline.conftest import spark
from tests.query.lineage_graph import DAY2, events

__all__ = ["model", "published", "spark"]


@contextmanager
def published(
    request: pytest.FixtureRequest,
    spark: SparkSession,
    tmp_path_factory: pytest.TempPathFactory,
    docs: list[dict[str, Any]],
) -> Iterator[EventStore]:
    """A store of its own (SQLite file or PostgreSQL database, as `request.param` says) holding
    `docs` and the model one pipeline pass publishes from them; dropped afterwards."""
    dropped: str | None = None
    admin = ""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path_factory.mktemp('model') / 'headwater.db'}"
    else:
        admin = request.getfixturevalue("postgres_admin_url")
        dropped = f"headwater_model_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{dropped}"')
        url = admin.rsplit("/", 1)[0] + "/" + dropped
    store = open_store(url)
    try:
        store.append([validate_event(doc, orjson.dumps(doc)) for doc in docs], f"{DAY2}T23:00:00.0000000Z")
        Pipeline(spark, store, dogfood=False, partitions=2).run_once()
        yield store
    finally:
        store.close()
        if dropped is not None:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{dropped}" WITH (FORCE)')


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def model(
    request: pytest.FixtureRequest, spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EventStore]:
    """The lineage of lineage_graph.py, published by one pipeline pass."""
    with published(request, spark, tmp_path_factory, events()) as store:
        yield store
