"""Node ids shared by every API: `dataset:{namespace}:{name}`, `job:{namespace}:{name}`,
`datasetField:{namespace}:{dataset}:{field}`, `run:{runId}` (Marquez' format) and
`element:{type}:{description}` (an element of generic events)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from headwater.errors import BadRequest

NodeKind = Literal["dataset", "job", "datasetField", "run", "element"]
KINDS: tuple[NodeKind, ...] = ("dataset", "job", "datasetField", "run", "element")
FORMATS = (
    "dataset:{namespace}:{name}, job:{namespace}:{name}, datasetField:{namespace}:{dataset}:{field}, "
    "run:{runId} or element:{type}:{description}"
)
OPENLINEAGE_ELEMENT_TYPES = ("dataset", "job")


@dataclass(frozen=True, slots=True)
class NodeId:
    """A parsed node id. Namespaces may hold colons (`postgres://db:5432`), so a dataset or job id
    is kept whole (the model stores it whole); a field id keeps the possible (dataset id, field)
    splits, the last colon first."""

    kind: NodeKind
    text: str  # without the version
    version: str | None = None  # Marquez' `dataset:ns:name#version`: the lineage of that version

    @property
    def field_splits(self) -> list[tuple[str, str]]:
        body = self.text.removeprefix("datasetField:")
        splits = []
        at = len(body)
        while (at := body.rfind(":", 0, at)) > 0:
            dataset, field = body[:at], body[at + 1 :]
            if field and ":" in dataset:
                splits.append((f"dataset:{dataset}", field))
        return splits


def dataset_id(namespace: str, name: str) -> str:
    return f"dataset:{namespace}:{name}"


def job_id(namespace: str, name: str) -> str:
    return f"job:{namespace}:{name}"


def field_id(namespace: str, dataset: str, field: str) -> str:
    return f"datasetField:{namespace}:{dataset}:{field}"


def element_node_id(element_type: str, description: str) -> str:
    """The graph node of an element of generic events: an element of type `dataset` or `job`
    whose description is `{namespace}:{name}` is that OpenLineage node (the browse API's element
    of that dataset or job); any other is `element:{type}:{description}`. (The pipeline's fold,
    `headwater.pipeline.elements.element_node`, applies the same rule.)"""
    namespace, sep, name = description.partition(":")
    if element_type in OPENLINEAGE_ELEMENT_TYPES and namespace and sep and name:
        return f"{element_type}:{description}"
    return f"element:{element_type}:{description}"


def parse_node_id(text: str | None, *, allowed: tuple[NodeKind, ...] = KINDS) -> NodeId:
    """A node id, or a 400 explaining the format."""
    if not text:
        raise BadRequest(f"nodeId: required, one of {FORMATS}")
    kind, sep, rest = text.partition(":")
    if not sep or kind not in KINDS:
        raise BadRequest(
            f"nodeId: {text!r} does not start with dataset:, job:, datasetField:, run: or element: "
            f"({FORMATS})"
        )
    if kind not in allowed:
        raise BadRequest(f"nodeId: {text!r} is a {kind} node; this query takes {', '.join(allowed)} nodes")
    if kind == "run":  # any run id, `#` and `:` included (runs have no versions)
        if not rest:
            raise BadRequest(f"nodeId: {text!r} names no run (run:{{runId}})")
        return NodeId(kind, text)
    if kind == "element":  # any description, `#` and `:` included (elements have no versions)
        element_type, sep, description = rest.partition(":")
        if not element_type or not sep or not description:
            raise BadRequest(f"nodeId: {text!r} must be element:{{type}}:{{description}}")
        return NodeId(kind, text)
    text, _, version = text.partition("#")
    if _ and not version:
        raise BadRequest(f"nodeId: {text + '#'!r} names no version after '#'")
    node = NodeId(kind, text, version or None)
    namespace, sep, name = rest.partition(":")
    if not namespace or not sep or not name:
        raise BadRequest(
            f"nodeId: {text!r} must be {kind}:{{namespace}}:{{name}}"
            + ("" if kind != "datasetField" else ":{field}")
        )
    if kind == "datasetField" and not node.field_splits:
        raise BadRequest(f"nodeId: {text!r} must be datasetField:{{namespace}}:{{dataset}}:{{field}}")
    return node
