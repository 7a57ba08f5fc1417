"""What the lineage model should hold for a list of events, worked out in plain Python.

An independent second reading of the rules the Spark pipeline implements, used by the end-to-end
tests to check the published model table by table. It works on the events as stored (the store's
fixed-width eventTime and seq order), so it needs the store rows, not the raw documents.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import orjson

from headwater.events.facets import facet_path
from headwater.store.base import EventStore

TERMINAL = {"COMPLETE": "COMPLETED", "FAIL": "FAILED", "ABORT": "ABORTED"}


@dataclass
class Expected:
    namespaces: set[str] = field(default_factory=set)
    datasets: set[str] = field(default_factory=set)
    jobs: set[str] = field(default_factory=set)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    run_io: set[tuple[str, str, str]] = field(default_factory=set)
    symlink_pairs: set[tuple[str, str]] = field(default_factory=set)
    canonical: dict[str, str] = field(default_factory=dict)
    current_facets: dict[tuple[str, str], str | None] = field(default_factory=dict)
    job_parents: set[tuple[str, str]] = field(default_factory=set)


def stored_events(store: EventStore) -> list[tuple[int, str, dict[str, Any], list[str]]]:
    """(seq, eventTime as stored, payload, untrusted facet paths) of every stored event, whole (the
    store keeps each facet value once: the rows hold the events' cores)."""
    with store.transaction() as cur:
        cur.execute("SELECT COUNT(*) FROM events")
        count = int(cur.fetchone()[0])
    found = store.list_events(after_time=None, before_time=None, descending=False, limit=count, offset=0)
    return sorted((e.seq, e.event_time, orjson.loads(e.payload), list(e.untrusted_facets)) for e in found)


def _components(pairs: set[tuple[str, str]]) -> dict[str, str]:
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return {node: find(node) for node in parent}


def expected_model(store: EventStore) -> Expected:
    exp = Expected()
    by_run: dict[str, list[tuple[str, int, str, str]]] = defaultdict(list)
    facet_latest: dict[tuple[str, str], tuple[str, int, str | None]] = {}
    for seq, time, doc, untrusted in stored_events(store):
        job = doc.get("job")
        if job:
            exp.namespaces.add(job["namespace"])
            exp.jobs.add(f"job:{job['namespace']}:{job['name']}")
        datasets: list[tuple[str, dict[str, Any], str]] = []
        for side in ("inputs", "outputs"):
            for i, ds in enumerate(doc.get(side) or []):
                datasets.append((side, ds, f"{side}[{i}].facets."))
        if doc.get("dataset"):
            datasets.append(("static", doc["dataset"], "dataset.facets."))
        for side, ds, prefix in datasets:
            node = f"dataset:{ds['namespace']}:{ds['name']}"
            exp.namespaces.add(ds["namespace"])
            exp.datasets.add(node)
            for name, value in (ds.get("facets") or {}).items():
                if facet_path(prefix[:-1], name) in untrusted or value is None:
                    continue
                key = (node, name)
                deleted = isinstance(value, dict) and value.get("_deleted") is True
                if key not in facet_latest or (time, seq) > facet_latest[key][:2]:
                    facet_latest[key] = (time, seq, None if deleted else name)
                if name == "symlinks" and facet_path(prefix[:-1], name) not in untrusted:
                    for ident in value.get("identifiers") or []:
                        alias = f"dataset:{ident['namespace']}:{ident['name']}"
                        if alias != node:
                            exp.symlink_pairs.add((node, alias))
            run = doc.get("run")
            if run and side != "static":
                exp.run_io.add((run["runId"], "input" if side == "inputs" else "output", node))
        run = doc.get("run")
        if run and job:
            by_run[run["runId"]].append(
                (time, seq, doc.get("eventType") or "OTHER", f"job:{job['namespace']}:{job['name']}")
            )
            parent = (run.get("facets") or {}).get("parent")
            if isinstance(parent, dict) and isinstance(parent.get("job"), dict):
                exp.job_parents.add(
                    (
                        f"job:{parent['job']['namespace']}:{parent['job']['name']}",
                        f"job:{job['namespace']}:{job['name']}",
                    )
                )
    for run_id, events in by_run.items():
        terminal = [e for e in events if e[2] in TERMINAL]
        running = [e for e in events if e[2] in ("START", "RUNNING")]
        if terminal:
            decided = max(terminal)
            state, ended = TERMINAL[decided[2]], decided[0]
        elif running:
            state, ended = "RUNNING", None
        else:
            state, ended = "NEW", None
        starts = [e[0] for e in events if e[2] == "START"] or [e[0] for e in running] or [min(events)[0]]
        exp.runs[run_id] = {
            "state": state,
            "started_at": min(starts),
            "ended_at": ended,
            "job_node_id": max(events)[3],
            "event_count": len(events),
        }
    exp.canonical = _components(exp.symlink_pairs)
    exp.current_facets = {key: value[2] for key, value in facet_latest.items()}
    return exp
