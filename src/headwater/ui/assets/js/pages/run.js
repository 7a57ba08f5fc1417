// A run: errors first, its state timeline from the event store (every event, newest first, paged),
// run facets, input and output facets, parent and child runs.
import {get, paths} from "../api.js";
import {badge, clear, datasetHref, empty, fmtDuration, fmtTime, h, jobHref, kv, link, runHref, setTitle, table}
  from "../dom.js";
import {facetView, facetsView} from "../facets.js";

function eventsTable(events) {
  return table(["Event", "Time", "Inputs", "Outputs", "Event id"], events.map((e) => [
    badge(e.event.eventType || "OTHER"), fmtTime(e.eventTime),
    String((e.event.inputs || []).length), String((e.event.outputs || []).length),
    h("details", null, h("summary", {class: "mono"}, e.eventId), h("pre", null, JSON.stringify(e.event, null, 2))),
  ]), {"aria-label": "Run events"});
}

/** Input and output facets of the run, the latest event's first, by dataset. */
function ioFacets(events) {
  const seen = new Map();
  for (const {event} of events) {
    for (const [side, key] of [["input", "inputFacets"], ["output", "outputFacets"]]) {
      for (const ds of event[`${side}s`] || []) {
        const id = `${side}:${ds.namespace}:${ds.name}`;
        if (!seen.has(id) && ds[key] && Object.keys(ds[key]).length) seen.set(id, {side, ds, facets: ds[key]});
      }
    }
  }
  if (!seen.size) return empty("No input or output facets in these events.");
  return h("div", null, [...seen.values()].map(({side, ds, facets}) => h("div", {class: "facet"},
    h("h3", null, `${side === "input" ? "Input" : "Output"}: `, link(datasetHref(ds.namespace, ds.name), ds.name)),
    Object.entries(facets).map(([name, value]) => facetView(name, value)))));
}

export async function render(main, [runId]) {
  setTitle(`Run ${runId}`);
  const [run, page, vertical] = await Promise.all([
    get(paths.run(runId)), get(paths.runEvents(runId), {pageSize: 25}),
    get(paths.warehouse("vertical"), {nodeId: `run:${runId}`}),
  ]);
  const vertex = new Map(vertical.vertices.map((v) => [v.nodeID, v]));
  const me = `run:${runId}`;
  const parentIds = vertical.edges.filter((e) => e.edgeType === "parent" && e.destinationNodeID === me).map((e) => e.sourceNodeID);
  const childIds = vertical.edges.filter((e) => e.edgeType === "parent" && e.sourceNodeID === me).map((e) => e.destinationNodeID);
  const jobEdge = vertical.edges.find((e) => e.edgeType === "ran" && e.destinationNodeID === me);
  const job = jobEdge && vertex.get(jobEdge.sourceNodeID);
  const runList = (ids, none) => {
    const runs = ids.map((id) => vertex.get(id)).filter((v) => v && v.nodeType === "run");
    if (!runs.length) return empty(none);
    return table(["Run", "Job", "State", "Started"], runs.map((v) => {
      const jobVertex = vertex.get(v.properties.job);
      return [link(runHref(v.displayName), v.displayName.slice(0, 8), {class: "mono", title: v.displayName}),
        jobVertex ? link(jobHref(jobVertex.properties.namespace, jobVertex.properties.name), jobVertex.displayName) : v.properties.job,
        badge(v.properties.state), fmtTime(v.properties.startedAt)];
    }));
  };

  const jobLink = () => (job ? link(jobHref(job.properties.namespace, job.properties.name), job.displayName) : null);
  main.append(h("div", {class: "page-head"}, h("div", null,
    h("div", {class: "crumbs"}, "Run of ", jobLink() || "a job"),
    h("h1", {class: "mono"}, runId), badge(run.state))));
  const error = run.facets && run.facets.errorMessage;
  if (error) {
    main.append(h("section", {class: "card error-box", role: "alert", "aria-labelledby": "error-h"},
      h("h2", {id: "error-h"}, `Error${error.programmingLanguage ? ` (${error.programmingLanguage})` : ""}`),
      h("p", null, h("strong", null, error.message || "")),
      error.stackTrace ? h("details", {open: true}, h("summary", null, "Stack trace"), h("pre", null, error.stackTrace)) : null));
  }
  main.append(h("div", {class: "grid"},
    h("section", {class: "card", "aria-labelledby": "about-h"}, h("h2", {id: "about-h"}, "About"),
      kv([["Job", jobLink()], ["State", badge(run.state)], ["Started", fmtTime(run.startedAt)],
        ["Ended", fmtTime(run.endedAt)], ["Duration", fmtDuration(run.durationMs)],
        ["Nominal start", run.nominalStartTime && fmtTime(run.nominalStartTime)],
        ["Job version", run.jobVersion && h("span", {class: "mono"}, run.jobVersion.version)]])),
    h("section", {class: "card", "aria-labelledby": "family-h"}, h("h2", {id: "family-h"}, "Parent and child runs"),
      h("h3", null, "Parent"), runList(parentIds, "No parent run."),
      h("h3", null, `Children (${childIds.length})`), runList(childIds, "No child runs."))));

  const timeline = h("div");
  const pager = h("div", {class: "pager"});
  let shown = page.events;
  const drawEvents = (answer) => {
    clear(timeline).append(answer.events.length ? eventsTable(answer.events) : empty("No events."));
    clear(pager);
    if (answer.nextPagingState) {
      pager.append(h("button", {type: "button", onclick: async () => {
        const next = await get(paths.runEvents(runId), {pageSize: 25, pagingState: answer.nextPagingState});
        shown = shown.concat(next.events);
        drawEvents({...next, events: shown});
      }}, "Older events"));
    }
  };
  drawEvents(page);
  main.append(h("section", {class: "card", "aria-labelledby": "events-h"},
    h("h2", {id: "events-h"}, `Events (${page.eventCount ?? page.events.length})`),
    h("p", {class: "muted"}, "Every event of the run as the event store keeps it, newest first."), timeline, pager));
  main.append(h("section", {class: "card", "aria-labelledby": "facets-h"}, h("h2", {id: "facets-h"}, "Run facets"),
    facetsView(run.facets, {skip: ["errorMessage"]})));
  main.append(h("section", {class: "card", "aria-labelledby": "io-h"}, h("h2", {id: "io-h"}, "Input and output facets"),
    ioFacets(page.events)));
}
