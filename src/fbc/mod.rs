//! File-based catalogs (FBC): the declarative config of operator-registry's
//! `alpha/declcfg`, with the schemas `olm.package`, `olm.channel`,
//! `olm.bundle` and `olm.deprecations`. Objects of other schemas are kept as
//! they are ([`DeclarativeConfig::others`]).
//!
//! Field order in these structs is the order in which opm writes the fields
//! (Go struct order), so serializing them reproduces `opm render` output.

pub mod diff;
pub mod filter;
pub mod from_bundle;
pub mod groups;
pub mod ignore;
mod located;
pub mod migrate;
pub mod text;
pub mod validate;
pub mod write;

pub use located::{ObjectSource, Sources};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Schema name of package objects.
pub const SCHEMA_PACKAGE: &str = "olm.package";
/// Schema name of channel objects.
pub const SCHEMA_CHANNEL: &str = "olm.channel";
/// Schema name of bundle objects.
pub const SCHEMA_BUNDLE: &str = "olm.bundle";
/// Schema name of deprecation objects.
pub const SCHEMA_DEPRECATIONS: &str = "olm.deprecations";

/// A whole catalog, or part of one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeclarativeConfig {
    /// `olm.package` objects.
    pub packages: Vec<Package>,
    /// `olm.channel` objects.
    pub channels: Vec<Channel>,
    /// `olm.bundle` objects.
    pub bundles: Vec<Bundle>,
    /// `olm.deprecations` objects.
    pub deprecations: Vec<Deprecation>,
    /// Objects of any other schema, as read.
    pub others: Vec<Value>,
}

/// `olm.package`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    /// Always `olm.package`.
    #[serde(default, deserialize_with = "null_default")]
    pub schema: String,
    /// Package name.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// Default channel.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub default_channel: String,
    /// Package icon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<Icon>,
    /// Package description.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub description: String,
    /// Properties.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub properties: Vec<Property>,
}

/// An icon.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Icon {
    /// Base64 image data.
    #[serde(default, deserialize_with = "null_default")]
    pub base64data: String,
    /// Media type, e.g. `image/svg+xml`.
    #[serde(default, deserialize_with = "null_default")]
    pub mediatype: String,
}

/// `olm.channel`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Channel {
    /// Always `olm.channel`.
    #[serde(default, deserialize_with = "null_default")]
    pub schema: String,
    /// Channel name.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// Package name.
    #[serde(default, deserialize_with = "null_default")]
    pub package: String,
    /// The channel's entries.
    #[serde(default, deserialize_with = "null_default")]
    pub entries: Vec<ChannelEntry>,
    /// Properties.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub properties: Vec<Property>,
}

/// One entry of a channel: a bundle and the edges into it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelEntry {
    /// Bundle name (the CSV name).
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// The bundle this one replaces.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub replaces: String,
    /// Bundles this one skips.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub skips: Vec<String>,
    /// Range of versions this one skips.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub skip_range: String,
}

/// `olm.bundle`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bundle {
    /// Always `olm.bundle`.
    #[serde(default, deserialize_with = "null_default")]
    pub schema: String,
    /// Bundle name (the CSV name).
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// Package name.
    #[serde(default, deserialize_with = "null_default")]
    pub package: String,
    /// Bundle image reference.
    #[serde(default, deserialize_with = "null_default")]
    pub image: String,
    /// Properties (`olm.package`, `olm.gvk`, `olm.bundle.object`, `olm.csv.metadata`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<Property>,
    /// Related images.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub related_images: Vec<RelatedImage>,
    /// The CSV as JSON, when known (not serialized: opm keeps it out of FBC too).
    #[serde(skip)]
    pub csv_json: Option<String>,
    /// Every manifest as JSON, when known (not serialized).
    #[serde(skip)]
    pub objects: Vec<String>,
}

/// A typed property: `{"type": ..., "value": ...}`.
#[derive(Clone, Debug, Deserialize)]
pub struct Property {
    /// Property type, e.g. `olm.package`. Missing or `null` is `""`, as Go
    /// decodes it: opm keeps such a property as one of another type.
    #[serde(rename = "type", default, deserialize_with = "null_default")]
    pub kind: String,
    /// Property value, kept as JSON (keys sorted: what every reader sees).
    pub value: Value,
    /// How opm writes the value when its keys are not in sorted order: a
    /// value opm built from a Go struct (an `olm.package` with a release,
    /// `olm.csv.metadata`) or kept as the bytes it read (a CSV's
    /// `olm.properties` annotation, an index's `properties` table). A value
    /// read from a catalog file has none: opm's loader sorts every key.
    #[serde(skip)]
    written: Option<Box<crate::gojson::Ordered>>,
}

impl Serialize for Property {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Property", 2)?;
        st.serialize_field("type", &self.kind)?;
        match &self.written {
            Some(w) => st.serialize_field("value", w)?,
            None => st.serialize_field("value", &self.value)?,
        }
        st.end()
    }
}

impl PartialEq for Property {
    /// Properties are equal when their types and values are; the order in
    /// which a value's keys are written is not part of it.
    fn eq(&self, other: &Property) -> bool {
        self.kind == other.kind && self.value == other.value
    }
}

impl Property {
    /// A property whose value opm writes with its keys sorted.
    pub fn new(kind: impl Into<String>, value: Value) -> Property {
        Property {
            kind: kind.into(),
            value,
            written: None,
        }
    }

    /// A property whose value opm keeps as the JSON text it read (`text`,
    /// parsed as `value`) and writes in that text's key order.
    pub fn from_text(kind: impl Into<String>, text: &str, value: Value) -> Property {
        let written = crate::gojson::Ordered::parse_unless_sorted(text).map(Box::new);
        Property {
            kind: kind.into(),
            value,
            written,
        }
    }

    /// A property whose value opm builds from a Go value of type `ty` and
    /// writes in that type's field order.
    pub fn shaped(kind: impl Into<String>, value: Value, ty: &crate::gojson::GoType) -> Property {
        let ordered = crate::gojson::Ordered::shaped(&value, ty);
        let written = (!ordered.is_sorted()).then(|| Box::new(ordered));
        Property {
            kind: kind.into(),
            value,
            written,
        }
    }

    /// The field `name` of the value as opm reads it: its typed parse
    /// (`property.Parse`) decodes values with Go's `encoding/json`, which
    /// matches field names regardless of case ([`crate::gojson::struct_field`];
    /// `{"PackageName": "etcd"}` is an `olm.package` of package `etcd`).
    pub fn field(&self, name: &str) -> Option<&Value> {
        crate::gojson::struct_field(&self.value, name)
    }

    /// [`Property::field`] as a string; missing, `null` or not a string is
    /// `""` (Go's zero value).
    pub fn str_field(&self, name: &str) -> &str {
        crate::gojson::struct_str(&self.value, name)
    }
}

/// A related image.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelatedImage {
    /// Name, may be empty.
    #[serde(default, deserialize_with = "null_default")]
    pub name: String,
    /// Image reference.
    #[serde(default, deserialize_with = "null_default")]
    pub image: String,
}

/// `olm.deprecations`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Deprecation {
    /// Always `olm.deprecations`.
    #[serde(default, deserialize_with = "null_default")]
    pub schema: String,
    /// Package name.
    #[serde(default, deserialize_with = "null_default")]
    pub package: String,
    /// What is deprecated; `entries: null` (what Go writes for an empty
    /// list) is no entries.
    #[serde(default, deserialize_with = "null_default")]
    pub entries: Vec<DeprecationEntry>,
}

/// One deprecated package, channel or bundle.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeprecationEntry {
    /// What the entry refers to.
    #[serde(default, deserialize_with = "null_default")]
    pub reference: PackageScopedReference,
    /// Message shown to users.
    #[serde(default, deserialize_with = "null_default")]
    pub message: String,
}

/// A reference inside a package: schema and (except for the package) name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageScopedReference {
    /// `olm.package`, `olm.channel` or `olm.bundle`.
    #[serde(default, deserialize_with = "null_default")]
    pub schema: String,
    /// Name of the channel or bundle; empty for the package.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub name: String,
}

/// A field that Go's `encoding/json` leaves at its zero value when it is
/// missing or `null` (opm decodes every FBC object that way: an object
/// without a `name`, `entries: null`).
fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

impl Channel {
    /// The channel's heads: entries that no other entry of it replaces or
    /// skips, by name (a valid channel has exactly one).
    pub fn heads(&self) -> Vec<&str> {
        let names: std::collections::BTreeSet<&str> =
            self.entries.iter().map(|e| e.name.as_str()).collect();
        let mut pointed = std::collections::BTreeSet::new();
        for e in &self.entries {
            for t in std::iter::once(&e.replaces).chain(&e.skips) {
                if names.contains(t.as_str()) {
                    pointed.insert(t.as_str());
                }
            }
        }
        names.difference(&pointed).copied().collect()
    }
}

/// Why a file-based catalog could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FbcError {
    /// An I/O error.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: std::path::PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A syntax or schema error in one object.
    #[error("{path}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        path: std::path::PathBuf,
        /// 1-based line of the object (0 if unknown).
        line: u32,
        /// 1-based column (0 if unknown).
        column: u32,
        /// What is wrong.
        message: String,
    },
    /// A catalog file larger than [`text::MAX_CATALOG_FILE_BYTES`], refused
    /// before it is read.
    #[error("{}: {}", path.display(), text::too_large(*size, *limit))]
    TooLarge {
        /// The file.
        path: std::path::PathBuf,
        /// Its size (at least this).
        size: u64,
        /// [`text::MAX_CATALOG_FILE_BYTES`].
        limit: u64,
    },
    /// Writing a catalog to a stream failed.
    #[error("writing the catalog")]
    Write(#[source] std::io::Error),
    /// A package name that cannot be a directory of `write::write_dir`.
    #[error("package name {0:?} cannot be a directory name")]
    UnsafePackageName(String),
    /// An object could not be encoded as JSON.
    #[error("encoding the catalog as JSON: {0}")]
    Encode(#[from] serde_json::Error),
    /// An object the catalog cannot hold: no `schema`, or a known schema's
    /// object that does not decode.
    #[error("{0}")]
    InvalidObject(String),
    /// A migration level opm v1.73.0 does not know.
    #[error("unknown migration level {level:?} (known: {known})")]
    UnknownMigrationLevel {
        /// The level asked for.
        level: String,
        /// The levels there are, comma-separated.
        known: String,
    },
    /// A bundle a migration cannot change (its CSV object is unreadable).
    #[error("{0}")]
    Migration(String),
    /// A bundle directory opm refuses to render as an `olm.bundle` (no CSV,
    /// no package annotation, an undecodable property); the message names
    /// the file.
    #[error("{0}")]
    Bundle(String),
}

impl DeclarativeConfig {
    /// Adds one FBC object, dispatching on its `schema`, as opm's loader
    /// does (`alpha/declcfg`, `Meta.UnmarshalJSON` and `addMeta`): the
    /// object must be a mapping whose `schema` is set; `schema`, `package`
    /// and `name`, where present, must be strings, and no two keys may
    /// differ only in case. Objects of other schemas are kept as they are,
    /// with or without a name.
    pub fn push_object(&mut self, mut obj: Value) -> Result<(), FbcError> {
        check_meta(&obj)?;
        // opm re-encodes every object from a map[string]interface{}
        // (`Meta.UnmarshalJSON`): its numbers are float64 from here on.
        crate::gojson::numbers_as_floats(&mut obj);
        go_field_names(&mut obj);
        let schema = obj.get("schema").and_then(Value::as_str).unwrap_or("");
        if schema.is_empty() {
            return Err(FbcError::InvalidObject(
                "object is missing root schema field".to_string(),
            ));
        }
        let schema = schema.to_string();
        let err =
            |e: serde_json::Error| FbcError::InvalidObject(format!("invalid {schema} object: {e}"));
        match schema.as_str() {
            SCHEMA_PACKAGE => self
                .packages
                .push(serde_json::from_value(obj).map_err(err)?),
            SCHEMA_CHANNEL => self
                .channels
                .push(serde_json::from_value(obj).map_err(err)?),
            SCHEMA_BUNDLE => self.bundles.push(serde_json::from_value(obj).map_err(err)?),
            SCHEMA_DEPRECATIONS => self
                .deprecations
                .push(serde_json::from_value(obj).map_err(err)?),
            _ => self.others.push(obj),
        }
        Ok(())
    }

    /// Parses a stream of FBC objects (YAML documents or concatenated JSON
    /// objects, which parse as YAML too) from one file's text.
    pub fn parse_str(&mut self, text: &str, path: &std::path::Path) -> Result<(), FbcError> {
        for_each_object(text, path, |obj| self.push_object(obj))
    }

    /// Reads every `.yaml`, `.yml` and `.json` file under `dir` (recursively,
    /// in path order), as `opm serve` and `opm validate` do. A single file is
    /// read as it is.
    pub fn load_path(path: &std::path::Path) -> Result<DeclarativeConfig, FbcError> {
        DeclarativeConfig::load_files(catalog_files(path)?)
    }

    /// Reads the given catalog files, in the order given (one of the
    /// groups of [`groups::package_groups`], say).
    pub fn load_files(
        files: impl IntoIterator<Item = std::path::PathBuf>,
    ) -> Result<DeclarativeConfig, FbcError> {
        let mut cfg = DeclarativeConfig::default();
        for f in files {
            let text = read_catalog_file(&f)?;
            cfg.parse_str(&text, &f)
                .map_err(|e| not_content_hint(e, &f))?;
        }
        Ok(cfg)
    }
}

/// `e` with a hint when the file it is about is not named as JSON or YAML:
/// such a file is catalog content to opm unless an `.indexignore`
/// excludes it.
pub(crate) fn not_content_hint(e: FbcError, file: &std::path::Path) -> FbcError {
    let ext = file.extension().and_then(|x| x.to_str()).unwrap_or("");
    match e {
        FbcError::Invalid {
            path,
            line,
            column,
            message,
        } if !matches!(ext, "json" | "yaml" | "yml") && !message.contains(".indexignore") => {
            FbcError::Invalid {
                path,
                line,
                column,
                message: format!(
                    "{message} (every file of a catalog is JSON or YAML content unless an .indexignore excludes it)"
                ),
            }
        }
        e => e,
    }
}

/// Where the JSON object read from `text[before..after]` starts (after
/// the whitespace before it).
pub(crate) fn json_object_start(
    text: &str,
    before: usize,
    after: usize,
    cursor: &mut crate::yaml::PositionCursor<'_>,
) -> crate::yaml::Span {
    let slice = &text[before..after];
    let start = before + slice.len() - slice.trim_start().len();
    cursor.position(start)
}

/// What kind of JSON value `v` is, for messages.
fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The Go types of opm v1.73.0's `declcfg` objects (`alpha/declcfg/declcfg.go`),
/// fields in their declaration order: the JSON names a key is matched
/// against, and the types their values decode into.
pub mod go_types {
    use crate::gojson::GoType::{self, *};

    /// `property.Property`.
    pub const PROPERTY: GoType = Struct(&[("type", Str), ("value", Any)]);
    /// `declcfg.Icon`.
    pub const ICON: GoType = Struct(&[("base64data", Bytes), ("mediatype", Str)]);
    /// `declcfg.ChannelEntry`.
    pub const CHANNEL_ENTRY: GoType = Struct(&[
        ("name", Str),
        ("replaces", Str),
        ("skips", Slice(&Str)),
        ("skipRange", Str),
    ]);
    /// `declcfg.RelatedImage`.
    pub const RELATED_IMAGE: GoType = Struct(&[("name", Str), ("image", Str)]);
    /// `declcfg.PackageScopedReference`.
    pub const PACKAGE_SCOPED_REFERENCE: GoType = Struct(&[("schema", Str), ("name", Str)]);
    /// `declcfg.DeprecationEntry`.
    pub const DEPRECATION_ENTRY: GoType =
        Struct(&[("reference", PACKAGE_SCOPED_REFERENCE), ("message", Str)]);
    /// `declcfg.Package`.
    pub const PACKAGE: GoType = Struct(&[
        ("schema", Str),
        ("name", Str),
        ("defaultChannel", Str),
        ("icon", ICON),
        ("description", Str),
        ("properties", Slice(&PROPERTY)),
    ]);
    /// `declcfg.Channel`.
    pub const CHANNEL: GoType = Struct(&[
        ("schema", Str),
        ("name", Str),
        ("package", Str),
        ("entries", Slice(&CHANNEL_ENTRY)),
        ("properties", Slice(&PROPERTY)),
    ]);
    /// `declcfg.Bundle` (its JSON fields).
    pub const BUNDLE: GoType = Struct(&[
        ("schema", Str),
        ("name", Str),
        ("package", Str),
        ("image", Str),
        ("properties", Slice(&PROPERTY)),
        ("relatedImages", Slice(&RELATED_IMAGE)),
    ]);
    /// `declcfg.Deprecation`.
    pub const DEPRECATION: GoType = Struct(&[
        ("schema", Str),
        ("package", Str),
        ("entries", Slice(&DEPRECATION_ENTRY)),
    ]);
}

/// Go's `encoding/json` fills a struct field from the key spelled as its
/// JSON name or, failing that, from one equal to it regardless of case
/// (opm keeps this for the upper-camel-case examples of its docs:
/// `DefaultChannel:`, `Entries:`); serde matches names exactly. This
/// renames such keys of an object of a known schema, and of its nested
/// objects, to the model's spelling before it is decoded. A key spelled
/// exactly wins over a differently cased one.
fn go_field_names(obj: &mut Value) {
    let schema = crate::gojson::struct_field(obj, "schema").and_then(Value::as_str);
    let ty = match schema {
        Some(SCHEMA_PACKAGE) => &go_types::PACKAGE,
        Some(SCHEMA_CHANNEL) => &go_types::CHANNEL,
        Some(SCHEMA_BUNDLE) => &go_types::BUNDLE,
        Some(SCHEMA_DEPRECATIONS) => &go_types::DEPRECATION,
        _ => return,
    };
    canonical_keys(obj, ty);
}

fn canonical_keys(v: &mut Value, ty: &crate::gojson::GoType) {
    use crate::gojson::GoType;
    match (ty, v) {
        (GoType::Slice(item), Value::Array(items)) => {
            items.iter_mut().for_each(|i| canonical_keys(i, item))
        }
        (GoType::Struct(fields), Value::Object(map)) => {
            let renames: Vec<(String, &'static str)> = map
                .keys()
                .filter(|k| !fields.iter().any(|f| f.0 == k.as_str()))
                .filter_map(|k| {
                    fields
                        .iter()
                        .find(|f| f.0.eq_ignore_ascii_case(k))
                        .map(|f| (k.clone(), f.0))
                })
                .collect();
            for (from, to) in renames {
                if let Some(value) = map.remove(&from) {
                    map.entry(to.to_string()).or_insert(value);
                }
            }
            for (name, field_ty) in fields.iter() {
                if let Some(value) = map.get_mut(*name) {
                    canonical_keys(value, field_ty);
                }
            }
        }
        _ => {}
    }
}

/// Checks what opm's `Meta.UnmarshalJSON` checks of every FBC object: it
/// is a mapping, no two of its keys differ only in case, and `schema`,
/// `package` and `name` (matched regardless of case), where present, are
/// strings. A missing schema is the caller's business (opm's loader refuses
/// it; its template converter keeps the object).
pub fn check_meta(obj: &Value) -> Result<(), FbcError> {
    let Some(map) = obj.as_object() else {
        return Err(FbcError::InvalidObject(format!(
            "not a JSON or YAML object (a mapping) but {}",
            kind_of(obj)
        )));
    };
    // The schema, when it is a string, names the object in messages.
    let named = match obj.get("schema").and_then(Value::as_str) {
        Some(s) if !s.is_empty() => format!("invalid {s} object: "),
        _ => String::new(),
    };
    let mut folded: std::collections::BTreeMap<String, Vec<&str>> = Default::default();
    for k in map.keys() {
        folded.entry(k.to_lowercase()).or_default().push(k);
    }
    if let Some((f, keys)) = folded.iter().find(|(_, keys)| keys.len() > 1) {
        return Err(FbcError::InvalidObject(format!(
            "{named}duplicate keys for key {f:?}: {keys:?}"
        )));
    }
    for meta in ["schema", "package", "name"] {
        if let Some(keys) = folded.get(meta) {
            let v = &map[keys[0]];
            if !v.is_string() {
                return Err(FbcError::InvalidObject(format!(
                    "{named}expected value for key {:?} to be a string, got {}",
                    keys[0],
                    kind_of(v)
                )));
            }
        }
    }
    Ok(())
}

/// Calls `each` with every object of one file's text, in order: YAML
/// documents (empty ones skipped) or, when the text starts with `{`,
/// concatenated JSON objects, as opm's `YAMLOrJSONDecoder` reads them. An
/// error of `each` is reported at the object's position in `path`.
pub fn for_each_object(
    text: &str,
    path: &std::path::Path,
    mut each: impl FnMut(Value) -> Result<(), FbcError>,
) -> Result<(), FbcError> {
    let invalid = |line, column, message| FbcError::Invalid {
        path: path.to_path_buf(),
        line,
        column,
        message,
    };
    let is_json = text.trim_start().starts_with('{');
    if is_json {
        // A JSON stream: objects one after the other, not YAML documents.
        let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
        let mut cursor = crate::yaml::PositionCursor::new(text);
        loop {
            let before = stream.byte_offset();
            let Some(obj) = stream.next() else { break };
            let obj =
                obj.map_err(|e| invalid(e.line() as u32, e.column() as u32, e.to_string()))?;
            let at = json_object_start(text, before, stream.byte_offset(), &mut cursor);
            each(obj).map_err(|m| invalid(at.line, at.column, m.to_string()))?;
        }
        return Ok(());
    }
    let docs = crate::yaml::parse_documents(text)
        .map_err(|e| invalid(e.span.line, e.span.column, e.message))?;
    for doc in docs {
        if matches!(doc.root.value, crate::yaml::Value::Null) {
            continue;
        }
        let (line, column) = (doc.root.span.line, doc.root.span.column);
        each(doc.root.to_json()).map_err(|m| invalid(line, column, m.to_string()))?;
    }
    Ok(())
}

/// The files of a catalog: `path` itself if it is a file, else every file
/// under it, recursively, in path order, except `.indexignore` files and
/// the files they exclude ([`ignore`]), as opm v1.73.0 walks a catalog
/// (`alpha/declcfg/load.go`, `walkFiles`). Every other file is catalog
/// content: one that is neither JSON nor YAML fails to load. A symbolic
/// link to a file is read as the file; one to a directory is not walked.
pub fn catalog_files(path: &std::path::Path) -> Result<Vec<std::path::PathBuf>, FbcError> {
    let mut files = Vec::new();
    if path.is_file() {
        files.push(path.to_path_buf());
        return Ok(files);
    }
    let io = |e: walkdir::Error| FbcError::Io {
        path: e.path().unwrap_or(path).to_path_buf(),
        source: e.into(),
    };
    let mut ignore = ignore::IndexIgnore::default();
    let mut candidates = Vec::new();
    for entry in walkdir::WalkDir::new(path).sort_by_file_name() {
        let entry = entry.map_err(io)?;
        let p = entry.path();
        let link = entry.file_type().is_symlink();
        // A link to a directory is not walked into, as Go's fs.WalkDir does
        // not; opm then reads it as a file and fails, so it is an error
        // below unless .indexignore excludes it (a catalog image built from
        // the directory would otherwise ship files nothing validated).
        let linked_dir = link && p.is_dir();
        let is_file = entry.file_type().is_file() || (link && p.is_file());
        if !is_file && !linked_dir {
            continue;
        }
        if entry.file_name() == ignore::INDEX_IGNORE {
            let text = std::fs::read_to_string(p).map_err(|e| FbcError::Io {
                path: p.to_path_buf(),
                source: e,
            })?;
            let mut domain = ignore::IndexIgnore::components(path, p);
            domain.pop();
            ignore.add_file(&domain, &text);
            continue;
        }
        candidates.push((p.to_path_buf(), linked_dir));
    }
    for (p, linked_dir) in candidates {
        if ignore.excludes(&ignore::IndexIgnore::components(path, &p)) {
            continue;
        }
        if linked_dir {
            return Err(FbcError::Io {
                path: p,
                source: std::io::Error::other(
                    "a symbolic link to a directory: opm reads it as a file and fails (is a directory); \
                     copy the directory into the catalog, or list it in .indexignore",
                ),
            });
        }
        files.push(p);
    }
    Ok(files)
}

/// The text of one catalog file, read as [`text::TextCheck`] judges it: a
/// file larger than [`text::MAX_CATALOG_FILE_BYTES`] is an
/// [`FbcError::TooLarge`] before any of it is read; one that is not UTF-8
/// text or holds a control character is neither JSON nor YAML, an
/// [`FbcError::Invalid`] at its first bad byte, as opm fails to decode it,
/// and is read only up to there.
pub fn read_catalog_file(f: &std::path::Path) -> Result<String, FbcError> {
    use std::io::Read as _;
    /// Bytes read and checked at a time.
    const CHUNK: usize = 1 << 20;
    let io = |e| FbcError::Io {
        path: f.to_path_buf(),
        source: e,
    };
    let too_large = |size| FbcError::TooLarge {
        path: f.to_path_buf(),
        size,
        limit: text::MAX_CATALOG_FILE_BYTES,
    };
    let mut file = std::fs::File::open(f).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    if size > text::MAX_CATALOG_FILE_BYTES {
        return Err(too_large(size));
    }
    // The file's size and one byte to see its end: no reallocation, and
    // pages are touched only as they are read.
    let mut bytes = Vec::with_capacity(size as usize + 1);
    let mut check = text::TextCheck::default();
    loop {
        let start = bytes.len();
        bytes.resize(start + (bytes.capacity() - start).clamp(1, CHUNK), 0);
        let read = loop {
            match file.read(&mut bytes[start..]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => break r.map_err(io)?,
            }
        };
        bytes.truncate(start + read);
        if read == 0 {
            break;
        }
        // A file that grew while it was read.
        if bytes.len() as u64 > text::MAX_CATALOG_FILE_BYTES {
            return Err(too_large(bytes.len() as u64));
        }
        check.feed(&bytes[start..]).map_err(|e| not_text(f, e))?;
    }
    check.finish().map_err(|e| not_text(f, e))?;
    String::from_utf8(bytes).map_err(|_| {
        not_text(
            f,
            text::NotText {
                line: 1,
                column: 1,
                offset: 0,
                kind: text::NotTextKind::NotUtf8,
            },
        )
    })
}

/// The error for a catalog file that is not text.
pub(crate) fn not_text(path: &std::path::Path, e: text::NotText) -> FbcError {
    FbcError::Invalid {
        path: path.to_path_buf(),
        line: e.line,
        column: e.column,
        message: format!(
            "the file is neither JSON nor YAML ({e}); list it in an .indexignore if it is not catalog content"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_yaml_and_json_streams() {
        let mut cfg = DeclarativeConfig::default();
        cfg.parse_str(
            "---\nschema: olm.package\nname: p\ndefaultChannel: a\n---\nschema: olm.channel\nname: a\npackage: p\nentries:\n- name: p.v1\n  skipRange: '<1.0.0'\n",
            std::path::Path::new("x.yaml"),
        )
        .expect("yaml");
        cfg.parse_str(
            "{\"schema\":\"olm.bundle\",\"name\":\"p.v1\",\"package\":\"p\",\"image\":\"i\"}\n{\"schema\":\"x.other\"}",
            std::path::Path::new("x.json"),
        )
        .expect("json");
        assert_eq!(cfg.packages[0].default_channel, "a");
        assert_eq!(cfg.channels[0].entries[0].skip_range, "<1.0.0");
        assert_eq!(cfg.bundles[0].image, "i");
        assert_eq!(cfg.others.len(), 1);
        let e = cfg
            .parse_str(
                "schema: olm.channel\nname: c\nentries: 5\n",
                std::path::Path::new("bad.yaml"),
            )
            .expect_err("bad");
        assert!(
            e.to_string()
                .starts_with("bad.yaml:1:1: invalid olm.channel"),
            "{e}"
        );
    }
}
