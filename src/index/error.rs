//! What can go wrong with an index: [`Error`] (and [`DbError`] for opening
//! one), with SQLite's own errors kept opaque ([`SqliteError`]) so that no
//! rusqlite type is part of this crate's API.

use std::path::PathBuf;

/// Why a database could not be used.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Another process holds the write lock, or is creating the same new
    /// database.
    #[error("{0}: database is locked by another process (another index command is writing it); try again when it has finished")]
    Locked(PathBuf),
    /// Not an SQLite file, or not an opm index.
    #[error("{path}: not an opm index database: {reason}")]
    NotAnIndex {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The file does not exist.
    #[error("{0}: no such index database")]
    Missing(PathBuf),
    /// Any other SQLite error.
    #[error("{path}: {source}")]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// The error.
        source: SqliteError,
    },
    /// An I/O error.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

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
    /// The bundle image is in the index already (opm's
    /// `BundleImageAlreadyAddedErr`, pkg/registry/populator.go at v1.73.0;
    /// `opm index add` exits 2 on it).
    #[error("{0}")]
    BundleImageAlreadyAdded(String),
    /// A bundle of the same name (CSV name: package and version) is in the
    /// index already (opm's `PackageVersionAlreadyAddedErr`; `opm index
    /// add` exits 3 on it).
    #[error("{0}")]
    PackageVersionAlreadyAdded(String),
    /// An `index add --overwrite-latest` opm refuses: the bundle to
    /// overwrite is not at the head of each of its channels, a package gets
    /// two overwrites, the bundle in the index has no image (added from a
    /// directory), is in another package, or the package is added in a
    /// semver mode (opm's `OverwriteErr` and the errors around it,
    /// pkg/registry/populator.go and pkg/lib/registry/registry.go at
    /// v1.73.0; `opm index add` exits 1 on them).
    #[error("{0}")]
    Overwrite(String),
    /// A bundle opm refuses to add as it is (two CSVs, no package
    /// annotation, an invalid `olm.properties` annotation); the message
    /// names the file.
    #[error("{0}")]
    Bundle(String),
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
    /// A failed statement, with what was being done, for code that runs
    /// statements outside this module's `Fail` steps (`serve` reading
    /// through `tables`, the add's lookup indexes around a caller's add).
    pub(crate) fn sqlite(context: impl Into<String>, e: &rusqlite::Error) -> Error {
        Error::Sqlite {
            context: context.into(),
            source: SqliteError::new(e),
        }
    }
}

/// How a step inside this module fails, until the step's error leaves the
/// module as an [`Error`] ([`Fail::into_error`], or `?` where the function
/// returns [`Result`]): SQLite and I/O errors with the contexts added on
/// their way up, plain messages (what `bail!` and `fail!` make), and
/// errors that are already typed. Crate-private, so that no rusqlite type
/// is part of the API while `?` still works on rusqlite's results.
#[derive(Debug)]
pub(crate) enum Fail {
    /// An [`Error`] already: it leaves as it is (a context added on the way
    /// is dropped, so a caller matches the variant it was raised as).
    Typed(Error),
    /// A statement failed; `context` is what was being done, outermost
    /// first.
    Sqlite {
        context: Vec<String>,
        source: rusqlite::Error,
    },
    /// Reading or writing a file failed.
    Io {
        context: Vec<String>,
        source: std::io::Error,
    },
    /// Bundles or packages that cannot go in together (a conflict, a
    /// cycle, an edge to another package): an [`Error::Conflict`], with
    /// its contexts joined in front.
    Msg(String),
}

/// `Result` of an internal step (see [`Fail`]).
pub(crate) type Res<T> = std::result::Result<T, Fail>;

impl Fail {
    /// A plain message (an [`Error::Conflict`] once it leaves the module).
    pub(crate) fn msg(m: impl std::fmt::Display) -> Fail {
        Fail::Msg(m.to_string())
    }

    /// Adds what was being done (outermost first, as `anyhow`'s contexts).
    pub(crate) fn context(self, c: impl std::fmt::Display) -> Fail {
        match self {
            Fail::Typed(e) => Fail::Typed(e),
            Fail::Sqlite {
                mut context,
                source,
            } => {
                context.insert(0, c.to_string());
                Fail::Sqlite { context, source }
            }
            Fail::Io {
                mut context,
                source,
            } => {
                context.insert(0, c.to_string());
                Fail::Io { context, source }
            }
            Fail::Msg(m) => Fail::Msg(format!("{c}: {m}")),
        }
    }

    /// The error a caller sees.
    pub(crate) fn into_error(self) -> Error {
        // No context: the cause's message alone.
        let join = |context: Vec<String>, cause: &dyn std::fmt::Display| {
            if context.is_empty() {
                cause.to_string()
            } else {
                context.join(": ")
            }
        };
        match self {
            Fail::Typed(e) => e,
            Fail::Sqlite { context, source } => Error::Sqlite {
                context: join(context, &source),
                source: SqliteError::new(&source),
            },
            Fail::Io { context, source } => Error::Io {
                context: join(context, &source),
                source,
            },
            Fail::Msg(m) => Error::Conflict(m),
        }
    }
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fail::Typed(e) => write!(f, "{e}"),
            Fail::Sqlite { context, source } if context.is_empty() => write!(f, "{source}"),
            Fail::Sqlite { context, source } => write!(f, "{}: {source}", context.join(": ")),
            Fail::Io { context, source } if context.is_empty() => write!(f, "{source}"),
            Fail::Io { context, source } => write!(f, "{}: {source}", context.join(": ")),
            Fail::Msg(m) => f.write_str(m),
        }
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail::Typed(e)
    }
}

impl From<DbError> for Fail {
    fn from(e: DbError) -> Fail {
        Fail::Typed(Error::Db(e))
    }
}

impl From<crate::fbc::FbcError> for Fail {
    fn from(e: crate::fbc::FbcError) -> Fail {
        Fail::Typed(Error::Fbc(e))
    }
}

impl From<rusqlite::Error> for Fail {
    fn from(source: rusqlite::Error) -> Fail {
        Fail::Sqlite {
            context: Vec::new(),
            source,
        }
    }
}

impl From<std::io::Error> for Fail {
    fn from(source: std::io::Error) -> Fail {
        Fail::Io {
            context: Vec::new(),
            source,
        }
    }
}

/// Data that does not decode or encode (an `olm.bundle.object`, a
/// manifest written on export): a message, with the context that names
/// the bundle.
macro_rules! fail_from_message {
    ($($t:ty),*) => {$(
        impl From<$t> for Fail {
            fn from(e: $t) -> Fail {
                Fail::Msg(e.to_string())
            }
        }
    )*};
}
fail_from_message!(base64::DecodeError, serde_json::Error, yaml_serde::Error);

impl From<Fail> for Error {
    fn from(f: Fail) -> Error {
        f.into_error()
    }
}

/// `anyhow::Context` for the steps of this module.
pub(crate) trait Context<T> {
    /// Adds what was being done, computed only on failure.
    fn with_context<C: std::fmt::Display>(self, c: impl FnOnce() -> C) -> Res<T>;
}

impl<T, E: Into<Fail>> Context<T> for std::result::Result<T, E> {
    fn with_context<C: std::fmt::Display>(self, c: impl FnOnce() -> C) -> Res<T> {
        self.map_err(|e| e.into().context(c()))
    }
}

/// Returns a [`Fail::Msg`] (an [`Error::Conflict`] for the caller).
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::index::error::Fail::Msg(format!($($arg)*)))
    };
}
pub(crate) use bail;

/// A [`Fail::Msg`] (an [`Error::Conflict`] for the caller).
macro_rules! fail {
    ($($arg:tt)*) => {
        $crate::index::error::Fail::Msg(format!($($arg)*))
    };
}
pub(crate) use fail;

/// Runs an internal step and gives its error as an [`Error`].
pub(crate) fn internal<T>(f: impl FnOnce() -> Res<T>) -> Result<T> {
    f().map_err(Fail::into_error)
}
