//! cosign key files: the password-encrypted private key and the PEM public key.
//!
//! The private key file is what `cosign generate-key-pair` writes: a PEM block
//! labelled `ENCRYPTED SIGSTORE PRIVATE KEY` (older cosign: `ENCRYPTED COSIGN
//! PRIVATE KEY`) whose body is a JSON envelope (go-securesystemslib's
//! `encrypted` format): the PKCS#8 DER private key sealed with NaCl secretbox
//! (XSalsa20-Poly1305) under a key derived from the password with scrypt.
//!
//! ```json
//! {"kdf":{"name":"scrypt","params":{"N":32768,"r":8,"p":1},"salt":"<b64>"},
//!  "cipher":{"name":"nacl/secretbox","nonce":"<b64>"},"ciphertext":"<b64>"}
//! ```
//!
//! The public key file is a PEM `PUBLIC KEY` block (DER SubjectPublicKeyInfo).

use std::path::Path;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use crypto_secretbox::aead::{Aead, KeyInit};
use p256::ecdsa::{SigningKey, VerifyingKey};
use p256::elliptic_curve::Generate;
use p256::pkcs8::der::asn1::ObjectIdentifier;
use p256::pkcs8::der::{asn1::AnyRef, Decode};
use p256::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey};
use serde::{Deserialize, Serialize};

/// PEM label cosign (v2 and later) writes for encrypted private keys.
pub const SIGSTORE_PRIVATE_KEY_LABEL: &str = "ENCRYPTED SIGSTORE PRIVATE KEY";
/// PEM label older cosign versions wrote; still accepted.
pub const COSIGN_PRIVATE_KEY_LABEL: &str = "ENCRYPTED COSIGN PRIVATE KEY";
/// PEM label of a public key (SubjectPublicKeyInfo).
pub const PUBLIC_KEY_LABEL: &str = "PUBLIC KEY";

/// scrypt cost cosign uses (go-securesystemslib's default, N = 2^15).
const SCRYPT_LOG_N: u8 = 15;
const SCRYPT_R: u32 = 8;
const SCRYPT_P: u32 = 1;
/// Largest scrypt cost accepted when decrypting (N = 2^20, ~1 GiB of memory):
/// the parameters come from the file, so an unbounded N would let a crafted
/// key file exhaust memory.
const SCRYPT_MAX_LOG_N: u8 = 20;
const SALT_LEN: usize = 32;
const NONCE_LEN: usize = 24;
const KDF_SCRYPT: &str = "scrypt";
const CIPHER_SECRETBOX: &str = "nacl/secretbox";

const OID_EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const OID_SECP256R1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");

/// What can go wrong reading or writing a key.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The file is not a complete PEM block.
    #[error("{what}: not a PEM file: {reason}")]
    Pem {
        /// Which file or input.
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The PEM block has a label this kind of key does not use.
    #[error("{what}: PEM block is {found:?}, expected {expected}")]
    Label {
        /// Which file or input.
        what: String,
        /// The label found.
        found: String,
        /// The label(s) expected.
        expected: String,
    },
    /// The encrypted key envelope is malformed.
    #[error("{what}: malformed encrypted key: {reason}")]
    Envelope {
        /// Which file or input.
        what: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Decryption failed: the password is wrong (or the file was altered).
    #[error("{what}: decryption failed: wrong password, or the key file was altered")]
    WrongPassword {
        /// Which file or input.
        what: String,
    },
    /// The key is valid DER but not ECDSA P-256.
    #[error("{what}: unsupported key algorithm {algorithm}: only ECDSA P-256 keys are supported")]
    Algorithm {
        /// Which file or input.
        what: String,
        /// A name for the algorithm found.
        algorithm: String,
    },
    /// The DER inside the PEM block does not parse.
    #[error("{what}: invalid key encoding: {reason}")]
    Der {
        /// Which file or input.
        what: String,
        /// The decoder's message.
        reason: String,
    },
    /// Key generation or encryption failed.
    #[error("{0}")]
    Crypto(String),
    /// Reading the key file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// One PEM block: its label and decoded body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PemBlock {
    /// The text after `-----BEGIN ` (e.g. `PUBLIC KEY`).
    pub label: String,
    /// The base64-decoded body.
    pub contents: Vec<u8>,
}

/// Decodes the first PEM block in `text`. `what` names the input in errors.
///
/// Written by hand rather than with a PEM crate so that a truncated file
/// (no END line, short base64) gets an error saying exactly that.
pub fn pem_decode(text: &str, what: &str) -> Result<PemBlock, KeyError> {
    let err = |reason: &str| KeyError::Pem {
        what: what.to_string(),
        reason: reason.to_string(),
    };
    let mut lines = text.lines().map(str::trim);
    let label = loop {
        match lines.next() {
            None => return Err(err("no \"-----BEGIN\" line")),
            Some(l) => {
                if let Some(rest) = l.strip_prefix("-----BEGIN ") {
                    break rest
                        .strip_suffix("-----")
                        .ok_or_else(|| err("malformed BEGIN line"))?
                        .to_string();
                }
            }
        }
    };
    let end = format!("-----END {label}-----");
    let mut body = String::new();
    let mut ended = false;
    for l in lines {
        if l == end {
            ended = true;
            break;
        }
        if l.starts_with("-----") {
            return Err(err(&format!("expected \"{end}\", found {l:?}")));
        }
        // RFC 1421 headers (Proc-Type etc.) are not used by cosign keys.
        if l.contains(':') {
            return Err(err("PEM headers are not supported"));
        }
        body.push_str(l);
    }
    if !ended {
        return Err(err(&format!("truncated: no \"{end}\" line")));
    }
    let contents = BASE64
        .decode(body.as_bytes())
        .map_err(|e| err(&format!("body is not valid base64: {e}")))?;
    Ok(PemBlock { label, contents })
}

/// Encodes `contents` as a PEM block, 64 characters a line (as Go's `pem` does).
pub fn pem_encode(label: &str, contents: &[u8]) -> String {
    let b64 = BASE64.encode(contents);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        // base64 output is ASCII, so every chunk is valid UTF-8.
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

mod b64 {
    use super::BASE64;
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&BASE64.encode(v))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        BASE64
            .decode(s.as_bytes())
            .map_err(serde::de::Error::custom)
    }
}

/// The JSON envelope of an encrypted key; field names and order as Go writes them.
#[derive(Serialize, Deserialize)]
struct Envelope {
    kdf: Kdf,
    cipher: Cipher,
    #[serde(with = "b64")]
    ciphertext: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct Kdf {
    name: String,
    params: ScryptParams,
    #[serde(with = "b64")]
    salt: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct ScryptParams {
    #[serde(rename = "N")]
    n: u64,
    r: u32,
    p: u32,
}

#[derive(Serialize, Deserialize)]
struct Cipher {
    name: String,
    #[serde(with = "b64")]
    nonce: Vec<u8>,
}

fn random_bytes<const N: usize>() -> Result<[u8; N], KeyError> {
    let mut buf = [0u8; N];
    getrandom::fill(&mut buf).map_err(|e| KeyError::Crypto(format!("no randomness: {e}")))?;
    Ok(buf)
}

fn scrypt_key(
    password: &[u8],
    salt: &[u8],
    log_n: u8,
    r: u32,
    p: u32,
) -> Result<[u8; 32], KeyError> {
    let params = scrypt::Params::new(log_n, r, p, 32)
        .map_err(|e| KeyError::Crypto(format!("scrypt parameters: {e}")))?;
    let mut key = [0u8; 32];
    scrypt::scrypt(password, salt, &params, &mut key)
        .map_err(|e| KeyError::Crypto(format!("scrypt: {e}")))?;
    Ok(key)
}

/// Seals `plaintext` under `password` in cosign's envelope (JSON bytes).
pub fn encrypt(plaintext: &[u8], password: &[u8]) -> Result<Vec<u8>, KeyError> {
    let salt = random_bytes::<SALT_LEN>()?;
    let nonce = random_bytes::<NONCE_LEN>()?;
    let key = scrypt_key(password, &salt, SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P)?;
    let cipher = crypto_secretbox::XSalsa20Poly1305::new(&key.into());
    let ciphertext = cipher
        .encrypt(&nonce.into(), plaintext)
        .map_err(|e| KeyError::Crypto(format!("secretbox: {e}")))?;
    let envelope = Envelope {
        kdf: Kdf {
            name: KDF_SCRYPT.into(),
            params: ScryptParams {
                n: 1 << SCRYPT_LOG_N,
                r: SCRYPT_R,
                p: SCRYPT_P,
            },
            salt: salt.to_vec(),
        },
        cipher: Cipher {
            name: CIPHER_SECRETBOX.into(),
            nonce: nonce.to_vec(),
        },
        ciphertext,
    };
    serde_json::to_vec(&envelope).map_err(|e| KeyError::Crypto(e.to_string()))
}

/// Opens cosign's envelope (JSON bytes) with `password`. `what` names the input in errors.
pub fn decrypt(envelope: &[u8], password: &[u8], what: &str) -> Result<Vec<u8>, KeyError> {
    let bad = |reason: String| KeyError::Envelope {
        what: what.to_string(),
        reason,
    };
    let env: Envelope = serde_json::from_slice(envelope).map_err(|e| bad(e.to_string()))?;
    if env.kdf.name != KDF_SCRYPT {
        return Err(bad(format!(
            "unknown kdf {:?}, expected \"scrypt\"",
            env.kdf.name
        )));
    }
    if env.cipher.name != CIPHER_SECRETBOX {
        return Err(bad(format!(
            "unknown cipher {:?}, expected \"nacl/secretbox\"",
            env.cipher.name
        )));
    }
    let n = env.kdf.params.n;
    let log_n = if n.is_power_of_two() {
        n.trailing_zeros()
    } else {
        0
    };
    if log_n < 1 || log_n > u32::from(SCRYPT_MAX_LOG_N) {
        return Err(bad(format!(
            "scrypt N = {n} is not a power of two up to 2^{SCRYPT_MAX_LOG_N}"
        )));
    }
    let (r, p) = (env.kdf.params.r, env.kdf.params.p);
    // Bounded like N, and for the same reason (memory is 128 * N * r * p bytes).
    if !(1..=16).contains(&r) || !(1..=16).contains(&p) {
        return Err(bad(format!("scrypt r = {r}, p = {p} out of range")));
    }
    if env.cipher.nonce.len() != NONCE_LEN {
        return Err(bad(format!(
            "nonce is {} bytes, expected {NONCE_LEN}",
            env.cipher.nonce.len()
        )));
    }
    let key = scrypt_key(password, &env.kdf.salt, log_n as u8, r, p)?;
    let cipher = crypto_secretbox::XSalsa20Poly1305::new(&key.into());
    let nonce: [u8; NONCE_LEN] = env
        .cipher
        .nonce
        .as_slice()
        .try_into()
        .map_err(|_| bad("nonce length".into()))?;
    cipher
        .decrypt(&nonce.into(), env.ciphertext.as_slice())
        .map_err(|_| KeyError::WrongPassword {
            what: what.to_string(),
        })
}

/// A name for an algorithm OID, for error messages.
fn algorithm_name(oid: ObjectIdentifier, params: Option<AnyRef<'_>>) -> String {
    match oid.to_string().as_str() {
        "1.2.840.113549.1.1.1" => "RSA".into(),
        "1.3.101.112" => "Ed25519".into(),
        "1.3.101.113" => "Ed448".into(),
        "1.2.840.10045.2.1" => {
            let curve = params
                .and_then(|p| p.decode_as::<ObjectIdentifier>().ok())
                .map(|c| match c.to_string().as_str() {
                    "1.3.132.0.34" => "P-384".to_string(),
                    "1.3.132.0.35" => "P-521".to_string(),
                    "1.3.132.0.10" => "secp256k1".to_string(),
                    other => format!("curve {other}"),
                })
                .unwrap_or_else(|| "unknown curve".into());
            format!("ECDSA {curve}")
        }
        other => format!("OID {other}"),
    }
}

fn is_p256(oid: ObjectIdentifier, params: Option<AnyRef<'_>>) -> bool {
    oid == OID_EC_PUBLIC_KEY
        && params
            .and_then(|p| p.decode_as::<ObjectIdentifier>().ok())
            .is_some_and(|c| c == OID_SECP256R1)
}

/// An ECDSA P-256 private key, with what cosign needs to write it back.
#[derive(Clone)]
pub struct PrivateKey {
    signing: SigningKey,
}

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print key material.
        f.debug_struct("PrivateKey").finish_non_exhaustive()
    }
}

impl PrivateKey {
    /// Generates a new random P-256 key, as `cosign generate-key-pair` does.
    pub fn generate() -> Result<Self, KeyError> {
        let signing = SigningKey::try_generate()
            .map_err(|e| KeyError::Crypto(format!("key generation: {e}")))?;
        Ok(PrivateKey { signing })
    }

    /// The signing key.
    pub fn signing_key(&self) -> &SigningKey {
        &self.signing
    }

    /// The matching public key.
    pub fn public_key(&self) -> PublicKey {
        PublicKey {
            verifying: *self.signing.verifying_key(),
        }
    }

    /// Parses a PKCS#8 DER private key; `what` names the input in errors.
    pub fn from_pkcs8_der(der: &[u8], what: &str) -> Result<Self, KeyError> {
        let info = p256::pkcs8::PrivateKeyInfoRef::from_der(der).map_err(|e| KeyError::Der {
            what: what.to_string(),
            reason: e.to_string(),
        })?;
        if !is_p256(info.algorithm.oid, info.algorithm.parameters) {
            return Err(KeyError::Algorithm {
                what: what.to_string(),
                algorithm: algorithm_name(info.algorithm.oid, info.algorithm.parameters),
            });
        }
        let signing = SigningKey::from_pkcs8_der(der).map_err(|e| KeyError::Der {
            what: what.to_string(),
            reason: e.to_string(),
        })?;
        Ok(PrivateKey { signing })
    }

    /// Decrypts a cosign private key file's text. Accepts both the SIGSTORE and
    /// the older COSIGN label.
    pub fn from_encrypted_pem(text: &str, password: &[u8], what: &str) -> Result<Self, KeyError> {
        let block = pem_decode(text, what)?;
        if block.label != SIGSTORE_PRIVATE_KEY_LABEL && block.label != COSIGN_PRIVATE_KEY_LABEL {
            return Err(KeyError::Label {
                what: what.to_string(),
                found: block.label,
                expected: format!("{SIGSTORE_PRIVATE_KEY_LABEL:?} or {COSIGN_PRIVATE_KEY_LABEL:?}"),
            });
        }
        let der = decrypt(&block.contents, password, what)?;
        Self::from_pkcs8_der(&der, what)
    }

    /// Reads and decrypts a cosign private key file.
    pub fn read_encrypted(path: &Path, password: &[u8]) -> Result<Self, KeyError> {
        let what = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| KeyError::Io {
            path: what.clone(),
            source,
        })?;
        Self::from_encrypted_pem(&text, password, &what)
    }

    /// The PKCS#8 DER encoding.
    pub fn to_pkcs8_der(&self) -> Result<Vec<u8>, KeyError> {
        self.signing
            .to_pkcs8_der()
            .map(|d| d.as_bytes().to_vec())
            .map_err(|e| KeyError::Crypto(format!("PKCS#8 encoding: {e}")))
    }

    /// The encrypted PEM cosign writes (`ENCRYPTED SIGSTORE PRIVATE KEY`).
    pub fn to_encrypted_pem(&self, password: &[u8]) -> Result<String, KeyError> {
        let envelope = encrypt(&self.to_pkcs8_der()?, password)?;
        Ok(pem_encode(SIGSTORE_PRIVATE_KEY_LABEL, &envelope))
    }
}

/// An ECDSA P-256 public key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKey {
    verifying: VerifyingKey,
}

impl PublicKey {
    /// The verifying key.
    pub fn verifying_key(&self) -> &VerifyingKey {
        &self.verifying
    }

    /// Parses a DER SubjectPublicKeyInfo; `what` names the input in errors.
    pub fn from_spki_der(der: &[u8], what: &str) -> Result<Self, KeyError> {
        let info = p256::pkcs8::spki::SubjectPublicKeyInfoRef::from_der(der).map_err(|e| {
            KeyError::Der {
                what: what.to_string(),
                reason: e.to_string(),
            }
        })?;
        if !is_p256(info.algorithm.oid, info.algorithm.parameters) {
            return Err(KeyError::Algorithm {
                what: what.to_string(),
                algorithm: algorithm_name(info.algorithm.oid, info.algorithm.parameters),
            });
        }
        let verifying = VerifyingKey::from_public_key_der(der).map_err(|e| KeyError::Der {
            what: what.to_string(),
            reason: e.to_string(),
        })?;
        Ok(PublicKey { verifying })
    }

    /// Parses a PEM `PUBLIC KEY` block.
    pub fn from_pem(text: &str, what: &str) -> Result<Self, KeyError> {
        let block = pem_decode(text, what)?;
        if block.label != PUBLIC_KEY_LABEL {
            return Err(KeyError::Label {
                what: what.to_string(),
                found: block.label,
                expected: format!("{PUBLIC_KEY_LABEL:?}"),
            });
        }
        Self::from_spki_der(&block.contents, what)
    }

    /// Reads a PEM public key file.
    pub fn read(path: &Path) -> Result<Self, KeyError> {
        let what = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| KeyError::Io {
            path: what.clone(),
            source,
        })?;
        Self::from_pem(&text, &what)
    }

    /// The DER SubjectPublicKeyInfo.
    pub fn to_spki_der(&self) -> Result<Vec<u8>, KeyError> {
        self.verifying
            .to_public_key_der()
            .map(|d| d.as_bytes().to_vec())
            .map_err(|e| KeyError::Crypto(format!("SPKI encoding: {e}")))
    }

    /// The PEM `PUBLIC KEY` block cosign writes.
    pub fn to_pem(&self) -> Result<String, KeyError> {
        Ok(pem_encode(PUBLIC_KEY_LABEL, &self.to_spki_der()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encrypted_key_round_trips_and_rejects_wrong_password() {
        let key = PrivateKey::generate().expect("generate");
        let pem = key.to_encrypted_pem(b"hunter2").expect("encrypt");
        assert!(pem.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"));
        let back = PrivateKey::from_encrypted_pem(&pem, b"hunter2", "k").expect("decrypt");
        assert_eq!(back.public_key(), key.public_key());
        let err = PrivateKey::from_encrypted_pem(&pem, b"wrong", "k").expect_err("wrong password");
        assert!(matches!(err, KeyError::WrongPassword { .. }), "{err}");
    }

    #[test]
    fn envelope_has_cosign_field_names() {
        let env = encrypt(b"secret", b"pw").expect("encrypt");
        let v: serde_json::Value = serde_json::from_slice(&env).expect("json");
        assert_eq!(v["kdf"]["name"], "scrypt");
        assert_eq!(v["kdf"]["params"]["N"], 32768);
        assert_eq!(v["kdf"]["params"]["r"], 8);
        assert_eq!(v["kdf"]["params"]["p"], 1);
        assert_eq!(v["cipher"]["name"], "nacl/secretbox");
        assert_eq!(
            BASE64
                .decode(v["kdf"]["salt"].as_str().expect("salt"))
                .expect("b64")
                .len(),
            32
        );
        assert_eq!(
            BASE64
                .decode(v["cipher"]["nonce"].as_str().expect("nonce"))
                .expect("b64")
                .len(),
            24
        );
        // secretbox adds a 16-byte Poly1305 tag.
        assert_eq!(
            BASE64
                .decode(v["ciphertext"].as_str().expect("ct"))
                .expect("b64")
                .len(),
            22
        );
    }

    #[test]
    fn truncated_pem_is_reported() {
        let key = PrivateKey::generate().expect("generate");
        let pem = key.to_encrypted_pem(b"pw").expect("encrypt");
        let cut = &pem[..pem.len() / 2];
        let err = PrivateKey::from_encrypted_pem(cut, b"pw", "cosign.key").expect_err("truncated");
        assert!(err.to_string().contains("truncated"), "{err}");
    }

    #[test]
    fn public_key_round_trips() {
        let key = PrivateKey::generate().expect("generate");
        let pem = key.public_key().to_pem().expect("pem");
        let back = PublicKey::from_pem(&pem, "cosign.pub").expect("parse");
        assert_eq!(back, key.public_key());
    }

    #[test]
    fn ed25519_public_key_is_rejected_by_name() {
        // SPKI of an Ed25519 key (RFC 8410 example).
        let pem = "-----BEGIN PUBLIC KEY-----\n\
                   MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n\
                   -----END PUBLIC KEY-----\n";
        let err = PublicKey::from_pem(pem, "ed.pub").expect_err("ed25519");
        assert!(err.to_string().contains("Ed25519"), "{err}");
    }
}
