//! A small DER reader: enough of ASN.1 for X.509 certificates, SCT lists and
//! RFC 3161 timestamp tokens. Every read is bounds-checked and returns
//! `None` on malformed input; callers turn that into a reason.

/// Universal tags used here.
pub const BOOLEAN: u8 = 0x01;
pub const INTEGER: u8 = 0x02;
pub const BIT_STRING: u8 = 0x03;
pub const OCTET_STRING: u8 = 0x04;
pub const OID: u8 = 0x06;
pub const UTF8_STRING: u8 = 0x0c;
pub const SEQUENCE: u8 = 0x30;
pub const SET: u8 = 0x31;
pub const UTC_TIME: u8 = 0x17;
pub const GENERALIZED_TIME: u8 = 0x18;

/// One TLV: its tag, its content and the whole encoding (tag and length
/// included), which is what signatures cover.
#[derive(Clone, Copy, Debug)]
pub struct Tlv<'a> {
    pub tag: u8,
    pub content: &'a [u8],
    pub raw: &'a [u8],
}

impl<'a> Tlv<'a> {
    /// The children of a constructed value.
    pub fn children(&self) -> Reader<'a> {
        Reader::new(self.content)
    }

    /// The content if the tag is `tag`.
    pub fn expect(&self, tag: u8) -> Option<&'a [u8]> {
        (self.tag == tag).then_some(self.content)
    }
}

/// Reads consecutive TLVs from a byte slice.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { rest: bytes }
    }

    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The next TLV without consuming it.
    pub fn peek(&self) -> Option<Tlv<'a>> {
        parse_one(self.rest).map(|(tlv, _)| tlv)
    }

    /// The next TLV.
    pub fn next_tlv(&mut self) -> Option<Tlv<'a>> {
        let (tlv, rest) = parse_one(self.rest)?;
        self.rest = rest;
        Some(tlv)
    }

    /// The next TLV, which must have `tag`.
    pub fn expect(&mut self, tag: u8) -> Option<Tlv<'a>> {
        let tlv = self.peek()?;
        if tlv.tag != tag {
            return None;
        }
        self.next_tlv()
    }

    /// The next TLV if it has `tag` (an OPTIONAL field).
    pub fn optional(&mut self, tag: u8) -> Option<Tlv<'a>> {
        match self.peek() {
            Some(t) if t.tag == tag => self.next_tlv(),
            _ => None,
        }
    }
}

/// Parses one TLV (single-byte tags only, definite lengths, minimal
/// long-form lengths up to 4 bytes).
fn parse_one(bytes: &[u8]) -> Option<(Tlv<'_>, &[u8])> {
    let tag = *bytes.first()?;
    if tag & 0x1f == 0x1f {
        return None;
    }
    let first = *bytes.get(1)?;
    let (len, header) = if first < 0x80 {
        (first as usize, 2)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 {
            return None;
        }
        let mut len = 0usize;
        for i in 0..n {
            len = (len << 8) | *bytes.get(2 + i)? as usize;
        }
        if len < 0x80 {
            return None;
        }
        (len, 2 + n)
    };
    let end = header.checked_add(len)?;
    if end > bytes.len() {
        return None;
    }
    Some((
        Tlv {
            tag,
            content: &bytes[header..end],
            raw: &bytes[..end],
        },
        &bytes[end..],
    ))
}

/// Parses `bytes` as exactly one TLV.
pub fn parse_exact(bytes: &[u8]) -> Option<Tlv<'_>> {
    let (tlv, rest) = parse_one(bytes)?;
    rest.is_empty().then_some(tlv)
}

/// Encodes a TLV (for rebuilding a precertificate's TBS).
pub fn encode(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = len.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

/// The dotted form of an OID's content bytes.
pub fn oid_string(content: &[u8]) -> Option<String> {
    let mut arcs: Vec<u64> = Vec::new();
    let mut value: u64 = 0;
    for (i, b) in content.iter().enumerate() {
        if value > (u64::MAX >> 7) {
            return None;
        }
        value = (value << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            if arcs.is_empty() {
                let first = (value / 40).min(2);
                arcs.push(first);
                arcs.push(value - first * 40);
            } else {
                arcs.push(value);
            }
            value = 0;
        } else if i + 1 == content.len() {
            return None;
        }
    }
    if arcs.is_empty() {
        return None;
    }
    Some(
        arcs.iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join("."),
    )
}

/// Seconds since the Unix epoch of a UTCTime or GeneralizedTime (the `Z`
/// forms X.509 and RFC 3161 use; fractional seconds are dropped).
pub fn time(tlv: &Tlv<'_>) -> Option<i64> {
    let s = std::str::from_utf8(tlv.content).ok()?;
    let s = s.strip_suffix('Z')?;
    let (year, rest) = match tlv.tag {
        UTC_TIME => {
            let yy: i64 = s.get(0..2)?.parse().ok()?;
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, s.get(2..)?)
        }
        GENERALIZED_TIME => (s.get(0..4)?.parse().ok()?, s.get(4..)?),
        _ => return None,
    };
    let rest = rest.split('.').next()?;
    if rest.len() != 10 || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let num = |r: std::ops::Range<usize>| rest.get(r).and_then(|v| v.parse::<u32>().ok());
    unix_seconds(
        year,
        num(0..2)?,
        num(2..4)?,
        num(4..6)?,
        num(6..8)?,
        num(8..10)?,
    )
}

/// Seconds since the epoch of a UTC calendar time, checked.
pub fn unix_seconds(year: i64, month: u32, day: u32, h: u32, m: u32, s: u32) -> Option<i64> {
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    Some(days * 86400 + i64::from(h) * 3600 + i64::from(m) * 60 + i64::from(s))
}

/// Seconds since the epoch of an RFC 3339 time as the trusted root writes
/// it (`2021-03-07T03:20:29Z`, `2022-04-13T20:06:15.000Z`, or with an offset).
pub fn rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r).and_then(|v| v.parse::<u32>().ok());
    let base = unix_seconds(
        i64::from(n(0..4)?),
        n(5..7)?,
        n(8..10)?,
        n(11..13)?,
        n(14..16)?,
        n(17..19)?,
    )?;
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        rest = &frac[digits..];
    }
    match rest {
        "Z" | "z" => Some(base),
        off if off.len() == 6 && (off.starts_with('+') || off.starts_with('-')) => {
            let hh: i64 = off.get(1..3)?.parse().ok()?;
            let mm: i64 = off.get(4..6)?.parse().ok()?;
            let secs = hh * 3600 + mm * 60;
            Some(if off.starts_with('+') {
                base - secs
            } else {
                base + secs
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_oids() {
        assert_eq!(unix_seconds(1970, 1, 1, 0, 0, 0), Some(0));
        assert_eq!(rfc3339("2021-03-07T03:20:29Z"), Some(1615087229));
        assert_eq!(rfc3339("2021-03-07T03:20:29.000Z"), Some(1615087229));
        assert_eq!(rfc3339("2021-03-07T04:20:29+01:00"), Some(1615087229));
        assert_eq!(rfc3339("2021-03-07"), None);
        let t = Tlv {
            tag: UTC_TIME,
            content: b"210307032029Z",
            raw: b"",
        };
        assert_eq!(time(&t), Some(1615087229));
        assert_eq!(
            oid_string(&[0x2b, 0x06, 0x01, 0x04, 0x01, 0x83, 0xbf, 0x30, 0x01, 0x01]).as_deref(),
            Some("1.3.6.1.4.1.57264.1.1")
        );
        assert!(parse_exact(&[0x30, 0x81, 0x05, 0, 0, 0, 0, 0]).is_none());
        assert_eq!(encode(0x04, &[0u8; 200])[..3], [0x04, 0x81, 200]);
    }
}
