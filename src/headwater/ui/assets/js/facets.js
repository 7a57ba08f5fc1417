// Facets shown for people: the well-known OpenLineage facets as readable text and tables, any
// other facet as its plain fields, and every one with its raw JSON one click away.
import {fmtTime, h, jobHref, kv, link, runHref, table} from "./dom.js";

const PLAIN = (value) => (value === null || value === undefined ? "—"
  : typeof value === "object" ? JSON.stringify(value) : String(value));

const READERS = {
  documentation: (f) => h("p", null, f.description || "—"),
  ownership: (f) => table(["Owner", "Type"], (f.owners || []).map((o) => [o.name, o.type || "—"])),
  dataSource: (f) => kv([["Name", f.name], ["URI", f.uri]]),
  lifecycleStateChange: (f) => kv([["State", f.lifecycleStateChange],
    ["Previous", f.previousIdentifier && `${f.previousIdentifier.namespace}:${f.previousIdentifier.name}`]]),
  tags: (f) => table(["Key", "Value", "Source"], (f.tags || []).map((t) => [t.key, t.value, t.source || "—"])),
  symlinks: (f) => table(["Namespace", "Name", "Type"], (f.identifiers || []).map((i) => [i.namespace, i.name, i.type])),
  storage: (f) => kv([["Storage layer", f.storageLayer], ["File format", f.fileFormat]]),
  version: (f) => kv([["Dataset version", f.datasetVersion]]),
  datasetType: (f) => kv([["Type", f.datasetType], ["Subtype", f.subType]]),
  dataQualityMetrics: (f) => h("div", null, kv([["Rows", f.rowCount], ["Bytes", f.bytes], ["Files", f.fileCount]]),
    f.columnMetrics ? table(["Column", "Nulls", "Distinct", "Min", "Max", "Sum"],
      Object.entries(f.columnMetrics).map(([col, m]) => [col, PLAIN(m.nullCount), PLAIN(m.distinctCount),
        PLAIN(m.min), PLAIN(m.max), PLAIN(m.sum)])) : null),
  dataQualityAssertions: (f) => table(["Assertion", "Column", "Result"], (f.assertions || []).map((a) => [
    a.assertion, a.column || "—", h("span", {class: `badge state-${a.success ? "COMPLETED" : "FAILED"}`},
      a.success ? "passed" : "failed")])),
  columnLineage: (f) => h("p", null, `${Object.keys(f.fields || {}).length} fields with column lineage`,
    (f.dataset || []).length ? `, ${f.dataset.length} dataset-level inputs` : ""),
  schema: (f) => h("p", null, `${(f.fields || []).length} fields (see Fields)`),
  sql: (f) => h("pre", null, f.query || ""),
  sourceCodeLocation: (f) => kv([["Type", f.type], ["URL", f.url], ["Repository", f.repoUrl], ["Path", f.path],
    ["Version", f.version], ["Branch", f.branch], ["Tag", f.tag]]),
  sourceCode: (f) => h("div", null, h("p", {class: "muted"}, f.language || ""), h("pre", null, f.sourceCode || "")),
  jobType: (f) => kv([["Processing", f.processingType], ["Integration", f.integration], ["Job type", f.jobType]]),
  errorMessage: (f) => h("div", null, h("p", null, h("strong", null, f.message || "")),
    f.stackTrace ? h("pre", null, f.stackTrace) : null, kv([["Language", f.programmingLanguage]])),
  nominalTime: (f) => kv([["Nominal start", fmtTime(f.nominalStartTime)], ["Nominal end", fmtTime(f.nominalEndTime)]]),
  parent: (f) => kv([
    ["Parent job", f.job && link(jobHref(f.job.namespace, f.job.name), `${f.job.namespace} / ${f.job.name}`)],
    ["Parent run", f.run && link(runHref(f.run.runId), f.run.runId, {class: "mono"})],
    ["Root job", f.root && f.root.job && link(jobHref(f.root.job.namespace, f.root.job.name), f.root.job.name)],
    ["Root run", f.root && f.root.run && link(runHref(f.root.run.runId), f.root.run.runId, {class: "mono"})]]),
  processing_engine: (f) => kv([["Engine", f.name], ["Version", f.version], ["Adapter", f.openlineageAdapterVersion]]),
  outputStatistics: (f) => kv([["Rows", f.rowCount], ["Bytes", f.size], ["Files", f.fileCount]]),
  inputStatistics: (f) => kv([["Rows", f.rowCount], ["Bytes", f.size], ["Files", f.fileCount]]),
};

function plainReader(facet) {
  const pairs = Object.entries(facet).filter(([key]) => !key.startsWith("_"))
    .map(([key, value]) => [key, PLAIN(value)]);
  return pairs.length ? kv(pairs) : h("p", {class: "muted"}, "(no fields)");
}

/** One facet: its name, a readable view and the raw JSON. */
export function facetView(name, value) {
  let body;
  try {
    body = value && value._deleted ? h("p", {class: "muted"}, "deleted")
      : (READERS[name] || plainReader)(value || {});
  } catch {
    body = plainReader(value || {});
  }
  return h("div", {class: "facet", dataset: {facet: name}}, h("h3", null, name), body,
    h("details", null, h("summary", null, "Raw JSON"), h("pre", null, JSON.stringify(value, null, 2))));
}

/** Every facet of an object, in a stable order (the ones people read most first). */
export function facetsView(facets, {skip = []} = {}) {
  const order = ["errorMessage", "documentation", "ownership", "dataQualityAssertions", "dataQualityMetrics",
    "lifecycleStateChange", "tags"];
  const names = Object.keys(facets || {}).filter((n) => !skip.includes(n))
    .sort((a, b) => ((order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99)) || a.localeCompare(b));
  if (!names.length) return h("p", {class: "empty"}, "No facets.");
  return h("div", null, names.map((name) => facetView(name, facets[name])));
}

/** Owners named by an ownership facet. */
export function owners(facets) {
  const facet = facets && facets.ownership;
  return facet && !facet._deleted ? (facet.owners || []).map((o) => o.name) : [];
}

