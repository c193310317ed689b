//! The trusted root: which Fulcio CAs, Rekor logs, CT logs and timestamp
//! authorities are trusted, and when (`trusted_root.json`, media type
//! `application/vnd.dev.sigstore.trustedroot+json;version=0.1`).

use serde::Deserialize;

use super::crypto::PublicKey;
use super::der;
use super::x509::Certificate;

/// The Sigstore public-good instance's trusted root, as its TUF repository
/// (tuf-repo-cdn.sigstore.dev) served it: see `public_good_trusted_root.md`
/// next to this file for where and when the snapshot was taken.
const PUBLIC_GOOD: &str = include_str!("public_good_trusted_root.json");

/// When a key or CA is trusted: `start..=end` (closed; no end = still trusted).
#[derive(Clone, Copy, Debug)]
pub struct Validity {
    pub start: i64,
    pub end: Option<i64>,
}

impl Validity {
    /// Whether `time` is within the interval (both ends included).
    pub fn contains(&self, time: i64) -> bool {
        self.start <= time && self.end.is_none_or(|e| time <= e)
    }
}

/// A transparency log (Rekor) or certificate transparency log.
#[derive(Clone, Debug)]
pub struct TransparencyLog {
    pub base_url: String,
    pub log_id: Vec<u8>,
    /// `None` when the key type is not one this verifier knows: entries of
    /// that log then fail, others still verify.
    pub key: Option<PublicKey>,
    pub validity: Validity,
}

impl TransparencyLog {
    /// The host of the log's URL: the name its checkpoints are signed as.
    pub fn host(&self) -> &str {
        let rest = self
            .base_url
            .split_once("://")
            .map_or(self.base_url.as_str(), |(_, r)| r);
        rest.split('/').next().unwrap_or(rest)
    }
}

/// A certificate authority (Fulcio) or timestamp authority: its chain, leaf
/// (intermediate or TSA signing certificate) first, root last.
#[derive(Clone, Debug)]
pub struct CertificateAuthority {
    pub uri: String,
    pub chain: Vec<Certificate>,
    pub validity: Validity,
}

/// A parsed trusted root.
#[derive(Clone, Debug)]
pub struct TrustedRoot {
    /// Rekor logs.
    pub tlogs: Vec<TransparencyLog>,
    /// Certificate transparency logs.
    pub ctlogs: Vec<TransparencyLog>,
    /// Fulcio CAs.
    pub certificate_authorities: Vec<CertificateAuthority>,
    /// RFC 3161 timestamp authorities.
    pub timestamp_authorities: Vec<CertificateAuthority>,
}

/// Why a trusted root was refused.
#[derive(Debug, thiserror::Error)]
#[error("trusted root: {0}")]
pub struct TrustRootError(pub String);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRoot {
    media_type: String,
    #[serde(default)]
    tlogs: Vec<RawLog>,
    #[serde(default)]
    ctlogs: Vec<RawLog>,
    #[serde(default)]
    certificate_authorities: Vec<RawCa>,
    #[serde(default)]
    timestamp_authorities: Vec<RawCa>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawLog {
    #[serde(default)]
    base_url: String,
    public_key: RawKey,
    log_id: RawLogId,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawKey {
    raw_bytes: String,
    valid_for: RawValidity,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawLogId {
    key_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCa {
    #[serde(default)]
    uri: String,
    cert_chain: RawChain,
    valid_for: RawValidity,
}

#[derive(Deserialize)]
struct RawChain {
    certificates: Vec<RawCert>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCert {
    raw_bytes: String,
}

#[derive(Deserialize)]
struct RawValidity {
    start: Option<String>,
    end: Option<String>,
}

fn validity(raw: &RawValidity, what: &str) -> Result<Validity, TrustRootError> {
    let start = raw
        .start
        .as_deref()
        .ok_or_else(|| TrustRootError(format!("{what}: validFor has no start")))?;
    let time =
        |s: &str| der::rfc3339(s).ok_or_else(|| TrustRootError(format!("{what}: bad time {s:?}")));
    Ok(Validity {
        start: time(start)?,
        end: raw.end.as_deref().map(time).transpose()?,
    })
}

fn b64(s: &str, what: &str) -> Result<Vec<u8>, TrustRootError> {
    super::bundle::protojson_bytes(s)
        .ok_or_else(|| TrustRootError(format!("{what}: invalid base64")))
}

fn log(raw: &RawLog) -> Result<TransparencyLog, TrustRootError> {
    let what = format!("log {}", raw.base_url);
    let key_der = b64(&raw.public_key.raw_bytes, &what)?;
    Ok(TransparencyLog {
        base_url: raw.base_url.clone(),
        log_id: b64(&raw.log_id.key_id, &what)?,
        key: PublicKey::from_spki(&key_der).ok(),
        validity: validity(&raw.public_key.valid_for, &what)?,
    })
}

fn authority(raw: &RawCa) -> Result<CertificateAuthority, TrustRootError> {
    let what = format!("authority {}", raw.uri);
    let chain = raw
        .cert_chain
        .certificates
        .iter()
        .map(|c| {
            Certificate::from_der(&b64(&c.raw_bytes, &what)?)
                .map_err(|e| TrustRootError(format!("{what}: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if chain.is_empty() {
        return Err(TrustRootError(format!("{what}: empty certificate chain")));
    }
    Ok(CertificateAuthority {
        uri: raw.uri.clone(),
        chain,
        validity: validity(&raw.valid_for, &what)?,
    })
}

impl TrustedRoot {
    /// The built-in snapshot of the Sigstore public-good trusted root.
    pub fn builtin() -> TrustedRoot {
        // The snapshot is part of the source and is checked by a unit test.
        Self::from_json(PUBLIC_GOOD.as_bytes())
            .unwrap_or_else(|e| unreachable!("the built-in trusted root does not parse: {e}"))
    }

    /// Parses a `trusted_root.json`.
    pub fn from_json(bytes: &[u8]) -> Result<TrustedRoot, TrustRootError> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let raw: RawRoot = serde_path_to_error::deserialize(&mut de)
            .map_err(|e| TrustRootError(format!("not a trusted root: {e}")))?;
        if !raw
            .media_type
            .starts_with("application/vnd.dev.sigstore.trustedroot")
        {
            return Err(TrustRootError(format!(
                "unsupported media type {:?}",
                raw.media_type
            )));
        }
        Ok(TrustedRoot {
            tlogs: raw.tlogs.iter().map(log).collect::<Result<_, _>>()?,
            ctlogs: raw.ctlogs.iter().map(log).collect::<Result<_, _>>()?,
            certificate_authorities: raw
                .certificate_authorities
                .iter()
                .map(authority)
                .collect::<Result<_, _>>()?,
            timestamp_authorities: raw
                .timestamp_authorities
                .iter()
                .map(authority)
                .collect::<Result<_, _>>()?,
        })
    }

    /// The Rekor log with `log_id`.
    pub fn tlog(&self, log_id: &[u8]) -> Option<&TransparencyLog> {
        self.tlogs.iter().find(|l| l.log_id == log_id)
    }

    /// The CT log with `log_id`.
    pub fn ctlog(&self, log_id: &[u8]) -> Option<&TransparencyLog> {
        self.ctlogs.iter().find(|l| l.log_id == log_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_parses_and_has_each_kind() {
        let root = TrustedRoot::builtin();
        assert!(!root.tlogs.is_empty());
        assert!(!root.ctlogs.is_empty());
        assert!(!root.certificate_authorities.is_empty());
        assert!(root.tlogs.iter().all(|l| l.key.is_some()));
    }
}
