//! Verifying Sigstore bundles offline: keyless (a Fulcio certificate bound
//! to an OIDC identity, logged in Rekor) and keyed signatures, against a
//! trusted root (the built-in public-good snapshot or one given).
//!
//! [`verify_bundle`] checks, in this order, and stops at the first failure
//! with its reason ([`VerifyError`]):
//! 1. the content: a message signature's digest hint is the artifact's; a
//!    DSSE envelope has one signature and an in-toto statement with a
//!    subject whose sha256 is the artifact's;
//! 2. the signer's material fits the policy (a certificate for identities,
//!    a public-key hint for `--key`), and a bundle's chain holds no root;
//! 3. the signature over the artifact (or the DSSE PAE) with the signer's key;
//! 4. every transparency log entry: its log is in the trusted root, its
//!    body records this signature, signer and artifact, its signed entry
//!    timestamp verifies (the integrated time, within the log key's
//!    validity), its inclusion proof leads to the root hash of a checkpoint
//!    signed by the log (version 0.2 and later need a proof);
//! 5. every RFC 3161 timestamp, against the trusted timestamp authorities;
//! 6. for certificates: at least one trusted time; each inside the leaf's
//!    validity; the leaf chains to a Fulcio CA of the trusted root valid
//!    then; it is a code-signing leaf (digitalSignature, codeSigning EKU,
//!    not a CA); one of its SCTs verifies against a CT log of the root;
//!    its SAN and OIDC issuer match the policy.
//!
//! Nothing here goes online.

use serde::Serialize;

mod bundle;
mod crypto;
mod ct;
mod der;
mod layer;
mod rekor;
mod trust_root;
mod tsa;
mod x509;

pub use bundle::{BundleVersion, SigstoreBundle};
pub use crypto::PublicKey;
pub use layer::CosignLayer;
pub use trust_root::{TrustRootError, TrustedRoot};

use bundle::{Content, SigningMaterial};
use crypto::{Hash, Scheme, Signed};
use rekor::{Expected, ExpectedSubject};
use x509::{Certificate, EKU_CODE_SIGNING};

/// At most this many RFC 3161 timestamps are looked at (sigstore-python's limit).
const MAX_TIMESTAMPS: usize = 32;

/// The DSSE payload type of an in-toto statement.
const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

/// What was signed: the artifact's bytes, or only its SHA-256.
#[derive(Clone, Copy, Debug)]
pub enum Artifact<'a> {
    /// The artifact's content.
    Bytes(&'a [u8]),
    /// The artifact's SHA-256 only.
    Digest([u8; 32]),
}

impl Artifact<'_> {
    fn sha256(&self) -> [u8; 32] {
        match self {
            Artifact::Bytes(b) => crypto::sha256(b),
            Artifact::Digest(d) => *d,
        }
    }
}

/// Matches a certificate value exactly or by regular expression (unanchored,
/// as cosign's `--certificate-identity-regexp`).
#[derive(Clone, Debug)]
pub enum Matcher {
    /// Equal to this.
    Exact(String),
    /// Matched by this expression somewhere.
    Regex(regex::Regex),
}

impl Matcher {
    /// Whether `value` matches.
    pub fn matches(&self, value: &str) -> bool {
        match self {
            Matcher::Exact(s) => s == value,
            Matcher::Regex(r) => r.is_match(value),
        }
    }
}

impl std::fmt::Display for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Matcher::Exact(s) => write!(f, "{s:?}"),
            Matcher::Regex(r) => write!(f, "/{}/", r.as_str()),
        }
    }
}

/// Who must have signed.
#[derive(Clone, Debug)]
pub enum Policy {
    /// A key pair's public key (`--key`). `require_tlog`: a transparency
    /// log entry must be present (cosign's default; off is its
    /// `--insecure-ignore-tlog`).
    Key {
        /// The signer's public key.
        key: PublicKey,
        /// Whether a transparency log entry is required.
        require_tlog: bool,
    },
    /// A Fulcio certificate whose SAN (URI or email) matches `identity`
    /// and whose OIDC issuer matches `issuer` (any issuer when `None`).
    Identity {
        /// The SAN (URI or email).
        identity: Matcher,
        /// The OIDC issuer.
        issuer: Option<Matcher>,
    },
}

/// Who signed, once verified.
#[derive(Clone, Debug, Serialize)]
pub struct VerifiedSigner {
    /// The certificate's identity (SAN), for keyless signatures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// The certificate's OIDC issuer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// For keyed signatures: `key`.
    pub signer: &'static str,
    /// Trusted signing times (Unix seconds): integrated times and RFC 3161 times.
    pub signed_at: Vec<i64>,
    /// The transparency log indexes of the entries checked.
    pub log_indexes: Vec<i64>,
    /// The in-toto statement of a DSSE bundle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statement: Option<serde_json::Value>,
}

/// Why a bundle did not verify: the first reason found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The bundle (or the trusted root) is not well-formed.
    #[error("malformed bundle: {0}")]
    Malformed(String),
    /// The trusted root given is not usable.
    #[error("{0}")]
    TrustedRoot(String),
    /// The bundle is well-formed but does not verify.
    #[error("{0}")]
    Rejected(String),
}

fn reject(reason: impl Into<String>) -> VerifyError {
    VerifyError::Rejected(reason.into())
}

/// Checks the content against the artifact; returns what the log entries
/// must record and the statement of a DSSE envelope.
fn check_content<'b>(
    bundle: &'b SigstoreBundle,
    artifact_sha256: [u8; 32],
) -> Result<(ExpectedSubject<'b>, Option<serde_json::Value>), VerifyError> {
    match &bundle.content {
        Content::Message { digest, .. } => {
            if let Some((alg, d)) = digest {
                if alg != "SHA2_256" || d[..] != artifact_sha256[..] {
                    return Err(reject(
                        "the bundle's message digest is not the artifact's SHA-256",
                    ));
                }
            }
            Ok((
                ExpectedSubject::Artifact {
                    sha256: artifact_sha256,
                },
                None,
            ))
        }
        Content::Dsse {
            payload_type,
            payload,
            signatures,
        } => {
            if signatures.len() != 1 {
                return Err(reject(format!(
                    "the DSSE envelope has {} signatures, not one",
                    signatures.len()
                )));
            }
            if payload_type != IN_TOTO_PAYLOAD_TYPE {
                return Err(reject(format!(
                    "the DSSE payload type {payload_type:?} is not an in-toto statement"
                )));
            }
            let statement: serde_json::Value = serde_json::from_slice(payload)
                .map_err(|_| reject("the DSSE payload is not a JSON in-toto statement"))?;
            let want = hex::encode(artifact_sha256);
            let subjects = statement
                .get("subject")
                .and_then(|s| s.as_array())
                .ok_or_else(|| reject("the in-toto statement has no subjects"))?;
            let matched = subjects.iter().any(|s| {
                s.pointer("/digest/sha256")
                    .and_then(|d| d.as_str())
                    .is_some_and(|d| d.eq_ignore_ascii_case(&want))
            });
            if !matched {
                return Err(reject(
                    "no subject of the in-toto statement has the artifact's sha256 digest",
                ));
            }
            let pae = crate::sign::bundle::pae(payload_type, payload);
            Ok((
                ExpectedSubject::Dsse {
                    payload_type,
                    payload,
                    pae_sha256: crypto::sha256(&pae),
                },
                Some(statement),
            ))
        }
    }
}

/// The leaf's chain to a Fulcio CA of the root valid at every `time`;
/// returns the leaf's issuer.
fn check_chain<'r>(
    leaf: &Certificate,
    times: &[i64],
    root: &'r TrustedRoot,
) -> Result<&'r Certificate, VerifyError> {
    let mut reason = "the certificate does not chain to a Fulcio CA of the trusted root";
    for ca in &root.certificate_authorities {
        let Some(issuer) = ca.chain.first() else {
            continue;
        };
        if !leaf.signed_by(issuer) {
            continue;
        }
        let linked = ca
            .chain
            .windows(2)
            .all(|p| p[0].signed_by(&p[1]) && p[1].is_ca())
            && issuer.is_ca()
            && ca.chain.last().is_some_and(Certificate::is_self_signed);
        if !linked {
            reason = "the trusted root's CA chain does not verify";
            continue;
        }
        if !times.iter().all(|t| ca.validity.contains(*t)) {
            reason = "the certificate was issued outside its CA's validity in the trusted root";
            continue;
        }
        if !times
            .iter()
            .all(|t| ca.chain.iter().all(|c| c.valid_at(*t)))
        {
            reason = "the CA certificates were not valid at signing time";
            continue;
        }
        return Ok(issuer);
    }
    Err(reject(reason))
}

/// Verifies `bundle` over `artifact` for `policy` against `root`.
pub fn verify_bundle(
    bundle: &SigstoreBundle,
    artifact: Artifact<'_>,
    policy: &Policy,
    root: &TrustedRoot,
) -> Result<VerifiedSigner, VerifyError> {
    let artifact_sha256 = artifact.sha256();
    // 1. Content.
    let (subject, statement) = check_content(bundle, artifact_sha256)?;
    let signature = bundle
        .signature()
        .ok_or_else(|| reject("the bundle has no signature"))?;

    // 2. The signer's material against the policy.
    let (key, leaf) =
        match (&bundle.material, policy) {
            (SigningMaterial::PublicKey { .. }, Policy::Key { key, .. }) => (key.clone(), None),
            (SigningMaterial::Certificate { leaf, chain }, Policy::Identity { .. }) => {
                if leaf.is_self_signed() || chain.iter().any(Certificate::is_self_signed) {
                    return Err(reject(
                        "the bundle's certificate chain includes a root certificate",
                    ));
                }
                let key = leaf
                    .public_key
                    .clone()
                    .map_err(|e| reject(format!("the signing certificate's key: {e}")))?;
                (key, Some(leaf.as_ref()))
            }
            (SigningMaterial::PublicKey { .. }, Policy::Identity { .. }) => {
                return Err(reject(
                    "the bundle is signed with a key, not a certificate: verify it with --key",
                ))
            }
            (SigningMaterial::Certificate { .. }, Policy::Key { .. }) => return Err(reject(
                "the bundle is signed with a certificate: verify it with --certificate-identity",
            )),
        };

    // 3. The signature.
    // ECDSA keys sign with their curve's hash or with SHA-256 (what
    // Sigstore clients use for any curve: the log records a SHA-256 digest).
    let mut schemes = vec![key.default_scheme()];
    if let Scheme::Ecdsa(h) = schemes[0] {
        if h != Hash::Sha256 {
            schemes.push(Scheme::Ecdsa(Hash::Sha256));
        }
    }
    let pae;
    let signed = match (&bundle.content, &artifact) {
        (Content::Message { .. }, Artifact::Bytes(b)) => Signed::Message(b),
        (Content::Message { .. }, Artifact::Digest(d)) => Signed::Prehashed(Hash::Sha256, d),
        (
            Content::Dsse {
                payload_type,
                payload,
                ..
            },
            _,
        ) => {
            pae = crate::sign::bundle::pae(payload_type, payload);
            Signed::Message(&pae)
        }
    };
    if !schemes
        .iter()
        .any(|s| key.verify(*s, signed, signature).is_ok())
    {
        return Err(reject(match leaf {
            Some(_) => "the signature does not verify with the signing certificate's key",
            None => "the signature does not verify with the given key",
        }));
    }

    // 4. Transparency log entries.
    let signer_der: &[u8] = match leaf {
        Some(l) => &l.der,
        None => &key.spki,
    };
    let expected = Expected {
        signature,
        signer_der,
        signer_is_certificate: leaf.is_some(),
        subject,
    };
    let mut times = Vec::new();
    let mut log_indexes = Vec::new();
    for entry in &bundle.tlog_entries {
        let log = root.tlog(&entry.log_id).ok_or_else(|| {
            reject("the log entry is from a transparency log not in the trusted root (another Sigstore instance?)")
        })?;
        rekor::check_body(entry, &expected).map_err(reject)?;
        if entry.inclusion_proof.is_none() && bundle.version >= BundleVersion::V02 {
            return Err(reject(
                "the log entry has no inclusion proof (required from bundle version 0.2)",
            ));
        }
        if entry.signed_entry_timestamp.is_none() && entry.inclusion_proof.is_none() {
            return Err(reject(
                "the log entry has neither an inclusion proof nor an inclusion promise",
            ));
        }
        if let Some(set) = &entry.signed_entry_timestamp {
            rekor::check_set(entry, set, log).map_err(reject)?;
            if !log.validity.contains(entry.integrated_time) {
                return Err(reject(
                    "the log entry's integrated time is outside its log key's validity",
                ));
            }
            times.push(entry.integrated_time);
        }
        if let Some(proof) = &entry.inclusion_proof {
            rekor::check_inclusion(entry, proof, log).map_err(reject)?;
        }
        log_indexes.push(entry.log_index);
    }
    let needs_tlog = match policy {
        Policy::Key { require_tlog, .. } => *require_tlog,
        Policy::Identity { .. } => true,
    };
    if needs_tlog && bundle.tlog_entries.is_empty() {
        return Err(reject("the bundle has no transparency log entry"));
    }

    // 5. RFC 3161 timestamps.
    let mut timestamp_refused: Option<String> = None;
    if bundle.timestamps.len() > MAX_TIMESTAMPS {
        return Err(reject(format!(
            "too many RFC 3161 timestamps ({} > {MAX_TIMESTAMPS})",
            bundle.timestamps.len()
        )));
    }
    if !bundle.timestamps.iter().all(|t| tsa::is_well_formed(t)) {
        return Err(VerifyError::Malformed(
            "an RFC 3161 timestamp is not a timestamp response or token".into(),
        ));
    }
    for (i, token) in bundle.timestamps.iter().enumerate() {
        if bundle.timestamps[..i].contains(token) {
            return Err(reject("the bundle repeats an RFC 3161 timestamp"));
        }
        // As sigstore-python and sigstore-go: a timestamp that does not
        // verify is not counted (the bundle needs one trusted time), and
        // why is said if none is left.
        match tsa::verify_timestamp(token, signature, root) {
            Ok(t) => times.push(t),
            Err(e) => {
                timestamp_refused.get_or_insert(e);
            }
        }
    }

    // 6. The certificate.
    let (identity, issuer) = match (leaf, policy) {
        (Some(leaf), Policy::Identity { identity, issuer }) => {
            if times.is_empty() {
                return Err(reject(match timestamp_refused {
                    Some(why) => format!("no trusted signing time: {why}"),
                    None => "no trusted signing time: no signed entry timestamp and no RFC 3161 timestamp".to_string(),
                }));
            }
            if let Some(t) = times.iter().find(|t| !leaf.valid_at(**t)) {
                return Err(reject(format!(
                    "the signing time {t} is outside the certificate's validity ({}..{})",
                    leaf.not_before, leaf.not_after
                )));
            }
            let ca = check_chain(leaf, &times, root)?;
            if leaf.key_usage(0) != Some(true) {
                return Err(reject(
                    "the certificate is not for digital signatures (key usage)",
                ));
            }
            if !leaf
                .extended_key_usage()
                .is_some_and(|e| e.iter().any(|o| o == EKU_CODE_SIGNING))
            {
                return Err(reject(
                    "the certificate is not for code signing (extended key usage)",
                ));
            }
            if leaf.is_ca() {
                return Err(reject("the signing certificate is a CA"));
            }
            ct::check_scts(leaf, ca, root).map_err(reject)?;
            let sans = leaf.san_identities();
            let Some(found) = sans.iter().find(|s| identity.matches(s)) else {
                return Err(reject(format!(
                    "the certificate identity {} does not match {identity}",
                    if sans.is_empty() {
                        "(none)".to_string()
                    } else {
                        sans.join(", ")
                    }
                )));
            };
            let cert_issuer = leaf.oidc_issuer();
            if let Some(want) = issuer {
                match &cert_issuer {
                    Some(i) if want.matches(i) => {}
                    Some(i) => {
                        return Err(reject(format!(
                            "the certificate's OIDC issuer {i:?} does not match {want}"
                        )))
                    }
                    None => return Err(reject("the certificate has no OIDC issuer")),
                }
            }
            (Some(found.clone()), cert_issuer)
        }
        _ => (None, None),
    };
    Ok(VerifiedSigner {
        signer: if identity.is_some() {
            "certificate"
        } else {
            "key"
        },
        identity,
        issuer,
        signed_at: times,
        log_indexes,
        statement,
    })
}

/// Verifies a keyless signature stored as a layer of cosign's
/// `sha256-H.sig` image: `payload` is the layer (the simple-signing JSON),
/// `layer` its signature and annotations. The same checks as
/// [`verify_bundle`] of a bundle v0.1: the signature over the payload with
/// the certificate's key, the Rekor entry (its body records this signature,
/// certificate and payload digest; its signed entry timestamp verifies with
/// the log's key), the integrated time inside the certificate's validity,
/// the chain to a Fulcio CA of `root` valid then, the SCT, code signing and
/// the identity. What the payload claims (the image digest) is the caller's
/// to check, once this has passed.
pub fn verify_cosign_layer(
    payload: &[u8],
    layer: &CosignLayer<'_>,
    policy: &Policy,
    root: &TrustedRoot,
) -> Result<VerifiedSigner, VerifyError> {
    let bundle = SigstoreBundle::from_cosign_layer(layer)?;
    verify_bundle(&bundle, Artifact::Bytes(payload), policy, root)
}
