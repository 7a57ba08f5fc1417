//! The pipeline's compactor (`headwater/pipeline/compact.py`, `Compactor._core`), compiled: a
//! stored core, its facets named by the store's hashes or kept inline, becomes the core Spark
//! reads, each facet named by the model's hex hash, with the facet values this read has not
//! given yet.
//!
//! A facet named by its store hash (22 characters of URL-safe base64) gets the same 128 bits in
//! hex; a facet kept inline gets the hash the store would have given it: the SHA-256 of its
//! canonical bytes (sorted keys, compact, orjson's escapes, `json::push_string`), which are also
//! the value handed to Spark. Everything else of the core is copied as it was stored: Spark reads
//! it as JSON, whatever its escapes.
//!
//! Anything this code does not vouch for gives None, and Python's path takes the core: a float
//! or an integer beyond 64 bits in a facet kept inline (their canonical form is orjson's), a
//! name met twice in an object it reads, a store hash it cannot read, a lone surrogate, JSON
//! that does not parse.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::PySet;
use sha2::{Digest, Sha256};

use crate::json::push_string;
use crate::times::hex;

const MAX_DEPTH: u32 = 256;

/// A parsed JSON value; `raw` is its bytes as stored.
struct Value<'a> {
    raw: &'a [u8],
    kind: Kind<'a>,
}

enum Kind<'a> {
    Object(Vec<(&'a [u8], Value<'a>)>), // (the name's bytes with their quotes, the value)
    Array(Vec<Value<'a>>),
    String,
    Number,
    Literal,
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    fn space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.space();
        if self.bytes.get(self.at) == Some(&byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: u32) -> Option<Value<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.space();
        let start = self.at;
        let kind = match *self.bytes.get(self.at)? {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                if !self.eat(b'}') {
                    loop {
                        self.space();
                        let name = self.string()?;
                        if !self.eat(b':') {
                            return None;
                        }
                        members.push((name, self.value(depth + 1)?));
                        if self.eat(b'}') {
                            break;
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                Kind::Object(members)
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                if !self.eat(b']') {
                    loop {
                        items.push(self.value(depth + 1)?);
                        if self.eat(b']') {
                            break;
                        }
                        if !self.eat(b',') {
                            return None;
                        }
                    }
                }
                Kind::Array(items)
            }
            b'"' => {
                self.string()?;
                Kind::String
            }
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            b'-' | b'0'..=b'9' => {
                self.at += 1;
                while let Some(b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') = self.bytes.get(self.at) {
                    self.at += 1;
                }
                Kind::Number
            }
            _ => return None,
        };
        Some(Value { raw: &self.bytes[start..self.at], kind })
    }

    fn literal(&mut self, word: &[u8]) -> Option<Kind<'a>> {
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            Some(Kind::Literal)
        } else {
            None
        }
    }

    /// A string's bytes with their quotes (its escapes are read when it is decoded).
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        if self.bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        self.at += 1;
        loop {
            match *self.bytes.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(&self.bytes[start..self.at]);
                }
                b'\\' => self.at += 2,
                0x00..=0x1f => return None,
                _ => self.at += 1,
            }
        }
    }
}

fn hex_digit(byte: u8) -> Option<u32> {
    (byte as char).to_digit(16)
}

fn escaped_unit(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = bytes.get(at..at + 4)?;
    digits.iter().try_fold(0u32, |unit, &d| Some(unit << 4 | hex_digit(d)?))
}

/// A string (its bytes with their quotes) decoded; None for a lone surrogate or bytes that are
/// not UTF-8.
fn decode(raw: &[u8]) -> Option<Cow<'_, str>> {
    let inner = &raw[1..raw.len() - 1];
    if !inner.contains(&b'\\') {
        return std::str::from_utf8(inner).ok().map(Cow::Borrowed);
    }
    let mut out: Vec<u8> = Vec::with_capacity(inner.len());
    let mut at = 0;
    while at < inner.len() {
        let byte = inner[at];
        if byte != b'\\' {
            out.push(byte);
            at += 1;
            continue;
        }
        let simple = match *inner.get(at + 1)? {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            b'/' => Some(b'/'),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'u' => None,
            _ => return None,
        };
        if let Some(decoded) = simple {
            out.push(decoded);
            at += 2;
            continue;
        }
        let unit = escaped_unit(inner, at + 2)?;
        at += 6;
        let code = match unit {
            0xd800..=0xdbff => {
                if inner.get(at..at + 2)? != b"\\u" {
                    return None;
                }
                let low = escaped_unit(inner, at + 2)?;
                if !(0xdc00..=0xdfff).contains(&low) {
                    return None;
                }
                at += 6;
                0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00)
            }
            0xdc00..=0xdfff => return None,
            _ => unit,
        };
        let mut buffer = [0u8; 4];
        out.extend_from_slice(char::from_u32(code)?.encode_utf8(&mut buffer).as_bytes());
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

/// An integer as orjson writes it back (`-0` is 0); None for a float or beyond 64 bits.
fn push_integer(out: &mut Vec<u8>, raw: &[u8]) -> Option<()> {
    let (negative, digits) = match raw.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, raw),
    };
    if digits.is_empty() || digits.len() > 20 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if digits.len() > 1 && digits[0] == b'0' {
        return None;
    }
    let magnitude: u128 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    let limit: u128 = if negative { 1 << 63 } else { u64::MAX as u128 };
    if magnitude > limit {
        return None;
    }
    if negative && magnitude > 0 {
        out.push(b'-');
    }
    out.extend_from_slice(magnitude.to_string().as_bytes());
    Some(())
}

/// A value's canonical bytes: sorted names, compact, orjson's escapes (`compact._canonical`).
fn push_canonical(out: &mut Vec<u8>, value: &Value) -> Option<()> {
    match &value.kind {
        Kind::Object(members) => {
            let mut named: Vec<(Cow<str>, &Value)> = Vec::with_capacity(members.len());
            for (name, member) in members {
                named.push((decode(name)?, member));
            }
            named.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            if named.windows(2).any(|pair| pair[0].0 == pair[1].0) {
                return None; // Python keeps the last of the two: left to it
            }
            out.push(b'{');
            for (i, (name, member)) in named.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                push_string(out, name);
                out.push(b':');
                push_canonical(out, member)?;
            }
            out.push(b'}');
        }
        Kind::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                push_canonical(out, item)?;
            }
            out.push(b']');
        }
        Kind::String => push_string(out, &decode(value.raw)?),
        Kind::Number => push_integer(out, value.raw)?,
        Kind::Literal => out.extend_from_slice(value.raw),
    }
    Some(())
}

/// A store hash (22 characters of URL-safe base64) as the model's 32 hex digits.
fn hex_of(store_hash: &str) -> Option<String> {
    let bytes = store_hash.as_bytes();
    if bytes.len() != 22 {
        return None;
    }
    let mut bits: u32 = 0;
    let mut count = 0;
    let mut out = Vec::with_capacity(16);
    for &b in bytes {
        let six = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        bits = bits << 6 | u32::from(six);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    Some(hex(&out))
}

/// What a core names: (hex hash, the store hash to fetch the value by, or the inline value's
/// canonical bytes).
enum Named {
    Stored(String),
    Inline(Vec<u8>),
}

struct Compaction {
    out: Vec<u8>,
    named: Vec<(String, Named)>,
}

impl Compaction {
    fn raw(&mut self, value: &Value) {
        self.out.extend_from_slice(value.raw);
    }

    /// An object's members, each written by `member` (given its decoded name) after the name;
    /// None when a name comes twice (Python's dict keeps the last: left to it).
    fn object(
        &mut self,
        members: &[(&[u8], Value)],
        mut member: impl FnMut(&mut Self, &str, &Value) -> Option<()>,
    ) -> Option<()> {
        let mut seen: Vec<Cow<str>> = Vec::with_capacity(members.len());
        self.out.push(b'{');
        for (i, (name, value)) in members.iter().enumerate() {
            let decoded = decode(name)?;
            if seen.contains(&decoded) {
                return None;
            }
            if i > 0 {
                self.out.push(b',');
            }
            self.out.extend_from_slice(name);
            self.out.push(b':');
            member(self, &decoded, value)?;
            seen.push(decoded);
        }
        self.out.push(b'}');
        Some(())
    }

    /// An object whose members named in `converted` are facets containers, the rest copied;
    /// anything but an object copied.
    fn holder(&mut self, value: &Value, converted: &[&str]) -> Option<()> {
        match &value.kind {
            Kind::Object(members) => self.object(members, |this, name, member| {
                if converted.contains(&name) {
                    this.container(member)
                } else {
                    this.raw(member);
                    Some(())
                }
            }),
            _ => {
                self.raw(value);
                Some(())
            }
        }
    }

    /// A facets container: each facet's hash in hex (Python leaves anything but an object as it is).
    fn container(&mut self, value: &Value) -> Option<()> {
        let members = match &value.kind {
            Kind::Object(members) => members,
            _ => {
                self.raw(value);
                return Some(());
            }
        };
        self.object(members, |this, _name, facet| {
            let (hexed, named) = if let Kind::String = facet.kind {
                let store_hash = decode(facet.raw)?.into_owned();
                (hex_of(&store_hash)?, Named::Stored(store_hash))
            } else {
                let mut canonical = Vec::with_capacity(facet.raw.len());
                push_canonical(&mut canonical, facet)?;
                (hex(&Sha256::digest(&canonical)[..16]), Named::Inline(canonical))
            };
            this.out.push(b'"');
            this.out.extend_from_slice(hexed.as_bytes());
            this.out.push(b'"');
            this.named.push((hexed, named));
            Some(())
        })
    }

    /// The whole core (`facet_refs.containers` says where its containers are).
    fn core(&mut self, doc: &Value) -> Option<()> {
        let members = match &doc.kind {
            Kind::Object(members) => members,
            _ => return None,
        };
        self.object(members, |this, name, member| match (name, &member.kind) {
            ("run" | "job" | "dataset", _) => this.holder(member, &["facets"]),
            ("inputs" | "outputs", Kind::Array(items)) => {
                let extra = if name == "inputs" { "inputFacets" } else { "outputFacets" };
                this.out.push(b'[');
                for (j, item) in items.iter().enumerate() {
                    if j > 0 {
                        this.out.push(b',');
                    }
                    this.holder(item, &["facets", extra])?;
                }
                this.out.push(b']');
                Some(())
            }
            _ => {
                this.raw(member);
                Some(())
            }
        })
    }
}

/// Values a read has given: (store hash, hex) to fetch and (hex, canonical value) kept inline.
type Given = (Vec<(String, String)>, Vec<(String, String)>);

/// `Compactor._core`: (the core Spark reads, the facet values to fetch by their store hash as
/// (store hash, hex), the inline values as (hex, canonical JSON)), each only the first time
/// `sent` (the hex hashes this read has given) meets it, which it then holds; None, with `sent`
/// untouched, for a core Python's path reads.
#[pyfunction]
pub(crate) fn compact_core(
    py: Python<'_>,
    payload: &[u8],
    sent: &PySet,
) -> PyResult<Option<(String, Vec<(String, String)>, Vec<(String, String)>)>> {
    let done = py.allow_threads(|| {
        let mut parser = Parser { bytes: payload, at: 0 };
        let doc = parser.value(0)?;
        parser.space();
        if parser.at != payload.len() {
            return None;
        }
        let mut compaction = Compaction { out: Vec::with_capacity(payload.len()), named: Vec::new() };
        compaction.core(&doc)?;
        Some((String::from_utf8(compaction.out).ok()?, compaction.named))
    });
    let (core, named) = match done {
        Some(done) => done,
        None => return Ok(None),
    };
    let mut given: Given = (Vec::new(), Vec::new());
    for (hexed, what) in named {
        if sent.contains(hexed.as_str())? {
            continue;
        }
        sent.add(hexed.as_str())?;
        match what {
            Named::Stored(store_hash) => given.0.push((store_hash, hexed)),
            Named::Inline(canonical) => {
                given.1.push((hexed, String::from_utf8(canonical).expect("canonical JSON is UTF-8")))
            }
        }
    }
    Ok(Some((core, given.0, given.1)))
}
