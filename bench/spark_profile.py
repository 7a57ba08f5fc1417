"""Where a pipeline pass spends its time: rebuild the model of an existing store once, with
Spark's REST API and Java Flight Recorder on, and print three views of the same run.

    .venv/bin/python bench/pipeline.py --events 200000 --backend sqlite --skip-duckdb \\
        --skip-cluster --skip-continuous --keep --workdir /tmp/pb          # a store to profile
    .venv/bin/python bench/spark_profile.py sqlite:////tmp/pb/pipeline.db
    PYTHONPATH=/tmp/base/src:. .venv/bin/python bench/spark_profile.py URL  # another checkout's code

1. The pass: seconds, and `PassResult.stages` (transform+stage, merge, graph); the driver's steps
   of each batch; the rows published per table; the merge's slowest statements.
2. Spark's stages in the order they started: seconds from the first, wall time, tasks, executor
   run time, run time / wall time (about 2 when both cores of local[2] are busy, near 0 when the
   stage waits), rows read and shuffled. The stages of a batch overlap: the summary line gives
   the wall time in which at least one stage ran and how busy the executors were meanwhile.
   Then the SQL plan nodes that ran Python (the data source's reads, the staging writes) with
   their Python time, and the generated code that ran longest, with the plan nodes in it.
3. The JVM's CPU samples (JFR's jdk.ExecutionSample, every 10 ms of a running Java thread; the
   Python workers are other processes, in 2.): the share of samples by kind of work, each sample
   counted once under the first kind whose mark its stack holds (`KINDS`, in that order), then
   the methods most often on top of the stack.

The driver's own Python (planning, the merge) shows in 1. only: profile it with py-spy. Nothing is
asserted; the figures move with the machine's load. The model is rebuilt in place: use a copy of a
store whose model matters.
"""

from __future__ import annotations

import argparse
import collections
import functools
import importlib
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

from headwater.pipeline.runner import Pipeline
from headwater.pipeline.session import spark_session
from headwater.store import open_store
from headwater.store.model.tables import TABLES

# (kind of work, marks of it in a sample's stack: substrings of a frame's "package/Class.method")
KINDS = (
    ("JSON parsing (from_json, json_tuple, get_json_object)", ("/json/",)),
    ("the in-memory cache of persisted frames (building, compressing)", ("/columnar/",)),
    ("sorting (sort aggregates, sort-merge joins, sorts)", ("Sort", "/sort/")),
    ("hash aggregation", ("HashAggregat", "HashMap")),
    ("explode and posexplode", ("GenerateExec", "Explode")),
    ("Arrow batches (the Python data source's reads, staging)", ("Arrow", "/arrow/")),
    ("query planning (Catalyst)", ("catalyst/plans", "catalyst/analysis", "catalyst/optimizer")),
    ("code generation (Janino)", ("janino",)),
    ("class loading", ("ClassLoader",)),
)
_UI = "http://localhost:{port}/api/v1/applications/{app}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "url", help="the store whose model is rebuilt (its events are read, its model replaced)"
    )
    parser.add_argument("--master", default="local[2]", help="Spark master [local[2]]")
    parser.add_argument("--batch-events", type=int, default=200_000, help="events per batch [200,000]")
    parser.add_argument("--top", type=int, default=15, help="methods listed in 3. [15]")
    parser.add_argument("--no-jfr", action="store_true", help="no Java Flight Recorder (no 3.)")
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark session setting to try"
    )
    parser.add_argument(
        "--java-options", default="", metavar="FLAGS", help="JVM flags to try (e.g. -XX:+UseParallelGC)"
    )
    parser.add_argument(
        "--dump",
        type=Path,
        metavar="FILE",
        help="also write Spark's stages and SQL plans (with their text and metrics) to FILE, as JSON",
    )
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="headwater-spark-profile-"))
    recording = folder / "pass.jfr"
    options = "" if args.no_jfr else f"-XX:StartFlightRecording=filename={recording},settings=profile"
    options = f"{options} {args.java_options}".strip()
    spark = spark_session(args.master, java_options=options, ui=True)
    for setting in args.conf:
        key, _, value = setting.partition("=")
        spark.conf.set(key, value)
    store = open_store(args.url)
    steps = _timed_steps()
    statements = _timed_merge_statements()
    started = time.perf_counter()
    result = Pipeline(spark, store, dogfood=False, batch_events=args.batch_events).rebuild()
    seconds = time.perf_counter() - started
    print(f"1. rebuild of {result.events:,} events in {result.batches} batch(es): {seconds:.1f} s")
    for stage, spent in result.stages.items():
        print(f"   {stage:<16} {spent:7.1f} s")
    for step, spans in steps.items():
        print(f"   {step:<42} {sum(spans):7.1f} s  ({', '.join(f'{x:.1f}' for x in spans)} s)")
    print("   rows published:", ", ".join(f"{name} {rows:,}" for name, rows in _model_rows(store).items()))
    print("   the merge's statements (all batches), slowest first:")
    for statement, spent in sorted(statements.items(), key=lambda item: -item[1])[:8]:
        print(f"     {spent:7.1f} s  {statement}")

    context = spark.sparkContext
    port = (context.uiWebUrl or "http://localhost:4040").rsplit(":", 1)[1]
    base = _UI.format(port=port, app=context.applicationId)
    stages = _get(f"{base}/stages")
    print_stages(stages, _get(f"{base}/sql?details=true&planDescription=false&length=10000"))
    if args.dump is not None:
        plans = _get(f"{base}/sql?details=true&planDescription=true&length=10000")
        args.dump.write_text(json.dumps({"stages": stages, "sql": plans}, indent=1))
        print(f"   stages and plans written to {args.dump}")
    if not args.no_jfr:
        jvm = spark.sparkContext._jvm
        assert jvm is not None  # a session in this process
        for running in jvm.jdk.jfr.FlightRecorder.getFlightRecorder().getRecordings():
            running.dump(jvm.java.io.File(str(recording)).toPath())
        print_samples(recording, args.top)
    spark.stop()
    shutil.rmtree(folder, ignore_errors=True)


# what each batch does, in the driver: (module, attribute, what it is)
_STEPS = (
    ("headwater.pipeline.runner", "model_frames", "building the frames (driver)"),
    ("headwater.pipeline.publish", "each_partition", "the Spark job that stages the frames"),
    ("headwater.store.model.staging", "StagingTarget.collect", "staging files copied into the store"),
    ("headwater.store.model", "merge_facts", "the merge"),
)


def _timed_steps() -> dict[str, list[float]]:
    """Wrap each of `_STEPS` with a clock; the seconds of each call, by step."""
    spans: dict[str, list[float]] = {}
    for module_name, attribute, what in _STEPS:
        owner: Any = importlib.import_module(module_name)
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)
        spans[what] = []
        setattr(owner, name, _clocked(getattr(owner, name), spans[what]))
    return spans


class _TimedCursor:
    """A cursor whose statements are timed, by their first words (`_timed_merge_statements`)."""

    def __init__(self, cursor: Any, seconds: dict[str, float]) -> None:
        self._cursor = cursor
        self._seconds = seconds

    def execute(self, query: str, *args: Any) -> Any:
        started = time.perf_counter()
        try:
            return self._cursor.execute(query, *args)
        finally:
            what = " ".join(query.split()[:3])
            self._seconds[what] = self._seconds.get(what, 0.0) + time.perf_counter() - started

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


def _timed_merge_statements() -> dict[str, float]:
    """Time each statement of the merge's table by table part (`merge.merge_staged`): seconds by
    the statement's first three words, over every batch."""
    from headwater.store.model import merge

    seconds: dict[str, float] = {}
    staged = merge.merge_staged

    def timed(store: Any, cursor: Any, **options: Any) -> bool:
        return staged(store, _TimedCursor(cursor, seconds), **options)

    merge.merge_staged = timed  # type: ignore[assignment]
    return seconds


def _clocked(function: Any, spans: list[float]) -> Any:
    @functools.wraps(function)
    def clocked(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spans.append(time.perf_counter() - started)

    return clocked


def _model_rows(store: Any) -> dict[str, int]:
    """Rows of each model table, most first (empty tables left out)."""
    counts = {}
    with store.transaction() as cur:
        for name in TABLES:
            cur.execute(f"SELECT COUNT(*) FROM {name}")
            counts[name] = int(cur.fetchone()[0])
    return {name: rows for name, rows in sorted(counts.items(), key=lambda item: -item[1]) if rows}


def _get(url: str) -> Any:
    with urllib.request.urlopen(url) as answer:
        return json.load(answer)


def _when(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f%Z").timestamp()


def print_stages(stages: list[dict[str, Any]], queries: list[dict[str, Any]]) -> None:
    done = [s for s in stages if "submissionTime" in s and "completionTime" in s]
    done.sort(key=lambda s: _when(s["submissionTime"]))
    if not done:
        print("2. no Spark stage ran")
        return
    first = _when(done[0]["submissionTime"])
    print("\n2. Spark stages, in the order they started")
    print("   start    wall  stage tasks    run  run/wall     rows in  shuffled")
    spans = []
    for s in done:
        start, end = _when(s["submissionTime"]) - first, _when(s["completionTime"]) - first
        run = s["executorRunTime"] / 1000
        spans.append((start, end))
        print(
            f"  {start:6.1f} {end - start:7.1f} {s['stageId']:6d} {s['numTasks']:5d} {run:6.1f} "
            f"{run / max(end - start, 1e-3):9.2f} {s.get('inputRecords', 0):11,} "
            f"{s.get('shuffleWriteRecords', 0):9,}"
        )
    busy, reach = 0.0, float("-inf")
    for start, end in sorted(spans):  # the union of the stages' spans
        if end > reach:
            busy += end - max(start, reach)
            reach = end
    run_total = sum(s["executorRunTime"] for s in done) / 1000
    collecting = sum(s.get("jvmGcTime", 0) for s in done) / 1000
    print(
        f"   {len(done)} stages ran during {busy:.1f} s; executor run time {run_total:.1f} s "
        f"({run_total / max(busy, 1e-3):.2f} executors busy on average), of it collecting garbage "
        f"{collecting:.1f} s"
    )
    python: dict[str, float] = collections.defaultdict(float)
    for query in queries:
        for node in query.get("nodes", []):
            for metric in node.get("metrics", []):
                if metric["name"] == "time to execute Python code":
                    python[node["nodeName"]] += _milliseconds(metric["value"])
    for name, spent in sorted(python.items(), key=lambda item: -item[1]):
        print(f"   Python code run by {name}: {spent / 1000:.1f} s (all tasks)")
    print_codegen(queries)


def print_codegen(queries: list[dict[str, Any]], top: int = 15) -> None:
    """The whole-stage-generated code that ran longest (its `duration`, all tasks), each with its
    Spark stage and the plan nodes fused into it, top down: which steps of the plan the
    executors' JVM time went to. A code's time includes that of the steps feeding it within its
    stage (reading a cached frame or a shuffle, a sort aggregate, another code, which is listed
    too), so the figures nest and do not add up. The plan lists a cached frame's plan under each
    scan of it, with the same figures: each is shown once."""
    spans = {}
    for query in queries:
        nodes = sorted(query.get("nodes", []), key=lambda node: node.get("nodeId", 0))
        for at, node in enumerate(nodes):
            duration = next((m["value"] for m in node.get("metrics", []) if m["name"] == "duration"), None)
            if not node["nodeName"].startswith("WholeStageCodegen") or duration is None:
                continue
            code = int(node["nodeName"].split("(")[1].rstrip(")"))
            fused = []
            for inner in nodes[at + 1 :]:  # its nodes follow it, top down
                if inner.get("wholeStageCodegenId") != code:
                    break
                fused.append(inner["nodeName"])
            stage = duration.rsplit("(stage ", 1)[-1].split(".")[0] if "(stage " in duration else "?"
            spans.setdefault(duration, (_milliseconds(duration), stage, fused))
    total = sum(span[0] for span in spans.values())
    print(f"   whole-stage generated code: {total / 1000:.1f} s (all tasks); the longest:")
    for spent, stage, fused in sorted(spans.values(), key=lambda span: -span[0])[:top]:
        print(f"   {spent / 1000:6.1f} s  stage {stage:>4}: {' < '.join(fused)[:140]}")


def _milliseconds(value: str) -> float:
    """A Spark SQL timing metric ('total (min, med, max …)\\n1.2 s (…)' or '35 ms') in ms."""
    line = value.splitlines()[-1] if "\n" in value else value
    amount, unit = line.split("(")[0].split()[:2]
    scale = {"ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}[unit]
    return float(amount.replace(",", "")) * scale


def print_samples(recording: Path, top: int) -> None:
    jfr = Path(shutil.which("java") or "java").resolve().parent / "jfr"
    printed = subprocess.run(
        [str(jfr), "print", "--json", "--events", "jdk.ExecutionSample", str(recording)],
        check=True,
        capture_output=True,
    )
    samples = json.loads(printed.stdout)["recording"]["events"]
    kinds: collections.Counter[str] = collections.Counter()
    tops: collections.Counter[str] = collections.Counter()
    for sample in samples:
        frames = [
            f"{f['method']['type']['name'].replace('/', '.')}.{f['method']['name']}"
            for f in sample["values"]["stackTrace"]["frames"]
        ]
        if frames:
            tops[frames[0]] += 1
        stack = " ".join(f.replace(".", "/") for f in frames)
        kinds[next((kind for kind, marks in KINDS if any(m in stack for m in marks)), "other")] += 1
    total = max(1, len(samples))
    print(f"\n3. the JVM's CPU samples ({len(samples):,}), by kind of work")
    for kind, count in kinds.most_common():
        print(f"   {100 * count / total:5.1f}%  {kind}")
    print("   on top of the stack:")
    for method, count in tops.most_common(top):
        print(f"   {100 * count / total:5.1f}%  {method}")


if __name__ == "__main__":
    main()
