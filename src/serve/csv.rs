//! The CSV that `opm serve` makes up for a bundle that carries only an
//! `olm.csv.metadata` property (no `olm.bundle.object`): operator-registry's
//! `api.ConvertModelBundleToAPIBundle` fills a `v1alpha1.ClusterServiceVersion`
//! from the metadata and marshals it with Go's `encoding/json`. Fields are
//! written here in Go struct order with Go's `omitempty` rules, so the bytes
//! match; fields the metadata does not carry are written as Go writes their
//! zero values (`creationTimestamp: null`, `cleanup`, `status`).

use serde_json::{Map, Value};

use crate::gojson;

/// What besides the metadata goes into the CSV.
pub struct CsvInputs<'a> {
    /// Bundle (CSV) name.
    pub name: &'a str,
    /// Bundle version (from its `olm.package` property).
    pub version: &'a str,
    /// Package icon: (base64 data, media type).
    pub icon: Option<(&'a str, &'a str)>,
    /// Related images: (name, image).
    pub related_images: Vec<(&'a str, &'a str)>,
    /// Package description, used when the metadata has none.
    pub package_description: &'a str,
}

/// A JSON object writer that keeps the order fields are added in.
struct Obj {
    out: String,
    empty: bool,
}

impl Obj {
    fn new() -> Obj {
        Obj {
            out: String::from("{"),
            empty: true,
        }
    }
    fn raw(&mut self, key: &str, json: &str) {
        if !self.empty {
            self.out.push(',');
        }
        self.empty = false;
        self.out
            .push_str(&gojson::to_string(&Value::String(key.to_string())));
        self.out.push(':');
        self.out.push_str(json);
    }
    fn str(&mut self, key: &str, v: &str) {
        self.raw(key, &gojson::to_string(&Value::String(v.to_string())));
    }
    /// `string` with `omitempty`.
    fn str_oe(&mut self, key: &str, v: &str) {
        if !v.is_empty() {
            self.str(key, v);
        }
    }
    fn done(mut self) -> String {
        self.out.push('}');
        self.out
    }
}

// Fields as Go's `encoding/json` finds them when decoding into a struct
// (`gojson::map_struct_field`): any spelling regardless of case, the last
// winning; a `null` is skipped for a string or struct field and counts
// (nil) for a slice or map.

fn get_str<'a>(m: &'a Map<String, Value>, key: &str) -> &'a str {
    crate::gojson::map_struct_field(m, key)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// A struct-typed field.
fn get_obj<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    crate::gojson::map_struct_field(m, key).and_then(Value::as_object)
}

/// A map-typed field (`map[string]string`).
fn get_map<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Map<String, Value>> {
    crate::gojson::map_struct_field_nullable(m, key).and_then(Value::as_object)
}

fn get_arr<'a>(m: &'a Map<String, Value>, key: &str) -> &'a [Value] {
    crate::gojson::map_struct_field_nullable(m, key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// `[]T` with `omitempty`, each element written by `f`.
fn arr_oe(o: &mut Obj, key: &str, items: &[Value], f: impl Fn(&Map<String, Value>) -> String) {
    if items.is_empty() {
        return;
    }
    let parts: Vec<String> = items
        .iter()
        .map(|v| match v.as_object() {
            Some(m) => f(m),
            None => "{}".to_string(),
        })
        .collect();
    o.raw(key, &format!("[{}]", parts.join(",")));
}

/// `map[string]string` with `omitempty`: Go sorts the keys.
fn string_map_oe(o: &mut Obj, key: &str, m: Option<&Map<String, Value>>) {
    let Some(m) = m else { return };
    if m.is_empty() {
        return;
    }
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    let mut inner = Obj::new();
    for k in keys {
        let v = match &m[k] {
            Value::String(s) => s.clone(),
            other => gojson::to_string(other),
        };
        inner.str(k, &v);
    }
    o.raw(key, &inner.done());
}

fn strings_oe(o: &mut Obj, key: &str, items: &[Value]) {
    if items.is_empty() {
        return;
    }
    let parts: Vec<String> = items
        .iter()
        .map(|v| gojson::to_string(&Value::String(v.as_str().unwrap_or("").to_string())))
        .collect();
    o.raw(key, &format!("[{}]", parts.join(",")));
}

fn app_link(m: &Map<String, Value>) -> String {
    let mut o = Obj::new();
    o.str_oe("name", get_str(m, "name"));
    o.str_oe("url", get_str(m, "url"));
    o.done()
}

fn maintainer(m: &Map<String, Value>) -> String {
    let mut o = Obj::new();
    o.str_oe("name", get_str(m, "name"));
    o.str_oe("email", get_str(m, "email"));
    o.done()
}

fn gvk(m: &Map<String, Value>) -> String {
    let mut o = Obj::new();
    o.str("group", get_str(m, "group"));
    o.str("version", get_str(m, "version"));
    o.str("kind", get_str(m, "kind"));
    o.done()
}

fn install_mode(m: &Map<String, Value>) -> String {
    let mut o = Obj::new();
    o.str("type", get_str(m, "type"));
    let supported = gojson::map_struct_field(m, "supported")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    o.raw("supported", if supported { "true" } else { "false" });
    o.done()
}

fn resource_ref(m: &Map<String, Value>) -> String {
    let mut o = Obj::new();
    o.str("name", get_str(m, "name"));
    o.str("kind", get_str(m, "kind"));
    o.str("version", get_str(m, "version"));
    o.done()
}

/// Spec, status and action descriptors share one layout.
fn descriptor(m: &Map<String, Value>) -> String {
    let mut o = Obj::new();
    o.str("path", get_str(m, "path"));
    o.str_oe("displayName", get_str(m, "displayName"));
    o.str_oe("description", get_str(m, "description"));
    strings_oe(&mut o, "x-descriptors", get_arr(m, "x-descriptors"));
    // `json.RawMessage` with omitempty: left out only when the key is
    // absent; a `null` value is kept and written back as `null`.
    if let Some(v) = gojson::map_struct_field_nullable(m, "value") {
        o.raw("value", &gojson::to_string(v));
    }
    o.done()
}

fn descriptors_tail(o: &mut Obj, m: &Map<String, Value>) {
    arr_oe(o, "resources", get_arr(m, "resources"), resource_ref);
    arr_oe(
        o,
        "statusDescriptors",
        get_arr(m, "statusDescriptors"),
        descriptor,
    );
    arr_oe(
        o,
        "specDescriptors",
        get_arr(m, "specDescriptors"),
        descriptor,
    );
    arr_oe(
        o,
        "actionDescriptors",
        get_arr(m, "actionDescriptors"),
        descriptor,
    );
}

fn crd_description(m: &Map<String, Value>) -> String {
    let mut o = Obj::new();
    o.str("name", get_str(m, "name"));
    o.str("version", get_str(m, "version"));
    o.str("kind", get_str(m, "kind"));
    o.str_oe("displayName", get_str(m, "displayName"));
    o.str_oe("description", get_str(m, "description"));
    descriptors_tail(&mut o, m);
    o.done()
}

fn api_service_description(m: &Map<String, Value>) -> String {
    let mut o = Obj::new();
    o.str("name", get_str(m, "name"));
    o.str("group", get_str(m, "group"));
    o.str("version", get_str(m, "version"));
    o.str("kind", get_str(m, "kind"));
    o.str_oe("deploymentName", get_str(m, "deploymentName"));
    if let Some(port) = gojson::map_struct_field(m, "containerPort").and_then(Value::as_i64) {
        if port != 0 {
            o.raw("containerPort", &port.to_string());
        }
    }
    o.str_oe("displayName", get_str(m, "displayName"));
    o.str_oe("description", get_str(m, "description"));
    descriptors_tail(&mut o, m);
    o.done()
}

fn owned_required(m: Option<&Map<String, Value>>, f: fn(&Map<String, Value>) -> String) -> String {
    let mut o = Obj::new();
    if let Some(m) = m {
        arr_oe(&mut o, "owned", get_arr(m, "owned"), f);
        arr_oe(&mut o, "required", get_arr(m, "required"), f);
    }
    o.done()
}

/// Go's `semver.Version.String()` of the version, as `version.OperatorVersion` marshals it.
fn go_version(v: &str) -> String {
    match semver::Version::parse(v) {
        Ok(parsed) => parsed.to_string(),
        Err(_) => v.to_string(),
    }
}

/// The CSV JSON opm serves for a bundle with `olm.csv.metadata` value `meta`.
pub fn csv_json_from_metadata(meta: &Value, inputs: &CsvInputs<'_>) -> String {
    let empty = Map::new();
    let m = meta.as_object().unwrap_or(&empty);

    let mut metadata = Obj::new();
    metadata.str("name", inputs.name);
    metadata.raw("creationTimestamp", "null");
    string_map_oe(&mut metadata, "labels", get_map(m, "labels"));
    string_map_oe(&mut metadata, "annotations", get_map(m, "annotations"));

    let mut spec = Obj::new();
    spec.raw(
        "install",
        r#"{"strategy":"deployment","spec":{"deployments":null}}"#,
    );
    spec.str("version", &go_version(inputs.version));
    spec.str_oe("maturity", get_str(m, "maturity"));
    spec.raw(
        "customresourcedefinitions",
        &owned_required(get_obj(m, "crdDescriptions"), crd_description),
    );
    spec.raw(
        "apiservicedefinitions",
        &owned_required(get_obj(m, "apiServiceDefinitions"), api_service_description),
    );
    arr_oe(&mut spec, "nativeAPIs", get_arr(m, "nativeAPIs"), gvk);
    spec.str_oe("minKubeVersion", get_str(m, "minKubeVersion"));
    spec.str("displayName", get_str(m, "displayName"));
    let description = match get_str(m, "description") {
        "" => inputs.package_description,
        d => d,
    };
    spec.str_oe("description", description);
    strings_oe(&mut spec, "keywords", get_arr(m, "keywords"));
    arr_oe(
        &mut spec,
        "maintainers",
        get_arr(m, "maintainers"),
        maintainer,
    );
    spec.raw(
        "provider",
        &get_obj(m, "provider")
            .map(app_link)
            .unwrap_or_else(|| "{}".into()),
    );
    arr_oe(&mut spec, "links", get_arr(m, "links"), app_link);
    if let Some((data, mediatype)) = inputs.icon {
        let mut icon = Obj::new();
        icon.str("base64data", data);
        icon.str("mediatype", mediatype);
        spec.raw("icon", &format!("[{}]", icon.done()));
    }
    arr_oe(
        &mut spec,
        "installModes",
        get_arr(m, "installModes"),
        install_mode,
    );
    spec.raw("cleanup", r#"{"enabled":false}"#);
    if !inputs.related_images.is_empty() {
        let parts: Vec<String> = inputs
            .related_images
            .iter()
            .map(|(name, image)| {
                let mut o = Obj::new();
                o.str("name", name);
                o.str("image", image);
                o.done()
            })
            .collect();
        spec.raw("relatedImages", &format!("[{}]", parts.join(",")));
    }

    let mut csv = Obj::new();
    csv.str("kind", "ClusterServiceVersion");
    csv.str("apiVersion", "operators.coreos.com/v1alpha1");
    csv.raw("metadata", &metadata.done());
    csv.raw("spec", &spec.done());
    csv.raw("status", r#"{"cleanup":{}}"#);
    csv.done()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn go_field_order_and_zero_values() {
        let meta = json!({
            "provider": {"name": "Acme"},
            "displayName": "Demo <op>",
            "annotations": {"b": "2", "a": "1"},
            "installModes": [{"supported": true, "type": "OwnNamespace"}],
            "crdDescriptions": {"owned": [{"kind": "K", "name": "ks.x.io", "version": "v1",
                "specDescriptors": [{"path": "p", "x-descriptors": ["u"], "value": {"z": 1, "a": 2}}]}]},
        });
        let out = csv_json_from_metadata(
            &meta,
            &CsvInputs {
                name: "demo.v1.0.0",
                version: "1.0.0",
                icon: Some(("AAAA", "image/png")),
                related_images: vec![("", "quay.io/x/y@sha256:1")],
                package_description: "pkg desc",
            },
        );
        assert_eq!(
            out,
            concat!(
                r#"{"kind":"ClusterServiceVersion","apiVersion":"operators.coreos.com/v1alpha1","#,
                r#""metadata":{"name":"demo.v1.0.0","creationTimestamp":null,"annotations":{"a":"1","b":"2"}},"#,
                r#""spec":{"install":{"strategy":"deployment","spec":{"deployments":null}},"version":"1.0.0","#,
                r#""customresourcedefinitions":{"owned":[{"name":"ks.x.io","version":"v1","kind":"K","#,
                r#""specDescriptors":[{"path":"p","x-descriptors":["u"],"value":{"a":2,"z":1}}]}]},"#,
                r#""apiservicedefinitions":{},"displayName":"Demo \u003cop\u003e","description":"pkg desc","#,
                r#""provider":{"name":"Acme"},"icon":[{"base64data":"AAAA","mediatype":"image/png"}],"#,
                r#""installModes":[{"type":"OwnNamespace","supported":true}],"cleanup":{"enabled":false},"#,
                r#""relatedImages":[{"name":"","image":"quay.io/x/y@sha256:1"}]},"status":{"cleanup":{}}}"#
            )
        );
    }

    #[test]
    fn keys_match_case_insensitively_and_null_raw_values_stay() {
        // encoding/json decodes `DisplayName` into the displayName field, and
        // a `null` descriptor value into a json.RawMessage holding `null`.
        let meta = json!({
            "DisplayName": "Demo",
            "crdDescriptions": {"owned": [{"kind": "K", "name": "ks.x.io", "version": "v1",
                "specDescriptors": [{"path": "p", "value": null}]}]},
        });
        let out = csv_json_from_metadata(
            &meta,
            &CsvInputs {
                name: "demo.v1.0.0",
                version: "1.0.0",
                icon: None,
                related_images: vec![],
                package_description: "",
            },
        );
        assert!(out.contains(r#""displayName":"Demo""#), "{out}");
        assert!(
            out.contains(r#""specDescriptors":[{"path":"p","value":null}]"#),
            "{out}"
        );
    }
}
