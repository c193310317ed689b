//! `serve` command.
use clap::Args;

use super::CmdResult;

/// `serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// Catalog: index.db, FBC directory or image reference
    pub catalog: String,
}

impl ServeArgs {
    pub fn run(self) -> CmdResult {
        anyhow::bail!("serve: not built yet")
    }
}
