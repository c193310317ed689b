//! `opm generate dockerfile` (cmd/opm/generate/cmd.go at v1.73.0), as
//! `olm-catalog catalog generate-dockerfile`.
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::super::CmdResult;

/// `opm generate` subcommands.
#[derive(Subcommand)]
pub enum GenerateCommand {
    /// Generate a Dockerfile for a file-based catalog
    Dockerfile(DockerfileArgs),
}

/// `opm generate dockerfile <fbcRootDir>`.
#[derive(Args)]
pub struct DockerfileArgs {
    /// The file-based catalog's root directory
    #[arg(value_name = "fbcRootDir")]
    dir: PathBuf,
    /// Image base to use to build catalog
    #[arg(
        long,
        short = 'i',
        value_name = "IMAGE",
        conflicts_with = "binary_image"
    )]
    base_image: Option<String>,
    /// Image in which to build catalog (deprecated: use --base-image instead)
    #[arg(long, value_name = "IMAGE")]
    binary_image: Option<String>,
    /// Image to use as a build stage
    #[arg(long, short = 'b', value_name = "IMAGE")]
    builder_image: Option<String>,
    /// Extra labels to include in the generated Dockerfile, of the form 'key=value'
    #[arg(long, short = 'l', value_delimiter = ',', value_name = "KEY=VALUE")]
    extra_labels: Vec<String>,
}

impl GenerateCommand {
    /// Runs `catalog generate-dockerfile` with the same arguments.
    pub fn run(self) -> CmdResult {
        let GenerateCommand::Dockerfile(a) = self;
        let mut argv = vec!["catalog".to_string(), "generate-dockerfile".to_string()];
        for (flag, value) in [
            ("--base-image", &a.base_image),
            ("--binary-image", &a.binary_image),
            ("--builder-image", &a.builder_image),
        ] {
            if let Some(v) = value {
                argv.push(format!("{flag}={v}"));
            }
        }
        for l in &a.extra_labels {
            argv.push(format!("--extra-labels={l}"));
        }
        argv.push("--".to_string());
        argv.push(a.dir.display().to_string());
        super::super::run_native(argv)
    }
}
