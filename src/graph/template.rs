//! Catalog templates rendered to FBC, as `opm alpha render-template basic`
//! and `... semver` do (operator-registry `alpha/template/basic` and
//! `alpha/template/semver`).
//!
//! Bundle images are resolved offline: with a bundles directory `DIR`, the
//! image whose tag is `T` is the bundle directory `DIR/T` (the
//! community-operators layout, `DIR` = `operators/<pkg>`). The rendered
//! bundles keep the template's image references. An image given only by
//! digest cannot be resolved this way and is an error naming it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use semver::Version;
use serde_json::Value;

use crate::fbc::{self, ChannelEntry, DeclarativeConfig};
use crate::semver_range as range;

/// Schema of basic templates.
pub const SCHEMA_BASIC: &str = "olm.template.basic";
/// Schema of semver templates.
pub const SCHEMA_SEMVER: &str = "olm.semver";

/// Renders one bundle image into an `olm.bundle` object.
pub type BundleRenderer<'a> = dyn Fn(&str) -> Result<fbc::Bundle, String> + 'a;

/// The tag of an image reference, if it has one (`repo:tag` or
/// `repo:tag@sha256:...`).
pub fn image_tag(image: &str) -> Option<&str> {
    let no_digest = image.split('@').next().unwrap_or(image);
    let last = no_digest.rsplit('/').next().unwrap_or(no_digest);
    last.split_once(':')
        .map(|(_, t)| t)
        .filter(|t| !t.is_empty())
}

/// The bundle directory of `image` under `dir`: `dir/<tag>`.
pub fn resolve_image(image: &str, dir: &Path) -> Result<PathBuf, String> {
    let tag = image_tag(image).ok_or_else(|| {
        format!(
            "cannot resolve bundle image {image} offline: it has no tag (only a digest), so it names no directory of {}",
            dir.display()
        )
    })?;
    if tag.contains(['/', '\\']) || tag == ".." || tag == "." {
        return Err(format!(
            "image tag `{tag}` of {image} is not a directory name"
        ));
    }
    let p = dir.join(tag);
    if !p.is_dir() {
        return Err(format!(
            "cannot resolve bundle image {image}: {} is not a directory",
            p.display()
        ));
    }
    // Some packages keep the bundle one level down (`<version>/bundle/`).
    if p.join("manifests").is_dir() || p.join("metadata").is_dir() {
        return Ok(p);
    }
    let mut subs: Vec<PathBuf> = std::fs::read_dir(&p)
        .map_err(|e| format!("{}: {e}", p.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|s| s.join("manifests").is_dir())
        .collect();
    subs.sort();
    subs.into_iter()
        .next()
        .ok_or_else(|| format!("{} holds no bundle (no manifests/)", p.display()))
}

/// A renderer that reads bundle directories under `dir`.
pub fn dir_renderer(dir: &Path) -> impl Fn(&str) -> Result<fbc::Bundle, String> + '_ {
    move |image: &str| {
        let bdir = resolve_image(image, dir)?;
        let b = crate::bundle::Bundle::load_dir(&bdir).map_err(|e| e.to_string())?;
        super::render_bundle::bundle_to_fbc(&b, image)
    }
}

/// A renderer that resolves tagged images as [`dir_renderer`] does, and
/// digest-only images through `known`: image reference to CSV name, as an
/// earlier rendered catalog records them (`--images-from`), then the bundle
/// directory of `dir` with that CSV name.
pub fn dir_renderer_with(
    dir: &Path,
    known: BTreeMap<String, String>,
) -> impl Fn(&str) -> Result<fbc::Bundle, String> + '_ {
    let by_csv = std::sync::OnceLock::<BTreeMap<String, PathBuf>>::new();
    move |image: &str| {
        let bdir = match resolve_image(image, dir) {
            Ok(d) => d,
            Err(e) => {
                let Some(csv) = known.get(image) else {
                    return Err(e);
                };
                let map = by_csv.get_or_init(|| {
                    super::load::bundle_dirs(dir)
                        .unwrap_or_default()
                        .into_iter()
                        .filter_map(|d| {
                            super::load::load_bundle(&d)
                                .ok()
                                .map(|b| (b.info.name.clone(), d))
                        })
                        .collect()
                });
                map.get(csv).cloned().ok_or_else(|| {
                    format!(
                        "{e}; the image is bundle {csv}, but no directory of {} holds it",
                        dir.display()
                    )
                })?
            }
        };
        let b = crate::bundle::Bundle::load_dir(&bdir).map_err(|e| e.to_string())?;
        super::render_bundle::bundle_to_fbc(&b, image)
    }
}

/// Image reference to bundle name, from the `olm.bundle` objects of a catalog.
pub fn image_names(cfg: &DeclarativeConfig) -> BTreeMap<String, String> {
    cfg.bundles
        .iter()
        .map(|b| (b.image.clone(), b.name.clone()))
        .collect()
}

/// Which template a document is.
pub fn schema_of(text: &str, path: &Path) -> Result<String, String> {
    let v = parse_one(text, path)?;
    Ok(v.get("schema")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string())
}

fn parse_one(text: &str, path: &Path) -> Result<Value, String> {
    parse_doc(text, path).map(|doc| doc.root.to_json())
}

/// `file:line:column` of a place in a template, for messages.
fn place(path: &Path, span: crate::yaml::Span) -> String {
    format!("{}:{}:{}", path.display(), span.line, span.column)
}

/// The first non-null document of a template, located.
fn parse_doc(text: &str, path: &Path) -> Result<crate::yaml::Document, String> {
    let docs = crate::yaml::parse_documents(text)
        .map_err(|e| format!("{}: {}", place(path, e.span), e.message))?;
    docs.into_iter()
        .find(|d| !matches!(d.root.value, crate::yaml::Value::Null))
        .ok_or_else(|| format!("{}: the template is empty", path.display()))
}

/// Renders a template of either kind.
pub fn render(
    text: &str,
    path: &Path,
    render: &BundleRenderer,
) -> Result<DeclarativeConfig, String> {
    match schema_of(text, path)?.as_str() {
        SCHEMA_BASIC => render_basic(text, path, render),
        SCHEMA_SEMVER => render_semver(text, path, render),
        other => Err(format!(
            "{}: template has unknown schema ({other:?}), should be {SCHEMA_BASIC:?} or {SCHEMA_SEMVER:?}",
            path.display()
        )),
    }
}

/// The non-bundle objects of a basic template and its bundle images, in order.
pub fn basic_parts(text: &str, path: &Path) -> Result<(DeclarativeConfig, Vec<String>), String> {
    let root = parse_doc(text, path)?.root;
    let entry_at = |i: usize| place(path, root.locate(&crate::path!["entries", i]));
    let v = root.to_json();
    let schema = v.get("schema").and_then(Value::as_str).unwrap_or("");
    if schema != SCHEMA_BASIC {
        return Err(format!(
            "{}: template has unknown schema ({schema:?}), should be {SCHEMA_BASIC:?}",
            path.display()
        ));
    }
    let entries = v
        .get("entries")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut cfg = DeclarativeConfig::default();
    let mut images = Vec::new();
    for (i, e) in entries.into_iter().enumerate() {
        let is_bundle = e.get("schema").and_then(Value::as_str) == Some(fbc::SCHEMA_BUNDLE);
        if is_bundle {
            // opm's isBundleTemplate: an image, and no package, properties
            // or relatedImages (empty ones count as none); a name or other
            // fields are ignored.
            let image = e.get("image").and_then(Value::as_str).unwrap_or("");
            let extra = ["package", "properties", "relatedImages"].iter().any(|k| {
                e.get(*k).is_some_and(|v| match v {
                    Value::Null => false,
                    Value::String(s) => !s.is_empty(),
                    Value::Array(a) => !a.is_empty(),
                    _ => true,
                })
            });
            if image.is_empty() || extra {
                return Err(format!(
                    "{}: entries[{i}]: unexpected fields present in basic template bundle (a basic template bundle has an image and no package, properties or relatedImages)",
                    entry_at(i)
                ));
            }
            images.push(image.to_string());
            continue;
        }
        cfg.push_object(e)
            .map_err(|m| format!("{}: entries[{i}]: {m}", entry_at(i)))?;
    }
    Ok((cfg, images))
}

/// `olm.template.basic`: every object as written, each bundle image
/// rendered.
pub fn render_basic(
    text: &str,
    path: &Path,
    render: &BundleRenderer,
) -> Result<DeclarativeConfig, String> {
    let (mut cfg, images) = basic_parts(text, path)?;
    for image in images {
        cfg.bundles.push(render(&image)?);
    }
    Ok(cfg)
}

/// The `olm.semver` template document.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SemverTemplate {
    /// `olm.semver`.
    pub schema: String,
    /// Generate `<archetype>-v<major>` channels.
    #[serde(default)]
    pub generate_major_channels: bool,
    /// Generate `<archetype>-v<major>.<minor>` channels.
    #[serde(default)]
    pub generate_minor_channels: bool,
    /// `minor` or `major`: which kind of channel may be the default.
    #[serde(default)]
    pub default_channel_type_preference: String,
    /// Link each channel as a plain replaces chain instead of skipping
    /// lower patches. Older opm had this field; current opm reads templates
    /// strictly and refuses it as an unknown field ([`AVOID_SKIP_PATCH_WARNING`]).
    #[serde(default)]
    pub avoid_skip_patch: bool,
    /// Candidate bundles.
    #[serde(default)]
    pub candidate: SemverChannelBundles,
    /// Fast bundles.
    #[serde(default)]
    pub fast: SemverChannelBundles,
    /// Stable bundles.
    #[serde(default)]
    pub stable: SemverChannelBundles,
}

/// What `render-template semver` says when a template sets `avoidSkipPatch`.
pub const AVOID_SKIP_PATCH_WARNING: &str = "avoidSkipPatch is not part of current opm's olm.semver \
schema: opm (alpha/template/semver, read with yaml.UnmarshalStrict) fails with `json: unknown field \
\"avoidSkipPatch\"`; rendered here as the opm releases that had it did (each channel a replaces \
chain in version order, no skips)";

/// One archetype's bundles.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SemverChannelBundles {
    /// Bundle images.
    #[serde(default)]
    pub bundles: Vec<SemverBundle>,
}

/// One bundle of a semver template.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SemverBundle {
    /// Bundle image.
    #[serde(default)]
    pub image: String,
}

const ARCHETYPES: [&str; 3] = ["candidate", "fast", "stable"];

fn kind_priority(kind: &str) -> u8 {
    match kind {
        "minor" => 2,
        "major" => 1,
        _ => 0,
    }
}

/// The field names of [`SemverTemplate`] as written in a template.
const SEMVER_FIELDS: &[&str] = &[
    "schema",
    "generateMajorChannels",
    "generateMinorChannels",
    "defaultChannelTypePreference",
    "avoidSkipPatch",
    "candidate",
    "fast",
    "stable",
];

/// Renames the keys of a mapping that match one of `fields` but for case to
/// that field, as Go's JSON decoder matches field names; with two spellings
/// of one field, the later wins (Go decodes both into the same field).
fn fold_keys(node: &mut crate::yaml::Node, fields: &[&str]) {
    let crate::yaml::Value::Map(entries) = &mut node.value else {
        return;
    };
    for e in entries.iter_mut() {
        if let Some(f) = fields
            .iter()
            .find(|f| **f != e.key && f.eq_ignore_ascii_case(&e.key))
        {
            e.key = f.to_string();
        }
    }
    let mut i = 0;
    while i < entries.len() {
        if entries[i + 1..]
            .iter()
            .any(|later| later.key == entries[i].key)
        {
            entries.remove(i);
        } else {
            i += 1;
        }
    }
}

/// Parses and defaults a semver template as opm's `readFile` does
/// (`yaml.UnmarshalStrict`: unknown fields and duplicate keys are errors,
/// field names match regardless of case). Errors name file, line and field.
pub fn parse_semver(text: &str, path: &Path) -> Result<SemverTemplate, String> {
    let doc = parse_doc(text, path)?;
    if let Some(dup) = doc.duplicate_keys.first() {
        return Err(format!(
            "{}: key `{}` appears twice in one mapping (first at line {}); opm reads templates strictly and refuses that",
            place(path, dup.second),
            dup.key,
            dup.first.line
        ));
    }
    let mut root = doc.root;
    fold_keys(&mut root, SEMVER_FIELDS);
    if let crate::yaml::Value::Map(entries) = &mut root.value {
        for e in entries
            .iter_mut()
            .filter(|e| ARCHETYPES.contains(&e.key.as_str()))
        {
            fold_keys(&mut e.value, &["bundles"]);
            let crate::yaml::Value::Map(fields) = &mut e.value.value else {
                continue;
            };
            for f in fields.iter_mut().filter(|f| f.key == "bundles") {
                if let crate::yaml::Value::Seq(items) = &mut f.value.value {
                    for item in items {
                        fold_keys(item, &["image"]);
                    }
                }
            }
        }
    }
    let mut sv: SemverTemplate = crate::bundle::csv::decode(&root).map_err(|e| {
        format!(
            "{}: {}: {}",
            place(path, root.locate(&e.segments())),
            e.path,
            e.message
        )
    })?;
    if sv.schema != SCHEMA_SEMVER {
        return Err(format!(
            "{}: input file has unknown schema, should be {SCHEMA_SEMVER:?}",
            path.display()
        ));
    }
    if !sv.generate_major_channels && !sv.generate_minor_channels {
        sv.generate_minor_channels = true;
    }
    match sv.default_channel_type_preference.as_str() {
        "" => {
            sv.default_channel_type_preference = if sv.generate_minor_channels {
                "minor".into()
            } else {
                "major".into()
            }
        }
        "minor" if !sv.generate_minor_channels => return Err("schema attribute mismatch: DefaultChannelTypePreference set to 'minor' doesn't make sense if not generating minor-version channels".into()),
        "major" if !sv.generate_major_channels => return Err("schema attribute mismatch: DefaultChannelTypePreference set to 'major' doesn't make sense if not generating major-version channels".into()),
        "minor" | "major" => {}
        other => return Err(format!("unknown DefaultChannelTypePreference: {other:?}\nValid values are 'major' or 'minor'")),
    }
    Ok(sv)
}

/// How opm wraps the errors of reading the rendered bundles' versions.
const POST_PROCESS: &str = "render: unable to post-process bundle info: ";

/// `olm.semver`: channels generated from the versions of the bundles in
/// each archetype, linked as opm links them.
pub fn render_semver(
    text: &str,
    path: &Path,
    render: &BundleRenderer,
) -> Result<DeclarativeConfig, String> {
    let sv = parse_semver(text, path)?;
    let lists = [&sv.candidate.bundles, &sv.fast.bundles, &sv.stable.bundles];
    let mut rendered: BTreeMap<String, fbc::Bundle> = BTreeMap::new();
    for list in lists {
        for b in list.iter() {
            if !rendered.contains_key(&b.image) {
                let r = render(&b.image)?;
                rendered.insert(b.image.clone(), r);
            }
        }
    }
    if rendered.is_empty() {
        return Err("render: no bundles specified or no bundles could be rendered".into());
    }
    let mut pkg = String::new();
    let mut versions: Vec<BTreeMap<String, Version>> = Vec::new();
    for list in lists {
        let mut entries: BTreeMap<String, Version> = BTreeMap::new();
        for b in list.iter() {
            let r = &rendered[&b.image];
            let pp: Vec<&fbc::Property> = r
                .properties
                .iter()
                .filter(|p| p.kind == "olm.package")
                .collect();
            if pp.len() != 1 {
                return Err(format!(
                    "{POST_PROCESS}bundle {:?} has multiple \"olm.package\" properties, expected exactly 1",
                    r.name
                ));
            }
            let pname = pp[0]
                .value
                .get("packageName")
                .and_then(Value::as_str)
                .unwrap_or("");
            let raw = pp[0]
                .value
                .get("version")
                .and_then(Value::as_str)
                .unwrap_or("");
            let v = Version::parse(raw).map_err(|e| {
                format!(
                    "{POST_PROCESS}bundle {:?} has invalid version {raw:?}: {e}",
                    r.name
                )
            })?;
            if pkg.is_empty() {
                pkg = pname.to_string();
            } else if pname != pkg {
                return Err(format!(
                    "{POST_PROCESS}bundle {pname:?} does not belong to this package: {pkg:?}"
                ));
            }
            if entries.insert(r.name.clone(), v).is_some() {
                return Err(format!("{POST_PROCESS}duplicate bundle name {:?}", r.name));
            }
        }
        // Versions differing only in build metadata cannot be ordered
        // (opm's `withoutBuildMetadataConflict`: each later version is
        // compared to the stripped one; the errors are aggregated).
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut errs: Vec<String> = Vec::new();
        for v in entries.values() {
            let mut stripped = v.clone();
            stripped.build = semver::BuildMetadata::EMPTY;
            let stripped = stripped.to_string();
            if !seen.insert(stripped.clone()) {
                errs.push(format!(
                    "bundle version {:?} cannot be compared to {stripped:?}",
                    v.to_string()
                ));
            }
        }
        if !errs.is_empty() {
            let agg = if errs.len() == 1 {
                errs.remove(0)
            } else {
                format!("[{}]", errs.join(", "))
            };
            return Err(format!(
                "{POST_PROCESS}encountered bundle versions which differ only by build metadata, which cannot be ordered: {agg}"
            ));
        }
        versions.push(entries);
    }
    let (channels, default_channel) = generate_channels(&sv, &pkg, &versions);
    let mut cfg = DeclarativeConfig::default();
    cfg.packages.push(fbc::Package {
        schema: fbc::SCHEMA_PACKAGE.into(),
        name: pkg,
        default_channel,
        ..fbc::Package::default()
    });
    cfg.channels = channels;
    cfg.bundles = rendered.into_values().collect();
    Ok(cfg)
}

struct Tuple {
    arch: usize,
    kind: &'static str,
    parent: String,
    name: String,
    version: Version,
    index: usize,
}

fn generate_channels(
    sv: &SemverTemplate,
    pkg: &str,
    versions: &[BTreeMap<String, Version>],
) -> (Vec<fbc::Channel>, String) {
    let pref = sv.default_channel_type_preference.as_str();
    // The "high-water" channel: the most stable archetype, then the highest
    // first version, then the preferred kind.
    struct Hwc {
        arch: usize,
        kind: &'static str,
        version: Version,
        name: String,
    }
    let gt = |h: &Hwc, o: &Hwc| -> bool {
        if h.arch != o.arch {
            return h.arch > o.arch;
        }
        if range::compare(&h.version, &o.version) != std::cmp::Ordering::Equal {
            return range::compare(&h.version, &o.version) == std::cmp::Ordering::Greater;
        }
        if h.kind != o.kind {
            if h.kind == pref {
                return true;
            }
            if o.kind == pref {
                return false;
            }
            return kind_priority(h.kind) > kind_priority(o.kind);
        }
        false
    };
    let mut hwc = Hwc {
        arch: 0,
        kind: "",
        version: Version::new(0, 0, 0),
        name: String::new(),
    };
    let mut channels: BTreeMap<String, fbc::Channel> = BTreeMap::new();
    let mut tuples: Vec<Tuple> = Vec::new();
    for (arch, bundles) in versions.iter().enumerate() {
        let mut names: Vec<(&String, &Version)> = bundles.iter().collect();
        names.sort_by(|a, b| range::compare(a.1, b.1));
        for (name, v) in names {
            let mut keys: Vec<(&'static str, String)> = Vec::new();
            if sv.generate_major_channels {
                keys.push(("major", format!("{}-v{}", ARCHETYPES[arch], v.major)));
            }
            if sv.generate_minor_channels {
                keys.push((
                    "minor",
                    format!("{}-v{}.{}", ARCHETYPES[arch], v.major, v.minor),
                ));
            }
            for (kind, cname) in keys {
                let ch = channels.entry(cname.clone()).or_insert_with(|| {
                    let cand = Hwc {
                        arch,
                        kind,
                        version: v.clone(),
                        name: cname.clone(),
                    };
                    if gt(&cand, &hwc) {
                        hwc = cand;
                    }
                    fbc::Channel {
                        schema: fbc::SCHEMA_CHANNEL.into(),
                        name: cname.clone(),
                        package: pkg.to_string(),
                        entries: Vec::new(),
                        properties: Vec::new(),
                    }
                });
                ch.entries.push(ChannelEntry {
                    name: name.clone(),
                    ..ChannelEntry::default()
                });
                tuples.push(Tuple {
                    arch,
                    kind,
                    parent: cname,
                    name: name.clone(),
                    version: v.clone(),
                    index: ch.entries.len() - 1,
                });
            }
        }
    }
    link_channels(&mut channels, tuples, sv.avoid_skip_patch);
    (channels.into_values().collect(), hwc.name)
}

fn link_channels(
    channels: &mut BTreeMap<String, fbc::Channel>,
    mut tuples: Vec<Tuple>,
    avoid_skip_patch: bool,
) {
    tuples.sort_by(|a, b| {
        a.arch
            .cmp(&b.arch)
            .then(kind_priority(a.kind).cmp(&kind_priority(b.kind)))
            .then(range::compare(&a.version, &b.version))
    });
    let set_edges = |channels: &mut BTreeMap<String, fbc::Channel>,
                     t: &Tuple,
                     replaces: &str,
                     skips: &BTreeSet<String>| {
        if let Some(e) = channels
            .get_mut(&t.parent)
            .and_then(|c| c.entries.get_mut(t.index))
        {
            e.replaces = replaces.to_string();
            let s: Vec<String> = skips.iter().filter(|s| *s != replaces).cloned().collect();
            if !s.is_empty() {
                e.skips = s;
            }
        }
    };
    if avoid_skip_patch {
        // opm's semver template while it had `avoidSkipPatch`: within each
        // generated channel, sorted by version, every entry replaces the one
        // before it; nothing is skipped and no edge crosses channels (a
        // minor channel's first entry replaces nothing).
        for i in 1..tuples.len() {
            let (p, c) = (&tuples[i - 1], &tuples[i]);
            if p.parent == c.parent {
                set_edges(channels, c, &p.name, &BTreeSet::new());
            }
        }
        return;
    }
    let mut prev_z_max = String::new();
    let mut cur_skips: BTreeSet<String> = BTreeSet::new();
    for i in 1..tuples.len() {
        let (p, c) = (&tuples[i - 1], &tuples[i]);
        let arch_change = p.arch != c.arch;
        let kind_change = p.kind != c.kind;
        let x_change = p.version.major != c.version.major;
        let y_change = p.version.minor != c.version.minor;
        if arch_change || kind_change || x_change || y_change {
            set_edges(channels, p, &prev_z_max, &cur_skips);
        }
        if arch_change || kind_change || x_change {
            cur_skips.clear();
            prev_z_max.clear();
        } else {
            if y_change {
                prev_z_max = p.name.clone();
            }
            cur_skips.insert(p.name.clone());
        }
    }
    if tuples.len() > 1 {
        let (p, c) = (&tuples[tuples.len() - 2], &tuples[tuples.len() - 1]);
        if p.arch == c.arch && p.kind == c.kind && p.version.major == c.version.major {
            set_edges(channels, c, &prev_z_max, &cur_skips);
        }
    }
}

/// Output format of rendered FBC (opm's `-o json|yaml`).
pub use crate::fbc::write::OutputFormat;

/// The objects of a config in the order opm writes them: per package
/// (sorted), the package, its channels and its bundles sorted by name,
/// its deprecations, its other objects.
pub fn ordered_objects(cfg: &DeclarativeConfig) -> Vec<Value> {
    crate::fbc::write::ordered_values(cfg)
}

/// Writes a config as opm does: JSON objects indented by four spaces, or
/// YAML documents each starting with `---`, byte for byte.
pub fn write(cfg: &DeclarativeConfig, format: OutputFormat) -> Result<String, String> {
    let mut buf = Vec::new();
    crate::fbc::write::write(cfg, format, &mut buf).map_err(|e| e.to_string())?;
    String::from_utf8(buf).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags() {
        assert_eq!(image_tag("quay.io/a/b:1.2.3"), Some("1.2.3"));
        assert_eq!(image_tag("localhost:5000/a/b:1.2.3"), Some("1.2.3"));
        assert_eq!(image_tag("localhost:5000/a/b"), None);
        assert_eq!(image_tag("quay.io/a/b@sha256:abc"), None);
        assert_eq!(image_tag("quay.io/a/b:v1@sha256:abc"), Some("v1"));
    }

    /// opm reads the semver template with `yaml.UnmarshalStrict`: field names
    /// match regardless of case, unknown fields and duplicate keys fail.
    /// Errors here name the line and the field.
    #[test]
    fn semver_template_is_read_as_opm_reads_it() {
        let p = Path::new("t.yaml");
        let sv = parse_semver(
            "Schema: olm.semver\nGenerateMajorChannels: yes\nSTABLE:\n  Bundles:\n  - Image: r/a-v1.0.0\n",
            p,
        )
        .expect("case-insensitive field names");
        assert!(sv.generate_major_channels && !sv.generate_minor_channels);
        assert_eq!(sv.stable.bundles[0].image, "r/a-v1.0.0");
        // Two spellings of one field: the later one wins.
        let sv = parse_semver(
            "schema: olm.semver\nstable: {bundles: [{image: r/a-v1.0.0}]}\nStable: {bundles: [{image: r/a-v2.0.0}]}\n",
            p,
        )
        .expect("folded duplicates");
        assert_eq!(sv.stable.bundles[0].image, "r/a-v2.0.0");
        for (text, want) in [
            (
                "schema: olm.semver\ngenerateMinorChannels: maybe\n",
                "t.yaml:2:24: generateMinorChannels: invalid type: string \"maybe\", expected a boolean",
            ),
            (
                "schema: olm.semver\nstable:\n  bundles:\n  - image: r/a-v1.0.0\n    tag: x\n",
                "t.yaml:5:10: stable.bundles[0].tag: unknown field `tag`, expected `image`",
            ),
            (
                "schema: olm.semver\nfast: {}\nfast: {}\n",
                "t.yaml:3:1: key `fast` appears twice in one mapping (first at line 2)",
            ),
            ("schema: olm.basic\n", "t.yaml: input file has unknown schema"),
        ] {
            let e = parse_semver(text, p).expect_err(text);
            assert!(e.starts_with(want), "{text}: {e}");
        }
    }

    /// A renderer for images named `repo/a-v<version>`: bundle `a-v<version>`.
    fn fake(image: &str) -> Result<fbc::Bundle, String> {
        let name = image.rsplit('/').next().unwrap_or(image).to_string();
        let version = name.trim_start_matches("a-v").to_string();
        Ok(fbc::Bundle {
            schema: fbc::SCHEMA_BUNDLE.into(),
            name,
            package: "a".into(),
            image: image.into(),
            properties: vec![fbc::Property {
                kind: "olm.package".into(),
                value: serde_json::json!({"packageName": "a", "version": version}),
            }],
            ..fbc::Bundle::default()
        })
    }

    /// Channel name -> entries as `name<replaces[skips]`.
    fn semver_edges(extra: &str) -> BTreeMap<String, Vec<String>> {
        let versions = [
            "0.1.0", "0.1.1", "1.1.0", "1.2.1", "1.3.1", "2.1.0", "2.1.1", "2.3.1", "2.3.2",
            "3.1.0", "3.1.1",
        ];
        let mut text = format!("schema: olm.semver\n{extra}stable:\n  bundles:\n");
        for v in versions {
            text.push_str(&format!("  - image: repo/a-v{v}\n"));
        }
        let cfg = render_semver(&text, Path::new("t.yaml"), &fake).expect("renders");
        cfg.channels
            .iter()
            .map(|c| {
                let entries = c
                    .entries
                    .iter()
                    .map(|e| format!("{}<{}{:?}", e.name, e.replaces, e.skips))
                    .collect();
                (c.name.clone(), entries)
            })
            .collect()
    }

    // Expectations from operator-registry's semver template tests for
    // `avoidSkipPatch` ("NoSkipPatch/No edges between successive major
    // channels", "NoSkipPatch/No edges between minor channels"): a replaces
    // chain inside each channel, no skips, nothing across channels.
    #[test]
    fn avoid_skip_patch_chains_each_major_channel() {
        let got = semver_edges("generateMajorChannels: true\navoidSkipPatch: true\n");
        let want = BTreeMap::from([
            (
                "stable-v0".to_string(),
                vec!["a-v0.1.0<[]", "a-v0.1.1<a-v0.1.0[]"],
            ),
            (
                "stable-v1".to_string(),
                vec!["a-v1.1.0<[]", "a-v1.2.1<a-v1.1.0[]", "a-v1.3.1<a-v1.2.1[]"],
            ),
            (
                "stable-v2".to_string(),
                vec![
                    "a-v2.1.0<[]",
                    "a-v2.1.1<a-v2.1.0[]",
                    "a-v2.3.1<a-v2.1.1[]",
                    "a-v2.3.2<a-v2.3.1[]",
                ],
            ),
            (
                "stable-v3".to_string(),
                vec!["a-v3.1.0<[]", "a-v3.1.1<a-v3.1.0[]"],
            ),
        ]);
        let want: BTreeMap<String, Vec<String>> = want
            .into_iter()
            .map(|(k, v)| (k, v.into_iter().map(String::from).collect()))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn avoid_skip_patch_never_links_minor_channels() {
        let got = semver_edges("avoidSkipPatch: true\n");
        let flat: Vec<String> = got
            .iter()
            .map(|(k, v)| format!("{k}: {}", v.join(" ")))
            .collect();
        assert_eq!(
            flat,
            [
                "stable-v0.1: a-v0.1.0<[] a-v0.1.1<a-v0.1.0[]",
                "stable-v1.1: a-v1.1.0<[]",
                "stable-v1.2: a-v1.2.1<[]",
                "stable-v1.3: a-v1.3.1<[]",
                "stable-v2.1: a-v2.1.0<[] a-v2.1.1<a-v2.1.0[]",
                "stable-v2.3: a-v2.3.1<[] a-v2.3.2<a-v2.3.1[]",
                "stable-v3.1: a-v3.1.0<[] a-v3.1.1<a-v3.1.0[]",
            ]
        );
        // Without it, current opm's skip-patch linking: the last of each
        // minor skips the lower patches, minors of a major are chained by
        // replaces from the previous minor's highest version.
        let got = semver_edges("");
        assert_eq!(
            got["stable-v0.1"],
            ["a-v0.1.0<[]", "a-v0.1.1<[\"a-v0.1.0\"]"]
        );
        assert_eq!(got["stable-v1.3"], ["a-v1.3.1<a-v1.2.1[\"a-v1.1.0\"]"]);
        assert_eq!(
            got["stable-v2.3"],
            [
                "a-v2.3.1<[]",
                "a-v2.3.2<a-v2.1.1[\"a-v2.1.0\", \"a-v2.3.1\"]"
            ]
        );
    }
}
