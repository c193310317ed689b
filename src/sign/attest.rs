//! in-toto attestations of an image, made and checked as `cosign attest
//! --key` and `cosign verify-attestation --key` make and check them.
//!
//! An attestation is an in-toto statement (`_type`
//! `https://in-toto.io/Statement/v0.1`, as cosign writes it; one subject:
//! the repository and the image's sha256 digest; a `predicateType` and the
//! user's predicate) in a DSSE envelope signed over its pre-authentication
//! encoding. It is stored where cosign stores it:
//!
//! - legacy: a layer of the `sha256-H.att` image, media type
//!   `application/vnd.dsse.envelope.v1+json`, the layer being the envelope
//!   JSON, with the annotations `predicateType` and an empty
//!   `dev.cosignproject.cosign/signature` (the signature is inside);
//! - bundle (`--new-bundle-format`): a Sigstore bundle v0.3 holding the
//!   envelope, attached as an OCI 1.1 referrer whose manifest carries
//!   `dev.sigstore.bundle.predicateType`.

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::{json, Value};

use super::bundle::{self, pae, IN_TOTO_PAYLOAD_TYPE, IN_TOTO_STATEMENT_V1};
use super::error::{Error, Result};
use super::sigimage::{SignatureImage, SignatureLayer};
use super::target::{Rejected, SignFormat, Target, Verified};
use super::{Signer, Verifier, SIGNATURE_ANNOTATION};
use crate::oci::media::sha256_digest;

/// Media type of an attestation layer (a DSSE envelope).
pub const DSSE_MEDIA_TYPE: &str = "application/vnd.dsse.envelope.v1+json";
/// The statement `_type` cosign writes.
pub const IN_TOTO_STATEMENT_V01: &str = "https://in-toto.io/Statement/v0.1";
/// Layer annotation naming the predicate type of a legacy attestation.
pub const PREDICATE_TYPE_LAYER_ANNOTATION: &str = "predicateType";
/// cosign's `custom` predicate type.
pub const COSIGN_CUSTOM_PREDICATE: &str = "https://cosign.sigstore.dev/attestation/v1";

/// cosign's `--type` names and the predicate type URIs they stand for
/// (cosign `cmd/cosign/cli/options/predicate.go`).
pub const PREDICATE_TYPES: &[(&str, &str)] = &[
    ("custom", COSIGN_CUSTOM_PREDICATE),
    ("slsaprovenance", "https://slsa.dev/provenance/v0.2"),
    ("slsaprovenance02", "https://slsa.dev/provenance/v0.2"),
    ("slsaprovenance1", "https://slsa.dev/provenance/v1"),
    ("spdx", "https://spdx.dev/Document"),
    ("spdxjson", "https://spdx.dev/Document"),
    ("cyclonedx", "https://cyclonedx.org/bom"),
    ("link", "https://in-toto.io/Link/v1"),
    ("vuln", "https://cosign.sigstore.dev/attestation/vuln/v1"),
    ("openvex", "https://openvex.dev/ns"),
];

/// The attachment tag of attestations: `sha256:H` → `sha256-H.att`.
pub fn attestation_tag(digest: &str) -> String {
    format!("{}.att", digest.replace(':', "-"))
}

/// The predicate type URI of a `--type` value: one of [`PREDICATE_TYPES`]'
/// names, or a URI (scheme and something after it, as Go's
/// `url.ParseRequestURI` wants).
pub fn predicate_type_uri(kind: &str) -> Result<String> {
    if let Some((_, uri)) = PREDICATE_TYPES.iter().find(|(k, _)| *k == kind) {
        return Ok(uri.to_string());
    }
    let is_uri = kind.split_once(':').is_some_and(|(scheme, rest)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && !rest.is_empty()
            && !kind.contains(char::is_whitespace)
    }) || kind.starts_with('/');
    if is_uri {
        Ok(kind.to_string())
    } else {
        Err(Error::Attestation(format!(
            "invalid predicate type: {kind} (one of {}, or a URI)",
            PREDICATE_TYPES
                .iter()
                .map(|(k, _)| *k)
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }
}

/// The in-toto statement cosign's `attest` makes for `predicate` (the file's
/// bytes) of `kind` about `repo@digest`. `now` is the RFC 3339 time the
/// `custom` predicate records.
pub fn statement(
    kind: &str,
    predicate: &[u8],
    repo: &str,
    digest: &str,
    now: &str,
) -> Result<Vec<u8>> {
    let uri = predicate_type_uri(kind)?;
    let hex = digest
        .strip_prefix("sha256:")
        .ok_or_else(|| Error::BadDigest(format!("digest {digest} is not sha256")))?;
    let object = || -> Result<Value> {
        match serde_json::from_slice::<Value>(predicate) {
            Ok(v @ Value::Object(_)) => Ok(v),
            Ok(_) => Err(Error::Attestation(format!(
                "the {kind} predicate must be a JSON object"
            ))),
            Err(e) => Err(Error::Attestation(format!(
                "the {kind} predicate is not JSON: {e}"
            ))),
        }
    };
    let body = match kind {
        // cosign wraps the file, whatever it holds, as a string.
        "custom" => json!({
            "Data": String::from_utf8_lossy(predicate),
            "Timestamp": now,
        }),
        // A tag-value SPDX document stays text.
        "spdx" => Value::String(String::from_utf8_lossy(predicate).into_owned()),
        "slsaprovenance1" => {
            let mut v = object()?;
            // cosign renames the SLSA 1.0 field its Go type spells differently.
            if let Some(meta) = v
                .get_mut("runDetails")
                .and_then(|r| r.get_mut("metadata"))
                .and_then(Value::as_object_mut)
            {
                if let Some(id) = meta.remove("invocationID") {
                    meta.insert("invocationId".into(), id);
                }
            }
            v
        }
        _ => object()?,
    };
    // Field order as cosign writes it.
    #[derive(serde::Serialize)]
    struct Statement<'a> {
        #[serde(rename = "_type")]
        kind: &'a str,
        subject: Value,
        #[serde(rename = "predicateType")]
        predicate_type: &'a str,
        predicate: Value,
    }
    serde_json::to_vec(&Statement {
        kind: IN_TOTO_STATEMENT_V01,
        subject: json!([{"name": repo, "digest": {"sha256": hex}}]),
        predicate_type: &uri,
        predicate: body,
    })
    .map_err(|e| Error::Attestation(format!("encoding the statement: {e}")))
}

/// The DSSE envelope cosign stores: `payload` signed over its PAE.
pub fn envelope(payload: &[u8], signer: &dyn Signer) -> Result<Vec<u8>> {
    let material = signer
        .sign(&pae(IN_TOTO_PAYLOAD_TYPE, payload))
        .map_err(Error::Signer)?;
    #[derive(serde::Serialize)]
    struct Envelope<'a> {
        #[serde(rename = "payloadType")]
        payload_type: &'a str,
        payload: String,
        signatures: Value,
    }
    serde_json::to_vec(&Envelope {
        payload_type: IN_TOTO_PAYLOAD_TYPE,
        payload: BASE64.encode(payload),
        signatures: json!([{"keyid": "", "sig": BASE64.encode(&material.signature)}]),
    })
    .map_err(|e| Error::Attestation(format!("encoding the envelope: {e}")))
}

/// What to attest.
#[derive(Debug, Clone)]
pub struct AttestOptions {
    /// `--type`: a name of [`PREDICATE_TYPES`] or a URI.
    pub kind: String,
    /// The predicate file's bytes.
    pub predicate: Vec<u8>,
    /// Legacy (`sha256-H.att`) or bundle (referrer).
    pub format: SignFormat,
    /// The time a `custom` predicate records (RFC 3339).
    pub now: String,
}

/// What [`attest`] stored.
#[derive(Debug, Clone)]
pub struct AttestOutcome {
    /// The image digest attested.
    pub digest: String,
    /// The predicate type URI.
    pub predicate_type: String,
    /// Where the attestation was stored.
    pub stored_at: String,
}

/// Attests the image's current digest and stores the attestation beside
/// those already there.
pub async fn attest(
    target: &Target,
    signer: &dyn Signer,
    options: &AttestOptions,
) -> Result<AttestOutcome> {
    let predicate_type = predicate_type_uri(&options.kind)?;
    let digest = target.resolve_digest().await?;
    let payload = statement(
        &options.kind,
        &options.predicate,
        &target.repository_name(),
        &digest,
        &options.now,
    )?;
    let stored_at = match options.format {
        SignFormat::Legacy => {
            let envelope = envelope(&payload, signer)?;
            let tag = attestation_tag(&digest);
            let mut image = target.load_attached(&tag).await?;
            let annotations: BTreeMap<String, String> = [
                (SIGNATURE_ANNOTATION.to_string(), String::new()),
                (
                    PREDICATE_TYPE_LAYER_ANNOTATION.to_string(),
                    predicate_type.clone(),
                ),
            ]
            .into();
            image.append(SignatureLayer {
                media_type: DSSE_MEDIA_TYPE.to_string(),
                digest: sha256_digest(&envelope),
                payload: envelope,
                annotations,
            });
            target.store_attached(&tag, &image).await?
        }
        SignFormat::Bundle => {
            let Target::Registry { client, repo, .. } = target else {
                return Err(Error::BundleNeedsRegistry);
            };
            let bundle = bundle::build_dsse(&payload, signer)?;
            bundle::attach_bundle(client, repo, &digest, bundle, &predicate_type).await?
        }
    };
    Ok(AttestOutcome {
        digest,
        predicate_type,
        stored_at,
    })
}

/// One attestation that verified: its envelope and statement.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VerifiedAttestation {
    /// Where it was found.
    pub source: String,
    /// The DSSE envelope (what cosign prints).
    pub envelope: Value,
    /// The in-toto statement it signs.
    pub statement: Value,
}

/// The outcome of [`verify`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct AttestationReport {
    /// The image digest checked.
    pub digest: String,
    /// Attestations that verified (and have the predicate type asked for).
    pub verified: Vec<VerifiedAttestation>,
    /// Attestations that did not, and why.
    pub rejected: Vec<Rejected>,
    /// Attestations that verified but have another predicate type.
    pub other_types: Vec<String>,
}

/// Checks one DSSE envelope as an attestation of `digest`: payload type,
/// signature over the PAE (by `verifier`, given `context` annotations),
/// statement type and a subject with this digest. Returns the statement.
pub fn check_envelope(
    envelope: &Value,
    digest: &str,
    verifier: &dyn Verifier,
    context: &BTreeMap<String, String>,
) -> std::result::Result<Value, String> {
    let payload_type = envelope["payloadType"].as_str().unwrap_or_default();
    if payload_type != IN_TOTO_PAYLOAD_TYPE {
        return Err(format!(
            "DSSE payloadType is {payload_type:?}, not {IN_TOTO_PAYLOAD_TYPE}"
        ));
    }
    let payload = BASE64
        .decode(envelope["payload"].as_str().unwrap_or_default())
        .map_err(|e| format!("DSSE payload is not base64: {e}"))?;
    let signatures = envelope["signatures"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if signatures.is_empty() {
        return Err("DSSE envelope has no signature".into());
    }
    // cosign accepts an envelope one of whose signatures verifies.
    let signed = &pae(payload_type, &payload);
    let mut why = String::new();
    let ok =
        signatures.iter().any(
            |s| match BASE64.decode(s["sig"].as_str().unwrap_or_default()) {
                Ok(sig) => match verifier.verify(signed, &sig, context) {
                    Ok(_) => true,
                    Err(e) => {
                        why = e;
                        false
                    }
                },
                Err(e) => {
                    why = format!("DSSE signature is not base64: {e}");
                    false
                }
            },
        );
    if !ok {
        return Err(why);
    }
    let st: Value =
        serde_json::from_slice(&payload).map_err(|e| format!("statement is not JSON: {e}"))?;
    let kind = st["_type"].as_str().unwrap_or_default();
    if kind != IN_TOTO_STATEMENT_V01 && kind != IN_TOTO_STATEMENT_V1 {
        return Err(format!(
            "statement _type is {kind:?}, not an in-toto statement"
        ));
    }
    let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
    let subjects = st["subject"].as_array().cloned().unwrap_or_default();
    if !subjects.iter().any(|s| s["digest"]["sha256"] == hex) {
        return Err(format!(
            "no subject of the statement is this image ({digest})"
        ));
    }
    if st["predicateType"].as_str().is_none() {
        return Err("statement has no predicateType".into());
    }
    Ok(st)
}

/// Checks every attestation of the image's current digest (the
/// `sha256-H.att` layers and, in a registry, bundles attached as referrers
/// that are not image signatures). With `kind`, only statements of that
/// predicate type count as verified.
pub async fn verify(
    target: &Target,
    verifier: &dyn Verifier,
    kind: Option<&str>,
) -> Result<AttestationReport> {
    let wanted = kind.map(predicate_type_uri).transpose()?;
    let digest = target.resolve_digest().await?;
    let tag = attestation_tag(&digest);
    let image: SignatureImage = target.load_attached(&tag).await?;
    let mut report = AttestationReport {
        digest: digest.clone(),
        verified: Vec::new(),
        rejected: Vec::new(),
        other_types: Vec::new(),
    };
    let mut found =
        |source: String, outcome: std::result::Result<(Value, Value), String>| match outcome {
            Ok((envelope, statement)) => {
                let got = statement["predicateType"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                if wanted.as_ref().is_some_and(|w| *w != got) {
                    report.other_types.push(got);
                } else {
                    report.verified.push(VerifiedAttestation {
                        source,
                        envelope,
                        statement,
                    });
                }
            }
            Err(reason) => report.rejected.push(Rejected { source, reason }),
        };
    for layer in &image.layers {
        let source = format!("{tag} layer {}", layer.digest);
        found(source, check_layer(layer, &digest, verifier));
    }
    if let Target::Registry { client, repo, .. } = target {
        match bundle::referrer_bundles(client, repo, &digest).await {
            Ok(bundles) => {
                for b in bundles {
                    if b.predicate_type.as_deref() == Some(bundle::COSIGN_SIGN_PREDICATE) {
                        continue;
                    }
                    let outcome = b
                        .bundle
                        .and_then(|data| check_bundle(&data, &digest, verifier));
                    found(b.source, outcome);
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

fn check_layer(
    layer: &SignatureLayer,
    digest: &str,
    verifier: &dyn Verifier,
) -> std::result::Result<(Value, Value), String> {
    if layer.media_type != DSSE_MEDIA_TYPE {
        return Err(format!(
            "layer media type is {:?}, not {DSSE_MEDIA_TYPE}",
            layer.media_type
        ));
    }
    let actual = sha256_digest(&layer.payload);
    if actual != layer.digest {
        return Err(format!(
            "envelope digest is {actual}, but the manifest says {}",
            layer.digest
        ));
    }
    let envelope: Value = serde_json::from_slice(&layer.payload)
        .map_err(|e| format!("layer is not a DSSE envelope: {e}"))?;
    let statement = check_envelope(&envelope, digest, verifier, &layer.annotations)?;
    Ok((envelope, statement))
}

fn check_bundle(
    data: &[u8],
    digest: &str,
    verifier: &dyn Verifier,
) -> std::result::Result<(Value, Value), String> {
    let b: Value = serde_json::from_slice(data).map_err(|e| format!("bundle is not JSON: {e}"))?;
    let media_type = b["mediaType"].as_str().unwrap_or_default();
    if !media_type.starts_with("application/vnd.dev.sigstore.bundle") {
        return Err(format!("not a Sigstore bundle (mediaType {media_type:?})"));
    }
    let envelope = b
        .get("dsseEnvelope")
        .cloned()
        .ok_or("bundle has no dsseEnvelope (an attestation is a DSSE envelope)")?;
    let context: BTreeMap<String, String> = [(
        bundle::VERIFICATION_MATERIAL_ANNOTATION.to_string(),
        b["verificationMaterial"].to_string(),
    )]
    .into();
    let statement = check_envelope(&envelope, digest, verifier, &context)?;
    Ok((envelope, statement))
}

/// [`Verified`] of an attestation, for callers that list signatures.
impl From<&VerifiedAttestation> for Verified {
    fn from(v: &VerifiedAttestation) -> Self {
        Verified {
            source: v.source.clone(),
            payload: v.statement.clone(),
            signer: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::{KeySigner, KeyVerifier, PrivateKey};

    const DIGEST: &str = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    #[test]
    fn predicate_types_are_cosigns() {
        assert_eq!(
            predicate_type_uri("slsaprovenance").expect("slsa"),
            "https://slsa.dev/provenance/v0.2"
        );
        assert_eq!(
            predicate_type_uri("spdxjson").expect("spdx"),
            "https://spdx.dev/Document"
        );
        assert_eq!(
            predicate_type_uri("https://example.com/p/v1").expect("uri"),
            "https://example.com/p/v1"
        );
        assert!(predicate_type_uri("sbom").is_err());
        assert!(predicate_type_uri("not a uri").is_err());
    }

    #[test]
    fn statements_follow_cosigns_shapes() {
        let st =
            statement("custom", b"hello", "r/x", DIGEST, "2026-01-01T00:00:00Z").expect("custom");
        let v: Value = serde_json::from_slice(&st).expect("json");
        assert_eq!(v["_type"], IN_TOTO_STATEMENT_V01);
        assert_eq!(v["predicate"]["Data"], "hello");
        assert_eq!(v["subject"][0]["name"], "r/x");
        assert_eq!(v["subject"][0]["digest"]["sha256"], &DIGEST[7..]);
        assert!(String::from_utf8_lossy(&st).starts_with("{\"_type\""));

        let st = statement(
            "slsaprovenance1",
            br#"{"runDetails":{"metadata":{"invocationID":"42"}}}"#,
            "r/x",
            DIGEST,
            "",
        )
        .expect("slsa1");
        let v: Value = serde_json::from_slice(&st).expect("json");
        assert_eq!(
            v["predicate"]["runDetails"]["metadata"]["invocationId"],
            "42"
        );
        assert!(statement("cyclonedx", b"not json", "r/x", DIGEST, "").is_err());
        assert!(statement("openvex", b"[1]", "r/x", DIGEST, "").is_err());
        let st = statement("spdx", b"SPDXVersion: SPDX-2.3", "r/x", DIGEST, "").expect("spdx");
        let v: Value = serde_json::from_slice(&st).expect("json");
        assert_eq!(v["predicate"], "SPDXVersion: SPDX-2.3");
    }

    #[test]
    fn envelopes_verify_and_forgeries_do_not() {
        let key = PrivateKey::generate().expect("key");
        let verifier = KeyVerifier::new(key.public_key());
        let st = statement("vuln", br#"{"scanner":{}}"#, "r/x", DIGEST, "").expect("st");
        let env: Value = serde_json::from_slice(&envelope(&st, &KeySigner::new(key)).expect("env"))
            .expect("json");
        let none = BTreeMap::new();
        let got = check_envelope(&env, DIGEST, &verifier, &none).expect("verifies");
        assert_eq!(
            got["predicateType"],
            "https://cosign.sigstore.dev/attestation/vuln/v1"
        );

        let other = format!("sha256:{}", "b".repeat(64));
        let err = check_envelope(&env, &other, &verifier, &none).expect_err("digest");
        assert!(err.contains("no subject"), "{err}");

        let mut forged = env.clone();
        let st2 = statement("vuln", br#"{"scanner":{"x":1}}"#, "r/x", DIGEST, "").expect("st");
        forged["payload"] = Value::String(BASE64.encode(st2));
        let err = check_envelope(&forged, DIGEST, &verifier, &none).expect_err("forged");
        assert!(err.contains("does not match"), "{err}");

        let mut bad = env.clone();
        bad["payloadType"] = Value::String("text/plain".into());
        assert!(check_envelope(&bad, DIGEST, &verifier, &none).is_err());
        let mut bad = env;
        bad["signatures"] = json!([{"sig": "!!"}]);
        let err = check_envelope(&bad, DIGEST, &verifier, &none).expect_err("b64");
        assert!(err.contains("base64"), "{err}");
    }
}
