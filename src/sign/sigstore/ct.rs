//! Signed certificate timestamps (RFC 6962) embedded in a Fulcio
//! certificate: each is a CT log's signature over the precertificate.

use super::crypto::{sha256, Hash, Scheme, Signed};
use super::der;
use super::trust_root::TrustedRoot;
use super::x509::{Certificate, OID_SCT_LIST};

struct Sct<'a> {
    log_id: &'a [u8],
    timestamp_ms: u64,
    extensions: &'a [u8],
    hash: u8,
    sig_alg: u8,
    signature: &'a [u8],
}

fn take<'a>(buf: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if buf.len() < n {
        return None;
    }
    let (head, tail) = buf.split_at(n);
    *buf = tail;
    Some(head)
}

fn take_u16(buf: &mut &[u8]) -> Option<usize> {
    take(buf, 2).map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
}

fn parse_list(value: &[u8]) -> Option<Vec<Sct<'_>>> {
    let mut list = der::parse_exact(value)?.expect(der::OCTET_STRING)?;
    let total = take_u16(&mut list)?;
    if total != list.len() {
        return None;
    }
    let mut out = Vec::new();
    while !list.is_empty() {
        let len = take_u16(&mut list)?;
        let mut s = take(&mut list, len)?;
        if take(&mut s, 1)? != [0] {
            continue; // only v1 SCTs exist
        }
        let log_id = take(&mut s, 32)?;
        let ts = take(&mut s, 8)?;
        let ext_len = take_u16(&mut s)?;
        let extensions = take(&mut s, ext_len)?;
        let algs = take(&mut s, 2)?;
        let sig_len = take_u16(&mut s)?;
        let signature = take(&mut s, sig_len)?;
        if !s.is_empty() {
            return None;
        }
        out.push(Sct {
            log_id,
            timestamp_ms: u64::from_be_bytes(ts.try_into().ok()?),
            extensions,
            hash: algs[0],
            sig_alg: algs[1],
            signature,
        });
    }
    Some(out)
}

/// Checks that at least one SCT of `leaf` verifies against a CT log of the
/// trusted root (valid at the SCT's time). `issuer` signed the leaf.
pub fn check_scts(
    leaf: &Certificate,
    issuer: &Certificate,
    root: &TrustedRoot,
) -> Result<(), String> {
    let ext = leaf
        .extension(OID_SCT_LIST)
        .ok_or("the certificate has no signed certificate timestamp (SCT)")?;
    let scts = parse_list(&ext.value).ok_or("the certificate's SCT list is malformed")?;
    let tbs = leaf
        .precertificate_tbs()
        .ok_or("the certificate's TBS cannot be rebuilt")?;
    let issuer_spki = match &issuer.public_key {
        Ok(k) => sha256(&k.spki),
        Err(e) => return Err(e.clone()),
    };
    let mut reasons = Vec::new();
    for sct in &scts {
        let Some(log) = root.ctlog(sct.log_id) else {
            reasons.push("an SCT is from a CT log not in the trusted root".to_string());
            continue;
        };
        let Some(key) = &log.key else {
            reasons.push("an SCT's CT log key is not supported".to_string());
            continue;
        };
        if !log.validity.contains((sct.timestamp_ms / 1000) as i64) {
            reasons.push("an SCT is outside its CT log's validity".to_string());
            continue;
        }
        let scheme = match (sct.hash, sct.sig_alg) {
            (4, 3) => Scheme::Ecdsa(Hash::Sha256),
            (5, 3) => Scheme::Ecdsa(Hash::Sha384),
            (4, 1) => Scheme::RsaPkcs1(Hash::Sha256),
            _ => {
                reasons.push("an SCT uses an unsupported signature algorithm".to_string());
                continue;
            }
        };
        let mut signed = vec![0u8, 0u8];
        signed.extend_from_slice(&sct.timestamp_ms.to_be_bytes());
        signed.extend_from_slice(&[0, 1]);
        signed.extend_from_slice(&issuer_spki);
        let len = tbs.len() as u32;
        signed.extend_from_slice(&len.to_be_bytes()[1..]);
        signed.extend_from_slice(&tbs);
        signed.extend_from_slice(&(sct.extensions.len() as u16).to_be_bytes());
        signed.extend_from_slice(sct.extensions);
        if key
            .verify(scheme, Signed::Message(&signed), sct.signature)
            .is_ok()
        {
            return Ok(());
        }
        reasons.push("an SCT's signature does not verify".to_string());
    }
    Err(reasons
        .into_iter()
        .next()
        .unwrap_or_else(|| "the certificate has no signed certificate timestamp (SCT)".into()))
}
