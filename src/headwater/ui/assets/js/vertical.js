// The vertical view of a node (Egeria's containment, from the warehouse API): its namespace and
// source, other names (symlinks), owners, tags, parent and child jobs or runs, grouped for reading.
import {badge, empty, fmtTime, h, kv, link, nodeHref, runHref} from "./dom.js";

const GROUPS = [
  ["contains", "Namespace", "in"],
  ["source-of", "Source", "in"],
  ["symlink", "Also known as", "in"],
  ["owned-by", "Owners", "out"],
  ["tagged", "Tags", "out"],
  ["parent", "Parent", "in"],
  ["parent", "Children", "out"],
  ["root", "Root run", "in"],
  ["ran", "Job", "in"],
  ["ran", "Runs", "out"],
];

function label(vertex) {
  const p = vertex.properties || {};
  if (vertex.nodeType === "run") {
    return [link(runHref(vertex.displayName), vertex.displayName.slice(0, 8), {class: "mono", title: vertex.displayName}),
      " ", badge(p.state), ` ${fmtTime(p.startedAt)}`];
  }
  const href = vertex.nodeType === "dataset" || vertex.nodeType === "job" ? nodeHref(vertex.nodeID, p.namespace, p.name) : null;
  const text = vertex.nodeType === "source" && p.uri ? `${vertex.displayName} (${p.uri})`
    : vertex.nodeType === "owner" && p.type ? `${vertex.displayName} (${p.type})` : vertex.displayName;
  return [href ? link(href, text) : text, p.symlinkType ? h("span", {class: "muted"}, ` ${p.symlinkType}`) : null];
}

/** A card body listing what surrounds `answer.nodeID`; fields and lineage edges are left to other views. */
export function verticalView(answer) {
  const me = answer.nodeID;
  const vertex = new Map(answer.vertices.map((v) => [v.nodeID, v]));
  const pairs = [];
  for (const [type, title, way] of GROUPS) {
    const others = answer.edges.filter((e) => e.edgeType === type && (way === "in" ? e.destinationNodeID === me : e.sourceNodeID === me))
      .map((e) => vertex.get(way === "in" ? e.sourceNodeID : e.destinationNodeID)).filter(Boolean);
    if (others.length) pairs.push([title, h("ul", {class: "plain"}, others.slice(0, 50).map((v) => h("li", null, label(v))))]);
  }
  return pairs.length ? kv(pairs) : empty("Nothing around this node.");
}
