// Every request the UI makes goes through here: same origin only, JSON, the API key when the
// server asks for one (kept in this tab's sessionStorage, sent as `Authorization: Bearer`).

const KEY = "headwater.apiKey";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let asking = null; // one key prompt at a time, shared by the requests that wait for it

function askForKey(reason) {
  if (asking) return asking;
  const dialog = document.getElementById("key-dialog");
  const form = dialog.querySelector("form");
  dialog.querySelector(".key-error").textContent = reason || "";
  asking = new Promise((resolve) => {
    const done = () => {
      const key = form.elements.key.value.trim();
      form.elements.key.value = "";
      asking = null;
      if (key) sessionStorage.setItem(KEY, key);
      resolve(Boolean(key));
    };
    dialog.addEventListener("close", done, {once: true});
    dialog.showModal();
  });
  return asking;
}

/** GET `path` (with `params` as the query) and return its JSON; a 401 asks for a key and retries. */
export async function get(path, params, {signal} = {}) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    if (value === null || value === undefined || value === "") continue;
    for (const one of Array.isArray(value) ? value : [value]) query.append(key, String(one));
  }
  const url = query.toString() ? `${path}?${query}` : path;
  for (let attempt = 0; attempt < 4; attempt += 1) {
    const headers = {Accept: "application/json"};
    const key = sessionStorage.getItem(KEY);
    if (key) headers.Authorization = `Bearer ${key}`;
    const response = await fetch(url, {headers, signal, credentials: "omit"});
    if (response.status === 401 || response.status === 403) {
      const body = await response.json().catch(() => ({}));
      sessionStorage.removeItem(KEY);
      if (await askForKey(key ? body.message || "That key was refused." : "")) continue;
      throw new ApiError(response.status, body.message || "an API key is required");
    }
    const body = await response.json().catch(() => null);
    if (!response.ok) {
      throw new ApiError(response.status, (body && (body.message || body.error)) || response.statusText);
    }
    return body;
  }
  throw new ApiError(401, "no API key was accepted");
}

/** Like get, but a 404 answers null instead of throwing. */
export async function find(path, params, options) {
  try {
    return await get(path, params, options);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

const enc = encodeURIComponent;
export const paths = {
  dataset: (ns, name) => `/api/v1/namespaces/${enc(ns)}/datasets/${enc(name)}`,
  job: (ns, name) => `/api/v1/namespaces/${enc(ns)}/jobs/${enc(name)}`,
  run: (id) => `/api/v1/jobs/runs/${enc(id)}`,
  runEvents: (id) => `/api/atlas/v2/openlineage/runs/${enc(id)}`,
  warehouse: (scope) => `/api/warehouse/v1/lineage/${scope}`,
};
