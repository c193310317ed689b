//! Kubernetes name and label syntax, as `k8s.io/apimachinery/pkg/util/validation`
//! defines it. Each function returns the violations in words (empty when the
//! value is valid), so messages can say what is wrong.

/// Longest DNS-1123 subdomain.
pub const DNS1123_SUBDOMAIN_MAX: usize = 253;
/// Longest DNS label (RFC 1123 or 1035) and label value.
pub const DNS_LABEL_MAX: usize = 63;

fn is_alnum_lower(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?` without the length limit.
fn label_shape(s: &str, first_letter: bool) -> bool {
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

/// Violations of a DNS-1123 subdomain (`metadata.name` of most objects).
pub fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > DNS1123_SUBDOMAIN_MAX {
        out.push(format!(
            "must be no more than {DNS1123_SUBDOMAIN_MAX} characters"
        ));
    }
    if s.is_empty() || !s.split('.').all(|part| label_shape(part, false)) {
        out.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', \
and must start and end with an alphanumeric character"
                .to_string(),
        );
    }
    out
}

/// Violations of a DNS-1123 label (namespaces, CRD plurals).
pub fn dns1123_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > DNS_LABEL_MAX {
        out.push(format!("must be no more than {DNS_LABEL_MAX} characters"));
    }
    if !label_shape(s, false) {
        out.push(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', \
and must start and end with an alphanumeric character"
                .to_string(),
        );
    }
    out
}

/// Violations of a DNS-1035 label (Service names, CRD version names).
pub fn dns1035_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > DNS_LABEL_MAX {
        out.push(format!("must be no more than {DNS_LABEL_MAX} characters"));
    }
    if !label_shape(s, true) {
        out.push(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', \
start with an alphabetic character, and end with an alphanumeric character"
                .to_string(),
        );
    }
    out
}

fn qualified_part(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// Violations of a label value (empty is valid).
pub fn label_value(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > DNS_LABEL_MAX {
        out.push(format!("must be no more than {DNS_LABEL_MAX} characters"));
    }
    if !s.is_empty() && !qualified_part(s) {
        out.push(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', \
and must start and end with an alphanumeric character"
                .to_string(),
        );
    }
    out
}

/// Violations of a qualified name (label and annotation keys):
/// an optional DNS-1123 subdomain prefix and `/`, then a name of at most 63
/// characters.
pub fn qualified_name(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (prefix, name) = match s.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    if let Some(p) = prefix {
        if p.is_empty() {
            out.push("prefix part must be non-empty".to_string());
        } else {
            out.extend(
                dns1123_subdomain(p)
                    .into_iter()
                    .map(|v| format!("prefix part {v}")),
            );
        }
    }
    if name.is_empty() {
        out.push("name part must be non-empty".to_string());
    } else {
        if name.len() > DNS_LABEL_MAX {
            out.push(format!(
                "name part must be no more than {DNS_LABEL_MAX} characters"
            ));
        }
        if !qualified_part(name) {
            out.push(
                "name part must consist of alphanumeric characters, '-', '_' or '.', \
and must start and end with an alphanumeric character"
                    .to_string(),
            );
        }
    }
    out
}

/// Violations of a path-segment name (RBAC objects may use `:`).
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
    use super::*;

    #[test]
    fn subdomains_and_labels() {
        assert!(dns1123_subdomain("etcdoperator.v0.9.4").is_empty());
        assert!(!dns1123_subdomain("Etcd.v1").is_empty());
        assert!(!dns1123_subdomain("a..b").is_empty());
        assert!(!dns1123_subdomain("").is_empty());
        assert!(!dns1123_subdomain(&"a".repeat(254)).is_empty());
        assert!(dns1123_label("etcd-0").is_empty());
        assert!(!dns1123_label("etcd.0").is_empty());
        assert!(dns1035_label("v1beta1").is_empty());
        assert!(!dns1035_label("1v").is_empty());
        assert!(label_value("").is_empty());
        assert!(label_value("op.v1.0.0_x").is_empty());
        assert!(!label_value(&"a".repeat(64)).is_empty());
        assert!(qualified_name("olm.skipRange").is_empty());
        assert!(qualified_name("operators.openshift.io/infrastructure-features").is_empty());
        assert!(!qualified_name("a/b/c").is_empty());
        assert!(!qualified_name("/x").is_empty());
        assert!(path_segment_name("system:auth").is_empty());
        assert!(!path_segment_name("a/b").is_empty());
    }
}
