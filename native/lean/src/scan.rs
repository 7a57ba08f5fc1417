//! The JSON the compiled path reads, read straight from its bytes: a RunEvent's envelope, a job,
//! the inputs or outputs, a facets container. Each is parsed strictly where it decides; the
//! values it keeps (a job, a facets container, a facet value) are only delimited, eight bytes a
//! step.
//!
//! serde_json, which read them before, delimits a kept value (`RawValue`) by reading every byte
//! of its strings one at a time, and those values are most of an event's bytes: that was a
//! quarter of this path's time (bench/README.md, "The compiled path reads its JSON itself").
//!
//! Strict: the syntax of what it parses, its keys (known, once each; a field's key unescaped),
//! its strings (escapes decoded, no control character, UTF-8) and the whitespace JSON allows.
//! Lax: a kept value is delimited by its brackets and strings, and not checked. Every kept value
//! is either the exact bytes of one judged before, or judged now: a container or a part read
//! here, a facet value by lean.py, which refuses what is not JSON (the event is then Python's).
//! So every byte of an event the compiled path accepts was read strictly once. Anything unusual
//! (an escaped field name, a surrogate escape, a `null` where a string goes) answers None:
//! Python's to read.

use std::borrow::Cow;
use std::sync::Arc;

use crate::decoded::{Entity, RunEvent};
use crate::verdicts::{State, Verdict};

/// The RunEvent of a JSON document holding one object and nothing else. Its job, inputs and
/// outputs come with their verdicts when `known` holds them (then their bytes are not read).
pub(crate) fn one_event<'a>(bytes: &'a [u8], known: &State) -> Option<RunEvent<'a>> {
    whole(bytes, Some(known), Cursor::run_event)
}

/// The RunEvents of a JSON document holding one array of them and nothing else; None when any
/// item is not one (the whole array is then Python's).
pub(crate) fn array_of_events<'a>(bytes: &'a [u8], known: &State) -> Option<Vec<RunEvent<'a>>> {
    whole(bytes, Some(known), |cursor| cursor.array(Cursor::run_event))
}

struct Cursor<'a, 'k> {
    bytes: &'a [u8],
    at: usize,
    known: Option<&'k State>, // verdicts kept, to skip the bytes of a part judged before
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Marks (high bit) the bytes of `word` equal to `byte`; the lowest mark is always a true one.
fn equal_bytes(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * byte as u64);
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Marks the bytes of `word` below 0x20 (control characters); the lowest mark is a true one.
fn control_bytes(word: u64) -> u64 {
    word.wrapping_sub(ONES * 0x20) & !word & HIGHS
}

impl<'a, 'k> Cursor<'a, 'k> {
    fn ended(&self) -> bool {
        self.at == self.bytes.len()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// JSON's whitespace: space, tab, line feed, carriage return.
    fn space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn take(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn byte(&mut self, byte: u8) -> Option<()> {
        self.take(byte).then_some(())
    }

    /// Eight bytes at a time to the first byte of the string (from `self.at`) that `stop` marks.
    fn skip_unmarked(&mut self, stop: impl Fn(u64) -> u64) {
        while let Some(chunk) = self.bytes.get(self.at..self.at + 8) {
            let marks = stop(u64::from_le_bytes(chunk.try_into().expect("eight bytes")));
            if marks != 0 {
                self.at += (marks.trailing_zeros() / 8) as usize;
                return;
            }
            self.at += 8;
        }
    }

    /// A string, strictly: its opening quote next. Escapes decoded (not a surrogate's: None).
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.byte(b'"')?;
        let mut owned: Option<Vec<u8>> = None;
        let mut run = self.at; // where the bytes since the last escape start
        loop {
            self.skip_unmarked(|w| equal_bytes(w, b'"') | equal_bytes(w, b'\\') | control_bytes(w));
            match self.peek()? {
                b'"' => {
                    let tail = &self.bytes[run..self.at];
                    self.at += 1;
                    return match owned {
                        None => std::str::from_utf8(tail).ok().map(Cow::Borrowed),
                        Some(mut text) => {
                            text.extend_from_slice(tail);
                            String::from_utf8(text).ok().map(Cow::Owned)
                        }
                    };
                }
                b'\\' => {
                    let text = owned.get_or_insert_with(Vec::new);
                    text.extend_from_slice(&self.bytes[run..self.at]);
                    self.at += 1;
                    let decoded = match self.peek()? {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            let hex = self.bytes.get(self.at + 1..self.at + 5)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            let code =
                                u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
                            let found = char::from_u32(code)?; // a surrogate: None
                            let mut buffer = [0u8; 4];
                            text.extend_from_slice(found.encode_utf8(&mut buffer).as_bytes());
                            self.at += 5;
                            run = self.at;
                            continue;
                        }
                        _ => return None,
                    };
                    text.push(decoded);
                    self.at += 1;
                    run = self.at;
                }
                b if b < 0x20 => return None,
                _ => self.at += 1, // one of the last few bytes, which the eight-byte steps leave
            }
        }
    }

    /// A key: a string without escapes (an escaped one is Python's to read), then its colon.
    fn key(&mut self) -> Option<&'a [u8]> {
        self.byte(b'"')?;
        let start = self.at;
        self.skip_unmarked(|w| equal_bytes(w, b'"') | equal_bytes(w, b'\\'));
        while self.peek()? != b'"' {
            if self.peek()? == b'\\' {
                return None;
            }
            self.at += 1;
        }
        let key = &self.bytes[start..self.at];
        self.at += 1;
        self.colon()?;
        Some(key)
    }

    fn colon(&mut self) -> Option<()> {
        self.space();
        self.byte(b':')?;
        self.space();
        Some(())
    }

    /// A value kept as its bytes: delimited by its brackets and strings, not checked.
    fn kept(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        match self.peek()? {
            b'"' => self.skip_string()?,
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => self.skip_string()?,
                        b'{' | b'[' => {
                            depth += 1;
                            self.at += 1;
                        }
                        b'}' | b']' => {
                            depth -= 1;
                            self.at += 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => self.at += 1,
                    }
                }
            }
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                ) {
                    self.at += 1;
                }
            }
        }
        (self.at > start).then(|| &self.bytes[start..self.at])
    }

    /// Past a string (its opening quote next), not checked.
    fn skip_string(&mut self) -> Option<()> {
        self.at += 1;
        loop {
            self.skip_unmarked(|w| equal_bytes(w, b'"') | equal_bytes(w, b'\\'));
            match self.peek()? {
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                b'\\' => self.at += 2,
                _ => self.at += 1,
            }
        }
    }

    /// An array's items, each read by `item`.
    fn array<T>(&mut self, item: fn(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        self.byte(b'[')?;
        let mut items = Vec::new();
        self.space();
        if self.take(b']') {
            return Some(items);
        }
        loop {
            self.space();
            items.push(item(self)?);
            self.space();
            if self.take(b']') {
                return Some(items);
            }
            self.byte(b',')?;
        }
    }

    /// An object's members, each handed its key (`read` reads it, and its colon) with the cursor
    /// at its value, until `}`.
    fn members<K>(
        &mut self,
        read: fn(&mut Self) -> Option<K>,
        mut member: impl FnMut(&mut Self, K) -> Option<()>,
    ) -> Option<()> {
        self.byte(b'{')?;
        self.space();
        if self.take(b'}') {
            return Some(());
        }
        loop {
            let key = read(self)?;
            member(self, key)?;
            self.space();
            if self.take(b'}') {
                return Some(());
            }
            self.byte(b',')?;
            self.space();
        }
    }

    /// A facet's name: a string, escapes decoded, then its colon.
    fn name(&mut self) -> Option<Cow<'a, str>> {
        let name = self.string()?;
        self.colon()?;
        Some(name)
    }

    fn run_event(&mut self) -> Option<RunEvent<'a>> {
        let (mut time, mut producer, mut run, mut job) = (None, None, None, None);
        let (mut kind, mut url, mut inputs, mut outputs) = (None, None, None, None);
        self.members(Self::key, |cursor, key| {
            let (filled, value) = match key {
                b"eventTime" => (time.is_some(), cursor.string().map(|s| time = Some(s))),
                b"producer" => (
                    producer.is_some(),
                    cursor.string().map(|s| producer = Some(s)),
                ),
                b"run" => (run.is_some(), cursor.run().map(|r| run = Some(r))),
                b"job" => (job.is_some(), cursor.part(0).map(|v| job = Some(v))),
                b"eventType" => (kind.is_some(), cursor.string().map(|s| kind = Some(s))),
                b"schemaURL" => (url.is_some(), cursor.string().map(|s| url = Some(s))),
                b"inputs" => (inputs.is_some(), cursor.part(1).map(|v| inputs = Some(v))),
                b"outputs" => (outputs.is_some(), cursor.part(2).map(|v| outputs = Some(v))),
                _ => return None, // a field lean.py's core does not know: Python's
            };
            // a field given twice: Python's to read (lean.py's decoder keeps the last)
            if filled {
                return None;
            }
            value
        })?;
        let (run_id, run_facets) = run?;
        let (job, job_known) = job?;
        let (inputs, inputs_known) = inputs.map_or((None, None), |(v, k)| (Some(v), k));
        let (outputs, outputs_known) = outputs.map_or((None, None), |(v, k)| (Some(v), k));
        Some(RunEvent {
            event_time: time?,
            producer: producer?,
            run_id,
            run_facets,
            job,
            event_type: kind,
            schema_url: url,
            inputs,
            outputs,
            known: [job_known, inputs_known, outputs_known],
        })
    }

    /// The job (0), the inputs (1) or the outputs (2): the bytes of one judged before, with its
    /// verdict, when the rest starts with them (a JSON object or array judged valid ends where
    /// it ends: nothing else can start with it), else the value delimited.
    fn part(&mut self, which: usize) -> Option<(&'a [u8], Option<Arc<Verdict>>)> {
        let rest = &self.bytes[self.at..];
        if let Some((length, verdict)) = self.known.and_then(|state| state.known(which, rest)) {
            self.at += length;
            return Some((&rest[..length], Some(verdict)));
        }
        self.kept().map(|value| (value, None))
    }

    /// The run: its runId, and its facets kept as their bytes.
    fn run(&mut self) -> Option<(Cow<'a, str>, Option<&'a [u8]>)> {
        let (mut id, mut facets) = (None, None);
        self.members(Self::key, |cursor, key| match key {
            b"runId" if id.is_none() => cursor.string().map(|s| id = Some(s)),
            b"facets" if facets.is_none() => cursor.kept().map(|v| facets = Some(v)),
            _ => None,
        })?;
        Some((id?, facets))
    }

    /// A job, an input or an output: its namespace, its name, and its facets containers kept.
    fn entity(&mut self) -> Option<Entity<'a>> {
        let (mut namespace, mut name) = (None, None);
        let (mut facets, mut input_facets, mut output_facets) = (None, None, None);
        self.members(Self::key, |cursor, key| {
            let (filled, value) = match key {
                b"namespace" => (
                    namespace.is_some(),
                    cursor.string().map(|s| namespace = Some(s)),
                ),
                b"name" => (name.is_some(), cursor.string().map(|s| name = Some(s))),
                b"facets" => (facets.is_some(), cursor.kept().map(|v| facets = Some(v))),
                b"inputFacets" => (
                    input_facets.is_some(),
                    cursor.kept().map(|v| input_facets = Some(v)),
                ),
                b"outputFacets" => (
                    output_facets.is_some(),
                    cursor.kept().map(|v| output_facets = Some(v)),
                ),
                _ => return None,
            };
            if filled {
                return None;
            }
            value
        })?;
        Some(Entity {
            namespace: namespace?,
            name: name?,
            facets,
            input_facets,
            output_facets,
        })
    }
}

/// Reads `bytes` as one JSON value that `read` takes, with nothing but whitespace around it.
fn whole<'a, 'k, T>(
    bytes: &'a [u8],
    known: Option<&'k State>,
    read: impl FnOnce(&mut Cursor<'a, 'k>) -> Option<T>,
) -> Option<T> {
    let mut cursor = Cursor {
        bytes,
        at: 0,
        known,
    };
    cursor.space();
    let found = read(&mut cursor)?;
    cursor.space();
    cursor.ended().then_some(found)
}

/// A job's object.
pub(crate) fn entity(bytes: &[u8]) -> Option<Entity<'_>> {
    whole(bytes, None, Cursor::entity)
}

/// An array of inputs' or outputs' objects.
pub(crate) fn entities(bytes: &[u8]) -> Option<Vec<Entity<'_>>> {
    whole(bytes, None, |cursor| cursor.array(Cursor::entity))
}

/// A facets container's facets in their order (a name given twice too), each kept as its bytes.
pub(crate) fn pairs(bytes: &[u8]) -> Option<Vec<(Cow<'_, str>, &[u8])>> {
    whole(bytes, None, |cursor| {
        let mut pairs = Vec::new();
        cursor.members(Cursor::name, |cursor, name| {
            pairs.push((name, cursor.kept()?));
            Some(())
        })?;
        Some(pairs)
    })
}
