//! One bundle as the index stores it: the values opm's `registry.Bundle`
//! derives from a bundle (pkg/registry/bundle.go, csv.go) and `sqlLoader`
//! writes (pkg/sqlite/load.go).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::bundle::Bundle;

/// A group/version/kind with its plural, as the `api` table holds it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiKey {
    /// API group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
}

/// A bundle ready to be written to the index.
#[derive(Clone, Debug, PartialEq)]
pub struct BundleRecord {
    /// CSV name (`operatorbundle.name`).
    pub name: String,
    /// Package name.
    pub package: String,
    /// Channels from the annotations.
    pub channels: Vec<String>,
    /// Default channel from the annotations.
    pub default_channel: Option<String>,
    /// The CSV as opm stores it: Go `json.Encoder` output (sorted keys, HTML
    /// escaped) followed by a newline.
    pub csv_json: String,
    /// Every manifest, encoded like `csv_json` and concatenated.
    pub bundle_json: String,
    /// Each manifest's JSON without the newline (for FBC `olm.bundle.object`).
    pub objects: Vec<String>,
    /// Bundle image reference (`bundlepath`), empty for a directory.
    pub bundle_path: String,
    /// `spec.version`.
    pub version: String,
    /// The `olm.skipRange` annotation.
    pub skip_range: String,
    /// `spec.replaces`.
    pub replaces: String,
    /// `spec.skips`.
    pub skips: Vec<String>,
    /// The `olm.substitutesFor` annotation.
    pub substitutes_for: String,
    /// Related images and operator images, deduplicated.
    pub images: BTreeSet<String>,
    /// Related images with their names (for FBC).
    pub related_images: Vec<(String, String)>,
    /// Provided APIs.
    pub provided: BTreeSet<ApiKey>,
    /// Required APIs.
    pub required: BTreeSet<ApiKey>,
    /// Rows of the `properties` table: (type, value JSON).
    pub properties: Vec<(String, String)>,
    /// Rows of the `dependencies` table: (type, value JSON).
    pub dependencies: Vec<(String, String)>,
}

/// Go's `json.Encoder.Encode`: compact JSON and a newline.
fn encode_line(v: &Value) -> String {
    let mut s = crate::gojson::to_string(v);
    s.push('\n');
    s
}

impl BundleRecord {
    /// Builds the record of a loaded bundle. `image` is the bundle image
    /// reference (empty for a plain directory).
    pub fn from_bundle(bundle: &Bundle, image: &str) -> Result<BundleRecord, String> {
        let dir = bundle.dir.display();
        let mut csv_count = 0;
        let mut csv_json = String::new();
        let mut bundle_json = String::new();
        let mut objects = Vec::new();
        let mut csv_value = None;
        for m in &bundle.manifests {
            if m.json().is_null() || m.json().as_object().is_some_and(|o| o.is_empty()) {
                continue;
            }
            let line = encode_line(m.json());
            bundle_json.push_str(&line);
            objects.push(crate::gojson::to_string(m.json()));
            if m.is_csv() {
                csv_count += 1;
                if csv_count > 1 {
                    return Err(format!(
                        "{dir}: two ClusterServiceVersions found in one bundle ({})",
                        m.file.rel_path
                    ));
                }
                csv_json = line;
                csv_value = Some(m);
            }
        }
        let csv_manifest = csv_value.ok_or_else(|| {
            bundle.first_load_error().unwrap_or_else(|| {
                format!(
                    "{dir}: no ClusterServiceVersion in manifests/ (opm: \"csv name not found\")"
                )
            })
        })?;
        let csv = crate::bundle::Csv::from_json(csv_manifest.json()).map_err(|e| {
            format!(
                "{}: the ClusterServiceVersion does not decode at {}: {}",
                csv_manifest.file.display_path.display(),
                e.path,
                e.message
            )
        })?;
        let name = csv.name().to_string();
        if name.is_empty() {
            return Err(format!(
                "{}: the ClusterServiceVersion has no metadata.name (opm: \"csv name not found\")",
                csv_manifest.file.display_path.display()
            ));
        }
        let package = bundle
            .package()
            .filter(|p| !p.is_empty())
            .ok_or_else(|| {
                format!(
                    "{dir}: metadata/annotations.yaml has no {} (the package name)",
                    crate::bundle::keys::PACKAGE
                )
            })?
            .to_string();
        let channels = bundle.channels();
        if channels.is_empty() {
            return Err(format!(
                "{dir}: metadata/annotations.yaml has no {} (the bundle's channels)",
                crate::bundle::keys::CHANNELS
            ));
        }
        let default_channel = bundle
            .default_channel()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from);

        let mut images = BTreeSet::new();
        let mut related_images = Vec::new();
        for ri in &csv.spec.related_images {
            let img = ri.image.clone().unwrap_or_default();
            if !img.is_empty() {
                images.insert(img.clone());
                related_images.push((ri.name.clone().unwrap_or_default(), img));
            }
        }
        if let Some(install) = &csv.spec.install {
            for d in &install.spec.deployments {
                for img in d.images() {
                    if !img.is_empty() {
                        if !related_images.iter().any(|(_, i)| *i == img) {
                            related_images.push((String::new(), img.clone()));
                        }
                        images.insert(img);
                    }
                }
            }
        }

        let provided = provided_apis(bundle, &csv)?;
        let required = required_apis(&csv, &dir.to_string())?;

        let version = csv.spec.version.clone().unwrap_or_default();
        // opm's bundleParser reads every file of metadata/ as annotations,
        // dependencies and properties alike and keeps the first (by file
        // name) that has a non-empty list, whatever the file is called.
        let files = metadata_files(bundle);
        let file_properties = first_list(&files, "properties");
        let file_dependencies = first_list(&files, "dependencies");
        let mut package = package;
        // The package property of properties.yaml wins over the derived one
        // and must carry the CSV's version (bundleParser.expandProperties).
        if let Some((_, v)) = file_properties.iter().find(|(t, _)| t == "olm.package") {
            let pv = v.get("version").and_then(Value::as_str).unwrap_or("");
            if pv != version {
                return Err(format!(
                    "{dir}: metadata olm.package property has version {pv:?}, the CSV has {version:?} (opm: \"package property version does not match bundle csv version\")"
                ));
            }
            if let Some(p) = v.get("packageName").and_then(Value::as_str) {
                package = p.to_string();
            }
        }
        // The rows opm's addBundleProperties writes, as a set: the metadata
        // properties, the derived olm.package (unless the metadata has one),
        // every property of the CSV's olm.properties
        // annotation, and one olm.gvk per provided API.
        let mut properties: Vec<(String, String)> = Vec::new();
        let mut push = |t: &str, v: String| {
            if !properties.iter().any(|(pt, pv)| pt == t && *pv == v) {
                properties.push((t.to_string(), v));
            }
        };
        for (kind, value) in &file_properties {
            push(kind, crate::gojson::to_string(value));
        }
        if !file_properties.iter().any(|(t, _)| t == "olm.package") {
            push(
                "olm.package",
                super::add::package_property(&package, &version),
            );
        }
        if let Some(v) = csv.annotation(PROPERTIES_ANNOTATION) {
            // opm's loader refuses a bundle whose annotation does not decode
            // (addBundleProperties returns the error; only `opm render` warns).
            if let Err(why) = check_annotation_properties(v) {
                let at = csv_manifest.location(&crate::path![
                    "metadata",
                    "annotations",
                    PROPERTIES_ANNOTATION
                ]);
                return Err(format!(
                    "{}:{}:{}: metadata.annotations[{PROPERTIES_ANNOTATION}] does not decode: \
                     {why} (opm refuses to add the bundle)",
                    at.file.display(),
                    at.line,
                    at.column
                ));
            }
            // Each value is kept as written (opm unmarshals it into a
            // json.RawMessage and marshals that back: compacted, key order
            // kept, `<>&` escaped).
            for (t, raw) in annotation_properties(v).unwrap_or_default() {
                push(&t, raw);
            }
        }
        for api in &provided {
            push("olm.gvk", gvk_json(&api.group, &api.kind, &api.version));
        }
        let mut dependencies = Vec::new();
        for (kind, value) in &file_dependencies {
            dependencies.push((kind.clone(), crate::gojson::to_string(value)));
        }
        for api in &required {
            dependencies.push((
                "olm.gvk".to_string(),
                gvk_json(&api.group, &api.kind, &api.version),
            ));
        }
        Ok(BundleRecord {
            name,
            package,
            channels,
            default_channel,
            csv_json,
            bundle_json,
            objects,
            bundle_path: image.to_string(),
            version,
            skip_range: csv.skip_range().unwrap_or("").to_string(),
            replaces: csv.spec.replaces.clone().unwrap_or_default(),
            skips: csv.spec.skips.clone(),
            substitutes_for: csv
                .annotation("olm.substitutesFor")
                .unwrap_or("")
                .to_string(),
            images,
            related_images,
            provided,
            required,
            properties,
            dependencies,
        })
    }

    /// The version parsed as semver (required by the semver modes).
    pub fn semver(&self) -> Option<semver::Version> {
        semver::Version::parse(&self.version).ok()
    }
}

/// The CSV annotation listing extra bundle properties (operator-registry's
/// `registry.PropertyKey`, read by `addBundleProperties` and the bundle
/// parser's `derivedProperties`), e.g. `[{"type":"olm.maxOpenShiftVersion","value":"4.8"}]`.
const PROPERTIES_ANNOTATION: &str = "olm.properties";

/// Whether opm's loader accepts a CSV's `olm.properties`
/// annotation: a JSON array (or `null`) of property objects (or `null`s)
/// whose `type` is a string, and whose `value`, for the types opm checks
/// (`olm.label`, `olm.package`, `olm.gvk`), is an object (or `null`) with
/// string fields. Err says what is wrong and where in the array.
pub fn check_annotation_properties(text: &str) -> Result<(), String> {
    let parsed: Value = serde_json::from_str(text).map_err(|e| format!("it is not JSON ({e})"))?;
    let items = match &parsed {
        Value::Null => return Ok(()),
        Value::Array(items) => items,
        other => {
            return Err(format!(
                "expected a JSON array of properties, found {}",
                crate::bundle::csv::json_type(other)
            ))
        }
    };
    // Go matches field names case-insensitively (with two spellings of one
    // name, which one Go keeps depends on source order; here the last in the map).
    fn field<'a>(o: &'a serde_json::Map<String, Value>, name: &str) -> Option<&'a Value> {
        o.iter()
            .rfind(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }
    for (i, item) in items.iter().enumerate() {
        let o = match item {
            Value::Null => continue,
            Value::Object(o) => o,
            other => {
                return Err(format!(
                    "[{i}]: expected a property object, found {}",
                    crate::bundle::csv::json_type(other)
                ))
            }
        };
        let kind = match field(o, "type") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(format!(
                    "[{i}].type: expected a string, found {}",
                    crate::bundle::csv::json_type(other)
                ))
            }
        };
        let fields: &[&str] = match kind.as_str() {
            "olm.label" => &["label"],
            "olm.package" => &["packageName", "version"],
            "olm.gvk" => &["group", "kind", "version"],
            _ => continue,
        };
        let value = match field(o, "value") {
            None => return Err(format!("[{i}]: a {kind} property needs a value")),
            Some(Value::Null) => continue,
            Some(Value::Object(v)) => v,
            Some(other) => {
                return Err(format!(
                    "[{i}].value: expected an object for {kind}, found {}",
                    crate::bundle::csv::json_type(other)
                ))
            }
        };
        for name in fields {
            match field(value, name) {
                None | Some(Value::Null) | Some(Value::String(_)) => {}
                Some(other) => {
                    return Err(format!(
                        "[{i}].value.{name}: expected a string, found {}",
                        crate::bundle::csv::json_type(other)
                    ))
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

/// The parsed files of `metadata/` in file-name order (opm reads them in
/// directory order).
fn metadata_files(bundle: &Bundle) -> Vec<&crate::bundle::MetadataFile> {
    let mut files: Vec<&crate::bundle::MetadataFile> = bundle
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

/// The `(type, value)` items of the first file whose `key` list is not empty.
fn first_list(files: &[&crate::bundle::MetadataFile], key: &str) -> Vec<(String, Value)> {
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
            .map(|i| {
                (
                    i.get("type")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    i.get("value").cloned().unwrap_or(Value::Null),
                )
            })
            .collect();
    }
    Vec::new()
}

/// `{"group":..,"kind":..,"version":..}` in Go struct order (GVKProperty).
pub fn gvk_json(group: &str, kind: &str, version: &str) -> String {
    let mut m = serde_json::Map::new();
    m.insert("group".into(), Value::String(group.into()));
    m.insert("kind".into(), Value::String(kind.into()));
    m.insert("version".into(), Value::String(version.into()));
    crate::gojson::to_string(&Value::Object(m))
}

/// opm's `Bundle.ProvidedAPIs`: every served version of every CRD in the
/// bundle, plus the CSV's owned API services.
fn provided_apis(bundle: &Bundle, csv: &crate::bundle::Csv) -> Result<BTreeSet<ApiKey>, String> {
    let mut out = BTreeSet::new();
    for crd in bundle.crds() {
        let spec = crd.json().get("spec").cloned().unwrap_or(Value::Null);
        let s = |p: &str| {
            spec.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let (group, kind, plural) = (s("/group"), s("/names/kind"), s("/names/plural"));
        let mut versions = Vec::new();
        // apiextensions v1beta1 has a single spec.version besides spec.versions.
        if crd.api_version.ends_with("v1beta1") {
            let v = s("/version");
            if !v.is_empty() {
                versions.push(v);
            }
        }
        if let Some(vs) = spec.get("versions").and_then(Value::as_array) {
            for v in vs {
                if let Some(n) = v.get("name").and_then(Value::as_str) {
                    versions.push(n.to_string());
                }
            }
        }
        for version in versions {
            out.insert(ApiKey {
                group: group.clone(),
                version,
                kind: kind.clone(),
                plural: plural.clone(),
            });
        }
    }
    for api in &csv.spec.api_services.owned {
        out.insert(ApiKey {
            group: api.group.clone().unwrap_or_default(),
            version: api.version.clone().unwrap_or_default(),
            kind: api.kind.clone().unwrap_or_default(),
            plural: api.name.clone().unwrap_or_default(),
        });
    }
    Ok(out)
}

/// opm's `Bundle.RequiredAPIs`: the CSV's required CRDs and API services.
fn required_apis(csv: &crate::bundle::Csv, dir: &str) -> Result<BTreeSet<ApiKey>, String> {
    let mut out = BTreeSet::new();
    for crd in &csv.spec.crds.required {
        let name = crd.name.as_deref().unwrap_or("");
        let Some((plural, group)) = name.split_once('.') else {
            return Err(format!(
                "{dir}: spec.customresourcedefinitions.required name {name:?} is not <plural>.<group> (opm: \"couldn't parse plural.group from crd name\")"
            ));
        };
        out.insert(ApiKey {
            group: group.into(),
            version: crd.version.clone().unwrap_or_default(),
            kind: crd.kind.clone().unwrap_or_default(),
            plural: plural.into(),
        });
    }
    for api in &csv.spec.api_services.required {
        out.insert(ApiKey {
            group: api.group.clone().unwrap_or_default(),
            version: api.version.clone().unwrap_or_default(),
            kind: api.kind.clone().unwrap_or_default(),
            plural: api.name.clone().unwrap_or_default(),
        });
    }
    Ok(out)
}

/// Bundle image references for a batch: from a prefix (`PREFIX/<dir name>`),
/// or a per-bundle map (bundle dir or CSV name to reference).
#[derive(Clone, Debug, Default)]
pub struct ImageNaming {
    /// `--bundle-image-prefix`.
    pub prefix: Option<String>,
    /// `--bundle-image DIR=REF` or `NAME=REF`.
    pub explicit: BTreeMap<String, String>,
}

impl ImageNaming {
    /// The reference for the bundle at `dir` with CSV `name`.
    pub fn image_for(&self, dir: &std::path::Path, name: &str) -> String {
        let d = dir.display().to_string();
        let d = d.trim_end_matches('/');
        if let Some(r) = self.explicit.get(d).or_else(|| self.explicit.get(name)) {
            return r.clone();
        }
        match &self.prefix {
            Some(p) => {
                // `<version>/bundle/` layouts are named by the version.
                let named = match dir.file_name() {
                    Some(b) if b == "bundle" => dir.parent().unwrap_or(dir),
                    _ => dir,
                };
                let base = named
                    .file_name()
                    .map(|b| b.to_string_lossy().into_owned())
                    .unwrap_or_else(|| name.to_string());
                format!("{}:{}", p.trim_end_matches('/'), base)
            }
            None => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_annotation_properties as check;

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
        ] {
            let e = check(bad).expect_err(bad);
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
