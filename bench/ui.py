"""The web UI's speed in Debian's Chromium (Playwright), as a user meets it: the home page on the
demo lineage, and the lineage graph of about 50 and of 500 nodes (time from navigation to the first
drawn graph), then how long a zoom and a pan step take on the 500-node graph.

    .venv/bin/python bench/ui.py                 # builds a store (demo + two synthetic namespaces)
    .venv/bin/python bench/ui.py --workdir DIR   # keeps the store in DIR and reuses it next time

The store: the demo lineage (`headwater up --demo`) plus two namespaces of layered lineage,
`bench-small` (5 columns x 5 layers: 55 nodes) and `bench-large` (50 x 5: 550 nodes, drawn capped at
500), published by `headwater pipeline run`. Each figure is the median of --repeat page loads, each
in a fresh browser context (no cache). Figures go to stdout and bench/results/ui-<time>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
SCHEMA = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
PRODUCER = "https://github.com/headwater/bench-ui"
CHROMIUM_ARGS = [
    *("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"),
    *("--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run"),
]
SHAPES = {"bench-small": (5, 5), "bench-large": (50, 5)}  # namespace: (columns, layers)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def layered_events(namespace: str, columns: int, layers: int) -> list[dict[str, Any]]:
    """Job l.i reads datasets l.i and l.(i+1) and writes (l+1).i: one START and COMPLETE each."""
    start = datetime(2025, 4, 1, tzinfo=UTC)
    events = []
    for layer in range(layers):
        for i in range(columns):
            run = str(uuid.uuid4())
            at = start + timedelta(minutes=layer * columns + i)
            inputs = [{"namespace": namespace, "name": f"d{layer}.{k % columns}"} for k in (i, i + 1)]
            outputs = [{"namespace": namespace, "name": f"d{layer + 1}.{i}"}]
            for kind, when in (("START", at), ("COMPLETE", at + timedelta(seconds=30))):
                events.append(
                    {
                        "eventType": kind,
                        "eventTime": when.isoformat().replace("+00:00", "Z"),
                        "run": {"runId": run},
                        "job": {"namespace": namespace, "name": f"job{layer}.{i}"},
                        "inputs": inputs,
                        "outputs": outputs,
                        "producer": PRODUCER,
                        "schemaURL": SCHEMA,
                    }
                )
    return events


def build_store(database_url: str, *, synthetic: bool = True) -> None:
    """The demo lineage (plus, with `synthetic`, the layered namespaces), published by the pipeline."""
    from headwater.cli import _load_demo
    from headwater.config import Settings
    from headwater.events.times import format_ticks, now_ticks
    from headwater.events.validate import validate_event
    from headwater.store import open_store

    log("storing the demo lineage and the synthetic namespaces…")
    _load_demo(Settings(database_url=database_url))
    store = open_store(database_url)
    try:
        shapes = SHAPES.items() if synthetic else ()
        docs = [e for ns, (c, layer) in shapes for e in layered_events(ns, c, layer)]
        store.append([validate_event(d, orjson.dumps(d)) for d in docs], format_ticks(now_ticks()))
    finally:
        store.close()
    log("headwater pipeline run…")
    subprocess.run(
        [sys.executable, "-m", "headwater", "pipeline", "run", "--quiet", "--database-url", database_url],
        check=True,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )


def serve(database_url: str, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "headwater", "serve", "--port", str(port), "--database-url", database_url],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            with urllib.request.urlopen(url + "/api/atlas/v2/openlineage/health", timeout=1):
                return server, url
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the server did not start")


def mark(page: Any, name: str) -> float:
    """When the UI set performance mark `name`, in ms since the navigation started."""
    page.wait_for_selector("main")
    for _ in range(600):
        found = page.evaluate(f"performance.getEntriesByName('headwater:{name}').map(e => e.startTime)")
        if found:
            return float(found[-1])
        time.sleep(0.05)
    raise RuntimeError(f"no '{name}' mark on {page.url}")


# Zoom 20 times and pan 20 times on the graph, waiting for a frame after each step: ms per step.
STEP_TIMES = """async () => {
  const svg = document.querySelector('.canvas svg');
  const box = svg.getBoundingClientRect();
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
  const timeSteps = async (step) => {
    const started = performance.now();
    for (let i = 0; i < 20; i += 1) { step(i); await frame(); }
    return (performance.now() - started) / 20;
  };
  const at = {clientX: box.left + box.width / 2, clientY: box.top + 40, bubbles: true, pointerId: 7};
  const wheel = (i) => new WheelEvent('wheel',
    {deltaY: i % 2 ? 120 : -120, clientX: at.clientX, clientY: at.clientY, bubbles: true, cancelable: true});
  const zoom = await timeSteps((i) => svg.dispatchEvent(wheel(i)));
  svg.dispatchEvent(new PointerEvent('pointerdown', at));
  const pan = await timeSteps((i) => svg.dispatchEvent(new PointerEvent('pointermove',
    {...at, clientX: at.clientX + 8 * (i + 1)})));
  svg.dispatchEvent(new PointerEvent('pointerup', at));
  return {zoom, pan};
}"""


def measure(url: str, repeat: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium on PATH (apt-get install chromium)")
    figures: dict[str, Any] = {}
    pages = {
        "home (demo)": ("/", "page-drawn"),
        "lineage, ~50 nodes": ("/lineage?node=namespace:bench-small&depth=1", "graph-drawn"),
        "lineage, 500 nodes": ("/lineage?node=namespace:bench-large&depth=1", "graph-drawn"),
        "lineage of a demo dataset": (
            "/lineage?node=dataset:bigquery:acme-analytics.marts.fct_orders&depth=2",
            "graph-drawn",
        ),
    }
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for label, (path, name) in pages.items():
            times, nodes, steps = [], 0, None
            for _ in range(repeat):
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.goto(url + path)
                times.append(mark(page, name))
                nodes = page.locator(".node").count()
                if label.startswith("lineage, 500"):
                    steps = page.evaluate(STEP_TIMES)
                context.close()
            figures[label] = {"median_ms": statistics.median(times), "max_ms": max(times), "nodes": nodes}
            if steps:
                figures[label]["zoom_step_ms"] = round(steps["zoom"], 1)
                figures[label]["pan_step_ms"] = round(steps["pan"], 1)
            log(f"{label}: {figures[label]}")
        browser.close()
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--workdir", type=Path, help="keep the store here and reuse it (default: a temporary folder)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="page loads per figure (default 5)")
    parser.add_argument(
        "--json", type=Path, help="write the figures here (default bench/results/ui-<time>.json)"
    )
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="headwater-bench-ui-"))
    workdir.mkdir(parents=True, exist_ok=True)
    database = workdir / "headwater.db"
    database_url = f"sqlite:///{database}"
    if not database.exists():
        build_store(database_url)
    server, url = serve(database_url, workdir)
    try:
        figures = measure(url, args.repeat)
    finally:
        server.terminate()
        server.wait(timeout=15)
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"{'page':<28} {'nodes':>5} {'median ms':>10} {'max ms':>8}  interaction")
    for label, row in figures.items():
        extra = (
            f"zoom {row['zoom_step_ms']} ms/step, pan {row['pan_step_ms']} ms/step"
            if "zoom_step_ms" in row
            else ""
        )
        print(f"{label:<28} {row['nodes']:>5} {row['median_ms']:>10.0f} {row['max_ms']:>8.0f}  {extra}")
    out = args.json or RESULTS / f"ui-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"figures": figures, "repeat": args.repeat}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
