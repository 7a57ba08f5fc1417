// Draws a lineage graph as SVG (names are text in the DOM), with pan and zoom (drag, wheel,
// pinch, buttons, keys), selection, highlighted paths, and export as SVG or PNG.
import {fmtTime, s} from "../dom.js";
import {layout} from "./layout.js";

const CHAR = 7.6; // average width of a 13 px character, for sizing boxes without measuring text
const HEAD = 40; // a node's title block
const ROW = 20; // a field's row in column mode
const MAX_WIDTH = 340;
const READABLE = 0.7; // the smallest zoom at which names stay readable

function clip(text, width) {
  const fits = Math.floor(width / CHAR);
  return text.length <= fits ? text : `${text.slice(0, Math.max(1, fits - 1))}…`;
}

const nameRoom = (field, width) => Math.min(field.name.length * CHAR + 10, width * 0.62);

function sizeOf(node) {
  const longest = Math.max(node.name.length, (node.sub || "").length * 0.9,
    ...(node.fields || []).map((f) => f.name.length + (f.type || "").length * 0.9 + 2));
  const width = Math.min(MAX_WIDTH, Math.max(160, Math.round(longest * CHAR) + (node.state ? 56 : 40)));
  const height = node.fields ? HEAD + Math.max(1, node.fields.length) * ROW + 6 : HEAD + 4;
  return {width, height};
}

export class GraphView {
  constructor(container, {onSelect, onExpand, onOpen} = {}) {
    this.container = container;
    this.handlers = {onSelect, onExpand, onOpen};
    this.scale = 1;
    this.tx = 0;
    this.ty = 0;
    this.svg = s("svg", {role: "group", "aria-label": "Lineage graph", tabindex: 0});
    this.svg.append(s("defs", null,
      s("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto"},
        s("path", {d: "M0,0 L10,5 L0,10 z", class: "arrow"})),
      s("marker", {id: "arrow-hl", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto"},
        s("path", {d: "M0,0 L10,5 L0,10 z", class: "arrow-hl"}))));
    this.world = s("g", {class: "world"});
    this.svg.append(this.world);
    container.append(this.svg);
    this.bindPanZoom();
  }

  /** Lay out and draw `model` ({nodes, edges}); returns the milliseconds it took. */
  draw(model) {
    const started = performance.now();
    this.model = model;
    const sized = model.nodes.map((node) => ({id: node.id, ...sizeOf(node)}));
    const layoutEdges = model.edges.map((e) => ({source: e.source, target: e.target}));
    const placed = layout(sized, layoutEdges, {rankGap: 60});
    this.positions = placed.positions;
    this.bounds = {width: placed.width, height: placed.height};
    const edgeLayer = s("g", {class: "edges"});
    const nodeLayer = s("g", {class: "nodes"});
    this.nodeEls = new Map();
    this.edgeEls = [];
    for (const node of model.nodes) {
      const el = this.drawNode(node, this.positions.get(node.id));
      this.nodeEls.set(node.id, el);
      nodeLayer.append(el);
    }
    for (const edge of model.edges) {
      const path = this.drawEdge(edge);
      if (path) {
        this.edgeEls.push([edge, path]);
        edgeLayer.append(path);
      }
    }
    this.world.replaceChildren(edgeLayer, nodeLayer);
    return performance.now() - started;
  }

  fieldY(node, place, field) {
    const i = node.fields ? node.fields.findIndex((f) => f.name === field) : -1;
    return i < 0 ? place.y + place.height / 2 : place.y + HEAD + i * ROW + ROW / 2;
  }

  drawEdge(edge) {
    const a = this.positions.get(edge.source), b = this.positions.get(edge.target);
    if (!a || !b) return null;
    const from = this.model.byId.get(edge.source), to = this.model.byId.get(edge.target);
    const x1 = a.x + a.width, y1 = edge.sourceField ? this.fieldY(from, a, edge.sourceField) : a.y + a.height / 2;
    const x2 = b.x, y2 = edge.targetField ? this.fieldY(to, b, edge.targetField) : b.y + b.height / 2;
    let d;
    if (x2 > x1) {
      const bend = Math.max(30, (x2 - x1) / 2);
      d = `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`;
    } else { // an edge back (a cycle): around the boxes
      const drop = Math.max(a.y + a.height, b.y + b.height) + 30;
      d = `M${x1},${y1} C${x1 + 80},${y1} ${x1 + 80},${drop} ${(x1 + x2) / 2},${drop} S${x2 - 80},${y2} ${x2},${y2}`;
    }
    const classes = `edge${edge.indirect ? " indirect" : ""}${edge.diff ? ` diff-${edge.diff}` : ""}`;
    return s("path", {d, class: classes, "marker-end": "url(#arrow)",
      dataset: {source: edge.source, target: edge.target}},
    s("title", null, edge.label || `${edge.source} → ${edge.target}`));
  }

  drawNode(node, place) {
    const classes = ["node", node.kind, node.state ? `state-${node.state}` : "", node.root ? "root" : "",
      node.diff ? `diff-${node.diff}` : "", node.dropped != null ? "dropped" : ""];
    const g = s("g", {class: classes.join(" "), transform: `translate(${place.x},${place.y})`, tabindex: 0,
      role: "button", "aria-label": `${node.kind} ${node.name} in ${node.namespace}`, dataset: {id: node.id}});
    const diffNote = node.diff ? `\n${{added: "added", removed: "removed", changed: "its edges changed"}[node.diff]} since the earlier time` : "";
    const droppedNote = node.dropped ? `\ndropped ${fmtTime(node.dropped)}` : "";
    g.append(s("title", null, `${node.name}\n${node.namespace}${droppedNote}${diffNote}`));
    if (node.group) { // a stack of jobs
      g.append(s("rect", {class: "box", x: 6, y: -6, width: place.width, height: place.height, rx: 6}));
      g.append(s("rect", {class: "box", x: 3, y: -3, width: place.width, height: place.height, rx: 6}));
    }
    g.append(s("rect", {class: "box", width: place.width, height: place.height, rx: 6}));
    g.append(s("rect", {class: "bar", width: 5, height: place.height, rx: 2}));
    const room = place.width - (node.state ? 44 : 24);
    g.append(s("text", {x: 14, y: 17, class: "name"}, clip(node.name, room)));
    g.append(s("text", {x: 14, y: 32, class: "sub"}, clip(node.sub || node.namespace, room)));
    if (node.state) {
      g.append(s("circle", {class: "dot", cx: place.width - 14, cy: 14, r: 5,
        fill: `var(--${{COMPLETED: "ok", FAILED: "fail", RUNNING: "run", ABORTED: "abort"}[node.state] || "new"})`}));
    }
    for (const [i, field] of (node.fields || []).entries()) {
      const top = HEAD + i * ROW;
      if (i === 0) g.append(s("line", {class: "sep", x1: 0, x2: place.width, y1: top - 2, y2: top - 2}));
      g.append(s("g", {class: "frow", dataset: {field: field.name}},
        s("rect", {class: "frow", x: 6, y: top, width: place.width - 12, height: ROW}),
        s("text", {x: 14, y: top + 14, class: "field"}, clip(field.name, nameRoom(field, place.width))),
        s("text", {x: place.width - 10, y: top + 14, class: "ftype", "text-anchor": "end"},
          clip(field.type || "", place.width - 36 - nameRoom(field, place.width)))));
    }
    if (node.expandable) {
      const button = s("g", {class: "expander", role: "button", tabindex: 0, "aria-label": `Expand ${node.name}`,
        transform: `translate(${place.width - 12},${place.height - 12})`},
      s("circle", {class: "expand", r: 9}), s("text", {class: "expand-label", "text-anchor": "middle", y: 4.5}, "+"),
      s("title", null, "More lineage beyond this node: expand"));
      button.addEventListener("click", (event) => { event.stopPropagation(); this.handlers.onExpand?.(node.id); });
      button.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); event.stopPropagation(); this.handlers.onExpand?.(node.id); }
      });
      g.append(button);
    }
    g.addEventListener("click", (event) => {
      if (this.moved) return;
      const row = event.target.closest("g.frow");
      this.handlers.onSelect?.(node.id, {shift: event.shiftKey, field: row ? row.dataset.field : null});
    });
    g.addEventListener("dblclick", () => this.handlers.onOpen?.(node.id));
    g.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        this.handlers.onSelect?.(node.id, {shift: event.shiftKey});
      }
    });
    return g;
  }

  /** Mark the selected nodes (and field, in column mode). */
  select(ids, field) {
    for (const [id, el] of this.nodeEls) {
      el.classList.toggle("selected", ids.includes(id));
      el.setAttribute("aria-pressed", ids.includes(id) ? "true" : "false");
      for (const row of el.querySelectorAll("rect.frow")) {
        row.classList.toggle("hl", Boolean(field) && ids[0] === id && row.parentNode.dataset.field === field);
      }
    }
  }

  /** Highlight `nodes` and `edges` (Sets of ids and of "source>target"); dim or hide the rest. */
  highlight(nodes, edges, {hideOthers = false} = {}) {
    for (const [id, el] of this.nodeEls) {
      const on = !nodes || nodes.has(id);
      el.classList.toggle("dim", !on && !hideOthers);
      el.style.display = !on && hideOthers ? "none" : "";
    }
    for (const [edge, el] of this.edgeEls) {
      const on = Boolean(edges) && edges.has(`${edge.source}>${edge.target}`);
      el.classList.toggle("hl", on);
      el.setAttribute("marker-end", on ? "url(#arrow-hl)" : "url(#arrow)");
      el.classList.toggle("dim", Boolean(edges) && !on && !hideOthers);
      el.style.display = Boolean(edges) && !on && hideOthers ? "none" : "";
    }
  }

  // -- pan and zoom ----------------------------------------------------------------------------
  /** Move the view; wheel and pointer events faster than the screen's frames share one redraw. */
  apply() {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => {
      this.pending = 0;
      this.world.setAttribute("transform", `translate(${this.tx},${this.ty}) scale(${this.scale})`);
    });
  }

  /** Show the whole graph; with `focus`, when the whole graph would be too small to read,
   * show that node at a readable size instead. */
  fit(focus) {
    const box = this.svg.getBoundingClientRect();
    if (!this.bounds || !box.width) return;
    const pad = 30;
    const whole = Math.min(1.2, (box.width - pad * 2) / Math.max(1, this.bounds.width),
      (box.height - pad * 2) / Math.max(1, this.bounds.height));
    if (focus && whole < READABLE && this.positions.has(focus)) {
      this.scale = READABLE;
      this.zoomTo(focus);
      return;
    }
    this.scale = Math.max(0.05, whole);
    this.tx = (box.width - this.bounds.width * this.scale) / 2;
    this.ty = (box.height - this.bounds.height * this.scale) / 2;
    this.apply();
  }

  zoomBy(factor, cx, cy) {
    const box = this.svg.getBoundingClientRect();
    const x = cx ?? box.width / 2, y = cy ?? box.height / 2;
    const next = Math.min(4, Math.max(0.05, this.scale * factor));
    this.tx = x - ((x - this.tx) * next) / this.scale;
    this.ty = y - ((y - this.ty) * next) / this.scale;
    this.scale = next;
    this.apply();
  }

  /** Centre the view on a node at a readable zoom. */
  zoomTo(id) {
    const place = this.positions && this.positions.get(id);
    if (!place) return;
    const box = this.svg.getBoundingClientRect();
    this.scale = Math.max(this.scale, READABLE);
    this.tx = box.width / 2 - (place.x + place.width / 2) * this.scale;
    this.ty = box.height / 2 - (place.y + place.height / 2) * this.scale;
    this.apply();
  }

  bindPanZoom() {
    const pointers = new Map();
    let last = null, pinch = null;
    this.svg.addEventListener("pointerdown", (event) => {
      if (event.target.closest(".expander")) return;
      pointers.set(event.pointerId, {x: event.clientX, y: event.clientY});
      this.moved = false;
      last = {x: event.clientX, y: event.clientY};
      if (pointers.size === 2) {
        const [p, q] = [...pointers.values()];
        pinch = Math.hypot(p.x - q.x, p.y - q.y);
      }
    });
    this.svg.addEventListener("pointermove", (event) => {
      if (!pointers.has(event.pointerId)) return;
      pointers.set(event.pointerId, {x: event.clientX, y: event.clientY});
      if (pointers.size === 2 && pinch) {
        const [p, q] = [...pointers.values()];
        const distance = Math.hypot(p.x - q.x, p.y - q.y);
        const box = this.svg.getBoundingClientRect();
        this.zoomBy(distance / pinch, (p.x + q.x) / 2 - box.left, (p.y + q.y) / 2 - box.top);
        pinch = distance;
        this.moved = true;
        return;
      }
      const dx = event.clientX - last.x, dy = event.clientY - last.y;
      if (!this.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      if (!this.moved) this.svg.setPointerCapture(event.pointerId); // a drag, not a click: keep it
      this.moved = true;
      this.svg.classList.add("dragging");
      this.tx += dx;
      this.ty += dy;
      last = {x: event.clientX, y: event.clientY};
      this.apply();
    });
    const end = (event) => {
      pointers.delete(event.pointerId);
      if (pointers.size < 2) pinch = null;
      this.svg.classList.remove("dragging");
      setTimeout(() => { this.moved = false; }, 0);
    };
    this.svg.addEventListener("pointerup", end);
    this.svg.addEventListener("pointercancel", end);
    this.svg.addEventListener("wheel", (event) => {
      event.preventDefault();
      const box = this.svg.getBoundingClientRect();
      this.zoomBy(Math.exp(-event.deltaY * 0.0015), event.clientX - box.left, event.clientY - box.top);
    }, {passive: false});
    this.svg.addEventListener("keydown", (event) => {
      if (event.target !== this.svg) return;
      const step = 60;
      const moves = {ArrowLeft: [step, 0], ArrowRight: [-step, 0], ArrowUp: [0, step], ArrowDown: [0, -step]};
      if (moves[event.key]) {
        this.tx += moves[event.key][0];
        this.ty += moves[event.key][1];
        this.apply();
      } else if (event.key === "+" || event.key === "=") this.zoomBy(1.25);
      else if (event.key === "-") this.zoomBy(0.8);
      else if (event.key === "0") this.fit();
      else return;
      event.preventDefault();
    });
  }

  // -- export ------------------------------------------------------------------------------------
  /** The graph as a standalone SVG document, coloured as on screen. */
  exportSvg() {
    const styles = getComputedStyle(document.documentElement);
    const names = ["--bg", "--panel", "--text", "--muted", "--border", "--accent", "--ok", "--fail", "--run",
      "--abort", "--new", "--dataset", "--job", "--field", "--edge", "--hl"];
    const vars = names.map((name) => `${name}:${styles.getPropertyValue(name).trim()}`).join(";");
    const rules = [];
    for (const sheet of document.styleSheets) {
      for (const rule of sheet.cssRules) {
        if (/^\.(node|edge|arrow)/.test(rule.selectorText || "")) rules.push(rule.cssText);
      }
    }
    const pad = 20;
    const clone = this.svg.cloneNode(true);
    clone.setAttribute("xmlns", "http://www.w3.org/2000/svg");
    clone.setAttribute("viewBox", `${-pad} ${-pad} ${this.bounds.width + pad * 2} ${this.bounds.height + pad * 2}`);
    clone.setAttribute("width", String(Math.ceil(this.bounds.width + pad * 2)));
    clone.setAttribute("height", String(Math.ceil(this.bounds.height + pad * 2)));
    clone.querySelector(".world").removeAttribute("transform");
    const style = document.createElementNS("http://www.w3.org/2000/svg", "style");
    style.textContent = `svg{${vars};font-family:system-ui,sans-serif;background:${styles.getPropertyValue("--bg")}}
${rules.join("\n")}`;
    clone.prepend(style);
    return new XMLSerializer().serializeToString(clone);
  }

  /** The graph as a PNG image (a Blob), drawn from the exported SVG. */
  exportPng() {
    const svg = this.exportSvg();
    const url = URL.createObjectURL(new Blob([svg], {type: "image/svg+xml"}));
    return new Promise((resolve, reject) => {
      const image = new Image();
      image.onload = () => {
        const canvas = document.createElement("canvas");
        const ratio = Math.min(2, 16000 / Math.max(image.width, image.height));
        canvas.width = Math.ceil(image.width * ratio);
        canvas.height = Math.ceil(image.height * ratio);
        const context = canvas.getContext("2d");
        context.scale(ratio, ratio);
        context.drawImage(image, 0, 0);
        URL.revokeObjectURL(url);
        canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("the image is too large"))), "image/png");
      };
      image.onerror = () => reject(new Error("the SVG could not be drawn"));
      image.src = url;
    });
  }
}
