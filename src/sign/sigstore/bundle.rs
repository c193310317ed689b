//! Sigstore bundles (`*.sigstore.json`): versions 0.1, 0.2 and 0.3, parsed
//! into what verification needs. Parsing checks shape only (media type,
//! base64, required fields, non-negative integers); whether anything is
//! trusted is [`super::verify_bundle`]'s business.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde::{Deserialize, Deserializer};

use super::x509::Certificate;
use super::VerifyError;

/// A bundle's format version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BundleVersion {
    /// `application/vnd.dev.sigstore.bundle+json;version=0.1`
    V01,
    /// `...;version=0.2`
    V02,
    /// `...;version=0.3` or `application/vnd.dev.sigstore.bundle.v0.3+json`
    V03,
}

/// What the signer's key is given as.
#[derive(Clone, Debug)]
pub enum SigningMaterial {
    /// A certificate (v0.3's `certificate`, or the first of a v0.1/v0.2
    /// `x509CertificateChain`), and the rest of the chain the bundle carried.
    Certificate {
        leaf: Box<Certificate>,
        chain: Vec<Certificate>,
    },
    /// A public key known to the verifier, named by a hint.
    PublicKey { hint: String },
}

/// A Merkle inclusion proof and the checkpoint it leads to.
#[derive(Clone, Debug)]
pub struct InclusionProof {
    pub log_index: i64,
    pub root_hash: Vec<u8>,
    pub tree_size: i64,
    pub hashes: Vec<Vec<u8>>,
    pub checkpoint: String,
}

/// One transparency log entry.
#[derive(Clone, Debug)]
pub struct TlogEntry {
    pub log_index: i64,
    pub log_id: Vec<u8>,
    pub kind: String,
    pub version: String,
    /// 0 when absent (Rekor v2 entries have no integrated time).
    pub integrated_time: i64,
    pub signed_entry_timestamp: Option<Vec<u8>>,
    pub inclusion_proof: Option<InclusionProof>,
    pub canonicalized_body: Vec<u8>,
}

/// What was signed.
#[derive(Clone, Debug)]
pub enum Content {
    /// A signature over the artifact itself.
    Message {
        /// The digest hint (`algorithm`, bytes), if present.
        digest: Option<(String, Vec<u8>)>,
        signature: Vec<u8>,
    },
    /// A DSSE envelope (an in-toto statement naming the artifact).
    Dsse {
        payload_type: String,
        payload: Vec<u8>,
        signatures: Vec<Vec<u8>>,
    },
}

/// A parsed Sigstore bundle.
#[derive(Clone, Debug)]
pub struct SigstoreBundle {
    /// The media type, as written.
    pub media_type: String,
    /// The version it names.
    pub version: BundleVersion,
    /// The signer's certificate or key hint.
    pub material: SigningMaterial,
    /// Transparency log entries.
    pub tlog_entries: Vec<TlogEntry>,
    /// RFC 3161 timestamp tokens (DER).
    pub timestamps: Vec<Vec<u8>>,
    /// What was signed, and the signature.
    pub content: Content,
}

/// A protobuf-JSON int64: a string or a number.
fn int64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Int {
        S(String),
        N(i64),
    }
    match Option::<Int>::deserialize(d)? {
        None => Ok(None),
        Some(Int::N(n)) => Ok(Some(n)),
        Some(Int::S(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("{s:?} is not an integer"))),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBundle {
    media_type: String,
    verification_material: RawMaterial,
    message_signature: Option<RawMessageSignature>,
    dsse_envelope: Option<RawEnvelope>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMaterial {
    x509_certificate_chain: Option<RawChain>,
    certificate: Option<RawBytes>,
    public_key: Option<RawHint>,
    #[serde(default)]
    tlog_entries: Vec<RawEntry>,
    timestamp_verification_data: Option<RawTsData>,
}

#[derive(Deserialize)]
struct RawChain {
    #[serde(default)]
    certificates: Vec<RawBytes>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBytes {
    raw_bytes: String,
}

#[derive(Deserialize)]
struct RawHint {
    #[serde(default)]
    hint: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawTsData {
    #[serde(default)]
    rfc3161_timestamps: Vec<RawTimestamp>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawTimestamp {
    signed_timestamp: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEntry {
    #[serde(deserialize_with = "int64", default)]
    log_index: Option<i64>,
    log_id: RawLogId,
    kind_version: RawKindVersion,
    #[serde(deserialize_with = "int64", default)]
    integrated_time: Option<i64>,
    inclusion_promise: Option<RawPromise>,
    inclusion_proof: Option<RawProof>,
    canonicalized_body: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawLogId {
    key_id: String,
}

#[derive(Deserialize)]
struct RawKindVersion {
    kind: String,
    version: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawPromise {
    signed_entry_timestamp: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawProof {
    #[serde(deserialize_with = "int64", default)]
    log_index: Option<i64>,
    root_hash: String,
    #[serde(deserialize_with = "int64", default)]
    tree_size: Option<i64>,
    #[serde(default)]
    hashes: Vec<String>,
    checkpoint: Option<RawCheckpoint>,
}

#[derive(Deserialize)]
struct RawCheckpoint {
    envelope: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMessageSignature {
    message_digest: Option<RawDigest>,
    signature: String,
}

#[derive(Deserialize)]
struct RawDigest {
    algorithm: String,
    digest: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEnvelope {
    payload: String,
    payload_type: String,
    #[serde(default)]
    signatures: Vec<RawDsseSignature>,
}

#[derive(Deserialize)]
struct RawDsseSignature {
    sig: String,
}

fn malformed(reason: impl Into<String>) -> VerifyError {
    VerifyError::Malformed(reason.into())
}

fn b64(s: &str, what: &str) -> Result<Vec<u8>, VerifyError> {
    protojson_bytes(s).ok_or_else(|| malformed(format!("{what} is not valid base64")))
}

/// Decodes a protobuf-JSON `bytes` value as Go's protojson does: standard
/// or URL-safe alphabet, padded or not, line breaks ignored (bundles made
/// with `base64` wrapping lines exist).
pub(crate) fn protojson_bytes(s: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let cleaned: String;
    let s = if s.contains(['\r', '\n']) {
        cleaned = s.chars().filter(|c| *c != '\r' && *c != '\n').collect();
        &cleaned
    } else {
        s
    };
    [&BASE64, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD]
        .iter()
        .find_map(|e| e.decode(s).ok())
}

fn non_negative(v: Option<i64>, what: &str) -> Result<i64, VerifyError> {
    match v {
        Some(n) if n >= 0 => Ok(n),
        Some(n) => Err(malformed(format!("{what} is negative ({n})"))),
        None => Err(malformed(format!("{what} is missing"))),
    }
}

/// The version a bundle media type names.
fn version_of(media_type: &str) -> Option<BundleVersion> {
    match media_type {
        "application/vnd.dev.sigstore.bundle+json;version=0.1" => Some(BundleVersion::V01),
        "application/vnd.dev.sigstore.bundle+json;version=0.2" => Some(BundleVersion::V02),
        "application/vnd.dev.sigstore.bundle+json;version=0.3"
        | "application/vnd.dev.sigstore.bundle.v0.3+json" => Some(BundleVersion::V03),
        _ => None,
    }
}

impl SigstoreBundle {
    /// Parses a bundle's JSON.
    pub fn parse(bytes: &[u8]) -> Result<SigstoreBundle, VerifyError> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let raw: RawBundle = serde_path_to_error::deserialize(&mut de)
            .map_err(|e| malformed(format!("not a Sigstore bundle: {e}")))?;
        de.end()
            .map_err(|e| malformed(format!("not a Sigstore bundle: {e}")))?;
        let version = version_of(&raw.media_type).ok_or_else(|| {
            malformed(format!(
                "unsupported bundle media type {:?}",
                raw.media_type
            ))
        })?;
        let m = raw.verification_material;
        let material = match (&m.x509_certificate_chain, &m.certificate, &m.public_key) {
            (Some(chain), None, None) => {
                let mut certs = chain
                    .certificates
                    .iter()
                    .map(|c| {
                        Certificate::from_der(&b64(&c.raw_bytes, "certificate")?).map_err(malformed)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if certs.is_empty() {
                    return Err(malformed("the certificate chain is empty"));
                }
                let leaf = certs.remove(0);
                SigningMaterial::Certificate {
                    leaf: Box::new(leaf),
                    chain: certs,
                }
            }
            (None, Some(cert), None) => {
                if version < BundleVersion::V03 {
                    return Err(malformed("a single `certificate` needs bundle version 0.3"));
                }
                let leaf = Certificate::from_der(&b64(&cert.raw_bytes, "certificate")?)
                    .map_err(malformed)?;
                SigningMaterial::Certificate {
                    leaf: Box::new(leaf),
                    chain: Vec::new(),
                }
            }
            (None, None, Some(key)) => SigningMaterial::PublicKey {
                hint: key.hint.clone(),
            },
            (None, None, None) => {
                return Err(malformed(
                    "no verification material (certificate, chain or public key)",
                ))
            }
            _ => return Err(malformed("more than one kind of verification material")),
        };
        let mut tlog_entries = Vec::new();
        for e in &m.tlog_entries {
            let inclusion_proof = match &e.inclusion_proof {
                None => None,
                Some(p) => Some(InclusionProof {
                    log_index: non_negative(p.log_index, "inclusion proof log index")?,
                    root_hash: b64(&p.root_hash, "inclusion proof root hash")?,
                    tree_size: non_negative(p.tree_size, "inclusion proof tree size")?,
                    hashes: p
                        .hashes
                        .iter()
                        .map(|h| b64(h, "inclusion proof hash"))
                        .collect::<Result<_, _>>()?,
                    checkpoint: p
                        .checkpoint
                        .as_ref()
                        .map(|c| c.envelope.clone())
                        .ok_or_else(|| malformed("inclusion proof has no checkpoint"))?,
                }),
            };
            tlog_entries.push(TlogEntry {
                log_index: non_negative(e.log_index, "log entry index")?,
                log_id: b64(&e.log_id.key_id, "log id")?,
                kind: e.kind_version.kind.clone(),
                version: e.kind_version.version.clone(),
                integrated_time: match e.integrated_time {
                    Some(t) if t < 0 => return Err(malformed("integrated time is negative")),
                    t => t.unwrap_or(0),
                },
                signed_entry_timestamp: e
                    .inclusion_promise
                    .as_ref()
                    .map(|p| b64(&p.signed_entry_timestamp, "signed entry timestamp"))
                    .transpose()?,
                inclusion_proof,
                canonicalized_body: b64(&e.canonicalized_body, "canonicalized body")?,
            });
        }
        let timestamps = m
            .timestamp_verification_data
            .map(|d| d.rfc3161_timestamps)
            .unwrap_or_default()
            .iter()
            .map(|t| b64(&t.signed_timestamp, "RFC 3161 timestamp"))
            .collect::<Result<_, _>>()?;
        let content = match (raw.message_signature, raw.dsse_envelope) {
            (Some(ms), None) => Content::Message {
                digest: ms
                    .message_digest
                    .map(|d| Ok::<_, VerifyError>((d.algorithm, b64(&d.digest, "message digest")?)))
                    .transpose()?,
                signature: b64(&ms.signature, "message signature")?,
            },
            (None, Some(env)) => Content::Dsse {
                payload: b64(&env.payload, "DSSE payload")?,
                payload_type: env.payload_type,
                signatures: env
                    .signatures
                    .iter()
                    .map(|s| b64(&s.sig, "DSSE signature"))
                    .collect::<Result<_, _>>()?,
            },
            (Some(_), Some(_)) => {
                return Err(malformed("both a message signature and a DSSE envelope"))
            }
            (None, None) => {
                return Err(malformed("neither a message signature nor a DSSE envelope"))
            }
        };
        Ok(SigstoreBundle {
            media_type: raw.media_type,
            version,
            material,
            tlog_entries,
            timestamps,
            content,
        })
    }

    /// The signature over the content (the message signature, or the DSSE
    /// envelope's only signature): what timestamps and log entries attest.
    pub fn signature(&self) -> Option<&[u8]> {
        match &self.content {
            Content::Message { signature, .. } => Some(signature),
            Content::Dsse { signatures, .. } => match signatures.as_slice() {
                [one] => Some(one),
                _ => None,
            },
        }
    }
}
