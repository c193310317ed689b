//! Checks across the bundle's objects: operator-framework/api `bundle.go`
//! (owned CRDs present, no duplicate CRD versions, no ServiceAccount that
//! shadows a deployment's service account).

use std::collections::{BTreeMap, BTreeSet};

use super::rules::{finding, finding_hint};
use super::Context;
use crate::bundle::Manifest;
use crate::diag::{Finding, Location};
use crate::path;
use crate::yaml::{Node, Value};

use crate::bundle::Gvk;

fn text(n: Option<&Node>) -> String {
    match n.map(|n| &n.value) {
        Some(Value::Str(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(_) => n.and_then(|n| n.raw()).unwrap_or_default().to_string(),
    }
}

fn seq(n: Option<&Node>) -> &[Node] {
    match n.map(|n| &n.value) {
        Some(Value::Seq(items)) => items,
        _ => &[],
    }
}

fn display(g: &Gvk) -> String {
    g.to_string()
}

/// The group/version/kind keys a CRD defines, each with where it is written.
pub fn crd_keys(m: &Manifest) -> Vec<(Gvk, Location)> {
    let group = text(m.root.at(&path!["spec", "group"]));
    let kind = text(m.root.at(&path!["spec", "names", "kind"]));
    let versions = seq(m.root.at(&path!["spec", "versions"]));
    if versions.is_empty() && m.api_version.ends_with("/v1beta1") {
        let v = text(m.root.at(&path!["spec", "version"]));
        return vec![(
            Gvk::new(group, v, kind),
            m.location(&path!["spec", "version"]),
        )];
    }
    versions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            (
                Gvk::new(group.clone(), text(v.get("name")), kind.clone()),
                m.location(&path!["spec", "versions", i, "name"]),
            )
        })
        .collect()
}

/// Runs the bundle-level checks (needs a CSV).
pub fn check(ctx: &Context, out: &mut Vec<Finding>) {
    let Some(csv) = ctx.bundle.csv_manifest() else {
        return;
    };
    let bundle_name = &csv.name;
    let mut keys: BTreeMap<Gvk, Location> = BTreeMap::new();
    for crd in ctx.bundle.crds() {
        for (key, loc) in crd_keys(crd) {
            if let Some(first) = keys.get(&key) {
                out.push(
                    finding(
                        "bundle-crd-duplicate",
                        format!(
                            "duplicate CRD \"{}\" in bundle \"{bundle_name}\"",
                            display(&key)
                        ),
                    )
                    .at(loc.clone())
                    .related(first.clone()),
                );
            }
            keys.entry(key).or_insert(loc);
        }
    }
    let owned = seq(csv
        .root
        .at(&path!["spec", "customresourcedefinitions", "owned"]));
    let mut owned_group_kinds = BTreeSet::new();
    let mut remaining = keys.clone();
    for (i, o) in owned.iter().enumerate() {
        let name = text(o.get("name"));
        let group = name
            .split_once('.')
            .map(|(_, g)| g.to_string())
            .unwrap_or(name.clone());
        let key = Gvk::new(group, text(o.get("version")), text(o.get("kind")));
        if keys.contains_key(&key) {
            remaining.remove(&key);
            owned_group_kinds.insert((key.group.clone(), key.kind.clone()));
        } else {
            out.push(
                finding_hint(
                    "bundle-owned-crd-not-found",
                    format!("owned CRD \"{}\" not found in bundle \"{bundle_name}\"", display(&key)),
                    "add the CustomResourceDefinition to manifests/, or fix name, version and kind of the owned entry",
                )
                .at(csv.location(&path!["spec", "customresourcedefinitions", "owned", i])),
            );
        }
    }
    for (key, loc) in remaining {
        if owned_group_kinds.contains(&(key.group.clone(), key.kind.clone())) {
            continue;
        }
        out.push(
            finding(
                "bundle-crd-not-in-csv",
                format!(
                    "CRD \"{}\" is present in bundle \"{bundle_name}\" but not defined in CSV",
                    display(&key)
                ),
            )
            .at(loc),
        );
    }

    let sa_names: BTreeSet<String> =
        seq(csv
            .root
            .at(&path!["spec", "install", "spec", "deployments"]))
        .iter()
        .map(|d| text(d.at(&path!["spec", "template", "spec", "serviceAccountName"])))
        .collect();
    for m in &ctx.bundle.manifests {
        if m.kind == "ServiceAccount" && m.api_version == "v1" && sa_names.contains(&m.name) {
            out.push(
                finding_hint(
                    "bundle-service-account-conflict",
                    format!(
                        "invalid service account found in bundle. This service account {} in your bundle is not valid, because a service account with the same name was already specified in your CSV. If this was unintentional, please remove the service account manifest from your bundle. If it was intentional to specify a separate service account, please rename the SA in either the bundle manifest or the CSV.",
                        m.name
                    ),
                    "OLM creates the deployments' service accounts itself; remove this ServiceAccount from manifests/",
                )
                .at(m.location(&path!["metadata", "name"])),
            );
        }
    }
}
