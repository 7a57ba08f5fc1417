// The lineage graph as the UI holds it: nodes and edges merged from every answer (expansions
// add to it), read from the warehouse API (datasets, jobs and elements of generic events) or the
// column-lineage API (fields), with the walks the page needs (reachability, paths between two
// nodes, the diff of two times).
import {get, paths} from "../api.js";
import {parseNodeId} from "../dom.js";

export const LIMIT = 500;
export const SCOPES = {both: "end-to-end", upstream: "upstream", downstream: "downstream"};

/** The graph being shown: nodes and edges by id, merged from every answer (expansions add to it). */
export class Model {
  constructor() {
    this.byId = new Map();
    this.edgeMap = new Map();
    this.root = null;
    this.truncated = false;
  }

  get nodes() { return [...this.byId.values()]; }
  get edges() { return [...this.edgeMap.values()]; }

  addNode(node) {
    const known = this.byId.get(node.id);
    if (known) {
      known.expandable = known.expandable && node.expandable;
      if (node.fields) {
        const names = new Set(known.fields.map((f) => f.name));
        known.fields.push(...node.fields.filter((f) => !names.has(f.name)));
      }
    } else {
      this.byId.set(node.id, node);
    }
  }

  addEdge(edge) {
    const key = `${edge.source}>${edge.target}${edge.sourceField ? `:${edge.sourceField}>${edge.targetField}` : ""}`;
    if (!this.edgeMap.has(key)) this.edgeMap.set(key, edge);
  }

  /** Add a warehouse answer ({vertices, edges, expandable}). */
  addWarehouse(answer) {
    const more = new Set(answer.expandable || []);
    for (const v of answer.vertices) {
      if (!["dataset", "job", "element"].includes(v.nodeType)) continue;
      const p = v.properties;
      // an element of generic events: its type where a dataset shows its namespace
      // a dropped table stays in the lineage, marked, until a write creates it again
      const dropped = p.lifecycleState === "DROP" ? (p.lifecycleStateTime || "") : null;
      const sub = v.nodeType === "job" ? `job · ${p.namespace}` : v.nodeType === "element" ? `element · ${p.type}`
        : dropped !== null ? `dropped · ${p.namespace}` : p.namespace;
      this.addNode({id: v.nodeID, kind: v.nodeType, name: v.displayName, namespace: p.namespace,
        sub, state: p.latestRunState || null, dropped, expandable: more.has(v.nodeID), properties: p});
    }
    for (const e of answer.edges) {
      const p = e.properties || {};
      const label = p.job ? `through ${p.job}`
        : e.edgeType === "event" ? `${p.label} (${p.eventCount} event${p.eventCount === 1 ? "" : "s"}): ${e.sourceNodeID} → ${e.destinationNodeID}`
          : `${e.edgeType}: ${e.sourceNodeID} → ${e.destinationNodeID}`;
      this.addEdge({source: e.sourceNodeID, target: e.destinationNodeID, type: e.edgeType, label});
    }
    this.truncated = this.truncated || answer.truncated;
  }

  /** Add a column-lineage answer (Marquez' graph of DATASET_FIELD nodes) as datasets with field rows. */
  addColumns(answer) {
    for (const node of answer.graph) {
      if (node.type !== "DATASET_FIELD") continue;
      const d = node.data;
      const id = `dataset:${d.namespace}:${d.dataset}`;
      this.addNode({id, kind: "dataset", name: d.dataset, namespace: d.namespace, sub: d.namespace,
        expandable: Boolean(d.expandable), fields: [{name: d.field, type: d.fieldType}], properties: {namespace: d.namespace, name: d.dataset}});
      if (d.expandable) this.byId.get(id).expandable = true;
      for (const input of d.inputFields || []) {
        const kind = (input.transformations && input.transformations[0] && input.transformations[0].type) || input.transformationType;
        const sub = input.transformations && input.transformations[0] && input.transformations[0].subtype;
        this.addEdge({source: `dataset:${input.namespace}:${input.dataset}`, target: id, sourceField: input.field,
          targetField: d.field, indirect: kind === "INDIRECT",
          label: `${input.dataset}.${input.field} → ${d.dataset}.${d.field}: ${kind || "?"}${sub ? `/${sub}` : ""}` +
            `${input.transformationDescription ? ` (${input.transformationDescription})` : ""}`});
      }
    }
    // a field named only as an input has no node of its own in the answer: give it a row
    for (const edge of this.edgeMap.values()) {
      const source = this.byId.get(edge.source);
      if (source && edge.sourceField && !source.fields.some((f) => f.name === edge.sourceField)) {
        source.fields.push({name: edge.sourceField, type: ""});
      }
    }
  }

  /** Nodes reachable from `id` following edges forwards (or backwards). */
  reach(id, forwards) {
    const next = new Map();
    for (const e of this.edgeMap.values()) {
      const [a, b] = forwards ? [e.source, e.target] : [e.target, e.source];
      (next.get(a) || next.set(a, []).get(a)).push(b);
    }
    const found = new Set([id]);
    const queue = [id];
    while (queue.length) {
      for (const w of next.get(queue.shift()) || []) {
        if (!found.has(w)) { found.add(w); queue.push(w); }
      }
    }
    return found;
  }

  /** The nodes and edges on the directed paths between a and b (either way). */
  between(a, b) {
    const nodes = new Set();
    for (const [from, to] of [[a, b], [b, a]]) {
      const ahead = this.reach(from, true), behind = this.reach(to, false);
      if (!ahead.has(to)) continue;
      for (const id of ahead) if (behind.has(id)) nodes.add(id);
    }
    const edges = new Set(this.edges.filter((e) => nodes.has(e.source) && nodes.has(e.target))
      .map((e) => `${e.source}>${e.target}`));
    return {nodes, edges};
  }
}

/** Fetch the lineage of `nodeId` and merge it into `model`. */
export async function fetchInto(model, nodeId, settings, direction, depth) {
  const asOf = settings.asOf || null;
  if (settings.columns) {
    const answer = await get("/api/v1/column-lineage", {nodeId, depth, withDownstream: direction !== "upstream",
      limit: LIMIT, asOf});
    model.addColumns(answer);
  } else {
    const answer = await get(paths.warehouse(SCOPES[direction]), {nodeId, depth, includeProcesses: settings.jobs,
      limit: LIMIT, asOf});
    model.addWarehouse(answer);
    if (!model.root) model.root = answer.nodeID;
  }
}

/** Which way to expand a node: away from the root. */
export function sideOf(model, id) {
  if (!model.root) return "both";
  const down = model.reach(model.root, true).has(id);
  const up = model.reach(model.root, false).has(id);
  return down && !up ? "downstream" : up && !down ? "upstream" : "both";
}

/** Mark in `after` (the graph drawn) what changed since `before`: nodes and edges added, those
 * removed (put back into `after` as ghosts), and nodes still there whose edges changed. */
export function diffModels(before, after) {
  const changes = {added: 0, removed: 0, changed: 0};
  for (const node of after.byId.values()) {
    if (!before.byId.has(node.id)) { node.diff = "added"; changes.added += 1; }
  }
  for (const node of before.byId.values()) {
    if (!after.byId.has(node.id)) {
      after.addNode({...node, expandable: false, diff: "removed"});
      changes.removed += 1;
    }
  }
  const touched = new Set();
  for (const [key, edge] of after.edgeMap) {
    if (!before.edgeMap.has(key)) { edge.diff = "added"; touched.add(edge.source).add(edge.target); }
  }
  for (const [key, edge] of before.edgeMap) {
    if (!after.edgeMap.has(key)) {
      after.edgeMap.set(key, {...edge, diff: "removed"});
      touched.add(edge.source).add(edge.target);
    }
  }
  for (const id of touched) {
    const node = after.byId.get(id);
    if (node && !node.diff) { node.diff = "changed"; changes.changed += 1; }
  }
  return changes;
}

/** The part of `model` to draw: without the nodes whose namespace or kind is hidden, and with a
 * `tag`, only the nodes tagged with it. */
export function visible(model, hidden, tag) {
  if (!hidden.size && !tag) return model;
  const out = derived(model);
  for (const node of model.byId.values()) {
    if (hidden.has(`ns:${node.namespace}`) || hidden.has(`kind:${node.kind}`)) continue;
    if (tag && !((node.properties && node.properties.tags) || []).includes(tag)) continue;
    out.byId.set(node.id, node);
  }
  for (const [key, edge] of model.edgeMap) {
    if (out.byId.has(edge.source) && out.byId.has(edge.target)) out.edgeMap.set(key, edge);
  }
  return out;
}

function derived(model) {
  const out = new Model();
  out.root = model.root;
  out.truncated = model.truncated;
  return out;
}

const STATE_ORDER = ["FAILED", "ABORTED", "RUNNING", "NEW", "COMPLETED"];

/** `model` with the jobs of each parent job (an Airflow DAG's tasks) folded into one node, but
 * for the parents in `open`; a parent folds when two or more of its jobs are in the graph. */
export function grouped(model, open) {
  const children = new Map();
  for (const node of model.byId.values()) {
    const parent = node.kind === "job" && node.properties && node.properties.parentJob;
    if (parent && !open.has(parent)) (children.get(parent) || children.set(parent, []).get(parent)).push(node);
  }
  const into = new Map(); // job id → its group's id
  const out = derived(model);
  for (const [parent, jobs] of children) {
    if (jobs.length < 2) continue;
    const id = `group:${parent}`;
    const {namespace, name} = parseNodeId(parent);
    out.byId.set(id, {id, kind: "job", group: true, parent, name, namespace, sub: `${jobs.length} jobs · ${namespace}`,
      state: STATE_ORDER.find((state) => jobs.some((job) => job.state === state)) || null,
      members: jobs, root: jobs.some((job) => job.root), expandable: false, properties: {namespace, name}});
    for (const job of jobs) into.set(job.id, id);
  }
  if (!into.size) return model;
  for (const node of model.byId.values()) if (!into.has(node.id)) out.byId.set(node.id, node);
  for (const edge of model.edgeMap.values()) {
    const source = into.get(edge.source) || edge.source;
    const target = into.get(edge.target) || edge.target;
    if (source !== target) out.addEdge({...edge, source, target});
  }
  return out;
}
