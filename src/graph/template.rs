//! Catalog templates rendered to FBC as opm v1.73.0's `opm alpha
//! render-template` does (operator-registry `alpha/template/` at that tag:
//! `basic`, `semver`, `substitutes`, the type detected from the schema).
//! One reader serves `render-template` and the graph commands: field names
//! match regardless of case, as Go's JSON decoding matches them.
//!
//! Bundle images are resolved offline: with a bundles directory `DIR`, the
//! image whose tag is `T` is the bundle directory `DIR/T` (the
//! community-operators layout, `DIR` = `operators/<pkg>`), or `DIR/vT`
//! (`DIR/T'` for a tag `vT'`) when there is no `DIR/T`. The rendered
//! bundles keep the template's image references. An image given only by
//! digest cannot be resolved this way and is an error naming it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use semver::Version;
use serde_json::Value;

use super::Error;
use crate::fbc::{self, ChannelEntry, DeclarativeConfig};
use crate::semver_range as range;

/// Schema of basic templates.
pub const SCHEMA_BASIC: &str = "olm.template.basic";
/// Schema of semver templates.
pub const SCHEMA_SEMVER: &str = "olm.semver";

/// Renders one bundle image into an `olm.bundle` object; an image that
/// cannot be rendered is an [`Error::Render`] naming it.
pub type BundleRenderer<'a> = dyn Fn(&str) -> Result<fbc::Bundle, Error> + 'a;

/// An [`Error::Render`] with a formatted message.
macro_rules! render_error {
    ($($arg:tt)*) => {
        Error::Render(format!($($arg)*))
    };
}

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
pub fn resolve_image(image: &str, dir: &Path) -> Result<PathBuf, Error> {
    let tag = image_tag(image).ok_or_else(|| {
        render_error!(
            "cannot resolve bundle image {image} offline: it has no tag (only a digest), so it names no directory of {}",
            dir.display()
        )
    })?;
    if tag.contains(['/', '\\']) || tag == ".." || tag == "." {
        return Err(render_error!(
            "image tag `{tag}` of {image} is not a directory name"
        ));
    }
    // Tags and version directories differ by a leading `v` in some
    // packages (`:v1.2.0` for `1.2.0/`); the exact name is tried first.
    let alt = match tag.strip_prefix('v') {
        Some(bare) => bare.to_string(),
        None => format!("v{tag}"),
    };
    let candidates = [tag, alt.as_str()];
    let Some(p) = candidates
        .iter()
        .filter(|t| !t.is_empty() && **t != "." && **t != "..")
        .map(|t| dir.join(t))
        .find(|p| p.is_dir())
    else {
        return Err(render_error!(
            "cannot resolve bundle image {image}: {} is not a directory",
            dir.join(tag).display()
        ));
    };
    // Some packages keep the bundle one level down (`<version>/bundle/`).
    if p.join("manifests").is_dir() || p.join("metadata").is_dir() {
        return Ok(p);
    }
    let mut subs: Vec<PathBuf> = std::fs::read_dir(&p)
        .map_err(|e| render_error!("{}: {e}", p.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|s| s.join("manifests").is_dir())
        .collect();
    subs.sort();
    subs.into_iter()
        .next()
        .ok_or_else(|| render_error!("{} holds no bundle (no manifests/)", p.display()))
}

/// A renderer that reads bundle directories under `dir`.
pub fn dir_renderer(dir: &Path) -> impl Fn(&str) -> Result<fbc::Bundle, Error> + '_ {
    move |image: &str| {
        let bdir = resolve_image(image, dir)?;
        let b = crate::bundle::Bundle::load_dir(&bdir).map_err(|e| Error::Render(e.to_string()))?;
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
) -> impl Fn(&str) -> Result<fbc::Bundle, Error> + '_ {
    let by_csv = std::sync::OnceLock::<BTreeMap<String, PathBuf>>::new();
    move |image: &str| {
        let bdir = match resolve_image(image, dir) {
            Ok(d) => d,
            Err(e) => {
                let Some(csv) = known.get(image) else {
                    return Err(e);
                };
                let map = by_csv.get_or_init(|| {
                    super::bundle_dir::bundle_dirs(dir)
                        .unwrap_or_default()
                        .into_iter()
                        .filter_map(|d| {
                            super::bundle_dir::load_bundle(&d)
                                .ok()
                                .map(|b| (b.info.name.clone(), d))
                        })
                        .collect()
                });
                map.get(csv).cloned().ok_or_else(|| {
                    render_error!(
                        "{e}; the image is bundle {csv}, but no directory of {} holds it",
                        dir.display()
                    )
                })?
            }
        };
        let b = crate::bundle::Bundle::load_dir(&bdir).map_err(|e| Error::Render(e.to_string()))?;
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

/// Schema of substitutes templates.
pub const SCHEMA_SUBSTITUTES: &str = "olm.template.substitutes";

/// The template kinds opm v1.73.0 knows (`alpha/template/registry.go`),
/// named by the last part of their schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `olm.template.basic`
    Basic,
    /// `olm.semver`
    Semver,
    /// `olm.template.substitutes`
    Substitutes,
}

impl Kind {
    /// Every kind, in opm's order of type names.
    pub const ALL: [Kind; 3] = [Kind::Basic, Kind::Semver, Kind::Substitutes];

    /// The schema a template of this kind declares.
    pub fn schema(self) -> &'static str {
        match self {
            Kind::Basic => SCHEMA_BASIC,
            Kind::Semver => SCHEMA_SEMVER,
            Kind::Substitutes => SCHEMA_SUBSTITUTES,
        }
    }

    /// The type name (`basic`, `semver`, `substitutes`): the schema's last
    /// dot-separated part, as opm's `TypeFromSchema`.
    pub fn type_name(self) -> &'static str {
        let s = self.schema();
        &s[s.rfind('.').map_or(0, |i| i + 1)..]
    }

    /// The kind of a type name.
    pub fn from_type(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.type_name() == name)
    }

    /// The kind of a schema.
    pub fn from_schema(schema: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.schema() == schema)
    }
}

/// Which template a document is: its `schema` field, matched regardless of
/// case as Go's `json.Unmarshal` matches it (`Schema: olm.semver` is
/// `olm.semver`); `""` when there is none.
pub fn schema_of(text: &str, path: &Path) -> Result<String, Error> {
    let doc = parse_doc(text, path, DECODING_INPUT)?;
    schema_field(&doc.root, path).map(|s| s.unwrap_or_default())
}

/// The kind of a template, detected from its `schema` as opm v1.73.0's
/// `render-template` does without a type argument (`detectSchema`).
pub fn detect_kind(text: &str, path: &Path) -> Result<Kind, Error> {
    let doc = parse_doc(text, path, DECODING_INPUT)?;
    let schema = schema_field(&doc.root, path)?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            format!(
                "{}: template input missing required 'schema' field",
                path.display()
            )
        })?;
    Kind::from_schema(&schema).ok_or_else(|| {
        Error::Template(format!(
            "{}: unknown template schema: {schema} (known: {})",
            place(path, doc.root.locate(&crate::path!["schema"])),
            Kind::ALL.map(Kind::schema).join(", ")
        ))
    })
}

/// The value of the `schema` key of a mapping, any case, the last one
/// written winning (Go decodes each spelling into the same field).
fn schema_field(root: &crate::yaml::Node, path: &Path) -> Result<Option<String>, Error> {
    let crate::yaml::Value::Map(entries) = &root.value else {
        return Err(Error::Template(format!(
            "{}: a template is a mapping, found {}",
            place(path, root.span),
            root.type_name()
        )));
    };
    match entries
        .iter()
        .rev()
        .find(|e| e.key.eq_ignore_ascii_case("schema"))
    {
        None => Ok(None),
        Some(e) => match &e.value.value {
            crate::yaml::Value::Str(s) => Ok(Some(s.clone())),
            crate::yaml::Value::Null => Ok(None),
            _ => Err(Error::Template(format!(
                "{}: {}: expected a string, found {}",
                place(path, e.value.span),
                e.key,
                e.value.type_name()
            ))),
        },
    }
}

/// What opm v1.73.0's type detection calls a template that does not parse.
const DECODING_INPUT: &str = "decoding template input";

/// `file:line:column` of a place in a template, for messages.
fn place(path: &Path, span: crate::yaml::Span) -> String {
    format!("{}:{}:{}", path.display(), span.line, span.column)
}

/// The first non-null document of a template, located. A syntax error
/// says what was being read (`decoding template input` while detecting the
/// type, `decoding template schema` in the basic and substitutes readers,
/// as opm v1.73.0 words them), where it is.
fn parse_doc(text: &str, path: &Path, reading: &str) -> Result<crate::yaml::Document, Error> {
    let docs = crate::yaml::parse_documents(text).map_err(|e| {
        let mut e = e;
        if !reading.is_empty() {
            e.message = format!("{reading}: {}", e.message);
        }
        Error::yaml(path, &e)
    })?;
    docs.into_iter()
        .find(|d| !matches!(d.root.value, crate::yaml::Value::Null))
        .ok_or_else(|| Error::Template(format!("{}: the template is empty", path.display())))
}

/// Renders a template of any kind, the kind detected from its schema.
pub fn render(
    text: &str,
    path: &Path,
    render: &BundleRenderer,
) -> Result<DeclarativeConfig, Error> {
    render_as(detect_kind(text, path)?, text, path, render)
}

/// Renders a template as `kind` (opm's `render-template TYPE FILE`: the
/// template must then declare that kind's schema).
pub fn render_as(
    kind: Kind,
    text: &str,
    path: &Path,
    render: &BundleRenderer,
) -> Result<DeclarativeConfig, Error> {
    match kind {
        Kind::Basic => render_basic(text, path, render),
        Kind::Semver => render_semver(text, path, render),
        Kind::Substitutes => render_substitutes(text, path, render),
    }
}

/// The Go types a template decodes into: which keys are fields (matched
/// regardless of case) and what each holds (`GoType::Any`: kept as written).
/// The FBC objects of its `entries` are `fbc::go_types`.
use crate::gojson::GoType as Shape;

const SEMVER_BUNDLES: Shape = Shape::Struct(&[(
    "bundles",
    Shape::Slice(&Shape::Struct(&[("image", Shape::Any)])),
)]);
/// `SemverTemplateData` (and `avoidSkipPatch`, see [`SemverTemplate`]).
const SEMVER: Shape = Shape::Struct(&[
    ("schema", Shape::Any),
    ("generateMajorChannels", Shape::Any),
    ("generateMinorChannels", Shape::Any),
    ("defaultChannelTypePreference", Shape::Any),
    ("avoidSkipPatch", Shape::Any),
    ("candidate", SEMVER_BUNDLES),
    ("fast", SEMVER_BUNDLES),
    ("stable", SEMVER_BUNDLES),
]);
/// `BasicTemplateData` (entries are read as `declcfg.Meta`).
const BASIC: Shape = Shape::Struct(&[("schema", Shape::Any), ("entries", Shape::Any)]);
/// `SubstitutesTemplateData`.
const SUBSTITUTES: Shape = Shape::Struct(&[
    ("schema", Shape::Any),
    ("entries", Shape::Any),
    (
        "substitutions",
        Shape::Slice(&Shape::Struct(&[
            ("name", Shape::Any),
            ("base", Shape::Any),
        ])),
    ),
]);

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

/// Folds the field names of a value of `shape`, recursively.
fn fold(node: &mut crate::yaml::Node, shape: Shape) {
    match shape {
        Shape::Slice(inner) => {
            if let crate::yaml::Value::Seq(items) = &mut node.value {
                for item in items {
                    fold(item, *inner);
                }
            }
        }
        Shape::Struct(fields) => {
            let names: Vec<&str> = fields.iter().map(|f| f.0).collect();
            fold_keys(node, &names);
            if let crate::yaml::Value::Map(entries) = &mut node.value {
                for e in entries {
                    if let Some((_, s)) = fields.iter().find(|f| f.0 == e.key) {
                        fold(&mut e.value, *s);
                    }
                }
            }
        }
        Shape::Map(inner) => {
            if let crate::yaml::Value::Map(entries) = &mut node.value {
                for e in entries {
                    fold(&mut e.value, *inner);
                }
            }
        }
        _ => {}
    }
}

/// A Go struct's fields: JSON names and types, in order.
type GoFields = &'static [(&'static str, Shape)];

/// The first key (in document order) of a struct in `node` that is not one
/// of its fields, once the keys are [`fold`]ed, as a strict decode
/// (`yaml.UnmarshalStrict`, `DisallowUnknownFields`) refuses it: the path
/// to the key and the struct's fields.
fn unknown_field(
    node: &crate::yaml::Node,
    shape: Shape,
    at: &mut Vec<crate::yaml::Seg>,
) -> Option<(Vec<crate::yaml::Seg>, GoFields)> {
    use crate::yaml::{Seg, Value};
    match (shape, &node.value) {
        (Shape::Slice(inner), Value::Seq(items)) => {
            items.iter().enumerate().find_map(|(i, item)| {
                at.push(Seg::Index(i));
                let found = unknown_field(item, *inner, at);
                at.pop();
                found
            })
        }
        (Shape::Struct(fields), Value::Map(entries)) => entries.iter().find_map(|e| {
            at.push(Seg::Key(e.key.clone()));
            let found = match fields.iter().find(|f| f.0 == e.key) {
                None => Some((at.clone(), fields)),
                Some((_, s)) => unknown_field(&e.value, *s, at),
            };
            at.pop();
            found
        }),
        _ => None,
    }
}

/// A path as serde_path_to_error writes it (`stable.bundles[0].image`).
fn path_text(segs: &[crate::yaml::Seg]) -> String {
    let mut out = String::new();
    for s in segs {
        match s {
            crate::yaml::Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            crate::yaml::Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The objects of a template's `entries` as opm reads them (`declcfg.Meta`,
/// then `LoadSlice`): `schema`, `package` and `name` and the fields of the
/// known schemas match regardless of case, two keys of one object that
/// differ only in case are an error, objects of other schemas are kept as
/// written. Each comes with its index.
fn read_entries(root: &mut crate::yaml::Node, path: &Path) -> Result<Vec<(usize, Entry)>, Error> {
    let Some(entries) = (match &mut root.value {
        crate::yaml::Value::Map(m) => m.iter_mut().find(|e| e.key == "entries"),
        _ => None,
    }) else {
        return Ok(Vec::new());
    };
    let items = match &mut entries.value.value {
        crate::yaml::Value::Seq(items) => items,
        crate::yaml::Value::Null => return Ok(Vec::new()),
        _ => {
            return Err(Error::Template(format!(
                "{}: entries: expected a list of objects, found {}",
                place(path, entries.value.span),
                entries.value.type_name()
            )))
        }
    };
    let mut out = Vec::new();
    for (i, item) in items.iter_mut().enumerate() {
        let at = place(path, item.span);
        let crate::yaml::Value::Map(fields) = &item.value else {
            return Err(Error::Template(format!(
                "{at}: entries[{i}]: expected an object, found {}",
                item.type_name()
            )));
        };
        let mut folded: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for f in fields {
            folded
                .entry(f.key.to_ascii_lowercase())
                .or_default()
                .push(&f.key);
        }
        if let Some((k, keys)) = folded.iter().find(|(_, keys)| keys.len() > 1) {
            return Err(Error::Template(format!(
                "{at}: entries[{i}]: duplicate keys for key {k:?}: {keys:?} (opm matches these keys regardless of case)"
            )));
        }
        let schema = fields
            .iter()
            .find(|f| f.key.eq_ignore_ascii_case("schema"))
            .and_then(|f| f.value.as_str())
            .unwrap_or("")
            .to_string();
        let shape = match schema.as_str() {
            fbc::SCHEMA_PACKAGE => Some(fbc::go_types::PACKAGE),
            fbc::SCHEMA_CHANNEL => Some(fbc::go_types::CHANNEL),
            fbc::SCHEMA_BUNDLE => Some(fbc::go_types::BUNDLE),
            fbc::SCHEMA_DEPRECATIONS => Some(fbc::go_types::DEPRECATION),
            _ => None,
        };
        match shape {
            Some(shape) => fold(item, shape),
            // Objects of other schemas are kept (and written) as written;
            // their `schema` was read regardless of case above.
            None if !schema.is_empty() => {
                out.push((i, Entry::Other(item.to_json())));
                continue;
            }
            None => {}
        }
        out.push((i, Entry::Object(item.to_json())));
    }
    Ok(out)
}

/// One object of a template's `entries`.
enum Entry {
    /// A package, channel, bundle or deprecations object, field names folded.
    Object(Value),
    /// An object of another schema, as written.
    Other(Value),
}

impl Entry {
    /// Adds the object to `cfg`.
    fn push(self, cfg: &mut DeclarativeConfig) -> Result<(), String> {
        match self {
            Entry::Object(v) => cfg.push_object(v).map_err(|e| e.to_string()),
            Entry::Other(v) => {
                cfg.others.push(v);
                Ok(())
            }
        }
    }

    fn value(&self) -> &Value {
        match self {
            Entry::Object(v) | Entry::Other(v) => v,
        }
    }
}

/// Parses a template of `kind`: its first document with the field names of
/// `shape` folded. The schema must be `kind`'s.
fn parse_template(
    text: &str,
    path: &Path,
    kind: Kind,
    shape: Shape,
) -> Result<crate::yaml::Document, Error> {
    let reading = match kind {
        Kind::Basic | Kind::Substitutes => "decoding template schema",
        Kind::Semver => "",
    };
    let mut doc = parse_doc(text, path, reading)?;
    let schema = schema_field(&doc.root, path)?.unwrap_or_default();
    if schema != kind.schema() {
        return Err(Error::Template(format!(
            "{}: template has unknown schema ({schema:?}), should be {:?}",
            path.display(),
            kind.schema()
        )));
    }
    fold(&mut doc.root, shape);
    Ok(doc)
}

/// The non-bundle objects of a basic template and its bundle images, in order.
pub fn basic_parts(text: &str, path: &Path) -> Result<(DeclarativeConfig, Vec<String>), Error> {
    let mut root = parse_template(text, path, Kind::Basic, BASIC)?.root;
    let entries = read_entries(&mut root, path)?;
    let entry_at = |i: usize| place(path, root.locate(&crate::path!["entries", i]));
    let mut cfg = DeclarativeConfig::default();
    let mut images = Vec::new();
    for (i, entry) in entries {
        let e = entry.value();
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
                return Err(Error::Template(format!(
                    "{}: entries[{i}]: unexpected fields present in basic template bundle (a basic template bundle has an image and no package, properties or relatedImages)",
                    entry_at(i)
                )));
            }
            images.push(image.to_string());
            continue;
        }
        entry
            .push(&mut cfg)
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
) -> Result<DeclarativeConfig, Error> {
    let (mut cfg, images) = basic_parts(text, path)?;
    for image in images {
        cfg.bundles.push(render(&image)?);
    }
    Ok(cfg)
}

/// One substitution of an `olm.template.substitutes` template: the bundle
/// image `name` takes the place of the bundle named `base`.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct Substitution {
    /// Image reference of the substituting bundle.
    #[serde(default)]
    pub name: String,
    /// Name of the bundle it substitutes for.
    #[serde(default)]
    pub base: String,
}

/// A bundle's version and release, as opm's `Bundle.VersionRelease` reads
/// them from its `olm.package` property (operator-registry #1792, #1938):
/// the `release` field, or else, for a bundle whose CSV has an
/// `olm.substitutesFor` annotation, the version's build metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionRelease {
    /// The semver version.
    pub version: Version,
    /// The release: dot-separated pre-release identifiers, at most 20
    /// characters; `None` when there is none.
    pub release: Option<semver::Prerelease>,
}

impl VersionRelease {
    /// Reads a bundle's version and release.
    pub fn of(b: &fbc::Bundle) -> Result<VersionRelease, Error> {
        let mut found: Option<&Value> = None;
        for p in b.properties.iter().filter(|p| p.kind == "olm.package") {
            if found.is_some() {
                return Err("must be exactly one property of type \"olm.package\"".into());
            }
            found = Some(&p.value);
        }
        let v = found.ok_or_else(|| {
            Error::Template(format!(
                "no \"olm.package\" property found for bundle {:?}",
                b.name
            ))
        })?;
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
        let mut version = Version::parse(s("version")).map_err(|e| {
            format!(
                "invalid semver version {:?} in \"olm.package\" property for bundle {:?}: {e}",
                s("version"),
                b.name
            )
        })?;
        let mut release = parse_release(s("release")).map_err(|e| {
            format!(
                "invalid release {:?} in \"olm.package\" property for bundle {:?}: {e}",
                s("release"),
                b.name
            )
        })?;
        if release.is_none() && !version.build.is_empty() && uses_substitutes_for(b) {
            release = parse_release(version.build.as_str()).map_err(|e| {
                format!(
                    "unable to convert build metadata to release for bundle {:?}: {e}",
                    b.name
                )
            })?;
            version.build = semver::BuildMetadata::EMPTY;
        }
        Ok(VersionRelease { version, release })
    }

    /// Version first (semver precedence), then release; a release is
    /// greater than none.
    pub fn compare(&self, other: &VersionRelease) -> std::cmp::Ordering {
        range::compare(&self.version, &other.version).then_with(|| {
            match (&self.release, &other.release) {
                (None, None) => std::cmp::Ordering::Equal,
                (None, Some(_)) => std::cmp::Ordering::Less,
                (Some(_), None) => std::cmp::Ordering::Greater,
                (Some(a), Some(b)) => a.cmp(b),
            }
        })
    }
}

/// opm's `NewRelease`: empty is none; else at most 20 characters of
/// dot-separated pre-release identifiers.
fn parse_release(text: &str) -> Result<Option<semver::Prerelease>, Error> {
    if text.is_empty() {
        return Ok(None);
    }
    if text.len() > 20 {
        return Err(Error::Template(format!(
            "invalid release {text:?}: exceeds maximum length of 20 characters"
        )));
    }
    semver::Prerelease::new(text)
        .map(Some)
        .map_err(|e| Error::Template(format!("invalid release {text:?}: {e}")))
}

/// Whether a bundle's CSV has an `olm.substitutesFor` annotation (from its
/// CSV JSON, else its `olm.csv.metadata` property).
fn uses_substitutes_for(b: &fbc::Bundle) -> bool {
    let has = |annotations: Option<&Value>| {
        annotations
            .and_then(|a| a.get("olm.substitutesFor"))
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    if let Some(csv) = b
        .csv_json
        .as_deref()
        .and_then(|j| serde_json::from_str::<Value>(j).ok())
    {
        return has(csv.pointer("/metadata/annotations"));
    }
    b.properties
        .iter()
        .filter(|p| p.kind == "olm.csv.metadata")
        .any(|p| has(p.field("annotations")))
}

/// `olm.template.substitutes` (operator-registry `alpha/template/substitutes`
/// at v1.73.0): the entries are a whole catalog, which must be valid FBC;
/// each substitution renders its bundle image and puts it in the place of
/// the base bundle in every channel: the new entry takes the base's
/// replaces, skips and skipRange and skips the base, the base keeps no
/// edges, and entries that replaced (skipped) the base now replace (skip)
/// the new bundle. The new bundle's version and release must be above the
/// base's, and no base or image may be used twice.
pub fn render_substitutes(
    text: &str,
    path: &Path,
    render: &BundleRenderer,
) -> Result<DeclarativeConfig, Error> {
    let mut root = parse_template(text, path, Kind::Substitutes, SUBSTITUTES)
        .map_err(|e| Error::Template(format!("render: unable to parse template: {e}")))?
        .root;
    let substitutions: Vec<Substitution> = match root.get("substitutions") {
        None => Vec::new(),
        Some(n) => crate::bundle::csv::decode(n).map_err(|e| {
            format!(
                "render: unable to parse template: {}: substitutions{}: {}",
                place(path, n.locate(&e.segments())),
                if e.path == "." {
                    String::new()
                } else {
                    format!(".{}", e.path)
                },
                e.message
            )
        })?,
    };
    let mut cfg = DeclarativeConfig::default();
    for (i, e) in read_entries(&mut root, path)? {
        e.push(&mut cfg).map_err(|m| {
            format!(
                "render: unable to create declarative config from entries: {}: entries[{i}]: {m}",
                place(path, root.locate(&crate::path!["entries", i]))
            )
        })?;
    }
    let invalid = |cfg: &DeclarativeConfig| -> Option<String> {
        let errs: Vec<String> = crate::fbc::validate::validate(cfg)
            .into_iter()
            .filter(|f| f.level == crate::diag::Level::Error)
            .map(|f| f.message)
            .collect();
        (!errs.is_empty()).then(|| errs.join("; "))
    };
    if let Some(e) = invalid(&cfg) {
        return Err(Error::Template(format!(
            "render: entries are not valid FBC: {e}"
        )));
    }
    let mut seen_bases: BTreeSet<String> = BTreeSet::new();
    let mut seen_names: BTreeMap<String, String> = BTreeMap::new();
    for sub in &substitutions {
        if !seen_bases.insert(sub.base.clone()) {
            return Err(Error::Template(format!(
                "render: cannot reuse the same substitution base {:?}",
                sub.base
            )));
        }
        if let Some(other) = seen_names.get(&sub.name) {
            return Err(Error::Template(format!(
                "render: cannot reuse the same substitution {:?} for different bases ({other:?} and {:?})",
                sub.name, sub.base
            )));
        }
        seen_names.insert(sub.name.clone(), sub.base.clone());
        substitute(&mut cfg, sub, render).map_err(|e| {
            format!(
                "render: error processing substitution {:?} -> {:?}: {e}",
                sub.base, sub.name
            )
        })?;
        if let Some(e) = invalid(&cfg) {
            return Err(Error::Template(format!(
                "render: error processing substitution {:?} -> {:?}: resulting config is not valid FBC: {e}",
                sub.base, sub.name
            )));
        }
    }
    Ok(cfg)
}

/// One substitution (opm's `validateSubstitution` and `processSubstitution`).
fn substitute(
    cfg: &mut DeclarativeConfig,
    sub: &Substitution,
    render: &BundleRenderer,
) -> Result<(), Error> {
    if sub.name.is_empty() {
        return Err("substitution name cannot be empty".into());
    }
    if sub.base.is_empty() {
        return Err("substitution base cannot be empty".into());
    }
    if sub.name == sub.base {
        return Err("substitution name and base cannot be the same".into());
    }
    let new = render(&sub.name).map_err(|e| {
        Error::Render(format!(
            "failed to render bundle image reference {:?}: {e}",
            sub.name
        ))
    })?;
    let new_vr = VersionRelease::of(&new).map_err(|e| {
        format!(
            "failed to get VersionRelease for substitute bundle {:?}: {e}",
            sub.name
        )
    })?;
    let base = cfg
        .bundles
        .iter()
        .find(|b| b.name == sub.base)
        .ok_or_else(|| {
            Error::Template(format!(
                "base bundle {:?} does not exist in catalog",
                sub.base
            ))
        })?;
    let base_vr = VersionRelease::of(base).map_err(|e| {
        format!(
            "failed to get VersionRelease for base bundle {:?}: {e}",
            sub.base
        )
    })?;
    if base_vr.compare(&new_vr) != std::cmp::Ordering::Less {
        return Err(Error::Template(format!(
            "base bundle {:?} is not less than substitute bundle {:?}",
            sub.base, sub.name
        )));
    }
    for ch in &mut cfg.channels {
        let at: Vec<usize> = (0..ch.entries.len())
            .filter(|&j| ch.entries[j].name == sub.base)
            .collect();
        for &j in at.iter().rev() {
            let old = &mut ch.entries[j];
            let mut skips = std::mem::take(&mut old.skips);
            skips.push(sub.base.clone());
            let entry = ChannelEntry {
                name: new.name.clone(),
                replaces: std::mem::take(&mut old.replaces),
                skips,
                skip_range: std::mem::take(&mut old.skip_range),
            };
            ch.entries.push(entry);
        }
        let original = ch.entries.len() - at.len();
        for e in &mut ch.entries[..original] {
            if e.replaces == sub.base {
                e.replaces = new.name.clone();
                e.skips.push(sub.base.clone());
            } else if e.skips.contains(&sub.base) {
                e.skips.push(new.name.clone());
                e.skips.retain(|s| *s != sub.base);
            }
        }
    }
    cfg.bundles.push(new);
    Ok(())
}

/// The `olm.semver` template document.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
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
pub struct SemverChannelBundles {
    /// Bundle images.
    #[serde(default)]
    pub bundles: Vec<SemverBundle>,
}

/// One bundle of a semver template.
#[derive(Clone, Debug, Default, serde::Deserialize)]
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

/// Parses and defaults a semver template as opm's `readFile` does
/// (`yaml.UnmarshalStrict`: unknown fields and duplicate keys are errors,
/// field names match regardless of case). Errors name file, line and field.
pub fn parse_semver(text: &str, path: &Path) -> Result<SemverTemplate, Error> {
    let doc = parse_doc(text, path, "")?;
    if let Some(dup) = doc.duplicate_keys.first() {
        return Err(Error::Template(format!(
            "{}: key `{}` appears twice in one mapping (first at line {}); opm reads templates strictly and refuses that",
            place(path, dup.second),
            dup.key,
            dup.first.line
        )));
    }
    let mut root = doc.root;
    fold(&mut root, SEMVER);
    if let Some((segs, fields)) = unknown_field(&root, SEMVER, &mut Vec::new()) {
        let known: Vec<String> = fields.iter().map(|f| format!("`{}`", f.0)).collect();
        let key = match segs.last() {
            Some(crate::yaml::Seg::Key(k)) => k.as_str(),
            _ => "",
        };
        let known = match known.len() {
            1 => known.join(""),
            _ => format!("one of {}", known.join(", ")),
        };
        return Err(Error::Template(format!(
            "{}: {}: json: unknown field {key:?} (known: {known})",
            place(path, root.locate(&segs)),
            path_text(&segs),
        )));
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
        return Err(Error::Template(format!(
            "{}: input file has unknown schema, should be {SCHEMA_SEMVER:?}",
            path.display()
        )));
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
        other => return Err(Error::Template(format!("unknown DefaultChannelTypePreference: {other:?}\nValid values are 'major' or 'minor'"))),
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
) -> Result<DeclarativeConfig, Error> {
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
                return Err(Error::Template(format!(
                    "{POST_PROCESS}bundle {:?} has multiple \"olm.package\" properties, expected exactly 1",
                    r.name
                )));
            }
            let pname = pp[0].str_field("packageName");
            let raw = pp[0].str_field("version");
            let v = Version::parse(raw).map_err(|e| {
                format!(
                    "{POST_PROCESS}bundle {:?} has invalid version {raw:?}: {e}",
                    r.name
                )
            })?;
            if pkg.is_empty() {
                pkg = pname.to_string();
            } else if pname != pkg {
                return Err(Error::Template(format!(
                    "{POST_PROCESS}bundle {pname:?} does not belong to this package: {pkg:?}"
                )));
            }
            if entries.insert(r.name.clone(), v).is_some() {
                return Err(Error::Template(format!(
                    "{POST_PROCESS}duplicate bundle name {:?}",
                    r.name
                )));
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
            return Err(Error::Template(format!(
                "{POST_PROCESS}encountered bundle versions which differ only by build metadata, which cannot be ordered: {agg}"
            )));
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
    populate_package_metadata(&mut cfg);
    Ok(cfg)
}

/// opm v1.73.0's `populatePackageMetadata` (operator-registry #1933): the
/// package's `description` and `icon` are the CSV's `spec.description` and
/// first `spec.icon` of the default channel's head (its last entry, the
/// highest version). Whatever does not read as opm reads it (no CSV, a
/// description that is not a string, icons whose `base64data` Go's base64
/// decoding refuses) leaves the field unset, as in opm.
pub fn populate_package_metadata(cfg: &mut DeclarativeConfig) {
    let Some(pkg) = cfg.packages.first() else {
        return;
    };
    let Some(head) = cfg
        .channels
        .iter()
        .find(|c| c.name == pkg.default_channel)
        .and_then(|c| c.entries.last())
    else {
        return;
    };
    let Some(csv) = cfg
        .bundles
        .iter()
        .find(|b| b.name == head.name)
        .and_then(|b| b.csv_json.as_deref())
        .and_then(|j| serde_json::from_str::<Value>(j).ok())
    else {
        return;
    };
    let Some(spec) = csv.get("spec").filter(|s| s.is_object()) else {
        return;
    };
    let description = match spec.get("description") {
        Some(Value::String(d)) => d.clone(),
        _ => String::new(),
    };
    let icon = spec.get("icon").and_then(first_icon);
    let pkg = &mut cfg.packages[0];
    if !description.is_empty() {
        pkg.description = description;
    }
    if let Some(icon) = icon {
        pkg.icon = Some(icon);
    }
}

/// The first icon of a CSV's `spec.icon` as opm's `GetIcons` decodes the
/// list (`[]Icon` with `base64data []byte`: every item's data must be
/// base64 as Go's decoder reads it, newlines ignored), its data written
/// back canonically. `None` when the list does not decode or is empty.
fn first_icon(icons: &Value) -> Option<fbc::Icon> {
    use base64::Engine as _;
    let items = match icons {
        Value::Array(a) => a,
        _ => return None,
    };
    let mut out = Vec::new();
    for item in items {
        let obj = match item {
            Value::Object(o) => o,
            Value::Null => {
                out.push(fbc::Icon::default());
                continue;
            }
            _ => return None,
        };
        // Field names match as Go's decoder matches them; `base64data` is a
        // []byte, which a null sets to nil.
        let data = match crate::gojson::map_struct_field_nullable(obj, "base64data") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => crate::gojson::decode_go_base64(s).ok()?,
            Some(_) => return None,
        };
        let mediatype = match crate::gojson::map_struct_field(obj, "mediatype") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return None,
        };
        out.push(fbc::Icon {
            base64data: base64::engine::general_purpose::STANDARD.encode(data),
            mediatype,
        });
    }
    out.into_iter().next()
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
pub fn write(cfg: &DeclarativeConfig, format: OutputFormat) -> Result<String, Error> {
    let mut buf = Vec::new();
    crate::fbc::write::write(cfg, format, &mut buf).map_err(|e| Error::Template(e.to_string()))?;
    String::from_utf8(buf).map_err(|e| Error::Template(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags() {
        // A tag and a version directory may differ by a leading `v`.
        let pkg = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/graph/tree/pkg-capital");
        assert_eq!(
            resolve_image("r/capital:v1.0.0", &pkg).ok(),
            Some(pkg.join("1.0.0"))
        );
        assert_eq!(
            resolve_image("r/capital:1.0.0", &pkg).ok(),
            Some(pkg.join("1.0.0"))
        );
        assert!(resolve_image("r/capital:v..", &pkg).is_err());
        assert!(resolve_image("r/capital:9.9.9", &pkg).is_err());
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
                "t.yaml:5:10: stable.bundles[0].tag: json: unknown field \"tag\" (known: `image`)",
            ),
            (
                "schema: olm.semver\nfast: {}\nfast: {}\n",
                "t.yaml:3:1: key `fast` appears twice in one mapping (first at line 2)",
            ),
            ("schema: olm.basic\n", "t.yaml: input file has unknown schema"),
        ] {
            let e = parse_semver(text, p).expect_err(text);
            assert!(e.to_string().starts_with(want), "{text}: {e}");
        }
    }

    /// A renderer for images named `repo/a-v<version>`: bundle `a-v<version>`.
    fn fake(image: &str) -> Result<fbc::Bundle, Error> {
        let name = image.rsplit('/').next().unwrap_or(image).to_string();
        let version = name.trim_start_matches("a-v").to_string();
        Ok(fbc::Bundle {
            schema: fbc::SCHEMA_BUNDLE.into(),
            name,
            package: "a".into(),
            image: image.into(),
            properties: vec![fbc::Property::new(
                "olm.package",
                serde_json::json!({"packageName": "a", "version": version}),
            )],
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

    /// operator-registry v1.73.0 `TestGenerateChannels` (edge-scoped
    /// linking after #1813; #1749: the previous minor's highest is replaced,
    /// never also skipped): every channel's entries, edges and the default.
    #[test]
    fn semver_linking_matches_upstream_generate_channels() {
        let versions = [
            "0.1.0",
            "0.1.1",
            "1.1.0",
            "1.2.1",
            "1.3.1",
            "2.1.0",
            "1.3.1-beta",
            "2.1.1",
            "2.3.1",
            "2.3.2",
            "3.1.0",
            "3.1.1",
            "1.3.1-alpha",
            "1.4.1",
            "1.4.1-beta1",
            "1.4.1-beta2",
        ];
        let render = |head: &str| {
            let mut text = format!("schema: olm.semver\n{head}stable:\n  bundles:\n");
            for v in versions {
                text.push_str(&format!("  - image: repo/a-v{v}\n"));
            }
            let cfg = render_semver(&text, Path::new("t.yaml"), &fake).expect("renders");
            let chans: Vec<String> = cfg
                .channels
                .iter()
                .map(|c| {
                    let es: Vec<String> = c
                        .entries
                        .iter()
                        .map(|e| format!("{}<{}{:?}", e.name, e.replaces, e.skips))
                        .collect();
                    format!("{}: {}", c.name, es.join(" "))
                })
                .collect();
            (cfg.packages[0].default_channel.clone(), chans)
        };
        let v1_major = "stable-v1: a-v1.1.0<[] a-v1.2.1<a-v1.1.0[] a-v1.3.1-alpha<[] a-v1.3.1-beta<[] \
a-v1.3.1<a-v1.2.1[\"a-v1.1.0\", \"a-v1.3.1-alpha\", \"a-v1.3.1-beta\"] a-v1.4.1-beta1<[] a-v1.4.1-beta2<[] \
a-v1.4.1<a-v1.3.1[\"a-v1.1.0\", \"a-v1.2.1\", \"a-v1.3.1-alpha\", \"a-v1.3.1-beta\", \"a-v1.4.1-beta1\", \"a-v1.4.1-beta2\"]";
        let major = vec![
            "stable-v0: a-v0.1.0<[] a-v0.1.1<[\"a-v0.1.0\"]".to_string(),
            v1_major.to_string(),
            "stable-v2: a-v2.1.0<[] a-v2.1.1<[\"a-v2.1.0\"] a-v2.3.1<[] a-v2.3.2<a-v2.1.1[\"a-v2.1.0\", \"a-v2.3.1\"]".to_string(),
            "stable-v3: a-v3.1.0<[] a-v3.1.1<[\"a-v3.1.0\"]".to_string(),
        ];
        let minor = vec![
            "stable-v0.1: a-v0.1.0<[] a-v0.1.1<[\"a-v0.1.0\"]".to_string(),
            "stable-v1.1: a-v1.1.0<[]".to_string(),
            "stable-v1.2: a-v1.2.1<a-v1.1.0[]".to_string(),
            "stable-v1.3: a-v1.3.1-alpha<[] a-v1.3.1-beta<[] a-v1.3.1<a-v1.2.1[\"a-v1.1.0\", \"a-v1.3.1-alpha\", \"a-v1.3.1-beta\"]".to_string(),
            "stable-v1.4: a-v1.4.1-beta1<[] a-v1.4.1-beta2<[] a-v1.4.1<a-v1.3.1[\"a-v1.1.0\", \"a-v1.2.1\", \"a-v1.3.1-alpha\", \"a-v1.3.1-beta\", \"a-v1.4.1-beta1\", \"a-v1.4.1-beta2\"]".to_string(),
            "stable-v2.1: a-v2.1.0<[] a-v2.1.1<[\"a-v2.1.0\"]".to_string(),
            "stable-v2.3: a-v2.3.1<[] a-v2.3.2<a-v2.1.1[\"a-v2.1.0\", \"a-v2.3.1\"]".to_string(),
            "stable-v3.1: a-v3.1.0<[] a-v3.1.1<[\"a-v3.1.0\"]".to_string(),
        ];
        assert_eq!(
            render("generateMinorChannels: true\n"),
            ("stable-v3.1".to_string(), minor.clone())
        );
        assert_eq!(
            render("generateMajorChannels: true\n"),
            ("stable-v3".to_string(), major.clone())
        );
        let mut both = [minor, major].concat();
        both.sort_by(|a, b| a.split(": ").next().cmp(&b.split(": ").next()));
        assert_eq!(
            render("generateMajorChannels: true\ngenerateMinorChannels: true\ndefaultChannelTypePreference: major\n"),
            ("stable-v3".to_string(), both)
        );
    }
}
