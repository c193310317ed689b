//! `standard-categories` and `standard-capabilities`: the CSV annotations
//! that place an operator in OperatorHub's catalog (reference:
//! `standardcategories.go`, `standardcapabilities.go`).

use std::collections::BTreeSet;
use std::path::Path;

use crate::bundle::Manifest;
use crate::diag::{Finding, Location};
use crate::path;

/// The capability levels of the Operator maturity model.
pub const CAPABILITIES: &[&str] = &[
    "Basic Install",
    "Seamless Upgrades",
    "Full Lifecycle",
    "Deep Insights",
    "Auto Pilot",
];

/// OperatorHub's standard categories.
pub const CATEGORIES: &[&str] = &[
    "AI/Machine Learning",
    "Application Runtime",
    "Big Data",
    "Cloud Provider",
    "Developer Tools",
    "Database",
    "Integration & Delivery",
    "Logging & Tracing",
    "Monitoring",
    "Modernization & Migration",
    "Networking",
    "OpenShift Optional",
    "Security",
    "Storage",
    "Streaming & Messaging",
    "Observability",
];

/// The environment variable naming a JSON file `{"categories": [...]}` that
/// replaces the standard categories, as in operator-framework/api.
pub const CUSTOM_CATEGORIES_ENV: &str = "OPERATOR_BUNDLE_CATEGORIES";

/// Reads a custom categories file: `{"categories": ["A", "B"]}`.
pub fn read_custom_categories(path: &Path) -> Result<BTreeSet<String>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("reading category file {}: {e}", path.display()))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| format!("unmarshaling category file {}: {e}", path.display()))?;
    let list = match json.get("categories") {
        None | Some(serde_json::Value::Null) => Vec::new(),
        Some(serde_json::Value::Array(items)) => items.clone(),
        Some(_) => {
            return Err(format!(
                "unmarshaling category file {}: `categories` must be a list of strings",
                path.display()
            ))
        }
    };
    list.into_iter()
        .map(|v| match v {
            serde_json::Value::String(s) => Ok(s),
            _ => Err(format!(
                "unmarshaling category file {}: `categories` must be a list of strings",
                path.display()
            )),
        })
        .collect()
}

/// Checks the `categories` annotation against the standard categories, or
/// against the file named by `$OPERATOR_BUNDLE_CATEGORIES` when set.
pub fn check_categories(csv: &Manifest, out: &mut Vec<Finding>) {
    match std::env::var_os(CUSTOM_CATEGORIES_ENV).filter(|v| !v.is_empty()) {
        None => check_categories_against(csv, None, out),
        Some(file) => match read_custom_categories(Path::new(&file)) {
            Ok(set) => check_categories_against(csv, Some(&set), out),
            Err(e) => out.push(
                Finding::error(
                    "standard-categories-custom-file-invalid",
                    format!("could not read the custom categories: {e}"),
                )
                .at(Location::file(Path::new(&file)))
                .hint(format!(
                    "{CUSTOM_CATEGORIES_ENV} must name a JSON file like {{\"categories\": [\"Storage\"]}}"
                )),
            ),
        },
    }
}

/// Checks the `categories` annotation against `custom`, or the standard
/// categories when `None`. Each comma-separated entry is trimmed; an empty
/// entry (a stray comma) is refused, as the reference refuses it.
pub fn check_categories_against(
    csv: &Manifest,
    custom: Option<&BTreeSet<String>>,
    out: &mut Vec<Finding>,
) {
    let at = path!["metadata", "annotations", "categories"];
    let Some(node) = csv.root.at(&at) else {
        return;
    };
    let value = super::scalar(Some(node)).unwrap_or_default();
    for entry in value.split(',') {
        let name = entry.trim();
        let known = match custom {
            Some(set) => set.contains(name),
            None => CATEGORIES.contains(&name),
        };
        if known {
            continue;
        }
        let (set_name, list) = match custom {
            Some(set) => (
                "custom categories",
                set.iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            None => ("standard categories", CATEGORIES.join(", ")),
        };
        out.push(
            Finding::error(
                "standard-categories-invalid",
                format!(
                    "metadata.annotations.categories value {entry:?} is not in the set of {set_name}"
                ),
            )
            .at(csv.location(&at))
            .hint(format!("use a comma-separated list of: {list}")),
        );
    }
}

/// Checks the `capabilities` annotation is a capability level (exact match).
pub fn check_capabilities(csv: &Manifest, out: &mut Vec<Finding>) {
    let at = path!["metadata", "annotations", "capabilities"];
    let Some(node) = csv.root.at(&at) else {
        return;
    };
    let value = super::scalar(Some(node)).unwrap_or_default();
    if CAPABILITIES.contains(&value.as_ref()) {
        return;
    }
    let mut f = Finding::error(
        "standard-capabilities-invalid",
        format!("metadata.annotations.capabilities {value:?} is not a valid capabilities level"),
    )
    .at(csv.location(&at));
    let close = CAPABILITIES
        .iter()
        .find(|c| c.eq_ignore_ascii_case(value.trim()));
    f = match close {
        Some(c) => f.hint(format!("write it exactly as `{c}`")),
        None => f.hint(format!("use one of: {}", CAPABILITIES.join(", "))),
    };
    out.push(f);
}
