//! Copying images by digest between registries and OCI layouts, as
//! `skopeo copy --all --preserve-digests` does: an index with every
//! manifest it lists (all platforms, attestations too, so the index keeps
//! its digest), each manifest with its config and layers, byte for byte.
//!
//! Order keeps the destination consistent: blobs first, then the manifests
//! an index names, then the index, the tag last. What the destination has
//! is not sent again: a manifest already there by digest ends the copy of
//! that image (a registry accepts a manifest only once everything it names
//! is there, and a layout is written in the same order), a blob already
//! there is skipped, and a blob of another repository of the same registry
//! is mounted rather than uploaded. So a copy that stopped midway, run
//! again, sends only what is missing.
//!
//! Blobs up to [`super::transfer::SPOOL_ABOVE`] bytes are held in memory
//! while copied, larger ones (at most [`MAX_COPIED_BLOB`]) go through a
//! temporary file.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::layout::Layout;
use super::media::{self, Descriptor, ImageIndex, ImageManifest};
use super::registry::{RegistryClient, MAX_MANIFEST};
use super::transfer::fetch_manifest;
use super::{ImageRef, OciError, Repo};

/// Largest blob copied (held in memory while it goes across).
pub const MAX_COPIED_BLOB: u64 = super::transfer::MAX_COPIED_LAYER;

/// What one copy did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CopyStats {
    /// The destination had the image already (nothing was copied but,
    /// perhaps, the tag).
    pub already_present: bool,
    /// Manifests and indexes written.
    pub manifests: u64,
    /// Blobs uploaded or written.
    pub blobs_copied: u64,
    /// Blobs mounted from another repository of the destination registry.
    pub blobs_mounted: u64,
    /// Blobs the destination had.
    pub blobs_skipped: u64,
    /// Bytes of the blobs uploaded or written.
    pub bytes_copied: u64,
}

impl CopyStats {
    fn add(&mut self, other: &CopyStats) {
        self.manifests += other.manifests;
        self.blobs_copied += other.blobs_copied;
        self.blobs_mounted += other.blobs_mounted;
        self.blobs_skipped += other.blobs_skipped;
        self.bytes_copied += other.bytes_copied;
    }
}

/// A manifest or index as [`Copier::resolve`] read it.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Its digest.
    pub digest: String,
    /// Its media type.
    pub media_type: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Copies many images with one client, remembering which destination
/// repository received which blob, so that a layer shared by several
/// images (a common base) is uploaded once and mounted into the others.
#[derive(Clone)]
pub struct Copier {
    client: RegistryClient,
    /// (destination host, blob digest) → a repository of that host holding it.
    placed: Arc<Mutex<HashMap<(String, String), String>>>,
    /// Held while a layout's `index.json` is rewritten (read, change,
    /// rename), so parallel copies into one layout do not lose tags.
    layout_index: Arc<Mutex<()>>,
}

impl Copier {
    /// A copier reaching sources and destinations through `client`.
    pub fn new(client: RegistryClient) -> Copier {
        Copier {
            client,
            placed: Arc::default(),
            layout_index: Arc::default(),
        }
    }

    /// The client.
    pub fn client(&self) -> &RegistryClient {
        &self.client
    }

    /// What `src` names now (a tag is resolved; a digest is checked against
    /// the content): its manifest, for [`Self::copy_resolved`].
    pub async fn resolve(&self, src: &ImageRef) -> Result<Resolved, OciError> {
        let (bytes, media_type, digest) = fetch_manifest(&self.client, src).await?;
        Ok(Resolved {
            digest,
            media_type,
            bytes,
        })
    }

    /// Whether `dest`'s repository or layout has the manifest `digest`.
    pub async fn has_manifest(&self, dest: &ImageRef, digest: &str) -> Result<bool, OciError> {
        match dest {
            ImageRef::Registry { repo, .. } => {
                Ok(self.client.find_manifest(repo, digest).await?.is_some())
            }
            ImageRef::Layout { dir, .. } => Ok(Layout::new(dir).blob_descriptor(digest).is_ok()),
        }
    }

    /// Copies the image `src` names (by digest: `src` must carry one) to
    /// `dest`'s repository or layout, by digest, and points `dest`'s tag at
    /// it when `dest` names a tag.
    pub async fn copy(&self, src: &ImageRef, dest: &ImageRef) -> Result<CopyStats, OciError> {
        self.copy_from(src, dest, None).await
    }

    /// [`Self::copy`] of an image [`Self::resolve`] read: its manifest is
    /// not fetched again. `src` is the resolved reference, by tag or digest.
    pub async fn copy_resolved(
        &self,
        src: &ImageRef,
        resolved: &Resolved,
        dest: &ImageRef,
    ) -> Result<CopyStats, OciError> {
        let src = src.with_reference(&resolved.digest);
        self.copy_from(&src, dest, Some(resolved)).await
    }

    async fn copy_from(
        &self,
        src: &ImageRef,
        dest: &ImageRef,
        resolved: Option<&Resolved>,
    ) -> Result<CopyStats, OciError> {
        let digest = match src {
            ImageRef::Registry { reference, .. } | ImageRef::Layout { reference, .. } => {
                reference.clone()
            }
        };
        media::check_digest(&digest).map_err(|reason| OciError::InvalidReference {
            reference: src.to_string(),
            reason: format!("a copy source must name a digest: {reason}"),
        })?;
        let tag = (!dest.is_digest()).then(|| match dest {
            ImageRef::Registry { reference, .. } | ImageRef::Layout { reference, .. } => {
                reference.clone()
            }
        });
        let dest = dest.with_reference(&digest);
        if let Some(top) = self.present_manifest(&dest, &digest).await? {
            if let Some(tag) = &tag {
                self.ensure_tag(&dest, tag, &top).await?;
            }
            return Ok(CopyStats {
                already_present: true,
                ..CopyStats::default()
            });
        }
        let (bytes, media_type, got) = match resolved {
            Some(r) => (r.bytes.clone(), r.media_type.clone(), r.digest.clone()),
            None => fetch_manifest(&self.client, src).await?,
        };
        if got != digest {
            return Err(OciError::DigestMismatch {
                what: format!("manifest {src}"),
                expected: digest,
                actual: got,
            });
        }
        let mut stats = CopyStats::default();
        if media::is_index(&media_type) {
            let index: ImageIndex =
                serde_json::from_slice(&bytes).map_err(|e| OciError::Invalid {
                    what: format!("index {src}"),
                    reason: e.to_string(),
                })?;
            for child in &index.manifests {
                let child_src = src.with_reference(&child.digest);
                let child_dest = dest.with_reference(&child.digest);
                if self.has_manifest(&child_dest, &child.digest).await? {
                    continue;
                }
                let (child_bytes, child_type, child_digest) =
                    fetch_manifest(&self.client, &child_src).await?;
                if child_digest != child.digest {
                    return Err(OciError::DigestMismatch {
                        what: format!("manifest {child_src}"),
                        expected: child.digest.clone(),
                        actual: child_digest,
                    });
                }
                if media::is_index(&child_type) {
                    return Err(OciError::Invalid {
                        what: child_src.to_string(),
                        reason: "an index inside an index is not copied".into(),
                    });
                }
                let s = self
                    .copy_manifest(&child_src, &child_dest, &child_bytes, &child_type)
                    .await?;
                stats.add(&s);
            }
            self.put_manifest(&dest, &digest, &media_type, &bytes)
                .await?;
            stats.manifests += 1;
        } else {
            let s = self.copy_manifest(src, &dest, &bytes, &media_type).await?;
            stats.add(&s);
        }
        if let Some(tag) = &tag {
            self.put_manifest(&dest, tag, &media_type, &bytes).await?;
        }
        Ok(stats)
    }

    /// The manifest `digest` at `dest` (bytes and media type) if there.
    async fn present_manifest(
        &self,
        dest: &ImageRef,
        digest: &str,
    ) -> Result<Option<(Vec<u8>, String)>, OciError> {
        match dest {
            ImageRef::Registry { repo, .. } => Ok(self
                .client
                .find_manifest(repo, digest)
                .await?
                .map(|(b, mt, _)| (b, mt))),
            ImageRef::Layout { .. } => {
                if !self.has_manifest(dest, digest).await? {
                    return Ok(None);
                }
                let (b, mt, _) = fetch_manifest(&self.client, dest).await?;
                Ok(Some((b, mt)))
            }
        }
    }

    /// Points `tag` at `top` unless it already names it.
    async fn ensure_tag(
        &self,
        dest: &ImageRef,
        tag: &str,
        top: &(Vec<u8>, String),
    ) -> Result<(), OciError> {
        let digest = media::sha256_digest(&top.0);
        let current = match dest {
            ImageRef::Registry { repo, .. } => self
                .client
                .find_manifest(repo, tag)
                .await?
                .map(|(_, _, d)| d),
            ImageRef::Layout { dir, .. } => Layout::new(dir).resolve(tag).ok().map(|d| d.digest),
        };
        if current.as_deref() == Some(digest.as_str()) {
            return Ok(());
        }
        self.put_manifest(dest, tag, &top.1, &top.0).await
    }

    /// Copies one image manifest: its config and layers, then itself by digest.
    async fn copy_manifest(
        &self,
        src: &ImageRef,
        dest: &ImageRef,
        bytes: &[u8],
        media_type: &str,
    ) -> Result<CopyStats, OciError> {
        let manifest = ImageManifest::parse(bytes, &format!("manifest {src}"))?;
        let mut stats = CopyStats::default();
        for blob in std::iter::once(&manifest.config).chain(&manifest.layers) {
            if is_foreign(blob) {
                // Non-distributable layers (Windows base layers) stay where
                // their URLs point, as registries expect.
                continue;
            }
            self.copy_blob(src, dest, blob, &mut stats).await?;
        }
        let digest = media::sha256_digest(bytes);
        self.put_manifest(dest, &digest, media_type, bytes).await?;
        stats.manifests += 1;
        Ok(stats)
    }

    async fn copy_blob(
        &self,
        src: &ImageRef,
        dest: &ImageRef,
        blob: &Descriptor,
        stats: &mut CopyStats,
    ) -> Result<(), OciError> {
        let fetch =
            || super::transfer::fetch_blob_body(&self.client, src, blob, MAX_COPIED_BLOB, None);
        match dest {
            ImageRef::Registry { repo, .. } => {
                if self.client.blob_exists(repo, &blob.digest).await? {
                    stats.blobs_skipped += 1;
                    self.remember(repo, &blob.digest);
                    return Ok(());
                }
                for from in self.mount_candidates(src, repo, &blob.digest) {
                    if self.client.mount_blob(repo, &blob.digest, &from).await? {
                        stats.blobs_mounted += 1;
                        self.remember(repo, &blob.digest);
                        return Ok(());
                    }
                }
                let data = fetch().await?;
                self.client.push_blob(repo, blob, &data, None).await?;
                stats.blobs_copied += 1;
                stats.bytes_copied += blob.size;
                self.remember(repo, &blob.digest);
            }
            ImageRef::Layout { dir, .. } => {
                let layout = Layout::new(dir);
                if layout.has_blob(blob) {
                    stats.blobs_skipped += 1;
                    return Ok(());
                }
                let data = fetch().await?;
                layout.init()?;
                let written = layout.put_blob_body(&data)?;
                if written != blob.digest {
                    return Err(OciError::DigestMismatch {
                        what: format!("blob written to {dest}"),
                        expected: blob.digest.clone(),
                        actual: written,
                    });
                }
                stats.blobs_copied += 1;
                stats.bytes_copied += blob.size;
            }
        }
        Ok(())
    }

    /// Repositories of `repo`'s registry a blob could be mounted from: the
    /// source's, when it is on the same registry, and one this copier put
    /// the blob in before.
    fn mount_candidates(&self, src: &ImageRef, repo: &Repo, digest: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let ImageRef::Registry { repo: from, .. } = src {
            if from.host == repo.host && from.name != repo.name {
                out.push(from.name.clone());
            }
        }
        let placed = self.placed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(name) = placed.get(&(repo.host.clone(), digest.to_string())) {
            if name != &repo.name && !out.contains(name) {
                out.push(name.clone());
            }
        }
        out
    }

    fn remember(&self, repo: &Repo, digest: &str) {
        let mut placed = self.placed.lock().unwrap_or_else(|p| p.into_inner());
        placed
            .entry((repo.host.clone(), digest.to_string()))
            .or_insert_with(|| repo.name.clone());
    }

    /// Writes a manifest under `reference` (its digest or a tag).
    async fn put_manifest(
        &self,
        dest: &ImageRef,
        reference: &str,
        media_type: &str,
        bytes: &[u8],
    ) -> Result<(), OciError> {
        if bytes.len() as u64 > MAX_MANIFEST {
            return Err(OciError::TooLarge {
                what: format!("manifest for {dest}"),
                limit: MAX_MANIFEST,
                detail: "manifest".into(),
            });
        }
        match dest {
            ImageRef::Registry { repo, .. } => {
                self.client
                    .put_manifest(repo, reference, media_type, bytes)
                    .await
            }
            ImageRef::Layout { dir, .. } => {
                let layout = Layout::new(dir);
                layout.init()?;
                layout.put_blob(bytes)?;
                if !reference.starts_with("sha256:") {
                    let mut desc = Descriptor::of(media_type, bytes);
                    desc.annotations = None;
                    let _guard = self.layout_index.lock().unwrap_or_else(|p| p.into_inner());
                    layout.set_tag(reference, &desc)?;
                }
                Ok(())
            }
        }
    }
}

/// A non-distributable ("foreign") layer: it names URLs to fetch it from
/// and registries do not hold it.
fn is_foreign(desc: &Descriptor) -> bool {
    desc.media_type.contains("foreign") || desc.media_type.contains("nondistributable")
}
