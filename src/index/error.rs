//! What can go wrong with an index: [`Error`] (and [`DbError`] for opening
//! one), with SQLite's own errors kept opaque ([`SqliteError`]) so that no
//! rusqlite type is part of this crate's API.

use std::path::PathBuf;

pub use super::db::DbError;

/// An error of SQLite itself (I/O, constraint, corrupt file, …), opaque:
/// its message, and whether it is a constraint violation.
#[derive(Debug, Clone)]
pub struct SqliteError {
    message: String,
    constraint: bool,
}

impl SqliteError {
    pub(crate) fn new(e: &rusqlite::Error) -> SqliteError {
        SqliteError {
            message: e.to_string(),
            constraint: matches!(
                e,
                rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::ConstraintViolation
            ),
        }
    }

    /// Whether a constraint (UNIQUE, FOREIGN KEY, …) refused a write: what
    /// a bundle that conflicts with the index's content gives.
    pub fn is_constraint(&self) -> bool {
        self.constraint
    }
}

impl std::fmt::Display for SqliteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SqliteError {}

/// Why an index operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The database could not be opened, created or locked, or is not an
    /// opm index.
    #[error(transparent)]
    Db(#[from] DbError),
    /// A statement failed; `context` says what was being read or written.
    #[error("{context}")]
    Sqlite {
        /// What was being done.
        context: String,
        /// SQLite's error.
        #[source]
        source: SqliteError,
    },
    /// The schema version is one opm never wrote (newer than its last
    /// migration).
    #[error(
        "schema version {version} is newer than any opm wrote (opm's migrations end at {known})"
    )]
    UnknownSchemaVersion {
        /// The database's `schema_migrations` version.
        version: i64,
        /// The last version opm wrote.
        known: i64,
    },
    /// Migrating an older schema to opm's last version failed.
    #[error("{}: migrating the schema to opm's version {version}", path.display())]
    Migrate {
        /// The database.
        path: PathBuf,
        /// The version migrated to.
        version: i64,
        /// What failed.
        #[source]
        source: Box<Error>,
    },
    /// A package or bundle named by the caller is not in the index.
    #[error("{0}")]
    NotInIndex(String),
    /// A deprecation opm refuses (it would remove a default channel, …).
    #[error("{0}")]
    Deprecate(String),
    /// What the index holds or is given is inconsistent: bundles that
    /// conflict (another package's bundle, a replaces cycle, duplicate
    /// versions), an FBC that cannot be imported, a bundle whose files
    /// cannot be exported.
    #[error("{0}")]
    Conflict(String),
    /// A package cannot be exported (a bundle's manifests are not in the
    /// index nor pulled, or its image holds a path outside the bundle).
    #[error("{0}")]
    Export(String),
    /// Not a file `render` reads.
    #[error("{}: unsupported file type ({kind}): render reads an SQLite index database, a bundle directory, an FBC directory, or an FBC file ending in .yaml, .yml or .json", path.display())]
    UnsupportedFile {
        /// The file.
        path: PathBuf,
        /// What it looks like (`an empty file`, `binary data`, `text`).
        kind: &'static str,
    },
    /// A file-based catalog could not be read.
    #[error(transparent)]
    Fbc(#[from] crate::fbc::FbcError),
    /// Reading or writing a file failed.
    #[error("{context}")]
    Io {
        /// What was being done, naming the file.
        context: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A failed statement, with what was being done (`serve` reads
    /// through `tables` itself).
    #[cfg(feature = "serve")]
    pub(crate) fn sqlite(context: impl Into<String>, e: &rusqlite::Error) -> Error {
        Error::Sqlite {
            context: context.into(),
            source: SqliteError::new(e),
        }
    }

    /// The error of an internal step that still returns `anyhow`: a typed
    /// error inside it (this enum, [`DbError`], an FBC error) is taken as
    /// it is; SQLite and I/O errors become [`Error::Sqlite`] and
    /// [`Error::Io`] with the contexts around them; a plain message is a
    /// [`Error::Conflict`], which is what the remaining `bail!`s of `add`
    /// and `fbc_import` say (bundles that cannot go in together).
    pub(crate) fn from_internal(e: anyhow::Error) -> Error {
        let e = match e.downcast::<Error>() {
            Ok(x) => return x,
            Err(e) => e,
        };
        let e = match e.downcast::<DbError>() {
            Ok(x) => return Error::Db(x),
            Err(e) => e,
        };
        let e = match e.downcast::<crate::fbc::FbcError>() {
            Ok(x) => return Error::Fbc(x),
            Err(e) => e,
        };
        // The contexts above the cause found, outermost first.
        let context = |upto: usize| {
            e.chain()
                .take(upto)
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(": ")
        };
        for (i, cause) in e.chain().enumerate() {
            if let Some(s) = cause.downcast_ref::<rusqlite::Error>() {
                let context = context(i);
                return Error::Sqlite {
                    // No context: the message alone, as before.
                    context: if context.is_empty() {
                        s.to_string()
                    } else {
                        context
                    },
                    source: SqliteError::new(s),
                };
            }
            if let Some(io) = cause.downcast_ref::<std::io::Error>() {
                let context = context(i);
                return Error::Io {
                    context: if context.is_empty() {
                        io.to_string()
                    } else {
                        context
                    },
                    source: std::io::Error::new(io.kind(), io.to_string()),
                };
            }
        }
        Error::Conflict(format!("{e:#}"))
    }
}

/// Runs an internal step that returns `anyhow` and gives its error as an
/// [`Error`] (see [`Error::from_internal`]).
pub(crate) fn internal<T>(f: impl FnOnce() -> anyhow::Result<T>) -> Result<T> {
    f().map_err(Error::from_internal)
}
