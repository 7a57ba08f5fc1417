// Elements (generic FastScore-style events): element types as tabs, the elements of the chosen type,
// the latest generic events (each opens inline), one event on its own (?event=ID), and the tags by key.
import {find, get} from "../api.js";
import {empty, h, link, setTitle} from "../dom.js";
import {OPENLINEAGE_TYPES, api, elementLink, elementsHref, eventBody, eventDetails, eventLine, pager, sendHelp, typeLabel} from "../generic.js";

const ELEMENTS = 25;
const EVENTS = 10;
const TAGS = 20;
const ALL = "*"; // ?type=* lists the elements of every type; no type shows the first generic type

function whole(value) {
  const n = Number.parseInt(value || "0", 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** The page's settings, all in the URL. */
function settingsFrom(params) {
  return {
    type: params.get("type") || "",
    offset: whole(params.get("offset")),
    eoffset: whole(params.get("eoffset")),
    key: params.get("key") || "",
    toffset: whole(params.get("toffset")),
    event: params.get("event") || "",
  };
}

/** The type shown when the URL names none: the first generic type (OpenLineage datasets can be many). */
function defaultType(types) {
  return types.find((type) => !OPENLINEAGE_TYPES.includes(type)) || ALL;
}

function typeTabs(types, current, settings) {
  const tab = (type, text) => link(elementsHref({...settings, type, offset: 0, event: ""}), text,
    {"aria-current": type === current ? "page" : null});
  // generic types first, then the OpenLineage datasets and jobs (there may be many of those)
  const generic = types.filter((type) => !OPENLINEAGE_TYPES.includes(type));
  const lineage = types.filter((type) => OPENLINEAGE_TYPES.includes(type));
  return h("nav", {class: "tabs el-tabs", "aria-label": "Element types"},
    tab(ALL, "All types"), generic.map((type) => tab(type, type)),
    lineage.length ? h("span", {class: "el-tab-sep", "aria-hidden": "true"}, "OpenLineage") : null,
    lineage.map((type) => tab(type, `${type}s`)));
}

function elementsCard(rows, settings, more) {
  const title = settings.type !== ALL ? `Elements of type ${settings.type}` : "Elements of every type";
  const body = rows.length
    ? h("div", {class: "table-wrap"}, h("table", {class: "el-table", "aria-label": "Elements"},
      h("thead", null, h("tr", null, h("th", {scope: "col"}, "Description"), h("th", {scope: "col"}, "Type"),
        h("th", {scope: "col", class: "el-num"}, "Id"))),
      h("tbody", null, rows.map((el) => h("tr", null,
        h("td", {class: "el-wrap"}, link(`/elements/${el.id}`, el.description)),
        h("td", null, typeLabel(el.type)),
        h("td", {class: "el-num muted mono"}, String(el.id)))))))
    : empty(settings.offset ? "No more elements." : settings.type === ALL ? "No element." : `No element of type ${settings.type}.`);
  return h("section", {class: "card el-card", "aria-labelledby": "el-list-h"},
    h("h2", {id: "el-list-h"}, title), body,
    pager("Elements pages", settings.offset, ELEMENTS, rows.length, more,
      (offset) => elementsHref({...settings, offset, event: ""})));
}

function eventsCard(events, settings, more) {
  return h("section", {class: "card el-card", "aria-labelledby": "el-events-h"},
    h("h2", {id: "el-events-h"}, "Latest events"),
    h("p", {class: "muted el-hint"}, "Newest first. Open one to see its elements and tags."),
    events.length ? h("div", {class: "el-events", role: "list", "aria-label": "Latest events"},
      events.map((event) => h("div", {role: "listitem"}, eventDetails(event))))
      : settings.eoffset ? empty("No more events.") : sendHelp("No generic event yet."),
    pager("Events pages", settings.eoffset, EVENTS, events.length, more,
      (eoffset) => elementsHref({...settings, eoffset, event: ""})));
}

/** "Carried by": the elements and events of one tag, fetched when opened. */
function carriers(tag) {
  const slot = h("div", null);
  const details = h("details", {class: "el-carriers"}, h("summary", null, "Carried by"), slot);
  let asked = false;
  details.addEventListener("toggle", async () => {
    if (!details.open || asked) return;
    asked = true;
    slot.append(h("p", {class: "loading", "aria-busy": "true"}, "Loading…"));
    try {
      const answer = await get(api.tag(tag.id), {limit: 10});
      slot.replaceChildren(
        answer.elements.length ? h("ul", {class: "el-elements"}, answer.elements.map((el) => h("li", null, elementLink(el))))
          : h("p", {class: "muted"}, "No element: an event's own tag."),
        answer.events.length ? h("ul", {class: "el-elements"}, answer.events.map((ev) => h("li", null, eventLine(ev))))
          : null);
    } catch (error) {
      asked = false;
      slot.replaceChildren(h("p", {class: "el-error", role: "alert"}, error.message));
    }
  });
  return details;
}

function tagsCard(tagRows, settings, more) {
  const heading = settings.key ? ["Tags with key ", h("code", null, settings.key)] : "Tags";
  const all = settings.key ? link(elementsHref({...settings, key: "", toffset: 0, event: ""}), "All keys",
    {class: "button"}) : null;
  const body = tagRows.length
    ? h("div", {class: "table-wrap"}, h("table", {class: "el-table el-tags", "aria-label": "Tags"},
      h("thead", null, h("tr", null, ["Key", "Value", ""].map((name) => h("th", {scope: "col"}, name)))),
      h("tbody", null, tagRows.map((tag) => h("tr", null,
        h("td", null, settings.key ? h("span", {class: "mono"}, tag.key)
          : link(elementsHref({...settings, key: tag.key, toffset: 0, event: ""}), tag.key,
            {class: "mono", title: `Only the tags with key ${tag.key}`})),
        h("td", {class: "el-wrap mono"}, tag.value),
        h("td", null, carriers(tag)))))))
    : empty(settings.key ? `No tag has the key ${settings.key}.` : "No tags.");
  return h("section", {class: "card", "aria-labelledby": "el-tags-h"},
    h("div", {class: "el-card-head"}, h("h2", {id: "el-tags-h"}, heading), all),
    h("p", {class: "muted el-hint"}, "Key/value pairs on elements and events; a key shows all its values."),
    body,
    pager("Tags pages", settings.toffset, TAGS, tagRows.length, more,
      (toffset) => elementsHref({...settings, toffset, event: ""})));
}

/** One event on its own (?event=ID): its line, elements with their tags, its tags. */
function eventCard(event, id, settings) {
  const close = link(elementsHref({...settings, event: ""}), "Close", {class: "button", "aria-label": "Close the event"});
  if (!event) {
    return h("section", {class: "card error-box", role: "alert"},
      h("div", {class: "el-card-head"}, h("h2", null, `No event ${id}`), close),
      h("p", null, "No generic event has that id."));
  }
  return h("section", {class: "card el-focus", "aria-labelledby": "el-event-h"},
    h("div", {class: "el-card-head"}, h("h2", {id: "el-event-h"}, `Event ${event.id}`), close),
    h("p", {class: "el-focus-line"}, eventLine(event)),
    h("h3", null, "Elements"), eventBody(event, null));
}

export async function render(main, _parts, params) {
  setTitle("Elements");
  const settings = settingsFrom(params);
  const eventId = /^\d+$/.test(settings.event) ? settings.event : "";
  const elementsOf = (type) => get(api.elements, {element_type: type === ALL ? null : type, limit: ELEMENTS + 1,
    offset: settings.offset});
  const typesThenElements = () => get(api.types).then(async (types) => {
    if (!settings.type) settings.type = defaultType(types);
    return [types, await elementsOf(settings.type)];
  });
  const [[types, elements], events, tagRows, event] = await Promise.all([
    settings.type ? Promise.all([get(api.types), elementsOf(settings.type)]) : typesThenElements(),
    get(api.events, {limit: EVENTS + 1, offset: settings.eoffset}),
    get(api.tags, {key: settings.key, limit: TAGS + 1, offset: settings.toffset}),
    eventId ? find(api.event(eventId)) : null,
  ]);
  main.append(h("div", {class: "page-head"},
    h("div", null, h("div", {class: "crumbs"}, "Generic events (FastScore style)"),
      h("h1", null, "Elements"),
      h("p", {class: "muted el-intro"}, "Models, schemas, engines and other assets named by generic events, ",
        "with the key/value tags those events gave them."))));
  if (settings.event) main.append(eventCard(event, settings.event, settings));
  if (!types.length && !settings.eoffset && !events.length) {
    main.append(h("section", {class: "card", "aria-labelledby": "el-none-h"},
      h("h2", {id: "el-none-h"}, "No generic events yet"), sendHelp("Nothing has sent a generic event to this server.")));
    return;
  }
  main.append(typeTabs(types, settings.type, settings));
  main.append(h("div", {class: "grid el-grid"},
    elementsCard(elements.slice(0, ELEMENTS), settings, elements.length > ELEMENTS),
    eventsCard(events.slice(0, EVENTS), settings, events.length > EVENTS)));
  main.append(tagsCard(tagRows.slice(0, TAGS), settings, tagRows.length > TAGS));
  main.append(h("details", {class: "card el-send"}, h("summary", null, "How to send a generic event"),
    sendHelp("Any system can report what happened to its assets.")));
}
