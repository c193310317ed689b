//! Filtering a catalog down to named packages, channels and version ranges,
//! so that what is left is still a valid catalog (`catalog filter`).
//!
//! The filter file is opm's `FilterConfiguration`
//! (`apiVersion: olm.operatorframework.io/v1alpha1`), so a file written for
//! operator-registry's filter library (`alpha/declcfg/filter`) is read here too; a package may also carry its own
//! `versionRange` (for every channel kept that has none of its own).
//!
//! What is kept:
//!
//! * packages named, and objects of other schemas that belong to no package;
//! * of a package, the channels named (all when none is named);
//! * of a channel with a version range, the stretch of its replaces chain
//!   that holds the bundles in range (bundles outside the range are kept
//!   where the chain needs them to keep one head, and reported), plus the
//!   bundles in range that a kept entry skips. A channel whose range keeps
//!   nothing is an error when it was named, else it is dropped;
//! * bundles that some kept channel lists; deprecation entries of what is
//!   kept.
//!
//! Edges (`replaces`, `skips`) to a bundle that this filter removed are
//! dropped, unless [`Options::keep_edges`] (operator-registry's filter keeps them, which
//! lets a cluster that runs a removed version still upgrade). Edges that
//! already pointed outside the catalog, and every `skipRange`, are kept.
//! The default channel stays; when it was filtered away, a new one must be
//! named, or the filter fails.
//!
//! Version ranges are read as OLM reads `skipRange` (blang/semver, see
//! [`crate::semver_range`]): `>=1.0.0 <2.0.0`, `1.2.x`, `<1.0.0 || >=2.0.0`.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Channel, ChannelEntry, DeclarativeConfig, SCHEMA_BUNDLE, SCHEMA_CHANNEL};
use crate::semver_range::Range;

/// The `apiVersion` of operator-registry's filter file.
pub const FILTER_API_VERSION: &str = "olm.operatorframework.io/v1alpha1";
/// The `kind` of operator-registry's filter file.
pub const FILTER_KIND: &str = "FilterConfiguration";

/// What to keep.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FilterConfig {
    /// `olm.operatorframework.io/v1alpha1` when given.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// `FilterConfiguration` when given.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// The packages to keep.
    #[serde(default)]
    pub packages: Vec<PackageFilter>,
}

/// One package to keep.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PackageFilter {
    /// Package name.
    pub name: String,
    /// The default channel to set (must be kept); empty keeps the package's own.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub default_channel: String,
    /// Version range for every kept channel that has none of its own (an
    /// extension of opm's file).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version_range: String,
    /// Channels to keep; none keeps every channel.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<ChannelFilter>,
}

/// One channel to keep.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChannelFilter {
    /// Channel name.
    pub name: String,
    /// Versions to keep; empty keeps the package's range, or everything.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version_range: String,
}

/// How to filter.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Keep `replaces` and `skips` that point to bundles the filter removed.
    pub keep_edges: bool,
}

/// Why a catalog could not be filtered as asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FilterError {
    /// The filter file is not a filter configuration.
    #[error("{path}: {message}")]
    Config {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// No package was named.
    #[error("no package to keep: name at least one")]
    NoPackages,
    /// A package is named twice.
    #[error("package {0:?} is named more than once")]
    DuplicatePackage(String),
    /// A channel is named twice for one package.
    #[error("package {package:?}: channel {channel:?} is named more than once")]
    DuplicateChannel {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
    },
    /// The catalog has no such package.
    #[error("package {package:?} is not in the catalog")]
    UnknownPackage {
        /// The package.
        package: String,
    },
    /// The package has no such channel.
    #[error("package {package:?} has no channel {channel:?} (it has: {})", available.join(", "))]
    UnknownChannel {
        /// The package.
        package: String,
        /// The channel asked for.
        channel: String,
        /// The package's channels.
        available: Vec<String>,
    },
    /// A version range does not parse.
    #[error("package {package:?}: invalid version range {range:?}: {reason}")]
    InvalidRange {
        /// The package.
        package: String,
        /// The range.
        range: String,
        /// Why.
        reason: String,
    },
    /// A channel that must be cut to a range has no single head to start from.
    #[error("package {package:?}, channel {channel:?}: cannot apply a version range: {reason}")]
    NoHead {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// What is wrong with its graph.
        reason: String,
    },
    /// A named channel keeps no bundle.
    #[error("package {package:?}, channel {channel:?}: no bundle is in version range {range:?}")]
    EmptyChannel {
        /// The package.
        package: String,
        /// The channel.
        channel: String,
        /// The range.
        range: String,
    },
    /// No channel of the package keeps a bundle.
    #[error("package {package:?}: no bundle of any channel is in version range {range:?}")]
    NothingKept {
        /// The package.
        package: String,
        /// The range.
        range: String,
    },
    /// The default channel was filtered away and no new one was named.
    #[error("package {package:?}: its default channel {default:?} is filtered away; name a new one among the kept channels ({}) with --default-channel or defaultChannel", kept.join(", "))]
    DefaultChannelRemoved {
        /// The package.
        package: String,
        /// Its default channel.
        default: String,
        /// The channels kept.
        kept: Vec<String>,
    },
    /// The default channel asked for is not kept.
    #[error("package {package:?}: default channel {channel:?} is not among the kept channels ({})", kept.join(", "))]
    DefaultChannelNotKept {
        /// The package.
        package: String,
        /// The channel asked for.
        channel: String,
        /// The channels kept.
        kept: Vec<String>,
    },
}

/// Every reason a filter failed (one per package or channel at fault).
#[derive(Debug, Clone, PartialEq)]
pub struct FilterErrors(pub Vec<FilterError>);

impl std::fmt::Display for FilterErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lines: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\n"))
    }
}

impl std::error::Error for FilterErrors {}

/// What a filter did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FilterReport {
    /// The packages kept, by name.
    pub packages: Vec<PackageReport>,
    /// The packages removed, by name.
    pub removed_packages: Vec<String>,
}

/// What was kept and removed of one package.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageReport {
    /// Package name.
    pub name: String,
    /// The default channel now.
    pub default_channel: String,
    /// The default channel before, when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_default_channel: Option<String>,
    /// The channels kept, by name.
    pub channels: Vec<ChannelReport>,
    /// The channels removed, by name.
    pub removed_channels: Vec<String>,
    /// How many bundles are kept.
    pub kept_bundles: usize,
    /// The bundles removed, by name.
    pub removed_bundles: Vec<String>,
    /// Deprecation entries removed, as `olm.channel NAME` or `olm.bundle NAME`.
    pub removed_deprecations: Vec<String>,
}

/// What was kept and removed of one channel.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelReport {
    /// Channel name.
    pub name: String,
    /// The version range applied; empty for none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub version_range: String,
    /// The channel head now.
    pub head: String,
    /// How many entries are kept.
    pub kept_entries: usize,
    /// Entries removed, by name.
    pub removed_entries: Vec<String>,
    /// Entries kept although outside the range: the replaces chain from
    /// the head to the bundles in range passes through them.
    pub kept_outside_range: Vec<String>,
    /// Entries in range that were not kept: no kept entry leads to them.
    pub unreachable_in_range: Vec<String>,
    /// Edges dropped because they pointed to a removed bundle.
    pub dropped_edges: Vec<DroppedEdge>,
}

/// An edge of a channel entry that was dropped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DroppedEdge {
    /// The entry that had the edge.
    pub entry: String,
    /// `replaces` or `skips`.
    pub kind: &'static str,
    /// The bundle it pointed to.
    pub target: String,
}

impl FilterConfig {
    /// Reads a filter file (YAML or JSON); `path` names it in errors.
    pub fn parse(text: &str, path: &str) -> Result<FilterConfig, FilterError> {
        let config_err = |message: String| FilterError::Config {
            path: path.to_string(),
            message,
        };
        let docs = crate::yaml::parse_documents(text).map_err(|e| {
            config_err(format!(
                "line {}, column {}: {}",
                e.span.line, e.span.column, e.message
            ))
        })?;
        let mut docs = docs
            .into_iter()
            .filter(|d| !matches!(d.root.value, crate::yaml::Value::Null));
        let doc = docs
            .next()
            .ok_or_else(|| config_err("empty file; expected a FilterConfiguration".into()))?;
        if docs.next().is_some() {
            return Err(config_err(
                "more than one YAML document; expected one FilterConfiguration".into(),
            ));
        }
        let cfg: FilterConfig = serde_json::from_value(doc.root.to_json())
            .map_err(|e| config_err(format!("not a FilterConfiguration: {e}")))?;
        if !cfg.api_version.is_empty() && cfg.api_version != FILTER_API_VERSION {
            return Err(config_err(format!(
                "apiVersion {:?}: expected {FILTER_API_VERSION:?}",
                cfg.api_version
            )));
        }
        if !cfg.kind.is_empty() && cfg.kind != FILTER_KIND {
            return Err(config_err(format!(
                "kind {:?}: expected {FILTER_KIND:?}",
                cfg.kind
            )));
        }
        for (i, p) in cfg.packages.iter().enumerate() {
            if p.name.is_empty() {
                return Err(config_err(format!("packages[{i}]: name must be set")));
            }
            for (j, c) in p.channels.iter().enumerate() {
                if c.name.is_empty() {
                    return Err(config_err(format!(
                        "packages[{i}].channels[{j}] (package {:?}): name must be set",
                        p.name
                    )));
                }
            }
        }
        Ok(cfg)
    }
}

/// The version of a bundle, from its `olm.package` property.
pub fn bundle_version(b: &super::Bundle) -> Option<semver::Version> {
    b.properties
        .iter()
        .find(|p| p.kind == "olm.package")
        .and_then(|p| semver::Version::parse(p.str_field("version")).ok())
}

/// The entries of a channel that a version range keeps.
struct Cut {
    kept: BTreeSet<String>,
    head: String,
    outside_range: Vec<String>,
    unreachable: Vec<String>,
}

/// Cuts `ch` to `range`: the stretch of the replaces chain from the first
/// entry that holds or skips a bundle in range down to the last one, plus
/// the bundles in range those entries skip. Keeping a chain (not just the
/// bundles in range) is what keeps a single head.
fn cut_channel(
    ch: &Channel,
    range: &Range,
    versions: &BTreeMap<&str, Option<semver::Version>>,
) -> Result<Cut, String> {
    let heads = ch.heads();
    let head = match heads.as_slice() {
        [h] => *h,
        [] => return Err("it has no head (its replaces/skips form a cycle)".into()),
        many => return Err(format!("it has more than one head: {}", many.join(", "))),
    };
    let by_name: BTreeMap<&str, &ChannelEntry> =
        ch.entries.iter().map(|e| (e.name.as_str(), e)).collect();
    let in_range = |n: &str| {
        versions
            .get(n)
            .and_then(Option::as_ref)
            .is_some_and(|v| range.admits(v))
    };
    let mut chain: Vec<&ChannelEntry> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut cur = by_name.get(head).copied();
    while let Some(e) = cur {
        if !seen.insert(e.name.as_str()) {
            break;
        }
        chain.push(e);
        cur = by_name.get(e.replaces.as_str()).copied();
    }
    // What each chain member brings in: itself and the bundles in range it skips.
    let covers: Vec<Vec<&str>> = chain
        .iter()
        .map(|e| {
            std::iter::once(e.name.as_str())
                .chain(e.skips.iter().map(String::as_str))
                .filter(|n| by_name.contains_key(n) && in_range(n))
                .collect()
        })
        .collect();
    let Some(first) = covers.iter().position(|c| !c.is_empty()) else {
        return Ok(Cut {
            kept: BTreeSet::new(),
            head: String::new(),
            outside_range: Vec::new(),
            unreachable: ch
                .entries
                .iter()
                .filter(|e| in_range(&e.name))
                .map(|e| e.name.clone())
                .collect(),
        });
    };
    let last = covers.iter().rposition(|c| !c.is_empty()).unwrap_or(first);
    let mut kept = BTreeSet::new();
    let mut outside_range = Vec::new();
    for (e, cover) in chain[first..=last].iter().zip(&covers[first..=last]) {
        kept.insert(e.name.clone());
        if !in_range(&e.name) {
            outside_range.push(e.name.clone());
        }
        kept.extend(cover.iter().map(|n| n.to_string()));
    }
    let unreachable = ch
        .entries
        .iter()
        .filter(|e| in_range(&e.name) && !kept.contains(&e.name))
        .map(|e| e.name.clone())
        .collect();
    Ok(Cut {
        kept,
        head: chain[first].name.clone(),
        outside_range,
        unreachable,
    })
}

/// Filters `cfg` to what `filter` names. Fails, with every reason, when a
/// name is unknown, a range keeps nothing, or a default channel would be lost.
pub fn filter(
    cfg: &DeclarativeConfig,
    filter: &FilterConfig,
    options: Options,
) -> Result<(DeclarativeConfig, FilterReport), FilterErrors> {
    let mut errors = Vec::new();
    if filter.packages.is_empty() {
        return Err(FilterErrors(vec![FilterError::NoPackages]));
    }
    let mut wanted: BTreeMap<&str, &PackageFilter> = BTreeMap::new();
    for p in &filter.packages {
        if wanted.insert(&p.name, p).is_some() {
            errors.push(FilterError::DuplicatePackage(p.name.clone()));
        }
    }
    let mut out = DeclarativeConfig::default();
    let mut report = FilterReport::default();
    let all_packages: BTreeSet<&str> = cfg.packages.iter().map(|p| p.name.as_str()).collect();
    report.removed_packages = all_packages
        .iter()
        .filter(|p| !wanted.contains_key(*p))
        .map(|p| p.to_string())
        .collect();
    for (name, pf) in &wanted {
        let Some(pkg) = cfg.packages.iter().find(|p| p.name == *name) else {
            errors.push(FilterError::UnknownPackage {
                package: name.to_string(),
            });
            continue;
        };
        match filter_package(cfg, pkg, pf, options) {
            Ok((part, r)) => {
                out.packages.extend(part.packages);
                out.channels.extend(part.channels);
                out.bundles.extend(part.bundles);
                out.deprecations.extend(part.deprecations);
                out.others.extend(part.others);
                report.packages.push(r);
            }
            Err(mut e) => errors.append(&mut e),
        }
    }
    if !errors.is_empty() {
        return Err(FilterErrors(errors));
    }
    // Objects of other schemas that belong to no package are the catalog's own.
    out.others.extend(
        cfg.others
            .iter()
            .filter(|o| {
                o.get("package")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .is_empty()
            })
            .cloned(),
    );
    Ok((out, report))
}

fn filter_package(
    cfg: &DeclarativeConfig,
    pkg: &super::Package,
    pf: &PackageFilter,
    options: Options,
) -> Result<(DeclarativeConfig, PackageReport), Vec<FilterError>> {
    let name = pkg.name.as_str();
    let mut errors = Vec::new();
    let channels: BTreeMap<&str, &Channel> = cfg
        .channels
        .iter()
        .filter(|c| c.package == name)
        .map(|c| (c.name.as_str(), c))
        .collect();
    let versions: BTreeMap<&str, Option<semver::Version>> = cfg
        .bundles
        .iter()
        .filter(|b| b.package == name)
        .map(|b| (b.name.as_str(), bundle_version(b)))
        .collect();
    let parse_range = |r: &str, errors: &mut Vec<FilterError>| -> Option<Option<Range>> {
        if r.is_empty() {
            return Some(None);
        }
        match Range::parse(r) {
            Ok(r) => Some(Some(r)),
            Err(reason) => {
                errors.push(FilterError::InvalidRange {
                    package: name.to_string(),
                    range: r.to_string(),
                    reason: reason.to_string(),
                });
                None
            }
        }
    };
    // (channel, range text, range, named explicitly)
    let mut selected: Vec<(&Channel, String, Option<Range>, bool)> = Vec::new();
    if pf.channels.is_empty() {
        if let Some(range) = parse_range(&pf.version_range, &mut errors) {
            for c in channels.values() {
                selected.push((c, pf.version_range.clone(), range.clone(), false));
            }
        }
    } else {
        let mut named = BTreeSet::new();
        for cf in &pf.channels {
            if !named.insert(cf.name.as_str()) {
                errors.push(FilterError::DuplicateChannel {
                    package: name.to_string(),
                    channel: cf.name.clone(),
                });
                continue;
            }
            let Some(c) = channels.get(cf.name.as_str()) else {
                errors.push(FilterError::UnknownChannel {
                    package: name.to_string(),
                    channel: cf.name.clone(),
                    available: channels.keys().map(|s| s.to_string()).collect(),
                });
                continue;
            };
            let text = if cf.version_range.is_empty() {
                &pf.version_range
            } else {
                &cf.version_range
            };
            if let Some(range) = parse_range(text, &mut errors) {
                selected.push((c, text.clone(), range, true));
            }
        }
    }
    let mut report = PackageReport {
        name: name.to_string(),
        ..Default::default()
    };
    let mut kept_channels: Vec<(&Channel, ChannelReport, BTreeSet<String>)> = Vec::new();
    for (c, text, range, explicit) in selected {
        let mut cr = ChannelReport {
            name: c.name.clone(),
            version_range: text.clone(),
            ..Default::default()
        };
        let kept: BTreeSet<String> = match &range {
            None => {
                cr.head = c.heads().first().map(|h| h.to_string()).unwrap_or_default();
                c.entries.iter().map(|e| e.name.clone()).collect()
            }
            Some(r) => match cut_channel(c, r, &versions) {
                Ok(cut) => {
                    cr.head = cut.head;
                    cr.kept_outside_range = cut.outside_range;
                    cr.unreachable_in_range = cut.unreachable;
                    cut.kept
                }
                Err(reason) => {
                    errors.push(FilterError::NoHead {
                        package: name.to_string(),
                        channel: c.name.clone(),
                        reason,
                    });
                    continue;
                }
            },
        };
        if kept.is_empty() {
            if explicit {
                errors.push(FilterError::EmptyChannel {
                    package: name.to_string(),
                    channel: c.name.clone(),
                    range: text,
                });
            }
            continue;
        }
        kept_channels.push((c, cr, kept));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if kept_channels.is_empty() {
        return Err(vec![FilterError::NothingKept {
            package: name.to_string(),
            range: pf.version_range.clone(),
        }]);
    }
    let kept_names: Vec<String> = kept_channels
        .iter()
        .map(|(c, _, _)| c.name.clone())
        .collect();
    let default_channel = if !pf.default_channel.is_empty() {
        if !kept_names.contains(&pf.default_channel) {
            return Err(vec![FilterError::DefaultChannelNotKept {
                package: name.to_string(),
                channel: pf.default_channel.clone(),
                kept: kept_names,
            }]);
        }
        pf.default_channel.clone()
    } else if kept_names.contains(&pkg.default_channel) {
        pkg.default_channel.clone()
    } else {
        return Err(vec![FilterError::DefaultChannelRemoved {
            package: name.to_string(),
            default: pkg.default_channel.clone(),
            kept: kept_names,
        }]);
    };
    if default_channel != pkg.default_channel {
        report.previous_default_channel = Some(pkg.default_channel.clone());
    }
    report.default_channel = default_channel.clone();
    report.removed_channels = channels
        .keys()
        .filter(|c| !kept_names.iter().any(|k| k == *c))
        .map(|c| c.to_string())
        .collect();

    let kept_bundles: BTreeSet<String> = kept_channels
        .iter()
        .flat_map(|(_, _, k)| k.iter().cloned())
        .collect();
    let removed_bundle = |n: &str| versions.contains_key(n) && !kept_bundles.contains(n);
    let mut out = DeclarativeConfig::default();
    let mut p = pkg.clone();
    p.default_channel = default_channel;
    out.packages.push(p);
    for (c, mut cr, kept) in kept_channels {
        let mut nc = c.clone();
        nc.entries.retain(|e| kept.contains(&e.name));
        // A target is removed when this channel lost it, or the catalog did.
        let removed = |t: &str| {
            (c.entries.iter().any(|e| e.name == t) && !kept.contains(t)) || removed_bundle(t)
        };
        if !options.keep_edges {
            for e in &mut nc.entries {
                if !e.replaces.is_empty() && removed(&e.replaces) {
                    cr.dropped_edges.push(DroppedEdge {
                        entry: e.name.clone(),
                        kind: "replaces",
                        target: std::mem::take(&mut e.replaces),
                    });
                }
                let entry = e.name.clone();
                e.skips.retain(|s| {
                    let drop = removed(s);
                    if drop {
                        cr.dropped_edges.push(DroppedEdge {
                            entry: entry.clone(),
                            kind: "skips",
                            target: s.clone(),
                        });
                    }
                    !drop
                });
            }
        }
        cr.kept_entries = nc.entries.len();
        cr.removed_entries = c
            .entries
            .iter()
            .filter(|e| !kept.contains(&e.name))
            .map(|e| e.name.clone())
            .collect();
        report.channels.push(cr);
        out.channels.push(nc);
    }
    for b in cfg.bundles.iter().filter(|b| b.package == name) {
        if kept_bundles.contains(b.name.as_str()) {
            out.bundles.push(b.clone());
        } else {
            report.removed_bundles.push(b.name.clone());
        }
    }
    report.removed_bundles.sort();
    report.kept_bundles = out.bundles.len();
    let kept_channel_names: BTreeSet<&str> = out.channels.iter().map(|c| c.name.as_str()).collect();
    for d in cfg.deprecations.iter().filter(|d| d.package == name) {
        let mut nd = d.clone();
        nd.entries.retain(|e| {
            let r = &e.reference;
            let keep = match r.schema.as_str() {
                SCHEMA_CHANNEL => kept_channel_names.contains(r.name.as_str()),
                SCHEMA_BUNDLE => kept_bundles.contains(r.name.as_str()),
                _ => true,
            };
            if !keep {
                report
                    .removed_deprecations
                    .push(format!("{} {}", r.schema, r.name));
            }
            keep
        });
        if !nd.entries.is_empty() {
            out.deprecations.push(nd);
        }
    }
    out.others.extend(
        cfg.others
            .iter()
            .filter(|o| o.get("package").and_then(Value::as_str) == Some(name))
            .cloned(),
    );
    Ok((out, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Channel entries: (version, replaces version, skipped versions).
    type Entries<'a> = &'a [(&'a str, &'a str, &'a [&'a str])];

    /// A package `p` with bundles `p.v<version>` and the given channels
    /// (`(name, [(entry version, replaces version, [skipped versions])])`).
    fn catalog(default: &str, channels: &[(&str, Entries<'_>)]) -> DeclarativeConfig {
        let mut cfg = DeclarativeConfig::default();
        let obj = |s: String| serde_json::from_str::<Value>(&s).expect("json");
        cfg.push_object(obj(format!(
            r#"{{"schema":"olm.package","name":"p","defaultChannel":"{default}"}}"#
        )))
        .expect("package");
        let mut versions = BTreeSet::new();
        for (ch, entries) in channels {
            let entries: Vec<Value> = entries
                .iter()
                .map(|(v, r, skips)| {
                    versions.insert(v.to_string());
                    let mut e = serde_json::json!({"name": format!("p.v{v}")});
                    if !r.is_empty() {
                        e["replaces"] = format!("p.v{r}").into();
                    }
                    if !skips.is_empty() {
                        e["skips"] = skips.iter().map(|s| format!("p.v{s}")).collect();
                    }
                    e
                })
                .collect();
            cfg.push_object(serde_json::json!({"schema":"olm.channel","name":ch,"package":"p","entries":entries}))
                .expect("channel");
        }
        for v in versions {
            cfg.push_object(serde_json::json!({"schema":"olm.bundle","name":format!("p.v{v}"),"package":"p","image":format!("i:{v}"),
                "properties":[{"type":"olm.package","value":{"packageName":"p","version":v}}]}))
                .expect("bundle");
        }
        cfg
    }

    fn keep(channels: &[(&str, &str)], range: &str, default: &str) -> FilterConfig {
        FilterConfig {
            packages: vec![PackageFilter {
                name: "p".into(),
                default_channel: default.into(),
                version_range: range.into(),
                channels: channels
                    .iter()
                    .map(|(n, r)| ChannelFilter {
                        name: n.to_string(),
                        version_range: r.to_string(),
                    })
                    .collect(),
            }],
            ..Default::default()
        }
    }

    fn entries(cfg: &DeclarativeConfig, ch: &str) -> Vec<String> {
        let c = cfg.channels.iter().find(|c| c.name == ch).expect("channel");
        c.entries
            .iter()
            .map(|e| format!("{}<{}{:?}", e.name, e.replaces, e.skips))
            .collect()
    }

    #[test]
    fn a_range_keeps_a_chain_with_one_head_and_drops_edges_to_removed_bundles() {
        let chain: &[(&str, &str, &[&str])] = &[
            ("1.0.0", "", &[]),
            ("1.1.0", "1.0.0", &[]),
            ("1.2.0", "1.1.0", &[]),
            ("2.0.0", "1.2.0", &[]),
        ];
        let cfg = catalog("stable", &[("stable", chain), ("fast", chain)]);
        let (out, rep) =
            filter(&cfg, &keep(&[], ">=1.1.0 <2.0.0", ""), Options::default()).expect("filter");
        assert_eq!(
            entries(&out, "stable"),
            ["p.v1.1.0<[]", "p.v1.2.0<p.v1.1.0[]"]
        );
        assert!(crate::fbc::validate::validate(&out).is_empty());
        assert_eq!(out.bundles.len(), 2);
        let ch = &rep.packages[0].channels[0];
        assert_eq!(ch.head, "p.v1.2.0");
        assert_eq!(
            ch.dropped_edges,
            [DroppedEdge {
                entry: "p.v1.1.0".into(),
                kind: "replaces",
                target: "p.v1.0.0".into()
            }]
        );
        assert_eq!(rep.packages[0].removed_bundles, ["p.v1.0.0", "p.v2.0.0"]);
        // Kept as opm keeps them, on request.
        let (out, _) = filter(
            &cfg,
            &keep(&[], ">=1.1.0 <2.0.0", ""),
            Options { keep_edges: true },
        )
        .expect("filter");
        assert_eq!(entries(&out, "fast")[0], "p.v1.1.0<p.v1.0.0[]");
    }

    #[test]
    fn a_gap_in_the_range_keeps_the_chain_through_it() {
        // 1.1.0 is outside `1.0.0 || 1.2.0`, but dropping it would leave two heads.
        let chain: &[(&str, &str, &[&str])] = &[
            ("1.0.0", "", &[]),
            ("1.1.0", "1.0.0", &[]),
            ("1.2.0", "1.1.0", &[]),
            ("1.3.0", "1.2.0", &["1.2.5"]),
            ("1.2.5", "", &[]),
        ];
        let cfg = catalog("stable", &[("stable", chain)]);
        let (out, rep) = filter(
            &cfg,
            &keep(&[("stable", "1.0.0 || 1.2.0 || 1.2.5")], "", ""),
            Options::default(),
        )
        .expect("filter");
        let ch = &rep.packages[0].channels[0];
        assert_eq!(ch.head, "p.v1.3.0");
        assert_eq!(ch.kept_outside_range, ["p.v1.3.0", "p.v1.1.0"]);
        assert_eq!(entries(&out, "stable").len(), 5);
        assert!(crate::fbc::validate::validate(&out).is_empty());
    }

    #[test]
    fn losing_the_default_channel_needs_a_new_one() {
        let chain: &[(&str, &str, &[&str])] = &[("1.0.0", "", &[])];
        let cfg = catalog("stable", &[("stable", chain), ("fast", chain)]);
        let e =
            filter(&cfg, &keep(&[("fast", "")], "", ""), Options::default()).expect_err("refused");
        assert_eq!(
            e.to_string(),
            "package \"p\": its default channel \"stable\" is filtered away; name a new one among the kept channels (fast) with --default-channel or defaultChannel"
        );
        let (out, rep) =
            filter(&cfg, &keep(&[("fast", "")], "", "fast"), Options::default()).expect("filter");
        assert_eq!(out.packages[0].default_channel, "fast");
        assert_eq!(
            rep.packages[0].previous_default_channel.as_deref(),
            Some("stable")
        );
        assert_eq!(rep.packages[0].removed_channels, ["stable"]);
        let e = filter(
            &cfg,
            &keep(&[("fast", "")], "", "stable"),
            Options::default(),
        )
        .expect_err("refused");
        assert!(
            e.to_string()
                .contains("default channel \"stable\" is not among the kept channels (fast)"),
            "{e}"
        );
        let e = filter(
            &cfg,
            &keep(&[("nope", ""), ("fast", "9.x")], "", ""),
            Options::default(),
        )
        .expect_err("refused");
        assert_eq!(e.0.len(), 2, "{e}");
        assert!(
            e.to_string()
                .contains("package \"p\" has no channel \"nope\" (it has: fast, stable)"),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("channel \"fast\": no bundle is in version range \"9.x\""),
            "{e}"
        );
    }

    #[test]
    fn deprecations_are_trimmed_and_config_files_read() {
        let chain: &[(&str, &str, &[&str])] = &[("1.0.0", "", &[]), ("1.1.0", "1.0.0", &[])];
        let mut cfg = catalog("stable", &[("stable", chain), ("old", chain)]);
        cfg.push_object(
            serde_json::json!({"schema":"olm.deprecations","package":"p","entries":[
            {"reference":{"schema":"olm.package"},"message":"p"},
            {"reference":{"schema":"olm.channel","name":"old"},"message":"old"},
            {"reference":{"schema":"olm.bundle","name":"p.v1.0.0"},"message":"b"}]}),
        )
        .expect("deprecation");
        let f = FilterConfig::parse(
            "apiVersion: olm.operatorframework.io/v1alpha1\nkind: FilterConfiguration\npackages:\n- name: p\n  channels:\n  - name: stable\n    versionRange: '>=1.1.0'\n",
            "f.yaml",
        )
        .expect("config");
        let (out, rep) = filter(&cfg, &f, Options::default()).expect("filter");
        assert_eq!(out.deprecations[0].entries.len(), 1);
        assert_eq!(
            rep.packages[0].removed_deprecations,
            ["olm.channel old", "olm.bundle p.v1.0.0"]
        );
        let e = FilterConfig::parse("packages:\n- name: p\n  chanels: []\n", "f.yaml")
            .expect_err("typo");
        assert!(
            e.to_string()
                .starts_with("f.yaml: not a FilterConfiguration: unknown field `chanels`"),
            "{e}"
        );
    }
}
