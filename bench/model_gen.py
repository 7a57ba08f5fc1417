"""A large lineage model for the query benchmark, bulk-loaded straight into the model tables.

This is the "documented bulk load" of issue 4. Building 1,000,000 runs through the Spark pipeline
takes longer than a benchmark should (see bench/pipeline.py), so this writes the tables the
pipeline publishes directly (schema: store/*/migrations/0003_lineage_model.sql and 0004), with
its rules (docs/pipeline.md):

- datasets on `layers` (30) layers of `lanes` lanes (`dataset:ns{NN}:l{layer}.t{lane}`, 40
  namespaces); a job in layer L writes the dataset of its lane (and mostly the next one too) and
  reads 1-4 datasets of nearby lanes in layers L-1 and L-2: a layered DAG ~30 deep with fan-in
  and fan-out whose upstream cones stay bounded (so `ultimate_nodes` stays near 10M rows at full
  size). The remaining 10% of the jobs read a hub dataset (wide fan-out) and a few read a later
  layer, making cycles;
- each job has 1-3 versions (a later version reads one more input), each starting at one of its
  runs; a run's `job_version` is the version in force when it started and `jobs.current_version`
  is the version of the latest run, as the pipeline decides: the version in force at time T is
  the version of the job's latest run with first_event_time <= T, so time travel has something
  to find. `job_versions`, `job_version_io`, `jobs.latest_run_id` follow;
- runs (`runs` / `jobs`, 20 per job by default) spread over 60 days, 95% COMPLETED, 5% FAILED;
- 1% of the datasets have a symlinked second name (`{name}_symlink`: `dataset_symlinks`, and
  `dataset_aliases` mapping both names to the first, the smallest id of the pair, as
  graph.aliases does); half of the jobs reading such a dataset name it by its second name;
- every dataset has a `schema` facet (5-20 fields); every written dataset a `columnLineage`
  facet (OpenLineage ColumnLineageDatasetFacet shape) mapping each field to 1-2 fields of the
  job's inputs, and the matching `column_lineage` rows (facet_hash = the facet's value hash);
- the graph tables (`lineage_edges`, `ultimate_nodes`, `dataset_depth`) are
  computed here in Python with the graph stage's rules (src/headwater/pipeline/graph.py): edges
  from each job's current version with canonical ids, condensed dataset→dataset edges, a dataset
  with no upstream is its own ultimate source at distance 0, shortest distances, cycle safe,
  only datasets of the condensed graph get rows, and one with more than `ENDS_CAP` ends of a
  kind gets the marker row alone (and no depth). The real graph stage can run over these tables
  (`Pipeline._graph` reads only model tables) and was checked to publish exactly the same
  graph tables on the 5,000-dataset model, but it took 185 s there (local[2]) and its ultimate
  propagation grows with the ~10M rows of the full size, so the loader does not use it.

Deterministic for a seed. `load(store, shape)` fills an empty, migrated store (`open_store`
migrates) in one transaction per table: `executemany` on SQLite, COPY on PostgreSQL, with a tqdm
bar per table on stderr. Times are the stored fixed-width UTC text ("2024-01-02T03:04:05.0000000Z").
Not modelled: events, dataset versions, run io and facets, job facets, parent jobs, tags.
"""

from __future__ import annotations

import hashlib
import random
import sys
import uuid
from collections.abc import Callable, Iterable, Sequence, Sized
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from tqdm import tqdm

from headwater.store.base import EventStore
from headwater.store.graph import ENDS_CAP, PAST_CAP

GENERATOR_VERSION = 4  # part of the cached model's file name: raise it when the model changes
START = datetime(2024, 1, 1, tzinfo=UTC)
DAYS = 60
NAMESPACES = 40
FIELD_WORDS = ("id", "amount", "status", "region", "customer", "product", "price", "qty", "ts", "code")


def stamp(moment: datetime) -> str:
    """The stored fixed-width UTC form."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.0000000Z")


def digest(*parts: str) -> str:
    return hashlib.blake2b("\x00".join(parts).encode(), digest_size=16).hexdigest()


@dataclass(frozen=True)
class Shape:
    datasets: int = 100_000
    jobs: int = 50_000
    runs: int = 1_000_000
    layers: int = 30
    seed: int = 42

    @property
    def lanes(self) -> int:
        return max(2, self.datasets // self.layers)


@dataclass
class Model:
    """What the loader built, for the benchmark to sample from."""

    datasets: list[str] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)
    fields: dict[str, list[str]] = field(default_factory=dict)  # dataset → field names
    written: list[str] = field(default_factory=list)  # datasets with column lineage
    names: list[str] = field(default_factory=list)  # dataset and job names, for search
    edges: list[tuple[str, str]] = field(default_factory=list)  # the current dataset/job edges
    version_times: list[str] = field(default_factory=list)  # times when some job changed version


def dataset_id(shape: Shape, layer: int, lane: int) -> str:
    return f"dataset:ns{(lane * 7 + layer) % NAMESPACES:02d}:l{layer:02d}.t{lane:05d}"


@dataclass
class _Job:
    node_id: str
    layer: int
    outputs: list[str]
    inputs: list[str]  # of the newest version; older versions lack the last input
    versions: int


def _jobs(shape: Shape, rng: random.Random) -> list[_Job]:
    lanes, jobs = shape.lanes, []
    main = [(layer, lane) for layer in range(1, shape.layers) for lane in range(0, lanes, 2)]
    rng.shuffle(main)
    main = sorted(main[: min(len(main), shape.jobs * 9 // 10)])
    for layer, lane in main:
        outputs = [dataset_id(shape, layer, lane)]
        if lane + 1 < lanes:
            outputs.append(dataset_id(shape, layer, lane + 1))
        inputs = {dataset_id(shape, layer - 1, lane)}
        for _ in range(rng.randint(0, 3)):
            back = 1 if layer < 2 or rng.random() < 0.8 else 2
            inputs.add(dataset_id(shape, layer - back, min(lanes - 1, max(0, lane + rng.randint(-1, 2)))))
        jobs.append(_Job("", layer, outputs, sorted(inputs), 1 + (rng.random() < 0.4) + (rng.random() < 0.1)))
    while len(jobs) < shape.jobs:  # consumers of hubs, and a few back edges (cycles)
        layer = rng.randint(2, shape.layers - 1)
        lane = rng.randrange(1, lanes, 2)
        hub = dataset_id(shape, layer - 1, rng.randrange(0, min(lanes, 40)))
        inputs = {hub, dataset_id(shape, layer - 1, lane)}
        if rng.random() < 0.002 and layer + 3 < shape.layers:
            inputs.add(dataset_id(shape, layer + 3, lane))
        jobs.append(
            _Job("", layer, [dataset_id(shape, layer, lane)], sorted(inputs), 1 + (rng.random() < 0.3))
        )
    for number, job in enumerate(jobs):
        job.node_id = f"job:ns{number % NAMESPACES:02d}:pipeline_{job.layer:02d}.task_{number:06d}"
    return jobs


def _fields(rng: random.Random) -> list[str]:
    count = rng.randint(5, 20)
    return [f"{rng.choice(FIELD_WORDS)}_{i}" for i in range(count)]


def _ultimate(pairs: dict[str, list[str]], nodes: Iterable[str]) -> dict[str, dict[str, int]]:
    """For `pairs` node → its neighbours one way: each node's ultimate ends with the shortest
    distance (graph.py's rule), by relaxation until nothing changes."""
    ends: dict[str, dict[str, int]] = {n: {n: 0} for n in nodes if not pairs.get(n)}
    order = [n for n in nodes if pairs.get(n)]
    changed = True
    while changed:
        changed = False
        for node in order:
            mine = ends.setdefault(node, {})
            for neighbour in pairs[node]:
                for end, distance in ends.get(neighbour, {}).items():
                    if distance + 1 < mine.get(end, 1 << 30):
                        mine[end] = distance + 1
                        changed = True
    # a node with more ends than the model keeps has the marker alone (its ends' count decides:
    # the ends of the nodes after it are a superset)
    return {n: found if len(found) <= ENDS_CAP else {PAST_CAP: -1} for n, found in ends.items() if found}


Writer = Callable[[str, Sequence[str], Iterable[tuple[Any, ...]]], None]


def load(
    store: EventStore, shape: Shape, progress: Callable[[str], None] = print, *, bars: bool = True
) -> Model:
    """Fill the model tables of an empty, migrated store; return what the benchmark samples.
    `progress` hears each step; `bars` shows a tqdm bar (on stderr) per table written."""
    write = _writer(store, bars)
    rng = random.Random(shape.seed)
    model = Model()
    lanes = shape.lanes
    progress("jobs and versions")
    jobs = _jobs(shape, rng)
    model.jobs = [job.node_id for job in jobs]
    all_datasets = [dataset_id(shape, layer, lane) for layer in range(shape.layers) for lane in range(lanes)]
    # a symlinked second name sorts after the first, so the first is canonical (the smallest id
    # of its component, graph.aliases' rule)
    aliases = {d: f"{d}_symlink" for d in rng.sample(all_datasets, len(all_datasets) // 100)}
    canonical = {alias: d for d, alias in aliases.items()}
    assert all(d < alias for d, alias in aliases.items())
    alias_rows = [(d, d) for d in aliases] + [(a, d) for a, d in canonical.items()]
    symlink_rows = [(d, alias, "TABLE") for d, alias in aliases.items()]

    # datasets, namespaces, facets
    progress("datasets and facets")
    created = {d: START + timedelta(hours=int(d.rsplit(":l", 1)[1][:2])) for d in all_datasets}
    facet_values: list[tuple[str, str]] = []
    dataset_facets: list[tuple[Any, ...]] = []
    for d in all_datasets:
        names = _fields(rng)
        model.fields[d] = names
        value = orjson.dumps({"fields": [{"name": n, "type": "STRING"} for n in names]}).decode()
        value_hash = digest(value)
        facet_values.append((value_hash, value))
        dataset_facets.append((d, "schema", stamp(created[d]), 1, value_hash, 0))
    writers: dict[str, list[_Job]] = {}
    for job in jobs:
        for out in job.outputs:
            writers.setdefault(out, []).append(job)
    column_rows: list[tuple[Any, ...]] = []
    for d, producing in writers.items():
        inputs = producing[0].inputs
        mapping: dict[str, Any] = {}
        for out_field in model.fields[d]:
            picks = []
            for source in rng.sample(inputs, min(len(inputs), rng.randint(1, 2))):
                source_field = rng.choice(model.fields[source])
                namespace, name = source.removeprefix("dataset:").split(":", 1)
                picks.append(
                    {
                        "namespace": namespace,
                        "name": name,
                        "field": source_field,
                        "transformations": [{"type": "DIRECT", "subtype": "TRANSFORMATION"}],
                    }
                )
            mapping[out_field] = {"inputFields": picks}
        value = orjson.dumps({"fields": mapping}).decode()
        value_hash = digest(value)
        facet_values.append((value_hash, value))
        dataset_facets.append(
            (d, "columnLineage", stamp(created[d] + timedelta(minutes=5)), 2, value_hash, 0)
        )
        for out_field, entry in mapping.items():
            for pick in entry["inputFields"]:
                source = f"dataset:{pick['namespace']}:{pick['name']}"
                column_rows.append(
                    (value_hash, out_field, source, pick["field"], "DIRECT", "TRANSFORMATION", None, 0)
                )
        model.written.append(d)
    last = stamp(START + timedelta(days=DAYS))
    dataset_rows = [
        (
            d,
            d.split(":")[1],
            d.split(":", 2)[2],
            stamp(created[canonical.get(d, d)]),
            last,
            None,
            None,
            None,
            None,
            None,
            None,
        )
        for d in [*all_datasets, *canonical]
    ]
    namespaces = sorted({row[1] for row in dataset_rows} | {j.split(":")[1] for j in model.jobs})
    write("namespaces", ("name", "created_at", "updated_at"), ((n, stamp(START), last) for n in namespaces))
    write("datasets", DATASET_COLUMNS, dataset_rows)
    write("dataset_aliases", ("node_id", "canonical_id"), alias_rows)
    write("dataset_symlinks", ("node_id", "alias_node_id", "type"), symlink_rows)
    write("facet_values", ("hash", "value"), dict(facet_values).items())
    write("dataset_facets", ("node_id", "name", "valid_from", "seq", "value_hash", "deleted"), dataset_facets)
    write(
        "column_lineage",
        COLUMN_LINEAGE_COLUMNS,
        dict(((r[0], r[1], r[2], r[3]), r) for r in column_rows).values(),
    )

    # job versions and runs
    progress("job versions and runs")
    runs_per_job = max(1, shape.runs // max(1, len(jobs)))
    version_rows, io_rows, run_rows, job_rows = [], [], [], []
    run_number = 0
    current: dict[str, tuple[str, list[str]]] = {}  # job → its newest version and that version's inputs
    for job in jobs:
        count = runs_per_job + (1 if rng.random() < (shape.runs / len(jobs)) % 1 else 0)
        # each version starts at one of the job's runs, so every version has runs and the newest
        # is the version of the latest run (the job's current version)
        starts = [0, *sorted(rng.sample(range(1, count), min(job.versions, count) - 1))]
        # half of the symlinked inputs are read under their second name (edges use the canonical)
        named = {n: aliases[n] if n in aliases and rng.random() < 0.5 else n for n in job.inputs}
        versions = []
        for k, first_run in enumerate(starts):
            inputs = job.inputs if k == len(starts) - 1 or len(job.inputs) == 1 else job.inputs[:-1]
            version_id = digest(job.node_id, str(k), *inputs)
            versions.append((version_id, [named[n] for n in inputs], first_run))
            io_rows += [(version_id, "input", named[n]) for n in inputs]
            io_rows += [(version_id, "output", n) for n in job.outputs]
        runs, first_day = [], created[job.outputs[0]]
        gap = DAYS * 86_400 // count  # seconds between runs: their order is their time order
        for i in range(count):
            started = first_day + timedelta(seconds=i * gap + rng.randrange(min(gap, 3_600)))
            version = [v for v in versions if v[2] <= i][-1][0]
            run_id = str(uuid.UUID(int=(shape.seed << 96) | run_number))
            run_number += 1
            ended = started + timedelta(minutes=rng.randint(1, 30))
            state = "COMPLETED" if rng.random() < 0.95 else "FAILED"
            duration = int((ended - started).total_seconds() * 1000)
            runs.append(
                (
                    run_id,
                    job.node_id,
                    state,
                    stamp(ended),
                    stamp(started),
                    stamp(ended),
                    duration,
                    None,
                    None,
                    None,
                    run_id,
                    version,
                    stamp(started),
                    stamp(ended),
                    2,
                    run_number,
                )
            )
        for version_id, _, _ in versions:
            used = [r for r in runs if r[11] == version_id]
            version_rows.append(
                (
                    version_id,
                    job.node_id,
                    f"git https://git.example/{job.node_id}",
                    None,
                    used[0][4],
                    used[-1][5],
                    len(used),
                )
            )
        model.version_times += [runs[first_run][12] for _, _, first_run in versions[1:]]
        current[job.node_id] = (versions[-1][0], versions[-1][1])
        run_rows += runs
        latest = runs[-1]
        job_rows.append(
            (
                job.node_id,
                job.node_id.split(":")[1],
                job.node_id.split(":", 2)[2],
                runs[0][4],
                latest[5],
                versions[-1][0],
                latest[0],
                latest[4],
            )
        )
    write("job_versions", JOB_VERSION_COLUMNS, version_rows)
    write("job_version_io", ("version_id", "direction", "node_id"), dict.fromkeys(io_rows))
    write("jobs", JOB_COLUMNS, job_rows)
    write("runs", RUN_COLUMNS, run_rows)
    del run_rows

    # the graph stage: current edges with canonical ids, ultimate ends (over the condensed edges,
    # which the model does not keep), depth
    progress("graph: edges, ultimate sources and destinations")
    edges: set[tuple[str, str, str, str, str]] = set()
    condensed: set[tuple[str, str, str]] = set()
    for job in jobs:
        version_id, inputs = current[job.node_id]
        ins = sorted({canonical.get(n, n) for n in inputs})
        outs = sorted({canonical.get(n, n) for n in job.outputs})
        edges |= {(n, job.node_id, "input", job.node_id, version_id) for n in ins}
        edges |= {(job.node_id, n, "output", job.node_id, version_id) for n in outs}
        condensed |= {(a, b, job.node_id) for a in ins for b in outs if a != b}
    write("lineage_edges", ("src_id", "dst_id", "edge_type", "job_id", "version_id"), edges)
    model.edges = [(e[0], e[1]) for e in edges]
    upstream: dict[str, list[str]] = {}
    downstream: dict[str, list[str]] = {}
    for src, dst, _ in condensed:
        upstream.setdefault(dst, []).append(src)
        downstream.setdefault(src, []).append(dst)
    nodes = sorted(set(upstream) | set(downstream), key=lambda n: n.rsplit(":l", 1)[-1])
    ultimate_rows: list[tuple[Any, ...]] = []
    depth_rows = []
    for kind, pairs, order in (("source", upstream, nodes), ("destination", downstream, nodes[::-1])):
        ends = _ultimate(pairs, order)
        ultimate_rows = [(n, kind, other, d) for n, found in ends.items() for other, d in found.items()]
        write("ultimate_nodes", ("node_id", "kind", "other_id", "distance"), ultimate_rows)
        if kind == "source":
            depth_rows = [(n, max(found.values())) for n, found in ends.items() if PAST_CAP not in found]
        del ends, ultimate_rows
    write("dataset_depth", ("node_id", "depth"), depth_rows)
    model.datasets = all_datasets
    model.names = [d.split(":", 2)[2] for d in all_datasets[:: max(1, len(all_datasets) // 5000)]]
    model.names += [j.split(":", 2)[2] for j in model.jobs[:: max(1, len(model.jobs) // 2500)]]
    return model


DATASET_COLUMNS = (
    "node_id", "namespace", "name", "created_at", "updated_at", "source_name", "source_time", "source_seq",
    "current_version", "version_time", "version_seq",
)  # fmt: skip
COLUMN_LINEAGE_COLUMNS = (
    "facet_hash", "field", "input_node_id", "input_field", "type", "subtype", "description", "masking",
)  # fmt: skip
JOB_VERSION_COLUMNS = (
    "version_id", "node_id", "source_code_location", "sql", "created_at", "updated_at", "run_count",
)  # fmt: skip
JOB_COLUMNS = (
    "node_id", "namespace", "name", "created_at", "updated_at", "current_version", "latest_run_id",
    "latest_run_time",
)  # fmt: skip
RUN_COLUMNS = (
    "run_id", "job_node_id", "state", "state_time", "started_at", "ended_at", "duration_ms", "nominal_start",
    "nominal_end", "parent_run_id", "root_run_id", "job_version", "first_event_time", "last_event_time",
    "event_count", "updated_seq",
)  # fmt: skip


def _writer(store: EventStore, bars: bool) -> Writer:
    """Bulk insert into one table: COPY on PostgreSQL, executemany in one transaction on SQLite."""

    def write(table: str, columns: Sequence[str], rows: Iterable[tuple[Any, ...]]) -> None:
        total = None
        if isinstance(rows, Sized):  # in primary key order (the leading columns): the key's B-tree
            rows = sorted(rows)  # grows at its end instead of taking inserts all over
            total = len(rows)
        shown = tqdm(
            rows,
            desc=f"{table:<16}",
            total=total,
            unit=" rows",
            unit_scale=True,
            disable=not bars,
            mininterval=0.2 if sys.stderr.isatty() else 30,  # a log file gets a line now and then
        )
        with store.transaction() as cur:
            if store.backend == "postgresql":
                with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                    for row in shown:
                        copy.write_row(row)
            else:
                marks = ", ".join("?" * len(columns))
                cur.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", shown)
        shown.close()

    return write
