"""`headwater elements` and `headwater events`: generic events' elements and events, and the
newest OpenLineage events, read from the store as the browse API answers them."""

from __future__ import annotations

from typing import Any

import click
import msgspec
import orjson

from headwater.cli_options import database_option
from headwater.config import Settings, load_settings
from headwater.errors import HeadwaterError
from headwater.store import EventStore, open_store
from headwater.store.generic import GenericStore, generic_store

json_option = click.option("--json", "as_json", is_flag=True, help="JSON, as the browse API answers.")
limit_option = click.option(
    "--limit", default=100, show_default=True, type=click.IntRange(1, 1000), help="How many."
)


def _settings(ctx: click.Context, database_url: str | None) -> Settings:
    try:
        return load_settings(config_file=ctx.find_root().params.get("config")).override(
            database_url=database_url
        )
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None


def _read(ctx: click.Context, database_url: str | None, read: Any) -> Any:
    """Open the store, answer `read(generic store, store)`, close it; errors as CLI errors."""
    settings = _settings(ctx, database_url)
    try:
        store: EventStore = open_store(settings.database_url)
        try:
            return read(generic_store(store), store)
        finally:
            store.close()
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None


def _echo_json(value: Any) -> None:
    click.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())


@click.group(invoke_without_command=True)
@database_option
@click.option("--type", "element_type", help="Only elements of this type (e.g. model).")
@limit_option
@json_option
@click.pass_context
def elements(
    ctx: click.Context, database_url: str | None, element_type: str | None, limit: int, as_json: bool
) -> None:
    """List the elements of generic events (`headwater elements show ID` for one).

    An element is one (type, description) pair, however many events name it.
    """
    if ctx.invoked_subcommand is not None:
        return
    from headwater.query import generic

    def read(g: GenericStore, _store: EventStore) -> list[dict[str, Any]]:
        return generic.elements(g, element_type, str(limit), None)

    rows = _read(ctx, database_url, read)
    if as_json:
        _echo_json(rows)
        return
    for row in rows:
        click.echo(f"{row['id']:>8}  {row['type']}  {row['description']}")
    click.echo(f"{len(rows)} element(s)" + (f" of type {element_type}" if element_type else ""))


@elements.command("show")
@click.argument("element_id")
@database_option
@limit_option
@json_option
@click.pass_context
def show_element(
    ctx: click.Context, element_id: str, database_url: str | None, limit: int, as_json: bool
) -> None:
    """One element: its latest tags and its events, newest first."""
    from headwater.query import generic

    answer = _read(ctx, database_url, lambda g, _s: generic.element(g, element_id, str(limit), None))
    if as_json:
        _echo_json(answer)
        return
    click.echo(f"element {answer['id']}: {answer['type']} {answer['description']}")
    click.echo("tags (latest value of each key):")
    for key, value in answer["tags"].items():
        click.echo(f"  {key} = {value}")
    click.echo(f"events ({len(answer['events'])} newest):")
    for event in answer["events"]:
        click.echo(f"  {event['id']:>8}  {event['timestamp']}  {event['type']}: {event['description']}")


@click.command()
@database_option
@click.option("--generic", is_flag=True, help="Generic events (FastScore style) instead of OpenLineage ones.")
@click.option("--type", "event_type", help="With --generic: only events of this type.")
@limit_option
@json_option
@click.pass_context
def events(
    ctx: click.Context,
    database_url: str | None,
    generic: bool,
    event_type: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """List the newest stored events: OpenLineage ones, or generic ones with --generic."""
    from headwater.query import generic as browse

    if generic:
        rows = _read(
            ctx,
            database_url,
            lambda g, _s: browse.events(
                g,
                event_type=event_type,
                element_id=None,
                after=None,
                before=None,
                limit=str(limit),
                offset=None,
            ),
        )
        if as_json:
            _echo_json(rows)
            return
        for row in rows:
            click.echo(f"{row['id']:>8}  {row['timestamp']}  {row['type']}: {row['description']}")
        click.echo(f"{len(rows)} generic event(s)")
        return

    def newest(_g: GenericStore, store: EventStore) -> list[Any]:
        return store.list_events(after_time=None, before_time=None, descending=True, limit=limit, offset=0)

    stored = [e for e in _read(ctx, database_url, newest) if e.kind != "generic"]
    if as_json:
        # indented from the stored text, never parsed into Python: every number stays as sent
        click.echo(msgspec.json.format("[" + ",".join(e.payload for e in stored) + "]", indent=2))
        return
    for e in stored:
        subject = (
            f"{e.job_namespace}:{e.job_name}" if e.job_name else f"{e.dataset_namespace}:{e.dataset_name}"
        )
        click.echo(f"{e.event_time}  {e.kind:<7}  {e.event_type or '-':<8}  {subject}  {e.event_id}")
    click.echo(f"{len(stored)} OpenLineage event(s)")
