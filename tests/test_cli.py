"""The `headwater` command: version and help, `db upgrade`, `settings`, `ingest` of files and
folders, and `serve` refusing a public address without API keys."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result

from headwater import __version__
from headwater.cli import main
from headwater.config import SETTINGS
from headwater.query.run_events import read_run_events
from headwater.store import open_store
from tests.conftest import LiveServer
from tests.factories import facet, migration_versions, run_event

RUN_A = "0190f3c2-7d1e-7a2b-9c3d-4e5f60718293"  # a UUIDv7, as the Python client makes them
RUN_B = "11111111-2222-4333-8444-555555555555"
RUN_C = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No HEADWATER_* variables and no ./headwater.toml leak in from where the tests run."""
    for name in list(os.environ):
        if name.startswith("HEADWATER_") and not name.startswith("HEADWATER_TEST_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def cli(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def run_module(*args: str, timeout: float = 60, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HEADWATER_")}
    environ.update(kwargs.pop("env", {}))
    return subprocess.run(
        [sys.executable, "-m", "headwater", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environ,
        **kwargs,
    )


# -- version and help --------------------------------------------------------------------------------


def test_version() -> None:
    result = run_module("--version")  # through `python -m headwater`, the real entry point
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"headwater, version {__version__}"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ((), ["serve", "ingest", "db", "settings", "--config", "--version", "/api/v1/lineage"]),
        (("serve",), ["--host", "--port", "--database-url", "--write-key", "--read-key", "--insecure"]),
        (("ingest",), ["PATHS", "--database-url", "--keep-going", "--batch-size", "--quiet", ".ndjson"]),
        (("db",), ["upgrade"]),
        (("db", "upgrade"), ["--database-url", "migrations"]),
        (("settings",), ["where the value came from"]),
    ],
    ids=["main", "serve", "ingest", "db", "db-upgrade", "settings"],
)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help(command: tuple[str, ...], expected: list[str], flag: str) -> None:
    result = cli(*command, flag)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Usage: ")
    for text in expected:
        assert text in result.stdout, f"{text!r} missing from {' '.join(command)} --help"


# -- db upgrade --------------------------------------------------------------------------------------


def test_db_upgrade_fresh_then_repeated(database_url: str) -> None:
    first = cli("db", "upgrade", "--database-url", database_url)
    assert first.exit_code == 0, first.output
    versions = migration_versions()
    applied = ", ".join(map(str, versions))
    assert first.stdout.strip() == f"applied migrations {applied}; schema version {versions[-1]}"
    again = cli("db", "upgrade", "--database-url", database_url)
    assert again.exit_code == 0, again.output
    assert again.stdout.strip() == f"schema is up to date (version {versions[-1]})"
    store = open_store(database_url, migrate=False)
    try:
        assert store.schema_version() == versions[-1]
        assert store.migrate() == []
    finally:
        store.close()


def test_db_upgrade_takes_the_url_from_the_environment(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'from-env.db'}"
    result = cli("db", "upgrade", env={"HEADWATER_DATABASE_URL": url})
    assert result.exit_code == 0, result.output
    assert (tmp_path / "from-env.db").exists()


def test_db_upgrade_rejects_an_unknown_url() -> None:
    result = cli("db", "upgrade", "--database-url", "mysql://root@localhost/lineage")
    assert result.exit_code == 1
    assert "mysql://root@localhost/lineage" in result.stderr
    assert "sqlite:///" in result.stderr and "postgresql://" in result.stderr


# -- pipeline run -----------------------------------------------------------------------------------


def test_pipeline_run_with_nothing_new_starts_no_spark(database_url: str) -> None:
    # a store of no events: nothing to publish, so no JVM is started (`starting Spark` says one is)
    result = cli("pipeline", "run", "--quiet", "--database-url", database_url)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "nothing new (checkpoint seq 0)"
    assert "starting Spark" not in result.stderr


def test_log_lines_leave_out_py4j_below_its_warnings() -> None:
    # py4j's INFO ended every one-off pass with "Closing down clientserver connection", and its
    # DEBUG is a line for every call into the JVM; the level chosen still applies to Headwater's
    script = """
import logging
from headwater.cli_options import setup_logging
setup_logging("debug")
logging.getLogger("py4j.clientserver").info("Closing down clientserver connection")
logging.getLogger("py4j.clientserver").warning("a warning of py4j")
logging.getLogger("headwater.pipeline.runner").debug("a debug line of Headwater")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = [line.split(" ", 2)[2] for line in done.stderr.splitlines()]
    assert lines == [
        "WARNING py4j.clientserver: a warning of py4j",
        "DEBUG   headwater.pipeline.runner: a debug line of Headwater",
    ]


# -- settings ----------------------------------------------------------------------------------------


def settings_lines(output: str) -> dict[str, tuple[str, str]]:
    """`HEADWATER_X=value  [source]` lines → {env name: (value, source)}."""
    found = {}
    for line in output.splitlines():
        if line.startswith("HEADWATER_"):
            assignment, _, source = line.rpartition("  [")
            name, _, value = assignment.partition("=")
            found[name] = (value, source.rstrip("]"))
    return found


def test_settings_lists_every_setting_with_its_default() -> None:
    result = cli("settings")
    assert result.exit_code == 0, result.output
    shown = settings_lines(result.stdout)
    assert set(shown) == {setting.env for setting in SETTINGS}
    assert all(source == "default" for _, source in shown.values())
    assert shown["HEADWATER_PORT"] == ("8008", "default")
    assert shown["HEADWATER_HOST"] == ("127.0.0.1", "default")
    for setting in SETTINGS:  # each followed by its help
        assert setting.help in result.stdout


def test_settings_from_toml_file_and_environment(tmp_path: Path) -> None:
    config = tmp_path / "conf" / "hw.toml"
    config.parent.mkdir()
    config.write_text(
        '[headwater]\nport = 9001\nhost = "127.0.0.2"\nwrite_keys = ["secret-w1", "secret-w2"]\n'
        'max_body_bytes = "2MiB"\n'
    )
    env = {"HEADWATER_PORT": "9100", "HEADWATER_READ_KEYS": "secret-r1", "HEADWATER_INSECURE": "yes"}
    result = cli("--config", str(config), "settings", env=env)
    assert result.exit_code == 0, result.output
    shown = settings_lines(result.stdout)
    assert shown["HEADWATER_PORT"] == ("9100", "HEADWATER_PORT")  # the environment beats the file
    assert shown["HEADWATER_HOST"] == ("127.0.0.2", str(config))
    assert shown["HEADWATER_WRITE_KEYS"] == ("2 key(s)", str(config))
    assert shown["HEADWATER_READ_KEYS"] == ("1 key(s)", "HEADWATER_READ_KEYS")
    assert shown["HEADWATER_INSECURE"] == ("True", "HEADWATER_INSECURE")
    assert shown["HEADWATER_MAX_BODY_BYTES"] == (str(2 * 1024**2), str(config))
    assert shown["HEADWATER_LOG_LEVEL"] == ("info", "default")
    assert "secret-" not in result.output, "settings must not print API keys"


def test_settings_does_not_print_the_database_password() -> None:
    """API keys are shown as a count; a password inside the database URL deserves the same care."""
    url = "postgresql://lineage:s3cr3t-pw@db.internal:5432/headwater"
    result = cli("settings", env={"HEADWATER_DATABASE_URL": url})
    assert result.exit_code == 0, result.output
    value, source = settings_lines(result.stdout)["HEADWATER_DATABASE_URL"]
    assert source == "HEADWATER_DATABASE_URL"
    assert "db.internal:5432/headwater" in value
    assert "s3cr3t-pw" not in result.output


def test_settings_file_from_headwater_config_and_working_directory(tmp_path: Path) -> None:
    named = tmp_path / "named.toml"
    named.write_text("port = 9002\n")  # a top-level table works as well as [headwater]
    result = cli("settings", env={"HEADWATER_CONFIG": str(named)})
    assert settings_lines(result.stdout)["HEADWATER_PORT"] == ("9002", str(named))

    (tmp_path / "headwater.toml").write_text('[headwater]\nlog_level = "debug"\n')
    result = cli("settings")
    assert settings_lines(result.stdout)["HEADWATER_LOG_LEVEL"] == ("debug", "headwater.toml")


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (("--config", "missing.toml"), {}, "missing.toml does not exist"),
        ((), {"HEADWATER_PORT": "eighty"}, "port from HEADWATER_PORT"),
        ((), {"HEADWATER_INSECURE": "maybe"}, "insecure from HEADWATER_INSECURE"),
        (("--config", "unknown.toml"), {}, "unknown setting 'colour'"),
        (("--config", "broken.toml"), {}, "cannot read broken.toml"),
    ],
    ids=["missing-file", "bad-int", "bad-bool", "unknown-key", "bad-toml"],
)
def test_settings_errors_name_the_setting(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], message: str
) -> None:
    (tmp_path / "unknown.toml").write_text('colour = "blue"\n')
    (tmp_path / "broken.toml").write_text("port = \n")
    result = cli(*args, "settings", env=env)
    assert result.exit_code == 1
    assert message in result.stderr
    assert "Traceback" not in result.output


# -- ingest ------------------------------------------------------------------------------------------


def _bad_facets_event() -> dict[str, Any]:
    event = run_event(RUN_C, event_type="OTHER", event_time="2024-05-01T12:00:00Z")
    event["outputs"][0]["facets"]["schema"] = facet("SchemaDatasetFacet", "1-1-1", fields="not a list")
    return event


def write_event_folder(folder: Path) -> dict[str, Any]:
    """A folder of every supported file kind, with some invalid events; returns what to expect."""
    start = run_event(RUN_A, event_type="START", event_time="2024-05-01T10:00:00Z")
    running = run_event(RUN_A, event_type="RUNNING", event_time="2024-05-01T10:01:00+02:00")
    complete = run_event(RUN_A, event_type="COMPLETE", event_time="2024-05-01T10:02:00.5Z")
    child = run_event(RUN_B, event_type="START", event_time="2024-05-01T11:00:00Z", parent=RUN_A)
    child_done = run_event(RUN_B, event_type="COMPLETE", event_time="2024-05-01T11:30:00Z", parent=RUN_A)
    no_time = run_event(RUN_A, event_type="FAIL")
    del no_time["eventTime"]
    bad_run_id = run_event()
    bad_run_id["run"]["runId"] = ""  # any other string is a run id (with a warning)
    bad_type = run_event(RUN_A, event_type="EXPLODED")

    (folder / "nested" / "deeper").mkdir(parents=True)
    (folder / "start.json").write_text(json.dumps(start, indent=2))  # one object
    (folder / "batch.json").write_text(json.dumps([running, no_time]))  # an array
    (folder / "nested" / "lines.ndjson").write_text(
        "\n".join([json.dumps(complete), "{this is not json", "", json.dumps(bad_run_id)]) + "\n"
    )
    with gzip.open(folder / "nested" / "deeper" / "child.ndjson.gz", "wt") as handle:
        handle.write(json.dumps(child) + "\n" + json.dumps(bad_type) + "\n")
    with gzip.open(folder / "nested" / "more.json.gz", "wt") as handle:
        json.dump([child_done, _bad_facets_event()], handle)
    (folder / "README.txt").write_text("not an event file, skipped")
    return {
        "files": 5,
        "stored": 6,
        "rejected": 4,
        RUN_A: [complete, start, running],  # newest first: 10:02Z, 10:00Z, 08:01Z (+02:00)
        RUN_B: [child_done, child],
    }


def summary(stored: int, duplicates: int, rejected: int, warnings: int, files: int = 5) -> str:
    return (
        f"{files} file(s): {stored} stored, {duplicates} already stored, {rejected} rejected, "
        f"{warnings} with warnings."
    )


def test_ingest_folder(database_url: str, tmp_path: Path) -> None:
    folder = tmp_path / "events"
    folder.mkdir()
    expected = write_event_folder(folder)

    result = cli("ingest", str(folder), "--database-url", database_url, "--quiet")
    assert result.exit_code == 1, result.output
    assert result.stdout.strip() == summary(6, 0, 4, 1)
    rejections = [line.strip() for line in result.stderr.splitlines() if "rejected" in line]
    assert len(rejections) == 4, result.stderr
    reasons = "\n".join(rejections)
    # Each names the file, the event's place in it, and the field at fault.
    assert f"rejected {folder / 'batch.json'}#1: eventTime: is required" in reasons
    assert f"{folder / 'nested' / 'lines.ndjson'}#1: line 2: malformed JSON" in reasons
    assert f"{folder / 'nested' / 'lines.ndjson'}#2: run.runId: must not be empty" in reasons
    assert f"{folder / 'nested' / 'deeper' / 'child.ndjson.gz'}#1: eventType: 'EXPLODED'" in reasons
    assert "README" not in result.output

    store = open_store(database_url)
    try:
        for run_id in (RUN_A, RUN_B):
            page = read_run_events(store, run_id, page_size=10, paging_state=None, include_children=False)
            assert [json.loads(e.payload) for e in page.events] == expected[run_id]
        tree = read_run_events(store, RUN_A, page_size=10, paging_state=None, include_children=True)
        assert [e.run_id for e in tree.events] == [RUN_B, RUN_B, RUN_A, RUN_A, RUN_A]
        flagged = read_run_events(store, RUN_C, page_size=10, paging_state=None, include_children=False)
        assert flagged.events[0].untrusted_facets == ("outputs[0].facets.schema",)
    finally:
        store.close()

    # Replaying the same files stores nothing twice and says so.
    again = cli("ingest", str(folder), "--database-url", database_url, "--quiet", "--keep-going")
    assert again.exit_code == 0, again.output
    assert again.stdout.strip() == summary(0, 6, 4, 1)
    assert again.stderr.count("rejected") == 4


def test_ingest_keep_going_exits_zero(tmp_path: Path) -> None:
    folder = tmp_path / "events"
    folder.mkdir()
    write_event_folder(folder)
    url = f"sqlite:///{tmp_path / 'kg.db'}"
    result = cli("ingest", str(folder), "--database-url", url, "--keep-going")  # with the progress bar
    assert result.exit_code == 0, result.output
    assert summary(6, 0, 4, 1) in result.stdout


def test_ingest_files_and_small_batches(tmp_path: Path) -> None:
    """Files named one by one, the same file twice, many batches per file: counts stay right."""
    events = [run_event(RUN_A, event_time=f"2024-05-01T10:00:{s:02d}Z", job=f"job{s}") for s in range(7)]
    path = tmp_path / "seven.ndjson"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    url = f"sqlite:///{tmp_path / 'files.db'}"
    result = cli("ingest", str(path), str(path), "--database-url", url, "-q", "--batch-size", "3")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == summary(7, 7, 0, 0, files=2)
    store = open_store(url)
    try:
        page = read_run_events(store, RUN_A, page_size=100, paging_state=None, include_children=False)
        assert len(page.events) == 7
    finally:
        store.close()


def test_ingest_unreadable_files_are_rejected_whole(tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "fake.ndjson.gz").write_bytes(b"this is not gzip")
    url = f"sqlite:///{tmp_path / 'bad.db'}"
    result = cli(
        "ingest", str(tmp_path / "empty.json"), str(tmp_path / "fake.ndjson.gz"), "--database-url", url, "-q"
    )
    assert result.exit_code == 1
    assert result.stdout.strip() == summary(0, 0, 2, 0, files=2)
    assert f"rejected {tmp_path / 'empty.json'}: malformed JSON" in result.stderr
    assert f"rejected {tmp_path / 'fake.ndjson.gz'}: " in result.stderr


def test_ingest_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    result = cli("ingest", str(tmp_path / "nowhere"), "--database-url", f"sqlite:///{tmp_path / 'x.db'}")
    assert result.exit_code == 2
    assert "nowhere does not exist" in result.stderr


def test_ingest_command_line_beats_environment(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    path.write_text(json.dumps(run_event(RUN_A)))
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    result = cli(
        "ingest", str(path), "--database-url", url, "-q", env={"HEADWATER_DATABASE_URL": "mysql://nowhere/db"}
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "cli.db").exists()


@pytest.mark.parametrize("size", ["0", "-1"])
def test_ingest_rejects_a_batch_size_below_one(tmp_path: Path, size: str) -> None:
    """A batch size below 1 is a usage error. (Today 0 crashes with a traceback in
    replay_files' range(), and -1 silently ingests nothing and exits 0.)"""
    path = tmp_path / "one.json"
    path.write_text(json.dumps(run_event(RUN_A)))
    result = run_module(
        "ingest", str(path), "--database-url", f"sqlite:///{tmp_path / 'b.db'}", "-q", "--batch-size", size
    )
    assert "Traceback" not in result.stderr
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "--batch-size" in result.stderr


# -- serve -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("--host", "0.0.0.0"), {}),
        (("--host", "::"), {}),
        (("--host", "lineage.example.com"), {}),
        ((), {"HEADWATER_HOST": "0.0.0.0"}),
    ],
    ids=["ipv4-any", "ipv6-any", "hostname", "env"],
)
def test_serve_refuses_public_address_without_write_keys(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str]
) -> None:
    database = tmp_path / "serve" / "never.db"
    result = run_module(
        "serve", *args, "--port", "0", "--database-url", f"sqlite:///{database}", env=env, timeout=30
    )
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "refusing to listen on" in result.stderr
    assert "without write keys" in result.stderr
    assert "--write-key" in result.stderr and "--insecure" in result.stderr
    assert "Traceback" not in result.stderr
    # It refused before opening the store or binding: nothing was created, nothing started.
    assert not database.parent.exists()
    assert "Started server" not in result.stderr


def test_serve_refuses_public_address_with_only_read_keys(tmp_path: Path) -> None:
    database = tmp_path / "serve" / "never.db"
    result = run_module(
        "serve",
        "--host",
        "0.0.0.0",
        "--read-key",
        "R",
        "--port",
        "0",
        "--database-url",
        f"sqlite:///{database}",
        timeout=30,
    )
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "without write keys" in result.stderr
    assert not database.parent.exists()


def test_status_reads_a_running_servers_ingest_counters(live_server: LiveServer, database_url: str) -> None:
    """`headwater status` asks the server's /metrics with the standard library (httpx is only a
    development dependency, absent from an install made by the README's first command)."""
    posted = httpx.post(f"{live_server.url}/api/v1/lineage", json=run_event())
    assert posted.status_code == 201, posted.text

    def counted(output: str) -> bool:
        return "http accepted: 1" in output or "http stored: 1" in output

    # The worker that answers /metrics reads the one that stored the event from its snapshot,
    # written within PUBLISH_SECONDS of the change (`ingest.metrics_shared`): ask until it shows.
    deadline = time.monotonic() + 10
    while True:
        result = CliRunner().invoke(
            main, ["status", "--database-url", database_url, "--url", live_server.url], catch_exceptions=False
        )
        if counted(result.output) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert result.exit_code == 0, result.output
    assert "1 event(s), 0 dead letter(s)" in result.output
    assert "pipeline: never ran on this store; 1 event(s) waiting" in result.output
    assert f"server {live_server.url}:" in result.output
    assert counted(result.output), result.output
