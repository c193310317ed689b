//! X.509 certificates as Sigstore uses them: Fulcio's code-signing leaves,
//! their CA chains, and timestamp authorities' certificates.

use super::crypto::{PublicKey, Scheme, Signed};
use super::der::{self, Reader};

/// Fulcio's OIDC issuer extension (v1: the raw string as the value).
pub const OID_FULCIO_ISSUER_V1: &str = "1.3.6.1.4.1.57264.1.1";
/// Fulcio's OIDC issuer extension (v2: a DER UTF8String).
pub const OID_FULCIO_ISSUER_V2: &str = "1.3.6.1.4.1.57264.1.8";
/// The embedded SCT list of a certificate (RFC 6962).
pub const OID_SCT_LIST: &str = "1.3.6.1.4.1.11129.2.4.2";
const OID_KEY_USAGE: &str = "2.5.29.15";
const OID_SAN: &str = "2.5.29.17";
const OID_BASIC_CONSTRAINTS: &str = "2.5.29.19";
const OID_EKU: &str = "2.5.29.37";
/// Extended key usage: code signing.
pub const EKU_CODE_SIGNING: &str = "1.3.6.1.5.5.7.3.3";
/// Extended key usage: time stamping.
pub const EKU_TIME_STAMPING: &str = "1.3.6.1.5.5.7.3.8";

/// One extension.
#[derive(Clone, Debug)]
pub struct Extension {
    pub oid: String,
    pub critical: bool,
    /// The content of extnValue (the OCTET STRING's bytes).
    pub value: Vec<u8>,
}

/// A parsed certificate; the DER is kept for comparisons and hashing.
#[derive(Clone, Debug)]
pub struct Certificate {
    pub der: Vec<u8>,
    pub tbs: Vec<u8>,
    scheme: Option<Scheme>,
    signature: Vec<u8>,
    pub serial: Vec<u8>,
    /// The raw issuer and subject Names (compared byte for byte).
    pub issuer: Vec<u8>,
    pub subject: Vec<u8>,
    pub not_before: i64,
    pub not_after: i64,
    pub public_key: Result<PublicKey, String>,
    pub extensions: Vec<Extension>,
}

impl PartialEq for Certificate {
    fn eq(&self, other: &Self) -> bool {
        self.der == other.der
    }
}

impl Certificate {
    /// Parses a DER certificate.
    pub fn from_der(bytes: &[u8]) -> Result<Certificate, String> {
        let bad = |what: &str| format!("certificate is not valid DER X.509 ({what})");
        let cert = der::parse_exact(bytes)
            .filter(|t| t.tag == der::SEQUENCE)
            .ok_or_else(|| bad("outer"))?;
        let mut c = cert.children();
        let tbs = c
            .expect(der::SEQUENCE)
            .ok_or_else(|| bad("tbsCertificate"))?;
        let sig_alg = c
            .expect(der::SEQUENCE)
            .ok_or_else(|| bad("signatureAlgorithm"))?;
        let sig_bits = c.expect(der::BIT_STRING).ok_or_else(|| bad("signature"))?;
        if !c.is_empty() {
            return Err(bad("trailing data"));
        }
        let signature = match sig_bits.content.split_first() {
            Some((0, s)) => s.to_vec(),
            _ => return Err(bad("signature bits")),
        };
        let mut t = tbs.children();
        if let Some(version) = t.optional(0xa0) {
            let v = version
                .children()
                .expect(der::INTEGER)
                .ok_or_else(|| bad("version"))?;
            if v.content != [2] {
                return Err(bad("not version 3"));
            }
        }
        let serial = t
            .expect(der::INTEGER)
            .ok_or_else(|| bad("serial"))?
            .content
            .to_vec();
        t.expect(der::SEQUENCE)
            .ok_or_else(|| bad("tbs signature"))?;
        let issuer = t
            .expect(der::SEQUENCE)
            .ok_or_else(|| bad("issuer"))?
            .raw
            .to_vec();
        let validity = t.expect(der::SEQUENCE).ok_or_else(|| bad("validity"))?;
        let mut v = validity.children();
        let not_before = v
            .next_tlv()
            .and_then(|x| der::time(&x))
            .ok_or_else(|| bad("notBefore"))?;
        let not_after = v
            .next_tlv()
            .and_then(|x| der::time(&x))
            .ok_or_else(|| bad("notAfter"))?;
        let subject = t
            .expect(der::SEQUENCE)
            .ok_or_else(|| bad("subject"))?
            .raw
            .to_vec();
        let spki = t
            .expect(der::SEQUENCE)
            .ok_or_else(|| bad("subjectPublicKeyInfo"))?;
        t.optional(0x81);
        t.optional(0x82);
        let mut extensions = Vec::new();
        if let Some(exts) = t.optional(0xa3) {
            let seq = exts
                .children()
                .expect(der::SEQUENCE)
                .ok_or_else(|| bad("extensions"))?;
            let mut e = seq.children();
            while !e.is_empty() {
                let ext = e.expect(der::SEQUENCE).ok_or_else(|| bad("extension"))?;
                let mut x = ext.children();
                let oid = x
                    .expect(der::OID)
                    .and_then(|o| der::oid_string(o.content))
                    .ok_or_else(|| bad("extension id"))?;
                let critical = match x.optional(der::BOOLEAN) {
                    Some(b) => b.content == [0xff],
                    None => false,
                };
                let value = x
                    .expect(der::OCTET_STRING)
                    .ok_or_else(|| bad("extension value"))?;
                if extensions.iter().any(|e: &Extension| e.oid == oid) {
                    return Err(bad("duplicate extension"));
                }
                extensions.push(Extension {
                    oid,
                    critical,
                    value: value.content.to_vec(),
                });
            }
        }
        if !t.is_empty() {
            return Err(bad("trailing tbs data"));
        }
        Ok(Certificate {
            der: bytes.to_vec(),
            tbs: tbs.raw.to_vec(),
            scheme: Scheme::from_algorithm_identifier(sig_alg.content),
            signature,
            serial,
            issuer,
            subject,
            not_before,
            not_after,
            public_key: PublicKey::from_spki(spki.raw),
            extensions,
        })
    }

    /// The extension with `oid`.
    pub fn extension(&self, oid: &str) -> Option<&Extension> {
        self.extensions.iter().find(|e| e.oid == oid)
    }

    /// Whether `time` is within notBefore..=notAfter.
    pub fn valid_at(&self, time: i64) -> bool {
        self.not_before <= time && time <= self.not_after
    }

    /// Whether `issuer` signed this certificate (names chain, signature verifies).
    pub fn signed_by(&self, issuer: &Certificate) -> bool {
        if self.issuer != issuer.subject {
            return false;
        }
        let (Some(scheme), Ok(key)) = (self.scheme, &issuer.public_key) else {
            return false;
        };
        key.verify(scheme, Signed::Message(&self.tbs), &self.signature)
            .is_ok()
    }

    /// Whether this is a CA (basicConstraints cA = TRUE).
    pub fn is_ca(&self) -> bool {
        let Some(ext) = self.extension(OID_BASIC_CONSTRAINTS) else {
            return false;
        };
        let Some(seq) = der::parse_exact(&ext.value).and_then(|t| t.expect(der::SEQUENCE)) else {
            return false;
        };
        matches!(Reader::new(seq).optional(der::BOOLEAN), Some(b) if b.content == [0xff])
    }

    /// Whether the self-signed form holds (subject = issuer, own key verifies).
    pub fn is_self_signed(&self) -> bool {
        self.signed_by(self)
    }

    /// Key usage bit `bit` (0 = digitalSignature, 5 = keyCertSign); `None`
    /// without the extension.
    pub fn key_usage(&self, bit: usize) -> Option<bool> {
        let ext = self.extension(OID_KEY_USAGE)?;
        let bits = der::parse_exact(&ext.value)?.expect(der::BIT_STRING)?;
        let data = bits.get(1..)?;
        Some(
            data.get(bit / 8)
                .is_some_and(|b| b & (0x80 >> (bit % 8)) != 0),
        )
    }

    /// The extended key usage OIDs (`None` without the extension).
    pub fn extended_key_usage(&self) -> Option<Vec<String>> {
        let ext = self.extension(OID_EKU)?;
        let seq = der::parse_exact(&ext.value)?.expect(der::SEQUENCE)?;
        let mut r = Reader::new(seq);
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(der::oid_string(r.expect(der::OID)?.content)?);
        }
        Some(out)
    }

    /// The subject alternative names that are identities: URIs and emails.
    pub fn san_identities(&self) -> Vec<String> {
        let mut out = Vec::new();
        let Some(ext) = self.extension(OID_SAN) else {
            return out;
        };
        let Some(seq) = der::parse_exact(&ext.value).and_then(|t| t.expect(der::SEQUENCE)) else {
            return out;
        };
        let mut r = Reader::new(seq);
        while let Some(name) = r.next_tlv() {
            // [1] rfc822Name, [6] uniformResourceIdentifier (IA5String, implicit).
            if name.tag == 0x81 || name.tag == 0x86 {
                if let Ok(s) = std::str::from_utf8(name.content) {
                    out.push(s.to_string());
                }
            }
        }
        out
    }

    /// The OIDC issuer Fulcio recorded: the v2 extension (a UTF8String),
    /// else the deprecated v1 one (raw bytes).
    pub fn oidc_issuer(&self) -> Option<String> {
        if let Some(ext) = self.extension(OID_FULCIO_ISSUER_V2) {
            let s = der::parse_exact(&ext.value)?.expect(der::UTF8_STRING)?;
            return std::str::from_utf8(s).ok().map(str::to_string);
        }
        let ext = self.extension(OID_FULCIO_ISSUER_V1)?;
        std::str::from_utf8(&ext.value).ok().map(str::to_string)
    }

    /// The TBS of the precertificate the CT log signed: this certificate's
    /// TBS without the SCT list extension (RFC 6962 §3.2).
    pub fn precertificate_tbs(&self) -> Option<Vec<u8>> {
        let tbs = der::parse_exact(&self.tbs)?;
        let mut out = Vec::new();
        let mut r = tbs.children();
        while let Some(field) = r.next_tlv() {
            if field.tag != 0xa3 {
                out.extend_from_slice(field.raw);
                continue;
            }
            let seq = field.children().expect(der::SEQUENCE)?;
            let mut kept = Vec::new();
            let mut e = seq.children();
            while let Some(ext) = e.next_tlv() {
                let oid = ext
                    .children()
                    .expect(der::OID)
                    .and_then(|o| der::oid_string(o.content));
                if oid.as_deref() != Some(OID_SCT_LIST) {
                    kept.extend_from_slice(ext.raw);
                }
            }
            out.extend(der::encode(0xa3, &der::encode(der::SEQUENCE, &kept)));
        }
        Some(der::encode(der::SEQUENCE, &out))
    }
}
