//! The `olm.csv.metadata` property: the descriptive part of a CSV, as
//! opm's `property.MustBuildCSVMetadata` writes it (what the
//! `bundle-object-to-csv-metadata` migration puts in place of a bundle's
//! `olm.bundle.object` properties, and what the community pipeline's
//! catalogs hold).

use serde_json::{Map, Value};

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
    restore_resource_fields(&mut apis, &names(API_SERVICE_DESCRIPTION));
    restore_resource_fields(&mut crds, &names(CRD_DESCRIPTION));
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

use crate::gojson::GoType::{self, Any, Bool, Int, Map as GoMap, Slice, Str, Struct};

/// The fields of operator-framework/api's spec and status descriptors (an
/// action descriptor has no `value`), in Go's order.
const DESCRIPTOR: &[(&str, GoType)] = &[
    ("path", Str),
    ("displayName", Str),
    ("description", Str),
    ("x-descriptors", Slice(&Str)),
    ("value", Any),
];

/// `APIResourceReference`.
const RESOURCE: &[(&str, GoType)] = &[("name", Str), ("kind", Str), ("version", Str)];

/// The fields of operator-framework/api's `CRDDescription`.
const CRD_DESCRIPTION: &[(&str, GoType)] = &[
    ("name", Str),
    ("version", Str),
    ("kind", Str),
    ("displayName", Str),
    ("description", Str),
    ("resources", Slice(&Struct(RESOURCE))),
    ("statusDescriptors", Slice(&Struct(DESCRIPTOR))),
    ("specDescriptors", Slice(&Struct(DESCRIPTOR))),
    ("actionDescriptors", Slice(&Struct(DESCRIPTOR))),
];

/// The fields of operator-framework/api's `APIServiceDescription`.
const API_SERVICE_DESCRIPTION: &[(&str, GoType)] = &[
    ("name", Str),
    ("group", Str),
    ("version", Str),
    ("kind", Str),
    ("deploymentName", Str),
    ("containerPort", Int(32)),
    ("displayName", Str),
    ("description", Str),
    ("resources", Slice(&Struct(RESOURCE))),
    ("statusDescriptors", Slice(&Struct(DESCRIPTOR))),
    ("specDescriptors", Slice(&Struct(DESCRIPTOR))),
    ("actionDescriptors", Slice(&Struct(DESCRIPTOR))),
];

/// `AppLink`.
const APP_LINK: GoType = Struct(&[("name", Str), ("url", Str)]);

/// opm's `property.CSVMetadata`, the Go type an `olm.csv.metadata` value
/// decodes into (`property.Parse`).
pub const CSV_METADATA_GO_TYPE: GoType = Struct(&[
    ("annotations", GoMap(&Str)),
    (
        "apiServiceDefinitions",
        Struct(&[
            ("owned", Slice(&Struct(API_SERVICE_DESCRIPTION))),
            ("required", Slice(&Struct(API_SERVICE_DESCRIPTION))),
        ]),
    ),
    (
        "crdDescriptions",
        Struct(&[
            ("owned", Slice(&Struct(CRD_DESCRIPTION))),
            ("required", Slice(&Struct(CRD_DESCRIPTION))),
        ]),
    ),
    ("description", Str),
    ("displayName", Str),
    (
        "installModes",
        Slice(&Struct(&[("type", Str), ("supported", Bool)])),
    ),
    ("keywords", Slice(&Str)),
    ("labels", GoMap(&Str)),
    ("links", Slice(&APP_LINK)),
    (
        "maintainers",
        Slice(&Struct(&[("name", Str), ("email", Str)])),
    ),
    ("maturity", Str),
    ("minKubeVersion", Str),
    (
        "nativeAPIs",
        Slice(&Struct(&[("group", Str), ("version", Str), ("kind", Str)])),
    ),
    ("provider", APP_LINK),
]);

/// The JSON names of a Go struct's fields, in order.
fn names(fields: &[(&'static str, GoType)]) -> Vec<&'static str> {
    fields.iter().map(|(n, _)| *n).collect()
}

/// Keeps only `fields` of an object: what decoding into a Go struct keeps
/// (a CSV's `owned` CRDs often carry a `group`, which opm's
/// `olm.csv.metadata` does not have).
fn keep_fields(v: &mut Value, fields: &[&str]) {
    if let Some(o) = v.as_object_mut() {
        o.retain(|k, _| fields.contains(&k.as_str()));
    }
}

/// The CRD or API service descriptions as opm's typed structs write them:
/// only their fields (and their descriptors' and resources' fields), and
/// `APIResourceReference` (`resources`) writes `name`, `kind` and
/// `version` even when empty.
fn restore_resource_fields(descs: &mut Value, fields: &[&str]) {
    for list in ["owned", "required"] {
        let Some(items) = descs.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for item in items {
            keep_fields(item, fields);
            // The leading fields have no omitempty.
            let required = if fields.contains(&"group") { 4 } else { 3 };
            fill_keys(item, &fields[..required]);
            for d in ["statusDescriptors", "specDescriptors", "actionDescriptors"] {
                for desc in item
                    .get_mut(d)
                    .and_then(Value::as_array_mut)
                    .into_iter()
                    .flatten()
                {
                    keep_fields(desc, &names(DESCRIPTOR));
                    fill_keys(desc, &["path"]);
                }
            }
            if let Some(res) = item.get_mut("resources").and_then(Value::as_array_mut) {
                for r in res {
                    keep_fields(r, &names(RESOURCE));
                    fill_keys(r, &names(RESOURCE));
                }
            }
        }
    }
}
