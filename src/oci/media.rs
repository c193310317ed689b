//! Media types, descriptors, manifests and indexes (OCI image spec and
//! Docker image manifest v2 schema 2), serialized with a fixed field order so
//! the same image always has the same digest.

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;

/// OCI image manifest.
pub const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// OCI image index.
pub const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
/// OCI image config.
pub const OCI_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
/// OCI gzip-compressed tar layer.
pub const OCI_LAYER_GZIP: &str = "application/vnd.oci.image.layer.v1.tar+gzip";
/// OCI zstd-compressed tar layer (read on pull; zstd:chunked too).
pub const OCI_LAYER_ZSTD: &str = "application/vnd.oci.image.layer.v1.tar+zstd";
/// OCI uncompressed tar layer.
pub const OCI_LAYER_TAR: &str = "application/vnd.oci.image.layer.v1.tar";
/// Docker v2 schema 2 manifest.
pub const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// Docker manifest list.
pub const DOCKER_MANIFEST_LIST: &str = "application/vnd.docker.distribution.manifest.list.v2+json";
/// OCI empty descriptor (the config of artifacts such as signature bundles).
pub const OCI_EMPTY: &str = "application/vnd.oci.empty.v1+json";
/// Docker image config.
pub const DOCKER_CONFIG: &str = "application/vnd.docker.container.image.v1+json";
/// Docker gzip-compressed tar layer.
pub const DOCKER_LAYER_GZIP: &str = "application/vnd.docker.image.rootfs.diff.tar.gzip";

/// The manifest media types this crate reads, for `Accept` headers.
pub const ACCEPTED_MANIFESTS: &str = "application/vnd.oci.image.index.v1+json, \
application/vnd.docker.distribution.manifest.list.v2+json, \
application/vnd.oci.image.manifest.v1+json, \
application/vnd.docker.distribution.manifest.v2+json";

/// Which family of media types an image is written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// OCI image spec media types (the default).
    #[default]
    Oci,
    /// Docker image manifest v2 schema 2 media types.
    Docker,
}

impl Format {
    /// Media type of an image manifest.
    pub fn manifest(self) -> &'static str {
        match self {
            Format::Oci => OCI_MANIFEST,
            Format::Docker => DOCKER_MANIFEST,
        }
    }
    /// Media type of an index (manifest list).
    pub fn index(self) -> &'static str {
        match self {
            Format::Oci => OCI_INDEX,
            Format::Docker => DOCKER_MANIFEST_LIST,
        }
    }
    /// Media type of an image config.
    pub fn config(self) -> &'static str {
        match self {
            Format::Oci => OCI_CONFIG,
            Format::Docker => DOCKER_CONFIG,
        }
    }
    /// Media type of a gzip-compressed tar layer.
    pub fn layer_gzip(self) -> &'static str {
        match self {
            Format::Oci => OCI_LAYER_GZIP,
            Format::Docker => DOCKER_LAYER_GZIP,
        }
    }
    /// The same layer media type in this format: gzip tar layers have the
    /// same bytes in both families, so converting only renames them.
    pub fn convert_layer(self, media_type: &str) -> String {
        match media_type {
            OCI_LAYER_GZIP | DOCKER_LAYER_GZIP => self.layer_gzip().to_string(),
            other => other.to_string(),
        }
    }
}

/// Whether `media_type` is an index (OCI index or Docker manifest list).
pub fn is_index(media_type: &str) -> bool {
    media_type == OCI_INDEX || media_type == DOCKER_MANIFEST_LIST
}

/// Whether `media_type` is a single-image manifest.
pub fn is_manifest(media_type: &str) -> bool {
    media_type == OCI_MANIFEST || media_type == DOCKER_MANIFEST
}

/// `sha256:<hex>` of `data`.
pub fn sha256_digest(data: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(data)))
}

/// Checks that `digest` is `sha256:` followed by 64 lowercase hex digits, so
/// it is safe to use in URLs and as a file name in an OCI layout.
pub(crate) fn check_digest(digest: &str) -> Result<&str, String> {
    match digest.strip_prefix("sha256:") {
        Some(h)
            if h.len() == 64
                && h.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) =>
        {
            Ok(h)
        }
        _ => Err(format!(
            "`{digest}` is not a sha256 digest (only sha256:<64 hex digits> is supported)"
        )),
    }
}

/// A content descriptor.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// Media type of the content.
    pub media_type: String,
    /// Digest of the content.
    pub digest: String,
    /// Size in bytes.
    pub size: u64,
    /// Platform, in an index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

impl Descriptor {
    /// A descriptor of `data`.
    pub fn of(media_type: &str, data: &[u8]) -> Descriptor {
        Descriptor {
            media_type: media_type.to_string(),
            digest: sha256_digest(data),
            size: data.len() as u64,
            platform: None,
            annotations: None,
        }
    }
}

/// A platform of an index entry.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Platform {
    /// CPU architecture (`amd64`, `arm64`, …).
    pub architecture: String,
    /// Operating system (`linux`).
    pub os: String,
    /// OS version.
    #[serde(
        rename = "os.version",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub os_version: Option<String>,
    /// OS features.
    #[serde(
        rename = "os.features",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub os_features: Option<Vec<String>>,
    /// CPU variant (`v8`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

impl Platform {
    /// `os/arch[/variant]`.
    pub fn name(&self) -> String {
        match &self.variant {
            Some(v) => format!("{}/{}/{}", self.os, self.architecture, v),
            None => format!("{}/{}", self.os, self.architecture),
        }
    }
}

/// An image manifest (OCI or Docker v2 schema 2: the same fields).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageManifest {
    /// Always 2.
    pub schema_version: u32,
    /// Media type (required by Docker, recommended by OCI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The artifact type (OCI 1.1; signature bundles use it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    /// The image config.
    pub config: Descriptor,
    /// The layers, base first.
    pub layers: Vec<Descriptor>,
    /// The manifest this one refers to (OCI 1.1 referrers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Descriptor>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

impl ImageManifest {
    /// Parses an image manifest; `what` names it in errors.
    pub fn parse(bytes: &[u8], what: &str) -> Result<ImageManifest, super::OciError> {
        let invalid = |reason: String| super::OciError::Invalid {
            what: what.to_string(),
            reason,
        };
        let m: ImageManifest = serde_json::from_slice(bytes)
            .map_err(|e| invalid(format!("not an image manifest: {e}")))?;
        if m.schema_version != 2 {
            return Err(invalid(format!(
                "schemaVersion {} is not 2",
                m.schema_version
            )));
        }
        Ok(m)
    }
}

/// An image index or Docker manifest list.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageIndex {
    /// Always 2.
    pub schema_version: u32,
    /// Media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The manifests.
    pub manifests: Vec<Descriptor>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// The string labels of an image config (`config.Labels`); none when it
/// has no such object. A label whose value is not a string is left out.
pub fn config_labels(config: &serde_json::Value) -> BTreeMap<String, String> {
    config
        .pointer("/config/Labels")
        .and_then(|l| l.as_object())
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// Serializes `value` as compact JSON (field order fixed by the struct).
pub fn to_json_bytes<T: Serialize>(value: &T) -> Vec<u8> {
    // Serializing these plain structs and JSON values cannot fail.
    serde_json::to_vec(value).unwrap_or_default()
}

/// The media type of a manifest document: its `mediaType` field, else the
/// type the server said, else guessed from its shape.
pub fn manifest_media_type(bytes: &[u8], content_type: Option<&str>) -> Option<String> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Probe {
        media_type: Option<String>,
        manifests: Option<serde_json::Value>,
        config: Option<serde_json::Value>,
    }
    let probe: Probe = serde_json::from_slice(bytes).ok()?;
    if let Some(m) = probe.media_type {
        return Some(m);
    }
    if let Some(ct) = content_type {
        let ct = ct.split(';').next().unwrap_or("").trim();
        if is_index(ct) || is_manifest(ct) {
            return Some(ct.to_string());
        }
    }
    if probe.manifests.is_some() {
        Some(OCI_INDEX.to_string())
    } else if probe.config.is_some() {
        Some(OCI_MANIFEST.to_string())
    } else {
        None
    }
}
