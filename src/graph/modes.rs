//! The three modes of `opm index add`: what channel entries opm writes into
//! its SQLite index for a sequence of bundle additions.
//!
//! Each bundle is one addition, in order, as `opm index add --bundles B`
//! run once per bundle. The result is the FBC view of the database (what
//! `opm render index.db` shows): per channel, each bundle with the bundle it
//! replaces on the channel's replacement chain, the bundles it skips, and its
//! `olm.skipRange`.
//!
//! * `replaces` (operator-registry `loadManifestsReplaces`,
//!   `SemverPackageManifest`, `sqlLoader.addPackageChannels`,
//!   `checkForBundles`): the channel head is the highest version in the
//!   channel (build metadata compared like a pre-release); opm walks the
//!   CSVs' `spec.replaces` from the head, and every `spec.skips` name of a
//!   visited bundle becomes a skipped entry. A skipped bundle that is not on
//!   the chain appears in the channel with no edges of its own; bundles off
//!   the chain are pruned (an error when it is the bundle being added).
//! * `semver` and `semver-skippatch` (`BundleGraphLoader.AddBundleToGraph`,
//!   `SQLGraphLoader.GraphFromEntries`, `sqlLoader.AddPackageChannelsFromGraph`):
//!   the CSV's `replaces`/`skips` are ignored; the new bundle replaces the
//!   highest lower version in each of its channels and is replaced by the
//!   lowest higher one. With skip-patch, it also takes over every lower
//!   version of the same major.minor, which become skipped entries.
//!
//! Where opm's result depends on Go map order (a node with two replaced
//! nodes both still in the graph, reachable only after a skip-patch graph
//! is read back from the database), the highest version is followed; opm
//! then fails with "Invalid graph" either way, which this reports too.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;

use semver::Version;

use crate::fbc::ChannelEntry;

/// How `opm index add` computes the upgrade graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Mode {
    /// Use the CSV's `spec.replaces` and `spec.skips` (opm's default).
    #[cfg_attr(feature = "cli", value(name = "replaces"))]
    Replaces,
    /// Compute replaces from version order within each channel.
    #[cfg_attr(feature = "cli", value(name = "semver"))]
    Semver,
    /// Like semver, and each bundle also skips lower patch versions of its major.minor.
    #[cfg_attr(feature = "cli", value(name = "semver-skippatch"))]
    SemverSkipPatch,
}

impl Mode {
    /// The name opm uses for the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Replaces => "replaces",
            Mode::Semver => "semver",
            Mode::SemverSkipPatch => "semver-skippatch",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What opm reads from one bundle to place it in the graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModeBundle {
    /// CSV name.
    pub name: String,
    /// Package name.
    pub package: String,
    /// CSV `spec.version`.
    pub version: Version,
    /// Channels from the bundle annotations.
    pub channels: Vec<String>,
    /// Default channel annotation, if set.
    pub default_channel: Option<String>,
    /// CSV `spec.replaces` (empty if none).
    pub replaces: String,
    /// CSV `spec.skips`.
    pub skips: Vec<String>,
    /// The `olm.skipRange` annotation (empty if none).
    pub skip_range: String,
}

/// Why opm would refuse an addition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModeError {
    /// The bundle (CSV name) whose addition fails.
    pub bundle: String,
    /// opm's reason.
    pub message: String,
}

impl fmt::Display for ModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "adding bundle {}: {}", self.bundle, self.message)
    }
}

impl std::error::Error for ModeError {}

/// One package of the index after all additions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackageOutcome {
    /// The package's default channel.
    pub default_channel: String,
    /// Channels by name.
    pub channels: BTreeMap<String, ChannelOutcome>,
}

/// One channel of the index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChannelOutcome {
    /// The channel head (CSV name).
    pub head: String,
    /// Entries sorted by name, as `opm render` writes them.
    pub entries: Vec<ChannelEntry>,
}

/// Entries of every channel, as opm has written them after adding `bundles`
/// in this order (earlier adds first). Err when opm would refuse (message
/// says why, naming the bundle). Channels of several packages with the same
/// name are merged; use [`build`] to keep packages apart.
pub fn channel_entries(
    mode: Mode,
    bundles: &[ModeBundle],
) -> Result<BTreeMap<String, Vec<ChannelEntry>>, ModeError> {
    let mut out: BTreeMap<String, Vec<ChannelEntry>> = BTreeMap::new();
    for pkg in build(mode, bundles)?.into_values() {
        for (name, ch) in pkg.channels {
            let entries = out.entry(name).or_default();
            entries.extend(ch.entries);
            entries.sort_by(|a, b| a.name.cmp(&b.name));
        }
    }
    Ok(out)
}

/// Every package (default channel, channel heads and entries) after adding
/// `bundles` in this order.
pub fn build(
    mode: Mode,
    bundles: &[ModeBundle],
) -> Result<BTreeMap<String, PackageOutcome>, ModeError> {
    let mut db = Db::default();
    for b in bundles {
        let r = match mode {
            Mode::Replaces => db.add_replaces(b),
            Mode::Semver => db.add_semver(b, false),
            Mode::SemverSkipPatch => db.add_semver(b, true),
        };
        r.map_err(|message| ModeError {
            bundle: b.name.clone(),
            message,
        })?;
    }
    Ok(db.outcome())
}

/// A `channel_entry` row: a bundle name at a depth, maybe replacing another row.
#[derive(Clone, Debug)]
struct Row {
    name: String,
    depth: u32,
    replaces: Option<usize>,
}

#[derive(Clone, Debug, Default)]
struct PkgState {
    default_channel: String,
    /// Channel name → rows, in insertion order.
    channels: BTreeMap<String, Vec<Row>>,
    heads: BTreeMap<String, String>,
}

#[derive(Default)]
struct Db {
    /// The `operatorbundle` table, in insertion order.
    bundles: Vec<ModeBundle>,
    by_name: HashMap<String, usize>,
    packages: BTreeMap<String, PkgState>,
}

/// opm's `bundleVersion.compare`: semver precedence, then build metadata
/// compared as if it were a pre-release, with no build sorting lowest.
pub fn build_id_compare(a: &Version, b: &Version) -> Result<Ordering, super::Error> {
    let c = a.cmp_precedence(b);
    if c != Ordering::Equal {
        return Ok(c);
    }
    let as_pre = |v: &Version| -> Result<Version, super::Error> {
        if v.build.is_empty() {
            return Ok(Version::new(0, 0, 0));
        }
        let mut p = Version::new(1, 0, 0);
        p.pre = semver::Prerelease::new(v.build.as_str()).map_err(|e| super::Error::BuildId {
            version: v.to_string(),
            reason: e.to_string(),
        })?;
        Ok(p)
    };
    Ok(as_pre(a)?.cmp_precedence(&as_pre(b)?))
}

impl Db {
    fn insert_bundle(&mut self, b: &ModeBundle) -> Result<(), String> {
        if self.by_name.contains_key(&b.name) {
            return Err(format!(
                "failed to add bundle {:?}: a bundle with this CSV name is already in the index \
                 (UNIQUE constraint failed: operatorbundle.name)",
                b.name
            ));
        }
        self.by_name.insert(b.name.clone(), self.bundles.len());
        self.bundles.push(b.clone());
        Ok(())
    }

    fn bundle(&self, name: &str) -> Option<&ModeBundle> {
        self.by_name.get(name).map(|&i| &self.bundles[i])
    }

    /// `opm index add --mode replaces` of one bundle.
    fn add_replaces(&mut self, b: &ModeBundle) -> Result<(), String> {
        let state = self.packages.get(&b.package).cloned().unwrap_or_default();
        // globalSanityCheck: the same CSV already in a channel of the package.
        if state
            .channels
            .values()
            .any(|rows| rows.iter().any(|r| r.name == b.name))
        {
            return Err("Bundle already added that provides package and csv".into());
        }
        self.insert_bundle(b)?;

        // ListRegistryBundles: bundles with entries in the package, in table
        // order, their channels as the entries say, and the package's
        // current default channel as their default.
        let mut members: Vec<(usize, BTreeSet<String>)> = Vec::new();
        for (i, existing) in self.bundles.iter().enumerate() {
            if existing.name == b.name {
                continue;
            }
            let chans: BTreeSet<String> = state
                .channels
                .iter()
                .filter(|(_, rows)| rows.iter().any(|r| r.name == existing.name))
                .map(|(c, _)| c.clone())
                .collect();
            if !chans.is_empty() {
                members.push((i, chans));
            }
        }
        let mut inputs: Vec<(&ModeBundle, Vec<String>, String)> = members
            .iter()
            .map(|(i, chans)| {
                (
                    &self.bundles[*i],
                    chans.iter().cloned().collect(),
                    state.default_channel.clone(),
                )
            })
            .collect();
        inputs.push((
            b,
            b.channels.clone(),
            b.default_channel.clone().unwrap_or_default(),
        ));
        let (heads, default_channel) = semver_package_manifest(&inputs)?;

        let mut new_state = PkgState {
            default_channel,
            channels: BTreeMap::new(),
            heads: heads.clone(),
        };
        for (channel, head) in &heads {
            let rows = self.walk_replaces(head)?;
            new_state.channels.insert(channel.clone(), rows);
        }
        // checkForBundles: the added bundle must be in each of its channels.
        for c in &b.channels {
            let present = new_state
                .channels
                .get(c)
                .is_some_and(|rows| rows.iter().any(|r| r.name == b.name));
            if !present {
                let head = heads.get(c).cloned().unwrap_or_default();
                return Err(format!(
                    "added bundle {} pruned from package {}, channel {}: this may be due to incorrect channel head ({})",
                    b.name, b.package, c, head
                ));
            }
        }
        self.packages.insert(b.package.clone(), new_state);
        Ok(())
    }

    /// `addPackageChannels` for one channel: the head, its replaces chain,
    /// and a skipped row plus a synthetic replacing row for every skip.
    fn walk_replaces(&self, head: &str) -> Result<Vec<Row>, String> {
        let mut rows = vec![Row {
            name: head.to_string(),
            depth: 0,
            replaces: None,
        }];
        let mut current_id = 0usize;
        let mut current = head.to_string();
        let mut depth = 1u32;
        let mut seen: HashSet<String> = HashSet::from([head.to_string()]);
        loop {
            let Some(bundle) = self.bundle(&current) else {
                return Err(format!("no bundle found for bundlename {current}"));
            };
            for skip in bundle.skips.iter().filter(|s| !s.is_empty()) {
                rows.push(Row {
                    name: skip.clone(),
                    depth,
                    replaces: None,
                });
                rows.push(Row {
                    name: current.clone(),
                    depth,
                    replaces: Some(rows.len() - 1),
                });
                depth += 1;
            }
            if bundle.replaces.is_empty() {
                return Ok(rows);
            }
            let replaces = bundle.replaces.clone();
            rows.push(Row {
                name: replaces.clone(),
                depth,
                replaces: None,
            });
            if !seen.insert(replaces.clone()) {
                return Err(format!("Cycle detected, {current} replaces {replaces}"));
            }
            let replaced_id = rows.len() - 1;
            rows[current_id].replaces = Some(replaced_id);
            if self.bundle(&replaces).is_none() {
                return Err(format!(
                    "{head} specifies replacement that couldn't be found ({current} replaces {replaces}, which is not in the index)"
                ));
            }
            current_id = replaced_id;
            current = replaces;
            depth += 1;
        }
    }

    /// `opm index add --mode semver|semver-skippatch` of one bundle.
    fn add_semver(&mut self, b: &ModeBundle, skippatch: bool) -> Result<(), String> {
        let mut graph = match self.packages.get(&b.package) {
            Some(state) => self.generate(state)?,
            None => Graph::default(),
        };
        self.add_bundle_to_graph(b, &mut graph, skippatch)?;
        self.insert_bundle(b)?;
        let state = write_graph(&graph)?;
        self.packages.insert(b.package.clone(), state);
        Ok(())
    }

    /// `SQLGraphLoader.Generate`: the graph read back from the rows.
    fn generate(&self, state: &PkgState) -> Result<Graph, String> {
        let mut graph = Graph {
            default_channel: state.default_channel.clone(),
            channels: BTreeMap::new(),
        };
        for (name, rows) in &state.channels {
            let mut nodes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for r in rows {
                nodes.entry(r.name.clone()).or_default();
            }
            let mut candidates: BTreeSet<String> = nodes.keys().cloned().collect();
            for r in rows {
                if let Some(t) = r.replaces {
                    let target = rows[t].name.clone();
                    candidates.remove(&target);
                    nodes.entry(r.name.clone()).or_default().insert(target);
                }
            }
            let head = match candidates.len() {
                0 => return Err(format!("no channel head found for {name}")),
                1 => candidates.into_iter().next().unwrap_or_default(),
                _ => {
                    return Err(format!(
                        "multiple candidate channel heads found for {name}: {}",
                        candidates.into_iter().collect::<Vec<_>>().join(", ")
                    ))
                }
            };
            graph
                .channels
                .insert(name.clone(), SemverChannel { head, nodes });
        }
        Ok(graph)
    }

    fn version_of(&self, name: &str) -> Result<Version, String> {
        self.bundle(name).map(|b| b.version.clone()).ok_or_else(|| {
            format!("Unable to parse existing bundle version stored in index {name}")
        })
    }

    /// `BundleGraphLoader.AddBundleToGraph`.
    fn add_bundle_to_graph(
        &self,
        b: &ModeBundle,
        graph: &mut Graph,
        skippatch: bool,
    ) -> Result<(), String> {
        if let Some(d) = b.default_channel.as_deref().filter(|d| !d.is_empty()) {
            graph.default_channel = d.to_string();
        }
        if graph.default_channel.is_empty() {
            // AnnotationsFile.SelectDefaultChannel: the only channel, if one.
            if b.channels.len() == 1 {
                graph.default_channel = b.channels[0].clone();
            } else {
                return Err("Default channel is missing and can't be inferred".into());
            }
        }
        for channel in &b.channels {
            let Some(ch) = graph.channels.get_mut(channel) else {
                let mut nodes = BTreeMap::new();
                nodes.insert(b.name.clone(), BTreeSet::new());
                graph.channels.insert(
                    channel.clone(),
                    SemverChannel {
                        head: b.name.clone(),
                        nodes,
                    },
                );
                continue;
            };
            let mut replaces: BTreeSet<String> = BTreeSet::new();
            let mut lowest_ahead: Option<(String, Version)> = None;
            let mut greatest_behind: Option<(String, Version)> = None;
            let mut candidates = Vec::new();
            for node in ch.nodes.keys() {
                let nv = self.version_of(node)?;
                match nv.cmp_precedence(&b.version) {
                    Ordering::Equal => {
                        return Err(format!(
                            "Bundle version {} already added to index",
                            b.version
                        ))
                    }
                    Ordering::Greater => {
                        if lowest_ahead
                            .as_ref()
                            .is_none_or(|(_, v)| nv.cmp_precedence(v) == Ordering::Less)
                        {
                            lowest_ahead = Some((node.clone(), nv.clone()));
                        }
                    }
                    Ordering::Less => {
                        if greatest_behind
                            .as_ref()
                            .is_none_or(|(_, v)| nv.cmp_precedence(v) == Ordering::Greater)
                        {
                            greatest_behind = Some((node.clone(), nv.clone()));
                        }
                    }
                }
                if skippatch
                    && nv.major == b.version.major
                    && nv.minor == b.version.minor
                    && b.version.cmp_precedence(&nv) == Ordering::Greater
                {
                    candidates.push(node.clone());
                    replaces.insert(node.clone());
                }
            }
            if let Some((g, _)) = greatest_behind {
                replaces.insert(g);
            }
            match lowest_ahead {
                Some((l, _)) => {
                    ch.nodes.insert(l, BTreeSet::from([b.name.clone()]));
                }
                None => ch.head = b.name.clone(),
            }
            for c in candidates {
                if let Some(prev) = ch.nodes.remove(&c) {
                    replaces.extend(prev);
                }
            }
            ch.nodes.insert(b.name.clone(), replaces);
        }
        Ok(())
    }

    fn outcome(&self) -> BTreeMap<String, PackageOutcome> {
        let mut out = BTreeMap::new();
        for (pkg, state) in &self.packages {
            let mut po = PackageOutcome {
                default_channel: state.default_channel.clone(),
                channels: BTreeMap::new(),
            };
            for (name, rows) in &state.channels {
                po.channels.insert(
                    name.clone(),
                    ChannelOutcome {
                        head: state.heads.get(name).cloned().unwrap_or_default(),
                        entries: self.list_bundles_view(rows),
                    },
                );
            }
            out.insert(pkg.clone(), po);
        }
        out
    }

    /// What `ListBundles` (and so `opm render`) makes of a channel's rows:
    /// `replaces` along the chain from the tip rows, `skips` from every
    /// other row that replaces one, and only names that are bundles.
    fn list_bundles_view(&self, rows: &[Row]) -> Vec<ChannelEntry> {
        let tip = rows.iter().map(|r| r.depth).min().unwrap_or(0);
        let mut on_chain = vec![false; rows.len()];
        let mut stack: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].depth == tip).collect();
        while let Some(i) = stack.pop() {
            if on_chain[i] {
                continue;
            }
            on_chain[i] = true;
            if let Some(t) = rows[i].replaces {
                stack.push(t);
            }
        }
        let mut entries: BTreeMap<String, ChannelEntry> = BTreeMap::new();
        for (i, r) in rows.iter().enumerate() {
            let Some(bundle) = self.bundle(&r.name) else {
                continue;
            };
            let e = entries
                .entry(r.name.clone())
                .or_insert_with(|| ChannelEntry {
                    name: r.name.clone(),
                    replaces: String::new(),
                    skips: Vec::new(),
                    skip_range: bundle.skip_range.clone(),
                });
            if let Some(t) = r.replaces {
                let target = &rows[t].name;
                if on_chain[i] {
                    if *target > e.replaces {
                        e.replaces = target.clone();
                    }
                } else {
                    e.skips.push(target.clone());
                }
            }
        }
        entries.into_values().collect()
    }
}

#[derive(Clone, Debug, Default)]
struct SemverChannel {
    head: String,
    /// Node → the nodes it replaces.
    nodes: BTreeMap<String, BTreeSet<String>>,
}

#[derive(Clone, Debug, Default)]
struct Graph {
    default_channel: String,
    channels: BTreeMap<String, SemverChannel>,
}

/// `AddPackageChannelsFromGraph`: rows for each channel, walking from the
/// head; replaced nodes no longer in the graph become synthetic rows.
fn write_graph(graph: &Graph) -> Result<PkgState, String> {
    let mut state = PkgState {
        default_channel: graph.default_channel.clone(),
        channels: BTreeMap::new(),
        heads: BTreeMap::new(),
    };
    for (name, ch) in &graph.channels {
        let mut rows: Vec<Row> = Vec::new();
        let mut current = ch.head.clone();
        let mut depth = 1u32;
        let mut previous: Option<usize> = None;
        let mut visited = HashSet::new();
        loop {
            rows.push(Row {
                name: current.clone(),
                depth,
                replaces: None,
            });
            let id = rows.len() - 1;
            if let Some(p) = previous {
                rows[p].replaces = Some(id);
            }
            if !visited.insert(current.clone()) {
                return Err(format!(
                    "Invalid graph: cycle through {current} in channel {name}"
                ));
            }
            let empty = BTreeSet::new();
            let replaced = ch.nodes.get(&current).unwrap_or(&empty);
            // Of the replaced nodes still in the graph, follow the highest
            // version (the last in name order stands in for Go's map order).
            let next = replaced
                .iter()
                .rfind(|r| ch.nodes.contains_key(*r))
                .cloned();
            let synthetic = replaced.iter().filter(|r| !ch.nodes.contains_key(*r));
            for (synthetic_depth, s) in (depth + 1..).zip(synthetic) {
                rows.push(Row {
                    name: s.clone(),
                    depth: synthetic_depth,
                    replaces: None,
                });
                rows.push(Row {
                    name: current.clone(),
                    depth: synthetic_depth,
                    replaces: Some(rows.len() - 1),
                });
            }
            match next {
                Some(n) => {
                    current = n;
                    previous = Some(id);
                    depth += 1;
                }
                None => {
                    if ch.nodes.len() != depth as usize {
                        return Err("Invalid graph: some (non-bottom) nodes defined in the graph were not mentioned as replacements of any node".into());
                    }
                    break;
                }
            }
        }
        state.heads.insert(name.clone(), ch.head.clone());
        state.channels.insert(name.clone(), rows);
    }
    Ok(state)
}

/// `SemverPackageManifest`: channel heads (highest version per channel) and
/// the default channel, from `(bundle, channels, default annotation)` in
/// table order. The index's replaces-mode batch add uses it directly, as
/// opm's `loadManifestsReplaces` does.
pub fn semver_package_manifest(
    inputs: &[(&ModeBundle, Vec<String>, String)],
) -> Result<(BTreeMap<String, String>, String), String> {
    struct Best {
        name: String,
        version: Version,
        count: usize,
    }
    let mut heads: BTreeMap<String, Best> = BTreeMap::new();
    let mut max: Option<Best> = None;
    let mut default_channel = String::new();
    for (b, channels, default) in inputs {
        for c in channels {
            match heads.get_mut(c) {
                None => {
                    heads.insert(
                        c.clone(),
                        Best {
                            name: b.name.clone(),
                            version: b.version.clone(),
                            count: 1,
                        },
                    );
                }
                Some(head) => {
                    match build_id_compare(&b.version, &head.version).map_err(|e| e.to_string())? {
                        Ordering::Less => {}
                        Ordering::Equal => {
                            let count = head.count + 1;
                            *head = Best {
                                name: b.name.clone(),
                                version: b.version.clone(),
                                count,
                            };
                        }
                        Ordering::Greater => {
                            *head = Best {
                                name: b.name.clone(),
                                version: b.version.clone(),
                                count: 1,
                            };
                        }
                    }
                }
            }
        }
        // The zero Version opm starts from sorts below every real version.
        let c = match &max {
            None => Ordering::Greater,
            Some(m) => build_id_compare(&b.version, &m.version).map_err(|e| e.to_string())?,
        };
        if c == Ordering::Less {
            continue;
        }
        let count = if c == Ordering::Equal {
            max.as_ref().map_or(1, |m| m.count + 1)
        } else {
            1
        };
        max = Some(Best {
            name: b.name.clone(),
            version: b.version.clone(),
            count,
        });
        if !default.is_empty() {
            default_channel = default.clone();
        }
    }
    if let Some(m) = &max {
        if m.count > 1 {
            return Err(format!(
                "more than one bundle with maximum version {}",
                m.version
            ));
        }
    }
    let mut default_found = heads.len() == 1 && default_channel.is_empty();
    let mut out = BTreeMap::new();
    for (channel, head) in &heads {
        if head.count > 1 {
            return Err(format!(
                "more than one potential channel head for {channel}"
            ));
        }
        if heads.len() == 1 {
            default_channel = channel.clone();
        }
        default_found = default_found || *channel == default_channel;
        out.insert(channel.clone(), head.name.clone());
    }
    if !default_found {
        return Err(format!(
            "unable to determine default channel among channel heads: {}",
            out.iter()
                .map(|(c, h)| format!("{c}={h}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok((out, default_channel))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mb(name: &str, version: &str, channels: &[&str]) -> ModeBundle {
        ModeBundle {
            name: name.into(),
            package: "p".into(),
            version: Version::parse(version).expect("version"),
            channels: channels.iter().map(|c| c.to_string()).collect(),
            default_channel: None,
            replaces: String::new(),
            skips: Vec::new(),
            skip_range: String::new(),
        }
    }

    fn e(name: &str, replaces: &str, skips: &[&str]) -> ChannelEntry {
        ChannelEntry {
            name: name.into(),
            replaces: replaces.into(),
            skips: skips.iter().map(|s| s.to_string()).collect(),
            skip_range: String::new(),
        }
    }

    #[test]
    fn replaces_mode_follows_csv_fields() {
        let a = mb("p.v1.0.0", "1.0.0", &["stable"]);
        let mut b = mb("p.v1.1.0", "1.1.0", &["stable"]);
        b.replaces = "p.v1.0.0".into();
        let mut c = mb("p.v1.2.0", "1.2.0", &["stable"]);
        c.replaces = "p.v1.1.0".into();
        c.skips = vec!["p.v1.1.0".into(), "p.v0.9.0".into()];
        let out = channel_entries(Mode::Replaces, &[a, b, c]).expect("ok");
        // A bundle both replaced and skipped keeps its own replaces; a
        // skipped name that is no bundle vanishes.
        assert_eq!(
            out["stable"],
            vec![
                e("p.v1.0.0", "", &[]),
                e("p.v1.1.0", "p.v1.0.0", &[]),
                e("p.v1.2.0", "p.v1.1.0", &["p.v1.1.0", "p.v0.9.0"]),
            ]
        );
    }

    #[test]
    fn replaces_mode_skipped_only_bundle_has_no_edges() {
        let a = mb("p.v1.0.0", "1.0.0", &["stable"]);
        let mut b = mb("p.v1.1.0", "1.1.0", &["stable"]);
        b.replaces = "p.v1.0.0".into();
        let mut c = mb("p.v1.2.0", "1.2.0", &["stable"]);
        c.skips = vec!["p.v1.1.0".into()];
        let out = build(Mode::Replaces, &[a.clone(), b.clone(), c]).expect("ok");
        let ch = &out["p"].channels["stable"];
        assert_eq!(ch.head, "p.v1.2.0");
        // 1.0.0 is pruned: 1.1.0 is only skipped, so its replaces is not walked.
        assert_eq!(
            ch.entries,
            vec![e("p.v1.1.0", "", &[]), e("p.v1.2.0", "", &["p.v1.1.0"])]
        );
    }

    #[test]
    fn replaces_mode_refusals() {
        let mut b = mb("p.v1.1.0", "1.1.0", &["stable"]);
        b.replaces = "p.v1.0.0".into();
        let err = channel_entries(Mode::Replaces, &[b]).expect_err("missing replacement");
        assert_eq!(err.bundle, "p.v1.1.0");
        assert!(err.message.contains("couldn't be found"), "{err}");

        let a = mb("p.v2.0.0", "2.0.0", &["stable"]);
        let low = mb("p.v1.0.0", "1.0.0", &["stable"]);
        let err = channel_entries(Mode::Replaces, &[a, low]).expect_err("pruned");
        assert!(err.message.contains("pruned from package p"), "{err}");

        let x = mb("p.v1.0.0", "1.0.0", &["a"]);
        let y = mb("p.v1.0.1", "1.0.0+1", &["b"]);
        // Build metadata breaks the tie like a pre-release: 1.0.0+1 is higher.
        let mut y2 = y.clone();
        y2.default_channel = Some("b".into());
        let out = build(Mode::Replaces, &[x.clone(), y2]).expect("ok");
        assert_eq!(out["p"].default_channel, "b");
        // Existing bundles carry the package's default channel, so a later
        // bundle without a default annotation keeps it.
        let out = build(Mode::Replaces, &[x, y]).expect("keeps default");
        assert_eq!(out["p"].default_channel, "a");
        let two = mb("q.v1", "1.0.0", &["a", "b"]);
        let err = build(Mode::Replaces, &[two]).expect_err("no default");
        assert!(
            err.message.contains("unable to determine default channel"),
            "{err}"
        );
    }

    #[test]
    fn semver_mode_orders_by_version_whatever_the_add_order() {
        let bundles = [
            mb("p.v1.1.0", "1.1.0", &["stable"]),
            mb("p.v1.0.0", "1.0.0", &["stable"]),
            mb("p.v1.0.1", "1.0.1", &["stable"]),
            mb("p.v2.0.0-rc.1", "2.0.0-rc.1", &["stable"]),
        ];
        let out = build(Mode::Semver, &bundles).expect("ok");
        let ch = &out["p"].channels["stable"];
        assert_eq!(ch.head, "p.v2.0.0-rc.1");
        assert_eq!(
            ch.entries,
            vec![
                e("p.v1.0.0", "", &[]),
                e("p.v1.0.1", "p.v1.0.0", &[]),
                e("p.v1.1.0", "p.v1.0.1", &[]),
                e("p.v2.0.0-rc.1", "p.v1.1.0", &[]),
            ]
        );
        assert_eq!(out["p"].default_channel, "stable");
    }

    #[test]
    fn semver_mode_refuses_same_version_and_missing_default() {
        let err = channel_entries(
            Mode::Semver,
            &[
                mb("p.v1.0.0", "1.0.0", &["stable"]),
                mb("p.v1.0.0-b", "1.0.0+b", &["stable"]),
            ],
        )
        .expect_err("dup");
        assert!(err.message.contains("already added"), "{err}");
        let err = channel_entries(Mode::Semver, &[mb("p.v1", "1.0.0", &["a", "b"])])
            .expect_err("default");
        assert!(err.message.contains("can't be inferred"), "{err}");
    }

    #[test]
    fn skippatch_mode_skips_lower_patches() {
        let bundles = [
            mb("p.v1.0.0", "1.0.0", &["stable"]),
            mb("p.v1.0.1", "1.0.1", &["stable"]),
            mb("p.v1.0.2", "1.0.2", &["stable"]),
        ];
        let out = channel_entries(Mode::SemverSkipPatch, &bundles).expect("ok");
        assert_eq!(
            out["stable"],
            vec![
                e("p.v1.0.0", "", &[]),
                e("p.v1.0.1", "", &[]),
                e("p.v1.0.2", "", &["p.v1.0.0", "p.v1.0.1"]),
            ]
        );
        // A new minor after two patches: opm reads the skipped patches back
        // as nodes and then cannot walk them all.
        let mut more = bundles.to_vec();
        more.push(mb("p.v1.1.0", "1.1.0", &["stable"]));
        let err = channel_entries(Mode::SemverSkipPatch, &more).expect_err("invalid graph");
        assert!(err.message.starts_with("Invalid graph"), "{err}");
        // One patch, then a minor: fine.
        let ok = [
            mb("p.v1.0.0", "1.0.0", &["stable"]),
            mb("p.v1.0.1", "1.0.1", &["stable"]),
            mb("p.v1.1.0", "1.1.0", &["stable"]),
        ];
        let out = channel_entries(Mode::SemverSkipPatch, &ok).expect("ok");
        assert_eq!(out["stable"][2], e("p.v1.1.0", "p.v1.0.1", &[]));
    }
}
