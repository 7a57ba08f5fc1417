//! Facet values of flat published definitions judged here (lean.py's `headwater.events.flat_facets`,
//! compiled): the facets an event carries anew each time (a run's nominalTime, an output's
//! statistics) cost no call into Python.
//!
//! A definition comes from `flat_facets.definition` (once per `_schemaURL`): its properties in the
//! order of their names, each a string (with a uuid or date-time format at most), an integer or a
//! boolean, some required. A value is vouched for when it is an object of those properties only,
//! each once and of its type, the required ones there and the formats holding, with no escape
//! anywhere in its bytes. Its canonical bytes are then its members in the order of their names,
//! compact, strings as they were written and integers in their shortest form: what msgspec's
//! struct writes there. Anything else is left to Python (`None`), which may still accept it (a
//! uuid in another of the forms Python's `uuid.UUID` reads, say).

use std::sync::Arc;

use crate::scan;

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    Text,
    Integer,
    Boolean,
}

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Format {
    Any,
    Uuid,
    DateTime,
}

pub(crate) struct Property {
    pub(crate) name: String,
    pub(crate) kind: Kind,
    pub(crate) format: Format,
    pub(crate) required: bool,
}

/// A flat definition: its properties in the order of their names.
pub(crate) struct Flat {
    pub(crate) properties: Vec<Property>,
}

impl Flat {
    /// A definition as `flat_facets.definition` gives it, or None for one this code does not
    /// read (a type or format it does not know, names out of order).
    pub(crate) fn new(properties: Vec<(String, String, Option<String>, bool)>) -> Option<Flat> {
        let mut read = Vec::with_capacity(properties.len());
        for (name, kind, format, required) in properties {
            let kind = match kind.as_str() {
                "string" => Kind::Text,
                "integer" => Kind::Integer,
                "boolean" => Kind::Boolean,
                _ => return None,
            };
            let format = match format.as_deref() {
                None => Format::Any,
                Some("uuid") => Format::Uuid,
                Some("date-time") => Format::DateTime,
                Some(_) => return None,
            };
            read.push(Property {
                name,
                kind,
                format,
                required,
            });
        }
        if read.windows(2).any(|w| w[0].name >= w[1].name) {
            return None;
        }
        Some(Flat { properties: read })
    }
}

/// The `_schemaURL` of a facet value, when it is an object with no escape in its bytes whose
/// `_schemaURL` is a string given once.
pub(crate) fn schema_url(raw: &[u8]) -> Option<&str> {
    if raw.contains(&b'\\') {
        return None;
    }
    let pairs = scan::pairs(raw)?;
    let mut found = None;
    for (name, value) in &pairs {
        if name == "_schemaURL" {
            if found.is_some() {
                return None;
            }
            found = Some(text(value)?);
        }
    }
    found
}

/// The canonical bytes of `raw` when `flat` vouches for it, else None.
pub(crate) fn canonical(raw: &[u8], flat: &Arc<Flat>) -> Option<Vec<u8>> {
    if raw.contains(&b'\\') {
        return None;
    }
    let pairs = scan::pairs(raw)?;
    // each pair's property, by position; a name given twice or not a property: Python's
    let mut given: Vec<Option<&[u8]>> = vec![None; flat.properties.len()];
    for (name, value) in &pairs {
        let at = flat
            .properties
            .binary_search_by(|p| p.name.as_str().cmp(name.as_ref()))
            .ok()?;
        if given[at].replace(value).is_some() {
            return None;
        }
    }
    let mut out = Vec::with_capacity(raw.len());
    out.push(b'{');
    for (property, value) in flat.properties.iter().zip(&given) {
        let value = match value {
            Some(value) => *value,
            None if property.required => return None,
            None => continue,
        };
        if out.len() > 1 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(property.name.as_bytes());
        out.extend_from_slice(b"\":");
        match property.kind {
            Kind::Text => {
                let text = text(value)?;
                let holds = match property.format {
                    Format::Any => true,
                    Format::Uuid => crate::times::is_uuid(text),
                    Format::DateTime => is_date_time(text.as_bytes()),
                };
                if !holds {
                    return None;
                }
                out.extend_from_slice(value);
            }
            Kind::Integer => out.extend_from_slice(integer(value)?.to_string().as_bytes()),
            Kind::Boolean => match value {
                b"true" | b"false" => out.extend_from_slice(value),
                _ => return None,
            },
        }
    }
    out.push(b'}');
    Some(out)
}

/// A JSON string with no escape (the caller checked for backslashes): its text, when it has no
/// control character and is UTF-8.
fn text(value: &[u8]) -> Option<&str> {
    let inner = value.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    if inner.iter().any(|&b| b < 0x20 || b == b'"') {
        return None;
    }
    std::str::from_utf8(inner).ok()
}

/// A JSON integer (no fraction, no exponent) that fits in 64 signed bits.
fn integer(value: &[u8]) -> Option<i64> {
    let digits = value.strip_prefix(b"-").unwrap_or(value);
    let well_formed = match digits {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !well_formed || digits.len() > 20 {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse::<i64>().ok()
}

/// RFC 3339's date-time as `headwater.events.facets._is_date_time` reads it: a real day of a
/// year other than 0, hours 00-23, minutes and seconds 00-59, a fraction of any length, `Z` or
/// an offset; `T` and `Z` in either case.
pub(crate) fn is_date_time(s: &[u8]) -> bool {
    fn digits(s: &[u8]) -> Option<u32> {
        s.iter().try_fold(0u32, |n, &b| {
            b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
        })
    }
    fn clock(s: &[u8], seconds: bool) -> bool {
        // hh:mm or hh:mm:ss
        let parts = if seconds { 3 } else { 2 };
        if s.len() != parts * 3 - 1 {
            return false;
        }
        let ok = |at: usize, max: u32| digits(&s[at..at + 2]).map_or(false, |v| v <= max);
        ok(0, 23)
            && s[2] == b':'
            && ok(3, 59)
            && (!seconds || (s[5] == b':' && ok(6, 59)))
    }
    if s.len() < 20 || s[4] != b'-' || s[7] != b'-' || !matches!(s[10], b'T' | b't') {
        return false;
    }
    let (year, month, day) = match (digits(&s[0..4]), digits(&s[5..7]), digits(&s[8..10])) {
        (Some(y), Some(m), Some(d)) => (y, m, d),
        _ => return false,
    };
    if year == 0 || !(1..=12).contains(&month) {
        return false;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    const DAYS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let last = if month == 2 && leap { 29 } else { DAYS[month as usize - 1] };
    if !(1..=last).contains(&day) || !clock(&s[11..19], true) {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(fraction) = rest.strip_prefix(b".") {
        let n = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', offset @ ..] => clock(offset, false),
        _ => false,
    }
}
