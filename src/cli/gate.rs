//! The signature gate's flag (`--require-signature POLICY`, on `index add`,
//! `catalog build` and `catalog mirror`) and `catalog verify`.
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use olm_catalog::oci::RegistryClient;
use olm_catalog::ops::gate::{self, Gate, ImageVerdict};

use super::common::CliReporter;
use super::image::RegistryFlags;
use super::{CmdResult, EXIT_FINDINGS};

/// `--require-signature POLICY`.
#[derive(Args, Clone, Default)]
pub struct SignatureGateArgs {
    /// Verify every bundle image against this signature policy (one or more
    /// ClusterImagePolicy documents) before anything is written; the first
    /// image that does not pass stops the run (exit 1)
    #[arg(long, value_name = "POLICY")]
    pub require_signature: Option<PathBuf>,
    /// trusted_root.json for the policy's keyless authorities, instead of
    /// the built-in Sigstore public-good one
    #[arg(long, value_name = "FILE", requires = "require_signature")]
    pub trusted_root: Option<PathBuf>,
}

impl SignatureGateArgs {
    /// Reads the policy (before anything else is done), if one is given.
    pub fn gate(&self) -> anyhow::Result<Option<Gate>> {
        Ok(self
            .require_signature
            .as_deref()
            .map(|p| Gate::read_with_root(p, self.trusted_root.as_deref()))
            .transpose()?)
    }
}

/// Checks `images` through `client` when `gate` is set: the first image
/// that does not pass is the command's error (exit 1).
pub fn require(
    gate: Option<&Gate>,
    images: &[String],
    client: &RegistryClient,
) -> anyhow::Result<()> {
    if let Some(gate) = gate {
        gate::require(client, gate, images, &CliReporter)?;
    }
    Ok(())
}

/// Output of `catalog verify`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum VerifyOutput {
    /// A table: image, signer, verdict
    Text,
    /// A JSON array of verdicts
    Json,
}

/// `catalog verify`.
#[derive(Args)]
#[command(after_help = "Examples:
  olm-catalog catalog verify catalog/ --policy policy.yaml
  olm-catalog catalog verify index.db --policy policy.yaml -o json
  olm-catalog catalog verify quay.io/me/catalog:v1 --policy policy.yaml

Every bundle image the catalog references (an FBC directory or file, an
SQLite index, or an index or catalog image) is checked against the policy:
a file of ClusterImagePolicy documents (sigstore policy-controller's), of
which spec.images[].glob and spec.authorities[] (key.data, keyless.identities,
static) are read; every policy covering an image must have one authority
that verifies it; an image no policy covers fails. Keyless authorities are
checked offline against the built-in Sigstore public-good trusted root, or
--trusted-root FILE. Prints IMAGE, SIGNER,
VERDICT per image (-o json: the verdicts with digests and reasons). Exit 1
if any image fails.")]
pub struct CatalogVerifyArgs {
    /// The catalog: FBC directory or file, SQLite index, or image
    #[arg(value_name = "CATALOG")]
    pub source: String,
    /// The signature policy (ClusterImagePolicy YAML)
    #[arg(long, value_name = "POLICY")]
    pub policy: PathBuf,
    /// trusted_root.json for the policy's keyless authorities, instead of
    /// the built-in Sigstore public-good one
    #[arg(long, value_name = "FILE")]
    pub trusted_root: Option<PathBuf>,
    /// Report format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "text"
    )]
    pub output: VerifyOutput,
    #[command(flatten)]
    pub registry: RegistryFlags,
}

impl CatalogVerifyArgs {
    pub fn run(self) -> CmdResult {
        let gate = Gate::read_with_root(&self.policy, self.trusted_root.as_deref())?;
        let client = self.registry.client_for(&[])?;
        let opts = gate::CatalogVerifyOptions {
            source: self.source.clone(),
            gate,
        };
        let verdicts = gate::verify_catalog(&opts, &client)?;
        match self.output {
            VerifyOutput::Json => println!("{}", serde_json::to_string_pretty(&verdicts)?),
            VerifyOutput::Text => print!("{}", table(&verdicts)),
        }
        let failed = verdicts.iter().filter(|v| !v.verified).count();
        if verdicts.is_empty() {
            super::common::note(format!("{}: no bundle image", self.source));
        } else {
            super::common::note(format!(
                "{}: {} bundle image(s), {} verified, {failed} not",
                self.source,
                verdicts.len(),
                verdicts.len() - failed
            ));
        }
        Ok(if failed > 0 { EXIT_FINDINGS } else { 0 })
    }
}

/// IMAGE, SIGNER and VERDICT columns, aligned.
fn table(verdicts: &[ImageVerdict]) -> String {
    let rows: Vec<[String; 3]> = verdicts
        .iter()
        .map(|v| {
            [
                v.image.clone(),
                v.signer.clone().unwrap_or_else(|| "-".into()),
                if v.verified {
                    "verified".to_string()
                } else {
                    format!("FAILED: {}", v.reason.as_deref().unwrap_or_default())
                },
            ]
        })
        .collect();
    let header = ["IMAGE".to_string(), "SIGNER".into(), "VERDICT".into()];
    let width = |i: usize| {
        rows.iter()
            .chain(std::iter::once(&header))
            .map(|r| r[i].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (w0, w1) = (width(0), width(1));
    let mut out = String::new();
    for r in std::iter::once(&header).chain(rows.iter()) {
        out.push_str(&format!("{:<w0$}  {:<w1$}  {}\n", r[0], r[1], r[2]));
    }
    out
}
