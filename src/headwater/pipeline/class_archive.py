"""Spark's classes, recorded once per machine: the class-data archive its JVM maps at start.

Every Spark JVM loads, parses and verifies the same ~20,000 classes of Spark, Scala and their
libraries, seconds of every `pipeline run` before and during its first batch. HotSpot can record
the classes a run loaded in an archive (dynamic CDS: `-XX:ArchiveClassesAtExit`) that later JVMs
map from disk instead (`-XX:SharedArchiveFile`). `headwater pipeline prepare` makes one here by
running a few small pipeline passes over the demo lineage in a scratch store; `spark_session`
gives it to the driver's JVM whenever it exists.

An archive holds for the Java build and the class path it was made with, and only them: its file
name carries a digest of both (`java -version`'s text, Spark's home and jar names), so a new Java
or pyspark simply finds none until `prepare` runs again. A JVM given an archive it cannot use
starts without it (`-Xshare:auto`), saying nothing (`-Xlog:cds*=off`).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from headwater.errors import ConfigError

_PREFIX = "spark-classes-"
_SUFFIX = ".jsa"
# beside an archive's option: a JVM that cannot use it starts without it, and says nothing of it
_QUIET = "-Xshare:auto -Xlog:cds*=off"
PREPARE_TIMEOUT = 600.0  # seconds the recording run may take (about a minute on 2 cores)
KEPT = 3  # archives kept in the cache folder (each checkout's venv has its own: ~180 MB each)


class ArchiveError(ConfigError):
    """The archive could not be made; the message says why."""


def cache_dir() -> Path:
    """Where the archive lives: `$XDG_CACHE_HOME/headwater`, else `~/.cache/headwater`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "headwater"


def _spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def archive_path(java_version_text: str) -> Path:
    """The archive of this Java (`java -version`'s output) and of this Spark's class path."""
    home = _spark_home()
    jars = sorted(p.name for p in (home / "jars").glob("*.jar"))
    # the Java's own lines, not those saying it picked up options from the environment
    java = [line for line in java_version_text.splitlines() if "Picked up" not in line]
    digest = hashlib.sha256("\n".join([*java, str(home), *jars]).encode()).hexdigest()
    return cache_dir() / f"{_PREFIX}{digest[:16]}{_SUFFIX}"


def _usable_path(path: Path) -> bool:
    """Spark splits a JVM option string at blanks and reads quotes: a path with either would need
    quoting that is not worth it for a cache."""
    return not any(c.isspace() or c in "\"'\\" for c in str(path))


def prepared(java_version_text: str) -> bool:
    """Whether this machine has the archive of this Java and Spark."""
    return archive_path(java_version_text).is_file()


def driver_options(java_version_text: str) -> str:
    """The driver JVM's options that map this machine's archive; empty when there is none (or no
    cache folder can be named: Spark then starts as before)."""
    try:
        path = archive_path(java_version_text)
        if not _usable_path(path) or not path.is_file():
            return ""
    except (OSError, RuntimeError):  # no home folder, an unreadable cache
        return ""
    return f"-XX:SharedArchiveFile={path} {_QUIET}"


def prepare(java_version_text: str, *, force: bool = False, log: Callable[[str], None] = print) -> Path:
    """Make this machine's archive (unless it exists and not `force`): a child process runs small
    pipeline passes on a Spark whose JVM records its classes as it exits; the file is renamed into
    place only when complete; of the archives there, the KEPT newest stay."""
    path = archive_path(java_version_text)
    if not _usable_path(path):
        raise ArchiveError(f"the cache folder {path.parent} has a blank or a quote in its path")
    if path.is_file() and not force:
        log(f"already prepared: {path}")
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArchiveError(f"cannot create {path.parent}: {exc}") from None
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    started = time.monotonic()
    log("recording the classes of a few pipeline passes (about a minute)…")
    try:
        done = subprocess.run(
            [sys.executable, "-m", "headwater.pipeline.class_recording", str(partial)],
            capture_output=True,
            text=True,
            timeout=PREPARE_TIMEOUT,
        )
        if done.returncode != 0 or not partial.is_file() or partial.stat().st_size == 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
            raise ArchiveError(f"recording Spark's classes failed (exit {done.returncode}): {tail}")
        os.replace(partial, path)
    except subprocess.TimeoutExpired:
        raise ArchiveError(f"recording Spark's classes took over {PREPARE_TIMEOUT:.0f} s") from None
    finally:
        partial.unlink(missing_ok=True)
    _keep_newest(path.parent)
    size = path.stat().st_size / 2**20
    log(f"prepared {path} ({size:.0f} MB) in {time.monotonic() - started:.0f} s")
    return path


def recording_options(partial: Path) -> str:
    """The options of the JVM that records its classes into `partial` as it exits."""
    return f"-XX:ArchiveClassesAtExit={partial} {_QUIET}"


def _keep_newest(folder: Path) -> None:
    """Remove all but the KEPT newest archives (other Java or Spark builds, other checkouts'
    virtual environments), and partial files of recordings that did not finish."""
    for partial in folder.glob(f"{_PREFIX}*{_SUFFIX}.*.part"):
        if time.time() - partial.stat().st_mtime > PREPARE_TIMEOUT:
            partial.unlink(missing_ok=True)
    archives = sorted(folder.glob(f"{_PREFIX}*{_SUFFIX}"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in archives[KEPT:]:
        old.unlink(missing_ok=True)


def remove_all() -> int:
    """Remove every archive in the cache folder; how many there were."""
    found = list(cache_dir().glob(f"{_PREFIX}*{_SUFFIX}*"))
    for path in found:
        path.unlink(missing_ok=True)
    return len(found)
