//! cosign-compatible signing and verification of bundle and index images.
//!
//! What is written is what `cosign sign --key` writes (SIGNATURE_SPEC.md of
//! sigstore/cosign): for an image whose manifest digest is `sha256:H`, an OCI
//! image manifest tagged `sha256-H.sig` in the same repository, one layer per
//! signature, each layer a "simple signing" JSON payload
//! (`application/vnd.dev.cosign.simplesigning.v1+json`) naming the image
//! digest, with the base64 ECDSA P-256/SHA-256 DER signature in the layer
//! annotation `dev.cosignproject.cosign/signature`. cosign v3's default, a
//! Sigstore bundle (v0.3) attached as an OCI 1.1 referrer, is written and
//! read too ([`SignFormat::Bundle`]).
//!
//! Where signatures go is a [`Target`]; it reaches registries and OCI layouts
//! only through [`crate::oci`] (one client, one set of credentials, TLS and
//! retry rules, one reference syntax), so this module is only signing:
//! payloads, keys and signature images as data.
//!
//! Keys are cosign's ([`PrivateKey`], [`PublicKey`]): an scrypt + NaCl-secretbox encrypted PKCS#8
//! private key and a PEM public key, readable by cosign and sigstore-rs and
//! made readable from them.
//!
//! Keyless signatures (a Fulcio certificate, a Rekor entry) are verified by
//! [`KeylessVerifier`], offline against a trusted root, in both places cosign
//! stores them. Keyless signing is not implemented: neither service is
//! reachable from where this runs. The [`Signer`] trait is the seam for it:
//! a keyless signer returns its certificate chain and Rekor bundle as extra
//! layer annotations in [`SignatureMaterial`].

use std::collections::BTreeMap;

use p256::ecdsa::signature::{Signer as _, Verifier as _};
use p256::ecdsa::DerSignature;

pub mod attest;
pub(crate) mod bundle;
mod error;
mod keyless;
pub(crate) mod keys;
pub mod password;
pub mod payload;
pub mod policy;
pub(crate) mod push;
pub(crate) mod sigimage;
pub mod sigstore;
pub(crate) mod target;

pub use error::{Error, Result};
pub use keyless::{KeylessVerifier, TrustedRootKeyless};
pub use keys::{KeyError, PrivateKey, PublicKey};
pub use payload::SimpleSigning;
pub use push::{push_and_sign, sign_before_tag};
pub use sigimage::{SignatureImage, SignatureLayer};
pub use target::{SignFormat, SignOptions, SignOutcome, Target, VerifyOptions, VerifyReport};

/// Media type of a simple-signing payload layer.
pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// Layer annotation holding the base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// Layer annotation holding a keyless signer's PEM certificate.
pub const CERTIFICATE_ANNOTATION: &str = "dev.sigstore.cosign/certificate";
/// Layer annotation holding a keyless signer's PEM certificate chain.
pub const CHAIN_ANNOTATION: &str = "dev.sigstore.cosign/chain";
/// Layer annotation holding a Rekor bundle (signed entry timestamp).
pub const REKOR_BUNDLE_ANNOTATION: &str = "dev.sigstore.cosign/bundle";
/// Layer annotation holding an RFC 3161 timestamp of the signature.
pub const RFC3161_ANNOTATION: &str = "dev.sigstore.cosign/rfc3161timestamp";

/// Who made a signature, when the verifier learns it: a keyless
/// certificate's identity and OIDC issuer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SignerIdentity {
    /// The certificate's subject (SAN: URI or email).
    pub identity: String,
    /// Its OIDC issuer, when the certificate names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
}

impl std::fmt::Display for SignerIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.issuer {
            Some(i) => write!(f, "{} (issuer {i})", self.identity),
            None => write!(f, "{}", self.identity),
        }
    }
}

/// One signature that verified.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Verified {
    /// Where it was found: the `.sig` tag or a bundle referrer.
    pub source: String,
    /// The signed payload (simple signing, or the in-toto statement of a bundle).
    pub payload: serde_json::Value,
    /// Who signed it, for keyless signatures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<SignerIdentity>,
}

/// One signature that did not verify, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rejected {
    /// Where it was found.
    pub source: String,
    /// Why it was refused.
    pub reason: String,
}

/// What a [`Signer`] produces for one payload.
#[derive(Debug, Clone)]
pub struct SignatureMaterial {
    /// The raw signature bytes (DER for ECDSA).
    pub signature: Vec<u8>,
    /// Extra layer annotations (a keyless signer's certificate, chain and
    /// Rekor bundle); empty for key-pair signing.
    pub annotations: BTreeMap<String, String>,
}

/// Something that signs payloads: a key pair today, a keyless
/// (Fulcio + Rekor) signer when those services are available. Shared
/// between the tasks of a batch, hence `Send + Sync`.
pub trait Signer: Send + Sync {
    /// Signs `payload` (the exact bytes stored in the signature layer).
    fn sign(&self, payload: &[u8]) -> Result<SignatureMaterial, String>;
    /// The public key, PEM, if the signer has a fixed one (for bundles' hints).
    fn public_key(&self) -> Option<&PublicKey>;
}

/// Something that decides whether a signature over a payload is trusted.
pub trait Verifier: Send + Sync {
    /// Checks `signature` over `payload`; `annotations` are the layer's, so a
    /// keyless verifier can read its certificate and Rekor bundle there.
    /// Returns who signed, when the verifier knows (keyless).
    fn verify(
        &self,
        payload: &[u8],
        signature: &[u8],
        annotations: &BTreeMap<String, String>,
    ) -> Result<Option<SignerIdentity>, String>;

    /// Checks a Sigstore bundle (its JSON, `bundle`) attached to the image
    /// `digest` (`sha256:H`): `pae` is the pre-authentication encoding of its
    /// DSSE envelope and `signature` the envelope's one signature; `context`
    /// holds the bundle's `verificationMaterial`. The default checks the
    /// signature with [`Verifier::verify`] (what a key needs); a keyless
    /// verifier checks the whole bundle (certificate, log entries, and that
    /// the statement names `digest`).
    fn verify_bundle(
        &self,
        bundle: &[u8],
        digest: &str,
        pae: &[u8],
        signature: &[u8],
        context: &BTreeMap<String, String>,
    ) -> Result<Option<SignerIdentity>, String> {
        let _ = (bundle, digest);
        self.verify(pae, signature, context)
    }
}

/// Signs with an ECDSA P-256 private key (SHA-256, DER signature), as
/// `cosign sign --key` does.
pub struct KeySigner {
    key: PrivateKey,
    public: PublicKey,
}

impl KeySigner {
    /// A signer for `key`.
    pub fn new(key: PrivateKey) -> Self {
        let public = key.public_key();
        KeySigner { key, public }
    }
}

impl Signer for KeySigner {
    fn sign(&self, payload: &[u8]) -> Result<SignatureMaterial, String> {
        let signature: DerSignature = self.key.signing_key().sign(payload);
        Ok(SignatureMaterial {
            signature: signature.as_bytes().to_vec(),
            annotations: BTreeMap::new(),
        })
    }

    fn public_key(&self) -> Option<&PublicKey> {
        Some(&self.public)
    }
}

/// Verifies with an ECDSA P-256 public key, as `cosign verify --key` does.
pub struct KeyVerifier {
    key: PublicKey,
}

impl KeyVerifier {
    /// A verifier for `key`.
    pub fn new(key: PublicKey) -> Self {
        KeyVerifier { key }
    }
}

impl Verifier for KeyVerifier {
    fn verify(
        &self,
        payload: &[u8],
        signature: &[u8],
        _annotations: &BTreeMap<String, String>,
    ) -> Result<Option<SignerIdentity>, String> {
        let sig = DerSignature::try_from(signature)
            .map_err(|_| "signature is not a DER-encoded ECDSA P-256 signature".to_string())?;
        self.key
            .verifying_key()
            .verify(payload, &sig)
            .map(|()| None)
            .map_err(|_| "signature does not match the payload for this public key".to_string())
    }
}

/// The cosign signature tag for a manifest digest: `sha256:H` → `sha256-H.sig`.
pub fn signature_tag(digest: &str) -> String {
    format!("{}.sig", digest.replace(':', "-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_signer_output_verifies_and_tampering_fails() {
        let key = PrivateKey::generate().expect("generate");
        let verifier = KeyVerifier::new(key.public_key());
        let signer = KeySigner::new(key);
        let m = signer.sign(b"payload").expect("sign");
        verifier
            .verify(b"payload", &m.signature, &BTreeMap::new())
            .expect("verify");
        assert!(verifier
            .verify(b"payloaD", &m.signature, &BTreeMap::new())
            .is_err());
        assert!(verifier
            .verify(b"payload", &m.signature[1..], &BTreeMap::new())
            .is_err());
    }

    #[test]
    fn signature_tag_is_cosigns() {
        assert_eq!(signature_tag("sha256:ab12"), "sha256-ab12.sig");
    }
}
