//! Signing and verifying one image wherever it lives: a registry repository
//! or an OCI layout directory.

use std::collections::BTreeMap;

use anyhow::{anyhow, Result};
use serde::Serialize;

use super::layout::LayoutStore;
use super::payload::SimpleSigning;
use super::registry::RegistryStore;
use super::sigimage::{SignatureImage, SignatureLayer};
use super::{bundle, KeyVerifier, Signer, Verifier};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

/// Where the image to sign or verify is.
pub enum Target {
    /// A repository in a registry.
    Registry(RegistryStore),
    /// An OCI image layout on disk.
    Layout(LayoutStore),
}

/// How to store a new signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SignFormat {
    /// The `sha256-H.sig` tag (cosign before v3, or `--new-bundle-format=false`).
    #[default]
    Legacy,
    /// A Sigstore bundle v0.3 attached as an OCI 1.1 referrer (cosign v3's default).
    Bundle,
}

/// Options of [`Target::sign`].
#[derive(Debug, Clone, Default)]
pub struct SignOptions {
    /// `-a key=value` annotations put in the payload's `optional`.
    pub annotations: BTreeMap<String, String>,
    /// Which storage format to write.
    pub format: SignFormat,
}

/// Options of [`Target::verify`].
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// Annotations every accepted payload must carry.
    pub annotations: BTreeMap<String, String>,
}

/// One signature that verified.
#[derive(Debug, Clone, Serialize)]
pub struct Verified {
    /// Where it was found: the `.sig` tag or a bundle referrer.
    pub source: String,
    /// The signed payload (simple signing, or the in-toto statement of a bundle).
    pub payload: serde_json::Value,
}

/// One signature that did not verify, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Rejected {
    /// Where it was found.
    pub source: String,
    /// Why it was refused.
    pub reason: String,
}

/// The outcome of [`Target::verify`].
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    /// The image digest checked.
    pub digest: String,
    /// Signatures that verified.
    pub verified: Vec<Verified>,
    /// Signatures that did not.
    pub rejected: Vec<Rejected>,
}

/// Whether `image` already has a layer with exactly `payload` whose
/// signature verifies with `signer`'s public key.
fn already_signed(image: &SignatureImage, payload: &[u8], signer: &dyn Signer) -> bool {
    let Some(public) = signer.public_key() else {
        return false;
    };
    let verifier = KeyVerifier::new(public.clone());
    image.layers.iter().any(|l| {
        l.payload == payload
            && l.annotations
                .get(super::SIGNATURE_ANNOTATION)
                .and_then(|s| BASE64.decode(s.trim()).ok())
                .is_some_and(|sig| verifier.verify(payload, &sig, &l.annotations).is_ok())
    })
}

/// The outcome of [`Target::sign`].
#[derive(Debug, Clone)]
pub struct SignOutcome {
    /// The image digest signed.
    pub digest: String,
    /// Where the signature was written.
    pub stored_at: String,
    /// How many signatures the signature image now holds (legacy format).
    pub signature_count: usize,
}

impl Target {
    /// Parses a reference: `oci:DIR[:TAG|@DIGEST]` is a layout; anything else
    /// a registry reference (`host[:port]/repo[:tag|@digest]`).
    pub fn parse(reference: &str, allow_insecure: bool) -> Result<Self> {
        if let Some(rest) = reference.strip_prefix("oci:") {
            return Ok(Target::Layout(LayoutStore::parse(rest)?));
        }
        let parsed: oci_client::Reference = reference
            .parse()
            .map_err(|e| anyhow!("{reference:?} is not an image reference: {e}"))?;
        Ok(Target::Registry(RegistryStore::new(
            parsed,
            allow_insecure,
        )?))
    }

    /// Where the `.sig` signature image of `digest` lives, for messages.
    pub fn signature_location(&self, digest: &str) -> String {
        let tag = super::signature_tag(digest);
        match self {
            Target::Registry(r) => format!("{}:{tag}", r.repository_name()),
            Target::Layout(l) => format!("oci:{}:{tag}", l.dir().display()),
        }
    }

    /// What the payload's `docker-reference` names.
    pub fn repository_name(&self) -> String {
        match self {
            Target::Registry(r) => r.repository_name(),
            Target::Layout(l) => format!("oci:{}", l.dir().display()),
        }
    }

    /// The manifest digest the reference names now.
    pub async fn resolve_digest(&self) -> Result<String> {
        match self {
            Target::Registry(r) => r.resolve_digest().await,
            Target::Layout(l) => l.resolve_digest(),
        }
    }

    async fn load_signatures(&self, digest: &str) -> Result<SignatureImage> {
        match self {
            Target::Registry(r) => r.load_signatures(digest).await,
            Target::Layout(l) => l.load_signatures(digest),
        }
    }

    async fn store_signatures(&self, digest: &str, image: &SignatureImage) -> Result<String> {
        match self {
            Target::Registry(r) => r.store_signatures(digest, image).await,
            Target::Layout(l) => l.store_signatures(digest, image),
        }
    }

    /// Signs the image's current digest (never a moving tag) and stores the
    /// signature beside the existing ones.
    pub async fn sign(&self, signer: &dyn Signer, options: &SignOptions) -> Result<SignOutcome> {
        let digest = self.resolve_digest().await?;
        match options.format {
            SignFormat::Legacy => {
                let payload =
                    SimpleSigning::new(&self.repository_name(), &digest, &options.annotations)
                        .to_bytes();
                let mut image = self.load_signatures(&digest).await?;
                if already_signed(&image, &payload, signer) {
                    // As cosign's duplicate detector: this payload already
                    // carries a valid signature by this key; another would
                    // only grow the signature image.
                    return Ok(SignOutcome {
                        stored_at: self.signature_location(&digest),
                        digest,
                        signature_count: image.layers.len(),
                    });
                }
                let material = signer.sign(&payload).map_err(|e| anyhow!("signing: {e}"))?;
                image.append(SignatureLayer::new(payload, &material));
                let stored_at = self.store_signatures(&digest, &image).await?;
                Ok(SignOutcome {
                    digest,
                    stored_at,
                    signature_count: image.layers.len(),
                })
            }
            SignFormat::Bundle => {
                let Target::Registry(r) = self else {
                    return Err(anyhow!(
                        "--format bundle needs a registry (OCI 1.1 referrers); OCI layouts take --format legacy"
                    ));
                };
                let stored_at = bundle::attach(
                    r,
                    &digest,
                    signer,
                    &self.repository_name(),
                    &options.annotations,
                )
                .await?;
                Ok(SignOutcome {
                    digest,
                    stored_at,
                    signature_count: 1,
                })
            }
        }
    }

    /// Checks every signature of the image's current digest: the `.sig`
    /// layers and, in a registry, Sigstore bundles attached as referrers.
    pub async fn verify(
        &self,
        verifier: &dyn Verifier,
        options: &VerifyOptions,
    ) -> Result<VerifyReport> {
        let digest = self.resolve_digest().await?;
        let image = self.load_signatures(&digest).await?;
        let mut report = VerifyReport {
            digest: digest.clone(),
            verified: Vec::new(),
            rejected: Vec::new(),
        };
        let tag = super::signature_tag(&digest);
        for layer in &image.layers {
            let source = format!("{tag} layer {}", layer.digest);
            match layer.check(&digest, verifier, &options.annotations) {
                Ok(payload) => report.verified.push(Verified { source, payload }),
                Err(reason) => report.rejected.push(Rejected { source, reason }),
            }
        }
        if let Target::Registry(r) = self {
            // A registry that cannot list referrers must not hide the
            // `.sig` signatures found above: record it and go on.
            match bundle::verify_referrers(r, &digest, verifier, &options.annotations).await {
                Ok(outcomes) => {
                    for outcome in outcomes {
                        match outcome {
                            Ok(v) => report.verified.push(v),
                            Err(rej) => report.rejected.push(rej),
                        }
                    }
                }
                Err(e) => report.rejected.push(Rejected {
                    source: "referrers".to_string(),
                    reason: format!("{e:#}"),
                }),
            }
        }
        Ok(report)
    }
}
