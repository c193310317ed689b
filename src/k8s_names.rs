//! Kubernetes name and label syntax, as `k8s.io/apimachinery` defines and
//! words it (`pkg/util/validation`, and from v0.35 `pkg/api/validate/content`
//! for label keys and values). Each function returns apimachinery's messages
//! (empty when the value is valid), so a finding or error says what
//! operator-sdk, opm or a cluster would say. The one place these rules live:
//! the bundle validators, the FBC model, label selectors and the catalogd HTTP
//! API all call them, each with the apimachinery its upstream was built with.

/// Which apimachinery words the messages; the rules are the same in both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Apimachinery {
    /// v0.26.1: operator-framework/api's validators as opm v1.26.5's module
    /// graph builds them (what the golden verdicts were made with).
    V0_26,
    /// v0.36: opm v1.73.0, operator-controller and catalogd. `IsDNS1123Label`
    /// says `must not contain dots` of a dotted name (from v0.27), and label
    /// keys and values (`content.IsLabelKey`, `IsLabelValue`) count `bytes`
    /// and call a key with two slashes "a valid label key".
    V0_36,
}

/// Longest DNS-1123 subdomain.
pub const DNS1123_SUBDOMAIN_MAX: usize = 253;
/// Longest DNS label (RFC 1123 or 1035), label value and qualified-name name part.
pub const DNS_LABEL_MAX: usize = 63;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_EXAMPLES: &[&str] = &["MyName", "my.name", "123-abc"];

/// apimachinery's `RegexError`: the message, then examples and the regex
/// (each example followed by `, `, joined by ` or `: two spaces before
/// `or`, as Kubernetes prints it).
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut s = String::from(msg);
    if examples.is_empty() {
        s.push_str(&format!(" (regex used for validation is '{fmt}')"));
        return s;
    }
    s.push_str(" (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{e}', "));
    }
    s.push_str(&format!("regex used for validation is '{fmt}')"));
    s
}

/// apimachinery's `MaxLenError`: `pkg/util/validation`'s counts characters;
/// `pkg/api/validate/content`'s (label keys and values from v0.35) bytes.
fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

fn content_max_len_error(n: usize, version: Apimachinery) -> String {
    match version {
        Apimachinery::V0_26 => max_len_error(n),
        Apimachinery::V0_36 => format!("must be no more than {n} bytes"),
    }
}

fn is_alnum_lower(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?` (or `[a-z]...` when `first_letter`),
/// whole string, without the length limit.
fn is_label_shape(s: &str, first_letter: bool) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    let first_ok = if first_letter {
        first.is_ascii_lowercase()
    } else {
        is_alnum_lower(first)
    };
    first_ok && is_alnum_lower(last) && b.iter().all(|&c| is_alnum_lower(c) || c == b'-')
}

/// The DNS-1123 subdomain regex, whole string, without the length limit.
fn is_subdomain_shape(s: &str) -> bool {
    s.split('.').all(|part| is_label_shape(part, false))
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, whole string.
fn is_qualified_shape(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `IsDNS1123Subdomain`: `metadata.name` of most objects.
pub fn dns1123_subdomain(s: &str) -> Vec<String> {
    subdomain_errors(s, max_len_error)
}

/// `IsDNS1123Subdomain` with the length message `too_long` gives (v0.36's
/// `content` package, which checks a label key's prefix, counts bytes).
fn subdomain_errors(s: &str, too_long: impl Fn(usize) -> String) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > DNS1123_SUBDOMAIN_MAX {
        out.push(too_long(DNS1123_SUBDOMAIN_MAX));
    }
    if !is_subdomain_shape(s) {
        out.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    out
}

/// `IsDNS1123Label`: namespaces, CRD plurals, FBC package names.
pub fn dns1123_label(s: &str, version: Apimachinery) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > DNS_LABEL_MAX {
        out.push(max_len_error(DNS_LABEL_MAX));
    }
    if !is_label_shape(s, false) {
        if version == Apimachinery::V0_36 && is_subdomain_shape(s) {
            out.push("must not contain dots".to_string());
        } else {
            out.push(regex_error(
                DNS1123_LABEL_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    out
}

/// `IsDNS1035Label`: Service names, CRD version names.
pub fn dns1035_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > DNS_LABEL_MAX {
        out.push(max_len_error(DNS_LABEL_MAX));
    }
    if !is_label_shape(s, true) {
        out.push(regex_error(
            DNS1035_LABEL_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    out
}

/// `IsValidLabelValue` (empty is valid).
pub fn label_value(s: &str, version: Apimachinery) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > DNS_LABEL_MAX {
        out.push(content_max_len_error(DNS_LABEL_MAX, version));
    }
    if !(s.is_empty() || is_qualified_shape(s)) {
        out.push(regex_error(
            LABEL_VALUE_MSG,
            &format!("({QUALIFIED_NAME_FMT})?"),
            &["MyValue", "my_value", "12345"],
        ));
    }
    out
}

/// `IsQualifiedName` (`content.IsLabelKey` in v0.36): label and annotation
/// keys, an optional DNS-1123 subdomain prefix and `/`, then a name of at
/// most 63 characters.
pub fn qualified_name(s: &str, version: Apimachinery) -> Vec<String> {
    let mut out = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                out.push("prefix part must be non-empty".to_string());
            } else {
                out.extend(
                    subdomain_errors(prefix, |n| content_max_len_error(n, version))
                        .into_iter()
                        .map(|v| format!("prefix part {v}")),
                );
            }
            name
        }
        _ => {
            let what = match version {
                Apimachinery::V0_26 => "a qualified name",
                Apimachinery::V0_36 => "a valid label key",
            };
            out.push(format!(
                "{what} {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, QUALIFIED_NAME_EXAMPLES)
            ));
            return out;
        }
    };
    if name.is_empty() {
        out.push("name part must be non-empty".to_string());
    } else if name.len() > DNS_LABEL_MAX {
        out.push(format!(
            "name part {}",
            content_max_len_error(DNS_LABEL_MAX, version)
        ));
    }
    if !is_qualified_shape(name) {
        out.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                QUALIFIED_NAME_EXAMPLES
            )
        ));
    }
    out
}

/// `path.IsValidPathSegmentName`: RBAC object names may hold `:`.
pub fn path_segment_name(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s == "." || s == ".." {
        out.push(format!("may not be '{s}'"));
    }
    for bad in ['/', '%'] {
        if s.contains(bad) {
            out.push(format!("may not contain '{bad}'"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Apimachinery::{V0_26, V0_36};
    use super::*;

    #[test]
    fn valid_and_invalid_names() {
        assert!(dns1123_subdomain("etcdoperator.v0.9.4").is_empty());
        assert!(!dns1123_subdomain("Etcd.v1").is_empty());
        assert!(!dns1123_subdomain("a..b").is_empty());
        assert!(!dns1123_subdomain("").is_empty());
        assert_eq!(dns1123_subdomain(&"a".repeat(254)).len(), 1);
        assert!(dns1123_label("etcd-0", V0_26).is_empty());
        assert!(dns1035_label("v1beta1").is_empty());
        assert!(!dns1035_label("1v").is_empty());
        assert!(label_value("", V0_26).is_empty());
        assert!(label_value("op.v1.0.0_x", V0_36).is_empty());
        assert!(qualified_name("olm.skipRange", V0_26).is_empty());
        assert!(qualified_name("operators.openshift.io/infrastructure-features", V0_36).is_empty());
        assert!(path_segment_name("system:auth").is_empty());
        assert!(!path_segment_name("a/b").is_empty());
    }

    /// apimachinery's own texts, two spaces before `or` included.
    #[test]
    fn messages_are_apimachinery_s() {
        let label_msg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
        assert_eq!(dns1123_label("etcd.0", V0_26), [label_msg]);
        assert_eq!(dns1123_label("etcd.0", V0_36), ["must not contain dots"]);
        assert_eq!(dns1123_label("Etcd.0", V0_36), [label_msg]);
        let key_regex = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        let tail = "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
        assert_eq!(
            qualified_name("a/b/c", V0_26),
            [format!("a qualified name {key_regex} {tail}")]
        );
        assert_eq!(
            qualified_name("a/b/c", V0_36),
            [format!("a valid label key {key_regex} {tail}")]
        );
        // An empty name part fails both the emptiness and the regex checks.
        assert_eq!(
            qualified_name("example.com/", V0_36),
            [
                "name part must be non-empty".to_string(),
                format!("name part {key_regex}")
            ]
        );
        assert_eq!(
            qualified_name("/x", V0_26),
            ["prefix part must be non-empty"]
        );
        let long = "a".repeat(64);
        assert_eq!(
            qualified_name(&long, V0_26),
            ["name part must be no more than 63 characters"]
        );
        assert_eq!(
            qualified_name(&long, V0_36),
            ["name part must be no more than 63 bytes"]
        );
        assert_eq!(label_value(&long, V0_36), ["must be no more than 63 bytes"]);
        let long_prefix = format!("{}/x", "a".repeat(254));
        assert_eq!(
            qualified_name(&long_prefix, V0_26),
            ["prefix part must be no more than 253 characters"]
        );
        assert_eq!(
            qualified_name(&long_prefix, V0_36),
            ["prefix part must be no more than 253 bytes"]
        );
        assert_eq!(
            dns1123_subdomain("Bad"),
            ["a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]
        );
        assert_eq!(
            label_value("-x", V0_26),
            ["a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]
        );
    }
}
