//! RFC 3161 timestamp tokens: a timestamp authority's CMS signature over
//! the hash of the bundle's signature and a time. A verified token gives a
//! trusted signing time (Rekor v2 entries have none of their own).

use super::crypto::{self, Hash, Scheme, Signed};
use super::der::{self, Reader, Tlv};
use super::trust_root::{CertificateAuthority, TrustedRoot};
use super::x509::{Certificate, EKU_TIME_STAMPING};

const OID_SIGNED_DATA: &str = "1.2.840.113549.1.7.2";
const OID_TST_INFO: &str = "1.2.840.113549.1.9.16.1.4";
const OID_MESSAGE_DIGEST: &str = "1.2.840.113549.1.9.4";

struct Token<'a> {
    tst_info: &'a [u8],
    certificates: Vec<Certificate>,
    /// The signer's issuer Name and serial number.
    sid: (&'a [u8], &'a [u8]),
    digest_hash: Hash,
    signed_attrs: Tlv<'a>,
    signature_alg: &'a [u8],
    signature: &'a [u8],
}

fn oid(t: Option<Tlv<'_>>) -> Option<String> {
    der::oid_string(t?.expect(der::OID)?)
}

fn algorithm_hash(alg: Tlv<'_>) -> Option<Hash> {
    crypto::hash_of_oid(&oid(alg.children().next_tlv())?)
}

fn parse_token(bytes: &[u8]) -> Option<Token<'_>> {
    let outer = der::parse_exact(bytes)?.expect(der::SEQUENCE)?;
    let mut ci = Reader::new(outer);
    // A whole TimeStampResp (what sigstore clients store): its status
    // must be granted (0) or granted with modifications (1), and the token
    // follows.
    if ci.peek()?.tag == der::SEQUENCE {
        let status = ci.expect(der::SEQUENCE)?;
        let code = status.children().expect(der::INTEGER)?.content;
        if code != [0] && code != [1] {
            return None;
        }
        ci = ci.expect(der::SEQUENCE)?.children();
    }
    if oid(ci.next_tlv())? != OID_SIGNED_DATA {
        return None;
    }
    let sd = ci.expect(0xa0)?.children().expect(der::SEQUENCE)?;
    let mut sd = sd.children();
    sd.expect(der::INTEGER)?;
    sd.expect(der::SET)?;
    let encap = sd.expect(der::SEQUENCE)?;
    let mut encap = encap.children();
    if oid(encap.next_tlv())? != OID_TST_INFO {
        return None;
    }
    let tst_info = encap
        .expect(0xa0)?
        .children()
        .expect(der::OCTET_STRING)?
        .content;
    let mut certificates = Vec::new();
    if let Some(certs) = sd.optional(0xa0) {
        let mut c = certs.children();
        while let Some(cert) = c.next_tlv() {
            certificates.push(Certificate::from_der(cert.raw).ok()?);
        }
    }
    sd.optional(0xa1);
    let infos = sd.expect(der::SET)?;
    let mut infos = infos.children();
    let si = infos.expect(der::SEQUENCE)?;
    let mut si = si.children();
    si.expect(der::INTEGER)?;
    let sid = si.expect(der::SEQUENCE)?;
    let mut sid = sid.children();
    let sid_issuer = sid.expect(der::SEQUENCE)?.raw;
    let sid_serial = sid.expect(der::INTEGER)?.content;
    let digest_hash = algorithm_hash(si.expect(der::SEQUENCE)?)?;
    let signed_attrs = si.expect(0xa0)?;
    let signature_alg = si.expect(der::SEQUENCE)?.content;
    let signature = si.expect(der::OCTET_STRING)?.content;
    Some(Token {
        tst_info,
        certificates,
        sid: (sid_issuer, sid_serial),
        digest_hash,
        signed_attrs,
        signature_alg,
        signature,
    })
}

/// The messageDigest signed attribute.
fn message_digest<'a>(attrs: &Tlv<'a>) -> Option<&'a [u8]> {
    let mut r = attrs.children();
    while let Some(attr) = r.next_tlv() {
        let mut a = attr.children();
        if oid(a.next_tlv())? == OID_MESSAGE_DIGEST {
            return a
                .expect(der::SET)?
                .children()
                .expect(der::OCTET_STRING)
                .map(|t| t.content);
        }
    }
    None
}

/// (hash, hashed message, genTime) of a TSTInfo.
fn parse_tst_info(bytes: &[u8]) -> Option<(Hash, &[u8], i64)> {
    let tst = der::parse_exact(bytes)?.expect(der::SEQUENCE)?;
    let mut r = Reader::new(tst);
    r.expect(der::INTEGER)?;
    r.expect(der::OID)?;
    let imprint = r.expect(der::SEQUENCE)?;
    let mut i = imprint.children();
    let hash = algorithm_hash(i.expect(der::SEQUENCE)?)?;
    let hashed = i.expect(der::OCTET_STRING)?.content;
    r.expect(der::INTEGER)?;
    let time = der::time(&r.expect(der::GENERALIZED_TIME)?)?;
    Some((hash, hashed, time))
}

/// The chain from `signer` through the authority's certificates to its
/// root, checked at `time`.
fn chains_to(signer: &Certificate, ta: &CertificateAuthority, time: i64) -> Result<(), String> {
    let mut path: Vec<&Certificate> = vec![signer];
    for c in &ta.chain {
        if c != signer {
            path.push(c);
        }
    }
    for pair in path.windows(2) {
        if !pair[0].signed_by(pair[1]) {
            return Err(
                "the timestamp's signing certificate does not chain to the authority".into(),
            );
        }
    }
    let root = path[path.len() - 1];
    if !root.is_self_signed() {
        return Err("the timestamp authority's chain does not end at a root".into());
    }
    if !path.iter().all(|c| c.valid_at(time)) {
        return Err("the timestamp is outside its authority's certificate validity".into());
    }
    Ok(())
}

/// Whether `token` parses as a timestamp response or token (a bundle with
/// one that does not is malformed, as sigstore-python says).
pub fn is_well_formed(token: &[u8]) -> bool {
    parse_token(token).is_some_and(|t| parse_tst_info(t.tst_info).is_some())
}

/// Verifies one token over `signature` (the bundle's signature bytes) and
/// returns the time it vouches for.
pub fn verify_timestamp(token: &[u8], signature: &[u8], root: &TrustedRoot) -> Result<i64, String> {
    let t = parse_token(token).ok_or("an RFC 3161 timestamp is malformed")?;
    let (hash, hashed, time) =
        parse_tst_info(t.tst_info).ok_or("an RFC 3161 timestamp's TSTInfo is malformed")?;
    if hash.digest(signature) != hashed {
        return Err("an RFC 3161 timestamp is not over this bundle's signature".into());
    }
    let md =
        message_digest(&t.signed_attrs).ok_or("an RFC 3161 timestamp has no message digest")?;
    if t.digest_hash.digest(t.tst_info) != md {
        return Err("an RFC 3161 timestamp's message digest does not match its TSTInfo".into());
    }
    // What is signed is the signed attributes as a SET (tag 0x31), not [0].
    let signed_attrs = der::encode(der::SET, t.signed_attrs.content);
    let mut reasons = Vec::new();
    for ta in &root.timestamp_authorities {
        let signer = t
            .certificates
            .iter()
            .chain(ta.chain.iter())
            .find(|c| c.issuer == t.sid.0 && c.serial == t.sid.1);
        let Some(signer) = signer else {
            reasons.push("the timestamp was signed by no trusted timestamp authority".to_string());
            continue;
        };
        if let Err(e) = chains_to(signer, ta, time) {
            reasons.push(e);
            continue;
        }
        if !ta.validity.contains(time) {
            reasons.push(
                "the timestamp is outside its authority's validity in the trusted root".into(),
            );
            continue;
        }
        if signer
            .extended_key_usage()
            .is_some_and(|eku| !eku.iter().any(|e| e == EKU_TIME_STAMPING))
        {
            reasons.push("the timestamp's signing certificate is not for time stamping".into());
            continue;
        }
        let Ok(key) = &signer.public_key else {
            reasons.push("the timestamp's signing key is not supported".into());
            continue;
        };
        let scheme =
            Scheme::from_algorithm_identifier(t.signature_alg).unwrap_or_else(|| {
                match key.default_scheme() {
                    Scheme::Ecdsa(_) => Scheme::Ecdsa(t.digest_hash),
                    Scheme::RsaPkcs1(_) => Scheme::RsaPkcs1(t.digest_hash),
                    other => other,
                }
            });
        if key
            .verify(scheme, Signed::Message(&signed_attrs), t.signature)
            .is_ok()
        {
            return Ok(time);
        }
        reasons.push("an RFC 3161 timestamp's signature does not verify".into());
    }
    Err(reasons
        .into_iter()
        .next()
        .unwrap_or_else(|| "the trusted root has no timestamp authority".into()))
}
