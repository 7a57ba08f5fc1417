// The lineage graph of a dataset, job or element of generic events: directed, left to right; depth, direction, jobs shown or
// condensed, column mode, "as of" time travel, expandable nodes, the path between two nodes,
// ultimate sources and destinations, export. Every view setting lives in the URL.
import {get, paths} from "../api.js";
import {fullWidth, updateQuery} from "../app.js";
import {apiTime, badge, clear, download, empty, fmtTime, h, inputTime, kv, link, lineageHref, namespaceHref, nodeHref, setTitle} from "../dom.js";
import {diffModels, fetchInto, grouped, LIMIT, Model, SCOPES, sideOf, visible} from "../graph/model.js";
import {GraphView} from "../graph/view.js";

/** A node's own page: a dataset's, job's or run's, or an element's page (elements of generic events). */
function pageHref(node) {
  const p = (node && node.properties) || {};
  if (node && node.kind === "element") return p.elementId ? `/elements/${encodeURIComponent(p.elementId)}` : null;
  return node ? nodeHref(node.id, p.namespace, p.name) : null;
}

function readSettings(params) {
  return {
    node: params.get("node") || "",
    depth: Math.max(0, Math.min(20, Number.parseInt(params.get("depth") || "2", 10) || 0)),
    direction: SCOPES[params.get("direction")] ? params.get("direction") : "both",
    jobs: params.get("jobs") !== "0",
    columns: params.get("columns") === "1",
    asOf: params.get("asOf") || "",
    expand: params.getAll("expand"),
    select: params.get("select") || "",
    path: params.get("path") || "",
    only: params.get("only") === "1",
    compare: params.get("compare") || "",
    hide: params.getAll("hide"),
    group: params.get("group") === "1",
    tag: params.get("tag") || "",
    open: params.getAll("open"),
  };
}

function writeSettings(settings) {
  const params = new URLSearchParams({node: settings.node});
  if (settings.depth !== 2) params.set("depth", String(settings.depth));
  if (settings.direction !== "both") params.set("direction", settings.direction);
  if (!settings.jobs) params.set("jobs", "0");
  if (settings.columns) params.set("columns", "1");
  if (settings.asOf) params.set("asOf", settings.asOf);
  for (const id of settings.expand) params.append("expand", id);
  if (settings.select) params.set("select", settings.select);
  if (settings.path) params.set("path", settings.path);
  if (settings.only) params.set("only", "1");
  if (settings.compare) params.set("compare", settings.compare);
  for (const key of settings.hide) params.append("hide", key);
  if (settings.group) params.set("group", "1");
  if (settings.tag) params.set("tag", settings.tag);
  for (const id of settings.open) params.append("open", id);
  updateQuery(params);
}

/** A checkbox list of the namespaces and kinds in the graph; unticked ones are hidden. */
function filters(model, settings, apply) {
  const hidden = new Set(settings.hide);
  const keys = [...new Set(model.nodes.map((n) => `kind:${n.kind}`))].sort()
    .concat([...new Set(model.nodes.map((n) => `ns:${n.namespace}`))].sort());
  const summary = h("summary", {class: "button"});
  const label = () => {
    const parts = [hidden.size ? `${hidden.size} hidden` : "", settings.tag ? `tag ${settings.tag}` : ""].filter(Boolean);
    summary.textContent = parts.length ? `Filter (${parts.join(", ")})` : "Filter";
  };
  const box = (key) => h("label", null, h("input", {type: "checkbox", checked: !hidden.has(key), onchange: (event) => {
    if (event.target.checked) hidden.delete(key); else hidden.add(key);
    label();
    apply({hide: [...hidden]});
  }}), key.startsWith("kind:") ? `${key.slice(5)}s` : key.slice(3));
  const tagNames = [...new Set(model.nodes.flatMap((n) => (n.properties && n.properties.tags) || []))].sort();
  const tagged = h("select", {"aria-label": "Only the nodes tagged", onchange: () => { apply({tag: tagged.value}); label(); }},
    h("option", {value: ""}, "any or no tag"), tagNames.map((name) => h("option", {value: name, selected: name === settings.tag}, name)));
  label();
  return h("details", {class: "graph-filters"}, summary, h("div", null, h("strong", null, "Show"), keys.map(box),
    h("label", {style: "margin-top:6px"}, "Tagged", tagged)));
}

function toolbar(settings, apply, view, model) {
  const depth = h("input", {type: "number", min: 0, max: 20, value: settings.depth, style: "width:4.5em",
    "aria-label": "Depth", onchange: () => apply({depth: Number(depth.value)})});
  const direction = h("select", {"aria-label": "Direction", onchange: () => apply({direction: direction.value})},
    [["both", "Up and downstream"], ["upstream", "Upstream"], ["downstream", "Downstream"]].map(([value, label]) =>
      h("option", {value, selected: value === settings.direction}, label)));
  const toggle = (label, pressed, change, hint, disabled) => h("button", {type: "button", "aria-pressed": String(pressed),
    title: hint, onclick: change, disabled}, label);
  const asOf = h("input", {type: "datetime-local", step: 1, "aria-label": "As of (UTC)", value: inputTime(settings.asOf)});
  asOf.addEventListener("change", () => apply({asOf: apiTime(asOf.value) || ""}));
  const compare = h("input", {type: "datetime-local", step: 1, "aria-label": "Compare with (UTC)", value: inputTime(settings.compare),
    title: "Show what changed in the graph since this earlier time"});
  compare.addEventListener("change", () => apply({compare: apiTime(compare.value) || ""}));
  const exportButton = (label, run) => h("button", {type: "button", onclick: () => run().catch((error) => alert(error.message))}, label);
  const base = (settings.node.split(":").slice(-1)[0] || "lineage").replace(/[^\w.-]+/g, "_");
  const outputs = h("span", {class: "actions", style: "margin-left:auto"},
    h("button", {type: "button", onclick: () => view.fit()}, "Fit"),
    exportButton("SVG", async () => download(`${base}.svg`, "image/svg+xml", view.exportSvg())),
    exportButton("PNG", async () => {
      const blob = await view.exportPng();
      download(`${base}.png`, "image/png", blob);
    }));
  const controls = h("div", {class: "toolbar", role: "toolbar", "aria-label": "Lineage view"},
    h("label", null, "Depth", depth), direction,
    toggle("Jobs", settings.jobs && !settings.columns, () => apply({jobs: !settings.jobs}),
      "Show jobs, or join datasets directly (condensed view)", settings.columns),
    toggle("Columns", settings.columns, () => apply({columns: !settings.columns}), "Column-level lineage: fields and their edges",
      settings.node.startsWith("namespace:") || settings.node.startsWith("element:")),
    toggle("Group", settings.group && !settings.columns, () => apply({group: !settings.group, open: []}),
      "Fold the jobs of each parent job (an Airflow DAG's tasks) into one node", settings.columns),
    h("label", null, "As of", asOf, h("span", {class: "muted"}, "UTC")),
    settings.asOf ? h("button", {type: "button", onclick: () => apply({asOf: ""})}, "Now") : null,
    h("label", null, "Compare with", compare),
    settings.compare ? h("button", {type: "button", onclick: () => apply({compare: ""})}, "No comparison") : null,
    filters(model, settings, apply));
  return {controls, outputs};
}

export async function render(main, _parts, params) {
  const settings = readSettings(params);
  const started = performance.now();
  fullWidth();
  if (!settings.node) {
    setTitle("Lineage");
    main.append(h("div", {class: "card", style: "margin:18px"}, empty("Pick a dataset or job (search above) to see its lineage.")));
    return null;
  }
  const model = new Model();
  await fetchInto(model, settings.node, settings, settings.direction, settings.depth);
  for (const id of settings.expand) {
    if (model.byId.has(id)) await fetchInto(model, id, settings, sideOf(model, id), settings.depth);
  }
  model.root ||= settings.node;
  let changes = null;
  if (settings.compare) {
    const before = new Model();
    try {
      await fetchInto(before, settings.node, {...settings, asOf: settings.compare}, settings.direction, settings.depth);
    } catch (error) {
      if (error.status !== 404) throw error; // the node did not exist yet then: everything is new
    }
    changes = diffModels(before, model);
  }
  const rootNode = model.byId.get(model.root);
  if (rootNode) rootNode.root = true;
  const namespaceView = settings.node.startsWith("namespace:") ? settings.node.slice(10) : null;
  setTitle(`Lineage of ${rootNode ? rootNode.name : namespaceView || settings.node}`);

  const side = h("aside", {class: "side", "aria-label": "Selected node", "aria-live": "polite"});
  const status = h("div", {class: "status", role: "status"});
  const canvas = h("div", {class: "canvas"});
  const layoutEl = h("div", {class: "lineage"}, h("div", {class: "lineage-main"}), side);
  main.append(layoutEl);
  const view = new GraphView(canvas, {
    onSelect: (id, {shift, field}) => selectNode(id, shift, field),
    onExpand: (id) => expand(id).catch(showError),
    onOpen: (id) => { const href = model.byId.has(id) ? pageHref(model.byId.get(id)) : nodeHref(id); if (href) location.assign(href); },
  });
  const apply = (change) => {
    Object.assign(settings, change);
    if (Object.keys(change).every((key) => ["hide", "group", "open", "tag"].includes(key))) { // the same graph: no request
      writeSettings(settings);
      redraw();
      return;
    }
    if ("columns" in change || "jobs" in change || "asOf" in change || "depth" in change) settings.expand = [];
    writeSettings(settings);
    clear(main);
    render(main, [], new URLSearchParams(location.search)).catch(showError);
  };
  const showError = (error) => { status.textContent = `Error: ${error.message}`; };
  const {controls, outputs} = toolbar(settings, apply, view, model);
  layoutEl.firstChild.append(
    h("div", {class: "toolbar"}, h("span", {class: "title"}, rootNode ? [badge(["job", "element"].includes(rootNode.kind) ? rootNode.kind : "dataset"), " ",
      link(pageHref(rootNode) || "#", rootNode.name)]
      : namespaceView ? [badge("namespace"), " ", link(namespaceHref(namespaceView), namespaceView)] : settings.node),
    settings.asOf ? h("span", {class: "badge state-RUNNING"}, `as of ${fmtTime(settings.asOf)}`) : null,
    settings.columns ? h("span", {class: "legend"}, h("span", null, h("i"), "direct"), h("span", null, h("i", {class: "indirect"}), "indirect")) : null,
    changes ? h("span", {class: "legend", role: "status", "aria-label": "Changes"}, `since ${fmtTime(settings.compare)}: `,
      h("span", {class: "added"}, `+${changes.added} added`), h("span", {class: "removed"}, `−${changes.removed} removed`),
      h("span", {class: "changed"}, `${changes.changed} changed`)) : null,
    outputs), controls, canvas);
  canvas.append(status, h("div", {class: "zoom"},
    h("button", {type: "button", "aria-label": "Zoom in", onclick: () => view.zoomBy(1.25)}, "+"),
    h("button", {type: "button", "aria-label": "Zoom out", onclick: () => view.zoomBy(0.8)}, "−"),
    h("button", {type: "button", "aria-label": "Zoom to the selected node", onclick: () => view.zoomTo(settings.select || model.root)}, "◎")));

  let field = null;
  let drawn = model; // what is on screen: the model filtered, and folded by parent job
  function redraw() {
    drawn = visible(model, new Set(settings.hide), settings.tag);
    if (settings.group && !settings.columns) drawn = grouped(drawn, new Set(settings.open));
    const ms = view.draw(drawn);
    const total = performance.now() - started;
    canvas.dataset.nodes = String(model.byId.size);
    canvas.dataset.drawnMs = total.toFixed(0);
    status.textContent = `${model.byId.size} nodes · ${model.edgeMap.size} edges · laid out in ${ms.toFixed(0)} ms` +
      (model.truncated ? ` · capped at ${LIMIT} nodes: expand the nodes marked +` : "");
    refreshSelection();
  }
  function refreshSelection() {
    const chosen = [settings.select, settings.path].filter((id) => id && drawn.byId.has(id));
    view.select(chosen, field);
    if (chosen.length === 2) {
      const {nodes, edges} = drawn.between(chosen[0], chosen[1]);
      view.highlight(nodes.size ? nodes : new Set(chosen), edges, {hideOthers: settings.only});
    } else if (chosen.length === 1 && settings.columns && field) {
      const edges = new Set(drawn.edges.filter((e) => (e.target === chosen[0] && e.targetField === field)
        || (e.source === chosen[0] && e.sourceField === field)).map((e) => `${e.source}>${e.target}`));
      view.highlight(null, edges);
    } else {
      view.highlight(null, null);
    }
    drawSide(chosen);
  }
  function selectNode(id, shift, chosenField) {
    if (shift && settings.select && settings.select !== id) settings.path = id;
    else { settings.select = id; settings.path = ""; settings.only = false; }
    field = chosenField || null;
    writeSettings(settings);
    refreshSelection();
  }
  async function expand(id) {
    status.textContent = "Expanding…";
    await fetchInto(model, id, settings, sideOf(model, id), Math.max(1, settings.depth));
    const node = model.byId.get(id);
    if (node) node.expandable = false;
    settings.expand = [...new Set([...settings.expand, id])];
    writeSettings(settings);
    redraw();
  }
  function drawSide(chosen) {
    clear(side);
    if (!chosen.length) {
      side.append(h("h2", null, "Lineage"), h("p", {class: "muted"},
        "Click a node to see it here; shift-click a second node to highlight the paths between the two. " +
        "Drag to pan, scroll or pinch to zoom; double-click a node to open its page."), kv([
        ["Nodes", String(model.byId.size)], ["Edges", String(model.edgeMap.size)],
        ["Capped", model.truncated ? "yes: expand the nodes marked +" : "no"]]));
      return;
    }
    const node = drawn.byId.get(chosen[0]);
    if (node.group) {
      side.append(h("div", {class: "crumbs"}, "jobs of ", node.namespace), h("h2", null, node.name),
        h("div", {class: "actions"}, link(nodeHref(node.parent) || "#", "Open the parent job", {class: "button"}),
          h("button", {type: "button", class: "primary", onclick: () => apply({open: [...settings.open, node.parent]})},
            `Show its ${node.members.length} jobs`)),
        h("ul", null, node.members.map((job) => h("li", null, link(nodeHref(job.id, job.namespace, job.name) || "#", job.name),
          " ", job.state ? badge(job.state) : null))));
      return;
    }
    const p = node.properties || {};
    const href = pageHref(node);
    side.append(h("div", {class: "crumbs"}, node.kind === "element" ? `element of type ${p.type}` : `${node.kind} in ${node.namespace}`),
      h("h2", null, node.name),
      h("div", {class: "actions"}, href ? link(href, "Open", {class: "button primary"}) : null,
        node.id !== model.root ? link(lineageHref(node.id, {depth: settings.depth, jobs: settings.jobs ? null : 0,
          columns: settings.columns ? 1 : null, asOf: settings.asOf}), "Centre here", {class: "button"}) : null,
        node.kind !== "element" ? link(`/impact?node=${encodeURIComponent(node.id)}`, "Impact", {class: "button"}) : null,
        node.expandable ? h("button", {type: "button", onclick: () => expand(node.id).catch(showError)}, "Expand") : null,
        settings.group && p.parentJob && settings.open.includes(p.parentJob)
          ? h("button", {type: "button", onclick: () => apply({open: settings.open.filter((id) => id !== p.parentJob)})},
            "Fold into its parent") : null),
      kv([["Latest run", node.state ? badge(node.state) : null], ["Source", p.sourceName],
        ["Lifecycle", p.lifecycleState ? `${p.lifecycleState}${p.lifecycleStateTime ? ` at ${fmtTime(p.lifecycleStateTime)}` : ""}` : null],
        ["Events", node.kind === "element" ? String(p.eventCount) : null],
        ["Created", p.createdAt && fmtTime(p.createdAt)], ["Updated", p.updatedAt && fmtTime(p.updatedAt)]]));
    if (field) {
      const fieldRow = (node.fields || []).find((f) => f.name === field);
      const inputs = model.edges.filter((e) => e.target === node.id && e.targetField === field);
      const outputs = model.edges.filter((e) => e.source === node.id && e.sourceField === field);
      side.append(h("h3", null, `Field ${field}`), kv([["Type", fieldRow && fieldRow.type]]),
        h("h3", null, "Computed from"), inputs.length ? h("ul", null, inputs.map((e) => h("li", null, e.label))) : empty("Nothing upstream."),
        h("h3", null, "Feeds"), outputs.length ? h("ul", null, outputs.map((e) => h("li", null, e.label))) : empty("Nothing downstream."));
    }
    if (chosen.length === 2) {
      const other = drawn.byId.get(chosen[1]);
      const {nodes} = drawn.between(chosen[0], chosen[1]);
      side.append(h("h3", null, "Path"), h("p", null, nodes.size ? `${nodes.size} nodes on the paths between this node and ${other.name}.`
        : `No directed path between this node and ${other.name}.`),
      h("div", {class: "actions"}, h("button", {type: "button", "aria-pressed": String(settings.only),
        onclick: () => { settings.only = !settings.only; writeSettings(settings); refreshSelection(); }}, "Only the path"),
      h("button", {type: "button", onclick: () => { settings.path = ""; settings.only = false; writeSettings(settings); refreshSelection(); }}, "Clear path")));
    }
    if (node.kind === "dataset" && !settings.columns) {
      const ends = h("div");
      side.append(h("h3", null, "Ultimate sources and destinations"), ends,
        h("button", {type: "button", onclick: () => loadEnds(node.id, ends).catch(showError)}, "Find them"));
    }
  }
  async function loadEnds(id, into) {
    const [sources, destinations] = await Promise.all(["ultimate-source", "ultimate-destination"].map((scope) =>
      get(paths.warehouse(scope), {nodeId: id, asOf: settings.asOf || null})));
    const list = (answer, edgeType, none) => {
      const far = answer.vertices.filter((v) => v.nodeID !== answer.nodeID || v.properties.distance === 0);
      return far.length ? h("ul", null, far.map((v) => h("li", null, link(lineageHref(v.nodeID), v.displayName),
        h("span", {class: "muted"}, ` · ${v.properties.namespace} · distance ${v.properties.distance ?? "?"}`)))) : empty(none);
    };
    clear(into).append(h("h3", null, "Sources"), list(sources, "ultimate-source", "None."),
      h("h3", null, "Destinations"), list(destinations, "ultimate-destination", "None (a cycle with no way out, or nothing downstream)."));
  }

  redraw();
  view.fit(model.root);
  performance.mark("headwater:graph-drawn"); // read by bench/ui.py
  if (settings.select && model.byId.has(settings.select)) view.zoomTo(settings.select);
  return null;
}
