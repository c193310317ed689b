//! `opm render`, `opm validate`, `opm init` and `opm migrate`
//! (cmd/opm/{render,validate,init,migrate} at v1.73.0), as the native
//! commands of the same names.
use std::path::PathBuf;

use clap::Args;

use super::super::{run_native, CmdResult};
use super::TlsFlags;

/// opm's `-o json|yaml` of the FBC writers.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum FbcOutput {
    /// A JSON stream.
    Json,
    /// YAML documents.
    Yaml,
}

impl FbcOutput {
    fn as_str(self) -> &'static str {
        match self {
            FbcOutput::Json => "json",
            FbcOutput::Yaml => "yaml",
        }
    }
}

/// `opm render [catalog-image | catalog-directory | bundle-image |
/// bundle-directory | sqlite-file]...`.
#[derive(Args)]
pub struct RenderArgs {
    /// Catalog or bundle images, catalog or bundle directories, SQLite files
    #[arg(required = true, value_name = "REF")]
    refs: Vec<String>,
    /// Output format of the streamed file-based catalog objects (json|yaml)
    #[arg(long, short = 'o', value_enum, default_value = "json")]
    output: FbcOutput,
    /// Name of the last migration to run (default: none)
    #[arg(long, value_name = "LEVEL", conflicts_with = "migrate")]
    migrate_level: Option<String>,
    /// Perform all available schema migrations on the rendered FBC
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    migrate: Option<bool>,
    /// When bundle image reference information is unavailable, populate it with this template
    #[arg(long, value_name = "TEMPLATE", hide = true)]
    alpha_image_ref_template: Option<String>,
}

impl RenderArgs {
    /// Runs `olm-catalog render`.
    pub fn run(self, tls: &TlsFlags) -> CmdResult {
        let mut argv = vec![
            "render".to_string(),
            format!("--output={}", self.output.as_str()),
        ];
        let level = match (self.migrate, self.migrate_level) {
            (Some(true), _) => Some("all".to_string()),
            (_, Some(l)) if !l.is_empty() => Some(l),
            _ => None,
        };
        if let Some(l) = level {
            argv.push(format!("--migrate-level={l}"));
        }
        // opm reads an empty template as "not given".
        if let Some(t) = self.alpha_image_ref_template.filter(|t| !t.is_empty()) {
            argv.push(format!("--alpha-image-ref-template={t}"));
        }
        argv.extend(tls.native()?);
        argv.push("--".to_string());
        argv.extend(self.refs);
        run_native(argv)
    }
}

/// `opm validate <directory>`.
#[derive(Args)]
pub struct ValidateArgs {
    /// The file-based catalog directory
    #[arg(value_name = "directory")]
    dir: PathBuf,
    /// Output format for validation results (json|yaml)
    #[arg(long, short = 'o', value_name = "FORMAT")]
    output: Option<String>,
}

impl ValidateArgs {
    /// Runs `olm-catalog validate`.
    pub fn run(self) -> CmdResult {
        let meta = std::fs::metadata(&self.dir)
            .map_err(|e| anyhow::anyhow!("stat {}: {e}", self.dir.display()))?;
        anyhow::ensure!(
            meta.is_dir(),
            "{:?} is not a directory",
            self.dir.display().to_string()
        );
        let mut argv = vec!["validate".to_string()];
        match self.output.as_deref() {
            None | Some("") => {}
            Some(f @ ("json" | "yaml")) => argv.push(format!("--output={f}")),
            Some(other) => {
                anyhow::bail!("invalid --output value {other:?}, expected (json|yaml)")
            }
        }
        argv.push("--".to_string());
        argv.push(self.dir.display().to_string());
        run_native(argv)
    }
}

/// `opm init <packageName>`.
#[derive(Args)]
pub struct InitArgs {
    /// The package's name
    #[arg(value_name = "packageName")]
    package: String,
    /// The channel that subscriptions will default to if unspecified
    #[arg(long, short = 'c', value_name = "CHANNEL")]
    default_channel: Option<String>,
    /// Path to package's icon
    #[arg(long, short = 'i', value_name = "FILE")]
    icon: Option<PathBuf>,
    /// Path to the operator's README.md (or other documentation)
    #[arg(long, short = 'd', value_name = "FILE")]
    description: Option<PathBuf>,
    /// Output format (json|yaml)
    #[arg(long, short = 'o', value_enum, default_value = "json")]
    output: FbcOutput,
}

impl InitArgs {
    /// Runs `olm-catalog init`.
    pub fn run(self) -> CmdResult {
        let mut argv = vec![
            "init".to_string(),
            format!("--output={}", self.output.as_str()),
        ];
        if let Some(c) = self.default_channel {
            argv.push(format!("--default-channel={c}"));
        }
        // opm reads an empty path as "not given".
        if let Some(i) = self.icon.filter(|p| !p.as_os_str().is_empty()) {
            argv.push(format!("--icon={}", i.display()));
        }
        if let Some(d) = self.description.filter(|p| !p.as_os_str().is_empty()) {
            argv.push(format!("--description={}", d.display()));
        }
        argv.push("--".to_string());
        argv.push(self.package);
        run_native(argv)
    }
}

/// `opm migrate <indexRef> <outputDir>`.
#[derive(Args)]
pub struct MigrateArgs {
    /// An index image or SQLite database file
    #[arg(value_name = "indexRef")]
    index_ref: String,
    /// Where to write the file-based catalog
    #[arg(value_name = "outputDir")]
    out_dir: PathBuf,
    /// Output format (json|yaml)
    #[arg(long, short = 'o', value_enum, default_value = "json")]
    output: FbcOutput,
    /// Name of the last migration to run (default: none)
    #[arg(long, value_name = "LEVEL")]
    migrate_level: Option<String>,
}

impl MigrateArgs {
    /// Runs `olm-catalog migrate`.
    pub fn run(self, tls: &TlsFlags) -> CmdResult {
        let mut argv = vec![
            "migrate".to_string(),
            format!("--output={}", self.output.as_str()),
        ];
        if let Some(l) = self.migrate_level.filter(|l| !l.is_empty()) {
            argv.push(format!("--migrate-level={l}"));
        }
        argv.extend(tls.native()?);
        argv.push("--".to_string());
        argv.push(self.index_ref);
        argv.push(self.out_dir.display().to_string());
        run_native(argv)
    }
}
