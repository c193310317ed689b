//! Serving a catalog straight from an index image: the image is fetched
//! (registry or OCI layout), the catalog its labels name is unpacked into a
//! private temporary directory, and that is served. opm needs the image run
//! as a container for this; here it is one command.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Error;
use crate::fbc::{self, FbcError};

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
    // A catalog's files that cannot be catalog content; an SQLite index is
    // one binary file, not checked.
    let mut refused = (!is_db).then(Refused::default);
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
            .and_then(|r| unpack_matching(r, &wanted, dir.path(), refused.as_mut()));
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
    if let Some(refused) = refused {
        refused
            .check(&target, dir.path())
            .map_err(|source| Error::CatalogFile {
                reference: reference.to_string(),
                source,
            })?;
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

/// The files of an FBC catalog refused as they were unpacked (larger than
/// [`fbc::text::MAX_CATALOG_FILE_BYTES`], or not text), by path in the
/// image, each written as an empty file. Whether one is an error is known
/// only once every layer is unpacked: a later layer may replace it, and an
/// `.indexignore` may exclude it, as it may any file that is not catalog
/// content.
#[derive(Default)]
struct Refused(BTreeMap<String, FbcError>);

impl Refused {
    /// The first refused file, in path order, that is catalog content of
    /// the catalog unpacked at `target` under `root`: what reading the
    /// catalog would have met first.
    fn check(self, target: &Path, root: &Path) -> Result<(), FbcError> {
        if self.0.is_empty() {
            return Ok(());
        }
        let mut refused = self.0;
        // A catalog that does not list reports its own error when read.
        let files = fbc::catalog_files(target).unwrap_or_default();
        for f in files {
            let name = f.strip_prefix(root).unwrap_or(&f).to_string_lossy();
            if let Some(e) = refused.remove(name.as_ref()) {
                return Err(e);
            }
        }
        Ok(())
    }
}

/// Unpacks the entries of one (gzip, zstd or plain tar) layer at or under
/// `wanted` into `into`, refusing paths that leave it, as the layer is read.
/// With `refused`, each file is checked as catalog text as it is written
/// ([`fbc::text::TextCheck`]), and one that is not is cut to nothing and
/// recorded there. Returns whether any matched.
fn unpack_matching(
    layer: impl std::io::BufRead,
    wanted: &str,
    into: &Path,
    mut refused: Option<&mut Refused>,
) -> Result<bool, Error> {
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
                match refused.as_deref_mut() {
                    None => {
                        std::io::copy(&mut entry, &mut f).map_err(writing)?;
                    }
                    Some(refused) => {
                        let in_image = PathBuf::from(format!("/{name}"));
                        match copy_catalog_text(&mut entry, &mut f, &in_image)? {
                            Ok(()) => refused.0.remove(&name),
                            Err(e) => {
                                f.set_len(0).map_err(writing)?;
                                refused.0.insert(name.clone(), e)
                            }
                        };
                    }
                }
                found = true;
            }
            // Links and devices are not catalog content.
            _ => {}
        }
    }
    Ok(found)
}

/// Copies one catalog file (`in_image` names it in errors) from `entry` to
/// `out` while it is catalog text; the inner error says why it is not,
/// found before it was read (too large) or at its first bad byte.
fn copy_catalog_text(
    entry: &mut tar::Entry<'_, impl std::io::Read>,
    out: &mut std::fs::File,
    in_image: &Path,
) -> Result<Result<(), FbcError>, Error> {
    use std::io::{Read as _, Write as _};
    let size = entry.size();
    if size > fbc::text::MAX_CATALOG_FILE_BYTES {
        return Ok(Err(FbcError::TooLarge {
            path: in_image.to_path_buf(),
            size,
            limit: fbc::text::MAX_CATALOG_FILE_BYTES,
        }));
    }
    let writing = |e| Error::io(format!("writing {}", in_image.display()), e);
    let mut check = fbc::text::TextCheck::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match entry.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io("reading the layer", e)),
        };
        if let Err(e) = check.feed(&buf[..n]) {
            return Ok(Err(fbc::not_text(in_image, e)));
        }
        out.write_all(&buf[..n]).map_err(writing)?;
    }
    Ok(check.finish().map_err(|e| fbc::not_text(in_image, e)))
}
