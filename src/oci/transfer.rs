//! Moving images: pushing an [`ImageSet`] to a registry or an OCI layout, and
//! reading manifests and blobs from either.
//!
//! Order is what keeps tags safe: every blob first (skipping those the
//! destination has, mounting from another repository of the same registry
//! when possible), then the manifests an index names (by digest), and the
//! tagged manifest last. A push that fails midway leaves the tag where it was;
//! running it again uploads only what is missing.

use super::build::{BaseEntry, BaseImage, BlobSource, ImageSet};
use super::layout::Layout;
use super::media::{self, Descriptor, ImageIndex, ImageManifest};
use super::progress::{human_bytes, Progress, ProgressMode};
use super::registry::{BlobBody, RegistryClient};
use super::{ImageRef, OciError};

/// Largest config blob read.
pub const MAX_CONFIG: u64 = 16 * 1024 * 1024;
/// Largest base-image layer copied between registries (held in memory).
pub const MAX_COPIED_LAYER: u64 = 2 * 1024 * 1024 * 1024;

/// Fetches the manifest or index `src` names: bytes, media type, digest.
pub async fn fetch_manifest(
    client: &RegistryClient,
    src: &ImageRef,
) -> Result<(Vec<u8>, String, String), OciError> {
    match src {
        ImageRef::Registry { repo, reference } => client.get_manifest(repo, reference).await,
        ImageRef::Layout { dir, reference } => {
            let layout = Layout::new(dir);
            let desc = match layout.resolve(reference) {
                Ok(d) => d,
                // Manifests an index points to are blobs not listed in
                // index.json: read them by digest.
                Err(OciError::NotFound { .. }) if reference.starts_with("sha256:") => {
                    layout.blob_descriptor(reference)?
                }
                Err(e) => return Err(e),
            };
            let bytes = layout.get_blob(&desc, super::registry::MAX_MANIFEST)?;
            let mt =
                media::manifest_media_type(&bytes, Some(&desc.media_type)).ok_or_else(|| {
                    OciError::Invalid {
                        what: src.to_string(),
                        reason: "not an image manifest or index".into(),
                    }
                })?;
            Ok((bytes, mt, desc.digest))
        }
    }
}

/// Fetches a blob of the image at `src`, checking size and digest.
pub async fn fetch_blob(
    client: &RegistryClient,
    src: &ImageRef,
    desc: &Descriptor,
    limit: u64,
    progress: Option<&Progress>,
) -> Result<Vec<u8>, OciError> {
    match src {
        ImageRef::Registry { repo, .. } => client.get_blob(repo, desc, limit, progress).await,
        ImageRef::Layout { dir, .. } => {
            let desc = desc.clone();
            let data = in_layout(dir, move |l| l.get_blob(&desc, limit)).await?;
            if let Some(p) = progress {
                p.inc(data.len() as u64);
            }
            Ok(data)
        }
    }
}

/// Runs `read` on the layout at `dir` off the async threads (it reads
/// files).
async fn in_layout<T: Send + 'static>(
    dir: &std::path::Path,
    read: impl FnOnce(&Layout) -> Result<T, OciError> + Send + 'static,
) -> Result<T, OciError> {
    let layout = Layout::new(dir);
    tokio::task::spawn_blocking(move || read(&layout))
        .await
        .map_err(|e| OciError::Task {
            what: "reading the layout".into(),
            reason: e.to_string(),
        })?
}

/// Blobs larger than this are spooled to a temporary file while they are
/// copied, so that copying many large layers at once does not hold them all.
pub const SPOOL_ABOVE: u64 = 8 * 1024 * 1024;

/// [`fetch_blob`] as a [`BlobBody`]: in memory up to [`SPOOL_ABOVE`]
/// bytes, in a temporary file above.
pub async fn fetch_blob_body(
    client: &RegistryClient,
    src: &ImageRef,
    desc: &Descriptor,
    limit: u64,
    progress: Option<&Progress>,
) -> Result<BlobBody, OciError> {
    if desc.size <= SPOOL_ABOVE {
        return Ok(BlobBody::from(
            fetch_blob(client, src, desc, limit, progress).await?,
        ));
    }
    match src {
        ImageRef::Registry { repo, .. } => {
            client.get_blob_spooled(repo, desc, limit, progress).await
        }
        ImageRef::Layout { dir, .. } => {
            let desc = desc.clone();
            let body = in_layout(dir, move |l| l.get_blob_spooled(&desc, limit)).await?;
            if let Some(p) = progress {
                p.inc(body.len());
            }
            Ok(body)
        }
    }
}

fn parse_json<T: serde::de::DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T, OciError> {
    serde_json::from_slice(bytes).map_err(|e| OciError::Invalid {
        what: what.to_string(),
        reason: e.to_string(),
    })
}

/// Fetches an image manifest (choosing from an index with `choose` when the
/// reference names one) and its config.
pub async fn fetch_image(
    client: &RegistryClient,
    src: &ImageRef,
) -> Result<(ImageManifest, serde_json::Value, String), OciError> {
    let (manifest, digest) = fetch_image_manifest(client, src).await?;
    let config = fetch_config(client, src, &manifest).await?;
    Ok((manifest, config, digest))
}

/// Fetches the image manifest `src` names (the platform [`fetch_image`]
/// picks when it names an index) and its digest, without the config.
pub async fn fetch_image_manifest(
    client: &RegistryClient,
    src: &ImageRef,
) -> Result<(ImageManifest, String), OciError> {
    let (bytes, mt, digest) = fetch_manifest(client, src).await?;
    let (bytes, mt, digest) = if media::is_index(&mt) {
        let index: ImageIndex = parse_json(&bytes, &format!("index {src}"))?;
        let pick = pick_platform(&index.manifests).ok_or_else(|| OciError::Invalid {
            what: format!("index {src}"),
            reason: "lists no image".into(),
        })?;
        let child = src.with_reference(&pick.digest);
        let (b, m, d) = fetch_manifest(client, &child).await?;
        if d != pick.digest {
            return Err(OciError::DigestMismatch {
                what: format!("manifest {child}"),
                expected: pick.digest.clone(),
                actual: d,
            });
        }
        (b, m, d)
    } else {
        (bytes, mt, digest)
    };
    if !media::is_manifest(&mt) {
        return Err(OciError::Invalid {
            what: src.to_string(),
            reason: format!("media type {mt} is not an image manifest"),
        });
    }
    let manifest: ImageManifest = parse_json(&bytes, &format!("manifest {src}"))?;
    Ok((manifest, digest))
}

/// Fetches and parses the config blob of `manifest`, an image of `src`.
pub async fn fetch_config(
    client: &RegistryClient,
    src: &ImageRef,
    manifest: &ImageManifest,
) -> Result<serde_json::Value, OciError> {
    let config_bytes = fetch_blob(client, src, &manifest.config, MAX_CONFIG, None).await?;
    parse_json(&config_bytes, &format!("config of {src}"))
}

/// linux/amd64 if listed, else the first real platform (attestation
/// entries, `unknown/unknown`, are skipped).
fn pick_platform(entries: &[Descriptor]) -> Option<&Descriptor> {
    let real: Vec<&Descriptor> = entries
        .iter()
        .filter(|d| d.platform.as_ref().is_none_or(|p| p.os != "unknown"))
        .collect();
    real.iter()
        .find(|d| {
            d.platform
                .as_ref()
                .is_some_and(|p| p.os == "linux" && p.architecture == "amd64")
        })
        .or(real.first())
        .copied()
}

/// Loads a base image for `index build`: one image, or every platform of an
/// index (attestation entries dropped).
pub async fn load_base(client: &RegistryClient, src: &ImageRef) -> Result<BaseImage, OciError> {
    let (bytes, mt, _) = fetch_manifest(client, src).await?;
    let mut entries = Vec::new();
    let is_index = media::is_index(&mt);
    if is_index {
        let index: ImageIndex = parse_json(&bytes, &format!("index {src}"))?;
        for d in index
            .manifests
            .iter()
            .filter(|d| d.platform.as_ref().is_none_or(|p| p.os != "unknown"))
        {
            let child = src.with_reference(&d.digest);
            let (b, m, digest) = fetch_manifest(client, &child).await?;
            if digest != d.digest {
                return Err(OciError::DigestMismatch {
                    what: format!("manifest {child}"),
                    expected: d.digest.clone(),
                    actual: digest,
                });
            }
            if !media::is_manifest(&m) {
                return Err(OciError::Invalid {
                    what: child.to_string(),
                    reason: format!(
                        "an index entry of media type {m}; nested indexes are not supported"
                    ),
                });
            }
            let manifest: ImageManifest = parse_json(&b, &format!("manifest {child}"))?;
            let config_bytes = fetch_blob(client, src, &manifest.config, MAX_CONFIG, None).await?;
            entries.push(BaseEntry {
                descriptor: d.clone(),
                manifest,
                config: parse_json(&config_bytes, &format!("config of {child}"))?,
            });
        }
    } else if media::is_manifest(&mt) {
        let manifest: ImageManifest = parse_json(&bytes, &format!("manifest {src}"))?;
        let config_bytes = fetch_blob(client, src, &manifest.config, MAX_CONFIG, None).await?;
        entries.push(BaseEntry {
            descriptor: Descriptor::of(&mt, &bytes),
            manifest,
            config: parse_json(&config_bytes, &format!("config of {src}"))?,
        });
    } else {
        return Err(OciError::Invalid {
            what: src.to_string(),
            reason: format!("media type {mt} is neither an image nor an index"),
        });
    }
    if entries.is_empty() {
        return Err(OciError::Invalid {
            what: src.to_string(),
            reason: "the index lists no image".into(),
        });
    }
    Ok(BaseImage {
        source: src.clone(),
        is_index,
        entries,
    })
}

/// Stores `set` at `dest` and returns the digest of the top manifest.
/// Blobs first, the tagged manifest last.
pub async fn push_image(
    client: &RegistryClient,
    set: &ImageSet,
    dest: &ImageRef,
    mode: ProgressMode,
) -> Result<String, OciError> {
    push(client, set, dest, mode, true).await
}

/// Stores `set` at `dest` by digest only: everything [`push_image`] writes
/// except the tag, which keeps naming what it named. [`tag_image`] moves it
/// afterwards, once whatever must come first (a signature) is stored.
pub async fn push_image_untagged(
    client: &RegistryClient,
    set: &ImageSet,
    dest: &ImageRef,
    mode: ProgressMode,
) -> Result<String, OciError> {
    push(client, set, dest, mode, false).await
}

/// Points `dest`'s tag at the top manifest of `set`, which
/// [`push_image_untagged`] stored. A digest destination has no tag to move.
pub async fn tag_image(
    client: &RegistryClient,
    set: &ImageSet,
    dest: &ImageRef,
) -> Result<(), OciError> {
    if dest.is_digest() {
        return Ok(());
    }
    match dest {
        ImageRef::Registry { repo, reference } => {
            client
                .put_manifest(repo, reference, &set.top.media_type, &set.top_bytes)
                .await
        }
        ImageRef::Layout { dir, reference } => Layout::new(dir).set_tag(reference, &set.top),
    }
}

async fn push(
    client: &RegistryClient,
    set: &ImageSet,
    dest: &ImageRef,
    mode: ProgressMode,
    tag: bool,
) -> Result<String, OciError> {
    if dest.is_digest() {
        let want = match dest {
            ImageRef::Registry { reference, .. } | ImageRef::Layout { reference, .. } => reference,
        };
        if want != &set.top.digest {
            return Err(OciError::DestinationDigest {
                destination: dest.to_string(),
                digest: set.top.digest.clone(),
            });
        }
    }
    let progress = Progress::new(mode, &format!("pushing {dest}"), set.total_size(), true);
    let result = match dest {
        ImageRef::Registry { repo, reference } => {
            for blob in &set.blobs {
                let d = &blob.descriptor;
                let uploaded = match &blob.source {
                    BlobSource::Data(data) => {
                        client.push_blob(repo, d, data, Some(&progress)).await?
                    }
                    BlobSource::Image(src) => {
                        if client.blob_exists(repo, &d.digest).await? {
                            progress.inc(d.size);
                            continue;
                        }
                        let mounted = match src {
                            ImageRef::Registry { repo: from, .. }
                                if from.host == repo.host && from.name != repo.name =>
                            {
                                client.mount_blob(repo, &d.digest, &from.name).await?
                            }
                            _ => false,
                        };
                        if mounted {
                            progress.println(&format!("mounted {} from {src}", d.digest));
                            progress.inc(d.size);
                            continue;
                        }
                        let data = fetch_blob_body(client, src, d, MAX_COPIED_LAYER, None).await?;
                        client.push_blob(repo, d, &data, Some(&progress)).await?
                    }
                };
                if !uploaded {
                    progress.inc(d.size);
                }
                if uploaded && d.size >= 1024 * 1024 {
                    progress.println(&format!("uploaded {} ({})", d.digest, human_bytes(d.size)));
                }
            }
            for (desc, bytes) in &set.children {
                client
                    .put_manifest(repo, &desc.digest, &desc.media_type, bytes)
                    .await?;
                progress.inc(desc.size);
            }
            let top_ref = if tag { reference } else { &set.top.digest };
            client
                .put_manifest(repo, top_ref, &set.top.media_type, &set.top_bytes)
                .await?;
            progress.inc(set.top.size);
            Ok(set.top.digest.clone())
        }
        ImageRef::Layout { dir, reference } => {
            let layout = Layout::new(dir);
            layout.init()?;
            for blob in &set.blobs {
                let d = &blob.descriptor;
                if !layout.has_blob(d) {
                    let written = match &blob.source {
                        BlobSource::Data(data) => layout.put_blob_body(data)?,
                        BlobSource::Image(src) => layout.put_blob_body(
                            &fetch_blob_body(client, src, d, MAX_COPIED_LAYER, None).await?,
                        )?,
                    };
                    if written != d.digest {
                        return Err(OciError::DigestMismatch {
                            what: format!("blob written to {dest}"),
                            expected: d.digest.clone(),
                            actual: written,
                        });
                    }
                }
                progress.inc(d.size);
            }
            for (desc, bytes) in &set.children {
                layout.put_blob(bytes)?;
                progress.inc(desc.size);
            }
            layout.put_blob(&set.top_bytes)?;
            if tag && !dest.is_digest() {
                layout.set_tag(reference, &set.top)?;
            }
            progress.inc(set.top.size);
            Ok(set.top.digest.clone())
        }
    };
    progress.finish();
    result
}
