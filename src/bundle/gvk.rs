//! Group/version/kind: the one shape every module uses for an API a bundle
//! provides or requires (CSV `nativeAPIs`, `olm.gvk` properties, the index's
//! `api` table, the gRPC `GroupVersionKind`, validation keys).

use serde::Deserialize;
use serde_json::Value;

/// A group/version/kind. Ordered by group, then version, then kind.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(default)]
pub struct Gvk {
    /// `group`.
    pub group: String,
    /// `version`.
    pub version: String,
    /// `kind`.
    pub kind: String,
}

impl Gvk {
    /// A group/version/kind from its three parts.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
    ) -> Gvk {
        Gvk {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    /// The `group`, `version` and `kind` string fields of a JSON object
    /// (an `olm.gvk` value, say); a missing or non-string field is empty.
    pub fn from_json(v: &Value) -> Gvk {
        let f = |k: &str| crate::gojson::struct_str(v, k).to_string();
        Gvk::new(f("group"), f("version"), f("kind"))
    }

    /// The `olm.gvk` property value, `{"group","kind","version"}` (the
    /// order of opm's `GVK` struct fields, which is also sorted order).
    pub fn to_json(&self) -> Value {
        serde_json::json!({"group": self.group, "kind": self.kind, "version": self.version})
    }

    /// [`Gvk::to_json`] as Go's `json.Marshal` writes it.
    pub fn to_json_string(&self) -> String {
        crate::gojson::to_string(&self.to_json())
    }
}

impl std::fmt::Display for Gvk {
    /// `group/version, Kind=kind`, as Kubernetes' `GroupVersionKind.String`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

/// An API with its plural resource name, as opm's `registry.APIKey` and the
/// index's `api` table hold it.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ApiKey {
    /// Group, version and kind.
    pub gvk: Gvk,
    /// Plural resource name.
    pub plural: String,
}

impl ApiKey {
    /// An API key from its parts.
    pub fn new(gvk: Gvk, plural: impl Into<String>) -> ApiKey {
        ApiKey {
            gvk,
            plural: plural.into(),
        }
    }
}
