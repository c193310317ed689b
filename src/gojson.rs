//! JSON written the way Go's `encoding/json` writes it.
//!
//! opm stores every manifest in the index as `json.Marshal` output and serves
//! those bytes unchanged over gRPC; clients (and tests comparing with opm)
//! see the exact bytes. Go sorts map keys (serde_json's default map does too),
//! escapes `<`, `>`, `&`, U+2028 and U+2029, and formats floats with
//! `strconv.FormatFloat(f, 'f'|'e', -1, 64)`.

use serde_json::Value;

/// Serializes `value` compactly, byte for byte as Go's `json.Marshal` would
/// for the same data decoded into `interface{}`.
pub fn to_string(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, v);
            }
            out.push('}');
        }
    }
}

/// Serializes `value` as Go's `json.MarshalIndent(v, "", indent)` would,
/// for a value nested `depth` levels deep: the first line is not indented,
/// the following ones are, and empty arrays and objects stay `[]`, `{}`.
pub fn to_string_indented(value: &Value, indent: &str, depth: usize) -> String {
    let mut out = String::with_capacity(256);
    write_indented(&mut out, value, indent, depth);
    out
}

fn write_indented(out: &mut String, value: &Value, indent: &str, depth: usize) {
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        for _ in 0..depth {
            out.push_str(indent);
        }
    };
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_indented(out, item, indent, depth + 1);
            }
            newline(out, depth);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                write_string(out, k);
                out.push_str(": ");
                write_indented(out, v, indent, depth + 1);
            }
            newline(out, depth);
            out.push('}');
        }
        other => write_value(out, other),
    }
}

/// The field `name` of an object as Go's `json.Unmarshal` into a struct
/// leaves it. Go decodes every key of the object in turn into the field it
/// names, the key spelled exactly so or else one equal to it when both are
/// case-folded (Unicode simple folding: `\u212A` is a `k`, `\u017F` an
/// `s`), so of several spellings the last one wins; `null` leaves a string,
/// number, bool or struct field as it was, so a `null` counts only when
/// nothing else matched (then this is `Some(Null)`). `None` when no key
/// matches or for a value that is not an object.
///
/// "Last" is in this map's order, which is sorted key order: the order opm
/// sees for YAML input (`sigs.k8s.io/yaml` re-marshals objects with sorted
/// keys). For JSON input Go goes by the order of the document, which a
/// decoded [`Value`] does not keep; the two agree unless an object spells
/// one field twice.
pub fn struct_field<'a>(obj: &'a Value, name: &str) -> Option<&'a Value> {
    obj.as_object().and_then(|m| map_struct_field(m, name))
}

/// [`struct_field`] on an object's map: for a Go field of a kind a `null`
/// leaves alone (string, number, bool, struct).
pub fn map_struct_field<'a>(
    map: &'a serde_json::Map<String, Value>,
    name: &str,
) -> Option<&'a Value> {
    let mut found = None;
    for (k, v) in map {
        if field_key(k, name) && (!v.is_null() || found.is_none()) {
            found = Some(v);
        }
    }
    found
}

/// [`map_struct_field`] for a Go field a `null` sets to nil (a slice, map,
/// pointer or interface): the last spelling wins whatever its value.
pub fn map_struct_field_nullable<'a>(
    map: &'a serde_json::Map<String, Value>,
    name: &str,
) -> Option<&'a Value> {
    map.iter()
        .rev()
        .find(|(k, _)| field_key(k, name))
        .map(|(_, v)| v)
}

/// [`struct_field`] as a Go `string` field holds it: `""` when missing,
/// `null` or not a string.
pub fn struct_str<'a>(obj: &'a Value, name: &str) -> &'a str {
    struct_field(obj, name)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Every value that Go's `json.Unmarshal` would decode into the struct
/// field `name` (see [`struct_field`]), in map order: a type check must
/// look at all of them, since Go reports a wrong type even when a later
/// spelling overrides the value.
pub fn struct_field_values<'a, 'n>(
    obj: &'a Value,
    name: &'n str,
) -> impl Iterator<Item = (&'a str, &'a Value)> + use<'a, 'n> {
    obj.as_object()
        .into_iter()
        .flat_map(|m| m.iter())
        .filter(move |(k, _)| field_key(k, name))
        .map(|(k, v)| (k.as_str(), v))
}

/// Whether Go's decoder puts the value of JSON key `key` into the struct
/// field `name`.
fn field_key(key: &str, name: &str) -> bool {
    key == name || folds_to(key, name)
}

/// Whether `key` and `name` are equal once case-folded as Go's decoder folds
/// field names (`unicode.ToUpper(unicode.ToLower(r))` for each rune).
fn folds_to(key: &str, name: &str) -> bool {
    fn fold(c: char) -> char {
        if c.is_ascii() {
            return c.to_ascii_uppercase();
        }
        // Go's simple case mappings are one rune to one rune. Rust's full
        // lowercase gives several only for U+0130, whose simple one is the
        // first (`i`); a full uppercase of several (`ß` to `SS`) has no
        // simple one, and the rune stays.
        let lower = c.to_lowercase().next().unwrap_or(c);
        let mut upper = lower.to_uppercase();
        match (upper.next(), upper.next()) {
            (Some(u), None) => u,
            _ => lower,
        }
    }
    key.chars().map(fold).eq(name.chars().map(fold))
}

/// Every number of `value` as a float64, as Go's `json.Unmarshal` into
/// `interface{}` decodes it (`3` stays `3`; `12345678901234567890` becomes
/// `12345678901234567000`). A whole float64 that Go writes without an
/// exponent is kept as an integer, so that every JSON writer of ours prints
/// it as Go prints the float (`1.0` and `1e3` are `1` and `1000` to opm).
pub fn numbers_as_floats(value: &mut Value) {
    match value {
        Value::Number(n) => {
            if let Some(f) = n.as_f64() {
                let text = format_float(f);
                let as_float = || serde_json::Number::from_f64(f);
                // -0 stays a float: as an integer it would print as 0.
                let go = if f == 0.0 && f.is_sign_negative() {
                    as_float()
                } else if let Ok(i) = text.parse::<i64>() {
                    Some(i.into())
                } else if let Ok(u) = text.parse::<u64>() {
                    Some(u.into())
                } else {
                    as_float()
                };
                if let Some(go) = go {
                    *n = go;
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(numbers_as_floats),
        Value::Object(map) => map.values_mut().for_each(numbers_as_floats),
        _ => {}
    }
}

/// Numbers as Kubernetes' unstructured decoding leaves them: an integer that
/// fits int64 stays exact, anything else becomes a float64.
fn write_number(out: &mut String, n: &serde_json::Number) {
    if let Some(i) = n.as_i64() {
        out.push_str(&i.to_string());
    } else if let Some(f) = n.as_f64() {
        out.push_str(&format_float(f));
    }
}

/// Go's float formatting for JSON: plain decimal for 1e-6 <= |f| < 1e21,
/// otherwise the shortest exponent form with at least two exponent digits
/// stripped of a leading zero (`1e-07` becomes `1e-7`).
pub fn format_float(f: f64) -> String {
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        // Rust's Display is the shortest round-trip decimal without exponent.
        let s = format!("{f}");
        return s;
    }
    // Rust's `{:e}` is shortest round-trip: "1e21", "1.5e-7".
    let s = format!("{f:e}");
    match s.split_once('e') {
        Some((mant, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ("-", d),
                None => ("+", exp),
            };
            format!("{mant}e{sign}{digits:0>2}")
                .replace("e-0", "e-")
                .replace("e+0", "e+")
        }
        None => s,
    }
}

fn write_string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let b = s.as_bytes();
    // Runs of bytes that need no escape are copied whole: a bundle's
    // base64-encoded objects are megabytes of them.
    let mut run = 0;
    let mut i = 0;
    while i < b.len() {
        // Eight bytes at a time while none of them can need an escape.
        while i + 8 <= b.len() {
            let mut word = [0u8; 8];
            word.copy_from_slice(&b[i..i + 8]);
            if may_need_escape(u64::from_le_bytes(word)) {
                break;
            }
            i += 8;
        }
        let Some(&c) = b.get(i) else { break };
        let escape: Option<&str> = match c {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            // As Go 1.22 and later write them (opm v1.73.0 is built with one).
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            b'<' => Some("\\u003c"),
            b'>' => Some("\\u003e"),
            b'&' => Some("\\u0026"),
            // U+2028 and U+2029 (E2 80 A8/A9 in UTF-8).
            0xe2 if b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xa8 | 0xa9)) => {
                Some(if b[i + 2] == 0xa8 {
                    "\\u2028"
                } else {
                    "\\u2029"
                })
            }
            c if c < 0x20 => None,
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&s[run..i]);
        match escape {
            Some(e) => out.push_str(e),
            None => {
                use std::fmt::Write as _;
                let _ = write!(out, "\\u{:04x}", c);
            }
        }
        i += if c == 0xe2 { 3 } else { 1 };
        run = i;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

/// Whether any byte of `word` is one [`write_string`] may escape: a control
/// character, `"`, `\\`, `<`, `>`, `&`, or 0xE2 (the lead byte of U+2028
/// and U+2029). Exact for every byte but 0xE2, which the caller looks at.
fn may_need_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    let has_byte = |c: u8| has_zero(word ^ (ONES * u64::from(c)));
    // Some byte below 0x20.
    let has_control = word.wrapping_sub(ONES * 0x20) & !word & HIGH != 0;
    has_control
        || has_byte(b'"')
        || has_byte(b'\\')
        || has_byte(b'<')
        || has_byte(b'>')
        || has_byte(b'&')
        || has_byte(0xe2)
}

/// One top-level value of a stream [`canonical_values`] accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CanonicalValue<'a> {
    /// The value's JSON text, exactly as [`to_string`] would write it.
    pub text: &'a str,
    /// The object's top-level `"kind"`, when it is a plain string.
    pub kind: Option<&'a str>,
}

/// Splits a stream of JSON objects, each followed by one newline as Go's
/// `json.Encoder` writes them, into the objects' texts, when every object is
/// already byte for byte what [`to_string`] writes for it: no whitespace,
/// keys strictly sorted, Go's escapes, numbers as Go formats them.
///
/// An index written by opm (or by `olm-catalog index add`) stores manifests
/// that way, so serving them needs no decode and re-encode: this check is a
/// single pass over the bytes. `None` means "not canonical, or not sure":
/// the caller then decodes and re-encodes, which gives the same bytes for
/// canonical input and the right bytes for anything else.
pub fn canonical_values(text: &str) -> Option<Vec<CanonicalValue<'_>>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'{' {
            return None;
        }
        let start = i;
        let mut c = Checker {
            b,
            i,
            depth: 0,
            kind: None,
        };
        c.object(true)?;
        i = c.i;
        out.push(CanonicalValue {
            text: &text[start..i],
            kind: c.kind.map(|(s, e)| &text[s..e]),
        });
        if b.get(i) != Some(&b'\n') {
            return None;
        }
        i += 1;
    }
    Some(out)
}

/// Deeper values than this are left to the decoding path.
const MAX_CANONICAL_DEPTH: usize = 128;

struct Checker<'a> {
    b: &'a [u8],
    i: usize,
    depth: usize,
    /// Byte range of the top-level object's `"kind"` string contents.
    kind: Option<(usize, usize)>,
}

impl Checker<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    fn value(&mut self) -> Option<()> {
        match self.peek()? {
            b'{' => self.object(false),
            b'[' => self.array(),
            b'"' => self.string().map(|_| ()),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, lit: &[u8]) -> Option<()> {
        let end = self.i + lit.len();
        (self.b.get(self.i..end)? == lit).then(|| self.i = end)
    }

    fn object(&mut self, top: bool) -> Option<()> {
        self.depth += 1;
        if self.depth > MAX_CANONICAL_DEPTH {
            return None;
        }
        self.eat(b'{')?;
        let mut prev: Option<&[u8]> = None;
        if self.peek()? != b'}' {
            loop {
                let (ks, ke, escaped) = self.string()?;
                // Keys with escapes would need decoding to compare: rare, so
                // left to the decoding path.
                if escaped {
                    return None;
                }
                let key = &self.b[ks..ke];
                if prev.is_some_and(|p| p >= key) {
                    return None;
                }
                prev = Some(key);
                self.eat(b':')?;
                if top && key == b"kind" && self.peek()? == b'"' {
                    let (vs, ve, esc) = self.string()?;
                    if esc {
                        // Decode to compare: left to the decoding path.
                        return None;
                    }
                    self.kind = Some((vs, ve));
                } else {
                    self.value()?;
                }
                if self.peek()? == b',' {
                    self.i += 1;
                    continue;
                }
                break;
            }
        }
        self.eat(b'}')?;
        self.depth -= 1;
        Some(())
    }

    fn array(&mut self) -> Option<()> {
        self.depth += 1;
        if self.depth > MAX_CANONICAL_DEPTH {
            return None;
        }
        self.eat(b'[')?;
        if self.peek()? != b']' {
            loop {
                self.value()?;
                if self.peek()? == b',' {
                    self.i += 1;
                    continue;
                }
                break;
            }
        }
        self.eat(b']')?;
        self.depth -= 1;
        Some(())
    }

    /// A string in Go's form; returns the contents' byte range and whether
    /// it holds an escape.
    fn string(&mut self) -> Option<(usize, usize, bool)> {
        self.eat(b'"')?;
        let start = self.i;
        let mut escaped = false;
        loop {
            let c = self.peek()?;
            match c {
                b'"' => {
                    let end = self.i;
                    self.i += 1;
                    return Some((start, end, escaped));
                }
                b'\\' => {
                    escaped = true;
                    let e = *self.b.get(self.i + 1)?;
                    match e {
                        b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f' => self.i += 2,
                        b'u' => {
                            let hex = self.b.get(self.i + 2..self.i + 6)?;
                            // Exactly the \u escapes Go writes: lower-case
                            // hex, for <, >, &, U+2028, U+2029 and the
                            // control characters without a short form.
                            let ok = match hex {
                                b"003c" | b"003e" | b"0026" | b"2028" | b"2029" => true,
                                [b'0', b'0', h, l] => {
                                    let v = hexval(*h)? * 16 + hexval(*l)?;
                                    v < 0x20 && !matches!(v, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d)
                                }
                                _ => false,
                            };
                            if !ok {
                                return None;
                            }
                            self.i += 6;
                        }
                        _ => return None,
                    }
                }
                0x00..=0x1f | b'<' | b'>' | b'&' => return None,
                // U+2028 and U+2029 are E2 80 A8 / E2 80 A9 in UTF-8.
                0xe2 if self.b.get(self.i + 1) == Some(&0x80)
                    && matches!(self.b.get(self.i + 2), Some(0xa8 | 0xa9)) =>
                {
                    return None
                }
                _ => self.i += 1,
            }
        }
    }

    fn number(&mut self) -> Option<()> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if matches!(c, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                self.i += 1;
            } else {
                break;
            }
        }
        let tok = std::str::from_utf8(&self.b[start..self.i]).ok()?;
        let n: serde_json::Number = tok.parse().ok()?;
        let mut again = String::new();
        write_number(&mut again, &n);
        (again == tok).then_some(())
    }
}

fn hexval(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

/// Go's `%q` (`strconv.Quote`), as opm's error texts and `opm alpha
/// render-graph` quote names: printable characters as they are, `"` and `\` escaped, the
/// rest as `\a`-style, `\xHH` (ASCII) or `\uHHHH` escapes. Go's notion of
/// printable is Unicode's graphic categories; outside ASCII this treats as
/// not printable what Rust knows to be control or white space, the format
/// characters that occur in text, and private use.
pub fn go_quote(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if go_printable(c) => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// `unicode.IsPrint` outside ASCII, as far as std can tell.
fn go_printable(c: char) -> bool {
    let u = c as u32;
    let format = matches!(
        u,
        0xad | 0x600..=0x605
            | 0x61c
            | 0x6dd
            | 0x70f
            | 0x180e
            | 0x200b..=0x200f
            | 0x202a..=0x202e
            | 0x2060..=0x2064
            | 0x2066..=0x206f
            | 0xfeff
            | 0xfff9..=0xfffb
    );
    let private = matches!(u, 0xe000..=0xf8ff | 0xf0000..=0x10ffff);
    !(c.is_control() || c.is_whitespace() || format || private)
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_null_counts_only_for_nullable_go_kinds() {
        let v: Value =
            serde_json::json!({"Labels": {"a": "b"}, "labels": null, "NAME": "x", "name": null});
        let m = v.as_object().expect("object");
        // Sorted keys: "Labels" before "labels", "NAME" before "name".
        assert_eq!(
            map_struct_field(m, "labels"),
            Some(&serde_json::json!({"a": "b"}))
        );
        assert_eq!(map_struct_field_nullable(m, "labels"), Some(&Value::Null));
        assert_eq!(map_struct_field(m, "name"), Some(&serde_json::json!("x")));
        assert_eq!(map_struct_field(m, "missing"), None);
        assert_eq!(map_struct_field_nullable(m, "missing"), None);
        assert_eq!(struct_field(&v, "name"), Some(&serde_json::json!("x")));
    }

    #[test]
    fn struct_fields_match_as_go_decodes_them() {
        use super::{struct_field, struct_field_values};
        use serde_json::json;
        let v = json!({"PackageName": "etcd", "VERSION": "0.9.4"});
        assert_eq!(struct_field(&v, "packageName"), Some(&json!("etcd")));
        assert_eq!(struct_field(&v, "version"), Some(&json!("0.9.4")));
        assert_eq!(struct_field(&v, "release"), None);
        // Of two spellings the later one (sorted order) wins...
        let two = json!({"PackageName": "a", "packagename": "b"});
        assert_eq!(struct_field(&two, "packageName"), Some(&json!("b")));
        // ...but null leaves a string as it was.
        let null = json!({"PackageName": "a", "packagename": null});
        assert_eq!(struct_field(&null, "packageName"), Some(&json!("a")));
        assert_eq!(
            struct_field(&json!({"kind": null}), "kind"),
            Some(&json!(null))
        );
        // Unicode simple folding: the Kelvin sign is a k, the long s an s;
        // `ß` has no simple uppercase and stays itself.
        let k = json!({"\u{212A}IND": "Foo", "\u{17F}chema": "x", "\u{DF}": 1});
        assert_eq!(struct_field(&k, "kind"), Some(&json!("Foo")));
        assert_eq!(struct_field(&k, "schema"), Some(&json!("x")));
        assert_eq!(struct_field(&k, "ss"), None);
        // Dashes and underscores are not ignored; not an object, no field.
        assert_eq!(
            struct_field(&json!({"package_name": "a"}), "packageName"),
            None
        );
        assert_eq!(struct_field(&json!("x"), "kind"), None);
        let all: Vec<&str> = struct_field_values(&two, "packageName")
            .map(|(k, _)| k)
            .collect();
        assert_eq!(all, ["PackageName", "packagename"]);
    }

    #[test]
    fn strings_escape_as_go_writes_them() {
        let cases = [
            ("plain", r#""plain""#),
            ("", r#""""#),
            ("q\"b\\s/", r#""q\"b\\s/""#),
            ("a<b>&c", r#""a\u003cb\u003e\u0026c""#),
            (
                "\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}",
                r#""\n\r\t\b\f\u0001\u001f\u{7f}""#,
            ),
            (
                "x\u{2028}y\u{2029}z\u{2027}é€",
                "\"x\\u2028y\\u2029z\u{2027}é€\"",
            ),
        ];
        for (input, want) in cases {
            let mut out = String::new();
            write_string(&mut out, input);
            assert_eq!(out, want.replace("\\u{7f}", "\u{7f}"), "{input:?}");
        }
        // Every escape at every offset of a long string, against the
        // character-by-character definition.
        let specials = [
            '"', '\\', '\n', '\u{1}', '<', '>', '&', '\u{2028}', '\u{2029}', '\u{2027}', 'é',
            '\u{7f}',
        ];
        for sp in specials {
            for at in 0..20 {
                let text: String = (0..24).map(|i| if i == at { sp } else { 'a' }).collect();
                let mut out = String::new();
                write_string(&mut out, &text);
                let mut want = String::from("\"");
                for c in text.chars() {
                    match c {
                        '"' => want.push_str("\\\""),
                        '\\' => want.push_str("\\\\"),
                        '\n' => want.push_str("\\n"),
                        '\u{1}' => want.push_str("\\u0001"),
                        '<' => want.push_str("\\u003c"),
                        '>' => want.push_str("\\u003e"),
                        '&' => want.push_str("\\u0026"),
                        '\u{2028}' => want.push_str("\\u2028"),
                        '\u{2029}' => want.push_str("\\u2029"),
                        c => want.push(c),
                    }
                }
                want.push('"');
                assert_eq!(out, want, "{sp:?} at {at}");
            }
        }
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn sorted_keys_and_html_escapes() {
        let v = json!({"b": "<a&b>", "a": [1, 2.5, true, null], "c": "\u{1}"});
        assert_eq!(
            to_string(&v),
            r#"{"a":[1,2.5,true,null],"b":"\u003ca\u0026b\u003e","c":"\u0001"}"#
        );
    }

    #[test]
    fn canonical_streams_are_split_without_decoding() {
        let a = to_string(
            &json!({"kind": "ClusterServiceVersion", "spec": {"x": [1, -2.5, "<\u{8}\u{1}>", null, true]}}),
        );
        let b = to_string(&json!({"apiVersion": "v1", "kind": "Service"}));
        let text = format!("{a}\n{b}\n");
        let got = canonical_values(&text).expect("canonical");
        assert_eq!(got.len(), 2);
        assert_eq!(
            (got[0].text, got[0].kind),
            (a.as_str(), Some("ClusterServiceVersion"))
        );
        assert_eq!((got[1].text, got[1].kind), (b.as_str(), Some("Service")));
        assert_eq!(canonical_values(""), Some(vec![]));
    }

    #[test]
    fn anything_not_exactly_canonical_is_refused() {
        for text in [
            "{\"a\":1}",              // no newline after the value
            "{\"a\": 1}\n",           // whitespace
            "{\"b\":1,\"a\":2}\n",    // keys out of order
            "{\"a\":1,\"a\":2}\n",    // duplicate key
            "{\"a\":1.0}\n",          // Go writes 1
            "{\"a\":1e3}\n",          // Go writes 1000
            "{\"a\":\"\\/\"}\n",      // needless escape
            "{\"a\":\"\\u0041\"}\n",  // needless \u escape
            "{\"a\":\"\\u003C\"}\n",  // upper-case hex
            "{\"a\":\"\\u0008\"}\n",  // Go writes \b
            "{\"a\":\"<\"}\n",        // Go escapes <
            "{\"a\":\"\u{2028}\"}\n", // Go escapes U+2028
            "{\"a\\n\":1}\n",         // escaped key: decode to compare
            "[1]\n",                  // not an object
            "null\n",
            "{\"a\":1}\n\n", // blank line
            "{\"a\":tru}\n",
            "{\"a\":\"x}\n",
        ] {
            assert_eq!(canonical_values(text), None, "{text:?}");
        }
        let deep = format!("{}{}\n", "{\"a\":".repeat(200) + "1", "}".repeat(200));
        assert_eq!(canonical_values(&deep), None);
    }

    #[test]
    fn short_escapes_and_big_integers_like_go() {
        assert_eq!(to_string(&json!("\u{8}\u{c}\u{1}")), r#""\b\f\u0001""#);
        // Beyond int64 Kubernetes decodes a float64.
        let big: Value = serde_json::from_str("12345678901234567890").expect("number");
        assert_eq!(to_string(&big), "12345678901234567000");
    }

    #[test]
    fn numbers_decode_as_go_decodes_them_into_interface() {
        let mut v: Value = serde_json::from_str(
            r#"[1.0, 1e3, 12345678901234567890, 0.1, 4.10, -0.0, 3, 1e21, 9007199254740993]"#,
        )
        .expect("json");
        numbers_as_floats(&mut v);
        assert_eq!(
            serde_json::to_string(&v).expect("json"),
            "[1,1000,12345678901234567000,0.1,4.1,-0.0,3,1e+21,9007199254740992]"
        );
        assert_eq!(
            to_string(&v),
            "[1,1000,12345678901234567000,0.1,4.1,-0,3,1e+21,9007199254740992]"
        );
    }

    #[test]
    fn floats_like_go() {
        assert_eq!(format_float(1.0), "1");
        assert_eq!(format_float(0.000001), "0.000001");
        assert_eq!(format_float(0.0000001), "1e-7");
        assert_eq!(format_float(1e21), "1e+21");
        assert_eq!(format_float(123456789.0), "123456789");
        assert_eq!(format_float(-2.5), "-2.5");
    }
}

/// A Go type that `encoding/json` decodes into, for checking a JSON value
/// as Go's `json.Unmarshal` would, without building the Go value. Struct
/// fields are listed in the Go struct's order.
#[derive(Debug, Clone, Copy)]
pub enum GoType {
    /// `string`.
    Str,
    /// `bool`.
    Bool,
    /// A signed integer type of this many bits (`int` is 64).
    Int(u32),
    /// `[]byte`: a base64 string.
    Bytes,
    /// `json.RawMessage` or `interface{}`: any value.
    Any,
    /// `[]T`.
    Slice(&'static GoType),
    /// `map[string]T`.
    Map(&'static GoType),
    /// A struct: its JSON field names and types (unknown keys are ignored,
    /// as Go ignores them).
    Struct(&'static [(&'static str, GoType)]),
}

impl GoType {
    /// Go's name of the type's kind in a decode error (`"string"`,
    /// `"[]string"`, `"int32"`).
    fn describe(&self) -> String {
        match self {
            GoType::Str => "string".into(),
            GoType::Bool => "bool".into(),
            GoType::Int(64) => "int".into(),
            GoType::Int(bits) => format!("int{bits}"),
            GoType::Bytes => "[]uint8".into(),
            GoType::Any => "interface {}".into(),
            GoType::Slice(t) => format!("[]{}", t.describe()),
            GoType::Map(t) => format!("map[string]{}", t.describe()),
            GoType::Struct(_) => "struct".into(),
        }
    }
}

/// Whether `value` decodes into `ty` as Go's `json.Unmarshal` decodes it:
/// `Err` with the first type mismatch, as `field "a.b": cannot unmarshal
/// string into a bool` (the path of struct fields, as Go names them;
/// `null` is never a mismatch, it leaves Go's zero value).
pub fn check_go_decode(value: &Value, ty: &GoType) -> Result<(), String> {
    check_at(value, ty, &mut Vec::new())
}

fn check_at(value: &Value, ty: &GoType, path: &mut Vec<&'static str>) -> Result<(), String> {
    let mismatch = |path: &[&str], what: String| {
        Err(format!(
            "{}cannot unmarshal {what} into {}",
            field_prefix(path),
            match ty {
                GoType::Struct(_) => "an object".to_string(),
                t => {
                    let name = t.describe();
                    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
                        "an"
                    } else {
                        "a"
                    };
                    format!("{article} {name}")
                }
            }
        ))
    };
    match (ty, value) {
        (_, Value::Null) | (GoType::Any, _) => Ok(()),
        (GoType::Str, Value::String(_)) | (GoType::Bool, Value::Bool(_)) => Ok(()),
        (GoType::Int(bits), Value::Number(n)) => {
            let fits = n.as_i64().is_some_and(|i| {
                let max = if *bits >= 64 {
                    i64::MAX
                } else {
                    (1i64 << (bits - 1)) - 1
                };
                i >= -max - 1 && i <= max
            });
            if fits {
                Ok(())
            } else {
                mismatch(path, format!("number {n}"))
            }
        }
        (GoType::Bytes, Value::String(s)) => decode_go_base64(s)
            .map(|_| ())
            .map_err(|e| format!("{}illegal base64 data: {e}", field_prefix(path))),
        (GoType::Slice(t), Value::Array(items)) => {
            items.iter().try_for_each(|v| check_at(v, t, path))
        }
        (GoType::Map(t), Value::Object(m)) => m.values().try_for_each(|v| check_at(v, t, path)),
        (GoType::Struct(fields), Value::Object(_)) => {
            for (name, t) in fields.iter() {
                for (_, v) in struct_field_values(value, name) {
                    path.push(name);
                    let r = check_at(v, t, path);
                    path.pop();
                    r?;
                }
            }
            Ok(())
        }
        (_, v) => mismatch(path, go_json_type(v).to_string()),
    }
}

/// `field "a.b": ` for a decode error at struct field path `path`, or
/// nothing at the top.
fn field_prefix(path: &[&str]) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("field {:?}: ", path.join("."))
    }
}

/// The JSON type name Go's decoder uses in its type errors.
pub fn go_json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Decodes base64 as Go's `encoding/json` does for `[]byte` fields
/// (standard alphabet, padded; line breaks ignored; trailing bits not
/// checked).
pub fn decode_go_base64(data: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::engine::{GeneralPurpose, GeneralPurposeConfig};
    use base64::Engine;
    const GO_STD: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
    );
    if data.contains(['\r', '\n']) {
        let clean: String = data.chars().filter(|c| *c != '\r' && *c != '\n').collect();
        GO_STD.decode(clean)
    } else {
        GO_STD.decode(data)
    }
}

/// A JSON value that keeps its object keys in the order given: what Go
/// writes for a struct (its fields' order) or a `json.RawMessage` (its
/// bytes' order), where a [`Value`] would sort them.
#[derive(Debug, Clone, PartialEq)]
pub enum Ordered {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Ordered>),
    /// An object, its keys in order.
    Object(Vec<(String, Ordered)>),
}

impl Ordered {
    /// `v` in the order Go writes it when it is a value of type `ty`:
    /// a struct's fields in the struct's order (keys that are no field of it
    /// after them), a map's keys sorted.
    pub fn shaped(v: &Value, ty: &GoType) -> Ordered {
        match (v, ty) {
            (Value::Object(m), GoType::Struct(fields)) => {
                let mut out = Vec::with_capacity(m.len());
                for (name, t) in fields.iter() {
                    if let Some((k, item)) = m.get_key_value(*name) {
                        out.push((k.clone(), Ordered::shaped(item, t)));
                    }
                }
                for (k, item) in m {
                    if !fields.iter().any(|(name, _)| name == k) {
                        out.push((k.clone(), Ordered::from(item)));
                    }
                }
                Ordered::Object(out)
            }
            (Value::Object(m), GoType::Map(t)) => Ordered::Object(
                m.iter()
                    .map(|(k, item)| (k.clone(), Ordered::shaped(item, t)))
                    .collect(),
            ),
            (Value::Array(items), GoType::Slice(t)) => {
                Ordered::Array(items.iter().map(|i| Ordered::shaped(i, t)).collect())
            }
            (v, _) => Ordered::from(v),
        }
    }

    /// Parses JSON text keeping its keys' order.
    pub fn parse(text: &str) -> Result<Ordered, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// [`Ordered::parse`], or `None` when every object of `text` has its
    /// keys in sorted order (what a [`Value`] writes anyway): checked
    /// without building anything, since nearly every value opm stored is so.
    pub fn parse_unless_sorted(text: &str) -> Option<Ordered> {
        match serde_json::from_str::<KeysSorted>(text) {
            Ok(KeysSorted(true)) => None,
            _ => Ordered::parse(text).ok().filter(|o| !o.is_sorted()),
        }
    }

    /// The value with its keys sorted, as every reader of values sees it.
    pub fn to_value(&self) -> Value {
        match self {
            Ordered::Null => Value::Null,
            Ordered::Bool(b) => Value::Bool(*b),
            Ordered::Number(n) => Value::Number(n.clone()),
            Ordered::String(s) => Value::String(s.clone()),
            Ordered::Array(items) => Value::Array(items.iter().map(Ordered::to_value).collect()),
            Ordered::Object(pairs) => Value::Object(
                pairs
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
        }
    }

    /// Whether every object's keys are in sorted order (and unique), so
    /// that the value's [`Value`] writes the same.
    pub fn is_sorted(&self) -> bool {
        match self {
            Ordered::Array(items) => items.iter().all(Ordered::is_sorted),
            Ordered::Object(pairs) => {
                pairs.windows(2).all(|w| w[0].0 < w[1].0)
                    && pairs.iter().all(|(_, v)| v.is_sorted())
            }
            _ => true,
        }
    }
}

/// Whether every object of a JSON value has its keys in strictly
/// increasing order, read without building the value.
struct KeysSorted(bool);

impl<'de> serde::Deserialize<'de> for KeysSorted {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<KeysSorted, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = KeysSorted;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<KeysSorted, E> {
                Ok(KeysSorted(true))
            }
            fn visit_bool<E>(self, _: bool) -> Result<KeysSorted, E> {
                Ok(KeysSorted(true))
            }
            fn visit_i64<E>(self, _: i64) -> Result<KeysSorted, E> {
                Ok(KeysSorted(true))
            }
            fn visit_u64<E>(self, _: u64) -> Result<KeysSorted, E> {
                Ok(KeysSorted(true))
            }
            fn visit_f64<E>(self, _: f64) -> Result<KeysSorted, E> {
                Ok(KeysSorted(true))
            }
            fn visit_str<E>(self, _: &str) -> Result<KeysSorted, E> {
                Ok(KeysSorted(true))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<KeysSorted, A::Error> {
                let mut sorted = true;
                while let Some(KeysSorted(s)) = a.next_element()? {
                    sorted &= s;
                }
                Ok(KeysSorted(sorted))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<KeysSorted, A::Error> {
                let mut sorted = true;
                let mut last: Option<std::borrow::Cow<'de, str>> = None;
                while let Some(key) = a.next_key::<std::borrow::Cow<'de, str>>()? {
                    let KeysSorted(s) = a.next_value()?;
                    sorted &= s && last.as_deref().is_none_or(|l| l < key.as_ref());
                    last = Some(key);
                }
                Ok(KeysSorted(sorted))
            }
        }
        d.deserialize_any(Visitor)
    }
}

impl From<&Value> for Ordered {
    fn from(v: &Value) -> Ordered {
        match v {
            Value::Null => Ordered::Null,
            Value::Bool(b) => Ordered::Bool(*b),
            Value::Number(n) => Ordered::Number(n.clone()),
            Value::String(s) => Ordered::String(s.clone()),
            Value::Array(items) => Ordered::Array(items.iter().map(Ordered::from).collect()),
            Value::Object(m) => Ordered::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), Ordered::from(v)))
                    .collect(),
            ),
        }
    }
}

impl serde::Serialize for Ordered {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Ordered::Null => s.serialize_unit(),
            Ordered::Bool(b) => s.serialize_bool(*b),
            Ordered::Number(n) => n.serialize(s),
            Ordered::String(v) => s.serialize_str(v),
            Ordered::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(i)?;
                }
                seq.end()
            }
            Ordered::Object(pairs) => {
                let mut map = s.serialize_map(Some(pairs.len()))?;
                for (k, v) in pairs {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Ordered, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Null)
            }
            fn visit_none<E>(self) -> Result<Ordered, E> {
                Ok(Ordered::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Ordered, E> {
                Ok(Ordered::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Ordered, E> {
                Ok(Ordered::Number(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Ordered, E> {
                Ok(Ordered::Number(n.into()))
            }
            fn visit_f64<E>(self, n: f64) -> Result<Ordered, E> {
                Ok(serde_json::Number::from_f64(n).map_or(Ordered::Null, Ordered::Number))
            }
            fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
                Ok(Ordered::String(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<Ordered, E> {
                Ok(Ordered::String(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Ordered, A::Error> {
                let mut items = Vec::new();
                while let Some(i) = a.next_element()? {
                    items.push(i);
                }
                Ok(Ordered::Array(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Ordered, A::Error> {
                let mut pairs = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Ordered>()? {
                    pairs.push((k, v));
                }
                Ok(Ordered::Object(pairs))
            }
        }
        d.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod ordered_tests {
    use super::Ordered;

    #[test]
    fn unsorted_keys_are_kept_in_their_order_and_sorted_ones_need_nothing() {
        for sorted in [
            r#"{"a":1,"b":[{"c":2,"d":"\u003c"}]}"#,
            "[]",
            "3",
            r#""x""#,
            "{}",
        ] {
            assert_eq!(Ordered::parse_unless_sorted(sorted), None, "{sorted}");
        }
        let text = r#"{"packageName":"p","version":"1.0.0","release":"2","x":[{"b":1,"a":2}]}"#;
        let o = Ordered::parse_unless_sorted(text).expect("unsorted");
        assert_eq!(serde_json::to_string(&o).expect("json"), text);
        let nested = r#"{"a":[{"b":1,"a":2}]}"#;
        assert!(Ordered::parse_unless_sorted(nested).is_some());
        // A key given twice is kept twice, as Go keeps a RawMessage's bytes.
        let twice = r#"{"a":1,"a":2}"#;
        let o = Ordered::parse_unless_sorted(twice).expect("duplicate key");
        assert_eq!(serde_json::to_string(&o).expect("json"), twice);
    }
}
