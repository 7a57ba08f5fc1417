"""The Kafka consumer against a real broker (tansu) and the real openlineage-python Kafka transport:
events stored once and in partition order, offsets committed, redelivery absorbed, bad messages
dead-lettered without blocking, store outages retried, and what `serve`, `/metrics`,
`/api/v1/ingest/errors`, `headwater errors` and `headwater status` show of it."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from click.testing import CliRunner
from confluent_kafka import Consumer, TopicPartition
from fastapi.testclient import TestClient
from openlineage.client import OpenLineageClient

from headwater.api.app import create_app
from headwater.cli import main
from headwater.config import Settings
from headwater.errors import ConfigError, StoreRefused, StoreUnavailable
from headwater.events.limits import DEPTH_REASON, MAX_JSON_DEPTH
from headwater.events.model import Event
from headwater.ingest import metrics
from headwater.ingest.kafka import KafkaIngester, consumer_config, group_lag
from headwater.store.base import EventStore
from tests.conftest import free_port
from tests.factories import nested_event, run_event
from tests.ingest.conftest import FAST_GROUP_OPTIONS, Broker
from tests.ingest.kafka_helpers import (
    RecordingKafkaTransport,
    expected_ids,
    job_and_dataset_events,
    run_events,
    stored_count,
    wait_for,
)

MakeSettings = Callable[..., Settings]


@pytest.fixture(autouse=True)
def _hermetic_client(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No OpenLineage or Headwater settings from the environment, no git repository around (the
    client would add a sourceCodeLocation facet from it)."""
    for name in list(os.environ):
        if name.startswith("OPENLINEAGE") or (
            name.startswith("HEADWATER_") and not name.startswith("HEADWATER_TEST_")
        ):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def consumers() -> Iterator[list[KafkaIngester]]:
    """Consumers a test starts, stopped even when it fails."""
    started: list[KafkaIngester] = []
    yield started
    for ingester in started:
        ingester.stop()


def consume(settings: Settings, store: EventStore, started: list[KafkaIngester]) -> KafkaIngester:
    ingester = KafkaIngester(settings, store)
    started.append(ingester)
    ingester.start()
    return ingester


def committed_total(settings: Settings) -> int:
    return sum(lag.committed or 0 for lag in group_lag(settings, timeout=10))


def test_transport_events_are_stored_once_in_partition_order_and_redelivery_is_absorbed(
    broker: Broker,
    new_topic: Callable[..., str],
    kafka_settings: MakeSettings,
    store: EventStore,
    consumers: list[KafkaIngester],
) -> None:
    topic = new_topic(3)
    transport = RecordingKafkaTransport(broker.bootstrap, topic)
    client = OpenLineageClient(transport=transport)
    events = [*run_events(60), *job_and_dataset_events()]
    for event in events:
        client.emit(event)
    for event in events[:5]:  # a producer retrying: the same events again
        client.emit(event)
    assert transport.wait_for_completion(10)
    ids = expected_ids(transport.sent)
    assert len(ids) == len(events) == 62

    settings = kafka_settings(topic, kafka_batch_size=16)
    first = consume(settings, store, consumers)
    wait_for(lambda: first.totals.consumed == 67, 30, "67 messages consumed")
    first.stop()
    assert (first.totals.stored, first.totals.duplicates, first.totals.dead_letters) == (62, 5, 0)
    assert {store.get_event(i) is not None for i in ids} == {True}
    assert stored_count(store) == 62
    assert committed_total(settings) == 67  # every offset committed, on every partition

    # Events of one run share a message key, hence a partition: stored in the order sent.
    seq_by_run: dict[str, list[int]] = {}
    for text in transport.sent[:60]:
        document = orjson.loads(text)
        (event_id,) = expected_ids([text])
        stored = store.get_event(event_id)
        assert stored is not None
        seq_by_run.setdefault(document["run"]["runId"], []).append(stored.seq)
    assert all(seqs == sorted(seqs) for seqs in seq_by_run.values())

    # Another group reads the topic from the start: every event is delivered again, none stored twice.
    again = consume(kafka_settings(topic), store, consumers)
    wait_for(lambda: again.totals.consumed == 67, 30, "the topic read again")
    again.stop()
    assert (again.totals.stored, again.totals.duplicates) == (0, 67)
    assert stored_count(store) == 62


def _valid(index: int) -> bytes:
    return orjson.dumps(run_event(event_time=f"2024-05-01T10:00:{index:02d}.000Z"))


def produce_valid(broker: Broker, topic: str, count: int, *, keys: int = 0) -> None:
    """`_valid(0)` ... `_valid(count - 1)` into the topic, keyed `k0` ... in turn when `keys`."""
    producer = broker.producer()
    for i in range(count):
        producer.produce(topic, key=f"k{i % keys}" if keys else None, value=_valid(i))
    assert producer.flush(10) == 0


def test_bad_messages_are_dead_lettered_and_the_partition_moves_on(
    broker: Broker,
    new_topic: Callable[..., str],
    kafka_settings: MakeSettings,
    store: EventStore,
    consumers: list[KafkaIngester],
    database_url: str,
) -> None:
    topic = new_topic(1)
    new_topic(1, name=f"{topic}.errors")
    invalid = run_event()
    del invalid["producer"]
    invalid["eventType"] = "BEGIN"
    oversize = run_event(run_facets={"padding": {"_producer": "p", "_schemaURL": "u", "x": "y" * 5000}})
    messages: list[tuple[bytes, bytes | None]] = [
        (b"run:airflow/a", _valid(1)),
        (b"run:airflow/b", b'{"eventType": "START", '),  # offset 1: not JSON
        (b"run:airflow/c", orjson.dumps(invalid)),  # 2: breaks the core
        (b"run:airflow/d", _valid(2)),
        (b"run:airflow/e", None),  # 4: a tombstone
        (b"run:airflow/f", orjson.dumps(oversize)),  # 5: larger than the limit below
        (b"\xff\xfe", b"\xff\xfe not utf-8"),  # 6
        (b"run:airflow/h", _valid(3)),
    ]
    producer = broker.producer()
    for key, value in messages:
        producer.produce(topic, key=key, value=value)
    assert producer.flush(10) == 0

    settings = kafka_settings(topic, kafka_max_message_bytes=4096, kafka_error_topic=True)
    ingester = consume(settings, store, consumers)
    wait_for(lambda: ingester.totals.consumed == 8, 30, "8 messages consumed")
    ingester.stop()
    assert (ingester.totals.stored, ingester.totals.dead_letters) == (3, 5)
    assert stored_count(store) == 3
    assert committed_total(settings) == 8  # the offset moved past every bad message

    letters = sorted(store.dead_letters(topic=None, limit=10, before_id=None), key=lambda d: d.offset)
    assert [(d.topic, d.partition, d.offset) for d in letters] == [(topic, 0, o) for o in (1, 2, 4, 5, 6)]
    assert [(d.key, d.value) for d in letters] == [messages[o] for o in (1, 2, 4, 5, 6)]
    errors = [d.error for d in letters]
    assert "malformed JSON at line 1" in errors[0]
    assert "producer: is required" in errors[1] and "eventType: 'BEGIN'" in errors[1]
    assert "no value" in errors[2]
    assert "larger than the limit of 4096 bytes" in errors[3]
    assert "malformed JSON" in errors[4]

    # The same five on the error topic, with where they came from in the headers.
    reader = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": uuid.uuid4().hex})
    reader.assign([TopicPartition(f"{topic}.errors", 0, 0)])  # no group to join
    copies: list[Any] = []
    wait_for(lambda: bool(copies.extend(reader.consume(10, 0.5))) or len(copies) >= 5, 30, "error topic")
    reader.close()
    assert [dict(m.headers())["headwater.offset"] for m in copies] == [b"1", b"2", b"4", b"5", b"6"]
    assert [m.value() for m in copies] == [d.value for d in letters]

    # Visible through the API (newest first, paged) and the CLI.
    with TestClient(create_app(Settings(database_url=database_url), store)) as http:
        page = http.get("/api/v1/ingest/errors", params={"limit": 3}).json()
        assert page["totalCount"] == 5 and [e["offset"] for e in page["errors"]] == [6, 5, 4]
        rest = http.get("/api/v1/ingest/errors", params={"before": page["nextBefore"]}).json()
        assert [e["offset"] for e in rest["errors"]] == [2, 1] and rest["nextBefore"] is None
        assert rest["errors"][1]["value"] == '{"eventType": "START", '
        assert page["errors"][0]["valueBase64"] and page["errors"][0]["keyBase64"] == "//4="
        assert page["errors"][1]["valueBytes"] == len(messages[5][1] or b"")
        assert http.get("/api/v1/ingest/errors", params={"topic": "other"}).json()["totalCount"] == 0
        assert http.get("/api/v1/ingest/errors", params={"limit": "0"}).status_code == 400
    result = CliRunner().invoke(main, ["errors", "--database-url", database_url], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert f"{topic}[0]@1 key=run:airflow/b" in result.output and "5 of 5 dead letter(s)" in result.output
    lines = CliRunner().invoke(main, ["errors", "--database-url", database_url, "--json", "--limit", "1"])
    assert orjson.loads(lines.output)["offset"] == 6


def fail_appends(monkeypatch: pytest.MonkeyPatch, store: EventStore, failing: set[int]) -> list[int]:
    """Make the store's appends numbered in `failing` (from 1) raise StoreUnavailable; returns
    the list of the appends' numbers, which grows as they are called."""
    real_append = store.append
    calls: list[int] = []

    def append(events: list[Event], received_at: str) -> list[bool]:
        calls.append(len(calls) + 1)
        if calls[-1] in failing:
            raise StoreUnavailable("database is down")
        return real_append(events, received_at)

    monkeypatch.setattr(store, "append", append)
    return calls


def consume_after_outage(
    settings: Settings, store: EventStore, consumers: list[KafkaIngester], sent: int
) -> None:
    """Consume until every event sent is stored and committed, each once."""
    ingester = consume(settings, store, consumers)
    wait_for(lambda: stored_count(store) == sent, 30, f"{sent} events stored after the outage")
    wait_for(lambda: committed_total(settings) == sent, 10, "all offsets committed")
    ingester.stop()
    assert (ingester.totals.stored, ingester.totals.duplicates, ingester.totals.dead_letters) == (sent, 0, 0)


def test_a_store_outage_rewinds_and_retries_the_batch(
    broker: Broker,
    new_topic: Callable[..., str],
    kafka_settings: MakeSettings,
    store: EventStore,
    consumers: list[KafkaIngester],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    topic = new_topic(2)
    produce_valid(broker, topic, 40, keys=5)
    fail_appends(monkeypatch, store, {1, 2})
    consume_after_outage(kafka_settings(topic, kafka_batch_size=10), store, consumers, 40)


def test_an_outage_mid_stream_rewinds_the_batches_consumed_after_the_failed_one(
    broker: Broker,
    new_topic: Callable[..., str],
    kafka_settings: MakeSettings,
    store: EventStore,
    consumers: list[KafkaIngester],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The consumer validates the next batches while one is stored: when storing fails, the
    batches consumed after it are read again too, and each partition stays in offset order."""
    topic = new_topic(3)
    producer = broker.producer()
    where: dict[str, tuple[int, int]] = {}  # eventId -> (partition, offset)

    def delivered(error: Any, message: Any) -> None:
        assert error is None
        (event_id,) = expected_ids([message.value().decode()])
        where[event_id] = (message.partition(), message.offset())

    for i in range(120):
        value = orjson.dumps(run_event(event_time=f"2024-05-01T10:{i // 60:02d}:{i % 60:02d}.000Z"))
        producer.produce(topic, key=f"k{i % 7}", value=value, on_delivery=delivered)
    assert producer.flush(10) == 0 and len(where) == 120
    calls = fail_appends(monkeypatch, store, {4, 5})
    consume_after_outage(kafka_settings(topic, kafka_batch_size=8), store, consumers, 120)
    assert len(calls) > 5
    by_partition: dict[int, list[tuple[int, int]]] = {}
    for event_id, (partition, offset) in where.items():
        stored = store.get_event(event_id)
        assert stored is not None
        by_partition.setdefault(partition, []).append((offset, stored.seq))
    for pairs in by_partition.values():
        seqs = [seq for _, seq in sorted(pairs)]
        assert seqs == sorted(seqs)


def refuse_second(
    monkeypatch: pytest.MonkeyPatch, store: EventStore, second: int, *, slow: float = 0.0
) -> list[int]:
    """Make the store refuse (not an outage) any append holding the event `_valid(second)`,
    each append taking `slow` seconds first; returns the number of events of each append."""
    real_append = store.append
    sizes: list[int] = []

    def picky_append(events: list[Event], received_at: str) -> list[bool]:
        sizes.append(len(events))
        time.sleep(slow)
        if any(event.event_time.startswith(f"2024-05-01T10:00:{second:02d}") for event in events):
            raise StoreRefused("value too long for the column")
        return real_append(events, received_at)

    monkeypatch.setattr(store, "append", picky_append)
    return sizes


def test_an_event_the_store_refuses_is_dead_lettered_alone(
    broker: Broker,
    new_topic: Callable[..., str],
    kafka_settings: MakeSettings,
    store: EventStore,
    consumers: list[KafkaIngester],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    topic = new_topic(1)
    producer = broker.producer()
    for i in range(5):
        producer.produce(topic, value=_valid(i))
    assert producer.flush(10) == 0
    refuse_second(monkeypatch, store, 3)
    ingester = consume(kafka_settings(topic), store, consumers)
    wait_for(lambda: ingester.totals.consumed == 5, 30, "5 messages consumed")
    ingester.stop()
    assert stored_count(store) == 4
    (letter,) = store.dead_letters(topic=topic, limit=5, before_id=None)
    assert letter.offset == 3 and "value too long" in letter.error


def test_batches_that_wait_for_a_slow_store_are_stored_together_and_a_refusal_stays_alone(
    broker: Broker,
    new_topic: Callable[..., str],
    kafka_settings: MakeSettings,
    store: EventStore,
    consumers: list[KafkaIngester],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While the store is slow the batches validated meanwhile wait, and are appended in one
    call; when the store refuses such a call, each batch is stored on its own and only the event
    it refuses becomes a dead letter."""
    topic = new_topic(1)
    produce_valid(broker, topic, 40)
    sizes = refuse_second(monkeypatch, store, 13, slow=0.3)  # the next batches wait meanwhile
    settings = kafka_settings(topic, kafka_batch_size=4)
    ingester = consume(settings, store, consumers)
    wait_for(lambda: committed_total(settings) == 40, 60, "40 offsets committed")
    ingester.stop()
    assert max(sizes) > 4  # batches of 4 messages went to the store together
    assert stored_count(store) == 39
    (letter,) = store.dead_letters(topic=topic, limit=5, before_id=None)
    assert letter.offset == 13 and "value too long" in letter.error
    assert ingester.totals.consumed == 40 and ingester.totals.stored == 39


def test_an_event_nested_too_deep_is_dead_lettered_and_the_consumer_goes_on(
    broker: Broker,
    new_topic: Callable[..., str],
    kafka_settings: MakeSettings,
    store: EventStore,
    consumers: list[KafkaIngester],
) -> None:
    # the lean path's parser raised out of the consumer's batch on such a message
    topic = new_topic(1)
    producer = broker.producer()
    for value in (_valid(0), nested_event(5000), nested_event(MAX_JSON_DEPTH + 1), _valid(1)):
        producer.produce(topic, value=value)
    assert producer.flush(10) == 0
    ingester = consume(kafka_settings(topic), store, consumers)
    wait_for(lambda: ingester.totals.consumed == 4, 30, "4 messages consumed")
    ingester.stop()
    assert stored_count(store) == 2
    letters = sorted(store.dead_letters(topic=topic, limit=5, before_id=None), key=lambda d: d.offset)
    assert [(d.offset, d.error) for d in letters] == [(1, DEPTH_REASON), (2, DEPTH_REASON)]


def _sample(text: str, name: str, **labels: str) -> float:
    return sum(
        value
        for sample, found, value in metrics.parse_samples(text)
        if sample == name and all(found.get(k) == v for k, v in labels.items())
    )


def test_serve_consumes_kafka_and_reports_metrics_and_status(
    broker: Broker,
    new_topic: Callable[..., str],
    kafka_settings: MakeSettings,
    store: EventStore,
    database_url: str,
) -> None:
    topic = new_topic(2)
    settings = kafka_settings(topic, kafka_enabled=True)
    transport = RecordingKafkaTransport(broker.bootstrap, topic)
    for event in run_events(30):
        transport.emit(event)
    transport.producer.produce(topic, key=b"x", value=b"garbage")  # type: ignore[union-attr]
    assert transport.wait_for_completion(10)

    with TestClient(create_app(settings, store)) as http:
        before = http.get("/metrics").text
        wait_for(lambda: stored_count(store) == 30, 30, "serve to store the Kafka events")
        wait_for(lambda: store.count_dead_letters(topic=topic) == 1, 10, "the dead letter")
        assert http.post("/api/v1/lineage", json=run_event()).status_code == 201
        assert http.post("/api/v1/lineage", content=b"{").status_code == 400
        wait_for(
            lambda: (
                _sample(http.get("/metrics").text, "headwater_kafka_consumer_lag", topic=topic) == 0
                and _sample(http.get("/metrics").text, "headwater_kafka_committed_offset", topic=topic) == 31
            ),
            10,
            "lag 0 and every offset committed",
        )
        response = http.get("/metrics")
        assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
        after = response.text

    def delta(name: str, **labels: str) -> float:
        return _sample(after, name, **labels) - _sample(before, name, **labels)

    assert delta("headwater_kafka_messages_consumed_total", topic=topic) == 31
    assert delta("headwater_kafka_dead_letters_total", topic=topic) == 1
    assert delta("headwater_ingest_events_total", source="kafka", outcome="stored") == 30
    assert delta("headwater_ingest_events_total", source="kafka", outcome="rejected") == 1
    assert delta("headwater_ingest_events_total", source="http", outcome="stored") == 1
    assert delta("headwater_http_ingest_requests_total", status="201") == 1
    assert delta("headwater_http_ingest_requests_total", status="400") == 1
    assert delta("headwater_http_ingest_seconds_count") == 2
    partitions = {
        labels["partition"]
        for name, labels, _ in metrics.parse_samples(after)
        if name == "headwater_kafka_consumer_lag" and labels["topic"] == topic
    }
    assert partitions == {"0", "1"}

    env = {
        "HEADWATER_DATABASE_URL": database_url,
        "HEADWATER_KAFKA_BOOTSTRAP_SERVERS": broker.bootstrap,
        "HEADWATER_KAFKA_TOPICS": topic,
        "HEADWATER_KAFKA_GROUP_ID": settings.kafka_group_id,
        "HEADWATER_PORT": "1",  # no server there
    }
    result = CliRunner().invoke(main, ["status"], env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "31 event(s), 1 dead letter(s)" in result.output
    assert f"group {settings.kafka_group_id}: lag 0 on 2 partition(s)" in result.output
    assert f"{topic}[0] committed" in result.output and "no metrics" in result.output


def test_consume_serves_its_metrics_and_the_pipeline_progress(
    broker: Broker, new_topic: Callable[..., str], store: EventStore, database_url: str, tmp_path: Path
) -> None:
    """`headwater consume --metrics-port`: the two consumer processes' counters summed, and the
    pipeline's gauges read from the store (nothing published: every stored event waits)."""
    topic = new_topic(2)
    transport = RecordingKafkaTransport(broker.bootstrap, topic)
    for event in run_events(12):
        transport.emit(event)
    assert transport.wait_for_completion(10)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HEADWATER_", "OPENLINEAGE"))}
    env.update(
        HEADWATER_DATABASE_URL=database_url,
        HEADWATER_KAFKA_BOOTSTRAP_SERVERS=broker.bootstrap,
        HEADWATER_KAFKA_TOPICS=topic,
        HEADWATER_KAFKA_GROUP_ID=f"headwater-test-{uuid.uuid4().hex[:8]}",
        HEADWATER_KAFKA_POLL_TIMEOUT="0.2",
        HEADWATER_KAFKA_OPTIONS=",".join(f"{k}={v}" for k, v in FAST_GROUP_OPTIONS),
        HOME=str(tmp_path),
    )
    log = tmp_path / "consume.log"
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "headwater", "consume", "--processes", "2", "--metrics-port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:

        def scrape() -> str:
            try:
                return httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
            except httpx.TransportError:
                return ""

        stored = ("headwater_ingest_events_total", {"source": "kafka", "outcome": "stored"})
        wait_for(lambda: _sample(scrape(), stored[0], **stored[1]) == 12, 60, "12 events stored, in /metrics")
        text = scrape()
        assert _sample(text, "headwater_kafka_messages_consumed_total", topic=topic) == 12
        assert stored_count(store) == 12
        assert _sample(text, "headwater_pipeline_events_waiting") == 12
        assert _sample(text, "headwater_pipeline_stored_seq") == store.last_seq()
        assert _sample(text, "headwater_pipeline_published_seq") == 0
        assert "headwater_pipeline_last_published_timestamp_seconds" not in text  # never published
        assert httpx.get(f"http://127.0.0.1:{port}/other", timeout=5).status_code == 404
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0, log.read_text()[-3000:]
    # one summary for the two processes: their totals added up, and what each consumed
    (summary,) = re.findall(r"\d+ message\(s\) consumed.*", log.read_text())
    shares = re.fullmatch(r"12 message\(s\) consumed \((\d+), (\d+) by process\): (.*)", summary)
    assert shares is not None, summary
    assert int(shares[1]) + int(shares[2]) == 12
    assert shares[3] == "12 stored, 0 already stored, 0 dead-lettered."


def test_consume_says_when_its_metrics_port_is_taken(
    broker: Broker, new_topic: Callable[..., str], database_url: str
) -> None:
    topic = new_topic(1)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HEADWATER_", "OPENLINEAGE"))}
        env.update(
            HEADWATER_DATABASE_URL=database_url,
            HEADWATER_KAFKA_BOOTSTRAP_SERVERS=broker.bootstrap,
            HEADWATER_KAFKA_TOPICS=topic,
        )
        result = subprocess.run(  # a process of its own: consuming sets its signal handlers
            [sys.executable, "-m", "headwater", "consume", "--processes", "1", "--metrics-port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1, result.stderr
    assert f"cannot serve /metrics on 127.0.0.1:{port}: Address already in use" in result.stderr
    assert "Traceback" not in result.stderr


def test_consumers_of_a_group_are_dealt_partitions_in_turn(
    new_topic: Callable[[int], str],
    kafka_settings: MakeSettings,
    store: EventStore,
    consumers: list[KafkaIngester],
) -> None:
    """Two consumers of four partitions own 0 and 2, and 1 and 3 (round robin), not 0-1 and 2-3 (range,
    librdkafka's default), so that the busy partitions of keyed events are less often one
    consumer's; `kafka_options` can still choose another strategy."""
    topic = new_topic(4)
    settings = kafka_settings(topic)
    first, second = consume(settings, store, consumers), consume(settings, store, consumers)
    wait_for(lambda: len(first.assigned) == len(second.assigned) == 2, 30, "two partitions each")
    owned = sorted([[p for _, p in first.assigned], [p for _, p in second.assigned]])
    assert owned == [[0, 2], [1, 3]]
    ranged = replace(settings, kafka_options=(("partition.assignment.strategy", "range"),))
    assert consumer_config(ranged)["partition.assignment.strategy"] == "range"


def test_options_pass_through_but_cannot_turn_on_auto_commit() -> None:
    settings = Settings(
        kafka_bootstrap_servers="broker:9093",
        kafka_options=(("sasl.mechanism", "PLAIN"), ("security.protocol", "SASL_SSL")),
    )
    config = consumer_config(settings)
    assert config["security.protocol"] == "SASL_SSL" and config["sasl.mechanism"] == "PLAIN"
    assert config["enable.auto.commit"] == "false" and config["bootstrap.servers"] == "broker:9093"
    with pytest.raises(ConfigError, match=r"enable\.auto\.commit must stay false"):
        consumer_config(Settings(kafka_options=(("enable.auto.commit", "true"),)))


def test_a_full_fetch_queue_puts_off_the_next_fetch_briefly_unless_told_otherwise() -> None:
    """librdkafka's own default (a second) left consumers waiting for messages (bench/README.md,
    "Kafka: the fetch put off a second"); a user's kafka_options still choose."""
    assert consumer_config(Settings())["fetch.queue.backoff.ms"] == 10
    chosen = Settings(kafka_options=(("fetch.queue.backoff.ms", "250"),))
    assert consumer_config(chosen)["fetch.queue.backoff.ms"] == "250"


def test_consume_refuses_settings_that_cannot_work(database_url: str) -> None:
    runner = CliRunner()
    env = {"HEADWATER_DATABASE_URL": database_url, "HEADWATER_KAFKA_OPTIONS": "enable.auto.commit=true"}
    result = runner.invoke(main, ["consume"], env=env)
    assert result.exit_code == 1 and "enable.auto.commit must stay false" in result.output
    result = runner.invoke(
        main, ["consume"], env={"HEADWATER_DATABASE_URL": database_url, "HEADWATER_KAFKA_BATCH_SIZE": "0"}
    )
    assert result.exit_code == 1 and "HEADWATER_KAFKA_BATCH_SIZE: 0 is not 1 or more" in result.output
    shown = runner.invoke(main, ["settings"], env={"HEADWATER_KAFKA_OPTIONS": "sasl.password=hunter2"})
    assert "HEADWATER_KAFKA_OPTIONS=sasl.password=***" in shown.output and "hunter2" not in shown.output
