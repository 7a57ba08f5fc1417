//! JSON as orjson writes it (compact, its escapes), and a part's canonical JSON and core being
//! written (lean._judge_part).

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::verdicts::Verdict;

// -- JSON as orjson writes it ----------------------------------------------------------------------

pub(crate) fn push_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escaped: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if escaped.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 0xf) as usize]);
        } else {
            out.extend_from_slice(escaped);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

pub(crate) fn push_key(out: &mut Vec<u8>, first: &mut bool, key: &str) {
    if !*first {
        out.push(b',');
    }
    *first = false;
    push_string(out, key);
    out.push(b':');
}

/// A part's canonical JSON and core being written (lean._judge_part): the job, or the list of
/// inputs or outputs.
pub(crate) struct Assembly {
    pub(crate) list: bool,
    pub(crate) canonical: Vec<u8>,
    pub(crate) core: Vec<u8>,
    pub(crate) values: Vec<PyObject>,
    pub(crate) whole: bool,
    pub(crate) clean: bool,
}

impl Assembly {
    pub(crate) fn new(list: bool) -> Self {
        let mut part = Assembly {
            list,
            canonical: Vec::with_capacity(4096),
            core: Vec::with_capacity(1024),
            values: Vec::new(),
            whole: true,
            clean: true,
        };
        if list {
            part.canonical.push(b'[');
            part.core.push(b'[');
        }
        part
    }

    pub(crate) fn dataset(
        &mut self,
        py: Python,
        namespace: &str,
        name: &str,
        facets: Option<&Verdict>,
        extra: Option<&Verdict>,
        extra_key: &str,
    ) {
        if self.list && self.canonical.len() > 1 {
            self.canonical.push(b',');
            self.core.push(b',');
        }
        let mut sorted: Vec<(&str, &[u8])> = Vec::with_capacity(4);
        let (mut namespace_json, mut name_json) = (Vec::new(), Vec::new());
        push_string(&mut namespace_json, namespace);
        push_string(&mut name_json, name);
        sorted.push(("namespace", &namespace_json));
        sorted.push(("name", &name_json));
        let mut first = true;
        self.core.push(b'{');
        push_key(&mut self.core, &mut first, "namespace");
        self.core.extend_from_slice(&namespace_json);
        push_key(&mut self.core, &mut first, "name");
        self.core.extend_from_slice(&name_json);
        for (key, container) in [("facets", facets), (extra_key, extra)] {
            let container = match container {
                Some(container) => container,
                None => continue,
            };
            sorted.push((key, &container.canonical));
            self.clean &= container.clean;
            match (&container.core, &container.values) {
                (Some(core), Some(values)) if self.whole => {
                    push_key(&mut self.core, &mut first, key);
                    self.core.extend_from_slice(core);
                    let values: &PyTuple = values.as_ref(py).downcast().expect("a tuple");
                    self.values.extend(values.iter().map(|v| v.into_py(py)));
                }
                _ => self.whole = false,
            }
        }
        self.core.push(b'}');
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut first = true;
        self.canonical.push(b'{');
        for (key, value) in sorted {
            push_key(&mut self.canonical, &mut first, key);
            self.canonical.extend_from_slice(value);
        }
        self.canonical.push(b'}');
    }

    pub(crate) fn verdict(
        mut self,
        py: Python,
        identity: Option<(String, String)>,
    ) -> Option<Verdict> {
        if self.list {
            self.canonical.push(b']');
            self.core.push(b']');
        }
        Some(Verdict {
            canonical: self.canonical,
            core: if self.whole { Some(self.core) } else { None },
            values: if self.whole {
                Some(PyTuple::new(py, self.values).into_py(py))
            } else {
                None
            },
            clean: self.clean,
            parent: None,
            identity,
        })
    }
}
