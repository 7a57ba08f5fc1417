// Impact analysis: everything downstream (or upstream) of a dataset, job or field as one list with
// distance, type, namespace, owners and latest run state; filtered, sorted and exported as CSV in
// the browser from one API answer. Every setting (the query's and the view's) lives in the URL.
import {get} from "../api.js";
import {navigate, updateQuery} from "../app.js";
import {apiTime, badge, clear, datasetHref, download, empty, fmtTime, h, inputTime, lineageHref, link, nodeHref, parseNodeId, setTitle, tags} from "../dom.js";

const API = "/api/warehouse/v1/impact";
const LIMIT = 2000;
const DEFAULT_DEPTH = 20;
const TYPE_LABEL = {dataset: "dataset", job: "job", datasetField: "field"};
const NONE = "(none)"; // the filter value of rows with no owner, or no run
const COLUMNS = [ // [sort key, header]
  ["distance", "Distance"], ["name", "Name"], ["type", "Type"], ["namespace", "Namespace"],
  ["owners", "Owners"], ["state", "Latest run"],
];

function readSettings(params) {
  const depth = Number.parseInt(params.get("depth") || "", 10);
  return {
    node: params.get("node") || "",
    direction: params.get("direction") === "upstream" ? "upstream" : "downstream",
    depth: Number.isFinite(depth) ? Math.max(0, Math.min(1000, depth)) : DEFAULT_DEPTH,
    columns: params.get("columns") === "1",
    asOf: params.get("asOf") || "",
    q: params.get("q") || "",
    type: params.get("type") || "",
    ns: params.get("ns") || "",
    owner: params.get("owner") || "",
    state: params.get("state") || "",
    sort: COLUMNS.some(([key]) => key === params.get("sort")) ? params.get("sort") : "distance",
    desc: params.get("desc") === "1",
  };
}

function queryOf(settings) {
  const params = new URLSearchParams({node: settings.node});
  if (settings.direction !== "downstream") params.set("direction", settings.direction);
  if (settings.depth !== DEFAULT_DEPTH) params.set("depth", String(settings.depth));
  if (settings.columns) params.set("columns", "1");
  for (const key of ["asOf", "q", "type", "ns", "owner", "state"]) if (settings[key]) params.set(key, settings[key]);
  if (settings.sort !== "distance") params.set("sort", settings.sort);
  if (settings.desc) params.set("desc", "1");
  return params;
}

const displayName = (row) => (row.field ? `${row.name}.${row.field}` : row.name);
const stateOf = (row) => row.latestRunState || NONE;

const SORT_VALUE = {
  distance: (row) => row.distance ?? Infinity,
  name: (row) => displayName(row).toLowerCase(),
  type: (row) => TYPE_LABEL[row.nodeType] || row.nodeType,
  namespace: (row) => row.namespace,
  owners: (row) => (row.owners.length ? row.owners.join(", ").toLowerCase() : "\uffff"),
  state: (row) => (row.latestRunState ? row.latestRunState : "\uffff"),
};

function sortRows(rows, key, desc) {
  const value = SORT_VALUE[key];
  const order = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  return [...rows].sort((a, b) => (desc ? -1 : 1) * order(value(a), value(b))
    || order(a.distance ?? Infinity, b.distance ?? Infinity) || order(displayName(a), displayName(b)));
}

function filterRows(rows, settings) {
  const text = settings.q.trim().toLowerCase();
  return rows.filter((row) => (!text || displayName(row).toLowerCase().includes(text)
      || row.namespace.toLowerCase().includes(text))
    && (!settings.type || row.nodeType === settings.type)
    && (!settings.ns || row.namespace === settings.ns)
    && (!settings.owner || (settings.owner === NONE ? !row.owners.length : row.owners.includes(settings.owner)))
    && (!settings.state || stateOf(row) === settings.state));
}

/** One CSV cell: quoted; a leading = + @ or control character is defused so spreadsheets show text. */
function csvCell(value) {
  let text = value === null || value === undefined ? "" : String(value);
  if (/^[=+@\t\r]/.test(text)) text = `'${text}`;
  return `"${text.replaceAll('"', '""')}"`;
}

export function toCsv(rows) {
  const head = ["distance", "type", "namespace", "name", "field", "owners", "latest_run_state", "latest_run_time",
    "node_id"];
  const lines = rows.map((r) => [r.distance, TYPE_LABEL[r.nodeType] || r.nodeType, r.namespace, r.name, r.field,
    r.owners.join("; "), r.latestRunState, r.latestRunTime, r.nodeID].map(csvCell).join(","));
  return `${[head.join(","), ...lines].join("\r\n")}\r\n`;
}

function options(label, values, chosen, onchange, names) {
  return h("label", null, label, h("select", {"aria-label": `Filter by ${label.toLowerCase()}`, class: "filter", onchange},
    h("option", {value: ""}, "All"),
    values.map((value) => h("option", {value, selected: value === chosen}, (names && names[value]) || value))));
}

function cell(label, attrs, ...content) {
  return h("td", {"data-label": label, ...(attrs || {})}, h("div", null, content));
}

function nameCell(row) {
  if (row.nodeType === "datasetField") {
    return [h("span", {class: "mono"}, row.field), h("div", {class: "muted"}, "in ",
      link(datasetHref(row.namespace, row.name), row.name))];
  }
  return link(nodeHref(row.nodeID, row.namespace, row.name) || "#", row.name);
}

function runCell(row) {
  if (!row.latestRunState) return h("span", {class: "muted"}, "—");
  const via = row.nodeType === "job" ? "" : ` (latest run of ${parseNodeId(row.latestRunJob || "job::").name})`;
  return h("span", {title: `${fmtTime(row.latestRunTime)}${via}`}, badge(row.latestRunState));
}

function rowActions(row, settings) {
  const isField = row.nodeType === "datasetField";
  const graphNode = isField ? `dataset:${row.namespace}:${row.name}` : row.nodeID;
  const again = new URLSearchParams({node: row.nodeID});
  if (settings.direction !== "downstream") again.set("direction", settings.direction);
  return h("span", {class: "actions"},
    link(lineageHref(graphNode, {columns: isField ? 1 : null, asOf: settings.asOf}), "Lineage"),
    link(`/impact?${again}`, "Impact"));
}

/** The page without a node: pick one by name. */
async function picker(main) {
  setTitle("Impact analysis");
  const list = h("ul", {class: "impact-picks"});
  const input = h("input", {type: "search", name: "name", placeholder: "A dataset, job or field name",
    "aria-label": "Find a dataset, job or field"});
  const form = h("form", {class: "actions", role: "search", onsubmit: async (event) => {
    event.preventDefault();
    const answer = await get("/api/warehouse/v1/nodes", {name: input.value.trim(), limit: 50});
    const nodes = answer.nodes.filter((n) => TYPE_LABEL[n.nodeType]);
    clear(list).append(...(nodes.length ? nodes.map((n) => h("li", null,
      link(`/impact?${new URLSearchParams({node: n.nodeID})}`, n.displayName),
      h("span", {class: "muted"}, ` · ${TYPE_LABEL[n.nodeType]} · ${n.properties.namespace}`
        + (n.nodeType === "datasetField" ? ` · ${n.properties.name}` : "")))) : [h("li", {class: "empty"}, "No match.")]));
  }}, input, h("button", {class: "primary"}, "Find"));
  main.append(h("div", {class: "page-head"}, h("div", null, h("h1", null, "Impact analysis"),
    h("p", {class: "muted"}, "Everything downstream (or upstream) of a dataset, job or field."))),
  h("section", {class: "card"}, form, list));
  input.focus();
}

export async function render(main, _parts, params) {
  const settings = readSettings(params);
  if (!settings.node) return picker(main);
  const kind = settings.node.slice(0, settings.node.indexOf(":"));
  const answer = await get(API, {nodeId: settings.node, direction: settings.direction, depth: settings.depth,
    level: settings.columns && kind === "dataset" ? "column" : null, asOf: apiTime(settings.asOf), limit: LIMIT});
  const root = answer.node;
  const rootName = displayName(root);
  setTitle(`Impact of ${rootName}`);
  const rows = answer.rows;

  const refetch = (change) => {
    Object.assign(settings, change);
    navigate(`/impact?${queryOf(settings)}`, {replace: true});
  };
  const view = () => updateQuery(queryOf(settings));

  // -- head: the node, its owners and run state, the links out -----------------------------------
  const rootHref = root.nodeType === "datasetField" ? datasetHref(root.namespace, root.name)
    : nodeHref(root.nodeID, root.namespace, root.name);
  const exportButton = h("button", {type: "button", class: "primary", "aria-label": "Export the rows shown as CSV"},
    "Export CSV");
  main.append(h("div", {class: "page-head"},
    h("div", null, h("div", {class: "crumbs"}, `Impact analysis · ${TYPE_LABEL[root.nodeType] || root.nodeType} in `,
      root.namespace),
    h("h1", null, link(rootHref || "#", rootName)),
    h("div", {class: "impact-meta"}, root.latestRunState ? [h("span", {class: "muted"}, "Latest run "),
      badge(root.latestRunState)] : null,
    h("span", {class: "muted"}, root.latestRunState ? " · Owners" : "Owners"),
    root.owners.length ? tags(root.owners) : h("span", {class: "muted"}, "none known"))),
    h("div", {class: "actions"},
      link(lineageHref(root.nodeType === "datasetField" ? `dataset:${root.namespace}:${root.name}` : root.nodeID,
        {columns: root.nodeType === "datasetField" || answer.level === "column" ? 1 : null, asOf: settings.asOf}),
      "Lineage graph", {class: "button"}), exportButton)));

  // -- the query: direction, depth, level, as of (each asks the server again) ----------------------
  const way = (direction, label) => h("button", {type: "button", "aria-pressed": String(settings.direction === direction),
    onclick: () => settings.direction !== direction && refetch({direction})}, label);
  const depthInput = h("input", {type: "number", min: 0, max: 1000, value: settings.depth, class: "depth",
    "aria-label": "Depth (transformations)", onchange: () => {
      const depth = Number.parseInt(depthInput.value, 10);
      if (Number.isFinite(depth) && depth >= 0 && depth !== settings.depth) refetch({depth: Math.min(depth, 1000)});
    }});
  const asOfInput = h("input", {type: "datetime-local", value: inputTime(settings.asOf), "aria-label": "As of (UTC)",
    onchange: () => refetch({asOf: asOfInput.value ? apiTime(asOfInput.value) : ""})});
  const columns = kind === "dataset" ? h("label", {class: "check"}, h("input", {type: "checkbox", checked: settings.columns,
    onchange: () => refetch({columns: !settings.columns})}), "Columns") : null;
  main.append(h("section", {class: "card impact-query", "aria-label": "Query"},
    h("div", {class: "impact-bar"},
      h("div", {class: "field-group"}, h("span", {class: "group-label", id: "impact-way"}, "Direction"),
        h("div", {class: "segmented", role: "group", "aria-labelledby": "impact-way"},
          way("downstream", "Downstream"), way("upstream", "Upstream"))),
      h("label", null, "Depth", depthInput), columns,
      answer.level === "column" ? h("span", {class: "tag"}, "column level") : null,
      h("label", null, "As of", asOfInput),
      settings.asOf ? h("button", {type: "button", onclick: () => refetch({asOf: ""})}, "Now") : null),
    h("p", {class: "muted hint"}, "Distance counts the transformations (jobs, or column-lineage steps) between ",
      rootName, " and each node; depth limits it.")));

  // -- the list: summary, filters, table ----------------------------------------------------------
  const distinct = (values) => [...new Set(values)].sort((a, b) => a.localeCompare(b));
  const namespaces = distinct(rows.map((r) => r.namespace));
  const owners = distinct(rows.flatMap((r) => r.owners));
  const states = distinct(rows.map(stateOf));
  const types = Object.keys(TYPE_LABEL).filter((t) => rows.some((r) => r.nodeType === t));
  const text = h("input", {type: "search", value: settings.q, placeholder: "Filter by name",
    "aria-label": "Filter by name", oninput: () => { settings.q = text.value; update(); }});
  const pick = (key) => (event) => { settings[key] = event.target.value; update(); };
  const summary = h("p", {class: "impact-summary", role: "status", "aria-live": "polite"});
  const tableWrap = h("div", {class: "table-wrap"});
  main.append(h("section", {class: "card impact-list", "aria-label": "Impacted nodes"},
    h("div", {class: "impact-bar", hidden: !rows.length}, h("label", null, "Name", text),
      options("Type", types, settings.type, pick("type"), TYPE_LABEL),
      options("Namespace", namespaces, settings.ns, pick("ns")),
      options("Owner", [...owners, ...(rows.some((r) => !r.owners.length) ? [NONE] : [])], settings.owner, pick("owner")),
      options("State", states, settings.state, pick("state")),
      h("label", {class: "phone-only"}, "Sort by", h("select", {"aria-label": "Sort by", onchange: (event) => {
        [settings.sort, settings.desc] = [event.target.value.replace(/-desc$/, ""), event.target.value.endsWith("-desc")];
        update();
      }}, COLUMNS.flatMap(([key, label]) => [["", "↑"], ["-desc", "↓"]].map(([suffix, arrow]) => h("option",
        {value: key + suffix, selected: settings.sort === key && settings.desc === Boolean(suffix)}, `${label} ${arrow}`))))),
      h("button", {type: "button", onclick: () => {
        Object.assign(settings, {q: "", type: "", ns: "", owner: "", state: ""});
        text.value = "";
        for (const select of main.querySelectorAll("select.filter")) select.value = "";
        update();
      }}, "Clear filters")),
    summary, tableWrap,
    answer.truncated ? h("p", {class: "muted"}, `Capped at ${LIMIT} nodes: lower the depth, or open the impact of a `
      + "node further away.") : null));

  let shown = [];
  function update() {
    view();
    shown = sortRows(filterRows(rows, settings), settings.sort, settings.desc);
    const word = settings.direction === "downstream" ? "downstream" : "upstream";
    const failing = rows.filter((r) => r.latestRunState === "FAILED").length;
    const far = rows.reduce((most, r) => Math.max(most, r.distance ?? 0), 0);
    summary.hidden = !rows.length;
    const counts = [["dataset", "datasets"], ["job", "jobs"], ["datasetField", "fields"]].map(([type, plural]) => {
      const n = rows.filter((r) => r.nodeType === type).length;
      return n ? ` · ${n} ${n === 1 ? TYPE_LABEL[type] : plural}` : "";
    }).join("");
    clear(summary).append(h("span", null, h("strong", null, `${rows.length} ${rows.length === 1 ? "node" : "nodes"} ${word}`),
      `${counts} · up to ${far} ${far === 1 ? "step" : "steps"} away`,
      failing ? [" · ", h("span", {class: "state-FAILED"}, `${failing} with a failed latest run`)] : null,
      shown.length !== rows.length ? ` · showing ${shown.length}` : ""));
    clear(tableWrap).append(rows.length ? h("table", {class: "impact-table", "aria-label": `Nodes ${word} of ${rootName}`},
      h("thead", null, h("tr", null, COLUMNS.map(([key, label]) => h("th", {scope: "col",
        "aria-sort": settings.sort === key ? (settings.desc ? "descending" : "ascending") : "none"},
      h("button", {type: "button", onclick: () => {
        settings.desc = settings.sort === key ? !settings.desc : false;
        settings.sort = key;
        update();
      }}, label, h("span", {class: "sort-mark", "aria-hidden": "true"},
        settings.sort === key ? (settings.desc ? " ▼" : " ▲") : "")))),
      h("th", {scope: "col"}, h("span", {class: "sr-only"}, "Links")))),
      h("tbody", null, shown.map((row) => h("tr", {dataset: {node: row.nodeID}},
        cell("Distance", {class: "num"}, row.distance ?? "—"), cell("Name", null, nameCell(row)),
        cell("Type", null, h("span", {class: `kind kind-${row.nodeType}`}, TYPE_LABEL[row.nodeType] || row.nodeType)),
        cell("Namespace", {class: "ns"}, row.namespace),
        cell("Owners", null, row.owners.length ? tags(row.owners) : h("span", {class: "muted"}, "—")),
        cell("Latest run", null, runCell(row)), cell("Links", null, rowActions(row, settings))))))
      : empty(`Nothing ${word} of ${rootName}${settings.asOf ? ` as of ${fmtTime(apiTime(settings.asOf))}` : ""}`
        + `${settings.depth === 0 ? " at depth 0" : ""}.`));
    if (rows.length && !shown.length) tableWrap.append(empty("No row matches the filters."));
  }
  exportButton.addEventListener("click", () => {
    const base = `${rootName}-${settings.direction}`.replace(/[^A-Za-z0-9._-]+/g, "_");
    download(`impact-${base}.csv`, "text/csv;charset=utf-8", toCsv(shown));
  });
  update();
  return null;
}
