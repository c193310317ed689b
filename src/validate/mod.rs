//! Bundle validation: every check of operator-framework/api's validators
//! (`pkg/validation/internal/`), at the same level, plus the blind spots that
//! real users hit and the reference misses.
//!
//! Checks are grouped in suites. The default suites run always (like
//! `operator-sdk bundle validate`); the optional ones are picked with
//! selectors, the way `--select-optional` picks them there.
//!
//! Every check is a function `fn(&Context, &mut Vec<Finding>)`; findings carry
//! a stable rule id, a level, a message, the file/line/column of the
//! offending value and, where it helps, a hint.

use std::path::Path;

use crate::bundle::{Bundle, Csv};
use crate::diag::{Finding, Report};

/// What to check beyond the default suites.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Optional suites to run, by name (`operatorhub`, `good-practices`,
    /// `alpha-deprecated-apis`, `standard-categories`, `standard-capabilities`).
    pub optional: Vec<String>,
    /// Kubernetes version the bundle targets (for deprecated-API checks), e.g. `1.25`.
    pub k8s_version: Option<String>,
}

/// What a check sees.
pub struct Context<'a> {
    /// The bundle under check.
    pub bundle: &'a Bundle,
    /// The bundle's CSV, when there is exactly one that decodes.
    pub csv: Option<&'a Csv>,
    /// The options of this run.
    pub options: &'a Options,
}

/// Validates one loaded bundle.
pub fn validate_bundle(bundle: &Bundle, options: &Options) -> Report {
    let csv = bundle.csv().and_then(Result::ok);
    let ctx = Context {
        bundle,
        csv: csv.as_ref(),
        options,
    };
    let mut findings: Vec<Finding> = bundle.load_findings.clone();
    run_suites(&ctx, &mut findings);
    let mut report = Report {
        subject: bundle.dir.display().to_string(),
        findings,
    };
    report.sort();
    report
}

/// Loads and validates a bundle directory; an unusable directory gives a
/// report with one error.
pub fn validate_dir(dir: &Path, options: &Options) -> Report {
    match Bundle::load_dir(dir) {
        Ok(b) => validate_bundle(&b, options),
        Err(e) => Report {
            subject: dir.display().to_string(),
            findings: vec![Finding::error("bundle-unreadable", e.to_string())
                .at(crate::diag::Location::file(dir))],
        },
    }
}

fn run_suites(ctx: &Context, out: &mut Vec<Finding>) {
    optional::run(ctx, out);
}

pub mod optional;
