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

fn write_number(out: &mut String, n: &serde_json::Number) {
    if let Some(i) = n.as_i64() {
        out.push_str(&i.to_string());
    } else if let Some(u) = n.as_u64() {
        out.push_str(&u.to_string());
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
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
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
    fn floats_like_go() {
        assert_eq!(format_float(1.0), "1");
        assert_eq!(format_float(0.000001), "0.000001");
        assert_eq!(format_float(0.0000001), "1e-7");
        assert_eq!(format_float(1e21), "1e+21");
        assert_eq!(format_float(123456789.0), "123456789");
        assert_eq!(format_float(-2.5), "-2.5");
    }
}
