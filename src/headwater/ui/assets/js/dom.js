// Building the DOM safely (text is always text, never HTML), formatting times and durations,
// and the URLs of the UI's pages for datasets, jobs, runs and lineage.

const SVG_NS = "http://www.w3.org/2000/svg";

function build(el, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** An HTML element: h("a", {href: "/x"}, "text", otherNode). */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

/** "2025-03-05T02:36:26.541Z" → "2025-03-05 02:36:26 UTC" (times stay in UTC, as events carry them). */
export function fmtTime(value) {
  if (!value) return "—";
  const match = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)/.exec(value);
  return match ? `${match[1]} ${match[2]} UTC` : value;
}

export function fmtDuration(ms) {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${ms} ms`;
  let secs = Math.round(ms / 1000);
  if (secs < 60) return `${secs} s`;
  const hours = Math.floor(secs / 3600);
  const mins = Math.floor((secs % 3600) / 60);
  secs %= 60;
  return hours ? `${hours} h ${mins} min` : `${mins} min ${secs} s`;
}

/** A datetime-local input's value (read as UTC) or an ISO time → the ISO time the API takes. */
export function apiTime(value) {
  if (!value) return null;
  if (/(Z|[+-]\d\d:?\d\d)$/i.test(value)) return value;
  return /T\d\d:\d\d$/.test(value) ? `${value}:00Z` : `${value}Z`;
}

/** An ISO time → what a datetime-local input shows (UTC, to the second when it has seconds). */
export function inputTime(value) {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d)?)/.exec(value || "");
  return match ? match[1] : "";
}

/** Small squares, one a run, oldest first, coloured by state (Marquez users know them as the
 * jobs list's sparkline); `runs` newest first, as the API lists them. */
export function runStates(runs) {
  const shown = (runs || []).slice(0, 10).reverse();
  return h("span", {class: "run-states", role: "img",
    "aria-label": `latest runs: ${shown.map((r) => r.state).join(", ") || "none"}`},
  shown.map((r) => h("i", {class: `state-${r.state}`, title: `${r.state} ${fmtTime(r.startedAt || r.createdAt)}`})));
}

export function badge(state) {
  return h("span", {class: `badge state-${state || "NEW"}`}, state || "NEW");
}

export function tags(list) {
  return (list || []).map((tag) => h("span", {class: "tag"}, typeof tag === "string" ? tag : tag.name));
}

export function empty(text) {
  return h("p", {class: "empty"}, text);
}

/** A description list from [label, value] pairs; pairs whose value is empty are left out. */
export function kv(pairs) {
  return h("dl", {class: "kv"}, pairs.filter(([, v]) => v !== null && v !== undefined && v !== "")
    .map(([k, v]) => [h("dt", null, k), h("dd", null, v)]));
}

export function table(headers, rows, attrs) {
  return h("div", {class: "table-wrap"}, h("table", attrs,
    h("thead", null, h("tr", null, headers.map((name) => h("th", {scope: "col"}, name)))),
    h("tbody", null, rows.map((cells) => h("tr", null, cells.map((c) => h("td", null, c)))))));
}

const enc = encodeURIComponent;
export const datasetHref = (ns, name) => `/datasets/${enc(ns)}/${enc(name)}`;
export const jobHref = (ns, name) => `/jobs/${enc(ns)}/${enc(name)}`;
export const runHref = (id) => `/runs/${enc(id)}`;
export const namespaceHref = (ns) => `/namespaces/${enc(ns)}`;

/** The UI's lineage page of a node, with view settings (depth, jobs, columns, asOf…). */
export function lineageHref(nodeId, settings) {
  const params = new URLSearchParams({node: nodeId});
  for (const [key, value] of Object.entries(settings || {})) {
    if (value !== null && value !== undefined && value !== "") params.set(key, String(value));
  }
  return `/lineage?${params}`;
}

/** "dataset:ns:name" → {kind, namespace, name}. Namespaces may hold colons (`postgres://db:5432`),
 * names too; a namespace with "://" ends at the first colon after its host. */
export function parseNodeId(id) {
  const kind = id.slice(0, id.indexOf(":"));
  const rest = id.slice(kind.length + 1);
  let cut;
  const scheme = rest.indexOf("://");
  if (scheme >= 0) {
    const after = rest.indexOf(":", scheme + 3);
    const port = /^:\d+(?=:)/.exec(rest.slice(after));
    cut = port ? after + port[0].length : after;
  } else {
    cut = rest.indexOf(":");
  }
  if (kind === "run") return {kind, namespace: "", name: rest};
  return {kind, namespace: rest.slice(0, cut), name: rest.slice(cut + 1)};
}

/** The page of a node (dataset, job or run), or null. */
export function nodeHref(nodeId, namespace, name) {
  const kind = nodeId.slice(0, nodeId.indexOf(":"));
  if (namespace === undefined) ({namespace, name} = parseNodeId(nodeId));
  if (kind === "dataset") return datasetHref(namespace, name);
  if (kind === "job") return jobHref(namespace, name);
  if (kind === "run") return runHref(name);
  return null;
}

export function link(href, text, attrs) {
  return h("a", {href, ...(attrs || {})}, text);
}

export function setTitle(text) {
  document.title = text ? `${text} · Headwater` : "Headwater";
}

/** Download text as a file. */
export function download(filename, type, content) {
  const url = URL.createObjectURL(new Blob([content], {type}));
  const a = h("a", {href: url, download: filename});
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
