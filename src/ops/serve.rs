//! The serve cache of `opm serve --cache-dir` (cmd/opm/serve/serve.go at
//! opm v1.73.0), made to keep opm's rules on a server that loads its
//! catalog itself at start.
//!
//! opm's cache is a pre-built store its server loads; ours is the digest
//! of the catalog directory (`<cache-dir>/olm-catalog.digest`). Rebuilding
//! checks that the catalog loads (as the server would) and records the
//! digest; enforcing integrity refuses a missing or stale digest, as opm
//! refuses a missing or stale cache.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use super::Error;

/// The file holding the catalog's digest in a cache directory.
pub const CACHE_DIGEST_FILE: &str = "olm-catalog.digest";

/// What to do with the cache before serving.
#[derive(Clone, Debug, Default)]
pub struct CacheOptions {
    /// The file-based catalog directory served.
    pub source: PathBuf,
    /// The cache directory (opm's `--cache-dir`), if any.
    pub cache_dir: Option<PathBuf>,
    /// Only build the cache (opm's `--cache-only`): the caller does not
    /// serve.
    pub cache_only: bool,
    /// Refuse a missing or stale cache (opm's `--cache-enforce-integrity`);
    /// `None` is opm's default: enforced when a cache directory is given
    /// and `cache_only` is not.
    pub enforce_integrity: Option<bool>,
}

/// Why the cache could not be made or trusted. The text is opm's where
/// opm has one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// Integrity was to be enforced with no cache directory.
    #[error("--cache-dir must be specified with --cache-enforce-integrity")]
    NoCacheDir,
    /// The recorded digest is missing, unreadable or stale.
    #[error("integrity check failed: {0}")]
    Integrity(CacheFault),
    /// The catalog does not load, or its digest could not be recorded.
    #[error("failed to load or rebuild cache: {0}")]
    Rebuild(CacheFault),
}

/// What went wrong with the catalog or the cache.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheFault {
    /// The catalog does not load (its first error).
    #[error("{0}")]
    Load(String),
    /// A file of the catalog could not be read to digest it.
    #[error("compute digest: reading {}: {error}", path.display())]
    Digest {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The recorded digest could not be read.
    #[error("read existing cache digest: {}: {error}", file.display())]
    NoDigest {
        /// The digest file.
        file: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The recorded digest is not the catalog's.
    #[error("cache requires rebuild: cache reports digest as {recorded:?}, but computed digest is {computed:?}")]
    Stale {
        /// The digest in the cache.
        recorded: String,
        /// The catalog's.
        computed: String,
    },
    /// The cache directory could not be made.
    #[error("init cache: {}: {error}", dir.display())]
    Init {
        /// The cache directory.
        dir: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The digest could not be written.
    #[error("store digest: {}: {error}", file.display())]
    Store {
        /// The digest file.
        file: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

impl From<CacheError> for Error {
    fn from(e: CacheError) -> Error {
        Error::Cache(e)
    }
}

/// The digest of a catalog directory: every regular file under it (links
/// followed), by relative path, in path order.
pub fn catalog_digest(dir: &Path) -> Result<String, CacheFault> {
    let mut hasher = Sha256::new();
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for entry in walkdir::WalkDir::new(dir).follow_links(true) {
        let entry = entry.map_err(|e| CacheFault::Digest {
            path: dir.to_path_buf(),
            error: std::io::Error::other(e),
        })?;
        if entry.file_type().is_file() {
            let rel = entry
                .path()
                .strip_prefix(dir)
                .unwrap_or(entry.path())
                .to_string_lossy()
                .into_owned();
            files.push((rel, entry.path().to_path_buf()));
        }
    }
    files.sort();
    for (rel, path) in files {
        let mut data = Vec::new();
        std::fs::File::open(&path)
            .and_then(|mut f| f.read_to_end(&mut data))
            .map_err(|error| CacheFault::Digest {
                path: path.clone(),
                error,
            })?;
        hasher.update(rel.as_bytes());
        hasher.update([0]);
        hasher.update((data.len() as u64).to_le_bytes());
        hasher.update(&data);
    }
    Ok(format!("sha256:{}", hex::encode(hasher.finalize())))
}

/// Loads the catalog as the server does at start; its first error, if any.
fn load_catalog(dir: &Path) -> Result<(), CacheFault> {
    let report = super::image::validate_catalog(dir);
    match report
        .findings
        .iter()
        .find(|f| f.level == crate::diag::Level::Error)
    {
        Some(f) => Err(CacheFault::Load(f.message.clone())),
        None => Ok(()),
    }
}

/// opm's `store.CheckIntegrity`: the digest recorded in the cache is the
/// catalog's.
pub fn check_integrity(cache_dir: &Path, source: &Path) -> Result<(), CacheFault> {
    let file = cache_dir.join(CACHE_DIGEST_FILE);
    let recorded = std::fs::read_to_string(&file).map_err(|error| CacheFault::NoDigest {
        file: file.clone(),
        error,
    })?;
    let computed = catalog_digest(source)?;
    let recorded = recorded.trim();
    if recorded != computed {
        return Err(CacheFault::Stale {
            recorded: recorded.to_string(),
            computed,
        });
    }
    Ok(())
}

/// opm's `cache.LoadOrRebuild`: the catalog loads; its digest is recorded
/// in `cache_dir` (made if missing).
pub fn rebuild(cache_dir: &Path, source: &Path) -> Result<(), CacheFault> {
    load_catalog(source)?;
    let digest = catalog_digest(source)?;
    std::fs::create_dir_all(cache_dir).map_err(|error| CacheFault::Init {
        dir: cache_dir.to_path_buf(),
        error,
    })?;
    let file = cache_dir.join(CACHE_DIGEST_FILE);
    std::fs::write(&file, format!("{digest}\n"))
        .map_err(|error| CacheFault::Store { file, error })?;
    Ok(())
}

/// What `opm serve` does before serving: with integrity enforced, checks
/// the recorded digest; with a cache directory otherwise, rebuilds it;
/// with neither, checks that the catalog loads. `Ok(true)` when the caller
/// goes on to serve (not `cache_only`).
pub fn prepare(opts: &CacheOptions) -> Result<bool, Error> {
    let enforce = opts
        .enforce_integrity
        .unwrap_or(opts.cache_dir.is_some() && !opts.cache_only);
    match &opts.cache_dir {
        None if enforce => return Err(CacheError::NoCacheDir.into()),
        None => load_catalog(&opts.source).map_err(CacheError::Rebuild)?,
        Some(dir) if enforce => {
            check_integrity(dir, &opts.source).map_err(CacheError::Integrity)?
        }
        Some(dir) => rebuild(dir, &opts.source).map_err(CacheError::Rebuild)?,
    }
    Ok(!opts.cache_only)
}
