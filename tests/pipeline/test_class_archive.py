"""Spark's classes recorded once per machine (`headwater pipeline prepare`) and mapped by every
later driver JVM; an archive named after its Java and Spark, so that another build finds none."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from headwater.cli import main
from headwater.pipeline.class_archive import KEPT, ArchiveError, archive_path, driver_options, prepare
from headwater.pipeline.session import java_version_text

# A driver whose JVM must map its class-data archives: with -Xshare:on, a JVM that cannot map one
# it was given exits at once ("Unable to use shared archive") instead of starting without it.
_STRICT_DRIVER = (
    "from headwater.pipeline.session import spark_session\n"
    "spark = spark_session('local[1]', java_options='-Xshare:on')\n"
    "print('rows', spark.range(3).count())\n"
)


def _driver(cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    return subprocess.run(
        [sys.executable, "-c", _STRICT_DRIVER], env=env, capture_output=True, text=True, timeout=300
    )


def test_an_archive_is_named_after_its_java_and_spark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    seventeen = archive_path('openjdk version "17.0.15"')
    twenty_one = archive_path('openjdk version "21.0.5"')
    assert seventeen != twenty_one
    picked_up = 'NOTE: Picked up JDK_JAVA_OPTIONS: -Xmx1g\nopenjdk version "17.0.15"'
    assert archive_path(picked_up) == seventeen, "options from the environment are not the Java's"
    assert seventeen.parent == tmp_path / "headwater"
    assert driver_options('openjdk version "17.0.15"') == "", "none recorded: the JVM starts as before"
    seventeen.parent.mkdir()
    seventeen.write_bytes(b"recorded")
    assert driver_options('openjdk version "17.0.15"') == (
        f"-XX:SharedArchiveFile={seventeen} -Xshare:auto -Xlog:cds*=off"
    )
    assert driver_options('openjdk version "21.0.5"') == ""

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "with blank"))  # Spark splits options at blanks
    spaced = archive_path('openjdk version "17.0.15"')
    spaced.parent.mkdir(parents=True)
    spaced.write_bytes(b"recorded")
    assert driver_options('openjdk version "17.0.15"') == ""
    with pytest.raises(ArchiveError, match="blank or a quote"):
        prepare('openjdk version "17.0.15"', log=lambda _line: None)


def test_prepare_records_the_classes_every_later_driver_maps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    folder = cache / "headwater"
    folder.mkdir(parents=True)
    others = [folder / f"spark-classes-{n:016x}.jsa" for n in range(KEPT)]  # other Javas', other venvs'
    for age, other in enumerate(others, start=1):
        other.write_bytes(b"another build's classes")
        os.utime(other, (time.time() - age * 3600,) * 2)
    runner = CliRunner()

    recorded = runner.invoke(main, ["pipeline", "prepare"])
    assert recorded.exit_code == 0, recorded.output
    archive = archive_path(java_version_text() or "")
    assert f"prepared {archive}" in recorded.output
    kept = sorted(folder.iterdir())
    assert kept == sorted([archive, *others[: KEPT - 1]]), "the oldest went; no partial file is left"
    assert archive.stat().st_size > 20 * 2**20

    again = runner.invoke(main, ["pipeline", "prepare"])
    assert again.exit_code == 0 and f"already prepared: {archive}" in again.output
    assert runner.invoke(main, ["pipeline", "prepare", "--quiet"]).output == ""

    mapped = _driver(cache)
    assert mapped.returncode == 0, mapped.stderr[-2000:]
    assert "rows 3" in mapped.stdout

    archive.chmod(0o644)
    archive.write_bytes(b"damaged")  # given to the JVM, which must then refuse to start
    refused = _driver(cache)
    assert refused.returncode != 0
    assert "Unable to use shared archive" in refused.stdout + refused.stderr

    removed = runner.invoke(main, ["pipeline", "prepare", "--remove"])
    assert removed.exit_code == 0 and f"removed {KEPT} archive(s)" in removed.output
    assert not archive.exists()
    assert _driver(cache).returncode == 0, "without an archive the driver starts as before"
