// A layered, left-to-right layout for lineage graphs (data flows rightwards): break cycles, rank
// nodes by longest path, order each layer by barycentres to cut crossings, then place nodes near
// their neighbours without overlaps. Linear passes only, so 500+ nodes lay out in milliseconds.

/**
 * @param nodes [{id, width, height}]
 * @param edges [{source, target}] (ids; unknown ids and self loops are ignored)
 * @returns {positions: Map<id, {x, y, width, height, rank}>, width, height}
 */
export function layout(allNodes, edges, options = {}) {
  // nodes without edges (cut off by a cap, or filtered) go in a grid under the graph, not in a column
  const linked = new Set(edges.flatMap((e) => (e.source === e.target ? [] : [e.source, e.target])));
  const alone = allNodes.filter((node) => !linked.has(node.id));
  const placed = layered(allNodes.filter((node) => linked.has(node.id)), edges, options);
  if (!alone.length) return placed;
  const gap = options.nodeGap ?? 16;
  const across = Math.max(1, Math.ceil(Math.sqrt(alone.length)));
  const cell = Math.max(...alone.map((node) => node.width)) + gap;
  const row = Math.max(...alone.map((node) => node.height)) + gap;
  const top = placed.positions.size ? placed.height + 3 * gap : 0;
  alone.forEach((node, i) => {
    placed.positions.set(node.id, {x: (i % across) * cell, y: top + Math.floor(i / across) * row,
      width: node.width, height: node.height, rank: -1});
  });
  return {positions: placed.positions, width: Math.max(placed.width, across * cell - gap),
    height: top + Math.ceil(alone.length / across) * row - gap};
}

function layered(nodes, edges, {rankGap = 90, nodeGap = 16, sweeps = 6} = {}) {
  const n = nodes.length;
  const index = new Map(nodes.map((node, i) => [node.id, i]));
  const out = Array.from({length: n}, () => []);
  const into = Array.from({length: n}, () => []);
  const seen = new Set();
  for (const edge of edges) {
    const a = index.get(edge.source), b = index.get(edge.target);
    if (a === undefined || b === undefined || a === b || seen.has(`${a}>${b}`)) continue;
    seen.add(`${a}>${b}`);
    out[a].push(b);
    into[b].push(a);
  }

  // 1. Break cycles: an edge that closes a cycle in a depth-first walk is ignored when ranking.
  const state = new Uint8Array(n); // 0 new, 1 on the stack, 2 done
  const back = new Set();
  const order = [];
  const roots = [...nodes.keys()].sort((a, b) => into[a].length - into[b].length);
  for (const start of roots) {
    if (state[start]) continue;
    const stack = [[start, 0]];
    state[start] = 1;
    while (stack.length) {
      const top = stack[stack.length - 1];
      const [v, i] = top;
      if (i < out[v].length) {
        top[1] += 1;
        const w = out[v][i];
        if (state[w] === 1) back.add(`${v}>${w}`);
        else if (state[w] === 0) { state[w] = 1; stack.push([w, 0]); }
      } else {
        state[v] = 2;
        order.push(v);
        stack.pop();
      }
    }
  }
  order.reverse(); // a topological order of the graph without its back edges
  const fwd = (v) => out[v].filter((w) => !back.has(`${v}>${w}`));
  const bwd = (v) => into[v].filter((u) => !back.has(`${u}>${v}`));

  // 2. Ranks: longest path from the sources, then sources pulled next to their first consumer.
  const rank = new Int32Array(n);
  for (const v of order) for (const w of fwd(v)) rank[w] = Math.max(rank[w], rank[v] + 1);
  for (let k = order.length - 1; k >= 0; k -= 1) {
    const v = order[k];
    const next = fwd(v);
    if (!bwd(v).length && next.length) rank[v] = Math.min(...next.map((w) => rank[w])) - 1;
  }
  const lowest = n ? Math.min(...rank) : 0;
  const layers = [];
  for (const v of order) {
    rank[v] -= lowest;
    (layers[rank[v]] ||= []).push(v);
  }
  for (let r = 0; r < layers.length; r += 1) layers[r] ||= [];

  // 3. Order within layers: barycentre sweeps, rightwards on predecessors, leftwards on successors.
  const pos = new Float64Array(n);
  const renumber = (layer) => layer.forEach((v, i) => { pos[v] = i; });
  layers.forEach(renumber);
  const sweep = (layer, neighbours) => {
    const key = new Map();
    for (const v of layer) {
      const near = neighbours(v);
      key.set(v, near.length ? near.reduce((sum, w) => sum + pos[w], 0) / near.length : pos[v]);
    }
    layer.sort((a, b) => key.get(a) - key.get(b) || pos[a] - pos[b]);
    renumber(layer);
  };
  for (let round = 0; round < sweeps; round += 1) {
    for (let r = 1; r < layers.length; r += 1) sweep(layers[r], (v) => into[v]);
    for (let r = layers.length - 2; r >= 0; r -= 1) sweep(layers[r], (v) => out[v]);
  }

  // 4. Vertical places: stack each layer, then move nodes towards their neighbours' centres
  // while keeping the layer's order and gaps.
  const height = nodes.map((node) => node.height);
  const y = new Float64Array(n);
  for (const layer of layers) {
    let at = 0;
    for (const v of layer) { y[v] = at; at += height[v] + nodeGap; }
    const shift = (at - nodeGap) / 2;
    for (const v of layer) y[v] -= shift;
  }
  const centre = (v) => y[v] + height[v] / 2;
  const settle = (layer, neighbours) => {
    const want = layer.map((v) => {
      const near = neighbours(v);
      return near.length ? near.reduce((sum, w) => sum + centre(w), 0) / near.length - height[v] / 2 : y[v];
    });
    // keep the order: push down where needed, then pull up from the bottom, and average the two
    const down = want.slice();
    for (let i = 1; i < layer.length; i += 1) {
      down[i] = Math.max(down[i], down[i - 1] + height[layer[i - 1]] + nodeGap);
    }
    const up = want.slice();
    for (let i = layer.length - 2; i >= 0; i -= 1) {
      up[i] = Math.min(up[i], up[i + 1] - height[layer[i]] - nodeGap);
    }
    layer.forEach((v, i) => { y[v] = (down[i] + up[i]) / 2; });
    for (let i = 1; i < layer.length; i += 1) { // averaging may have brought two too close
      const v = layer[i], u = layer[i - 1];
      y[v] = Math.max(y[v], y[u] + height[u] + nodeGap);
    }
  };
  for (let round = 0; round < 4; round += 1) {
    for (let r = 1; r < layers.length; r += 1) settle(layers[r], (v) => into[v]);
    for (let r = layers.length - 2; r >= 0; r -= 1) settle(layers[r], (v) => out[v]);
  }

  // 5. Horizontal places: each layer as wide as its widest node.
  const positions = new Map();
  let x = 0;
  let top = Infinity, bottom = -Infinity;
  for (const [r, layer] of layers.entries()) {
    if (!layer.length) continue;
    const widest = Math.max(...layer.map((v) => nodes[v].width));
    for (const v of layer) {
      positions.set(nodes[v].id, {x: x + (widest - nodes[v].width) / 2, y: y[v], width: nodes[v].width, height: height[v], rank: r});
      top = Math.min(top, y[v]);
      bottom = Math.max(bottom, y[v] + height[v]);
    }
    x += widest + rankGap;
  }
  if (!positions.size) return {positions, width: 0, height: 0};
  for (const place of positions.values()) place.y -= top;
  return {positions, width: x - rankGap, height: bottom - top};
}
