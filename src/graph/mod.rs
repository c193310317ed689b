//! Upgrade graphs: replaces, skips, `olm.skipRange`, opm's add modes and
//! catalog templates.
//!
//! One model, [`PackageGraph`], holds a package's channels and their entries
//! (`replaces`, `skips`, `skipRange`), its default channel, and what is known
//! of each bundle (version, `olm.substitutesFor`, where it is defined). It is
//! built from a file-based catalog ([`PackageGraph::from_fbc`]), from a
//! package directory of bundles under one of opm's add modes
//! ([`load::load_package_dir`]), or from a catalog template ([`template`]).
//! The graph semantics are OLM's:
//!
//! * an entry's upgrade edges are its `replaces`, each of its `skips`, and
//!   every version its `skipRange` admits ([`crate::semver_range`]);
//! * a channel's head is the one entry that no other entry replaces or
//!   skips (operator-registry `model.Channel.Head`);
//! * from an installed bundle OLM moves to the channel entry that replaces
//!   it, skips it, or whose skipRange admits its version, highest first
//!   ([`path`]).

mod bundle_dir;
pub mod check_html;
pub mod checks;
pub mod convert;
pub mod crd_safety;
mod crd_schema;
pub mod draw;
mod error;
pub mod load;
pub(crate) mod masterminds;
pub mod modes;
pub mod path;
pub mod render_bundle;
pub mod successors;
pub mod svg;
pub mod template;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use semver::Version;

use crate::diag::Location;
use crate::fbc::DeclarativeConfig;
use crate::fbc::{ObjectSource, Sources};

pub use error::Error;
pub use modes::Mode;

/// A bundle as the graph knows it.
#[derive(Clone, Debug, Default)]
pub struct BundleInfo {
    /// CSV name.
    pub name: String,
    /// Version as written (`spec.version` or the `olm.package` property).
    pub raw_version: String,
    /// The version, if it is semver.
    pub version: Option<Version>,
    /// `olm.substitutesFor` annotation (empty if none).
    pub substitutes_for: String,
    /// Bundle image, when known.
    pub image: String,
    /// Where the bundle is defined (its CSV, or the FBC file).
    pub location: Option<Location>,
    /// Where its version is written.
    pub version_location: Option<Location>,
}

/// One channel entry with where it is written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// Bundle (CSV) name.
    pub name: String,
    /// The bundle it replaces (empty if none).
    pub replaces: String,
    /// Bundles it skips.
    pub skips: Vec<String>,
    /// Range of versions it skips (empty if none).
    pub skip_range: String,
    /// Where `replaces` is written (or the entry, or its file).
    pub replaces_location: Option<Location>,
    /// Where each skip is written, parallel to `skips` (may be shorter).
    pub skips_locations: Vec<Location>,
    /// Where `skipRange` is written.
    pub skip_range_location: Option<Location>,
    /// Where the entry (or its bundle) is defined.
    pub location: Option<Location>,
}

impl Entry {
    /// An entry with no locations.
    pub fn new(name: &str, replaces: &str, skips: &[&str], skip_range: &str) -> Entry {
        Entry {
            name: name.into(),
            replaces: replaces.into(),
            skips: skips.iter().map(|s| s.to_string()).collect(),
            skip_range: skip_range.into(),
            ..Entry::default()
        }
    }

    /// The entry as an FBC channel entry.
    pub fn to_fbc(&self) -> crate::fbc::ChannelEntry {
        crate::fbc::ChannelEntry {
            name: self.name.clone(),
            replaces: self.replaces.clone(),
            skips: self.skips.clone(),
            skip_range: self.skip_range.clone(),
        }
    }
}

/// A channel.
#[derive(Clone, Debug, Default)]
pub struct Channel {
    /// Channel name.
    pub name: String,
    /// Entries, in the order they were given.
    pub entries: Vec<Entry>,
    /// Where the channel is defined.
    pub location: Option<Location>,
}

/// Why a channel has no single head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadError {
    /// Every entry is replaced or skipped by another (a cycle).
    NoHead,
    /// More than one entry is replaced or skipped by no other.
    Multiple(Vec<String>),
}

impl std::fmt::Display for HeadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeadError::NoHead => f.write_str("no channel head found in graph"),
            HeadError::Multiple(h) => {
                write!(f, "multiple channel heads found in graph: {}", h.join(", "))
            }
        }
    }
}

impl Channel {
    /// The entries that no other entry replaces or skips, in entry order,
    /// each name once (opm keys a channel's bundles by name; two entries of
    /// one name are a duplicate, reported as such, not two heads).
    pub fn heads(&self) -> Vec<&Entry> {
        let incoming = self.incoming();
        let mut seen = BTreeSet::new();
        self.entries
            .iter()
            .filter(|e| !incoming.contains(e.name.as_str()) && seen.insert(e.name.as_str()))
            .collect()
    }

    /// The channel head, as `model.Channel.Head` computes it.
    pub fn head(&self) -> Result<&Entry, HeadError> {
        let heads = self.heads();
        match heads.len() {
            0 => Err(HeadError::NoHead),
            1 => Ok(heads[0]),
            _ => Err(HeadError::Multiple(
                heads.iter().map(|e| e.name.clone()).collect(),
            )),
        }
    }

    /// Names that some entry replaces or skips.
    fn incoming(&self) -> BTreeSet<&str> {
        let mut incoming = BTreeSet::new();
        for e in &self.entries {
            if !e.replaces.is_empty() {
                incoming.insert(e.replaces.as_str());
            }
            for s in &e.skips {
                incoming.insert(s.as_str());
            }
        }
        incoming
    }

    /// The entry named `name`.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }
}

/// The kind of an upgrade edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EdgeKind {
    /// `replaces`.
    Replaces,
    /// `skips`.
    Skips,
    /// admitted by `skipRange`.
    SkipRange,
}

impl EdgeKind {
    /// `replaces`, `skips` or `skipRange`.
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Replaces => "replaces",
            EdgeKind::Skips => "skips",
            EdgeKind::SkipRange => "skipRange",
        }
    }
}

/// An upgrade edge: OLM may move from `from` (installed) to `to`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Edge {
    /// The bundle upgraded from.
    pub from: String,
    /// The bundle upgraded to (the entry declaring the edge).
    pub to: String,
    /// Why.
    pub kind: EdgeKind,
}

/// A package's upgrade graph.
#[derive(Clone, Debug, Default)]
pub struct PackageGraph {
    /// Package name.
    pub package: String,
    /// What it was built from (package directory, FBC path, template).
    pub source: PathBuf,
    /// The add mode used for bundle directories; `None` for FBC and templates.
    pub mode: Option<Mode>,
    /// Default channel (empty if none).
    pub default_channel: String,
    /// Where the default channel is set.
    pub default_channel_location: Option<Location>,
    /// Channels sorted by name.
    pub channels: Vec<Channel>,
    /// Bundles by name.
    pub bundles: BTreeMap<String, BundleInfo>,
    /// When built under an add mode: why opm would refuse the bundles.
    pub mode_error: Option<modes::ModeError>,
    /// Problems met while loading (unreadable bundles, bad versions).
    pub load_findings: Vec<crate::diag::Finding>,
    /// In `replaces` mode: (channel, bundle) pairs whose bundle annotations
    /// name the channel but that opm's walk from the channel head leaves out
    /// of it.
    pub pruned: Vec<(String, String)>,
    /// What the package's `olm.deprecations` object deprecates (FBC only).
    pub deprecated: Deprecated,
}

/// What an `olm.deprecations` object deprecates, as `opm alpha
/// render-graph` reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deprecated {
    /// The package itself.
    pub package: bool,
    /// Channels, by name.
    pub channels: BTreeSet<String>,
    /// Bundles, by name.
    pub bundles: BTreeSet<String>,
}

impl PackageGraph {
    /// The channel named `name`.
    pub fn channel(&self, name: &str) -> Option<&Channel> {
        self.channels.iter().find(|c| c.name == name)
    }

    /// The version of a bundle, if known and semver.
    pub fn version(&self, name: &str) -> Option<&Version> {
        self.bundles.get(name).and_then(|b| b.version.as_ref())
    }

    /// Upgrade edges of one channel: replaces, skips, and skipRange
    /// admissions of the channel's other entries. A skipRange that does not
    /// parse admits nothing.
    pub fn edges(&self, channel: &Channel) -> Vec<Edge> {
        let mut out = Vec::new();
        for e in &channel.entries {
            if !e.replaces.is_empty() {
                out.push(Edge {
                    from: e.replaces.clone(),
                    to: e.name.clone(),
                    kind: EdgeKind::Replaces,
                });
            }
            for s in &e.skips {
                out.push(Edge {
                    from: s.clone(),
                    to: e.name.clone(),
                    kind: EdgeKind::Skips,
                });
            }
            if let Ok(r) = crate::semver_range::Range::parse(&e.skip_range) {
                for other in &channel.entries {
                    if other.name == e.name {
                        continue;
                    }
                    if self.version(&other.name).is_some_and(|v| r.admits(v)) {
                        out.push(Edge {
                            from: other.name.clone(),
                            to: e.name.clone(),
                            kind: EdgeKind::SkipRange,
                        });
                    }
                }
            }
        }
        out
    }

    /// One graph per package of a file-based catalog. `source` names it in
    /// findings, which point at the file only; see
    /// [`PackageGraph::from_fbc_located`] for file and line.
    pub fn from_fbc(cfg: &DeclarativeConfig, source: &std::path::Path) -> Vec<PackageGraph> {
        Self::from_fbc_with(cfg, source, None)
    }

    /// [`PackageGraph::from_fbc`] for a catalog read with
    /// [`DeclarativeConfig::load_path_located`]: every entry, `replaces`,
    /// `skips` item, `skipRange`, default channel and bundle version carries
    /// its file, line and column.
    pub fn from_fbc_located(
        cfg: &DeclarativeConfig,
        source: &std::path::Path,
        sources: &Sources,
    ) -> Vec<PackageGraph> {
        Self::from_fbc_with(cfg, source, Some(sources))
    }

    fn from_fbc_with(
        cfg: &DeclarativeConfig,
        source: &std::path::Path,
        sources: Option<&Sources>,
    ) -> Vec<PackageGraph> {
        use crate::yaml::Seg;
        fn pkgs(s: &Sources) -> &Vec<ObjectSource> {
            &s.packages
        }
        fn chans(s: &Sources) -> &Vec<ObjectSource> {
            &s.channels
        }
        fn bunds(s: &Sources) -> &Vec<ObjectSource> {
            &s.bundles
        }
        let mut by_pkg: BTreeMap<String, PackageGraph> = BTreeMap::new();
        // The location of `path` in object `i` of `list`, else the file.
        let loc = |list: fn(&Sources) -> &Vec<ObjectSource>, i: usize, path: &[Seg]| {
            Some(
                sources
                    .and_then(|s| list(s).get(i).map(|o| s.location(o, path)))
                    .unwrap_or_else(|| Location::file(source)),
            )
        };
        let get = |m: &mut BTreeMap<String, PackageGraph>, name: &str| {
            m.entry(name.to_string()).or_insert_with(|| PackageGraph {
                package: name.to_string(),
                source: source.to_path_buf(),
                ..PackageGraph::default()
            });
        };
        for (pi, p) in cfg.packages.iter().enumerate() {
            get(&mut by_pkg, &p.name);
            if let Some(g) = by_pkg.get_mut(&p.name) {
                g.default_channel = p.default_channel.clone();
                g.default_channel_location = loc(pkgs, pi, &[Seg::from("defaultChannel")]);
            }
        }
        for (ci, c) in cfg.channels.iter().enumerate() {
            get(&mut by_pkg, &c.package);
            if let Some(g) = by_pkg.get_mut(&c.package) {
                g.channels.push(Channel {
                    name: c.name.clone(),
                    entries: c
                        .entries
                        .iter()
                        .enumerate()
                        .map(|(ei, e)| {
                            let at = |rest: &[Seg]| {
                                let mut p = vec![Seg::from("entries"), Seg::from(ei)];
                                p.extend_from_slice(rest);
                                loc(chans, ci, &p)
                            };
                            Entry {
                                name: e.name.clone(),
                                replaces: e.replaces.clone(),
                                skips: e.skips.clone(),
                                skip_range: e.skip_range.clone(),
                                location: at(&[Seg::from("name")]),
                                replaces_location: at(&[Seg::from("replaces")]),
                                skip_range_location: at(&[Seg::from("skipRange")]),
                                skips_locations: (0..e.skips.len())
                                    .filter_map(|si| at(&[Seg::from("skips"), Seg::from(si)]))
                                    .collect(),
                            }
                        })
                        .collect(),
                    location: loc(chans, ci, &[Seg::from("name")]),
                });
            }
        }
        for (bi, b) in cfg.bundles.iter().enumerate() {
            get(&mut by_pkg, &b.package);
            let pkg_prop = b.properties.iter().position(|p| p.kind == "olm.package");
            let raw_version = pkg_prop
                .map_or("", |i| b.properties[i].str_field("version"))
                .to_string();
            let substitutes_for = b
                .properties
                .iter()
                .find(|p| p.kind == "olm.substitutesFor")
                .and_then(|p| p.value.get("substitutesFor").or(Some(&p.value)))
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string();
            let version_location = match pkg_prop {
                Some(i) => loc(
                    bunds,
                    bi,
                    &[
                        Seg::from("properties"),
                        Seg::from(i),
                        Seg::from("value"),
                        Seg::from("version"),
                    ],
                ),
                None => loc(bunds, bi, &[Seg::from("name")]),
            };
            if let Some(g) = by_pkg.get_mut(&b.package) {
                g.bundles.insert(
                    b.name.clone(),
                    BundleInfo {
                        name: b.name.clone(),
                        version: Version::parse(&raw_version).ok(),
                        raw_version,
                        substitutes_for,
                        image: b.image.clone(),
                        location: loc(bunds, bi, &[Seg::from("name")]),
                        version_location,
                    },
                );
            }
        }
        for d in &cfg.deprecations {
            if let Some(g) = by_pkg.get_mut(&d.package) {
                for e in &d.entries {
                    match e.reference.schema.as_str() {
                        "olm.package" => g.deprecated.package = true,
                        "olm.channel" => {
                            g.deprecated.channels.insert(e.reference.name.clone());
                        }
                        "olm.bundle" => {
                            g.deprecated.bundles.insert(e.reference.name.clone());
                        }
                        _ => {}
                    }
                }
            }
        }
        let mut out: Vec<PackageGraph> = by_pkg.into_values().collect();
        for g in &mut out {
            g.channels.sort_by(|a, b| a.name.cmp(&b.name));
        }
        out
    }

    /// The graph as FBC channel entries, by channel.
    pub fn to_fbc_channels(&self) -> BTreeMap<String, Vec<crate::fbc::ChannelEntry>> {
        self.channels
            .iter()
            .map(|c| {
                (
                    c.name.clone(),
                    c.entries.iter().map(Entry::to_fbc).collect(),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_is_the_entry_nothing_replaces_or_skips() {
        let ch = Channel {
            name: "stable".into(),
            entries: vec![
                Entry::new("a.v1", "", &[], ""),
                Entry::new("a.v2", "a.v1", &[], ""),
                Entry::new("a.v3", "", &["a.v2"], ""),
            ],
            location: None,
        };
        assert_eq!(ch.head().expect("head").name, "a.v3");
        let two = Channel {
            name: "s".into(),
            entries: vec![Entry::new("a", "", &[], ""), Entry::new("b", "", &[], "")],
            location: None,
        };
        assert_eq!(
            two.head().expect_err("two heads"),
            HeadError::Multiple(vec!["a".into(), "b".into()])
        );
        let cyc = Channel {
            name: "s".into(),
            entries: vec![Entry::new("a", "b", &[], ""), Entry::new("b", "a", &[], "")],
            location: None,
        };
        assert_eq!(cyc.head().expect_err("cycle"), HeadError::NoHead);
    }
}
