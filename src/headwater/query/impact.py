"""Impact analysis: everything downstream (or upstream) of a dataset, job or field as a flat list,
each node with its distance, owners and latest run state — the one traversal of
`headwater.query.lineage`, then two batched reads (owners, the jobs that write each dataset).

Distance counts transformations, as `depth` does: from a dataset, the jobs that read it and the
datasets they write are at 1, the jobs after those at 2; from a job, its own outputs are at 1 and
the jobs reading them at 2; for fields, each column-lineage transformation is one step.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from headwater.errors import BadRequest
from headwater.query.lineage import LineageQuery, LineageResult, column_lineage, lineage
from headwater.query.node_ids import dataset_id, parse_node_id
from headwater.query.times import display_time
from headwater.store.base import EventStore
from headwater.store.graph import GraphNode

ImpactDirection = Literal["downstream", "upstream"]
Level = Literal["dataset", "column"]
_TYPE_ORDER = {"dataset": 0, "datasetField": 0, "job": 1}


@dataclass(slots=True)
class ImpactRow:
    """A node of the answer. `latest_run_*` are the job's own latest run, or for a dataset (and a
    field, through its dataset) the most recent latest run among the jobs that write it."""

    node_id: str
    node_type: str  # dataset, job, datasetField
    namespace: str
    name: str  # a field's dataset name for a field
    field: str | None = None
    distance: int | None = None
    owners: list[str] = dataclasses.field(default_factory=list)
    latest_run_state: str | None = None
    latest_run_time: str | None = None
    latest_run_job: str | None = None
    expandable: bool = False  # more lineage lies beyond (cut by depth or limit)


@dataclass(slots=True)
class Impact:
    node: ImpactRow
    direction: ImpactDirection
    level: Level
    rows: list[ImpactRow]
    truncated: bool
    as_of: str | None


def _owner_names(value: str | None) -> list[str]:
    """The names an `ownership` facet value lists (none for a malformed value)."""
    if not value:
        return []
    try:
        owners = orjson.loads(value).get("owners")
    except (orjson.JSONDecodeError, AttributeError):
        return []
    return [o["name"] for o in owners or [] if isinstance(o, dict) and isinstance(o.get("name"), str)]


def _distances(result: LineageResult, roots: Iterable[str], direction: ImpactDirection) -> dict[str, int]:
    """Edges walked from the nearest root to each node, following the answer's edges outwards."""
    outward: dict[str, list[str]] = {}
    for edge in result.edges:
        a, b = (edge.src, edge.dst) if direction == "downstream" else (edge.dst, edge.src)
        outward.setdefault(a, []).append(b)
    hops = dict.fromkeys(roots, 0)
    level = list(hops)
    while level:
        following = []
        for node in level:
            for other in outward.get(node, []):
                if other not in hops:
                    hops[other] = hops[node] + 1
                    following.append(other)
        level = following
    return hops


def _transformations(hops: int, root_kind: str, level: Level) -> int:
    """Edges walked → transformations: datasets and jobs alternate on the dataset graph."""
    if level == "column":
        return hops
    return hops // 2 + 1 if root_kind == "job" else (hops + 1) // 2


def _row(node: Any) -> ImpactRow:
    return ImpactRow(node.id, node.kind, node.namespace, node.name, node.field, expandable=node.expandable)


def _root_row(store: EventStore, result: LineageResult) -> ImpactRow:
    if result.root in result.nodes:
        return _row(result.nodes[result.root])
    found = store.graph_nodes([result.root]).get(result.root)  # a dataset asked at column level
    if found is None:
        return ImpactRow(result.root, result.root.partition(":")[0], "", result.root)
    return ImpactRow(found.canonical_id, found.kind, found.namespace, found.name)


def _add_owners(store: EventStore, rows: list[ImpactRow], as_of: str | None) -> None:
    holders = {row.node_id: _holder(row) for row in rows}
    facets = store.facets_in_force(sorted(set(holders.values())), "ownership", as_of=as_of)
    for row in rows:
        row.owners = _owner_names(facets.get(holders[row.node_id]))


def _holder(row: ImpactRow) -> str:
    """The dataset or job whose facets speak for the row (a field's dataset)."""
    return dataset_id(row.namespace, row.name) if row.node_type == "datasetField" else row.node_id


def _add_states(
    store: EventStore, rows: list[ImpactRow], known: dict[str, GraphNode], as_of: str | None
) -> None:
    """Jobs: their latest run. Datasets and fields: the latest run among the writers of the dataset,
    found with one edge read and one node read for every dataset of the answer."""
    datasets = sorted({_holder(r) for r in rows if r.node_type != "job"})
    writers: dict[str, list[str]] = {}
    if datasets:
        for edge in store.graph_edges(datasets, "up", condensed=False, as_of=as_of):
            writers.setdefault(edge.dst_id, []).append(edge.src_id)
    wanted = {job for jobs in writers.values() for job in jobs} | {
        r.node_id for r in rows if r.node_type == "job"
    }
    missing = [job for job in wanted if job not in known]
    jobs = {**known, **(store.graph_nodes(missing) if missing else {})}
    for row in rows:
        candidates = [row.node_id] if row.node_type == "job" else writers.get(_holder(row), [])
        ran = [jobs[j] for j in candidates if j in jobs and jobs[j].state]
        if ran:
            latest = max(ran, key=lambda job: (job.state_time or "", job.canonical_id))
            row.latest_run_state = latest.state
            row.latest_run_time = latest.state_time
            row.latest_run_job = latest.canonical_id


def impact(
    store: EventStore, query: LineageQuery, direction: ImpactDirection, level: Level | None = None
) -> Impact:
    """Every node `direction` of `query.node_id`, `query.depth` transformations deep, at most
    `query.limit` nodes: a field answers at column level; a dataset answers at column level when
    `level` says so (the fields fed by any of its fields)."""
    node = parse_node_id(query.node_id, allowed=("dataset", "job", "datasetField"))
    chosen: Level = level or ("column" if node.kind == "datasetField" else "dataset")
    if chosen == "dataset" and node.kind == "datasetField":
        raise BadRequest("level: a datasetField node is answered at column level only")
    if chosen == "column" and node.kind == "job":
        raise BadRequest("level: column level starts from a dataset or a datasetField node, not a job")
    query = dataclasses.replace(query, direction=direction, include_processes=True)
    result = column_lineage(store, query) if chosen == "column" else lineage(store, query)
    root = _root_row(store, result)
    if chosen == "column" and node.kind == "dataset":
        roots = [n.id for n in result.nodes.values() if dataset_id(n.namespace, n.name) == result.root]
    else:
        roots = [result.root]
    hops = _distances(result, roots, direction)
    rows = []
    for found in result.nodes.values():
        if found.id in roots or found.id == result.root:
            continue
        row = _row(found)
        if found.id in hops:
            row.distance = _transformations(hops[found.id], root.node_type, chosen)
        rows.append(row)
    known = {n.id: n.node for n in result.nodes.values() if n.node is not None and n.kind == "job"}
    _add_owners(store, [root, *rows], query.as_of)
    _add_states(store, [root, *rows], known, query.as_of)
    rows.sort(
        key=lambda r: (
            r.distance if r.distance is not None else 1 << 30,
            _TYPE_ORDER.get(r.node_type, 2),
            r.namespace,
            r.name,
            r.field or "",
        )
    )
    return Impact(root, direction, chosen, rows, result.truncated, query.as_of)


def _row_json(row: ImpactRow) -> dict[str, Any]:
    return {
        "nodeID": row.node_id,
        "nodeType": row.node_type,
        "namespace": row.namespace,
        "name": row.name,
        "field": row.field,
        "distance": row.distance,
        "owners": row.owners,
        "latestRunState": row.latest_run_state,
        "latestRunTime": display_time(row.latest_run_time) if row.latest_run_time else None,
        "latestRunJob": row.latest_run_job,
        "expandable": row.expandable,
    }


def impact_json(answer: Impact) -> dict[str, Any]:
    """The HTTP answer: `{nodeID, node, direction, level, rows, truncated, asOf}`."""
    node = _row_json(answer.node)
    node.pop("distance")
    return {
        "nodeID": answer.node.node_id,
        "node": node,
        "direction": answer.direction,
        "level": answer.level,
        "rows": [_row_json(row) for row in answer.rows],
        "truncated": answer.truncated,
        "asOf": display_time(answer.as_of) if answer.as_of else None,
    }
