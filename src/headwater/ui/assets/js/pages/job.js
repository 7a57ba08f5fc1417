// A job: its latest runs (with a run-duration chart), versions with diffs, facets, parent and child jobs.
import {get, paths} from "../api.js";
import {diffView} from "../diff.js";
import {badge, datasetHref, empty, fmtDuration, fmtTime, h, jobHref, kv, link, lineageHref, namespaceHref, runHref, s,
  setTitle, table, tags} from "../dom.js";
import {facetsView} from "../facets.js";

/** Bars of run durations over time, oldest left, coloured by state; each bar links to its run. */
function durationChart(runs) {
  const shown = runs.filter((r) => r.durationMs !== null).slice(0, 60).reverse();
  if (shown.length < 2) return null;
  const width = 640, height = 120, pad = 4;
  const longest = Math.max(...shown.map((r) => r.durationMs), 1);
  const step = Math.min(28, (width - pad * 2) / shown.length);
  const colour = {COMPLETED: "var(--ok)", FAILED: "var(--fail)", ABORTED: "var(--abort)", RUNNING: "var(--run)"};
  return h("figure", {style: "margin:0"}, s("svg", {viewBox: `0 0 ${width} ${height}`, role: "img", class: "chart",
    "aria-label": `Durations of the last ${shown.length} runs; longest ${fmtDuration(longest)}`,
    style: "width:100%;max-width:640px;height:auto"}, shown.map((run, i) => {
    const barHeight = Math.max(2, (run.durationMs / longest) * (height - 20));
    return s("a", {href: runHref(run.id)}, s("rect", {x: pad + i * step + 1, y: height - barHeight - 14,
      width: Math.max(2, step - 2), height: barHeight, fill: colour[run.state] || "var(--new)", rx: 2},
    s("title", null, `${fmtTime(run.startedAt)} · ${run.state} · ${fmtDuration(run.durationMs)}`)));
  }), s("text", {x: pad, y: height - 2, class: "sub", fill: "currentColor", "font-size": 10}, fmtTime(shown[0].startedAt)),
  s("text", {x: width - pad, y: height - 2, "text-anchor": "end", fill: "currentColor", "font-size": 10},
    fmtTime(shown[shown.length - 1].startedAt))),
  h("figcaption", {class: "muted"}, `Run durations (longest ${fmtDuration(longest)})`));
}

const refLines = (refs) => (refs || []).map((r) => `${r.namespace} / ${r.name}`);
function versionLines(version) {
  const sql = version.facets && version.facets.sql ? String(version.facets.sql.query || "").split("\n") : [];
  return [`location: ${version.location || "—"}`, ...refLines(version.inputs).map((x) => `input: ${x}`),
    ...refLines(version.outputs).map((x) => `output: ${x}`), ...(sql.length ? ["sql:", ...sql] : [])];
}

function versionsView(versions) {
  if (!versions.length) return empty("No versions yet.");
  return h("div", null, versions.map((version, i) => {
    const older = versions[i + 1];
    const change = older ? diffView(versionLines(older), versionLines(version)) : null;
    return h("div", {class: "facet"},
      h("h3", null, fmtTime(version.createdAt), " ", h("span", {class: "muted mono"}, version.version.slice(0, 12))),
      kv([["Runs", String(version.runCount)], ["Location", version.location],
        ["Latest run", version.latestRun && [link(runHref(version.latestRun.id), version.latestRun.id, {class: "mono"}), " ",
          badge(version.latestRun.state)]]]),
      older ? (change ? h("details", {open: i === 0}, h("summary", null, "Changes from the previous version"), change)
        : h("p", {class: "muted"}, "Same code, SQL, inputs and outputs as the previous version."))
        : h("details", null, h("summary", null, "This version"), h("pre", null, versionLines(version).join("\n"))));
  }));
}

function refList(refs, none) {
  if (!refs.length) return empty(none);
  return h("ul", null, refs.map((r) => h("li", null, link(datasetHref(r.namespace, r.name), r.name),
    h("span", {class: "muted"}, ` ${r.namespace}`))));
}

export async function render(main, [namespace, name]) {
  setTitle(name);
  const nodeId = `job:${namespace}:${name}`;
  const base = paths.job(namespace, name);
  const [job, runs, versions, vertical] = await Promise.all([
    get(base), get(`${base}/runs`, {limit: 50}), get(`${base}/versions`, {limit: 20}),
    get(paths.warehouse("vertical"), {nodeId}),
  ]);
  const vertex = new Map(vertical.vertices.map((v) => [v.nodeID, v]));
  const related = (pick) => vertical.edges.filter((e) => e.edgeType === "parent").map(pick)
    .map((id) => vertex.get(id)).filter((v) => v && v.nodeType === "job" && v.nodeID !== nodeId);
  const parents = related((e) => (e.destinationNodeID === nodeId ? e.sourceNodeID : null));
  const children = related((e) => (e.sourceNodeID === nodeId ? e.destinationNodeID : null));
  const jobLinks = (list, none) => (list.length ? h("ul", null, list.map((v) => h("li", null,
    link(jobHref(v.properties.namespace, v.properties.name), v.displayName), " ",
    v.properties.latestRunState ? badge(v.properties.latestRunState) : null))) : empty(none));

  main.append(h("div", {class: "page-head"},
    h("div", null, h("div", {class: "crumbs"}, "Job in ", link(namespaceHref(namespace), namespace)),
      h("h1", null, name), job.description ? h("p", null, job.description) : null, tags(job.tags)),
    h("div", {class: "actions"}, link(lineageHref(nodeId), "Lineage", {class: "button primary"}),
      link(`/impact?node=${encodeURIComponent(nodeId)}`, "Impact", {class: "button"}))));
  const latest = job.latestRun;
  if (latest && latest.state === "FAILED" && latest.facets && latest.facets.errorMessage) {
    main.append(h("section", {class: "card error-box", role: "alert"}, h("h2", null, "The latest run failed"),
      h("p", null, latest.facets.errorMessage.message || ""), link(runHref(latest.id), "Open the run")));
  }
  main.append(h("div", {class: "grid"},
    h("section", {class: "card", "aria-labelledby": "about-h"}, h("h2", {id: "about-h"}, "About"),
      kv([["Namespace", link(namespaceHref(namespace), namespace)], ["Type", job.type],
        ["Latest run", latest ? [badge(latest.state), " ", link(runHref(latest.id), fmtTime(latest.startedAt || latest.createdAt))] : null],
        ["Location", job.location], ["Created", fmtTime(job.createdAt)], ["Updated", fmtTime(job.updatedAt)]])),
    h("section", {class: "card", "aria-labelledby": "io-h"}, h("h2", {id: "io-h"}, "Inputs and outputs"),
      h("h3", null, "Reads"), refList(job.inputs, "No inputs."), h("h3", null, "Writes"), refList(job.outputs, "No outputs.")),
    h("section", {class: "card", "aria-labelledby": "family-h"}, h("h2", {id: "family-h"}, "Parent and child jobs"),
      h("h3", null, "Parent"), jobLinks(parents, "No parent job."), h("h3", null, "Children"), jobLinks(children, "No child jobs."))));
  main.append(h("section", {class: "card", "aria-labelledby": "runs-h"}, h("h2", {id: "runs-h"}, `Runs (${runs.totalCount})`),
    durationChart(runs.runs),
    runs.runs.length ? table(["Run", "State", "Started", "Ended", "Duration"], runs.runs.map((r) => [
      link(runHref(r.id), r.id, {class: "mono"}), badge(r.state), fmtTime(r.startedAt), fmtTime(r.endedAt),
      fmtDuration(r.durationMs)]), {"aria-label": "Runs"}) : empty("No runs yet.")));
  main.append(h("section", {class: "card", "aria-labelledby": "versions-h"},
    h("h2", {id: "versions-h"}, `Versions (${versions.totalCount})`), versionsView(versions.versions)));
  main.append(h("section", {class: "card", "aria-labelledby": "facets-h"}, h("h2", {id: "facets-h"}, "Facets"),
    facetsView(job.facets)));
}
