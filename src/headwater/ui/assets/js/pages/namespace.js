// A namespace: its datasets and its jobs (with each job's latest run).
import {get} from "../api.js";
import {badge, datasetHref, empty, fmtTime, h, jobHref, lineageHref, link, runStates, setTitle, table} from "../dom.js";

export async function render(main, [namespace]) {
  setTitle(namespace);
  const enc = encodeURIComponent(namespace);
  const [datasets, jobs] = await Promise.all([
    get(`/api/v1/namespaces/${enc}/datasets`, {limit: 500}),
    get(`/api/v1/namespaces/${enc}/jobs`, {limit: 500}),
  ]);
  main.append(h("div", {class: "page-head"}, h("div", null, h("div", {class: "crumbs"}, "Namespace"),
    h("h1", null, namespace), h("p", {class: "muted"}, `${datasets.totalCount} datasets · ${jobs.totalCount} jobs`)),
  h("div", {class: "actions"}, link(lineageHref(`namespace:${namespace}`, {depth: 1}), "Lineage of the whole namespace",
    {class: "button primary"}))));
  main.append(h("div", {class: "grid"},
    h("section", {class: "card"}, h("h2", null, "Datasets"), datasets.datasets.length
      ? table(["Name", "Fields", "Updated"], datasets.datasets.map((d) => [
        link(datasetHref(d.namespace, d.name), d.name), String(d.fields.length), fmtTime(d.updatedAt)]))
      : empty("No datasets.")),
    h("section", {class: "card"}, h("h2", null, "Jobs"), jobs.jobs.length
      ? table(["Name", "Latest run", "Runs", "Updated"], jobs.jobs.map((j) => [
        link(jobHref(j.namespace, j.name), j.name), j.latestRun ? badge(j.latestRun.state) : "—",
        runStates(j.latestRuns), fmtTime(j.updatedAt)]))
      : empty("No jobs."))));
}
