"""The OpenAPI document tells the truth: schemathesis (`run --checks all`, bounded examples, a fixed
seed) against a live server on both backends, over a small model and the demo's events, finds no
request the document allows that the server refuses, no answer the document does not describe, no
server error and no 405 without `Allow`."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from headwater.demo.lineage import demo_events
from headwater.events.times import format_ticks, now_ticks
from headwater.events.validate import validate_event
from headwater.store import open_store
from tests.api.model_fixture import fill_model
from tests.conftest import LiveServer

pytestmark = pytest.mark.slow  # long: started first under xdist (tests/conftest.py)

SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
CONFIG = Path(__file__).with_name("schemathesis.toml")
EXAMPLES = 10  # per operation and phase: under a minute a backend


@pytest.fixture
def served(database_url: str) -> Iterator[LiveServer]:
    store = open_store(database_url)
    try:
        fill_model(store)
        events = [validate_event(doc, orjson.dumps(doc)) for doc in demo_events()]
        store.append(events, format_ticks(now_ticks()))
    finally:
        store.close()
    server = LiveServer(database_url)
    yield server
    server.stop()


def test_the_openapi_document_tells_the_truth(served: LiveServer, tmp_path: Path) -> None:
    command = [
        str(SCHEMATHESIS),
        "--config-file",
        str(CONFIG),
        "--no-color",
        "run",
        f"{served.url}/openapi.json",
        "--checks",
        "all",
        "--max-examples",
        str(EXAMPLES),
        "--seed",
        "20261124",
        "--workers",
        "1",
        "--generation-database",
        "none",
        "--report-dir",
        str(tmp_path),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stdout[-20_000:] + result.stderr[-2_000:]
    assert "API Operations:" in result.stdout and "Tested: " in result.stdout
