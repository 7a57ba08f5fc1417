"""The `headwater` command: its group, and serve, up, ingest, consume, lineage, errors, status and
settings; `pipeline` is in cli_pipeline.py, `db` in cli_db.py, `elements`/`events` in cli_elements.py."""

from __future__ import annotations

import ipaddress
import logging
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from headwater import __version__
from headwater.cli_db import db
from headwater.cli_delete import delete
from headwater.cli_elements import elements, events
from headwater.cli_options import (
    command_settings,
    database_option,
    log_level_option,
    setting_option,
    setup_logging,
)
from headwater.cli_pipeline import (
    daily_retention,
    interval_option,
    open_pipeline,
    pipeline,
    stopping_on_signals,
    with_pipeline_options,
)
from headwater.cli_retention import retention
from headwater.config import (
    CONFIG_ENV,
    CONSUMERS_PER_CORE,
    DEFAULT_CONFIG_FILE,
    SETTINGS,
    Settings,
    process_count,
    redact_options,
    redact_url,
    to_environment,
)
from headwater.errors import HeadwaterError
from headwater.lifetimes import ended_with_parent

log = logging.getLogger("headwater")


_DEFAULTS = Settings()
_SERVER = f"http://{_DEFAULTS.host}:{_DEFAULTS.port}"


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    help=f"""Headwater: an OpenLineage lineage server.

    \b
    Start everything:       headwater up            (server + lineage pipeline; --demo for sample data)
    Start the server only:  headwater serve
    Build the lineage:      headwater pipeline run  (or --continuous)
    Send it events:         POST {_SERVER}/api/v1/lineage (the OpenLineage HTTP transport)
    Replay event files:     headwater ingest events.ndjson more/   (--generic: FastScore-style events)
    Browse generic events:  headwater elements --type model · headwater events --generic
    Consume from Kafka:     headwater consume (or HEADWATER_KAFKA_ENABLED=true headwater serve)
    Read a run's events:    GET /api/atlas/v2/openlineage/runs/{{runId}}
    Show a node's lineage:  headwater lineage dataset:{{namespace}}:{{name}} --direction up
    Back up the store:      headwater db backup PATH
    See every setting:      headwater settings
    """,
)
@click.version_option(__version__, prog_name="headwater")
@click.option(
    "--config",
    type=click.Path(dir_okay=False),
    help=f"TOML settings file (default: {CONFIG_ENV}, else ./{DEFAULT_CONFIG_FILE} when present).",
)
def main(config: str | None) -> None:
    pass


host_option = setting_option("--host", setting_name="host")
port_option = setting_option("--port", setting_name="port")


def _repeated(values: tuple[tuple[str, ...], ...]) -> tuple[str, ...] | None:
    """A repeatable option's values, each comma-separated like its variable: flattened, None when
    not given (the setting then keeps its value)."""
    return tuple(item for value in values for item in value) or None


@main.command()
@host_option
@port_option
@database_option
@setting_option("--write-key", "write_keys", setting_name="write_keys", multiple=True)
@setting_option("--read-key", "read_keys", setting_name="read_keys", multiple=True)
@setting_option("--max-body-bytes", setting_name="max_body_bytes")
@setting_option("--insecure", setting_name="insecure")
@log_level_option
@setting_option("--workers", setting_name="workers")
@click.pass_context
def serve(ctx: click.Context, /, **options: Any) -> None:
    """Run the HTTP server: ingest, run-events API, OpenAPI docs at /docs."""
    options["write_keys"] = _repeated(options["write_keys"])
    options["read_keys"] = _repeated(options["read_keys"])
    settings = command_settings(ctx, **options)
    setup_logging(settings.log_level)
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
    from headwater.api.workers import reuse_port_supported, run_workers
    from headwater.store import open_store

    try:
        store = open_store(settings.database_url)  # migrations run here, once, before any worker
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    workers = process_count(settings.workers)
    app: Any
    if workers > 1:
        # Worker processes rebuild the same settings from the environment.
        os.environ.update(to_environment(settings))
        os.environ.pop("HEADWATER_CONFIG", None)
        app = "headwater.api.app:create_app_from_environment"
    else:
        app = create_app(settings, store)
    click.echo(
        f"Headwater {__version__}: store {store.backend} ({redact_url(settings.database_url)}), "
        f"{workers} server process{'es' if workers > 1 else ''}\n"
        f"Send OpenLineage events to http://{settings.host}:{settings.port}/api/v1/lineage\n"
        f"API docs at http://{settings.host}:{settings.port}/docs"
        + (
            f"\nConsuming Kafka topics {', '.join(settings.kafka_topics)} from "
            f"{settings.kafka_bootstrap_servers}"
            if settings.kafka_enabled
            else ""
        ),
        err=True,
    )
    server_options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_level": settings.log_level.lower(),
        "access_log": settings.log_level.lower() == "debug",
        "loop": "uvloop",
        "http": "headwater.api.http_protocol:IngestProtocol",  # uvicorn's httptools, ingest leaner
    }
    try:
        if workers > 1 and reuse_port_supported():
            try:
                status = run_workers(workers, {"app": app, "factory": True, **server_options})
            except OSError as exc:
                where = f"{settings.host}:{settings.port}"
                raise click.ClickException(f"cannot listen on {where}: {exc}") from None
            if status:
                raise click.ClickException(f"a server process exited with status {status}")
            return
        uvicorn.run(app, factory=workers > 1, workers=workers, **server_options)
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
@click.option("--generic", is_flag=True, help="The files hold generic events (FastScore style).")
@click.pass_context
def ingest(
    ctx: click.Context,
    paths: tuple[str, ...],
    database_url: str | None,
    keep_going: bool,
    batch_size: int,
    quiet: bool,
    generic: bool,
) -> None:
    """Replay OpenLineage events (or, with --generic, generic events) from files and folders.

    Each PATH is a .json file (one event or an array), an .ndjson/.jsonl file (one event per line),
    either of them gzipped (.gz), or a folder searched for such files. Events go through the same
    validation as HTTP; a summary lists what was rejected and why. Exit status 1 when any event is
    rejected, unless --keep-going.

    An NDJSON file is read a few MB at a time, so files of any size replay in little memory; a
    .json file is read whole. From 32 MB of files on, events are validated in other processes
    (one per core but one, up to 4) while this one stores them.
    """
    from headwater.ingest.generic import replay_generic_files
    from headwater.ingest.replay import auto_workers, replay_files
    from headwater.store import open_store

    settings = command_settings(ctx, database_url=database_url)
    setup_logging(settings.log_level)
    files = list(_files(paths))
    try:
        store = open_store(settings.database_url)
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    try:
        replay = replay_generic_files if generic else replay_files
        summary = replay(store, files, batch_size=batch_size, progress=not quiet, workers=auto_workers(files))
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    finally:
        store.close()
    click.echo(
        f"{summary.files} file(s): {summary.stored} stored, {summary.duplicates} already stored, "
        f"{summary.rejected} rejected, {summary.warnings} with warnings."
    )
    for line in summary.rejections[:50]:
        click.echo(f"  rejected {line}", err=True)
    if len(summary.rejections) > 50:
        click.echo(f"  … and {len(summary.rejections) - 50} more", err=True)
    if summary.rejected and not keep_going:
        sys.exit(1)


@main.command()
@database_option
@setting_option("--bootstrap-servers", setting_name="kafka_bootstrap_servers")
@setting_option("--topic", "kafka_topics", setting_name="kafka_topics", multiple=True)
@setting_option("--generic-topic", "kafka_generic_topics", setting_name="kafka_generic_topics", multiple=True)
@setting_option("--group-id", setting_name="kafka_group_id")
@click.option(
    "--metrics-port",
    type=int,
    help="Serve GET /metrics (Prometheus) on HEADWATER_HOST:PORT: the consumers' counters and lag "
    "(the sum of their processes), and how far the pipeline has published the store's events.",
)
@click.option(
    "--processes",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Consumers of the group to run, a process each; they share the partitions and /metrics "
    "shows their sum. 0: two per core (a consumer waits for the broker and the store part of the "
    "time), at most 4.",
)
@log_level_option
@click.pass_context
def consume(ctx: click.Context, /, metrics_port: int | None, processes: int, **options: Any) -> None:
    """Consume OpenLineage events from Kafka into the store, until SIGINT or SIGTERM.

    What `serve` does too when HEADWATER_KAFKA_ENABLED is true; run it alone to scale the consumer
    apart from the HTTP server (consumers of one group share the partitions). Offsets are
    committed once the events are durable; bad messages go to the dead letters (`headwater errors`).
    """
    from headwater.ingest.kafka import ConsumeTotals, all_topics, check_settings
    from headwater.ingest.kafka_processes import consume_in_processes
    from headwater.store import open_store

    options["kafka_topics"] = _repeated(options["kafka_topics"])
    options["kafka_generic_topics"] = _repeated(options["kafka_generic_topics"])
    settings = command_settings(ctx, **options)
    setup_logging(settings.log_level)
    try:
        check_settings(settings)
        store = open_store(settings.database_url)  # migrated once, before the processes share it
        backend = store.backend
        store.close()
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    processes = process_count(processes, per_core=CONSUMERS_PER_CORE)
    click.echo(
        f"Headwater {__version__}: consuming {', '.join(all_topics(settings))} from "
        f"{settings.kafka_bootstrap_servers} (group {settings.kafka_group_id}, {processes} process(es)) "
        f"into {backend} ({redact_url(settings.database_url)})",
        err=True,
    )

    stops: list[Callable[[], None]] = []

    def started() -> None:  # after the forks: the metrics' store is this process's own
        if metrics_port is None:
            return
        try:
            stops.append(_serve_metrics(settings.host, metrics_port, settings.database_url))
        except OSError as exc:
            raise click.ClickException(
                f"cannot serve /metrics on {settings.host}:{metrics_port}: {exc.strerror or exc}"
            ) from None

    try:
        failed, each = consume_in_processes(settings, processes, started=started)
    finally:
        for stop in stops:
            stop()
    t = sum(each, ConsumeTotals())
    shares = f" ({', '.join(str(p.consumed) for p in each)} by process)" if len(each) > 1 else ""
    click.echo(
        f"{t.consumed} message(s) consumed{shares}: {t.stored} stored, {t.duplicates} already stored, "
        f"{t.dead_letters} dead-lettered.",
        err=True,
    )
    if failed:
        sys.exit(1)


def _serve_metrics(host: str, port: int, database_url: str) -> Callable[[], None]:
    """Serve GET /metrics in a thread: the consumers' metrics and the pipeline's progress, read
    from a store opened here. Returns what stops it and closes that store."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from headwater.api.metrics_routes import PROMETHEUS_TEXT
    from headwater.ingest import metrics_shared
    from headwater.query.pipeline_gauges import pipeline_metrics
    from headwater.store import open_store

    store = open_store(database_url)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = self.path.split("?", 1)[0] == "/metrics"
            text = metrics_shared.render() + pipeline_metrics(store) if found else "not found: try /metrics\n"
            body = text.encode()
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", PROMETHEUS_TEXT)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    try:
        server = ThreadingHTTPServer((host, port), Handler)
    except OSError:
        store.close()
        raise
    threading.Thread(target=server.serve_forever, name="headwater-metrics", daemon=True).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        store.close()

    return stop


@main.command("lineage")
@click.argument("node_id")
@database_option
@click.option(
    "--direction",
    type=click.Choice(["up", "down", "both"]),
    default="both",
    show_default=True,
    help="Upstream (what it comes from), downstream (what comes from it), or both.",
)
@click.option("--depth", default=20, show_default=True, type=click.IntRange(0, 1000), help="Jobs deep.")
@click.option(
    "--limit", default=500, show_default=True, type=click.IntRange(1, 100_000), help="Nodes at most."
)
@click.option("--as-of", help="The lineage as it stood at this time (ISO 8601, e.g. 2024-05-01T10:00:00Z).")
@click.option("--no-jobs", is_flag=True, help="Datasets only: join each job's inputs to its outputs.")
@click.option(
    "--format",
    "output",
    type=click.Choice(["table", "json", "dot"]),
    default="table",
    show_default=True,
    help="table: one line per node; json: vertices and edges; dot: Graphviz (pipe to `dot -Tsvg`).",
)
@click.pass_context
def lineage_command(
    ctx: click.Context,
    /,
    node_id: str,
    database_url: str | None,
    direction: str,
    depth: int,
    limit: int,
    as_of: str | None,
    no_jobs: bool,
    output: str,
) -> None:
    """Show the lineage of NODE_ID from the model the pipeline built.

    \b
    NODE_ID is dataset:{namespace}:{name}, job:{namespace}:{name} or, for column lineage,
    datasetField:{namespace}:{dataset}:{field}. For example:
      headwater lineage dataset:warehouse:public.orders --direction up
      headwater lineage job:airflow:etl.load --depth 2 --format dot | dot -Tsvg > lineage.svg
      headwater lineage datasetField:warehouse:public.orders:total --as-of 2024-05-01T00:00:00Z

    Lineage is directed: upstream follows what the node is made from, downstream what is made from
    it; jobs that merely read the same dataset are not included.
    """
    import orjson

    from headwater.query.lineage import LineageQuery, TraversalDirection, lineage
    from headwater.query.lineage_json import warehouse_graph
    from headwater.query.lineage_text import as_dot, as_table
    from headwater.query.times import parse_time_param
    from headwater.store import open_store

    settings = command_settings(ctx, database_url=database_url)
    ways: dict[str, TraversalDirection] = {"up": "upstream", "down": "downstream", "both": "both"}
    try:
        query = LineageQuery(
            node_id,
            ways[direction],
            depth,
            limit,
            parse_time_param("--as-of", as_of),
            not no_jobs,
        )
        store = open_store(settings.database_url)
        try:
            with store.snapshot():
                result = lineage(store, query)
        finally:
            store.close()
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    if output == "json":
        click.echo(
            orjson.dumps(warehouse_graph(result, ways[direction]), option=orjson.OPT_INDENT_2).decode()
        )
    elif output == "dot":
        click.echo(as_dot(result))
    else:
        click.echo(as_table(result))


@main.command("errors")
@database_option
@click.option("--topic", help="Only this topic's dead letters.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(min=1), help="How many.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line, with the whole value.")
@click.pass_context
def errors(
    ctx: click.Context, database_url: str | None, topic: str | None, limit: int, as_json: bool
) -> None:
    """List dead letters, newest first: Kafka messages that were empty, too large, not JSON or not
    a valid event, with their topic, partition, offset, key, error and value."""
    import orjson

    from headwater.ingest.dead_letters import dead_letter_json
    from headwater.store import open_store

    settings = command_settings(ctx, database_url=database_url)
    try:
        store = open_store(settings.database_url)
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    try:
        letters = store.dead_letters(topic=topic, limit=limit, before_id=None)
        total = store.count_dead_letters(topic=topic)
    finally:
        store.close()
    for letter in letters:
        if as_json:
            click.echo(orjson.dumps(dead_letter_json(letter)).decode())
            continue
        key = letter.key.decode(errors="replace") if letter.key is not None else "-"
        value = (letter.value or b"").decode(errors="replace").replace("\n", " ")
        preview = value if len(value) <= 120 else value[:120] + "…"
        click.echo(
            f"#{letter.id} {letter.received_at} {letter.topic}[{letter.partition}]@{letter.offset} "
            f"key={key}\n    error: {letter.error}\n    value ({len(letter.value or b'')} bytes): {preview}"
        )
    if not as_json:
        click.echo(f"{len(letters)} of {total} dead letter(s) shown.")


@main.command()
@database_option
@click.option("--url", help="A running Headwater to read ingest counters from (default http://HOST:PORT).")
@click.pass_context
def status(ctx: click.Context, database_url: str | None, url: str | None) -> None:
    """The store's counts, how far the pipeline has published its events, the Kafka consumer
    group's lag per partition (asked of the brokers), and a running server's ingest counters (from
    its /metrics)."""
    import urllib.error
    import urllib.request

    from headwater.ingest.metrics import parse_samples
    from headwater.query.overview import pipeline_progress
    from headwater.store import open_store

    settings = command_settings(ctx, database_url=database_url)
    try:
        store = open_store(settings.database_url)
        try:
            events = store.count_events(after_time=None, before_time=None)
            letters = store.count_dead_letters(topic=None)
            progress = pipeline_progress(store)
        finally:
            store.close()
    except HeadwaterError as exc:
        raise click.ClickException(exc.message) from None
    click.echo(f"store {redact_url(settings.database_url)}: {events} event(s), {letters} dead letter(s)")
    click.echo(_pipeline_line(progress))

    if settings.kafka_enabled or "kafka_bootstrap_servers" in settings.sources:
        _echo_group_lag(settings)
    else:
        click.echo("kafka: not configured (HEADWATER_KAFKA_ENABLED, HEADWATER_KAFKA_BOOTSTRAP_SERVERS)")

    url = url or f"http://{settings.host}:{settings.port}"
    try:  # the standard library's client: httpx is only a development dependency
        with urllib.request.urlopen(f"{url.rstrip('/')}/metrics", timeout=3) as answer:
            text = answer.read().decode()
    except (OSError, ValueError) as exc:  # URLError and HTTPError are OSErrors
        click.echo(f"server {url}: no metrics ({exc})")
        return
    totals: dict[str, float] = {}
    for name, labels, value in parse_samples(text):
        if name == "headwater_ingest_events_total":
            totals[f"{labels['source']} {labels['outcome']}"] = value
        elif name in ("headwater_kafka_messages_consumed_total", "headwater_kafka_dead_letters_total"):
            short = name.removeprefix("headwater_kafka_").removesuffix("_total").replace("_", " ")
            totals[f"kafka {short}"] = totals.get(f"kafka {short}", 0) + value
        elif name == "headwater_http_ingest_requests_total":
            totals[f"http requests {labels['status']}"] = value
        elif name == "headwater_http_ingest_seconds_sum":
            totals["http seconds"] = value
        elif name == "headwater_http_ingest_seconds_count":
            totals["http timed"] = value
    timed = totals.pop("http timed", 0)
    seconds = totals.pop("http seconds", 0)
    click.echo(f"server {url}:")
    for label, value in sorted(totals.items()):
        click.echo(f"  {label}: {int(value)}")
    if timed:
        click.echo(f"  http mean latency: {seconds / timed * 1000:.1f} ms")


def _pipeline_line(progress: dict[str, Any]) -> str:
    """`headwater status`'s line on the pipeline (`query.overview.pipeline_progress`)."""
    waiting = f"{progress['waitingEvents']:,}{'+' if progress['waitingMore'] else ''} event(s) waiting"
    if progress["waitingReports"]:
        waiting += f" ({progress['waitingReports']} of them its report of its last pass)"
    if progress["publishedAt"] is None:
        return f"pipeline: never ran on this store; {waiting} (headwater pipeline run, or headwater up)"
    published, graph = progress["publishedThrough"], progress["graphThrough"]
    behind = "" if graph >= published else f", its graph through {graph}"
    return (
        f"pipeline: published through seq {published} of {progress['storedThrough']}{behind}; "
        f"{waiting}; last published {progress['publishedAt']}"
    )


def _echo_group_lag(settings: Settings) -> None:
    from confluent_kafka import KafkaException

    from headwater.ingest.kafka import group_lag

    try:
        lags = group_lag(settings, timeout=5)
    except (KafkaException, HeadwaterError) as exc:
        click.echo(f"kafka {settings.kafka_bootstrap_servers}: cannot read the group's offsets ({exc})")
        return
    total = sum(lag.lag for lag in lags)
    click.echo(
        f"kafka {settings.kafka_bootstrap_servers}, group {settings.kafka_group_id}: "
        f"lag {total} on {len(lags)} partition(s)"
    )
    for lag in lags:
        committed = "-" if lag.committed is None else str(lag.committed)
        click.echo(f"  {lag.topic}[{lag.partition}] committed {committed}, end {lag.high}: lag {lag.lag}")


@main.command()
@with_pipeline_options
@host_option
@port_option
@interval_option
@click.option(
    "--demo", is_flag=True, help="First load a generated, realistic lineage (a few hundred events)."
)
@click.pass_context
def up(ctx: click.Context, /, demo: bool, **options: Any) -> None:
    """Run everything on this machine: the HTTP server and the continuous pipeline.

    The server runs as a child process (`headwater serve` with the same settings); the pipeline
    runs here and publishes new events as soon as they are stored (a pass at least every
    --interval seconds). Ctrl-C or SIGTERM stops both, the signal sent to this process alone or
    to its whole process group (as systemd's `stop` does); so does this process ending in any way
    (the server gets SIGTERM when it is gone, even killed outright).
    """
    import subprocess
    import threading

    from headwater.pipeline.session import run_in_background, stop_spark

    settings = command_settings(ctx, **options)
    setup_logging(settings.log_level)
    if demo:
        loaded = _load_demo(settings)
        click.echo(f"demo lineage: {loaded} events stored", err=True)
    env = {**os.environ, **to_environment(settings)}
    env.pop("HEADWATER_CONFIG", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "headwater", "serve"], env=env, preexec_fn=ended_with_parent()
    )
    run_in_background()  # the pipeline yields the CPU to the server it started
    store, spark, runner = open_pipeline(settings, quiet=True)
    stop, died = threading.Event(), threading.Event()
    retain = daily_retention(settings, store, runner)

    def watch_server(result: Any) -> None:
        retain(result)
        if server.poll() is not None and not stop.is_set():  # the server died: stop the pipeline too
            click.echo(f"the server exited with status {server.returncode}", err=True)
            died.set()
            stop.set()

    try:
        with stopping_on_signals(spark, stop):
            runner.continuous(settings.pipeline_interval, stop, on_pass=watch_server)
    except HeadwaterError as exc:  # e.g. another continuous pipeline runs on this store
        raise click.ClickException(exc.message) from None
    finally:
        server.terminate()
        server.wait(timeout=15)
        stop_spark(spark)
        store.close()
    if died.is_set():
        sys.exit(1)


def _load_demo(settings: Settings) -> int:
    """Store the demo lineage through the same validation as any producer's events."""
    import orjson

    from headwater.demo.lineage import demo_events
    from headwater.events.times import format_ticks, now_ticks
    from headwater.events.validate import validate_event
    from headwater.store import open_store

    store = open_store(settings.database_url)
    try:
        events = [validate_event(doc, orjson.dumps(doc)) for doc in demo_events()]
        stored = store.append(events, format_ticks(now_ticks()))
    finally:
        store.close()
    return sum(stored)


@main.command("settings")
@click.pass_context
def show_settings(ctx: click.Context) -> None:
    """List every setting with its value, where the value came from, and what it does."""
    settings = command_settings(ctx)
    for setting in SETTINGS:
        value = getattr(settings, setting.name)
        if setting.name.endswith("_keys"):
            value = f"{len(value)} key(s)"
        elif setting.name == "database_url":
            value = redact_url(value)
        elif setting.name == "kafka_options":
            value = redact_options(value)
        source = settings.sources.get(setting.name, "default")
        click.echo(f"{setting.env}={value}  [{source}]\n    {setting.help}")


main.add_command(db)
main.add_command(delete)
main.add_command(elements)
main.add_command(events)
main.add_command(pipeline)
main.add_command(retention)
