//! One bundle as the index stores it: the values opm's `registry.Bundle`
//! derives from a bundle (pkg/registry/bundle.go, csv.go) and `sqlLoader`
//! writes (pkg/sqlite/load.go).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::bundle::properties::{BundleProperties, GVK_TYPE};
use crate::bundle::Bundle;

pub use crate::bundle::ApiKey;

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
    pub fn from_bundle(bundle: &Bundle, image: &str) -> Result<BundleRecord, super::Error> {
        Self::from_bundle_message(bundle, image).map_err(super::Error::Bundle)
    }

    fn from_bundle_message(bundle: &Bundle, image: &str) -> Result<BundleRecord, String> {
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
        for ri in &csv.spec.related_images {
            images.extend(ri.image.clone().filter(|i| !i.is_empty()));
        }
        if let Some(install) = &csv.spec.install {
            for d in &install.spec.deployments {
                images.extend(d.images().into_iter().filter(|i| !i.is_empty()));
            }
        }

        // The rows opm's addBundleProperties and addDependencies write:
        // the bundle's properties as its parser derives them (the same
        // derivation `opm render` uses), and, as dependencies, the
        // metadata dependencies then one olm.gvk per required API.
        let derived = BundleProperties::derive(bundle, csv_manifest, &csv)?;
        // opm's loader refuses a bundle whose annotation does not decode
        // (addBundleProperties returns the error; the parser only warns).
        if let Some(e) = &derived.annotation_error {
            return Err(format!("{e} (opm refuses to add the bundle)"));
        }
        let properties: Vec<(String, String)> = derived
            .properties
            .into_iter()
            .map(|p| (p.kind, p.value))
            .collect();
        let mut dependencies: Vec<(String, String)> = derived
            .dependencies
            .into_iter()
            .map(|p| (p.kind, p.value))
            .collect();
        for api in &derived.required {
            dependencies.push((GVK_TYPE.to_string(), api.gvk.to_json_string()));
        }
        let (version, provided, required) = (derived.version, derived.provided, derived.required);
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
