"""`headwater ingest --generic`, `headwater elements [show]` and `headwater events [--generic]`."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from headwater.store import open_store
from tests.api.test_generic import MANUAL_EVENTS
from tests.factories import run_event
from tests.test_cli import cli


def test_replay_then_browse_from_the_command_line(database_url: str, tmp_path: Path) -> None:
    events = tmp_path / "fastscore.ndjson.gz"
    events.write_bytes(gzip.compress(b"\n".join(json.dumps(doc).encode() for doc in MANUAL_EVENTS)))
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps([{**MANUAL_EVENTS[0], "id": "x"}, {"type": "t", "elements": []}]))
    replay = cli("ingest", "--generic", "-q", "--database-url", database_url, str(events), str(broken))
    assert replay.exit_code == 1
    assert replay.stdout.startswith("2 file(s): 5 stored, 0 already stored, 1 rejected")
    assert "broken.json#1: description: missing" in replay.stderr
    again = cli("ingest", "--generic", "-q", "--keep-going", "--database-url", database_url, str(broken))
    assert again.exit_code == 0 and "0 stored, 1 already stored, 1 rejected" in again.stdout

    listed = cli("elements", "--type", "model", "--database-url", database_url)
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.splitlines() == ["       1  model  model1", "1 element(s) of type model"]
    shown = cli("elements", "show", "1", "--database-url", database_url, "--json")
    answer = json.loads(shown.stdout)
    assert answer["tags"] == {"model-hash": "abcd1234"}  # the last event received set it
    assert [e["type"] for e in answer["events"]] == ["put model", "load model", "put model"]
    text = cli("elements", "show", "1", "--database-url", database_url).stdout
    assert "model-hash = abcd1234" in text and "load model: model1" in text
    missing = cli("elements", "show", "99", "--database-url", database_url)
    assert missing.exit_code == 1 and "no element with id 99" in missing.output

    generic = cli("events", "--generic", "--database-url", database_url, "--limit", "2")
    assert generic.stdout.splitlines()[-1] == "2 generic event(s)"
    assert "put model: model1" in generic.stdout.splitlines()[0]


def test_events_without_generic_lists_openlineage_events(database_url: str, tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run_event()))
    assert cli("ingest", "-q", "--database-url", database_url, str(path)).exit_code == 0
    generic = tmp_path / "generic.json"
    generic.write_text(json.dumps(MANUAL_EVENTS[0]))
    assert cli("ingest", "--generic", "-q", "--database-url", database_url, str(generic)).exit_code == 0
    listed = cli("events", "--database-url", database_url)
    assert listed.stdout.splitlines()[-1] == "1 OpenLineage event(s)"
    store = open_store(database_url)
    try:
        assert store.count_events(after_time=None, before_time=None) == 2
    finally:
        store.close()
