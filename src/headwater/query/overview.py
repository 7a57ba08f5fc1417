"""The home page's answer in one read: every namespace with its counts, the latest runs across
namespaces and the latest failed ones, and how far the pipeline has published the events stored."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from headwater.events.times import format_ticks, parse_event_time
from headwater.query.marquez import run_json
from headwater.query.times import display_time
from headwater.store.base import EventStore
from headwater.store.model_rows import RunRow

RECENT = timedelta(days=7)  # what "recent runs" counts
FAILED_STATES = ("FAILED", "ABORTED")
WAITING_COUNTED = 100_000  # events waiting for the pipeline counted one by one, at most


def _run_json(row: RunRow) -> dict[str, Any]:
    """A run with the job it belongs to (Marquez' Run names only the job version)."""
    return {**run_json(row), "job": {"namespace": row.job_namespace, "name": row.job_name}}


def overview(store: EventStore, *, runs: int, now: datetime | None = None) -> dict[str, Any]:
    """`{namespaces: [{name, datasets, jobs, runs, recentRuns, lastRunAt}], latestRuns, failedRuns,
    recentSince}`: `runs` latest runs of each list, newest first; recent = the last 7 days."""
    since = format_ticks(parse_event_time(((now or datetime.now(UTC)) - RECENT).isoformat()))
    with store.snapshot():
        summaries = store.namespace_summaries(since=since)
        latest = store.latest_runs(states=None, limit=runs)
        failed = store.latest_runs(states=FAILED_STATES, limit=runs)
    return {
        "namespaces": [
            {
                "name": s.name,
                "datasets": s.datasets,
                "jobs": s.jobs,
                "runs": s.runs,
                "recentRuns": s.recent_runs,
                "lastRunAt": display_time(s.last_run_at) if s.last_run_at else None,
            }
            for s in summaries
        ],
        "latestRuns": [_run_json(r) for r in latest],
        "failedRuns": [_run_json(r) for r in failed],
        "recentSince": display_time(since),
        "pipeline": pipeline_progress(store),
    }


def pipeline_progress(store: EventStore) -> dict[str, Any]:
    """`{storedThrough, publishedThrough, graphThrough, waitingEvents, waitingMore, waitingReports,
    publishedAt}`: how far the pipeline has published the stored events (seqs), how many wait for
    it (counted up to WAITING_COUNTED; `waitingMore` when there are more), how many of those are
    its reports of its own passes, and when the model last changed."""
    progress = store.pipeline_progress(count_up_to=WAITING_COUNTED + 1)
    return {
        "storedThrough": progress.stored_through,
        "publishedThrough": progress.published_through,
        "graphThrough": progress.graph_through,
        "waitingEvents": min(progress.waiting, WAITING_COUNTED),
        "waitingMore": progress.waiting > WAITING_COUNTED,
        "waitingReports": progress.waiting_reports,
        "publishedAt": display_time(progress.published_at) if progress.published_at else None,
    }
