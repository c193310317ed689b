//! Public keys and signature checks (ECDSA P-256/P-384/P-521, RSA PKCS#1
//! v1.5 and PSS, Ed25519), through aws-lc-rs: the TLS stack's crypto
//! library, already linked.

use aws_lc_rs::digest::{self, Digest};
use aws_lc_rs::signature::{self as sig, UnparsedPublicKey, VerificationAlgorithm};

use super::der::{self, Reader};

/// A hash function a signature uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hash {
    Sha256,
    Sha384,
    Sha512,
}

impl Hash {
    fn algorithm(self) -> &'static digest::Algorithm {
        match self {
            Hash::Sha256 => &digest::SHA256,
            Hash::Sha384 => &digest::SHA384,
            Hash::Sha512 => &digest::SHA512,
        }
    }

    /// `data` hashed.
    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        digest::digest(self.algorithm(), data).as_ref().to_vec()
    }
}

/// SHA-256 of `data`.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    let d = digest::digest(&digest::SHA256, data);
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// What a signature was made over: the message, or (for an artifact given
/// by digest) only its hash.
#[derive(Clone, Copy, Debug)]
pub enum Signed<'a> {
    Message(&'a [u8]),
    Prehashed(Hash, &'a [u8]),
}

/// A signature that does not verify (or a key and scheme that do not fit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadSignature;

/// The kind of a public key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    P256,
    P384,
    P521,
    Rsa,
    Ed25519,
}

/// How a signature is computed, from an X.509 or CMS algorithm identifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    Ecdsa(Hash),
    RsaPkcs1(Hash),
    RsaPss(Hash),
    Ed25519,
}

impl Scheme {
    /// The scheme of a signature AlgorithmIdentifier (its DER content).
    pub fn from_algorithm_identifier(content: &[u8]) -> Option<Scheme> {
        let mut r = Reader::new(content);
        let oid = der::oid_string(r.expect(der::OID)?.content)?;
        Some(match oid.as_str() {
            "1.2.840.10045.4.3.2" => Scheme::Ecdsa(Hash::Sha256),
            "1.2.840.10045.4.3.3" => Scheme::Ecdsa(Hash::Sha384),
            "1.2.840.10045.4.3.4" => Scheme::Ecdsa(Hash::Sha512),
            "1.2.840.113549.1.1.11" => Scheme::RsaPkcs1(Hash::Sha256),
            "1.2.840.113549.1.1.12" => Scheme::RsaPkcs1(Hash::Sha384),
            "1.2.840.113549.1.1.13" => Scheme::RsaPkcs1(Hash::Sha512),
            "1.2.840.113549.1.1.10" => Scheme::RsaPss(pss_hash(r.next_tlv())?),
            "1.3.101.112" => Scheme::Ed25519,
            _ => return None,
        })
    }
}

/// The hash of RSASSA-PSS parameters (`[0] hashAlgorithm`; SHA-1, the
/// default, is not accepted).
fn pss_hash(params: Option<der::Tlv<'_>>) -> Option<Hash> {
    let params = params?.expect(der::SEQUENCE)?;
    let hash_alg = Reader::new(params).expect(0xa0)?;
    let alg = hash_alg.children().expect(der::SEQUENCE)?;
    let oid = der::oid_string(alg.children().expect(der::OID)?.content)?;
    hash_of_oid(&oid)
}

/// The hash of a digest-algorithm OID.
pub fn hash_of_oid(oid: &str) -> Option<Hash> {
    match oid {
        "2.16.840.1.101.3.4.2.1" => Some(Hash::Sha256),
        "2.16.840.1.101.3.4.2.2" => Some(Hash::Sha384),
        "2.16.840.1.101.3.4.2.3" => Some(Hash::Sha512),
        _ => None,
    }
}

/// A public key from its DER SubjectPublicKeyInfo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKey {
    /// The whole SubjectPublicKeyInfo (what log IDs and key hints hash).
    pub spki: Vec<u8>,
    /// Its algorithm.
    pub kind: KeyKind,
    /// The key itself: the EC point, the RSAPublicKey or the Ed25519 bytes.
    key: Vec<u8>,
}

impl PublicKey {
    /// Parses a DER SubjectPublicKeyInfo.
    pub fn from_spki(spki: &[u8]) -> Result<PublicKey, String> {
        let bad = || "public key is not a DER SubjectPublicKeyInfo".to_string();
        let outer = der::parse_exact(spki).ok_or_else(bad)?;
        let mut r = outer.children();
        let alg = r.expect(der::SEQUENCE).ok_or_else(bad)?;
        let bits = r.expect(der::BIT_STRING).ok_or_else(bad)?.content;
        let (unused, key) = bits.split_first().ok_or_else(bad)?;
        if *unused != 0 || !r.is_empty() {
            return Err(bad());
        }
        let mut a = alg.children();
        let oid = der::oid_string(a.expect(der::OID).ok_or_else(bad)?.content).ok_or_else(bad)?;
        let kind = match oid.as_str() {
            "1.2.840.10045.2.1" => {
                let curve = a
                    .expect(der::OID)
                    .and_then(|t| der::oid_string(t.content))
                    .ok_or_else(bad)?;
                match curve.as_str() {
                    "1.2.840.10045.3.1.7" => KeyKind::P256,
                    "1.3.132.0.34" => KeyKind::P384,
                    "1.3.132.0.35" => KeyKind::P521,
                    other => return Err(format!("unsupported elliptic curve {other}")),
                }
            }
            "1.2.840.113549.1.1.1" => KeyKind::Rsa,
            "1.3.101.112" => KeyKind::Ed25519,
            other => return Err(format!("unsupported public key algorithm {other}")),
        };
        Ok(PublicKey {
            spki: spki.to_vec(),
            kind,
            key: key.to_vec(),
        })
    }

    /// Parses a PEM `PUBLIC KEY`.
    pub fn from_pem(pem: &str) -> Result<PublicKey, String> {
        let der = pem_blocks(pem, "PUBLIC KEY")
            .into_iter()
            .next()
            .ok_or("no PEM PUBLIC KEY block")?;
        PublicKey::from_spki(&der)
    }

    /// The scheme a bare key (no algorithm identifier around the
    /// signature) signs with: ECDSA with the curve's hash, RSA PKCS#1 with
    /// SHA-256, Ed25519.
    pub fn default_scheme(&self) -> Scheme {
        match self.kind {
            KeyKind::P256 => Scheme::Ecdsa(Hash::Sha256),
            KeyKind::P384 => Scheme::Ecdsa(Hash::Sha384),
            KeyKind::P521 => Scheme::Ecdsa(Hash::Sha512),
            KeyKind::Rsa => Scheme::RsaPkcs1(Hash::Sha256),
            KeyKind::Ed25519 => Scheme::Ed25519,
        }
    }

    /// Checks `signature` over `signed` with `scheme`.
    pub fn verify(
        &self,
        scheme: Scheme,
        signed: Signed<'_>,
        signature: &[u8],
    ) -> Result<(), BadSignature> {
        let alg: &'static dyn VerificationAlgorithm = match (self.kind, scheme) {
            (KeyKind::P256, Scheme::Ecdsa(Hash::Sha256)) => &sig::ECDSA_P256_SHA256_ASN1,
            (KeyKind::P256, Scheme::Ecdsa(Hash::Sha384)) => &sig::ECDSA_P256_SHA384_ASN1,
            (KeyKind::P256, Scheme::Ecdsa(Hash::Sha512)) => &sig::ECDSA_P256_SHA512_ASN1,
            (KeyKind::P384, Scheme::Ecdsa(Hash::Sha256)) => &sig::ECDSA_P384_SHA256_ASN1,
            (KeyKind::P384, Scheme::Ecdsa(Hash::Sha384)) => &sig::ECDSA_P384_SHA384_ASN1,
            (KeyKind::P384, Scheme::Ecdsa(Hash::Sha512)) => &sig::ECDSA_P384_SHA512_ASN1,
            (KeyKind::P521, Scheme::Ecdsa(Hash::Sha256)) => &sig::ECDSA_P521_SHA256_ASN1,
            (KeyKind::P521, Scheme::Ecdsa(Hash::Sha384)) => &sig::ECDSA_P521_SHA384_ASN1,
            (KeyKind::P521, Scheme::Ecdsa(Hash::Sha512)) => &sig::ECDSA_P521_SHA512_ASN1,
            (KeyKind::Rsa, Scheme::RsaPkcs1(Hash::Sha256)) => &sig::RSA_PKCS1_2048_8192_SHA256,
            (KeyKind::Rsa, Scheme::RsaPkcs1(Hash::Sha384)) => &sig::RSA_PKCS1_2048_8192_SHA384,
            (KeyKind::Rsa, Scheme::RsaPkcs1(Hash::Sha512)) => &sig::RSA_PKCS1_2048_8192_SHA512,
            (KeyKind::Rsa, Scheme::RsaPss(Hash::Sha256)) => &sig::RSA_PSS_2048_8192_SHA256,
            (KeyKind::Rsa, Scheme::RsaPss(Hash::Sha384)) => &sig::RSA_PSS_2048_8192_SHA384,
            (KeyKind::Rsa, Scheme::RsaPss(Hash::Sha512)) => &sig::RSA_PSS_2048_8192_SHA512,
            (KeyKind::Ed25519, Scheme::Ed25519) => &sig::ED25519,
            _ => return Err(BadSignature),
        };
        let key = UnparsedPublicKey::new(alg, &self.key);
        match signed {
            Signed::Message(m) => key.verify(m, signature).map_err(|_| BadSignature),
            Signed::Prehashed(hash, d) => {
                let scheme_hash = match scheme {
                    Scheme::Ecdsa(h) | Scheme::RsaPkcs1(h) | Scheme::RsaPss(h) => h,
                    Scheme::Ed25519 => return Err(BadSignature),
                };
                if scheme_hash != hash {
                    return Err(BadSignature);
                }
                let d = Digest::import_less_safe(d, hash.algorithm()).map_err(|_| BadSignature)?;
                key.verify_digest(&d, signature).map_err(|_| BadSignature)
            }
        }
    }
}

/// The DER contents of every PEM block labelled `label` in `text`.
pub fn pem_blocks(text: &str, label: &str) -> Vec<Vec<u8>> {
    use base64::Engine as _;
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(&begin) {
        let body_start = start + begin.len();
        let Some(len) = rest[body_start..].find(&end) else {
            break;
        };
        let body: String = rest[body_start..body_start + len]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(body) {
            out.push(bytes);
        }
        rest = &rest[body_start + len + end.len()..];
    }
    out
}
