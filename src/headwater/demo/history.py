"""The run history of a demo graph, one scheduled day at a time: the orchestrator and task runs with
their outcomes (complete, failed and retried, aborted, still running), run and dataset facets, and
the day's static metadata, delivered in arrival order."""

from __future__ import annotations

import math
import random
import uuid
from collections.abc import Callable
from typing import Any

from headwater.demo.facets import RUN_EVENT_SCHEMA, FacetCache, Facets, build_facet
from headwater.demo.graph import Graph
from headwater.demo.nodes import Job, first_column
from headwater.demo.scenario import INTEGRATIONS, LAKE
from headwater.demo.static_events import static_events
from headwater.demo.timeline import DAY_MS, SCHEDULE_MS, START_MS, Event, Timed, deliver, iso_time

# Rates of the history (per task run).
FAIL_RATE = 0.05
ABORT_RATE = 0.015
RUNNING_RATE = 0.06
RETRY_FAIL_RATE = 0.15


def _new_id(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _quota(rate: float, per_day: int, day: int) -> int:
    """How many of `per_day` items of `day` get a feature of frequency `rate`, spread evenly over days."""
    expected = rate * per_day
    return math.floor(expected * (day + 1) + 0.5) - math.floor(expected * day + 0.5)


class History:
    """Events of the days of one graph; a day's events depend on (graph, change day, day) only."""

    def __init__(self, graph: Graph, change_day: int) -> None:
        self.graph = graph
        self.change_day = change_day
        self.cache = FacetCache()
        self._engines = {
            kind: build_facet(
                integration.producer,
                "ProcessingEngineRunFacet",
                name=integration.engine[0],
                version=integration.engine[1],
                openlineageAdapterVersion=integration.engine[2],
            )
            for kind, integration in INTEGRATIONS.items()
        }

    @staticmethod
    def _run_event(
        job: Job,
        event_type: str,
        ms: int,
        run: dict[str, Any],
        job_facets: Facets | None,
        inputs: list[dict[str, Any]],
        outputs: list[dict[str, Any]],
    ) -> Event:
        job_part: dict[str, Any] = {"namespace": job.ns.name, "name": job.name}
        if job_facets is not None:
            job_part["facets"] = job_facets
        return {
            "eventType": event_type,
            "eventTime": iso_time(ms),
            "run": run,
            "job": job_part,
            "inputs": inputs,
            "outputs": outputs,
            "producer": job.producer,
            "schemaURL": RUN_EVENT_SCHEMA,
        }

    def _completed_outputs(
        self, job: Job, outputs: list[dict[str, Any]], day: int, v2: bool, rng: random.Random
    ) -> list[dict[str, Any]]:
        p = job.producer
        done = []
        for ds, base in zip(job.outputs, outputs, strict=True):
            facets = dict(base["facets"])
            if ds.versioned:
                facets["version"] = build_facet(p, "DatasetVersionDatasetFacet", datasetVersion=str(day + 1))
            change = None
            if ds.lifecycle == "OVERWRITE" or (ds.lifecycle == "CREATE" and day == 0):
                change = ds.lifecycle
            if day == self.change_day and ds.columns_v2 is not None and job.layer != "reconcile":
                change = "ALTER"
            if change is not None:
                facets["lifecycleStateChange"] = build_facet(
                    p, "LifecycleStateChangeDatasetFacet", lifecycleStateChange=change
                )
            rows = max(1, int(ds.base_rows * (1 + 0.002 * day) * rng.uniform(0.92, 1.08)))
            width = 24 + 16 * len(ds.columns)
            stats: dict[str, Any] = {"rowCount": rows, "size": rows * width}
            if ds.namespace == LAKE:
                stats["fileCount"] = 1 + rows * width // 134_217_728
            done.append(
                {
                    "namespace": ds.namespace,
                    "name": ds.name,
                    "facets": facets,
                    "outputFacets": {
                        "outputStatistics": build_facet(p, "OutputStatisticsOutputDatasetFacet", **stats)
                    },
                }
            )
        return done

    def _checked_inputs(
        self, job: Job, inputs: list[dict[str, Any]], day: int, rng: random.Random
    ) -> list[dict[str, Any]]:
        if not job.quality_checks:
            return inputs
        read = job.inputs[0].dataset
        rows = max(1, int(read.base_rows * (1 + 0.002 * day) * rng.uniform(0.92, 1.08)))
        metrics: dict[str, Any] = {}
        key = first_column(read.columns, "key")
        if key is not None:
            metrics[key.name] = {"nullCount": 0, "distinctCount": rows, "count": rows}
        measure = first_column(read.columns, "measure")
        if measure is not None:
            mean = rng.uniform(5, 250)
            metrics[measure.name] = {
                "nullCount": rows // 500,
                "count": rows - rows // 500,
                "sum": round(mean * rows, 2),
                "min": 0,
                "max": round(mean * 40, 2),
                "quantiles": {
                    "0.25": round(mean * 0.4, 2),
                    "0.5": round(mean * 0.8, 2),
                    "0.75": round(mean * 1.5, 2),
                },
            }
        facet = build_facet(
            job.producer,
            "DataQualityMetricsInputDatasetFacet",
            rowCount=rows,
            bytes=rows * (24 + 16 * len(read.columns)),
            columnMetrics=metrics,
        )
        first = {**inputs[0], "inputFacets": {"dataQualityMetrics": facet}}
        return [first, *inputs[1:]]

    def _task_run(
        self,
        add: Callable[[int, Event, str, str], None],
        rng: random.Random,
        job: Job,
        start: int,
        run_facets: Facets,
        outcome: str,
        running: bool,
        day: int,
    ) -> int:
        """The events of one task run; returns the time it ended."""
        v2 = day >= self.change_day
        run_id = _new_id(rng)
        low, high = job.duration
        end = start + rng.randint(low, high)
        facets = self.cache.job_facets(job, v2)
        inputs, outputs = self.cache.datasets(job, v2)
        run = {"runId": run_id, "facets": run_facets}
        add(start, self._run_event(job, "START", start, run, facets, inputs, outputs), run_id, "START")
        names_in, names_out = self.cache.names(job)
        if running:
            at = start + (end - start) // 2
            add(at, self._run_event(job, "RUNNING", at, run, None, names_in, names_out), run_id, "RUNNING")
        if outcome == "COMPLETE":
            done_in = self._checked_inputs(job, inputs, day, rng)
            done_out = self._completed_outputs(job, outputs, day, v2, rng)
            event = self._run_event(job, "COMPLETE", end, run, facets, done_in, done_out)
        else:
            end_facets = dict(run_facets)
            if outcome == "FAIL":
                integration = job.ns.integration
                end_facets["errorMessage"] = build_facet(
                    job.producer,
                    "ErrorMessageRunFacet",
                    message=integration.error,
                    programmingLanguage=integration.language,
                )
            end_run = {"runId": run_id, "facets": end_facets}
            event = self._run_event(job, outcome, end, end_run, facets, names_in, names_out)
        add(end, event, run_id, outcome)
        return end

    def _parent(self, producer: str, parent: Job, parent_run: str, root: Job, root_run: str) -> Facets:
        return build_facet(
            producer,
            "ParentRunFacet",
            run={"runId": parent_run},
            job={"namespace": parent.ns.name, "name": parent.name},
            root={"run": {"runId": root_run}, "job": {"namespace": root.ns.name, "name": root.name}},
        )

    def day(self, day: int) -> list[Event]:
        """The events of one scheduled day, in arrival order."""
        g = self.graph
        rng = random.Random(f"headwater-demo:day:{g.seed}:{len(g.namespaces)}:{len(g.tasks)}:{day}")
        v2 = day >= self.change_day
        base = START_MS + day * DAY_MS + SCHEDULE_MS
        timeline: list[Timed] = []

        def add(ms: int, event: Event, run: str = "", kind: str = "") -> None:
            timeline.append(Timed(ms, len(timeline), event, run, kind))

        for at, event in static_events(g, self.cache, day, base, self.change_day):
            add(at, event)

        orchestrators = {ns.name: job for ns, job in zip(g.namespaces, g.orchestrators, strict=True)}
        root = orchestrators[g.root_ns.name]
        orch_runs = {name: _new_id(rng) for name in orchestrators}
        root_run = orch_runs[root.ns.name]
        nominal = build_facet(
            INTEGRATIONS["airflow"].producer,
            "NominalTimeRunFacet",
            nominalStartTime=iso_time(base),
            nominalEndTime=iso_time(base + DAY_MS),
        )
        task_facets: dict[str, Facets] = {}
        for name, orch in orchestrators.items():
            integration = orch.ns.integration
            facets: Facets = {
                "parent": self._parent(integration.producer, orch, orch_runs[name], root, root_run),
                "processing_engine": self._engines[integration.kind],
            }
            if integration.kind == "airflow":  # scheduled runs say which interval they process
                facets["nominalTime"] = nominal
            task_facets[name] = facets

        tasks = g.tasks
        count = len(tasks)
        fails = set(rng.sample(range(count), _quota(FAIL_RATE, count, day)))
        healthy = [i for i in range(count) if i not in fails]
        aborts = set(rng.sample(healthy, min(len(healthy), _quota(ABORT_RATE, count, day))))
        running = set(rng.sample(range(count), _quota(RUNNING_RATE, count, day)))

        root_start = base + rng.randint(0, 20_000)
        cursor = root_start + rng.randint(10_000, 25_000)
        windows: dict[str, tuple[int, int]] = {}
        failed: set[str] = set()
        index = 0
        for layer in g.layers:
            layer_end = cursor
            for job in layer:
                start = cursor + rng.randint(0, 90_000)
                outcome = "FAIL" if index in fails else "ABORT" if index in aborts else "COMPLETE"
                facets = task_facets[job.ns.name]
                end = self._task_run(add, rng, job, start, facets, outcome, index in running, day)
                if outcome == "FAIL":  # the scheduler retries once
                    retry = "FAIL" if rng.random() < RETRY_FAIL_RATE else "COMPLETE"
                    end = self._task_run(
                        add, rng, job, end + rng.randint(60_000, 300_000), facets, retry, False, day
                    )
                    if retry == "FAIL":
                        failed.add(job.ns.name)
                first, last = windows.get(job.ns.name, (start, end))
                windows[job.ns.name] = (min(first, start), max(last, end))
                layer_end = max(layer_end, end)
                index += 1
            cursor = layer_end + rng.randint(10_000, 60_000)

        root_end = cursor
        for name, orch in orchestrators.items():
            first, last = windows[name]
            integration = orch.ns.integration
            run_facets: Facets = {"processing_engine": self._engines[integration.kind]}
            if orch is root:
                start, end = root_start, root_end
                state = "FAIL" if failed else "COMPLETE"
            else:
                start, end = first - rng.randint(1_000, 5_000), last + rng.randint(1_000, 10_000)
                state = "FAIL" if name in failed else "COMPLETE"
                run_facets["parent"] = self._parent(integration.producer, root, root_run, root, root_run)
            if integration.kind == "airflow":
                run_facets["nominalTime"] = nominal
            run = {"runId": orch_runs[name], "facets": run_facets}
            facets = self.cache.job_facets(orch, v2)
            add(start, self._run_event(orch, "START", start, run, facets, [], []), orch_runs[name], "START")
            add(end, self._run_event(orch, state, end, run, facets, [], []), orch_runs[name], state)

        timeline.sort()
        return deliver(timeline, rng, day)
