// A dataset: its fields, facets, versions (with schema diffs), the jobs that write and read it.
import {get, paths} from "../api.js";
import {diffView, schemaLines} from "../diff.js";
import {badge, datasetHref, empty, fmtTime, h, jobHref, kv, link, lineageHref, namespaceHref, runHref, setTitle, table,
  tags} from "../dom.js";
import {facetsView, owners} from "../facets.js";
import {verticalView} from "../vertical.js";

/** Replace `button` with the dataset's ultimate sources and destinations. */
async function showEnds(nodeId, button) {
  const [sources, destinations] = await Promise.all(["ultimate-source", "ultimate-destination"].map((scope) =>
    get(paths.warehouse(scope), {nodeId})));
  const list = (answer, none) => {
    const ends = answer.vertices.filter((v) => v.nodeType === "dataset");
    return ends.length ? h("ul", null, ends.map((v) => h("li", null,
      link(datasetHref(v.properties.namespace, v.properties.name), v.displayName),
      h("span", {class: "muted"}, ` ${v.properties.namespace} · distance ${v.properties.distance ?? 0}`)))) : empty(none);
  };
  button.replaceWith(h("div", {"aria-label": "Ultimate sources and destinations"},
    h("h3", null, "Ultimate sources"), list(sources, "None."),
    h("h3", null, "Ultimate destinations"), list(destinations, "None: nothing downstream, or a cycle with no way out.")));
}

function neighbours(lineage, nodeId) {
  const vertex = new Map(lineage.vertices.map((v) => [v.nodeID, v]));
  const writers = [], readers = [];
  for (const edge of lineage.edges) {
    if (edge.edgeType === "output" && edge.destinationNodeID === nodeId) writers.push(vertex.get(edge.sourceNodeID));
    if (edge.edgeType === "input" && edge.sourceNodeID === nodeId) readers.push(vertex.get(edge.destinationNodeID));
  }
  return {writers: writers.filter(Boolean), readers: readers.filter(Boolean)};
}

function jobList(jobs, none) {
  if (!jobs.length) return empty(none);
  return h("ul", null, jobs.map((v) => h("li", null,
    link(jobHref(v.properties.namespace, v.properties.name), v.displayName), " ",
    v.properties.latestRunState ? badge(v.properties.latestRunState) : null,
    h("span", {class: "muted"}, ` ${v.properties.namespace}`))));
}

function versionsView(versions) {
  if (!versions.length) return empty("No versions: no run has written this dataset.");
  return h("div", null, versions.map((version, i) => {
    const older = versions[i + 1];
    const change = older ? diffView(schemaLines(older.fields), schemaLines(version.fields)) : null;
    const run = version.createdByRun;
    return h("div", {class: "facet"},
      h("h3", null, fmtTime(version.createdAt), " ", h("span", {class: "muted mono"}, version.version.slice(0, 12))),
      kv([["Written by run", run ? [link(runHref(run.id), run.id, {class: "mono"}), " ", badge(run.state)] : "—"],
        ["Job", run && run.jobVersion ? link(jobHref(run.jobVersion.namespace, run.jobVersion.name), run.jobVersion.name) : null],
        ["Dataset version", version.datasetVersion], ["Lifecycle", version.lifecycleState],
        ["Fields", String(version.fields.length)]]),
      older ? (change ? h("details", {open: i === 0}, h("summary", null, "Schema change from the previous version"), change)
        : h("p", {class: "muted"}, "Same schema as the previous version.")) : h("p", {class: "muted"}, "First version."));
  }));
}

export async function render(main, [namespace, name]) {
  setTitle(name);
  const nodeId = `dataset:${namespace}:${name}`;
  const [dataset, versions, lineage, vertical] = await Promise.all([
    get(paths.dataset(namespace, name)),
    get(`${paths.dataset(namespace, name)}/versions`, {limit: 20}),
    get(paths.warehouse("end-to-end"), {nodeId, depth: 1, limit: 200}),
    get(paths.warehouse("vertical"), {nodeId}),
  ]);
  const {writers, readers} = neighbours(lineage, lineage.nodeID);
  const who = owners(dataset.facets);
  main.append(h("div", {class: "page-head"},
    h("div", null, h("div", {class: "crumbs"}, "Dataset in ", link(namespaceHref(namespace), namespace)),
      h("h1", null, name), dataset.description ? h("p", null, dataset.description) : null, tags(dataset.tags)),
    h("div", {class: "actions"},
      link(lineageHref(nodeId), "Lineage", {class: "button primary"}),
      link(lineageHref(nodeId, {columns: 1}), "Column lineage", {class: "button"}),
      link(`/impact?node=${encodeURIComponent(nodeId)}`, "Impact", {class: "button"}))));
  main.append(h("div", {class: "grid"},
    h("section", {class: "card", "aria-labelledby": "about-h"}, h("h2", {id: "about-h"}, "About"),
      kv([["Namespace", link(namespaceHref(namespace), namespace)], ["Source", dataset.sourceName], ["Type", dataset.type],
        ["Owners", who.length ? who.join(", ") : null], ["Lifecycle", dataset.lastLifecycleState],
        ["Created", fmtTime(dataset.createdAt)], ["Updated", fmtTime(dataset.updatedAt)],
        ["Current version", dataset.currentVersion && h("span", {class: "mono"}, dataset.currentVersion)]])),
    h("section", {class: "card", "aria-labelledby": "io-h"}, h("h2", {id: "io-h"}, "Jobs"),
      h("h3", null, "Written by"), jobList(writers, "No job writes it."),
      h("h3", null, "Read by"), jobList(readers, "No job reads it.")),
    h("section", {class: "card", "aria-labelledby": "vertical-h"}, h("h2", {id: "vertical-h"}, "Around it"),
      verticalView(vertical), h("p", null, h("button", {type: "button", onclick: (event) => showEnds(nodeId, event.target)},
        "Ultimate sources and destinations")))));
  main.append(h("section", {class: "card", "aria-labelledby": "fields-h"},
    h("h2", {id: "fields-h"}, `Fields (${dataset.fields.length})`),
    dataset.fields.length ? table(["Name", "Type", "Description", "Tags"], dataset.fields.map((f) => [
      h("span", {class: "mono"}, f.name), f.type || "—", f.description || "", tags(f.tags)]), {"aria-label": "Fields"})
      : empty("No schema known.")));
  main.append(h("section", {class: "card", "aria-labelledby": "facets-h"}, h("h2", {id: "facets-h"}, "Facets"),
    facetsView(dataset.facets)));
  main.append(h("section", {class: "card", "aria-labelledby": "versions-h"},
    h("h2", {id: "versions-h"}, `Versions (${versions.totalCount})`), versionsView(versions.versions)));
}
