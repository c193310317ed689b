//! The whole corpus (`operators/*/*`, 786 folders) through the default
//! validators: no panic, and a summary (bundles with errors, findings per
//! rule) that must equal the recorded `tests/data/corpus_validate_summary.json`.
//! After a deliberate rule change, regenerate it with
//! `OLM_CATALOG_UPDATE_SNAPSHOTS=1 cargo test --test suite validate_corpus::` and
//! review the diff.

use crate::common;

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

/// Folders of the corpus that fail here and pass operator-framework/api's
/// validators (what `operator-sdk bundle validate` runs), with the rules
/// that fail them: our stricter checks, reviewed one by one (docs/validate.md,
/// "Verdicts"). A folder that starts or stops failing here must change this
/// list.
#[rustfmt::skip]
const STRICTER: &[(&str, &[&str])] = &[
    // The default channel is not one of the bundle's channels (aqua: `2022.4.0`
    // while the bundle is in `6.2.0` or `6.5.0`; etcd: `singlenamespace-alpha` while in
    // `alpha` or `clusterwide-alpha`; ecr-secret-operator: `v0.4` while in `v0.3`).
    ("operators/aqua/6.2.1", &["annotation-default-channel-not-in-channels"]),
    ("operators/aqua/6.2.2", &["annotation-default-channel-not-in-channels"]),
    ("operators/aqua/6.5.1", &["annotation-default-channel-not-in-channels"]),
    ("operators/aqua/6.5.10", &["annotation-default-channel-not-in-channels"]),
    ("operators/aqua/6.5.11", &["annotation-default-channel-not-in-channels"]),
    ("operators/aqua/6.5.2", &["annotation-default-channel-not-in-channels"]),
    ("operators/aqua/6.5.3", &["annotation-default-channel-not-in-channels"]),
    ("operators/aqua/6.5.4", &["annotation-default-channel-not-in-channels"]),
    ("operators/aqua/6.5.5", &["annotation-default-channel-not-in-channels"]),
    ("operators/aqua/6.5.6", &["annotation-default-channel-not-in-channels"]),
    ("operators/aqua/6.5.7", &["annotation-default-channel-not-in-channels"]),
    ("operators/aqua/6.5.8", &["annotation-default-channel-not-in-channels"]),
    ("operators/aqua/6.5.9", &["annotation-default-channel-not-in-channels"]),
    ("operators/ecr-secret-operator/0.3.2", &["annotation-default-channel-not-in-channels"]),
    ("operators/etcd/0.6.1", &["annotation-default-channel-not-in-channels"]),
    ("operators/etcd/0.9.2-clusterwide", &["annotation-default-channel-not-in-channels"]),
    ("operators/etcd/0.9.4-clusterwide", &["annotation-default-channel-not-in-channels"]),
    // `minKubeVersion` twice in the CSV (lines 243 and 252).
    ("operators/kaoto-operator/0.0.10", &["yaml-duplicate-key"]),
];

/// Error rules that stand for a golden error type without a message to
/// match: `BundleFormat` ("Unable to locate manifests directory") and `load`
/// (`manifests.GetBundleFromDir` failed).
const FORMAT_RULES: &[&str] = &[
    "not-a-bundle",
    "bundle-no-manifests-dir",
    "bundle-no-metadata-dir",
];
const LOAD_RULES: &[&str] = &[
    "not-a-bundle",
    "bundle-csv-outside-manifests",
    "bundle-unreadable",
    "yaml-syntax",
    "file-not-utf8",
    "csv-missing",
    "csv-multiple",
    "csv-decode",
];

/// `../shared/opm-golden/validate/verdicts.json` has operator-framework/api's
/// verdict for each of the 786 corpus folders, each validated as named (not
/// its nested `bundle/`): we fail every folder it fails, with a finding for
/// each of its errors, and fail the others only as `STRICTER` lists.
#[test]
fn verdicts_match_operator_framework_api() {
    let path = common::golden().join("validate/verdicts.json");
    let text = std::fs::read_to_string(&path).expect("verdicts.json");
    let verdicts: BTreeMap<String, serde_json::Value> =
        serde_json::from_str(&text).expect("verdicts.json parses");
    assert_eq!(verdicts.len(), 786, "one verdict per corpus folder");
    let corpus = common::corpus();
    let keys: Vec<&String> = verdicts.keys().collect();
    let dirs: Vec<PathBuf> = keys.iter().map(|k| corpus.join(k)).collect();
    let reports = validate::validate_dirs(&dirs, &Options::default());
    let stricter: BTreeMap<&str, &[&str]> = STRICTER.iter().copied().collect();
    let mut problems = Vec::new();
    let mut extra_seen = std::collections::BTreeSet::new();
    for ((key, v), r) in keys.iter().zip(verdicts.values()).zip(&reports) {
        let theirs = v["error"].as_bool().expect("error flag");
        let errors: Vec<&olm_catalog::diag::Finding> = r
            .findings
            .iter()
            .filter(|f| f.level == Level::Error)
            .collect();
        let mut our_rules: Vec<&str> = errors.iter().map(|f| f.rule.as_str()).collect();
        our_rules.sort_unstable();
        our_rules.dedup();
        match (theirs, !errors.is_empty()) {
            (true, false) => problems.push(format!("{key}: fails there, passes here")),
            (false, true) => {
                extra_seen.insert(key.as_str());
                match stricter.get(key.as_str()) {
                    Some(want) if *want == our_rules.as_slice() => {}
                    Some(want) => problems.push(format!(
                        "{key}: expected to fail here on {want:?}, fails on {our_rules:?}"
                    )),
                    None => problems.push(format!(
                        "{key}: passes there, fails here on {our_rules:?} (not in STRICTER)"
                    )),
                }
            }
            _ => {}
        }
        if !theirs {
            continue;
        }
        // Each of their error messages has a finding here: the same
        // apiextensions text (within our message), or for the format
        // check a rule of ours that stands for it.
        let messages: Vec<&str> = v["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .filter_map(|m| m.as_str())
            .collect();
        let mut distinct = messages.clone();
        distinct.sort_unstable();
        distinct.dedup();
        for m in distinct {
            if m.starts_with("Unable to locate ") {
                if !errors
                    .iter()
                    .any(|f| FORMAT_RULES.contains(&f.rule.as_str()))
                {
                    problems.push(format!("{key}: no finding for {m:?}: {our_rules:?}"));
                }
                continue;
            }
            let want = messages.iter().filter(|x| **x == m).count();
            let got = errors.iter().filter(|f| f.message.contains(m)).count();
            if got < want {
                problems.push(format!(
                    "{key}: {want} × {m:?} there, {got} here: {:#?}",
                    errors.iter().map(|f| &f.message).collect::<Vec<_>>()
                ));
            }
        }
        let types: Vec<&str> = v["types"]
            .as_array()
            .expect("types")
            .iter()
            .filter_map(|t| t.as_str())
            .collect();
        for (ty, rules) in [("BundleFormat", FORMAT_RULES), ("load", LOAD_RULES)] {
            if types.contains(&ty) && !errors.iter().any(|f| rules.contains(&f.rule.as_str())) {
                problems.push(format!(
                    "{key}: a {ty} error there, none of {rules:?} here: {our_rules:?}"
                ));
            }
        }
    }
    for key in stricter.keys() {
        if !extra_seen.contains(key) {
            problems.push(format!("{key}: in STRICTER but does not fail here only"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
