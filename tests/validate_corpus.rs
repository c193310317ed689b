//! The whole corpus (`operators/*/*`, 786 folders) through the default
//! validators: no panic, and a summary (bundles with errors, findings per
//! rule) that must equal the recorded `tests/data/corpus_validate_summary.json`.
//! After a deliberate rule change, regenerate it with
//! `OLM_CATALOG_UPDATE_SNAPSHOTS=1 cargo test --test validate_corpus` and
//! review the diff.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use olm_catalog::diag::{render_json, Level, Report};
use olm_catalog::validate::{self, rules, Options};
use serde::Serialize;

fn corpus_dirs() -> Vec<PathBuf> {
    let ops = common::corpus().join("operators");
    let mut dirs = Vec::new();
    for pkg in std::fs::read_dir(&ops).expect("operators/") {
        let pkg = pkg.expect("entry").path();
        if !pkg.is_dir() {
            continue;
        }
        for entry in std::fs::read_dir(&pkg).expect("package dir") {
            let p = entry.expect("entry").path();
            if !p.is_dir() {
                continue;
            }
            // rabbitmq-messaging-topology-operator/{1.18.3,1.19.0,1.19.1}
            // keep their bundle in VERSION/bundle/, where operator-sdk's
            // `make bundle` writes it: validate that. (The
            // gitlab-runner-operator/{1.22.0,1.23.0,1.23.1}/certification
            // folders stay not-a-bundle: they hold the copy prepared for
            // Red Hat certification, not a community bundle, and none of
            // those versions is in the corpus's catalogs.)
            let nested = p.join("bundle");
            if !validate::is_bundle_dir(&p) && validate::is_bundle_dir(&nested) {
                dirs.push(nested);
            } else {
                dirs.push(p);
            }
        }
    }
    dirs.sort();
    dirs
}

#[derive(Serialize, Default)]
struct RuleCount {
    level: String,
    findings: usize,
    bundles: usize,
}

#[derive(Serialize, Default)]
struct Summary {
    folders: usize,
    bundles: usize,
    not_bundles: usize,
    bundles_with_errors: usize,
    bundles_with_warnings_only: usize,
    errors: usize,
    warnings: usize,
    rules: BTreeMap<String, RuleCount>,
}

fn summarize(reports: &[Report]) -> Summary {
    let mut s = Summary {
        folders: reports.len(),
        ..Summary::default()
    };
    for r in reports {
        if r.findings.iter().any(|f| f.rule == "not-a-bundle") {
            s.not_bundles += 1;
            continue;
        }
        s.bundles += 1;
        if r.errors() > 0 {
            s.bundles_with_errors += 1;
        } else if r.warnings() > 0 {
            s.bundles_with_warnings_only += 1;
        }
        s.errors += r.errors();
        s.warnings += r.warnings();
        let mut seen = std::collections::BTreeSet::new();
        for f in &r.findings {
            let e = s.rules.entry(f.rule.clone()).or_default();
            e.level = f.level.as_str().to_string();
            e.findings += 1;
            if seen.insert(f.rule.clone()) {
                e.bundles += 1;
            }
        }
    }
    s
}

#[test]
fn corpus_summary_is_as_recorded() {
    let dirs = corpus_dirs();
    assert_eq!(dirs.len(), 786, "corpus folders");
    let reports = validate::validate_dirs(&dirs, &Options::default());
    assert_eq!(reports.len(), dirs.len());
    for (r, d) in reports.iter().zip(&dirs) {
        assert_eq!(
            r.subject,
            d.display().to_string(),
            "reports keep argument order"
        );
        for f in &r.findings {
            let rule = rules::rule(&f.rule)
                .unwrap_or_else(|| panic!("{} is not in the rule catalog", f.rule));
            assert_eq!(f.level, rule.level, "{} level", f.rule);
            if f.level == Level::Error {
                assert!(f.location.is_some(), "errors are located: {f:?}");
            }
        }
    }
    let summary = summarize(&reports);
    let text = serde_json::to_string_pretty(&summary).expect("json") + "\n";
    let recorded =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus_validate_summary.json");
    if std::env::var_os("OLM_CATALOG_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&recorded, &text).expect("write summary");
    }
    let expected = std::fs::read_to_string(&recorded).expect("recorded summary");
    assert_eq!(
        text, expected,
        "corpus summary changed; review and regenerate (see the file's doc comment)"
    );

    // Same input, byte-identical output: a second run over a slice of the corpus.
    let slice = &dirs[..100];
    let again = validate::validate_dirs(slice, &Options::default());
    assert_eq!(render_json(&reports[..100]), render_json(&again));
}
