"""Vertical lineage, the warehouse API's `vertical` scope: the containment around a node; and the
warehouse's node search.

- a dataset: its namespace, its source, the other names symlinks merged with it, its owners and
  tags, its fields (with their tags, and each field's column lineage one step up and down);
- a field: its dataset and that dataset's namespace, its tags, its column lineage one step up
  and down;
- a job: its namespace, parent and child jobs, owners, tags and latest runs;
- a run: its job, parent, root and child runs;
- an element of generic events: its tags (the latest value of each key) and its latest events,
  read from the browse tables, so they are there as soon as the events are; a dataset or job that
  generic events named shows those too.

Owners come from the `ownership` facet in force (now, or at `as_of`). Vertices are added in that
order until `limit`, so a cut answer keeps the near containment and loses column lineage first.
"""

from __future__ import annotations

from collections.abc import Iterable

import orjson

from headwater.errors import NotFound
from headwater.query.lineage import LineageEdge, LineageNode, LineageResult, field_of, node_vertex, resolve
from headwater.query.node_ids import NodeId, dataset_id, element_node_id, field_id, parse_node_id
from headwater.query.run_events import parse_run_id
from headwater.query.times import display_time
from headwater.store.base import EventStore
from headwater.store.generic import generic_store
from headwater.store.graph import FieldRef, GraphNode
from headwater.store.vertical import FoundNode, RunRef

RUNS_SHOWN = 10  # a job's latest runs
CHILD_RUNS_SHOWN = 100
EVENTS_SHOWN = 20  # an element's latest events
NODE_TYPES = ("dataset", "job", "datasetField", "namespace", "source", "run", "tag", "element")  # searchable


class _Containment:
    """A vertical answer being built: at most `limit` vertices, each edge once, every edge
    between two vertices of the answer."""

    def __init__(self, root: LineageNode, limit: int, as_of: str | None) -> None:
        self.result = LineageResult(root.id, as_of=as_of)
        self.result.nodes[root.id] = root
        self.limit = limit
        self.edge_keys: set[tuple[str, str, str]] = set()

    def has(self, node_id: str) -> bool:
        return node_id in self.result.nodes

    def add(self, node: LineageNode, src: str, dst: str, kind: str, **edge: str | None) -> None:
        """Add the vertex (unless there, or the cap is reached) and the edge src → dst; the other
        end of the edge must be in the answer already."""
        anchor = dst if node.id == src else src
        if not self.has(anchor):
            return
        if not self.has(node.id):
            if len(self.result.nodes) >= self.limit:
                self.result.truncated = True
                return
            self.result.nodes[node.id] = node
        if (src, dst, kind) not in self.edge_keys:
            self.edge_keys.add((src, dst, kind))
            self.result.add_edge(
                LineageEdge(
                    src, dst, kind, edge.get("job"), edge.get("transformation"), edge.get("description")
                )
            )


def _entity(node: GraphNode) -> LineageNode:
    return node_vertex(node)


def _namespace(name: str) -> LineageNode:
    return LineageNode(f"namespace:{name}", "namespace", name, name)


def _source(name: str, uri: str | None) -> LineageNode:
    return LineageNode(f"source:{name}", "source", "", name, properties={"uri": uri})


def _tag(name: str) -> LineageNode:
    return LineageNode(f"tag:{name}", "tag", "", name)


def _field(dataset: GraphNode, path: str, kind: str | None) -> LineageNode:
    return LineageNode(
        field_id(dataset.namespace, dataset.name, path),
        "datasetField",
        dataset.namespace,
        dataset.name,
        field=path,
        field_type=kind,
    )


def _run(run_id: str, run: RunRef | None) -> LineageNode:
    """A run's vertex; `run` is None for a run known only as another's parent or root."""
    if run is None:
        return LineageNode(f"run:{run_id}", "run", "", run_id)
    started = run.started_at or run.first_event_time
    properties = {"state": run.state, "startedAt": display_time(started), "job": run.job_node_id}
    return LineageNode(f"run:{run_id}", "run", run.job_namespace or "", run_id, properties=properties)


def _owners(value: str | None) -> list[tuple[str, str | None]]:
    """(name, type) of each owner an `ownership` facet value lists."""
    if value is None:
        return []
    try:
        owners = orjson.loads(value).get("owners")
    except (orjson.JSONDecodeError, AttributeError):
        return []
    found = []
    for owner in owners if isinstance(owners, list) else []:
        if isinstance(owner, dict) and isinstance(owner.get("name"), str):
            kind = owner.get("type")
            found.append((owner["name"], kind if isinstance(kind, str) else None))
    return found


def _add_owners(box: _Containment, store: EventStore, node_ids: list[str], as_of: str | None) -> None:
    facets = store.facets_in_force(node_ids, "ownership", as_of=as_of)
    for node_id in node_ids:
        for name, kind in _owners(facets.get(node_id)):
            owner = LineageNode(f"owner:{name}", "owner", "", name, properties={"type": kind} if kind else {})
            box.add(owner, node_id, owner.id, "owned-by")


def _add_tags(box: _Containment, tags: Iterable[tuple[str, str | None, str]], owner: GraphNode) -> None:
    """Tags of the owner (under any of its names, as `node_tags` found them) and of its fields
    in the answer."""
    for _, field, tag in tags:
        holder = owner.canonical_id if field is None else field_id(owner.namespace, owner.name, field)
        box.add(_tag(tag), holder, f"tag:{tag}", "tagged")


def _sources(
    store: EventStore, datasets: dict[str, GraphNode], as_of: str | None
) -> dict[str, tuple[str, str | None]]:
    """Each dataset's source (name, uri): the current one, or at `as_of` the one its dataSource
    facet named then (named after the namespace when the facet names none, as the pipeline does)."""
    if as_of is None:
        return store.dataset_sources(list(datasets))
    found = {}
    for node_id, value in store.facets_in_force(list(datasets), "dataSource", as_of=as_of).items():
        try:
            facet = orjson.loads(value)
        except orjson.JSONDecodeError:
            continue
        if isinstance(facet, dict):
            name, uri = facet.get("name"), facet.get("uri")
            found[node_id] = (
                name if isinstance(name, str) else datasets[node_id].namespace,
                uri if isinstance(uri, str) else None,
            )
    return found


def _add_column_lineage(
    box: _Containment, store: EventStore, refs: list[FieldRef], as_of: str | None
) -> None:
    """Each field's column lineage, one transformation up and down."""
    asked = set(refs)
    edges = [*store.column_edges(refs, "up", as_of=as_of), *store.column_edges(refs, "down", as_of=as_of)]
    others = {edge.src if edge.dst in asked else edge.dst for edge in edges} - asked
    dataset_ids = list({ref.dataset_id for ref in asked | others})
    datasets = store.graph_nodes(dataset_ids)
    types = store.dataset_fields(list({ref.dataset_id for ref in others}), as_of=as_of)
    for edge in edges:
        src, dst = datasets.get(edge.src.dataset_id), datasets.get(edge.dst.dataset_id)
        if src is None or dst is None:
            continue  # an input of a columnLineage facet no event declared
        ends = []
        for dataset, ref in ((src, edge.src), (dst, edge.dst)):
            kinds = {path: kind for path, _, kind, _ in types.get(ref.dataset_id, [])}
            ends.append(_field(dataset, ref.field, kinds.get(ref.field)))
        other = ends[0] if edge.dst in asked else ends[1]
        transformation = f"{edge.type}/{edge.subtype}" if edge.subtype else edge.type
        box.add(
            other,
            ends[0].id,
            ends[1].id,
            "column",
            transformation=transformation,
            description=edge.description,
        )


def _pinned_as_of(store: EventStore, node: NodeId, as_of: str | None) -> str | None:
    """`as_of`, or for a `#version` node id the time the version was created; 404 for a version
    the node never had."""
    if node.version is None:
        return as_of
    owners = [node.text] if node.kind != "datasetField" else [dataset for dataset, _ in node.field_splits]
    for owner in owners:
        created = store.version_created_at(owner, node.version)
        if created is not None:
            return as_of or created
    raise NotFound(f"version '{node.version}' of '{node.text}' not found")


def _declared(value: str) -> dict[str, tuple[str, str, str | None]]:
    """alias id → (namespace, name, type) of each identifier a `symlinks` facet value lists."""
    try:
        identifiers = orjson.loads(value).get("identifiers")
    except (orjson.JSONDecodeError, AttributeError):
        return {}
    found = {}
    for entry in identifiers if isinstance(identifiers, list) else []:
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("namespace"), str)
            and isinstance(entry.get("name"), str)
        ):
            kind = entry.get("type")
            found[dataset_id(entry["namespace"], entry["name"])] = (
                entry["namespace"],
                entry["name"],
                kind if isinstance(kind, str) else None,
            )
    return found


def _aliases(
    store: EventStore, dataset: GraphNode, as_of: str | None
) -> tuple[dict[str, LineageNode], dict[str, GraphNode]]:
    """The other names symlinks merged with the dataset, as vertices (at `as_of`, those known by
    then); and those of them that events named themselves, as the model's datasets. A name only
    a symlinks facet declared is known by that facet's identifier."""
    root = dataset.canonical_id
    names = dict(store.dataset_names(root))
    known = {
        name: alias
        for name, alias in store.graph_nodes([name for name in names if name != root]).items()
        if as_of is None or alias.created_at <= as_of
    }
    declared: dict[str, tuple[str, str, str | None]] = {}
    for value in store.facets_in_force([root, *known], "symlinks", as_of=as_of).values():
        declared.update(_declared(value))
    vertices = {}
    for name, symlink in names.items():
        if name in known:
            vertex = LineageNode(name, "dataset", known[name].namespace, known[name].name, known[name])
        elif name in declared and name != root:
            vertex = LineageNode(name, "dataset", declared[name][0], declared[name][1])
        else:
            continue
        kind = symlink or declared.get(name, ("", "", None))[2]
        if kind:
            vertex.properties["symlinkType"] = kind
        vertices[name] = vertex
    return vertices, known


def _add_history(
    box: _Containment, store: EventStore, holder: str, element_id: int, as_of: str | None
) -> None:
    """The element's tags (the latest value of each key, by `as_of` when given) and its latest
    events (received by `as_of`), from the browse tables: read-your-writes, no pipeline pass."""
    browse = generic_store(store)
    tags = (
        browse.element_latest_tags(element_id) if as_of is None else store.element_tags_at(element_id, as_of)
    )
    for tag in tags:
        vertex = LineageNode(
            f"elementTag:{tag.id}",
            "elementTag",
            "",
            f"{tag.key}={tag.value}",
            properties={"key": tag.key, "value": tag.value, "tagId": tag.id},
        )
        box.add(vertex, holder, vertex.id, "tagged")
    events = browse.list_generic_events(
        event_type=None,
        element_id=element_id,
        tag_id=None,
        after=None,
        before=as_of,
        limit=EVENTS_SHOWN,
        offset=0,
    )
    for event in events:
        properties = {"type": event.type, "timestamp": display_time(event.timestamp), "eventId": event.id}
        vertex = LineageNode(f"event:{event.id}", "event", "", event.description, properties=properties)
        box.add(vertex, holder, vertex.id, "in-event")


def _folded(store: EventStore, node_id: str, as_of: str | None) -> GraphNode | None:
    """The element generic events named by this id (by `as_of`), if the pipeline folded one."""
    return store.element_nodes([node_id], as_of=as_of).get(node_id)


def _add_folded_history(box: _Containment, store: EventStore, node_id: str, as_of: str | None) -> None:
    """A dataset's or job's tags and events from generic events, when some named it."""
    element = _folded(store, node_id, as_of)
    if element is not None and element.element_id is not None:
        _add_history(box, store, node_id, element.element_id, as_of)


def _dataset(store: EventStore, node: NodeId, as_of: str | None, limit: int) -> LineageResult:
    dataset = resolve(store, node.text, as_of)
    root = dataset.canonical_id
    box = _Containment(_entity(dataset), limit, as_of)
    box.add(_namespace(dataset.namespace), f"namespace:{dataset.namespace}", root, "contains")
    aliases, known = _aliases(store, dataset, as_of)
    sources = _sources(store, {root: dataset, **known}, as_of)
    for name in [root, *aliases]:
        if name != root:
            box.add(aliases[name], name, root, "symlink")
        if name in sources:
            box.add(_source(*sources[name]), f"source:{sources[name][0]}", name, "source-of")
    _add_owners(box, store, [root, *known], as_of)
    tags = store.node_tags([root, *aliases], as_of=as_of)
    _add_tags(box, [tag for tag in tags if tag[1] is None], dataset)
    fields = store.dataset_fields([root], as_of=as_of).get(root, [])
    for path, _, kind, _ in fields:
        vertex = _field(dataset, path, kind)
        box.add(vertex, root, vertex.id, "has-field")
    _add_tags(box, [tag for tag in tags if tag[1] is not None], dataset)
    _add_folded_history(box, store, root, as_of)
    _add_column_lineage(box, store, [FieldRef(root, path) for path, *_ in fields], as_of)
    return box.result


def _dataset_field(store: EventStore, node: NodeId, as_of: str | None, limit: int) -> LineageResult:
    dataset, ref, kind = field_of(store, node, as_of)
    root = _field(dataset, ref.field, kind)
    box = _Containment(root, limit, as_of)
    box.add(_entity(dataset), dataset.canonical_id, root.id, "has-field")
    box.add(_namespace(dataset.namespace), f"namespace:{dataset.namespace}", dataset.canonical_id, "contains")
    names = [name for name, _ in store.dataset_names(dataset.canonical_id)]
    _add_tags(box, [tag for tag in store.node_tags(names, as_of=as_of) if tag[1] == ref.field], dataset)
    _add_column_lineage(box, store, [ref], as_of)
    return box.result


def _job(store: EventStore, node: NodeId, as_of: str | None, limit: int) -> LineageResult:
    job = resolve(store, node.text, as_of)
    root = job.canonical_id
    box = _Containment(_entity(job), limit, as_of)
    box.add(_namespace(job.namespace), f"namespace:{job.namespace}", root, "contains")
    parents, children = store.job_family(root)
    family = store.graph_nodes([*parents, *children])
    for parent in parents:
        if parent in family and (as_of is None or family[parent].created_at <= as_of):
            box.add(_entity(family[parent]), parent, root, "parent")
    for child in children:
        if child in family and (as_of is None or family[child].created_at <= as_of):
            box.add(_entity(family[child]), root, child, "parent")
    _add_owners(box, store, [root], as_of)
    _add_tags(box, store.node_tags([root], as_of=as_of), job)
    for run in store.job_runs(root, limit=RUNS_SHOWN, as_of=as_of):
        box.add(_run(run.run_id, run), root, f"run:{run.run_id}", "ran")
    _add_folded_history(box, store, root, as_of)
    return box.result


def _run_family(store: EventStore, node: NodeId, as_of: str | None, limit: int) -> LineageResult:
    run_id = parse_run_id(node.text.removeprefix("run:"))
    run = store.runs_by_id([run_id]).get(run_id)
    if run is None or store.hidden_nodes([run.job_node_id]):
        raise NotFound(f"run '{run_id}' not found")
    if as_of is not None and run.first_event_time > as_of:
        raise NotFound(f"run '{run_id}' had not begun yet at {display_time(as_of)}")
    root = f"run:{run_id}"
    box = _Containment(_run(run_id, run), limit, as_of)
    job = store.graph_nodes([run.job_node_id]).get(run.job_node_id)
    if job is not None:
        box.add(_entity(job), job.canonical_id, root, "ran")
    above = [other for other in (run.parent_run_id, run.root_run_id) if other and other != run_id]
    found = store.runs_by_id(above)
    if run.parent_run_id and run.parent_run_id != run_id:
        parent = run.parent_run_id
        box.add(_run(parent, found.get(parent)), f"run:{parent}", root, "parent")
    if run.root_run_id and run.root_run_id not in (run_id, run.parent_run_id):
        top = run.root_run_id
        box.add(_run(top, found.get(top)), f"run:{top}", root, "root")
    for child in store.child_runs(run_id, limit=CHILD_RUNS_SHOWN, as_of=as_of):
        box.add(_run(child.run_id, child), root, f"run:{child.run_id}", "parent")
    return box.result


def _browsed(store: EventStore, node: NodeId) -> GraphNode | None:
    """The element the browse tables know by this node id, before the pipeline has folded it."""
    kind, _, rest = node.text.partition(":")
    element_type, _, description = rest.partition(":") if kind == "element" else (kind, "", rest)
    if element_node_id(element_type, description) != node.text:
        return None
    element_id = store.element_browse_id(element_type, description)
    if element_id is None:
        return None
    return GraphNode(
        node.text, "element", element_type, description, "", "", node.text, element_id=element_id
    )


def _element(store: EventStore, node: NodeId, as_of: str | None, limit: int) -> LineageResult:
    """An element's tags and events: one the pipeline folded, or one only the browse tables know
    yet (they are written with the event: no waiting for a pass)."""
    element = _folded(store, node.text, None) or _browsed(store, node)
    if element is None:
        raise NotFound(f"node '{node.text}' not found")
    if as_of is not None and element.created_at and element.created_at > as_of:
        raise NotFound(f"node '{node.text}' did not exist yet at {display_time(as_of)}")
    box = _Containment(_entity(element), limit, as_of)
    if element.element_id is not None:
        _add_history(box, store, element.node_id, element.element_id, as_of)
    if (
        as_of is not None
        and not element.created_at
        and not any(e.kind == "in-event" for e in box.result.edges)
    ):
        raise NotFound(f"node '{node.text}' did not exist yet at {display_time(as_of)}")
    return box.result


def vertical(store: EventStore, node_id: str, *, as_of: str | None, limit: int) -> LineageResult:
    """The containment around a dataset, field, job, run or element (a `#version` id answers as of
    the version's creation); 404 for an unknown node, 400 for a malformed id. A dataset or job
    that only generic events named answers as an element."""
    node = parse_node_id(node_id)
    as_of = _pinned_as_of(store, node, as_of)
    if node.kind == "element":
        return _element(store, node, as_of, limit)
    build = {"dataset": _dataset, "datasetField": _dataset_field, "job": _job, "run": _run_family}[node.kind]
    try:
        return build(store, node, as_of, limit)
    except NotFound:
        if node.kind not in ("dataset", "job") or node.version is not None:
            raise
        if store.hidden_nodes([node.text]):  # deleted: not an element either
            raise
        return _element(store, node, as_of, limit)


# -- node search ---------------------------------------------------------------------------------
def _found(node: FoundNode, entities: dict[str, GraphNode], runs: dict[str, RunRef]) -> LineageNode:
    """The vertex of a search result, as lineage answers show it."""
    if node.node_type in ("dataset", "job"):
        entity = entities.get(node.node_id)
        vertex = LineageNode(node.node_id, node.node_type, node.namespace or "", node.name, entity)
        if entity is not None and entity.canonical_id != node.node_id:
            vertex.properties["symlinkOf"] = entity.canonical_id
        return vertex
    if node.node_type == "datasetField":
        return LineageNode(
            node.node_id,
            "datasetField",
            node.namespace or "",
            node.dataset or "",
            field=node.name,
            field_type=node.field_type,
        )
    if node.node_type == "run":
        return _run(node.name, runs.get(node.name))
    if node.node_type == "element":
        element = entities.get(node.node_id)
        if element is not None:
            return node_vertex(element)
        return LineageNode(node.node_id, "element", node.namespace or "", node.name)
    if node.node_type == "source":
        return _source(node.name, node.uri)
    return _namespace(node.name) if node.node_type == "namespace" else _tag(node.name)


def find_nodes(
    store: EventStore, node_type: str | None, name: str, limit: int
) -> tuple[list[LineageNode], bool]:
    """Nodes of one type (or of every type in `NODE_TYPES`) whose name holds `name` in any case:
    the first `limit` by name, and whether there were more."""
    found: list[FoundNode] = []
    for kind in [node_type] if node_type else NODE_TYPES:
        if kind in ("dataset", "job"):
            rows, _ = store.search(
                name, kind=kind.upper(), namespace=None, sort="NAME", limit=limit + 1, before=None, after=None
            )
            found += [FoundNode(row.node_id, kind, row.name, row.namespace) for row in rows]
        else:
            found += store.find_nodes(kind, name, limit=limit + 1)
    found.sort(key=lambda node: (node.name, node.node_id))
    first = found[:limit]
    entities = store.graph_nodes([node.node_id for node in first if node.node_type in ("dataset", "job")])
    entities.update(store.element_nodes([node.node_id for node in first if node.node_type == "element"]))
    runs = store.runs_by_id([node.name for node in first if node.node_type == "run"])
    return [_found(node, entities, runs) for node in first], len(found) > limit
