//! opm's add modes (`opm index add --mode`): how a package's channels are
//! wired from its bundles.
//!
//! - `replaces`: the CSV's `spec.replaces` and `spec.skips` are the edges.
//! - `semver`: in each channel, every bundle replaces the next lower version
//!   in that channel (pkg/registry/bundlegraphloader.go); the CSV's skips and
//!   skipRange are kept.
//! - `semver-skippatch`: like `semver`, and a bundle also skips the lower
//!   patch releases of its own major.minor, so upgrades jump straight to the
//!   newest patch.

use std::collections::BTreeMap;

use crate::fbc::ChannelEntry;

/// An add mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Edges from `spec.replaces` / `spec.skips`.
    Replaces,
    /// Edges by semantic version order within each channel.
    Semver,
    /// Semver order, and newer patches skip older patches of the same minor.
    #[value(name = "semver-skippatch")]
    SemverSkipPatch,
}

/// A bundle as the modes see it.
#[derive(Clone, Debug)]
pub struct ModeBundle {
    /// CSV name.
    pub name: String,
    /// Package.
    pub package: String,
    /// `spec.version`.
    pub version: semver::Version,
    /// Channels.
    pub channels: Vec<String>,
    /// Default channel annotation.
    pub default_channel: Option<String>,
    /// `spec.replaces`.
    pub replaces: String,
    /// `spec.skips`.
    pub skips: Vec<String>,
    /// `olm.skipRange`.
    pub skip_range: String,
}

/// Why entries could not be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeError {
    /// The bundle at fault.
    pub bundle: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ModeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bundle {}: {}", self.bundle, self.message)
    }
}

impl std::error::Error for ModeError {}

/// The entries of every channel of the given bundles (one package), by
/// channel name. Entries are in ascending version order.
pub fn channel_entries(
    mode: Mode,
    bundles: &[ModeBundle],
) -> Result<BTreeMap<String, Vec<ChannelEntry>>, ModeError> {
    let mut seen: BTreeMap<&str, &ModeBundle> = BTreeMap::new();
    for b in bundles {
        if let Some(prev) = seen.insert(&b.name, b) {
            if prev.version != b.version || prev.channels != b.channels {
                return Err(ModeError {
                    bundle: b.name.clone(),
                    message: "two different bundles have this name".into(),
                });
            }
        }
    }
    let mut by_channel: BTreeMap<String, Vec<&ModeBundle>> = BTreeMap::new();
    for b in seen.values() {
        for c in &b.channels {
            by_channel.entry(c.clone()).or_default().push(b);
        }
    }
    let mut out = BTreeMap::new();
    for (channel, mut members) in by_channel {
        members.sort_by(|a, b| a.version.cmp(&b.version).then(a.name.cmp(&b.name)));
        for w in members.windows(2) {
            if w[0].version == w[1].version && mode != Mode::Replaces {
                return Err(ModeError {
                    bundle: w[1].name.clone(),
                    message: format!(
                        "has the same version {} as {} in channel {channel}; semver modes need distinct versions",
                        w[1].version, w[0].name
                    ),
                });
            }
        }
        let mut entries = Vec::with_capacity(members.len());
        for (i, b) in members.iter().enumerate() {
            let mut entry = ChannelEntry {
                name: b.name.clone(),
                replaces: String::new(),
                skips: b.skips.clone(),
                skip_range: b.skip_range.clone(),
            };
            match mode {
                Mode::Replaces => entry.replaces = b.replaces.clone(),
                Mode::Semver => {
                    if i > 0 {
                        entry.replaces = members[i - 1].name.clone();
                    }
                }
                Mode::SemverSkipPatch => {
                    if i > 0 {
                        entry.replaces = members[i - 1].name.clone();
                    }
                    for lower in &members[..i.saturating_sub(1)] {
                        if lower.version.major == b.version.major
                            && lower.version.minor == b.version.minor
                            && !entry.skips.contains(&lower.name)
                        {
                            entry.skips.push(lower.name.clone());
                        }
                    }
                }
            }
            entries.push(entry);
        }
        out.insert(channel, entries);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(name: &str, v: &str, ch: &[&str]) -> ModeBundle {
        ModeBundle {
            name: name.into(),
            package: "p".into(),
            version: semver::Version::parse(v).expect("version"),
            channels: ch.iter().map(|s| s.to_string()).collect(),
            default_channel: None,
            replaces: String::new(),
            skips: vec![],
            skip_range: String::new(),
        }
    }

    #[test]
    fn semver_orders_by_version_per_channel() {
        let bs = vec![
            b("p.v1.1.0", "1.1.0", &["stable"]),
            b("p.v1.0.0", "1.0.0", &["stable", "alpha"]),
            b("p.v1.0.1", "1.0.1", &["stable"]),
        ];
        let e = channel_entries(Mode::Semver, &bs).expect("entries");
        let stable: Vec<_> = e["stable"]
            .iter()
            .map(|e| (e.name.as_str(), e.replaces.as_str()))
            .collect();
        assert_eq!(
            stable,
            vec![
                ("p.v1.0.0", ""),
                ("p.v1.0.1", "p.v1.0.0"),
                ("p.v1.1.0", "p.v1.0.1")
            ]
        );
        assert_eq!(e["alpha"].len(), 1);
        let sp = channel_entries(
            Mode::SemverSkipPatch,
            &[
                b("p.v1.0.0", "1.0.0", &["s"]),
                b("p.v1.0.1", "1.0.1", &["s"]),
                b("p.v1.0.2", "1.0.2", &["s"]),
            ],
        )
        .expect("entries");
        assert_eq!(sp["s"][2].replaces, "p.v1.0.1");
        assert_eq!(sp["s"][2].skips, vec!["p.v1.0.0".to_string()]);
    }
}
