//! Use cases: what each command does, as library functions.
//!
//! Every command of the binary is one function here taking an options
//! struct (plain data, no command-line types) and returning a result a
//! caller can match ([`Error`]). The CLI only maps flags to those options,
//! calls the function and prints what it returns; anything a user of the
//! library would otherwise have to copy from the CLI (reading a catalog from
//! any source, pulling bundles, choosing which registry gets a password,
//! writing a directory so that a failure leaves nothing half-written) lives
//! here.
//!
//! Progress and notes go to a [`Reporter`] the caller passes, never straight
//! to the terminal.
//!
//! - [`build_context`]: opm's index build context (`--from-index`, the
//!   database and `index.Dockerfile` of `opm index add|rm|...`).
//! - [`bundle`]: opm's `alpha bundle generate` (annotations and
//!   `bundle.Dockerfile` of a manifests directory) and its bundle image
//!   validation verdict.
//! - [`catalog_source`]: any catalog source (FBC, SQLite index, bundle
//!   directory, bundle/index/catalog image) into a [`DeclarativeConfig`].
//! - [`image`]: bundle, index and catalog images built, pushed and
//!   signed.
//! - [`index`]: the `index` commands on a database (add, rm, prune,
//!   deprecatetruncate, export, list).
//! - [`fbc`]: `validate` and `init` on file-based catalogs.
//! - [`list`]: the tables of opm's `alpha list packages|channels|bundles`.
//! - [`render`]: `render`, `migrate` and opm's `alpha render-graph`.
//! - [`template`]: the `render-template` command.
//! - [`sign`]: `sign`, `sign generate-key-pair` and `verify`.
//! - [`attest`]: `attest` and `verify-attestation`.
//! - [`gate`]: the signature gate (`--require-signature POLICY`) and
//!   `catalog verify`.
//! - [`mirror`]: `catalog mirror`, copying a catalog's images to another
//!   registry and rewriting its references.
//! - [`registry`]: the registry client of a command, and which registry
//!   gets an explicit credential.
//! - [`serve`]: the serve cache of `opm serve --cache-dir`.
//!
//! [`DeclarativeConfig`]: crate::fbc::DeclarativeConfig

pub mod attest;
pub mod build_context;
pub mod bundle;
pub mod catalog_source;
pub mod fbc;
pub mod gate;
pub mod image;
pub mod index;
pub mod list;
pub mod mirror;
pub mod registry;
pub mod rehearse;
pub mod render;
pub mod serve;
pub mod sign;
pub mod template;

pub use catalog_source::SourceOptions;

/// Why a use case failed. The variants say which part failed and hold the
/// lower module's own error type, so a caller matches it without
/// downcasting, and the full chain of causes is there to print. [`Error::Context`] adds what
/// was being done; [`Error::root`] skips such layers.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The options do not fit together, or something required is missing
    /// (a usage error: the CLI exits 2).
    #[error("{0}")]
    Usage(String),
    /// A source is not something this use case reads (a missing path, an
    /// image that is neither a bundle nor a catalog, a bundle where a
    /// catalog is wanted).
    #[error("{0}")]
    Source(String),
    /// The destination cannot be written: it exists and is not empty, its
    /// parent is missing, or writing it failed (the message names the
    /// destination, not a temporary path).
    #[error("{0}")]
    Destination(String),
    /// Reading or writing a local file or directory failed.
    #[error("{context}")]
    Io {
        /// What was being read or written.
        context: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file-based catalog could not be read.
    #[error(transparent)]
    Fbc(#[from] crate::fbc::FbcError),
    /// A catalog template could not be read or rendered, or a graph made.
    #[error(transparent)]
    Graph(#[from] crate::graph::Error),
    /// A rehearsal's request (Subscription, ClusterExtension, installed
    /// CSV) could not be read or resolved against.
    #[error(transparent)]
    Resolve(#[from] crate::resolve::Error),
    /// A bundle could not be read or turned into a record or FBC bundle.
    #[error(transparent)]
    Bundle(BundleFailure),
    /// The SQLite index could not be read or written.
    #[error(transparent)]
    Index(crate::index::Error),
    /// A registry or OCI layout operation failed (pull, push, base image).
    #[error(transparent)]
    Registry(crate::oci::OciError),
    /// Building an image failed.
    #[error(transparent)]
    Build(crate::oci::OciError),
    /// Signing failed.
    #[error(transparent)]
    Sign(crate::sign::Error),
    /// A catalog image could not be fetched or unpacked.
    #[error(transparent)]
    Catalog(crate::serve::Error),
    /// The serve cache could not be made or trusted (`opm serve
    /// --cache-dir`).
    #[error(transparent)]
    Cache(serve::CacheError),
    /// opm's bundle generation refused a manifests directory (`opm alpha
    /// bundle generate|build`).
    #[error(transparent)]
    Generate(bundle::GenerateError),
    /// A table of `opm alpha list` could not be made (a package the
    /// catalog does not have).
    #[error(transparent)]
    List(list::ListError),
    /// An image did not pass the signature gate (`--require-signature`):
    /// not verified, so nothing was written (the CLI exits 1).
    #[error("{image}: signature not verified: {reason}; nothing was written")]
    Unverified {
        /// The image, as named.
        image: String,
        /// Why: unsigned, the signature refused, no policy covering it.
        reason: String,
    },
    /// `source` failed while doing `context`.
    #[error("{context}")]
    Context {
        /// What was being done.
        context: String,
        /// What failed.
        #[source]
        source: Box<Error>,
    },
}

impl Error {
    /// Wraps `self` with what was being done.
    pub fn context(self, context: impl Into<String>) -> Error {
        Error::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// The error under any [`Error::Context`] layers: the part that failed.
    pub fn root(&self) -> &Error {
        match self {
            Error::Context { source, .. } => source.root(),
            e => e,
        }
    }

    /// A bundle error from a lower module, or a message about a bundle.
    pub fn bundle(e: impl Into<BundleFailure>) -> Error {
        Error::Bundle(e.into())
    }

    /// An index error from a lower module.
    pub fn index(e: impl Into<crate::index::Error>) -> Error {
        Error::Index(e.into())
    }

    /// A registry error from a lower module.
    pub fn registry(e: crate::oci::OciError) -> Error {
        Error::Registry(e)
    }

    /// An image build error from a lower module.
    pub fn build(e: crate::oci::OciError) -> Error {
        Error::Build(e)
    }

    /// A signing error from a lower module.
    pub fn sign(e: impl Into<crate::sign::Error>) -> Error {
        Error::Sign(e.into())
    }

    /// An I/O error with what was being read or written.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

/// Why a bundle could not be used.
#[derive(Debug, thiserror::Error)]
pub enum BundleFailure {
    /// Its directory could not be read as a bundle.
    #[error(transparent)]
    Load(#[from] crate::bundle::LoadError),
    /// It could not be made into an index record (opm's rules).
    #[error(transparent)]
    Record(#[from] crate::index::Error),
    /// It could not be rendered as an `olm.bundle`.
    #[error(transparent)]
    Render(#[from] crate::fbc::FbcError),
    /// Anything else, said in words that name the bundle.
    #[error("{0}")]
    Invalid(String),
}

impl From<String> for BundleFailure {
    fn from(message: String) -> BundleFailure {
        BundleFailure::Invalid(message)
    }
}

impl From<crate::index::Error> for Error {
    fn from(e: crate::index::Error) -> Error {
        Error::index(e)
    }
}

/// Adds context to the errors of a [`Result`].
pub trait ResultExt<T> {
    /// Wraps the error with what was being done.
    fn context_with(self, context: impl FnOnce() -> String) -> Result<T, Error>;
}

impl<T> ResultExt<T> for Result<T, Error> {
    fn context_with(self, context: impl FnOnce() -> String) -> Result<T, Error> {
        self.map_err(|e| e.context(context()))
    }
}

/// The message of `e` and of each of its causes, joined with ": " (what
/// anyhow's `{:#}` prints), for a one-line report.
pub fn chain_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// Where a use case sends what it has to say besides its result. Every
/// method has a default that drops the message, so a library caller
/// implements only what it shows.
pub trait Reporter: Sync {
    /// What was done ("removed package(s): etcd"); the CLI hides these with
    /// `-q`.
    fn note(&self, _message: &str) {}
    /// Something the user should know that is not an error; the CLI prints
    /// it as `warning: MESSAGE`, also with `-q`.
    fn warning(&self, _message: &str) {}
    /// A line that belongs with the result but is not the result (a bundle
    /// left out, a signature stored); the CLI prints it as it is on stderr,
    /// also with `-q`.
    fn message(&self, _message: &str) {}
    /// How progress bars are drawn during transfers.
    fn progress(&self) -> crate::oci::progress::ProgressMode {
        crate::oci::progress::ProgressMode::Off
    }
}

/// A [`Reporter`] that drops everything.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Reporter for Silent {}
