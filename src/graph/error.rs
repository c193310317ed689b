//! Why a graph, template or drawing could not be made: one error type for
//! the `graph` module, whose variants a caller can match. Messages are the
//! ones the command line prints.

use std::path::PathBuf;

/// A `graph` error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or directory that cannot be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A path given that does not exist.
    #[error("{}: no such file or directory", path.display())]
    NotFound {
        /// The path.
        path: PathBuf,
    },
    /// YAML that does not parse, or a value of the wrong type or shape,
    /// where it is.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Yaml {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What is wrong.
        message: String,
    },
    /// A `ci.yaml` setting or package layout the graph cannot use (an
    /// unknown `updateGraph`, a template defining no or several packages).
    #[error("{}: {message}", path.display())]
    Package {
        /// The file or directory.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A file-based catalog that cannot be read.
    #[error(transparent)]
    Catalog(#[from] crate::fbc::FbcError),
    /// A catalog template that cannot be rendered (the message names the
    /// file, and the line where there is one).
    #[error("{0}")]
    Template(String),
    /// A bundle image or directory that cannot be rendered into an
    /// `olm.bundle`.
    #[error("{0}")]
    Render(String),
    /// A bundle, version or channel the package does not have.
    #[error("{0}")]
    Unknown(String),
    /// No upgrade path leads from one bundle to the other.
    #[error("{0}")]
    NoPath(String),
    /// A graph that cannot be drawn (opm's `render-graph` refuses it).
    #[error("{0}")]
    Draw(String),
    /// A bundle's CRD file that cannot be parsed (the message names the
    /// file, and the line where there is one).
    #[error("{0}")]
    Crd(String),
    /// A version whose build metadata opm cannot compare (it reads the
    /// build id as a pre-release).
    #[error(
        "failed to convert build-id of {version} to prerelease version for comparison: {reason}"
    )]
    BuildId {
        /// The version.
        version: String,
        /// Why its build id is not a pre-release.
        reason: String,
    },
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// A YAML syntax error of `path`.
    pub fn yaml(path: impl Into<PathBuf>, e: &crate::yaml::YamlError) -> Error {
        Error::Yaml {
            path: path.into(),
            line: e.span.line,
            column: e.span.column,
            message: e.message.clone(),
        }
    }
}

/// A message of template rendering (what `?` on the template reader's
/// message-returning helpers gives): [`Error::Template`].
impl From<String> for Error {
    fn from(message: String) -> Error {
        Error::Template(message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Error {
        Error::Template(message.to_string())
    }
}
