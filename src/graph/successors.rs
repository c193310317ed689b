//! Which bundle OLM moves to from an installed one: OLM v0's rules
//! (operator-lifecycle-manager's resolver) and OLM v1's
//! (operator-controller's catalog resolver).
//!
//! **OLM v0** (`pkg/controller/registry/resolver`, `getSubscriptionVariables`
//! and `sortChannel`): a channel is ordered by walking `replaces` from its
//! one head; entries that another entry `skips` are left out of that order,
//! and a channel with no head or several replacement chains cannot be
//! resolved at all. The candidates for an installed bundle are the ordered
//! entries that replace it, skip it, or whose `skipRange` admits its
//! version; the solver prefers the one closest to the head.
//!
//! **OLM v1** (`internal/operator-controller/catalogmetadata/filter`,
//! `SuccessorsOf`, and `resolve/catalog.go`): there is no replaces chain.
//! The candidates are every bundle whose entry, in any of the selected
//! channels (all of the package's when none is selected), replaces the
//! installed bundle, skips it or admits its version by `skipRange`, plus the
//! installed version itself (staying is allowed); non-deprecated bundles
//! first, then the highest version. With `upgradeConstraintPolicy:
//! SelfCertified` the successor rule is not applied at all.

use std::collections::BTreeSet;

use semver::Version;

use super::{Channel, EdgeKind, PackageGraph};
use crate::semver_range::{self as range, Range};

/// Which OLM's rules to follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Olm {
    /// OLM v0: Subscriptions, the catalog operator's resolver.
    #[default]
    V0,
    /// OLM v1: ClusterExtensions, operator-controller.
    V1,
}

impl Olm {
    /// `v0` or `v1`.
    pub fn as_str(self) -> &'static str {
        match self {
            Olm::V0 => "v0",
            Olm::V1 => "v1",
        }
    }
}

/// The entries of a channel in OLM v0's order, head first: the `replaces`
/// chain from the channel's one head, without the entries some entry skips
/// (`sortChannel`). Err is OLM v0's reason for refusing the channel.
pub fn v0_channel_order<'a>(package: &str, ch: &'a Channel) -> Result<Vec<&'a str>, String> {
    let names: BTreeSet<&str> = ch.entries.iter().map(|e| e.name.as_str()).collect();
    let mut replaced_by_someone = BTreeSet::new();
    let mut skipped = BTreeSet::new();
    for e in &ch.entries {
        if names.contains(e.replaces.as_str()) {
            replaced_by_someone.insert(e.replaces.as_str());
        }
        for s in &e.skips {
            if names.contains(s.as_str()) {
                replaced_by_someone.insert(s.as_str());
                skipped.insert(s.as_str());
            }
        }
    }
    let mut heads: Vec<&str> = Vec::new();
    for e in &ch.entries {
        if !replaced_by_someone.contains(e.name.as_str()) && !heads.contains(&e.name.as_str()) {
            heads.push(&e.name);
        }
    }
    if heads.is_empty() {
        return Err(format!(
            "no channel heads (entries not replaced by another entry) found in channel {:?} of package {package:?}",
            ch.name
        ));
    }
    let mut chains: Vec<Vec<&str>> = Vec::new();
    for head in &heads {
        let mut chain = Vec::new();
        let mut seen = BTreeSet::new();
        let mut cur = *head;
        loop {
            seen.insert(cur);
            if !skipped.contains(cur) {
                chain.push(cur);
            }
            let Some(next) = ch
                .entry(cur)
                .map(|e| e.replaces.as_str())
                .filter(|r| names.contains(r))
            else {
                break;
            };
            if seen.contains(next) {
                return Err(format!(
                    "a cycle exists in the chain of replacement beginning with {head:?} in channel {:?} of package {package:?}",
                    ch.name
                ));
            }
            cur = next;
        }
        chains.push(chain);
    }
    if chains.len() > 1 {
        let shown: Vec<String> = chains
            .iter()
            .map(|c| match c.as_slice() {
                [] => "[]".to_string(),
                [one] => one.to_string(),
                [first, .., last] => format!("{first}...{last}"),
            })
            .collect();
        return Err(format!(
            "a unique replacement chain within a channel is required to determine the relative order between channel entries, but {} replacement chains were found in channel {:?} of package {package:?}: {}",
            chains.len(),
            ch.name,
            shown.join(", ")
        ));
    }
    Ok(chains.pop().unwrap_or_default())
}

/// How entry `e` admits the installed bundle, if it does: `replaces`
/// first, then `skips`, then `skipRange`.
pub fn admits(
    e: &super::Entry,
    installed: &str,
    installed_version: Option<&Version>,
) -> Option<EdgeKind> {
    if !installed.is_empty() && e.replaces == installed {
        return Some(EdgeKind::Replaces);
    }
    if !installed.is_empty() && e.skips.iter().any(|s| s == installed) {
        return Some(EdgeKind::Skips);
    }
    if e.skip_range.is_empty() {
        return None;
    }
    let v = installed_version?;
    Range::parse(&e.skip_range)
        .ok()
        .filter(|r| r.admits(v))
        .map(|_| EdgeKind::SkipRange)
}

/// One bundle OLM could move to.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Candidate {
    /// The bundle.
    pub name: String,
    /// Which field of its entry admits the installed bundle.
    pub kind: EdgeKind,
    /// The channel whose entry admits it.
    pub channel: String,
}

/// OLM v0's candidates in channel `ch`, most preferred first. Err when OLM
/// v0 cannot order the channel.
pub fn v0_candidates(
    g: &PackageGraph,
    ch: &Channel,
    installed: &str,
    installed_version: Option<&Version>,
) -> Result<Vec<Candidate>, String> {
    let order = v0_channel_order(&g.package, ch)?;
    Ok(order
        .into_iter()
        .filter(|n| *n != installed)
        .filter_map(|n| {
            let e = ch.entry(n)?;
            admits(e, installed, installed_version).map(|kind| Candidate {
                name: n.to_string(),
                kind,
                channel: ch.name.clone(),
            })
        })
        .collect())
}

/// OLM v1's successors of the installed bundle in `channels` (each bundle
/// once, with the first channel that admits it), most preferred first:
/// non-deprecated, then highest version. The installed bundle itself is not
/// listed (OLM v1 may always stay).
pub fn v1_successors(
    g: &PackageGraph,
    channels: &[&Channel],
    installed: &str,
    installed_version: Option<&Version>,
) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for ch in channels {
        for e in &ch.entries {
            if e.name == installed || out.iter().any(|c| c.name == e.name) {
                continue;
            }
            if let Some(kind) = admits(e, installed, installed_version) {
                out.push(Candidate {
                    name: e.name.clone(),
                    kind,
                    channel: ch.name.clone(),
                });
            }
        }
    }
    sort_v1(g, &mut out, |c| &c.name);
    out
}

/// Sorts bundles as OLM v1 prefers them: not deprecated first, then by
/// version, highest first (build metadata breaking ties, as a release),
/// then by name.
pub fn sort_v1<T>(g: &PackageGraph, items: &mut [T], name: impl Fn(&T) -> &str) {
    items.sort_by(|a, b| {
        let (na, nb) = (name(a), name(b));
        let (da, db) = (
            g.deprecated.bundles.contains(na),
            g.deprecated.bundles.contains(nb),
        );
        da.cmp(&db)
            .then_with(|| match (g.version(na), g.version(nb)) {
                (Some(x), Some(y)) => range::compare(y, x).then_with(|| y.build.cmp(&x.build)),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            })
            .then_with(|| na.cmp(nb))
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{BundleInfo, Entry};

    fn graph(entries: Vec<Entry>) -> PackageGraph {
        let mut g = PackageGraph {
            package: "a".into(),
            default_channel: "stable".into(),
            ..PackageGraph::default()
        };
        for e in &entries {
            let v = e.name.trim_start_matches("a.v").to_string();
            g.bundles.insert(
                e.name.clone(),
                BundleInfo {
                    name: e.name.clone(),
                    version: Version::parse(&v).ok(),
                    raw_version: v,
                    ..BundleInfo::default()
                },
            );
        }
        g.channels.push(Channel {
            name: "stable".into(),
            entries,
            location: None,
        });
        g
    }

    /// operator-controller's upgrade-support example: 1.2.0 is skipped, so
    /// OLM v0 leaves it out of the channel; OLM v1 takes it by its skipRange.
    #[test]
    fn skipped_entries_are_no_v0_candidates() {
        let g = graph(vec![
            Entry::new("a.v1.0.0", "", &[], ""),
            Entry::new("a.v1.1.0", "a.v1.0.0", &[], ""),
            Entry::new("a.v1.2.0", "", &[], ">=1.0.0 <1.2.0"),
            Entry::new("a.v1.3.0", "a.v1.1.0", &["a.v1.2.0"], ""),
        ]);
        let ch = &g.channels[0];
        assert_eq!(
            v0_channel_order("a", ch).expect("order"),
            ["a.v1.3.0", "a.v1.1.0", "a.v1.0.0"]
        );
        let v = Version::new(1, 0, 0);
        let v0 = v0_candidates(&g, ch, "a.v1.0.0", Some(&v)).expect("v0");
        assert_eq!(
            v0.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["a.v1.1.0"]
        );
        let v1 = v1_successors(&g, &[ch], "a.v1.0.0", Some(&v));
        assert_eq!(
            v1.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["a.v1.2.0", "a.v1.1.0"]
        );
    }

    #[test]
    fn v0_refuses_two_chains() {
        let g = graph(vec![
            Entry::new("a.v1.0.0", "", &[], ""),
            Entry::new("a.v2.0.0", "", &[], ""),
        ]);
        let e = v0_channel_order("a", &g.channels[0]).expect_err("two chains");
        assert!(e.contains("2 replacement chains"), "{e}");
    }
}
