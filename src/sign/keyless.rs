//! Keyless image signatures: a [`Verifier`] that accepts a signature when
//! its Fulcio certificate has one of the wanted identities and everything
//! around it holds against a trusted root ([`super::sigstore`]: the chain,
//! the SCT, the Rekor entry and its signed time), in both places cosign
//! stores image signatures: a layer of the `sha256-H.sig` image (certificate
//! and Rekor bundle in its annotations) and a Sigstore bundle attached as a
//! referrer.
//!
//! [`TrustedRootKeyless`] makes these verifiers for the keyless authorities
//! of a signature policy ([`super::policy::KeylessVerifiers`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::policy::{KeylessIdentity, KeylessVerifiers};
use super::sigstore::{
    self, Artifact, CosignLayer, Matcher, Policy, SigstoreBundle, TrustedRoot, VerifiedSigner,
    VerifyError,
};
use super::{
    SignerIdentity, Verifier, CERTIFICATE_ANNOTATION, REKOR_BUNDLE_ANNOTATION, RFC3161_ANNOTATION,
};

/// Accepts keyless signatures whose certificate matches one of its
/// identities (SAN and OIDC issuer), verified against its trusted root.
pub struct KeylessVerifier {
    identities: Vec<(Matcher, Option<Matcher>)>,
    root: Arc<TrustedRoot>,
}

impl KeylessVerifier {
    /// A verifier for the identity `identity` issued by `issuer` (any issuer
    /// when `None`), as `cosign verify --certificate-identity[-regexp]
    /// --certificate-oidc-issuer[-regexp]`.
    pub fn new(identity: Matcher, issuer: Option<Matcher>, root: Arc<TrustedRoot>) -> Self {
        KeylessVerifier {
            identities: vec![(identity, issuer)],
            root,
        }
    }

    /// A verifier accepting any of `identities` (a policy's keyless
    /// authority). Fails on an invalid regular expression.
    pub fn for_identities(
        identities: &[KeylessIdentity],
        root: Arc<TrustedRoot>,
    ) -> Result<Self, String> {
        let list = identities
            .iter()
            .map(matchers)
            .collect::<Result<Vec<_>, _>>()?;
        if list.is_empty() {
            return Err("no identity to verify against".into());
        }
        Ok(KeylessVerifier {
            identities: list,
            root,
        })
    }

    /// Runs `check` for each identity: the first that verifies names the
    /// signer; else the first reason.
    fn judge(
        &self,
        check: impl Fn(&Policy) -> Result<VerifiedSigner, VerifyError>,
    ) -> Result<Option<SignerIdentity>, String> {
        let mut first = None;
        for (identity, issuer) in &self.identities {
            let policy = Policy::Identity {
                identity: identity.clone(),
                issuer: issuer.clone(),
            };
            match check(&policy) {
                Ok(signer) => {
                    return Ok(Some(SignerIdentity {
                        identity: signer.identity.unwrap_or_default(),
                        issuer: signer.issuer,
                    }))
                }
                Err(e) => {
                    first.get_or_insert(e.to_string());
                }
            }
        }
        Err(first.unwrap_or_else(|| "no identity to verify against".into()))
    }
}

/// The matchers of one policy identity (`subject`/`subjectRegExp`,
/// `issuer`/`issuerRegExp`).
fn matchers(id: &KeylessIdentity) -> Result<(Matcher, Option<Matcher>), String> {
    let pick = |exact: &Option<String>, re: &Option<String>, what: &str| {
        Ok::<_, String>(match (exact, re) {
            (Some(s), _) => Some(Matcher::Exact(s.clone())),
            (None, Some(r)) => Some(Matcher::Regex(
                regex::Regex::new(r).map_err(|e| format!("{what}RegExp {r:?}: {e}"))?,
            )),
            (None, None) => None,
        })
    };
    let subject = pick(&id.subject, &id.subject_regexp, "subject")?
        .ok_or_else(|| format!("identity {id} has no subject"))?;
    let issuer = pick(&id.issuer, &id.issuer_regexp, "issuer")?;
    Ok((subject, issuer))
}

/// `sha256:` and 64 hex digits as bytes.
fn digest_bytes(digest: &str) -> Option<[u8; 32]> {
    let hex = digest.strip_prefix("sha256:")?;
    let mut out = [0u8; 32];
    hex::decode_to_slice(hex, &mut out).ok().map(|()| out)
}

impl Verifier for KeylessVerifier {
    fn verify(
        &self,
        payload: &[u8],
        signature: &[u8],
        annotations: &BTreeMap<String, String>,
    ) -> Result<Option<SignerIdentity>, String> {
        let get = |k: &str| annotations.get(k).map(String::as_str);
        let layer = CosignLayer {
            signature,
            certificate: get(CERTIFICATE_ANNOTATION),
            rekor_bundle: get(REKOR_BUNDLE_ANNOTATION),
            rfc3161_timestamp: get(RFC3161_ANNOTATION),
        };
        // Parsed once; only the identity differs between the checks.
        let bundle = SigstoreBundle::from_cosign_layer(&layer).map_err(|e| e.to_string())?;
        self.judge(|policy| {
            sigstore::verify_bundle(&bundle, Artifact::Bytes(payload), policy, &self.root)
        })
    }

    fn verify_bundle(
        &self,
        bundle: &[u8],
        digest: &str,
        _pae: &[u8],
        _signature: &[u8],
        _context: &BTreeMap<String, String>,
    ) -> Result<Option<SignerIdentity>, String> {
        let want =
            digest_bytes(digest).ok_or_else(|| format!("{digest} is not a sha256 digest"))?;
        let parsed = SigstoreBundle::parse(bundle).map_err(|e| e.to_string())?;
        // The DSSE statement must have a subject with the image's digest
        // (checked by verify_bundle for an artifact given by digest).
        self.judge(|policy| {
            sigstore::verify_bundle(&parsed, Artifact::Digest(want), policy, &self.root)
        })
    }
}

/// Makes [`KeylessVerifier`]s for a policy's keyless authorities, against
/// one trusted root.
pub struct TrustedRootKeyless {
    root: Arc<TrustedRoot>,
}

impl TrustedRootKeyless {
    /// Keyless verifiers against `root`.
    pub fn new(root: TrustedRoot) -> Self {
        TrustedRootKeyless {
            root: Arc::new(root),
        }
    }

    /// Keyless verifiers against the built-in Sigstore public-good root.
    pub fn public_good() -> Self {
        Self::new(TrustedRoot::builtin())
    }
}

impl KeylessVerifiers for TrustedRootKeyless {
    fn verifier(&self, identities: &[KeylessIdentity]) -> Result<Box<dyn Verifier>, String> {
        Ok(Box::new(KeylessVerifier::for_identities(
            identities,
            self.root.clone(),
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layer_without_certificate_or_bundle_is_refused_with_a_reason() {
        let v = KeylessVerifier::new(
            Matcher::Exact("me@example.com".into()),
            None,
            Arc::new(TrustedRoot::builtin()),
        );
        let err = v
            .verify(b"{}", b"sig", &BTreeMap::new())
            .expect_err("no certificate");
        assert!(err.contains("not keyless"), "{err}");
        let ann: BTreeMap<String, String> =
            [(CERTIFICATE_ANNOTATION.to_string(), "garbage".to_string())].into();
        let err = v.verify(b"{}", b"sig", &ann).expect_err("bad certificate");
        assert!(err.contains("not a PEM certificate"), "{err}");
        let err = v
            .verify_bundle(b"{", "sha256:00", b"", b"", &BTreeMap::new())
            .expect_err("bad digest");
        assert!(err.contains("not a sha256 digest"), "{err}");
    }

    #[test]
    fn policy_identities_become_matchers_and_bad_regexps_are_named() {
        let id = |s: Option<&str>, sr: Option<&str>| KeylessIdentity {
            issuer: Some("https://issuer".into()),
            issuer_regexp: None,
            subject: s.map(str::to_string),
            subject_regexp: sr.map(str::to_string),
        };
        let root = Arc::new(TrustedRoot::builtin());
        assert!(KeylessVerifier::for_identities(&[id(Some("a"), None)], root.clone()).is_ok());
        let err = KeylessVerifier::for_identities(&[id(None, Some("("))], root.clone())
            .err()
            .expect("bad regexp");
        assert!(err.contains("subjectRegExp"), "{err}");
        assert!(KeylessVerifier::for_identities(&[], root).is_err());
    }
}
