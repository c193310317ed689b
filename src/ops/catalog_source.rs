//! Reading a catalog from any source we accept into a
//! [`DeclarativeConfig`]: what `render` and `migrate` read, and what any
//! use case that starts from "a catalog" should read.
//!
//! A source is, in the order it is recognised:
//! - an image reference (`REGISTRY/REPO:TAG`, `REGISTRY/REPO@DIGEST`,
//!   `oci:DIR[:TAG]`; see [`crate::oci::looks_like_image_ref`]): a bundle
//!   image, or an index (SQLite) or catalog (FBC) image, told apart by the
//!   labels of its config as opm tells them apart;
//! - a file: an SQLite index database (by its header) or an FBC file
//!   (`.yaml`, `.yml`, `.json`);
//! - a bundle directory (`manifests/` and `metadata/`);
//! - any other directory: a file-based catalog.

use crate::fbc::DeclarativeConfig;
use crate::index;
use crate::oci::{ImageRef, RegistryClient};
use crate::serve::image::{CONFIGS_LABEL, DATABASE_LABEL};
use crate::serve::CatalogSource;

use super::Error;

/// How to read a source.
#[derive(Clone, Default)]
pub struct SourceOptions {
    /// The image recorded for a bundle *directory* (`render --bundle-image`);
    /// empty without it, as opm leaves it. A bundle image records its own
    /// reference.
    pub bundle_image: Option<String>,
    /// The registry client for image sources (credentials, `--ca-file`,
    /// `--insecure`, retries). Required only when a source is an image;
    /// [`RegistryClient::from_environment`] gives one with the user's auth
    /// files and credential helpers.
    pub client: Option<RegistryClient>,
}

impl SourceOptions {
    /// Options that read images through `client`.
    pub fn with_client(client: RegistryClient) -> SourceOptions {
        SourceOptions {
            client: Some(client),
            ..SourceOptions::default()
        }
    }
}

/// What a source argument names, decided without reading it (beyond
/// looking at the file system).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// An image reference (registry or OCI layout).
    Image,
    /// A file: an SQLite index or an FBC file.
    File,
    /// A bundle directory (`manifests/` and `metadata/`).
    BundleDir,
    /// Any other directory: a file-based catalog.
    CatalogDir,
    /// Nothing at that path, and not an image reference.
    Missing,
}

impl SourceKind {
    /// What `source` names.
    pub fn of(source: &str) -> SourceKind {
        if crate::oci::looks_like_image_ref(source) {
            return SourceKind::Image;
        }
        let p = std::path::Path::new(source);
        if p.is_file() {
            SourceKind::File
        } else if p.join("manifests").is_dir() && p.join("metadata").is_dir() {
            SourceKind::BundleDir
        } else if p.is_dir() {
            SourceKind::CatalogDir
        } else {
            SourceKind::Missing
        }
    }
}

/// Reads one catalog source (see the [module](self) for what a source may
/// be) into a [`DeclarativeConfig`]:
/// - an SQLite index (file or index image) is rendered as `opm render`
///   renders it;
/// - an FBC directory, file or catalog image is read as it is;
/// - a bundle directory or bundle image becomes one `olm.bundle` (no
///   package or channel), its image `opts.bundle_image` or the reference.
///
/// Images are read through `opts.client`; one is required when `source` is
/// an image. This call runs its own async runtime for an image; from async
/// code, call [`load_image`].
///
/// ```no_run
/// use olm_catalog::oci::RegistryClient;
/// use olm_catalog::ops::catalog_source::{load, SourceOptions};
/// let client = RegistryClient::from_environment()?;
/// let cfg = load("quay.io/me/catalog:v1", &SourceOptions::with_client(client))?;
/// println!("{} packages", cfg.packages.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn load(source: &str, opts: &SourceOptions) -> Result<DeclarativeConfig, Error> {
    let p = std::path::Path::new(source);
    match SourceKind::of(source) {
        SourceKind::Image => {
            let client = opts.client.as_ref().ok_or_else(|| {
                Error::Usage(format!(
                    "{source}: an image source needs a registry client (SourceOptions::client)"
                ))
            })?;
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| Error::io("starting the async runtime", e))?;
            rt.block_on(load_image(client, source))
        }
        SourceKind::File => index::render::render_file(p).map_err(Error::index),
        SourceKind::BundleDir => {
            let b = crate::bundle::Bundle::load_dir(p).map_err(Error::bundle)?;
            let fb = crate::fbc::from_bundle::bundle_to_fbc(&b, opts.bundle_image.as_deref().unwrap_or(""))
                .map_err(Error::bundle)?;
            Ok(DeclarativeConfig {
                bundles: vec![fb],
                ..DeclarativeConfig::default()
            })
        }
        SourceKind::CatalogDir => Ok(DeclarativeConfig::load_path(p)?),
        SourceKind::Missing => Err(Error::Source(format!(
            "{source}: no such file or directory, nor an image reference (REGISTRY/REPO:TAG, REGISTRY/REPO@DIGEST or oci:DIR:TAG)"
        ))),
    }
}

/// Reads an image source through `client`: a bundle image (its bundle, its
/// image the reference, as `opm render` does), or an index or catalog image
/// (the catalog its label names), told apart by the image config's labels
/// as opm does.
pub async fn load_image(
    client: &RegistryClient,
    reference: &str,
) -> Result<DeclarativeConfig, Error> {
    let src: ImageRef = reference.parse().map_err(|e| {
        Error::registry(e).context(format!("{reference} is not an image reference"))
    })?;
    let (_, config, _) = crate::oci::transfer::fetch_image(client, &src)
        .await
        .map_err(|e| Error::registry(e).context(format!("fetching {reference}")))?;
    let labels = crate::oci::media::config_labels(&config);
    let has = |k: &str| labels.contains_key(k);
    if has(DATABASE_LABEL) || has(CONFIGS_LABEL) {
        let cat = crate::serve::image::fetch_catalog_with(client, reference)
            .await
            .map_err(Error::Catalog)?;
        return match &cat.source {
            CatalogSource::Sqlite(p) => index::render::render_file(p).map_err(|e| {
                Error::index(e).context(format!("rendering the index of {reference}"))
            }),
            CatalogSource::Fbc(p) => DeclarativeConfig::load_path(p)
                .map_err(|e| Error::from(e).context(format!("reading the catalog of {reference}"))),
        };
    }
    let mediatype = crate::bundle::keys::MEDIATYPE;
    if !has(mediatype) {
        return Err(Error::Source(format!(
            "{reference}: not a bundle, index or catalog image: its config has none of the labels {mediatype}, {DATABASE_LABEL}, {CONFIGS_LABEL}"
        )));
    }
    let limits = crate::oci::layer::UnpackLimits::default();
    let pulled = crate::oci::pull_bundle(client, reference, &limits)
        .await
        .map_err(|e| Error::registry(e).context(format!("pulling bundle image {reference}")))?;
    let fb = crate::fbc::from_bundle::bundle_to_fbc(&pulled.bundle, reference)
        .map_err(|e| Error::bundle(format!("{reference}: {e}")))?;
    Ok(DeclarativeConfig {
        bundles: vec![fb],
        ..DeclarativeConfig::default()
    })
}

/// Reads every source in order and concatenates them into one config, as
/// `opm render A B` does (no merging of objects). Stops at the first source
/// that fails.
pub fn load_all(sources: &[String], opts: &SourceOptions) -> Result<DeclarativeConfig, Error> {
    let mut all = DeclarativeConfig::default();
    for s in sources {
        append(&mut all, load(s, opts)?);
    }
    Ok(all)
}

/// Appends the objects of `more` to `all`.
pub fn append(all: &mut DeclarativeConfig, more: DeclarativeConfig) {
    all.packages.extend(more.packages);
    all.channels.extend(more.channels);
    all.bundles.extend(more.bundles);
    all.deprecations.extend(more.deprecations);
    all.others.extend(more.others);
}
