//! A bundle directory as an `olm.bundle` object, as `opm render` writes it
//! for a bundle image with the `bundle-object-to-csv-metadata` migration
//! (what the community pipeline's catalogs hold).
//!
//! Properties (operator-registry `PropertiesFromBundle`): `olm.package`
//! (from `metadata/properties.yaml` if it has one, else package and CSV
//! version), `olm.gvk` for every provided API (each version of each CRD in
//! the bundle, each owned API service), `olm.gvk.required` for every
//! required API (CSV required CRDs and API services, and `olm.gvk`
//! dependencies), `olm.package.required` for package dependencies, and any
//! other `metadata/properties.yaml` property; deduplicated and sorted by
//! type, then by the value's JSON. Then `olm.csv.metadata` (the CSV's
//! descriptive fields) is appended. Related images are the CSV's
//! `spec.relatedImages`, the bundle image, and the deployments' container
//! images, each once, sorted by image.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use crate::bundle::Bundle;
use crate::fbc::{self, Property, RelatedImage};

/// The `olm.bundle` object for a bundle directory pulled from `image`.
pub fn bundle_to_fbc(bundle: &Bundle, image: &str) -> Result<fbc::Bundle, String> {
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
        .ok_or_else(|| {
            format!("{dir}: metadata/annotations.yaml does not name the package (operators.operatorframework.io.bundle.package.v1)")
        })?
        .to_string();
    let version = csv.spec.version.clone().unwrap_or_default();
    let release =
        csv_release(csv_json).map_err(|e| format!("{}: {e}", csv_m.file.display_path.display()))?;

    let gvk = |g: &str, v: &str, k: &str| json!({"group": g, "kind": k, "version": v});
    let mut package_prop: Option<Value> = None;
    let mut provided: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut required: BTreeSet<(String, String, String)> = BTreeSet::new();
    let mut package_required: Vec<Value> = Vec::new();
    let mut other: Vec<Property> = Vec::new();
    let triple = |v: &Value| -> (String, String, String) {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        (s("group"), s("version"), s("kind"))
    };
    for (kind, value) in bundle.metadata_properties() {
        match kind.as_str() {
            "olm.gvk" => {
                provided.insert(triple(&value));
            }
            "olm.package" => {
                let s = |k: &str| {
                    value
                        .get(k)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                package_prop = Some(package_value(
                    &s("packageName"),
                    &s("version"),
                    &s("release"),
                ));
            }
            _ => other.push(Property { kind, value }),
        }
    }
    for (kind, value) in bundle.metadata_dependencies() {
        match kind.as_str() {
            "olm.gvk" => {
                required.insert(triple(&value));
            }
            "olm.package" => {
                let s = |k: &str| {
                    value
                        .get(k)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                package_required
                    .push(json!({"packageName": s("packageName"), "versionRange": s("version")}));
            }
            _ => {}
        }
    }
    // Provided: every served version of every CRD in the bundle.
    for crd in bundle.crds() {
        let spec = crd.json().get("spec");
        let group = spec
            .and_then(|s| s.get("group"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let kind = spec
            .and_then(|s| s.pointer("/names/kind"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if let Some(vs) = spec
            .and_then(|s| s.get("versions"))
            .and_then(Value::as_array)
        {
            for v in vs {
                if let Some(n) = v.get("name").and_then(Value::as_str) {
                    provided.insert((group.into(), n.into(), kind.into()));
                }
            }
        }
        if let Some(v) = spec.and_then(|s| s.get("version")).and_then(Value::as_str) {
            if !v.is_empty() {
                provided.insert((group.into(), v.into(), kind.into()));
            }
        }
    }
    for api in &csv.spec.api_services.owned {
        provided.insert((
            api.group.clone().unwrap_or_default(),
            api.version.clone().unwrap_or_default(),
            api.kind.clone().unwrap_or_default(),
        ));
    }
    for crd in &csv.spec.crds.required {
        let n = crd.name.clone().unwrap_or_default();
        let Some((_, group)) = n.split_once('.') else {
            return Err(format!(
                "{}: couldn't parse plural.group from crd name: {n}",
                csv_m.file.display_path.display()
            ));
        };
        required.insert((
            group.to_string(),
            crd.version.clone().unwrap_or_default(),
            crd.kind.clone().unwrap_or_default(),
        ));
    }
    for api in &csv.spec.api_services.required {
        required.insert((
            api.group.clone().unwrap_or_default(),
            api.version.clone().unwrap_or_default(),
            api.kind.clone().unwrap_or_default(),
        ));
    }

    let mut props: Vec<Property> = Vec::new();
    props.push(Property {
        kind: "olm.package".into(),
        value: package_prop.unwrap_or_else(|| package_value(&package, &version, &release)),
    });
    for (g, v, k) in &provided {
        props.push(Property {
            kind: "olm.gvk".into(),
            value: gvk(g, v, k),
        });
    }
    for (g, v, k) in &required {
        props.push(Property {
            kind: "olm.gvk.required".into(),
            value: gvk(g, v, k),
        });
    }
    for p in package_required {
        props.push(Property {
            kind: "olm.package.required".into(),
            value: p,
        });
    }
    props.extend(other);
    // Sorted by type, then by the value as Go marshals it.
    let mut keyed: Vec<(String, String, Property)> = props
        .into_iter()
        .map(|p| (p.kind.clone(), crate::gojson::to_string(&p.value), p))
        .collect();
    keyed.sort_by(|a, b| (a.0.as_str(), a.1.as_str()).cmp(&(b.0.as_str(), b.1.as_str())));
    keyed.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    let mut properties: Vec<Property> = keyed.into_iter().map(|(_, _, p)| p).collect();
    properties.push(Property {
        kind: "olm.csv.metadata".into(),
        value: csv_metadata(csv_json),
    });

    let mut related: Vec<RelatedImage> = Vec::new();
    let mut seen = BTreeSet::new();
    if let Some(ris) = csv_json
        .pointer("/spec/relatedImages")
        .and_then(Value::as_array)
    {
        for ri in ris {
            let img = ri
                .get("image")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            seen.insert(img.clone());
            related.push(RelatedImage {
                name: ri
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                image: img,
            });
        }
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
    related.sort_by(|a, b| a.image.cmp(&b.image).then(a.name.cmp(&b.name)));

    Ok(fbc::Bundle {
        schema: fbc::SCHEMA_BUNDLE.into(),
        name,
        package,
        image: image.to_string(),
        properties,
        related_images: related,
        csv_json: Some(crate::gojson::to_string(csv_json)),
        objects: bundle
            .manifests
            .iter()
            .map(|m| crate::gojson::to_string(m.json()))
            .collect(),
    })
}

/// The `olm.package` property value (`property.Package`): `release` only
/// when there is one (`omitzero`).
fn package_value(package: &str, version: &str, release: &str) -> Value {
    let mut v = json!({"packageName": package, "version": version});
    if !release.is_empty() {
        v["release"] = Value::String(release.to_string());
    }
    v
}

/// The CSV's `spec.release` as opm v1.73.0 reads it (`GetRelease`,
/// operator-registry #1792, #1909): a string as written, a number as its
/// integer digits when whole (else Go's `%g`), absent or null as none;
/// anything else is an error.
pub fn csv_release(csv: &Value) -> Result<String, String> {
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

/// Drops what Go's `omitempty` drops from typed descriptor structs: null,
/// empty strings, empty lists and empty maps, recursively.
fn prune_empty(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Array(a) => {
            let items: Vec<Value> = a
                .iter()
                .filter_map(|i| prune_empty(i).or(Some(Value::Null)))
                .collect();
            let items: Vec<Value> = items.into_iter().filter(|i| !i.is_null()).collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Value::Object(m) => {
            let out: Map<String, Value> = m
                .iter()
                .filter_map(|(k, v)| prune_empty(v).map(|v| (k.clone(), v)))
                .collect();
            (!out.is_empty()).then_some(Value::Object(out))
        }
        other => Some(other.clone()),
    }
}

/// `olm.csv.metadata`: the CSV's annotations, labels and descriptive spec
/// fields. `apiServiceDefinitions`, `crdDescriptions` and `provider` are Go
/// structs, so they are written even when empty.
pub fn csv_metadata(csv: &Value) -> Value {
    let spec = csv.get("spec").cloned().unwrap_or(Value::Null);
    let mut out = Map::new();
    let stringify = |m: &Value| -> Option<Value> {
        let obj = m.as_object()?;
        let mut o = Map::new();
        for (k, v) in obj {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            o.insert(k.clone(), Value::String(s));
        }
        (!o.is_empty()).then_some(Value::Object(o))
    };
    if let Some(a) = csv.pointer("/metadata/annotations").and_then(stringify) {
        out.insert("annotations".into(), a);
    }
    let typed = |key: &str| -> Value {
        spec.get(key)
            .and_then(prune_empty)
            .unwrap_or_else(|| Value::Object(Map::new()))
    };
    let mut apis = typed("apiservicedefinitions");
    let mut crds = typed("customresourcedefinitions");
    restore_resource_fields(&mut apis);
    restore_resource_fields(&mut crds);
    out.insert("apiServiceDefinitions".into(), apis);
    out.insert("crdDescriptions".into(), crds);
    for (from, to) in [
        ("description", "description"),
        ("displayName", "displayName"),
        ("installModes", "installModes"),
        ("keywords", "keywords"),
        ("links", "links"),
        ("maintainers", "maintainers"),
        ("maturity", "maturity"),
        ("minKubeVersion", "minKubeVersion"),
        ("nativeAPIs", "nativeAPIs"),
    ] {
        if let Some(mut v) = spec.get(from).and_then(prune_empty) {
            if from == "nativeAPIs" {
                // metav1.GroupVersionKind has no omitempty.
                for item in v.as_array_mut().into_iter().flatten() {
                    fill_keys(item, &["group", "version", "kind"]);
                }
            }
            out.insert(to.into(), v);
        }
    }
    if let Some(l) = csv.pointer("/metadata/labels").and_then(stringify) {
        out.insert("labels".into(), l);
    }
    out.insert("provider".into(), typed("provider"));
    Value::Object(out)
}

/// Sets missing `keys` of an object to `""` (Go fields without omitempty).
fn fill_keys(v: &mut Value, keys: &[&str]) {
    if let Some(o) = v.as_object_mut() {
        for k in keys {
            o.entry(k.to_string())
                .or_insert_with(|| Value::String(String::new()));
        }
    }
}

/// `APIResourceReference` (`resources` of CRD and API service
/// descriptions) writes `name`, `kind` and `version` even when empty.
fn restore_resource_fields(descs: &mut Value) {
    for list in ["owned", "required"] {
        let Some(items) = descs.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for item in items {
            if let Some(res) = item.get_mut("resources").and_then(Value::as_array_mut) {
                for r in res {
                    fill_keys(r, &["name", "kind", "version"]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
