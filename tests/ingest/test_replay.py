"""Replaying files (`headwater.ingest.replay`): NDJSON read a block at a time and cut into batches of
whole lines, batches validated here or in other processes, and the same summary either way."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from headwater.errors import StoreUnavailable
from headwater.events.limits import DEPTH_REASON
from headwater.ingest.generic import replay_generic_files
from headwater.ingest.replay import ReplaySummary, auto_workers, replay_documents, replay_files
from headwater.ingest.service import Outcome, Validated, validate_documents
from headwater.store import open_store
from headwater.store.generic import generic_store
from tests.api.test_generic import MANUAL_EVENTS
from tests.factories import nested_event, run_event

RUN = "0190c6b0-3c1e-7d3a-9f6e-2b1d4c5e6f70"


def _events(count: int) -> list[dict[str, Any]]:
    return [
        run_event(RUN, event_time=f"2024-05-01T10:{i // 60:02d}:{i % 60:02d}Z", job=f"job{i % 7}")
        for i in range(count)
    ]


def _lines(events: list[dict[str, Any]]) -> list[str]:
    """The events as NDJSON lines, with a blank line, a malformed line and an invalid event among
    them: line 6 is blank, line 12 is not JSON, line 20 has an empty runId."""
    lines = [json.dumps(event) for event in events]
    lines.insert(5, "")
    lines.insert(11, "{not json")
    bad = run_event()
    bad["run"]["runId"] = ""
    lines.insert(19, json.dumps(bad))
    return lines


def _replay(url: str, files: list[Path], **options: Any) -> ReplaySummary:
    store = open_store(url)
    try:
        return replay_files(store, files, progress=False, **options)
    finally:
        store.close()


def _stored_payloads(url: str) -> list[Any]:
    store = open_store(url)
    try:
        found = store.list_events(after_time=None, before_time=None, descending=False, limit=1000, offset=0)
        return [json.loads(event.payload) for event in found]
    finally:
        store.close()


@pytest.mark.parametrize("parallel", [False, True], ids=["here", "other-processes"])
@pytest.mark.parametrize("suffix", [".ndjson", ".jsonl.gz"])
def test_a_file_read_in_blocks_gives_what_it_holds_and_names_each_rejected_line(
    tmp_path: Path, parallel: bool, suffix: str
) -> None:
    """Blocks of 2,000 bytes hold one or two events each (an event here is about 1 KB), so batches
    of 7 lines are cut across blocks: every event is stored once, and each rejection names its
    line and its place among the file's events."""
    events = _events(40)
    path = tmp_path / f"events{suffix}"
    text = "\n".join(_lines(events)) + "\n"
    if suffix.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    url = f"sqlite:///{tmp_path / 'store.db'}"

    summary = _replay(url, [path], batch_size=7, block_bytes=2_000, workers=1 if parallel else 0)

    assert (summary.files, summary.stored, summary.duplicates, summary.rejected) == (1, 40, 0, 2)
    assert summary.rejections[0].startswith(f"{path}#10: line 12: malformed JSON")
    assert summary.rejections[1] == f"{path}#18: run.runId: must not be empty"
    assert sorted(_stored_payloads(url), key=lambda e: e["eventTime"]) == events

    again = _replay(url, [path], batch_size=7, block_bytes=2_000, workers=1 if parallel else 0)
    assert (again.stored, again.duplicates, again.rejected) == (0, 40, 2)
    assert again.rejections == summary.rejections


def test_a_line_longer_than_a_block_comes_whole(tmp_path: Path) -> None:
    events = _events(3)
    events[1]["run"]["facets"]["note"] = {"_producer": "p", "_schemaURL": "s", "text": "x" * 5_000}
    path = tmp_path / "long.ndjson"
    path.write_text("".join(json.dumps(event) + "\n" for event in events)[:-1])  # no newline at the end
    url = f"sqlite:///{tmp_path / 'store.db'}"

    summary = _replay(url, [path], batch_size=2, block_bytes=1_000)

    assert (summary.stored, summary.rejected) == (3, 0), summary.rejections
    assert sorted(_stored_payloads(url), key=lambda e: e["eventTime"]) == events


@pytest.mark.parametrize("workers", [0, 1], ids=["here", "other-processes"])
def test_events_nested_too_deep_are_rejected_alone_in_both_kinds_of_file(
    tmp_path: Path, workers: int
) -> None:
    events = _events(4)
    deep = nested_event(5000)
    lines = tmp_path / "deep.ndjson"
    lines.write_bytes(b"\n".join([json.dumps(events[0]).encode(), deep, json.dumps(events[1]).encode()]))
    array = tmp_path / "deep.json"
    array.write_bytes(
        b"[" + b",".join([json.dumps(events[2]).encode(), deep, json.dumps(events[3]).encode()]) + b"]"
    )
    url = f"sqlite:///{tmp_path / 'store.db'}"

    summary = _replay(url, [lines, array], workers=workers)

    assert (summary.stored, summary.rejected) == (4, 2), summary.rejections
    assert summary.rejections == [f"{lines}#1: line 2: {DEPTH_REASON}", f"{array}#1: {DEPTH_REASON}"]
    assert sorted(_stored_payloads(url), key=lambda e: e["eventTime"]) == events


def test_a_gzip_file_cut_short_keeps_what_was_read_and_is_rejected_once(tmp_path: Path) -> None:
    """The events before the cut are stored; the file is one rejection, and the replay goes on
    with the next file instead of stopping on the error."""
    events = _events(60)
    whole = gzip.compress("".join(json.dumps(event) + "\n" for event in events).encode())
    cut = tmp_path / "cut.ndjson.gz"
    cut.write_bytes(whole[: len(whole) * 3 // 4])
    after = tmp_path / "after.json"
    after.write_text(json.dumps(run_event(event_time="2024-06-01T00:00:00Z")))
    url = f"sqlite:///{tmp_path / 'store.db'}"

    summary = _replay(url, [cut, after], batch_size=10, block_bytes=4_096)

    assert summary.rejected == 1
    assert summary.rejections[0].startswith(f"{cut}: ")
    stored = _stored_payloads(url)
    assert summary.stored == len(stored) and 1 < len(stored) < 61
    assert stored[-1]["eventTime"] == "2024-06-01T00:00:00Z"  # the next file was replayed
    assert sorted(stored[:-1], key=lambda e: e["eventTime"]) == events[: len(stored) - 1]


def test_an_error_of_the_store_stops_the_replay_instead_of_rejecting_the_file(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    path.write_text("".join(json.dumps(event) + "\n" for event in _events(5)))

    def append(validated: Validated) -> Sequence[Outcome]:
        raise StoreUnavailable("the database went away")

    with pytest.raises(StoreUnavailable):
        replay_documents([path], validate_documents, append, progress=False)


def test_generic_events_replay_in_other_processes_too(tmp_path: Path) -> None:
    path = tmp_path / "generic.ndjson"
    path.write_text("".join(json.dumps(event) + "\n" for event in MANUAL_EVENTS) + "[1]\n")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = open_store(url)
    try:
        summary = replay_generic_files(store, [path], batch_size=2, progress=False, workers=1)
        listed = generic_store(store).list_generic_events(
            event_type=None, element_id=None, tag_id=None, after=None, before=None, limit=100, offset=0
        )
    finally:
        store.close()
    assert (summary.stored, summary.rejected) == (len(MANUAL_EVENTS), 1)
    assert summary.rejections[0].startswith(f"{path}#{len(MANUAL_EVENTS)}: ")
    assert sorted(event.description for event in listed) == sorted(e["description"] for e in MANUAL_EVENTS)


def test_a_file_named_twice_numbers_its_documents_from_its_start_each_time(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    path.write_text("\n".join(_lines(_events(25))) + "\n")
    url = f"sqlite:///{tmp_path / 'store.db'}"

    summary = _replay(url, [path, path], batch_size=4, block_bytes=3_000, workers=1)

    assert (summary.files, summary.stored, summary.duplicates, summary.rejected) == (2, 25, 25, 4)
    assert [line.split(":")[0] for line in summary.rejections] == [f"{path}#10", f"{path}#18"] * 2


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads processes from /proc")
def test_a_killed_command_leaves_no_validating_process_behind(tmp_path: Path) -> None:
    """`headwater ingest` killed outright (SIGKILL: no cleanup) while its validating process
    works: that process sees its parent gone and exits, instead of waiting for work forever."""
    path = tmp_path / "events.ndjson"
    path.write_text("".join(json.dumps(event) + "\n" for event in _events(200)) * 300)  # 60,000 lines
    command = [sys.executable, "-m", "headwater", "ingest", "-q", str(path)]
    url = f"sqlite:///{tmp_path / 'store.db'}"
    assert auto_workers([path]) >= 1  # large enough for the command to start one
    process = subprocess.Popen([*command, "--database-url", url])
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while not workers and time.monotonic() < deadline and process.poll() is None:
            workers = {pid for pid in _children(process.pid) if b"spawn_main" in _cmdline(pid)}
            time.sleep(0.05)
        assert workers, "no validating process started"
    finally:
        process.kill()
        process.wait()
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() and _state(pid) != "Z" for pid in workers):
        assert time.monotonic() < deadline, "a validating process outlived the command"
        time.sleep(0.1)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
