"""Fixtures that start real things: SQLite files, a PostgreSQL database, a live Headwater server.

PostgreSQL comes from HEADWATER_TEST_POSTGRES_URL when set, else the server at 127.0.0.1:5432
(user postgres), else a throwaway cluster started from the installed PostgreSQL binaries; tests
that need it are skipped, with the reason shown, only when none of these works.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from fastapi.testclient import TestClient

from headwater.api.app import create_app
from headwater.config import Settings
from headwater.store import EventStore, open_store

REPO = Path(__file__).resolve().parent.parent
SPEC_DIR = Path(os.environ.get("HEADWATER_SPEC_DIR", REPO.parent / "shared" / "openlineage-spec"))
BACKENDS = ["sqlite", "postgresql"]


def _weight(item: pytest.Item) -> int:
    if item.get_closest_marker("xdist_group"):
        return 0
    if "spark" in getattr(item, "fixturenames", ()) or item.get_closest_marker("slow"):
        return 1
    return 2


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Long tests first (stable order otherwise): under pytest-xdist they start early and the run
    ends on short ones, instead of one worker finishing a queue of long tests while the other
    idles. The web UI's tests share one live server built with the pipeline: one group, so one
    worker builds it (`--dist loadgroup`)."""
    for item in items:
        if item.path.parent.name == "ui":
            item.add_marker(pytest.mark.xdist_group("ui"))
    items.sort(key=_weight)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _reachable(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=3):
            return True
    except psycopg.Error:
        return False


def _start_throwaway_cluster(workdir: Path) -> tuple[str, subprocess.Popen[bytes] | None] | None:
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), reverse=True)
    initdb = shutil.which("initdb") or (str(candidates[0]) if candidates else None)
    if initdb is None:
        return None
    bindir = Path(initdb).parent
    data = workdir / "pgdata"
    port = free_port()
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(workdir, "postgres")
    subprocess.run(
        [*as_user, str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"],
        check=True,
        capture_output=True,
    )
    server = subprocess.Popen(
        [
            *as_user,
            str(bindir / "postgres"),
            "-D",
            str(data),
            "-p",
            str(port),
            "-k",
            str(workdir),
            "-h",
            "127.0.0.1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    for _ in range(100):
        if _reachable(url):
            return url, server
        time.sleep(0.1)
    server.terminate()
    return None


@pytest.fixture(scope="session")
def postgres_admin_url() -> Iterator[str]:
    url = os.environ.get("HEADWATER_TEST_POSTGRES_URL")
    if url:
        if not _reachable(url):
            pytest.fail(f"HEADWATER_TEST_POSTGRES_URL={url} is not reachable")
        yield url
        return
    local = "postgresql://postgres@127.0.0.1:5432/postgres"
    if _reachable(local):
        yield local
        return
    workdir = Path(tempfile.mkdtemp(prefix="headwater-pg-"))
    try:
        started = _start_throwaway_cluster(workdir)
    except (OSError, subprocess.CalledProcessError) as exc:
        started = None
        reason = f"could not start a throwaway PostgreSQL: {exc}"
    else:
        reason = "no PostgreSQL: set HEADWATER_TEST_POSTGRES_URL or install PostgreSQL server binaries"
    if started is None:
        pytest.skip(reason)
    url, server = started
    yield url
    if server is not None:
        server.terminate()
        server.wait(timeout=30)
    shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url(postgres_admin_url: str) -> Iterator[str]:
    """A database of this test session (one per xdist worker), dropped at the end."""
    name = f"headwater_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    info = psycopg.conninfo.conninfo_to_dict(postgres_admin_url)
    info["dbname"] = name
    yield (
        psycopg.conninfo.make_conninfo(**info)
        if "=" in postgres_admin_url
        else (postgres_admin_url.rsplit("/", 1)[0] + "/" + name)
    )
    with psycopg.connect(postgres_admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _database_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'headwater.db'}"
    url: str = request.getfixturevalue("postgres_url")
    with psycopg.connect(url, autocommit=True) as conn:  # a clean store for every test
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
    return url


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty store URL: a SQLite file, then a PostgreSQL database."""
    return _database_url(str(request.param), request, tmp_path)


@pytest.fixture
def store(database_url: str) -> Iterator[EventStore]:
    opened = open_store(database_url)
    yield opened
    opened.close()


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(database_url=database_url)


@pytest.fixture
def client(settings: Settings, store: EventStore) -> Iterator[TestClient]:
    with TestClient(create_app(settings, store)) as test_client:
        yield test_client


class LiveServer:
    """`headwater serve` in a subprocess, on a free loopback port."""

    def __init__(self, database_url: str, *extra: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "headwater",
                "serve",
                "--port",
                str(self.port),
                "--database-url",
                database_url,
                "--log-level",
                "warning",
                *extra,
            ],
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                output = self.process.stdout.read().decode() if self.process.stdout else ""
                raise RuntimeError(f"headwater serve exited with {self.process.returncode}: {output}")
            try:
                if httpx.get(f"{self.url}/api/atlas/v2/openlineage/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("headwater serve did not become healthy within 30 s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()


@pytest.fixture
def live_server(database_url: str) -> Iterator[LiveServer]:
    server = LiveServer(database_url)
    yield server
    server.stop()


@pytest.fixture
def spec_dir() -> Path:
    if not SPEC_DIR.is_dir():
        pytest.skip(f"OpenLineage spec reference data not found at {SPEC_DIR} (set HEADWATER_SPEC_DIR)")
    return SPEC_DIR
