"""Ingest counters, gauges and latency histograms of this process, in the Prometheus text format.

Every entry point (HTTP, Kafka) counts here; `GET /metrics` and `headwater consume --metrics-port`
render the same registry. Updates happen per request or per batch, never per event, so one lock per
metric costs nothing worth measuring. Where several processes ingest (`serve --workers`, `consume
--processes`), each renders the sum of all of them (`metrics_shared`): a metric's state is a plain
dictionary that can be written to a file, and `render` combines this process's with its siblings'.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from headwater.ingest.service import DUPLICATE, REJECTED, Outcome

LabelValues = tuple[str, ...]
State = dict[LabelValues, Any]  # label values → value (a histogram's: (bucket counts, sum))
Snapshot = dict[str, list[list[Any]]]  # metric name → [[label values, value], ...], as JSON keeps it

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class Metric:
    """A named family of samples, one per combination of label values."""

    kind = "untyped"

    def __init__(self, name: str, help: str, labels: Sequence[str] = ()) -> None:
        self.name = name
        self.help = help
        self.labels = tuple(labels)
        self._lock = threading.Lock()
        self._values: dict[LabelValues, float] = {}

    def _key(self, labels: dict[str, object]) -> LabelValues:
        try:
            if len(labels) == len(self.labels):
                return tuple([str(labels[name]) for name in self.labels])
        except KeyError:
            pass
        raise ValueError(f"{self.name} takes labels {self.labels}, got {tuple(labels)}")

    def _label_text(self, values: LabelValues, extra: str = "") -> str:
        parts = [f'{name}="{_escape(value)}"' for name, value in zip(self.labels, values, strict=True)]
        if extra:
            parts.append(extra)
        return "{" + ",".join(parts) + "}" if parts else ""

    def value(self, **labels: object) -> float:
        with self._lock:
            return self._values.get(self._key(labels), 0.0)

    def state(self) -> State:
        """A copy of this process's samples."""
        with self._lock:
            return dict(self._values)

    def snapshot(self) -> list[list[Any]]:
        """This process's samples as JSON can hold them."""
        return [[list(key), value] for key, value in self.state().items()]

    def combine(self, own: State, others: Iterable[list[list[Any]]]) -> State:
        """This process's samples with other processes' snapshots: added up (a gauge: theirs
        where this process has none)."""
        combined = dict(own)
        for snapshot in others:
            for key, value in snapshot:
                combined[tuple(key)] = combined.get(tuple(key), 0.0) + value
        return combined

    def samples(self, state: State) -> Iterator[str]:
        for values, number in sorted(state.items()):
            yield f"{self.name}{self._label_text(values)} {_number(number)}"

    def render(self, others: Iterable[list[list[Any]]] = ()) -> str:
        state = self.combine(self.state(), others)
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} {self.kind}", *self.samples(state)]
        return "\n".join(lines) + "\n"


class Counter(Metric):
    kind = "counter"

    def inc(self, amount: float = 1, **labels: object) -> None:
        if amount < 0:
            raise ValueError("a counter only goes up")
        key = self._key(labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount


class Gauge(Metric):
    kind = "gauge"

    def set(self, value: float, **labels: object) -> None:
        key = self._key(labels)
        with self._lock:
            self._values[key] = value

    def remove(self, **labels: object) -> None:
        key = self._key(labels)
        with self._lock:
            self._values.pop(key, None)

    def combine(self, own: State, others: Iterable[list[list[Any]]]) -> State:
        """A gauge is one process's reading (a Kafka partition's lag is its owner's): this
        process's values, and the others' for label values it has none of."""
        combined: State = {}
        for snapshot in others:
            combined.update((tuple(key), value) for key, value in snapshot)
        combined.update(own)
        return combined


class Histogram(Metric):
    kind = "histogram"

    def __init__(
        self, name: str, help: str, labels: Sequence[str] = (), buckets: Iterable[float] = _LATENCY_BUCKETS
    ) -> None:
        super().__init__(name, help, labels)
        self.buckets = tuple(sorted(buckets))
        self._counts: dict[LabelValues, list[int]] = {}

    def observe(self, value: float, **labels: object) -> None:
        key = self._key(labels)
        with self._lock:
            counts = self._counts.setdefault(key, [0] * (len(self.buckets) + 1))
            counts[bisect.bisect_left(self.buckets, value)] += 1  # the first bound >= value, else +Inf
            self._values[key] = self._values.get(key, 0.0) + value

    def count(self, **labels: object) -> int:
        with self._lock:
            return sum(self._counts.get(self._key(labels), ()))

    def state(self) -> State:
        with self._lock:
            return {key: (list(counts), self._values[key]) for key, counts in self._counts.items()}

    def combine(self, own: State, others: Iterable[list[list[Any]]]) -> State:
        combined = {key: (list(counts), total) for key, (counts, total) in own.items()}
        for snapshot in others:
            for key, (counts, total) in snapshot:
                if len(counts) != len(self.buckets) + 1:  # another version's buckets: not comparable
                    continue
                mine, mine_total = combined.get(tuple(key), ([0] * len(counts), 0.0))
                combined[tuple(key)] = (
                    [a + b for a, b in zip(mine, counts, strict=True)],
                    mine_total + total,
                )
        return combined

    def samples(self, state: State) -> Iterator[str]:
        for values, (counts, total) in sorted(state.items()):
            cumulative = 0
            for bound, count in zip((*self.buckets, math.inf), counts, strict=True):
                cumulative += count
                label = self._label_text(values, f'le="{_number(bound)}"')
                yield f"{self.name}_bucket{label} {cumulative}"
            yield f"{self.name}_sum{self._label_text(values)} {_number(total)}"
            yield f"{self.name}_count{self._label_text(values)} {cumulative}"


class Registry:
    def __init__(self) -> None:
        self.metrics: list[Metric] = []

    def add(self, metric: Metric) -> Metric:
        self.metrics.append(metric)
        return metric

    def snapshot(self) -> Snapshot:
        """Every metric's samples in this process, as JSON can hold them."""
        return {metric.name: metric.snapshot() for metric in self.metrics}

    def render(self, others: Sequence[Mapping[str, list[list[Any]]]] = ()) -> str:
        """Every metric in the Prometheus text exposition format (version 0.0.4): this process's
        samples combined with the other processes' snapshots given."""
        return "".join(
            metric.render(other[metric.name] for other in others if metric.name in other)
            for metric in self.metrics
        )


REGISTRY = Registry()
EVENTS = Counter(
    "headwater_ingest_events_total",
    "Candidate events by entry point (http, kafka) and outcome (stored, duplicate, rejected).",
    ("source", "outcome"),
)
HTTP_REQUESTS = Counter(
    "headwater_http_ingest_requests_total", "HTTP ingest requests by response status.", ("status",)
)
HTTP_SECONDS = Histogram(
    "headwater_http_ingest_seconds", "HTTP ingest request latency, until the durable answer is sent."
)
KAFKA_CONSUMED = Counter(
    "headwater_kafka_messages_consumed_total", "Kafka messages consumed, by topic.", ("topic",)
)
KAFKA_DEAD_LETTERS = Counter(
    "headwater_kafka_dead_letters_total",
    "Kafka messages dead-lettered (not JSON, invalid, too large), by topic.",
    ("topic",),
)
KAFKA_LAG = Gauge(
    "headwater_kafka_consumer_lag",
    "Messages of a partition assigned to this consumer not yet committed (high watermark - committed).",
    ("topic", "partition"),
)
KAFKA_COMMITTED = Gauge(
    "headwater_kafka_committed_offset",
    "Next offset of a partition committed by this consumer (its events are durable).",
    ("topic", "partition"),
)
KAFKA_BATCH_SECONDS = Histogram(
    "headwater_kafka_batch_seconds", "Time to decode, validate, durably store and commit one Kafka batch."
)
for _metric in (
    EVENTS,
    HTTP_REQUESTS,
    HTTP_SECONDS,
    KAFKA_CONSUMED,
    KAFKA_DEAD_LETTERS,
    KAFKA_LAG,
    KAFKA_COMMITTED,
    KAFKA_BATCH_SECONDS,
):
    REGISTRY.add(_metric)


def count_outcomes(source: str, outcomes: Iterable[Outcome]) -> None:
    """Add a request's or batch's outcomes to headwater_ingest_events_total."""
    stored = duplicate = rejected = 0
    for outcome in outcomes:
        if outcome.status == REJECTED:
            rejected += 1
        elif outcome.status == DUPLICATE:
            duplicate += 1
        else:
            stored += 1
    for name, amount in (("stored", stored), ("duplicate", duplicate), ("rejected", rejected)):
        if amount:
            EVENTS.inc(amount, source=source, outcome=name)


def parse_samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    """The samples of a Prometheus text exposition (as `render` writes it): (name, labels, value)."""
    samples = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, _, number = line.rpartition(" ")
        name, _, label_text = head.partition("{")
        labels = {}
        for part in label_text.rstrip("}").split('",') if label_text else ():
            key, _, value = part.partition('="')
            labels[key] = value.rstrip('"').replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
        samples.append((name, labels, float(number)))
    return samples
