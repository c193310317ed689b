//! `opm validate`: the checks of alpha/declcfg (ConvertToModel) and
//! alpha/model (Model.Validate), reported as findings.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{DeclarativeConfig, SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE};
use crate::diag::Finding;

fn err(rule: &str, msg: String) -> Finding {
    Finding::error(rule, msg)
}

/// Validates a catalog; an empty result means `opm validate` accepts it.
pub fn validate(cfg: &DeclarativeConfig) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut packages: BTreeMap<&str, &super::Package> = BTreeMap::new();
    for p in &cfg.packages {
        if p.name.is_empty() {
            out.push(err(
                "fbc-package-name",
                "an olm.package has an empty name".into(),
            ));
            continue;
        }
        if packages.insert(&p.name, p).is_some() {
            out.push(err(
                "fbc-duplicate-package",
                format!("package {:?} is declared more than once", p.name),
            ));
        }
        if p.default_channel.is_empty() {
            out.push(err(
                "fbc-default-channel",
                format!("package {:?}: defaultChannel must be set", p.name),
            ));
        }
        if let Some(icon) = &p.icon {
            use base64::Engine;
            if base64::engine::general_purpose::STANDARD
                .decode(&icon.base64data)
                .is_err()
            {
                out.push(err(
                    "fbc-icon",
                    format!("package {:?}: icon base64data is not valid base64", p.name),
                ));
            }
            if icon.mediatype.is_empty() {
                out.push(err(
                    "fbc-icon",
                    format!("package {:?}: icon mediatype must be set", p.name),
                ));
            }
        }
    }
    let mut channels: BTreeMap<(&str, &str), &super::Channel> = BTreeMap::new();
    for c in &cfg.channels {
        if c.name.is_empty() {
            out.push(err(
                "fbc-channel-name",
                format!("package {:?}: a channel has an empty name", c.package),
            ));
            continue;
        }
        if !packages.contains_key(c.package.as_str()) {
            out.push(err(
                "fbc-unknown-package",
                format!("unknown package {:?} for channel {:?}", c.package, c.name),
            ));
            continue;
        }
        if channels.insert((&c.package, &c.name), c).is_some() {
            out.push(err(
                "fbc-duplicate-channel",
                format!("package {:?}: duplicate channel {:?}", c.package, c.name),
            ));
        }
    }
    let mut bundles: BTreeMap<(&str, &str), &super::Bundle> = BTreeMap::new();
    for b in &cfg.bundles {
        if b.name.is_empty() {
            out.push(err(
                "fbc-bundle-name",
                format!("package {:?}: a bundle has an empty name", b.package),
            ));
            continue;
        }
        if !packages.contains_key(b.package.as_str()) {
            out.push(err(
                "fbc-unknown-package",
                format!("unknown package {:?} for bundle {:?}", b.package, b.name),
            ));
            continue;
        }
        if bundles.insert((&b.package, &b.name), b).is_some() {
            out.push(err(
                "fbc-duplicate-bundle",
                format!("package {:?}: duplicate bundle {:?}", b.package, b.name),
            ));
        }
        let pkg_props: Vec<&super::Property> = b
            .properties
            .iter()
            .filter(|p| p.kind == "olm.package")
            .collect();
        if pkg_props.len() != 1 {
            out.push(err(
                "fbc-bundle-package-property",
                format!(
                "package {:?} bundle {:?} must have exactly 1 \"olm.package\" property, found {}",
                b.package, b.name, pkg_props.len()
            ),
            ));
        } else {
            let v = &pkg_props[0].value;
            let name = v.get("packageName").and_then(Value::as_str).unwrap_or("");
            if name != b.package {
                out.push(err(
                    "fbc-bundle-package-property",
                    format!(
                        "package {:?} does not match \"olm.package\" property {:?} of bundle {:?}",
                        b.package, name, b.name
                    ),
                ));
            }
            let version = v.get("version").and_then(Value::as_str).unwrap_or("");
            if let Err(e) = semver::Version::parse(version) {
                out.push(err(
                    "fbc-bundle-version",
                    format!(
                        "package {:?} bundle {:?}: version {version:?} is not semver: {e}",
                        b.package, b.name
                    ),
                ));
            }
        }
        if b.image.is_empty()
            && !b
                .properties
                .iter()
                .any(|p| p.kind == "olm.bundle.object" || p.kind == "olm.csv.metadata")
        {
            out.push(err("fbc-bundle-image", format!(
                "package {:?} bundle {:?}: image must be set (or the bundle must carry its objects)",
                b.package, b.name
            )));
        }
        for p in &b.properties {
            if let Some(m) = check_property(p) {
                out.push(err(
                    "fbc-bundle-property",
                    format!("package {:?} bundle {:?}: {m}", b.package, b.name),
                ));
            }
        }
        for ri in &b.related_images {
            if ri.image.is_empty() {
                out.push(err(
                    "fbc-related-image",
                    format!(
                        "package {:?} bundle {:?}: a related image has no image reference",
                        b.package, b.name
                    ),
                ));
            }
        }
    }
    // Channels: members exist, one head, no cycles.
    let mut in_channel: BTreeSet<(&str, &str)> = BTreeSet::new();
    for ((pkg, ch), c) in &channels {
        if c.entries.is_empty() {
            out.push(err(
                "fbc-channel-empty",
                format!(
                    "package {pkg:?}, channel {ch:?}: channel must contain at least one bundle"
                ),
            ));
            continue;
        }
        let mut names = BTreeSet::new();
        for e in &c.entries {
            if !names.insert(e.name.as_str()) {
                out.push(err(
                    "fbc-duplicate-entry",
                    format!(
                        "package {pkg:?}, channel {ch:?}: duplicate entry {:?}",
                        e.name
                    ),
                ));
            }
            if !bundles.contains_key(&(*pkg, e.name.as_str())) {
                out.push(err(
                    "fbc-entry-unknown-bundle",
                    format!(
                        "package {pkg:?}, channel {ch:?}: bundle {:?} not found in package",
                        e.name
                    ),
                ));
            }
            in_channel.insert((pkg, e.name.as_str()));
            if let Some(why) = (!e.skip_range.is_empty())
                .then(|| crate::semver_range::Range::parse(&e.skip_range).err())
                .flatten()
            {
                out.push(err("fbc-skip-range", format!("package {pkg:?}, channel {ch:?}: bundle {:?} has an invalid skipRange {:?}: {why}", e.name, e.skip_range)));
            }
        }
        let mut pointed = BTreeSet::new();
        for e in &c.entries {
            if !e.replaces.is_empty() && names.contains(e.replaces.as_str()) {
                pointed.insert(e.replaces.as_str());
            }
            for s in &e.skips {
                if names.contains(s.as_str()) {
                    pointed.insert(s.as_str());
                }
            }
        }
        let heads: Vec<&str> = c
            .entries
            .iter()
            .map(|e| e.name.as_str())
            .filter(|n| !pointed.contains(n))
            .collect();
        match heads.len() {
            0 => out.push(err(
                "fbc-channel-head",
                format!("package {pkg:?}, channel {ch:?}: no channel head found in graph"),
            )),
            1 => {}
            _ => out.push(err(
                "fbc-channel-head",
                format!(
                    "package {pkg:?}, channel {ch:?}: multiple channel heads found in graph: {}",
                    heads.join(", ")
                ),
            )),
        }
        let replaces: BTreeMap<&str, &str> = c
            .entries
            .iter()
            .filter(|e| !e.replaces.is_empty())
            .map(|e| (e.name.as_str(), e.replaces.as_str()))
            .collect();
        for start in replaces.keys() {
            let mut seen = BTreeSet::new();
            let mut cur = *start;
            while let Some(next) = replaces.get(cur) {
                if !seen.insert(cur) {
                    out.push(err("fbc-replaces-cycle", format!("package {pkg:?}, channel {ch:?}: detected cycle in replaces chain of upgrade graph at {start:?}")));
                    break;
                }
                cur = next;
            }
        }
    }
    for (name, p) in &packages {
        if !p.default_channel.is_empty()
            && !channels.contains_key(&(*name, p.default_channel.as_str()))
        {
            out.push(err(
                "fbc-default-channel",
                format!(
                    "package {name:?}: default channel {:?} not found in channels list",
                    p.default_channel
                ),
            ));
        }
        if !channels.keys().any(|(pk, _)| pk == name) {
            out.push(err(
                "fbc-package-no-channels",
                format!("package {name:?} has no channels"),
            ));
        }
    }
    for (pkg, b) in bundles.keys() {
        if !in_channel.contains(&(*pkg, *b)) {
            out.push(err(
                "fbc-bundle-no-channel",
                format!("package {pkg:?}: bundle {b:?} not found in any channel entries"),
            ));
        }
    }
    for d in &cfg.deprecations {
        if !packages.contains_key(d.package.as_str()) {
            out.push(err(
                "fbc-unknown-package",
                format!("olm.deprecations refers to unknown package {:?}", d.package),
            ));
            continue;
        }
        for e in &d.entries {
            let s = e.reference.schema.as_str();
            let ok = match s {
                SCHEMA_PACKAGE => e.reference.name.is_empty(),
                SCHEMA_CHANNEL => {
                    channels.contains_key(&(d.package.as_str(), e.reference.name.as_str()))
                }
                SCHEMA_BUNDLE => {
                    bundles.contains_key(&(d.package.as_str(), e.reference.name.as_str()))
                }
                _ => false,
            };
            if !ok {
                out.push(err("fbc-deprecation-reference", format!(
                    "olm.deprecations for {:?}: reference {s} {:?} does not name anything in the package",
                    d.package, e.reference.name
                )));
            }
            if e.message.is_empty() {
                out.push(err(
                    "fbc-deprecation-message",
                    format!(
                        "olm.deprecations for {:?}: an entry has no message",
                        d.package
                    ),
                ));
            }
        }
    }
    out
}

fn check_property(p: &super::Property) -> Option<String> {
    let obj = |keys: &[&str]| -> Option<String> {
        let Some(m) = p.value.as_object() else {
            return Some(format!("property {} value must be an object", p.kind));
        };
        for k in keys {
            if !m.get(*k).is_some_and(Value::is_string) {
                return Some(format!("property {} needs a string {k:?}", p.kind));
            }
        }
        None
    };
    match p.kind.as_str() {
        "olm.package" => obj(&["packageName", "version"]),
        "olm.gvk" | "olm.gvk.required" => obj(&["group", "kind", "version"]),
        "olm.package.required" => obj(&["packageName", "versionRange"]),
        "olm.bundle.object" => {
            let m = obj(&[]);
            if m.is_some() {
                return m;
            }
            if !p.value.get("data").is_some_and(Value::is_string)
                && !p.value.get("ref").is_some_and(Value::is_string)
            {
                return Some("olm.bundle.object needs \"data\" or \"ref\"".into());
            }
            None
        }
        _ => None,
    }
}

/// Whether `r` parses as a blang/semver range ([`crate::semver_range`]).
pub fn range_ok(r: &str) -> bool {
    crate::semver_range::Range::parse(r).is_ok()
}
