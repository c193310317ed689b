//! `index`, `render`, `migrate` and `validate` commands.
use clap::{Args, Subcommand};

use super::CmdResult;

/// `index` subcommands that work on a database.
#[derive(Subcommand)]
pub enum IndexCommand {
    /// Add bundles to an index database
    Add(AddArgs),
}

/// `index add`.
#[derive(Args)]
pub struct AddArgs {
    /// Bundle directories
    pub bundles: Vec<std::path::PathBuf>,
}

impl IndexCommand {
    pub fn run(self) -> CmdResult {
        anyhow::bail!("index: not built yet")
    }
}

/// `render`.
#[derive(Args)]
pub struct RenderArgs {
    /// What to render
    pub source: Vec<String>,
}

impl RenderArgs {
    pub fn run(self) -> CmdResult {
        anyhow::bail!("render: not built yet")
    }
}

/// `migrate`.
#[derive(Args)]
pub struct MigrateArgs {
    /// Index database
    pub database: std::path::PathBuf,
}

impl MigrateArgs {
    pub fn run(self) -> CmdResult {
        anyhow::bail!("migrate: not built yet")
    }
}

/// `validate`.
#[derive(Args)]
pub struct ValidateArgs {
    /// FBC directory
    pub dir: std::path::PathBuf,
}

impl ValidateArgs {
    pub fn run(self) -> CmdResult {
        anyhow::bail!("validate: not built yet")
    }
}
