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
CONFIG_ENV = ENV_PREFIX + "CONFIG"
DEFAULT_CONFIG_FILE = "headwater.toml"


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
    try:
        for suffix, factor in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
            if text.endswith(suffix):
                return float(text[: -len(suffix)]) * factor
        return float(text)
    except ValueError:
        raise ValueError(f"{value!r} is not a duration (5, 5s, 500ms, 2m)") from None


def _count(value: str) -> int:
    """A whole number of things, at least 1."""
    number = int(value)
    if number < 1:
        raise ValueError(f"{value.strip()} is not 1 or more")
    return number


def _processes(value: str) -> int:
    """A number of processes, or 0 for one per core (`process_count`)."""
    number = int(value)
    if number < 0:
        raise ValueError(f"{value.strip()} is not 0 (one per core) or more")
    return number


AUTO_PROCESSES_MAX = 4
CONSUMERS_PER_CORE = 2  # `headwater consume`'s default (process_count)


def process_count(asked: int, per_core: int = 1) -> int:
    """`asked` processes, or for 0 `per_core` per CPU core this process may run on, at most
    `AUTO_PROCESSES_MAX`: ingest is CPU-bound Python, a process uses one core (an HTTP server's;
    a Kafka consumer waits for the broker and the store a third of its time, so two per core fill
    them), and beyond four the store's one writer at a time, not the cores, bounds it."""
    if asked > 0:
        return asked
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores * per_core, AUTO_PROCESSES_MAX))


def days(value: str) -> float:
    """`90`, `90d`, `12h`, `2w` → days (0 or more)."""
    text = value.strip().lower()
    try:
        for suffix, factor in (("w", 7.0), ("d", 1.0), ("h", 1 / 24)):
            if text.endswith(suffix):
                number = float(text[: -len(suffix)]) * factor
                break
        else:
            number = float(text)
    except ValueError:
        raise ValueError(f"{value!r} is not an age (90d, 12h, 2w, or a number of days)") from None
    if number < 0 or number != number:
        raise ValueError(f"{value!r} is not an age of 0 or more")
    return number


def _keys(value: str) -> tuple[str, ...]:
    return tuple(key.strip() for key in value.split(",") if key.strip())


def _size(value: str) -> int:
    """`1048576`, `512KiB`, `16MiB`, `1GiB`, `100K`, `2M` (B optional) → bytes."""
    text = value.strip().upper().removesuffix("B")
    try:
        for suffix, factor in (("KI", 1024), ("MI", 1024**2), ("GI", 1024**3), ("K", 1000), ("M", 1000**2)):
            if text.endswith(suffix):
                return int(float(text[: -len(suffix)]) * factor)
        return int(text)
    except ValueError:
        raise ValueError(f"{value!r} is not a size (bytes, or 512KiB, 16MiB, 1GiB)") from None


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

    @property
    def shown_default(self) -> str:
        """The default as its environment variable would spell it ("" when empty)."""
        return as_text(self.default)


def as_text(value: Any) -> str:
    """A setting's value as its `HEADWATER_*` variable spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return ",".join(item if isinstance(item, str) else "=".join(item) for item in value)
    return str(value)


def _setting(default: Any, help: str, parse: Callable[[str], Any] = str, *, in_repr: bool = True) -> Any:
    """A field of Settings that is a setting: its default, what it does and how its text is read.
    The one place a default is written; the CLI, `headwater settings` and the docs read it here."""
    return field(default=default, repr=in_repr, metadata={"help": help, "parse": parse})


@dataclass(frozen=True)
class Settings:
    """The resolved configuration every part of Headwater reads, and the registry of settings:
    each field made by `_setting` is one (SETTINGS lists them)."""

    database_url: str = _setting(
        DEFAULT_DATABASE_URL,
        "The store. `sqlite:///relative/path.db`, `sqlite:////absolute/path.db` or "
        "`postgresql://user@host:5432/dbname`.",
    )
    host: str = _setting("127.0.0.1", "Address the HTTP server listens on.")
    port: int = _setting(8008, "Port the HTTP server listens on.", int)
    write_keys: tuple[str, ...] = _setting(
        (),
        "Comma-separated API keys allowed to send events (`Authorization: Bearer <key>`). "
        "When set, writes need one of them (a read key gets 403, an unknown key 401); "
        "when empty, writes are open.",
        _keys,
    )
    read_keys: tuple[str, ...] = _setting(
        (),
        "Comma-separated API keys allowed to read. When set, reads need one of them (a write key "
        "gets 403, an unknown key 401); when empty, reads are open.",
        _keys,
    )
    insecure: bool = _setting(False, "Allow listening on a non-loopback address without write keys.", _bool)
    max_body_bytes: int = _setting(
        16 * 1024**2, "Largest request body accepted, after gzip (413 beyond); `16MiB`, `512KiB`.", _size
    )
    max_batch_events: int = _setting(50_000, "Most events accepted in one request (413 beyond).", _count)
    commit_batch_events: int = _setting(
        2_000, "Most events the writer groups into one durable commit (group commit).", _count
    )
    log_level: str = _setting("info", "Logging level: debug, info, warning, error.")
    workers: int = _setting(
        0,
        "HTTP server processes (0: one per core, at most 4). Ingest is CPU-bound Python, one core a "
        "process; each has its own group-commit writer (and Kafka consumer when enabled), open "
        "connections are kept even across them, and /metrics shows the sum of all of them.",
        _processes,
    )
    kafka_enabled: bool = _setting(
        False,
        "Consume OpenLineage events from Kafka inside `headwater serve` (`headwater consume` runs "
        "the consumer alone whatever this says).",
        _bool,
    )
    kafka_bootstrap_servers: str = _setting("localhost:9092", "Comma-separated Kafka brokers, host:port.")
    kafka_topics: tuple[str, ...] = _setting(
        ("openlineage.events",), "Comma-separated topics to consume.", _keys
    )
    kafka_generic_topics: tuple[str, ...] = _setting(
        ("lineage.generic",),
        "Comma-separated topics of generic events (FastScore style), consumed by the same consumer "
        "with the same guarantees; empty for none.",
        _keys,
    )
    kafka_group_id: str = _setting(
        "headwater", "Consumer group: consumers of one group share the partitions and its committed offsets."
    )
    kafka_batch_size: int = _setting(
        4_000, "Most messages consumed, stored in one durable commit and acknowledged together.", _count
    )
    kafka_poll_timeout: float = _setting(
        0.5, "Seconds the consumer waits for a batch to fill before storing what has come.", float
    )
    kafka_max_message_bytes: int = _setting(
        1024**2, "Largest message value accepted from Kafka; a larger one is dead-lettered.", _size
    )
    kafka_error_topic: bool = _setting(
        False,
        "Also produce every dead-lettered message to `<topic>.errors` (the table keeps them anyway).",
        _bool,
    )
    kafka_options: tuple[tuple[str, str], ...] = _setting(  # may hold secrets: kept out of repr
        (),
        "librdkafka options for the consumer (and error-topic producer), e.g. "
        "`security.protocol=SASL_SSL,sasl.mechanism=PLAIN,sasl.username=u,sasl.password=p`; "
        "in the TOML file a `[kafka_options]` table.",
        _options,
        in_repr=False,
    )
    spark_master: str = _setting(
        "local[*]",
        "Where the lineage pipeline runs Spark: `local[*]` (all cores of this machine), `local[N]`, "
        "or a cluster `spark://host:7077`.",
    )
    spark_driver_memory: str = _setting(
        "4g", "Memory of the pipeline's Spark driver JVM (in local mode the executors run inside it)."
    )
    pipeline_interval: float = _setting(
        5.0,
        "Longest wait between passes of the continuous pipeline (`5`, `500ms`, `2m`); new events "
        "start a pass sooner (the store is asked four times a second).",
        _seconds,
    )
    pipeline_batch_events: int = _setting(
        200_000,
        "Most events one pipeline batch takes (each is published with its checkpoint in one "
        "transaction; on SQLite, while ingest runs, fewer: a merge of about a second).",
        _count,
    )
    pipeline_partitions: int = _setting(
        0, "Partitions Spark splits a batch of events into (0: two per core Spark has).", int
    )
    pipeline_dogfood: bool = _setting(
        True,
        "Report each pipeline run as OpenLineage events (job `headwater.pipeline`) into the store.",
        _bool,
    )
    retention_days: float = _setting(
        0.0,
        "Keep events this many days (`90`, `90d`, `12h`); once a day `headwater up` and the "
        "continuous pipeline delete older ones and what only they supported in the model "
        "(0: keep every event). `headwater retention` applies a limit at once.",
        days,
    )
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)

    def override(self, **values: Any) -> Settings:
        """A copy with the given values (None means: keep), as the CLI options do."""
        given = {k: v for k, v in values.items() if v is not None}
        unknown = set(given) - set(_BY_NAME)
        if unknown:
            raise ConfigError(f"unknown settings: {', '.join(sorted(unknown))}")
        return replace(self, **given)


SETTINGS: tuple[Setting, ...] = tuple(
    Setting(f.name, f.default, f.metadata["help"], f.metadata["parse"])
    for f in fields(Settings)
    if "help" in f.metadata
)
_BY_NAME = {setting.name: setting for setting in SETTINGS}


def setting(name: str) -> Setting:
    """The setting of that name (KeyError for none)."""
    return _BY_NAME[name]


def to_environment(settings: Settings) -> dict[str, str]:
    """Every setting as the `HEADWATER_*` variable that reproduces it (for worker processes)."""
    return {setting.env: as_text(getattr(settings, setting.name)) for setting in SETTINGS}


def _coerce(setting: Setting, value: Any, origin: str) -> Any:
    try:
        if isinstance(value, str):
            return setting.parse(value)
        if setting.parse is _keys and isinstance(value, list):
            return tuple(str(v) for v in value)
        if (
            setting.parse in (int, _size, _count, _processes)
            and isinstance(value, int)
            and not isinstance(value, bool)
        ):
            return setting.parse(str(value))
        if setting.parse is _bool and isinstance(value, bool):
            return value
        if setting.parse is float and isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if setting.parse is days and isinstance(value, int | float) and not isinstance(value, bool):
            return days(str(value))
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
    path = Path(config_file or env.get(CONFIG_ENV) or DEFAULT_CONFIG_FILE)
    explicit = config_file is not None or CONFIG_ENV in env
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
    return Settings(**values, sources=sources)
