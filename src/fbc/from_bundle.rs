//! A bundle directory as an `olm.bundle` object, as `opm render` writes it
//! without migrations (operator-registry v1.73.0 `alpha/action/render.go`
//! `bundleToDeclcfg` and `getRelatedImages`, `pkg/registry`
//! `ObjectsAndPropertiesFromBundle`).
//!
//! Properties, from what [`BundleProperties::derive`] gives (the same
//! derivation the index loads): the last `olm.package` of the bundle's
//! properties (the one derived from the annotations, unless the CSV's
//! `olm.properties` annotation has one), `olm.gvk` for each `olm.gvk`
//! property and provided API, `olm.gvk.required` for each `olm.gvk`
//! dependency and required API, `olm.package.required` for each
//! `olm.package` dependency, every other property and dependency as it is,
//! and one `olm.bundle.object` per manifest; sorted by type, then by the
//! value's JSON, with the `olm.bundle.object`s moved last. Related images
//! are the CSV's `spec.relatedImages`, then the bundle image and the
//! deployments' container images not among them, sorted by image.

use std::collections::BTreeSet;

use base64::Engine as _;
use serde_json::{json, Value};

use super::{Bundle, FbcError, Property, RelatedImage, SCHEMA_BUNDLE};
use crate::bundle::properties::{
    go_types, package_value, BundleProperties, GVK_TYPE, PACKAGE_TYPE,
};
use crate::bundle::Gvk;

/// The property type holding one manifest of the bundle (base64 JSON).
pub const BUNDLE_OBJECT_TYPE: &str = "olm.bundle.object";
/// The property type holding the CSV's descriptive fields.
pub const CSV_METADATA_TYPE: &str = "olm.csv.metadata";

/// The `olm.bundle` object of a bundle directory pulled from `image`
/// (empty for a directory with no image), with `olm.bundle.object`
/// properties. Err names the file for what opm refuses to render.
pub fn bundle_to_fbc(bundle: &crate::bundle::Bundle, image: &str) -> Result<Bundle, FbcError> {
    render_bundle(bundle, image).map_err(FbcError::Bundle)
}

fn render_bundle(bundle: &crate::bundle::Bundle, image: &str) -> Result<Bundle, String> {
    let dir = bundle.dir.display();
    let csv_m = bundle.csv_manifest().ok_or_else(|| {
        bundle
            .first_load_error()
            .unwrap_or_else(|| format!("{dir}: the bundle has no ClusterServiceVersion"))
    })?;
    let csv_json = csv_m.json();
    let csv = crate::bundle::Csv::from_json(csv_json)
        .map_err(|e| format!("{}: {e}", csv_m.file.display_path.display()))?;
    let name = csv.name().to_string();
    if name.is_empty() {
        return Err(format!(
            "{}: the CSV has no metadata.name",
            csv_m.file.display_path.display()
        ));
    }
    let package = bundle
        .package()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| {
            format!(
                "{dir}: metadata/annotations.yaml does not name the package ({})",
                crate::bundle::keys::PACKAGE
            )
        })?
        .to_string();
    let derived = BundleProperties::derive(bundle, csv_m, &csv)?;

    // opm's parser keeps the first CSV and every other object.
    let objects: Vec<String> = bundle
        .manifests
        .iter()
        .filter(|m| !m.is_csv() || std::ptr::eq(*m, csv_m))
        .filter(|m| !m.json().is_null() && m.json().as_object().is_none_or(|o| !o.is_empty()))
        .map(|m| crate::gojson::to_string(m.json()))
        .collect();
    let properties = fbc_properties(&derived, &objects)
        .map_err(|e| format!("{}: {e}", csv_m.file.display_path.display()))?;

    let mut related: Vec<RelatedImage> = Vec::new();
    let mut seen = BTreeSet::new();
    for ri in csv_json
        .pointer("/spec/relatedImages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let s = |k: &str| ri.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        seen.insert(s("image"));
        related.push(RelatedImage {
            name: s("name"),
            image: s("image"),
        });
    }
    let mut extra: Vec<String> = Vec::new();
    if !image.is_empty() {
        extra.push(image.to_string());
    }
    if let Some(install) = &csv.spec.install {
        for d in &install.spec.deployments {
            extra.extend(d.images());
        }
    }
    for img in extra {
        if !img.is_empty() && seen.insert(img.clone()) {
            related.push(RelatedImage {
                name: String::new(),
                image: img,
            });
        }
    }
    sort_related_images(&mut related);

    Ok(Bundle {
        schema: SCHEMA_BUNDLE.into(),
        name,
        package,
        image: image.to_string(),
        properties,
        related_images: related,
        csv_json: Some(crate::gojson::to_string(csv_json)),
        objects,
    })
}

/// How opm writes a property value it derived from a bundle.
enum Written {
    /// Keys sorted: a value built here from sorted JSON.
    Sorted,
    /// As the text it read (a CSV's `olm.properties`, `metadata/`).
    AsRead,
    /// In the field order of the Go struct it built the value from.
    GoStruct(&'static crate::gojson::GoType),
}

/// The `olm.bundle` properties of a bundle (see the module documentation),
/// with one `olm.bundle.object` per JSON object of `objects`. Err for an
/// `olm.gvk` or `olm.package` value opm cannot decode.
pub(crate) fn fbc_properties(
    p: &BundleProperties,
    objects: &[String],
) -> Result<Vec<Property>, String> {
    let mut provided: BTreeSet<Gvk> = p.provided.iter().map(|a| a.gvk.clone()).collect();
    let mut required: BTreeSet<Gvk> = p.required.iter().map(|a| a.gvk.clone()).collect();
    let mut package: Option<Value> = None;
    // (type, value JSON as the sort key, value, how opm writes the value)
    let mut props: Vec<(String, String, Value, Written)> = Vec::new();
    for (i, raw) in p.properties.iter().enumerate() {
        let v = raw.json();
        let at = |e: String| format!("property {i} ({}): {e}", raw.kind);
        match raw.kind.as_str() {
            GVK_TYPE => {
                let f = string_fields(&v, &["group", "version", "kind"]).map_err(at)?;
                provided.insert(Gvk::new(&f[0], &f[1], &f[2]));
            }
            PACKAGE_TYPE => {
                let f = string_fields(&v, &["packageName", "version", "release"]).map_err(at)?;
                package = Some(package_value(&f[0], &f[1], &f[2]));
            }
            _ => props.push((raw.kind.clone(), raw.value.clone(), v, Written::AsRead)),
        }
    }
    let mut package_required = Vec::new();
    for (i, raw) in p.dependencies.iter().enumerate() {
        let v = raw.json();
        let at = |e: String| format!("dependency {i} ({}): {e}", raw.kind);
        match raw.kind.as_str() {
            GVK_TYPE => {
                let f = string_fields(&v, &["group", "version", "kind"]).map_err(at)?;
                required.insert(Gvk::new(&f[0], &f[1], &f[2]));
            }
            PACKAGE_TYPE => {
                let f = string_fields(&v, &["packageName", "version"]).map_err(at)?;
                package_required.push(json!({"packageName": f[0], "versionRange": f[1]}));
            }
            _ => props.push((raw.kind.clone(), raw.value.clone(), v, Written::AsRead)),
        }
    }
    let mut built = |kind: &str, value: Value, written: Written| {
        props.push((
            kind.to_string(),
            crate::gojson::to_string(&value),
            value,
            written,
        ));
    };
    // opm builds the package property from a Go struct: its fields in the
    // struct's order, not sorted (a release comes after the version).
    built(
        PACKAGE_TYPE,
        package.unwrap_or_else(|| package_value(&p.package, &p.version, &p.release)),
        Written::GoStruct(&go_types::PACKAGE),
    );
    for o in objects {
        built(
            BUNDLE_OBJECT_TYPE,
            json!({"data": base64::engine::general_purpose::STANDARD.encode(o.as_bytes())}),
            Written::Sorted,
        );
    }
    for g in &provided {
        built(GVK_TYPE, g.to_json(), Written::Sorted);
    }
    for g in &required {
        built("olm.gvk.required", g.to_json(), Written::Sorted);
    }
    for v in package_required {
        built("olm.package.required", v, Written::Sorted);
    }
    props.sort_by(|a, b| (a.0.as_str(), a.1.as_str()).cmp(&(b.0.as_str(), b.1.as_str())));
    let mut out: Vec<Property> = props
        .into_iter()
        .map(|(kind, text, value, written)| match written {
            Written::AsRead => Property::from_text(kind, &text, value),
            Written::Sorted => Property::new(kind, value),
            Written::GoStruct(ty) => Property::shaped(kind, value, ty),
        })
        .collect();
    move_objects_to_end(&mut out);
    Ok(out)
}

/// The string fields `names` of a property value as Go decodes it into a
/// struct ([`crate::gojson::struct_field`]): `null` is the zero value, a
/// missing or `null` field is empty; any other shape is an error.
fn string_fields(v: &Value, names: &[&str]) -> Result<Vec<String>, String> {
    match v {
        Value::Null => return Ok(vec![String::new(); names.len()]),
        Value::Object(_) => {}
        other => {
            return Err(format!(
                "expected an object, found {}",
                crate::bundle::csv::json_type(other)
            ))
        }
    };
    names
        .iter()
        .map(|n| {
            if let Some((_, bad)) = crate::gojson::struct_field_values(v, n)
                .find(|(_, f)| !matches!(f, Value::Null | Value::String(_)))
            {
                return Err(format!(
                    "{n}: expected a string, found {}",
                    crate::bundle::csv::json_type(bad)
                ));
            }
            Ok(crate::gojson::struct_str(v, n).to_string())
        })
        .collect()
}

/// opm render's order of related images: by image (`sort.Slice` on the
/// image; the name breaks ties here, where Go's order is unspecified).
pub fn sort_related_images(images: &mut [RelatedImage]) {
    images.sort_by(|a, b| a.image.cmp(&b.image).then(a.name.cmp(&b.name)));
}

/// opm render's `moveBundleObjectsToEndOfPropertySlices`: `olm.bundle.object`
/// and `olm.csv.metadata` properties go last, each group in its order.
pub fn move_objects_to_end(props: &mut Vec<Property>) {
    let (objs, others): (Vec<Property>, Vec<Property>) = std::mem::take(props)
        .into_iter()
        .partition(|p| p.kind == BUNDLE_OBJECT_TYPE || p.kind == CSV_METADATA_TYPE);
    props.extend(others);
    props.extend(objs);
}
