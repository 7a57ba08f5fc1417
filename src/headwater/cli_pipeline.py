"""`headwater pipeline run|rebuild`: the Spark pipeline from the command line, and the options and
opening of a pipeline that `headwater up` shares."""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from headwater.cli_options import (
    command_settings,
    database_option,
    log_level_option,
    setting_option,
    setup_logging,
)
from headwater.config import Settings
from headwater.errors import HeadwaterError

pipeline_options = [
    database_option,
    setting_option("--master", setting_name="spark_master"),
    setting_option("--batch-events", setting_name="pipeline_batch_events"),
    setting_option("--dogfood/--no-dogfood", setting_name="pipeline_dogfood"),
    log_level_option,
]
interval_option = setting_option("--interval", setting_name="pipeline_interval")


def with_pipeline_options(command: Any) -> Any:
    for option in reversed(pipeline_options):
        command = option(command)
    return command


def open_pipeline(
    settings: Settings, *, quiet: bool, store: Any = None, java_options: str = ""
) -> tuple[Any, Any, Any]:
    """Store (`store`, or one opened here), SparkSession and Pipeline for the settings, with a
    progress bar unless quiet."""
    from tqdm import tqdm

    from headwater.pipeline.runner import Pipeline
    from headwater.pipeline.session import spark_session

    try:
        store = store or open_settings_store(settings)
        click.echo(f"starting Spark ({settings.spark_master})…", err=True)
        spark = spark_session(
            settings.spark_master, driver_memory=settings.spark_driver_memory, java_options=java_options
        )
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    bar = None if quiet else tqdm(unit="step", desc="pipeline", leave=False, disable=None)

    def progress(step: str) -> None:
        if bar is not None:
            bar.set_postfix_str(step)
            bar.update()

    pipeline = Pipeline(
        spark,
        store,
        batch_events=settings.pipeline_batch_events,
        partitions=settings.pipeline_partitions,
        dogfood=settings.pipeline_dogfood,
        progress=progress,
    )
    if bar is not None:
        _, batches = pipeline.pending()
        bar.total = batches * 2 + 2
    return store, spark, pipeline


def open_settings_store(settings: Settings) -> Any:
    from headwater.store import open_store

    try:
        return open_store(settings.database_url)
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None


def _describe_pass(result: Any) -> str:
    if not result.batches and not result.graph:
        return f"nothing new (checkpoint seq {result.checkpoint})"
    return (
        f"{result.batches} batch(es), seq up to {result.checkpoint}, "
        f"graph {'updated' if result.graph else 'unchanged'}, "
        f"{result.seconds:.1f} s"
    )


def _published_by_running_pipeline(store: Any) -> bool:
    """When another pipeline runs on the store (`headwater up`'s, or a continuous one), wait for
    it to publish every event stored now rather than start a Spark of our own: True once it has;
    False when none runs, or one that stopped short of them (then this command runs a pass)."""
    from headwater.store import model

    if not model.pipeline_running(store):
        return False
    target = store.last_seq()
    click.echo(
        f"a pipeline is running on this store: waiting for it to publish up to seq {target}…",
        err=True,
    )
    if not model.published_by_other(store, target):
        return False
    checkpoint = model.read_state(store)[0]
    click.echo(f"published by the pipeline running on this store (checkpoint seq {checkpoint})")
    return True


@click.group(
    help="""The Spark pipeline that turns stored events into the lineage model.

    \b
    Once:          headwater pipeline run                   (new events since the last run)
    Keep up:       headwater pipeline run --continuous      (a pass as soon as events arrive)
    On a cluster:  headwater pipeline run --master spark://host:7077
    From scratch:  headwater pipeline rebuild
    Start faster:  headwater pipeline prepare                (once per machine; the set-up runs it)

    Each batch is published with its checkpoint in one transaction: stop it at any moment and
    the next run carries on, with the same model an uninterrupted run would have built.
    """
)
def pipeline() -> None:
    pass


@pipeline.command("run")
@with_pipeline_options
@click.option(
    "--continuous",
    is_flag=True,
    help="Keep running: a pass as soon as new events are stored, and at least every --interval.",
)
@interval_option
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def pipeline_run(ctx: click.Context, /, continuous: bool, quiet: bool, **options: Any) -> None:
    """Process the events above the checkpoint and publish the lineage model.

    When a pipeline already runs on the store (`headwater up`'s, or a continuous one), a one-off
    run waits for it to publish the events stored now instead of starting Spark.
    """
    from headwater.pipeline.session import one_off_jvm_options, run_in_background, stop_spark
    from headwater.store import model

    settings = command_settings(ctx, **options)
    setup_logging(settings.log_level)
    store, java_options = open_settings_store(settings), ""
    if not continuous:  # a one-off pass: no Spark for nothing, a quick-starting JVM for a little
        waiting = model.waiting(store)
        if waiting is None:
            click.echo(f"nothing new (checkpoint seq {model.read_state(store)[0]})")
            store.close()
            return
        if _published_by_running_pipeline(store):
            store.close()
            return
        java_options = one_off_jvm_options(waiting)
    else:
        run_in_background()
    store, spark, runner = open_pipeline(
        settings, quiet=quiet or continuous, store=store, java_options=java_options
    )
    try:
        if continuous:
            click.echo("pipeline: a pass as soon as new events are stored; Ctrl-C stops", err=True)
            stop = threading.Event()
            with stopping_on_signals(spark, stop):
                runner.continuous(
                    settings.pipeline_interval, stop, on_pass=daily_retention(settings, store, runner)
                )
        else:
            click.echo(_describe_pass(runner.run_once()))
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    finally:
        stop_spark(spark)
        store.close()


@pipeline.command("rebuild")
@with_pipeline_options
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.pass_context
def pipeline_rebuild(ctx: click.Context, /, quiet: bool, **options: Any) -> None:
    """Empty the lineage model and recompute it from every stored event."""
    from headwater.pipeline.session import one_off_jvm_options, stop_spark

    settings = command_settings(ctx, **options)
    setup_logging(settings.log_level)
    store = open_settings_store(settings)
    java_options = one_off_jvm_options(store.last_seq())  # a quick-starting JVM for few events
    store, spark, runner = open_pipeline(settings, quiet=True, store=store, java_options=java_options)
    try:
        click.echo(_describe_pass(runner.rebuild()))
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    finally:
        stop_spark(spark)
        store.close()


@pipeline.command("prepare")
@click.option("--force", is_flag=True, help="Record the classes again, even when this machine has them.")
@click.option("--remove", is_flag=True, help="Remove the recorded classes (Spark then starts as before).")
@click.option("--quiet", "-q", is_flag=True, help="Say nothing when the classes are recorded already.")
def pipeline_prepare(force: bool, remove: bool, quiet: bool) -> None:
    """Record the Java classes Spark loads, so that every later Spark start maps them.

    \b
    Each `pipeline run`, `rebuild` and `up` starts a Java VM that loads about 20,000 classes of
    Spark and its libraries. This runs a few small pipeline passes on a scratch store, with a VM
    that records the classes it loaded in a class-data archive (about 180 MB, under
    $XDG_CACHE_HOME/headwater or ~/.cache/headwater). Later VMs map the archive instead: a
    `pipeline run` over a few new events takes about 4 s less. The set-up script runs this
    once; run it again after a new Java or pyspark (until then Spark just starts without it).
    """
    from headwater.pipeline import class_archive
    from headwater.pipeline.session import SparkUnavailable, check_java, java_version_text

    if remove:
        click.echo(f"removed {class_archive.remove_all()} archive(s) from {class_archive.cache_dir()}")
        return
    try:
        check_java()
        if not (quiet and class_archive.prepared(java_version_text() or "")) or force:
            class_archive.prepare(java_version_text() or "", force=force, log=click.echo)
    except SparkUnavailable as exc:
        raise click.ClickException(exc.message) from None
    except class_archive.ArchiveError as exc:
        raise click.ClickException(exc.message) from None


def daily_retention(settings: Settings, store: Any, runner: Any) -> Any:
    """The continuous pipeline's pass hook that applies `retention_days` once a day. A failed
    retention is logged and tried again after the next pass: it never stops the pipeline (or
    `headwater up`'s server)."""
    from headwater.pipeline.retention import retain_daily

    def after_pass(_result: Any) -> None:
        try:
            retain_daily(settings.retention_days, store, lambda: runner)
        except HeadwaterError as exc:
            logging.getLogger("headwater.retention").warning("retention failed: %s", exc.message)
        except Exception:  # a store or Spark failure: the next pass tries again
            logging.getLogger("headwater.retention").exception("retention failed")

    return after_pass


def _cancel_jobs(spark: Any) -> None:
    """Cancel the Spark jobs in flight. The pass may have ended and the context stopped before
    this thread runs: then there is nothing left to cancel."""
    try:
        spark.sparkContext.cancelAllJobs()
    except Exception:  # a stopped context or a closed gateway: the stop already happened
        logging.getLogger("headwater.pipeline").debug("no Spark jobs to cancel", exc_info=True)


@contextmanager
def stopping_on_signals(spark: Any, stop: threading.Event) -> Iterator[None]:
    """Ctrl-C (or SIGTERM, to this process or to its whole process group: Spark's JVM ignores
    both, `session.outlive_stop_signals`) during a continuous pipeline: the running Spark jobs are
    cancelled and the loop stops; the pass in flight publishes nothing (each batch commits with
    its checkpoint, so the next start carries on). A second Ctrl-C leaves at once. Failures of the
    cancelled pass are the stop, not errors."""

    def interrupt(_signum: int, _frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        click.echo("stopping (Ctrl-C again to leave at once)", err=True)
        stop.set()
        # from another thread: this one may be inside a call to the JVM on the same connection
        threading.Thread(target=_cancel_jobs, args=(spark,), daemon=True).start()

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
        if stop.is_set():
            click.echo("stopped", err=True)
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
    except Exception:
        if not stop.is_set():
            raise
        click.echo("stopped during a pass: the next start carries on from the checkpoint", err=True)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
