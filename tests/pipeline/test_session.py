"""Starting Spark: what the user is told when it cannot start."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from headwater.cli import main
from headwater.events.validate import validate_event
from headwater.pipeline.session import SparkUnavailable, check_java, java_version
from headwater.store import open_store


def test_the_machine_has_a_java_17_or_newer() -> None:
    version = java_version()
    assert version is not None and version >= 17


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
