"""Every setting of Headwater, in one registry: defaults, a TOML file, `HEADWATER_*` variables.

Precedence, lowest first: the default, the TOML file (`HEADWATER_CONFIG`, else `./headwater.toml`
when it exists), the environment, then options given on the command line.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from headwater.errors import ConfigError

DEFAULT_DATABASE_URL = "sqlite:///.headwater/headwater.db"
ENV_PREFIX = "HEADWATER_"


def _bool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(f"{value!r} is not a boolean (true/false)")


def _seconds(value: str) -> float:
    """`5`, `5s`, `500ms`, `2m` → seconds."""
    text = value.strip().lower()
    for suffix, factor in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


def _keys(value: str) -> tuple[str, ...]:
    return tuple(key.strip() for key in value.split(",") if key.strip())


def _size(value: str) -> int:
    text = value.strip().upper().removesuffix("B")
    for suffix, factor in (("KI", 1024), ("MI", 1024**2), ("GI", 1024**3), ("K", 1000), ("M", 1000**2)):
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * factor)
    return int(text)


def _options(value: str) -> tuple[tuple[str, str], ...]:
    """`key=value,key=value` (librdkafka options) into sorted pairs; a value may hold `=`."""
    pairs: dict[str, str] = {}
    for item in value.split(","):
        if not item.strip():
            continue
        key, sep, option = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{item.strip()!r} is not key=value")
        pairs[key.strip()] = option.strip()
    return tuple(sorted(pairs.items()))


def _option_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    raise ValueError(f"option value {value!r} is not a string, number or boolean")


_SECRET_OPTION_PARTS = ("password", "secret", "jaas", "key.pem", "token")


def redact_options(options: tuple[tuple[str, str], ...]) -> str:
    """librdkafka options as `key=value,…` with passwords and secrets replaced, fit for logs."""
    return ",".join(
        f"{key}={'***' if any(part in key for part in _SECRET_OPTION_PARTS) else value}"
        for key, value in options
    )


def redact_url(url: str) -> str:
    """The URL with any password replaced, fit for logs and banners."""
    scheme, sep, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not sep or not at or ":" not in credentials:
        return url
    user = credentials.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}"


@dataclass(frozen=True)
class Setting:
    """One setting: its name (the env variable is HEADWATER_ + NAME), default, parser and help."""

    name: str
    default: Any
    help: str
    parse: Callable[[str], Any] = str

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "database_url",
        DEFAULT_DATABASE_URL,
        "The store. `sqlite:///relative/path.db`, `sqlite:////absolute/path.db` or "
        "`postgresql://user@host:5432/dbname`. The default is one SQLite file under ./.headwater/.",
    ),
    Setting("host", "127.0.0.1", "Address the HTTP server listens on."),
    Setting("port", 8008, "Port the HTTP server listens on.", int),
    Setting(
        "write_keys",
        (),
        "Comma-separated API keys allowed to send events (`Authorization: Bearer <key>`). "
        "When set, writes need one of them (a read key gets 403, an unknown key 401); "
        "when empty, writes are open.",
        _keys,
    ),
    Setting(
        "read_keys",
        (),
        "Comma-separated API keys allowed to read. When set, reads need one of them (a write key "
        "gets 403, an unknown key 401); when empty, reads are open.",
        _keys,
    ),
    Setting(
        "insecure",
        False,
        "Allow listening on a non-loopback address without write keys.",
        _bool,
    ),
    Setting("max_body_bytes", 16 * 1024**2, "Largest request body accepted, after gzip (413 beyond).", _size),
    Setting("max_batch_events", 50_000, "Most events accepted in one request (413 beyond).", int),
    Setting(
        "commit_batch_events",
        2_000,
        "Most events the writer groups into one durable commit (group commit).",
        int,
    ),
    Setting("log_level", "info", "Logging level: debug, info, warning, error."),
    Setting(
        "workers",
        1,
        "HTTP server processes. Ingest is CPU-bound Python: 2 on a 2-core machine roughly doubles it; "
        "each process has its own group-commit writer (and Kafka consumer when enabled).",
        int,
    ),
    Setting(
        "kafka_enabled",
        False,
        "Consume OpenLineage events from Kafka inside `headwater serve` (`headwater consume` runs "
        "the consumer alone whatever this says).",
        _bool,
    ),
    Setting("kafka_bootstrap_servers", "localhost:9092", "Comma-separated Kafka brokers, host:port."),
    Setting("kafka_topics", ("openlineage.events",), "Comma-separated topics to consume.", _keys),
    Setting(
        "kafka_generic_topics",
        ("lineage.generic",),
        "Comma-separated topics of generic events (FastScore style), consumed by the same consumer "
        "with the same guarantees; empty for none.",
        _keys,
    ),
    Setting(
        "kafka_group_id",
        "headwater",
        "Consumer group: consumers of one group share the partitions and its committed offsets.",
    ),
    Setting(
        "kafka_batch_size",
        2_000,
        "Most messages consumed, stored in one durable commit and acknowledged together.",
        int,
    ),
    Setting(
        "kafka_poll_timeout",
        0.5,
        "Seconds the consumer waits for a batch to fill before storing what has come.",
        float,
    ),
    Setting(
        "kafka_max_message_bytes",
        1024**2,
        "Largest message value accepted from Kafka; a larger one is dead-lettered.",
        _size,
    ),
    Setting(
        "kafka_error_topic",
        False,
        "Also produce every dead-lettered message to `<topic>.errors` (the table keeps them anyway).",
        _bool,
    ),
    Setting(
        "kafka_options",
        (),
        "librdkafka options for the consumer (and error-topic producer), e.g. "
        "`security.protocol=SASL_SSL,sasl.mechanism=PLAIN,sasl.username=u,sasl.password=p`; "
        "in the TOML file a `[kafka_options]` table.",
        _options,
    ),
    Setting(
        "spark_master",
        "local[*]",
        "Where the lineage pipeline runs Spark: `local[*]` (all cores of this machine), `local[N]`, "
        "or a cluster `spark://host:7077`.",
    ),
    Setting(
        "spark_driver_memory",
        "4g",
        "Memory of the pipeline's Spark driver JVM (in local mode the executors run inside it).",
    ),
    Setting("pipeline_interval", 5.0, "Seconds between passes of the continuous pipeline.", _seconds),
    Setting(
        "pipeline_batch_events",
        200_000,
        "Most events one pipeline batch takes (each is published with its checkpoint in one transaction).",
        int,
    ),
    Setting(
        "pipeline_partitions",
        0,
        "Partitions Spark splits a batch of events into (0: two per core Spark has).",
        int,
    ),
    Setting(
        "pipeline_dogfood",
        True,
        "Report each pipeline run as OpenLineage events (job `headwater.pipeline`) into the store.",
        _bool,
    ),
)
_BY_NAME = {setting.name: setting for setting in SETTINGS}


@dataclass(frozen=True)
class Settings:
    """The resolved configuration every part of Headwater reads."""

    database_url: str = DEFAULT_DATABASE_URL
    host: str = "127.0.0.1"
    port: int = 8008
    write_keys: tuple[str, ...] = ()
    read_keys: tuple[str, ...] = ()
    insecure: bool = False
    max_body_bytes: int = 16 * 1024**2
    max_batch_events: int = 50_000
    commit_batch_events: int = 2_000
    log_level: str = "info"
    workers: int = 1
    kafka_enabled: bool = False
    kafka_bootstrap_servers: str = "localhost:9092"
    kafka_topics: tuple[str, ...] = ("openlineage.events",)
    kafka_generic_topics: tuple[str, ...] = ("lineage.generic",)
    kafka_group_id: str = "headwater"
    kafka_batch_size: int = 2_000
    kafka_poll_timeout: float = 0.5
    kafka_max_message_bytes: int = 1024**2
    kafka_error_topic: bool = False
    kafka_options: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # may hold secrets
    spark_master: str = "local[*]"
    spark_driver_memory: str = "4g"
    pipeline_interval: float = 5.0
    pipeline_batch_events: int = 200_000
    pipeline_partitions: int = 0
    pipeline_dogfood: bool = True
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)

    def override(self, **values: Any) -> Settings:
        """A copy with the given values (None means: keep), as the CLI options do."""
        given = {k: v for k, v in values.items() if v is not None}
        unknown = set(given) - set(_BY_NAME)
        if unknown:
            raise ConfigError(f"unknown settings: {', '.join(sorted(unknown))}")
        return replace(self, **given)


def to_environment(settings: Settings) -> dict[str, str]:
    """Every setting as the `HEADWATER_*` variable that reproduces it (for worker processes)."""
    environ: dict[str, str] = {}
    for setting in SETTINGS:
        value = getattr(settings, setting.name)
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, tuple):
            text = ",".join(item if isinstance(item, str) else "=".join(item) for item in value)
        else:
            text = str(value)
        environ[setting.env] = text
    return environ


def _coerce(setting: Setting, value: Any, origin: str) -> Any:
    try:
        if isinstance(value, str):
            return setting.parse(value)
        if setting.parse is _keys and isinstance(value, list):
            return tuple(str(v) for v in value)
        if setting.parse in (int, _size) and isinstance(value, int) and not isinstance(value, bool):
            return value
        if setting.parse is _bool and isinstance(value, bool):
            return value
        if setting.parse is float and isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if setting.parse is _options and isinstance(value, dict):
            return tuple(sorted((str(k), _option_value(v)) for k, v in value.items()))
        raise ValueError(f"unexpected {type(value).__name__}")
    except ValueError as exc:
        raise ConfigError(f"{setting.name} from {origin}: {exc}") from None


def load_settings(
    environ: Mapping[str, str] | None = None, config_file: str | Path | None = None
) -> Settings:
    """Resolve the settings from the defaults, the TOML file and the environment."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    path = Path(config_file or env.get(ENV_PREFIX + "CONFIG") or "headwater.toml")
    explicit = config_file is not None or ENV_PREFIX + "CONFIG" in env
    if path.exists():
        try:
            table = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from None
        table = table.get("headwater", table)
        for key, value in table.items():
            setting = _BY_NAME.get(key)
            if setting is None:
                raise ConfigError(f"{path}: unknown setting {key!r}")
            values[key] = _coerce(setting, value, str(path))
            sources[key] = str(path)
    elif explicit:
        raise ConfigError(f"configuration file {path} does not exist")
    for setting in SETTINGS:
        if setting.env in env:
            values[setting.name] = _coerce(setting, env[setting.env], setting.env)
            sources[setting.name] = setting.env
    names = {f.name for f in fields(Settings)}
    assert set(_BY_NAME) <= names, "every Setting needs a Settings field"
    return Settings(**values, sources=sources)
