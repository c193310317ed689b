//! `sign` and `verify` commands.
use clap::Args;

use super::CmdResult;

/// `sign`.
#[derive(Args)]
pub struct SignArgs {
    /// Image reference
    pub reference: String,
}

impl SignArgs {
    pub fn run(self) -> CmdResult {
        anyhow::bail!("sign: not built yet")
    }
}

/// `verify`.
#[derive(Args)]
pub struct VerifyArgs {
    /// Image reference
    pub reference: String,
}

impl VerifyArgs {
    pub fn run(self) -> CmdResult {
        anyhow::bail!("verify: not built yet")
    }
}
