//! Signatures in an OCI image layout on disk (`oci:DIR[:TAG|@DIGEST]`).
//!
//! The signature image is stored as any other image of the layout: its
//! blobs under `blobs/sha256/`, its manifest in `index.json` with
//! `org.opencontainers.image.ref.name` = `sha256-H.sig`, the name skopeo
//! gives cosign attachments when it copies them into a layout.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde_json::{json, Value};

use super::sigimage::{ImageManifest, SignatureImage, SignatureLayer, OCI_MANIFEST_MEDIA_TYPE};
use super::{sha256_digest, signature_tag};

/// The annotation naming an image in `index.json`.
pub const REF_NAME_ANNOTATION: &str = "org.opencontainers.image.ref.name";

/// An image in an OCI layout directory.
#[derive(Debug, Clone)]
pub struct LayoutStore {
    dir: PathBuf,
    /// Tag (`ref.name`) or `sha256:` digest; `None` means the only image.
    selector: Option<String>,
}

impl LayoutStore {
    /// Parses the part after `oci:`: `DIR`, `DIR:TAG` or `DIR@sha256:HEX`.
    pub fn parse(spec: &str) -> Result<Self> {
        if spec.is_empty() {
            bail!("oci: reference has no directory");
        }
        let (dir, selector) = if let Some((d, digest)) = spec.split_once('@') {
            (d, Some(digest.to_string()))
        } else {
            match spec.rsplit_once(':') {
                Some((d, tag)) if !tag.contains('/') && !d.is_empty() => (d, Some(tag.to_string())),
                _ => (spec, None),
            }
        };
        let store = LayoutStore {
            dir: PathBuf::from(dir),
            selector,
        };
        if !store.dir.join("index.json").is_file() {
            bail!(
                "{}: not an OCI image layout (no index.json)",
                store.dir.display()
            );
        }
        Ok(store)
    }

    /// The layout directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn index_path(&self) -> PathBuf {
        self.dir.join("index.json")
    }

    fn read_index(&self) -> Result<Value> {
        let path = self.index_path();
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let index: Value = serde_json::from_str(&text)
            .with_context(|| format!("{}: not valid JSON", path.display()))?;
        if !index.get("manifests").is_some_and(Value::is_array) {
            bail!("{}: no \"manifests\" array", path.display());
        }
        Ok(index)
    }

    fn write_index(&self, index: &Value) -> Result<()> {
        let path = self.index_path();
        let bytes = serde_json::to_vec(index)?;
        // Write-then-rename so a crash never leaves a half-written index.
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)
            .with_context(|| format!("creating a temporary file in {}", self.dir.display()))?;
        std::io::Write::write_all(&mut tmp, &bytes)?;
        tmp.persist(&path)
            .map_err(|e| anyhow!("writing {}: {}", path.display(), e.error))?;
        Ok(())
    }

    fn blob_path(&self, digest: &str) -> Result<PathBuf> {
        let hex = digest
            .strip_prefix("sha256:")
            .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| anyhow!("unsupported or malformed digest {digest:?}"))?;
        Ok(self.dir.join("blobs/sha256").join(hex))
    }

    /// Reads a blob, checking it hashes to `digest`.
    pub fn read_blob(&self, digest: &str) -> Result<Vec<u8>> {
        let path = self.blob_path(digest)?;
        let data = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let actual = sha256_digest(&data);
        if actual != digest {
            bail!(
                "{}: content hashes to {actual}, not {digest}",
                path.display()
            );
        }
        Ok(data)
    }

    /// Writes a blob (if missing); returns its digest.
    pub fn write_blob(&self, data: &[u8]) -> Result<String> {
        let digest = sha256_digest(data);
        let path = self.blob_path(&digest)?;
        if !path.is_file() {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, data).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(digest)
    }

    fn find(&self, index: &Value, name: &str) -> Option<Value> {
        index["manifests"].as_array()?.iter().find_map(|m| {
            let n = m.get("annotations")?.get(REF_NAME_ANNOTATION)?.as_str()?;
            (n == name).then(|| m.clone())
        })
    }

    /// The manifest digest the selector names.
    pub fn resolve_digest(&self) -> Result<String> {
        let index = self.read_index()?;
        let manifests = index["manifests"].as_array().cloned().unwrap_or_default();
        let chosen = match &self.selector {
            Some(s) if s.starts_with("sha256:") => manifests
                .iter()
                .find(|m| m["digest"].as_str() == Some(s.as_str()))
                .cloned()
                .ok_or_else(|| anyhow!("{}: no manifest {s} in index.json", self.dir.display()))?,
            Some(tag) => self.find(&index, tag).ok_or_else(|| {
                anyhow!(
                    "{}: no image named {tag:?} in index.json",
                    self.dir.display()
                )
            })?,
            None => {
                // Without a name, the layout must hold exactly one image
                // (signature images do not count).
                let images: Vec<&Value> = manifests
                    .iter()
                    .filter(|m| {
                        !m["annotations"][REF_NAME_ANNOTATION]
                            .as_str()
                            .is_some_and(|n| n.ends_with(".sig"))
                    })
                    .collect();
                match images.as_slice() {
                    [one] => (*one).clone(),
                    [] => bail!("{}: index.json lists no images", self.dir.display()),
                    _ => bail!(
                        "{}: index.json lists {} images; name one as oci:DIR:TAG",
                        self.dir.display(),
                        images.len()
                    ),
                }
            }
        };
        let digest = chosen["digest"]
            .as_str()
            .ok_or_else(|| anyhow!("{}: index.json entry has no digest", self.dir.display()))?
            .to_string();
        // The index entry is only a pointer: confirm the blob is there and intact.
        self.read_blob(&digest)?;
        Ok(digest)
    }

    /// Reads the signature image of `digest` (empty when there is none).
    pub fn load_signatures(&self, digest: &str) -> Result<SignatureImage> {
        let index = self.read_index()?;
        let Some(entry) = self.find(&index, &signature_tag(digest)) else {
            return Ok(SignatureImage::default());
        };
        let mdigest = entry["digest"]
            .as_str()
            .ok_or_else(|| anyhow!("{}: signature entry has no digest", self.dir.display()))?;
        let bytes = self.read_blob(mdigest)?;
        let manifest = ImageManifest::parse(&bytes, mdigest).map_err(|e| anyhow!(e))?;
        let mut image = SignatureImage::default();
        for layer in manifest.layers {
            // A missing or altered payload blob shows up as this layer failing,
            // not as the whole verification erroring out.
            let payload = std::fs::read(self.blob_path(&layer.digest)?).unwrap_or_default();
            image.layers.push(SignatureLayer {
                media_type: layer.media_type,
                digest: layer.digest,
                payload,
                annotations: layer.annotations.unwrap_or_default(),
            });
        }
        Ok(image)
    }

    /// Writes `image` as the signature image of `digest`.
    pub fn store_signatures(&self, digest: &str, image: &SignatureImage) -> Result<String> {
        for layer in &image.layers {
            self.write_blob(&layer.payload)?;
        }
        let config = image.config_bytes();
        self.write_blob(&config)?;
        let manifest = image.manifest(&config).to_bytes();
        let mdigest = self.write_blob(&manifest)?;
        let tag = signature_tag(digest);
        let mut index = self.read_index()?;
        let entry = json!({
            "mediaType": OCI_MANIFEST_MEDIA_TYPE,
            "digest": mdigest,
            "size": manifest.len(),
            "annotations": {REF_NAME_ANNOTATION: tag},
        });
        if let Some(list) = index["manifests"].as_array_mut() {
            list.retain(|m| m["annotations"][REF_NAME_ANNOTATION].as_str() != Some(tag.as_str()));
            list.push(entry);
        }
        self.write_index(&index)?;
        Ok(format!("oci:{}:{tag}", self.dir.display()))
    }
}
