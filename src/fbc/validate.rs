//! `opm validate`: the checks of alpha/declcfg (ConvertToModel) and
//! alpha/model (Model.Validate), reported as findings.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::located::Sources;
use super::{DeclarativeConfig, SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE};
use crate::diag::Finding;
use crate::yaml::Seg;

fn err(rule: &str, msg: String) -> Finding {
    Finding::error(rule, msg)
}

/// The object a finding is about, and the path inside it, so that a
/// catalog loaded with positions can point at the file and line.
enum Anchor<'p> {
    Package(usize, &'p [Seg]),
    Channel(usize, &'p [Seg]),
    Bundle(usize, &'p [Seg]),
    Deprecation(usize, &'p [Seg]),
}

/// Findings of one validation run, placed when positions are known.
struct Out<'s> {
    sources: Option<&'s Sources>,
    findings: Vec<Finding>,
}

impl Out<'_> {
    fn push(&mut self, finding: Finding, anchor: Anchor<'_>) {
        let placed = self.sources.and_then(|s| {
            let (objects, i, path) = match anchor {
                Anchor::Package(i, p) => (&s.packages, i, p),
                Anchor::Channel(i, p) => (&s.channels, i, p),
                Anchor::Bundle(i, p) => (&s.bundles, i, p),
                Anchor::Deprecation(i, p) => (&s.deprecations, i, p),
            };
            objects.get(i).map(|o| s.location(o, path))
        });
        self.findings.push(match placed {
            Some(at) => finding.at(at),
            None => finding,
        });
    }
}

/// Validates a catalog; an empty result means `opm validate` accepts it.
/// Findings carry no location; see [`validate_located`].
pub fn validate(cfg: &DeclarativeConfig) -> Vec<Finding> {
    check(cfg, None)
}

/// [`validate`] for a catalog read with
/// [`DeclarativeConfig::load_path_located`]: each finding names the file
/// and line of the object (and field) it is about.
pub fn validate_located(cfg: &DeclarativeConfig, sources: &Sources) -> Vec<Finding> {
    check(cfg, Some(sources))
}

/// Reads the catalog at `path` (a directory or one file) with positions
/// and validates it, as `opm validate DIR` does. An object that cannot be
/// read is a finding at its file and line (`fbc-load`): the first such
/// object in path order, and then no other finding, as when the whole
/// catalog is read at once; only a path that cannot be read at all is an
/// error.
///
/// The files are read and checked one group at a time (the files that
/// share a package, see [`super::groups`]), groups in parallel, so memory
/// follows the largest package rather than the catalog.
pub fn validate_path(path: &std::path::Path) -> Result<Vec<Finding>, super::FbcError> {
    use rayon::prelude::*;
    let groups = super::groups::package_groups(path)?;
    // Each group's findings, or where its read failed and why.
    let results: Vec<Result<Vec<Finding>, (usize, super::FbcError)>> = groups
        .into_par_iter()
        .map(|group| {
            let (cfg, sources) = DeclarativeConfig::load_files_located(group.paths())
                .map_err(|e| (group.position_of(&e), e))?;
            Ok(validate_located(&cfg, &sources))
        })
        .collect();
    let (found, failed): (Vec<_>, Vec<_>) = results.into_iter().partition(Result::is_ok);
    // Positions are distinct (a file is in one group): the first failure.
    match failed
        .into_iter()
        .filter_map(Result::err)
        .min_by_key(|(at, _)| *at)
    {
        Some((_, e)) => load_failure(e),
        None => Ok(found.into_iter().flatten().flatten().collect()),
    }
}

/// What [`validate_path`] answers when an object cannot be read: the
/// `fbc-load` finding at its place, or the I/O error.
fn load_failure(e: super::FbcError) -> Result<Vec<Finding>, super::FbcError> {
    match e {
        super::FbcError::Invalid {
            path,
            line,
            column,
            message,
        } => {
            let text = std::fs::read_to_string(&path).ok();
            let span = crate::yaml::Span {
                line,
                column,
                end_line: line,
                end_column: column,
            };
            let at = crate::diag::Location::new(&path, span, text.as_deref());
            Ok(vec![Finding::error("fbc-load", message).at(at)])
        }
        e => Err(e),
    }
}

fn check(cfg: &DeclarativeConfig, sources: Option<&Sources>) -> Vec<Finding> {
    let mut out = Out {
        sources,
        findings: Vec::new(),
    };
    let whole: &[Seg] = &[];
    let mut packages: BTreeMap<&str, (usize, &super::Package)> = BTreeMap::new();
    for (pi, p) in cfg.packages.iter().enumerate() {
        let at = |field: &'static str| [Seg::Key(field.into())];
        if p.name.is_empty() {
            out.push(
                err(
                    "fbc-package-name",
                    "an olm.package has an empty name".into(),
                ),
                Anchor::Package(pi, &at("name")),
            );
            continue;
        }
        if packages.insert(&p.name, (pi, p)).is_some() {
            out.push(
                err(
                    "fbc-duplicate-package",
                    format!("package {:?} is declared more than once", p.name),
                ),
                Anchor::Package(pi, &at("name")),
            );
        }
        if p.default_channel.is_empty() {
            out.push(
                err(
                    "fbc-default-channel",
                    format!("package {:?}: defaultChannel must be set", p.name),
                ),
                Anchor::Package(pi, whole),
            );
        }
        if let Some(icon) = &p.icon {
            use base64::Engine;
            if base64::engine::general_purpose::STANDARD
                .decode(&icon.base64data)
                .is_err()
            {
                out.push(
                    err(
                        "fbc-icon",
                        format!("package {:?}: icon base64data is not valid base64", p.name),
                    ),
                    Anchor::Package(pi, &crate::path!["icon", "base64data"]),
                );
            }
            if icon.mediatype.is_empty() {
                out.push(
                    err(
                        "fbc-icon",
                        format!("package {:?}: icon mediatype must be set", p.name),
                    ),
                    Anchor::Package(pi, &at("icon")),
                );
            }
        }
    }
    let mut channels: BTreeMap<(&str, &str), (usize, &super::Channel)> = BTreeMap::new();
    for (ci, c) in cfg.channels.iter().enumerate() {
        let name = [Seg::Key("name".into())];
        if c.name.is_empty() {
            out.push(
                err(
                    "fbc-channel-name",
                    format!("package {:?}: a channel has an empty name", c.package),
                ),
                Anchor::Channel(ci, &name),
            );
            continue;
        }
        if !packages.contains_key(c.package.as_str()) {
            out.push(
                err(
                    "fbc-unknown-package",
                    format!("unknown package {:?} for channel {:?}", c.package, c.name),
                ),
                Anchor::Channel(ci, &crate::path!["package"]),
            );
            continue;
        }
        if channels.insert((&c.package, &c.name), (ci, c)).is_some() {
            out.push(
                err(
                    "fbc-duplicate-channel",
                    format!("package {:?}: duplicate channel {:?}", c.package, c.name),
                ),
                Anchor::Channel(ci, &name),
            );
        }
    }
    let mut bundles: BTreeMap<(&str, &str), (usize, &super::Bundle)> = BTreeMap::new();
    for (bi, b) in cfg.bundles.iter().enumerate() {
        let name = [Seg::Key("name".into())];
        if b.name.is_empty() {
            out.push(
                err(
                    "fbc-bundle-name",
                    format!("package {:?}: a bundle has an empty name", b.package),
                ),
                Anchor::Bundle(bi, &name),
            );
            continue;
        }
        if !packages.contains_key(b.package.as_str()) {
            out.push(
                err(
                    "fbc-unknown-package",
                    format!("unknown package {:?} for bundle {:?}", b.package, b.name),
                ),
                Anchor::Bundle(bi, &crate::path!["package"]),
            );
            continue;
        }
        if bundles.insert((&b.package, &b.name), (bi, b)).is_some() {
            out.push(
                err(
                    "fbc-duplicate-bundle",
                    format!("package {:?}: duplicate bundle {:?}", b.package, b.name),
                ),
                Anchor::Bundle(bi, &name),
            );
        }
        let pkg_props: Vec<(usize, &super::Property)> = b
            .properties
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind == "olm.package")
            .collect();
        if pkg_props.len() != 1 {
            out.push(
                err(
                    "fbc-bundle-package-property",
                    format!(
                "package {:?} bundle {:?} must have exactly 1 \"olm.package\" property, found {}",
                b.package, b.name, pkg_props.len()
            ),
                ),
                Anchor::Bundle(bi, &crate::path!["properties"]),
            );
        } else {
            let (i, prop) = pkg_props[0];
            let v = &prop.value;
            let name = v.get("packageName").and_then(Value::as_str).unwrap_or("");
            if name != b.package {
                out.push(
                    err(
                        "fbc-bundle-package-property",
                        format!(
                        "package {:?} does not match \"olm.package\" property {:?} of bundle {:?}",
                        b.package, name, b.name
                    ),
                    ),
                    Anchor::Bundle(bi, &crate::path!["properties", i, "value", "packageName"]),
                );
            }
            let version = v.get("version").and_then(Value::as_str).unwrap_or("");
            if let Err(e) = semver::Version::parse(version) {
                out.push(
                    err(
                        "fbc-bundle-version",
                        format!(
                            "package {:?} bundle {:?}: version {version:?} is not semver: {e}",
                            b.package, b.name
                        ),
                    ),
                    Anchor::Bundle(bi, &crate::path!["properties", i, "value", "version"]),
                );
            }
        }
        if b.image.is_empty()
            && !b
                .properties
                .iter()
                .any(|p| p.kind == "olm.bundle.object" || p.kind == "olm.csv.metadata")
        {
            out.push(
                err(
                    "fbc-bundle-image",
                    format!(
                "package {:?} bundle {:?}: image must be set (or the bundle must carry its objects)",
                b.package, b.name
            ),
                ),
                Anchor::Bundle(bi, whole),
            );
        }
        for (i, p) in b.properties.iter().enumerate() {
            if let Some(m) = check_property(p) {
                out.push(
                    err(
                        "fbc-bundle-property",
                        format!("package {:?} bundle {:?}: {m}", b.package, b.name),
                    ),
                    Anchor::Bundle(bi, &crate::path!["properties", i]),
                );
            }
        }
        for ri in &b.related_images {
            if ri.image.is_empty() {
                out.push(
                    err(
                        "fbc-related-image",
                        format!(
                            "package {:?} bundle {:?}: a related image has no image reference",
                            b.package, b.name
                        ),
                    ),
                    Anchor::Bundle(bi, whole),
                );
            }
        }
    }
    // Channels: members exist, one head, no cycles.
    let mut in_channel: BTreeSet<(&str, &str)> = BTreeSet::new();
    for ((pkg, ch), (ci, c)) in &channels {
        let ci = *ci;
        if c.entries.is_empty() {
            out.push(
                err(
                    "fbc-channel-empty",
                    format!(
                        "package {pkg:?}, channel {ch:?}: channel must contain at least one bundle"
                    ),
                ),
                Anchor::Channel(ci, &crate::path!["entries"]),
            );
            continue;
        }
        let mut names = BTreeSet::new();
        for (ei, e) in c.entries.iter().enumerate() {
            let entry = crate::path!["entries", ei, "name"];
            if !names.insert(e.name.as_str()) {
                out.push(
                    err(
                        "fbc-duplicate-entry",
                        format!(
                            "package {pkg:?}, channel {ch:?}: duplicate entry {:?}",
                            e.name
                        ),
                    ),
                    Anchor::Channel(ci, &entry),
                );
            }
            if !bundles.contains_key(&(*pkg, e.name.as_str())) {
                out.push(
                    err(
                        "fbc-entry-unknown-bundle",
                        format!(
                            "package {pkg:?}, channel {ch:?}: bundle {:?} not found in package",
                            e.name
                        ),
                    ),
                    Anchor::Channel(ci, &entry),
                );
            }
            in_channel.insert((pkg, e.name.as_str()));
            if let Some(why) = (!e.skip_range.is_empty())
                .then(|| crate::semver_range::Range::parse(&e.skip_range).err())
                .flatten()
            {
                out.push(
                    err("fbc-skip-range", format!("package {pkg:?}, channel {ch:?}: bundle {:?} has an invalid skipRange {:?}: {why}", e.name, e.skip_range)),
                    Anchor::Channel(ci, &crate::path!["entries", ei, "skipRange"]),
                );
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
            0 => out.push(
                err(
                    "fbc-channel-head",
                    format!("package {pkg:?}, channel {ch:?}: no channel head found in graph"),
                ),
                Anchor::Channel(ci, &crate::path!["entries"]),
            ),
            1 => {}
            _ => out.push(
                err(
                    "fbc-channel-head",
                    format!(
                        "package {pkg:?}, channel {ch:?}: multiple channel heads found in graph: {}",
                        heads.join(", ")
                    ),
                ),
                Anchor::Channel(ci, &crate::path!["entries"]),
            ),
        }
        let replaces: BTreeMap<&str, (usize, &str)> = c
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| !e.replaces.is_empty())
            .map(|(i, e)| (e.name.as_str(), (i, e.replaces.as_str())))
            .collect();
        for (start, (ei, _)) in &replaces {
            let mut seen = BTreeSet::new();
            let mut cur = *start;
            while let Some((_, next)) = replaces.get(cur) {
                if !seen.insert(cur) {
                    out.push(
                        err("fbc-replaces-cycle", format!("package {pkg:?}, channel {ch:?}: detected cycle in replaces chain of upgrade graph at {start:?}")),
                        Anchor::Channel(ci, &crate::path!["entries", *ei, "replaces"]),
                    );
                    break;
                }
                cur = next;
            }
        }
    }
    for (name, (pi, p)) in &packages {
        if !p.default_channel.is_empty()
            && !channels.contains_key(&(*name, p.default_channel.as_str()))
        {
            out.push(
                err(
                    "fbc-default-channel",
                    format!(
                        "package {name:?}: default channel {:?} not found in channels list",
                        p.default_channel
                    ),
                ),
                Anchor::Package(*pi, &crate::path!["defaultChannel"]),
            );
        }
        if !channels.keys().any(|(pk, _)| pk == name) {
            out.push(
                err(
                    "fbc-package-no-channels",
                    format!("package {name:?} has no channels"),
                ),
                Anchor::Package(*pi, whole),
            );
        }
    }
    for ((pkg, b), (bi, _)) in &bundles {
        if !in_channel.contains(&(*pkg, *b)) {
            out.push(
                err(
                    "fbc-bundle-no-channel",
                    format!("package {pkg:?}: bundle {b:?} not found in any channel entries"),
                ),
                Anchor::Bundle(*bi, whole),
            );
        }
    }
    for (di, d) in cfg.deprecations.iter().enumerate() {
        if !packages.contains_key(d.package.as_str()) {
            out.push(
                err(
                    "fbc-unknown-package",
                    format!("olm.deprecations refers to unknown package {:?}", d.package),
                ),
                Anchor::Deprecation(di, &crate::path!["package"]),
            );
            continue;
        }
        for (ei, e) in d.entries.iter().enumerate() {
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
                out.push(
                    err("fbc-deprecation-reference", format!(
                    "olm.deprecations for {:?}: reference {s} {:?} does not name anything in the package",
                    d.package, e.reference.name
                )),
                    Anchor::Deprecation(di, &crate::path!["entries", ei, "reference"]),
                );
            }
            if e.message.is_empty() {
                out.push(
                    err(
                        "fbc-deprecation-message",
                        format!(
                            "olm.deprecations for {:?}: an entry has no message",
                            d.package
                        ),
                    ),
                    Anchor::Deprecation(di, &crate::path!["entries", ei]),
                );
            }
        }
    }
    out.findings
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
