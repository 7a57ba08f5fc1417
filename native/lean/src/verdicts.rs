//! Verdicts kept by the exact bytes judged (as lean.FacetVerdicts keeps its own), and the other
//! caches of one validator.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

use pyo3::prelude::*;

use crate::flat::Flat;

// -- verdicts kept by their bytes ------------------------------------------------------------------

/// A part's verdict (lean.Part) or a run-facets container's (lean.ContainerVerdict), as far as the
/// compiled path uses it; `clean` is false when it carries warnings or untrusted facets (the event
/// is then Python's).
pub(crate) struct Verdict {
    pub(crate) canonical: Vec<u8>,
    pub(crate) core: Option<Vec<u8>>,
    pub(crate) values: Option<PyObject>, // a tuple of FacetValue
    pub(crate) clean: bool,
    pub(crate) parent: Option<Vec<u8>>, // a run container's parent facet
    pub(crate) identity: Option<(String, String)>, // a job's (namespace, name)
}

pub(crate) const KEPT_BYTES: usize = 4 * 1024 * 1024; // a generation of one cache, about, at most (7 caches)
pub(crate) const SEEN_MAX: usize = 200_000;

/// A fast hash of byte strings (8 bytes a step), from a seed drawn per process.
#[derive(Clone)]
pub(crate) struct Seeded(u64);

impl Default for Seeded {
    fn default() -> Self {
        let mut h = RandomState::new().build_hasher();
        h.write_u8(0);
        Seeded(h.finish() | 1)
    }
}

pub(crate) struct Fx(u64);

impl Fx {
    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
}

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        // four lanes of 8 bytes a step, each its own chain of multiplications: a kept key is a
        // job, the inputs or a container, kilobytes long, and one chain waits on each product
        let mut blocks = bytes.chunks_exact(32);
        if bytes.len() >= 64 {
            let mut lanes = [
                Fx(self.0),
                Fx(self.0 ^ 0x9e37_79b9_7f4a_7c15),
                Fx(self.0 ^ 0xc2b2_ae3d_27d4_eb4f),
                Fx(self.0 ^ 0x1656_67b1_9e37_79f9),
            ];
            for block in &mut blocks {
                for (lane, at) in lanes.iter_mut().zip([0, 8, 16, 24]) {
                    lane.mix(word(&block[at..at + 8]));
                }
            }
            for lane in lanes {
                self.mix(lane.0);
            }
        }
        let mut chunks = if bytes.len() >= 64 {
            blocks.remainder().chunks_exact(8)
        } else {
            bytes.chunks_exact(8)
        };
        for chunk in &mut chunks {
            self.mix(word(chunk));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(last) ^ ((rest.len() as u64) << 59));
        }
    }

    fn write_usize(&mut self, value: usize) {
        self.mix(value as u64);
    }

    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^ (h >> 33)
    }
}

impl BuildHasher for Seeded {
    type Hasher = Fx;
    fn build_hasher(&self) -> Fx {
        Fx(self.0)
    }
}

/// The hasher of a set of digests (already hashes, seeded): each is its own hash.
#[derive(Default)]
pub(crate) struct Same(u64);

impl Hasher for Same {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) type Map<V> = HashMap<Vec<u8>, Arc<V>, Seeded>;

/// Verdicts by exact bytes in two generations (as lean.FacetVerdicts keeps its own): a value is
/// kept from its second sighting on, and when the young generation fills up it becomes the old one.
pub(crate) struct Kept<V> {
    pub(crate) young: Map<V>,
    pub(crate) old: Map<V>,
    pub(crate) bytes: usize,
    pub(crate) seen: HashSet<u64, BuildHasherDefault<Same>>,
    pub(crate) seed: Seeded,
    // the lengths of the young keys (objects and arrays of HEAD bytes or more) by the hash of
    // their first HEAD bytes: a reader finds one at the start of its rest without delimiting it
    heads: HashMap<u64, Vec<usize>, BuildHasherDefault<Same>>,
}

const HEAD: usize = 64;
const LENGTHS_PER_HEAD: usize = 8;

impl<V> Default for Kept<V> {
    fn default() -> Self {
        let seed = Seeded::default();
        Kept {
            young: HashMap::with_hasher(seed.clone()),
            old: HashMap::with_hasher(seed.clone()),
            bytes: 0,
            seen: HashSet::default(),
            heads: HashMap::default(),
            seed,
        }
    }
}

impl<V> Kept<V> {
    pub(crate) fn get(&mut self, key: &[u8]) -> Option<Arc<V>> {
        if let Some(found) = self.young.get(key) {
            return Some(Arc::clone(found));
        }
        let found = self.old.remove(key)?;
        self.keep(key.to_vec(), Arc::clone(&found));
        Some(found)
    }

    /// Whether a value judged now was judged once before (only those are kept).
    pub(crate) fn seen_before(&mut self, key: &[u8]) -> bool {
        let mut hasher = self.seed.build_hasher();
        key.hash(&mut hasher);
        let digest = hasher.finish();
        if self.seen.contains(&digest) {
            return true;
        }
        if self.seen.len() >= SEEN_MAX {
            self.seen.clear();
        }
        self.seen.insert(digest);
        false
    }

    pub(crate) fn keep(&mut self, key: Vec<u8>, verdict: Arc<V>) {
        let size = 3 * key.len() + 200;
        if self.bytes + size > KEPT_BYTES {
            self.old = std::mem::replace(&mut self.young, HashMap::with_hasher(self.seed.clone()));
            self.heads.clear();
            self.bytes = 0;
        }
        self.bytes += size;
        if key.len() >= HEAD && matches!(key[0], b'{' | b'[') {
            let lengths = self.heads.entry(self.head(&key)).or_default();
            if !lengths.contains(&key.len()) {
                if lengths.len() == LENGTHS_PER_HEAD {
                    lengths.remove(0);
                }
                lengths.push(key.len());
            }
        }
        self.young.insert(key, verdict);
    }

    fn head(&self, bytes: &[u8]) -> u64 {
        let mut hasher = self.seed.build_hasher();
        hasher.write(&bytes[..HEAD]);
        hasher.finish()
    }

    /// The young key `rest` starts with, as a whole JSON value (what follows it may follow a
    /// value), its length and its verdict. Read only: a key of the old generation is not found.
    pub(crate) fn known(&self, rest: &[u8]) -> Option<(usize, Arc<V>)> {
        if rest.len() < HEAD {
            return None;
        }
        for &length in self.heads.get(&self.head(rest))?.iter().rev() {
            if length > rest.len() || !matches!(rest[length - 1], b'}' | b']') {
                continue;
            }
            if let Some(next) = rest.get(length) {
                if !matches!(next, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    continue;
                }
            }
            if let Some(found) = self.young.get(&rest[..length]) {
                return Some((length, Arc::clone(found)));
            }
        }
        None
    }
}

/// A facet value's verdict (lean.Verdict): its canonical bytes, whether it breaks no rule, and
/// as the store keeps it, (its hash, empty when kept inline; the FacetValue), None when the value
/// is not an object.
pub(crate) struct Value {
    pub(crate) canonical: Vec<u8>,
    pub(crate) clean: bool,
    pub(crate) stored: Option<(String, PyObject)>,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) job: Kept<Verdict>,
    pub(crate) inputs: Kept<Verdict>,
    pub(crate) outputs: Kept<Verdict>,
    pub(crate) containers: Kept<Verdict>, // of run, input and output facets
    pub(crate) deletable_containers: Kept<Verdict>, // of job and dataset facets (which may carry _deleted)
    pub(crate) values: Kept<Value>,
    pub(crate) deletable_values: Kept<Value>,
    pub(crate) parents: HashMap<Vec<u8>, (Option<String>, Option<String>), Seeded>,
    pub(crate) run_urls: HashMap<String, bool, Seeded>,
    pub(crate) minutes: HashMap<[u8; 16], i64, Seeded>,
    pub(crate) minute_names: HashMap<i64, String, Seeded>,
    pub(crate) flats: HashMap<String, Option<Arc<Flat>>, Seeded>, // by _schemaURL (flat.rs)
}

impl State {
    /// The job's (0), the inputs' (1) or the outputs' (2) verdict kept for the bytes `rest`
    /// starts with (`Kept::known`).
    pub(crate) fn known(&self, which: usize, rest: &[u8]) -> Option<(usize, Arc<Verdict>)> {
        match which {
            0 => self.job.known(rest),
            1 => self.inputs.known(rest),
            _ => self.outputs.known(rest),
        }
    }
}

pub(crate) const SMALL_MAX: usize = 10_000; // entries of the parents, URLs and minutes caches, at most
