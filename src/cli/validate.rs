//! `bundle validate` command.
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Args;

use super::{CmdResult, EXIT_FINDINGS};
use olm_catalog::diag::{self, Format};
use olm_catalog::validate::{self, select, Options};

/// `bundle validate`.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
olm-catalog bundle validate ./bundle\n  \
olm-catalog bundle validate operators/*/*             # many bundles, checked in parallel\n  \
olm-catalog bundle validate ./bundle --select-optional suite=operatorframework\n  \
olm-catalog bundle validate ./bundle --select-optional name=alpha-deprecated-apis --k8s-version 1.25\n  \
olm-catalog bundle validate ./bundle --output sarif > findings.sarif\n\n\
Exit codes: 0 no errors (warnings allowed), 1 errors found, 2 usage or I/O failure \
(a path that does not exist). Paths that are not bundles (files, folders without \
manifests/ or metadata/) are reported as warnings and skipped.")]
pub struct ValidateArgs {
    /// Bundle directories (each holding manifests/ and metadata/)
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Run optional suites picked by a label selector, as operator-sdk does:
    /// `name=operatorhub`, `name=good-practices`, `name=alpha-deprecated-apis`,
    /// `name=standardcategories`, `name=standardcapabilities`, or
    /// `suite=operatorframework` for all of them. Repeatable (ORed).
    #[arg(long = "select-optional", value_name = "SELECTOR")]
    pub select_optional: Vec<String>,
    /// Kubernetes version the bundle targets, for alpha-deprecated-apis (e.g. 1.25)
    #[arg(long = "k8s-version", value_name = "VERSION")]
    pub k8s_version: Option<String>,
    /// Output format
    #[arg(long, short = 'o', value_enum, default_value = "human")]
    pub output: Format,
    /// Color in human output: auto (only on a terminal, unless NO_COLOR is set), always, never
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
}

/// When to color human output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Checks `--k8s-version`: `1.25`, `1.25.3` or `v1.25.3`.
fn check_k8s_version(v: &str) -> anyhow::Result<()> {
    let t = v.strip_prefix('v').unwrap_or(v);
    let parts: Vec<&str> = t.split('.').collect();
    if (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        Ok(())
    } else {
        anyhow::bail!("--k8s-version `{v}`: expected a Kubernetes version such as 1.25 or 1.25.3")
    }
}

impl ValidateArgs {
    /// Validates every directory and prints the findings.
    pub fn run(self) -> CmdResult {
        let optional =
            select::select_optional(&self.select_optional).map_err(anyhow::Error::msg)?;
        if let Some(v) = &self.k8s_version {
            check_k8s_version(v)?;
        }
        let options = Options {
            optional,
            k8s_version: self.k8s_version.clone(),
        };
        let missing: Vec<&PathBuf> = self.dirs.iter().filter(|d| !d.exists()).collect();
        let reports = validate::validate_dirs(&self.dirs, &options);
        let text = match self.output {
            Format::Human => {
                let color = match self.color {
                    ColorChoice::Always => true,
                    ColorChoice::Never => false,
                    ColorChoice::Auto => {
                        std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
                    }
                };
                diag::render_human(&reports, color)
            }
            Format::Json => diag::render_json(&reports),
            Format::Sarif => diag::render_sarif(&reports, &validate::rules::summary),
        };
        let mut stdout = std::io::stdout().lock();
        if let Err(e) = stdout
            .write_all(text.as_bytes())
            .and_then(|_| stdout.flush())
        {
            // A closed pipe (`| head`) is not a failure of the validation.
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                anyhow::bail!("writing the report: {e}");
            }
        }
        if !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
            anyhow::bail!("no such file or directory: {}", names.join(", "));
        }
        let errors: usize = reports.iter().map(|r| r.errors()).sum();
        Ok(if errors > 0 { EXIT_FINDINGS } else { 0 })
    }
}
