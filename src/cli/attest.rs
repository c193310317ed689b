//! `attest` and `verify-attestation`: cosign-compatible in-toto attestations.
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use olm_catalog::ops;
use olm_catalog::sign::password::read_password;

use super::image::RegistryFlags;
use super::sign::{sign_format, FormatArg};
use super::{CmdResult, EXIT_FINDINGS};

/// `attest`: attach a signed in-toto attestation to an image.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  \
COSIGN_PASSWORD=... olm-catalog attest 127.0.0.1:5000/op/etcd-bundle:v0.9.4 --key release.key --predicate provenance.json --type slsaprovenance\n  \
olm-catalog attest quay.io/me/bundle:v1 --key cosign.key --predicate sbom.spdx.json --type spdxjson --new-bundle-format",
    after_long_help = "Attest an image with a cosign key pair, the way `cosign attest --key` does.\n\n\
The reference is resolved to its manifest digest. The predicate file becomes the predicate of an \
in-toto statement (`_type` https://in-toto.io/Statement/v0.1, one subject: the repository and \
the digest) of the predicate type --type names (cosign's names, or any URI); `custom` wraps the \
file as {\"Data\": TEXT, \"Timestamp\": NOW}, `spdx` keeps it as text, the others must be a JSON \
object. The statement is signed in a DSSE envelope (ECDSA P-256 over its PAE) and stored as \
cosign stores it: by default a layer of the `sha256-<hex>.att` image (media type \
application/vnd.dsse.envelope.v1+json, annotation predicateType), added to those already there; \
with --new-bundle-format (or --format bundle) a Sigstore bundle v0.3 attached as an OCI 1.1 \
referrer. No transparency-log entry is written (cosign's --tlog-upload=false).\n\n\
Examples:\n  \
COSIGN_PASSWORD=... olm-catalog attest 127.0.0.1:5000/op/etcd-bundle:v0.9.4 --key release.key --predicate provenance.json --type slsaprovenance\n  \
olm-catalog attest quay.io/me/bundle:v1 --key cosign.key --predicate sbom.spdx.json --type spdxjson --new-bundle-format"
)]
pub struct AttestArgs {
    /// Image to attest: REGISTRY/REPO[:TAG|@DIGEST] or oci:DIR[:TAG]
    #[arg(value_name = "REF")]
    reference: String,
    /// cosign private key file (ENCRYPTED SIGSTORE/COSIGN PRIVATE KEY)
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// The predicate file
    #[arg(long, value_name = "FILE")]
    predicate: PathBuf,
    /// Predicate type: slsaprovenance|slsaprovenance02|slsaprovenance1|spdx|spdxjson|
    /// cyclonedx|link|vuln|openvex|custom, or a URI
    #[arg(long = "type", value_name = "TYPE", default_value = "custom")]
    kind: String,
    /// Storage format of the attestation [default: legacy]
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// cosign's spelling: --new-bundle-format (=true) is --format bundle
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true,
          default_missing_value = "true")]
    new_bundle_format: Option<bool>,
    #[command(flatten)]
    registry: RegistryFlags,
}

impl AttestArgs {
    /// Runs `attest`.
    pub fn run(self) -> CmdResult {
        let opts = ops::attest::AttestImageOptions {
            reference: self.reference.clone(),
            key: self.key,
            predicate: self.predicate,
            kind: self.kind,
            format: sign_format(self.format, self.new_bundle_format)?,
            registry: self.registry.options()?,
        };
        let outcome = ops::attest::attest(&opts, || read_password(false))?;
        if !super::common::quiet() {
            eprintln!(
                "Attested {} ({}) with predicate type {}; stored at {}",
                self.reference, outcome.digest, outcome.predicate_type, outcome.stored_at
            );
        }
        println!("{}", outcome.stored_at);
        Ok(0)
    }
}

/// What `verify-attestation` prints for each verified attestation.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum AttestationOutput {
    /// The in-toto statement, one JSON line each
    Statement,
    /// The DSSE envelope, one JSON line each (what cosign prints)
    Envelope,
}

/// `verify-attestation`: check an image's attestations.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  \
olm-catalog verify-attestation 127.0.0.1:5000/op/etcd-bundle:v0.9.4 --key release.pub --type slsaprovenance\n  \
olm-catalog verify-attestation quay.io/me/bundle:v1 --key cosign.pub | jq .predicate",
    after_long_help = "Verify an image's attestations with a public key, like `cosign verify-attestation --key`.\n\n\
Every attestation is checked: each layer of the `sha256-<hex>.att` image (envelope digest, DSSE \
payload type, the ECDSA signature over the PAE, an in-toto statement with a subject of this \
image's digest) and every Sigstore bundle attached as an OCI 1.1 referrer that is not an image \
signature. With --type only statements of that predicate type count (cosign's default is \
`custom`; here no --type means every type). The verified statements are printed to standard \
output, one JSON object per line (-o envelope: the DSSE envelopes, as cosign prints them); why \
the others were refused goes to standard error. Exit code 0 if at least one verified, 1 if none \
did, 2 on errors.\n\n\
Examples:\n  \
olm-catalog verify-attestation 127.0.0.1:5000/op/etcd-bundle:v0.9.4 --key release.pub --type slsaprovenance\n  \
olm-catalog verify-attestation quay.io/me/bundle:v1 --key cosign.pub | jq .predicate"
)]
pub struct VerifyAttestationArgs {
    /// Image to verify: REGISTRY/REPO[:TAG|@DIGEST] or oci:DIR[:TAG]
    #[arg(value_name = "REF")]
    reference: String,
    /// PEM public key (ECDSA P-256)
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// Only this predicate type (a cosign name or a URI)
    #[arg(long = "type", value_name = "TYPE")]
    kind: Option<String>,
    /// What to print for each verified attestation
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "statement"
    )]
    output: AttestationOutput,
    #[command(flatten)]
    registry: RegistryFlags,
}

impl VerifyAttestationArgs {
    /// Runs `verify-attestation`.
    pub fn run(self) -> CmdResult {
        let opts = ops::attest::VerifyAttestationOptions {
            reference: self.reference.clone(),
            key: self.key.clone(),
            kind: self.kind.clone(),
            registry: self.registry.options()?,
        };
        let report = ops::attest::verify_attestation(&opts)?;
        for r in &report.rejected {
            eprintln!("rejected {}: {}", r.source, r.reason);
        }
        if report.verified.is_empty() {
            let found = if report.other_types.is_empty() {
                String::new()
            } else {
                format!(
                    " of predicate type {} (found: {})",
                    self.kind.as_deref().unwrap_or_default(),
                    report.other_types.join(", ")
                )
            };
            eprintln!(
                "error: no attestation{found} of {} ({}) verified with {}",
                self.reference,
                report.digest,
                self.key.display()
            );
            return Ok(EXIT_FINDINGS);
        }
        if !super::common::quiet() {
            eprintln!(
                "Verification for {} ({}) --\nThe following checks were performed on each of these attestations:\n  \
- The signatures were verified against the specified public key\n  \
- The statements name this image's digest as a subject\n  \
- No transparency log was checked (not supported)",
                self.reference, report.digest
            );
        }
        for v in &report.verified {
            let value = match self.output {
                AttestationOutput::Statement => &v.statement,
                AttestationOutput::Envelope => &v.envelope,
            };
            println!("{}", serde_json::to_string(value)?);
        }
        Ok(0)
    }
}
