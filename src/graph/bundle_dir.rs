//! The bundle directories of a package directory, read for the graph:
//! only what the graph needs of each (name, version, edges, channels).
//! Below both `load` (package directories, `ci.yaml`, templates) and
//! `template` (which resolves a template's images to these directories).

// Unreadable bundles become Findings, which is what callers report.
#![allow(clippy::result_large_err)]

use std::path::{Path, PathBuf};

use semver::Version;

use super::modes::ModeBundle;
use super::{BundleInfo, Entry, Error};
use crate::bundle::csv::CSV_GRAPH_KEYS;
use crate::bundle::Bundle;
use crate::diag::{Finding, Location};
use crate::path;
use crate::yaml::prune;

/// A bundle directory read for the graph.
#[derive(Clone, Debug)]
pub struct LoadedBundle {
    /// The bundle directory.
    pub dir: PathBuf,
    /// Graph facts: name, version, where.
    pub info: BundleInfo,
    /// What opm's add modes read.
    pub mode_bundle: ModeBundle,
    /// The CSV's entry with locations.
    pub entry: Entry,
    /// Where the default channel annotation is.
    pub default_channel_location: Option<Location>,
}

/// The bundle directories of a package directory: each version directory
/// that holds `manifests/` or `metadata/`, or else its one subdirectory
/// that does (some packages keep the bundle in `<version>/bundle/`).
pub fn bundle_dirs(pkg_dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let is_bundle = |d: &Path| d.join("manifests").is_dir() || d.join("metadata").is_dir();
    let mut out = Vec::new();
    let entries = std::fs::read_dir(pkg_dir).map_err(|e| Error::io(pkg_dir, e))?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for d in dirs {
        if d.file_name().is_some_and(|n| n == "catalog-templates") {
            continue;
        }
        if is_bundle(&d) {
            out.push(d);
            continue;
        }
        let mut subs: Vec<PathBuf> = std::fs::read_dir(&d)
            .map_err(|e| Error::io(&d, e))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| is_bundle(p))
            .collect();
        subs.sort();
        if let Some(first) = subs.into_iter().next() {
            out.push(first);
        }
    }
    Ok(out)
}

/// Reads one bundle directory. Err when it has no usable CSV.
///
/// Only what the graph needs is parsed: `metadata/` and the manifests that
/// mention `ClusterServiceVersion` (CRDs, often megabytes, are skipped), so
/// checking a whole catalog stays fast.
pub fn load_bundle(dir: &Path) -> Result<LoadedBundle, Finding> {
    let unreadable =
        |e: String| Finding::error("graph-bundle-unreadable", e).at(Location::file(dir));
    if !dir.is_dir() {
        return Err(unreadable(format!(
            "{}: not a bundle directory",
            dir.display()
        )));
    }
    // (path in the bundle, whole text, text pruned to the graph's keys)
    let mut read: Vec<(String, Vec<u8>, Option<String>)> = Vec::new();
    // CRDs are most of a bundle's bytes; a SIMD substring search skips them.
    let csv_finder = memchr::memmem::Finder::new(b"ClusterServiceVersion");
    for sub in ["manifests", "metadata"] {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        // Regular files by their directory entry (no stat); a symbolic
        // link counts when it leads to a file.
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| match e.file_type() {
                Ok(t) if t.is_file() => true,
                Ok(t) if t.is_symlink() => e.path().is_file(),
                _ => false,
            })
            .map(|e| e.path())
            .collect();
        paths.sort();
        for p in paths {
            let bytes =
                std::fs::read(&p).map_err(|e| unreadable(format!("{}: {e}", p.display())))?;
            if sub == "manifests" && csv_finder.find(&bytes).is_none() {
                continue;
            }
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            // Most of a CSV is text the graph does not read (install strategy,
            // alm-examples); scanning it was most of the time spent here.
            let pruned = (sub == "manifests")
                .then(|| std::str::from_utf8(&bytes).ok())
                .flatten()
                .and_then(|text| prune(text, CSV_GRAPH_KEYS));
            read.push((format!("{sub}/{name}"), bytes, pruned));
        }
    }
    if read.iter().any(|(_, _, pruned)| pruned.is_some()) {
        let files = read
            .iter_mut()
            .map(|(rel_path, bytes, pruned)| crate::bundle::RawFile {
                rel_path: rel_path.clone(),
                content: Ok(match pruned.take() {
                    Some(text) => text.into_bytes(),
                    None => bytes.clone(),
                }),
            })
            .collect();
        let bundle = Bundle::from_files(dir, files);
        // Anything amiss (a pruned text that does not parse, a duplicate key)
        // is judged on the whole texts, so the findings are exactly those of
        // an unpruned load.
        if bundle.load_findings.is_empty() && bundle.csv_manifest().is_some() {
            return from_bundle(&bundle);
        }
    }
    let files = read
        .into_iter()
        .map(|(rel_path, bytes, _)| crate::bundle::RawFile {
            rel_path,
            content: Ok(bytes),
        })
        .collect();
    from_bundle(&Bundle::from_files(dir, files))
}

/// Graph facts of a loaded bundle.
pub fn from_bundle(bundle: &Bundle) -> Result<LoadedBundle, Finding> {
    let dir = &bundle.dir;
    let Some(m) = bundle.csv_manifest() else {
        // A CSV that does not parse is the likely reason: say where.
        if let Some(f) = bundle
            .load_findings
            .iter()
            .find(|f| f.level == crate::diag::Level::Error)
        {
            let mut out = Finding::error(
                "graph-bundle-unreadable",
                format!(
                    "the bundle has no ClusterServiceVersion it can read: {}",
                    f.message
                ),
            );
            out.location = f.location.clone();
            out.hint = f.hint.clone();
            return Err(out);
        }
        return Err(Finding::error(
            "graph-bundle-unreadable",
            "the bundle has no ClusterServiceVersion, so it has no place in the graph",
        )
        .at(Location::file(dir.join("manifests"))));
    };
    let csv = match crate::bundle::csv::CsvGraphView::from_node(&m.root) {
        Ok(c) => c,
        Err(e) => {
            return Err(Finding::error(
                "graph-bundle-unreadable",
                format!("the ClusterServiceVersion does not decode: {e}"),
            )
            .at(m.location(&e.segments())))
        }
    };
    let name = csv.metadata.name().to_string();
    let raw_version = csv.spec.version.clone().unwrap_or_default();
    let version = Version::parse(&raw_version).ok();
    let channels = bundle.channels();
    let package = bundle.package().unwrap_or("").to_string();
    let skip_range = csv.metadata.skip_range().unwrap_or("").to_string();
    let replaces = csv.spec.replaces.clone().unwrap_or_default();
    let loc = Some(m.location(&[]));
    let entry = Entry {
        name: name.clone(),
        replaces: replaces.clone(),
        skips: csv.spec.skips.clone(),
        skip_range: skip_range.clone(),
        replaces_location: Some(m.location(&path!["spec", "replaces"])),
        skips_locations: (0..csv.spec.skips.len())
            .map(|i| m.location(&path!["spec", "skips", i]))
            .collect(),
        skip_range_location: Some(m.location(&path!["metadata", "annotations", "olm.skipRange"])),
        location: Some(m.key_location(&path!["metadata", "name"])),
    };
    let info = BundleInfo {
        name: name.clone(),
        raw_version: raw_version.clone(),
        version: version.clone(),
        substitutes_for: csv
            .metadata
            .annotation("olm.substitutesFor")
            .unwrap_or("")
            .to_string(),
        image: String::new(),
        location: loc,
        version_location: Some(m.location(&path!["spec", "version"])),
    };
    let mode_bundle = ModeBundle {
        name,
        package,
        // opm gives a bundle without a version the dummy `0.0.0-z`.
        version: version
            .unwrap_or_else(|| Version::parse("0.0.0-z").unwrap_or_else(|_| Version::new(0, 0, 0))),
        channels,
        default_channel: bundle
            .default_channel()
            .filter(|d| !d.is_empty())
            .map(String::from),
        replaces,
        skips: csv.spec.skips.clone(),
        skip_range,
    };
    Ok(LoadedBundle {
        dir: dir.clone(),
        info,
        mode_bundle,
        entry,
        default_channel_location: bundle
            .annotations
            .as_ref()
            .and_then(|a| a.location(crate::bundle::keys::DEFAULT_CHANNEL)),
    })
}

/// Reads every bundle of a package directory, in version order (the order
/// the community pipeline adds them). Bundles that cannot be read become
/// findings.
pub fn load_bundles(pkg_dir: &Path) -> Result<(Vec<LoadedBundle>, Vec<Finding>), Error> {
    let dirs = bundle_dirs(pkg_dir)?;
    let results: Vec<Result<LoadedBundle, Finding>> = {
        use rayon::prelude::*;
        dirs.par_iter().map(|d| load_bundle(d)).collect()
    };
    let mut bundles = Vec::new();
    let mut findings = Vec::new();
    for r in results {
        match r {
            Ok(b) => bundles.push(b),
            Err(f) => findings.push(f),
        }
    }
    sort_by_version(&mut bundles);
    Ok((bundles, findings))
}

/// Sorts bundles by version (opm's build-id aware order), then name.
pub fn sort_by_version(bundles: &mut [LoadedBundle]) {
    bundles.sort_by(|a, b| {
        a.mode_bundle
            .version
            .cmp_precedence(&b.mode_bundle.version)
            .then_with(|| {
                a.mode_bundle
                    .version
                    .build
                    .cmp(&b.mode_bundle.version.build)
            })
            .then_with(|| a.info.name.cmp(&b.info.name))
    });
}
