//! `opm validate`: the checks of alpha/declcfg (ConvertToModel) and
//! alpha/model (Model.Validate) of opm v1.73.0, reported as findings.
//!
//! One verdict rule: a finding of level error is a problem opm refuses the
//! catalog for (its error names the same problem); checks opm does not
//! make are warnings (`validate --strict` counts them as errors). opm stops
//! at its first error; we report every one. docs/validate.md lists both
//! kinds.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::located::Sources;
use super::{DeclarativeConfig, SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE};
use crate::diag::Finding;
use crate::yaml::Seg;

fn err(rule: &str, msg: String) -> Finding {
    Finding::error(rule, msg)
}

/// A check opm does not make.
fn warn(rule: &str, msg: String) -> Finding {
    Finding::warning(rule, msg)
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
            // Not `read_to_string`: a file that is not text is not read whole.
            let text = super::read_catalog_file(&path).ok();
            let span = crate::yaml::Span {
                line,
                column,
                end_line: line,
                end_column: column,
            };
            let at = crate::diag::Location::new(&path, span, text.as_deref());
            Ok(vec![Finding::error("fbc-load", message).at(at)])
        }
        // Content, as a file that is not text is: a finding, not a failure.
        super::FbcError::TooLarge { path, size, limit } => {
            let at = crate::diag::Location::file(&path);
            Ok(vec![Finding::error(
                "fbc-load",
                super::text::too_large(size, limit),
            )
            .at(at)])
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
                    "config contains package with no name".into(),
                ),
                Anchor::Package(pi, whole),
            );
            continue;
        }
        if packages.insert(&p.name, (pi, p)).is_some() {
            out.push(
                err(
                    "fbc-duplicate-package",
                    format!("duplicate package {:?}", p.name),
                ),
                Anchor::Package(pi, &at("name")),
            );
            continue;
        }
        if let Some(why) = dns1123_label(&p.name) {
            out.push(
                err(
                    "fbc-package-name",
                    format!("invalid package name {:?}: [{why}]", p.name),
                ),
                Anchor::Package(pi, &at("name")),
            );
        }
        if p.default_channel.is_empty() {
            out.push(
                err(
                    "fbc-default-channel",
                    format!("invalid package {:?}: default channel must be set", p.name),
                ),
                Anchor::Package(pi, whole),
            );
        }
        if let Some(icon) = &p.icon {
            // opm decodes base64data when it reads the object.
            if crate::gojson::decode_go_base64(&icon.base64data).is_err() {
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
                    warn(
                        "fbc-icon",
                        format!("package {:?}: icon mediatype should be set", p.name),
                    ),
                    Anchor::Package(pi, &at("icon")),
                );
            }
        }
    }
    let mut channels: BTreeMap<(&str, &str), (usize, &super::Channel)> = BTreeMap::new();
    for (ci, c) in cfg.channels.iter().enumerate() {
        let name = [Seg::Key("name".into())];
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
        if c.name.is_empty() {
            out.push(
                err(
                    "fbc-channel-name",
                    format!("package {:?} contains channel with no name", c.package),
                ),
                Anchor::Channel(ci, whole),
            );
            continue;
        }
        if channels.insert((&c.package, &c.name), (ci, c)).is_some() {
            out.push(
                err(
                    "fbc-duplicate-channel",
                    format!("package {:?} has duplicate channel {:?}", c.package, c.name),
                ),
                Anchor::Channel(ci, &name),
            );
        }
    }
    // Each bundle's version string (version and release) once parsed.
    let mut versions: BTreeMap<(&str, &str), String> = BTreeMap::new();
    let mut bundles: BTreeMap<(&str, &str), (usize, &super::Bundle)> = BTreeMap::new();
    for (bi, b) in cfg.bundles.iter().enumerate() {
        let name = [Seg::Key("name".into())];
        if b.package.is_empty() {
            out.push(
                err(
                    "fbc-bundle-package",
                    format!("package name must be set for bundle {:?}", b.name),
                ),
                Anchor::Bundle(bi, whole),
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
        if b.name.is_empty() {
            out.push(
                err(
                    "fbc-bundle-name",
                    format!("package {:?}: bundle name must be set", b.package),
                ),
                Anchor::Bundle(bi, whole),
            );
            continue;
        }
        if bundles.insert((&b.package, &b.name), (bi, b)).is_some() {
            out.push(
                err(
                    "fbc-duplicate-bundle",
                    format!("package {:?} has duplicate bundle {:?}", b.package, b.name),
                ),
                Anchor::Bundle(bi, &name),
            );
            continue;
        }
        for (i, p) in b.properties.iter().enumerate() {
            match check_property(p) {
                Some(PropertyProblem::Unparsable(m)) => out.push(
                    err(
                        "fbc-bundle-property",
                        format!(
                            "parse properties for bundle {:?}: parse property[{i}] of type {:?}: {m}",
                            b.name, p.kind
                        ),
                    ),
                    Anchor::Bundle(bi, &crate::path!["properties", i]),
                ),
                Some(PropertyProblem::Incomplete(m)) => out.push(
                    warn(
                        "fbc-bundle-property",
                        format!("package {:?} bundle {:?}: {m}", b.package, b.name),
                    ),
                    Anchor::Bundle(bi, &crate::path!["properties", i]),
                ),
                None => {}
            }
        }
        let pkg_props: Vec<(usize, &super::Property)> = b
            .properties
            .iter()
            .enumerate()
            .filter(|(_, p)| p.kind == SCHEMA_PACKAGE)
            .collect();
        let mut version_of_bundle = None;
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
            let field = |k: &str| prop.str_field(k);
            // Where a field is written: the key as spelled in the file.
            let key = |k: &'static str| -> String {
                crate::gojson::struct_field_values(&prop.value, k)
                    .filter(|(_, v)| !v.is_null())
                    .last()
                    .map_or(k, |(spelled, _)| spelled)
                    .to_string()
            };
            let pkg_name = field("packageName");
            if pkg_name != b.package {
                out.push(
                    err(
                        "fbc-bundle-package-property",
                        format!(
                            "package {:?} does not match \"olm.package\" property {pkg_name:?} of bundle {:?}",
                            b.package, b.name
                        ),
                    ),
                    Anchor::Bundle(bi, &crate::path!["properties", i, "value", key("packageName")]),
                );
            }
            let version = field("version");
            let parsed = match semver::Version::parse(version) {
                Ok(ver) => Some(ver),
                Err(e) => {
                    let why = if version.is_empty() {
                        "Version string empty".to_string()
                    } else {
                        e.to_string()
                    };
                    out.push(
                        err(
                            "fbc-bundle-version",
                            format!(
                                "error parsing bundle {:?} version {version:?}: {why}",
                                b.name
                            ),
                        ),
                        Anchor::Bundle(bi, &crate::path!["properties", i, "value", key("version")]),
                    );
                    None
                }
            };
            let release = field("release");
            let release_ok = match parse_release(release) {
                Ok(()) => true,
                Err(why) => {
                    out.push(
                        err(
                            "fbc-bundle-release",
                            format!(
                                "error parsing bundle {:?} release version {release:?}: {why}",
                                b.name
                            ),
                        ),
                        Anchor::Bundle(bi, &crate::path!["properties", i, "value", key("release")]),
                    );
                    false
                }
            };
            if let (Some(ver), true) = (parsed, release_ok) {
                let version_string = if release.is_empty() {
                    ver.to_string()
                } else {
                    format!("{ver}-{release}")
                };
                if !release.is_empty() {
                    let normalized = format!("{}-v{version_string}", b.package);
                    if b.name != normalized {
                        out.push(
                            err(
                                "fbc-bundle-name",
                                format!(
                                    "invalid bundle {:?}: name {:?} does not match normalized name {normalized:?} (<package>-v<version>-<release>)",
                                    b.name, b.name
                                ),
                            ),
                            Anchor::Bundle(bi, &name),
                        );
                    }
                    if !ver.build.is_empty() {
                        out.push(
                            err(
                                "fbc-bundle-release",
                                format!(
                                    "invalid bundle {:?}: cannot use build metadata in version with a release version",
                                    b.name
                                ),
                            ),
                            Anchor::Bundle(bi, &crate::path!["properties", i, "value", key("version")]),
                        );
                    }
                }
                version_of_bundle = Some(version_string);
            }
        }
        if let Some(v) = version_of_bundle {
            versions.insert((&b.package, &b.name), v);
        }
        if !b.image.is_empty() {
            if let Err(why) = crate::reference::parse_normalized(&b.image) {
                out.push(
                    err(
                        "fbc-image-pull-spec",
                        format!(
                            "package {:?} bundle {:?} image: invalid image pull spec {:?}: {why}",
                            b.package, b.name, b.image
                        ),
                    ),
                    Anchor::Bundle(bi, &crate::path!["image"]),
                );
            }
        }
        for (ri, r) in b.related_images.iter().enumerate() {
            let at = crate::path!["relatedImages", ri, "image"];
            if r.image.is_empty() {
                out.push(
                    warn(
                        "fbc-related-image",
                        format!(
                            "package {:?} bundle {:?}: relatedImages[{ri}] has no image reference",
                            b.package, b.name
                        ),
                    ),
                    Anchor::Bundle(bi, &crate::path!["relatedImages", ri]),
                );
            } else if let Err(why) = crate::reference::parse_normalized(&r.image) {
                out.push(
                    err(
                        "fbc-image-pull-spec",
                        format!(
                            "package {:?} bundle {:?} relatedImages[{ri}].image: invalid image pull spec {:?}: {why}",
                            b.package, b.name, r.image
                        ),
                    ),
                    Anchor::Bundle(bi, &at),
                );
            }
        }
        // opm counts a bundle's olm.bundle.object properties as its
        // content; olm.csv.metadata alone does not stand in for an image.
        if b.image.is_empty() && !b.properties.iter().any(|p| p.kind == "olm.bundle.object") {
            out.push(
                err(
                    "fbc-bundle-image",
                    format!(
                        "invalid bundle {:?}: bundle image must be set (or the bundle must carry olm.bundle.object properties)",
                        b.name
                    ),
                ),
                Anchor::Bundle(bi, whole),
            );
        }
    }
    // Channels: members exist, one head, a replaces chain from the head
    // that reaches every entry not skipped, no cycles.
    let mut in_channel: BTreeSet<(&str, &str)> = BTreeSet::new();
    for ((pkg, ch), (ci, c)) in &channels {
        let ci = *ci;
        if c.entries.is_empty() {
            out.push(
                err(
                    "fbc-channel-empty",
                    format!(
                        "invalid package {pkg:?}: invalid channel {ch:?}: channel must contain at least one bundle"
                    ),
                ),
                Anchor::Channel(ci, &crate::path!["entries"]),
            );
            continue;
        }
        let mut by_name: BTreeMap<&str, &super::ChannelEntry> = BTreeMap::new();
        for (ei, e) in c.entries.iter().enumerate() {
            let entry = crate::path!["entries", ei, "name"];
            if by_name.insert(e.name.as_str(), e).is_some() {
                out.push(
                    err(
                        "fbc-duplicate-entry",
                        format!(
                            "invalid package {pkg:?}, channel {ch:?}: duplicate entry {:?}",
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
                            "no olm.bundle blobs found in package {pkg:?} for olm.channel entries [{}] (channel {ch:?})",
                            e.name
                        ),
                    ),
                    Anchor::Channel(ci, &entry),
                );
            }
            in_channel.insert((pkg, e.name.as_str()));
            for (si, skip) in e.skips.iter().enumerate() {
                if skip.is_empty() {
                    out.push(
                        err(
                            "fbc-skips-empty",
                            format!(
                                "invalid package {pkg:?}: invalid channel {ch:?}: invalid bundle {:?}: skip[{si}] is empty",
                                e.name
                            ),
                        ),
                        Anchor::Channel(ci, &crate::path!["entries", ei, "skips", si]),
                    );
                }
            }
            if let Some(why) = (!e.skip_range.is_empty())
                .then(|| crate::semver_range::Range::parse(&e.skip_range).err())
                .flatten()
            {
                out.push(
                    err("fbc-skip-range", format!("invalid package {pkg:?}: invalid channel {ch:?}: invalid bundle {:?}: invalid skipRange {:?}: {why}", e.name, e.skip_range)),
                    Anchor::Channel(ci, &crate::path!["entries", ei, "skipRange"]),
                );
            }
        }
        let mut heads: Vec<&str> = c.heads();
        heads.sort_unstable();
        match heads.len() {
            0 => out.push(
                err(
                    "fbc-channel-head",
                    format!("invalid package {pkg:?}: invalid channel {ch:?}: no channel head found in graph"),
                ),
                Anchor::Channel(ci, &crate::path!["entries"]),
            ),
            1 => {
                if let Some((rule, why)) = replaces_chain_problem(heads[0], &by_name) {
                    let ei = c
                        .entries
                        .iter()
                        .position(|e| e.name == heads[0])
                        .unwrap_or(0);
                    out.push(
                        err(rule, format!("invalid package {pkg:?}: invalid channel {ch:?}: {why}")),
                        Anchor::Channel(ci, &crate::path!["entries", ei]),
                    );
                }
            }
            _ => out.push(
                err(
                    "fbc-channel-head",
                    format!(
                        "invalid package {pkg:?}: invalid channel {ch:?}: multiple channel heads found in graph: {}",
                        heads.join(", ")
                    ),
                ),
                Anchor::Channel(ci, &crate::path!["entries"]),
            ),
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
                        "invalid package {name:?}: default channel {:?} not found in channels list (opm: invalid channel {:?}: channel must contain at least one bundle)",
                        p.default_channel, p.default_channel
                    ),
                ),
                Anchor::Package(*pi, &crate::path!["defaultChannel"]),
            );
        }
        if !channels.keys().any(|(pk, _)| pk == name) && p.default_channel.is_empty() {
            out.push(
                err(
                    "fbc-package-no-channels",
                    format!("invalid package {name:?}: package must contain at least one channel"),
                ),
                Anchor::Package(*pi, whole),
            );
        }
        // Two bundles of the package with one version (and release).
        let mut by_version: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for ((pk, b), v) in &versions {
            if pk == name && in_channel.contains(&(*pk, *b)) {
                by_version.entry(v.as_str()).or_default().insert(b);
            }
        }
        let dups: Vec<String> = by_version
            .iter()
            .filter(|(_, names)| names.len() > 1)
            .map(|(v, names)| {
                let names: Vec<&str> = names.iter().copied().collect();
                format!("{{{v}: [{}]}}", names.join(", "))
            })
            .collect();
        if !dups.is_empty() {
            out.push(
                err(
                    "fbc-duplicate-version",
                    format!(
                        "invalid package {name:?}: duplicate versions found in bundles: [{}]",
                        dups.join(" ")
                    ),
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
                    format!("package {pkg:?}, bundle {b:?} not found in any channel entries"),
                ),
                Anchor::Bundle(*bi, whole),
            );
        }
    }
    let mut deprecated_packages: BTreeSet<&str> = BTreeSet::new();
    for (di, d) in cfg.deprecations.iter().enumerate() {
        if d.package.is_empty() {
            out.push(
                err(
                    "fbc-deprecation-package",
                    format!("package name must be set for deprecation item {di}"),
                ),
                Anchor::Deprecation(di, whole),
            );
            continue;
        }
        if !packages.contains_key(d.package.as_str()) {
            out.push(
                err(
                    "fbc-unknown-package",
                    format!(
                        "cannot apply deprecations to an unknown package {:?}",
                        d.package
                    ),
                ),
                Anchor::Deprecation(di, &crate::path!["package"]),
            );
            continue;
        }
        if !deprecated_packages.insert(&d.package) {
            out.push(
                err(
                    "fbc-duplicate-deprecation",
                    format!(
                        "expected a maximum of one deprecation per package: {:?}",
                        d.package
                    ),
                ),
                Anchor::Deprecation(di, &crate::path!["package"]),
            );
            continue;
        }
        let mut references: BTreeSet<(&str, &str)> = BTreeSet::new();
        for (ei, e) in d.entries.iter().enumerate() {
            let r = &e.reference;
            let at = crate::path!["entries", ei, "reference"];
            let s = r.schema.as_str();
            if s.is_empty() {
                out.push(
                    err(
                        "fbc-deprecation-reference",
                        format!(
                            "schema must be set for deprecation entry [{ei}] for package {:?}",
                            d.package
                        ),
                    ),
                    Anchor::Deprecation(di, &at),
                );
                continue;
            }
            if !references.insert((s, r.name.as_str())) {
                out.push(
                    err(
                        "fbc-duplicate-deprecation",
                        format!(
                            "duplicate deprecation entry {{schema: {s:?}, name: {:?}}} for package {:?}",
                            r.name, d.package
                        ),
                    ),
                    Anchor::Deprecation(di, &at),
                );
                continue;
            }
            let problem = match s {
                SCHEMA_BUNDLE if !bundles.contains_key(&(d.package.as_str(), r.name.as_str())) => {
                    Some(format!(
                        "cannot deprecate bundle {:?} for package {:?}: bundle not found",
                        r.name, d.package
                    ))
                }
                SCHEMA_CHANNEL
                    if !channels.contains_key(&(d.package.as_str(), r.name.as_str())) =>
                {
                    Some(format!(
                        "cannot deprecate channel {:?} for package {:?}: channel not found",
                        r.name, d.package
                    ))
                }
                SCHEMA_PACKAGE if !r.name.is_empty() => Some(format!(
                    "package name must be empty for deprecated package {:?} (specified {:?})",
                    d.package, r.name
                )),
                SCHEMA_BUNDLE | SCHEMA_CHANNEL | SCHEMA_PACKAGE => None,
                _ => Some(format!(
                    "cannot deprecate object {{schema: {s:?}, name: {:?}}} referenced by entry {ei} for package {:?}: object schema unknown",
                    r.name, d.package
                )),
            };
            if let Some(m) = problem {
                out.push(
                    err("fbc-deprecation-reference", m),
                    Anchor::Deprecation(di, &at),
                );
                continue;
            }
            if e.message.is_empty() {
                out.push(
                    err(
                        "fbc-deprecation-message",
                        format!(
                            "olm.deprecations for {:?}: entry [{ei}]: invalid deprecation: message must be set",
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

/// opm's `validateReplacesChain` after the head is known: from the head,
/// follow `replaces` (stopping at an edge to a skipped entry); a name seen
/// twice is a cycle; entries neither on the chain nor skipped by any entry
/// are stranded. The rule and message of the problem, if any.
fn replaces_chain_problem(
    head: &str,
    entries: &BTreeMap<&str, &super::ChannelEntry>,
) -> Option<(&'static str, String)> {
    let skipped: BTreeSet<&str> = entries
        .values()
        .flat_map(|e| e.skips.iter().map(String::as_str))
        .collect();
    let mut chain: Vec<&str> = vec![head];
    let mut on_chain: BTreeSet<&str> = BTreeSet::from([head]);
    let mut cur = entries.get(head).copied();
    while let Some(e) = cur {
        if skipped.contains(e.replaces.as_str()) {
            break;
        }
        let next = e.replaces.as_str();
        if on_chain.contains(next) {
            let from = chain.iter().position(|n| *n == next).unwrap_or(0);
            let mut cycle: Vec<&str> = chain[from..].to_vec();
            cycle.push(next);
            return Some((
                "fbc-replaces-cycle",
                format!(
                    "detected cycle in replaces chain of upgrade graph: {}",
                    cycle.join(" -> ")
                ),
            ));
        }
        chain.push(next);
        on_chain.insert(next);
        cur = entries.get(next).copied();
    }
    let stranded: Vec<&str> = entries
        .keys()
        .copied()
        .filter(|n| !on_chain.contains(n) && !skipped.contains(n))
        .collect();
    (!stranded.is_empty()).then(|| {
        (
            "fbc-stranded-bundles",
            format!(
                "channel contains one or more stranded bundles: {}",
                stranded.join(", ")
            ),
        )
    })
}

/// Why `name` is not an RFC 1123 label (apimachinery v0.36's
/// `IsDNS1123Label`, which opm requires of package names), or `None`.
fn dns1123_label(name: &str) -> Option<String> {
    let why = crate::k8s_names::dns1123_label(name, crate::k8s_names::Apimachinery::V0_36);
    (!why.is_empty()).then(|| why.join(" "))
}

/// opm's `model.NewRelease`: an empty release is none; else at most 20
/// characters of dot-separated semver pre-release identifiers.
fn parse_release(release: &str) -> Result<(), String> {
    if release.is_empty() {
        return Ok(());
    }
    if release.len() > 20 {
        return Err(format!(
            "invalid release {release:?}: exceeds maximum length of 20 characters"
        ));
    }
    let errs: Vec<String> = release
        .split('.')
        .enumerate()
        .filter_map(|(i, seg)| {
            let why = if seg.is_empty() {
                Some("Prerelease is empty".to_string())
            } else if seg.bytes().all(|b| b.is_ascii_digit()) {
                (seg.len() > 1 && seg.starts_with('0')).then(|| {
                    format!("Numeric PreRelease version must not contain leading zeroes {seg:?}")
                })
            } else if seg.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
                None
            } else {
                Some(format!("Invalid character(s) found in prerelease {seg:?}"))
            };
            why.map(|w| format!("segment {i}: {w}"))
        })
        .collect();
    if errs.is_empty() {
        Ok(())
    } else {
        Err(format!("invalid release {release:?}: {}", errs.join("\n")))
    }
}

/// What is wrong with a bundle property.
enum PropertyProblem {
    /// The value does not decode into opm's type for the property
    /// (`property.Parse` fails): an error.
    Unparsable(String),
    /// It decodes, but a field is missing: opm accepts it; a warning.
    Incomplete(String),
}

/// Checks one property's value against opm's Go type for it
/// (`alpha/property`): a struct accepts an object or `null`, each known
/// field a value of its type or `null`; unknown fields are ignored.
fn check_property(p: &super::Property) -> Option<PropertyProblem> {
    // Any other type is kept as raw JSON, which every value is.
    let ty = crate::bundle::properties::go_type(&p.kind)?;
    if let Err(m) = crate::gojson::check_go_decode(&p.value, ty) {
        return Some(PropertyProblem::Unparsable(m));
    }
    // Beyond what decodes: values opm takes but that say nothing (a null
    // value is Go's zero value, left alone here as before).
    let required = |keys: &[&str]| {
        if p.value.is_null() {
            return None;
        }
        keys.iter()
            .find(|k| !p.field(k).is_some_and(Value::is_string))
            .map(|k| {
                PropertyProblem::Incomplete(format!("property {} needs a string {k:?}", p.kind))
            })
    };
    match p.kind.as_str() {
        "olm.gvk" | "olm.gvk.required" => required(&["group", "kind", "version"]),
        "olm.package.required" => required(&["packageName", "versionRange"]),
        "olm.bundle.object"
            if !p.field("data").is_some_and(Value::is_string)
                && !p.field("ref").is_some_and(Value::is_string) =>
        {
            Some(PropertyProblem::Incomplete(
                "olm.bundle.object needs \"data\" or \"ref\"".into(),
            ))
        }
        _ => None,
    }
}

/// Whether `r` parses as a blang/semver range ([`crate::semver_range`]).
pub fn range_ok(r: &str) -> bool {
    crate::semver_range::Range::parse(r).is_ok()
}
