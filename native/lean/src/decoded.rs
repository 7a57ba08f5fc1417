//! A RunEvent as the compiled path reads it (scan.rs reads it): the fields lean.py's msgspec
//! structs take, each of its type, the job, the inputs, the outputs and each facets container
//! kept as their bytes.

use std::borrow::Cow;
use std::sync::Arc;

use crate::verdicts::Verdict;

/// The envelope of a RunEvent; the kept values as their bytes.
pub(crate) struct RunEvent<'a> {
    pub(crate) event_time: Cow<'a, str>,
    pub(crate) producer: Cow<'a, str>,
    pub(crate) run_id: Cow<'a, str>,
    pub(crate) run_facets: Option<&'a [u8]>,
    pub(crate) job: &'a [u8],
    pub(crate) event_type: Option<Cow<'a, str>>,
    pub(crate) schema_url: Option<Cow<'a, str>>,
    pub(crate) inputs: Option<&'a [u8]>,
    pub(crate) outputs: Option<&'a [u8]>,
    // the verdicts of the job, the inputs and the outputs when they were found while reading
    pub(crate) known: [Option<Arc<Verdict>>; 3],
}

/// A job, an input or an output: its namespace and name, and its facets containers as their
/// bytes (a job or an input holding `outputFacets`, or a job `inputFacets`, is lean.py's to judge).
pub(crate) struct Entity<'a> {
    pub(crate) namespace: Cow<'a, str>,
    pub(crate) name: Cow<'a, str>,
    pub(crate) facets: Option<&'a [u8]>,
    pub(crate) input_facets: Option<&'a [u8]>,
    pub(crate) output_facets: Option<&'a [u8]>,
}

impl<'a> Entity<'a> {
    /// (its input facets, its output facets) for an input, the other way round for an output.
    pub(crate) fn extras(&self, input: bool) -> (Option<&'a [u8]>, Option<&'a [u8]>) {
        if input {
            (self.input_facets, self.output_facets)
        } else {
            (self.output_facets, self.input_facets)
        }
    }

    /// Whether its namespace and name are within their limits (events/limits.py).
    pub(crate) fn within_limits(&self) -> bool {
        self.namespace.len() <= MAX_NAMESPACE_BYTES && self.name.len() <= MAX_NAME_BYTES
    }
}

pub(crate) const MAX_NAMESPACE_BYTES: usize = 256; // events/limits.py
pub(crate) const MAX_NAME_BYTES: usize = 600;

/// Facets of jobs and datasets may carry `_deleted` (lean._DELETABLE).
pub(crate) fn deletable(kind: &str) -> bool {
    kind == "job" || kind == "dataset"
}
