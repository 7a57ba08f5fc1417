"""Freshness as a user meets it: `headwater up --demo` with its defaults, then how long an event
takes from its acknowledgement to the lineage and run APIs.

    .venv/bin/python bench/freshness.py                 # 20 events of each kind (about 3 min)
    .venv/bin/python bench/freshness.py --events 5      # a quick look
    .venv/bin/python bench/freshness.py --src /other/checkout/src   # before/after comparisons

Two kinds of events, sent alternately one every 1-3 s on fresh connections:
- **new job**: a COMPLETE of a job never seen, reading a demo dataset and writing a new one; it
  is fresh once `GET /api/v1/lineage?nodeId=job:…` answers 200 with both edges (the graph
  stage has run);
- **new run**: a COMPLETE of a new run of a demo job (same inputs and outputs as before); fresh
  once `GET /api/v1/jobs/runs/{runId}` answers 200 with state COMPLETED.
Each is timed from its 201 to the first poll (every 50 ms) that finds it. Also timed: from the
start of `headwater up --demo` to the demo's lineage answering (what a newcomer waits for).
Prints a table; `--json FILE` writes the raw figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import VENV_BIN, Figure, free_port, percentile, print_table

_NAMESPACE = "freshness"
_PRODUCER = "https://github.com/headwater/bench/freshness"


def _get(port: int, path: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, None
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, None


def _post(port: int, doc: dict[str, Any]) -> int:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/v1/lineage",
        data=json.dumps(doc).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return int(resp.status)


def _event(
    job: tuple[str, str], run_id: str, inputs: list[dict[str, str]], outputs: list[dict[str, str]]
) -> dict[str, Any]:
    return {
        "eventType": "COMPLETE",
        "eventTime": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "run": {"runId": run_id},
        "job": {"namespace": job[0], "name": job[1]},
        "inputs": inputs,
        "outputs": outputs,
        "producer": _PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }


def _wait(check: Any, timeout: float) -> float | None:
    """Seconds until `check()` is true (polled every 50 ms), None after `timeout`."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if check():
            return time.perf_counter() - started
        time.sleep(0.05)
    return None


def _demo_job(port: int) -> tuple[tuple[str, str], list[dict[str, str]], list[dict[str, str]]]:
    """A demo job with at least one input and one output, as (job, inputs, outputs)."""
    _, jobs = _get(port, "/api/v1/jobs?limit=200")
    for job in (jobs or {}).get("jobs", []):
        ins = [{"namespace": d["namespace"], "name": d["name"]} for d in job.get("inputs", [])]
        outs = [{"namespace": d["namespace"], "name": d["name"]} for d in job.get("outputs", [])]
        if ins and outs:
            return (job["namespace"], job["name"]), ins, outs
    raise SystemExit("no demo job with inputs and outputs was published")


def _published_jobs(port: int) -> int:
    status, page = _get(port, "/api/v1/jobs?limit=1")
    return int(page.get("totalCount", 0)) if status == 200 and page else 0


def _has_edges(port: int, node: str, want: int) -> bool:
    status, graph = _get(port, f"/api/v1/lineage?nodeId={urllib.parse.quote(node)}&depth=1")
    if status != 200 or not graph:
        return False
    for item in graph.get("graph", []):
        if item.get("id") == node:
            return len(item.get("inEdges", [])) + len(item.get("outEdges", [])) >= want
    return False


def _run_done(port: int, run_id: str) -> bool:
    status, run = _get(port, f"/api/v1/jobs/runs/{urllib.parse.quote(run_id, safe='')}")
    return status == 200 and bool(run) and run.get("state") == "COMPLETED"


def measure(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.workdir or tempfile.mkdtemp(prefix="hw-fresh-"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEADWATER_")}
    if args.src:
        env["PYTHONPATH"] = args.src
    exe = VENV_BIN / "python"
    log = (work / "up.log").open("wb")
    started = time.perf_counter()
    up = subprocess.Popen(
        [str(exe), "-m", "headwater", "up", "--demo", "--port", str(port)],
        cwd=work,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    result: dict[str, Any] = {"new job": [], "new run": [], "misses": 0}
    try:
        ready = _wait(lambda: _published_jobs(port) > 0, 600)
        if ready is None:
            raise SystemExit(f"the demo was not published within 600 s; see {work / 'up.log'}")
        result["up to demo lineage"] = time.perf_counter() - started
        print(f"demo lineage answering after {result['up to demo lineage']:.1f} s", file=sys.stderr)
        job, ins, outs = _demo_job(port)
        rng = random.Random(args.seed)
        for i in range(args.events):
            time.sleep(rng.uniform(1.0, 3.0))
            name = f"fresh_job_{i}_{uuid.uuid4().hex[:6]}"
            out = [{"namespace": _NAMESPACE, "name": f"{name}_out"}]
            _post(port, _event((_NAMESPACE, name), str(uuid.uuid4()), ins[:1], out))
            node = f"job:{_NAMESPACE}:{name}"
            seconds = _wait(lambda node=node: _has_edges(port, node, 2), args.timeout)
            _record(result, "new job", seconds)
            time.sleep(rng.uniform(1.0, 3.0))
            run_id = str(uuid.uuid4())
            _post(port, _event(job, run_id, ins, outs))
            seconds = _wait(lambda run_id=run_id: _run_done(port, run_id), args.timeout)
            _record(result, "new run", seconds)
    finally:
        os.killpg(up.pid, signal.SIGINT)
        try:
            up.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(up.pid, signal.SIGKILL)
        log.close()
    return result


def _record(result: dict[str, Any], kind: str, seconds: float | None) -> None:
    if seconds is None:
        result["misses"] += 1
    else:
        result[kind].append(seconds)
    print(f"  {kind}: {'timeout' if seconds is None else f'{seconds:.2f} s'}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=20, help="events of each kind timed")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds before an event counts as missed")
    p.add_argument("--src", help="another checkout's src/ folder to run (before/after comparisons)")
    p.add_argument("--workdir", help="folder for the store and up's log (default: a temporary one)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json", help="write the raw figures here")
    args = p.parse_args(argv)
    result = measure(args)
    figures = [Figure("sqlite", "`headwater up --demo` → demo lineage", result["up to demo lineage"], "s")]
    for kind in ("new job", "new run"):
        times = sorted(result[kind])
        if not times:
            continue
        note = f"p90 {percentile(times, 90):.1f} s, max {times[-1]:.1f} s, n={len(times)}"
        median = statistics.median(times)
        figures.append(Figure("sqlite", f"ack → {kind} queryable, median", median, "s", 3.0, False, note))
    print_table(figures)
    if result["misses"]:
        print(f"{result['misses']} event(s) not queryable within {args.timeout:g} s", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 1 if result["misses"] else 0


if __name__ == "__main__":
    sys.exit(main())
