"""Generic events the UI server's store holds before its pipeline pass, so that the pipeline folds
them into the lineage graph: model `fraud` put into model-manage-2, loaded into engine-7 with its
schema, and engine-7 running. (test_elements.py sends its `churn` events after the pass: those
elements are browsable but no graph nodes.)"""

from __future__ import annotations

from typing import Any

import httpx

FRAUD, ENGINE, SCHEMA, MANAGER = "fraud", "engine-7", "fraud-input", "model-manage-2"
FOLDED: list[dict[str, Any]] = [
    {
        "description": f"put model: {FRAUD}",
        "type": "put model",
        "elements": [
            {"description": FRAUD, "type": "model", "tags": {"model-hash": "1f00"}},
            {"description": MANAGER, "type": "fastscore-service"},
        ],
    },
    {
        "description": f"load model: {FRAUD}",
        "type": "load model",
        "elements": [
            {"description": FRAUD, "type": "model"},
            {"description": ENGINE, "type": "engine"},
            {"description": SCHEMA, "type": "schema"},
        ],
    },
    {
        "description": "engine state: RUNNING",
        "type": "engine state",
        "elements": [{"description": ENGINE, "type": "engine", "tags": {"state": "RUNNING"}}],
    },
]


def send_folded_events(url: str) -> None:
    answer = httpx.post(f"{url}/lineage/1/events", json=FOLDED, timeout=30)
    answer.raise_for_status()
