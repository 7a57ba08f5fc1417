"""bench/spark_profile.py reads Spark's REST API: its timing metrics and its stage spans are added
up as Spark reports them (checked on answers shaped like Spark 4's)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _spark_profile() -> ModuleType:
    spec = importlib.util.spec_from_file_location("spark_profile", BENCH / "spark_profile.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_timing_metrics_are_read_in_milliseconds() -> None:
    read = _spark_profile()._milliseconds
    assert read("35 ms") == 35.0
    assert (
        read("total (min, med, max (stageId: taskId))\n16.7 s (552 ms, 1.8 s, 2.1 s (stage 52.0: task 1))")
        == 16_700.0
    )
    assert read("total (min, med, max (stageId: taskId))\n1,204 ms (0 ms, 3 ms, 9 ms)") == 1_204.0
    assert read("2.5 m") == 150_000.0


def _stage(stage_id: int, start: str, end: str, run_ms: int) -> dict[str, object]:
    return {
        "stageId": stage_id,
        "numTasks": 2,
        "submissionTime": f"2026-11-26T18:00:{start}GMT",
        "completionTime": f"2026-11-26T18:00:{end}GMT",
        "executorRunTime": run_ms,
    }


def test_stages_that_overlap_count_once_in_the_time_stages_ran(capsys: pytest.CaptureFixture[str]) -> None:
    stages = [
        _stage(0, "00.000", "10.000", 20_000),
        _stage(1, "05.000", "12.000", 7_000),  # overlaps stage 0: 2 s more
        _stage(2, "20.000", "21.000", 1_000),  # after a gap: 1 s more
        {"stageId": 3, "numTasks": 1, "executorRunTime": 0},  # never ran
    ]
    queries = [
        {
            "nodes": [
                {
                    "nodeName": "MapInArrow",
                    "metrics": [{"name": "time to execute Python code", "value": "4.0 s"}],
                }
            ]
        }
    ]
    _spark_profile().print_stages(stages, queries)
    printed = capsys.readouterr().out
    assert "3 stages ran during 13.0 s; executor run time 28.0 s (2.15 executors busy" in printed
    assert "Python code run by MapInArrow: 4.0 s" in printed


def _code(node_id: int, code: int, duration: str) -> dict[str, object]:
    metric = {"name": "duration", "value": f"total (min, med, max (stageId: taskId))\n{duration}"}
    return {"nodeId": node_id, "nodeName": f"WholeStageCodegen ({code})", "metrics": [metric]}


def _fused(node_id: int, name: str, code: int | None) -> dict[str, object]:
    node: dict[str, object] = {"nodeId": node_id, "nodeName": name, "metrics": []}
    if code is not None:
        node["wholeStageCodegenId"] = code
    return node


def test_generated_code_is_listed_longest_first_with_its_stage_and_nodes_once_each(
    capsys: pytest.CaptureFixture[str],
) -> None:
    joined = "13.9 s (1 ms, 786 ms, 3.2 s (stage 17.0: task 127))"
    plan = [
        _fused(0, "MapInArrow", None),
        _code(4, 2, "6.0 s (1 ms, 3.0 s, 3.0 s (stage 52.0: task 480))"),
        _fused(5, "Sort", 2),
        _fused(6, "Exchange", None),
        _code(12, 5, joined),
        _fused(13, "Project", 5),
        _fused(14, "BroadcastHashJoin", 5),
        _fused(15, "Union", 5),
        _fused(16, "Project", None),  # not in the code: it ends the list
        _fused(17, "Filter", 5),  # the same id, further down: another code's
        _code(30, 5, joined),  # a cached frame's plan listed again under another scan
        _fused(31, "Project", 5),
    ]
    _spark_profile().print_codegen([{"nodes": list(reversed(plan))}])
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].strip() == "whole-stage generated code: 19.9 s (all tasks); the longest:"
    assert " ".join(printed[1].split()) == "13.9 s stage 17: Project < BroadcastHashJoin < Union"
    assert " ".join(printed[2].split()) == "6.0 s stage 52: Sort"
    assert len(printed) == 3
