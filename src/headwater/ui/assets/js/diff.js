// Differences between two versions, shown line by line: SQL, schemas, code locations, inputs and outputs.
import {h} from "./dom.js";

/** The lines of `before` and `after` as [kind, line] with kind " ", "+" or "-" (longest common subsequence). */
export function diffLines(before, after) {
  const a = before, b = after;
  const n = a.length, m = b.length;
  const common = Array.from({length: n + 1}, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      common[i][j] = a[i] === b[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { out.push([" ", a[i]]); i += 1; j += 1; }
    else if (common[i + 1][j] >= common[i][j + 1]) { out.push(["-", a[i]]); i += 1; }
    else { out.push(["+", b[j]]); j += 1; }
  }
  while (i < n) out.push(["-", a[i++]]);
  while (j < m) out.push(["+", b[j++]]);
  return out;
}

/** A <pre> of the differences; `null` when nothing changed. */
export function diffView(before, after) {
  const lines = diffLines(before, after);
  if (lines.every(([kind]) => kind === " ")) return null;
  return h("pre", {class: "diff"}, lines.map(([kind, line]) => h("div", {
    class: kind === "+" ? "diff-add" : kind === "-" ? "diff-del" : null,
    "aria-label": kind === "+" ? "added" : kind === "-" ? "removed" : null,
  }, `${kind} ${line}`)));
}

export const schemaLines = (fields) => (fields || []).map((f) => `${f.name}: ${f.type || "?"}`);
