//! Rekor transparency log entries: the entry body against the bundle, the
//! signed entry timestamp (inclusion promise), the Merkle inclusion proof
//! (RFC 6962 / RFC 9162) and the signed checkpoint (a signed note).

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::Value;

use super::bundle::{InclusionProof, TlogEntry};
use super::crypto::{self, sha256, PublicKey, Scheme, Signed};
use super::trust_root::TransparencyLog;

/// What the log entry must say: the signature, the signer's key and what
/// was signed.
pub struct Expected<'a> {
    /// The signature over the content.
    pub signature: &'a [u8],
    /// The signer's certificate (DER), or public key (SPKI DER) for keyed bundles.
    pub signer_der: &'a [u8],
    pub signer_is_certificate: bool,
    pub subject: ExpectedSubject<'a>,
}

/// What was signed, as the different entry kinds record it.
pub enum ExpectedSubject<'a> {
    /// A message signature over an artifact with this SHA-256.
    Artifact { sha256: [u8; 32] },
    /// A DSSE envelope.
    Dsse {
        payload_type: &'a str,
        payload: &'a [u8],
        /// SHA-256 of the PAE (what a hashedrekord v0.0.2 entry over DSSE holds).
        pae_sha256: [u8; 32],
    },
}

fn field<'v>(v: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}

fn text<'v>(v: &'v Value, path: &[&str]) -> Result<&'v str, String> {
    field(v, path)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("log entry body has no {}", path.join(".")))
}

fn b64(s: &str, what: &str) -> Result<Vec<u8>, String> {
    BASE64
        .decode(s)
        .map_err(|_| format!("log entry body: {what} is not valid base64"))
}

/// The DER a body's PEM (base64 of a PEM certificate or public key) holds.
fn pem_der(b64_pem: &str, want_certificate: bool) -> Result<Vec<u8>, String> {
    let pem = String::from_utf8(b64(b64_pem, "public key")?)
        .map_err(|_| "log entry body: public key is not PEM".to_string())?;
    let label = if want_certificate {
        "CERTIFICATE"
    } else {
        "PUBLIC KEY"
    };
    crypto::pem_blocks(&pem, label)
        .into_iter()
        .next()
        .ok_or_else(|| "log entry body: public key is not PEM".to_string())
}

fn mismatch(what: &str) -> String {
    format!("the log entry does not match the bundle: {what} differs")
}

/// Checks that the entry's body records this signature, signer and content.
pub fn check_body(entry: &TlogEntry, expected: &Expected<'_>) -> Result<(), String> {
    let body: Value = serde_json::from_slice(&entry.canonicalized_body)
        .map_err(|_| "log entry body is not JSON".to_string())?;
    let kind = text(&body, &["kind"])?;
    let version = text(&body, &["apiVersion"])?;
    if kind != entry.kind || version != entry.version {
        return Err(format!(
            "log entry body is {kind} {version} but the bundle says {} {}",
            entry.kind, entry.version
        ));
    }
    match (kind, version, &expected.subject) {
        ("hashedrekord", "0.0.1", ExpectedSubject::Artifact { sha256 }) => {
            let spec = field(&body, &["spec"]).ok_or("log entry body has no spec")?;
            if text(spec, &["data", "hash", "algorithm"])? != "sha256" {
                return Err("log entry hash is not sha256".into());
            }
            if !text(spec, &["data", "hash", "value"])?.eq_ignore_ascii_case(&hex::encode(sha256)) {
                return Err(mismatch("the artifact digest"));
            }
            if b64(text(spec, &["signature", "content"])?, "signature")? != expected.signature {
                return Err(mismatch("the signature"));
            }
            let key = text(spec, &["signature", "publicKey", "content"])?;
            if pem_der(key, expected.signer_is_certificate)? != expected.signer_der {
                return Err(mismatch("the signing certificate or key"));
            }
            Ok(())
        }
        ("hashedrekord", "0.0.2", subject) => {
            let spec = field(&body, &["spec", "hashedRekordV002"])
                .ok_or("log entry body has no spec.hashedRekordV002")?;
            if text(spec, &["data", "algorithm"])? != "SHA2_256" {
                return Err("log entry hash is not SHA2_256".into());
            }
            let digest = b64(text(spec, &["data", "digest"])?, "digest")?;
            let want: &[u8] = match subject {
                ExpectedSubject::Artifact { sha256 } => sha256,
                ExpectedSubject::Dsse { pae_sha256, .. } => pae_sha256,
            };
            if digest != want {
                return Err(mismatch("the signed digest"));
            }
            if b64(text(spec, &["signature", "content"])?, "signature")? != expected.signature {
                return Err(mismatch("the signature"));
            }
            let verifier = field(spec, &["signature", "verifier"]).ok_or("no verifier")?;
            let signer = if expected.signer_is_certificate {
                text(verifier, &["x509Certificate", "rawBytes"])?
            } else {
                text(verifier, &["publicKey", "rawBytes"])?
            };
            if b64(signer, "verifier")? != expected.signer_der {
                return Err(mismatch("the signing certificate or key"));
            }
            Ok(())
        }
        ("dsse", "0.0.1", ExpectedSubject::Dsse { payload, .. }) => {
            let spec = field(&body, &["spec"]).ok_or("log entry body has no spec")?;
            if text(spec, &["payloadHash", "algorithm"])? != "sha256"
                || !text(spec, &["payloadHash", "value"])?
                    .eq_ignore_ascii_case(&hex::encode(sha256(payload)))
            {
                return Err(mismatch("the DSSE payload"));
            }
            let sigs = field(spec, &["signatures"])
                .and_then(Value::as_array)
                .ok_or("log entry body has no signatures")?;
            let [sig] = sigs.as_slice() else {
                return Err(mismatch("the number of DSSE signatures"));
            };
            if b64(text(sig, &["signature"])?, "signature")? != expected.signature {
                return Err(mismatch("the DSSE signature"));
            }
            if pem_der(text(sig, &["verifier"])?, expected.signer_is_certificate)?
                != expected.signer_der
            {
                return Err(mismatch("the signing certificate or key"));
            }
            Ok(())
        }
        (
            "intoto",
            "0.0.2",
            ExpectedSubject::Dsse {
                payload_type,
                payload,
                ..
            },
        ) => {
            let env = field(&body, &["spec", "content", "envelope"])
                .ok_or("log entry body has no spec.content.envelope")?;
            if text(env, &["payloadType"])? != *payload_type {
                return Err(mismatch("the DSSE payload type"));
            }
            // intoto v0.0.2 stores the envelope's base64 fields base64-encoded again.
            let logged_payload = b64(text(env, &["payload"])?, "payload")?;
            if logged_payload != BASE64.encode(payload).as_bytes() {
                return Err(mismatch("the DSSE payload"));
            }
            let sigs = field(env, &["signatures"])
                .and_then(Value::as_array)
                .ok_or("log entry body has no signatures")?;
            let [sig] = sigs.as_slice() else {
                return Err(mismatch("the number of DSSE signatures"));
            };
            let logged_sig = b64(text(sig, &["sig"])?, "signature")?;
            if logged_sig != BASE64.encode(expected.signature).as_bytes() {
                return Err(mismatch("the DSSE signature"));
            }
            if pem_der(text(sig, &["publicKey"])?, expected.signer_is_certificate)?
                != expected.signer_der
            {
                return Err(mismatch("the signing certificate or key"));
            }
            Ok(())
        }
        (kind, version, _) => Err(format!(
            "log entry kind {kind} {version} does not fit this bundle's content"
        )),
    }
}

/// Checks the signed entry timestamp: the log's signature over the
/// canonical JSON of body, integrated time, log ID and index.
pub fn check_set(entry: &TlogEntry, set: &[u8], log: &TransparencyLog) -> Result<(), String> {
    let key = log
        .key
        .as_ref()
        .ok_or("the transparency log's key type is not supported")?;
    // Canonical JSON (RFC 8785): keys sorted, no spaces; the values need no escaping.
    let payload = format!(
        "{{\"body\":\"{}\",\"integratedTime\":{},\"logID\":\"{}\",\"logIndex\":{}}}",
        BASE64.encode(&entry.canonicalized_body),
        entry.integrated_time,
        hex::encode(&entry.log_id),
        entry.log_index
    );
    key.verify(
        key.default_scheme(),
        Signed::Message(payload.as_bytes()),
        set,
    )
    .map_err(|_| "the signed entry timestamp (inclusion promise) does not verify".to_string())
}

fn node_hash(left: &[u8], right: &[u8]) -> [u8; 32] {
    let mut buf = Vec::with_capacity(65);
    buf.push(1);
    buf.extend_from_slice(left);
    buf.extend_from_slice(right);
    sha256(&buf)
}

/// The root an inclusion proof leads to (RFC 9162 §2.1.3.2).
pub fn root_from_proof(
    index: u64,
    size: u64,
    leaf_hash: [u8; 32],
    proof: &[Vec<u8>],
) -> Result<[u8; 32], String> {
    if index >= size {
        return Err("inclusion proof: the log index is not inside the tree".into());
    }
    let (mut fnode, mut snode) = (index, size - 1);
    let mut r = leaf_hash;
    for p in proof {
        if p.len() != 32 {
            return Err("inclusion proof: a hash is not 32 bytes".into());
        }
        if snode == 0 {
            return Err("inclusion proof: too many hashes".into());
        }
        if fnode & 1 == 1 || fnode == snode {
            r = node_hash(p, &r);
            if fnode & 1 == 0 {
                while fnode & 1 == 0 && fnode != 0 {
                    fnode >>= 1;
                    snode >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    if snode != 0 {
        return Err("inclusion proof: too few hashes".into());
    }
    Ok(r)
}

/// Checks the inclusion proof and its checkpoint, signed by `log`.
pub fn check_inclusion(
    entry: &TlogEntry,
    proof: &InclusionProof,
    log: &TransparencyLog,
) -> Result<(), String> {
    let mut leaf = vec![0u8];
    leaf.extend_from_slice(&entry.canonicalized_body);
    let root = root_from_proof(
        proof.log_index as u64,
        proof.tree_size as u64,
        sha256(&leaf),
        &proof.hashes,
    )?;
    if root[..] != proof.root_hash[..] {
        return Err("inclusion proof does not lead to its root hash".into());
    }
    let checkpoint = Checkpoint::parse(&proof.checkpoint)?;
    checkpoint.verify(log)?;
    if checkpoint.root_hash != proof.root_hash || checkpoint.size != proof.tree_size as u64 {
        return Err("the checkpoint's root hash or tree size is not the inclusion proof's".into());
    }
    Ok(())
}

/// A checkpoint: a signed note whose body is origin, tree size and root hash.
struct Checkpoint<'a> {
    body: &'a str,
    origin: &'a str,
    size: u64,
    root_hash: Vec<u8>,
    /// (signer name, key hint + signature)
    signatures: Vec<(&'a str, Vec<u8>)>,
}

impl<'a> Checkpoint<'a> {
    fn parse(text: &'a str) -> Result<Checkpoint<'a>, String> {
        let bad = |why: &str| format!("checkpoint: {why}");
        let split = text.find("\n\n").ok_or_else(|| bad("no signature block"))?;
        let body = &text[..split + 1];
        let mut lines = body.lines();
        let origin = lines
            .next()
            .filter(|o| !o.is_empty())
            .ok_or_else(|| bad("no origin"))?;
        let size = lines
            .next()
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or_else(|| bad("no tree size"))?;
        let root_hash = lines
            .next()
            .and_then(|s| BASE64.decode(s).ok())
            .filter(|h| h.len() == 32)
            .ok_or_else(|| bad("no root hash"))?;
        let mut signatures = Vec::new();
        for line in text[split + 2..].lines() {
            if line.is_empty() {
                continue;
            }
            let rest = line
                .strip_prefix("\u{2014} ")
                .ok_or_else(|| bad("a signature line does not start with an em dash"))?;
            let (name, sig) = rest
                .rsplit_once(' ')
                .ok_or_else(|| bad("a signature line has no signature"))?;
            let sig = BASE64
                .decode(sig)
                .ok()
                .filter(|s| s.len() > 4)
                .ok_or_else(|| bad("a signature is not base64"))?;
            signatures.push((name, sig));
        }
        if signatures.is_empty() {
            return Err(bad("not signed"));
        }
        Ok(Checkpoint {
            body,
            origin,
            size,
            root_hash,
            signatures,
        })
    }

    /// Some signature by the log (named as its host, with its key hint) verifies.
    fn verify(&self, log: &TransparencyLog) -> Result<(), String> {
        let key: &PublicKey = log
            .key
            .as_ref()
            .ok_or("the transparency log's key type is not supported")?;
        let host = log.host();
        // Rekor v1 names its origin "host - treeID"; v2 logs just "host".
        let origin_ok = self.origin == host
            || self
                .origin
                .strip_prefix(host)
                .is_some_and(|r| r.starts_with(" - "));
        if !origin_ok {
            return Err(format!(
                "checkpoint origin {:?} is not the log {host}",
                self.origin
            ));
        }
        let hint = log.log_id.get(..4).unwrap_or_default();
        let mut named = false;
        for (name, sig) in &self.signatures {
            if *name != host || &sig[..4] != hint {
                continue;
            }
            named = true;
            let scheme: Scheme = key.default_scheme();
            if key
                .verify(scheme, Signed::Message(self.body.as_bytes()), &sig[4..])
                .is_ok()
            {
                return Ok(());
            }
        }
        Err(if named {
            "the checkpoint signature does not verify".to_string()
        } else {
            format!("the checkpoint is not signed by the log {host}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_leaf_tree_is_its_leaf() {
        let leaf = sha256(b"\0x");
        assert_eq!(root_from_proof(0, 1, leaf, &[]), Ok(leaf));
        assert!(root_from_proof(1, 1, leaf, &[]).is_err());
        assert!(root_from_proof(0, 2, leaf, &[]).is_err());
    }
}
