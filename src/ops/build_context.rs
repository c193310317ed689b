//! opm's index build context (pkg/lib/indexer at opm v1.73.0), what `opm
//! index add|rm|prune|prune-stranded|deprecatetruncate` work in: the
//! database of `--from-index` (or a new one) at `database/index.db`,
//! changed by the command, and an `index.Dockerfile` beside it. With
//! `--generate` the context is the current directory and stays; otherwise
//! it is a temporary directory the image is built from.

use std::path::{Path, PathBuf};

use super::registry::RegistryOptions;
use super::Error;

/// Where opm keeps the database in a build context.
pub const DATABASE_PATH: &str = "database/index.db";
/// opm's Dockerfile name in a build context.
pub const DEFAULT_DOCKERFILE: &str = "index.Dockerfile";
/// The tag opm builds when `--tag` is not given.
pub const DEFAULT_TAG: &str = "operator-registry-index:latest";
/// What opm says when `--from-index` is a file-based catalog image.
pub const FBC_FROM_INDEX: &str = "`opm index prune` only supports sqlite-based catalogs. See https://github.com/redhat-openshift-ecosystem/community-operators-prod/issues/793 for instructions on pruning a plaintext files backed catalog.";

/// How a build context is made.
#[derive(Clone, Debug, Default)]
pub struct ContextOptions {
    /// opm's `--generate`: the context is the current directory and the
    /// Dockerfile is written there (by default as [`DEFAULT_DOCKERFILE`]).
    pub generate: bool,
    /// The index whose database the context starts from (`--from-index`:
    /// an index image, `oci:DIR:TAG` or a database file); a new database
    /// when `None` or empty.
    pub from_index: Option<String>,
    /// opm's `--out-dockerfile`: where the Dockerfile is written (relative
    /// to the current directory); without it, only with `generate`.
    pub out_dockerfile: Option<PathBuf>,
    /// The `FROM` of the Dockerfile (opm's `--binary-image`; may be empty).
    pub binary_image: String,
    /// How to reach the registry of `from_index`.
    pub registry: RegistryOptions,
}

/// A build context, made by [`open`]: a temporary one is removed when
/// this is dropped.
#[derive(Debug)]
pub struct BuildContext {
    database: PathBuf,
    dockerfile: Option<PathBuf>,
    dockerfile_text: String,
    _tmp: Option<tempfile::TempDir>,
}

impl BuildContext {
    /// The context's database, for the command to change.
    pub fn database(&self) -> &Path {
        &self.database
    }

    /// Writes the Dockerfile where the options said (nowhere when opm
    /// would write only a temporary one for its build).
    pub fn write_dockerfile(&self) -> Result<(), Error> {
        if let Some(path) = &self.dockerfile {
            std::fs::write(path, &self.dockerfile_text)
                .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
        }
        Ok(())
    }
}

/// Makes the build context: its directory (the current one with
/// `generate`, else a new temporary one), its database copied from
/// `from_index` (an older `database/index.db` is replaced, as opm does) or
/// absent for the command to create.
pub fn open(opts: &ContextOptions) -> Result<BuildContext, Error> {
    let (dir, tmp) = if opts.generate {
        // opm's "./".
        (PathBuf::from("."), None)
    } else {
        let tmp = tempfile::Builder::new()
            .prefix("index_build_tmp")
            .tempdir()
            .map_err(|e| Error::io("making the build directory", e))?;
        (tmp.path().to_path_buf(), Some(tmp))
    };
    let database = dir.join(DATABASE_PATH);
    if let Some(parent) = database.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
    }
    match database.symlink_metadata() {
        Ok(_) => std::fs::remove_file(&database)
            .map_err(|e| Error::io(format!("removing {}", database.display()), e))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(format!("reading {}", database.display()), e)),
    }
    if let Some(from) = opts.from_index.as_deref().filter(|f| !f.is_empty()) {
        fetch_database(from, &database, &opts.registry)?;
    }
    let dockerfile = match (&opts.out_dockerfile, opts.generate) {
        (Some(d), _) if !d.as_os_str().is_empty() => Some(d.clone()),
        (_, true) => Some(PathBuf::from(DEFAULT_DOCKERFILE)),
        // opm writes a temporary Dockerfile for its build and removes it.
        _ => None,
    };
    Ok(BuildContext {
        database,
        dockerfile,
        dockerfile_text: crate::oci::build::index_dockerfile(&opts.binary_image, DATABASE_PATH),
        _tmp: tmp,
    })
}

/// Copies the database of the index `from` to `to`: a database file as it
/// is, else the index image (a registry reference or `oci:DIR:TAG`) pulled
/// through a client made from `registry`. A file-based catalog image is
/// refused with opm's message ([`FBC_FROM_INDEX`], an [`Error::Source`]).
pub fn fetch_database(from: &str, to: &Path, registry: &RegistryOptions) -> Result<(), Error> {
    use crate::serve::CatalogSource;
    if Path::new(from).is_file() {
        std::fs::copy(from, to).map_err(|e| Error::io(format!("copying {from}"), e))?;
        return Ok(());
    }
    let image: crate::oci::ImageRef = from
        .parse()
        .map_err(|e| Error::registry(e).context(format!("{from} is not an image reference")))?;
    let hosts = match &registry.credential {
        Some(_) => super::registry::credential_host_of(&image)?,
        None => Vec::new(),
    };
    let client = super::registry::client(registry, &hosts)?;
    let cat = super::image::runtime()?
        .block_on(crate::serve::image::fetch_catalog_with(&client, from))
        .map_err(|e| {
            Error::Catalog(e).context(format!("pulling previous image {from} to get metadata"))
        })?;
    match &cat.source {
        CatalogSource::Sqlite(path) => {
            std::fs::copy(path, to)
                .map_err(|e| Error::io(format!("copying the database of {from}"), e))?;
            Ok(())
        }
        CatalogSource::Fbc(_) => Err(Error::Source(FBC_FROM_INDEX.to_string())),
    }
}
