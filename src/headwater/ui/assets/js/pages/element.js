// One generic element: its type, its current tags (latest value per key), its events newest first
// with the other elements of each as links, and its lineage graph when the pipeline has made it a node.
import {get} from "../api.js";
import {empty, h, kv, lineageHref, link, nodeHref, setTitle} from "../dom.js";
import {OPENLINEAGE_TYPES, api, elementsHref, eventDetails, pager, sendHelp, typeLabel} from "../generic.js";

const EVENTS = 20;
const OPENED = 4; // events drawn with their elements at once (one request each); the others load when opened

function whole(value) {
  const n = Number.parseInt(value || "0", 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** The element's graph node id, the server's rule: a `dataset` or `job` element named `{namespace}:{name}` is
 * that OpenLineage node; any other element is `element:{type}:{description}`. */
function graphNodeId(element) {
  const colon = element.description.indexOf(":");
  const openLineage = OPENLINEAGE_TYPES.includes(element.type) && colon > 0 && colon < element.description.length - 1;
  return openLineage ? `${element.type}:${element.description}` : `element:${element.type}:${element.description}`;
}

/** The element's node id in the lineage graph when the server has one, else null. Asks only what answers
 * 200 (never a node that may 404): the node types (has the pipeline folded generic events yet?), then a
 * search of the elements by description. */
async function lineageNode(element) {
  const nodeId = graphNodeId(element);
  // an OpenLineage dataset or job is numbered as an element when the pipeline publishes it: a node already
  if (!nodeId.startsWith("element:")) return nodeId;
  try {
    const types = await get("/api/warehouse/v1/types");
    if (!types.nodeTypes.some((t) => t.name === "element")) return null;
    const found = await get("/api/warehouse/v1/nodes", {name: element.description, type: "element", limit: 500});
    return found.nodes.some((node) => node.nodeID === nodeId) ? nodeId : null;
  } catch (error) {
    console.warn("lineage lookup", error);
    return null;
  }
}

function tagsTable(tags, type) {
  const keys = Object.keys(tags).sort();
  if (!keys.length && OPENLINEAGE_TYPES.includes(type)) {
    return empty(`No tags: an OpenLineage ${type} has facets instead (on its ${type} page).`);
  }
  if (!keys.length) return empty("No tags: none of its events gave it one.");
  return h("div", {class: "table-wrap"}, h("table", {class: "el-table", "aria-label": "Current tags"},
    h("thead", null, h("tr", null, h("th", {scope: "col"}, "Key"), h("th", {scope: "col"}, "Latest value"))),
    h("tbody", null, keys.map((key) => h("tr", null,
      h("td", null, link(elementsHref({key}), key, {class: "mono", title: `Every value of ${key}`})),
      h("td", {class: "el-wrap mono"}, tags[key]))))));
}

export async function render(main, [id], params) {
  const offset = whole(params.get("offset"));
  const [element, nodeId] = await get(api.element(id), {limit: EVENTS + 1, offset})
    .then((answer) => Promise.all([answer, lineageNode(answer)]));
  setTitle(element.description);
  const page = graphNodeId(element).startsWith("element:") ? null : nodeHref(graphNodeId(element));
  const events = element.events.slice(0, EVENTS);
  const more = element.events.length > EVENTS;
  const opened = await Promise.all(events.slice(0, OPENED).map((event) => get(api.event(event.id))));

  main.append(h("div", {class: "page-head"},
    h("div", null,
      h("div", {class: "crumbs"}, "Element of type ", link(elementsHref({type: element.type}), element.type)),
      h("h1", null, element.description)),
    h("div", {class: "actions"},
      nodeId ? link(lineageHref(nodeId), "Lineage", {class: "button primary"}) : null,
      page ? link(page, element.type === "job" ? "Job page" : "Dataset page", {class: "button"}) : null,
      link(elementsHref({type: element.type}), `All ${element.type} elements`, {class: "button"}))));

  main.append(h("div", {class: "grid el-pair"},
    h("section", {class: "card", "aria-labelledby": "el-tags-h"},
      h("h2", {id: "el-tags-h"}, "Current tags"),
      h("p", {class: "muted el-hint"}, "The latest value of each key across its events."),
      tagsTable(element.tags, element.type)),
    h("section", {class: "card el-about", "aria-labelledby": "el-about-h"}, h("h2", {id: "el-about-h"}, "About"),
      kv([["Type", typeLabel(element.type)], ["Description", element.description],
        ["Id", h("span", {class: "mono"}, String(element.id))],
        ["Events", offset || more ? `${offset + 1}–${offset + events.length} here${more ? ", more on the next page" : ""}`
          : String(events.length)],
        ["Lineage", nodeId ? link(lineageHref(nodeId), "Open its lineage graph")
          : h("span", {class: "muted"}, "Not in the lineage graph (yet): the pipeline folds generic events into it.")]]))));

  main.append(h("section", {class: "card", "aria-labelledby": "el-events-h"},
    h("h2", {id: "el-events-h"}, "Events"),
    h("p", {class: "muted el-hint"}, "Newest first, with the other elements of each event."),
    events.length ? h("div", {class: "el-events", role: "list", "aria-label": "Events of this element"},
      events.map((event, i) => h("div", {role: "listitem"},
        eventDetails(event, {full: opened[i] || null, skip: element.id, open: i < OPENED}))))
      : offset ? empty("No more events.") : sendHelp("No event names this element."),
    pager("Events pages", offset, EVENTS, events.length, more,
      (at) => `/elements/${element.id}${at ? `?offset=${at}` : ""}`)));
}
