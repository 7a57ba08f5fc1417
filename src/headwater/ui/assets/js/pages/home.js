// Home: every namespace with its counts, the failed runs first when there are any, the latest runs;
// and, while producers' events wait for the pipeline, how many, drawn again once it publishes them
// (the pipeline's reports of its own passes wait for its next pass: those are not worth a note).
import {get} from "../api.js";
import {navigate} from "../app.js";
import {badge, empty, fmtDuration, fmtTime, h, jobHref, link, namespaceHref, runHref, setTitle, table} from "../dom.js";

function runsTable(runs) {
  return table(["Job", "State", "Started", "Duration", "Run"], runs.map((run) => [
    link(jobHref(run.job.namespace, run.job.name), run.job.name),
    badge(run.state),
    fmtTime(run.startedAt || run.createdAt),
    fmtDuration(run.durationMs),
    link(runHref(run.id), run.id.slice(0, 8), {class: "mono", title: run.id}),
  ]));
}

const WATCH_EVERY_MS = 2000;

function waiting(pipeline) {
  return pipeline.waitingEvents - pipeline.waitingReports;
}

function waitingNote(pipeline) {
  const count = `${waiting(pipeline).toLocaleString("en")}${pipeline.waitingMore ? "+" : ""}`;
  const events = waiting(pipeline) === 1 && !pipeline.waitingMore ? "event is" : "events are";
  const when = pipeline.publishedAt ? `It last published at ${fmtTime(pipeline.publishedAt)}.`
    : "It has not run on this store yet: start it with headwater up, or headwater pipeline run.";
  return h("section", {class: "card waiting-box", role: "status", "aria-labelledby": "waiting-h"},
    h("h2", {id: "waiting-h"}, `${count} ${events} waiting for the pipeline`),
    h("p", null, `They are stored; their lineage shows here once the pipeline publishes them. ${when}`));
}

/** While events wait, ask every few seconds how far the pipeline is, and draw the page again
 * once it has published more. Returns what stops it. */
function watch(pipeline) {
  let timer = null;
  let stopped = false;
  const check = async () => {
    try {
      const now = await get("/api/v1/pipeline");
      if (stopped) return;
      if (now.publishedThrough !== pipeline.publishedThrough || now.graphThrough !== pipeline.graphThrough) {
        navigate(location.pathname + location.search, {replace: true});
        return;
      }
    } catch (error) {
      console.warn(error); // a server restarting: try again
    }
    if (!stopped) timer = setTimeout(check, WATCH_EVERY_MS);
  };
  timer = setTimeout(check, WATCH_EVERY_MS);
  return {leave() { stopped = true; clearTimeout(timer); }};
}

export async function render(main) {
  setTitle("");
  const answer = await get("/api/v1/overview", {runs: 10});
  const namespaces = answer.namespaces;
  const pipeline = answer.pipeline;
  main.append(h("div", {class: "page-head"}, h("div", null, h("h1", null, "Lineage at a glance"),
    h("p", {class: "muted"}, `${namespaces.length} namespaces · search any dataset or job above, or start from a run below.`))));
  if (answer.failedRuns.length) {
    main.append(h("section", {class: "card error-box", "aria-labelledby": "failed-h"},
      h("h2", {id: "failed-h"}, "Failed runs"), runsTable(answer.failedRuns)));
  }
  if (waiting(pipeline)) main.append(waitingNote(pipeline));
  const rows = namespaces.map((ns) => [
    link(namespaceHref(ns.name), ns.name),
    String(ns.datasets), String(ns.jobs),
    `${ns.recentRuns} / ${ns.runs}`,
    fmtTime(ns.lastRunAt),
  ]);
  main.append(h("div", null,
    h("section", {class: "card", "aria-labelledby": "ns-h"}, h("h2", {id: "ns-h"}, "Namespaces"),
      namespaces.length ? table(["Namespace", "Datasets", "Jobs", "Runs (7 days / all)", "Last run"], rows)
        : empty(waiting(pipeline) ? "No lineage published yet."
          : "No lineage yet: send OpenLineage events to POST /api/v1/lineage, then let the pipeline run.")),
    h("section", {class: "card", "aria-labelledby": "runs-h"}, h("h2", {id: "runs-h"}, "Latest runs"),
      answer.latestRuns.length ? runsTable(answer.latestRuns) : empty("No runs yet."))));
  return waiting(pipeline) ? watch(pipeline) : null;
}
