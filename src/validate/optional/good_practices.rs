//! `good-practices`: operator-framework's recommendations for bundles
//! (reference: `good_practices.go`; see
//! <https://sdk.operatorframework.io/docs/best-practices/>).
//!
//! Reference rules, at the reference's levels: a CSV with no deployments is
//! an error; warnings for containers without resource requests, owned or
//! required CRDs without a description, channels not named
//! `candidate*`/`stable*`/`fast*`, permissions to create CRDs, and a bundle
//! name that does not follow `<operator-name>.v<semver>`.
//!
//! Beyond the reference (warning): resource requests that name only one of
//! CPU and memory. The reference means to check both but, as written, only
//! notices requests missing altogether.

use std::collections::BTreeMap;

use super::goparse;
use super::{items, join, scalar, strings, text_at, Context};
use crate::bundle::{keys, Manifest};
use crate::diag::Finding;
use crate::path;
use crate::yaml::{Node, Seg, Value};

/// Runs the good-practices checks.
pub fn check(ctx: &Context, csv: &Manifest, out: &mut Vec<Finding>) {
    resource_requests(csv, out);
    crd_descriptions(csv, out);
    channel_names(ctx, out);
    rbac_for_crds(csv, out);
    bundle_name(csv, out);
}

fn resource_requests(csv: &Manifest, out: &mut Vec<Finding>) {
    let base = path!["spec", "install", "spec", "deployments"];
    let deployments = match csv.root.at(&base).map(|n| &n.value) {
        Some(Value::Seq(list)) => list,
        None | Some(Value::Null) => {
            out.push(
                Finding::error(
                    "good-practices-no-deployments",
                    "unable to find a deployment to install in the CSV",
                )
                .at(csv.key_location(&base))
                .hint("OLM installs the operator from spec.install.spec.deployments"),
            );
            return;
        }
        // Another shape does not decode; the default CSV suite reports it.
        Some(_) => return,
    };
    for (d, dep) in deployments.iter().enumerate() {
        let dep_name = scalar(dep.get("name")).unwrap_or_default();
        let containers_at = join(
            &base,
            &[
                Seg::Index(d),
                "spec".into(),
                "template".into(),
                "spec".into(),
                "containers".into(),
            ],
        );
        for (c, container) in items(csv.root.at(&containers_at)).iter().enumerate() {
            let name = scalar(container.get("name")).unwrap_or_default();
            let c_at = join(&containers_at, &[Seg::Index(c)]);
            let requests_at = join(&c_at, &path!["resources", "requests"]);
            let requests = csv.root.at(&requests_at);
            match requests {
                None
                | Some(Node {
                    value: Value::Null, ..
                }) => {
                    let at = if container.get("resources").is_some() {
                        join(&c_at, &path!["resources"])
                    } else {
                        join(&c_at, &path!["name"])
                    };
                    out.push(
                        Finding::warning(
                            "good-practices-resource-requests-missing",
                            format!(
                                "container {name:?} of deployment {dep_name:?} has no resource requests"
                            ),
                        )
                        .at(csv.key_location(&at))
                        .hint(
                            "set resources.requests.cpu and .memory: some clusters or quotas refuse pods \
                             without them; see https://sdk.operatorframework.io/docs/best-practices/managing-resources/",
                        ),
                    );
                }
                Some(req) if matches!(req.value, Value::Map(_)) => {
                    let missing: Vec<&str> = ["cpu", "memory"]
                        .into_iter()
                        .filter(|k| req.get(k).is_none_or(|n| matches!(n.value, Value::Null)))
                        .collect();
                    if !missing.is_empty() {
                        out.push(
                            Finding::warning(
                                "good-practices-resource-requests-incomplete",
                                format!(
                                    "container {name:?} of deployment {dep_name:?} requests no {}",
                                    missing.join(" and no ")
                                ),
                            )
                            .at(csv.key_location(&requests_at))
                            .hint("request both CPU and memory, so the scheduler and quotas can account for the pod"),
                        );
                    }
                }
                Some(_) => {}
            }
        }
    }
}

fn crd_descriptions(csv: &Manifest, out: &mut Vec<Finding>) {
    for list in ["owned", "required"] {
        let base = path!["spec", "customresourcedefinitions", list];
        for (i, desc) in items(csv.root.at(&base)).iter().enumerate() {
            let description = scalar(desc.get("description")).unwrap_or_default();
            if !description.is_empty() {
                continue;
            }
            let name = scalar(desc.get("name")).unwrap_or_default();
            let at = if desc.get("description").is_some() {
                join(&base, &[Seg::Index(i), "description".into()])
            } else {
                join(&base, &[Seg::Index(i)])
            };
            out.push(
                Finding::warning(
                    "good-practices-crd-description-empty",
                    format!("{list} CRD {name:?} has an empty description"),
                )
                .at(csv.location(&at))
                .hint("describe what the custom resource is for; OLM consoles show it"),
            );
        }
    }
}

fn channel_names(ctx: &Context, out: &mut Vec<Finding>) {
    let Some(ann) = ctx.bundle.annotations.as_ref() else {
        return;
    };
    // Channel name → the annotation it was found in (channels first).
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for c in ann.channels() {
        seen.entry(c).or_insert(keys::CHANNELS);
    }
    if let Some(d) = ann
        .default_channel()
        .map(str::trim)
        .filter(|d| !d.is_empty())
    {
        seen.entry(d.to_string()).or_insert(keys::DEFAULT_CHANNEL);
    }
    for (channel, key) in seen {
        if ["candidate", "stable", "fast"]
            .iter()
            .any(|p| channel.starts_with(p))
        {
            continue;
        }
        let mut f = Finding::warning(
            "good-practices-channel-naming",
            format!("channel {channel:?} does not follow the recommended naming convention"),
        )
        .hint(
            "name channels candidate, fast or stable, optionally with a version suffix (stable-v1); \
             see https://olm.operatorframework.io/docs/best-practices/channel-naming",
        );
        if let Some(loc) = ann.location(key) {
            f = f.at(loc);
        }
        out.push(f);
    }
}

fn rbac_for_crds(csv: &Manifest, out: &mut Vec<Finding>) {
    const RESOURCES: &[&str] = &["customresourcedefinitions", "*", "[*]"];
    const VERBS: &[&str] = &["create", "*", "[*]", "patch"];
    for key in ["permissions", "clusterPermissions"] {
        let base = path!["spec", "install", "spec", key];
        for (i, perm) in items(csv.root.at(&base)).iter().enumerate() {
            for (j, rule) in items(perm.get("rules")).iter().enumerate() {
                let has = |field: &str, wanted: &[&str]| {
                    strings(rule.get(field))
                        .iter()
                        .any(|(_, s)| wanted.contains(&s.as_ref()))
                };
                if has("apiGroups", &["apiextensions.k8s.io"])
                    && has("resources", RESOURCES)
                    && has("verbs", VERBS)
                {
                    out.push(
                        Finding::warning(
                            "good-practices-rbac-creates-crds",
                            format!(
                                "{key}[{i}].rules[{j}] allows creating CustomResourceDefinitions: an operator \
                                 should not deploy or manage other operators or CRDs; that is OLM's job"
                            ),
                        )
                        .at(csv.location(&join(&base, &[Seg::Index(i), "rules".into(), Seg::Index(j)])))
                        .hint(
                            "ship the CRDs in the bundle, or depend on the operator that owns them; see \
                             https://sdk.operatorframework.io/docs/best-practices/common-recommendation/",
                        ),
                    );
                    // The reference reports this once per CSV.
                    return;
                }
            }
        }
    }
}

/// The leftmost suffix of `name` that is `N.N.N[-pre][+build]`, as the
/// reference's unanchored-start, `$`-anchored regular expression finds it.
fn version_suffix(name: &str) -> Option<&str> {
    (0..name.len())
        .filter(|i| name.is_char_boundary(*i))
        .map(|i| &name[i..])
        .find(|s| is_version_like(s))
}

/// `[0-9]+\.[0-9]+\.[0-9]+(-ID(\.ID)*)?(\+ID)?` over the whole text, with ID
/// `[0-9A-Za-z-]+` (the build part holds one identifier only, as in the
/// reference's expression).
fn is_version_like(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    let ident = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && (b[*i].is_ascii_alphanumeric() || b[*i] == b'-') {
            *i += 1;
        }
        *i > start
    };
    for n in 0..3 {
        if !digits(&mut i) {
            return false;
        }
        if n < 2 {
            if b.get(i) != Some(&b'.') {
                return false;
            }
            i += 1;
        }
    }
    if b.get(i) == Some(&b'-') {
        i += 1;
        if !ident(&mut i) {
            return false;
        }
        while b.get(i) == Some(&b'.') {
            i += 1;
            if !ident(&mut i) {
                return false;
            }
        }
    }
    if b.get(i) == Some(&b'+') {
        i += 1;
        if !ident(&mut i) {
            return false;
        }
    }
    i == b.len()
}

fn bundle_name(csv: &Manifest, out: &mut Vec<Finding>) {
    let at = path!["metadata", "name"];
    let name = text_at(csv, &at);
    let semver_ok = version_suffix(&name).is_some_and(|v| goparse::semver_parse(v).is_ok());
    if !semver_ok {
        out.push(
            Finding::warning(
                "good-practices-bundle-name-not-semver",
                format!(
                    "metadata.name {name:?} does not end in a semantic version (MAJOR.MINOR.PATCH, e.g. 0.0.1)"
                ),
            )
            .at(csv.key_location(&at))
            .hint("see https://semver.org/"),
        );
    }
    if name.split(".v").count() != 2 {
        out.push(
            Finding::warning(
                "good-practices-bundle-name-convention",
                format!(
                    "metadata.name {name:?} does not follow the naming convention <operator-name>.v<semver>, \
                     e.g. memcached-operator.v0.0.1"
                ),
            )
            .at(csv.key_location(&at)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_suffix_like_the_reference_regexp() {
        assert_eq!(version_suffix("etcdoperator.v0.9.4"), Some("0.9.4"));
        assert_eq!(version_suffix("op.v1.0.0-rc.1"), Some("1.0.0-rc.1"));
        assert_eq!(version_suffix("op.v1.0.0+abc"), Some("1.0.0+abc"));
        assert_eq!(version_suffix("op.v1.0.0+abc.1"), None);
        assert_eq!(version_suffix("op.v1.0"), None);
        assert_eq!(version_suffix("op.v01.2.3"), Some("01.2.3"));
        assert!(goparse::semver_parse("01.2.3").is_err());
        assert_eq!(version_suffix("café.v1.2.3"), Some("1.2.3"));
    }
}
