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
@click.option("--no-convert", is_flag=True, help="Apply the migrations only; convert the events later.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def upgrade(ctx: click.Context, database_url: str | None, no_convert: bool, quiet: bool) -> None:
    """Apply the schema migrations not applied yet, then convert older events.

    Serve and ingest also apply the migrations on start, but only this converts the events stored
    before facets were kept once, packs the facet values and event cores stored before they
    were packed, and moves the cores kept as text to the `core` column as bytes (PostgreSQL's
    `~` and base64 before migration 0018): 2,000 to a transaction, with a progress bar; interrupted,
    it goes on where it stopped when run again. A store serves while it is converted, and serves
    a half-converted store as well."""
    from tqdm import tqdm

    from headwater.store import open_store
    from headwater.store.facet_conversion import convert_store, pack_store, pending_conversion

    settings = command_settings(ctx, database_url=database_url)
    try:
        store = open_store(settings.database_url, migrate=False)
        try:
            applied = store.migrate()
            version = store.schema_version()
            if applied:
                click.echo(f"applied migrations {', '.join(map(str, applied))}; schema version {version}")
            else:
                click.echo(f"schema is up to date (version {version})")
            if no_convert:
                return
            pending = pending_conversion(store)
            if pending:
                with tqdm(total=pending, unit="event", disable=quiet, desc="convert") as bar:

                    def advance(events: int) -> None:
                        bar.update(events)

                    split = convert_store(store, progress=advance)
                    packed = pack_store(store, progress=advance)
                if split:
                    click.echo(f"converted {split:,} event(s): each distinct facet value is kept once")
                if packed:
                    click.echo(f"packed {packed:,} facet value(s) and event core(s), each core as bytes")
        finally:
            store.close()
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None


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
