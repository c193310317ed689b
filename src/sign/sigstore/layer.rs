//! A keyless cosign signature stored the legacy way, as a layer of the
//! `sha256-H.sig` image (cosign's SIGNATURE_SPEC.md): the signature over the
//! simple-signing payload in `dev.cosignproject.cosign/signature`, the Fulcio
//! leaf in `dev.sigstore.cosign/certificate` (PEM), its chain in
//! `dev.sigstore.cosign/chain`, the Rekor entry with its signed entry
//! timestamp in `dev.sigstore.cosign/bundle` and, optionally, an RFC 3161
//! timestamp in `dev.sigstore.cosign/rfc3161timestamp`.
//!
//! That is the material of a bundle v0.1 (a message signature, a certificate,
//! a log entry with an inclusion promise and no proof), so the layer is
//! turned into a [`SigstoreBundle`] and judged by [`super::verify_bundle`]
//! over the payload bytes: one verifier for both places cosign puts
//! signatures.
//!
//! The chain annotation is not used: which CAs are trusted is the trusted
//! root's business (cosign, given a trusted root, does the same), and the
//! chain cosign stores ends in the root, which a bundle may not carry.

use base64::Engine as _;
use serde::Deserialize;

use super::bundle::{protojson_bytes, BundleVersion, Content, SigningMaterial, TlogEntry};
use super::crypto::pem_blocks;
use super::x509::Certificate;
use super::{SigstoreBundle, VerifyError};

/// The `dev.sigstore.cosign/bundle` annotation (cosign's `bundle.RekorBundle`).
#[derive(Deserialize)]
struct RekorBundle {
    #[serde(rename = "SignedEntryTimestamp")]
    signed_entry_timestamp: String,
    #[serde(rename = "Payload")]
    payload: RekorPayload,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RekorPayload {
    /// Base64 of the canonicalized entry body.
    body: String,
    integrated_time: i64,
    log_index: i64,
    /// Hex of the log's ID.
    #[serde(rename = "logID")]
    log_id: String,
}

/// The `dev.sigstore.cosign/rfc3161timestamp` annotation.
#[derive(Deserialize)]
struct Rfc3161Annotation {
    #[serde(rename = "SignedRFC3161Timestamp")]
    signed_rfc3161_timestamp: String,
}

/// The keyless material of one `.sig` layer, as its annotations hold it.
#[derive(Clone, Copy, Debug, Default)]
pub struct CosignLayer<'a> {
    /// The raw signature (decoded from `dev.cosignproject.cosign/signature`).
    pub signature: &'a [u8],
    /// `dev.sigstore.cosign/certificate`: the PEM leaf.
    pub certificate: Option<&'a str>,
    /// `dev.sigstore.cosign/bundle`: the Rekor bundle JSON.
    pub rekor_bundle: Option<&'a str>,
    /// `dev.sigstore.cosign/rfc3161timestamp`: JSON holding a timestamp.
    pub rfc3161_timestamp: Option<&'a str>,
}

fn malformed(reason: impl Into<String>) -> VerifyError {
    VerifyError::Malformed(reason.into())
}

impl SigstoreBundle {
    /// The bundle a keyless `.sig` layer amounts to: a v0.1 message
    /// signature with the layer's certificate, Rekor entry and timestamp.
    /// A layer without a certificate is refused here (it is a keyed
    /// signature: verify it with the key).
    pub fn from_cosign_layer(layer: &CosignLayer<'_>) -> Result<SigstoreBundle, VerifyError> {
        let pem = layer.certificate.ok_or_else(|| {
            VerifyError::Rejected(
                "the signature has no certificate (dev.sigstore.cosign/certificate): it is not keyless"
                    .into(),
            )
        })?;
        let der = pem_blocks(pem, "CERTIFICATE")
            .into_iter()
            .next()
            .ok_or_else(|| malformed("dev.sigstore.cosign/certificate is not a PEM certificate"))?;
        let leaf = Certificate::from_der(&der).map_err(malformed)?;
        let mut tlog_entries = Vec::new();
        if let Some(text) = layer.rekor_bundle {
            tlog_entries.push(rekor_entry(text)?);
        }
        let mut timestamps = Vec::new();
        if let Some(text) = layer.rfc3161_timestamp {
            let t: Rfc3161Annotation = serde_json::from_str(text).map_err(|e| {
                malformed(format!(
                    "dev.sigstore.cosign/rfc3161timestamp is not JSON: {e}"
                ))
            })?;
            timestamps.push(
                protojson_bytes(&t.signed_rfc3161_timestamp)
                    .ok_or_else(|| malformed("the RFC 3161 timestamp is not valid base64"))?,
            );
        }
        Ok(SigstoreBundle {
            media_type: "dev.sigstore.cosign/bundle (cosign .sig layer)".to_string(),
            version: BundleVersion::V01,
            material: SigningMaterial::Certificate {
                leaf: Box::new(leaf),
                chain: Vec::new(),
            },
            tlog_entries,
            timestamps,
            content: Content::Message {
                digest: None,
                signature: layer.signature.to_vec(),
            },
        })
    }
}

/// The log entry a cosign Rekor bundle annotation describes.
fn rekor_entry(text: &str) -> Result<TlogEntry, VerifyError> {
    let b: RekorBundle = serde_json::from_str(text).map_err(|e| {
        malformed(format!(
            "dev.sigstore.cosign/bundle is not a Rekor bundle: {e}"
        ))
    })?;
    let p = b.payload;
    if p.log_index < 0 {
        return Err(malformed(format!(
            "log entry index is negative ({})",
            p.log_index
        )));
    }
    if p.integrated_time < 0 {
        return Err(malformed("integrated time is negative"));
    }
    let body = protojson_bytes(&p.body)
        .ok_or_else(|| malformed("the Rekor entry body is not valid base64"))?;
    let log_id =
        hex::decode(&p.log_id).map_err(|_| malformed("the Rekor bundle's logID is not hex"))?;
    let set = base64::engine::general_purpose::STANDARD
        .decode(b.signed_entry_timestamp.trim())
        .map_err(|_| malformed("the signed entry timestamp is not valid base64"))?;
    // The kind and version are the body's own (the bundle annotation does
    // not repeat them); the body check compares them with what is signed.
    let parsed: serde_json::Value =
        serde_json::from_slice(&body).map_err(|_| malformed("the Rekor entry body is not JSON"))?;
    let field = |k: &str| parsed[k].as_str().unwrap_or_default().to_string();
    Ok(TlogEntry {
        log_index: p.log_index,
        log_id,
        kind: field("kind"),
        version: field("apiVersion"),
        integrated_time: p.integrated_time,
        signed_entry_timestamp: Some(set),
        inclusion_proof: None,
        canonicalized_body: body,
    })
}
