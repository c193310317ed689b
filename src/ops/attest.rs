//! `attest` and `verify-attestation`: in-toto attestations of an image
//! signed with a cosign key pair (see [`crate::sign::attest`]).

use std::path::PathBuf;

use crate::sign::attest::{self, AttestOptions, AttestOutcome, AttestationReport};
use crate::sign::{KeySigner, KeyVerifier, PrivateKey, PublicKey, SignFormat, Target};

use super::registry::RegistryOptions;
use super::Error;

/// What to attest, and with which key.
#[derive(Clone, Debug)]
pub struct AttestImageOptions {
    /// The image: `REGISTRY/REPO[:TAG|@DIGEST]` or `oci:DIR[:TAG]`.
    pub reference: String,
    /// The encrypted cosign private key file.
    pub key: PathBuf,
    /// The predicate file.
    pub predicate: PathBuf,
    /// `--type`: a cosign predicate type name or a URI.
    pub kind: String,
    /// How the attestation is stored.
    pub format: SignFormat,
    /// How to reach the image's registry.
    pub registry: RegistryOptions,
}

/// Attests an image as `cosign attest --key` does. The predicate type and
/// file are checked, and the key read and decrypted (`password` asked for),
/// before the registry is touched.
pub fn attest(
    opts: &AttestImageOptions,
    password: impl FnOnce() -> Result<Vec<u8>, crate::sign::Error>,
) -> Result<AttestOutcome, Error> {
    attest::predicate_type_uri(&opts.kind).map_err(|e| Error::Usage(e.to_string()))?;
    let predicate = std::fs::read(&opts.predicate)
        .map_err(|e| Error::io(format!("reading {}", opts.predicate.display()), e))?;
    let now = crate::oci::rfc3339(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    );
    // A predicate its type refuses is found before any password is asked.
    attest::statement(
        &opts.kind,
        &predicate,
        "r",
        &format!("sha256:{}", "0".repeat(64)),
        &now,
    )
    .map_err(|e| Error::Usage(format!("{}: {e}", opts.predicate.display())))?;
    let (image, client) = super::sign::image_and_client(&opts.reference, &opts.registry)?;
    let password = password().map_err(|e| Error::Usage(e.to_string()))?;
    let key = PrivateKey::read_encrypted(&opts.key, &password).map_err(Error::sign)?;
    let options = AttestOptions {
        kind: opts.kind.clone(),
        predicate,
        format: opts.format,
        now,
    };
    super::image::runtime()?
        .block_on(attest::attest(
            &Target::new(&client, &image),
            &KeySigner::new(key),
            &options,
        ))
        .map_err(Error::sign)
}

/// What to verify, and with which key.
#[derive(Clone, Debug)]
pub struct VerifyAttestationOptions {
    /// The image: `REGISTRY/REPO[:TAG|@DIGEST]` or `oci:DIR[:TAG]`.
    pub reference: String,
    /// The PEM public key file (ECDSA P-256).
    pub key: PathBuf,
    /// `--type`: only statements of this predicate type count.
    pub kind: Option<String>,
    /// How to reach the image's registry.
    pub registry: RegistryOptions,
}

/// Checks every attestation of an image as `cosign verify-attestation
/// --key` does; none verifying is not an error here (the CLI exits 1).
pub fn verify_attestation(opts: &VerifyAttestationOptions) -> Result<AttestationReport, Error> {
    if let Some(k) = &opts.kind {
        attest::predicate_type_uri(k).map_err(|e| Error::Usage(e.to_string()))?;
    }
    let key = PublicKey::read(&opts.key).map_err(Error::sign)?;
    let (image, client) = super::sign::image_and_client(&opts.reference, &opts.registry)?;
    super::image::runtime()?
        .block_on(attest::verify(
            &Target::new(&client, &image),
            &KeyVerifier::new(key),
            opts.kind.as_deref(),
        ))
        .map_err(Error::sign)
}
