//! The signature gate: bundle images are checked against a signature policy
//! (`--require-signature POLICY`) before `index add`, `catalog build` or
//! `catalog mirror` let them in, and `catalog verify` reports on every
//! bundle image of a catalog.
//!
//! An image passes when every ClusterImagePolicy covering it has one
//! authority that verifies it (see [`crate::sign::policy`]): a key authority
//! with the key verifier of `verify` (the `sha256-H.sig` signatures and
//! Sigstore bundles attached as referrers), a keyless one with the
//! [`KeylessVerifiers`] given. The image is pinned to its digest first, so
//! every authority judges the same manifest.

use std::sync::Arc;

use serde::Serialize;

use super::catalog_source::{self, SourceOptions};
use super::{Error, Reporter};
use crate::oci::{ImageRef, RegistryClient};
use crate::sign::policy::{AuthorityKind, KeylessVerifiers, Policy};
use crate::sign::{
    KeyVerifier, SignerIdentity, Target, TrustedRootKeyless, Verifier, VerifyOptions,
};

/// What the gate checks against.
#[derive(Clone)]
pub struct Gate {
    /// The policy file read.
    pub policy: Policy,
    /// How keyless authorities are verified.
    pub keyless: Arc<dyn KeylessVerifiers>,
}

impl Gate {
    /// A gate for `policy` with this build's keyless verifiers.
    pub fn new(policy: Policy) -> Gate {
        Gate {
            policy,
            keyless: crate::sign::policy::default_keyless(),
        }
    }

    /// Reads the policy file at `path`.
    pub fn read(path: &std::path::Path) -> Result<Gate, Error> {
        let policy = Policy::read(path).map_err(|e| Error::Usage(crate::diag::with_causes(&e)))?;
        Ok(Gate::new(policy))
    }

    /// Reads the policy file at `path`; its keyless authorities are checked
    /// against the trusted root at `trusted_root` (the built-in public-good
    /// one when `None`).
    pub fn read_with_root(
        path: &std::path::Path,
        trusted_root: Option<&std::path::Path>,
    ) -> Result<Gate, Error> {
        let mut gate = Gate::read(path)?;
        if trusted_root.is_some() {
            let root = super::sign::trusted_root(trusted_root)?;
            gate.keyless = Arc::new(TrustedRootKeyless::new(root));
        }
        Ok(gate)
    }
}

/// The verdict on one image.
#[derive(Debug, Clone, Serialize)]
pub struct ImageVerdict {
    /// The image as the catalog or command line names it.
    pub image: String,
    /// Its manifest digest, when it could be resolved.
    pub digest: Option<String>,
    /// Who signed it (the authorities that verified it), when it passed.
    pub signer: Option<String>,
    /// Whether it passed.
    pub verified: bool,
    /// Why it did not.
    pub reason: Option<String>,
}

impl ImageVerdict {
    fn failed(image: &str, digest: Option<String>, reason: String) -> ImageVerdict {
        ImageVerdict {
            image: image.to_string(),
            digest,
            signer: None,
            verified: false,
            reason: Some(reason),
        }
    }
}

/// Judges one image against the gate's policy.
pub async fn verify_image(client: &RegistryClient, gate: &Gate, image: &str) -> ImageVerdict {
    let parsed: ImageRef = match image.parse() {
        Ok(r) => r,
        Err(e) => return ImageVerdict::failed(image, None, format!("not an image reference: {e}")),
    };
    let full = parsed.to_string();
    let policies = gate.policy.matching(&full);
    if policies.is_empty() {
        return ImageVerdict::failed(
            image,
            None,
            format!("no policy in {} covers {full}", gate.policy.source),
        );
    }
    let digest = match Target::new(client, &parsed).resolve_digest().await {
        Ok(d) => d,
        Err(e) => {
            return ImageVerdict::failed(
                image,
                None,
                format!("resolving: {}", crate::diag::with_causes(&e)),
            )
        }
    };
    let pinned = match &parsed {
        ImageRef::Registry { repo, .. } => ImageRef::Registry {
            repo: repo.clone(),
            reference: digest.clone(),
        },
        ImageRef::Layout { dir, .. } => ImageRef::Layout {
            dir: dir.clone(),
            reference: digest.clone(),
        },
    };
    let target = Target::new(client, &pinned);
    let mut signers = Vec::new();
    for policy in policies {
        let mut reasons = Vec::new();
        let mut passed = None;
        for authority in &policy.authorities {
            let verdict = match &authority.kind {
                AuthorityKind::Static(true) => Ok(None),
                AuthorityKind::Static(false) => Err("static action fail".to_string()),
                AuthorityKind::Key(key) => {
                    check_signatures(&target, &KeyVerifier::new(key.clone())).await
                }
                AuthorityKind::Keyless(ids) => match gate.keyless.verifier(ids) {
                    Ok(v) => check_signatures(&target, v.as_ref()).await,
                    Err(e) => Err(e),
                },
            };
            match verdict {
                Ok(who) => {
                    passed = Some(match who {
                        Some(id) => format!("keyless {}: {id}", authority.name),
                        None => authority.signer(),
                    });
                    break;
                }
                Err(e) => reasons.push(format!("authority {}: {e}", authority.name)),
            }
        }
        match passed {
            Some(s) => signers.push(s),
            None => {
                return ImageVerdict::failed(
                    image,
                    Some(digest),
                    format!("policy {}: {}", policy.name, reasons.join("; ")),
                )
            }
        }
    }
    ImageVerdict {
        image: image.to_string(),
        digest: Some(digest),
        signer: Some(signers.join(", ")),
        verified: true,
        reason: None,
    }
}

/// Whether one signature of the (pinned) image verifies with `verifier`
/// (and who made it, keyless); else why not: unsigned, or the first refusal.
async fn check_signatures(
    target: &Target,
    verifier: &dyn Verifier,
) -> Result<Option<SignerIdentity>, String> {
    let report = target
        .verify(verifier, &VerifyOptions::default())
        .await
        .map_err(|e| crate::diag::with_causes(&e))?;
    if let Some(v) = report.verified.into_iter().next() {
        return Ok(v.signer);
    }
    // A registry without the referrers API is not a refusal of a signature.
    match report.rejected.iter().find(|r| r.source != "referrers") {
        Some(r) => Err(format!("{}: {}", r.source, r.reason)),
        None => Err("unsigned: no signature found".to_string()),
    }
}

/// Checks `images` in order and stops at the first that does not pass:
/// [`Error::Unverified`] names it and says why. Nothing is written by the
/// caller until this returns `Ok`.
pub fn require(
    client: &RegistryClient,
    gate: &Gate,
    images: &[String],
    reporter: &dyn Reporter,
) -> Result<Vec<ImageVerdict>, Error> {
    let rt = super::image::runtime()?;
    let mut verdicts = Vec::new();
    for image in images {
        let v = rt.block_on(verify_image(client, gate, image));
        if !v.verified {
            return Err(Error::Unverified {
                image: image.clone(),
                reason: v.reason.unwrap_or_default(),
            });
        }
        reporter.note(&format!(
            "signature verified: {image} ({}), signed by {}",
            v.digest.as_deref().unwrap_or_default(),
            v.signer.as_deref().unwrap_or_default()
        ));
        verdicts.push(v);
    }
    Ok(verdicts)
}

/// The bundle images of `cfg`, each once, in catalog order.
pub fn bundle_images(cfg: &crate::fbc::DeclarativeConfig) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    cfg.bundles
        .iter()
        .filter(|b| !b.image.is_empty())
        .filter(|b| seen.insert(b.image.clone()))
        .map(|b| b.image.clone())
        .collect()
}

/// What `catalog verify` checks.
pub struct CatalogVerifyOptions {
    /// The catalog: an FBC directory or file, an SQLite index or an image.
    pub source: String,
    /// The gate.
    pub gate: Gate,
}

/// Judges every bundle image `opts.source` references (all of them: this is
/// a report, not a gate), through `client`.
pub fn verify_catalog(
    opts: &CatalogVerifyOptions,
    client: &RegistryClient,
) -> Result<Vec<ImageVerdict>, Error> {
    let cfg = catalog_source::load(&opts.source, &SourceOptions::with_client(client.clone()))?;
    let images = bundle_images(&cfg);
    let rt = super::image::runtime()?;
    Ok(images
        .iter()
        .map(|i| rt.block_on(verify_image(client, &opts.gate, i)))
        .collect())
}
