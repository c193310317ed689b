//! Signature policies: which signers an image must carry a signature of,
//! read from sigstore policy-controller's `ClusterImagePolicy` documents.
//!
//! The subset read (docs/signing.md, "Signature policies"):
//!
//! - `spec.images[].glob`: which images a policy covers, matched as
//!   policy-controller's `glob.Match` does (`*` any run of characters but
//!   `/`, `**` any run of characters, matched against the whole reference
//!   with its registry host, and `:latest` added to a reference without tag
//!   or digest);
//! - `spec.authorities[]`: an image passes a policy when one authority
//!   verifies it; `key.data` (a PEM public key, ECDSA P-256), `keyless.
//!   identities[]` (`issuer`/`issuerRegExp` with `subject`/`subjectRegExp`),
//!   and `static.action` (`pass` or `fail`);
//! - every policy whose globs match an image must pass, as in
//!   policy-controller; an image no policy matches fails (policy-controller's
//!   default `no-match-policy: deny`).
//!
//! What would change the meaning of a policy but is not implemented here
//! (`key.kms`, `key.secretRef`, `keyless.url` other than public Fulcio,
//! `keyless.trustRootRef`, `keyless.ca-cert`, `source`, `attestations`,
//! `spec.policy`, `spec.match`, `mode: warn`) is refused when the file is
//! read, never silently ignored.
//!
//! Keyless authorities are checked by a [`KeylessVerifiers`]:
//! [`default_keyless`] verifies against the built-in Sigstore public-good
//! trusted root ([`crate::sign::TrustedRootKeyless`]), offline.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::keys::PublicKey;
use super::Verifier;

/// Why a policy file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file could not be read.
    #[error("reading {path}")]
    Read {
        /// The file.
        path: String,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
    /// The file is not YAML, or a document is not a ClusterImagePolicy
    /// this reader understands.
    #[error("{path}: {reason}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, naming the policy and field.
        reason: String,
    },
}

/// One identity a keyless signature may have: its OIDC issuer and its
/// certificate subject (SAN), each exact or a regular expression.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KeylessIdentity {
    /// `issuer`: the exact OIDC issuer URL.
    pub issuer: Option<String>,
    /// `issuerRegExp`.
    pub issuer_regexp: Option<String>,
    /// `subject`: the exact SAN (URI or email).
    pub subject: Option<String>,
    /// `subjectRegExp`.
    pub subject_regexp: Option<String>,
}

impl std::fmt::Display for KeylessIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let subject = self
            .subject
            .clone()
            .or_else(|| self.subject_regexp.as_ref().map(|r| format!("~{r}")))
            .unwrap_or_default();
        let issuer = self
            .issuer
            .clone()
            .or_else(|| self.issuer_regexp.as_ref().map(|r| format!("~{r}")))
            .unwrap_or_default();
        write!(f, "{subject} ({issuer})")
    }
}

/// How one authority decides.
#[derive(Debug, Clone)]
pub enum AuthorityKind {
    /// A signature by this public key.
    Key(PublicKey),
    /// A keyless signature whose certificate has one of these identities.
    Keyless(Vec<KeylessIdentity>),
    /// Always passes (`true`) or fails.
    Static(bool),
}

/// One entry of `spec.authorities`.
#[derive(Debug, Clone)]
pub struct Authority {
    /// Its name: `name`, else `POLICY/authority-N` as policy-controller
    /// names unnamed ones.
    pub name: String,
    /// What it checks.
    pub kind: AuthorityKind,
}

impl Authority {
    /// Who a signature it accepts comes from, for tables.
    pub fn signer(&self) -> String {
        match &self.kind {
            AuthorityKind::Key(k) => match k.to_spki_der() {
                Ok(der) => {
                    use sha2::Digest as _;
                    let fp = hex::encode(sha2::Sha256::digest(der));
                    format!("key {} (sha256:{})", self.name, &fp[..16])
                }
                Err(_) => format!("key {}", self.name),
            },
            AuthorityKind::Keyless(ids) => format!(
                "keyless {}: {}",
                self.name,
                ids.iter()
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            AuthorityKind::Static(pass) => {
                format!(
                    "static {} ({})",
                    self.name,
                    if *pass { "pass" } else { "fail" }
                )
            }
        }
    }
}

/// One ClusterImagePolicy.
#[derive(Debug, Clone)]
pub struct ImagePolicy {
    /// `metadata.name`.
    pub name: String,
    /// `spec.images[].glob`.
    pub globs: Vec<String>,
    /// `spec.authorities`: any one verifying is enough.
    pub authorities: Vec<Authority>,
}

impl ImagePolicy {
    /// Whether one of its globs matches `image` (a full reference).
    pub fn covers(&self, image: &str) -> bool {
        self.globs.iter().any(|g| glob_matches(g, image))
    }
}

/// Every policy of a file.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Where it was read from, for messages.
    pub source: String,
    /// The ClusterImagePolicy documents, in file order.
    pub policies: Vec<ImagePolicy>,
}

impl Policy {
    /// Reads a file of one or more ClusterImagePolicy YAML documents.
    pub fn read(path: &Path) -> Result<Policy, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Policy::parse(&text, &path.display().to_string())
    }

    /// Parses ClusterImagePolicy YAML (`source` names it in errors).
    pub fn parse(text: &str, source: &str) -> Result<Policy, PolicyError> {
        let invalid = |reason: String| PolicyError::Invalid {
            path: source.to_string(),
            reason,
        };
        let mut policies = Vec::new();
        for (n, doc) in yaml_serde::Deserializer::from_str(text).enumerate() {
            let value: Value = serde::Deserialize::deserialize(doc)
                .map_err(|e| invalid(format!("document {}: {e}", n + 1)))?;
            if value.is_null() {
                continue;
            }
            policies.push(parse_policy(&value, n + 1).map_err(invalid)?);
        }
        if policies.is_empty() {
            return Err(invalid("no ClusterImagePolicy in the file".into()));
        }
        Ok(Policy {
            source: source.to_string(),
            policies,
        })
    }

    /// The policies that cover `image`.
    pub fn matching(&self, image: &str) -> Vec<&ImagePolicy> {
        self.policies.iter().filter(|p| p.covers(image)).collect()
    }
}

fn parse_policy(doc: &Value, n: usize) -> Result<ImagePolicy, String> {
    let kind = doc["kind"].as_str().unwrap_or_default();
    if kind != "ClusterImagePolicy" {
        return Err(format!(
            "document {n}: kind is {kind:?}, not ClusterImagePolicy"
        ));
    }
    let api = doc["apiVersion"].as_str().unwrap_or_default();
    if !api.starts_with("policy.sigstore.dev/") {
        return Err(format!(
            "document {n}: apiVersion is {api:?}, not policy.sigstore.dev/v1beta1 or v1alpha1"
        ));
    }
    let name = doc["metadata"]["name"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| format!("policy-{n}"));
    let spec = &doc["spec"];
    let at = |field: &str| format!("ClusterImagePolicy {name}: spec.{field}");
    for field in ["policy", "match"] {
        if !spec[field].is_null() {
            return Err(format!("{} is not supported", at(field)));
        }
    }
    if let Some(mode) = spec["mode"].as_str() {
        if mode != "enforce" {
            return Err(format!(
                "{} is {mode:?}; only enforce is supported (a gate that only warns would let the image in)",
                at("mode")
            ));
        }
    }
    let globs: Vec<String> = spec["images"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|i| i["glob"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    if globs.is_empty() {
        return Err(format!("{} lists no image glob", at("images")));
    }
    for (i, g) in globs.iter().enumerate() {
        check_glob(g).map_err(|e| format!("{}: {e}", at(&format!("images[{i}].glob"))))?;
    }
    let list = spec["authorities"].as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return Err(format!("{} lists no authority", at("authorities")));
    }
    let mut authorities = Vec::new();
    for (i, a) in list.iter().enumerate() {
        let here = at(&format!("authorities[{i}]"));
        let aname = a["name"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("{name}/authority-{i}"));
        for field in ["source", "attestations", "ctlog", "rfc3161timestamp"] {
            // ctlog and rfc3161timestamp only matter to keyless checks of
            // transparency and time, which key authorities skip here.
            let keyless_ctlog = field == "ctlog" && a["keyless"].is_object();
            if !a[field].is_null() && !keyless_ctlog {
                return Err(format!("{here}.{field} is not supported"));
            }
        }
        let kinds = ["key", "keyless", "static"]
            .iter()
            .filter(|k| !a[**k].is_null())
            .count();
        if kinds != 1 {
            return Err(format!(
                "{here} must have exactly one of key, keyless or static"
            ));
        }
        let kind = if !a["key"].is_null() {
            parse_key(&a["key"], &here)?
        } else if !a["keyless"].is_null() {
            parse_keyless(&a["keyless"], &here)?
        } else {
            match a["static"]["action"].as_str() {
                Some("pass") => AuthorityKind::Static(true),
                Some("fail") => AuthorityKind::Static(false),
                other => {
                    return Err(format!(
                        "{here}.static.action is {other:?}, not pass or fail"
                    ))
                }
            }
        };
        authorities.push(Authority { name: aname, kind });
    }
    Ok(ImagePolicy {
        name,
        globs,
        authorities,
    })
}

fn parse_key(key: &Value, here: &str) -> Result<AuthorityKind, String> {
    for field in ["kms", "secretRef"] {
        if !key[field].is_null() {
            return Err(format!(
                "{here}.key.{field} is not supported: put the PEM public key in key.data"
            ));
        }
    }
    if let Some(h) = key["hashAlgorithm"].as_str() {
        if h != "sha256" {
            return Err(format!(
                "{here}.key.hashAlgorithm is {h:?}; only sha256 is supported"
            ));
        }
    }
    let data = key["data"]
        .as_str()
        .ok_or_else(|| format!("{here}.key.data is missing"))?;
    let public =
        PublicKey::from_pem(data, "key.data").map_err(|e| format!("{here}.key.data: {e}"))?;
    Ok(AuthorityKind::Key(public))
}

fn parse_keyless(keyless: &Value, here: &str) -> Result<AuthorityKind, String> {
    for field in ["trustRootRef", "ca-cert", "insecureIgnoreSCT"] {
        if !keyless[field].is_null() {
            return Err(format!("{here}.keyless.{field} is not supported"));
        }
    }
    if let Some(url) = keyless["url"].as_str() {
        if url.trim_end_matches('/') != "https://fulcio.sigstore.dev" {
            return Err(format!(
                "{here}.keyless.url is {url:?}; only the public-good Fulcio is supported"
            ));
        }
    }
    let list = keyless["identities"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if list.is_empty() {
        return Err(format!("{here}.keyless.identities is empty"));
    }
    let mut ids = Vec::new();
    for (j, id) in list.iter().enumerate() {
        let s = |f: &str| id[f].as_str().map(str::to_string);
        let ident = KeylessIdentity {
            issuer: s("issuer"),
            issuer_regexp: s("issuerRegExp"),
            subject: s("subject"),
            subject_regexp: s("subjectRegExp"),
        };
        for (field, re) in [
            ("issuerRegExp", &ident.issuer_regexp),
            ("subjectRegExp", &ident.subject_regexp),
        ] {
            if let Some(re) = re {
                regex::Regex::new(re).map_err(|e| {
                    format!(
                        "{here}.keyless.identities[{j}].{field} is not a regular expression: {e}"
                    )
                })?;
            }
        }
        let issuer_given = ident.issuer.is_some() || ident.issuer_regexp.is_some();
        let subject_given = ident.subject.is_some() || ident.subject_regexp.is_some();
        if !issuer_given || !subject_given {
            return Err(format!(
                "{here}.keyless.identities[{j}] needs an issuer (or issuerRegExp) and a subject (or subjectRegExp)"
            ));
        }
        ids.push(ident);
    }
    Ok(AuthorityKind::Keyless(ids))
}

/// policy-controller's glob alphabet: letters, digits and `-_:/*.@`.
fn check_glob(glob: &str) -> Result<(), String> {
    if glob.is_empty()
        || !glob
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_:/*.@".contains(c))
    {
        return Err(format!("invalid glob {glob:?}"));
    }
    Ok(())
}

/// Whether `glob` matches `image` as policy-controller's `glob.Match` does:
/// the bare `*` and `*/*` mean Docker Hub's library and user images; `*`
/// matches any run of characters but `/`, `**` any run at all; the image is
/// matched in its full form (registry host, `:latest` when no tag or digest
/// is named), else as written.
pub fn glob_matches(glob: &str, image: &str) -> bool {
    let glob = match glob {
        "*/*" => "index.docker.io/*/*",
        "*" => "index.docker.io/library/*",
        g => g,
    };
    if check_glob(glob).is_err() {
        return false;
    }
    let full = full_name(image);
    matches(glob.as_bytes(), full.as_bytes())
        || (full != image && matches(glob.as_bytes(), image.as_bytes()))
}

/// `image` with its registry host and a tag, as go-containerregistry's
/// `Reference.Name()` spells it.
fn full_name(image: &str) -> String {
    match image.parse::<crate::oci::ImageRef>() {
        // A digest reference keeps its digest; a bare name has `latest`.
        Ok(r @ crate::oci::ImageRef::Registry { .. }) => r.to_string(),
        _ => image.to_string(),
    }
}

fn matches(glob: &[u8], s: &[u8]) -> bool {
    match glob {
        [] => s.is_empty(),
        [b'*', b'*', rest @ ..] => (0..=s.len()).any(|i| matches(rest, &s[i..])),
        [b'*', rest @ ..] => {
            let stop = s.iter().position(|&c| c == b'/').unwrap_or(s.len());
            (0..=stop).any(|i| matches(rest, &s[i..]))
        }
        [c, rest @ ..] => s.first() == Some(c) && matches(rest, &s[1..]),
    }
}

/// Makes the verifier of a keyless authority: how a keyless verifier (Fulcio
/// certificate chain, identity, Rekor entry) is plugged into the gate.
pub trait KeylessVerifiers: Send + Sync {
    /// A [`Verifier`] accepting signatures whose certificate has one of
    /// `identities`, or why none can be made.
    fn verifier(&self, identities: &[KeylessIdentity]) -> Result<Box<dyn Verifier>, String>;
}

/// This build's keyless verifiers: Fulcio certificates, SCTs and Rekor
/// entries checked offline against the built-in Sigstore public-good trusted
/// root (see [`crate::sign::sigstore::TrustedRoot::builtin`]).
pub fn default_keyless() -> Arc<dyn KeylessVerifiers> {
    Arc::new(super::TrustedRootKeyless::public_good())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_policy_controller_does() {
        // Cases of policy-controller's pkg/apis/glob/glob_test.go.
        assert!(glob_matches("*", "ubuntu"));
        assert!(glob_matches("*/*", "myuser/myapp"));
        assert!(!glob_matches("*", "myuser/myapp"));
        assert!(glob_matches(
            "ghcr.io/sigstore/**",
            "ghcr.io/sigstore/cosign/sub:v1"
        ));
        assert!(!glob_matches(
            "ghcr.io/sigstore/*",
            "ghcr.io/sigstore/cosign/sub"
        ));
        assert!(glob_matches(
            "ghcr.io/sigstore/*",
            "ghcr.io/sigstore/cosign"
        ));
        assert!(glob_matches(
            "127.0.0.1:5000/op/**",
            "127.0.0.1:5000/op/etcd-bundle:v1"
        ));
        assert!(glob_matches(
            "index.docker.io/library/ubuntu:**",
            "ubuntu:22.04"
        ));
        assert!(!glob_matches("gcr.io/x/*", "gcr.io/y/z"));
        assert!(!glob_matches("bad glob", "bad glob"));
    }

    #[test]
    fn reads_key_keyless_and_static_authorities_and_refuses_the_rest() {
        let key = PrivateKeyPem::new();
        let text = format!(
            "apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata: {{name: ours}}
spec:
  images: [{{glob: \"127.0.0.1:*/**\"}}]
  authorities:
  - name: release
    key:
      data: |
{}
  - keyless:
      identities:
      - issuer: https://token.actions.githubusercontent.com
        subjectRegExp: ^https://github.com/example/.*$
---
apiVersion: policy.sigstore.dev/v1alpha1
kind: ClusterImagePolicy
metadata: {{name: open}}
spec:
  images: [{{glob: \"**\"}}]
  authorities: [{{static: {{action: pass}}}}]
",
            key.indented(8)
        );
        let p = Policy::parse(&text, "p.yaml").expect("parses");
        assert_eq!(p.policies.len(), 2);
        assert!(matches!(
            p.policies[0].authorities[0].kind,
            AuthorityKind::Key(_)
        ));
        assert!(matches!(
            p.policies[0].authorities[1].kind,
            AuthorityKind::Keyless(_)
        ));
        assert_eq!(p.policies[0].authorities[1].name, "ours/authority-1");
        assert_eq!(p.matching("127.0.0.1:5000/a/b:v1").len(), 2);
        assert_eq!(p.matching("quay.io/a/b:v1").len(), 1);

        for (bad, why) in [
            ("key: {kms: 'awskms:///x'}", "key.kms is not supported"),
            (
                "key: {secretRef: {name: s}}",
                "key.secretRef is not supported",
            ),
            ("keyless: {identities: []}", "identities is empty"),
            (
                "keyless: {identities: [{issuer: x}]}",
                "needs an issuer (or issuerRegExp) and a subject",
            ),
            ("static: {action: maybe}", "not pass or fail"),
            (
                "keyless: {identities: [{issuer: x, subjectRegExp: '('}]}",
                "subjectRegExp is not a regular expression",
            ),
            (
                "attestations: [{name: a}]\n    static: {action: pass}",
                "attestations is not supported",
            ),
        ] {
            let doc = format!(
                "apiVersion: policy.sigstore.dev/v1beta1\nkind: ClusterImagePolicy\nmetadata: {{name: b}}\nspec:\n  images: [{{glob: '**'}}]\n  authorities:\n  - {bad}\n"
            );
            let err = Policy::parse(&doc, "b.yaml").expect_err(bad).to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
        let err = Policy::parse("kind: ConfigMap\n", "c.yaml")
            .expect_err("kind")
            .to_string();
        assert!(err.contains("not ClusterImagePolicy"), "{err}");
        assert!(Policy::parse("", "e.yaml").is_err());
    }

    /// A fresh public key as PEM, for policy files.
    struct PrivateKeyPem(String);

    impl PrivateKeyPem {
        fn new() -> Self {
            let key = crate::sign::PrivateKey::generate().expect("key");
            PrivateKeyPem(key.public_key().to_pem().expect("pem"))
        }
        fn indented(&self, n: usize) -> String {
            self.0
                .lines()
                .map(|l| format!("{}{l}", " ".repeat(n)))
                .collect::<Vec<_>>()
                .join("\n")
        }
    }
}
