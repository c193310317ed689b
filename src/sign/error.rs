//! What can go wrong signing or verifying: [`Error`].

use std::path::PathBuf;

use crate::oci::OciError;

/// Why signing, verifying or a signed push failed. Registry and layout
/// failures keep their [`OciError`] as the source (or are one, for a bare
/// read); the variant says which step they stopped. (Boxed: an
/// [`OciError`] is large, and most results are `Ok`.)
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A registry or OCI layout operation failed (resolving the image,
    /// reading signatures, storing blobs).
    #[error(transparent)]
    Oci(Box<OciError>),
    /// The layout directory has no `index.json`.
    #[error("{}: not an OCI image layout (no index.json)", .0.display())]
    NotALayout(PathBuf),
    /// Not a `sha256:` digest of 64 hex digits.
    #[error("{0}")]
    BadDigest(String),
    /// Reading the signature image (`sha256-H.sig`) failed.
    #[error("reading {location}")]
    ReadSignatures {
        /// The signature image.
        location: String,
        /// What failed.
        #[source]
        source: Box<OciError>,
    },
    /// Writing the signature image failed.
    #[error("storing the signature {location}")]
    StoreSignature {
        /// The signature image.
        location: String,
        /// What failed.
        #[source]
        source: Box<OciError>,
    },
    /// An annotation argument that is not `key=value` with a key.
    #[error("{0}")]
    Annotation(String),
    /// Bytes that are not a simple-signing payload.
    #[error("not a simple-signing payload: {0}")]
    Payload(String),
    /// No password could be read (none in `COSIGN_PASSWORD`, no terminal,
    /// the two entries differ, standard input failed).
    #[error("{0}")]
    Password(String),
    /// The [`crate::sign::Signer`] refused or failed.
    #[error("signing: {0}")]
    Signer(String),
    /// The Sigstore bundle format needs a signer with a fixed public key.
    #[error("bundle format needs a key-pair signer")]
    NeedsKeyPair,
    /// The Sigstore bundle format was asked for an OCI layout.
    #[error(
        "--format bundle needs a registry (OCI 1.1 referrers); OCI layouts take --format legacy"
    )]
    BundleNeedsRegistry,
    /// The image to attach a referrer to is not in the repository.
    #[error("{image} is not in the registry")]
    SubjectMissing {
        /// `repo@digest`.
        image: String,
    },
    /// The `sha256-H` referrers fallback index is not usable.
    #[error("{location}: referrers index {reason}")]
    ReferrersIndex {
        /// `repo:tag` of the index.
        location: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An attestation could not be made: an unknown predicate type, a
    /// predicate that is not what its type needs.
    #[error("{0}")]
    Attestation(String),
    /// A key could not be encoded.
    #[error(transparent)]
    Key(#[from] crate::sign::KeyError),
    /// Pushing the image (by digest, before signing) failed.
    #[error("pushing {image}")]
    Push {
        /// The destination.
        image: String,
        /// What failed.
        #[source]
        source: Box<OciError>,
    },
    /// The image was pushed by digest but signing it failed; its tag was
    /// not moved.
    #[error("signing {image} ({digest}); the tag was not moved, nothing names the unsigned image")]
    SignPushed {
        /// The destination.
        image: String,
        /// The pushed manifest.
        digest: String,
        /// What failed.
        #[source]
        source: Box<Error>,
    },
    /// The image and its signature were stored but moving the tag failed.
    #[error("tagging {image} ({digest}) after signing it")]
    Tag {
        /// The destination.
        image: String,
        /// The pushed manifest.
        digest: String,
        /// What failed.
        #[source]
        source: Box<OciError>,
    },
}

impl From<OciError> for Error {
    fn from(e: OciError) -> Self {
        Error::Oci(Box::new(e))
    }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
