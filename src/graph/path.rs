//! The upgrade steps OLM takes from an installed bundle.
//!
//! From the installed bundle, OLM looks in the subscribed channel for the
//! entries that replace it, skip it, or whose `olm.skipRange` admits its
//! version, takes the highest version among them, and repeats from there
//! until no entry qualifies (the channel head).

use std::collections::BTreeSet;

use semver::Version;

use super::{EdgeKind, Error, PackageGraph};
use crate::semver_range::{self as range, Range};

/// One upgrade step.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Step {
    /// Installed bundle (CSV name, or the version when no bundle has it).
    pub from: String,
    /// The bundle OLM upgrades to.
    pub to: String,
    /// Which field of `to` admits `from`.
    pub kind: EdgeKind,
    /// The other entries that also qualified, lower than `to`.
    pub alternatives: Vec<String>,
}

/// The path, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct UpgradePath {
    /// The channel followed.
    pub channel: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Why the path ends where it does.
    pub end: String,
}

/// Finds what `from` (a version or a CSV name) means in the package.
fn resolve(g: &PackageGraph, from: &str) -> Result<(String, Option<Version>), Error> {
    if let Some(b) = g.bundles.get(from) {
        return Ok((b.name.clone(), b.version.clone()));
    }
    let v = Version::parse(from.trim_start_matches('v')).map_err(|e| {
        Error::Unknown(format!(
            "`{from}` is neither a bundle of package {} nor a semantic version ({e})",
            g.package
        ))
    })?;
    let named = g.bundles.values().find(|b| {
        b.version
            .as_ref()
            .is_some_and(|bv| range::compare(bv, &v).is_eq() && bv.build == v.build)
    });
    Ok(match named {
        Some(b) => (b.name.clone(), Some(v)),
        None => (from.to_string(), Some(v)),
    })
}

/// The steps from `from` in `channel` (default: the package's default
/// channel), stopping at `to` if given. Err when the input names nothing.
pub fn upgrade_path(
    g: &PackageGraph,
    from: &str,
    to: Option<&str>,
    channel: Option<&str>,
) -> Result<UpgradePath, Error> {
    let ch_name = channel.unwrap_or(&g.default_channel);
    let ch = g.channel(ch_name).ok_or_else(|| {
        Error::Unknown(format!(
            "package {} has no channel `{ch_name}` (channels: {})",
            g.package,
            g.channels
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    let (mut cur_name, mut cur_version) = resolve(g, from)?;
    let target = match to {
        Some(t) => Some(resolve(g, t)?.0),
        None => None,
    };
    let ranges: Vec<Option<Range>> = ch
        .entries
        .iter()
        .map(|e| {
            if e.skip_range.is_empty() {
                None
            } else {
                Range::parse(&e.skip_range).ok()
            }
        })
        .collect();
    let mut steps = Vec::new();
    let mut visited = BTreeSet::from([cur_name.clone()]);
    let end = loop {
        if target.as_deref() == Some(cur_name.as_str()) {
            break format!("reached {cur_name}");
        }
        let mut candidates: Vec<(usize, EdgeKind)> = Vec::new();
        for (i, e) in ch.entries.iter().enumerate() {
            if e.name == cur_name {
                continue;
            }
            let kind = if e.replaces == cur_name {
                Some(EdgeKind::Replaces)
            } else if e.skips.contains(&cur_name) {
                Some(EdgeKind::Skips)
            } else if let (Some(r), Some(v)) = (&ranges[i], &cur_version) {
                r.admits(v).then_some(EdgeKind::SkipRange)
            } else {
                None
            };
            if let Some(k) = kind {
                candidates.push((i, k));
            }
        }
        if candidates.is_empty() {
            let is_head = ch.head().is_ok_and(|h| h.name == cur_name);
            break if is_head {
                format!("{cur_name} is the head of channel {}", ch.name)
            } else if ch.entry(&cur_name).is_none() && steps.is_empty() {
                // Say where it is, so the next command is obvious.
                let elsewhere: Vec<&str> = g
                    .channels
                    .iter()
                    .filter(|c| c.entry(&cur_name).is_some())
                    .map(|c| c.name.as_str())
                    .collect();
                let hint = if !elsewhere.is_empty() {
                    format!(
                        " (it is in channel {}: try --channel)",
                        elsewhere.join(", ")
                    )
                } else if g.bundles.contains_key(&cur_name) {
                    " (the package has the bundle, but no channel lists it)".to_string()
                } else {
                    format!(
                        " (no bundle of the graph built from {} has that version)",
                        g.source.display()
                    )
                };
                format!(
                    "no entry of channel {} replaces or skips {cur_name}, and no skipRange admits {}; it is not in the channel either, so OLM offers no upgrade{hint}",
                    ch.name,
                    cur_version.as_ref().map(|v| v.to_string()).unwrap_or_else(|| "its version".into())
                )
            } else {
                format!(
                    "no entry of channel {} replaces or skips {cur_name}, and no skipRange admits its version: OLM offers no upgrade from it",
                    ch.name
                )
            };
        };
        // Highest version first; unknown versions last, then by name.
        candidates.sort_by(|a, b| {
            let va = g.version(&ch.entries[a.0].name);
            let vb = g.version(&ch.entries[b.0].name);
            match (va, vb) {
                (Some(x), Some(y)) => range::compare(y, x),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            }
            .then_with(|| ch.entries[a.0].name.cmp(&ch.entries[b.0].name))
        });
        let (best, kind) = candidates[0];
        let next = ch.entries[best].name.clone();
        steps.push(Step {
            from: cur_name.clone(),
            to: next.clone(),
            kind,
            alternatives: candidates[1..]
                .iter()
                .map(|(i, _)| ch.entries[*i].name.clone())
                .collect(),
        });
        if !visited.insert(next.clone()) {
            break format!("the path loops back to {next}: the graph has a cycle");
        }
        cur_version = g.version(&next).cloned();
        cur_name = next;
    };
    if let Some(t) = &target {
        if *t != cur_name {
            return Err(Error::NoPath(format!(
                "no upgrade path from {from} to {t} in channel {}: the path ends at {cur_name} ({end})",
                ch.name
            )));
        }
    }
    Ok(UpgradePath {
        channel: ch.name.clone(),
        steps,
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{BundleInfo, Channel, Entry};

    fn graph() -> PackageGraph {
        let mut g = PackageGraph {
            package: "p".into(),
            default_channel: "stable".into(),
            ..PackageGraph::default()
        };
        for (n, v) in [
            ("p.v1.0.0", "1.0.0"),
            ("p.v1.1.0", "1.1.0"),
            ("p.v1.2.0", "1.2.0"),
            ("p.v2.0.0", "2.0.0"),
        ] {
            g.bundles.insert(
                n.into(),
                BundleInfo {
                    name: n.into(),
                    raw_version: v.into(),
                    version: Version::parse(v).ok(),
                    ..BundleInfo::default()
                },
            );
        }
        g.channels.push(Channel {
            name: "stable".into(),
            entries: vec![
                Entry::new("p.v1.0.0", "", &[], ""),
                Entry::new("p.v1.1.0", "p.v1.0.0", &[], ""),
                Entry::new("p.v1.2.0", "p.v1.1.0", &[], ""),
                Entry::new("p.v2.0.0", "p.v1.2.0", &[], ">=1.0.0 <1.2.0"),
            ],
            location: None,
        });
        g
    }

    #[test]
    fn highest_candidate_first() {
        let p = upgrade_path(&graph(), "1.0.0", None, None).expect("path");
        // 1.1.0 replaces 1.0.0, but 2.0.0's skipRange admits it and is higher.
        assert_eq!(p.steps.len(), 1);
        assert_eq!(p.steps[0].to, "p.v2.0.0");
        assert_eq!(p.steps[0].kind, EdgeKind::SkipRange);
        assert_eq!(p.steps[0].alternatives, vec!["p.v1.1.0"]);
        assert!(p.end.contains("head"), "{}", p.end);
    }

    #[test]
    fn unknown_version_uses_skip_range_and_to_must_be_reached() {
        let p = upgrade_path(&graph(), "1.0.5", None, None).expect("path");
        assert_eq!(p.steps[0].to, "p.v2.0.0");
        let e = upgrade_path(&graph(), "2.0.0", Some("1.0.0"), None).expect_err("no way down");
        assert!(matches!(e, Error::NoPath(_)), "{e}");
        assert!(e.to_string().contains("no upgrade path"), "{e}");
        let e = upgrade_path(&graph(), "0.1.0", None, None).expect("no step");
        assert!(
            e.steps.is_empty() && e.end.contains("offers no upgrade"),
            "{}",
            e.end
        );
    }
}
