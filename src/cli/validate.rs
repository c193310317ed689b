//! `bundle validate` command.
use clap::Args;

use super::CmdResult;

/// `bundle validate`.
#[derive(Args)]
pub struct ValidateArgs {
    /// Bundle directories
    pub dirs: Vec<std::path::PathBuf>,
}

impl ValidateArgs {
    pub fn run(self) -> CmdResult {
        anyhow::bail!("bundle validate: not built yet")
    }
}
