// Search: every dataset and job whose name contains the text, filterable by kind and namespace.
import {get} from "../api.js";
import {datasetHref, empty, fmtTime, h, jobHref, link, lineageHref, namespaceHref, setTitle, table} from "../dom.js";

export async function render(main, _parts, params) {
  const q = params.get("q") || "";
  const filter = params.get("filter") || "";
  setTitle(`Search: ${q}`);
  const box = document.querySelector("form.search input");
  if (box && !box.value) box.value = q;
  main.append(h("div", {class: "page-head"}, h("h1", null, q ? `Results for “${q}”` : "Search")));
  if (!q) {
    main.append(empty("Type a part of a dataset or job name in the search box."));
    return;
  }
  const answer = await get("/api/v1/search", {q, filter, limit: 500, namespace: params.get("namespace")});
  const kinds = [["", "All"], ["DATASET", "Datasets"], ["JOB", "Jobs"]];
  main.append(h("nav", {class: "tabs", "aria-label": "Kind"}, kinds.map(([value, label]) => {
    const next = new URLSearchParams(params);
    if (value) next.set("filter", value); else next.delete("filter");
    return h("a", {href: `/search?${next}`, "aria-current": value === filter ? "page" : null}, label);
  })));
  const total = answer.totalCount >= 1000 ? "1000+" : answer.totalCount;
  main.append(h("p", {class: "muted"}, `${total} match${answer.totalCount === 1 ? "" : "es"}`));
  if (!answer.results.length) return main.append(empty("Nothing matches."));
  main.append(h("section", {class: "card"}, table(["Name", "Kind", "Namespace", "Updated", ""],
    answer.results.map((r) => [
      link(r.type === "DATASET" ? datasetHref(r.namespace, r.name) : jobHref(r.namespace, r.name), r.name),
      r.type === "DATASET" ? "dataset" : "job",
      link(namespaceHref(r.namespace), r.namespace),
      fmtTime(r.updatedAt),
      link(lineageHref(r.nodeId), "Lineage"),
    ]), {"aria-label": "Search results"})));
}
