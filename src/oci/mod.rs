//! OCI images: bundle and index images, registries and OCI image layouts,
//! without a container daemon.
//!
//! - [`build`]: reproducible bundle images (one layer with `manifests/` and
//!   `metadata/`, annotations as labels) and index images (a base image plus
//!   a layer with `/database/index.db`, for every platform of the base).
//! - [`transfer`]: pushing to a registry or writing an OCI layout (blobs
//!   first, manifest last), and fetching manifests and blobs from either.
//! - [`copy`]: copying images by digest between registries and layouts
//!   (every platform of an index, skipping what the destination has).
//! - [`pull_bundle`]: pulling bundle images and unpacking them, safely and in
//!   memory, into [`crate::bundle::Bundle`]s; [`pull_bundles`] pulls many at
//!   once with bounded concurrency.
//! - [`batch`]: building and pushing many bundle images with one client and
//!   bounded concurrency (`bundle build DIR... --tag-template`).
//! - [`RegistryClient`]: the registry client (auth, retries, mounts).
//! - [`runtime`]: the default base of index images, made from the running
//!   executable and the shared libraries it needs.
//!
//! Image references are either registry references (`quay.io/org/name:tag`,
//! `name@sha256:…`, optionally prefixed `docker://`) or OCI layouts on disk
//! (`oci:DIR:TAG`, `oci:DIR@sha256:…`), as skopeo writes them.

pub mod auth;
pub mod batch;
pub mod blob;
pub mod build;
pub mod copy;
pub mod layer;
pub(crate) mod layout;
pub mod media;
pub mod progress;
pub(crate) mod pull;
pub(crate) mod registry;
pub mod runtime;
pub mod transfer;

use std::path::PathBuf;
use std::str::FromStr;

pub use blob::BlobBody;
pub use build::{
    build_bundle_image, build_bundle_image_on, build_index_image, BuildOptions, BundleImage,
    ImageSet,
};
pub use layout::Layout;
pub use pull::{
    pull_bundle, pull_bundle_stream, pull_bundles, unpack_image, PulledBundle, UnpackedImage,
};
pub use registry::{ClientOptions, RegistryClient, Repo, MAX_MANIFEST};
pub use transfer::{load_base, push_image, push_image_untagged, tag_image};

/// Why an OCI operation failed. Every message names the registry, image or
/// file it is about.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// The image reference does not parse.
    #[error("`{reference}` is not an image reference: {reason}")]
    InvalidReference {
        /// The reference as given.
        reference: String,
        /// Why.
        reason: String,
    },
    /// The registry refused the credentials or requires some.
    #[error("authentication to {registry} failed: {reason}")]
    Auth {
        /// The registry host.
        registry: String,
        /// What happened, and where credentials were looked for.
        reason: String,
    },
    /// The registry could not be reached (after retries).
    #[error("registry {registry} is unreachable: {reason}")]
    Unreachable {
        /// The registry host.
        registry: String,
        /// The transport error.
        reason: String,
    },
    /// The registry's TLS certificate did not verify.
    #[error("TLS certificate of {registry} not accepted: {reason}; if the registry uses a private CA, trust it with --ca-file CA.pem (or SSL_CERT_FILE); --insecure skips verification")]
    Tls {
        /// The registry host.
        registry: String,
        /// What was being done and the verifier's reason.
        reason: String,
    },
    /// The registry answered with an unexpected status.
    #[error("{operation}: registry {registry} answered HTTP {status}{body}")]
    Status {
        /// The registry host.
        registry: String,
        /// What was being done.
        operation: String,
        /// The HTTP status.
        status: u16,
        /// Start of the response body (`: …`), or empty.
        body: String,
    },
    /// Content does not match its digest or declared size.
    #[error("{what}: content does not match its digest (expected {expected}, got {actual}); the blob is truncated or corrupt, and was rejected")]
    DigestMismatch {
        /// What was checked.
        what: String,
        /// The digest it should have.
        expected: String,
        /// The digest it has.
        actual: String,
    },
    /// Content exceeds a size limit.
    #[error("{what}: {detail} exceeds the limit of {limit} bytes")]
    TooLarge {
        /// What was read.
        what: String,
        /// The limit.
        limit: u64,
        /// What exceeded it.
        detail: String,
    },
    /// A layer holds something unsafe or unreadable.
    #[error("layer {layer} rejected: {reason}")]
    UnsafeLayer {
        /// The layer (image and digest).
        layer: String,
        /// Why.
        reason: String,
    },
    /// The image, tag or blob does not exist.
    #[error("{reference}: not found")]
    NotFound {
        /// What was looked up.
        reference: String,
    },
    /// An OCI layout directory is unusable.
    #[error("OCI layout {path}: {reason}")]
    Layout {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A manifest, config or input is malformed.
    #[error("{what}: {reason}")]
    Invalid {
        /// What is malformed.
        what: String,
        /// Why.
        reason: String,
    },
    /// A digest that is not `sha256:` and 64 lowercase hex digits.
    #[error("`{digest}` is not a sha256 digest (only sha256:<64 hex digits> is supported)")]
    BadDigest {
        /// The digest as given.
        digest: String,
    },
    /// `SOURCE_DATE_EPOCH` is set but is not a number of seconds.
    #[error("SOURCE_DATE_EPOCH={0} is not a whole number of seconds since 1970")]
    SourceDateEpoch(String),
    /// The HTTP client could not be set up (unreadable CA certificates, TLS
    /// backend).
    #[error("{0}")]
    ClientSetup(String),
    /// The registry broke the upload protocol (no upload location, an
    /// upload sent to plain HTTP, an upload that never completed).
    #[error("{what}: {reason}")]
    Upload {
        /// The upload (blob and repository).
        what: String,
        /// What went wrong.
        reason: String,
    },
    /// Reading or writing local data failed (a layer's tar or gzip stream).
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The default base image (the running executable and its shared
    /// libraries) could not be built.
    #[error("building the default base image from {}: {reason}; pass --base with an image that holds /bin/olm-catalog (see docs/images.md), or use a statically linked olm-catalog", exe.display())]
    RuntimeLayer {
        /// The executable.
        exe: PathBuf,
        /// What failed.
        reason: String,
    },
    /// A background task of a transfer or build stopped (panicked or was
    /// cancelled).
    #[error("{what}: {reason}")]
    Task {
        /// What the task was doing.
        what: String,
        /// How it stopped.
        reason: String,
    },
    /// Two bundles of one batch would be pushed to the same destination.
    #[error("{destination} is also the destination of {}; the tag template must tell the bundles apart", first.display())]
    DuplicateDestination {
        /// The destination.
        destination: String,
        /// The bundle directory that has it already.
        first: PathBuf,
    },
    /// A bundle of a batch has no destination (neither given nor templated).
    #[error("{}: no destination for the bundle image", .0.display())]
    NoDestination(PathBuf),
    /// The destination names a digest other than the built image's.
    #[error("{destination}: the built image has digest {digest}, not the one in the destination")]
    DestinationDigest {
        /// The destination.
        destination: String,
        /// The built image's digest.
        digest: String,
    },
    /// The step run between storing an image by digest and moving its tag
    /// (signing it) failed; the tag was not moved.
    #[error("{step} {image} ({digest}); the tag was not moved")]
    BeforeTag {
        /// What the step does (`signing`).
        step: String,
        /// The destination.
        image: String,
        /// The stored image's digest.
        digest: String,
        /// Why it failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Where an image is read from or written to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageRef {
    /// A registry repository with a tag or digest.
    Registry {
        /// The repository.
        repo: Repo,
        /// Tag or `sha256:` digest.
        reference: String,
    },
    /// An OCI image layout directory with a tag (or digest).
    Layout {
        /// The layout directory.
        dir: PathBuf,
        /// Tag (`org.opencontainers.image.ref.name`) or digest.
        reference: String,
    },
}

impl ImageRef {
    /// Whether the reference names a digest rather than a tag.
    pub fn is_digest(&self) -> bool {
        match self {
            ImageRef::Registry { reference, .. } | ImageRef::Layout { reference, .. } => {
                reference.starts_with("sha256:")
            }
        }
    }

    /// The same image location with another tag or digest.
    pub fn with_reference(&self, reference: &str) -> ImageRef {
        match self {
            ImageRef::Registry { repo, .. } => ImageRef::Registry {
                repo: repo.clone(),
                reference: reference.to_string(),
            },
            ImageRef::Layout { dir, .. } => ImageRef::Layout {
                dir: dir.clone(),
                reference: reference.to_string(),
            },
        }
    }
}

impl std::fmt::Display for ImageRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImageRef::Registry { repo, reference } if reference.starts_with("sha256:") => {
                write!(f, "{repo}@{reference}")
            }
            ImageRef::Registry { repo, reference } => write!(f, "{repo}:{reference}"),
            ImageRef::Layout { dir, reference } if reference.starts_with("sha256:") => {
                write!(f, "oci:{}@{reference}", dir.display())
            }
            ImageRef::Layout { dir, reference } => write!(f, "oci:{}:{reference}", dir.display()),
        }
    }
}

impl FromStr for ImageRef {
    type Err = OciError;

    fn from_str(s: &str) -> Result<ImageRef, OciError> {
        let invalid = |reason: String| OciError::InvalidReference {
            reference: s.to_string(),
            reason,
        };
        if let Some(rest) = s.strip_prefix("oci:") {
            let (dir, reference) = if let Some((d, digest)) = rest.split_once("@sha256:") {
                (d.to_string(), format!("sha256:{digest}"))
            } else {
                match rest.rsplit_once(':') {
                    // A colon after the last `/` separates the tag.
                    Some((d, t)) if !t.contains('/') && !d.is_empty() => {
                        (d.to_string(), t.to_string())
                    }
                    _ => (rest.to_string(), "latest".to_string()),
                }
            };
            if dir.is_empty() {
                return Err(invalid("no directory after `oci:`".into()));
            }
            if reference.is_empty() || reference.chars().any(|c| c.is_whitespace()) {
                return Err(invalid("empty or blank tag".into()));
            }
            if reference.starts_with("sha256:") {
                media::check_digest(&reference).map_err(invalid)?;
            }
            return Ok(ImageRef::Layout {
                dir: PathBuf::from(dir),
                reference,
            });
        }
        let plain = s.strip_prefix("docker://").unwrap_or(s);
        let (repo, reference) = parse_registry_reference(plain).map_err(invalid)?;
        Ok(ImageRef::Registry { repo, reference })
    }
}

/// Docker Hub's registry host, as requests go to it.
const DOCKER_HUB_HOST: &str = "index.docker.io";

/// Parses `[HOST[:PORT]/]NAME[:TAG][@DIGEST]` by distribution's grammar
/// (the one [`crate::reference`] reads, as skopeo and opm do), then as a
/// place to pull from: Docker Hub's requests go to `index.docker.io`, a
/// digest wins over a tag, no tag means `latest`, and a digest must be
/// sha256 (what this client verifies content by).
fn parse_registry_reference(s: &str) -> Result<(Repo, String), String> {
    let r = crate::reference::parse_normalized(s).map_err(|e| e.to_string())?;
    let host = match r.domain.as_str() {
        crate::reference::DOCKER_HUB | "registry-1.docker.io" => DOCKER_HUB_HOST.to_string(),
        _ => r.domain,
    };
    let reference = match (r.digest, r.tag) {
        (Some(d), _) => {
            media::check_digest(&d)?;
            d
        }
        (None, Some(t)) => t,
        (None, None) => "latest".to_string(),
    };
    Ok((Repo { host, name: r.path }, reference))
}

/// Whether a command-line argument names an image rather than a path on
/// disk, so commands can take either (`index add`, `serve`).
///
/// An existing path is always a path. Otherwise `oci:DIR:TAG` and
/// `docker://…` are images, and so is `first/rest` when `first` is a
/// registry host (has a `.` or `:`, or is `localhost`, as in
/// `quay.io/me/bundle`, even untagged) or when the argument carries a tag
/// or digest (`me/bundle:v1`, a Docker Hub short name). Arguments starting
/// with `.`, `/` or `~` are paths: a typo there should say "no such
/// directory", not try a registry.
pub fn looks_like_image_ref(arg: &str) -> bool {
    if std::path::Path::new(arg).exists() {
        return false;
    }
    if arg.starts_with("oci:") || arg.starts_with("docker://") {
        return true;
    }
    if arg.starts_with(['.', '/', '~']) {
        return false;
    }
    let Some((first, rest)) = arg.split_once('/') else {
        return false;
    };
    let host_like = first.contains('.') || first.contains(':') || first == "localhost";
    let tagged = rest.contains(':') || rest.contains('@');
    !rest.is_empty() && (host_like || tagged)
}

/// Seconds since the epoch used for image timestamps: `SOURCE_DATE_EPOCH`
/// when set (reproducible-builds.org convention), else 0.
pub fn source_date_epoch() -> Result<u64, OciError> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse::<u64>()
            .map_err(|_| OciError::SourceDateEpoch(v.clone())),
        _ => Ok(0),
    }
}

/// RFC 3339 UTC time of `epoch` seconds (`1970-01-01T00:00:00Z`).
pub fn rfc3339(epoch: u64) -> String {
    let days = (epoch / 86_400) as i64;
    let secs = epoch % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm), proleptic Gregorian.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_image_references_from_paths() {
        for image in [
            "oci:out/dir:v1",
            "docker://quay.io/me/b:v1",
            "quay.io/me/bundle",
            "quay.io/me/bundle:v1",
            "localhost/b",
            "127.0.0.1:5000/me/b@sha256:abc",
            "me/bundle:v1",
            "me/bundle@sha256:abc",
        ] {
            assert!(looks_like_image_ref(image), "{image} is an image");
        }
        for path in [
            "./no/such:dir",
            "/no/such/dir:1",
            "~/bundles/x:1",
            "bundles/etcd",
            "etcd:0.9.4",
            "quay.io/",
            "Cargo.toml",
            "src",
        ] {
            assert!(!looks_like_image_ref(path), "{path} is a path");
        }
    }

    #[test]
    fn parses_references() {
        let r: ImageRef = "oci:out/dir:v1".parse().expect("layout");
        assert_eq!(
            r,
            ImageRef::Layout {
                dir: "out/dir".into(),
                reference: "v1".into()
            }
        );
        let r: ImageRef = "oci:out".parse().expect("layout");
        assert_eq!(r.to_string(), "oci:out:latest");
        let r: ImageRef = "127.0.0.1:5000/etcd/bundle:0.9.4"
            .parse()
            .expect("registry");
        match &r {
            ImageRef::Registry { repo, reference } => {
                assert_eq!(repo.host, "127.0.0.1:5000");
                assert_eq!(repo.name, "etcd/bundle");
                assert_eq!(reference, "0.9.4");
            }
            _ => panic!("not a registry ref"),
        }
        let r: ImageRef = "docker://quay.io/a/b".parse().expect("registry");
        assert_eq!(r.to_string(), "quay.io/a/b:latest");
        assert!("oci:".parse::<ImageRef>().is_err());
        let hub = |s: &str| match s.parse::<ImageRef>().expect(s) {
            ImageRef::Registry { repo, reference } => format!("{repo} {reference}"),
            _ => panic!("{s} is not a registry ref"),
        };
        assert_eq!(hub("busybox"), "index.docker.io/library/busybox latest");
        assert_eq!(hub("me/b:v1"), "index.docker.io/me/b v1");
        assert_eq!(
            hub("docker.io/busybox:1"),
            "index.docker.io/library/busybox 1"
        );
        assert_eq!(hub("localhost/b"), "localhost/b latest");
        assert_eq!(hub("[::1]:5000/a/b:x"), "[::1]:5000/a/b x");
        let d = format!("sha256:{}", "a".repeat(64));
        assert_eq!(hub(&format!("q.io/a/b:t@{d}")), format!("q.io/a/b {d}"));
        for bad in [
            "q.io/A/b",
            "q.io/a//b",
            "q.io/a/b:.x",
            "q.io/a/-b",
            "q.io/a/b:",
            "",
            "q.io/a_-b",
        ] {
            assert!(bad.parse::<ImageRef>().is_err(), "{bad} should not parse");
        }
        assert!("quay.io/a/b@sha256:zz".parse::<ImageRef>().is_err());
    }

    #[test]
    fn formats_times() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
