// Every job of every namespace, latest update first, with its latest runs' states; filterable by
// the state of the latest run (Marquez' jobs list).
import {get} from "../api.js";
import {badge, empty, fmtDuration, fmtTime, h, jobHref, link, namespaceHref, runStates, setTitle, table} from "../dom.js";

const STATES = ["FAILED", "RUNNING", "COMPLETED", "ABORTED", "NEW"];
const PAGE = 100;

export async function render(main, _parts, params) {
  setTitle("Jobs");
  const state = STATES.includes(params.get("state")) ? params.get("state") : "";
  const offset = Math.max(0, Number.parseInt(params.get("offset") || "0", 10) || 0);
  const answer = await get("/api/v1/jobs", {lastRunStates: state, limit: PAGE, offset});
  const href = (next) => {
    const query = new URLSearchParams(next);
    return `/jobs${query.toString() ? `?${query}` : ""}`;
  };
  main.append(h("div", {class: "page-head"}, h("div", null, h("h1", null, "Jobs"),
    h("p", {class: "muted"}, `${answer.totalCount} ${answer.totalCount === 1 ? "job" : "jobs"}${state ? ` whose latest run is ${state}` : ""}, latest update first`))));
  main.append(h("nav", {class: "tabs", "aria-label": "Latest run state"},
    [["", "All"], ...STATES.map((s) => [s, s.toLowerCase()])].map(([value, label]) =>
      h("a", {href: href(value ? {state: value} : {}), "aria-current": value === state ? "page" : null}, label))));
  if (!answer.jobs.length) return main.append(empty("No jobs."));
  main.append(h("section", {class: "card"}, table(["Job", "Namespace", "Latest run", "Duration", "Latest runs", "Updated"],
    answer.jobs.map((j) => [
      link(jobHref(j.namespace, j.name), j.name), link(namespaceHref(j.namespace), j.namespace),
      j.latestRun ? badge(j.latestRun.state) : "—", fmtDuration(j.latestRun && j.latestRun.durationMs),
      runStates(j.latestRuns), fmtTime(j.updatedAt),
    ]), {"aria-label": "Jobs"}),
  h("div", {class: "pager"},
    offset > 0 ? link(href({...(state ? {state} : {}), offset: Math.max(0, offset - PAGE)}), "Newer", {class: "button"}) : null,
    offset + PAGE < answer.totalCount ? link(href({...(state ? {state} : {}), offset: offset + PAGE}), "Older", {class: "button"}) : null,
    h("span", {class: "muted"}, `${offset + 1}–${offset + answer.jobs.length} of ${answer.totalCount}`))));
}
