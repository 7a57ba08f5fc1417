// Events: the latest ingested events of every kind (filterable by namespace, job, event type and
// time, paged, one click to the run) and the Kafka dead letters with their reasons.
import {get} from "../api.js";
import {stillDrawing, updateQuery} from "../app.js";
import {apiTime, badge, clear, datasetHref, empty, fmtTime, h, inputTime, jobHref, link, runHref, setTitle} from "../dom.js";

const PAGE = 25;
const TYPES = ["START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER"];
const DEAD = "dead-letters";

/** What kind of OpenLineage (or generic) event a payload is. */
function kindOf(event) {
  if (event.run) return "run";
  if (event.dataset) return "dataset";
  if (event.job) return "job";
  return "generic";
}

/** "https://github.com/OpenLineage/OpenLineage/tree/1.9.1/integration/spark" → "spark 1.9.1". */
function producerText(producer) {
  if (!producer) return "—";
  const github = /github\.com\/[^/]+\/([^/]+)(?:\/tree\/([^/]+)(?:\/(?:.*\/)?([^/]+))?)?\/?$/.exec(producer);
  if (github) return [github[3] || github[1], github[2]].filter(Boolean).join(" ");
  const parts = producer.replace(/^[a-z]+:\/\//i, "").replace(/\/+$/, "").split("/");
  return parts.slice(-2).join("/");
}

let rawIds = 0;

/** A row and, under it, a full-width row with the raw text, shown and hidden by a button in the row. */
function withRaw(attrs, cells, [column, label, text], columns) {
  const id = `raw-${++rawIds}`;
  const extra = h("tr", {class: "raw-row", id, hidden: true}, h("td", {colspan: columns}, h("pre", null, text)));
  const button = h("button", {type: "button", class: "raw-toggle", "aria-expanded": "false", "aria-controls": id,
    onclick: () => {
      extra.hidden = !extra.hidden;
      button.setAttribute("aria-expanded", String(!extra.hidden));
    }}, label);
  return h("tbody", null, h("tr", attrs, cells, cell(column, button)), extra);
}

/** One side of an event's datasets, inline: the first two as links, then "+n". */
function datasetLinks(side, list) {
  if (!list || !list.length) return null;
  const shown = list.slice(0, 2).map((ds, i) => [i ? ", " : "",
    link(datasetHref(ds.namespace, ds.name), ds.name, {title: `${ds.namespace} · ${ds.name}`})]);
  const more = list.length > 2 ? h("span", {class: "muted", title: list.slice(2).map((ds) => ds.name).join("\n")},
    ` +${list.length - 2}`) : null;
  return h("div", {class: "io"}, h("span", {class: "io-side"}, side === "inputs" ? "in" : "out"),
    h("span", null, shown, more));
}

function datasetsCell(event) {
  const sides = [datasetLinks("inputs", event.inputs), datasetLinks("outputs", event.outputs)].filter(Boolean);
  return sides.length ? h("div", null, sides) : h("span", {class: "muted"}, "—");
}

function cell(label, ...content) {
  return h("td", {"data-label": label}, content);
}

/** A cell whose long names may break anywhere, so the table fits the page. */
function wrapCell(label, ...content) {
  return h("td", {"data-label": label, class: "wrap"}, content);
}

/** "2025-03-11T06:07:00Z" → "2025-03-11 06:07:00" (the column says UTC). */
function shortTime(value) {
  return fmtTime(value).replace(/ UTC$/, "");
}

function eventRow(event) {
  const kind = kindOf(event);
  const job = event.job;
  const runId = event.run && event.run.runId;
  const namespace = job ? job.namespace : event.dataset ? event.dataset.namespace : null;
  const what = kind === "run" ? badge(event.eventType || "OTHER")
    : h("span", {class: "tag", title: `${kind} event`}, kind === "generic" ? event.type || "generic" : kind);
  const subject = job ? link(jobHref(job.namespace, job.name), job.name)
    : event.dataset ? link(datasetHref(event.dataset.namespace, event.dataset.name), event.dataset.name)
      : event.description || "—";
  const failed = event.eventType === "FAIL" || event.eventType === "ABORT";
  return withRaw({class: failed ? "failed" : null}, [
    cell("Type", what),
    cell("Event time (UTC)", h("span", {class: "nowrap"}, shortTime(event.eventTime))),
    cell("Job or dataset", subject),
    cell("Run", runId ? link(runHref(runId), `${runId.slice(0, 8)}…`, {class: "mono nowrap", title: runId,
      "aria-label": `Run ${runId}`}) : h("span", {class: "muted"}, "—")),
    cell("Namespace", namespace ? link(`/events?namespace=${encodeURIComponent(namespace)}`, namespace,
      {title: `Only events of ${namespace}`}) : "—"),
    wrapCell("Inputs and outputs", datasetsCell(event)),
    wrapCell("Producer", h("span", {class: "muted small", title: event.producer || ""}, producerText(event.producer))),
  ], ["Raw", "JSON", JSON.stringify(event, null, 2)], 8);
}

function eventsTable(events) {
  const headers = ["Type", "Event time (UTC)", "Job or dataset", "Run", "Namespace", "Inputs and outputs", "Producer", "Raw"];
  return h("div", {class: "table-wrap"}, h("table", {class: "stack", "aria-label": "Events"},
    h("thead", null, h("tr", null, headers.map((name) => h("th", {scope: "col"}, name)))),
    events.map(eventRow)));
}

function pager(total, offset, shown, go) {
  const first = total ? offset + 1 : 0;
  return h("nav", {class: "pager", "aria-label": "Pages"},
    h("button", {type: "button", disabled: offset <= 0, onclick: () => go(Math.max(0, offset - PAGE))}, "← Newer"),
    h("span", {class: "muted", role: "status"}, `${first}–${offset + shown} of ${total}`),
    h("button", {type: "button", disabled: offset + shown >= total, onclick: () => go(offset + PAGE)}, "Older →"));
}

/** The view's settings in the URL (no new history entry); none: the bare path. */
function keepInUrl(query) {
  if (String(query)) updateQuery(query);
  else history.replaceState(null, "", location.pathname);
}

function problem(error) {
  return h("div", {class: "card error-box", role: "alert"}, h("h2", null, "The server refused this view"),
    h("p", null, error.message || String(error)));
}

// -- the Events tab -------------------------------------------------------------------------------
function filtersForm(state, namespaces, apply) {
  const options = [h("option", {value: ""}, "All namespaces"),
    ...namespaces.map((ns) => h("option", {value: ns, selected: ns === state.namespace}, ns))];
  if (state.namespace && !namespaces.includes(state.namespace)) {
    options.push(h("option", {value: state.namespace, selected: true}, state.namespace));
  }
  const jobs = h("datalist", {id: "event-jobs"});
  const form = h("form", {class: "event-filters", role: "search", "aria-label": "Filter events"},
    h("label", null, h("span", null, "Namespace"), h("select", {name: "namespace"}, options)),
    h("label", null, h("span", null, "Job name"), h("input", {type: "text", name: "job", value: state.job,
      list: "event-jobs", placeholder: "the exact name", autocomplete: "off"})), jobs,
    h("fieldset", {class: "types"}, h("legend", null, "Event type"), TYPES.map((type) =>
      h("label", {class: "check"}, h("input", {type: "checkbox", name: "eventType", value: type,
        checked: state.types.includes(type)}), badge(type)))),
    h("label", null, h("span", null, "After (UTC)"), h("input", {type: "datetime-local", name: "after",
      value: inputTime(state.after)})),
    h("label", null, h("span", null, "Before (UTC)"), h("input", {type: "datetime-local", name: "before",
      value: inputTime(state.before)})),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "primary"}, "Apply"),
      h("button", {type: "reset"}, "Clear")));
  const read = () => ({
    namespace: form.elements.namespace.value,
    job: form.elements.job.value.trim(),
    types: [...form.querySelectorAll("input[name=eventType]:checked")].map((box) => box.value),
    after: form.elements.after.value,
    before: form.elements.before.value,
  });
  form.addEventListener("submit", (event) => { event.preventDefault(); apply(read()); });
  form.addEventListener("change", (event) => { if (event.target.name !== "job") apply(read()); });
  form.addEventListener("reset", (event) => {
    event.preventDefault();
    form.elements.namespace.value = "";
    form.elements.job.value = "";
    for (const box of form.querySelectorAll("input[type=checkbox]")) box.checked = false;
    form.elements.after.value = form.elements.before.value = "";
    apply(read());
  });
  const active = h("span", {class: "muted"});
  const count = (s) => {
    const n = [s.namespace, s.job, s.after, s.before].filter(Boolean).length + (s.types.length ? 1 : 0);
    active.textContent = n ? ` · ${n} active` : "";
  };
  count(state);
  form.addEventListener("change", () => count(read()));
  // On a phone the filters fold away under their summary; on a wide screen they are always open.
  const box = h("details", {class: "card event-filter-box", open: !matchMedia("(max-width: 760px)").matches},
    h("summary", null, "Filters", active), form);
  return {form: box, jobs};
}

async function eventsTab(main, params, here) {
  const state = {
    namespace: params.get("namespace") || "",
    job: params.get("job") || "",
    types: params.getAll("eventType").flatMap((v) => v.split(",")).map((v) => v.trim().toUpperCase())
      .filter((v) => TYPES.includes(v)),
    after: params.get("after") || "",
    before: params.get("before") || "",
    offset: Math.max(0, Number.parseInt(params.get("offset") || "0", 10) || 0),
  };
  const namespaces = (await get("/api/v1/namespaces", {limit: 1000})).namespaces.map((ns) => ns.name);
  if (!here()) return;
  const results = h("section", {class: "card", "aria-labelledby": "events-h", "aria-live": "polite"});
  let asked = 0;
  let jobsOf = null;

  const fillJobs = async (jobs) => {
    if (jobsOf === state.namespace) return;
    jobsOf = state.namespace;
    clear(jobs);
    if (!state.namespace) return;
    const answer = await get(`/api/v1/namespaces/${encodeURIComponent(state.namespace)}/jobs`, {limit: 500});
    if (jobsOf === state.namespace) clear(jobs).append(...answer.jobs.map((job) => h("option", {value: job.name})));
  };

  const load = async () => {
    if (!here()) return;
    const mine = ++asked;
    const query = new URLSearchParams();
    for (const key of ["namespace", "job", "after", "before"]) if (state[key]) query.set(key, state[key]);
    for (const type of state.types) query.append("eventType", type);
    if (state.offset) query.set("offset", String(state.offset));
    keepInUrl(query);
    results.setAttribute("aria-busy", "true");
    let answer;
    try {
      answer = await get("/api/v1/events/lineage", {namespace: state.namespace, job: state.job,
        eventType: state.types.length ? state.types.join(",") : null, after: apiTime(state.after),
        before: apiTime(state.before), limit: PAGE, offset: state.offset});
    } catch (error) {
      if (mine !== asked) return;
      results.removeAttribute("aria-busy");
      clear(results).append(problem(error));
      return;
    }
    if (mine !== asked) return;
    results.removeAttribute("aria-busy");
    const filtered = state.namespace || state.job || state.types.length || state.after || state.before;
    const heading = h("h2", {id: "events-h"}, `${answer.totalCount} event${answer.totalCount === 1 ? "" : "s"}`,
      h("span", {class: "muted"}, filtered ? " matching the filters" : " ingested"), ", newest first");
    clear(results).append(heading);
    if (!answer.events.length) {
      results.append(empty(filtered ? "No event matches these filters." : "No events yet: send OpenLineage events to POST /api/v1/lineage."));
      return;
    }
    const go = (offset) => { state.offset = offset; load().then(() => results.scrollIntoView({block: "start"})); };
    results.append(eventsTable(answer.events), pager(answer.totalCount, state.offset, answer.events.length, go));
  };

  const {form, jobs} = filtersForm(state, namespaces, (next) => {
    Object.assign(state, next, {offset: 0});
    fillJobs(jobs).catch(() => {});
    load();
  });
  main.append(form, results);
  fillJobs(jobs).catch(() => {});
  await load();
}

// -- the Dead letters tab -------------------------------------------------------------------------
/** The button label and text of a dead letter's value: as text (pretty when it is JSON) or base64. */
function letterValue(letter) {
  if (letter.value !== undefined && letter.value !== null) {
    let text = letter.value;
    try { text = JSON.stringify(JSON.parse(letter.value), null, 2); } catch { /* not JSON: as it came */ }
    return [`${letter.valueBytes} bytes`, text];
  }
  if (letter.valueBase64) return [`${letter.valueBytes} bytes (binary)`, letter.valueBase64];
  return null;
}

function lettersTable(letters) {
  const headers = ["Received (UTC)", "Topic", "Partition", "Offset", "Reason", "Value"];
  return h("div", {class: "table-wrap"}, h("table", {class: "stack", "aria-label": "Dead letters"},
    h("thead", null, h("tr", null, headers.map((name) => h("th", {scope: "col"}, name)))),
    letters.map((letter) => {
      const cells = [
        cell("Received (UTC)", h("span", {class: "nowrap"}, shortTime(letter.receivedAt))),
        cell("Topic", h("span", {class: "mono"}, letter.topic)),
        cell("Partition", String(letter.partition)),
        cell("Offset", h("span", {class: "mono"}, String(letter.offset))),
        cell("Reason", h("span", {class: "reason"}, letter.error)),
      ];
      const value = letterValue(letter);
      if (value) return withRaw(null, cells, ["Value", ...value], 6);
      return h("tbody", null, h("tr", null, cells, cell("Value", h("span", {class: "muted"}, "empty"))));
    })));
}

async function deadLettersTab(main, params, here) {
  const state = {topic: params.get("topic") || "", before: params.get("before") || "", trail: []};
  const results = h("section", {class: "card", "aria-labelledby": "dead-h", "aria-live": "polite"});
  const topic = h("input", {type: "text", name: "topic", value: state.topic, placeholder: "all topics",
    autocomplete: "off"});
  const form = h("form", {class: "card event-filters", role: "search", "aria-label": "Filter dead letters"},
    h("label", null, h("span", null, "Topic"), topic),
    h("div", {class: "actions"}, h("button", {type: "submit", class: "primary"}, "Apply")));
  main.append(h("p", {class: "muted events-intro"},
    "Kafka messages the consumer could not turn into events (empty, too large, not JSON, or not a valid ",
    "OpenLineage event), kept with the reason. Events refused over HTTP are answered to their sender with a ",
    "400 and the reasons, and are not kept."), form, results);

  const load = async () => {
    if (!here()) return;
    const query = new URLSearchParams({tab: DEAD});
    if (state.topic) query.set("topic", state.topic);
    if (state.before) query.set("before", state.before);
    keepInUrl(query);
    let answer;
    try {
      answer = await get("/api/v1/ingest/errors", {topic: state.topic, before: state.before, limit: PAGE});
    } catch (error) {
      clear(results).append(problem(error));
      return;
    }
    clear(results).append(h("h2", {id: "dead-h"},
      `${answer.totalCount} dead letter${answer.totalCount === 1 ? "" : "s"}`, h("span", {class: "muted"}, ", newest first")));
    if (!answer.errors.length) {
      results.append(empty(state.before ? "No older dead letters." : "No dead letters: every message became an event."));
    } else {
      results.append(lettersTable(answer.errors));
    }
    const newest = h("button", {type: "button", disabled: !state.before, onclick: () => {
      state.before = state.trail.pop() || "";
      load();
    }}, "← Newer");
    const older = h("button", {type: "button", disabled: !answer.nextBefore, onclick: () => {
      state.trail.push(state.before);
      state.before = String(answer.nextBefore);
      load();
    }}, "Older →");
    if (state.before || answer.nextBefore) results.append(h("nav", {class: "pager", "aria-label": "Pages"}, newest, older));
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    state.topic = topic.value.trim();
    state.before = "";
    state.trail = [];
    load();
  });
  await load();
}

export async function render(main, _parts, params) {
  const here = stillDrawing();
  const dead = params.get("tab") === DEAD;
  setTitle(dead ? "Dead letters" : "Events");
  main.append(h("div", {class: "page-head"}, h("div", null, h("h1", null, "Events"),
    h("p", {class: "muted"}, "What Headwater ingested, as it came, and what it could not ingest."))));
  main.append(h("nav", {class: "tabs", "aria-label": "Events or dead letters"},
    h("a", {href: "/events", "aria-current": dead ? null : "page"}, "Events"),
    h("a", {href: `/events?tab=${DEAD}`, "aria-current": dead ? "page" : null}, "Dead letters")));
  if (dead) await deadLettersTab(main, params, here);
  else await eventsTab(main, params, here);
}
