"""Upstream run lineage: the runs that produced the dataset versions a run read, and theirs in
turn (Marquez' GET /runlineage/upstream)."""

from __future__ import annotations

from typing import Any

from headwater.errors import NotFound
from headwater.query.run_events import parse_run_id
from headwater.query.times import display_time
from headwater.store.base import EventStore
from headwater.store.graph import RunLink


def _time(stored: str | None) -> str | None:
    return display_time(stored) if stored else None


def upstream_runs(store: EventStore, run_id: str, depth: int, limit: int) -> tuple[list[RunLink], bool]:
    """The run, then the runs upstream of it level by level (each once, cycle safe), `depth`
    levels deep, at most `limit` runs; and whether `limit` cut the answer short."""
    wanted = parse_run_id(run_id)
    first = store.run_links([wanted]).get(wanted)
    if first is None:
        raise NotFound(f"run '{run_id}' not found")
    ordered = [first]
    seen = {first.run_id}
    level = [first]
    truncated = False
    for _ in range(depth):
        producers = [i.produced_by_run for run in level for i in run.inputs if i.produced_by_run]
        fresh = [r for r in dict.fromkeys(producers) if r not in seen]
        if len(ordered) + len(fresh) > limit:
            truncated = True
            fresh = fresh[: max(0, limit - len(ordered))]
        found = store.run_links(fresh)
        level = [found[r] for r in fresh if r in found]
        seen.update(fresh)
        ordered += level
        if not level:
            break
    return ordered, truncated


def upstream_runs_json(runs: list[RunLink], truncated: bool) -> dict[str, Any]:
    return {
        "runs": [
            {
                "job": {"namespace": run.job_namespace, "name": run.job_name, "version": run.job_version},
                "run": {
                    "id": run.run_id,
                    "start": _time(run.started_at),
                    "end": _time(run.ended_at),
                    "status": run.state,
                },
                "inputs": [
                    {
                        "namespace": i.namespace,
                        "name": i.name,
                        "version": i.version,
                        "producedByRunId": i.produced_by_run,
                    }
                    for i in run.inputs
                ],
            }
            for run in runs
        ],
        "truncated": truncated,
    }
