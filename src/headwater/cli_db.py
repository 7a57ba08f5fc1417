"""`headwater db upgrade|backup`: the store's schema and its copies."""

from __future__ import annotations

import click

from headwater.cli_options import command_settings, database_option
from headwater.config import redact_url
from headwater.errors import HeadwaterError


@click.group()
def db() -> None:
    """Manage the store's database."""


@db.command()
@database_option
@click.pass_context
def upgrade(ctx: click.Context, database_url: str | None) -> None:
    """Apply the schema migrations not applied yet (serve and ingest also do this on start)."""
    from headwater.store import open_store

    settings = command_settings(ctx, database_url=database_url)
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


@db.command()
@click.argument("path", type=click.Path(dir_okay=False))
@database_option
@click.option("--force", is_flag=True, help="Replace PATH when it exists.")
@click.pass_context
def backup(ctx: click.Context, path: str, database_url: str | None, force: bool) -> None:
    """Copy a SQLite store to PATH while it keeps serving (SQLite's online backup).

    The copy is the store as of one commit, whole transactions only; ingest and reads go on
    meanwhile. Restore: stop Headwater, remove the store's file with its -wal and -shm files, and
    put the copy in its place (docs/operations.md). For PostgreSQL use pg_dump; this says how.
    """
    from headwater.store.backup import backup_store

    settings = command_settings(ctx, database_url=database_url)
    try:
        summary = backup_store(settings.database_url, path, overwrite=force)
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    click.echo(
        f"backed up {redact_url(settings.database_url)} to {summary.path}: {summary.events} event(s) up to "
        f"seq {summary.last_seq}, schema version {summary.schema_version}, "
        f"{summary.bytes / 1024**2:.1f} MiB in {summary.seconds:.1f} s"
    )
