//! A typed view of a ClusterServiceVersion (`operators.coreos.com/v1alpha1`).
//!
//! Only what the tool reads is typed; everything else stays in the
//! manifest's JSON. Decoding is lenient where YAML is ambiguous (a `version:
//! 1.2` read as a number still gives the string "1.2"; the validator reports
//! the type problem separately from the located tree) and strict elsewhere:
//! a field of the wrong shape is a [`DecodeError`] naming the field.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::yaml::Rule;

pub use super::gvk::Gvk;

/// Why a CSV does not decode into the typed view.
#[derive(Debug, Clone, thiserror::Error)]
#[error("field `{path}`: {message}")]
pub struct DecodeError {
    /// Dotted path of the offending field, e.g. `spec.installModes[0].supported`.
    pub path: String,
    /// What serde said.
    pub message: String,
}

impl DecodeError {
    /// The path as segments, for locating it in the YAML tree.
    pub fn segments(&self) -> Vec<crate::yaml::Seg> {
        let mut segs = Vec::new();
        for part in self.path.split('.') {
            let (key, rest) = match part.find('[') {
                Some(i) => (&part[..i], &part[i..]),
                None => (part, ""),
            };
            if !key.is_empty() && key != "?" {
                segs.push(crate::yaml::Seg::Key(key.to_string()));
            }
            for idx in rest.split('[').filter(|s| !s.is_empty()) {
                if let Ok(i) = idx.trim_end_matches(']').parse::<usize>() {
                    segs.push(crate::yaml::Seg::Index(i));
                }
            }
        }
        segs
    }
}

/// Accepts a string, number or boolean and yields its text.
fn lenient_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = Option::<Value>::deserialize(d)?;
    Ok(match v {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(Value::Bool(b)) => Some(b.to_string()),
        Some(other) => {
            return Err(serde::de::Error::custom(format!(
                "expected a string, found {}",
                json_type(&other)
            )))
        }
    })
}

/// Accepts a mapping whose values are scalars; values become strings.
fn string_map<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    let v = Option::<BTreeMap<String, Value>>::deserialize(d)?;
    Ok(v.unwrap_or_default()
        .into_iter()
        .map(|(k, v)| {
            let s = match v {
                Value::String(s) => s,
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (k, s)
        })
        .collect())
}

/// Treats `null` as the default (Go does for slices and maps).
fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// The JSON type of a value, for messages.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// A ClusterServiceVersion.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Csv {
    /// `apiVersion`.
    #[serde(deserialize_with = "lenient_string")]
    pub api_version: Option<String>,
    /// `kind`.
    #[serde(deserialize_with = "lenient_string")]
    pub kind: Option<String>,
    /// `metadata`.
    #[serde(deserialize_with = "null_default")]
    pub metadata: ObjectMeta,
    /// `spec`.
    #[serde(deserialize_with = "null_default")]
    pub spec: CsvSpec,
}

impl Csv {
    /// Decodes a CSV from its JSON.
    pub fn from_json(json: &Value) -> Result<Csv, DecodeError> {
        decode(json)
    }

    /// Decodes a CSV straight from its located YAML tree (no JSON copy).
    pub fn from_node(node: &crate::yaml::Node) -> Result<Csv, DecodeError> {
        decode(node)
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.metadata.name()
    }

    /// A `metadata.annotations` value.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.metadata.annotation(key)
    }

    /// The `olm.skipRange` annotation.
    pub fn skip_range(&self) -> Option<&str> {
        self.metadata.skip_range()
    }

    /// `spec.version` parsed as semver, if it is strict semver.
    pub fn semver(&self) -> Option<semver::Version> {
        self.spec
            .version
            .as_deref()
            .and_then(|v| semver::Version::parse(v).ok())
    }
}

/// Decodes a typed view (from JSON or the located YAML tree), naming the
/// field on error. The path is tracked only on a second pass after a
/// failure: tracking it always was a twentieth of a whole-catalog
/// `bundle validate`, and the decode is deterministic, so the second pass
/// fails with the same error.
pub(crate) fn decode<'de, D: Deserializer<'de> + Copy, T: Deserialize<'de>>(
    d: D,
) -> Result<T, DecodeError> {
    if let Ok(v) = T::deserialize(d) {
        return Ok(v);
    }
    serde_path_to_error::deserialize(d).map_err(|e| DecodeError {
        path: e.path().to_string(),
        message: e.inner().to_string(),
    })
}

/// The fields of a CSV that place it in an upgrade graph: name, version,
/// `replaces`, `skips` and the annotations (`olm.skipRange`,
/// `olm.substitutesFor`).
///
/// opm reads these the same way, each on its own (its CSV type keeps `spec`
/// as raw JSON and decodes `replaces` or `skips` when asked), so a CSV whose
/// other fields have the wrong shape still has a place in opm's graph; and
/// checking a whole catalog does not pay for decoding install strategies.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CsvGraphView {
    /// `metadata`.
    #[serde(deserialize_with = "null_default")]
    pub metadata: ObjectMeta,
    /// `spec`, the graph's part of it.
    #[serde(deserialize_with = "null_default")]
    pub spec: CsvGraphSpec,
}

/// `spec.version`, `spec.replaces` and `spec.skips`, decoded as in [`CsvSpec`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CsvGraphSpec {
    /// `version`.
    #[serde(deserialize_with = "lenient_string")]
    pub version: Option<String>,
    /// `replaces`.
    #[serde(deserialize_with = "lenient_string")]
    pub replaces: Option<String>,
    /// `skips`.
    #[serde(deserialize_with = "null_default")]
    pub skips: Vec<String>,
}

/// The keys of a CSV that [`CsvGraphView`] reads, or whose shape can make
/// it fail, for [`crate::yaml::prune`]: a pruned CSV decodes to the
/// same view as the whole one. Annotation values other than these two are
/// not kept: `string_map` accepts any value, so dropping them changes nothing
/// (and `alm-examples` is often most of the file).
pub const CSV_GRAPH_KEYS: &[(&str, Rule)] = &[
    ("apiVersion", Rule::Keep),
    ("kind", Rule::Keep),
    (
        "metadata",
        Rule::Select(&[
            ("name", Rule::Keep),
            ("namespace", Rule::Keep),
            ("labels", Rule::Keep),
            (
                "annotations",
                Rule::Select(&[
                    ("olm.skipRange", Rule::Keep),
                    ("olm.substitutesFor", Rule::Keep),
                ]),
            ),
        ]),
    ),
    (
        "spec",
        Rule::Select(&[
            ("version", Rule::Keep),
            ("replaces", Rule::Keep),
            ("skips", Rule::Keep),
        ]),
    ),
];

impl CsvGraphView {
    /// Decodes the graph's fields from a CSV's located YAML tree.
    pub fn from_node(node: &crate::yaml::Node) -> Result<CsvGraphView, DecodeError> {
        decode(node)
    }

    /// What the graph reads, in one comparable value: name, version,
    /// replaces, skips, `olm.skipRange`, `olm.substitutesFor` (a view of a
    /// pruned CSV lacks the other annotations, so views are compared by this).
    pub fn graph_facts(&self) -> [String; 6] {
        [
            self.metadata.name().to_string(),
            self.spec.version.clone().unwrap_or_default(),
            self.spec.replaces.clone().unwrap_or_default(),
            self.spec.skips.join(","),
            self.metadata.skip_range().unwrap_or_default().to_string(),
            self.metadata
                .annotation("olm.substitutesFor")
                .unwrap_or_default()
                .to_string(),
        ]
    }
}

/// Kubernetes object metadata (the parts read).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ObjectMeta {
    /// `name`.
    #[serde(deserialize_with = "lenient_string")]
    pub name: Option<String>,
    /// `namespace`.
    #[serde(deserialize_with = "lenient_string")]
    pub namespace: Option<String>,
    /// `annotations`.
    #[serde(deserialize_with = "string_map")]
    pub annotations: BTreeMap<String, String>,
    /// `labels`.
    #[serde(deserialize_with = "string_map")]
    pub labels: BTreeMap<String, String>,
}

impl ObjectMeta {
    /// `name`, empty if missing.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    /// An `annotations` value.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.get(key).map(String::as_str)
    }

    /// The `olm.skipRange` annotation.
    pub fn skip_range(&self) -> Option<&str> {
        self.annotation("olm.skipRange")
    }
}

/// `spec` of a CSV.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CsvSpec {
    /// `displayName`.
    #[serde(deserialize_with = "lenient_string")]
    pub display_name: Option<String>,
    /// `description`.
    #[serde(deserialize_with = "lenient_string")]
    pub description: Option<String>,
    /// `keywords`.
    #[serde(deserialize_with = "null_default")]
    pub keywords: Vec<String>,
    /// `version`, as text even when YAML read it as a number.
    #[serde(deserialize_with = "lenient_string")]
    pub version: Option<String>,
    /// `replaces`: the CSV name this one upgrades from.
    #[serde(deserialize_with = "lenient_string")]
    pub replaces: Option<String>,
    /// `skips`: CSV names this one also replaces.
    #[serde(deserialize_with = "null_default")]
    pub skips: Vec<String>,
    /// `minKubeVersion`.
    #[serde(deserialize_with = "lenient_string")]
    pub min_kube_version: Option<String>,
    /// `maturity`.
    #[serde(deserialize_with = "lenient_string")]
    pub maturity: Option<String>,
    /// `provider`.
    pub provider: Option<Provider>,
    /// `maintainers`.
    #[serde(deserialize_with = "null_default")]
    pub maintainers: Vec<Maintainer>,
    /// `links`.
    #[serde(deserialize_with = "null_default")]
    pub links: Vec<Link>,
    /// `icon`.
    #[serde(deserialize_with = "null_default")]
    pub icon: Vec<Icon>,
    /// `labels`.
    #[serde(deserialize_with = "string_map")]
    pub labels: BTreeMap<String, String>,
    /// `selector`.
    pub selector: Option<Value>,
    /// `installModes`.
    #[serde(deserialize_with = "null_default")]
    pub install_modes: Vec<InstallMode>,
    /// `install`.
    pub install: Option<Install>,
    /// `customresourcedefinitions`.
    #[serde(
        rename = "customresourcedefinitions",
        deserialize_with = "null_default"
    )]
    pub crds: CrdDescriptions,
    /// `apiservicedefinitions`.
    #[serde(rename = "apiservicedefinitions", deserialize_with = "null_default")]
    pub api_services: ApiServiceDescriptions,
    /// `webhookdefinitions`.
    #[serde(rename = "webhookdefinitions", deserialize_with = "null_default")]
    pub webhooks: Vec<WebhookDescription>,
    /// `relatedImages`.
    #[serde(deserialize_with = "null_default")]
    pub related_images: Vec<RelatedImage>,
    /// `nativeAPIs`.
    #[serde(rename = "nativeAPIs", deserialize_with = "null_default")]
    pub native_apis: Vec<Gvk>,
    /// `cleanup`.
    pub cleanup: Option<Value>,
}

/// `spec.provider`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Provider {
    /// `name`.
    #[serde(deserialize_with = "lenient_string")]
    pub name: Option<String>,
    /// `url`.
    #[serde(deserialize_with = "lenient_string")]
    pub url: Option<String>,
}

/// An entry of `spec.maintainers`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Maintainer {
    /// `name`.
    #[serde(deserialize_with = "lenient_string")]
    pub name: Option<String>,
    /// `email`.
    #[serde(deserialize_with = "lenient_string")]
    pub email: Option<String>,
}

/// An entry of `spec.links`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Link {
    /// `name`.
    #[serde(deserialize_with = "lenient_string")]
    pub name: Option<String>,
    /// `url`.
    #[serde(deserialize_with = "lenient_string")]
    pub url: Option<String>,
}

/// An entry of `spec.icon`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Icon {
    /// `base64data`.
    #[serde(deserialize_with = "lenient_string")]
    pub base64data: Option<String>,
    /// `mediatype`.
    #[serde(deserialize_with = "lenient_string")]
    pub mediatype: Option<String>,
}

/// An entry of `spec.installModes`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct InstallMode {
    /// `type`: OwnNamespace, SingleNamespace, MultiNamespace or AllNamespaces.
    #[serde(rename = "type", deserialize_with = "lenient_string")]
    pub mode_type: Option<String>,
    /// `supported`.
    pub supported: bool,
}

/// `spec.install`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Install {
    /// `strategy`, `deployment` for every bundle OLM installs.
    #[serde(deserialize_with = "lenient_string")]
    pub strategy: Option<String>,
    /// `spec`.
    #[serde(deserialize_with = "null_default")]
    pub spec: InstallSpec,
}

/// `spec.install.spec`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct InstallSpec {
    /// `deployments`.
    #[serde(deserialize_with = "null_default")]
    pub deployments: Vec<DeploymentSpec>,
    /// `permissions` (namespaced).
    #[serde(deserialize_with = "null_default")]
    pub permissions: Vec<Permission>,
    /// `clusterPermissions`.
    #[serde(deserialize_with = "null_default")]
    pub cluster_permissions: Vec<Permission>,
}

/// An entry of `spec.install.spec.deployments`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DeploymentSpec {
    /// `name`.
    #[serde(deserialize_with = "lenient_string")]
    pub name: Option<String>,
    /// `spec`: a Kubernetes DeploymentSpec, kept as JSON.
    pub spec: Option<Value>,
    /// `label`.
    #[serde(deserialize_with = "string_map")]
    pub label: BTreeMap<String, String>,
}

impl DeploymentSpec {
    /// Container images of the pod template (init containers included).
    pub fn images(&self) -> Vec<String> {
        let mut out = Vec::new();
        let Some(pod) = self.spec.as_ref().and_then(|s| s.pointer("/template/spec")) else {
            return out;
        };
        for list in ["initContainers", "containers"] {
            if let Some(cs) = pod.get(list).and_then(Value::as_array) {
                for c in cs {
                    if let Some(img) = c.get("image").and_then(Value::as_str) {
                        out.push(img.to_string());
                    }
                }
            }
        }
        out
    }
}

/// An entry of `permissions` or `clusterPermissions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Permission {
    /// `serviceAccountName`.
    #[serde(deserialize_with = "lenient_string")]
    pub service_account_name: Option<String>,
    /// `rules`: RBAC PolicyRules, kept as JSON.
    #[serde(deserialize_with = "null_default")]
    pub rules: Vec<Value>,
}

/// `spec.customresourcedefinitions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CrdDescriptions {
    /// CRDs this operator owns.
    #[serde(deserialize_with = "null_default")]
    pub owned: Vec<CrdDescription>,
    /// CRDs this operator needs from another operator.
    #[serde(deserialize_with = "null_default")]
    pub required: Vec<CrdDescription>,
}

/// An owned or required CRD.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CrdDescription {
    /// `name`: `<plural>.<group>`.
    #[serde(deserialize_with = "lenient_string")]
    pub name: Option<String>,
    /// `version`.
    #[serde(deserialize_with = "lenient_string")]
    pub version: Option<String>,
    /// `kind`.
    #[serde(deserialize_with = "lenient_string")]
    pub kind: Option<String>,
    /// `displayName`.
    #[serde(deserialize_with = "lenient_string")]
    pub display_name: Option<String>,
    /// `description`.
    #[serde(deserialize_with = "lenient_string")]
    pub description: Option<String>,
    /// `resources`.
    #[serde(deserialize_with = "null_default")]
    pub resources: Vec<Value>,
    /// `specDescriptors`.
    #[serde(deserialize_with = "null_default")]
    pub spec_descriptors: Vec<Value>,
    /// `statusDescriptors`.
    #[serde(deserialize_with = "null_default")]
    pub status_descriptors: Vec<Value>,
    /// `actionDescriptors`.
    #[serde(deserialize_with = "null_default")]
    pub action_descriptors: Vec<Value>,
}

impl CrdDescription {
    /// `(plural, group)` split from `name`.
    pub fn plural_and_group(&self) -> (&str, &str) {
        let name = self.name.as_deref().unwrap_or("");
        name.split_once('.').unwrap_or((name, ""))
    }
}

/// `spec.apiservicedefinitions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ApiServiceDescriptions {
    /// APIServices this operator owns.
    #[serde(deserialize_with = "null_default")]
    pub owned: Vec<ApiServiceDescription>,
    /// APIServices this operator needs.
    #[serde(deserialize_with = "null_default")]
    pub required: Vec<ApiServiceDescription>,
}

/// An owned or required APIService.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ApiServiceDescription {
    /// `name` (plural).
    #[serde(deserialize_with = "lenient_string")]
    pub name: Option<String>,
    /// `group`.
    #[serde(deserialize_with = "lenient_string")]
    pub group: Option<String>,
    /// `version`.
    #[serde(deserialize_with = "lenient_string")]
    pub version: Option<String>,
    /// `kind`.
    #[serde(deserialize_with = "lenient_string")]
    pub kind: Option<String>,
    /// `displayName`.
    #[serde(deserialize_with = "lenient_string")]
    pub display_name: Option<String>,
    /// `description`.
    #[serde(deserialize_with = "lenient_string")]
    pub description: Option<String>,
    /// `deploymentName`.
    #[serde(deserialize_with = "lenient_string")]
    pub deployment_name: Option<String>,
    /// `containerPort`.
    pub container_port: Option<i64>,
}

/// An entry of `spec.webhookdefinitions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct WebhookDescription {
    /// `generateName`.
    #[serde(deserialize_with = "lenient_string")]
    pub generate_name: Option<String>,
    /// `type`: ValidatingAdmissionWebhook, MutatingAdmissionWebhook or ConversionWebhook.
    #[serde(rename = "type", deserialize_with = "lenient_string")]
    pub webhook_type: Option<String>,
    /// `deploymentName`.
    #[serde(deserialize_with = "lenient_string")]
    pub deployment_name: Option<String>,
    /// `containerPort`.
    pub container_port: Option<i64>,
    /// `targetPort`.
    pub target_port: Option<Value>,
    /// `webhookPath`.
    #[serde(deserialize_with = "lenient_string")]
    pub webhook_path: Option<String>,
    /// `conversionCRDs`.
    #[serde(rename = "conversionCRDs", deserialize_with = "null_default")]
    pub conversion_crds: Vec<String>,
    /// `admissionReviewVersions`.
    #[serde(deserialize_with = "null_default")]
    pub admission_review_versions: Vec<String>,
    /// `sideEffects`.
    #[serde(deserialize_with = "lenient_string")]
    pub side_effects: Option<String>,
    /// `failurePolicy`.
    #[serde(deserialize_with = "lenient_string")]
    pub failure_policy: Option<String>,
    /// `rules`.
    #[serde(deserialize_with = "null_default")]
    pub rules: Vec<Value>,
}

/// An entry of `spec.relatedImages`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct RelatedImage {
    /// `name`.
    #[serde(deserialize_with = "lenient_string")]
    pub name: Option<String>,
    /// `image`.
    #[serde(deserialize_with = "lenient_string")]
    pub image: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decodes_leniently_and_reports_paths() {
        let csv = Csv::from_json(&json!({
            "metadata": {"name": "x.v1.2", "annotations": {"olm.skipRange": "<1.2.0", "n": 5}},
            "spec": {"version": 1.2, "installModes": [{"type": "OwnNamespace", "supported": true}], "skips": null}
        }))
        .expect("decodes");
        assert_eq!(csv.spec.version.as_deref(), Some("1.2"));
        assert_eq!(csv.skip_range(), Some("<1.2.0"));
        assert_eq!(csv.annotation("n"), Some("5"));
        assert!(csv.semver().is_none());
        let e = Csv::from_json(&json!({"spec": {"installModes": [{"supported": "yes"}]}}))
            .expect_err("wrong type");
        assert_eq!(e.path, "spec.installModes[0].supported");
        assert_eq!(
            e.segments(),
            crate::path!["spec", "installModes", 0, "supported"]
        );
    }

    /// The tree decodes to what its JSON copy decodes to, errors included.
    #[test]
    fn decoding_the_tree_equals_decoding_its_json() {
        let good =
            "metadata:\n  name: x.v1.2\n  annotations: {olm.skipRange: '<1.2.0', n: 5, f: .nan}\n\
                    spec:\n  version: 1.2\n  replaces: x.v1.1\n  skips: ~\n  \
                    installModes: [{type: OwnNamespace, supported: yes}]\n";
        let bad = "spec:\n  replaces: x.v1.1\n  installModes:\n  - supported: 'yes'\n";
        for text in [good, bad] {
            let docs = crate::yaml::parse_documents(text).expect("parses");
            let root = &docs[0].root;
            let (tree, json) = (Csv::from_node(root), Csv::from_json(&root.to_json()));
            assert_eq!(format!("{tree:?}"), format!("{json:?}"), "{text}");
        }
        let root = &crate::yaml::parse_documents(bad).expect("parses")[0].root;
        let e = Csv::from_node(root).expect_err("wrong type");
        assert_eq!(e.path, "spec.installModes[0].supported");
        assert!(e.message.contains("expected a boolean"), "{}", e.message);
    }

    /// The graph's view decodes past fields of the wrong shape that it does
    /// not read (as opm does), and names the field when one it reads is wrong.
    #[test]
    fn graph_view_reads_only_its_fields() {
        let parse = |t: &str| crate::yaml::parse_documents(t).expect("parses");
        let docs = parse(
            "metadata: {name: x.v2, annotations: {olm.skipRange: '<2.0.0'}}\n\
             spec: {version: 2.0.0, replaces: x.v1, skips: [x.v1.5], installModes: [{supported: 'yes'}]}\n",
        );
        let v = CsvGraphView::from_node(&docs[0].root).expect("decodes");
        assert_eq!(v.metadata.name(), "x.v2");
        assert_eq!(v.metadata.skip_range(), Some("<2.0.0"));
        assert_eq!(v.spec.version.as_deref(), Some("2.0.0"));
        assert_eq!(v.spec.replaces.as_deref(), Some("x.v1"));
        assert_eq!(v.spec.skips, ["x.v1.5"]);
        assert!(Csv::from_node(&docs[0].root).is_err());
        let docs = parse("spec: {skips: {a: b}}\n");
        let e = CsvGraphView::from_node(&docs[0].root).expect_err("skips is a mapping");
        assert_eq!(e.path, "spec.skips");
    }
    /// A CSV pruned to [`CSV_GRAPH_KEYS`] decodes to the graph view of the
    /// whole CSV, errors in the fields read included, on the same lines.
    #[test]
    fn pruned_csv_decodes_to_the_same_graph_view() {
        let good = "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n\
                    metadata:\n  annotations:\n    alm-examples: |-\n      [{\"a\": 1}]\n    \
                    olm.skipRange: '>=1.0.0 <1.2.0'\n    capabilities: Basic Install\n  name: x.v1.2\n  \
                    labels: {a: b}\nspec:\n  install:\n    spec:\n      deployments: []\n  \
                    version: 1.2.0\n  skips:\n  - x.v1.1.1\n  replaces: x.v1.1\n  \
                    installModes: [{supported: 'yes'}]\nstatus: {}\n";
        let bad =
            "kind: ClusterServiceVersion\nmetadata:\n  name: x\n  labels: [a]\nspec:\n  icon: x\n";
        for text in [good, bad] {
            let pruned = crate::yaml::prune(text, CSV_GRAPH_KEYS).expect("block style");
            assert!(pruned.len() < text.len());
            assert_eq!(pruned.lines().count(), text.lines().count());
            let view = |t: &str| {
                let docs = crate::yaml::parse_documents(t).expect("parses");
                CsvGraphView::from_node(&docs[0].root)
                    .map(|v| v.graph_facts())
                    .map_err(|e| e.path)
            };
            assert_eq!(
                format!("{:?}", view(&pruned)),
                format!("{:?}", view(text)),
                "{text}"
            );
        }
        let docs = crate::yaml::parse_documents(
            &crate::yaml::prune(good, CSV_GRAPH_KEYS).expect("block style"),
        )
        .expect("parses");
        assert_eq!(
            docs[0].root.locate(&crate::path!["spec", "replaces"]).line,
            18
        );
    }
}
