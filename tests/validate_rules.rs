//! One case per default rule: the good fixture passes every rule, and a copy
//! of it with one edit breaks exactly the rule under test (at its level, with
//! a location).

use crate::common;

use std::fs;
use std::path::PathBuf;

use olm_catalog::diag::{Level, Report};
use olm_catalog::validate::{self, rules, Options};

const CSV: &str = "manifests/memcached-operator.clusterserviceversion.yaml";
const CRD: &str = "manifests/cache.example.com_memcacheds.yaml";
const SVC: &str = "manifests/memcached-operator-metrics_v1_service.yaml";
const ANN: &str = "metadata/annotations.yaml";

fn good() -> PathBuf {
    common::fixtures().join("bundles/good/memcached-operator-0.0.2")
}

/// A writable copy of the good bundle.
struct Fixture {
    tmp: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().expect("tempdir");
        common::copy_dir(&good(), &tmp.path().join("b"));
        Fixture { tmp }
    }
    fn dir(&self) -> PathBuf {
        self.tmp.path().join("b")
    }
    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.dir().join(rel)).expect("read")
    }
    fn write(&self, rel: &str, text: &str) -> &Fixture {
        fs::write(self.dir().join(rel), text).expect("write");
        self
    }
    fn edit(&self, rel: &str, from: &str, to: &str) -> &Fixture {
        let text = self.read(rel);
        assert!(text.contains(from), "{rel} does not contain {from:?}");
        self.write(rel, &text.replacen(from, to, 1))
    }
    fn remove(&self, rel: &str) -> &Fixture {
        let p = self.dir().join(rel);
        if p.is_dir() {
            fs::remove_dir_all(p).expect("rm dir");
        } else {
            fs::remove_file(p).expect("rm");
        }
        self
    }
    fn report(&self) -> Report {
        validate::validate_dir(&self.dir(), &Options::default())
    }
}

/// Asserts that `report` has a finding of `rule` at the rule's catalog level
/// and with a file location.
fn assert_rule(report: &Report, rule: &str) {
    let expected = rules::rule(rule).map(|r| r.level).unwrap_or(Level::Warning);
    let f = report
        .findings
        .iter()
        .find(|f| f.rule == rule)
        .unwrap_or_else(|| panic!("no {rule} finding in {:#?}", report.findings));
    assert_eq!(f.level, expected, "{rule} level");
    let loc = f.location.as_ref().expect("located");
    assert!(
        loc.file.starts_with(report.subject.as_str()),
        "{rule} points into the bundle: {}",
        loc.file.display()
    );
}

/// Asserts the rule and returns the line of its first finding.
fn line_of(report: &Report, rule: &str) -> u32 {
    assert_rule(report, rule);
    report
        .findings
        .iter()
        .find(|f| f.rule == rule)
        .and_then(|f| f.location.as_ref())
        .map(|l| l.line)
        .unwrap_or(0)
}

fn rules_of(report: &Report) -> Vec<&str> {
    report.findings.iter().map(|f| f.rule.as_str()).collect()
}

#[test]
fn good_bundle_passes_every_rule() {
    let r = validate::validate_dir(&good(), &Options::default());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn load_rules() {
    let f = Fixture::new();
    f.write(CSV, "apiVersion: operators.coreos.com/v1alpha1\nkind: [\n");
    let r = f.report();
    // The unclosed flow sequence is found at the end of the text.
    assert_eq!(line_of(&r, "yaml-syntax"), 3);
    let missing = r
        .findings
        .iter()
        .find(|x| x.rule == "csv-missing")
        .expect("csv-missing");
    assert!(
        missing
            .hint
            .as_deref()
            .unwrap_or("")
            .contains("memcached-operator.clusterserviceversion.yaml"),
        "{missing:?}"
    );

    let f = Fixture::new();
    f.edit(
        CSV,
        "spec:\n  displayName: Memcached Operator\n",
        "spec:\n  displayName: First\n  displayName: Memcached Operator\n",
    );
    assert!(line_of(&f.report(), "yaml-duplicate-key") > 0);

    let f = Fixture::new();
    f.write("manifests/empty.yaml", "\n");
    assert_rule(&f.report(), "file-empty");

    let f = Fixture::new();
    fs::write(f.dir().join("manifests/bin.yaml"), b"kind: \xff\xfe\n").expect("write");
    assert_rule(&f.report(), "file-not-utf8");

    let f = Fixture::new();
    f.write(
        "manifests/tabs.yaml",
        "kind: Service\nmetadata:\n\tname: x\n",
    );
    let r = f.report();
    assert_eq!(line_of(&r, "yaml-syntax"), 3);

    let f = Fixture::new();
    f.write("manifests/list.yaml", "- a\n- b\n");
    assert_rule(&f.report(), "manifest-not-an-object");

    let f = Fixture::new();
    fs::create_dir(f.dir().join("manifests/nested")).expect("mkdir");
    assert_rule(&f.report(), "manifest-subdirectory-ignored");

    let f = Fixture::new();
    f.remove("manifests");
    assert_rule(&f.report(), "bundle-no-manifests-dir");

    let f = Fixture::new();
    f.remove("metadata");
    assert_rule(&f.report(), "bundle-no-metadata-dir");

    let f = Fixture::new();
    f.remove(ANN);
    assert_rule(&f.report(), "annotations-missing");
}

#[test]
fn file_too_large_is_refused_without_reading() {
    let f = Fixture::new();
    let big = fs::File::create(f.dir().join("manifests/huge.yaml")).expect("create");
    // Sparse: a 5 GiB file with no data written.
    big.set_len(5 << 30).expect("set_len 5 GiB");
    assert_rule(&f.report(), "file-too-large");
}

/// Pseudo-random text that gzip cannot shrink much.
fn noise(len: usize) -> String {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if i % 80 == 79 {
                '\n'
            } else {
                char::from(b'!' + (x % 94) as u8)
            }
        })
        .collect()
}

fn big_config_map(body: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: |\n{}\n",
        body.lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    )
}

#[test]
fn bundle_size_rules() {
    // The limit is 1 MiB gzip-compressed; the warning starts at 85% of it.
    let f = Fixture::new();
    f.write("manifests/big.yaml", &big_config_map(&noise(1_150_000)));
    let r = f.report();
    assert_rule(&r, "bundle-size-near-limit");
    assert!(!rules_of(&r).contains(&"bundle-size-exceeded"));
    let f = Fixture::new();
    f.write("manifests/big.yaml", &big_config_map(&noise(2_000_000)));
    let r = f.report();
    assert_rule(&r, "bundle-size-exceeded");
    let msg = &r
        .findings
        .iter()
        .find(|x| x.rule == "bundle-size-exceeded")
        .expect("finding")
        .message;
    assert!(msg.contains("max=1.0 MB"), "{msg}");
    // 6 MB that compress well pass: only the compressed size counts.
    let f = Fixture::new();
    f.write(
        "manifests/big.yaml",
        &big_config_map(&"spec: the same line again and again\n".repeat(160_000)),
    );
    let r = f.report();
    assert!(
        !rules_of(&r).iter().any(|x| x.starts_with("bundle-size")),
        "{:#?}",
        r.findings
    );
}

#[cfg(unix)]
#[test]
fn symlink_outside_bundle() {
    let f = Fixture::new();
    let outside = f.tmp.path().join("outside.yaml");
    fs::write(&outside, "kind: Secret\n").expect("write");
    std::os::unix::fs::symlink(&outside, f.dir().join("manifests/link.yaml")).expect("symlink");
    assert_rule(&f.report(), "symlink-outside-bundle");
}

#[test]
fn hostile_yaml_is_reported() {
    let f = Fixture::new();
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    let mut prev = 'a';
    for name in ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] {
        bomb.push_str(&format!("{name}: &{name} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        prev = name;
    }
    f.write("manifests/bomb.yaml", &bomb);
    f.write("manifests/deep.yaml", &"[".repeat(100_000));
    let r = f.report();
    let syntax: Vec<_> = r
        .findings
        .iter()
        .filter(|x| x.rule == "yaml-syntax")
        .collect();
    assert_eq!(syntax.len(), 2, "{syntax:#?}");
}

#[test]
fn annotation_rules() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "  operators.operatorframework.io.bundle.package.v1: memcached-operator\n",
            "",
            "annotation-missing",
        ),
        (
            "  operators.operatorframework.io.bundle.channel.default.v1: stable\n",
            "",
            "annotation-default-channel-missing",
        ),
        ("registry+v1", "plain+v0", "annotation-mediatype-invalid"),
        (
            "package.v1: memcached-operator",
            "package.v1: ''",
            "annotation-empty",
        ),
        (
            "channel.default.v1: stable",
            "channel.default.v1: beta",
            "annotation-default-channel-not-in-channels",
        ),
        (
            "manifests.v1: manifests/",
            "manifests.v1: manifest/",
            "annotation-manifests-path-mismatch",
        ),
        (
            "metadata.v1: metadata/",
            "metadata.v1: meta/",
            "annotation-metadata-path-mismatch",
        ),
    ];
    for (from, to, rule) in cases {
        let f = Fixture::new();
        f.edit(ANN, from, to);
        assert_rule(&f.report(), rule);
    }
    // Equivalent spellings of the directories are accepted.
    let f = Fixture::new();
    f.edit(ANN, "manifests.v1: manifests/", "manifests.v1: ./manifests");
    assert!(f.report().findings.is_empty());
}

#[test]
fn dependency_rules() {
    let f = Fixture::new();
    f.write(
        "metadata/dependencies.yaml",
        "dependencies:\n- type: olm.package\n  value:\n    packageName: etcd\n    version: '>=0.9.0 <1.0.0'\n- type: olm.gvk\n  value: {group: etcd.database.coreos.com, version: v1beta2, kind: EtcdCluster}\n",
    );
    assert!(f.report().findings.is_empty(), "{:#?}", f.report().findings);
    f.write(
        "metadata/dependencies.yaml",
        "dependencies:\n- type: olm.package\n  value:\n    packageName: etcd\n    version: '1.2'\n",
    );
    assert_eq!(line_of(&f.report(), "dependency-invalid"), 5);
    f.write(
        "metadata/dependencies.yaml",
        "dependencies:\n- type: olm.gvk\n  value: {group: g.io, kind: K}\n",
    );
    assert_rule(&f.report(), "dependency-invalid");
    f.write(
        "metadata/dependencies.yaml",
        "dependencies:\n- type: olm.thing\n  value: {}\n",
    );
    assert_rule(&f.report(), "dependency-type-unsupported");
}

#[test]
fn manifest_rules() {
    let f = Fixture::new();
    f.remove(CSV);
    assert_rule(&f.report(), "csv-missing");

    let f = Fixture::new();
    let csv = f.read(CSV);
    f.write(
        "manifests/second.clusterserviceversion.yaml",
        &csv.replace("memcached-operator.v0.0.2", "other.v0.0.2"),
    );
    assert_rule(&f.report(), "csv-multiple");

    let f = Fixture::new();
    let svc = f.read(SVC);
    f.write(CSV, &format!("{csv}---\n{svc}"));
    assert_rule(&f.report(), "csv-file-multiple-documents");

    let f = Fixture::new();
    f.write(
        SVC,
        &format!(
            "{svc}---\n{}",
            svc.replace("memcached-operator-metrics", "second")
        ),
    );
    let r = f.report();
    assert_rule(&r, "manifest-extra-document");
    assert!(!rules_of(&r).contains(&"manifest-extra-document-dropped-api"));

    let f = Fixture::new();
    let crd = f.read(CRD);
    f.write(SVC, &format!("{svc}---\n{crd}"));
    f.remove(CRD);
    assert_rule(&f.report(), "manifest-extra-document-dropped-api");

    let f = Fixture::new();
    f.write(
        "manifests/nokind.yaml",
        "apiVersion: v1\nmetadata:\n  name: x\n",
    );
    assert_rule(&f.report(), "manifest-kind-missing");

    let f = Fixture::new();
    f.write(
        "manifests/deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\n",
    );
    assert_eq!(line_of(&f.report(), "manifest-kind-unsupported"), 2);

    let f = Fixture::new();
    f.edit(
        SVC,
        "control-plane: controller-manager\nspec",
        "control-plane: controller manager!\nspec",
    );
    assert_rule(&f.report(), "object-metadata-invalid");
    let f = Fixture::new();
    f.edit(SVC, "  name: memcached-operator-metrics\n", "");
    assert_rule(&f.report(), "object-metadata-invalid");
    // A string field of ObjectMeta given a number: Go's decoding fails
    // (operator-registry validate_test.go, "invalid sa").
    let f = Fixture::new();
    f.edit(
        SVC,
        "  name: memcached-operator-metrics\n",
        "  name: memcached-operator-metrics\n  namespace: 0\n",
    );
    let report = f.report();
    assert_rule(&report, "object-metadata-invalid");
    assert!(
        report.findings.iter().any(|x| x.message.contains(
            "cannot unmarshal number into Go struct field ObjectMeta.metadata.namespace of type string"
        )),
        "{:?}",
        report.findings
    );

    let f = Fixture::new();
    f.edit(
        SVC,
        "name: memcached-operator-metrics",
        "name: Memcached_Metrics",
    );
    let r = f.report();
    assert_eq!(line_of(&r, "resource-name-invalid"), 4);
    let hint = r.findings[0].hint.as_deref().unwrap_or("");
    assert!(
        hint.contains("operator-sdk bundle validate does not check this"),
        "{hint}"
    );
    // RBAC names may hold colons.
    let f = Fixture::new();
    f.write("manifests/role.yaml", "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: system:memcached\nrules: []\n");
    assert!(f.report().findings.is_empty(), "{:#?}", f.report().findings);
}

/// Edits of the CSV and the rule each one breaks.
const CSV_CASES: &[(&str, &str, &str)] = &[
    (
        "supported: false\n  - type: AllNamespaces",
        "supported: 'maybe'\n  - type: AllNamespaces",
        "csv-decode",
    ),
    (
        "name: memcached-operator.v0.0.2",
        "name: Memcached-Operator.v0.0.2",
        "csv-name-invalid",
    ),
    (
        "replaces: memcached-operator.v0.0.1",
        "replaces: Memcached_Old",
        "csv-replaces-invalid",
    ),
    (
        "  displayName: Memcached Operator\n",
        "",
        "csv-field-missing",
    ),
    (
        "  install:\n    strategy: deployment\n",
        "  install:\n    strategyx: deployment\n",
        "csv-field-missing",
    ),
    (
        "apiVersion: operators.coreos.com/v1alpha1\n",
        "",
        "csv-api-version-missing",
    ),
    (
        "  annotations:\n    alm-examples",
        "  notannotations:\n    alm-examples",
        "csv-annotations-missing",
    ),
    ("alm-examples:", "x-examples:", "csv-examples-missing"),
    (
        "    capabilities: Basic Install\n",
        "    capabilities: Basic Install\n    olm.examples: '[]'\n",
        "csv-examples-both",
    ),
    (
        "\"kind\": \"Memcached\",",
        "\"kind\": \"Memcached\"",
        "csv-examples-invalid",
    ),
    (
        "\"kind\": \"Memcached\",",
        "\"kind\": \"Memcache\",",
        "csv-example-without-api",
    ),
    (
        "\"kind\": \"Memcached\",",
        "\"kind\": \"Memcache\",",
        "csv-api-without-example",
    ),
    (
        "- name: memcacheds.cache.example.com",
        "- name: memcacheds",
        "csv-owned-crd-name-invalid",
    ),
    (
        "  installModes:",
        "  xinstallModes:",
        "csv-install-modes-missing",
    ),
    (
        "type: MultiNamespace",
        "type: OwnNamespace",
        "csv-install-modes-duplicate",
    ),
    (
        "type: AllNamespaces",
        "type: AllNamespace",
        "csv-install-mode-unknown",
    ),
    (
        "  minKubeVersion: 1.25.0\n",
        "",
        "csv-min-kube-version-missing",
    ),
    (
        "minKubeVersion: 1.25.0",
        "minKubeVersion: 1.25",
        "csv-min-kube-version-invalid",
    ),
    ("olm.skipRange:", "olm.skiprange:", "csv-annotation-case"),
    (
        "    capabilities: Basic Install\n",
        "    capabilities: Basic Install\n    olm.properties: '[]'\n",
        "csv-olm-properties-annotation",
    ),
    ("  version: 0.0.2\n", "", "csv-version-missing"),
    ("version: 0.0.2", "version: 1.2", "csv-version-not-semver"),
    (
        "version: 0.0.2",
        "version: v0.0.2",
        "csv-version-not-semver",
    ),
    (
        "version: 0.0.2",
        "version: 0.0.3",
        "csv-name-version-mismatch",
    ),
    (
        "replaces: memcached-operator.v0.0.1",
        "replaces: memcached-operator.v0.0.2",
        "csv-replaces-self",
    ),
    (
        "  replaces: memcached-operator.v0.0.1\n",
        "  skips: [memcached-operator.v0.0.2]\n",
        "csv-skips-self",
    ),
    (
        "      - name: memcached-operator-controller-manager\n        spec:",
        "      - spec:",
        "csv-deployment-name-missing",
    ),
    (
        "      - name: memcached-operator-controller-manager\n",
        "      - name: Memcached_Manager\n",
        "resource-name-invalid",
    ),
    (
        "'>=0.0.1 <0.0.2'",
        "'>=0.1 <0.0.2'",
        "csv-skip-range-invalid",
    ),
    (
        "  relatedImages:\n  - name: manager\n    image:",
        "  relatedImages:\n  - name: manager\n    imagex:",
        "csv-related-image-missing",
    ),
    (
        "- name: memcacheds.cache.example.com\n      version: v1alpha1",
        "- name: memcacheds.cache.example.com\n      version: v1beta1",
        "bundle-owned-crd-not-found",
    ),
];

#[test]
fn csv_rules() {
    for (from, to, rule) in CSV_CASES {
        let f = Fixture::new();
        f.edit(CSV, from, to);
        let r = f.report();
        assert_rule(&r, rule);
        assert!(
            r.findings
                .iter()
                .filter(|x| x.rule == *rule)
                .all(|x| x.location.as_ref().is_some_and(|l| l.line > 0)),
            "{rule} has a line: {:#?}",
            r.findings
        );
    }
}

#[test]
fn required_csv_fields_follow_go_zero_values() {
    let fields = |r: &Report| -> Vec<String> {
        r.findings
            .iter()
            .filter(|x| x.rule == "csv-field-missing")
            .map(|x| x.message.clone())
            .collect()
    };
    let install = "  install:\n    strategy: deployment\n    spec:\n      deployments:\n";
    // An empty strategy name with a spec set: only the name is missing.
    let f = Fixture::new();
    f.edit(
        CSV,
        install,
        "  install:\n    strategy: \"\"\n    spec:\n      deployments:\n",
    );
    let r = f.report();
    assert_eq!(
        fields(&r),
        vec!["Field Spec.InstallStrategy.StrategyName, Value field: required field missing"]
    );
    assert_rule(&r, "csv-field-missing");
    // An install whose spec is empty is zero as a whole.
    let f = Fixture::new();
    f.edit(
        CSV,
        install,
        "  install:\n    spec: {}\n  unused:\n    spec:\n      deployments:\n",
    );
    assert_eq!(
        fields(&f.report()),
        vec!["Field Spec.InstallStrategy, Value struct: required field missing"]
    );
    // `deployments: []` is a set (non-nil) list; `null` is not.
    let f = Fixture::new();
    f.edit(CSV, install, "  install:\n    strategy: deployment\n    spec:\n      permissions: []\n      deployments: []\n      unused:\n");
    assert!(fields(&f.report()).is_empty(), "{:#?}", f.report().findings);
    let f = Fixture::new();
    f.edit(CSV, install, "  install:\n    strategy: deployment\n    spec:\n      permissions: []\n      deployments: null\n      unused:\n");
    assert_eq!(
        fields(&f.report()),
        vec!["Field Spec.InstallStrategy.StrategySpec.DeploymentSpecs, Value field: required field missing"]
    );
}

#[test]
fn version_messages_show_what_was_written() {
    let f = Fixture::new();
    f.edit(CSV, "version: 0.0.2", "version: 1.2");
    let r = f.report();
    let v = r
        .findings
        .iter()
        .find(|x| x.rule == "csv-version-not-semver")
        .expect("finding");
    assert!(
        v.message.contains("`1.2` was read as a number"),
        "{}",
        v.message
    );
    let loc = v.location.as_ref().expect("loc");
    assert_eq!(loc.source_line.as_deref(), Some("  version: 1.2"));
}

#[test]
fn install_mode_rules() {
    let f = Fixture::new();
    let csv = f.read(CSV).replace("supported: true", "supported: false");
    f.write(CSV, &csv);
    assert_rule(&f.report(), "csv-install-modes-none-supported");

    let f = Fixture::new();
    f.edit(
        CSV,
        "  relatedImages:",
        "  webhookdefinitions:\n  - type: ConversionWebhook\n    generateName: cmemcached.kb.io\n    deploymentName: memcached-operator-controller-manager\n    containerPort: 443\n    conversionCRDs: [memcacheds.cache.example.com]\n    admissionReviewVersions: [v1]\n    sideEffects: None\n    webhookPath: /convert\n  relatedImages:",
    );
    assert_rule(&f.report(), "csv-conversion-webhook-install-modes");
    f.edit(CSV, "type: ConversionWebhook", "type: Validating");
    assert_rule(&f.report(), "csv-webhook-type-unknown");
}

#[test]
fn bundle_rules() {
    let f = Fixture::new();
    let crd = f.read(CRD);
    f.write("manifests/copy.crd.yaml", &crd);
    assert_rule(&f.report(), "bundle-crd-duplicate");

    let f = Fixture::new();
    f.write(
        "manifests/other.crd.yaml",
        &crd.replace("memcacheds", "caches")
            .replace("Memcached", "Cache")
            .replace("memcached", "cache"),
    );
    assert_rule(&f.report(), "bundle-crd-not-in-csv");
    // A second, unowned version of an owned CRD is fine (bundle.go filters it).
    let f = Fixture::new();
    f.edit(
        CRD,
        "  versions:\n",
        "  versions:\n  - name: v1alpha0\n    served: true\n    storage: false\n",
    );
    assert!(f.report().findings.is_empty(), "{:#?}", f.report().findings);

    let f = Fixture::new();
    f.write(
        "manifests/sa.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: memcached-operator-controller-manager\n",
    );
    assert_rule(&f.report(), "bundle-service-account-conflict");
}

/// The CRD findings of a report (other rules, such as a CRD the CSV does
/// not own, are not under test here).
fn crd_rules_of(report: &Report) -> Vec<&str> {
    rules_of(report)
        .into_iter()
        .filter(|r| r.starts_with("crd-"))
        .collect()
}

/// CRD cases: edits of the good v1 CRD, each breaking `Some(rule)` (at its
/// level, located in the CRD file) or, with `None`, a variant that passes.
/// Edits (from, to) of a file and the rule they break, or `None` if the
/// edited file passes.
type CrdCase = (
    &'static [(&'static str, &'static str)],
    Option<&'static str>,
);

#[rustfmt::skip]
const V1_CRD_CASES: &[CrdCase] = &[
    (&[("name: memcacheds.cache.example.com\nspec", "name: memcached.cache.example.com\nspec")], Some("crd-name-invalid")),
    (&[("group: cache.example.com", "group: cache"), ("name: memcacheds.cache.example.com", "name: memcacheds.cache")], Some("crd-group-invalid")),
    (&[("group: cache.example.com", "group: Cache.example.com"), ("name: memcacheds.cache.example.com", "name: memcacheds.Cache.example.com")], Some("crd-group-invalid")),
    (&[("    plural: memcacheds\n", "")], Some("crd-names-invalid")),
    (&[("    kind: Memcached\n", "")], Some("crd-names-invalid")),
    (&[("    kind: Memcached\n", "    kind: Mem_cached\n")], Some("crd-names-invalid")),
    (&[("    listKind: MemcachedList\n", "    listKind: Memcached\n")], Some("crd-names-invalid")),
    (&[("    singular: memcached\n", "    singular: memcached\n    shortNames: [mc, 9mc]\n")], Some("crd-names-invalid")),
    (&[("    singular: memcached\n", "    singular: memcached\n    categories: [All]\n")], Some("crd-names-invalid")),
    // singular and listKind are defaulted from kind.
    (&[("    listKind: MemcachedList\n", ""), ("    singular: memcached\n", "")], None),
    (&[("    singular: memcached\n", "    singular: memcached\n    shortNames: [mc]\n    categories: [all]\n")], None),
    (&[("scope: Namespaced", "scope: Global")], Some("crd-scope-invalid")),
    (&[("  scope: Namespaced\n", "")], Some("crd-scope-invalid")),
    (&[("    storage: true\n", "    storage: false\n")], Some("crd-versions-invalid")),
    (&[("  - name: v1alpha1\n", "  - name: V1\n")], Some("crd-versions-invalid")),
    (&[("  versions:\n", "  versions:\n  - name: v1alpha1\n    served: true\n    storage: false\n")], Some("crd-versions-invalid")),
    (&[("  versions:\n", "  versions:\n  - name: v1beta1\n    served: true\n    storage: true\n")], Some("crd-versions-invalid")),
    (&[("  versions:\n", "  versions:\n  - name: v1beta1\n    served: false\n    storage: false\n")], None),
    (&[("    served: true\n", "    served: true\n    deprecationWarning: use v1\n")], Some("crd-deprecation-warning-invalid")),
    (&[("    served: true\n", "    served: true\n    deprecated: true\n    deprecationWarning: \"\"\n")], Some("crd-deprecation-warning-invalid")),
    (&[("    served: true\n", "    served: true\n    deprecated: true\n    deprecationWarning: \"use\\tv1\"\n")], Some("crd-deprecation-warning-invalid")),
    (&[("    served: true\n", "    served: true\n    deprecated: true\n    deprecationWarning: use v1\n")], None),
    (&[("    subresources:\n", "    additionalPrinterColumns:\n    - name: Size\n      type: int\n      jsonPath: .spec.size\n    subresources:\n")], Some("crd-printer-column-invalid")),
    (&[("    subresources:\n", "    additionalPrinterColumns:\n    - name: Size\n      type: integer\n      jsonPath: spec.size\n    subresources:\n")], Some("crd-printer-column-invalid")),
    (&[("    subresources:\n", "    additionalPrinterColumns:\n    - type: integer\n      jsonPath: .spec.size\n    subresources:\n")], Some("crd-printer-column-invalid")),
    (&[("    subresources:\n", "    additionalPrinterColumns:\n    - name: Size\n      type: integer\n      format: percent\n      jsonPath: .spec.size\n    subresources:\n")], Some("crd-printer-column-invalid")),
    // Go's decoder matches keys ignoring case, so the v1beta1 spelling passes in v1.
    (&[("    subresources:\n", "    additionalPrinterColumns:\n    - name: Size\n      type: integer\n      JSONPath: .spec.size\n    subresources:\n")], None),
    (&[("    subresources:\n", "    additionalPrinterColumns:\n    - name: Size\n      type: integer\n      JSONPath: spec.size\n    subresources:\n")], Some("crd-printer-column-invalid")),
    (&[("    storage: true\n", "    Storage: true\n")], None),
    (&[("    subresources:\n", "    additionalPrinterColumns:\n    - name: Size\n      type: integer\n      format: int32\n      jsonPath: .spec.size\n    subresources:\n")], None),
    (&[("      status: {}", "      status: {}\n      scale:\n        specReplicasPath: .status.size\n        statusReplicasPath: .status.size\n")], Some("crd-scale-subresource-invalid")),
    (&[("      status: {}", "      status: {}\n      scale:\n        statusReplicasPath: .status.size\n")], Some("crd-scale-subresource-invalid")),
    (&[("      status: {}", "      status: {}\n      scale:\n        specReplicasPath: .spec.size\n        statusReplicasPath: .status.size\n        labelSelectorPath: .metadata.labels\n")], Some("crd-scale-subresource-invalid")),
    (&[("      status: {}", "      status: {}\n      scale:\n        specReplicasPath: .spec.size\n        statusReplicasPath: .status.size\n        labelSelectorPath: .status.selector\n")], None),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  preserveUnknownFields: true\n")], Some("crd-preserve-unknown-fields-invalid")),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  preserveUnknownFields: false\n")], None),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  preserveUnknownFields: false\n"), ("                type: integer\n", "                type: integer\n                default: 1\n")], None),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        service: {name: s, namespace: n}\n")], Some("crd-conversion-invalid")),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Auto\n")], Some("crd-conversion-invalid")),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      conversionReviewVersions: [v1]\n")], Some("crd-conversion-invalid")),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        url: http://example.com/convert\n      conversionReviewVersions: [v1]\n")], Some("crd-conversion-invalid")),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        url: https://example.com/convert\n        service: {name: s, namespace: n}\n      conversionReviewVersions: [v1]\n")], Some("crd-conversion-invalid")),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        service: {name: s, namespace: n, port: 0, path: /convert}\n      conversionReviewVersions: [v1]\n")], Some("crd-conversion-invalid")),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        service: {name: s, namespace: n, path: convert}\n      conversionReviewVersions: [v1]\n")], Some("crd-conversion-invalid")),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        service: {name: s, namespace: n}\n      conversionReviewVersions: [v2, v2]\n")], Some("crd-conversion-invalid")),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: None\n    webhook:\n      clientConfig:\n        service: {name: s, namespace: n}\n")], Some("crd-conversion-invalid")),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        service: {name: s, namespace: n, path: /convert}\n      conversionReviewVersions: [v1, v1beta1]\n")], None),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: Webhook\n    webhook:\n      clientConfig:\n        url: https://example.com/convert\n      conversionReviewVersions: [v1]\n")], None),
    (&[("  scope: Namespaced\n", "  scope: Namespaced\n  conversion:\n    strategy: None\n")], None),
    (&[("group: cache.example.com", "group: cache.k8s.io"), ("name: memcacheds.cache.example.com", "name: memcacheds.cache.k8s.io")], Some("crd-api-approval-missing")),
    (&[("group: cache.example.com", "group: cache.k8s.io"), ("name: memcacheds.cache.example.com", "name: memcacheds.cache.k8s.io\n  annotations:\n    api-approved.kubernetes.io: approved")], Some("crd-api-approval-missing")),
    (&[("group: cache.example.com", "group: cache.k8s.io"), ("name: memcacheds.cache.example.com", "name: memcacheds.cache.k8s.io\n  annotations:\n    api-approved.kubernetes.io: https://github.com/kubernetes/enhancements/pull/1111")], None),
    (&[("group: cache.example.com", "group: cache.k8s.io"), ("name: memcacheds.cache.example.com", "name: memcacheds.cache.k8s.io\n  annotations:\n    api-approved.kubernetes.io: unapproved, testing only")], None),
];

/// A v1beta1 CRD that passes: scope, versions, singular and listKind come
/// from the v1beta1 defaults, the schema and columns are top-level, and
/// `preserveUnknownFields` is false (v1beta1 defaults it to true, which the
/// validator refuses).
const V1BETA1_CRD: &str = "apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: legacies.cache.example.com
spec:
  group: cache.example.com
  preserveUnknownFields: false
  names:
    kind: Legacy
    plural: legacies
  version: v1alpha1
  validation:
    openAPIV3Schema:
      type: object
  additionalPrinterColumns:
  - name: Size
    type: integer
    JSONPath: .spec.size
";

#[rustfmt::skip]
const V1BETA1_CRD_CASES: &[CrdCase] = &[
    (&[("  version: v1alpha1\n", "  version: v1alpha1\n  versions:\n  - name: v1alpha1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n")], Some("crd-per-version-conflict")),
    (&[("  validation:\n    openAPIV3Schema:\n      type: object\n", "  versions:\n  - name: v1alpha1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n")], Some("crd-per-version-conflict")),
    (&[("  version: v1alpha1\n", "  version: v1alpha1\n  versions:\n  - name: v1alpha1\n    served: true\n    storage: true\n  - name: v1beta1\n    served: true\n    storage: false\n")], None),
    (&[("  version: v1alpha1\n", "  version: v1alpha1\n  versions:\n  - name: v1beta1\n    served: true\n    storage: true\n")], Some("crd-versions-invalid")),
    (&[("  version: v1alpha1\n", "")], Some("crd-versions-invalid")),
    // v1beta1 defaults preserveUnknownFields to true, which is refused
    // (operator-framework/api fails aqua, hawtio-operator and cockroachdb so).
    (&[("  preserveUnknownFields: false\n", "")], Some("crd-preserve-unknown-fields-invalid")),
    (&[("  preserveUnknownFields: false\n", "  preserveUnknownFields: true\n")], Some("crd-preserve-unknown-fields-invalid")),
    (&[("  preserveUnknownFields: false\n", ""), ("      type: object\n", "      type: object\n      properties:\n        size:\n          type: integer\n          default: 1\n")], Some("crd-preserve-unknown-fields-invalid")),
    (&[("      type: object\n", "      type: object\n      properties:\n        size:\n          type: integer\n          default: 1\n")], None),
    // A property called `default` is not a default.
    (&[("      type: object\n", "      type: object\n      properties:\n        default:\n          type: integer\n")], None),
    (&[("    JSONPath: .spec.size\n", "    jsonPath: .spec.size\n")], None),
    (&[("    JSONPath: .spec.size\n", "    description: no path\n")], Some("crd-printer-column-invalid")),
    (&[("  preserveUnknownFields: false\n", ""), ("  version: v1alpha1\n", "  version: v1alpha1\n  conversion:\n    strategy: Webhook\n    webhookClientConfig:\n      service: {name: s, namespace: n}\n")], Some("crd-conversion-invalid")),
    (&[("  version: v1alpha1\n", "  version: v1alpha1\n  conversion:\n    strategy: Webhook\n    webhookClientConfig:\n      service: {name: s, namespace: n}\n")], None),
    // Protected groups need approval in v1beta1 too (cockroachdb's
    // charts.helm.k8s.io fails operator-framework/api so).
    (&[("group: cache.example.com", "group: cache.k8s.io"), ("name: legacies.cache.example.com", "name: legacies.cache.k8s.io")], Some("crd-api-approval-missing")),
    (&[("group: cache.example.com", "group: cache.k8s.io"), ("name: legacies.cache.example.com", "name: legacies.cache.k8s.io\n  annotations:\n    api-approved.kubernetes.io: unapproved, legacy")], None),
];

fn run_crd_cases(base_file: &str, base_text: Option<&str>, cases: &[CrdCase]) {
    for (edits, rule) in cases {
        let f = Fixture::new();
        if let Some(text) = base_text {
            f.write(base_file, text);
        }
        for (from, to) in *edits {
            f.edit(base_file, from, to);
        }
        let r = f.report();
        match rule {
            Some(rule) => {
                assert_rule(&r, rule);
                let here = r
                    .findings
                    .iter()
                    .find(|x| x.rule == *rule)
                    .and_then(|x| x.location.as_ref())
                    .expect("located");
                assert!(
                    here.file.ends_with(base_file) && here.line > 0,
                    "{rule} at {}:{} for {edits:?}",
                    here.file.display(),
                    here.line
                );
            }
            None => assert!(
                crd_rules_of(&r).is_empty(),
                "{edits:?} should pass: {:#?}",
                r.findings
            ),
        }
    }
}

#[test]
fn crd_rules() {
    let f = Fixture::new();
    f.edit(CRD, "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v2");
    assert_rule(&f.report(), "crd-api-version-unsupported");
    run_crd_cases(CRD, None, V1_CRD_CASES);
    run_crd_cases(
        "manifests/legacy.crd.yaml",
        Some(V1BETA1_CRD),
        V1BETA1_CRD_CASES,
    );
}

/// A field the validator defaulted or requires, but the file does not
/// write, is located at the key of its parent (`spec:`), not at that
/// mapping's first entry.
#[test]
fn crd_findings_on_unwritten_fields_point_at_the_parent_key() {
    let f = Fixture::new();
    f.write(
        "manifests/legacy.crd.yaml",
        &V1BETA1_CRD.replace("  preserveUnknownFields: false\n", ""),
    );
    let r = f.report();
    let puf = r
        .findings
        .iter()
        .find(|x| x.rule == "crd-preserve-unknown-fields-invalid")
        .expect("preserveUnknownFields finding");
    assert!(
        puf.message
            .contains("spec.preserveUnknownFields: Invalid value: true: cannot set to true"),
        "{}",
        puf.message
    );
    let loc = puf.location.as_ref().expect("located");
    assert_eq!((loc.line, loc.column), (5, 1), "at `spec:`");
    assert!(puf
        .hint
        .as_deref()
        .unwrap_or("")
        .contains("defaults spec.preserveUnknownFields to true"));
}

#[test]
fn crd_findings_point_at_the_value() {
    // The storage error names spec.versions; a bad column type names its line.
    let f = Fixture::new();
    f.edit(
        CRD,
        "    subresources:\n",
        "    additionalPrinterColumns:\n    - name: Size\n      type: int\n      jsonPath: .spec.size\n    subresources:\n",
    );
    let r = f.report();
    let col = r
        .findings
        .iter()
        .find(|x| x.rule == "crd-printer-column-invalid")
        .expect("column finding");
    assert_eq!(col.location.as_ref().map(|l| l.line), Some(28));
    assert!(
        col.message.contains("additionalPrinterColumns[0].type"),
        "{}",
        col.message
    );
    assert!(col
        .message
        .contains("must be one of boolean,date,integer,number,string"));
}

#[test]
fn object_rules() {
    let cases: &[(&str, &str)] = &[
        ("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: p\nspec:\n  maxUnavailable: 0\n", "pdb-max-unavailable-zero"),
        ("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: p\nspec:\n  maxUnavailable: 0%\n", "pdb-max-unavailable-zero"),
        ("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: p\nspec:\n  minAvailable: 100%\n", "pdb-min-available-full"),
        ("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: p\nvalue: 10\nglobalDefault: true\n", "priorityclass-global-default"),
        ("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: r\nrules:\n- apiGroups: [policy]\n  resources: [poddisruptionbudgets]\n  verbs: [create]\n", "rbac-pdb-permission"),
        ("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\nrules:\n- apiGroups: [security.openshift.io]\n  resources: [securitycontextconstraints]\n  verbs: [update]\n  resourceNames: [privileged]\n", "rbac-default-scc-modify"),
    ];
    for (text, rule) in cases {
        let f = Fixture::new();
        f.write("manifests/object.yaml", text);
        assert_rule(&f.report(), rule);
    }
    // Budgets that allow disruption pass.
    let f = Fixture::new();
    f.write("manifests/object.yaml", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: p\nspec:\n  maxUnavailable: 50%\n  minAvailable: 1\n");
    assert!(f.report().findings.is_empty(), "{:#?}", f.report().findings);
}

#[test]
fn paths_that_are_not_bundles() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("ci.yaml");
    fs::write(&file, "reviewers: []\n").expect("write");
    let r = validate::validate_dir(&file, &Options::default());
    assert_eq!(rules_of(&r), vec!["not-a-bundle"]);
    assert_eq!(r.errors(), 1, "operator-sdk fails it: so do we");
    assert!(validate::is_non_bundle(&r));
    common::copy_dir(&good(), &tmp.path().join("pkg/0.0.2"));
    let r = validate::validate_dir(&tmp.path().join("pkg"), &Options::default());
    assert_eq!(rules_of(&r), vec!["not-a-bundle"]);
    assert_eq!(r.errors(), 1);
    assert!(r.findings[0]
        .hint
        .as_deref()
        .unwrap_or("")
        .contains("its subdirectory 0.0.2/ is a bundle"));
    fs::create_dir(tmp.path().join("empty")).expect("mkdir");
    let r = validate::validate_dir(&tmp.path().join("empty"), &Options::default());
    assert_eq!(rules_of(&r), vec!["not-a-bundle"]);
    assert!(r.findings[0].message.contains("empty directory"));
    let r = validate::validate_dir(&tmp.path().join("nope"), &Options::default());
    assert_eq!(rules_of(&r), vec!["bundle-unreadable"]);
    assert_eq!(r.errors(), 1);
    assert!(
        !validate::is_non_bundle(&r),
        "a missing path is never skipped"
    );
    // A bundle with errors is not a non-bundle either.
    let f = Fixture::new();
    f.remove(CSV);
    assert!(!validate::is_non_bundle(&f.report()));
}

/// A CSV beside manifests/ (aqua/6.5.0 of the corpus has its whole bundle
/// there too): operator-framework/api's loader reads the bundle folder as
/// the manifests folder and fails; opm ignores the file.
#[test]
fn a_csv_outside_manifests_is_an_error() {
    let f = Fixture::new();
    f.write("stray.clusterserviceversion.yaml", &f.read(CSV));
    let r = f.report();
    let line = line_of(&r, "bundle-csv-outside-manifests");
    let kind_line = f
        .read(CSV)
        .lines()
        .position(|l| l.starts_with("kind:"))
        .expect("kind line") as u32
        + 1;
    assert_eq!(line, kind_line, "points at kind:");
    assert_eq!(r.errors(), 1, "{:#?}", r.findings);

    // Deeper down, and in a JSON file, the same; hidden folders, other
    // kinds and a CSV that is only a later document are not read there.
    let f = Fixture::new();
    fs::create_dir_all(f.dir().join("extra/deep")).expect("mkdir");
    fs::create_dir_all(f.dir().join(".git")).expect("mkdir");
    f.write(
        "extra/deep/csv.json",
        "{\"apiVersion\": \"operators.coreos.com/v1alpha1\", \"kind\": \"ClusterServiceVersion\"}",
    );
    f.write(".git/csv.yaml", "kind: ClusterServiceVersion\n");
    f.write(
        "tests.yaml",
        "kind: Configuration\n# not a ClusterServiceVersion\n",
    );
    f.write(
        "two.yaml",
        "kind: ConfigMap\n---\nkind: ClusterServiceVersion\n",
    );
    let r = f.report();
    let stray: Vec<_> = r
        .findings
        .iter()
        .filter(|x| x.rule == "bundle-csv-outside-manifests")
        .collect();
    assert_eq!(stray.len(), 1, "{stray:#?}");
    assert!(
        stray[0].message.contains("csv.json"),
        "{}",
        stray[0].message
    );
}

/// Three rules are errors, not warnings; operator-sdk checks none of them,
/// and each finding says so.
#[test]
fn stricter_rules_are_errors_and_say_operator_sdk_skips_them() {
    let note = rules::BLIND_SPOT_NOTE;
    let check = |r: &Report, rule: &str| {
        assert_rule(r, rule);
        let f = r.findings.iter().find(|x| x.rule == rule).expect("finding");
        assert_eq!(f.level, Level::Error, "{rule}");
        assert!(
            f.hint.as_deref().unwrap_or("").contains(note),
            "{rule}: {:?}",
            f.hint
        );
    };
    let f = Fixture::new();
    f.edit(
        CSV,
        "spec:\n  displayName: Memcached Operator\n",
        "spec:\n  displayName: First\n  displayName: Memcached Operator\n",
    );
    check(&f.report(), "yaml-duplicate-key");
    let f = Fixture::new();
    f.edit(CSV, "  version: 0.0.2\n", "");
    check(&f.report(), "csv-version-missing");
    let f = Fixture::new();
    f.edit(
        ANN,
        "channel.default.v1: stable",
        "channel.default.v1: beta",
    );
    check(&f.report(), "annotation-default-channel-not-in-channels");
}

#[test]
fn every_rule_of_the_catalog_has_a_case() {
    // The ids used in this file, to catch a rule added without a test.
    let this = include_str!("validate_rules.rs");
    let untested: Vec<&str> = rules::RULES
        .iter()
        .map(|r| r.id)
        .filter(|id| !this.contains(&format!("\"{id}\"")))
        .collect();
    assert!(untested.is_empty(), "rules without a case: {untested:?}");
}

#[test]
fn duplicate_install_mode_is_a_blind_spot_and_still_counts_as_supported() {
    // Upstream's check never fires; OLM fails the CSV. A duplicate that is
    // supported still counts as support, as upstream counts it.
    let f = Fixture::new();
    let csv = f.read(CSV).replace("supported: true", "supported: false");
    let csv = csv.replacen(
        "  - type: AllNamespaces\n    supported: false",
        "  - type: AllNamespaces\n    supported: false\n  - type: AllNamespaces\n    supported: true",
        1,
    );
    f.write(CSV, &csv);
    let r = f.report();
    assert_eq!(
        rules_of(&r),
        vec!["csv-install-modes-duplicate"],
        "{:#?}",
        r.findings
    );
    let hint = r.findings[0].hint.as_deref().unwrap_or("");
    assert!(
        hint.contains("operator-sdk bundle validate does not check this"),
        "{hint}"
    );
}

#[test]
fn object_findings_say_operator_sdk_skips_them() {
    let f = Fixture::new();
    f.write(
        "manifests/object.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: p\nspec:\n  minAvailable: 100%\n",
    );
    let r = f.report();
    let hint = r.findings[0].hint.as_deref().unwrap_or("");
    assert!(hint.contains("does not check this by default"), "{hint}");
    assert!(hint.contains("node drains"), "{hint}");
}

#[test]
fn objects_that_pass_the_object_rules() {
    let passing = [
        // Not a global default.
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: p\nvalue: 10\nglobalDefault: false\n",
        // Reading budgets is fine.
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: r\nrules:\n- apiGroups: [policy]\n  resources: [poddisruptionbudgets]\n  verbs: [get, list, watch]\n",
        // Modifying an SCC of its own is fine.
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\nrules:\n- apiGroups: [security.openshift.io]\n  resources: [securitycontextconstraints]\n  verbs: [update]\n  resourceNames: [my-operator-scc]\n",
        // Using (not modifying) a default SCC is fine.
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\nrules:\n- apiGroups: [security.openshift.io]\n  resources: [securitycontextconstraints]\n  verbs: [use]\n  resourceNames: [privileged]\n",
    ];
    for text in passing {
        let f = Fixture::new();
        f.write("manifests/object.yaml", text);
        let r = f.report();
        assert!(r.findings.is_empty(), "{text}\n{:#?}", r.findings);
    }
}

#[test]
fn version_hint_gives_the_true_reason() {
    let f = Fixture::new();
    f.edit(CSV, "version: 0.0.2", "version: v0.0.2");
    let r = f.report();
    let v = r
        .findings
        .iter()
        .find(|x| x.rule == "csv-version-not-semver")
        .expect("finding");
    let hint = v.hint.as_deref().unwrap_or("");
    assert!(hint.contains("OLM itself accepts it"), "{hint}");
    assert!(hint.contains("opm parses it strictly"), "{hint}");
    // An unquoted number is refused by OLM's decoder itself.
    let f = Fixture::new();
    f.edit(CSV, "version: 0.0.2", "version: 1.2");
    let r = f.report();
    let v = r
        .findings
        .iter()
        .find(|x| x.rule == "csv-version-not-semver")
        .expect("finding");
    let hint = v.hint.as_deref().unwrap_or("");
    assert!(hint.contains("\"1.2.0\""), "{hint}");
    assert!(hint.contains("refuses this CSV"), "{hint}");
}

#[test]
fn constraint_dependencies() {
    let f = Fixture::new();
    let dep = |value: &str| format!("dependencies:\n- type: olm.constraint\n  value:\n{value}");
    // Passing: a CEL rule of OLM's kind, and a compound constraint without cel.
    f.write(
        "metadata/dependencies.yaml",
        &dep("    failureMessage: needs etcd 1.x\n    cel:\n      rule: \"properties.exists(p, p.type == 'olm.package' && semver_compare(p.value.version, '1.0.0') >= 0)\"\n"),
    );
    assert!(f.report().findings.is_empty(), "{:#?}", f.report().findings);
    f.write(
        "metadata/dependencies.yaml",
        &dep("    all:\n      constraints:\n      - gvk: {group: g.io, version: v1, kind: K}\n"),
    );
    assert!(f.report().findings.is_empty(), "{:#?}", f.report().findings);
    f.write(
        "metadata/dependencies.yaml",
        &dep("    failureMessage: x\n"),
    );
    assert_rule(&f.report(), "dependency-cel-missing");
    f.write(
        "metadata/dependencies.yaml",
        &dep("    cel:\n      rule: ''\n"),
    );
    assert_rule(&f.report(), "dependency-cel-rule-missing");
    for bad in [
        "properties.exists(p, doesnt_exist(p.value, '1.0.0') == 0)",
        "1",
        "properties.exists(p, p.type == 'x'",
    ] {
        f.write(
            "metadata/dependencies.yaml",
            &dep(&format!("    cel:\n      rule: \"{bad}\"\n")),
        );
        let r = f.report();
        assert_rule(&r, "dependency-cel-invalid");
        assert_eq!(line_of(&r, "dependency-cel-invalid"), 5, "{bad}");
    }
}

#[test]
fn property_rules() {
    let props = |items: &str| format!("properties:\n{items}");
    let csv_ann = |json: &str| format!("  annotations:\n    olm.properties: '{json}'\n");
    let f = Fixture::new();
    f.write(
        "metadata/properties.yaml",
        &props("- type: olm.maxOpenShiftVersion\n  value: '4.16'\n- type: olm.label\n  value: a\n"),
    );
    assert!(f.report().findings.is_empty(), "{:#?}", f.report().findings);
    f.write(
        "metadata/properties.yaml",
        &props("- type: olm.label\n  value: a\n- type: olm.label\n  value: a\n"),
    );
    let r = f.report();
    assert_rule(&r, "property-duplicate-in-properties-file");
    assert_eq!(line_of(&r, "property-duplicate-in-properties-file"), 4);

    let f = Fixture::new();
    f.edit(
        CSV,
        "  annotations:\n",
        &csv_ann(r#"[{"type":"olm.label","value":"a"},{"type":"olm.label","value":"a"}]"#),
    );
    assert_rule(&f.report(), "property-duplicate-in-csv-annotation");

    let f = Fixture::new();
    f.edit(
        CSV,
        "  annotations:\n",
        &csv_ann(r#"[{"type":"olm.label","value":"a"}]"#),
    );
    f.write(
        "metadata/properties.yaml",
        &props("- type: olm.label\n  value: a\n"),
    );
    assert_rule(&f.report(), "property-in-csv-and-properties-file");
    // Different values are different properties.
    f.write(
        "metadata/properties.yaml",
        &props("- type: olm.label\n  value: b\n"),
    );
    let r = f.report();
    assert!(
        !rules_of(&r).iter().any(|x| x.starts_with("property-")),
        "{:#?}",
        r.findings
    );
}

/// A package-manifest directory with `text` as its package.yaml.
fn package_dir(text: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("etcd");
    fs::create_dir_all(dir.join("0.9.4")).expect("mkdir");
    fs::write(dir.join("etcd.package.yaml"), text).expect("write");
    (tmp, dir)
}

#[test]
fn package_manifest_rules() {
    let good = "packageName: etcd\ndefaultChannel: alpha\nchannels:\n- name: alpha\n  currentCSV: etcdoperator.v0.9.4\n- name: beta\n  currentCSV: etcdoperator.v0.9.2\n";
    let (_t, dir) = package_dir(good);
    let r = validate::validate_dir(&dir, &Options::default());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    // One channel needs no default channel.
    let (_t, dir) =
        package_dir("packageName: etcd\nchannels:\n- name: alpha\n  currentCSV: e.v1.0.0\n");
    let r = validate::validate_dir(&dir, &Options::default());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let cases: &[(&str, &str, &str, u32)] = &[
        ("packageName: etcd\n", "packageName: ''\n", "package-manifest-name-empty", 1),
        ("channels:\n- name: alpha\n  currentCSV: etcdoperator.v0.9.4\n- name: beta\n  currentCSV: etcdoperator.v0.9.2\n", "channels: []\n", "package-manifest-channels-empty", 3),
        ("defaultChannel: alpha\n", "", "package-manifest-default-channel-empty", 0),
        ("- name: beta\n", "- name: ''\n", "package-manifest-channel-name-empty", 6),
        ("currentCSV: etcdoperator.v0.9.2", "currentCSV: ''", "package-manifest-current-csv-empty", 7),
        ("- name: beta\n", "- name: alpha\n", "package-manifest-channel-duplicate", 6),
        ("defaultChannel: alpha\n", "defaultChannel: stable\n", "package-manifest-default-channel-not-found", 2),
        ("channels:\n", "channels: 3\nx:\n", "package-manifest-invalid", 3),
    ];
    for (from, to, rule, line) in cases {
        assert!(good.contains(from), "{from}");
        let (_t, dir) = package_dir(&good.replacen(from, to, 1));
        let r = validate::validate_dir(&dir, &Options::default());
        assert_rule(&r, rule);
        if *line > 0 {
            assert_eq!(line_of(&r, rule), *line, "{rule}: {:#?}", r.findings);
        }
    }
}

#[cfg(unix)]
#[test]
fn fifo_in_manifests_is_refused_not_read() {
    let f = Fixture::new();
    let fifo = f.dir().join("manifests/pipe.yaml");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(status.success());
    // Reading the FIFO would block forever: the report must come back.
    let (tx, rx) = std::sync::mpsc::channel();
    let dir = f.dir();
    std::thread::spawn(move || {
        let _ = tx.send(validate::validate_dir(&dir, &Options::default()));
    });
    let r = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the loader hangs on a FIFO");
    assert_rule(&r, "file-not-regular");
    assert!(r.findings.iter().any(|x| x.message.contains("FIFO")));
}

#[cfg(unix)]
#[test]
fn symlinked_directories_leaving_the_bundle_are_refused() {
    for sub in ["manifests", "metadata"] {
        let f = Fixture::new();
        let outside = f.tmp.path().join(format!("outside-{sub}"));
        fs::rename(f.dir().join(sub), &outside).expect("move out");
        std::os::unix::fs::symlink(&outside, f.dir().join(sub)).expect("symlink");
        let r = f.report();
        assert_rule(&r, "symlink-outside-bundle");
        assert!(
            r.findings
                .iter()
                .any(|x| x.message.starts_with(&format!("{sub}/ is a symbolic link"))),
            "{:#?}",
            r.findings
        );
    }
    // A symlinked directory that stays inside the bundle is read.
    let f = Fixture::new();
    fs::rename(f.dir().join("metadata"), f.dir().join("meta-real")).expect("mv");
    std::os::unix::fs::symlink("meta-real", f.dir().join("metadata")).expect("symlink");
    let r = f.report();
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

#[test]
fn a_file_just_under_the_size_cap_is_read() {
    use std::io::Write;
    let f = Fixture::new();
    let path = f.dir().join("manifests/zz-big.yaml");
    let mut file = fs::File::create(&path).expect("create");
    // One comment line short of the cap: it is read, not refused.
    let header = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n#";
    file.write_all(header).expect("write");
    let rest = olm_catalog::bundle::MAX_FILE_SIZE as usize - header.len() - 1;
    let chunk = vec![b'x'; 1 << 20];
    let mut left = rest;
    while left > 0 {
        let n = left.min(chunk.len());
        file.write_all(&chunk[..n]).expect("write");
        left -= n;
    }
    file.write_all(b"\n").expect("write");
    drop(file);
    assert_eq!(
        fs::metadata(&path).expect("meta").len(),
        olm_catalog::bundle::MAX_FILE_SIZE
    );
    let r = f.report();
    assert!(
        !rules_of(&r).contains(&"file-too-large"),
        "{:#?}",
        r.findings
    );
    // It was read and parsed: only the bundle size rules may fire.
    assert!(
        rules_of(&r).iter().all(|x| x.starts_with("bundle-size")),
        "{:#?}",
        r.findings
    );
}

/// Rules that no test can trigger here, with the reason.
#[test]
fn rules_without_a_fixture_and_why() {
    // "io-error": a file that cannot be read. Tests run as root, which
    // reads files whatever their mode, so permission denied cannot be
    // produced; the exit code 2 for it is set in src/cli/validate.rs.
    assert!(rules::rule("io-error").is_some());
}
