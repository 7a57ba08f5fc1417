// Generic (FastScore-style) events, shared by the elements pages: their URLs, an event's elements
// and tags, an event fetched when its <details> opens, tag chips, the pager and the "how to send" help.
import {get} from "./api.js";
import {badge, empty, fmtTime, h, link, runHref} from "./dom.js";

/** Element types that are OpenLineage datasets and jobs (the pipeline numbers them as elements too). */
export const OPENLINEAGE_TYPES = ["dataset", "job"];
const RUN_STATES = ["START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER"];

export const api = {
  types: "/lineage/1/element_types",
  elements: "/lineage/1/elements",
  element: (id) => `/lineage/1/elements/${encodeURIComponent(id)}`,
  events: "/lineage/1/events",
  event: (id) => `/lineage/1/events/${encodeURIComponent(id)}`,
  tags: "/lineage/1/tags",
  tag: (id) => `/lineage/1/tags/${encodeURIComponent(id)}`,
};

/** The UI's URLs: an element's page, the elements page with settings (type, key, event…). */
export const elementHref = (id) => `/elements/${encodeURIComponent(id)}`;
export function elementsHref(settings) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(settings || {})) {
    if (value !== null && value !== undefined && value !== "" && value !== 0) params.set(key, String(value));
  }
  const query = params.toString();
  return query ? `/elements?${query}` : "/elements";
}
export const eventHref = (id) => elementsHref({event: id});

/** "model" → a small coloured label of an element type. */
export function typeLabel(type) {
  return h("span", {class: "el-type", title: `element type: ${type}`}, type);
}

/** A link to an element's page: its description, with its type beside it. */
export function elementLink(element, attrs) {
  return h("span", {class: "el-ref"}, link(elementHref(element.id), element.description,
    {title: `${element.type}: ${element.description}`, ...(attrs || {})}), " ", typeLabel(element.type));
}

/** key=value chips; each key links to the tags of that key. */
export function tagChips(list) {
  if (!list || !list.length) return null;
  return h("span", {class: "el-chips"}, list.map((tag) => h("span", {class: "tag el-tag", "data-key": tag.key},
    link(elementsHref({key: tag.key}), tag.key, {title: `Every value of ${tag.key}`}), "=",
    h("span", {class: "el-value"}, tag.value))));
}

/** An event's elements (links, with their tags in this event) and its own tags; `skip` an element id left out. */
export function eventBody(event, skip) {
  const others = event.elements.filter((el) => String(el.id) !== String(skip));
  const self = skip ? event.elements.find((el) => String(el.id) === String(skip)) : null;
  const own = self && self.tags.length
    ? h("p", {class: "el-own"}, h("span", {class: "muted"}, "Set on this element "), tagChips(self.tags)) : null;
  const items = others.map((el) => h("li", null, elementLink(el), " ", tagChips(el.tags)));
  return h("div", {class: "el-event-body"}, own,
    items.length ? h("ul", {class: "el-elements", "aria-label": `Elements of event ${event.id}`}, items)
      : h("p", {class: "muted"}, skip ? "No other element." : "No element."),
    event.tags.length ? h("p", {class: "el-event-tags"}, h("span", {class: "muted"}, "Event tags "), tagChips(event.tags))
      : null);
}

/** A <details> whose summary is the event's line; its elements and tags are fetched when first opened,
 * or drawn at once when `full` (the event with its elements) is given. */
export function eventDetails(event, {full = null, skip = null, open = false} = {}) {
  const body = h("div", {class: "el-event-slot"}, full ? eventBody(full, skip) : null);
  const details = h("details", {class: "el-event", open: open || null, "data-event": event.id},
    h("summary", null, eventLine(event)), body);
  let asked = Boolean(full);
  details.addEventListener("toggle", async () => {
    if (!details.open || asked) return;
    asked = true;
    body.append(h("p", {class: "loading", "aria-busy": "true"}, "Loading…"));
    try {
      const answer = await get(api.event(event.id));
      body.replaceChildren(eventBody(answer, skip));
    } catch (error) {
      asked = false;
      body.replaceChildren(h("p", {class: "el-error", role: "alert"}, `Could not load event ${event.id}: ${error.message}`));
    }
  });
  return details;
}

/** One line of an event: description, type, time, and a link to its own URL. */
export function eventLine(event) {
  // an OpenLineage run event (of a dataset or job element): "run {runId} of {namespace}:{job}"
  const run = RUN_STATES.includes(event.type) ? /^run (\S+) of (.+)$/.exec(event.description) : null;
  const description = run ? ["run ", link(runHref(run[1]), `${run[1].slice(0, 8)}…`, {class: "mono", title: run[1],
    "aria-label": `Run ${run[1]}`}), ` of ${run[2]}`] : event.description;
  return h("span", {class: "el-line"},
    h("span", {class: "el-desc"}, description),
    run ? badge(event.type) : h("span", {class: "tag el-etype"}, event.type),
    h("time", {class: "muted el-time", datetime: event.timestamp}, fmtTime(event.timestamp)),
    link(eventHref(event.id), `#${event.id}`, {class: "muted mono el-id", title: `Event ${event.id} on its own`,
      "aria-label": `Event ${event.id}`}));
}

/** Previous/next links for a list read with limit+1 (so the next page is known to exist). */
export function pager(label, offset, size, shown, more, hrefAt) {
  if (!offset && !more) return null;
  const first = shown ? offset + 1 : offset;
  return h("nav", {class: "pager", "aria-label": label},
    offset > 0 ? link(hrefAt(Math.max(0, offset - size)), "← Previous", {class: "button"})
      : h("span", {class: "button el-off", "aria-disabled": "true"}, "← Previous"),
    h("span", {class: "muted", role: "status"}, `${first}–${offset + shown}`),
    more ? link(hrefAt(offset + size), "Next →", {class: "button"})
      : h("span", {class: "button el-off", "aria-disabled": "true"}, "Next →"));
}

/** How to send a generic event: the curl of docs/generic-events.md, against this server. */
export function sendHelp(intro) {
  const curl = `curl -X POST ${location.origin}/lineage/1/events -H 'Content-Type: application/json' -d '{
  "description": "put model: churn", "type": "put model",
  "elements": [{"description": "churn", "type": "model", "tags": {"model-hash": "4b85"}},
               {"description": "model-manage-1", "type": "fastscore-service"}],
  "tags": {"pneumo-timestamp": "2018-12-12T21:35:21.613138Z"}}'`;
  return h("div", {class: "el-help"},
    empty(intro),
    h("p", null, "A generic event says what happened to some assets — a model put into a model manager, a schema ",
      "attached, a model loaded into an engine — as typed elements with key/value tags. Send one:"),
    h("pre", {class: "el-curl"}, curl),
    h("p", {class: "muted"}, "It is browsable here at once; a JSON array or NDJSON sends a batch, and ",
      h("code", null, "headwater ingest --generic FILE"), " replays files. The ",
      link("/docs", "API docs", {"data-external": ""}), " list every endpoint under ", h("code", null, "/lineage/1/"), "."));
}
