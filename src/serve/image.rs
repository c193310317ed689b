//! Serving a catalog straight from an index image: the image is fetched
//! (registry or OCI layout), the catalog its labels name is unpacked into a
//! private temporary directory, and that is served. opm needs the image run
//! as a container for this; here it is one command.

use std::path::{Path, PathBuf};

use super::Error;

use crate::oci::{self, ImageRef, RegistryClient};

use super::CatalogSource;

/// How directories of unpacked catalogs are named: the prefix, the
/// process id, a dash and a random part (see `index::db::remove_orphans`).
const UNPACK_PREFIX: &str = "olm-catalog-serve-";

/// Label naming the SQLite database inside an index image.
pub const DATABASE_LABEL: &str = "operators.operatorframework.io.index.database.v1";
/// Label naming the file-based catalog directory inside a catalog image.
pub const CONFIGS_LABEL: &str = "operators.operatorframework.io.index.configs.v1";
/// Largest layer fetched: none but the disk's (the largest size a file can
/// have). A layer larger than [`oci::transfer::SPOOL_ABOVE`] goes to a
/// temporary file as it arrives (digest checked on the way) and is unpacked
/// from there as it is decompressed, so no layer is ever held in memory.
const MAX_LAYER_BYTES: u64 = i64::MAX as u64;

/// Whether a command-line catalog argument is an image reference rather
/// than a path (the one rule `index add` uses too).
pub fn is_image_ref(arg: &str) -> bool {
    crate::oci::looks_like_image_ref(arg)
}

/// A catalog unpacked from an image; the files live as long as this does.
pub struct ImageCatalog {
    /// What to serve.
    pub source: CatalogSource,
    /// The image manifest digest the catalog came from.
    pub digest: String,
    _dir: tempfile::TempDir,
}

/// Fetches `reference` through `client` (the command's registry options)
/// and unpacks the catalog its labels name.
pub async fn fetch_catalog_with(
    client: &RegistryClient,
    reference: &str,
) -> super::Result<ImageCatalog> {
    let image = |context: String| {
        move |e| Error::Image {
            context,
            source: Box::new(e),
        }
    };
    let src: ImageRef = reference.parse().map_err(|e| Error::NotAnImage {
        reference: reference.to_string(),
        source: Box::new(e),
    })?;
    let (manifest, config, digest) = oci::transfer::fetch_image(client, &src)
        .await
        .map_err(image(format!("fetching {reference}")))?;
    let labels = oci::media::config_labels(&config);
    let label = |k: &str| labels.get(k).cloned();
    let (wanted, is_db) = match (label(DATABASE_LABEL), label(CONFIGS_LABEL)) {
        (Some(db), _) => (db, true),
        (None, Some(configs)) => (configs, false),
        (None, None) => {
            return Err(Error::NotACatalogImage(format!(
                "{reference} is not an index or catalog image: its config has neither the \
                 {DATABASE_LABEL} nor the {CONFIGS_LABEL} label"
            )))
        }
    };
    let wanted = wanted
        .trim_start_matches('/')
        .trim_end_matches('/')
        .to_string();
    // Named after this process, so that the next server removes what one
    // killed with SIGKILL left (a catalog can be hundreds of MiB).
    let tmp = std::env::temp_dir();
    crate::index::db::remove_orphans(&tmp, UNPACK_PREFIX);
    let dir = tempfile::Builder::new()
        .prefix(&format!("{UNPACK_PREFIX}{}-", std::process::id()))
        .tempdir_in(&tmp)
        .map_err(|e| Error::io("creating a temporary directory for the catalog", e))?;
    let mut found = false;
    // Later layers win, as in a container's file system: unpack base first.
    for layer in &manifest.layers {
        let body = oci::transfer::fetch_blob_body(client, &src, layer, MAX_LAYER_BYTES, None)
            .await
            .map_err(image(format!(
                "fetching layer {} of {reference}",
                layer.digest
            )))?;
        let unpacked = body
            .reader()
            .map_err(|e| Error::io("reading the fetched layer", e))
            .and_then(|r| unpack_matching(r, &wanted, dir.path()));
        found |= unpacked.map_err(|e| Error::Image {
            context: format!("unpacking layer {} of {reference}", layer.digest),
            source: Box::new(e),
        })?;
    }
    let target = dir.path().join(&wanted);
    if !found || !target.exists() {
        return Err(Error::NotACatalogImage(format!(
            "{reference}: the image has no /{wanted}, which its labels name"
        )));
    }
    let source = if is_db {
        CatalogSource::Sqlite(target)
    } else {
        CatalogSource::Fbc(target)
    };
    Ok(ImageCatalog {
        source,
        digest,
        _dir: dir,
    })
}

/// Unpacks the entries of one (gzip, zstd or plain tar) layer at or under
/// `wanted` into `into`, refusing paths that leave it, as the layer is read.
/// Returns whether any matched.
fn unpack_matching(layer: impl std::io::BufRead, wanted: &str, into: &Path) -> Result<bool, Error> {
    let reading = |e| Error::io("reading the layer", e);
    let mut archive = tar::Archive::new(oci::layer::decompressed_from(layer).map_err(reading)?);
    let mut found = false;
    for entry in archive.entries().map_err(reading)? {
        let mut entry = entry.map_err(reading)?;
        let raw = entry
            .path()
            .map_err(|e| Error::io("reading the layer: an entry path", e))?
            .to_string_lossy()
            .into_owned();
        let Ok(name) = oci::layer::normalize_entry_path(&raw) else {
            continue;
        };
        if !(name == wanted || name.starts_with(&format!("{wanted}/"))) {
            continue;
        }
        let out: PathBuf = into.join(&name);
        match entry.header().entry_type() {
            tar::EntryType::Directory => {
                std::fs::create_dir_all(&out)
                    .map_err(|e| Error::io(format!("creating {}", out.display()), e))?;
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                if let Some(parent) = out.parent() {
                    std::fs::create_dir_all(parent)
                        .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
                }
                let writing = |e| Error::io(format!("writing {}", out.display()), e);
                let mut f = std::fs::File::create(&out).map_err(writing)?;
                std::io::copy(&mut entry, &mut f).map_err(writing)?;
                found = true;
            }
            // Links and devices are not catalog content.
            _ => {}
        }
    }
    Ok(found)
}
