//! `bundle build` and `index build` commands.
use clap::Args;

use super::CmdResult;

/// `bundle build`.
#[derive(Args)]
pub struct BundleBuildArgs {
    /// Bundle directory
    pub dir: std::path::PathBuf,
}

impl BundleBuildArgs {
    pub fn run(self) -> CmdResult {
        anyhow::bail!("bundle build: not built yet")
    }
}

/// `index build`.
#[derive(Args)]
pub struct IndexBuildArgs {
    /// Index database
    pub database: std::path::PathBuf,
}

impl IndexBuildArgs {
    pub fn run(self) -> CmdResult {
        anyhow::bail!("index build: not built yet")
    }
}
