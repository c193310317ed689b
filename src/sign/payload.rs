//! The "simple signing" payload cosign signs for an image.
//!
//! ```json
//! {"critical":{"identity":{"docker-reference":"registry/repo"},
//!              "image":{"docker-manifest-digest":"sha256:..."},
//!              "type":"cosign container image signature"},
//!  "optional":{"key":"value"}}
//! ```
//!
//! Field order and `"optional":null` without annotations match the bytes
//! cosign (Go's encoding/json) writes, so a payload made here is
//! indistinguishable from one cosign made.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `critical.type` of every cosign image signature.
pub const COSIGN_SIGNATURE_TYPE: &str = "cosign container image signature";

/// A simple-signing payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimpleSigning {
    /// What is signed.
    pub critical: Critical,
    /// Free-form annotations (cosign's `-a key=value`); `null` when none.
    pub optional: Option<BTreeMap<String, Value>>,
}

/// The `critical` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Critical {
    /// Which repository the signer meant.
    pub identity: Identity,
    /// Which manifest is signed.
    pub image: Image,
    /// Always [`COSIGN_SIGNATURE_TYPE`].
    #[serde(rename = "type")]
    pub kind: String,
}

/// `critical.identity`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    /// The repository, e.g. `quay.io/org/bundle`.
    #[serde(rename = "docker-reference")]
    pub docker_reference: String,
}

/// `critical.image`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Image {
    /// `sha256:<hex>` of the signed manifest.
    #[serde(rename = "docker-manifest-digest")]
    pub docker_manifest_digest: String,
}

impl SimpleSigning {
    /// The payload for `digest` in `repository`, with `annotations` (none gives `null`).
    pub fn new(repository: &str, digest: &str, annotations: &BTreeMap<String, String>) -> Self {
        let optional = if annotations.is_empty() {
            None
        } else {
            Some(
                annotations
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            )
        };
        SimpleSigning {
            critical: Critical {
                identity: Identity {
                    docker_reference: repository.to_string(),
                },
                image: Image {
                    docker_manifest_digest: digest.to_string(),
                },
                kind: COSIGN_SIGNATURE_TYPE.to_string(),
            },
            optional,
        }
    }

    /// The exact bytes to sign and store.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Serializing plain strings and maps cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Parses a payload.
    pub fn parse(bytes: &[u8]) -> Result<Self, super::Error> {
        serde_json::from_slice(bytes).map_err(|e| super::Error::Payload(e.to_string()))
    }

    /// Required annotations that are missing or differ, as `key=value` of what
    /// was required. Strings compare as is; numbers and booleans by their
    /// JSON text, as cosign's `-a` check does.
    pub fn unmet_annotations(&self, required: &BTreeMap<String, String>) -> Vec<String> {
        required
            .iter()
            .filter(|(k, v)| {
                let found = self.optional.as_ref().and_then(|o| o.get(*k));
                let matches = match found {
                    Some(Value::String(s)) => s == *v,
                    Some(Value::Number(n)) => n.to_string() == **v,
                    Some(Value::Bool(b)) => b.to_string() == **v,
                    _ => false,
                };
                !matches
            })
            .map(|(k, v)| format!("{k}={v}"))
            .collect()
    }
}

/// Parses `key=value` annotation arguments.
pub fn parse_annotations(args: &[String]) -> Result<BTreeMap<String, String>, super::Error> {
    let mut out = BTreeMap::new();
    for a in args {
        let (k, v) = a.split_once('=').ok_or_else(|| {
            super::Error::Annotation(format!("annotation {a:?} is not key=value"))
        })?;
        if k.is_empty() {
            return Err(super::Error::Annotation(format!(
                "annotation {a:?} has an empty key"
            )));
        }
        out.insert(k.to_string(), v.to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_match_cosign_without_annotations() {
        let p = SimpleSigning::new("127.0.0.1:5000/op/bundle", "sha256:abc", &BTreeMap::new());
        assert_eq!(
            String::from_utf8(p.to_bytes()).expect("utf8"),
            r#"{"critical":{"identity":{"docker-reference":"127.0.0.1:5000/op/bundle"},"image":{"docker-manifest-digest":"sha256:abc"},"type":"cosign container image signature"},"optional":null}"#
        );
    }

    #[test]
    fn annotations_are_sorted_and_checked() {
        let a = parse_annotations(&["z=1".into(), "a=b".into()]).expect("parse");
        let p = SimpleSigning::new("r", "sha256:abc", &a);
        assert!(String::from_utf8(p.to_bytes())
            .expect("utf8")
            .ends_with(r#""optional":{"a":"b","z":"1"}}"#));
        assert!(p.unmet_annotations(&a).is_empty());
        let want = parse_annotations(&["a=c".into()]).expect("parse");
        assert_eq!(p.unmet_annotations(&want), vec!["a=c".to_string()]);
        assert!(parse_annotations(&["novalue".into()]).is_err());
    }
}
