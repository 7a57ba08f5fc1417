"""The settings registry: sources, precedence, parsing, and that every setting is documented."""

from __future__ import annotations

import os
from dataclasses import fields
from pathlib import Path

import pytest

from headwater.config import (
    SETTINGS,
    Settings,
    load_settings,
    process_count,
    redact_options,
    to_environment,
)
from headwater.errors import ConfigError

DOCS = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"


def test_defaults_serve_a_newcomer() -> None:
    settings = load_settings(environ={}, config_file=None)
    assert settings == Settings()
    assert settings.database_url == "sqlite:///.headwater/headwater.db"
    assert (settings.host, settings.port) == ("127.0.0.1", 8008)


def test_environment_overrides_the_file(tmp_path: Path) -> None:
    config = tmp_path / "headwater.toml"
    config.write_text('port = 9000\nwrite_keys = ["a", "b"]\n[other]\n')
    with pytest.raises(ConfigError, match="unknown setting 'other'"):
        load_settings(environ={}, config_file=config)
    config.write_text('[headwater]\nport = 9000\nwrite_keys = ["a", "b"]\nmax_body_bytes = "1MiB"\n')
    settings = load_settings(environ={"HEADWATER_PORT": "9100"}, config_file=config)
    assert settings.port == 9100
    assert settings.write_keys == ("a", "b")
    assert settings.max_body_bytes == 1024**2
    assert settings.sources["port"] == "HEADWATER_PORT"
    assert settings.sources["write_keys"] == str(config)


def test_values_are_parsed_with_clear_errors() -> None:
    settings = load_settings(environ={"HEADWATER_READ_KEYS": "x, y,", "HEADWATER_INSECURE": "yes"})
    assert settings.read_keys == ("x", "y") and settings.insecure is True
    with pytest.raises(ConfigError, match="HEADWATER_PORT"):
        load_settings(environ={"HEADWATER_PORT": "eighty"})
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(environ={"HEADWATER_CONFIG": "/nonexistent/headwater.toml"})


def test_every_setting_is_documented_with_its_default() -> None:
    """docs/configuration.md has a row per setting whose default column is the registry's default,
    spelt as its variable takes it (`(none)` when empty)."""
    rows = {}
    for line in DOCS.read_text().splitlines():
        if line.startswith("| `HEADWATER_"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[cells[0].strip("`")] = cells[1]
    assert set(rows) == {setting.env for setting in SETTINGS}
    for setting in SETTINGS:
        cell = rows[setting.env]
        documented = cell.split("`")[1] if cell.startswith("`") else cell
        expected = setting.shown_default or "(none)"
        assert documented == expected, (
            f"{setting.env}: docs/configuration.md says {cell}, the default is {expected}"
        )


def test_the_registry_is_the_settings_defaults() -> None:
    """Each default is written once: the registry's entries are the Settings fields' defaults."""
    defaults = Settings()
    assert [s.name for s in SETTINGS] == [f.name for f in fields(Settings) if f.name != "sources"]
    for setting in SETTINGS:
        assert getattr(defaults, setting.name) == setting.default
        assert setting.parse(setting.shown_default) == setting.default or setting.shown_default == ""
    assert to_environment(defaults) == {s.env: s.shown_default for s in SETTINGS}
    assert load_settings(environ=to_environment(defaults)) == defaults


def test_kafka_settings_and_librdkafka_options(tmp_path: Path) -> None:
    settings = load_settings(
        environ={
            "HEADWATER_KAFKA_TOPICS": "a, b",
            "HEADWATER_KAFKA_POLL_TIMEOUT": "0.25",
            "HEADWATER_KAFKA_OPTIONS": "security.protocol=SASL_SSL, sasl.password=p=q,",
        }
    )
    assert settings.kafka_topics == ("a", "b") and settings.kafka_poll_timeout == 0.25
    assert dict(settings.kafka_options) == {"security.protocol": "SASL_SSL", "sasl.password": "p=q"}
    assert "p=q" not in repr(settings)
    assert redact_options(settings.kafka_options) == "sasl.password=***,security.protocol=SASL_SSL"
    with pytest.raises(ConfigError, match="HEADWATER_KAFKA_OPTIONS: 'oops' is not key=value"):
        load_settings(environ={"HEADWATER_KAFKA_OPTIONS": "oops"})
    config = tmp_path / "headwater.toml"
    config.write_text(
        'kafka_topics = ["t"]\nkafka_poll_timeout = 1\n'
        '[kafka_options]\n"session.timeout.ms" = 6000\n"enable.ssl.certificate.verification" = false\n'
    )
    from_file = load_settings(environ={}, config_file=config)
    assert from_file.kafka_topics == ("t",) and from_file.kafka_poll_timeout == 1.0
    assert dict(from_file.kafka_options) == {
        "session.timeout.ms": "6000",
        "enable.ssl.certificate.verification": "false",
    }


@pytest.mark.parametrize(
    ("cores", "per_core", "expected"),
    [(1, 1, 1), (2, 1, 2), (8, 1, 4), (1, 2, 2), (2, 2, 4), (3, 2, 4)],
)
def test_a_process_count_of_zero_follows_the_cores_up_to_four(
    monkeypatch: pytest.MonkeyPatch, cores: int, per_core: int, expected: int
) -> None:
    """HTTP servers take one process per core, Kafka consumers two (they wait for the broker and
    the store part of the time); an explicit count is taken as it is."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(cores)), raising=False)
    assert process_count(0, per_core=per_core) == expected
    assert process_count(6, per_core=per_core) == 6
