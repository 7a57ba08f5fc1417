//! eventTime read and written as times.py does, and the eventId (ids.py).

// -- times and ids ---------------------------------------------------------------------------------

pub(crate) const TICKS_PER_SECOND: i64 = 10_000_000;
pub(crate) const TICKS_PER_MINUTE: i64 = 60 * TICKS_PER_SECOND;
pub(crate) const GREGORIAN_OFFSET_TICKS: i64 = 0x01B2_1DD2_1381_4000;
pub(crate) const MAX_TICKS: i64 = (1 << 60) - 1 - GREGORIAN_OFFSET_TICKS;

/// The common form `YYYY-MM-DDTHH:MM:SS[.f{1,7}]Z`: (its minute, the ticks into that minute), as
/// times.py's `_UTC_FORM` reads it; None for any other form.
pub(crate) fn utc_form(value: &str) -> Option<([u8; 16], i64)> {
    let b = value.as_bytes();
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    if b.len() < 20 || b[b.len() - 1] != b'Z' {
        return None;
    }
    let shape = digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && (b[17] <= b'5' || (b[17] == b'6' && b[18] == b'0'));
    if !shape {
        return None;
    }
    let second = i64::from(b[17] - b'0') * 10 + i64::from(b[18] - b'0');
    let mut fraction = 0i64;
    match b.len() {
        20 => {}
        22..=28 if b[19] == b'.' && digits(20..b.len() - 1) => {
            let given = &b[20..b.len() - 1];
            for i in 0..7 {
                fraction = fraction * 10 + given.get(i).map_or(0, |d| i64::from(d - b'0'));
            }
        }
        _ => return None,
    }
    let mut minute = [0u8; 16];
    minute.copy_from_slice(&b[..16]);
    Some((minute, second * TICKS_PER_SECOND + fraction))
}

/// (year, month, day) of a day counted from 1970-01-01, proleptic Gregorian.
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

pub(crate) fn minute_name(minutes: i64) -> String {
    let seconds = minutes * 60;
    let (days, of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}",
        year,
        month,
        day,
        of_day / 3_600,
        of_day % 3_600 / 60
    )
}

pub(crate) fn is_uuid(value: &str) -> bool {
    let b = value.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                *c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(HEX[(b >> 4) as usize] as char);
        out.push(HEX[(b & 0xf) as usize] as char);
    }
    out
}

/// ids.event_id: a version-1 UUID whose timestamp is the eventTime and whose other bits come from
/// the content hash.
pub(crate) fn event_id(ticks: i64, digest: &[u8]) -> String {
    let timestamp = (ticks + GREGORIAN_OFFSET_TICKS) as u64;
    let time_low = timestamp & 0xFFFF_FFFF;
    let time_mid = (timestamp >> 32) & 0xFFFF;
    let time_hi_version = ((timestamp >> 48) & 0x0FFF) | 0x1000;
    let tail = u64::from_be_bytes(digest[..8].try_into().expect("32 bytes"));
    let clock_seq = ((tail >> 48) & 0x3FFF) | 0x8000;
    let node = (tail & 0xFFFF_FFFF_FFFF) | 0x0100_0000_0000;
    format!("{time_low:08x}-{time_mid:04x}-{time_hi_version:04x}-{clock_seq:04x}-{node:012x}")
}
