"""The `headwater` command: serve, ingest files, manage the database, show the settings."""

from __future__ import annotations

import ipaddress
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from headwater import __version__
from headwater.config import SETTINGS, Settings, load_settings, redact_url
from headwater.errors import HeadwaterError

log = logging.getLogger("headwater")


def _settings(ctx: click.Context, **overrides: Any) -> Settings:
    config_file = ctx.find_root().params.get("config")
    try:
        return load_settings(config_file=config_file).override(**overrides)
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None


def _setup_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
    )


database_option = click.option(
    "--database-url",
    help="Store URL (default: HEADWATER_DATABASE_URL, else sqlite:///.headwater/headwater.db).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="headwater")
@click.option(
    "--config",
    type=click.Path(dir_okay=False),
    help="TOML settings file (default: HEADWATER_CONFIG, else ./headwater.toml when present).",
)
def main(config: str | None) -> None:
    """Headwater: an OpenLineage lineage server.

    \b
    Start it:               headwater serve
    Send it events:         POST http://127.0.0.1:8008/api/v1/lineage (the OpenLineage HTTP transport)
    Replay event files:     headwater ingest events.ndjson more/
    Read a run's events:    GET /api/atlas/v2/openlineage/runs/{runId}
    See every setting:      headwater settings
    """


@main.command()
@click.option("--host", help="Listen address (default 127.0.0.1).")
@click.option("--port", type=int, help="Port (default 8008).")
@database_option
@click.option("--write-key", "write_keys", multiple=True, help="API key allowed to send events (repeatable).")
@click.option("--read-key", "read_keys", multiple=True, help="API key allowed to read (repeatable).")
@click.option("--max-body-bytes", type=int, help="Largest request body accepted (default 16 MiB).")
@click.option("--insecure", is_flag=True, default=None, help="Allow a non-loopback address without keys.")
@click.option("--log-level", help="debug, info, warning or error.")
@click.pass_context
def serve(ctx: click.Context, /, **options: Any) -> None:
    """Run the HTTP server: ingest, run-events API, OpenAPI docs at /docs."""
    options["write_keys"] = tuple(options["write_keys"]) or None
    options["read_keys"] = tuple(options["read_keys"]) or None
    settings = _settings(ctx, **options)
    _setup_logging(settings.log_level)
    if not _is_loopback(settings.host):
        if not settings.write_keys and not settings.insecure:
            raise click.ClickException(
                f"refusing to listen on {settings.host} without write keys: anyone who can reach it could "
                "write lineage. Set --write-key (HEADWATER_WRITE_KEYS), and --read-key "
                "(HEADWATER_READ_KEYS) to protect reads too, or pass --insecure if that is what you want."
            )
        if not settings.write_keys:
            log.warning("listening on %s with open writes (--insecure)", settings.host)
        if not settings.read_keys:
            log.warning("listening on %s with open reads: set --read-key to protect them", settings.host)

    import uvicorn

    from headwater.api.app import create_app
    from headwater.store import open_store

    try:
        store = open_store(settings.database_url)
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    app = create_app(settings, store)
    click.echo(
        f"Headwater {__version__}: store {store.backend} ({redact_url(settings.database_url)})\n"
        f"Send OpenLineage events to http://{settings.host}:{settings.port}/api/v1/lineage\n"
        f"API docs at http://{settings.host}:{settings.port}/docs",
        err=True,
    )
    try:
        uvicorn.run(
            app,
            host=settings.host,
            port=settings.port,
            log_level=settings.log_level.lower(),
            access_log=settings.log_level.lower() == "debug",
            loop="uvloop",
            http="httptools",
        )
    finally:
        store.close()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _files(paths: tuple[str, ...]) -> Iterator[Path]:
    for name in paths:
        path = Path(name)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and child.suffix.lower() in {".json", ".ndjson", ".jsonl", ".gz"}:
                    yield child
        elif path.exists():
            yield path
        else:
            raise click.BadParameter(f"{name} does not exist", param_hint="PATH")


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@database_option
@click.option("--keep-going", is_flag=True, help="Exit 0 even when some events are rejected.")
@click.option(
    "--batch-size",
    default=1000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Events per durable commit.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def ingest(
    ctx: click.Context,
    paths: tuple[str, ...],
    database_url: str | None,
    keep_going: bool,
    batch_size: int,
    quiet: bool,
) -> None:
    """Replay OpenLineage events from files and folders into the store.

    Each PATH is a .json file (one event or an array), an .ndjson/.jsonl file (one event per line),
    either of them gzipped (.gz), or a folder searched for such files. Events go through the same
    validation as HTTP; a summary lists what was rejected and why. Exit status 1 when any event is
    rejected, unless --keep-going.
    """
    from headwater.ingest.replay import replay_files
    from headwater.store import open_store

    settings = _settings(ctx, database_url=database_url)
    _setup_logging(settings.log_level)
    files = list(_files(paths))
    try:
        store = open_store(settings.database_url)
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    try:
        summary = replay_files(store, files, batch_size=batch_size, progress=not quiet)
    finally:
        store.close()
    click.echo(
        f"{summary.files} file(s): {summary.stored} stored, {summary.duplicates} already stored, "
        f"{summary.rejected} rejected, {summary.warnings} with facet warnings."
    )
    for line in summary.rejections[:50]:
        click.echo(f"  rejected {line}", err=True)
    if len(summary.rejections) > 50:
        click.echo(f"  … and {len(summary.rejections) - 50} more", err=True)
    if summary.rejected and not keep_going:
        sys.exit(1)


@main.group()
def db() -> None:
    """Manage the store's database."""


@db.command()
@database_option
@click.pass_context
def upgrade(ctx: click.Context, database_url: str | None) -> None:
    """Apply the schema migrations not applied yet (serve and ingest also do this on start)."""
    from headwater.store import open_store

    settings = _settings(ctx, database_url=database_url)
    try:
        store = open_store(settings.database_url, migrate=False)
        applied = store.migrate()
        version = store.schema_version()
        store.close()
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    if applied:
        click.echo(f"applied migrations {', '.join(map(str, applied))}; schema version {version}")
    else:
        click.echo(f"schema is up to date (version {version})")


@main.command("settings")
@click.pass_context
def show_settings(ctx: click.Context) -> None:
    """List every setting with its value, where the value came from, and what it does."""
    settings = _settings(ctx)
    for setting in SETTINGS:
        value = getattr(settings, setting.name)
        if setting.name.endswith("_keys"):
            value = f"{len(value)} key(s)"
        elif setting.name == "database_url":
            value = redact_url(value)
        source = settings.sources.get(setting.name, "default")
        click.echo(f"{setting.env}={value}  [{source}]\n    {setting.help}")
