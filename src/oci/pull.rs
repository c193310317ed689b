//! Pulling bundle images into [`Bundle`]s, many at a time, and unpacking an
//! image into a directory ([`unpack_image`]).
//!
//! [`pull_bundle`] writes nothing to disk: layers are unpacked in memory with the limits
//! of [`UnpackLimits`], only `manifests/` and `metadata/` are kept, links are
//! resolved inside those directories, and the bundle is built with
//! [`Bundle::from_files`], so problems in the content become findings exactly
//! as for a bundle directory. The image labels stand in for annotations the
//! layers lack ([`Bundle::set_label_annotations`]); pulling many at once
//! reads an image's config only then.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use futures::{Stream, StreamExt as _};

use super::layer::{LayerFs, UnpackLimits};
use super::media::{config_labels, ImageManifest};
use super::progress::{Progress, ProgressMode};
use super::registry::RegistryClient;
use super::transfer::{fetch_blob, fetch_config, fetch_image_manifest};
use super::{ImageRef, OciError};
use crate::bundle::{Bundle, RawFile};
use crate::diag::{Finding, Location};

/// A pulled bundle image.
#[derive(Debug)]
pub struct PulledBundle {
    /// The reference as given (what an index records as the bundle path).
    pub reference: String,
    /// Digest of the image manifest.
    pub digest: String,
    /// The image config's labels, when the config was read: always by
    /// [`pull_bundle`]; by [`pull_bundle_stream`] and [`pull_bundles`] only
    /// when the layers hold no annotations, for the labels then stand in
    /// for them.
    pub labels: Option<BTreeMap<String, String>>,
    /// The bundle; its `dir` is the reference.
    pub bundle: Bundle,
}

/// When a bundle pull reads the image config, one request more per image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConfigRead {
    /// Always: the caller looks at the labels.
    Always,
    /// Only when the layers hold no annotations. opm reads a bundle image's
    /// `metadata/`, never its labels, so a whole-catalog `index add` needs
    /// two requests an image (manifest, layer), not three; against a
    /// registry's per-request cost that is a third of its work.
    IfNoAnnotations,
}

fn in_bundle(path: &str) -> bool {
    path.starts_with("manifests/") || path.starts_with("metadata/")
}

/// The manifest of `src`, its digest and its layers (compressed, with
/// their digests), within `limits`.
async fn fetch_layers(
    client: &RegistryClient,
    src: &ImageRef,
    limits: &UnpackLimits,
) -> Result<(ImageManifest, String, Vec<(String, Vec<u8>)>), OciError> {
    let (manifest, digest) = fetch_image_manifest(client, src).await?;
    let mut blobs = Vec::with_capacity(manifest.layers.len());
    let mut total = 0u64;
    for layer in &manifest.layers {
        total += layer.size;
        if total > limits.max_blob {
            return Err(OciError::TooLarge {
                what: format!("{src}"),
                limit: limits.max_blob,
                detail: "compressed layers".into(),
            });
        }
        blobs.push((
            layer.digest.clone(),
            fetch_blob(client, src, layer, limits.max_blob, None).await?,
        ));
    }
    Ok((manifest, digest, blobs))
}

/// Pulls the layers of `src` and hands them merged (the paths `keep`
/// accepts) to `use_fs`, which runs off the async threads: the one
/// unpacking path of [`pull_bundle`] and [`unpack_image`]. Returns what
/// `use_fs` made, the manifest and its digest.
async fn with_merged_layers<T: Send + 'static>(
    client: &RegistryClient,
    src: &ImageRef,
    limits: &UnpackLimits,
    keep: fn(&str) -> bool,
    use_fs: impl FnOnce(LayerFs) -> Result<T, OciError> + Send + 'static,
) -> Result<(T, ImageManifest, String), OciError> {
    let (manifest, digest, blobs) = fetch_layers(client, src, limits).await?;
    let limits = *limits;
    let src_name = src.to_string();
    let made = tokio::task::spawn_blocking(move || {
        let mut fs = LayerFs::default();
        for (layer_digest, blob) in &blobs {
            fs.apply(blob, &format!("{src_name}@{layer_digest}"), &limits, &keep)?;
        }
        drop(blobs);
        use_fs(fs)
    })
    .await
    .map_err(|e| OciError::Task {
        what: format!("unpacking {src}"),
        reason: e.to_string(),
    })??;
    Ok((made, manifest, digest))
}

/// Pulls one bundle image (registry reference or `oci:DIR:TAG`), its
/// config included.
pub async fn pull_bundle(
    client: &RegistryClient,
    reference: &str,
    limits: &UnpackLimits,
) -> Result<PulledBundle, OciError> {
    pull_bundle_reading(client, reference, limits, ConfigRead::Always).await
}

async fn pull_bundle_reading(
    client: &RegistryClient,
    reference: &str,
    limits: &UnpackLimits,
    config: ConfigRead,
) -> Result<PulledBundle, OciError> {
    let src: ImageRef = reference.parse()?;
    let owned = reference.to_string();
    let (mut bundle, manifest, digest) =
        with_merged_layers(client, &src, limits, in_bundle, move |fs| {
            Ok(bundle_from_fs(&owned, &fs))
        })
        .await?;
    let labels = if config == ConfigRead::Always || bundle.annotations.is_none() {
        let labels = config_labels(&fetch_config(client, &src, &manifest).await?);
        bundle.set_label_annotations(&labels);
        Some(labels)
    } else {
        None
    };
    Ok(PulledBundle {
        reference: reference.to_string(),
        digest,
        labels,
        bundle,
    })
}

/// An image whose files were written to a directory.
#[derive(Debug)]
pub struct UnpackedImage {
    /// Digest of the image manifest.
    pub digest: String,
    /// The image config's labels.
    pub labels: BTreeMap<String, String>,
    /// The root-relative paths written (files and links), sorted.
    pub paths: Vec<String>,
}

/// Pulls `reference` (registry reference or `oci:DIR:TAG`) and writes the
/// files of its merged layers under `dir`, which must exist (see
/// [`LayerFs::write_to`]): what `opm alpha bundle unpack` and the
/// containerd unpacker leave, within `limits`.
pub async fn unpack_image(
    client: &RegistryClient,
    reference: &str,
    dir: &Path,
    limits: &UnpackLimits,
) -> Result<UnpackedImage, OciError> {
    let src: ImageRef = reference.parse()?;
    let dir = dir.to_path_buf();
    let (paths, manifest, digest) =
        with_merged_layers(client, &src, limits, |_| true, move |fs| fs.write_to(&dir)).await?;
    let labels = config_labels(&fetch_config(client, &src, &manifest).await?);
    Ok(UnpackedImage {
        digest,
        labels,
        paths,
    })
}

/// The bundle the merged layers hold, without the labels (the caller adds
/// them when it reads the config).
fn bundle_from_fs(reference: &str, fs: &LayerFs) -> Bundle {
    let root = PathBuf::from(reference);
    let mut files = Vec::new();
    let mut findings = Vec::new();
    let mut warned_dirs = Vec::new();
    for path in fs.entries.keys() {
        let (dir, rest) = path.split_once('/').unwrap_or((path, ""));
        if let Some((sub, _)) = rest.split_once('/') {
            // opm reads only the top level of manifests/ and metadata/.
            let subdir = format!("{dir}/{sub}");
            if !warned_dirs.contains(&subdir) {
                findings.push(
                    Finding::warning(
                        "manifest-subdirectory-ignored",
                        format!("{subdir}/ is a directory; opm reads only files directly in {dir}/, so it is ignored"),
                    )
                    .at(Location::file(root.join(&subdir))),
                );
                warned_dirs.push(subdir);
            }
            continue;
        }
        let content = fs
            .resolve(path, &in_bundle)
            .map(<[u8]>::to_vec)
            .map_err(|reason| {
                Finding::error(
                    "symlink-outside-bundle",
                    format!("{reason}; it was not read"),
                )
                .at(Location::file(root.join(path)))
                .hint("bundle images hold plain files: copy the file into the bundle")
            });
        files.push(RawFile {
            rel_path: path.clone(),
            content,
        });
    }
    if !fs.entries.keys().any(|k| k.starts_with("manifests/")) {
        findings.push(
            Finding::error("bundle-no-manifests-dir", "the bundle image has no manifests/ directory")
                .at(Location::file(&root))
                .hint("a registry+v1 bundle image holds its objects in /manifests and its annotations in /metadata/annotations.yaml"),
        );
    }
    let mut bundle = Bundle::from_files(Path::new(reference), files);
    findings.append(&mut bundle.load_findings);
    bundle.load_findings = findings;
    bundle
}

/// Pulls `refs` with at most `concurrency` in flight, yielding results in
/// the order of `refs`. At most about `concurrency` bundles are held at once,
/// so a consumer that handles and drops each one keeps memory bounded.
pub fn pull_bundle_stream(
    client: RegistryClient,
    refs: Vec<String>,
    concurrency: usize,
    mode: ProgressMode,
) -> impl Stream<Item = Result<PulledBundle, OciError>> {
    let limits = UnpackLimits::default();
    let progress = std::sync::Arc::new(Progress::new(
        mode,
        "pulling bundles",
        refs.len() as u64,
        false,
    ));
    let done = progress.clone();
    futures::stream::iter(refs)
        .map(move |r| {
            let client = client.clone();
            let progress = progress.clone();
            async move {
                let result =
                    pull_bundle_reading(&client, &r, &limits, ConfigRead::IfNoAnnotations).await;
                progress.inc(1);
                result
            }
        })
        .buffered(concurrency.max(1))
        .chain(
            futures::stream::once(async move {
                done.finish();
                None
            })
            .filter_map(|x: Option<Result<PulledBundle, OciError>>| async move { x }),
        )
}

/// Pulls `refs` (registry references or `oci:DIR:TAG`) through `client`
/// with at most `concurrency` at once, drawing progress as `mode` says.
/// Results are in the order of `refs`; each error names its image.
pub async fn pull_bundles(
    client: &RegistryClient,
    refs: &[String],
    concurrency: usize,
    mode: ProgressMode,
) -> Vec<Result<PulledBundle, OciError>> {
    pull_bundle_stream(client.clone(), refs.to_vec(), concurrency, mode)
        .collect()
        .await
}
