//! `sign`, `sign generate-key-pair` and `verify`: cosign key-pair
//! signatures of an image (a registry reference or an OCI layout).
//!
//! Passwords are given, never asked for: the caller reads them (the CLI
//! from `COSIGN_PASSWORD`, a prompt or standard input).

use std::path::{Path, PathBuf};

use crate::oci::ImageRef;
use crate::sign::payload::parse_annotations;
use crate::sign::{
    KeySigner, KeyVerifier, PrivateKey, PublicKey, SignFormat, SignOptions, SignOutcome, Target,
    VerifyOptions, VerifyReport,
};

use super::registry::{client, credential_host_of, RegistryOptions};
use super::Error;

/// What to sign, and with which key.
#[derive(Clone, Debug)]
pub struct SignImageOptions {
    /// The image: `REGISTRY/REPO[:TAG|@DIGEST]` or `oci:DIR[:TAG]`.
    pub reference: String,
    /// The encrypted cosign private key file.
    pub key: PathBuf,
    /// `KEY=VALUE` annotations put in the signed payload.
    pub annotations: Vec<String>,
    /// How the signature is stored.
    pub format: SignFormat,
    /// How to reach the image's registry.
    pub registry: RegistryOptions,
}

/// The image of `reference` and the client of a command that reads and
/// writes only that image (an explicit credential is for its registry).
pub(crate) fn image_and_client(
    reference: &str,
    registry: &RegistryOptions,
) -> Result<(ImageRef, crate::oci::RegistryClient), Error> {
    let image: ImageRef = reference.parse().map_err(Error::registry)?;
    let hosts = match registry.credential {
        Some(_) => credential_host_of(&image)?,
        None => Vec::new(),
    };
    Ok((image, client(registry, &hosts)?))
}

/// Signs an image as `cosign sign --key` does: its manifest digest, in a
/// simple-signing payload, stored as `opts.format` says. `password` (the
/// key's) is asked for once the arguments are known to be good, and the key
/// is read and decrypted before the registry is touched.
pub fn sign(
    opts: &SignImageOptions,
    password: impl FnOnce() -> Result<Vec<u8>, crate::sign::Error>,
) -> Result<SignOutcome, Error> {
    let annotations =
        parse_annotations(&opts.annotations).map_err(|e| Error::Usage(e.to_string()))?;
    let (image, client) = image_and_client(&opts.reference, &opts.registry)?;
    let password = password().map_err(|e| Error::Usage(e.to_string()))?;
    let key = PrivateKey::read_encrypted(&opts.key, &password).map_err(Error::sign)?;
    let options = SignOptions {
        annotations,
        format: opts.format,
    };
    runtime()?
        .block_on(Target::new(&client, &image).sign(&KeySigner::new(key), &options))
        .map_err(Error::sign)
}

/// Who must have signed an image for `verify`.
#[derive(Clone, Debug)]
pub enum ImageSigner {
    /// A key pair: the PEM public key file (ECDSA P-256), as `cosign verify --key`.
    Key(PathBuf),
    /// A keyless signer, as `cosign verify --certificate-identity[-regexp]
    /// --certificate-oidc-issuer[-regexp]`: a Fulcio certificate with this
    /// identity (SAN) and issuer, checked against a trusted root.
    Identity {
        /// The certificate identity, exact or a regular expression.
        identity: IdentityArg,
        /// The OIDC issuer (any when `None`).
        issuer: Option<IdentityArg>,
        /// A `trusted_root.json` replacing the built-in public-good one.
        trusted_root: Option<PathBuf>,
    },
}

/// What to verify, and who must have signed it.
#[derive(Clone, Debug)]
pub struct VerifyImageOptions {
    /// The image: `REGISTRY/REPO[:TAG|@DIGEST]` or `oci:DIR[:TAG]`.
    pub reference: String,
    /// The key, or the keyless identity.
    pub signer: ImageSigner,
    /// `KEY=VALUE` annotations every accepted payload must carry.
    pub annotations: Vec<String>,
    /// How to reach the image's registry.
    pub registry: RegistryOptions,
}

/// Reads a `trusted_root.json` (`None`: the built-in public-good one). A
/// file that cannot be read or is not a trusted root is an [`Error`].
pub fn trusted_root(path: Option<&Path>) -> Result<crate::sign::sigstore::TrustedRoot, Error> {
    use crate::sign::sigstore::TrustedRoot;
    let Some(path) = path else {
        return Ok(TrustedRoot::builtin());
    };
    let bytes =
        std::fs::read(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
    TrustedRoot::from_json(&bytes).map_err(|e| Error::Usage(format!("{}: {e}", path.display())))
}

/// The verifier `signer` asks for.
fn image_verifier(signer: &ImageSigner) -> Result<Box<dyn crate::sign::Verifier>, Error> {
    Ok(match signer {
        ImageSigner::Key(path) => Box::new(KeyVerifier::new(
            PublicKey::read(path).map_err(Error::sign)?,
        )),
        ImageSigner::Identity {
            identity,
            issuer,
            trusted_root: root,
        } => Box::new(crate::sign::KeylessVerifier::new(
            matcher(identity, "--certificate-identity-regexp")?,
            issuer
                .as_ref()
                .map(|i| matcher(i, "--certificate-oidc-issuer-regexp"))
                .transpose()?,
            std::sync::Arc::new(trusted_root(root.as_deref())?),
        )),
    })
}

/// Checks every signature of an image (legacy `.sig` layers and Sigstore
/// bundles attached as referrers) as `cosign verify` does, with a key or
/// for a keyless identity. The report says which verified (and, keyless,
/// who signed) and why the others were refused; none verifying is not an
/// error here (the CLI exits 1).
pub fn verify(opts: &VerifyImageOptions) -> Result<VerifyReport, Error> {
    let annotations =
        parse_annotations(&opts.annotations).map_err(|e| Error::Usage(e.to_string()))?;
    let verifier = image_verifier(&opts.signer)?;
    let (image, client) = image_and_client(&opts.reference, &opts.registry)?;
    runtime()?
        .block_on(
            Target::new(&client, &image).verify(verifier.as_ref(), &VerifyOptions { annotations }),
        )
        .map_err(Error::sign)
}

/// Where to write a new key pair.
#[derive(Clone, Debug)]
pub struct KeyPairOptions {
    /// `PREFIX.key` and `PREFIX.pub` are written.
    pub output_prefix: String,
    /// Overwrite existing files.
    pub force: bool,
}

/// The files [`generate_key_pair`] wrote.
#[derive(Clone, Debug)]
pub struct KeyPairFiles {
    /// The encrypted private key (mode 0600).
    pub private_key: PathBuf,
    /// The PEM public key.
    pub public_key: PathBuf,
}

/// Generates an ECDSA P-256 key pair in cosign's formats. `password` is
/// asked for only once the files are known to be writable (neither exists,
/// or `force`), so nobody types a password for nothing.
pub fn generate_key_pair(
    opts: &KeyPairOptions,
    password: impl FnOnce() -> Result<Vec<u8>, crate::sign::Error>,
) -> Result<KeyPairFiles, Error> {
    let private_key = PathBuf::from(format!("{}.key", opts.output_prefix));
    let public_key = PathBuf::from(format!("{}.pub", opts.output_prefix));
    if !opts.force {
        for p in [&private_key, &public_key] {
            if p.exists() {
                return Err(Error::Destination(format!(
                    "{} already exists (use --force to overwrite)",
                    p.display()
                )));
            }
        }
    }
    let password = password().map_err(|e| Error::Usage(e.to_string()))?;
    let key = PrivateKey::generate().map_err(Error::sign)?;
    let private_pem = key.to_encrypted_pem(&password).map_err(Error::sign)?;
    let public_pem = key.public_key().to_pem().map_err(Error::sign)?;
    write_private(&private_key, private_pem.as_bytes())?;
    std::fs::write(&public_key, public_pem.as_bytes())
        .map_err(|e| Error::io(format!("writing {}", public_key.display()), e))?;
    Ok(KeyPairFiles {
        private_key,
        public_key,
    })
}

/// Writes the private key readable by the owner only, as cosign does.
fn write_private(path: &Path, data: &[u8]) -> Result<(), Error> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt;
    let writing = |e| Error::io(format!("writing {}", path.display()), e);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(writing)?;
    f.write_all(data).map_err(writing)
}

fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("starting the async runtime", e))
}

/// What `verify-blob` checks: a Sigstore bundle over a file or a digest.
#[derive(Clone, Debug)]
pub struct VerifyBlobOptions {
    /// The bundle file (`*.sigstore.json`).
    pub bundle: PathBuf,
    /// The artifact: a path, or `sha256:` and 64 hex digits.
    pub artifact: String,
    /// A PEM public key (keyed bundles), instead of an identity.
    pub key: Option<PathBuf>,
    /// The certificate identity (SAN), exact or a regular expression.
    pub identity: Option<IdentityArg>,
    /// The OIDC issuer, exact or a regular expression.
    pub issuer: Option<IdentityArg>,
    /// A trusted root replacing the built-in public-good snapshot.
    pub trusted_root: Option<PathBuf>,
    /// Accept keyed bundles without a transparency log entry.
    pub insecure_ignore_tlog: bool,
}

/// A certificate value to match.
#[derive(Clone, Debug)]
pub enum IdentityArg {
    /// The value itself.
    Exact(String),
    /// A regular expression (RE2 syntax, unanchored).
    Regex(String),
}

fn matcher(arg: &IdentityArg, flag: &str) -> Result<crate::sign::sigstore::Matcher, Error> {
    use crate::sign::sigstore::Matcher;
    Ok(match arg {
        IdentityArg::Exact(s) => Matcher::Exact(s.clone()),
        IdentityArg::Regex(r) => {
            Matcher::Regex(regex::Regex::new(r).map_err(|e| Error::Usage(format!("{flag}: {e}")))?)
        }
    })
}

/// The SHA-256 a `sha256:` + 64 hex digits argument names (the form
/// cosign and sigstore-python take for a digest instead of a file).
fn digest_argument(s: &str) -> Option<[u8; 32]> {
    let hex = s.strip_prefix("sha256:")?;
    let mut out = [0u8; 32];
    (hex.len() == 64)
        .then(|| hex::decode_to_slice(hex, &mut out).ok())
        .flatten()
        .map(|_| out)
}

/// Verifies a Sigstore bundle over a file or digest, offline. Reading the
/// inputs or a bad argument is an [`Error`]; the verdict (verified, or the
/// first reason not) is the `Ok` value.
pub fn verify_blob(
    opts: &VerifyBlobOptions,
) -> Result<Result<crate::sign::sigstore::VerifiedSigner, crate::sign::sigstore::VerifyError>, Error>
{
    use crate::sign::sigstore::{self as sigstore, Artifact, Policy, TrustedRoot, VerifyError};
    let read =
        |p: &Path| std::fs::read(p).map_err(|e| Error::io(format!("reading {}", p.display()), e));
    let policy = match (&opts.key, &opts.identity) {
        (Some(key), None) => {
            let pem = String::from_utf8(read(key)?)
                .map_err(|_| Error::Usage(format!("{}: not a PEM public key", key.display())))?;
            let key = sigstore::PublicKey::from_pem(&pem)
                .map_err(|e| Error::Usage(format!("{}: {e}", key.display())))?;
            Policy::Key {
                key,
                require_tlog: !opts.insecure_ignore_tlog,
            }
        }
        (None, Some(identity)) => Policy::Identity {
            identity: matcher(identity, "--certificate-identity-regexp")?,
            issuer: opts
                .issuer
                .as_ref()
                .map(|i| matcher(i, "--certificate-oidc-issuer-regexp"))
                .transpose()?,
        },
        _ => {
            return Err(Error::Usage(
                "give --key, or --certificate-identity (or --certificate-identity-regexp)".into(),
            ))
        }
    };
    let bundle_bytes = read(&opts.bundle)?;
    let artifact_bytes;
    let artifact = match digest_argument(&opts.artifact) {
        // As sigstore-python: a digest only if no such file exists.
        Some(d) if !Path::new(&opts.artifact).exists() => Artifact::Digest(d),
        _ => {
            artifact_bytes = read(Path::new(&opts.artifact))?;
            Artifact::Bytes(&artifact_bytes)
        }
    };
    let root = match &opts.trusted_root {
        None => TrustedRoot::builtin(),
        Some(p) => match TrustedRoot::from_json(&read(p)?) {
            Ok(r) => r,
            // A broken trust root is a refusal to trust, not a usage error.
            Err(e) => return Ok(Err(VerifyError::TrustedRoot(e.to_string()))),
        },
    };
    Ok(sigstore::SigstoreBundle::parse(&bundle_bytes)
        .and_then(|b| sigstore::verify_bundle(&b, artifact, &policy, &root)))
}
