"""The Kafka consumer: OpenLineage events (and generic events, from their own topics) from Kafka
topics into the store, at least once.

How it keeps its promises:
- Nothing lost: a batch's offsets are committed, synchronously, only after its events and dead
  letters are durable. A crash before that redelivers the batch; a store outage rewinds the
  partitions to the batch's first offsets and retries.
- Nothing duplicated: a redelivered event has the same eventId (taken from its content) and the
  store keeps it once; a redelivered dead letter is kept once per (topic, partition, offset).
- Bad messages never block a partition: a value that is empty, too large, not JSON or not a valid
  event becomes a dead letter (and, if asked, a message on `<topic>.errors`) and its offset is
  committed with the rest of the batch.
- Order within a partition: a batch is appended in the order it was consumed, which is each
  partition's offset order, so the store's `seq` follows the offsets of a partition.
- Partitions concurrently: one consumer is assigned many partitions; librdkafka fetches them in
  parallel in its own threads and a batch mixes whatever arrived, so no partition waits for
  another's backlog, and one durable transaction and one offset commit serve all of them. A thread
  per partition would add nothing: decoding and validating hold the GIL, and the store has one
  writer. More throughput comes from more consumers (processes) in the same group.
- Storing beside validating: `run` hands each validated batch to a thread that stores it
  (`kafka_handover`), decodes the next batch meanwhile, and commits the offsets of the batches
  that thread has stored, in order. Batches that waited for the thread are appended together, in
  one transaction. When one fails, it and those after it are rewound together.

Messages are what the openlineage-python Kafka transport sends: the event's JSON as the value, a
key such as `run:namespace/name` (used by Kafka for partitioning only), no headers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from headwater.config import Settings
from headwater.errors import ConfigError, HeadwaterError, StoreRefused
from headwater.events.decode import Document, MalformedJSON, loads
from headwater.events.generic import GenericEvent
from headwater.events.lean import validate_object
from headwater.events.model import Event
from headwater.events.times import format_ticks, now_ticks
from headwater.ingest import metrics
from headwater.ingest.generic import GenericValidated, record_generic_stored, validate_generic_documents
from headwater.ingest.kafka_handover import Handover, rewind_offsets
from headwater.ingest.service import (
    REJECTED,
    Outcome,
    Validated,
    collector_paused,
    record_stored,
    validate_documents,
    young_collections_rarer,
)
from headwater.ingest.writer import GroupCommitWriter
from headwater.store.base import DeadLetter, EventStore
from headwater.store.generic import GenericStored, generic_store

log = logging.getLogger(__name__)

Partition = tuple[str, int]
_V = TypeVar("_V", Validated, GenericValidated)
_R = TypeVar("_R")


class _Repeats(logging.Filter):
    """librdkafka repeats a failing connection's error every few hundred milliseconds: let one line
    per broker and kind through every 30 s."""

    def __init__(self, every: float = 30.0) -> None:
        super().__init__()
        self.every = every
        self._last: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = record.getMessage()[:70]
        now = time.monotonic()
        if now - self._last.get(key, -self.every) < self.every:
            return False
        self._last[key] = now
        return True


_librdkafka_log = logging.getLogger("headwater.librdkafka")
_librdkafka_log.addFilter(_Repeats())

# The guarantees above rest on these; an option that changed them would silently lose events.
_FIXED_OPTIONS = {"enable.auto.commit": "false", "enable.auto.offset.store": "false"}
_PROGRESS_EVERY = 10.0  # seconds between progress lines in the log
_MAX_BACKOFF = 30.0
_POLL_WHILE_STORING = 0.05  # seconds `consume` waits while a batch handed over is not committed


def consumer_config(settings: Settings) -> dict[str, Any]:
    """librdkafka settings of the consumer: Headwater's defaults, then the pass-through options."""
    options = dict(settings.kafka_options)
    for key, fixed in _FIXED_OPTIONS.items():
        if key in options and options[key].lower() != fixed:
            raise ConfigError(f"kafka_options: {key} must stay {fixed}: offsets follow durable commits")
    return {
        "bootstrap.servers": settings.kafka_bootstrap_servers,
        "group.id": settings.kafka_group_id,
        "client.id": "headwater",
        "auto.offset.reset": "earliest",  # a new group reads the topic from its start
        # Producers key a run's events by its root job, so a few busy DAGs fill a few partitions;
        # librdkafka's default (range) gives each consumer adjacent partitions, often the busy ones
        # together. Dealt in turn, they spread better (bench/kafka.py, 4 partitions, 2 consumers:
        # 80% / 20% of the events -> 56% / 44%). A user's kafka_options may choose another.
        "partition.assignment.strategy": "roundrobin",
        # When its queue of fetched messages is full (queued.max.messages.kbytes, 64 MB), librdkafka
        # puts off a partition's next fetch by this long; its default (1 s) left a consumer that
        # drains the queue in less than that waiting for messages every second: bench/kafka.py,
        # 2 consumers, 200,000 events, 22-25k -> 27-34k events/s (bench/README.md, "Kafka: the
        # fetch put off a second"). 10 ms costs a few checks a second, no memory.
        "fetch.queue.backoff.ms": 10,
        "logger": _librdkafka_log,
        **options,
        **_FIXED_OPTIONS,
    }


def check_settings(settings: Settings) -> None:
    """Raise ConfigError unless the Kafka settings can work."""
    if settings.kafka_batch_size < 1:
        raise ConfigError("kafka_batch_size must be at least 1")
    if settings.kafka_poll_timeout <= 0:
        raise ConfigError("kafka_poll_timeout must be more than 0 seconds")
    if not settings.kafka_topics and not settings.kafka_generic_topics:
        raise ConfigError("kafka_topics and kafka_generic_topics name no topic")
    consumer_config(settings)


def producer_config(settings: Settings) -> dict[str, Any]:
    """librdkafka settings of the error-topic producer (the consumer-only options left out)."""
    consumer_only = {"group.id", "auto.offset.reset", "session.timeout.ms", "heartbeat.interval.ms"}
    consumer_only.update(_FIXED_OPTIONS)
    options = {k: v for k, v in settings.kafka_options if k not in consumer_only}
    return {
        "bootstrap.servers": settings.kafka_bootstrap_servers,
        "client.id": "headwater",
        "logger": _librdkafka_log,
        **options,
        "enable.idempotence": "true",
    }


def all_topics(settings: Settings) -> list[str]:
    """The topics the consumer subscribes to: OpenLineage ones, then generic ones."""
    return list(dict.fromkeys((*settings.kafka_topics, *settings.kafka_generic_topics)))


def decode_message(index: int, value: bytes | None, max_bytes: int, *, lazy: bool = False) -> Document:
    """One message value as a candidate event, or a Document saying why it is none. Its topic
    says which rules validate it: a generic topic's, or OpenLineage's (`lazy`: left unparsed for
    the lean path, which reads a message once; one that is not JSON is rejected with the same
    message when it is validated)."""
    if value is None:
        return Document(index, error="message has no value (a tombstone)")
    if len(value) > max_bytes:
        return Document(
            index,
            error=f"message value of {len(value)} bytes is larger than the limit of {max_bytes} bytes "
            "(kafka_max_message_bytes)",
        )
    if lazy:  # the common event accepted by the compiled lean path at once, if it is built
        return Document(index, raw=value, parsed=False, event=validate_object(value))
    try:
        return Document(index, loads(value), raw=value)
    except MalformedJSON as exc:
        return Document(index, error=exc.message)


@dataclass
class Batch:
    """Messages consumed together: their candidate events, and where each partition starts and ends."""

    messages: list[Message] = field(default_factory=list)
    first: dict[Partition, int] = field(default_factory=dict)  # offset to rewind to
    next: dict[Partition, int] = field(default_factory=dict)  # offset to commit
    validated: Validated | None = None
    generic: GenericValidated | None = None
    started: float = field(default_factory=time.perf_counter)  # when it was consumed
    result: BatchResult | None = None  # once stored


@dataclass
class BatchResult:
    stored: int = 0
    duplicates: int = 0
    dead_letters: int = 0


@dataclass
class ConsumeTotals:
    """What a consumer did since it started; `+` adds two consumers' (`consume --processes`)."""

    consumed: int = 0
    stored: int = 0
    duplicates: int = 0
    dead_letters: int = 0

    def __add__(self, other: ConsumeTotals) -> ConsumeTotals:
        return ConsumeTotals(
            self.consumed + other.consumed,
            self.stored + other.stored,
            self.duplicates + other.duplicates,
            self.dead_letters + other.dead_letters,
        )


class KafkaIngester:
    """Consumes the configured topics into the store until stopped; `run` blocks, `start` uses a thread.

    Inside `headwater serve` pass the app's GroupCommitWriter, so Kafka batches and HTTP requests
    share the store's single writer.
    """

    def __init__(
        self, settings: Settings, store: EventStore, *, writer: GroupCommitWriter | None = None
    ) -> None:
        check_settings(settings)
        self.settings = settings
        self.store = store
        self.writer = writer
        self.config = consumer_config(settings)
        self.totals = ConsumeTotals()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._consumer: Consumer | None = None
        self._producer: Producer | None = None
        self._assigned: set[Partition] = set()
        self._committed: dict[Partition, int] = {}
        self._backoff = 0.0
        self._handover: Handover[Batch] | None = None

    # -- running --------------------------------------------------------------------------------
    def start(self) -> threading.Thread:
        """Run in a daemon thread (as `headwater serve` does); `stop` ends it."""
        self._thread = threading.Thread(target=self._run_logged, name="headwater-kafka", daemon=True)
        self._thread.start()
        return self._thread

    def stop(self, timeout: float = 30) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    @property
    def assigned(self) -> list[Partition]:
        """The (topic, partition) pairs this consumer owns now, sorted."""
        return sorted(self._assigned)

    def _run_logged(self) -> None:
        while not self._stop.is_set():
            try:
                self.run()
            except Exception:
                log.exception("the Kafka consumer failed; restarting it in 5 s")
                self._stop.wait(5)

    def run(self) -> None:
        """Consume until `stop` is called (or SIGKILL: nothing uncommitted is lost)."""
        young_collections_rarer()
        consumer = Consumer(self.config)
        self._consumer = consumer
        topics = all_topics(self.settings)
        consumer.subscribe(
            topics, on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost
        )
        log.info(
            "consuming %s from %s as group %s",
            ", ".join(topics),
            self.settings.kafka_bootstrap_servers,
            self.settings.kafka_group_id,
        )
        last_progress = time.monotonic()
        handover: Handover[Batch] = Handover(self._store_batches)
        self._handover = handover
        try:
            while not self._stop.is_set():
                timeout = self.settings.kafka_poll_timeout
                if handover.pending:  # commit a stored batch soon, even if no message comes
                    timeout = min(timeout, _POLL_WHILE_STORING)
                messages = consumer.consume(self.settings.kafka_batch_size, timeout)
                self._commit_stored(handover)
                batch = self._decode(messages) if messages else None
                if not self._rewound(handover, batch) and batch is not None and batch.next:
                    handover.put(batch)
                self._update_lag()
                if time.monotonic() - last_progress >= _PROGRESS_EVERY:
                    last_progress = time.monotonic()
                    self._log_progress()
        finally:
            handover.close()  # what was handed over is stored (unless storing fails)...
            self._commit_stored(handover)  # ...and committed
            self._handover = None
            self._consumer = None
            self._assigned.clear()
            consumer.close()
            if self._producer is not None:
                self._producer.flush(10)

    def _log_progress(self) -> None:
        t = self.totals
        lag = sum(int(metrics.KAFKA_LAG.value(topic=tp[0], partition=tp[1])) for tp in self._assigned)
        log.info(
            "kafka: %d consumed, %d stored, %d duplicate, %d dead-lettered; lag %d on %d partition(s)",
            t.consumed,
            t.stored,
            t.duplicates,
            t.dead_letters,
            lag,
            len(self._assigned),
        )

    # -- one batch ------------------------------------------------------------------------------
    def process(self, messages: Sequence[Message]) -> BatchResult | None:
        """Store one consumed batch durably, then commit its offsets, in this thread (`run` stores
        in a thread of its own). None when it was rewound."""
        batch = self._decode(messages)
        if not batch.next:
            return BatchResult()
        reason = self._store_batches([batch])
        if reason is not None:
            self._rewind([batch], reason)
            return None
        self._committed_batches([batch])
        return batch.result

    def _store_batches(self, batches: Sequence[Batch]) -> str | None:
        """Store the batches durably, in one write when the store takes it; None when done, else
        why it failed (then they must be rewound). Their offsets are for the consumer's thread to
        commit."""
        received_at = format_ticks(now_ticks())
        try:
            results = self._store(batches, received_at)
        except HeadwaterError as exc:
            return exc.message
        except Exception as exc:
            log.exception("storing a Kafka batch failed")
            return f"{type(exc).__name__}: {exc}"
        for batch, result in zip(batches, results, strict=True):
            batch.result = result
        self._backoff = 0.0
        return None

    def _commit_stored(self, handover: Handover[Batch]) -> None:
        """Commit the offsets of the batches the hand-over has stored since the last time."""
        self._committed_batches(handover.stored())

    def _committed_batches(self, batches: Sequence[Batch]) -> None:
        """Commit the offsets after these stored batches (in the order they were consumed), in
        one call."""
        if not batches:
            return
        offsets: dict[Partition, int] = {}
        for batch in batches:
            offsets.update(batch.next)
        self._commit(offsets)
        now = time.perf_counter()
        for batch in batches:
            metrics.KAFKA_BATCH_SECONDS.observe(now - batch.started)

    def _rewound(self, handover: Handover[Batch], batch: Batch | None) -> bool:
        """When storing a batch handed over failed: rewind it and every batch consumed after it
        (`batch`, just decoded, too), then go on. True when it did."""
        if not handover.has_failed:
            return False
        handover.drain()
        self._commit_stored(handover)  # those stored before the failed one
        failed, reason = handover.failed()
        if batch is not None and batch.next:
            failed.append(batch)
        self._rewind(failed, reason)
        handover.resume()
        return True

    def _decode(self, messages: Sequence[Message]) -> Batch:
        with collector_paused():
            return self._decode_batch(messages)

    def _decode_batch(self, messages: Sequence[Message]) -> Batch:
        batch = Batch()
        documents: list[Document] = []
        generic_documents: list[Document] = []
        generic_topics = set(self.settings.kafka_generic_topics)
        max_bytes = self.settings.kafka_max_message_bytes
        for message in messages:
            error = message.error()
            if error is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    if error.fatal():
                        raise KafkaException(error)
                    log.warning("Kafka: %s", error.str())
                continue
            topic, partition, offset = message.topic(), message.partition(), message.offset()
            assert topic is not None and partition is not None and offset is not None
            batch.first.setdefault((topic, partition), offset)
            batch.next[(topic, partition)] = offset + 1
            generic = topic in generic_topics
            document = decode_message(len(batch.messages), message.value(), max_bytes, lazy=not generic)
            (generic_documents if generic else documents).append(document)
            batch.messages.append(message)
        batch.validated = validate_documents(documents)
        batch.generic = validate_generic_documents(generic_documents)
        return batch

    def _append(self, events: Sequence[Event], received_at: str) -> list[bool]:
        if self.writer is not None:
            return self.writer.append_sync(events)
        with collector_paused():
            return self.store.append(events, received_at)

    def _append_generic(self, events: Sequence[GenericEvent], received_at: str) -> list[GenericStored]:
        if self.writer is not None:
            return self.writer.append_generic_sync(events)
        return generic_store(self.store).append_generic(events, received_at)

    def _store(self, batches: Sequence[Batch], received_at: str) -> list[BatchResult]:
        """Append the batches' events in one call, and their generic events in another (each batch
        on its own when the store refuses the whole), then keep their dead letters."""
        validated = [_validated(batch.validated) for batch in batches]
        generic = [_validated(batch.generic) for batch in batches]
        stored = _each(
            validated,
            lambda every: self._append([event for one in every for event in one.events], received_at),
            lambda one: self._append_one_by_one(one, received_at),
        )
        generic_stored = _each(
            generic,
            lambda every: self._append_generic([event for one in every for event in one.events], received_at),
            lambda one: self._append_generic_one_by_one(one, received_at),
        )
        results: list[BatchResult] = []
        letters: list[DeadLetter] = []
        for batch, valid, kept, generic_valid, generic_kept in zip(
            batches, validated, stored, generic, generic_stored, strict=True
        ):
            outcomes: list[Outcome] = list(record_stored(valid, kept))
            outcomes += record_generic_stored(generic_valid, generic_kept)
            new = sum(kept) + sum(answer.new for answer in generic_kept)
            its_letters = [
                _dead_letter(batch.messages[outcome.index], outcome, received_at)
                for outcome in outcomes
                if outcome.status == REJECTED
            ]
            result = BatchResult(
                stored=new,
                duplicates=len(kept) + len(generic_kept) - new,
                dead_letters=len(its_letters),
            )
            self._count(batch, outcomes, its_letters, result)
            results.append(result)
            letters += its_letters
        if letters:
            self.store.add_dead_letters(letters)
            self._produce_errors(letters)
        return results

    def _append_one_by_one(self, validated: Validated, received_at: str) -> list[bool]:
        """The store refused the batch (not an outage): find the events it refuses; they become
        dead letters, the others are stored."""
        stored: list[bool] = []
        for event, position in zip(validated.events, validated.positions, strict=True):
            try:
                stored += self._append([event], received_at)
            except StoreRefused as exc:
                outcome = validated.outcomes[position]
                outcome.status, outcome.event_id, outcome.errors = REJECTED, None, [exc.message]
                stored.append(False)
        # Refused events are no longer candidates: drop them so record_stored lines up.
        keep = [i for i, p in enumerate(validated.positions) if validated.outcomes[p].status != REJECTED]
        validated.events = [validated.events[i] for i in keep]
        validated.positions = [validated.positions[i] for i in keep]
        return [stored[i] for i in keep]

    def _append_generic_one_by_one(
        self, validated: GenericValidated, received_at: str
    ) -> list[GenericStored]:
        """As `_append_one_by_one`, for generic events."""
        stored: list[GenericStored] = []
        keep: list[int] = []
        for i, (event, position) in enumerate(zip(validated.events, validated.positions, strict=True)):
            try:
                stored += self._append_generic([event], received_at)
                keep.append(i)
            except StoreRefused as exc:
                outcome = validated.outcomes[position]
                outcome.status, outcome.event_id, outcome.errors = REJECTED, None, [exc.message]
        validated.events = [validated.events[i] for i in keep]
        validated.positions = [validated.positions[i] for i in keep]
        return stored

    def _count(
        self, batch: Batch, outcomes: list[Outcome], letters: list[DeadLetter], result: BatchResult
    ) -> None:
        for topic, count in Counter(m.topic() for m in batch.messages).items():
            metrics.KAFKA_CONSUMED.inc(count, topic=topic)
        for topic, count in Counter(letter.topic for letter in letters).items():
            metrics.KAFKA_DEAD_LETTERS.inc(count, topic=topic)
        metrics.count_outcomes("kafka", outcomes)
        self.totals.consumed += len(batch.messages)
        self.totals.stored += result.stored
        self.totals.duplicates += result.duplicates
        self.totals.dead_letters += result.dead_letters

    def _produce_errors(self, letters: list[DeadLetter]) -> None:
        """Copy dead letters to `<topic>.errors`, flushed before the offsets are committed. The table
        already holds them, so a broker that refuses them costs a log line, not the partition."""
        if not self.settings.kafka_error_topic:
            return
        if self._producer is None:
            self._producer = Producer(producer_config(self.settings))
        for letter in letters:
            self._producer.produce(
                f"{letter.topic}.errors",
                key=letter.key,
                value=letter.value,
                headers=[
                    ("headwater.error", letter.error.encode()),
                    ("headwater.topic", letter.topic.encode()),
                    ("headwater.partition", str(letter.partition).encode()),
                    ("headwater.offset", str(letter.offset).encode()),
                ],
                on_delivery=_log_failed_delivery,
            )
        left = self._producer.flush(10)
        if left:
            log.error("%d dead letter(s) not delivered to the error topic in 10 s", left)

    def _commit(self, offsets: dict[Partition, int]) -> None:
        """Commit these offsets (the next to read of each partition), synchronously."""
        consumer = self._consumer
        if consumer is None:  # process() called on its own (tests, replay of a batch)
            return
        parts = [TopicPartition(topic, partition, offset) for (topic, partition), offset in offsets.items()]
        try:
            consumer.commit(offsets=parts, asynchronous=False)
        except KafkaException as exc:
            # Typically a rebalance took the partitions away: their new owner reads the batch
            # again and the store absorbs it.
            log.warning("offset commit failed, the batch will be delivered again: %s", exc)
            return
        self._committed.update(offsets)
        for (topic, partition), offset in offsets.items():
            metrics.KAFKA_COMMITTED.set(offset, topic=topic, partition=partition)

    def _rewind(self, batches: Sequence[Batch], reason: str) -> None:
        """The store failed: nothing of these batches (consumed in this order, the first one
        failed) is committed; read them again after a pause."""
        self._backoff = min(max(self._backoff * 2, 0.5), _MAX_BACKOFF)
        log.error("storing a Kafka batch failed (%s); retrying it in %.1f s", reason, self._backoff)
        consumer = self._consumer
        if consumer is not None:
            for (topic, partition), offset in rewind_offsets(batch.first for batch in batches).items():
                try:
                    consumer.seek(TopicPartition(topic, partition, offset))
                except KafkaException as exc:  # no longer assigned: its next owner reads it
                    log.warning("cannot rewind %s[%d]: %s", topic, partition, exc)
        self._stop.wait(self._backoff)

    # -- partitions and lag ---------------------------------------------------------------------
    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        log.info("assigned %s", _names(partitions))
        self._assigned.update((tp.topic, tp.partition) for tp in partitions)
        try:
            for tp in consumer.committed(partitions, timeout=5):
                if tp.offset >= 0:
                    self._committed[(tp.topic, tp.partition)] = tp.offset
        except KafkaException as exc:
            log.debug("cannot read committed offsets: %s", exc)

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        # Rebalance callbacks run inside consume(): the batches handed over before it are stored
        # and committed first, while the partitions are still this consumer's (a batch that fails
        # is read again by their next owner).
        if self._handover is not None:
            self._handover.drain()
            self._commit_stored(self._handover)
        log.info("revoked %s", _names(partitions))
        for tp in partitions:
            self._assigned.discard((tp.topic, tp.partition))
            self._committed.pop((tp.topic, tp.partition), None)
            metrics.KAFKA_LAG.remove(topic=tp.topic, partition=tp.partition)
            metrics.KAFKA_COMMITTED.remove(topic=tp.topic, partition=tp.partition)

    def _on_lost(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._on_revoke(consumer, partitions)

    def _update_lag(self) -> None:
        consumer = self._consumer
        if consumer is None:
            return
        for topic, partition in list(self._assigned):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), cached=True)
            if high < 0:
                continue  # nothing fetched from this partition yet
            committed = self._committed.get((topic, partition), max(low, 0))
            metrics.KAFKA_LAG.set(max(high - committed, 0), topic=topic, partition=partition)


def _validated(batch: _V | None) -> _V:
    assert batch is not None, "a batch is validated before it is stored"
    return batch


def _each(
    batches: Sequence[_V],
    together: Callable[[Sequence[_V]], list[_R]],
    alone: Callable[[_V], list[_R]],
) -> list[list[_R]]:
    """Each batch's answers (one per event), from one call on all their events (`together`), or,
    when the store refuses that, from each batch on its own (`alone`: event by event)."""
    try:
        answers = together(batches)
    except StoreRefused:
        return [alone(batch) for batch in batches]
    split: list[list[_R]] = []
    start = 0
    for batch in batches:
        end = start + len(batch.events)
        split.append(answers[start:end])
        start = end
    return split


def _dead_letter(message: Message, outcome: Outcome, received_at: str) -> DeadLetter:
    topic, partition, offset = message.topic(), message.partition(), message.offset()
    assert topic is not None and partition is not None and offset is not None
    key = message.key()
    return DeadLetter(
        topic=topic,
        partition=partition,
        offset=offset,
        key=key.encode() if isinstance(key, str) else key,
        value=message.value(),
        error="; ".join(outcome.errors),
        received_at=received_at,
    )


def _log_failed_delivery(error: KafkaError | None, message: Message) -> None:
    if error is not None:
        log.error("dead letter not delivered to %s: %s", message.topic(), error.str())


def _names(partitions: list[TopicPartition]) -> str:
    return ", ".join(f"{tp.topic}[{tp.partition}]" for tp in partitions) or "nothing"


@dataclass(frozen=True)
class PartitionLag:
    topic: str
    partition: int
    committed: int | None  # None: the group has committed nothing for it
    low: int
    high: int

    @property
    def lag(self) -> int:
        start = self.committed if self.committed is not None else self.low
        return max(self.high - start, 0)


def group_lag(settings: Settings, timeout: float = 10) -> list[PartitionLag]:
    """Committed offset, watermarks and lag of the consumer group on each partition of its topics,
    asked of the brokers (it works whether or not a consumer is running)."""
    consumer = Consumer(consumer_config(settings))
    try:
        metadata = consumer.list_topics(timeout=timeout)
        partitions = [
            TopicPartition(topic, partition)
            for topic in all_topics(settings)
            if topic in metadata.topics
            for partition in sorted(metadata.topics[topic].partitions)
        ]
        lags = []
        for tp in consumer.committed(partitions, timeout=timeout) if partitions else []:
            low, high = consumer.get_watermark_offsets(tp, timeout=timeout)
            committed = tp.offset if tp.offset >= 0 else None
            lags.append(PartitionLag(tp.topic, tp.partition, committed, low, high))
        return lags
    finally:
        consumer.close()
