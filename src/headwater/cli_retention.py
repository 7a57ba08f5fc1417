"""`headwater retention`: delete the events older than a limit, and what only they supported in the
lineage model (headwater.pipeline.retention); `--dry-run` only counts."""

from __future__ import annotations

from typing import Any

import click

from headwater.cli_options import (
    command_settings,
    database_option,
    log_level_option,
    setting_option,
    setup_logging,
)
from headwater.cli_pipeline import open_pipeline
from headwater.config import days
from headwater.errors import HeadwaterError


def _age(_ctx: click.Context, _param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return days(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.command()
@click.option(
    "--older-than",
    metavar="AGE",
    callback=_age,
    help="Delete events whose eventTime is older than this (`90d`, `12h`, `2w`, or days); "
    "default: the retention_days setting.",
)
@click.option("--dry-run", is_flag=True, help="Only count what would be deleted; change nothing.")
@database_option
@setting_option("--master", setting_name="spark_master")
@log_level_option
@click.pass_context
def retention(ctx: click.Context, /, older_than: float | None, dry_run: bool, **options: Any) -> None:
    """Delete the events older than an age, and what only they supported in the model.

    \b
    Count first:   headwater retention --older-than 90d --dry-run
    Then delete:   headwater retention --older-than 90d

    A run goes whole, when its newest event is past the limit; a run with a newer event stays
    whole. Generic events and dead letters past the limit go too. Deletion runs in small
    transactions, so ingest carries on; the model keeps only what the remaining events support
    (runs, their facets, jobs and datasets no remaining event names, versions recounted), as
    `headwater pipeline rebuild` would build it, without rebuilding it. Refreshing a published
    model starts Spark. `headwater up` applies the retention_days setting once a day.
    """
    from headwater.pipeline.retention import apply_retention, cutoff_for
    from headwater.pipeline.session import stop_spark
    from headwater.store import open_store

    settings = command_settings(ctx, **options)
    setup_logging(settings.log_level)
    age = older_than if older_than is not None else settings.retention_days
    if not age:
        raise click.UsageError("give --older-than AGE (or set retention_days)")
    opened: list[Any] = []

    def pipeline() -> Any:
        opened.append(open_pipeline(settings, quiet=True))
        return opened[-1][2]

    try:
        store = open_store(settings.database_url)
        try:
            report = apply_retention(store, cutoff_for(age), pipeline=pipeline, dry_run=dry_run)
        finally:
            store.close()
            for pipeline_store, spark, _ in opened:
                stop_spark(spark)
                pipeline_store.close()
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    for line in report.lines():
        click.echo(line)
