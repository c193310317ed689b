//! Signing and verifying one image wherever it lives: a registry repository
//! or an OCI layout directory, both reached through [`crate::oci`] (its
//! registry client with its credentials, TLS and retry rules, its references
//! and its layouts). What is here is only where signatures go.

use std::collections::BTreeMap;

use super::error::{Error, Result};
use serde::Serialize;

use super::payload::SimpleSigning;
use super::sigimage::{SignatureImage, SignatureLayer};
use super::{bundle, signature_tag, KeyVerifier, Signer, Verifier};
pub use super::{Rejected, Verified};
use crate::oci::layout::Layout;
use crate::oci::media::{self, Descriptor, ImageManifest};
use crate::oci::registry::{BlobBody, RegistryClient, MAX_MANIFEST};
use crate::oci::{ImageRef, OciError, Repo};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

/// Largest signature payload read (signatures are a few hundred bytes; this
/// only stops a hostile registry or layout from filling memory).
const MAX_PAYLOAD: u64 = 16 << 20;

/// Where the image to sign or verify is.
pub enum Target {
    /// A repository in a registry.
    Registry {
        /// The client every request goes through.
        client: RegistryClient,
        /// The repository.
        repo: Repo,
        /// The tag or digest named.
        reference: String,
    },
    /// An OCI image layout on disk.
    Layout {
        /// The layout.
        layout: Layout,
        /// The tag (`org.opencontainers.image.ref.name`) or digest named.
        reference: String,
    },
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
    /// The image `image` names, reached through `client` (which is not used
    /// for layouts).
    pub fn new(client: &RegistryClient, image: &ImageRef) -> Target {
        match image {
            ImageRef::Registry { repo, reference } => Target::Registry {
                client: client.clone(),
                repo: repo.clone(),
                reference: reference.clone(),
            },
            ImageRef::Layout { dir, reference } => Target::Layout {
                layout: Layout::new(dir.clone()),
                reference: reference.clone(),
            },
        }
    }

    /// Parses a reference as [`ImageRef`] does: `oci:DIR[:TAG|@DIGEST]` is a
    /// layout (`oci:DIR` its only image, or the one tagged `latest`);
    /// anything else a registry reference.
    pub fn parse(reference: &str, client: &RegistryClient) -> Result<Self> {
        let image: ImageRef = reference.parse()?;
        Ok(Target::new(client, &image))
    }

    /// Where the `.sig` signature image of `digest` lives, for messages.
    pub fn signature_location(&self, digest: &str) -> String {
        self.attached_location(&signature_tag(digest))
    }

    /// What the payload's `docker-reference` names: `registry/repository`,
    /// as cosign writes it.
    pub fn repository_name(&self) -> String {
        match self {
            Target::Registry { repo, .. } => repo.to_string(),
            Target::Layout { layout, .. } => format!("oci:{}", layout.dir.display()),
        }
    }

    /// The manifest digest the reference names now (a digest reference is
    /// checked against the content).
    pub async fn resolve_digest(&self) -> Result<String> {
        match self {
            Target::Registry {
                client,
                repo,
                reference,
            } => {
                let (_, _, digest) = client.get_manifest(repo, reference).await?;
                Ok(digest)
            }
            Target::Layout { layout, reference } => {
                if !layout.dir.join("index.json").is_file() {
                    return Err(Error::NotALayout(layout.dir.clone()));
                }
                let desc = layout.resolve(reference)?;
                // The index entry is only a pointer: confirm the blob is
                // there and intact.
                layout.get_blob(&desc, MAX_MANIFEST)?;
                Ok(desc.digest)
            }
        }
    }

    /// Reads the signature image of `digest` (empty when there is none). A
    /// payload that is missing or does not match its digest is kept empty,
    /// so that layer fails verification instead of the whole run.
    pub async fn load_signatures(&self, digest: &str) -> Result<SignatureImage> {
        self.load_attached(&signature_tag(digest)).await
    }

    /// Reads the cosign attachment image tagged `tag` (`sha256-H.sig`,
    /// `sha256-H.att`), empty when there is none; as [`Self::load_signatures`].
    pub async fn load_attached(&self, tag: &str) -> Result<SignatureImage> {
        let tag = tag.to_string();
        let (bytes, what) = match self {
            Target::Registry { client, repo, .. } => {
                match client.find_manifest(repo, &tag).await? {
                    Some((bytes, _, _)) => (bytes, format!("{repo}:{tag}")),
                    None => return Ok(SignatureImage::default()),
                }
            }
            Target::Layout { layout, .. } => {
                let desc = match layout.resolve(&tag) {
                    Ok(d) => d,
                    Err(OciError::NotFound { .. }) => return Ok(SignatureImage::default()),
                    Err(e) => return Err(e.into()),
                };
                (
                    layout.get_blob(&desc, MAX_MANIFEST)?,
                    format!("oci:{}:{tag}", layout.dir.display()),
                )
            }
        };
        let manifest = ImageManifest::parse(&bytes, &what)?;
        let mut image = SignatureImage::default();
        for layer in manifest.layers {
            let payload = match self.read_blob(&layer).await {
                Ok(p) => p,
                Err(OciError::DigestMismatch { .. } | OciError::NotFound { .. }) => Vec::new(),
                Err(OciError::Layout { .. }) if matches!(self, Target::Layout { .. }) => Vec::new(),
                Err(e) => {
                    return Err(Error::ReadSignatures {
                        location: what,
                        source: Box::new(e),
                    })
                }
            };
            image.layers.push(SignatureLayer {
                media_type: layer.media_type,
                digest: layer.digest,
                payload,
                annotations: layer.annotations.unwrap_or_default(),
            });
        }
        Ok(image)
    }

    async fn read_blob(&self, desc: &Descriptor) -> Result<Vec<u8>, OciError> {
        match self {
            Target::Registry { client, repo, .. } => {
                client.get_blob(repo, desc, MAX_PAYLOAD, None).await
            }
            Target::Layout { layout, .. } => layout.get_blob(desc, MAX_PAYLOAD),
        }
    }

    /// Stores a blob (unless already there).
    async fn put_blob(&self, data: &[u8], media_type: &str) -> Result<Descriptor, OciError> {
        let desc = Descriptor::of(media_type, data);
        match self {
            Target::Registry { client, repo, .. } => {
                client
                    .push_blob(repo, &desc, &BlobBody::from(data.to_vec()), None)
                    .await?;
            }
            Target::Layout { layout, .. } => {
                layout.init()?;
                layout.put_blob(data)?;
            }
        }
        Ok(desc)
    }

    /// Stores a manifest under `tag`, or by digest only when `tag` is `None`.
    async fn put_manifest(
        &self,
        tag: Option<&str>,
        bytes: &[u8],
        media_type: &str,
    ) -> Result<Descriptor, OciError> {
        let desc = Descriptor::of(media_type, bytes);
        match self {
            Target::Registry { client, repo, .. } => {
                let reference = tag.unwrap_or(&desc.digest);
                client
                    .put_manifest(repo, reference, media_type, bytes)
                    .await?;
            }
            Target::Layout { layout, .. } => {
                layout.init()?;
                layout.put_blob(bytes)?;
                if let Some(t) = tag {
                    layout.set_tag(t, &desc)?;
                }
            }
        }
        Ok(desc)
    }

    /// Writes `image` as the signature image of `digest`: its blobs, then
    /// the `sha256-H.sig` tag. Returns where it is.
    pub async fn store_signatures(&self, digest: &str, image: &SignatureImage) -> Result<String> {
        self.store_attached(&signature_tag(digest), image).await
    }

    /// Where the attachment tagged `tag` lives, for messages.
    pub fn attached_location(&self, tag: &str) -> String {
        match self {
            Target::Registry { repo, .. } => format!("{repo}:{tag}"),
            Target::Layout { layout, .. } => format!("oci:{}:{tag}", layout.dir.display()),
        }
    }

    /// Writes `image` as the cosign attachment tagged `tag`: its blobs,
    /// then the tag. Returns where it is.
    pub async fn store_attached(&self, tag: &str, image: &SignatureImage) -> Result<String> {
        for layer in &image.layers {
            self.put_blob(&layer.payload, &layer.media_type).await?;
        }
        let config = image.config_bytes();
        self.put_blob(&config, media::OCI_CONFIG).await?;
        let manifest = media::to_json_bytes(&image.manifest(&config));
        self.put_manifest(Some(tag), &manifest, media::OCI_MANIFEST)
            .await
            .map_err(|source| Error::StoreSignature {
                location: self.attached_location(tag),
                source: Box::new(source),
            })?;
        Ok(self.attached_location(tag))
    }

    /// Signs the image's current digest (never a moving tag) and stores the
    /// signature beside the existing ones.
    pub async fn sign(&self, signer: &dyn Signer, options: &SignOptions) -> Result<SignOutcome> {
        let digest = self.resolve_digest().await?;
        self.sign_digest(&digest, signer, options).await
    }

    /// Signs `digest`, a manifest of this repository or layout that no tag
    /// need name yet: a push with `--sign` stores the image by digest, signs
    /// it here, and moves its tag only then.
    pub async fn sign_digest(
        &self,
        digest: &str,
        signer: &dyn Signer,
        options: &SignOptions,
    ) -> Result<SignOutcome> {
        media::check_digest(digest).map_err(Error::BadDigest)?;
        let digest = digest.to_string();
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
                let material = signer.sign(&payload).map_err(Error::Signer)?;
                image.append(SignatureLayer::new(payload, &material));
                let stored_at = self.store_signatures(&digest, &image).await?;
                Ok(SignOutcome {
                    digest,
                    stored_at,
                    signature_count: image.layers.len(),
                })
            }
            SignFormat::Bundle => {
                let Target::Registry { client, repo, .. } = self else {
                    return Err(Error::BundleNeedsRegistry);
                };
                let stored_at =
                    bundle::attach(client, repo, &digest, signer, &options.annotations).await?;
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
        let tag = signature_tag(&digest);
        for layer in &image.layers {
            let source = format!("{tag} layer {}", layer.digest);
            match layer.check(&digest, verifier, &options.annotations) {
                Ok((payload, signer)) => report.verified.push(Verified {
                    source,
                    payload,
                    signer,
                }),
                Err(reason) => report.rejected.push(Rejected { source, reason }),
            }
        }
        if let Target::Registry { client, repo, .. } = self {
            // A registry that cannot list referrers must not hide the
            // `.sig` signatures found above: record it and go on.
            match bundle::verify_referrers(client, repo, &digest, verifier, &options.annotations)
                .await
            {
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
                    reason: crate::diag::with_causes(&e),
                }),
            }
        }
        Ok(report)
    }
}
