"""A lineage answer (`query.lineage.LineageResult`) in the shapes clients read: Marquez' lineage
graph, Marquez' column-lineage graph, and the warehouse's vertices and edges (Egeria style)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from headwater.query.lineage import LineageEdge, LineageNode, LineageResult
from headwater.query.times import display_time
from headwater.store.base import EventStore


def _time(stored: str | None) -> str | None:
    return display_time(stored) if stored else None


def _edge_lists(result: LineageResult) -> tuple[dict[str, list[LineageEdge]], dict[str, list[LineageEdge]]]:
    into: dict[str, list[LineageEdge]] = {}
    out_of: dict[str, list[LineageEdge]] = {}
    for edge in result.edges:
        into.setdefault(edge.dst, []).append(edge)
        out_of.setdefault(edge.src, []).append(edge)
    return into, out_of


def _ref(node: LineageNode) -> dict[str, str]:
    return {"namespace": node.namespace, "name": node.name}


def _dataset_data(
    node: LineageNode, fields: Sequence[tuple[str, int, str | None, str | None]]
) -> dict[str, Any]:
    row = node.node
    return {
        "id": _ref(node),
        "type": "DB_TABLE",
        "name": node.name,
        "physicalName": node.name,
        "createdAt": _time(row.created_at if row else None),
        "updatedAt": _time(row.updated_at if row else None),
        "namespace": node.namespace,
        "sourceName": row.source if row else None,
        "fields": [
            {"name": path, "type": kind, "tags": [], "description": text} for path, _, kind, text in fields
        ],
        "tags": [],
        "lastModifiedAt": None,
        "description": None,
        "currentVersion": row.version if row else None,
        "lastLifecycleState": row.lifecycle if row else None,
        "expandable": node.expandable,
    }


def _job_data(
    node: LineageNode,
    result: LineageResult,
    into: dict[str, list[LineageEdge]],
    out_of: dict[str, list[LineageEdge]],
) -> dict[str, Any]:
    row = node.node
    inputs = [_ref(result.nodes[e.src]) for e in into.get(node.id, []) if e.src in result.nodes]
    outputs = [_ref(result.nodes[e.dst]) for e in out_of.get(node.id, []) if e.dst in result.nodes]
    return {
        "id": _ref(node),
        "type": "BATCH",
        "name": node.name,
        "simpleName": node.name,
        "parentJobName": None,
        "createdAt": _time(row.created_at if row else None),
        "updatedAt": _time(row.updated_at if row else None),
        "namespace": node.namespace,
        "inputs": inputs,
        "outputs": outputs,
        "location": None,
        "description": None,
        "latestRun": (
            {"state": row.state, "updatedAt": _time(row.state_time)}
            if row is not None and row.state
            else None
        ),
        "currentVersion": row.version if row else None,
        "expandable": node.expandable,
    }


def _paging_keys(result: LineageResult) -> dict[str, Any]:
    return {
        "truncated": result.truncated,
        "expandable": result.expandable,
        "asOf": _time(result.as_of),
    }


def marquez_graph(store: EventStore, result: LineageResult) -> dict[str, Any]:
    """`{graph: [{id, type, data, inEdges, outEdges}]}` as Marquez' GET /lineage answers, plus
    `truncated`, `expandable` (node ids with more lineage beyond the answer) and `asOf`."""
    into, out_of = _edge_lists(result)
    datasets = [n.id for n in result.nodes.values() if n.kind == "dataset"]
    fields = store.dataset_fields(datasets, as_of=result.as_of) if datasets else {}
    graph = []
    for node in result.nodes.values():
        data = (
            _dataset_data(node, fields.get(node.id, []))
            if node.kind == "dataset"
            else _job_data(node, result, into, out_of)
        )
        graph.append(
            {
                "id": node.id,
                "type": node.kind.upper(),
                "data": data,
                "inEdges": [{"origin": e.src, "destination": e.dst} for e in into.get(node.id, [])],
                "outEdges": [{"origin": e.src, "destination": e.dst} for e in out_of.get(node.id, [])],
            }
        )
    return {"graph": graph, **_paging_keys(result)}


def _transformation(edge: LineageEdge) -> tuple[str | None, str | None]:
    if not edge.transformation:
        return None, None
    kind, _, subtype = edge.transformation.partition("/")
    return kind, subtype or None


def marquez_column_graph(result: LineageResult) -> dict[str, Any]:
    """Marquez' GET /column-lineage answer: DATASET_FIELD nodes whose data lists the input
    fields each is computed from, with their transformations."""
    into, out_of = _edge_lists(result)
    graph = []
    for node in result.nodes.values():
        inputs = []
        for edge in into.get(node.id, []):
            source = result.nodes.get(edge.src)
            if source is None:
                continue
            kind, subtype = _transformation(edge)
            inputs.append(
                {
                    "namespace": source.namespace,
                    "dataset": source.name,
                    "datasetVersion": None,
                    "field": source.field,
                    "transformationDescription": edge.description,
                    "transformationType": kind,
                    "transformations": [{"type": kind, "subtype": subtype, "description": edge.description}],
                }
            )
        graph.append(
            {
                "id": node.id,
                "type": "DATASET_FIELD",
                "data": {
                    "namespace": node.namespace,
                    "dataset": node.name,
                    "datasetVersion": None,
                    "field": node.field,
                    "fieldType": node.field_type,
                    "transformationDescription": None,
                    "transformationType": None,
                    "inputFields": inputs,
                    "expandable": node.expandable,
                },
                "inEdges": [{"origin": e.src, "destination": e.dst} for e in into.get(node.id, [])],
                "outEdges": [{"origin": e.src, "destination": e.dst} for e in out_of.get(node.id, [])],
            }
        )
    return {"graph": graph, **_paging_keys(result)}


def _qualified_name(node: LineageNode) -> str:
    if node.kind == "datasetField":
        return f"{node.namespace}:{node.name}:{node.field}"
    if node.kind in ("dataset", "job", "element"):  # an element's: {type}:{description}
        return f"{node.namespace}:{node.name}"
    return node.name


def _properties(node: LineageNode) -> dict[str, Any]:
    properties: dict[str, Any] = {"namespace": node.namespace, "name": node.name}
    row = node.node
    if node.field is not None:
        properties["field"] = node.field
        properties["fieldType"] = node.field_type
    if row is not None:
        properties["createdAt"] = _time(row.created_at)
        properties["updatedAt"] = _time(row.updated_at)
        properties["currentVersion"] = row.version
        if row.tags:
            properties["tags"] = list(row.tags)
        if row.kind == "job":
            properties["latestRunState"] = row.state
            if row.parent:
                properties["parentJob"] = row.parent
        else:
            if row.source:
                properties["sourceName"] = row.source
            if row.lifecycle:  # a dropped dataset stays in the lineage, marked, until created again
                properties["lifecycleState"] = row.lifecycle
                properties["lifecycleStateTime"] = _time(row.lifecycle_time)
    if node.distance is not None:
        properties["distance"] = node.distance
    properties.update(node.properties)
    if node.expandable:
        properties["expandable"] = True
    return properties


def warehouse_graph(result: LineageResult, scope: str) -> dict[str, Any]:
    """`{vertices: [{nodeID, nodeType, displayName, qualifiedName, properties}], edges:
    [{edgeType, sourceNodeID, destinationNodeID}]}` plus the node asked, scope, truncation."""
    edges = []
    for edge in result.edges:
        entry: dict[str, Any] = {
            "edgeType": edge.kind,
            "sourceNodeID": edge.src,
            "destinationNodeID": edge.dst,
        }
        if edge.job and edge.kind == "condensed":
            entry["properties"] = {"job": edge.job}
        elif edge.transformation:
            entry["properties"] = {"transformation": edge.transformation, "description": edge.description}
        elif edge.properties:
            entry["properties"] = dict(edge.properties)
        edges.append(entry)
    return {
        "nodeID": result.root,
        "scope": scope,
        "vertices": [
            {
                "nodeID": node.id,
                "nodeType": node.kind,
                "displayName": node.field if node.kind == "datasetField" else node.name,
                "qualifiedName": _qualified_name(node),
                "properties": _properties(node),
            }
            for node in result.nodes.values()
        ],
        "edges": edges,
        **_paging_keys(result),
    }
