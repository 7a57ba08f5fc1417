// Home: every namespace with its counts, the failed runs first when there are any, the latest runs.
import {get} from "../api.js";
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

export async function render(main) {
  setTitle("");
  const answer = await get("/api/v1/overview", {runs: 10});
  const namespaces = answer.namespaces;
  main.append(h("div", {class: "page-head"}, h("div", null, h("h1", null, "Lineage at a glance"),
    h("p", {class: "muted"}, `${namespaces.length} namespaces · search any dataset or job above, or start from a run below.`))));
  if (answer.failedRuns.length) {
    main.append(h("section", {class: "card error-box", "aria-labelledby": "failed-h"},
      h("h2", {id: "failed-h"}, "Failed runs"), runsTable(answer.failedRuns)));
  }
  const rows = namespaces.map((ns) => [
    link(namespaceHref(ns.name), ns.name),
    String(ns.datasets), String(ns.jobs),
    `${ns.recentRuns} / ${ns.runs}`,
    fmtTime(ns.lastRunAt),
  ]);
  main.append(h("div", null,
    h("section", {class: "card", "aria-labelledby": "ns-h"}, h("h2", {id: "ns-h"}, "Namespaces"),
      namespaces.length ? table(["Namespace", "Datasets", "Jobs", "Runs (7 days / all)", "Last run"], rows)
        : empty("No lineage yet: send OpenLineage events to POST /api/v1/lineage, then let the pipeline run.")),
    h("section", {class: "card", "aria-labelledby": "runs-h"}, h("h2", {id: "runs-h"}, "Latest runs"),
      answer.latestRuns.length ? runsTable(answer.latestRuns) : empty("No runs yet."))));
}
