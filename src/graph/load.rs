//! Building graphs from package directories: `operators/<pkg>/<version>/`
//! bundle directories and the package's `ci.yaml` (community-operators
//! layout), or a file-based catalog.

// Unreadable bundles become Findings, which is what callers report.
#![allow(clippy::result_large_err)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use super::bundle_dir::{
    bundle_dirs, from_bundle, load_bundle, load_bundles, sort_by_version, LoadedBundle,
};
use super::modes::{self, Mode, ModeBundle};
use super::{BundleInfo, Channel, Entry, Error, PackageGraph};
use crate::diag::{Finding, Location};

/// What the graph tooling reads from a package's `ci.yaml`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CiConfig {
    /// `updateGraph`: `replaces-mode` or `semver-mode` (or `semver-skippatch-mode`).
    pub update_graph: Option<Mode>,
    /// `fbc.enabled`.
    pub fbc_enabled: bool,
    /// `fbc.catalog_mapping`.
    pub catalog_mapping: Vec<CatalogMapping>,
}

/// One `fbc.catalog_mapping` item: which template renders which catalogs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CatalogMapping {
    /// `template_name`, a file of `catalog-templates/`.
    pub template_name: String,
    /// `catalog_names`, e.g. `v4.18`.
    pub catalog_names: Vec<String>,
    /// `type`, e.g. `olm.template.basic`.
    pub kind: String,
}

impl CiConfig {
    /// Reads `dir/ci.yaml`; `Ok(None)` when there is none.
    pub fn read(dir: &Path) -> Result<Option<CiConfig>, Error> {
        let path = dir.join("ci.yaml");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        let docs = crate::yaml::parse_documents(&text).map_err(|e| Error::yaml(&path, &e))?;
        let json = docs
            .first()
            .map(|d| d.root.to_json())
            .unwrap_or(serde_json::Value::Null);
        let mut ci = CiConfig::default();
        if let Some(u) = json.get("updateGraph").and_then(|v| v.as_str()) {
            ci.update_graph = Some(match u {
                "replaces-mode" => Mode::Replaces,
                "semver-mode" => Mode::Semver,
                "semver-skippatch-mode" => Mode::SemverSkipPatch,
                other => {
                    return Err(Error::Package {
                        path,
                        message: format!("updateGraph `{other}` is not replaces-mode, semver-mode or semver-skippatch-mode"),
                    })
                }
            });
        }
        if let Some(fbc) = json.get("fbc") {
            ci.fbc_enabled = fbc.get("enabled").and_then(|v| v.as_bool()) == Some(true);
            let mapping = fbc.get("catalog_mapping");
            let items: Vec<&serde_json::Value> = match mapping {
                Some(serde_json::Value::Array(a)) => a.iter().collect(),
                Some(obj @ serde_json::Value::Object(_)) => vec![obj],
                _ => Vec::new(),
            };
            for m in items {
                let s = |k: &str| m.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
                let names = m
                    .get("catalog_names")
                    .and_then(|v| v.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|n| n.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                ci.catalog_mapping.push(CatalogMapping {
                    template_name: s("template_name"),
                    catalog_names: names,
                    kind: s("type"),
                });
            }
        }
        Ok(Some(ci))
    }

    /// The template that renders catalog `catalog` (e.g. `v4.18`).
    pub fn template_for(&self, catalog: &str) -> Option<&CatalogMapping> {
        self.catalog_mapping
            .iter()
            .find(|m| m.catalog_names.iter().any(|c| c == catalog))
    }
}

/// Builds the graph of a package's bundles under `mode`.
///
/// The graph is what opm writes into its index after adding the bundles in
/// version order ([`modes::build`]): in `replaces` mode the channel heads'
/// `replaces` chains and skips from the CSVs, with the bundles that walk
/// leaves out listed in [`PackageGraph::pruned`]; in the semver modes the
/// edges opm computes from versions. If opm would refuse one of the
/// additions, [`PackageGraph::mode_error`] says why, and the graph is (in
/// `replaces` mode) what the CSVs declare, every bundle in each channel it
/// names, so checks see every edge, or (semver modes) the one before that
/// addition.
pub fn graph_from_bundles(source: &Path, bundles: &[LoadedBundle], mode: Mode) -> PackageGraph {
    let package = bundles
        .iter()
        .map(|b| b.mode_bundle.package.clone())
        .find(|p| !p.is_empty())
        .unwrap_or_else(|| {
            source
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
    let mut g = PackageGraph {
        package: package.clone(),
        source: source.to_path_buf(),
        mode: Some(mode),
        ..PackageGraph::default()
    };
    for b in bundles {
        g.bundles.insert(b.info.name.clone(), b.info.clone());
    }
    let mbs: Vec<ModeBundle> = bundles.iter().map(|b| b.mode_bundle.clone()).collect();
    let outcome = match modes::build(mode, &mbs) {
        Ok(o) => Some(o),
        Err(e) => {
            let idx = mbs.iter().position(|b| b.name == e.bundle).unwrap_or(0);
            g.mode_error = Some(e);
            modes::build(mode, &mbs[..idx]).ok()
        }
    };
    let by_name: BTreeMap<&str, &LoadedBundle> =
        bundles.iter().map(|b| (b.info.name.as_str(), b)).collect();
    let opm_channels = outcome.as_ref().and_then(|o| o.get(&package)).map(|pkg| {
        pkg.channels
            .iter()
            .map(|(name, ch)| Channel {
                name: name.clone(),
                entries: ch
                    .entries
                    .iter()
                    .map(|e| {
                        let csv = by_name.get(e.name.as_str()).map(|b| &b.entry);
                        // Point at the CSV's fields where opm kept them.
                        let same_replaces =
                            csv.is_some_and(|c| !e.replaces.is_empty() && c.replaces == e.replaces);
                        let same_skips = csv.is_some_and(|c| c.skips == e.skips);
                        Entry {
                            name: e.name.clone(),
                            replaces: e.replaces.clone(),
                            skips: e.skips.clone(),
                            skip_range: e.skip_range.clone(),
                            location: csv.and_then(|c| c.location.clone()),
                            skip_range_location: csv.and_then(|c| c.skip_range_location.clone()),
                            replaces_location: if same_replaces {
                                csv.and_then(|c| c.replaces_location.clone())
                            } else {
                                None
                            },
                            skips_locations: if same_skips {
                                csv.map(|c| c.skips_locations.clone()).unwrap_or_default()
                            } else {
                                Vec::new()
                            },
                        }
                    })
                    .collect(),
                location: None,
            })
            .collect::<Vec<_>>()
    });
    match mode {
        // opm refuses one of the additions: the graph is what the CSVs
        // declare, every bundle in each channel it names, so the checks
        // show why.
        Mode::Replaces if g.mode_error.is_some() => {
            let mut channels: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
            for b in bundles {
                for c in &b.mode_bundle.channels {
                    channels.entry(c.clone()).or_default().push(b.entry.clone());
                }
            }
            g.channels = channels
                .into_iter()
                .map(|(name, entries)| Channel {
                    name,
                    entries,
                    location: None,
                })
                .collect();
        }
        _ => {
            g.channels = opm_channels.unwrap_or_default();
            if mode == Mode::Replaces {
                // What opm's walk from each channel head leaves out.
                for b in bundles {
                    for c in &b.mode_bundle.channels {
                        let kept = g
                            .channel(c)
                            .is_some_and(|ch| ch.entry(&b.info.name).is_some());
                        if !kept {
                            g.pruned.push((c.clone(), b.info.name.clone()));
                        }
                    }
                }
            }
        }
    }
    // The default channel: opm's, else the annotation of the highest bundle
    // that sets one.
    g.default_channel = outcome
        .as_ref()
        .and_then(|o| o.get(&package))
        .map(|p| p.default_channel.clone())
        .unwrap_or_else(|| {
            bundles
                .iter()
                .rev()
                .find_map(|b| b.mode_bundle.default_channel.clone())
                .unwrap_or_default()
        });
    g.default_channel_location = bundles
        .iter()
        .rev()
        .find(|b| b.mode_bundle.default_channel.as_deref() == Some(g.default_channel.as_str()))
        .and_then(|b| b.default_channel_location.clone());
    let mut first_of: BTreeMap<&str, &LoadedBundle> = BTreeMap::new();
    let where_is = |b: &LoadedBundle| {
        b.entry
            .location
            .clone()
            .unwrap_or_else(|| Location::file(&b.dir))
    };
    for b in bundles {
        if let Some(first) = first_of.get(b.info.name.as_str()) {
            g.load_findings.push(
                Finding::error(
                    "graph-duplicate-bundle",
                    format!("two bundle directories define the CSV {}", b.info.name),
                )
                .at(where_is(b))
                .related(where_is(first)),
            );
        } else {
            first_of.insert(&b.info.name, b);
        }
    }
    g
}

/// Loads a package directory under `mode`, else the mode its `ci.yaml`'s
/// `updateGraph` names, else `replaces`.
pub fn load_package_dir(dir: &Path, mode: Option<Mode>) -> Result<PackageGraph, Error> {
    let ci = CiConfig::read(dir)?;
    let mode = mode
        .or_else(|| ci.as_ref().and_then(|c| c.update_graph))
        .unwrap_or(Mode::Replaces);
    let (bundles, findings) = load_bundles(dir)?;
    let mut g = graph_from_bundles(dir, &bundles, mode);
    g.load_findings.extend(findings);
    Ok(g)
}

/// The graph a catalog template declares. Bundle facts (versions, where
/// they are defined) come from the bundle directories of `pkg_dir`, matched
/// by CSV name, so basic templates need no image resolution; semver
/// templates resolve each image's tag to `pkg_dir/<tag>`.
pub fn load_template_graph(template: &Path, pkg_dir: &Path) -> Result<PackageGraph, Error> {
    load_template_graph_with(template, pkg_dir, BTreeMap::new)
}

/// [`load_template_graph`], with images given only by digest resolved
/// through `known()` (image reference to bundle name, as
/// [`super::template::image_names`] reads them from a rendered catalog),
/// asked only for templates that render images.
pub fn load_template_graph_with(
    template: &Path,
    pkg_dir: &Path,
    known: impl FnOnce() -> BTreeMap<String, String>,
) -> Result<PackageGraph, Error> {
    use super::template as t;
    let text = std::fs::read_to_string(template).map_err(|e| Error::io(template, e))?;
    let cfg = match t::detect_kind(&text, template)? {
        t::Kind::Basic => t::basic_parts(&text, template)?.0,
        kind => {
            let render = t::dir_renderer_with(pkg_dir, known());
            t::render_as(kind, &text, template, &render)?
        }
    };
    let mut graphs = PackageGraph::from_fbc(&cfg, template);
    if graphs.len() != 1 {
        return Err(Error::Package {
            path: template.to_path_buf(),
            message: format!(
                "a template must define exactly one package, found {}",
                graphs.len()
            ),
        });
    }
    let mut g = graphs.remove(0);
    let (bundles, findings) = load_bundles(pkg_dir)?;
    let by_name: BTreeMap<&str, &LoadedBundle> =
        bundles.iter().map(|b| (b.info.name.as_str(), b)).collect();
    let names: BTreeSet<String> = g
        .channels
        .iter()
        .flat_map(|c| c.entries.iter().map(|e| e.name.clone()))
        .collect();
    for n in names {
        match by_name.get(n.as_str()) {
            Some(b) => {
                let mut info = b.info.clone();
                if let Some(old) = g.bundles.get(&n) {
                    info.image = old.image.clone();
                }
                g.bundles.insert(n, info);
            }
            None if !g.bundles.contains_key(&n) => {
                // The entry names a bundle with no directory: keep it
                // without a version rather than guess one.
                g.bundles.insert(
                    n.clone(),
                    BundleInfo {
                        name: n.clone(),
                        location: Some(Location::file(template)),
                        ..BundleInfo::default()
                    },
                );
                g.load_findings.push(
                    Finding::warning(
                        "graph-bundle-unreadable",
                        format!("the template lists {n}, but no bundle directory of {} has that CSV name", pkg_dir.display()),
                    )
                    .at(Location::file(template)),
                );
            }
            None => {}
        }
    }
    // Only the bundles of this template count as unreadable ones.
    g.load_findings.extend(findings);
    g.source = template.to_path_buf();
    Ok(g)
}

/// Picks the template of a package directory for catalog `catalog` (or,
/// if `None`, the newest catalog its `ci.yaml` maps).
pub fn template_for_catalog(dir: &Path, ci: &CiConfig, catalog: Option<&str>) -> Option<PathBuf> {
    let mapping = match catalog {
        Some(c) => ci.template_for(c)?,
        None => ci.catalog_mapping.iter().max_by(|a, b| {
            let newest = |m: &CatalogMapping| {
                m.catalog_names
                    .iter()
                    .map(|n| catalog_key(n))
                    .max()
                    .unwrap_or_default()
            };
            newest(a).cmp(&newest(b))
        })?,
    };
    Some(dir.join("catalog-templates").join(&mapping.template_name))
}

/// Image reference to bundle name from the repository's rendered catalog
/// of this package (`<repo>/catalogs/<catalog>/<pkg>/`, the community
/// layout beside `<repo>/operators/<pkg>`), for the catalogs `template`
/// renders (`catalog`, else the ones `ci.yaml` maps it to, newest first):
/// how a template's digest-only images are matched to bundle directories.
/// Empty when there is no such catalog or it does not parse.
fn rendered_catalog_images(
    pkg_dir: &Path,
    ci: &CiConfig,
    template: &Path,
    catalog: Option<&str>,
) -> BTreeMap<String, String> {
    let (Some(pkg), Some(repo)) = (pkg_dir.file_name(), pkg_dir.parent().and_then(Path::parent))
    else {
        return BTreeMap::new();
    };
    let mut names: Vec<String> = match catalog {
        Some(c) => vec![c.to_string()],
        None => ci
            .catalog_mapping
            .iter()
            .filter(|m| pkg_dir.join("catalog-templates").join(&m.template_name) == template)
            .flat_map(|m| m.catalog_names.clone())
            .collect(),
    };
    names.sort_by_key(|n| std::cmp::Reverse(catalog_key(n)));
    for n in names {
        let dir = repo.join("catalogs").join(&n).join(pkg);
        if !dir.exists() {
            continue;
        }
        if let Ok(cfg) = crate::fbc::DeclarativeConfig::load_path(&dir) {
            return super::template::image_names(&cfg);
        }
    }
    BTreeMap::new()
}

/// `v4.18` as `(4, 18)` so catalogs sort by version.
fn catalog_key(name: &str) -> (u64, u64) {
    let s = name.trim_start_matches('v');
    let mut it = s.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    (it.next().unwrap_or(0), it.next().unwrap_or(0))
}

/// Graphs for a path given on the command line: a package directory (its
/// bundles under `mode` or its `ci.yaml`'s mode, or, for FBC-enabled
/// packages without a mode, the template for `catalog`), a catalog
/// template file, or an FBC file or directory.
pub fn load_graphs(
    path: &Path,
    mode: Option<Mode>,
    catalog: Option<&str>,
) -> Result<Vec<PackageGraph>, Error> {
    if path.is_file() {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let first_schema = super::template::schema_of(&text, path).unwrap_or_default();
        if super::template::Kind::from_schema(&first_schema).is_some() {
            let pkg_dir = path
                .parent()
                .and_then(|p| p.parent())
                .unwrap_or_else(|| Path::new("."));
            return Ok(vec![load_template_graph(path, pkg_dir)?]);
        }
        let (cfg, sources) = crate::fbc::DeclarativeConfig::load_path_located(path)?;
        return Ok(PackageGraph::from_fbc_located(&cfg, path, &sources));
    }
    if !path.is_dir() {
        return Err(Error::NotFound {
            path: path.to_path_buf(),
        });
    }
    let ci = CiConfig::read(path)?;
    let has_bundles = !bundle_dirs(path)?.is_empty();
    if ci.is_none() && !has_bundles {
        let (cfg, sources) = crate::fbc::DeclarativeConfig::load_path_located(path)?;
        return Ok(PackageGraph::from_fbc_located(&cfg, path, &sources));
    }
    if let Some(ci) = &ci {
        if mode.is_none() && ci.update_graph.is_none() && ci.fbc_enabled {
            if let Some(t) = template_for_catalog(path, ci, catalog) {
                let known = || rendered_catalog_images(path, ci, &t, catalog);
                return Ok(vec![load_template_graph_with(&t, path, known)?]);
            }
        }
    }
    Ok(vec![load_package_dir(path, mode)?])
}

/// Whether `dir` is a tree of package directories (such as a catalog
/// repository's `operators/`) rather than one package: it has no `ci.yaml`,
/// no bundle directory of its own, and some subdirectory has a `ci.yaml`.
pub fn is_package_tree(dir: &Path) -> bool {
    if !dir.is_dir() || dir.join("ci.yaml").is_file() {
        return false;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let subs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    let is_bundle = |d: &Path| d.join("manifests").is_dir() || d.join("metadata").is_dir();
    !subs.iter().any(|d| is_bundle(d)) && subs.iter().any(|d| d.join("ci.yaml").is_file())
}

/// The package directories of a tree ([`is_package_tree`]): its
/// subdirectories, sorted.
pub fn tree_packages(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    Ok(out)
}

/// The paths to check for `paths` given by a user: a tree of packages
/// ([`is_package_tree`], such as `operators/`) is each of its packages,
/// anything else is itself.
pub fn expand_package_trees(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    for p in paths {
        if is_package_tree(p) {
            out.extend(tree_packages(p)?);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}
