//! cosign v3's signature format: a Sigstore bundle (v0.3) attached to the
//! image as an OCI 1.1 referrer.
//!
//! The bundle holds a DSSE envelope whose payload is an in-toto Statement v1
//! (`predicateType` `https://sigstore.dev/cosign/sign/v1`, one subject with
//! the image's sha256 digest and the `-a` annotations); the signature is over
//! the DSSE pre-authentication encoding (PAE) of that payload. Key-pair
//! bundles carry only a public-key hint as verification material and no
//! transparency-log entry (cosign's `--tlog-upload=false`): Rekor is not
//! reachable here, so none is written, and tlog entries in bundles read are
//! not checked (as with cosign's `--insecure-ignore-tlog`).
//!
//! The referrer is an image manifest (artifactType = the bundle media type,
//! empty config, one bundle layer, `subject` = the signed image). Registries
//! without the referrers API get the OCI 1.1 fallback as well: the referrer
//! is added to the image index tagged `sha256-H`.

use std::collections::BTreeMap;

use super::error::{Error, Result};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::{json, Value};

use super::{Rejected, Signer, SignerIdentity, Verified, Verifier};
use crate::oci::media::{self, Descriptor, ImageManifest};
use crate::oci::registry::{BlobBody, RegistryClient};
use crate::oci::Repo;

/// Media type of a Sigstore bundle v0.3 (layer and artifactType).
pub const BUNDLE_V03_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// DSSE payload type of an in-toto statement.
pub const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// in-toto Statement v1 `_type`.
pub const IN_TOTO_STATEMENT_V1: &str = "https://in-toto.io/Statement/v1";
/// The predicate type cosign v3 uses for an image signature.
pub const COSIGN_SIGN_PREDICATE: &str = "https://sigstore.dev/cosign/sign/v1";
/// Referrer manifest annotation naming the statement's predicate type.
pub const PREDICATE_TYPE_ANNOTATION: &str = "dev.sigstore.bundle.predicateType";
/// Layer annotation passed to a [`Verifier`] with the bundle's
/// `verificationMaterial` as JSON.
pub const VERIFICATION_MATERIAL_ANNOTATION: &str = "dev.sigstore.bundle/verificationMaterial";

/// The DSSE pre-authentication encoding: what a DSSE signature signs.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {} {} ",
        payload_type.len(),
        payload_type,
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

/// The in-toto statement cosign v3 signs for `digest` (`sha256:H`).
pub fn statement(digest: &str, annotations: &BTreeMap<String, String>) -> Result<Vec<u8>> {
    let hex = digest
        .strip_prefix("sha256:")
        .ok_or_else(|| Error::BadDigest(format!("digest {digest} is not sha256")))?;
    Ok(json!({
        "_type": IN_TOTO_STATEMENT_V1,
        "subject": [{"digest": {"sha256": hex}, "annotations": annotations}],
        "predicateType": COSIGN_SIGN_PREDICATE,
    })
    .to_string()
    .into_bytes())
}

/// Builds the bundle JSON for `digest`, signed by `signer`.
pub fn build(
    digest: &str,
    signer: &dyn Signer,
    annotations: &BTreeMap<String, String>,
) -> Result<Vec<u8>> {
    build_dsse(&statement(digest, annotations)?, signer)
}

/// A bundle v0.3 whose DSSE envelope holds `payload` (an in-toto
/// statement) signed by `signer`: image signatures and attestations alike.
pub fn build_dsse(payload: &[u8], signer: &dyn Signer) -> Result<Vec<u8>> {
    let material = signer
        .sign(&pae(IN_TOTO_PAYLOAD_TYPE, payload))
        .map_err(Error::Signer)?;
    let public = signer.public_key().ok_or(Error::NeedsKeyPair)?;
    // The hint identifies the key without carrying it: the verifier must
    // already have the public key (as `cosign verify --key` does).
    let hint = BASE64.encode(sha2_digest(&public.to_spki_der()?));
    Ok(json!({
        "mediaType": BUNDLE_V03_MEDIA_TYPE,
        "verificationMaterial": {"publicKey": {"hint": hint}},
        "dsseEnvelope": {
            "payload": BASE64.encode(payload),
            "payloadType": IN_TOTO_PAYLOAD_TYPE,
            "signatures": [{"sig": BASE64.encode(&material.signature)}],
        },
    })
    .to_string()
    .into_bytes())
}

fn sha2_digest(data: &[u8]) -> Vec<u8> {
    use sha2::Digest as _;
    sha2::Sha256::digest(data).to_vec()
}

/// Checks one bundle as a signature of `digest`; returns the statement and
/// who signed it (for keyless signatures).
pub fn check(
    bundle: &[u8],
    digest: &str,
    verifier: &dyn Verifier,
    required: &BTreeMap<String, String>,
) -> Result<(Value, Option<SignerIdentity>), String> {
    let b: Value =
        serde_json::from_slice(bundle).map_err(|e| format!("bundle is not JSON: {e}"))?;
    let media_type = b["mediaType"].as_str().unwrap_or_default();
    if !media_type.starts_with("application/vnd.dev.sigstore.bundle") {
        return Err(format!("not a Sigstore bundle (mediaType {media_type:?})"));
    }
    let env = b
        .get("dsseEnvelope")
        .ok_or("bundle has no dsseEnvelope (message-signature bundles are not image signatures)")?;
    let payload_type = env["payloadType"].as_str().unwrap_or_default();
    if payload_type != IN_TOTO_PAYLOAD_TYPE {
        return Err(format!(
            "DSSE payloadType is {payload_type:?}, not {IN_TOTO_PAYLOAD_TYPE}"
        ));
    }
    let payload = BASE64
        .decode(env["payload"].as_str().unwrap_or_default())
        .map_err(|e| format!("DSSE payload is not base64: {e}"))?;
    let sigs = env["signatures"].as_array().cloned().unwrap_or_default();
    if sigs.len() != 1 {
        return Err(format!(
            "DSSE envelope has {} signatures, expected 1",
            sigs.len()
        ));
    }
    let sig = BASE64
        .decode(sigs[0]["sig"].as_str().unwrap_or_default())
        .map_err(|e| format!("DSSE signature is not base64: {e}"))?;
    let mut context = BTreeMap::new();
    context.insert(
        VERIFICATION_MATERIAL_ANNOTATION.to_string(),
        b["verificationMaterial"].to_string(),
    );
    let signer =
        verifier.verify_bundle(bundle, digest, &pae(payload_type, &payload), &sig, &context)?;
    let st: Value =
        serde_json::from_slice(&payload).map_err(|e| format!("statement is not JSON: {e}"))?;
    if st["_type"] != IN_TOTO_STATEMENT_V1 {
        return Err(format!(
            "statement _type is {}, not {IN_TOTO_STATEMENT_V1}",
            st["_type"]
        ));
    }
    if st["predicateType"] != COSIGN_SIGN_PREDICATE {
        return Err(format!(
            "statement predicateType is {}, not {COSIGN_SIGN_PREDICATE}",
            st["predicateType"]
        ));
    }
    let subject = &st["subject"][0];
    let signed = subject["digest"]["sha256"].as_str().unwrap_or_default();
    if format!("sha256:{signed}") != digest {
        return Err(format!(
            "statement signs sha256:{signed}, not this image ({digest})"
        ));
    }
    let unmet: Vec<String> = required
        .iter()
        .filter(|(k, v)| subject["annotations"][k.as_str()].as_str() != Some(v.as_str()))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if !unmet.is_empty() {
        return Err(format!(
            "required annotations not in statement: {}",
            unmet.join(", ")
        ));
    }
    Ok((st, signer))
}

/// Signs `digest` in bundle format and attaches it as a referrer in `repo`;
/// returns the referrer's reference.
pub async fn attach(
    client: &RegistryClient,
    repo: &Repo,
    digest: &str,
    signer: &dyn Signer,
    annotations: &BTreeMap<String, String>,
) -> Result<String> {
    let bundle = build(digest, signer, annotations)?;
    attach_bundle(client, repo, digest, bundle, COSIGN_SIGN_PREDICATE).await
}

/// Attaches `bundle` (whose statement has `predicate_type`) to `digest` as a
/// referrer in `repo`, as cosign v3 attaches signatures and attestations;
/// returns the referrer's reference.
pub async fn attach_bundle(
    client: &RegistryClient,
    repo: &Repo,
    digest: &str,
    bundle: Vec<u8>,
    predicate_type: &str,
) -> Result<String> {
    let (subject_bytes, subject_type, _) =
        client
            .find_manifest(repo, digest)
            .await?
            .ok_or_else(|| Error::SubjectMissing {
                image: format!("{repo}@{digest}"),
            })?;

    let empty = b"{}";
    let config = Descriptor::of(media::OCI_EMPTY, empty);
    let layer = Descriptor::of(BUNDLE_V03_MEDIA_TYPE, &bundle);
    for (desc, data) in [(&config, empty.to_vec()), (&layer, bundle)] {
        client
            .push_blob(repo, desc, &BlobBody::from(data), None)
            .await?;
    }
    let manifest_annotations: BTreeMap<String, String> = [
        (
            "dev.sigstore.bundle.content".to_string(),
            "dsse-envelope".to_string(),
        ),
        (
            PREDICATE_TYPE_ANNOTATION.to_string(),
            predicate_type.to_string(),
        ),
    ]
    .into();
    let manifest = ImageManifest {
        schema_version: 2,
        media_type: Some(media::OCI_MANIFEST.to_string()),
        artifact_type: Some(BUNDLE_V03_MEDIA_TYPE.to_string()),
        config,
        layers: vec![layer],
        subject: Some(Descriptor::of(&subject_type, &subject_bytes)),
        annotations: Some(manifest_annotations.clone()),
    };
    let bytes = media::to_json_bytes(&manifest);
    let manifest_digest = media::sha256_digest(&bytes);
    client
        .put_manifest(repo, &manifest_digest, media::OCI_MANIFEST, &bytes)
        .await?;
    update_fallback_index(
        client,
        repo,
        digest,
        &manifest_digest,
        bytes.len(),
        &manifest_annotations,
    )
    .await?;
    Ok(format!("{repo}@{manifest_digest}"))
}

/// Adds the referrer to the `sha256-H` index (OCI 1.1 referrers tag schema).
/// Registries with the referrers API list it from the `subject` alone; this
/// is what the others need, and harmless for the rest.
async fn update_fallback_index(
    client: &RegistryClient,
    repo: &Repo,
    subject: &str,
    manifest_digest: &str,
    size: usize,
    annotations: &BTreeMap<String, String>,
) -> Result<()> {
    let tag = subject.replace(':', "-");
    let mut index = match client.find_manifest(repo, &tag).await? {
        Some((bytes, _, _)) => {
            serde_json::from_slice::<Value>(&bytes).map_err(|e| Error::ReferrersIndex {
                location: format!("{repo}:{tag}"),
                reason: format!("is not JSON: {e}"),
            })?
        }
        None => json!({"schemaVersion": 2, "mediaType": media::OCI_INDEX, "manifests": []}),
    };
    let entry = json!({
        "mediaType": media::OCI_MANIFEST,
        "digest": manifest_digest,
        "size": size,
        "artifactType": BUNDLE_V03_MEDIA_TYPE,
        "annotations": annotations,
    });
    let list = index["manifests"]
        .as_array_mut()
        .ok_or_else(|| Error::ReferrersIndex {
            location: format!("{repo}:{tag}"),
            reason: "has no manifests array".to_string(),
        })?;
    if !list.iter().any(|m| m["digest"] == manifest_digest) {
        list.push(entry);
    }
    client
        .put_manifest(repo, &tag, media::OCI_INDEX, index.to_string().as_bytes())
        .await?;
    Ok(())
}

/// Checks every Sigstore bundle attached to `digest` as a referrer that is
/// an image signature (attestations, of other predicate types, are left to
/// `verify-attestation`).
pub async fn verify_referrers(
    client: &RegistryClient,
    repo: &Repo,
    digest: &str,
    verifier: &dyn Verifier,
    required: &BTreeMap<String, String>,
) -> Result<Vec<std::result::Result<Verified, Rejected>>> {
    let mut out = Vec::new();
    for found in referrer_bundles(client, repo, digest).await? {
        if found
            .predicate_type
            .as_deref()
            .is_some_and(|t| t != COSIGN_SIGN_PREDICATE)
        {
            continue;
        }
        let result = found
            .bundle
            .and_then(|data| check(&data, digest, verifier, required));
        out.push(match result {
            Ok((payload, signer)) => Ok(Verified {
                source: found.source,
                payload,
                signer,
            }),
            Err(reason) => Err(Rejected {
                source: found.source,
                reason,
            }),
        });
    }
    Ok(out)
}

/// One Sigstore bundle found among an image's referrers.
pub struct ReferrerBundle {
    /// `referrer DIGEST bundle DIGEST`.
    pub source: String,
    /// The referrer's `dev.sigstore.bundle.predicateType` annotation.
    pub predicate_type: Option<String>,
    /// The bundle bytes, or why they could not be read.
    pub bundle: std::result::Result<Vec<u8>, String>,
}

/// Every Sigstore bundle attached to `digest` as a referrer (the referrers
/// API, else the `sha256-H` fallback index).
pub async fn referrer_bundles(
    client: &RegistryClient,
    repo: &Repo,
    digest: &str,
) -> Result<Vec<ReferrerBundle>> {
    let index = client.referrers(repo, digest).await?;
    let mut out = Vec::new();
    for entry in index["manifests"].as_array().cloned().unwrap_or_default() {
        let Some(mdigest) = entry["digest"].as_str() else {
            continue;
        };
        let source = format!("referrer {mdigest}");
        let listed_type = entry["annotations"][PREDICATE_TYPE_ANNOTATION]
            .as_str()
            .map(str::to_string);
        let Some((bytes, _, _)) = client.find_manifest(repo, mdigest).await? else {
            out.push(ReferrerBundle {
                source,
                predicate_type: listed_type,
                bundle: Err("referrer manifest listed but missing".into()),
            });
            continue;
        };
        let manifest = match ImageManifest::parse(&bytes, mdigest) {
            Ok(m) => m,
            Err(e) => {
                out.push(ReferrerBundle {
                    source,
                    predicate_type: listed_type,
                    bundle: Err(e.to_string()),
                });
                continue;
            }
        };
        let predicate_type = manifest
            .annotations
            .as_ref()
            .and_then(|a| a.get(PREDICATE_TYPE_ANNOTATION).cloned())
            .or(listed_type);
        for layer in manifest.layers.iter().filter(|l| {
            l.media_type
                .starts_with("application/vnd.dev.sigstore.bundle")
        }) {
            out.push(ReferrerBundle {
                source: format!("{source} bundle {}", layer.digest),
                predicate_type: predicate_type.clone(),
                bundle: client
                    .get_blob(repo, layer, MAX_BUNDLE, None)
                    .await
                    .map_err(|e| e.to_string()),
            });
        }
    }
    Ok(out)
}

/// Largest bundle read (they are a few KiB).
const MAX_BUNDLE: u64 = 16 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::{KeySigner, KeyVerifier, PrivateKey};

    #[test]
    fn pae_matches_the_dsse_spec_example() {
        // From the DSSE protocol document.
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world".to_vec()
        );
    }

    #[test]
    fn bundle_round_trips_and_refuses_tampering() {
        let key = PrivateKey::generate().expect("key");
        let v = KeyVerifier::new(key.public_key());
        let a: BTreeMap<String, String> = [("team".to_string(), "olm".to_string())].into();
        let digest = format!("sha256:{}", "ab".repeat(32));
        let b = build(&digest, &KeySigner::new(key), &a).expect("build");
        let (st, _) = check(&b, &digest, &v, &a).expect("verifies");
        assert_eq!(st["predicateType"], COSIGN_SIGN_PREDICATE);
        let other = format!("sha256:{}", "cd".repeat(32));
        assert!(check(&b, &other, &v, &a)
            .expect_err("digest")
            .contains("not this image"));
        let mut doc: Value = serde_json::from_slice(&b).expect("json");
        let forged = statement(&other, &a).expect("statement");
        doc["dsseEnvelope"]["payload"] = Value::String(BASE64.encode(forged));
        let forged = serde_json::to_vec(&doc).expect("json");
        assert!(check(&forged, &other, &v, &a).is_err());
    }
}
