"""`headwater delete dataset|job|namespace ID` on both backends: the same soft deletion as the
Marquez routes (tests/api/test_delete.py), read back through the API."""

from __future__ import annotations

from fastapi.testclient import TestClient
from pyspark.sql import SparkSession

from headwater.pipeline.runner import Pipeline
from headwater.store.base import EventStore
from tests.api.test_delete import get, lineage_events, post
from tests.pipeline.conftest import spark
from tests.test_cli import cli

__all__ = ["spark"]


def test_delete_from_the_command_line(
    client: TestClient, store: EventStore, spark: SparkSession, database_url: str
) -> None:
    post(client, *lineage_events())
    Pipeline(spark, store, dogfood=False, partitions=2).run_once()

    done = cli("delete", "dataset", "dataset:lake:clean", "--database-url", database_url)
    assert done.exit_code == 0, done.output
    assert "deleted dataset dataset:lake:clean" in done.stdout
    get(client, "/namespaces/lake/datasets/clean", 404)
    hidden = cli("lineage", "dataset:lake:clean", "--database-url", database_url)
    assert hidden.exit_code == 1 and "not found" in hidden.output
    again = cli("delete", "dataset", "lake:clean", "--database-url", database_url)
    assert again.exit_code == 1 and "dataset 'dataset:lake:clean' not found" in again.output

    assert cli("delete", "job", "etl:load", "--database-url", database_url).exit_code == 0
    get(client, "/namespaces/etl/jobs/load", 404)
    assert [j["name"] for j in get(client, "/jobs")["jobs"]] == ["summarise"]
    missing = cli("delete", "job", "job:etl:nope", "--database-url", database_url)
    assert missing.exit_code == 1 and "job 'job:etl:nope' not found" in missing.output

    assert cli("delete", "namespace", "lake", "--database-url", database_url).exit_code == 0
    get(client, "/namespaces/lake", 404)
    assert get(client, "/namespaces/lake/datasets/raw", 404)["message"] == "namespace 'lake' not found"
    gone = cli("delete", "namespace", "lake", "--database-url", database_url)
    assert gone.exit_code == 1 and "namespace 'lake' not found" in gone.output
