"""Lineage traversal, shared by the Marquez API, the warehouse API and `headwater lineage`.

A traversal walks the graph one level at a time: each level is one indexed query for the
edges of the current frontier, so only the visited part of the graph is read, whatever its
size. It is directed (upstream follows edges backwards from the node, downstream forwards; a
sibling that merely reads the same dataset is never reached), cycle safe (a node is expanded
once), capped at `limit` nodes (the answer says it was truncated and which nodes can be
expanded further), and answers as of a past time when asked.

Depth counts jobs, as in Marquez: depth 1 from a dataset reaches the jobs that write or read it
and their other datasets. In the condensed view (no jobs) it counts dataset→dataset steps.

With `events` (the warehouse API) the walk also follows the `event` edges the pipeline folded
from generic events, element to element in the order an event lists them, and starts from an
element (`element:{type}:{description}`, or a dataset or job only generic events named); an
event edge is one step, as a dataset→job edge is, so depth 1 reaches two elements away.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from headwater.errors import BadRequest, NotFound
from headwater.query.node_ids import NodeId, NodeKind, field_id, parse_node_id
from headwater.query.times import display_time
from headwater.store.base import EventStore
from headwater.store.graph import PAST_CAP, ColumnEdge, Direction, FieldRef, GraphEdge, GraphNode

TraversalDirection = Literal["upstream", "downstream", "both"]
DEFAULT_DEPTH = 20
MAX_DEPTH = 1000
DEFAULT_LIMIT = 500
MAX_LIMIT = 100_000
_TO_THE_END = 10_000  # levels an ultimate-source walk may take; no real graph is that deep


@dataclass(frozen=True, slots=True)
class LineageQuery:
    node_id: str
    direction: TraversalDirection = "both"
    depth: int = DEFAULT_DEPTH
    limit: int = DEFAULT_LIMIT
    as_of: str | None = None  # the stored time form (query.times.parse_time_param)
    include_processes: bool = True
    events: bool = False  # follow generic events' `event` edges too (elements in the answer)


@dataclass(slots=True)
class LineageNode:
    """A dataset, job or dataset field of an answer. `node` is the model's row (None for a
    field); `distance` is set by ultimate queries; `fields` hold a field's type and the
    transformations into it, when known."""

    id: str
    kind: str  # dataset, job, datasetField, element; vertical answers add namespace, source, run, tag, …
    namespace: str
    name: str
    node: GraphNode | None = None
    field: str | None = None
    field_type: str | None = None
    distance: int | None = None
    expandable: bool = False  # has neighbours the answer left out (depth or limit)
    properties: dict[str, Any] = dataclasses.field(default_factory=dict)  # anything else worth showing


@dataclass(frozen=True, slots=True)
class LineageEdge:
    """`kind`: input, output, condensed (dataset→dataset through `job`), column (field→field,
    `transformation` e.g. DIRECT/IDENTITY), event (element→element, `label` the generic events'
    type), ultimate-source / ultimate-destination; vertical answers add theirs. `properties`:
    anything else an answer shows about the edge."""

    src: str
    dst: str
    kind: str
    job: str | None = None
    transformation: str | None = None
    description: str | None = None
    label: str | None = None
    properties: dict[str, Any] = dataclasses.field(default_factory=dict, hash=False)


@dataclass(slots=True)
class LineageResult:
    root: str
    nodes: dict[str, LineageNode] = dataclasses.field(default_factory=dict)
    edges: list[LineageEdge] = dataclasses.field(default_factory=list)
    truncated: bool = False  # `limit` cut the answer short
    as_of: str | None = None

    @property
    def expandable(self) -> list[str]:
        return [node.id for node in self.nodes.values() if node.expandable]

    def add_edge(self, edge: LineageEdge) -> None:
        self.edges.append(edge)


def _directions(direction: TraversalDirection) -> list[Direction]:
    return {"upstream": ["up"], "downstream": ["down"], "both": ["up", "down"]}[direction]  # type: ignore[return-value]


def node_vertex(graph_node: GraphNode) -> LineageNode:
    """The vertex of a dataset, job or element (an element's with its type, description, count and
    browse id in `properties`)."""
    node = LineageNode(
        graph_node.canonical_id, graph_node.kind, graph_node.namespace, graph_node.name, graph_node
    )
    if graph_node.kind == "element":
        node.properties.update(
            type=graph_node.namespace,
            description=graph_node.name,
            eventCount=graph_node.event_count,
            elementId=graph_node.element_id,
        )
    return node


def _lookup(store: EventStore, node_id: str) -> GraphNode | None:
    """The dataset or job the id names; a name only a symlinks facet declared (no event named
    that dataset itself) is found as the dataset it was merged into."""
    found = store.graph_nodes([node_id]).get(node_id)
    if found is None and node_id.startswith("dataset:"):
        names = [name for name, _ in store.dataset_names(node_id) if name != node_id]
        merged = [node for node in store.graph_nodes(names).values() if node.node_id == node.canonical_id]
        return merged[0] if merged else None
    return found


def resolve(store: EventStore, node_id: str, as_of: str | None, *, elements: bool = False) -> GraphNode:
    """The dataset or job the id names (a dataset merged by symlinks answers as its canonical
    dataset), or with `elements` the element generic events named; 404 when unknown, or when it
    did not exist yet at `as_of`."""
    found = _lookup(store, node_id) if not node_id.startswith("element:") else None
    if found is None and elements:
        found = store.element_nodes([node_id]).get(node_id)
    if found is None:
        raise NotFound(f"node '{node_id}' not found")
    if as_of is not None and found.created_at > as_of:
        raise NotFound(f"node '{node_id}' did not exist yet at {display_time(as_of)}")
    if found.canonical_id != node_id:
        canonical = store.graph_nodes([found.canonical_id]).get(found.canonical_id)
        return canonical or found
    return found


def _other(edge: GraphEdge, direction: Direction) -> str:
    return edge.src_id if direction == "up" else edge.dst_id


def _here(edge: GraphEdge, direction: Direction) -> str:
    return edge.dst_id if direction == "up" else edge.src_id


def _graph_edge(edge: GraphEdge) -> LineageEdge:
    if edge.kind == "event":
        properties = {
            "label": edge.label,
            "eventCount": edge.event_count,
            "firstEventAt": display_time(edge.created_at) if edge.created_at else None,
            "lastEventAt": display_time(edge.updated_at) if edge.updated_at else None,
        }
        return LineageEdge(edge.src_id, edge.dst_id, "event", label=edge.label, properties=properties)
    return LineageEdge(edge.src_id, edge.dst_id, edge.kind, edge.job_id)


def _key(edge: GraphEdge) -> tuple[str, str, str, str | None]:
    return (edge.src_id, edge.dst_id, edge.kind, edge.label)


class _Walk:
    """One breadth-first walk from a root over dataset/job edges, in one or both directions. It
    walks on ids (one edge query per level and direction) and reads the nodes once, at the end."""

    def __init__(self, store: EventStore, query: LineageQuery, root: GraphNode) -> None:
        self.store = store
        self.query = query
        self.root = root
        self.included: dict[str, bool] = {root.canonical_id: False}  # id → has more beyond
        self.edges_found: dict[tuple[str, str, str, str | None], GraphEdge] = {}
        self.truncated = False

    def levels(self) -> int:
        extra = 1 if self.root.kind == "job" else 0  # a job's own inputs and outputs first
        return (self.query.depth if not self.query.include_processes else 2 * self.query.depth) + extra

    def edges(self, frontier: list[str], direction: Direction) -> list[GraphEdge]:
        condensed = not self.query.include_processes
        datasets = [n for n in frontier if n.startswith("dataset:")]
        jobs = [n for n in frontier if n.startswith("job:")]
        found = []
        if datasets:
            found += self.store.graph_edges(datasets, direction, condensed=condensed, as_of=self.query.as_of)
        if jobs:  # only the root is a job in the condensed view: its own inputs or outputs
            found += self.store.graph_edges(jobs, direction, condensed=False, as_of=self.query.as_of)
        if self.query.events:
            found += self.store.event_edges(frontier, direction, as_of=self.query.as_of)
        return found

    def run(self) -> LineageResult:
        starts = list(self.included)  # the root (a namespace's walk starts from many)
        frontiers: dict[Direction, list[str]] = {d: list(starts) for d in _directions(self.query.direction)}
        seen: dict[Direction, set[str]] = {d: set(starts) for d in frontiers}
        for _ in range(self.levels()):
            for direction in list(frontiers):
                frontiers[direction] = self.step(frontiers[direction], direction, seen[direction])
            frontiers = {d: f for d, f in frontiers.items() if f}
            if not frontiers:
                break
        for direction, frontier in frontiers.items():  # the depth ran out: which nodes go on?
            for edge in self.edges(frontier, direction):
                if _key(edge) not in self.edges_found:
                    self.included[_here(edge, direction)] = True
        return self.result()

    def step(self, frontier: list[str], direction: Direction, seen: set[str]) -> list[str]:
        edges = self.edges(frontier, direction)
        fresh = [n for n in dict.fromkeys(_other(e, direction) for e in edges) if n not in self.included]
        room = max(0, self.query.limit - len(self.included))
        if len(fresh) > room:
            self.truncated = True
            fresh = fresh[:room]
        self.included.update(dict.fromkeys(fresh, False))
        following = []
        for edge in edges:
            other = _other(edge, direction)
            if other not in self.included:
                self.included[_here(edge, direction)] = True
                continue
            self.edges_found.setdefault(_key(edge), edge)
            if other not in seen:
                seen.add(other)
                following.append(other)
        return following

    def result(self) -> LineageResult:
        result = LineageResult(self.root.canonical_id, as_of=self.query.as_of, truncated=self.truncated)
        found = self.store.graph_nodes([n for n in self.included if n != self.root.canonical_id])
        if self.query.events:  # elements, and datasets or jobs only generic events named
            missing = [n for n in self.included if n not in found and n != self.root.canonical_id]
            found.update(self.store.element_nodes(missing, as_of=self.query.as_of))
        found[self.root.canonical_id] = self.root
        for node_id, more in self.included.items():
            if node_id in found:
                result.nodes[node_id] = node_vertex(found[node_id])
                result.nodes[node_id].expandable = more
        result.edges = [
            _graph_edge(e)
            for e in self.edges_found.values()
            if e.src_id in result.nodes and e.dst_id in result.nodes
        ]
        return result


def _pinned(store: EventStore, node: NodeId, query: LineageQuery) -> LineageQuery:
    """The query for a node id without its `#version`: a version pins the answer to the time the
    version was created (unless `as_of` says otherwise); 404 for a version the node never had."""
    if node.version is None:
        return query if query.node_id == node.text else dataclasses.replace(query, node_id=node.text)
    owners = [node.text] if node.kind != "datasetField" else [dataset for dataset, _ in node.field_splits]
    for owner in owners:
        created = store.version_created_at(owner, node.version)
        if created is not None:
            return dataclasses.replace(query, node_id=node.text, as_of=query.as_of or created)
    raise NotFound(f"version '{node.version}' of '{node.text}' not found")


def lineage(store: EventStore, query: LineageQuery) -> LineageResult:
    """The upstream and/or downstream of a dataset or job (or, with `query.events`, an element),
    `depth` jobs deep, at most `limit` nodes. A field id is answered by `column_lineage`."""
    allowed: tuple[NodeKind, ...] = ("dataset", "job", "datasetField")
    if query.events:
        allowed += ("element",)
    elif query.node_id.startswith("element:"):
        raise BadRequest(
            f"nodeId: {query.node_id!r} is an element of generic events; this graph of datasets and "
            "jobs does not hold them: ask the lineage warehouse API "
            "(GET /api/warehouse/v1/lineage/end-to-end?nodeId=…)"
        )
    node = parse_node_id(query.node_id, allowed=allowed)
    if node.kind == "datasetField":
        return column_lineage(store, query)
    query = _pinned(store, node, query)
    root = resolve(store, query.node_id, query.as_of, elements=query.events)
    return _Walk(store, query, root).run()


# -- a whole namespace as one graph ------------------------------------------------------------
class _NamespaceWalk(_Walk):
    """A walk whose first level is the namespace's nodes."""

    def __init__(self, store: EventStore, query: LineageQuery, roots: list[GraphNode]) -> None:
        super().__init__(store, query, roots[0])
        self.included = dict.fromkeys(dict.fromkeys(r.canonical_id for r in roots), False)

    def levels(self) -> int:
        return max(1, self.query.depth if not self.query.include_processes else 2 * self.query.depth)


def namespace_lineage(store: EventStore, namespace: str, query: LineageQuery) -> LineageResult:
    """The datasets and jobs of `namespace` (as they stood at `query.as_of`; only its datasets in
    the condensed view), the edges between them and what is `query.depth` jobs beyond them (at
    least their direct neighbours), at most `query.limit` nodes; 404 for an unknown namespace."""
    if store.get_namespace(namespace) is None:
        raise NotFound(f"namespace '{namespace}' not found")
    ids = [
        f"dataset:{namespace}:{d.name}" for d in store.list_datasets(namespace, limit=query.limit, offset=0)
    ]
    if query.include_processes:
        jobs = store.list_jobs(namespace=namespace, states=None, limit=query.limit, offset=0)
        ids += [f"job:{namespace}:{j.name}" for j in jobs]
    found = store.graph_nodes(ids)
    roots = [
        node
        for node in (found[i] for i in ids if i in found)
        if query.as_of is None or node.created_at <= query.as_of
    ]
    if not roots:
        return LineageResult(f"namespace:{namespace}", as_of=query.as_of)
    truncated = len(roots) > query.limit
    result = _NamespaceWalk(store, query, roots[: query.limit]).run()
    result.root = f"namespace:{namespace}"
    result.truncated = result.truncated or truncated
    return result


# -- column lineage ------------------------------------------------------------------------------
def _field_key(ref: FieldRef) -> str:
    return f"{ref.dataset_id}\x00{ref.field}"


class _ColumnWalk:
    """A breadth-first walk over field→field edges; depth counts transformations."""

    def __init__(self, store: EventStore, query: LineageQuery) -> None:
        self.store = store
        self.query = query
        self.datasets: dict[str, GraphNode] = {}
        self.refs: dict[str, FieldRef] = {}
        self.result = LineageResult(query.node_id, as_of=query.as_of)
        self.edge_keys: set[tuple[str, str]] = set()

    def add(self, refs: Iterable[FieldRef], room: int) -> list[FieldRef]:
        """Add the fields not in the answer yet (at most `room`); return them."""
        fresh = [r for r in dict.fromkeys(refs) if self.id_of(r) not in self.result.nodes]
        if len(fresh) > room:
            self.result.truncated = True
            fresh = fresh[:room]
        missing = [r.dataset_id for r in fresh if r.dataset_id not in self.datasets]
        self.datasets.update(self.store.graph_nodes(missing))
        types = self.store.dataset_fields(list({r.dataset_id for r in fresh}), as_of=self.query.as_of)
        added = []
        for ref in fresh:
            dataset = self.datasets.get(ref.dataset_id)
            if dataset is None:
                continue  # an input of a columnLineage facet that no event declared: skip it
            kinds = {path: kind for path, _, kind, _ in types.get(ref.dataset_id, [])}
            node = LineageNode(
                field_id(dataset.namespace, dataset.name, ref.field),
                "datasetField",
                dataset.namespace,
                dataset.name,
                field=ref.field,
                field_type=kinds.get(ref.field),
            )
            self.result.nodes[node.id] = node
            self.refs[node.id] = ref
            added.append(ref)
        return added

    def id_of(self, ref: FieldRef) -> str:
        dataset = self.datasets.get(ref.dataset_id)
        if dataset is None:
            return _field_key(ref)
        return field_id(dataset.namespace, dataset.name, ref.field)

    def run(self, roots: list[FieldRef]) -> LineageResult:
        self.add(roots, max(self.query.limit, len(roots)))
        frontiers: dict[Direction, list[FieldRef]] = {
            d: list(roots) for d in _directions(self.query.direction)
        }
        seen = {d: {_field_key(r) for r in roots} for d in frontiers}
        for _ in range(self.query.depth):
            for direction in list(frontiers):
                frontiers[direction] = self.step(frontiers[direction], direction, seen[direction])
            frontiers = {d: f for d, f in frontiers.items() if f}
            if not frontiers:
                break
        for direction, frontier in frontiers.items():
            for edge in self.store.column_edges(frontier, direction, as_of=self.query.as_of):
                here = edge.dst if direction == "up" else edge.src
                self.result.nodes[self.id_of(here)].expandable = True
        return self.result

    def step(self, frontier: list[FieldRef], direction: Direction, seen: set[str]) -> list[FieldRef]:
        edges = self.store.column_edges(frontier, direction, as_of=self.query.as_of)
        others = [(e.src if direction == "up" else e.dst) for e in edges]
        self.add(others, max(0, self.query.limit - len(self.result.nodes)))
        following = []
        for edge, other in zip(edges, others, strict=True):
            here = edge.dst if direction == "up" else edge.src
            if self.id_of(other) not in self.result.nodes:
                if self.id_of(here) in self.result.nodes:
                    self.result.nodes[self.id_of(here)].expandable = True
                continue
            self._edge(edge)
            if _field_key(other) not in seen:
                seen.add(_field_key(other))
                following.append(other)
        return following

    def _edge(self, edge: ColumnEdge) -> None:
        src, dst = self.id_of(edge.src), self.id_of(edge.dst)
        if (src, dst) in self.edge_keys:
            return
        self.edge_keys.add((src, dst))
        transformation = f"{edge.type}/{edge.subtype}" if edge.subtype else edge.type
        self.result.add_edge(
            LineageEdge(src, dst, "column", transformation=transformation, description=edge.description)
        )


def _field_roots(store: EventStore, node: NodeId, as_of: str | None) -> tuple[GraphNode, list[FieldRef]]:
    """The dataset and fields a column-lineage query starts from: one field, every field of a
    dataset, or every field of a job's outputs; 404 for an unknown node or field."""
    if node.kind == "job":
        job = resolve(store, node.text, as_of)
        outputs = [
            e.dst_id for e in store.graph_edges([job.canonical_id], "down", condensed=False, as_of=as_of)
        ]
        written = store.dataset_fields(outputs, as_of=as_of)
        return job, [FieldRef(dataset, path) for dataset in outputs for path, *_ in written.get(dataset, [])]
    if node.kind == "dataset":
        dataset = resolve(store, node.text, as_of)
        fields = store.dataset_fields([dataset.canonical_id], as_of=as_of).get(dataset.canonical_id, [])
        return dataset, [FieldRef(dataset.canonical_id, path) for path, *_ in fields]
    dataset, ref, _ = field_of(store, node, as_of)
    return dataset, [ref]


def field_of(store: EventStore, node: NodeId, as_of: str | None) -> tuple[GraphNode, FieldRef, str | None]:
    """The dataset, field and field type a `datasetField:` id names: a field of the dataset's
    schema, or one its column lineage names; 404 otherwise."""
    splits = node.field_splits
    known = store.graph_nodes([dataset for dataset, _ in splits])
    for dataset_id, name in splits:
        if dataset_id not in known and _lookup(store, dataset_id) is None:
            continue
        dataset = resolve(store, dataset_id, as_of)
        ref = FieldRef(dataset.canonical_id, name)
        fields = store.dataset_fields([dataset.canonical_id], as_of=as_of).get(dataset.canonical_id, [])
        kinds = {path: kind for path, _, kind, _ in fields}
        if name in kinds or any(  # a field no schema declares but column lineage names
            not edge.dataset_level
            for direction in ("up", "down")
            for edge in store.column_edges([ref], direction, as_of=as_of)
        ):
            return dataset, ref, kinds.get(name)
        raise NotFound(f"field '{name}' not found in dataset '{dataset_id}'")
    raise NotFound(f"node '{node.text}' not found: no dataset {' or '.join(repr(d) for d, _ in splits)}")


def column_lineage(store: EventStore, query: LineageQuery) -> LineageResult:
    """Field-level lineage of a field (`datasetField:…`), of every field of a dataset, or of
    every field a job writes, `depth` transformations deep, at most `limit` fields."""
    node = parse_node_id(query.node_id, allowed=("dataset", "datasetField", "job"))
    query = _pinned(store, node, query)
    owner, roots = _field_roots(store, node, query.as_of)
    walk = _ColumnWalk(store, query)
    if owner.kind == "dataset":
        walk.datasets[owner.canonical_id] = owner
    result = walk.run(roots)
    result.root = walk.id_of(roots[0]) if node.kind == "datasetField" and roots else owner.canonical_id
    return result


# -- ultimate sources and destinations -----------------------------------------------------------
def ultimate(
    store: EventStore,
    node_id: str,
    kind: Literal["source", "destination"],
    *,
    as_of: str | None = None,
    limit: int = DEFAULT_LIMIT,
) -> LineageResult:
    """The datasets at the far upstream (`source`) or downstream (`destination`) end of every
    path through the node, each with its shortest distance in datasets. The current answer is
    the pipeline's precomputed augmentation; as of a past time, for a field, or for a dataset
    with more ends than the model keeps (`ENDS_CAP`), a walk to the ends. A dataset with no
    upstream is its own ultimate source."""
    if node_id.startswith("element:"):
        raise BadRequest(
            f"nodeId: {node_id!r} is an element of generic events, which has no ultimate {kind}s: "
            "its event edges say what happened together, not where data comes from"
        )
    node = parse_node_id(node_id, allowed=("dataset", "job", "datasetField"))
    direction: TraversalDirection = "upstream" if kind == "source" else "downstream"
    if node.kind == "datasetField" or as_of is not None or node.version is not None:
        return _ultimate_by_walk(store, node_id, kind, direction, as_of, limit)
    root = resolve(store, node_id, None)
    result = LineageResult(root.canonical_id)
    result.nodes[root.canonical_id] = node_vertex(root)
    step: Direction = "up" if kind == "source" else "down"
    if root.kind == "job":
        starts = {
            _other(e, step): 1
            for e in store.graph_edges([root.canonical_id], step, condensed=False, as_of=None)
        }
    else:
        starts = {root.canonical_id: 0}
    ends: dict[str, int] = {}
    found = store.ultimate_ends(list(starts), kind)
    if any(end.other_id == PAST_CAP for end in found):  # more than the model keeps: walk
        return _ultimate_by_walk(store, node_id, kind, direction, None, limit)
    for end in found:
        distance = end.distance + starts[end.node_id]
        ends[end.other_id] = min(distance, ends.get(end.other_id, distance))
    without = [n for n in starts if n not in {e.node_id for e in found}]
    if without:  # not in the condensed graph: no dataset on that side, so it is its own end
        linked = {_here(e, step) for e in store.graph_edges(without, step, condensed=True, as_of=None)}
        for start in without:
            if start not in linked:
                ends[start] = min(starts[start], ends.get(start, starts[start]))
    _add_ends(store, result, ends, kind, limit)
    return result


def _add_ends(store: EventStore, result: LineageResult, ends: dict[str, int], kind: str, limit: int) -> None:
    ordered = sorted(ends.items(), key=lambda pair: (pair[1], pair[0]))
    if len(ordered) > max(limit - 1, 0):
        result.truncated = True
        ordered = ordered[: max(limit - 1, 0)]
    nodes = store.graph_nodes([node_id for node_id, _ in ordered if node_id not in result.nodes])
    for node_id, distance in ordered:
        if node_id in result.nodes:
            result.nodes[node_id].distance = distance
            continue
        if node_id in nodes:
            result.nodes[node_id] = node_vertex(nodes[node_id])
            result.nodes[node_id].distance = distance
        else:
            continue
        src, dst = (node_id, result.root) if kind == "source" else (result.root, node_id)
        result.add_edge(LineageEdge(src, dst, f"ultimate-{kind}"))


def _ultimate_by_walk(
    store: EventStore,
    node_id: str,
    kind: Literal["source", "destination"],
    direction: TraversalDirection,
    as_of: str | None,
    limit: int,
) -> LineageResult:
    """Walk to the ends (within `limit` nodes) and keep the nodes with nothing further."""
    query = LineageQuery(node_id, direction, _TO_THE_END, MAX_LIMIT, as_of, include_processes=False)
    walked = lineage(store, query)
    step = "dst" if kind == "source" else "src"  # the side an edge leaves a node by, walking outwards
    inner = {getattr(edge, step) for edge in walked.edges}
    distances = _distances(walked, kind)
    ends = {
        n: distances[n]
        for n, node in walked.nodes.items()
        if n not in inner
        and n in distances
        and node.kind != "job"
        and not (n == walked.root and walked.edges)
    }
    result = LineageResult(walked.root, as_of=as_of)
    result.nodes[walked.root] = walked.nodes[walked.root]
    result.truncated = walked.truncated
    ordered = sorted(ends.items(), key=lambda pair: (pair[1], pair[0]))
    if len(ordered) > max(limit - 1, 0):
        result.truncated = True
        ordered = ordered[: max(limit - 1, 0)]
    for end_id, distance in ordered:
        node = walked.nodes[end_id]
        node.distance = distance
        result.nodes[end_id] = node
        if end_id != walked.root:
            src, dst = (end_id, walked.root) if kind == "source" else (walked.root, end_id)
            result.add_edge(LineageEdge(src, dst, f"ultimate-{kind}"))
    return result


def _distances(walked: LineageResult, kind: str) -> dict[str, int]:
    """Shortest distance (in datasets or fields) from the root, following the walk's edges outwards."""
    outward: dict[str, list[str]] = {}
    for edge in walked.edges:
        a, b = (edge.dst, edge.src) if kind == "source" else (edge.src, edge.dst)
        outward.setdefault(a, []).append(b)
    distance = {walked.root: 0}
    level = [walked.root]
    while level:
        following = []
        for node in level:
            for other in outward.get(node, []):
                if other not in distance:
                    distance[other] = distance[node] + 1
                    following.append(other)
        level = following
    return distance
