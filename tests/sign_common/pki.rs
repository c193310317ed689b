//! A test-time Sigstore instance: a Fulcio-like CA, a Rekor log key and a CT
//! log key, with the `trusted_root.json` that names them, to make keyless
//! signatures on images we push (real keyless signatures name manifests we
//! cannot reproduce). What it makes is judged by our verifier and by two
//! written by others (sigstore-rs for `.sig` layers, sigstore-python for
//! bundles), so it is not our own reading of the formats that is tested.
//!
//! Certificates are written with a small DER encoder below: a self-signed
//! CA; leaves as Fulcio issues them (empty subject, critical SAN with a URI
//! or email, digitalSignature, codeSigning, the OIDC issuer in both Fulcio
//! extensions, SKI/AKI, an embedded SCT by the CT log over the
//! precertificate).
#![allow(dead_code)]

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use olm_catalog::sign::PrivateKey;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::DerSignature;
use sha2::{Digest as _, Sha256};

/// 2024-01-01T00:00:00Z: when the CA and logs start.
pub const EPOCH: i64 = 1_704_067_200;
/// When test leaves are issued by default (2025-06-15).
pub const ISSUED: i64 = 1_750_000_000;
/// The Rekor log's URL (its host names its checkpoints).
pub const REKOR_URL: &str = "https://rekor.olm-catalog.test";

// ---- DER ----

fn len(n: usize) -> Vec<u8> {
    if n < 0x80 {
        return vec![n as u8];
    }
    let bytes: Vec<u8> = n
        .to_be_bytes()
        .into_iter()
        .skip_while(|b| *b == 0)
        .collect();
    let mut out = vec![0x80 | bytes.len() as u8];
    out.extend(bytes);
    out
}

pub fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    out.extend(len(content.len()));
    out.extend_from_slice(content);
    out
}

pub fn seq(parts: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x30, &parts.concat())
}

fn set(parts: &[Vec<u8>]) -> Vec<u8> {
    tlv(0x31, &parts.concat())
}

pub fn oid(dotted: &str) -> Vec<u8> {
    let arcs: Vec<u64> = dotted.split('.').map(|a| a.parse().expect("arc")).collect();
    let mut body = vec![(arcs[0] * 40 + arcs[1]) as u8];
    for &a in &arcs[2..] {
        let mut chunk = vec![(a & 0x7f) as u8];
        let mut v = a >> 7;
        while v > 0 {
            chunk.push(0x80 | (v & 0x7f) as u8);
            v >>= 7;
        }
        chunk.reverse();
        body.extend(chunk);
    }
    tlv(0x06, &body)
}

fn integer(bytes: &[u8]) -> Vec<u8> {
    let mut b: Vec<u8> = bytes.iter().copied().skip_while(|x| *x == 0).collect();
    if b.is_empty() || b[0] & 0x80 != 0 {
        b.insert(0, 0);
    }
    tlv(0x02, &b)
}

fn octets(b: &[u8]) -> Vec<u8> {
    tlv(0x04, b)
}

fn bits(b: &[u8]) -> Vec<u8> {
    let mut c = vec![0u8];
    c.extend_from_slice(b);
    tlv(0x03, &c)
}

fn utf8(s: &str) -> Vec<u8> {
    tlv(0x0c, s.as_bytes())
}

fn boolean(v: bool) -> Vec<u8> {
    tlv(0x01, &[if v { 0xff } else { 0 }])
}

/// UTCTime of a Unix time (years 1950-2049).
fn utc_time(t: i64) -> Vec<u8> {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let s = format!(
        "{:02}{:02}{:02}{:02}{:02}{:02}Z",
        y % 100,
        m,
        d,
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    tlv(0x17, s.as_bytes())
}

fn extension(id: &str, critical: bool, value: Vec<u8>) -> Vec<u8> {
    let mut parts = vec![oid(id)];
    if critical {
        parts.push(boolean(true));
    }
    parts.push(octets(&value));
    seq(&parts)
}

fn ecdsa_sha256() -> Vec<u8> {
    seq(&[oid("1.2.840.10045.4.3.2")])
}

fn name(cn: &str) -> Vec<u8> {
    seq(&[
        set(&[seq(&[oid("2.5.4.10"), utf8("olm-catalog test")])]),
        set(&[seq(&[oid("2.5.4.3"), utf8(cn)])]),
    ])
}

pub fn spki(key: &PrivateKey) -> Vec<u8> {
    key.public_key().to_spki_der().expect("spki")
}

pub fn sign(key: &PrivateKey, data: &[u8]) -> Vec<u8> {
    let s: DerSignature = key.signing_key().sign(data);
    s.as_bytes().to_vec()
}

pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

fn key_id(key: &PrivateKey) -> Vec<u8> {
    // RFC 5280's method 1 is over the key bits; any stable id does here.
    sha256(&spki(key))[..20].to_vec()
}

fn certificate(tbs: Vec<u8>, issuer: &PrivateKey) -> Vec<u8> {
    let sig = sign(issuer, &tbs);
    seq(&[tbs, ecdsa_sha256(), bits(&sig)])
}

pub fn pem(label: &str, der: &[u8]) -> String {
    let b = B64.encode(der);
    let lines: Vec<&str> = b
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).expect("ascii"))
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

// ---- The instance ----

/// How a leaf certificate is made.
#[derive(Clone, Debug)]
pub struct LeafSpec {
    /// The SAN: a URI, or an email address when it has an `@` and no `:`.
    pub identity: String,
    /// The OIDC issuer (both Fulcio extensions).
    pub issuer: String,
    /// notBefore; notAfter is 10 minutes later, as Fulcio's.
    pub not_before: i64,
    /// Whether the codeSigning EKU is present.
    pub code_signing: bool,
}

impl LeafSpec {
    pub fn new(identity: &str, issuer: &str) -> LeafSpec {
        LeafSpec {
            identity: identity.to_string(),
            issuer: issuer.to_string(),
            not_before: ISSUED,
            code_signing: true,
        }
    }
}

/// A leaf certificate and its key.
pub struct Leaf {
    pub key: PrivateKey,
    pub der: Vec<u8>,
    pub pem: String,
    pub not_before: i64,
}

/// The CA, the Rekor key and the CT log key.
pub struct TestPki {
    pub ca_key: PrivateKey,
    pub ca_der: Vec<u8>,
    pub rekor_key: PrivateKey,
    pub ct_key: PrivateKey,
}

impl Default for TestPki {
    fn default() -> Self {
        Self::new()
    }
}

impl TestPki {
    pub fn new() -> TestPki {
        let ca_key = PrivateKey::generate().expect("key");
        let ca_name = name("olm-catalog test fulcio");
        let tbs = seq(&[
            tlv(0xa0, &integer(&[2])),
            integer(&[0x01, 0x23]),
            ecdsa_sha256(),
            ca_name.clone(),
            seq(&[utc_time(EPOCH), utc_time(EPOCH + 20 * 365 * 86_400)]),
            ca_name,
            spki(&ca_key),
            tlv(
                0xa3,
                &seq(&[
                    extension("2.5.29.15", true, bits(&[0x06])), // keyCertSign, cRLSign
                    extension("2.5.29.19", true, seq(&[boolean(true)])),
                    extension("2.5.29.14", false, octets(&key_id(&ca_key))),
                ]),
            ),
        ]);
        let ca_der = certificate(tbs, &ca_key);
        TestPki {
            ca_key,
            ca_der,
            rekor_key: PrivateKey::generate().expect("key"),
            ct_key: PrivateKey::generate().expect("key"),
        }
    }

    pub fn rekor_log_id(&self) -> [u8; 32] {
        sha256(&spki(&self.rekor_key))
    }

    fn ct_log_id(&self) -> [u8; 32] {
        sha256(&spki(&self.ct_key))
    }

    /// The `trusted_root.json` of this instance.
    pub fn trusted_root(&self) -> String {
        let log = |url: &str, key: &PrivateKey| {
            serde_json::json!({
                "baseUrl": url,
                "hashAlgorithm": "SHA2_256",
                "publicKey": {
                    "rawBytes": B64.encode(spki(key)),
                    "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                    "validFor": {"start": "2024-01-01T00:00:00Z"}
                },
                "logId": {"keyId": B64.encode(sha256(&spki(key)))}
            })
        };
        serde_json::json!({
            "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [log(REKOR_URL, &self.rekor_key)],
            "certificateAuthorities": [{
                "subject": {"organization": "olm-catalog test", "commonName": "olm-catalog test fulcio"},
                "uri": "https://fulcio.olm-catalog.test",
                "certChain": {"certificates": [{"rawBytes": B64.encode(&self.ca_der)}]},
                "validFor": {"start": "2024-01-01T00:00:00Z"}
            }],
            "ctlogs": [log("https://ctfe.olm-catalog.test", &self.ct_key)],
            "timestampAuthorities": []
        })
        .to_string()
    }

    /// A Fulcio-like leaf for `spec`, with an SCT.
    pub fn leaf(&self, spec: &LeafSpec) -> Leaf {
        let key = PrivateKey::generate().expect("key");
        let san = if spec.identity.contains('@') && !spec.identity.contains(':') {
            tlv(0x81, spec.identity.as_bytes())
        } else {
            tlv(0x86, spec.identity.as_bytes())
        };
        let mut eku = vec![oid("1.3.6.1.5.5.7.3.3")];
        if !spec.code_signing {
            eku = vec![oid("1.3.6.1.5.5.7.3.1")];
        }
        let mut extensions = vec![
            extension("2.5.29.15", true, bits(&[0x80])), // digitalSignature
            extension("2.5.29.37", false, seq(&eku)),
            extension("2.5.29.14", false, octets(&key_id(&key))),
            extension("2.5.29.35", false, seq(&[tlv(0x80, &key_id(&self.ca_key))])),
            extension("2.5.29.17", true, seq(&[san])),
            extension(
                "1.3.6.1.4.1.57264.1.1",
                false,
                spec.issuer.as_bytes().to_vec(),
            ),
            extension("1.3.6.1.4.1.57264.1.8", false, utf8(&spec.issuer)),
        ];
        let tbs_fields = |extensions: &[Vec<u8>]| {
            seq(&[
                tlv(0xa0, &integer(&[2])),
                integer(&sha256(&spki(&key))[..16]),
                ecdsa_sha256(),
                name("olm-catalog test fulcio"),
                seq(&[utc_time(spec.not_before), utc_time(spec.not_before + 600)]),
                seq(&[]),
                spki(&key),
                tlv(0xa3, &seq(extensions)),
            ])
        };
        // The SCT signs the precertificate: the TBS without the SCT list.
        let precert = tbs_fields(&extensions);
        let timestamp_ms = (spec.not_before as u64) * 1000;
        let mut signed = vec![0u8, 0u8];
        signed.extend_from_slice(&timestamp_ms.to_be_bytes());
        signed.extend_from_slice(&[0, 1]);
        signed.extend_from_slice(&sha256(&spki(&self.ca_key)));
        signed.extend_from_slice(&(precert.len() as u32).to_be_bytes()[1..]);
        signed.extend_from_slice(&precert);
        signed.extend_from_slice(&[0, 0]);
        let sct_sig = sign(&self.ct_key, &signed);
        let mut sct = vec![0u8];
        sct.extend_from_slice(&self.ct_log_id());
        sct.extend_from_slice(&timestamp_ms.to_be_bytes());
        sct.extend_from_slice(&[0, 0, 4, 3]);
        sct.extend_from_slice(&(sct_sig.len() as u16).to_be_bytes());
        sct.extend_from_slice(&sct_sig);
        let mut list = (sct.len() as u16).to_be_bytes().to_vec();
        list.extend(sct);
        let mut sct_list = (list.len() as u16).to_be_bytes().to_vec();
        sct_list.extend(list);
        extensions.push(extension(
            "1.3.6.1.4.1.11129.2.4.2",
            false,
            octets(&sct_list),
        ));
        let der = certificate(tbs_fields(&extensions), &self.ca_key);
        Leaf {
            pem: pem("CERTIFICATE", &der),
            der,
            key,
            not_before: spec.not_before,
        }
    }

    /// The SET of an entry: the log's signature over the canonical JSON of
    /// body, integrated time, log ID and index.
    pub fn set(&self, body: &[u8], integrated_time: i64, log_index: i64) -> Vec<u8> {
        let canonical = format!(
            "{{\"body\":\"{}\",\"integratedTime\":{integrated_time},\"logID\":\"{}\",\"logIndex\":{log_index}}}",
            B64.encode(body),
            hex::encode(self.rekor_log_id()),
        );
        sign(&self.rekor_key, canonical.as_bytes())
    }

    /// The layer annotations of a keyless `.sig` signature over `payload`
    /// by `leaf`, logged (hashedrekord 0.0.1) at `integrated_time`.
    pub fn sig_layer(
        &self,
        payload: &[u8],
        leaf: &Leaf,
        integrated_time: i64,
    ) -> BTreeMap<String, String> {
        let signature = sign(&leaf.key, payload);
        let body = hashedrekord(payload, &signature, &leaf.pem);
        let log_index = 4242;
        let set = self.set(&body, integrated_time, log_index);
        let bundle = serde_json::json!({
            "SignedEntryTimestamp": B64.encode(set),
            "Payload": {
                "body": B64.encode(&body),
                "integratedTime": integrated_time,
                "logIndex": log_index,
                "logID": hex::encode(self.rekor_log_id()),
            }
        });
        [
            (
                "dev.cosignproject.cosign/signature".to_string(),
                B64.encode(&signature),
            ),
            (
                "dev.sigstore.cosign/certificate".to_string(),
                leaf.pem.clone(),
            ),
            (
                "dev.sigstore.cosign/chain".to_string(),
                pem("CERTIFICATE", &self.ca_der),
            ),
            ("dev.sigstore.cosign/bundle".to_string(), bundle.to_string()),
        ]
        .into()
    }

    /// A Sigstore bundle v0.3 (cosign v3's image signature) of `statement`
    /// by `leaf`: a DSSE envelope, a dsse 0.0.1 Rekor entry with its SET,
    /// a one-entry inclusion proof and a signed checkpoint.
    pub fn bundle(&self, statement: &[u8], leaf: &Leaf, integrated_time: i64) -> Vec<u8> {
        let payload_type = "application/vnd.in-toto+json";
        // DSSE's pre-authentication encoding.
        let mut pae = format!(
            "DSSEv1 {} {payload_type} {} ",
            payload_type.len(),
            statement.len()
        )
        .into_bytes();
        pae.extend_from_slice(statement);
        let signature = sign(&leaf.key, &pae);
        let envelope = serde_json::json!({
            "payload": B64.encode(statement),
            "payloadType": payload_type,
            "signatures": [{"sig": B64.encode(&signature)}],
        });
        let body = serde_json::json!({
            "apiVersion": "0.0.1",
            "kind": "dsse",
            "spec": {
                "envelopeHash": {"algorithm": "sha256", "value": hex::encode(sha256(envelope.to_string().as_bytes()))},
                "payloadHash": {"algorithm": "sha256", "value": hex::encode(sha256(statement))},
                "signatures": [{"signature": B64.encode(&signature), "verifier": B64.encode(leaf.pem.as_bytes())}],
            }
        })
        .to_string()
        .into_bytes();
        let log_index = 4243;
        let set = self.set(&body, integrated_time, log_index);
        let mut leaf_input = vec![0u8];
        leaf_input.extend_from_slice(&body);
        let root = sha256(&leaf_input);
        let host = REKOR_URL.trim_start_matches("https://");
        let note = format!("{host} - 1234\n1\n{}\n", B64.encode(root));
        let mut note_sig = self.rekor_log_id()[..4].to_vec();
        note_sig.extend(sign(&self.rekor_key, note.as_bytes()));
        let checkpoint = format!("{note}\n\u{2014} {host} {}\n", B64.encode(note_sig));
        serde_json::json!({
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {
                "certificate": {"rawBytes": B64.encode(&leaf.der)},
                "tlogEntries": [{
                    "logIndex": log_index.to_string(),
                    "logId": {"keyId": B64.encode(self.rekor_log_id())},
                    "kindVersion": {"kind": "dsse", "version": "0.0.1"},
                    "integratedTime": integrated_time.to_string(),
                    "inclusionPromise": {"signedEntryTimestamp": B64.encode(set)},
                    "inclusionProof": {
                        "logIndex": "0",
                        "rootHash": B64.encode(root),
                        "treeSize": "1",
                        "hashes": [],
                        "checkpoint": {"envelope": checkpoint}
                    },
                    "canonicalizedBody": B64.encode(&body)
                }]
            },
            "dsseEnvelope": envelope,
        })
        .to_string()
        .into_bytes()
    }
}

/// A hashedrekord 0.0.1 entry body, as Rekor canonicalizes it.
pub fn hashedrekord(payload: &[u8], signature: &[u8], cert_pem: &str) -> Vec<u8> {
    serde_json::json!({
        "apiVersion": "0.0.1",
        "kind": "hashedrekord",
        "spec": {
            "data": {"hash": {"algorithm": "sha256", "value": hex::encode(sha256(payload))}},
            "signature": {
                "content": B64.encode(signature),
                "publicKey": {"content": B64.encode(cert_pem.as_bytes())}
            }
        }
    })
    .to_string()
    .into_bytes()
}
