//! `graph` and `render-template` commands.
use clap::{Args, Subcommand};

use super::CmdResult;

/// `graph` subcommands.
#[derive(Subcommand)]
pub enum GraphCommand {
    /// Check the upgrade graphs of package directories
    Check(CheckArgs),
}

/// `graph check`.
#[derive(Args)]
pub struct CheckArgs {
    /// Package directories
    pub dirs: Vec<std::path::PathBuf>,
}

impl GraphCommand {
    pub fn run(self) -> CmdResult {
        anyhow::bail!("graph: not built yet")
    }
}

/// `render-template`.
#[derive(Args)]
pub struct RenderTemplateArgs {
    /// Template file
    pub file: std::path::PathBuf,
}

impl RenderTemplateArgs {
    pub fn run(self) -> CmdResult {
        anyhow::bail!("render-template: not built yet")
    }
}
