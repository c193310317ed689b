//! What can go wrong loading or serving a catalog: [`Error`].

use std::path::PathBuf;

/// A cause kept as it came (an I/O, registry, tar or transport error).
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// Why a catalog could not be loaded or served.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The catalog path does not exist.
    #[error("{what} {} does not exist", path.display())]
    Missing {
        /// `catalog` or `SQLite index`.
        what: &'static str,
        /// The path given.
        path: PathBuf,
    },
    /// A file that is neither an SQLite index nor a YAML/JSON FBC file.
    #[error("catalog {} is neither a SQLite index (no SQLite header: corrupt or truncated?) nor a .yaml/.yml/.json file-based catalog", .0.display())]
    UnknownFormat(PathBuf),
    /// An SQLite file without the tables `api.Registry` reads.
    #[error("{} is not an operator-registry index (or its schema is too old): table `{table}` is missing", path.display())]
    NotAnIndex {
        /// The database.
        path: PathBuf,
        /// The first missing table.
        table: &'static str,
    },
    /// Reading the SQLite index failed.
    #[error(transparent)]
    Index(#[from] crate::index::Error),
    /// The file-based catalog could not be read.
    #[error("reading file-based catalog {}", path.display())]
    Fbc {
        /// The catalog.
        path: PathBuf,
        /// Why.
        #[source]
        source: crate::fbc::FbcError,
    },
    /// The catalog was read but its content is inconsistent (see
    /// [`Error::Inconsistent`]).
    #[error("invalid catalog {}", path.display())]
    InvalidCatalog {
        /// The catalog.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: Box<Error>,
    },
    /// Catalog content that cannot be served: a package defined twice, a
    /// bundle of an unknown package, a channel without a head, a bundle
    /// object that does not decode, …
    #[error("{0}")]
    Inconsistent(String),
    /// Not an image reference.
    #[error("{reference} is not an image reference")]
    NotAnImage {
        /// The argument.
        reference: String,
        /// Why.
        #[source]
        source: Box<crate::oci::OciError>,
    },
    /// Fetching or unpacking the catalog image failed; `context` says
    /// which step and layer.
    #[error("{context}")]
    Image {
        /// What was being done.
        context: String,
        /// What failed.
        #[source]
        source: Cause,
    },
    /// The image is not a catalog image, or its catalog is missing or too
    /// large.
    #[error("{0}")]
    NotACatalogImage(String),
    /// A file of a catalog image's catalog that cannot be catalog content
    /// (larger than [`crate::fbc::text::MAX_CATALOG_FILE_BYTES`], or not
    /// text), found as the image was unpacked; the source names the file
    /// by its path in the image.
    #[error("the catalog of {reference} cannot be read")]
    CatalogFile {
        /// The image.
        reference: String,
        /// The file and what is wrong with it.
        #[source]
        source: crate::fbc::FbcError,
    },
    /// Reading a file failed.
    #[error("{context}")]
    Io {
        /// What was being done, naming the file.
        context: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// An address could not be bound.
    #[error("listening on {addr}")]
    Listen {
        /// The address, with the flag that gave it when not `--addr`.
        addr: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The gRPC or HTTP server failed, or could not be built.
    #[error("{context}")]
    Server {
        /// What was being done.
        context: String,
        /// What failed.
        #[source]
        source: Cause,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A failed read of the SQLite index at `path`.
    pub(crate) fn sqlite(path: &std::path::Path, e: &rusqlite::Error) -> Error {
        Error::Index(crate::index::Error::sqlite(
            format!("reading SQLite index {}", path.display()),
            e,
        ))
    }

    /// An I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}
