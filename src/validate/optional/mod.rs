//! The optional suites of `operator-sdk bundle validate --select-optional`:
//! operatorhub, good-practices, alpha-deprecated-apis, standard categories
//! and capabilities.

use super::Context;
use crate::diag::Finding;

/// Runs the optional suites named in `ctx.options.optional`.
pub fn run(_ctx: &Context, _out: &mut Vec<Finding>) {}
