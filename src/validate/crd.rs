//! CustomResourceDefinition checks: the parts of apiextensions-apiserver's
//! `ValidateCustomResourceDefinition` that operator-framework/api reports
//! (it drops schema and status findings): name, group, names, scope,
//! versions, storage version and conversion.

use std::collections::BTreeSet;

use super::names;
use super::rules::finding;
use crate::bundle::Manifest;
use crate::diag::Finding;
use crate::path;
use crate::yaml::{Node, Seg, Value};

fn text(n: Option<&Node>) -> String {
    match n.map(|n| &n.value) {
        Some(Value::Str(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(_) => n
            .and_then(|n| n.raw.as_deref())
            .unwrap_or_default()
            .to_string(),
    }
}

/// Runs the CRD checks on one manifest (ignored unless it is a CRD).
pub fn check(m: &Manifest, out: &mut Vec<Finding>) {
    if !m.is_crd() {
        return;
    }
    let v1 = match m.api_version.as_str() {
        "apiextensions.k8s.io/v1" => true,
        "apiextensions.k8s.io/v1beta1" => false,
        other => {
            out.push(
                finding(
                    "crd-api-version-unsupported",
                    format!("Unsupported api version of CRD: {other}"),
                )
                .at(m.location(&path!["apiVersion"])),
            );
            return;
        }
    };
    let root = &m.root;
    let mut bad = |p: &[Seg], msg: String| {
        out.push(
            finding(
                "crd-invalid",
                format!(
                    "CRD `{}`: {}: {msg}",
                    m.name,
                    crate::yaml::path_to_string(p)
                ),
            )
            .at(m.location(p)),
        );
    };
    let group = text(root.at(&path!["spec", "group"]));
    let plural = text(root.at(&path!["spec", "names", "plural"]));
    let kind = text(root.at(&path!["spec", "names", "kind"]));
    if !plural.is_empty() && !group.is_empty() && m.name != format!("{plural}.{group}") {
        bad(
            &path!["metadata", "name"],
            format!("Invalid value: \"{}\": must be spec.names.plural+\".\"+spec.group (`{plural}.{group}`)", m.name),
        );
    }
    if group.is_empty() {
        bad(&path!["spec", "group"], "Required value".into());
    } else {
        let mut v = names::dns1123_subdomain(&group);
        if !group.contains('.') {
            v.push("should be a domain with at least one dot".into());
        }
        if !v.is_empty() {
            bad(
                &path!["spec", "group"],
                format!("Invalid value: \"{group}\": {}", v.join("; ")),
            );
        }
    }
    if plural.is_empty() {
        bad(&path!["spec", "names", "plural"], "Required value".into());
    } else {
        let v = names::dns1123_label(&plural);
        if !v.is_empty() {
            bad(
                &path!["spec", "names", "plural"],
                format!("Invalid value: \"{plural}\": {}", v.join("; ")),
            );
        }
    }
    let singular = text(root.at(&path!["spec", "names", "singular"]));
    if !singular.is_empty() {
        let v = names::dns1123_label(&singular);
        if !v.is_empty() {
            bad(
                &path!["spec", "names", "singular"],
                format!("Invalid value: \"{singular}\": {}", v.join("; ")),
            );
        }
    }
    if kind.is_empty() {
        bad(&path!["spec", "names", "kind"], "Required value".into());
    } else if !names::dns1035_label(&kind.to_ascii_lowercase()).is_empty() {
        bad(
            &path!["spec", "names", "kind"],
            format!("Invalid value: \"{kind}\": a kind must start with a letter and hold only letters, digits and '-'"),
        );
    }
    let list_kind = text(root.at(&path!["spec", "names", "listKind"]));
    if !list_kind.is_empty() {
        if !names::dns1035_label(&list_kind.to_ascii_lowercase()).is_empty() {
            bad(
                &path!["spec", "names", "listKind"],
                format!("Invalid value: \"{list_kind}\""),
            );
        } else if list_kind == kind {
            bad(
                &path!["spec", "names", "listKind"],
                "Invalid value: kind and listKind may not be the same".into(),
            );
        }
    }
    let scope = text(root.at(&path!["spec", "scope"]));
    if scope.is_empty() {
        bad(&path!["spec", "scope"], "Required value".into());
    } else if scope != "Namespaced" && scope != "Cluster" {
        bad(
            &path!["spec", "scope"],
            format!(
                "Unsupported value: \"{scope}\": supported values: \"Cluster\", \"Namespaced\""
            ),
        );
    }

    let versions: &[Node] = match root.at(&path!["spec", "versions"]).map(|n| &n.value) {
        Some(Value::Seq(items)) => items,
        _ => &[],
    };
    let top_version = text(root.at(&path!["spec", "version"]));
    if versions.is_empty() {
        if v1 || top_version.is_empty() {
            bad(
                &path!["spec", "versions"],
                "Invalid value: must have exactly one version marked as storage version".into(),
            );
        }
    } else {
        let mut seen = BTreeSet::new();
        let mut storage = 0;
        for (i, ver) in versions.iter().enumerate() {
            let name = text(ver.get("name"));
            if name.is_empty() {
                bad(
                    &path!["spec", "versions", i, "name"],
                    "Required value".into(),
                );
            } else {
                let v = names::dns1035_label(&name);
                if !v.is_empty() {
                    bad(
                        &path!["spec", "versions", i, "name"],
                        format!("Invalid value: \"{name}\": {}", v.join("; ")),
                    );
                }
                if !seen.insert(name.clone()) {
                    bad(
                        &path!["spec", "versions", i, "name"],
                        format!("Duplicate value: \"{name}\""),
                    );
                }
            }
            if matches!(
                ver.get("storage").map(|s| &s.value),
                Some(Value::Bool(true))
            ) {
                storage += 1;
            }
        }
        if storage != 1 {
            bad(
                &path!["spec", "versions"],
                "Invalid value: must have exactly one version marked as storage version".into(),
            );
        }
        if !v1
            && !top_version.is_empty()
            && versions.first().map(|v| text(v.get("name"))) != Some(top_version.clone())
        {
            bad(
                &path!["spec", "version"],
                "Invalid value: must match the first version in spec.versions".into(),
            );
        }
    }

    let strategy = text(root.at(&path!["spec", "conversion", "strategy"]));
    if !strategy.is_empty() && strategy != "None" && strategy != "Webhook" {
        bad(
            &path!["spec", "conversion", "strategy"],
            format!("Unsupported value: \"{strategy}\": supported values: \"None\", \"Webhook\""),
        );
    }
    if v1 && strategy == "Webhook" {
        let reviews = root.at(&path![
            "spec",
            "conversion",
            "webhook",
            "conversionReviewVersions"
        ]);
        let empty =
            !matches!(reviews.map(|n| &n.value), Some(Value::Seq(items)) if !items.is_empty());
        if empty {
            bad(
                &path!["spec", "conversion", "webhook", "conversionReviewVersions"],
                "Required value: must contain at least one of v1 or v1beta1".into(),
            );
        }
    }
}
