//! Bundle validation: every check of operator-framework/api's validators
//! (`pkg/validation/internal/`) and of operator-registry's bundle format and
//! content checks, at the same level, plus the blind spots that real users
//! hit and the reference misses ([`rules::RULES`] lists them all).
//!
//! Checks are grouped in suites. The default suites run always (like
//! `operator-sdk bundle validate`); the optional ones are picked with
//! selectors ([`select::select_optional`]), the way `--select-optional` picks
//! them there.
//!
//! Every check is a function `fn(&Context, &mut Vec<Finding>)`; findings carry
//! a stable rule id, a level, a message, the file/line/column of the
//! offending value and, where it helps, a hint.

use std::path::Path;

use rayon::prelude::*;

use crate::bundle::{Bundle, Csv, LoadError};
use crate::diag::{Finding, Location, Report};

pub(crate) mod bundle_rules;
pub(crate) mod cel;
pub(crate) mod crd;
pub(crate) mod csv_rules;
pub(crate) mod objects;
pub(crate) mod package_manifest;
pub mod rules;
pub mod select;
pub(crate) mod structure;

/// What to check beyond the default suites.
#[derive(Clone, Default)]
pub struct Options {
    /// Optional suites to run, by name (`operatorhub`, `good-practices`,
    /// `alpha-deprecated-apis`, `standard-categories`, `standard-capabilities`,
    /// `multiarch`).
    pub optional: Vec<String>,
    /// Kubernetes version the bundle targets (for deprecated-API checks), e.g. `1.25`.
    pub k8s_version: Option<String>,
    /// Where the `multiarch` suite reads the platforms of images; without it
    /// that suite only says it cannot run.
    pub image_platforms: Option<std::sync::Arc<dyn optional::multiarch::ImagePlatforms>>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("optional", &self.optional)
            .field("k8s_version", &self.k8s_version)
            .field("image_platforms", &self.image_platforms.is_some())
            .finish()
    }
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
    // The loader writes its findings without the rule catalog; the catalog
    // sets their level here (a duplicate key is an error of validation, not
    // of loading: graph and index commands read such bundles).
    let mut findings: Vec<Finding> = bundle
        .load_findings
        .iter()
        .cloned()
        .map(rules::conform)
        .collect();
    run_suites(&ctx, &mut findings);
    let mut report = Report {
        subject: bundle.dir.display().to_string(),
        findings,
    };
    report.sort();
    report
}

/// Whether `dir` looks like a bundle: it has `manifests/` or `metadata/`.
pub fn is_bundle_dir(dir: &Path) -> bool {
    dir.join("manifests").is_dir() || dir.join("metadata").is_dir()
}

/// Loads and validates a bundle directory. A directory without `manifests/`
/// or `metadata/` that holds a package manifest (`package.yaml`,
/// `*.package.yaml`) gets the package manifest checks. Any other path that
/// exists but is not a bundle (a file, an empty folder, a folder without
/// `manifests/` or `metadata/` such as a package folder, `catalog-templates/`
/// or `VERSION/` with the bundle one level down) is one `not-a-bundle`
/// error, as operator-sdk fails it ("unable to find a csv"); a caller that
/// walks a tree may skip such reports ([`is_non_bundle`]). An unreadable or
/// missing path gives a `bundle-unreadable` error.
pub fn validate_dir(dir: &Path, options: &Options) -> Report {
    let subject = dir.display().to_string();
    let one = |f: Finding| Report {
        subject: subject.clone(),
        findings: vec![f.at(Location::file(dir))],
    };
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_file() => {
            return one(rules::finding_hint(
                "not-a-bundle",
                format!("{subject} is a file, not a bundle directory"),
                &format!("give the directory that holds manifests/ and metadata/. {SDK_FAILS_TOO}"),
            ))
        }
        Ok(meta) if meta.is_dir() && !is_bundle_dir(dir) => {
            // A package-manifest directory: check its package.yaml.
            let pkg_files = package_manifest::package_files(dir);
            if !pkg_files.is_empty() {
                let mut report = Report {
                    subject: subject.clone(),
                    findings: pkg_files
                        .iter()
                        .flat_map(|p| package_manifest::check_file(p))
                        .collect(),
                };
                report.sort();
                return report;
            }
            return one(not_a_bundle_dir(dir, &subject));
        }
        _ => {}
    }
    match Bundle::load_dir(dir) {
        Ok(b) => {
            let mut report = validate_bundle(&b, options);
            report.findings.extend(structure::stray_csvs(dir));
            report.sort();
            report
        }
        Err(e) => {
            let (rule, msg) = match &e {
                LoadError::NotADirectory { reason, .. } => (
                    "bundle-unreadable",
                    format!("{subject}: cannot read the bundle: {reason}"),
                ),
                LoadError::Io { source, .. } => ("io-error", format!("{subject}: {source}")),
            };
            one(Finding::error(rule, msg))
        }
    }
}

/// The `not-a-bundle` finding for a directory without `manifests/` or
/// `metadata/`, with a hint naming the bundles one level down, if any.
fn not_a_bundle_dir(dir: &Path, subject: &str) -> Finding {
    let mut entries: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.sort();
    let base = subject.trim_end_matches('/');
    let nested: Vec<String> = entries
        .iter()
        .filter(|p| is_bundle_dir(p))
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let (msg, hint) = if entries.is_empty() {
        (
            format!("{subject} is an empty directory, not a bundle"),
            "a bundle directory holds manifests/ (the CSV, CRDs, …) and metadata/annotations.yaml"
                .to_string(),
        )
    } else {
        let hint = match nested.as_slice() {
            [] => "a bundle directory holds manifests/ (the CSV, CRDs, …) and metadata/annotations.yaml; to validate a tree that has other folders too, pass --skip-non-bundles".to_string(),
            [one] => format!("its subdirectory {one}/ is a bundle: validate {base}/{one} instead"),
            _ => format!(
                "its subdirectories {} are bundles: validate {base}/* instead",
                nested
                    .iter()
                    .map(|n| format!("{n}/"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        (
            format!("{subject} has no manifests/ or metadata/ directory: not a bundle"),
            hint,
        )
    };
    rules::finding_hint("not-a-bundle", msg, &format!("{hint}. {SDK_FAILS_TOO}"))
}

/// What `not-a-bundle` hints add: the reference fails such paths as well.
const SDK_FAILS_TOO: &str = "operator-sdk bundle validate fails it too (\"unable to find a csv\")";

/// Whether `report` says only that its path is not a bundle (rule
/// `not-a-bundle`): what `bundle validate --skip-non-bundles` skips.
pub fn is_non_bundle(report: &Report) -> bool {
    !report.findings.is_empty() && report.findings.iter().all(|f| f.rule == "not-a-bundle")
}

/// Validates many bundle directories in parallel; reports come back in the
/// order of `dirs`. For many directories prefer [`validate_dirs_each`],
/// which does not hold every report.
pub fn validate_dirs(dirs: &[std::path::PathBuf], options: &Options) -> Vec<Report> {
    dirs.par_iter().map(|d| validate_dir(d, options)).collect()
}

/// Validates many bundle directories in parallel and hands each report to
/// `sink` in the order of `dirs`, on the calling thread, as soon as it and
/// those before it are done: memory is that of a few bundles however many
/// are given. A `sink` error stops the run and is returned.
pub fn validate_dirs_each<E>(
    dirs: &[std::path::PathBuf],
    options: &Options,
    sink: impl FnMut(Report) -> Result<(), E>,
) -> Result<(), E> {
    crate::par::ordered_window(dirs, |d| validate_dir(d, options), sink)
}

fn run_suites(ctx: &Context, out: &mut Vec<Finding>) {
    structure::check(ctx, out);
    csv_rules::check(ctx, out);
    bundle_rules::check(ctx, out);
    for m in &ctx.bundle.manifests {
        crd::check(m, out);
        objects::check(m, out);
    }
    optional::run(ctx, out);
}

pub mod optional;
