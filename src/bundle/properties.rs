//! A bundle's properties and dependencies, derived once for every consumer:
//! the index's `properties`, `dependencies` and `api` rows, and the
//! `olm.bundle` properties of a rendered catalog (`fbc::from_bundle`).
//!
//! What opm v1.73.0 does (operator-registry `pkg/registry/parse.go`
//! `bundleParser`, `bundle.go` `ProvidedAPIs`/`RequiredAPIs`): the first
//! file of `metadata/` (by name, whatever it is called) with a non-empty
//! `properties` list gives the metadata properties, and likewise
//! `dependencies`; the bundle's property list is then, deduplicated and in
//! this order, the metadata properties, `olm.package` derived from the
//! annotations' package and the CSV's version and release, every property
//! of the CSV's `olm.properties` annotation, and one `olm.gvk` per
//! provided API. Provided APIs are every version in `spec.versions` of
//! every CRD of the bundle (served or not), plus `spec.version` of a
//! `v1beta1` CRD, plus the CSV's owned API services; required APIs are
//! the CSV's required CRDs (`<plural>.<group>` names) and API services.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::{ApiKey, Bundle, Csv, Gvk, Manifest, MetadataFile};

/// One property or dependency: its type and its value as the JSON text Go
/// writes for it (compact; metadata values with sorted keys, annotation
/// values as written).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RawProperty {
    /// The type, e.g. `olm.gvk`.
    pub kind: String,
    /// The value as JSON text.
    pub value: String,
}

impl RawProperty {
    /// The value parsed (JSON `null` if it does not parse).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.value).unwrap_or(Value::Null)
    }
}

/// What opm derives from a bundle for its properties (its parsed
/// `registry.Bundle`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BundleProperties {
    /// The package of `metadata/annotations.yaml`.
    pub package: String,
    /// The CSV's `spec.version`.
    pub version: String,
    /// The CSV's `spec.release` ([`csv_release`]).
    pub release: String,
    /// `registry.Bundle.Properties`: see the module documentation.
    pub properties: Vec<RawProperty>,
    /// `registry.Bundle.Dependencies`: the metadata dependencies.
    pub dependencies: Vec<RawProperty>,
    /// `Bundle.ProvidedAPIs`.
    pub provided: BTreeSet<ApiKey>,
    /// `Bundle.RequiredAPIs`.
    pub required: BTreeSet<ApiKey>,
    /// Why the CSV's `olm.properties` annotation is refused by opm's index
    /// loader (`FILE:LINE:COLUMN: …`), when it is. opm's bundle parser only
    /// warns: its properties are then left out of [`Self::properties`]
    /// when the annotation is not a JSON list of objects.
    pub annotation_error: Option<String>,
}

/// What opm's bundle parser refuses while deriving properties; the message
/// names the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PropertyError(pub String);

impl From<PropertyError> for String {
    fn from(e: PropertyError) -> Self {
        e.0
    }
}

impl From<String> for PropertyError {
    fn from(message: String) -> Self {
        PropertyError(message)
    }
}

impl BundleProperties {
    /// Derives the properties of `bundle`, whose CSV is `csv_manifest`
    /// (decoded as `csv`). Err for what opm's parser refuses: a
    /// `spec.release` of the wrong type, a required CRD name that is not
    /// `<plural>.<group>`.
    pub fn derive(
        bundle: &Bundle,
        csv_manifest: &Manifest,
        csv: &Csv,
    ) -> Result<BundleProperties, PropertyError> {
        let csv_file = csv_manifest.file.display_path.display();
        let package = bundle.package().unwrap_or("").to_string();
        let version = csv.spec.version.clone().unwrap_or_default();
        let release = csv_release(csv_manifest.json()).map_err(|e| format!("{csv_file}: {e}"))?;
        let provided = provided_apis(bundle, csv);
        let required = required_apis(csv).map_err(|e| format!("{csv_file}: {e}"))?;

        let files = metadata_files(bundle);
        let mut properties: Vec<RawProperty> = Vec::new();
        let mut push = |p: RawProperty| {
            if !properties.contains(&p) {
                properties.push(p);
            }
        };
        for p in first_list(&files, "properties") {
            push(p);
        }
        if !package.is_empty() {
            push(RawProperty {
                kind: PACKAGE_TYPE.into(),
                value: package_value_text(&package, &version, &release),
            });
        }
        let mut annotation_error = None;
        if let Some(text) = csv.annotation(PROPERTIES_ANNOTATION) {
            if let Err(why) = check_annotation_properties(text) {
                let at = csv_manifest.location(&crate::path![
                    "metadata",
                    "annotations",
                    PROPERTIES_ANNOTATION
                ]);
                annotation_error = Some(format!(
                    "{}:{}:{}: metadata.annotations[{PROPERTIES_ANNOTATION}] does not decode: {why}",
                    at.file.display(),
                    at.line,
                    at.column
                ));
            }
            for (kind, value) in annotation_properties(text).unwrap_or_default() {
                push(RawProperty { kind, value });
            }
        }
        for api in &provided {
            push(RawProperty {
                kind: GVK_TYPE.into(),
                value: api.gvk.to_json_string(),
            });
        }
        Ok(BundleProperties {
            package,
            version,
            release,
            properties,
            dependencies: first_list(&files, "dependencies"),
            provided,
            required,
            annotation_error,
        })
    }
}

/// The property type of a bundle's package and version.
pub const PACKAGE_TYPE: &str = "olm.package";
/// The property (and dependency) type of a group/version/kind.
pub const GVK_TYPE: &str = "olm.gvk";

/// The Go types opm decodes property values into (`property.Parse`) and
/// builds them from (`property.MustBuild*`).
pub mod go_types {
    use crate::gojson::GoType::{self, *};

    /// `property.Package`.
    pub const PACKAGE: GoType = Struct(&[("packageName", Str), ("version", Str), ("release", Str)]);
    /// `property.PackageRequired`.
    pub const PACKAGE_REQUIRED: GoType = Struct(&[("packageName", Str), ("versionRange", Str)]);
    /// `property.GVK` and `property.GVKRequired`.
    pub const GVK: GoType = Struct(&[("group", Str), ("kind", Str), ("version", Str)]);
    /// `property.BundleObject`.
    pub const BUNDLE_OBJECT: GoType = Struct(&[("data", Bytes)]);
    /// `property.Channel`.
    pub const CHANNEL: GoType = Struct(&[("channelName", Str), ("priority", Int(64))]);
}

/// The Go type opm decodes a property of type `kind` into; `None` for a
/// type it keeps as raw JSON.
pub fn go_type(kind: &str) -> Option<&'static crate::gojson::GoType> {
    Some(match kind {
        PACKAGE_TYPE => &go_types::PACKAGE,
        GVK_TYPE | "olm.gvk.required" => &go_types::GVK,
        "olm.package.required" => &go_types::PACKAGE_REQUIRED,
        "olm.bundle.object" => &go_types::BUNDLE_OBJECT,
        "olm.channel" => &go_types::CHANNEL,
        "olm.csv.metadata" => &super::csv_metadata::CSV_METADATA_GO_TYPE,
        _ => return None,
    })
}

/// The `olm.package` property value (`property.Package`): `release` only
/// when there is one (`omitzero`).
pub fn package_value(package: &str, version: &str, release: &str) -> Value {
    let mut v = json!({"packageName": package, "version": version});
    if !release.is_empty() {
        v["release"] = Value::String(release.to_string());
    }
    v
}

/// [`package_value`] as opm writes it: compact, in `property.Package`'s
/// field order (`packageName`, `version`, `release`), HTML not escaped.
pub fn package_value_text(package: &str, version: &str, release: &str) -> String {
    let ordered = crate::gojson::Ordered::shaped(
        &package_value(package, version, release),
        &go_types::PACKAGE,
    );
    serde_json::to_string(&ordered).unwrap_or_default()
}

/// The parsed files of `metadata/` in file-name order (opm reads them in
/// directory order).
fn metadata_files(bundle: &Bundle) -> Vec<&MetadataFile> {
    let mut files: Vec<&MetadataFile> = bundle
        .annotations
        .as_ref()
        .and_then(|a| a.source.as_ref())
        .into_iter()
        .chain(bundle.dependencies.as_ref())
        .chain(bundle.properties.as_ref())
        .collect();
    files.sort_by(|a, b| a.file.rel_path.cmp(&b.file.rel_path));
    files
}

/// The items of the first file whose `key` list is not empty, each value
/// as `sigs.k8s.io/yaml` hands it to Go (sorted keys, compact; a missing
/// value is `null`).
fn first_list(files: &[&MetadataFile], key: &str) -> Vec<RawProperty> {
    for f in files {
        let json = f.root.to_json();
        let Some(items) = json.get(key).and_then(Value::as_array) else {
            continue;
        };
        if items.is_empty() {
            continue;
        }
        return items
            .iter()
            .map(|i| RawProperty {
                kind: i
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                value: crate::gojson::to_string(i.get("value").unwrap_or(&Value::Null)),
            })
            .collect();
    }
    Vec::new()
}

/// opm's `Bundle.ProvidedAPIs`.
fn provided_apis(bundle: &Bundle, csv: &Csv) -> BTreeSet<ApiKey> {
    let mut out = BTreeSet::new();
    for crd in bundle.crds() {
        let spec = crd.json().get("spec").unwrap_or(&Value::Null);
        let s = |p: &str| {
            spec.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let (group, kind, plural) = (s("/group"), s("/names/kind"), s("/names/plural"));
        let mut versions = Vec::new();
        if let Some(vs) = spec.get("versions").and_then(Value::as_array) {
            for v in vs {
                if let Some(n) = v.get("name").and_then(Value::as_str) {
                    versions.push(n.to_string());
                }
            }
        }
        // apiextensions v1beta1 has a single spec.version besides
        // spec.versions; v1 has none (opm decodes each as its type).
        if crd.api_version.ends_with("v1beta1") {
            let v = s("/version");
            if !v.is_empty() {
                versions.push(v);
            }
        }
        for version in versions {
            out.insert(ApiKey::new(
                Gvk::new(&group, version, &kind),
                plural.clone(),
            ));
        }
    }
    for api in &csv.spec.api_services.owned {
        out.insert(api_service_key(api));
    }
    out
}

fn api_service_key(api: &super::csv::ApiServiceDescription) -> ApiKey {
    ApiKey::new(
        Gvk::new(
            api.group.clone().unwrap_or_default(),
            api.version.clone().unwrap_or_default(),
            api.kind.clone().unwrap_or_default(),
        ),
        api.name.clone().unwrap_or_default(),
    )
}

/// opm's `Bundle.RequiredAPIs`.
fn required_apis(csv: &Csv) -> Result<BTreeSet<ApiKey>, String> {
    let mut out = BTreeSet::new();
    for crd in &csv.spec.crds.required {
        let name = crd.name.as_deref().unwrap_or("");
        let Some((plural, group)) = name.split_once('.') else {
            return Err(format!(
                "spec.customresourcedefinitions.required name {name:?} is not <plural>.<group> (opm: \"couldn't parse plural.group from crd name\")"
            ));
        };
        out.insert(ApiKey::new(
            Gvk::new(
                group,
                crd.version.clone().unwrap_or_default(),
                crd.kind.clone().unwrap_or_default(),
            ),
            plural,
        ));
    }
    for api in &csv.spec.api_services.required {
        out.insert(api_service_key(api));
    }
    Ok(out)
}

/// The CSV annotation listing extra bundle properties (operator-registry's
/// `registry.PropertyKey`, read by `addBundleProperties` and the bundle
/// parser's `derivedProperties`), e.g. `[{"type":"olm.maxOpenShiftVersion","value":"4.8"}]`.
pub const PROPERTIES_ANNOTATION: &str = "olm.properties";

/// Whether opm's loader accepts a CSV's `olm.properties`
/// annotation: a JSON array (or `null`) of property objects (or `null`s)
/// whose `type` is a string, and whose `value`, for the types opm checks
/// (`olm.label`, `olm.package`, `olm.gvk`), is an object (or `null`) with
/// string fields. Err says what is wrong and where in the array.
pub fn check_annotation_properties(text: &str) -> Result<(), PropertyError> {
    check_annotation_message(text).map_err(PropertyError)
}

fn check_annotation_message(text: &str) -> Result<(), String> {
    let parsed: Value = serde_json::from_str(text).map_err(|e| format!("it is not JSON ({e})"))?;
    let items = match &parsed {
        Value::Null => return Ok(()),
        Value::Array(items) => items,
        other => {
            return Err(format!(
                "expected a JSON array of properties, found {}",
                super::csv::json_type(other)
            ))
        }
    };
    for (i, item) in items.iter().enumerate() {
        let field = |name| crate::gojson::struct_field(item, name);
        match item {
            Value::Null => continue,
            Value::Object(_) => {}
            other => {
                return Err(format!(
                    "[{i}]: expected a property object, found {}",
                    super::csv::json_type(other)
                ))
            }
        };
        // Go refuses a wrong type in any spelling of the field.
        if let Some((_, other)) = crate::gojson::struct_field_values(item, "type")
            .find(|(_, v)| !matches!(v, Value::Null | Value::String(_)))
        {
            return Err(format!(
                "[{i}].type: expected a string, found {}",
                super::csv::json_type(other)
            ));
        }
        let kind = crate::gojson::struct_str(item, "type");
        let fields: &[&str] = match kind {
            "olm.label" => &["label"],
            "olm.package" => &["packageName", "version"],
            "olm.gvk" => &["group", "kind", "version"],
            _ => continue,
        };
        let value = match field("value") {
            None => return Err(format!("[{i}]: a {kind} property needs a value")),
            Some(Value::Null) => continue,
            Some(v @ Value::Object(_)) => v,
            Some(other) => {
                return Err(format!(
                    "[{i}].value: expected an object for {kind}, found {}",
                    super::csv::json_type(other)
                ))
            }
        };
        for name in fields {
            for (_, v) in crate::gojson::struct_field_values(value, name) {
                if !matches!(v, Value::Null | Value::String(_)) {
                    return Err(format!(
                        "[{i}].value.{name}: expected a string, found {}",
                        super::csv::json_type(v)
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The `(type, value)` pairs of a CSV's `olm.properties`
/// annotation, each value as Go's `json.Marshal` writes a `json.RawMessage`
/// holding it: the bytes as written, compacted, with `<`, `>`, `&`, U+2028
/// and U+2029 escaped. Keys match case-insensitively and the last one wins,
/// as Go's decoder does; a missing value is `null`. `None` if the
/// annotation is not a JSON array of objects.
pub fn annotation_properties(text: &str) -> Option<Vec<(String, String)>> {
    // Validate first: the scanner below assumes well-formed JSON.
    let parsed: Value = serde_json::from_str(text).ok()?;
    let items = parsed.as_array()?;
    if items.iter().any(|i| !i.is_object() && !i.is_null()) {
        return None;
    }
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'[') {
        return None;
    }
    i = skip_ws(b, i + 1);
    while i < b.len() && b[i] != b']' {
        if b[i] == b'{' {
            let (mut kind, mut value) = (String::new(), None);
            i = skip_ws(b, i + 1);
            while i < b.len() && b[i] != b'}' {
                let key_end = skip_value(b, i)?;
                let key: String = serde_json::from_str(&text[i..key_end]).ok()?;
                i = skip_ws(b, key_end);
                i = skip_ws(b, i + 1); // ':'
                let end = skip_value(b, i)?;
                let raw = &text[i..end];
                if key.eq_ignore_ascii_case("type") {
                    kind = serde_json::from_str::<Value>(raw)
                        .ok()
                        .and_then(|v| v.as_str().map(String::from))
                        .unwrap_or_default();
                } else if key.eq_ignore_ascii_case("value") {
                    value = Some(compact_go(raw));
                }
                i = skip_ws(b, end);
                if b.get(i) == Some(&b',') {
                    i = skip_ws(b, i + 1);
                }
            }
            out.push((kind, value.unwrap_or_else(|| "null".to_string())));
            i += 1;
        } else {
            // `null` in the array: a zero Property.
            i = skip_value(b, i)?;
            out.push((String::new(), "null".to_string()));
        }
        i = skip_ws(b, i);
        if b.get(i) == Some(&b',') {
            i = skip_ws(b, i + 1);
        }
    }
    Some(out)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end of the JSON value starting at `i` (well-formed input).
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => {
            let mut j = i + 1;
            while j < b.len() {
                match b[j] {
                    b'\\' => j += 2,
                    b'"' => return Some(j + 1),
                    _ => j += 1,
                }
            }
            None
        }
        b'{' | b'[' => {
            let mut j = skip_ws(b, i + 1);
            loop {
                match *b.get(j)? {
                    b'}' | b']' => return Some(j + 1),
                    b',' | b':' => j = skip_ws(b, j + 1),
                    _ => j = skip_ws(b, skip_value(b, j)?),
                }
            }
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            Some(j)
        }
    }
}

/// Go's `json.Compact` with HTML escaping (what `json.Marshal` does to a
/// `json.RawMessage`).
fn compact_go(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in raw.chars() {
        if in_string {
            match c {
                _ if escaped => {
                    escaped = false;
                    out.push(c);
                    continue;
                }
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if c.is_ascii_whitespace() {
            continue;
        }
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            _ => out.push(c),
        }
    }
    out
}

/// The CSV's `spec.release` as opm v1.73.0 reads it (`GetRelease`,
/// operator-registry #1792, #1909): a string as written, a number as its
/// integer digits when whole (else Go's `%g`), absent or null as none;
/// anything else is an error.
pub fn csv_release(csv: &Value) -> Result<String, PropertyError> {
    release_message(csv).map_err(PropertyError)
}

fn release_message(csv: &Value) -> Result<String, String> {
    match csv.pointer("/spec/release") {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => {
            let f = n.as_f64().unwrap_or(0.0);
            if let Some(i) = n.as_i64() {
                Ok(i.to_string())
            } else if f.fract() == 0.0 && f.abs() < 9.2e18 {
                Ok(format!("{}", f as i64))
            } else {
                Ok(format_g(f))
            }
        }
        Some(_) => Err("get release: release field must be a string or number".into()),
    }
}

/// Go's `fmt.Sprintf("%g", f)`: the shortest decimal that reads back as
/// `f`, in exponent form (two exponent digits at least) when the exponent
/// is below -4 or 6 and above.
fn format_g(f: f64) -> String {
    let e = format!("{f:e}");
    let Some((mant, exp)) = e.split_once('e') else {
        return e;
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        return format!("{f}");
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mant}e{sign}{:02}", exp.abs())
}

#[cfg(test)]
mod tests {
    use super::check_annotation_properties as check;
    use super::*;

    #[test]
    fn properties_annotation_is_checked_as_opm_loads_it() {
        for ok in [
            "null",
            "[]",
            "[null]",
            r#"[{"type": "olm.maxOpenShiftVersion", "value": 4.12}]"#,
            r#"[{"type": "custom"}]"#,
            r#"[{"Type": "olm.gvk", "VALUE": {"group": "a", "Kind": "B", "version": null}}]"#,
            r#"[{"type": "olm.package", "value": null}]"#,
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("[{", "not JSON"),
            (
                r#"{"type": "x"}"#,
                "expected a JSON array of properties, found a mapping",
            ),
            ("[1]", "[0]: expected a property object, found a number"),
            (r#"[{"type": 1}]"#, "[0].type: expected a string"),
            (
                r#"[{"type": "olm.gvk"}]"#,
                "[0]: a olm.gvk property needs a value",
            ),
            (
                r#"[null, {"type": "olm.label", "value": "x"}]"#,
                "[1].value: expected an object",
            ),
            (
                r#"[{"type": "olm.package", "value": {"version": 1}}]"#,
                "[0].value.version: expected a string",
            ),
            // Go decodes every spelling of a field, and so fails on any.
            (
                r#"[{"TYPE": 1, "type": "olm.gvk", "value": {}}]"#,
                "[0].type: expected a string",
            ),
            (
                r#"[{"type": "olm.package", "value": {"version": "1", "Version": 2}}]"#,
                "[0].value.version: expected a string",
            ),
        ] {
            let e = check(bad).expect_err(bad).to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    /// `spec.release` as opm v1.73.0's `GetRelease` reads it.
    #[test]
    fn csv_release_as_opm_reads_it() {
        let r = |v: Value| csv_release(&json!({"spec": {"release": v}}));
        assert_eq!(r(json!("alpha.1")), Ok("alpha.1".into()));
        assert_eq!(r(json!(2)), Ok("2".into()));
        assert_eq!(r(json!(3.0)), Ok("3".into()));
        assert_eq!(r(json!(1.5)), Ok("1.5".into()));
        assert_eq!(r(json!(0.00001)), Ok("1e-05".into()));
        assert_eq!(r(json!(1234567.5)), Ok("1.2345675e+06".into()));
        assert_eq!(r(Value::Null), Ok(String::new()));
        assert_eq!(csv_release(&json!({"spec": {}})), Ok(String::new()));
        assert!(r(json!(["x"])).is_err());
        assert_eq!(
            package_value("p", "1.0.0", ""),
            json!({"packageName": "p", "version": "1.0.0"})
        );
        assert_eq!(
            package_value("p", "1.0.0", "2"),
            json!({"packageName": "p", "version": "1.0.0", "release": "2"})
        );
    }
}
