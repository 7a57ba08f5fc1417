//! Headwater's lean validation path (`headwater/events/lean.py`), compiled: the common RunEvent
//! of a batch, or of one body, accepted without a Python bytecode per field.
//!
//! It does what `lean._validate` does and no more, and gives back the same `Event`: the array is
//! read in one pass (scan.rs: the core's fields typed; the job, the inputs, the outputs and each
//! facets container kept as their bytes); each distinct part and container is judged here once and its
//! verdict kept by its exact bytes, lean.py's functions (the hooks) judging each facet value it
//! has not seen and whatever this code leaves; the canonical JSON (sorted keys, orjson's escapes)
//! is hashed into the content hash and the eventId, and the core is written beside it. An array
//! is decoded and hashed without the GIL.
//!
//! Anything it cannot vouch for — a field it does not know, a verdict with warnings, a time it
//! does not read itself and the hook refuses, an event kept whole, a hook's exception — is left to
//! Python: `None` for that event (lean.py's path then takes it, and `validate_event` after it), or
//! for the whole array when the array does not decode. tests/events/test_lean.py and
//! test_lean_native.py check that both give the same events.

mod compact; // the pipeline's compactor (headwater/pipeline/compact.py), beside the validation
mod decoded;
mod flat;
mod json;
mod scan;
mod times;
mod verdicts;

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use sha2::{Digest, Sha256};

use decoded::{deletable, RunEvent, MAX_NAME_BYTES};
use json::{push_key, push_string, Assembly};
use times::{
    event_id, hex, is_uuid, minute_name, utc_form, MAX_TICKS, TICKS_PER_MINUTE, TICKS_PER_SECOND,
};
use verdicts::{Kept, State, Value, Verdict, SMALL_MAX};

const FLAT_URLS_MAX: usize = 1_000; // definitions kept (flat_facets._MAX_URLS)

/// facet_refs.facet_hash: 128 bits of the SHA-256 of a facet's canonical bytes, in 22 characters
/// of URL-safe base64.
fn facet_hash(canonical: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let digest = Sha256::digest(canonical);
    let mut out = String::with_capacity(22);
    for chunk in digest[..16].chunks(3) {
        let mut word = [0u8; 3];
        word[..chunk.len()].copy_from_slice(chunk);
        let bits = u32::from(word[0]) << 16 | u32::from(word[1]) << 8 | u32::from(word[2]);
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(bits >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

// -- the hooks into lean.py ------------------------------------------------------------------------

struct Hooks {
    part: PyObject,           // VERDICTS.part(name, raw) -> Part
    container: PyObject,      // VERDICTS.container(raw, kind) -> ContainerVerdict
    verdict: PyObject,        // VERDICTS.verdict(raw, kind) -> Verdict
    parent_ids: PyObject,     // _parent_ids(raw) -> (parent, root)
    names_run: PyObject,      // _names_a_run_event(url) -> bool
    parse_time: PyObject,     // times.parse_event_time(value) -> ticks
    fragment_bytes: PyObject, // orjson.dumps: a Fragment's bytes
    event: PyObject,          // the Event class
    flat: PyObject,           // flat_facets.definition(url) -> Definition | None
    inline_bytes: usize,      // facet_refs.INLINE_BYTES
}

/// One event's pieces after the lookups, before hashing.
struct Assembled {
    canonical: Vec<u8>,
    core: Vec<u8>,
    ticks: i64,
    event_type: Option<String>,
    run_id: String,
    parent_run_id: Option<String>,
    root_run_id: Option<String>,
    job: (String, String),
    producer: String,
    values: Vec<PyObject>,
}

#[pyclass(module = "headwater.events._lean_native")]
struct Lean {
    hooks: Hooks,
    state: Mutex<State>,
}

impl Lean {
    /// The bytes of an orjson.Fragment, or None for None.
    fn fragment(&self, py: Python, fragment: &PyAny) -> PyResult<Option<Vec<u8>>> {
        if fragment.is_none() {
            return Ok(None);
        }
        self.bytes_of(py, fragment).map(Some)
    }

    fn bytes_of(&self, py: Python, fragment: &PyAny) -> PyResult<Vec<u8>> {
        let dumped = self.hooks.fragment_bytes.call1(py, (fragment,))?;
        Ok(dumped.as_ref(py).downcast::<PyBytes>()?.as_bytes().to_vec())
    }

    /// The verdict of `raw` kept in the cache `which` picks, else `judge`'s (kept from its second
    /// sighting on).
    fn cached<V>(
        &self,
        state: &mut State,
        which: fn(&mut State) -> &mut Kept<V>,
        raw: &[u8],
        judge: impl FnOnce(&mut State) -> PyResult<V>,
    ) -> PyResult<Arc<V>> {
        if let Some(found) = which(state).get(raw) {
            return Ok(found);
        }
        let found = Arc::new(judge(state)?);
        let kept = which(state);
        if kept.seen_before(raw) {
            kept.keep(raw.to_vec(), Arc::clone(&found));
        }
        Ok(found)
    }

    /// A facet value's verdict (VERDICTS.verdict's, asked once per distinct value).
    fn value(
        &self,
        py: Python,
        state: &mut State,
        raw: &[u8],
        kind: &'static str,
    ) -> PyResult<Arc<Value>> {
        let which: fn(&mut State) -> &mut Kept<Value> = if deletable(kind) {
            |s| &mut s.deletable_values
        } else {
            |s| &mut s.values
        };
        self.cached(state, which, raw, |state| {
            if let Some(value) = self.flat_value(py, state, raw, kind)? {
                return Ok(value);
            }
            let found = self
                .hooks
                .verdict
                .call1(py, (PyBytes::new(py, raw), kind))?;
            let verdict: &PyTuple = found.as_ref(py).downcast()?;
            let stored = verdict.get_item(2)?;
            Ok(Value {
                canonical: self.bytes_of(py, verdict.get_item(0)?)?,
                clean: verdict.get_item(1)?.len()? == 0,
                stored: if stored.is_none() {
                    None
                } else {
                    Some((stored.get_item(0)?.extract()?, stored.into_py(py)))
                },
            })
        })
    }

    /// The verdict of a facet value of a flat published definition that flat.rs vouches for,
    /// as lean.FacetVerdicts._judge would give it; None for anything else.
    fn flat_value(
        &self,
        py: Python,
        state: &mut State,
        raw: &[u8],
        kind: &'static str,
    ) -> PyResult<Option<Value>> {
        let url = match flat::schema_url(raw) {
            Some(url) => url,
            None => return Ok(None),
        };
        let definition = match state.flats.get(url) {
            Some(found) => found.clone(),
            None => {
                let found = self.hooks.flat.call1(py, (url,))?;
                let read = if found.is_none(py) {
                    None
                } else {
                    flat::Flat::new(found.extract(py)?).map(Arc::new)
                };
                if state.flats.len() >= FLAT_URLS_MAX {
                    state.flats.clear();
                }
                state.flats.insert(url.to_string(), read.clone());
                read
            }
        };
        let canonical = match definition.and_then(|d| flat::canonical(raw, &d)) {
            Some(canonical) => canonical,
            None => return Ok(None),
        };
        // facet_refs.kept_inline and facet_hash: a small value of a run, an input or an output
        // stays in its event's core; any other is stored by its hash
        let deletable = deletable(kind);
        let hash = if !deletable && canonical.len() <= self.hooks.inline_bytes {
            String::new()
        } else {
            facet_hash(&canonical)
        };
        let stored = (
            hash.clone(),
            PyBytes::new(py, &canonical),
            PyTuple::empty(py),
            deletable,
        )
            .into_py(py);
        Ok(Some(Value {
            canonical,
            clean: true,
            stored: Some((hash, stored)),
        }))
    }

    /// A facets container's verdict (lean.ContainerVerdict): judged here facet by facet, or by
    /// VERDICTS.container when it is anything but an object of distinct names within their limit.
    fn container(
        &self,
        py: Python,
        state: &mut State,
        raw: &[u8],
        kind: &'static str,
    ) -> PyResult<Arc<Verdict>> {
        let which: fn(&mut State) -> &mut Kept<Verdict> = if deletable(kind) {
            |s| &mut s.deletable_containers
        } else {
            |s| &mut s.containers
        };
        self.cached(state, which, raw, |state| {
            match self.judge_container(py, state, raw, kind)? {
                Some(verdict) => Ok(verdict),
                None => self.hook_container(py, raw, kind),
            }
        })
    }

    fn judge_container(
        &self,
        py: Python,
        state: &mut State,
        raw: &[u8],
        kind: &'static str,
    ) -> PyResult<Option<Verdict>> {
        let pairs = match scan::pairs(raw) {
            Some(pairs) => pairs,
            None => return Ok(None),
        };
        let mut names: Vec<&str> = pairs.iter().map(|(name, _)| name.as_ref()).collect();
        names.sort_unstable();
        if names.windows(2).any(|w| w[0] == w[1]) || names.iter().any(|n| n.len() > MAX_NAME_BYTES)
        {
            return Ok(None);
        }
        let mut judged = Vec::with_capacity(pairs.len());
        for (_, value) in &pairs {
            judged.push(self.value(py, state, value, kind)?);
        }
        let mut order: Vec<usize> = (0..pairs.len()).collect();
        order.sort_unstable_by(|a, b| pairs[*a].0.cmp(&pairs[*b].0));
        let mut canonical = Vec::with_capacity(raw.len());
        let mut first = true;
        canonical.push(b'{');
        for i in order {
            push_key(&mut canonical, &mut first, &pairs[i].0);
            canonical.extend_from_slice(&judged[i].canonical);
        }
        canonical.push(b'}');
        let whole = judged.iter().all(|v| v.stored.is_some());
        let mut core = Vec::with_capacity(64 * pairs.len() + 2);
        let mut values = Vec::new();
        let mut first = true;
        core.push(b'{');
        for ((name, _), value) in pairs.iter().zip(&judged) {
            push_key(&mut core, &mut first, name);
            match &value.stored {
                Some((hash, stored)) if !hash.is_empty() => {
                    push_string(&mut core, hash);
                    values.push(stored.clone_ref(py));
                }
                _ => core.extend_from_slice(&value.canonical), // kept inline
            }
        }
        core.push(b'}');
        let parent = pairs
            .iter()
            .find(|(name, _)| name == "parent")
            .map(|(_, v)| v.to_vec());
        Ok(Some(Verdict {
            canonical,
            core: if whole { Some(core) } else { None },
            values: if whole {
                Some(PyTuple::new(py, values).into_py(py))
            } else {
                None
            },
            clean: judged.iter().all(|v| v.clean),
            parent,
            identity: None,
        }))
    }

    fn hook_container(&self, py: Python, raw: &[u8], kind: &str) -> PyResult<Verdict> {
        let found = self
            .hooks
            .container
            .call1(py, (PyBytes::new(py, raw), kind))?;
        let container: &PyTuple = found.as_ref(py).downcast()?;
        let parent = container.get_item(2)?;
        let core = container.get_item(3)?;
        let values = container.get_item(4)?;
        Ok(Verdict {
            canonical: self.bytes_of(py, container.get_item(0)?)?,
            core: self.fragment(py, core)?,
            values: optional(py, values),
            clean: container.get_item(1)?.len()? == 0,
            parent: if parent.is_none() {
                None
            } else {
                Some(parent.downcast::<PyBytes>()?.as_bytes().to_vec())
            },
            identity: None,
        })
    }

    /// A part's verdict (lean.Part of the job, the inputs or the outputs): judged here, or by
    /// VERDICTS.part when it is anything but what lean._judge_part takes without a warning.
    fn part(
        &self,
        py: Python,
        state: &mut State,
        name: &'static str,
        raw: &[u8],
    ) -> PyResult<Arc<Verdict>> {
        let which: fn(&mut State) -> &mut Kept<Verdict> = match name {
            "job" => |s| &mut s.job,
            "inputs" => |s| &mut s.inputs,
            _ => |s| &mut s.outputs,
        };
        self.cached(state, which, raw, |state| {
            let judged = if name == "job" {
                self.judge_job(py, state, raw)?
            } else {
                self.judge_datasets(py, state, name, raw)?
            };
            match judged {
                Some(verdict) => Ok(verdict),
                None => self.hook_part(py, name, raw),
            }
        })
    }

    fn judge_job(&self, py: Python, state: &mut State, raw: &[u8]) -> PyResult<Option<Verdict>> {
        let job = match scan::entity(raw) {
            Some(job)
                if job.within_limits()
                    && job.input_facets.is_none()
                    && job.output_facets.is_none() =>
            {
                job
            }
            _ => return Ok(None),
        };
        let facets = match job.facets {
            Some(facets) => Some(self.container(py, state, facets, "job")?),
            None => None,
        };
        let mut part = Assembly::new(false);
        part.dataset(py, &job.namespace, &job.name, facets.as_deref(), None, "");
        Ok(part.verdict(py, Some((job.namespace.to_string(), job.name.to_string()))))
    }

    fn judge_datasets(
        &self,
        py: Python,
        state: &mut State,
        name: &str,
        raw: &[u8],
    ) -> PyResult<Option<Verdict>> {
        let items = match scan::entities(raw) {
            Some(items) => items,
            None => return Ok(None),
        };
        let inputs = name == "inputs";
        let (extra_key, kind) = if inputs {
            ("inputFacets", "input")
        } else {
            ("outputFacets", "output")
        };
        if items
            .iter()
            .any(|item| !item.within_limits() || item.extras(inputs).1.is_some())
        {
            return Ok(None);
        }
        let mut part = Assembly::new(true);
        for item in &items {
            let facets = match item.facets {
                Some(facets) => Some(self.container(py, state, facets, "dataset")?),
                None => None,
            };
            let extra = match item.extras(inputs).0 {
                Some(extra) => Some(self.container(py, state, extra, kind)?),
                None => None,
            };
            part.dataset(
                py,
                &item.namespace,
                &item.name,
                facets.as_deref(),
                extra.as_deref(),
                extra_key,
            );
        }
        Ok(part.verdict(py, None))
    }

    fn hook_part(&self, py: Python, name: &str, raw: &[u8]) -> PyResult<Verdict> {
        let found = self.hooks.part.call1(py, (name, PyBytes::new(py, raw)))?;
        let part: &PyTuple = found.as_ref(py).downcast()?;
        let core = part.get_item(1)?;
        let values = part.get_item(4)?;
        let identity = part.get_item(5)?;
        Ok(Verdict {
            canonical: self.bytes_of(py, part.get_item(0)?)?,
            core: self.fragment(py, core)?,
            values: optional(py, values),
            clean: part.get_item(2)?.len()? == 0 && part.get_item(3)?.len()? == 0,
            parent: None,
            identity: if identity.is_none() {
                None
            } else {
                Some(identity.extract()?)
            },
        })
    }

    fn parent_ids(
        &self,
        py: Python,
        state: &mut State,
        raw: &[u8],
    ) -> PyResult<(Option<String>, Option<String>)> {
        if let Some(found) = state.parents.get(raw) {
            return Ok(found.clone());
        }
        let found: (Option<String>, Option<String>) = self
            .hooks
            .parent_ids
            .call1(py, (PyBytes::new(py, raw),))?
            .extract(py)?;
        if state.parents.len() >= SMALL_MAX {
            state.parents.clear();
        }
        state.parents.insert(raw.to_vec(), found.clone());
        Ok(found)
    }

    fn names_a_run_event(&self, py: Python, state: &mut State, url: &str) -> PyResult<bool> {
        if let Some(found) = state.run_urls.get(url) {
            return Ok(*found);
        }
        let found: bool = self.hooks.names_run.call1(py, (url,))?.extract(py)?;
        if state.run_urls.len() >= SMALL_MAX {
            state.run_urls.clear();
        }
        state.run_urls.insert(url.to_owned(), found);
        Ok(found)
    }

    /// times.parse_event_time: the common form read here against the minutes times.py has read,
    /// anything else (and each new minute) by times.py.
    fn ticks(&self, py: Python, state: &mut State, value: &str) -> PyResult<i64> {
        let (minute, into) = match utc_form(value) {
            Some(found) => found,
            None => return self.hooks.parse_time.call1(py, (value,))?.extract(py),
        };
        if let Some(base) = state.minutes.get(&minute) {
            if base + into <= MAX_TICKS {
                return Ok(base + into);
            }
        }
        let ticks: i64 = self.hooks.parse_time.call1(py, (value,))?.extract(py)?;
        if state.minutes.len() >= SMALL_MAX {
            state.minutes.clear();
        }
        state.minutes.insert(minute, ticks - into);
        Ok(ticks)
    }

    /// times.format_ticks.
    fn format_ticks(&self, state: &mut State, ticks: i64) -> String {
        let (minutes, rest) = (
            ticks.div_euclid(TICKS_PER_MINUTE),
            ticks.rem_euclid(TICKS_PER_MINUTE),
        );
        if !state.minute_names.contains_key(&minutes) {
            if state.minute_names.len() >= SMALL_MAX {
                state.minute_names.clear();
            }
            state.minute_names.insert(minutes, minute_name(minutes));
        }
        let name = &state.minute_names[&minutes];
        format!(
            "{name}:{:02}.{:07}Z",
            rest / TICKS_PER_SECOND,
            rest % TICKS_PER_SECOND
        )
    }

    /// lean._validate up to the hash: None when the event is Python's to judge.
    fn assemble(
        &self,
        py: Python,
        state: &mut State,
        event: &RunEvent,
    ) -> PyResult<Option<Assembled>> {
        if let Some(url) = &event.schema_url {
            if !self.names_a_run_event(py, state, url)? {
                return Ok(None);
            }
        }
        if let Some(kind) = &event.event_type {
            if !matches!(
                kind.as_ref(),
                "START" | "RUNNING" | "COMPLETE" | "ABORT" | "FAIL" | "OTHER"
            ) {
                return Ok(None);
            }
        }
        if !is_uuid(&event.run_id) {
            return Ok(None);
        }
        let ticks = self.ticks(py, state, &event.event_time)?;
        let mut values: Vec<PyObject> = Vec::new();
        let mut add = |verdict: &Verdict| -> PyResult<bool> {
            match &verdict.values {
                Some(tuple) if verdict.clean && verdict.core.is_some() => {
                    values.extend(
                        tuple
                            .as_ref(py)
                            .downcast::<PyTuple>()?
                            .iter()
                            .map(|v| v.into_py(py)),
                    );
                    Ok(true)
                }
                _ => Ok(false), // warnings, or an event kept whole: Python's
            }
        };
        let run_facets = match event.run_facets {
            Some(facets) => {
                let found = self.container(py, state, facets, "run")?;
                if !add(&found)? {
                    return Ok(None);
                }
                Some(found)
            }
            None => None,
        };
        let mut parts: [Option<Arc<Verdict>>; 3] = [None, None, None];
        let given = [Some(event.job), event.inputs, event.outputs];
        for (i, (name, part)) in ["job", "inputs", "outputs"]
            .into_iter()
            .zip(given)
            .enumerate()
        {
            let part = match part {
                Some(part) => part,
                None => continue,
            };
            let found = match &event.known[i] {
                Some(known) => Arc::clone(known),
                None => self.part(py, state, name, part)?,
            };
            if !add(&found)? {
                return Ok(None);
            }
            parts[i] = Some(found);
        }
        let [job, inputs, outputs] = parts;
        let job = job.expect("a job");
        let identity = match job.identity.clone() {
            Some(identity) => identity,
            None => return Ok(None),
        };
        let (parent_run_id, root_run_id) = match run_facets.as_ref().and_then(|f| f.parent.as_ref())
        {
            Some(parent) => self.parent_ids(py, state, parent)?,
            None => (None, None),
        };

        let (time, producer, run_id) = (&event.event_time, &event.producer, &event.run_id);
        let mut canonical = Vec::with_capacity(16 * 1024);
        let mut first = true;
        canonical.push(b'{');
        push_key(&mut canonical, &mut first, "eventTime");
        push_string(&mut canonical, time);
        if let Some(kind) = &event.event_type {
            push_key(&mut canonical, &mut first, "eventType");
            push_string(&mut canonical, kind);
        }
        if let Some(part) = &inputs {
            push_key(&mut canonical, &mut first, "inputs");
            canonical.extend_from_slice(&part.canonical);
        }
        push_key(&mut canonical, &mut first, "job");
        canonical.extend_from_slice(&job.canonical);
        if let Some(part) = &outputs {
            push_key(&mut canonical, &mut first, "outputs");
            canonical.extend_from_slice(&part.canonical);
        }
        push_key(&mut canonical, &mut first, "producer");
        push_string(&mut canonical, producer);
        push_key(&mut canonical, &mut first, "run");
        canonical.push(b'{');
        let mut inner = true;
        if let Some(facets) = &run_facets {
            push_key(&mut canonical, &mut inner, "facets");
            canonical.extend_from_slice(&facets.canonical);
        }
        push_key(&mut canonical, &mut inner, "runId");
        push_string(&mut canonical, run_id);
        canonical.push(b'}');
        if let Some(url) = &event.schema_url {
            push_key(&mut canonical, &mut first, "schemaURL");
            push_string(&mut canonical, url);
        }
        canonical.push(b'}');

        fn core_of(verdict: &Verdict) -> &[u8] {
            verdict.core.as_deref().expect("checked by add")
        }
        let mut core = Vec::with_capacity(4096);
        let mut first = true;
        core.push(b'{');
        push_key(&mut core, &mut first, "eventTime");
        push_string(&mut core, time);
        push_key(&mut core, &mut first, "producer");
        push_string(&mut core, producer);
        push_key(&mut core, &mut first, "run");
        core.push(b'{');
        let mut inner = true;
        push_key(&mut core, &mut inner, "runId");
        push_string(&mut core, run_id);
        if let Some(facets) = &run_facets {
            push_key(&mut core, &mut inner, "facets");
            core.extend_from_slice(core_of(facets));
        }
        core.push(b'}');
        push_key(&mut core, &mut first, "job");
        core.extend_from_slice(core_of(&job));
        for (key, part) in [("inputs", &inputs), ("outputs", &outputs)] {
            if let Some(part) = part {
                push_key(&mut core, &mut first, key);
                core.extend_from_slice(core_of(part));
            }
        }
        if let Some(kind) = &event.event_type {
            push_key(&mut core, &mut first, "eventType");
            push_string(&mut core, kind);
        }
        if let Some(url) = &event.schema_url {
            push_key(&mut core, &mut first, "schemaURL");
            push_string(&mut core, url);
        }
        core.push(b'}');

        Ok(Some(Assembled {
            canonical,
            core,
            ticks,
            event_type: event.event_type.as_ref().map(|k| k.to_string()),
            run_id: run_id.to_ascii_lowercase(),
            parent_run_id,
            root_run_id,
            job: identity,
            producer: producer.to_string(),
            values,
        }))
    }

    /// The Event of an assembled event and its content hash.
    fn build(
        &self,
        py: Python,
        state: &mut State,
        event: Assembled,
        digest: &[u8],
    ) -> PyResult<PyObject> {
        let root = match event.root_run_id {
            Some(root) if !root.is_empty() => root,
            _ => event.run_id.clone(),
        };
        let args: Vec<PyObject> = vec![
            "run".into_py(py),
            event_id(event.ticks, digest).into_py(py),
            self.format_ticks(state, event.ticks).into_py(py),
            event.event_type.into_py(py),
            event.run_id.into_py(py),
            event.parent_run_id.into_py(py),
            root.into_py(py),
            event.job.0.into_py(py),
            event.job.1.into_py(py),
            py.None(),
            py.None(),
            event.producer.into_py(py),
            hex(digest).into_py(py),
            py.None(), // no payload: the store keeps the core and the facet values
            PyTuple::empty(py).into_py(py),
            PyTuple::empty(py).into_py(py),
            PyBytes::new(py, &event.core).into_py(py),
            PyTuple::new(py, event.values).into_py(py),
        ];
        self.hooks.event.call1(py, PyTuple::new(py, args))
    }

    /// Assembled events hashed (an array's without the GIL: one hand-over a batch, where one an
    /// event would cost more than it gives, ids.py), then built.
    fn finish(
        &self,
        py: Python,
        state: &mut State,
        assembled: Vec<Option<Assembled>>,
        release: bool,
    ) -> PyResult<Vec<PyObject>> {
        let canonicals: Vec<&[u8]> = assembled
            .iter()
            .map(|a| a.as_ref().map_or(&[][..], |a| a.canonical.as_slice()))
            .collect();
        let hash = || -> Vec<[u8; 32]> {
            canonicals
                .iter()
                .map(|c| Sha256::digest(c).into())
                .collect()
        };
        let digests = if release {
            py.allow_threads(hash)
        } else {
            hash()
        };
        let mut built = Vec::with_capacity(assembled.len());
        for (found, digest) in assembled.into_iter().zip(digests) {
            built.push(match found {
                Some(event) => self.build(py, state, event, &digest)?,
                None => py.None(),
            });
        }
        Ok(built)
    }
}

#[pymethods]
impl Lean {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        part: PyObject,
        container: PyObject,
        verdict: PyObject,
        parent_ids: PyObject,
        names_run: PyObject,
        parse_time: PyObject,
        fragment_bytes: PyObject,
        event: PyObject,
        flat: PyObject,
        inline_bytes: usize,
    ) -> Self {
        Lean {
            hooks: Hooks {
                part,
                container,
                verdict,
                parent_ids,
                names_run,
                parse_time,
                fragment_bytes,
                event,
                flat,
                inline_bytes,
            },
            state: Mutex::new(State::default()),
        }
    }

    /// Forget every verdict and time read (lean.FacetVerdicts.clear).
    fn clear(&self) {
        if let Ok(mut state) = self.state.lock() {
            *state = State::default();
        }
    }

    /// The events of a JSON array (each an Event without payload, or None: Python's to judge),
    /// or None when the array does not decode as RunEvents' cores (or another thread holds this
    /// path: Python's path then).
    fn validate_array(&self, py: Python, body: &[u8]) -> PyResult<Option<Vec<PyObject>>> {
        let mut state = match self.state.try_lock() {
            Ok(state) => state,
            Err(_) => return Ok(None),
        };
        let known: &State = &state;
        let events = match py.allow_threads(|| scan::array_of_events(body, known)) {
            Some(events) => events,
            None => return Ok(None),
        };
        let mut assembled = Vec::with_capacity(events.len());
        for event in &events {
            assembled.push(
                self.assemble(py, &mut state, event)
                    .or_else(skipped)?,
            );
        }
        self.finish(py, &mut state, assembled, true).map(Some)
    }

    /// The Event of one JSON object, or None (Python's to judge). Like an array's, it has no
    /// payload: the store keeps its core and facet values, and a copy of its bytes as a Python
    /// string cost a microsecond and their size in memory an event (a Kafka consumer's batches).
    /// Its bytes are UTF-8 as an array's are: the envelope's reader checks its strings, and each
    /// kept value is read whole by its judge the first time it is seen.
    fn validate_one(&self, py: Python, raw: &[u8]) -> PyResult<PyObject> {
        let mut state = match self.state.try_lock() {
            Ok(state) => state,
            Err(_) => return Ok(py.None()),
        };
        let event = match scan::one_event(raw, &state) {
            Some(event) => event,
            None => return Ok(py.None()),
        };
        let assembled = self
            .assemble(py, &mut state, &event)
            .or_else(skipped)?;
        Ok(self
            .finish(py, &mut state, vec![assembled], false)?
            .pop()
            .expect("one"))
    }
}

/// `value` as a Python object, None for None.
fn optional(py: Python, value: &PyAny) -> Option<PyObject> {
    if value.is_none() {
        None
    } else {
        Some(value.into_py(py))
    }
}

/// A hook's exception: the event is Python's to judge (its path raises or explains it again).
fn skipped<T>(_: PyErr) -> PyResult<Option<T>> {
    Ok(None)
}

#[pymodule]
fn _lean_native(_py: Python, module: &PyModule) -> PyResult<()> {
    module.add_class::<Lean>()?;
    module.add_function(wrap_pyfunction!(compact::compact_core, module)?)?;
    Ok(())
}
