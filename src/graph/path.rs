//! The upgrade steps OLM takes from an installed bundle.
//!
//! From the installed bundle OLM looks for the entries that replace it,
//! skip it, or whose `olm.skipRange` admits its version, takes the one it
//! prefers, and repeats from there until none qualifies. Which entries
//! qualify and which is preferred differ between OLM v0 and OLM v1
//! ([`super::successors`]): v0 looks only in the subscribed channel, only at
//! the entries on its replaces chain, and prefers the one closest to the
//! head; v1 looks in every channel (or the ones selected), at every entry,
//! and prefers the highest version.
//!
//! [`annotate_crd_changes`] adds to each step what changes in the CRDs
//! between its two bundles ([`super::crd_safety`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use semver::Version;

use super::successors::{self, Olm};
use super::{Channel, EdgeKind, Error, PackageGraph};
use crate::diag::Finding;
use crate::semver_range as range;

/// One upgrade step.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Step {
    /// Installed bundle (CSV name, or the version when no bundle has it).
    pub from: String,
    /// The bundle OLM upgrades to.
    pub to: String,
    /// Which field of `to` admits `from`.
    pub kind: EdgeKind,
    /// The channel whose entry for `to` admits `from`.
    pub channel: String,
    /// The other entries that also qualified, less preferred than `to`.
    pub alternatives: Vec<String>,
    /// What changes in the CRDs between the two bundles, when computed
    /// ([`annotate_crd_changes`]).
    #[serde(rename = "crdChanges", skip_serializing_if = "Option::is_none")]
    pub crd_changes: Option<CrdChanges>,
}

/// What changes in the CRDs of one upgrade step.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CrdChanges {
    /// Whether the two bundles' CRD files were compared.
    pub compared: bool,
    /// Why they were not (or could not all be), when so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Unsafe changes: the findings `graph check` reports for this edge.
    #[serde(rename = "unsafe")]
    pub unsafe_changes: Vec<Finding>,
    /// Safe changes, one line each (CRDs, versions and fields added, enum
    /// values added, CRDs no longer shipped).
    pub safe: Vec<String>,
}

/// The path, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct UpgradePath {
    /// Whose rules were followed.
    pub olm: Olm,
    /// The channel followed (v1: the channels searched, comma-separated).
    pub channel: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// Why the path ends where it does.
    pub end: String,
}

/// Finds what `from` (a version or a CSV name) means in the package.
pub fn resolve(g: &PackageGraph, from: &str) -> Result<(String, Option<Version>), Error> {
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

/// [`upgrade_path_with`] under OLM v0's rules.
pub fn upgrade_path(
    g: &PackageGraph,
    from: &str,
    to: Option<&str>,
    channel: Option<&str>,
) -> Result<UpgradePath, Error> {
    upgrade_path_with(g, from, to, channel, Olm::V0)
}

/// The steps from `from`, stopping at `to` if given, under `olm`'s rules.
/// OLM v0 follows `channel` (default: the package's default channel); OLM
/// v1 searches `channel` if given, else every channel. Err when the input
/// names nothing, or `to` is not reached.
pub fn upgrade_path_with(
    g: &PackageGraph,
    from: &str,
    to: Option<&str>,
    channel: Option<&str>,
    olm: Olm,
) -> Result<UpgradePath, Error> {
    let channels: Vec<&Channel> = match (olm, channel) {
        (Olm::V1, None) => g.channels.iter().collect(),
        _ => {
            let ch_name = channel.unwrap_or(&g.default_channel);
            vec![g.channel(ch_name).ok_or_else(|| {
                Error::Unknown(format!(
                    "package {} has no channel `{ch_name}` (channels: {})",
                    g.package,
                    g.channels
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?]
        }
    };
    let channel_label = channels
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let (mut cur_name, mut cur_version) = resolve(g, from)?;
    let target = match to {
        Some(t) => Some(resolve(g, t)?.0),
        None => None,
    };
    let mut steps = Vec::new();
    let mut visited = BTreeSet::from([cur_name.clone()]);
    let end = loop {
        if target.as_deref() == Some(cur_name.as_str()) {
            break format!("reached {cur_name}");
        }
        let candidates = match olm {
            Olm::V0 => {
                match successors::v0_candidates(g, channels[0], &cur_name, cur_version.as_ref()) {
                    Ok(c) => c,
                    Err(e) => break format!("OLM v0 cannot resolve the channel: {e}"),
                }
            }
            Olm::V1 => {
                let mut c =
                    successors::v1_successors(g, &channels, &cur_name, cur_version.as_ref());
                // OLM v1 may stay: the installed bundle competes with its
                // successors (a deprecated or lower successor loses to it).
                let installed_in_scope = channels.iter().any(|ch| ch.entry(&cur_name).is_some())
                    || (channel.is_none() && g.bundles.contains_key(&cur_name));
                if installed_in_scope && !c.is_empty() {
                    let mut pool: Vec<&str> = c.iter().map(|x| x.name.as_str()).collect();
                    pool.push(&cur_name);
                    successors::sort_v1(g, &mut pool, |n| n);
                    if pool[0] == cur_name {
                        break format!(
                            "OLM v1 keeps {cur_name}: its successors ({}) are deprecated or not higher",
                            c.iter().map(|x| x.name.as_str()).collect::<Vec<_>>().join(", ")
                        );
                    }
                }
                c.retain(|x| x.name != cur_name);
                c
            }
        };
        if candidates.is_empty() && olm == Olm::V0 {
            // Entries that admit it but are skipped: off OLM v0's chain.
            let ch = channels[0];
            let off: Vec<String> = ch
                .entries
                .iter()
                .filter(|e| e.name != cur_name)
                .filter(|e| successors::admits(e, &cur_name, cur_version.as_ref()).is_some())
                .map(|e| {
                    let by: Vec<&str> = ch
                        .entries
                        .iter()
                        .filter(|x| x.skips.contains(&e.name))
                        .map(|x| x.name.as_str())
                        .collect();
                    format!("{} (skipped by {})", e.name, by.join(", "))
                })
                .collect();
            if !off.is_empty() {
                break format!(
                    "only {} would take {cur_name} further, and OLM v0 leaves skipped entries out of channel {}: it offers no upgrade (OLM v1 would take it)",
                    off.join(", "),
                    ch.name
                );
            }
        }
        if candidates.is_empty() {
            break no_candidate_reason(
                g,
                &channels,
                &channel_label,
                &cur_name,
                cur_version.as_ref(),
                steps.is_empty(),
            );
        }
        let best = &candidates[0];
        let next = best.name.clone();
        steps.push(Step {
            from: cur_name.clone(),
            to: next.clone(),
            kind: best.kind,
            channel: best.channel.clone(),
            alternatives: candidates[1..].iter().map(|c| c.name.clone()).collect(),
            crd_changes: None,
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
                "no upgrade path from {from} to {t} in channel {channel_label}: the path ends at {cur_name} ({end})"
            )));
        }
    }
    Ok(UpgradePath {
        olm,
        channel: channel_label,
        steps,
        end,
    })
}

/// Why no entry qualifies from `cur_name`.
fn no_candidate_reason(
    g: &PackageGraph,
    channels: &[&Channel],
    label: &str,
    cur_name: &str,
    cur_version: Option<&Version>,
    first: bool,
) -> String {
    let in_scope = channels.iter().any(|c| c.entry(cur_name).is_some());
    let heads: Vec<String> = channels
        .iter()
        .filter_map(|c| c.head().ok().map(|h| h.name.clone()))
        .collect();
    if in_scope && heads.iter().any(|h| h == cur_name) {
        let of: Vec<&str> = channels
            .iter()
            .filter(|c| c.head().is_ok_and(|h| h.name == cur_name))
            .map(|c| c.name.as_str())
            .collect();
        return format!("{cur_name} is the head of channel {}", of.join(", "));
    }
    let ch_word = if channels.len() > 1 {
        "channels"
    } else {
        "channel"
    };
    if !in_scope && first {
        // Say where it is, so the next command is obvious.
        let elsewhere: Vec<&str> = g
            .channels
            .iter()
            .filter(|c| c.entry(cur_name).is_some())
            .map(|c| c.name.as_str())
            .collect();
        let hint = if !elsewhere.is_empty() {
            format!(
                " (it is in channel {}: try --channel)",
                elsewhere.join(", ")
            )
        } else if g.bundles.contains_key(cur_name) {
            " (the package has the bundle, but no channel lists it)".to_string()
        } else {
            format!(
                " (no bundle of the graph built from {} has that version)",
                g.source.display()
            )
        };
        return format!(
            "no entry of {ch_word} {label} replaces or skips {cur_name}, and no skipRange admits {}; it is not in the {ch_word} either, so OLM offers no upgrade{hint}",
            cur_version.map(|v| v.to_string()).unwrap_or_else(|| "its version".into())
        );
    }
    format!(
        "no entry of {ch_word} {label} replaces or skips {cur_name}, and no skipRange admits its version: OLM offers no upgrade from it"
    )
}

/// The bundle directory of a bundle read from one (its CSV is in
/// `DIR/manifests/`), if it was.
pub fn bundle_dir(g: &PackageGraph, name: &str) -> Option<PathBuf> {
    let file = &g.bundles.get(name)?.location.as_ref()?.file;
    let manifests = file.parent()?;
    (manifests.file_name()? == "manifests").then(|| manifests.parent().map(Path::to_path_buf))?
}

/// Fills every step's [`Step::crd_changes`]: the unsafe changes
/// [`super::crd_safety`] finds between the two bundles' CRDs, and the safe
/// additions. Only bundles read from directories have CRD files; a step
/// without them says so.
pub fn annotate_crd_changes(g: &PackageGraph, path: &mut UpgradePath) {
    annotate_crd_changes_with(g, path, super::crd_safety::CrdChecks::OlmV1)
}

/// [`annotate_crd_changes`] under the CRD-check configuration `checks`
/// (`--crd-checks`, as `graph check` takes it).
pub fn annotate_crd_changes_with(
    g: &PackageGraph,
    path: &mut UpgradePath,
    checks: super::crd_safety::CrdChecks,
) {
    for s in &mut path.steps {
        let (Some(old), Some(new)) = (bundle_dir(g, &s.from), bundle_dir(g, &s.to)) else {
            let unknown = [&s.from, &s.to]
                .into_iter()
                .find(|n| !g.bundles.contains_key(n.as_str()));
            s.crd_changes = Some(CrdChanges {
                compared: false,
                note: Some(match unknown {
                    Some(n) => format!("not compared: the package has no bundle {n}"),
                    None => "not compared: the bundles were not read from bundle directories (a file-based catalog has no CRD files)".to_string(),
                }),
                ..CrdChanges::default()
            });
            continue;
        };
        let label = format!(
            "channel {}: upgrade {} -> {} ({})",
            s.channel,
            s.from,
            s.to,
            s.kind.as_str()
        );
        let unsafe_changes =
            super::crd_safety::compare_dirs_labelled_with(&old, &new, &label, checks);
        let (safe, note) = match super::crd_safety::safe_changes_dirs_with(&old, &new, checks) {
            Ok(v) => (v, None),
            Err(e) => (Vec::new(), Some(format!("safe changes not listed: {e}"))),
        };
        s.crd_changes = Some(CrdChanges {
            compared: true,
            note,
            unsafe_changes,
            safe,
        });
    }
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
