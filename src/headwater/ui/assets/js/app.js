// The UI's entry point: the router (each page has its own URL; links are followed without a
// reload, Back and Reload work), the search box on every page, and errors shown in the page.
import {get} from "./api.js";
import {clear, datasetHref, h, jobHref, setTitle} from "./dom.js";

const ROUTES = [
  [/^\/$/, () => import("./pages/home.js")],
  [/^\/search$/, () => import("./pages/search.js")],
  [/^\/datasets\/([^/]+)\/(.+)$/, () => import("./pages/dataset.js")],
  [/^\/jobs$/, () => import("./pages/jobs.js")],
  [/^\/jobs\/([^/]+)\/(.+)$/, () => import("./pages/job.js")],
  [/^\/runs\/(.+)$/, () => import("./pages/run.js")],
  [/^\/namespaces\/(.+)$/, () => import("./pages/namespace.js")],
  [/^\/lineage$/, () => import("./pages/lineage.js")],
  [/^\/impact$/, () => import("./pages/impact.js")],
  [/^\/events$/, () => import("./pages/events.js")],
  [/^\/elements$/, () => import("./pages/elements.js")],
  [/^\/elements\/(\d+)$/, () => import("./pages/element.js")],
];

const main = document.getElementById("main");
let current = null; // the page drawn now: {leave()} when it has something to stop
let generation = 0;

function decodeParts(match) {
  return match.slice(1).map((part) => decodeURIComponent(part));
}

async function render() {
  const mine = ++generation;
  if (current && current.leave) current.leave();
  current = null;
  const path = location.pathname;
  const params = new URLSearchParams(location.search);
  for (const link of document.querySelectorAll(".nav a")) {
    const here = link.getAttribute("href") === path;
    if (here) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  main.classList.remove("wide");
  for (const [pattern, load] of ROUTES) {
    const match = pattern.exec(path);
    if (!match) continue;
    try {
      const page = await load();
      if (mine !== generation) return;
      // Each page draws into a view of its own (no box: its children lay out in `main`). A page
      // still waiting for the server when another is asked for draws into a view no longer in the
      // document, never into the new page.
      const view = h("div", {class: "view"});
      clear(main).append(view);
      current = (await page.render(view, decodeParts(match), params)) || null;
      if (mine === generation) performance.mark("headwater:page-drawn"); // read by bench/ui.py
    } catch (error) {
      if (mine !== generation) return;
      showError(error);
    }
    return;
  }
  setTitle("Not found");
  clear(main).append(h("div", {class: "card"}, h("h1", null, "Page not found"),
    h("p", null, "Nothing lives at ", h("code", null, path), ". ", h("a", {href: "/"}, "Go home"), ".")));
}

function showError(error) {
  console.warn(error);
  setTitle("Error");
  const status = error.status ? `${error.status}: ` : "";
  clear(main).append(h("div", {class: "card error-box", role: "alert"},
    h("h2", null, error.status === 404 ? "Not found" : "Something went wrong"),
    h("p", null, status + (error.message || String(error))),
    h("p", null, h("a", {href: "/"}, "Home"))));
}

/** Go to a URL of the UI without reloading the page. */
export function navigate(url, {replace = false} = {}) {
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  window.scrollTo(0, 0);
  render();
}

/** A page's check, made as it starts drawing: false once another URL was asked for since (a click
 * while the page still waited for the server), so that it stops instead of writing over the URL
 * or the new page. */
export function stillDrawing() {
  const mine = generation;
  return () => mine === generation;
}

/** Let the page drawn now use the whole width of the window (the lineage graph). */
export function fullWidth() {
  main.classList.add("wide");
}

/** Change the query string of the current page (its view settings) without a new history entry. */
export function updateQuery(params) {
  const url = `${location.pathname}?${params}`;
  history.replaceState(null, "", url);
}

document.addEventListener("click", (event) => {
  const a = event.target.closest("a");
  if (!a || event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  if (a.target || a.hasAttribute("download") || a.hasAttribute("data-external")) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin || url.pathname.startsWith("/api/") || url.pathname === "/docs") return;
  event.preventDefault();
  if (url.pathname === location.pathname && url.search === location.search && url.hash) return;
  closeSuggestions();
  navigate(url.pathname + url.search);
});
window.addEventListener("popstate", render);

// -- search box ---------------------------------------------------------------------------------
const form = document.querySelector("form.search");
const input = form.elements.q;
const list = document.getElementById("search-results");
let timer = null;
let asked = "";

function closeSuggestions() {
  list.hidden = true;
  input.setAttribute("aria-expanded", "false");
}

async function suggest() {
  const q = input.value.trim();
  asked = q;
  if (!q) return closeSuggestions();
  const answer = await get("/api/v1/search", {q, limit: 12});
  if (asked !== q) return;
  clear(list);
  if (!answer.results.length) list.append(h("li", {class: "muted", role: "option"}, h("a", null, "No match")));
  for (const item of answer.results) {
    const href = item.type === "DATASET" ? datasetHref(item.namespace, item.name) : jobHref(item.namespace, item.name);
    list.append(h("li", {role: "option"}, h("a", {href},
      h("span", {class: `kind badge`}, item.type === "DATASET" ? "dataset" : "job"), item.name,
      h("span", {class: "muted"}, ` · ${item.namespace}`))));
  }
  if (answer.totalCount > answer.results.length) {
    list.append(h("li", {role: "option"}, h("a", {href: `/search?q=${encodeURIComponent(q)}`},
      `All ${answer.totalCount >= 1000 ? "1000+" : answer.totalCount} matches…`)));
  }
  list.hidden = false;
  input.setAttribute("aria-expanded", "true");
}

input.addEventListener("input", () => {
  clearTimeout(timer);
  timer = setTimeout(() => suggest().catch(showError), 120);
});
input.addEventListener("keydown", (event) => {
  const links = [...list.querySelectorAll("a[href]")];
  const at = links.indexOf(document.activeElement);
  if (event.key === "ArrowDown" && links.length) {
    event.preventDefault();
    links[Math.min(at + 1, links.length - 1)].focus();
  } else if (event.key === "Escape") {
    closeSuggestions();
  }
});
list.addEventListener("keydown", (event) => {
  const links = [...list.querySelectorAll("a[href]")];
  const at = links.indexOf(document.activeElement);
  if (event.key === "ArrowDown") { event.preventDefault(); links[Math.min(at + 1, links.length - 1)].focus(); }
  if (event.key === "ArrowUp") { event.preventDefault(); (at <= 0 ? input : links[at - 1]).focus(); }
  if (event.key === "Escape") { closeSuggestions(); input.focus(); }
});
form.addEventListener("submit", (event) => {
  event.preventDefault();
  closeSuggestions();
  const q = input.value.trim();
  if (q) navigate(`/search?q=${encodeURIComponent(q)}`);
});
document.addEventListener("click", (event) => {
  if (!form.contains(event.target)) closeSuggestions();
});

render();
