"""Nothing lost, nothing duplicated: `headwater consume` processes SIGKILLed at random moments while
the openlineage-python Kafka transport sends, and two consumers of one group through rebalances.

HEADWATER_TEST_KAFKA_EVENTS sets how many events the SIGKILL test sends (default 100,000).
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from headwater.config import Settings
from headwater.ingest.kafka import group_lag
from headwater.store import open_store
from tests.ingest.conftest import FAST_GROUP_OPTIONS, Broker
from tests.ingest.kafka_helpers import RecordingKafkaTransport, expected_ids, run_events, wait_for

pytestmark = pytest.mark.slow  # long: started first under xdist (tests/conftest.py)

SIGKILL_EVENTS = int(os.environ.get("HEADWATER_TEST_KAFKA_EVENTS", "100000"))


class ConsumerProcess:
    """`python -m headwater consume --processes 1` in a subprocess (one consumer), its output in a file."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        self._runs_before = self._runs()
        self._out = log.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "headwater", "consume", "--processes", "1"],
            env=env,
            stdout=self._out,
            stderr=subprocess.STDOUT,
        )

    def _runs(self) -> int:
        """Consumers that reached their consuming loop, by their log lines in the shared file."""
        return self.log.read_text().count(" as group ") if self.log.exists() else 0

    def is_running(self) -> bool:
        """Whether this consumer reached its loop (its SIGTERM handler is then in place)."""
        return self._runs() > self._runs_before

    def has_partitions(self) -> bool:
        """Whether it has logged an assignment of at least one partition (needs log level info)."""
        return re.search(r"assigned \S+\[\d+\]", self.log.read_text()) is not None

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)
        self._out.close()

    def terminate(self) -> int:
        """SIGTERM: finish the batch in hand, leave the group; the number of messages it consumed."""
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=60) == 0, self.log.read_text()[-3000:]
        self._out.close()
        found = re.findall(r"(\d+) message\(s\) consumed", self.log.read_text())
        return int(found[-1])


def consumer_env(database_url: str, broker: Broker, topic: str, group: str, workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HEADWATER_", "OPENLINEAGE"))}
    env.update(
        HEADWATER_DATABASE_URL=database_url,
        HEADWATER_KAFKA_BOOTSTRAP_SERVERS=broker.bootstrap,
        HEADWATER_KAFKA_TOPICS=topic,
        HEADWATER_KAFKA_GROUP_ID=group,
        HEADWATER_KAFKA_POLL_TIMEOUT="0.2",
        HEADWATER_KAFKA_OPTIONS=",".join(f"{k}={v}" for k, v in FAST_GROUP_OPTIONS),
        HEADWATER_LOG_LEVEL="info",  # has_partitions reads the "assigned" lines
        HOME=str(workdir),
    )
    return env


class Sender(threading.Thread):
    """The openlineage-python Kafka transport sending events (a few twice, as a retrying producer
    does), paced at `per_second` when given."""

    def __init__(self, broker: Broker, topic: str, count: int, per_second: float | None = None) -> None:
        super().__init__(name="sender", daemon=True)
        self.transport = RecordingKafkaTransport(broker.bootstrap, topic)
        self.events = run_events(count)
        self.per_second = per_second
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            started = time.monotonic()
            for i, event in enumerate(self.events):
                self.transport.emit(event)
                if i % 100 == 0:
                    self.transport.emit(self.events[i // 2])  # again: must be stored once
                if self.per_second and i % 200 == 0:
                    ahead = i / self.per_second - (time.monotonic() - started)
                    if ahead > 0:
                        time.sleep(ahead)
            assert self.transport.wait_for_completion(60)
        except BaseException as exc:
            self.error = exc


def stored_count(database_url: str) -> int:
    store = open_store(database_url)
    try:
        return store.count_events(after_time=None, before_time=None)
    finally:
        store.close()


def assert_exactly_the_distinct_events(database_url: str, sent: list[str], settings: Settings) -> None:
    ids = expected_ids(sent)
    store = open_store(database_url)
    try:
        assert store.count_events(after_time=None, before_time=None) == len(ids)
        assert store.count_dead_letters(topic=None) == 0
        stored_ids: set[str] = set()
        page = 10_000
        for offset in range(0, len(ids), page):
            events = store.list_events(
                after_time=None, before_time=None, descending=False, limit=page, offset=offset
            )
            stored_ids.update(event.event_id for event in events)
        assert stored_ids == ids
    finally:
        store.close()
    assert sum(lag.committed or 0 for lag in group_lag(settings)) == len(sent)


def wait_until_committed(settings: Settings, messages: int, timeout: float) -> None:
    wait_for(
        lambda: sum(lag.committed or 0 for lag in group_lag(settings)) == messages,
        timeout,
        f"{messages} offsets committed",
    )


def test_sigkilled_consumers_lose_and_duplicate_nothing(
    broker: Broker, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    topic = new_topic(4)
    database_url = f"sqlite:///{tmp_path / 'headwater.db'}"
    group = f"headwater-kill-{uuid.uuid4().hex[:8]}"
    settings = Settings(kafka_bootstrap_servers=broker.bootstrap, kafka_topics=(topic,), kafka_group_id=group)
    env = consumer_env(database_url, broker, topic, group, tmp_path)
    open_store(database_url).close()  # migrated before the first consumer, so counting works at once
    sender = Sender(broker, topic, SIGKILL_EVENTS)
    sender.start()
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    distinct: list[int] = []  # known once the sender is done

    def everything_stored() -> bool:
        if sender.is_alive():
            return False
        if not distinct:
            distinct.append(len(expected_ids(sender.transport.sent)))
        return stored_count(database_url) == distinct[0]

    for _ in range(5):
        consumer = ConsumerProcess(env, tmp_path / "consume.log")
        before = stored_count(database_url)

        def storing(before: int = before) -> bool:
            return stored_count(database_url) > before or everything_stored()

        # Kill it at a random moment once it is storing: mid-batch, between store and commit, …
        wait_for(storing, 60, f"the consumer to store (seed {seed})")
        time.sleep(rng.uniform(0, 1.5))
        consumer.kill()
    sender.join(timeout=120)
    assert sender.error is None, sender.error
    sent = sender.transport.sent

    last = ConsumerProcess(env, tmp_path / "consume.log")
    wait_for(everything_stored, 180, f"every event stored (seed {seed})")
    wait_until_committed(settings, len(sent), 30)
    # the killed consumers may have stored and committed everything already: a SIGTERM before
    # the last one's handler is in place would end it by the signal's default action
    wait_for(last.is_running, 60, "the last consumer to start consuming")
    last.terminate()
    assert_exactly_the_distinct_events(database_url, sent, settings)


def test_two_consumers_of_one_group_through_rebalances(
    broker: Broker, new_topic: Callable[..., str], database_url: str, tmp_path: Path
) -> None:
    topic = new_topic(4)
    group = f"headwater-pair-{uuid.uuid4().hex[:8]}"
    settings = Settings(kafka_bootstrap_servers=broker.bootstrap, kafka_topics=(topic,), kafka_group_id=group)
    env = consumer_env(database_url, broker, topic, group, tmp_path)
    open_store(database_url).close()
    sender = Sender(broker, topic, 12_000, per_second=2_000)
    sender.start()
    first = ConsumerProcess(env, tmp_path / "first.log")
    wait_for(lambda: stored_count(database_url) > 0, 60, "the first consumer to store")
    second = ConsumerProcess(env, tmp_path / "second.log")  # joins: a rebalance mid-stream
    # The first leaves once that rebalance has settled: tansu keeps a member that leaves in the
    # middle of a rebalance as the group's leader, and the group never settles again (Kafka does).
    wait_for(lambda: second.has_partitions(), 60, "the second consumer to be assigned partitions")
    first_consumed = first.terminate()  # leaves: another rebalance, the second takes everything
    sender.join(timeout=120)
    assert sender.error is None, sender.error
    sent = sender.transport.sent
    distinct = len(expected_ids(sent))
    wait_for(lambda: stored_count(database_url) == distinct, 120, f"{distinct} events stored")
    wait_until_committed(settings, len(sent), 30)
    second_consumed = second.terminate()
    assert first_consumed > 0 and second_consumed > 0
    assert first_consumed + second_consumed >= len(sent)
    assert_exactly_the_distinct_events(database_url, sent, settings)


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


def test_consume_processes_share_the_partitions_and_die_with_their_parent(
    broker: Broker, new_topic: Callable[..., str], tmp_path: Path
) -> None:
    topic = new_topic(4)
    database_url = f"sqlite:///{tmp_path / 'headwater.db'}"
    group = f"headwater-procs-{uuid.uuid4().hex[:8]}"
    settings = Settings(kafka_bootstrap_servers=broker.bootstrap, kafka_topics=(topic,), kafka_group_id=group)
    env = consumer_env(database_url, broker, topic, group, tmp_path)
    sender = Sender(broker, topic, 3_000)
    sender.run()
    assert sender.error is None, sender.error
    sent = sender.transport.sent
    distinct = len(expected_ids(sent))

    log = tmp_path / "consume.log"
    with log.open("ab") as out:
        parent = subprocess.Popen(
            [sys.executable, "-m", "headwater", "consume", "--processes", "2"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    wait_for(lambda: stored_count(database_url) == distinct, 60, f"{distinct} events stored")
    wait_until_committed(settings, len(sent), 30)
    (child,) = _children(parent.pid)
    parent.send_signal(signal.SIGTERM)
    assert parent.wait(timeout=60) == 0, log.read_text()[-3000:]
    ((total, shares),) = re.findall(r"(\d+) message\(s\) consumed \(([\d, ]+) by process\)", log.read_text())
    consumed = [int(n) for n in shares.split(", ")]
    assert len(consumed) == 2 and min(consumed) > 0 and sum(consumed) == int(total) == len(sent), consumed
    assert not Path(f"/proc/{child}").exists()
    assert_exactly_the_distinct_events(database_url, sent, settings)

    # A parent killed outright takes its forked consumers with it.
    parent = subprocess.Popen(
        [sys.executable, "-m", "headwater", "consume", "--processes", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for(lambda: len(_children(parent.pid)) == 1, 30, "the forked consumer")
    (child,) = _children(parent.pid)
    parent.kill()
    parent.wait()
    wait_for(lambda: not Path(f"/proc/{child}").exists() or _zombie(child), 15, "the orphan to stop")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
