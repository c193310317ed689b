//! `sign` and `verify` commands: cosign-compatible key-pair signatures.
use std::path::PathBuf;

use anyhow::anyhow;
use clap::{Args, Subcommand, ValueEnum};

use olm_catalog::ops;
use olm_catalog::sign::password::read_password;
use olm_catalog::sign::SignFormat;

use super::image::RegistryFlags;
use super::{CmdResult, EXIT_FINDINGS};

/// `sign`: sign an image, or generate a key pair.
#[derive(Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "Examples:\n  olm-catalog sign generate-key-pair --output-prefix release\n  \
COSIGN_PASSWORD=... olm-catalog sign 127.0.0.1:5000/op/etcd-bundle:v0.9.4 --key release.key -a team=olm\n  \
olm-catalog sign oci:build/bundle:v1 --key cosign.key\n\n\
Keyless signing: not supported (needs Fulcio and Rekor); `verify` checks keyless signatures made elsewhere.",
    after_long_help = "Sign an image with a cosign key pair, the way `cosign sign --key` does.\n\n\
The reference is resolved to its manifest digest first (a tag can move; a digest cannot), and \
the signature is a simple-signing payload naming that digest, signed with ECDSA P-256/SHA-256. \
By default it is stored as cosign always has: a `sha256-<hex>.sig` tag in the same repository, \
one layer per signature, added to the signatures already there. `--format bundle` writes \
cosign v3's format instead: a Sigstore bundle attached as an OCI 1.1 referrer; cosign's \
--new-bundle-format says the same (--new-bundle-format=false: legacy). Legacy stays the default \
(unlike cosign v3) because cosign v2, policy-controller releases before bundle support and \
registries without the referrers API read only the `.sig` tag.\n\n\
REF is a registry reference or an OCI layout `oci:DIR[:TAG]`. Registries are reached as by \
every other command: credentials from --username/--password-stdin, REGISTRY_AUTH_FILE, \
$XDG_RUNTIME_DIR/containers/auth.json or ~/.docker/config.json (auths, credHelpers, \
credsStore); HTTPS, with plain HTTP only for loopback registries or with --insecure; \
--ca-file for a private CA; retries on 5xx, 429 and dropped connections. The key password \
comes from COSIGN_PASSWORD, else a prompt, else the next line of stdin.\n\n\
Keyless signing (Fulcio certificates, Rekor transparency log) is not supported: those services \
are not reachable from where olm-catalog is built and tested. No Rekor entry is written or checked \
(like cosign's --tlog-upload=false and --insecure-ignore-tlog).\n\n\
Examples:\n  olm-catalog sign generate-key-pair --output-prefix release\n  \
COSIGN_PASSWORD=... olm-catalog sign 127.0.0.1:5000/op/etcd-bundle:v0.9.4 --key release.key -a team=olm\n  \
olm-catalog sign oci:build/bundle:v1 --key cosign.key\n\n\
Keyless signing: not supported (needs Fulcio and Rekor); `verify` checks keyless signatures made elsewhere."
)]
pub struct SignArgs {
    #[command(subcommand)]
    command: Option<SignCommand>,
    /// Image to sign: REGISTRY/REPO[:TAG|@DIGEST] or oci:DIR[:TAG]
    #[arg(required = true, value_name = "REF")]
    reference: Option<String>,
    /// cosign private key file (ENCRYPTED SIGSTORE/COSIGN PRIVATE KEY)
    #[arg(long, required = true, value_name = "FILE")]
    key: Option<PathBuf>,
    /// Annotation key=value to put in the signed payload (repeatable)
    #[arg(short = 'a', long = "annotations", value_name = "KEY=VALUE")]
    annotations: Vec<String>,
    /// Storage format of the signature [default: legacy]
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// cosign's spelling: --new-bundle-format (=true) is --format bundle,
    /// --new-bundle-format=false is --format legacy
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true")]
    new_bundle_format: Option<bool>,
    #[command(flatten)]
    registry: RegistryFlags,
    /// Old name of --insecure
    #[arg(long, hide = true)]
    allow_insecure_registry: bool,
}

#[derive(Subcommand)]
enum SignCommand {
    /// Generate a cosign-compatible ECDSA P-256 key pair
    #[command(
        long_about = "Generate an ECDSA P-256 key pair in cosign's formats: PREFIX.key, the \
private key encrypted with scrypt + NaCl secretbox (PEM \"ENCRYPTED SIGSTORE PRIVATE KEY\"), and \
PREFIX.pub, the PEM public key. cosign and sigstore-rs read both. The password comes from \
COSIGN_PASSWORD (may be empty), else a prompt on the terminal (asked twice, not echoed), else \
one line of standard input.",
        after_help = "Example:\n  COSIGN_PASSWORD=s3cret olm-catalog sign generate-key-pair --output-prefix release"
    )]
    GenerateKeyPair(GenerateKeyPairArgs),
}

#[derive(Args)]
struct GenerateKeyPairArgs {
    /// Write PREFIX.key and PREFIX.pub
    #[arg(long, default_value = "cosign", value_name = "PREFIX")]
    output_prefix: String,
    /// Overwrite existing files
    #[arg(long)]
    force: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum FormatArg {
    /// `sha256-<hex>.sig` tag with simple-signing layers (cosign before v3)
    Legacy,
    /// Sigstore bundle v0.3 as an OCI 1.1 referrer (cosign v3's default)
    Bundle,
}

/// The storage format of `--format` and cosign's `--new-bundle-format`;
/// the two must not disagree. Legacy stays the default: see docs/signing.md.
pub(super) fn sign_format(
    format: Option<FormatArg>,
    new_bundle_format: Option<bool>,
) -> anyhow::Result<SignFormat> {
    let from_format = match format {
        Some(FormatArg::Bundle) => SignFormat::Bundle,
        _ => SignFormat::Legacy,
    };
    let Some(bundle) = new_bundle_format else {
        return Ok(from_format);
    };
    let from_flag = if bundle {
        SignFormat::Bundle
    } else {
        SignFormat::Legacy
    };
    anyhow::ensure!(
        format.is_none() || from_flag == from_format,
        "--new-bundle-format={bundle} contradicts --format {}",
        match from_format {
            SignFormat::Legacy => "legacy",
            SignFormat::Bundle => "bundle",
        }
    );
    Ok(from_flag)
}

impl SignArgs {
    /// Runs `sign`.
    pub fn run(self) -> CmdResult {
        if let Some(SignCommand::GenerateKeyPair(g)) = self.command {
            return g.run();
        }
        let reference = self.reference.ok_or_else(|| anyhow!("REF is required"))?;
        let mut registry = self.registry;
        registry.insecure |= self.allow_insecure_registry;
        let opts = ops::sign::SignImageOptions {
            reference: reference.clone(),
            key: self.key.ok_or_else(|| anyhow!("--key is required"))?,
            annotations: self.annotations,
            format: sign_format(self.format, self.new_bundle_format)?,
            // The registry password (--password-stdin) is the first line
            // of stdin; a key password not in COSIGN_PASSWORD the next one.
            registry: registry.options()?,
        };
        let outcome = ops::sign::sign(&opts, || read_password(false))?;
        if !super::common::quiet() {
            eprintln!(
                "Signed {reference} ({}); signature stored at {}",
                outcome.digest, outcome.stored_at
            );
        }
        println!("{}", outcome.stored_at);
        Ok(0)
    }
}

impl GenerateKeyPairArgs {
    fn run(self) -> CmdResult {
        let opts = ops::sign::KeyPairOptions {
            output_prefix: self.output_prefix,
            force: self.force,
        };
        let files = ops::sign::generate_key_pair(&opts, || read_password(true))?;
        if !super::common::quiet() {
            eprintln!(
                "Private key written to {}\nPublic key written to {}",
                files.private_key.display(),
                files.public_key.display()
            );
        }
        Ok(0)
    }
}

/// `verify`: check cosign signatures of an image.
#[derive(Args)]
#[command(
    group(clap::ArgGroup::new("signer").required(true).args(["key", "certificate_identity", "certificate_identity_regexp"])),
    after_help = "Examples:\n  olm-catalog verify 127.0.0.1:5000/op/etcd-bundle:v0.9.4 --key release.pub\n  \
olm-catalog verify oci:build/bundle:v1 --key cosign.pub -a team=olm\n  \
olm-catalog verify quay.io/org/bundle:v1 \\\n    \
--certificate-identity https://github.com/org/repo/.github/workflows/release.yml@refs/tags/v1.0.0 \\\n    \
--certificate-oidc-issuer https://token.actions.githubusercontent.com",
    after_long_help = "Verify an image's cosign signatures, like `cosign verify`: with a public key \
(--key), or keyless (--certificate-identity or --certificate-identity-regexp, with \
--certificate-oidc-issuer or --certificate-oidc-issuer-regexp).\n\n\
Every signature is checked: each layer of the `sha256-<hex>.sig` image (cosign before v3) and \
every Sigstore bundle attached as an OCI 1.1 referrer (cosign v3; the `sha256-<hex>` referrers \
tag for registries without the referrers API). A signature counts when it verifies and names \
this image's digest (the simple-signing payload's docker-manifest-digest, or the in-toto \
statement's subject) and carries the -a annotations. With --key, the signature is checked with \
the key (no transparency log is checked). Keyless, offline against the trusted root: the Fulcio \
certificate's chain to a CA valid at signing time, its SCT, code-signing usage, identity (SAN: \
URI or email) and OIDC issuer; the Rekor entry (it records this signature, certificate and \
payload; its signed entry timestamp verifies with the log's key; bundles' inclusion proofs and \
checkpoints too); the integrated time inside the certificate's validity. The trusted root is a \
built-in snapshot of the Sigstore public-good instance's; --trusted-root FILE replaces it.\n\n\
The verified payloads are printed to standard output as a JSON array (keyless ones with the \
signer's Subject and Issuer in `optional`, as cosign prints them; -o json: a report with the \
digest, each signature's source, signer and payload, and the refusals); why each other \
signature was refused goes to standard error. Exit code 0 if at least one signature verified, \
1 if none did (the first reason is named), 2 on usage or I/O errors (unreadable key or trusted \
root, unreachable registry).\n\n\
Examples:\n  olm-catalog verify 127.0.0.1:5000/op/etcd-bundle:v0.9.4 --key release.pub\n  \
olm-catalog verify oci:build/bundle:v1 --key cosign.pub -a team=olm\n  \
olm-catalog verify quay.io/org/bundle:v1 \\\n    \
--certificate-identity https://github.com/org/repo/.github/workflows/release.yml@refs/tags/v1.0.0 \\\n    \
--certificate-oidc-issuer https://token.actions.githubusercontent.com"
)]
pub struct VerifyArgs {
    /// Image to verify: REGISTRY/REPO[:TAG|@DIGEST] or oci:DIR[:TAG]
    #[arg(value_name = "REF")]
    reference: String,
    /// PEM public key (ECDSA P-256)
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// Keyless: the certificate identity (SAN URI or email) that must have signed
    #[arg(long, value_name = "ID", conflicts_with_all = ["key", "certificate_identity_regexp"])]
    certificate_identity: Option<String>,
    /// Keyless: a regular expression the certificate identity must match
    #[arg(long, value_name = "RE", conflicts_with = "key")]
    certificate_identity_regexp: Option<String>,
    /// Keyless: the OIDC issuer of the certificate
    #[arg(long, value_name = "URL", conflicts_with_all = ["key", "certificate_oidc_issuer_regexp"])]
    certificate_oidc_issuer: Option<String>,
    /// Keyless: a regular expression the OIDC issuer must match
    #[arg(long, value_name = "RE", conflicts_with = "key")]
    certificate_oidc_issuer_regexp: Option<String>,
    /// Keyless: trusted_root.json to use instead of the built-in public-good one
    #[arg(long, value_name = "FILE", conflicts_with = "key")]
    trusted_root: Option<PathBuf>,
    /// Annotation key=value every accepted payload must carry (repeatable)
    #[arg(short = 'a', long = "annotations", value_name = "KEY=VALUE")]
    annotations: Vec<String>,
    /// Report format on stdout
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "text"
    )]
    output: VerifyOutput,
    #[command(flatten)]
    registry: RegistryFlags,
    /// Old name of --insecure
    #[arg(long, hide = true)]
    allow_insecure_registry: bool,
}

/// `verify`'s report format.
#[derive(Clone, Copy, ValueEnum)]
enum VerifyOutput {
    /// The verified payloads as a JSON array (what cosign prints)
    Text,
    /// {"verified", "image", "digest", "signatures", "rejected"}
    Json,
}

/// The payload as printed: keyless signatures name their signer in
/// `optional` (`Subject`, `Issuer`), as cosign's output does.
fn printed_payload(v: &olm_catalog::sign::Verified) -> serde_json::Value {
    let mut payload = v.payload.clone();
    if let (Some(signer), Some(obj)) = (&v.signer, payload.as_object_mut()) {
        if obj.contains_key("critical") {
            let optional = obj
                .entry("optional")
                .or_insert_with(|| serde_json::json!({}));
            if optional.is_null() {
                *optional = serde_json::json!({});
            }
            if let Some(o) = optional.as_object_mut() {
                o.insert("Subject".into(), signer.identity.clone().into());
                if let Some(i) = &signer.issuer {
                    o.insert("Issuer".into(), i.clone().into());
                }
            }
        }
    }
    payload
}

impl VerifyArgs {
    /// Runs `verify`.
    pub fn run(self) -> CmdResult {
        use ops::sign::{IdentityArg, ImageSigner};
        let mut registry = self.registry;
        registry.insecure |= self.allow_insecure_registry;
        let pick = |exact: Option<String>, re: Option<String>| {
            exact.map(IdentityArg::Exact).or(re.map(IdentityArg::Regex))
        };
        let signer = match (
            self.key,
            pick(self.certificate_identity, self.certificate_identity_regexp),
        ) {
            (Some(key), None) => ImageSigner::Key(key),
            (None, Some(identity)) => ImageSigner::Identity {
                identity,
                issuer: pick(
                    self.certificate_oidc_issuer,
                    self.certificate_oidc_issuer_regexp,
                ),
                trusted_root: self.trusted_root,
            },
            _ => {
                return Err(anyhow!(
                    "give --key, or --certificate-identity (or --certificate-identity-regexp)"
                ))
            }
        };
        let keyless = matches!(signer, ImageSigner::Identity { .. });
        let who = match &signer {
            ImageSigner::Key(k) => k.display().to_string(),
            ImageSigner::Identity { identity, .. } => match identity {
                IdentityArg::Exact(s) => format!("identity {s}"),
                IdentityArg::Regex(r) => format!("identity /{r}/"),
            },
        };
        let opts = ops::sign::VerifyImageOptions {
            reference: self.reference.clone(),
            signer,
            annotations: self.annotations,
            registry: registry.options()?,
        };
        let report = ops::sign::verify(&opts)?;
        for r in &report.rejected {
            eprintln!("rejected {}: {}", r.source, r.reason);
        }
        if let VerifyOutput::Json = self.output {
            let signatures: Vec<serde_json::Value> = report
                .verified
                .iter()
                .map(|v| serde_json::json!({"source": v.source, "signer": v.signer, "payload": v.payload}))
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({
                    "verified": !report.verified.is_empty(),
                    "image": self.reference,
                    "digest": report.digest,
                    "signatures": signatures,
                    "rejected": report.rejected,
                }))?
            );
        }
        if report.verified.is_empty() {
            // A registry without the referrers API is not a refusal.
            let first = report
                .rejected
                .iter()
                .find(|r| r.source != "referrers")
                .map(|r| format!("{}: {}", r.source, r.reason))
                .unwrap_or_else(|| "no signature found".to_string());
            eprintln!(
                "error: no signature of {} ({}) verified with {who}: {first}",
                self.reference, report.digest,
            );
            return Ok(EXIT_FINDINGS);
        }
        if !super::common::quiet() {
            let checks = if keyless {
                "  - The cosign claims were validated\n  \
- Existence of the claims in the transparency log was verified offline\n  \
- The code-signing certificate was verified using trusted certificate authority certificates"
            } else {
                "  - The cosign claims were validated\n  \
- The signatures were verified against the specified public key\n  \
- No transparency log was checked (not supported with a key)"
            };
            eprintln!(
                "Verification for {} ({}) --\nThe following checks were performed on each of these signatures:\n{checks}",
                self.reference, report.digest
            );
            for v in &report.verified {
                if let Some(s) = &v.signer {
                    eprintln!("Signed by {s} ({})", v.source);
                }
            }
        }
        if let VerifyOutput::Text = self.output {
            let payloads: Vec<serde_json::Value> =
                report.verified.iter().map(printed_payload).collect();
            println!("{}", serde_json::to_string(&payloads)?);
        }
        Ok(0)
    }
}

/// `verify-blob`: check a Sigstore bundle over a file or digest, offline.
#[derive(Args)]
#[command(
    group(clap::ArgGroup::new("signer").required(true).args(["key", "certificate_identity", "certificate_identity_regexp"])),
    after_help = "Examples:\n  olm-catalog verify-blob --bundle a.txt.sigstore.json \\\n    \
--certificate-identity https://github.com/org/repo/.github/workflows/release.yml@refs/tags/v1.0.0 \\\n    \
--certificate-oidc-issuer https://token.actions.githubusercontent.com a.txt\n  \
olm-catalog verify-blob --bundle b.sigstore.json --key cosign.pub sha256:<64 hex digits>",
    after_long_help = "Verify a Sigstore bundle (versions 0.1, 0.2, 0.3) over an artifact, like \
`cosign verify-blob --bundle`: a message signature, or a DSSE envelope holding an in-toto statement \
one of whose subjects is the artifact. Keyless bundles (a Fulcio certificate) are checked against a \
trusted root: the certificate chain to a Fulcio CA valid at signing time, code-signing key usage, \
the identity (SAN: URI or email) and OIDC issuer, an SCT from a trusted CT log, every Rekor entry \
(its body matches the bundle, the signed entry timestamp, the inclusion proof against the signed \
checkpoint) and every RFC 3161 timestamp; the signing time (Rekor integrated time or timestamp) must \
be inside the certificate's validity. Keyed bundles (--key) are checked with the key and their Rekor \
entries.\n\n\
FILE_OR_DIGEST is a path, or `sha256:` and 64 hex digits when no such file exists.\n\n\
The trusted root is a built-in snapshot of the Sigstore public-good instance's trusted_root.json \
(docs/signing.md says where and when it was taken); --trusted-root FILE replaces it (another \
instance, staging, a private deployment). Nothing goes online.\n\n\
Exit code 0 if the bundle verified (the signer is printed), 1 if not (the first reason on \
standard error, and in -o json), 2 on usage or I/O errors.\n\n\
Examples:\n  olm-catalog verify-blob --bundle a.txt.sigstore.json \\\n    \
--certificate-identity https://github.com/org/repo/.github/workflows/release.yml@refs/tags/v1.0.0 \\\n    \
--certificate-oidc-issuer https://token.actions.githubusercontent.com a.txt\n  \
olm-catalog verify-blob --bundle b.sigstore.json --key cosign.pub sha256:<64 hex digits>"
)]
pub struct VerifyBlobArgs {
    /// The Sigstore bundle (JSON)
    #[arg(long, value_name = "FILE")]
    bundle: PathBuf,
    /// PEM public key of a keyed bundle
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// The certificate identity (SAN URI or email) that must have signed
    #[arg(long, value_name = "ID", conflicts_with_all = ["key", "certificate_identity_regexp"])]
    certificate_identity: Option<String>,
    /// A regular expression the certificate identity must match
    #[arg(long, value_name = "RE", conflicts_with = "key")]
    certificate_identity_regexp: Option<String>,
    /// The OIDC issuer of the certificate
    #[arg(long, value_name = "URL", conflicts_with_all = ["key", "certificate_oidc_issuer_regexp"])]
    certificate_oidc_issuer: Option<String>,
    /// A regular expression the OIDC issuer must match
    #[arg(long, value_name = "RE", conflicts_with = "key")]
    certificate_oidc_issuer_regexp: Option<String>,
    /// trusted_root.json to use instead of the built-in public-good one
    #[arg(long, value_name = "FILE")]
    trusted_root: Option<PathBuf>,
    /// Accept a keyed bundle without a transparency log entry (cosign's flag)
    #[arg(long, requires = "key")]
    insecure_ignore_tlog: bool,
    /// Report format on stdout
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "text"
    )]
    output: BlobOutput,
    /// The artifact: a file, or sha256:<64 hex digits>
    #[arg(value_name = "FILE_OR_DIGEST")]
    artifact: String,
}

/// `verify-blob`'s report format.
#[derive(Clone, Copy, ValueEnum)]
enum BlobOutput {
    /// `Verified OK` and the signer; the reason on stderr otherwise
    Text,
    /// {"verified", "reason" or "signer"}
    Json,
}

impl VerifyBlobArgs {
    /// Runs `verify-blob`.
    pub fn run(self) -> CmdResult {
        use ops::sign::IdentityArg;
        let pick = |exact: Option<String>, re: Option<String>| {
            exact.map(IdentityArg::Exact).or(re.map(IdentityArg::Regex))
        };
        let opts = ops::sign::VerifyBlobOptions {
            bundle: self.bundle,
            artifact: self.artifact,
            key: self.key,
            identity: pick(self.certificate_identity, self.certificate_identity_regexp),
            issuer: pick(
                self.certificate_oidc_issuer,
                self.certificate_oidc_issuer_regexp,
            ),
            trusted_root: self.trusted_root,
            insecure_ignore_tlog: self.insecure_ignore_tlog,
        };
        let verdict = ops::sign::verify_blob(&opts)?;
        match self.output {
            BlobOutput::Json => {
                let report = match &verdict {
                    Ok(signer) => serde_json::json!({"verified": true, "signer": signer}),
                    Err(e) => serde_json::json!({"verified": false, "reason": e.to_string()}),
                };
                println!("{}", serde_json::to_string_pretty(&report)?);
            }
            BlobOutput::Text => {
                if let Ok(signer) = &verdict {
                    match (&signer.identity, &signer.issuer) {
                        (Some(id), Some(iss)) => println!("Verified OK: {id} (issuer {iss})"),
                        (Some(id), None) => println!("Verified OK: {id}"),
                        _ => println!("Verified OK"),
                    }
                }
            }
        }
        match verdict {
            Ok(_) => Ok(0),
            Err(e) => {
                eprintln!("error: not verified: {e}");
                Ok(EXIT_FINDINGS)
            }
        }
    }
}
