//! Runs every optional suite over every bundle of the community-operators
//! corpus: no panic, and the number of findings per rule and level matches
//! the recorded summary `tests/data/corpus_optional_summary.json`.
//!
//! After a deliberate rule change, re-record with
//! `OLM_CATALOG_RECORD=1 cargo test --test suite validate_optional_corpus::` and
//! review the diff of the summary.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use olm_catalog::bundle::Bundle;
use olm_catalog::diag::Finding;
use olm_catalog::validate::optional::{self, SUITES};
use olm_catalog::validate::{Context, Options};
use rayon::prelude::*;

/// rule → level → count.
type Counts = BTreeMap<String, BTreeMap<String, usize>>;

fn bundle_dirs() -> Vec<PathBuf> {
    let operators = common::corpus().join("operators");
    let mut dirs = Vec::new();
    for pkg in std::fs::read_dir(&operators).expect("operators/ readable") {
        let pkg = pkg.expect("entry").path();
        if !pkg.is_dir() {
            continue;
        }
        for b in std::fs::read_dir(&pkg).expect("package readable") {
            let b = b.expect("entry").path();
            // Every folder, bundle or not (catalog-templates/, a bundle
            // nested one level deeper): loading must cope with all of them.
            if b.is_dir() {
                dirs.push(b);
            }
        }
    }
    dirs.sort();
    dirs
}

fn run_all(bundle: &Bundle, k8s_version: Option<&str>) -> Vec<Finding> {
    let options = Options {
        optional: SUITES.iter().map(|(n, _)| n.to_string()).collect(),
        k8s_version: k8s_version.map(String::from),
        ..Options::default()
    };
    let csv = bundle.csv().and_then(Result::ok);
    let ctx = Context {
        bundle,
        csv: csv.as_ref(),
        options: &options,
    };
    let mut out = Vec::new();
    optional::run(&ctx, &mut out);
    out
}

fn count(findings: &[Finding], counts: &mut Counts) {
    for f in findings {
        *counts
            .entry(f.rule.clone())
            .or_default()
            .entry(f.level.as_str().to_string())
            .or_default() += 1;
    }
}

#[test]
fn corpus_summary_matches_recording() {
    let dirs = bundle_dirs();
    assert_eq!(dirs.len(), 786, "the corpus has 786 package folders");
    // Two targets: none (the reference's default) and 1.25, which turns
    // uses of APIs removed up to 1.25 into errors.
    let per_bundle: Vec<(Vec<Finding>, Vec<Finding>)> = dirs
        .par_iter()
        .map(|d| {
            let b = Bundle::load_dir(d).expect("bundle loads");
            let plain = run_all(&b, None);
            let targeted = run_all(&b, Some("1.25"));
            for f in plain.iter().chain(&targeted) {
                assert!(
                    f.rule.starts_with("operatorhub-")
                        || f.rule.starts_with("good-practices-")
                        || f.rule.starts_with("alpha-deprecated-apis-")
                        || f.rule.starts_with("standard-"),
                    "{}: rule id {} has no suite prefix",
                    d.display(),
                    f.rule
                );
                assert!(!f.message.is_empty());
            }
            (plain, targeted)
        })
        .collect();
    let mut summary: BTreeMap<String, Counts> = BTreeMap::new();
    for (plain, targeted) in &per_bundle {
        count(plain, summary.entry("default".into()).or_default());
        count(targeted, summary.entry("k8s-1.25".into()).or_default());
    }
    let got = serde_json::to_string_pretty(&summary).expect("json") + "\n";
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus_optional_summary.json");
    if std::env::var_os("OLM_CATALOG_RECORD").is_some() {
        std::fs::write(&path, &got).expect("write summary");
        return;
    }
    let want = std::fs::read_to_string(&path).expect("recorded summary exists");
    assert_eq!(got, want, "corpus findings changed; re-record if intended");
}

/// The same bundle gives the same findings every time.
#[test]
fn corpus_findings_are_deterministic() {
    let dirs = bundle_dirs();
    for d in dirs.iter().step_by(97) {
        let b = Bundle::load_dir(d).expect("bundle loads");
        assert_eq!(run_all(&b, None), run_all(&b, None), "{}", d.display());
    }
}
