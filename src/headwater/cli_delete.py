"""`headwater delete dataset|job|namespace ID`: soft deletion, as the Marquez-compatible DELETE
routes do it (headwater.query.catalog): the model hides the node until an event stored afterwards
mentions it again; the events themselves stay."""

from __future__ import annotations

import click

from headwater.cli_options import database_option
from headwater.config import load_settings
from headwater.errors import HeadwaterError
from headwater.events.times import format_ticks, now_ticks
from headwater.query import catalog
from headwater.store import open_store


@click.group()
def delete() -> None:
    """Hide a dataset, job or namespace until a newer event mentions it (soft delete)."""


def _delete(ctx: click.Context, kind: str, ident: str, database_url: str | None) -> None:
    try:
        settings = load_settings(config_file=ctx.find_root().params.get("config")).override(
            database_url=database_url
        )
        store = open_store(settings.database_url)
        try:
            catalog.delete_by_id(store, kind, ident, format_ticks(now_ticks()))
        finally:
            store.close()
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    click.echo(f"deleted {kind} {ident} (hidden until an event stored from now on mentions it)")


@delete.command("dataset")
@click.argument("dataset_id", metavar="ID")
@database_option
@click.pass_context
def delete_dataset(ctx: click.Context, dataset_id: str, database_url: str | None) -> None:
    """Hide the dataset ID (dataset:NAMESPACE:NAME, or NAMESPACE:NAME) from lists, search and
    lineage."""
    _delete(ctx, "dataset", dataset_id, database_url)


@delete.command("job")
@click.argument("job_id", metavar="ID")
@database_option
@click.pass_context
def delete_job(ctx: click.Context, job_id: str, database_url: str | None) -> None:
    """Hide the job ID (job:NAMESPACE:NAME, or NAMESPACE:NAME) from lists, search and lineage."""
    _delete(ctx, "job", job_id, database_url)


@delete.command("namespace")
@click.argument("name", metavar="ID")
@database_option
@click.pass_context
def delete_namespace(ctx: click.Context, name: str, database_url: str | None) -> None:
    """Hide the namespace ID (its name) and every dataset and job in it."""
    _delete(ctx, "namespace", name, database_url)
