//! The optional suites, rule by rule: for each rule a bundle that breaks it
//! and one that passes, run through `validate_bundle` as the CLI runs it.
//!
//! Bundles start from `fixtures/optional/clean` (which passes every optional
//! suite) and change one field; `fixtures/optional/broken` breaks many rules
//! at once and pins every finding's level, file and line.

use crate::common;

use std::path::Path;

use olm_catalog::bundle::{Bundle, RawFile};
use olm_catalog::diag::{Finding, Level};
use olm_catalog::validate::optional::{standard, SUITES};
use olm_catalog::validate::{validate_bundle, Options};
use serde_json::{json, Value};

const CSV_FILE: &str = "manifests/example-operator.clusterserviceversion.yaml";
const CRD_FILE: &str = "manifests/databases.example.com.crd.yaml";
const ANNOTATIONS_FILE: &str = "metadata/annotations.yaml";

fn is_optional_rule(rule: &str) -> bool {
    [
        "operatorhub-",
        "good-practices-",
        "alpha-deprecated-apis-",
        "standard-",
        "optional-",
        "multiarch-",
    ]
    .iter()
    .any(|p| rule.starts_with(p))
}

fn clean_file(rel: &str) -> String {
    std::fs::read_to_string(common::fixtures().join("optional/clean").join(rel))
        .expect("fixture readable")
}

/// The clean fixture's CSV as JSON, to change one field at a time.
fn clean_csv() -> Value {
    yaml_serde::from_str(&clean_file(CSV_FILE)).expect("fixture CSV parses")
}

/// A bundle in memory: the clean fixture with `csv` as its CSV, `extra`
/// manifests added and `annotations` (text of annotations.yaml) replaced.
struct Case {
    csv: Value,
    extra: Vec<(String, String)>,
    annotations: String,
}

impl Case {
    fn new() -> Case {
        Case {
            csv: clean_csv(),
            extra: Vec::new(),
            annotations: clean_file(ANNOTATIONS_FILE),
        }
    }

    fn with(mut self, pointer: &str, value: Value) -> Case {
        set(&mut self.csv, pointer, value);
        self
    }

    fn without(mut self, pointer: &str) -> Case {
        let (parent, key) = pointer.rsplit_once('/').expect("pointer has a parent");
        if let Some(Value::Object(map)) = self.csv.pointer_mut(parent) {
            map.remove(key);
        }
        self
    }

    fn manifest(mut self, name: &str, text: &str) -> Case {
        self.extra
            .push((format!("manifests/{name}"), text.to_string()));
        self
    }

    fn channels(mut self, channels: &str, default: &str) -> Case {
        self.annotations = format!(
            "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  \
             operators.operatorframework.io.bundle.package.v1: example-operator\n  \
             operators.operatorframework.io.bundle.channels.v1: {channels}\n  \
             operators.operatorframework.io.bundle.channel.default.v1: {default}\n"
        );
        self
    }

    fn bundle(&self) -> Bundle {
        let mut files = vec![
            raw(
                CSV_FILE,
                &yaml_serde::to_string(&self.csv).expect("CSV serializes"),
            ),
            raw(CRD_FILE, &clean_file(CRD_FILE)),
            raw(ANNOTATIONS_FILE, &self.annotations),
        ];
        for (rel, text) in &self.extra {
            files.push(raw(rel, text));
        }
        Bundle::from_files(Path::new("case"), files)
    }

    /// Optional findings of `suites` (and the target Kubernetes version).
    fn run(&self, suites: &[&str], k8s: Option<&str>) -> Vec<Finding> {
        let options = Options {
            optional: suites.iter().map(|s| s.to_string()).collect(),
            k8s_version: k8s.map(String::from),
            ..Options::default()
        };
        validate_bundle(&self.bundle(), &options)
            .findings
            .into_iter()
            .filter(|f| is_optional_rule(&f.rule))
            .collect()
    }

    /// The `(rule, level)` pairs `suite` reports.
    fn rules(&self, suite: &str) -> Vec<(String, Level)> {
        self.run(&[suite], None)
            .into_iter()
            .map(|f| (f.rule, f.level))
            .collect()
    }
}

fn raw(rel: &str, text: &str) -> RawFile {
    RawFile {
        rel_path: rel.to_string(),
        content: Ok(text.as_bytes().to_vec()),
    }
}

/// Sets the value at a JSON pointer, creating objects on the way.
fn set(root: &mut Value, pointer: &str, value: Value) {
    let mut node = root;
    let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i == parts.len() - 1;
        node = match node {
            Value::Array(items) => {
                let idx: usize = part.parse().expect("index");
                if last {
                    items[idx] = value;
                    return;
                }
                &mut items[idx]
            }
            other => {
                if !other.is_object() {
                    *other = json!({});
                }
                let map = other.as_object_mut().expect("object");
                if last {
                    map.insert(part.to_string(), value);
                    return;
                }
                map.entry(part.to_string()).or_insert(json!({}))
            }
        };
    }
}

fn has(rules: &[(String, Level)], rule: &str, level: Level) -> bool {
    rules.iter().any(|(r, l)| r == rule && *l == level)
}

/// Asserts `case` breaks `rule` (at `level`) in `suite`, and that the clean
/// bundle does not.
fn breaks(case: Case, suite: &str, rule: &str, level: Level) {
    let rules = case.rules(suite);
    assert!(
        has(&rules, rule, level),
        "{rule} ({level:?}) expected, got {rules:?}"
    );
    let clean = Case::new().rules(suite);
    assert!(
        !clean.iter().any(|(r, _)| r == rule),
        "clean bundle breaks {rule}: {clean:?}"
    );
}

/// Asserts `case` passes `rule` in `suite`.
fn passes(case: Case, suite: &str, rule: &str) {
    let rules = case.rules(suite);
    assert!(
        !rules.iter().any(|(r, _)| r == rule),
        "{rule} not expected, got {rules:?}"
    );
}

#[test]
fn clean_fixture_passes_every_suite() {
    let all: Vec<&str> = SUITES.iter().map(|(n, _)| *n).collect();
    for k8s in [None, Some("1.25"), Some("1.33")] {
        let found = Case::new().run(&all, k8s);
        assert!(found.is_empty(), "{k8s:?}: {found:#?}");
    }
    // The fixture on disk, loaded the way the CLI loads it.
    let b = Bundle::load_dir(&common::fixtures().join("optional/clean")).expect("loads");
    let options = Options {
        optional: all.iter().map(|s| s.to_string()).collect(),
        k8s_version: None,
        ..Options::default()
    };
    let found: Vec<Finding> = validate_bundle(&b, &options)
        .findings
        .into_iter()
        .filter(|f| is_optional_rule(&f.rule))
        .collect();
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn broken_fixture_findings() {
    let b = Bundle::load_dir(&common::fixtures().join("optional/broken")).expect("loads");
    let run = |k8s: Option<&str>| {
        let options = Options {
            optional: SUITES.iter().map(|(n, _)| n.to_string()).collect(),
            k8s_version: k8s.map(String::from),
            ..Options::default()
        };
        validate_bundle(&b, &options)
            .findings
            .into_iter()
            .filter(|f| is_optional_rule(&f.rule))
            .map(|f| {
                let loc = f.location.expect("every finding here is located");
                let file = loc
                    .file
                    .file_name()
                    .expect("file")
                    .to_string_lossy()
                    .into_owned();
                (f.rule, f.level, file, loc.line)
            })
            .collect::<Vec<_>>()
    };
    use Level::{Error as E, Warning as W};
    let csv = "broken-operator.clusterserviceversion.yaml";
    let expected = |removed_level: Level| {
        vec![
            ("good-practices-bundle-name-convention", W, csv, 6),
            ("good-practices-bundle-name-not-semver", W, csv, 6),
            ("operatorhub-container-image-missing", W, csv, 8),
            ("operatorhub-created-at-missing", W, csv, 8),
            ("standard-capabilities-invalid", E, csv, 8),
            ("standard-categories-invalid", E, csv, 9),
            ("standard-categories-invalid", E, csv, 9),
            ("operatorhub-repository-url-invalid", W, csv, 10),
            ("operatorhub-description-missing", W, csv, 12),
            ("operatorhub-display-name-missing", W, csv, 12),
            ("operatorhub-keywords-missing", W, csv, 12),
            ("operatorhub-min-kube-version-invalid", E, csv, 13),
            ("operatorhub-maturity-unknown", W, csv, 14),
            ("operatorhub-provider-name-missing", E, csv, 15),
            ("operatorhub-maintainer-email-invalid", E, csv, 18),
            ("operatorhub-maintainer-incomplete", E, csv, 19),
            ("operatorhub-link-url-invalid", E, csv, 22),
            ("operatorhub-icon-count", E, csv, 24),
            ("operatorhub-icon-incomplete", E, csv, 24),
            ("operatorhub-icon-mediatype-invalid", E, csv, 25),
            ("good-practices-crd-description-empty", W, csv, 30),
            ("alpha-deprecated-apis-removed-1-25", removed_level, csv, 35),
            ("good-practices-rbac-creates-crds", W, csv, 45),
            ("alpha-deprecated-apis-permission-1-25", W, csv, 49),
            ("good-practices-resource-requests-missing", W, csv, 57),
            ("good-practices-resource-requests-incomplete", W, csv, 62),
            // Removed in 1.26: a warning even when targeting 1.25.
            ("alpha-deprecated-apis-removed-1-26", W, "hpa.yaml", 1),
            (
                "alpha-deprecated-apis-removed-1-22",
                removed_level,
                "widgets.example.com.crd.yaml",
                1,
            ),
            ("good-practices-channel-naming", W, "annotations.yaml", 6),
        ]
        .into_iter()
        .map(|(r, l, f, line)| (r.to_string(), l, f.to_string(), line))
        .collect::<Vec<_>>()
    };
    // minKubeVersion "1.16" is below every removal: warnings only.
    assert_eq!(run(None), expected(W));
    assert_eq!(run(Some("1.25")), expected(E));
    assert_eq!(run(Some("v1.25.3")), expected(E));
}

// ---- operatorhub -------------------------------------------------------

#[test]
fn provider_name() {
    let rule = "operatorhub-provider-name-missing";
    breaks(
        Case::new().without("/spec/provider"),
        "operatorhub",
        rule,
        Level::Error,
    );
    breaks(
        Case::new().with("/spec/provider/name", json!("  ")),
        "operatorhub",
        rule,
        Level::Error,
    );
}

#[test]
fn maintainers() {
    let incomplete = "operatorhub-maintainer-incomplete";
    let invalid = "operatorhub-maintainer-email-invalid";
    breaks(
        Case::new().with("/spec/maintainers", json!([{"name": "A"}])),
        "operatorhub",
        incomplete,
        Level::Error,
    );
    breaks(
        Case::new().with("/spec/maintainers", json!([{"email": "a@example.com"}])),
        "operatorhub",
        incomplete,
        Level::Error,
    );
    for bad in [
        "someone",
        "a@",
        "a..b@example.com",
        "Red Hat, Inc. <a@example.com>",
        "a@x.com, b@x.com",
    ] {
        breaks(
            Case::new().with("/spec/maintainers/0/email", json!(bad)),
            "operatorhub",
            invalid,
            Level::Error,
        );
    }
    for good in [
        "a@example.com",
        "\"Red Hat, Inc.\" <a@example.com>",
        "a+tag@sub.example.com",
    ] {
        passes(
            Case::new().with("/spec/maintainers/0/email", json!(good)),
            "operatorhub",
            invalid,
        );
    }
    // No maintainers at all is not a finding of the reference.
    passes(
        Case::new().without("/spec/maintainers"),
        "operatorhub",
        incomplete,
    );
}

#[test]
fn links() {
    let incomplete = "operatorhub-link-incomplete";
    let invalid = "operatorhub-link-url-invalid";
    breaks(
        Case::new().with("/spec/links", json!([{"url": "https://example.com"}])),
        "operatorhub",
        incomplete,
        Level::Error,
    );
    for bad in [
        "example.com/docs",
        "https://exa mple.com",
        "https://example.com:http/",
        "http://x/%zz",
    ] {
        breaks(
            Case::new().with("/spec/links/0/url", json!(bad)),
            "operatorhub",
            invalid,
            Level::Error,
        );
    }
    for good in [
        "https://example.com/a b",
        "/docs",
        "mailto:a@example.com",
        "http://[::1]:8080/x",
    ] {
        passes(
            Case::new().with("/spec/links/0/url", json!(good)),
            "operatorhub",
            invalid,
        );
    }
}

#[test]
fn version_set() {
    let rule = "operatorhub-version-missing";
    breaks(
        Case::new().without("/spec/version"),
        "operatorhub",
        rule,
        Level::Error,
    );
    breaks(
        Case::new().with("/spec/version", json!("0.0.0")),
        "operatorhub",
        rule,
        Level::Error,
    );
    passes(
        Case::new().with("/spec/version", json!("0.0.1")),
        "operatorhub",
        rule,
    );
}

#[test]
fn icon() {
    let suite = "operatorhub";
    breaks(
        Case::new().without("/spec/icon"),
        suite,
        "operatorhub-icon-missing",
        Level::Warning,
    );
    breaks(
        Case::new().with("/spec/icon", Value::Null),
        suite,
        "operatorhub-icon-missing",
        Level::Warning,
    );
    breaks(
        Case::new().with("/spec/icon", json!([])),
        suite,
        "operatorhub-icon-count",
        Level::Error,
    );
    let two = json!([{"base64data": "eA==", "mediatype": "image/png"}, {"base64data": "eA==", "mediatype": "image/png"}]);
    breaks(
        Case::new().with("/spec/icon", two),
        suite,
        "operatorhub-icon-count",
        Level::Error,
    );
    breaks(
        Case::new().with("/spec/icon/0/base64data", json!("")),
        suite,
        "operatorhub-icon-incomplete",
        Level::Error,
    );
    breaks(
        Case::new().with("/spec/icon/0/mediatype", json!("image/x-icon")),
        suite,
        "operatorhub-icon-mediatype-invalid",
        Level::Error,
    );
    for good in ["image/gif", "image/jpeg", "image/svg+xml"] {
        passes(
            Case::new().with("/spec/icon/0/mediatype", json!(good)),
            suite,
            "operatorhub-icon-mediatype-invalid",
        );
    }
    // A mapping instead of a list does not decode; the default suite says so.
    let rules = Case::new()
        .with("/spec/icon", json!({"base64data": "eA=="}))
        .rules(suite);
    assert!(
        !rules.iter().any(|(r, _)| r.starts_with("operatorhub-icon")),
        "{rules:?}"
    );
}

#[test]
fn min_kube_version() {
    let suite = "operatorhub";
    breaks(
        Case::new().without("/spec/minKubeVersion"),
        suite,
        "operatorhub-min-kube-version-missing",
        Level::Warning,
    );
    // The reference parses it strictly: 1.25 is refused, 1.25.0 accepted.
    for bad in ["1.25", "v1.25.0", "latest"] {
        breaks(
            Case::new().with("/spec/minKubeVersion", json!(bad)),
            suite,
            "operatorhub-min-kube-version-invalid",
            Level::Error,
        );
    }
}

#[test]
fn ui_fields() {
    let suite = "operatorhub";
    for (pointer, rule) in [
        ("/spec/displayName", "operatorhub-display-name-missing"),
        ("/spec/description", "operatorhub-description-missing"),
        ("/spec/keywords", "operatorhub-keywords-missing"),
        ("/spec/maturity", "operatorhub-maturity-missing"),
        (
            "/metadata/annotations/containerImage",
            "operatorhub-container-image-missing",
        ),
        (
            "/metadata/annotations/repository",
            "operatorhub-repository-missing",
        ),
        (
            "/metadata/annotations/createdAt",
            "operatorhub-created-at-missing",
        ),
    ] {
        breaks(Case::new().without(pointer), suite, rule, Level::Warning);
    }
    breaks(
        Case::new().with("/spec/keywords", json!([""])),
        suite,
        "operatorhub-keywords-missing",
        Level::Warning,
    );
    breaks(
        Case::new().with("/spec/maturity", json!("gamma")),
        suite,
        "operatorhub-maturity-unknown",
        Level::Warning,
    );
    passes(
        Case::new().with("/spec/maturity", json!("alpha")),
        suite,
        "operatorhub-maturity-unknown",
    );
    breaks(
        Case::new().with("/metadata/annotations/repository", json!("github.com/x/y")),
        suite,
        "operatorhub-repository-url-invalid",
        Level::Warning,
    );
}

// ---- standard categories and capabilities ------------------------------

#[test]
fn categories() {
    let suite = "standard-categories";
    let rule = "standard-categories-invalid";
    breaks(
        Case::new().with("/metadata/annotations/categories", json!("Games")),
        suite,
        rule,
        Level::Error,
    );
    breaks(
        Case::new().with("/metadata/annotations/categories", json!("Storage,")),
        suite,
        rule,
        Level::Error,
    );
    breaks(
        Case::new().with("/metadata/annotations/categories", json!("storage")),
        suite,
        rule,
        Level::Error,
    );
    breaks(
        Case::new().with("/metadata/annotations/categories", json!("")),
        suite,
        rule,
        Level::Error,
    );
    for good in [
        " Observability ,Modernization & Migration",
        "AI/Machine Learning",
        "OpenShift Optional",
    ] {
        passes(
            Case::new().with("/metadata/annotations/categories", json!(good)),
            suite,
            rule,
        );
    }
    passes(
        Case::new().without("/metadata/annotations/categories"),
        suite,
        rule,
    );
    // One finding per bad entry.
    let rules = Case::new()
        .with("/metadata/annotations/categories", json!("A,B,Storage"))
        .rules(suite);
    assert_eq!(rules.iter().filter(|(r, _)| r == rule).count(), 2);
    // The operatorhub suite includes the category check.
    let rules = Case::new()
        .with("/metadata/annotations/categories", json!("Games"))
        .rules("operatorhub");
    assert!(has(&rules, rule, Level::Error));
}

#[test]
fn custom_categories_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("categories.json");
    std::fs::write(&file, r#"{"categories": ["Games", "Drivers"]}"#).expect("write");
    let set = standard::read_custom_categories(&file).expect("reads");
    let case = Case::new().with("/metadata/annotations/categories", json!("Games, Drivers"));
    let b = case.bundle();
    let csv = b.csv_manifest().expect("csv");
    let mut out = Vec::new();
    standard::check_categories_against(csv, Some(&set), &mut out);
    assert!(out.is_empty(), "{out:?}");
    // The standard categories are not in the custom set.
    let b = Case::new().bundle();
    standard::check_categories_against(b.csv_manifest().expect("csv"), Some(&set), &mut out);
    assert_eq!(out.len(), 2, "{out:?}");
    assert!(out
        .iter()
        .all(|f| f.rule == "standard-categories-invalid" && f.message.contains("custom")));
    // Bad files are errors, not panics.
    std::fs::write(&file, r#"{"categories": "Games"}"#).expect("write");
    assert!(standard::read_custom_categories(&file).is_err());
    std::fs::write(&file, "not json").expect("write");
    assert!(standard::read_custom_categories(&file).is_err());
    assert!(standard::read_custom_categories(&dir.path().join("missing.json")).is_err());
}

#[test]
fn capabilities() {
    let suite = "standard-capabilities";
    let rule = "standard-capabilities-invalid";
    for bad in ["basic install", "Basic", "", "Basic Install "] {
        breaks(
            Case::new().with("/metadata/annotations/capabilities", json!(bad)),
            suite,
            rule,
            Level::Error,
        );
    }
    for good in [
        "Seamless Upgrades",
        "Full Lifecycle",
        "Deep Insights",
        "Auto Pilot",
    ] {
        passes(
            Case::new().with("/metadata/annotations/capabilities", json!(good)),
            suite,
            rule,
        );
    }
    passes(
        Case::new().without("/metadata/annotations/capabilities"),
        suite,
        rule,
    );
    let f = Case::new()
        .with("/metadata/annotations/capabilities", json!("auto pilot"))
        .run(&[suite], None);
    assert_eq!(
        f[0].hint.as_deref(),
        Some("write it exactly as `Auto Pilot`")
    );
}

// ---- alpha-deprecated-apis ---------------------------------------------

const V1BETA1_CRD: &str =
    "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\n\
                           metadata:\n  name: olds.example.com\nspec:\n  group: example.com\n";

fn object(api_version: &str, kind: &str) -> String {
    format!("apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: thing\n")
}

#[test]
fn removed_apis_levels_follow_the_target() {
    let suite = "alpha-deprecated-apis";
    let rule = "alpha-deprecated-apis-removed-1-22";
    let case = || {
        Case::new()
            .without("/spec/minKubeVersion")
            .manifest("old.crd.yaml", V1BETA1_CRD)
    };
    // No target: the bundle may land on any cluster, a warning.
    assert!(has(&case().rules(suite), rule, Level::Warning));
    // Targeting a release before the removal: still a warning.
    let f = case().run(&[suite], Some("1.21"));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].level, Level::Warning);
    // At or past the removal: an error, and the message says why.
    for k8s in ["1.22", "1.22.0", "v1.30"] {
        let f = case().run(&[suite], Some(k8s));
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].level, Level::Error, "{k8s}");
        assert!(
            f[0].message.contains("target Kubernetes version"),
            "{}",
            f[0].message
        );
    }
    // minKubeVersion at or past the removal makes it an error too.
    let f = case()
        .with("/spec/minKubeVersion", json!("1.22.0"))
        .run(&[suite], None);
    assert_eq!(f[0].level, Level::Error);
    assert!(f[0].message.contains("minKubeVersion"));
    let f = case()
        .with("/spec/minKubeVersion", json!("1.21.0"))
        .run(&[suite], None);
    assert_eq!(f[0].level, Level::Warning);
    // The finding points at the object's apiVersion.
    let loc = f[0].location.as_ref().expect("located");
    assert_eq!(
        (loc.file.as_path(), loc.line, loc.column),
        (Path::new("case/manifests/old.crd.yaml"), 1, 13)
    );
    // The operatorhub suite includes the check.
    assert!(has(&case().rules("operatorhub"), rule, Level::Warning));
    // A v1 CRD passes.
    passes(Case::new(), suite, rule);
}

#[test]
fn removed_apis_by_release() {
    let suite = "alpha-deprecated-apis";
    for (api_version, kind, release) in [
        ("extensions/v1beta1", "Deployment", "1-16"),
        ("apps/v1beta2", "StatefulSet", "1-16"),
        ("rbac.authorization.k8s.io/v1beta1", "ClusterRole", "1-22"),
        (
            "admissionregistration.k8s.io/v1beta1",
            "ValidatingWebhookConfiguration",
            "1-22",
        ),
        ("scheduling.k8s.io/v1beta1", "PriorityClass", "1-22"),
        ("networking.k8s.io/v1beta1", "Ingress", "1-22"),
        ("extensions/v1beta1", "Ingress", "1-22"),
        ("policy/v1beta1", "PodDisruptionBudget", "1-25"),
        ("batch/v1beta1", "CronJob", "1-25"),
        ("autoscaling/v2beta1", "HorizontalPodAutoscaler", "1-25"),
        ("autoscaling/v2beta2", "HorizontalPodAutoscaler", "1-26"),
        ("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema", "1-26"),
        ("storage.k8s.io/v1beta1", "CSIStorageCapacity", "1-27"),
        (
            "flowcontrol.apiserver.k8s.io/v1beta2",
            "PriorityLevelConfiguration",
            "1-29",
        ),
        ("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", "1-32"),
    ] {
        let rule = format!("alpha-deprecated-apis-removed-{release}");
        let case = Case::new().manifest("obj.yaml", &object(api_version, kind));
        // minKubeVersion 1.25.0 of the clean CSV decides the level.
        let removed_by_1_25 = ["1-16", "1-22", "1-25"].contains(&release);
        let level = if removed_by_1_25 {
            Level::Error
        } else {
            Level::Warning
        };
        let rules = case.rules(suite);
        assert!(has(&rules, &rule, level), "{api_version} {kind}: {rules:?}");
        let f = Case::new()
            .manifest("obj.yaml", &object(api_version, kind))
            .run(&[suite], Some("1.40"));
        assert_eq!(f[0].level, Level::Error, "{api_version} {kind}");
    }
    // Current versions pass.
    for (api_version, kind) in [
        ("policy/v1", "PodDisruptionBudget"),
        ("autoscaling/v2", "HorizontalPodAutoscaler"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole"),
        ("v1", "Service"),
        ("a/b/c", "Weird"),
    ] {
        let f = Case::new()
            .manifest("obj.yaml", &object(api_version, kind))
            .run(&[suite], Some("1.40"));
        assert!(f.is_empty(), "{api_version} {kind}: {f:?}");
    }
}

#[test]
fn removed_apis_in_csv_fields() {
    let suite = "alpha-deprecated-apis";
    // An owned CRD's resource naming a removed API.
    let case = Case::new().with(
        "/spec/customresourcedefinitions/owned/0/resources",
        json!([{"kind": "CronJob", "version": "batch/v1beta1", "name": "x"}]),
    );
    assert!(has(
        &case.rules(suite),
        "alpha-deprecated-apis-removed-1-25",
        Level::Error
    ));
    // Permissions on a resource whose beta API 1.25 removed: always a warning.
    let perm = "alpha-deprecated-apis-permission-1-25";
    let case = || {
        Case::new().with(
            "/spec/install/spec/permissions",
            json!([{"serviceAccountName": "sa", "rules": [
                {"apiGroups": ["", "batch"], "resources": ["pods", "cronjobs"], "verbs": ["get"]}
            ]}]),
        )
    };
    for k8s in [None, Some("1.30")] {
        let f: Vec<Finding> = case()
            .run(&[suite], k8s)
            .into_iter()
            .filter(|f| f.rule == perm)
            .collect();
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].level, Level::Warning);
        assert!(f[0].message.contains("batch/cronjobs"), "{}", f[0].message);
    }
    // …unless the CSV describes that resource as its own (the clean fixture
    // grants policy/poddisruptionbudgets and describes PodDisruptionBudget).
    passes(Case::new(), suite, perm);
    let f = Case::new()
        .with(
            "/spec/customresourcedefinitions/owned/0/resources",
            json!([]),
        )
        .run(&[suite], None);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].rule, perm);
}

#[test]
fn bad_target_versions() {
    let suite = "alpha-deprecated-apis";
    let f = Case::new().run(&[suite], Some("one.two"));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(
        (f[0].rule.as_str(), f[0].level),
        ("alpha-deprecated-apis-k8s-version-invalid", Level::Error)
    );
    // With an unusable target the removals stay warnings.
    let f = Case::new()
        .manifest("old.crd.yaml", V1BETA1_CRD)
        .without("/spec/minKubeVersion")
        .run(&[suite], Some("x"));
    assert!(f
        .iter()
        .any(|f| f.rule == "alpha-deprecated-apis-removed-1-22" && f.level == Level::Warning));
    breaks(
        Case::new().with("/spec/minKubeVersion", json!("latest")),
        suite,
        "alpha-deprecated-apis-min-kube-version-invalid",
        Level::Error,
    );
    // Tolerant parsing, as the reference: 1.25 is a usable minKubeVersion here.
    passes(
        Case::new().with("/spec/minKubeVersion", json!("1.25")),
        suite,
        "alpha-deprecated-apis-min-kube-version-invalid",
    );
}

// ---- good-practices ----------------------------------------------------

#[test]
fn deployments_and_resource_requests() {
    let suite = "good-practices";
    breaks(
        Case::new().without("/spec/install/spec/deployments"),
        suite,
        "good-practices-no-deployments",
        Level::Error,
    );
    breaks(
        Case::new().without("/spec/install"),
        suite,
        "good-practices-no-deployments",
        Level::Error,
    );
    passes(
        Case::new().with("/spec/install/spec/deployments", json!([])),
        suite,
        "good-practices-no-deployments",
    );
    let c = "/spec/install/spec/deployments/0/spec/template/spec/containers/0";
    breaks(
        Case::new().without(&format!("{c}/resources")),
        suite,
        "good-practices-resource-requests-missing",
        Level::Warning,
    );
    breaks(
        Case::new().with(&format!("{c}/resources"), json!({"limits": {"cpu": "1"}})),
        suite,
        "good-practices-resource-requests-missing",
        Level::Warning,
    );
    breaks(
        Case::new().with(&format!("{c}/resources/requests"), json!({"memory": "1Gi"})),
        suite,
        "good-practices-resource-requests-incomplete",
        Level::Warning,
    );
    // Init containers are not checked, as in the reference.
    passes(
        Case::new().with(
            "/spec/install/spec/deployments/0/spec/template/spec/initContainers",
            json!([{"name": "init", "image": "x"}]),
        ),
        suite,
        "good-practices-resource-requests-missing",
    );
}

#[test]
fn crd_descriptions() {
    let suite = "good-practices";
    let rule = "good-practices-crd-description-empty";
    breaks(
        Case::new().without("/spec/customresourcedefinitions/owned/0/description"),
        suite,
        rule,
        Level::Warning,
    );
    breaks(
        Case::new().with(
            "/spec/customresourcedefinitions/required",
            json!([{"name": "others.example.com", "version": "v1", "kind": "Other", "description": ""}]),
        ),
        suite,
        rule,
        Level::Warning,
    );
}

#[test]
fn channel_naming() {
    let suite = "good-practices";
    let rule = "good-practices-channel-naming";
    breaks(
        Case::new().channels("alpha", "alpha"),
        suite,
        rule,
        Level::Warning,
    );
    breaks(
        Case::new().channels("stable", "beta"),
        suite,
        rule,
        Level::Warning,
    );
    for good in [
        "stable",
        "candidate-v1.2",
        "fast,stable-v2",
        " stable , fast ",
    ] {
        passes(Case::new().channels(good, "stable"), suite, rule);
    }
    // One finding per channel name, even when it is also the default.
    let f = Case::new()
        .channels("alpha,beta", "alpha")
        .run(&[suite], None);
    let names: Vec<&str> = f
        .iter()
        .filter(|f| f.rule == rule)
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn rbac_to_create_crds() {
    let suite = "good-practices";
    let rule = "good-practices-rbac-creates-crds";
    for (resources, verbs) in [
        (json!(["customresourcedefinitions"]), json!(["create"])),
        (json!(["*"]), json!(["patch"])),
        (json!(["customresourcedefinitions"]), json!(["*"])),
    ] {
        breaks(
            Case::new().with(
                "/spec/install/spec/clusterPermissions/0/rules/1",
                json!({"apiGroups": ["apiextensions.k8s.io"], "resources": resources, "verbs": verbs}),
            ),
            suite,
            rule,
            Level::Warning,
        );
    }
    // Reading CRDs is fine (the clean fixture does), and so is another group.
    passes(
        Case::new().with(
            "/spec/install/spec/clusterPermissions/0/rules/1",
            json!({"apiGroups": ["example.com"], "resources": ["*"], "verbs": ["*"]}),
        ),
        suite,
        rule,
    );
    // Once per CSV, however many rules grant it.
    let twice = json!([
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["*"], "verbs": ["create"]},
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["*"], "verbs": ["create"]}
    ]);
    let rules = Case::new()
        .with("/spec/install/spec/clusterPermissions/0/rules", twice)
        .rules(suite);
    assert_eq!(rules.iter().filter(|(r, _)| r == rule).count(), 1);
}

#[test]
fn bundle_name() {
    let suite = "good-practices";
    let semver = "good-practices-bundle-name-not-semver";
    let convention = "good-practices-bundle-name-convention";
    breaks(
        Case::new().with("/metadata/name", json!("example-operator.v1.2")),
        suite,
        semver,
        Level::Warning,
    );
    breaks(
        Case::new().with("/metadata/name", json!("example-operator.v01.2.3")),
        suite,
        semver,
        Level::Warning,
    );
    breaks(
        Case::new().with("/metadata/name", json!("example-operator-1.2.3")),
        suite,
        convention,
        Level::Warning,
    );
    breaks(
        Case::new().with("/metadata/name", json!("example.vendor.v1.2.3")),
        suite,
        convention,
        Level::Warning,
    );
    passes(
        Case::new().with("/metadata/name", json!("example-operator.v1.2.3-rc.1")),
        suite,
        semver,
    );
    passes(
        Case::new().with("/metadata/name", json!("example-operator.v1.2.3+git")),
        suite,
        semver,
    );
}

// ---- selection and robustness ------------------------------------------

#[test]
fn only_selected_suites_run() {
    let case = Case::new()
        .with("/metadata/annotations/categories", json!("Games"))
        .with("/metadata/name", json!("nonsemver"));
    let rules = case.rules("standard-categories");
    assert!(
        rules
            .iter()
            .all(|(r, _)| r.starts_with("standard-categories-")),
        "{rules:?}"
    );
    let rules = case.rules("good-practices");
    assert!(
        rules.iter().all(|(r, _)| r.starts_with("good-practices-")),
        "{rules:?}"
    );
    assert!(case.run(&[], None).is_empty());
    // Running a check through two suites reports it once.
    let f = case.run(&["operatorhub", "standard-categories"], None);
    assert_eq!(
        f.iter()
            .filter(|f| f.rule == "standard-categories-invalid")
            .count(),
        1
    );
}

#[test]
fn unknown_suite_is_an_error() {
    let f = Case::new().run(&["operatorhubb"], None);
    assert_eq!(f.len(), 1);
    assert_eq!(
        (f[0].rule.as_str(), f[0].level),
        ("optional-suite-unknown", Level::Error)
    );
    assert!(f[0]
        .hint
        .as_deref()
        .unwrap_or("")
        .contains("good-practices"));
}

#[test]
fn bundle_without_csv_gives_no_optional_findings() {
    let b = Bundle::from_files(
        Path::new("case"),
        vec![raw(CRD_FILE, &clean_file(CRD_FILE))],
    );
    let options = Options {
        optional: SUITES.iter().map(|(n, _)| n.to_string()).collect(),
        k8s_version: Some("1.25".into()),
        ..Options::default()
    };
    let f: Vec<Finding> = validate_bundle(&b, &options)
        .findings
        .into_iter()
        .filter(|f| is_optional_rule(&f.rule))
        .collect();
    assert!(f.is_empty(), "{f:?}");
}

#[test]
fn wrong_types_do_not_panic() {
    let all: Vec<&str> = SUITES.iter().map(|(n, _)| *n).collect();
    let odd = [
        ("/spec", json!("a string")),
        ("/spec/maintainers", json!({"name": "x"})),
        ("/spec/maintainers", json!(["x", 3, null])),
        ("/spec/links", json!([{"name": ["x"], "url": {"a": 1}}])),
        ("/spec/icon", json!(["x"])),
        ("/spec/icon", json!("x")),
        ("/spec/version", json!(1.5)),
        ("/spec/minKubeVersion", json!(["1.25.0"])),
        ("/metadata", json!([])),
        (
            "/metadata/annotations",
            json!({"categories": 5, "capabilities": true}),
        ),
        ("/spec/install/spec/deployments", json!("x")),
        (
            "/spec/install/spec/deployments",
            json!([null, {"spec": []}]),
        ),
        (
            "/spec/install/spec/clusterPermissions",
            json!([{"rules": [{"apiGroups": "x", "resources": null}]}]),
        ),
        (
            "/spec/customresourcedefinitions",
            json!({"owned": [{"resources": [5, {"kind": []}]}]}),
        ),
    ];
    for (pointer, value) in odd {
        for k8s in [None, Some("1.25"), Some("garbage")] {
            let _ = Case::new().with(pointer, value.clone()).run(&all, k8s);
        }
    }
    // Manifests that are not objects, or objects without kind or apiVersion.
    let _ = Case::new()
        .manifest("a.yaml", "- 1\n- 2\n")
        .manifest("b.yaml", "kind: 5\napiVersion: [x]\n")
        .manifest("c.yaml", "")
        .run(&all, Some("1.25"));
}

#[test]
fn suites_are_listed_with_descriptions() {
    let names: Vec<&str> = SUITES.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "operatorhub",
            "good-practices",
            "alpha-deprecated-apis",
            "standard-categories",
            "standard-capabilities"
        ]
    );
    assert!(SUITES
        .iter()
        .all(|(_, d)| !d.is_empty() && !d.contains('\n')));
}

/// Platforms by image name, for the multiarch suite without a registry.
struct FakePlatforms;

impl olm_catalog::validate::optional::multiarch::ImagePlatforms for FakePlatforms {
    fn platforms(
        &self,
        image: &str,
    ) -> Result<Vec<olm_catalog::validate::optional::multiarch::ImagePlatform>, String> {
        use olm_catalog::validate::optional::multiarch::ImagePlatform;
        let p = |os: &str, arch: &str| ImagePlatform {
            os: os.into(),
            architecture: arch.into(),
        };
        Ok(match image {
            "quay.io/example/operator:v1.2.3" => vec![p("linux", "amd64"), p("windows", "amd64")],
            "quay.io/example/helper:v1" => vec![p("linux", "amd64")],
            "quay.io/example/helper:v2" => vec![p("linux", "amd64"), p("windows", "amd64")],
            other => return Err(format!("unknown image {other}")),
        })
    }
}

fn multiarch_rules(case: &Case) -> Vec<(String, Level)> {
    let options = Options {
        optional: vec!["multiarch".into()],
        image_platforms: Some(std::sync::Arc::new(FakePlatforms)),
        ..Options::default()
    };
    validate_bundle(&case.bundle(), &options)
        .findings
        .into_iter()
        .filter(|f| f.rule.starts_with("multiarch-"))
        .map(|f| (f.rule, f.level))
        .collect()
}

#[test]
fn multiarch_os_rules() {
    // The operator image also runs on Windows; the CSV does not say so and
    // the helper image does not provide it.
    let case = Case::new().with(
        "/spec/relatedImages",
        json!([{"name": "helper", "image": "quay.io/example/helper:v1"}]),
    );
    let rules = multiarch_rules(&case);
    assert!(
        has(&rules, "multiarch-os-label-missing", Level::Warning),
        "{rules:?}"
    );
    assert!(
        has(&rules, "multiarch-image-os-missing", Level::Warning),
        "{rules:?}"
    );
    // Labelled, and every image provides both systems: nothing to report.
    let case = Case::new()
        .with(
            "/spec/relatedImages",
            json!([{"name": "helper", "image": "quay.io/example/helper:v2"}]),
        )
        .with(
            "/metadata/labels",
            json!({
                "operatorframework.io/os.linux": "supported",
                "operatorframework.io/os.windows": "supported",
            }),
        );
    let rules = multiarch_rules(&case);
    assert!(rules.is_empty(), "{rules:?}");
}

#[test]
fn custom_categories_file_that_cannot_be_read_is_reported() {
    // Through the CLI, so the environment variable stays out of this process.
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("categories.json");
    std::fs::write(&bad, "not json").expect("write");
    let bundle = common::fixtures().join("optional/clean");
    let run = |file: &Path| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_olm-catalog"))
            .args([
                "bundle",
                "validate",
                "--select-optional",
                "name=standardcategories",
                "-o",
                "json",
            ])
            .arg(&bundle)
            .env("OPERATOR_BUNDLE_CATEGORIES", file)
            .output()
            .expect("runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = run(&bad);
    assert!(
        text.contains("\"standard-categories-custom-file-invalid\""),
        "{text}"
    );
    std::fs::write(
        &bad,
        r#"{"categories": ["Database", "Developer Tools", "Games"]}"#,
    )
    .expect("write");
    let text = run(&bad);
    assert!(
        !text.contains("standard-categories-custom-file-invalid"),
        "{text}"
    );
}

#[test]
fn every_optional_rule_has_a_case() {
    // The ids used in the optional test files, to catch a rule added
    // without a test; removed-API ids are built from their release there.
    let here = [
        include_str!("validate_optional.rs"),
        include_str!("validate_multiarch.rs"),
    ]
    .concat();
    let untested: Vec<&str> = olm_catalog::validate::optional::rules::OPTIONAL_RULES
        .iter()
        .map(|r| r.id)
        .filter(|id| {
            if let Some(release) = id.strip_prefix("alpha-deprecated-apis-removed-") {
                // removed_apis_by_release builds these ids from "1-16", ….
                return !here.contains(&format!("\"{release}\""));
            }
            !here.contains(&format!("\"{id}\""))
        })
        .collect();
    assert!(
        untested.is_empty(),
        "optional rules without a case: {untested:?}"
    );
    // And every optional rule a suite reports is in the catalog.
    for src in [
        include_str!("../src/validate/optional/operatorhub.rs"),
        include_str!("../src/validate/optional/good_practices.rs"),
        include_str!("../src/validate/optional/deprecated_apis.rs"),
        include_str!("../src/validate/optional/standard.rs"),
        include_str!("../src/validate/optional/multiarch.rs"),
    ] {
        for cap in src.split('"').skip(1).step_by(2) {
            let looks_like_rule = [
                "operatorhub-",
                "good-practices-",
                "standard-categories-",
                "standard-capabilities-",
                "multiarch-",
                "alpha-deprecated-apis-",
            ]
            .iter()
            .any(|p| cap.starts_with(p))
                && cap
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !cap.ends_with('-');
            if looks_like_rule {
                assert!(
                    olm_catalog::validate::optional::rules::rule(cap).is_some(),
                    "{cap} is reported but not in OPTIONAL_RULES"
                );
            }
        }
    }
}
