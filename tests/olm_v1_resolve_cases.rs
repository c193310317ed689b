//! operator-controller's resolution tests (`internal/operator-controller/
//! resolve/catalog_test.go`, with `catalogmetadata/compare` and `filter`
//! behind them) ported to `graph rehearse --cluster-extension`: each case
//! keeps the upstream test's name, its catalogs (our FBC files, written
//! here after upstream's `genPackage`) and the expectation it asserts: the
//! bundle resolved, or operator-controller's error text as `end`, exit 1.
//! Skipped cases and why: docs/olm-v1-tests.md.

use crate::common::run;
use serde_json::Value;
use std::path::{Path, PathBuf};

const PKG: &str = "pkg-a";

fn bundle(pkg: &str, v: &str) -> String {
    format!(
        "---\nschema: olm.bundle\nname: {pkg}.v{v}\npackage: {pkg}\nimage: example.com/{pkg}:v{v}\nproperties:\n- type: olm.package\n  value: {{packageName: {pkg}, version: {v}}}\n"
    )
}

fn deprecations(pkg: &str, versions: &[&str]) -> String {
    let mut s = format!("---\nschema: olm.deprecations\npackage: {pkg}\nentries:\n");
    for v in versions {
        s.push_str(&format!(
            "- reference: {{schema: olm.bundle, name: {pkg}.v{v}}}\n  message: bundle {pkg}.v{v} is deprecated\n"
        ));
    }
    s
}

/// Upstream's `genPackage`: channels alpha, beta, gamma over six bundles,
/// 1.0.0 and 1.0.1 deprecated.
fn gen_package(pkg: &str) -> String {
    let mut s = format!(
        "---\nschema: olm.package\nname: {pkg}\ndefaultChannel: alpha\n---\nschema: olm.channel\npackage: {pkg}\nname: alpha\nentries:\n- name: {pkg}.v0.1.0\n- {{name: {pkg}.v1.0.0, skipRange: '<1.0.0'}}\n- {{name: {pkg}.v1.0.1, skipRange: '<1.0.1'}}\n- {{name: {pkg}.v1.0.2, skipRange: '<1.0.2'}}\n- {{name: {pkg}.v2.0.0, skipRange: '>=1.0.0 <2.0.0'}}\n---\nschema: olm.channel\npackage: {pkg}\nname: beta\nentries:\n- name: {pkg}.v0.1.0\n- {{name: {pkg}.v1.0.2, skipRange: '<1.0.2'}}\n---\nschema: olm.channel\npackage: {pkg}\nname: gamma\nentries:\n- {{name: {pkg}.v3.0.0, skipRange: '>=2.0.0 <3.0.0'}}\n"
    );
    for v in ["0.1.0", "1.0.0", "1.0.1", "1.0.2", "2.0.0", "3.0.0"] {
        s.push_str(&bundle(pkg, v));
    }
    s.push_str(&deprecations(pkg, &["1.0.0", "1.0.1"]));
    s
}

/// A package with the given bundles in one channel `alpha` (no edges),
/// the `deprecated` ones deprecated.
fn flat_package(pkg: &str, versions: &[&str], deprecated: &[&str]) -> String {
    let mut s = format!(
        "---\nschema: olm.package\nname: {pkg}\ndefaultChannel: alpha\n---\nschema: olm.channel\npackage: {pkg}\nname: alpha\nentries:\n"
    );
    for v in versions {
        s.push_str(&format!("- name: {pkg}.v{v}\n"));
    }
    for v in versions {
        s.push_str(&bundle(pkg, v));
    }
    if !deprecated.is_empty() {
        s.push_str(&deprecations(pkg, deprecated));
    }
    s
}

/// A catalog without the package (upstream's empty DeclarativeConfig; an
/// FBC directory needs something in it).
fn other() -> String {
    flat_package("other", &["1.0.0"], &[])
}

struct Case {
    dir: tempfile::TempDir,
    catalogs: Vec<(String, PathBuf)>,
}

impl Case {
    fn new(cats: &[(&str, String)]) -> Case {
        let dir = tempfile::tempdir().expect("tmp");
        let mut catalogs = Vec::new();
        for (name, text) in cats {
            let d = dir.path().join(name);
            std::fs::create_dir_all(&d).expect("mkdir");
            std::fs::write(d.join("catalog.yaml"), text).expect("write");
            catalogs.push((name.to_string(), d));
        }
        Case { dir, catalogs }
    }

    /// Rehearses a ClusterExtension (`channels`, `version`, `policy`,
    /// `selector` as flow YAML or empty) across the catalogs, with the
    /// given extra flags; (exit code, JSON).
    fn run(&self, ce: &str, extra: &[&str]) -> (i32, Value) {
        let (code, out, err) = self.rehearse(ce, extra);
        let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
        (code, v)
    }

    /// A run refused before any rehearsal: (exit code, stderr); nothing on
    /// stdout.
    fn run_err(&self, ce: &str, extra: &[&str]) -> (i32, String) {
        let (code, out, err) = self.rehearse(ce, extra);
        assert!(out.is_empty(), "{out}");
        (code, err)
    }

    /// `graph rehearse --cluster-extension CE -o json` on the catalogs.
    fn rehearse(&self, ce: &str, extra: &[&str]) -> (i32, String, String) {
        let f = self.dir.path().join("ce.yaml");
        std::fs::write(&f, ce).expect("write");
        let mut args: Vec<String> = vec![
            "graph".into(),
            "rehearse".into(),
            "--cluster-extension".into(),
            f.to_string_lossy().into_owned(),
            "-o".into(),
            "json".into(),
        ];
        for (name, d) in &self.catalogs {
            args.push("--catalog".into());
            args.push(format!("{name}={}", d.display()));
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        run(&argv)
    }
}

/// Upstream's `buildFooClusterExtension`.
fn ce(channels: &[&str], version: &str, policy: &str, selector: &str) -> String {
    let mut s = format!(
        "apiVersion: olm.operatorframework.io/v1\nkind: ClusterExtension\nmetadata:\n  name: foo\nspec:\n  namespace: default\n  serviceAccount: {{name: default}}\n  source:\n    sourceType: Catalog\n    catalog:\n      packageName: {PKG}\n      upgradeConstraintPolicy: {policy}\n"
    );
    if !channels.is_empty() {
        s.push_str(&format!("      channels: [{}]\n", channels.join(", ")));
    }
    if !version.is_empty() {
        s.push_str(&format!("      version: '{version}'\n"));
    }
    if !selector.is_empty() {
        s.push_str(&format!("      selector: {selector}\n"));
    }
    s
}

fn cp(channels: &[&str], version: &str) -> String {
    ce(channels, version, "CatalogProvided", "")
}

/// The bundle installed first (or the error), as `Resolve` returns it.
fn resolved(v: &Value) -> String {
    v["install"][0]["bundle"].as_str().unwrap_or("").to_string()
}

fn pkg_v(v: &str) -> String {
    format!("{PKG}.v{v}")
}

/// Three catalogs, the package only in `c` (the usual upstream setup).
fn abc() -> Case {
    Case::new(&[("a", other()), ("b", other()), ("c", gen_package(PKG))])
}

fn expect_error(case: &Case, ce_text: &str, extra: &[&str], want: &str) {
    let (code, v) = case.run(ce_text, extra);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["installable"], false, "{v:#}");
    assert_eq!(v["end"], want, "{v:#}");
}

fn expect_bundle(case: &Case, ce_text: &str, extra: &[&str], want: &str) {
    let (code, v) = case.run(ce_text, extra);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(resolved(&v), pkg_v(want), "{v:#}");
}

#[test]
fn package_version_and_channel_tables() {
    let c = abc();
    // TestPackageDoesNotExist
    let none = Case::new(&[("a", other()), ("b", other()), ("c", other())]);
    expect_error(
        &none,
        &cp(&[], ""),
        &[],
        &format!("no bundles found for package {PKG:?}"),
    );
    // TestPackageExists: 3.0.0, the highest non-deprecated.
    expect_bundle(&c, &cp(&[], ""), &[], "3.0.0");
    // TestVersionDoesNotExist
    expect_error(
        &c,
        &cp(&[], "4.0.0"),
        &[],
        &format!("no bundles found for package {PKG:?} matching version \"4.0.0\""),
    );
    // TestVersionExists
    expect_bundle(&c, &cp(&[], ">=1.0.0 <2.0.0"), &[], "1.0.2");
    // TestChannelDoesNotExist
    expect_error(
        &c,
        &cp(&["stable"], ""),
        &[],
        &format!("no bundles found for package {PKG:?} in channels [stable]"),
    );
    // TestChannelExists
    expect_bundle(&c, &cp(&["beta"], ""), &[], "1.0.2");
    // TestChannelExistsButNotVersion
    expect_error(
        &c,
        &cp(&["beta"], "3.0.0"),
        &[],
        &format!(
            "no bundles found for package {PKG:?} matching version \"3.0.0\" in channels [beta]"
        ),
    );
    // TestVersionExistsButNotChannel
    expect_error(
        &c,
        &cp(&["stable"], "1.0.0"),
        &[],
        &format!(
            "no bundles found for package {PKG:?} matching version \"1.0.0\" in channels [stable]"
        ),
    );
    // TestChannelAndVersionExist
    expect_bundle(&c, &cp(&["alpha"], "0.1.0"), &[], "0.1.0");
    // TestPreferNonDeprecated
    expect_bundle(&c, &cp(&[], ">=0.1.0 <=1.0.0"), &[], "0.1.0");
    // TestAcceptDeprecated
    expect_bundle(&c, &cp(&[], ">=1.0.0 <=1.0.1"), &[], "1.0.1");
    // TestMultipleChannels: channels [beta alpha] -> 2.0.0
    expect_bundle(&c, &cp(&["beta", "alpha"], ""), &[], "2.0.0");
    // The explanation is a hint apart from OLM's text.
    let (_, v) = c.run(&cp(&[], "4.0.0"), &[]);
    assert_eq!(
        v["hint"], "the package has versions 0.1.0, 1.0.0, 1.0.1, 1.0.2, 2.0.0, 3.0.0",
        "{v:#}"
    );
}

#[test]
fn invalid_version_range_is_quoted_as_masterminds_does() {
    // TestInvalidVersionRange (operator-controller pins Masterminds/semver
    // v3.5.0).
    expect_error(
        &abc(),
        &cp(&[], "foobar"),
        &[],
        "desired version range \"foobar\" is invalid: improper constraint: \"foobar\"",
    );
}

#[test]
fn upgrades_from_an_installed_bundle() {
    let c = abc();
    // TestUpgradeFoundLegacy: 0.1.0 -> 1.0.2 (skipRange <1.0.2; 1.0.0 and
    // 1.0.1 are deprecated).
    let (code, v) = c.run(&cp(&[], ""), &["--installed", "0.1.0"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["upgrades"][0]["to"], pkg_v("1.0.2"), "{v:#}");
    // TestUpgradeNotFoundLegacy: not installable, exit 1.
    expect_error(
        &c,
        &cp(&[], "<1.0.0 >=2.0.0"),
        &["--installed", "0.1.0"],
        &format!("error upgrading from currently installed version \"0.1.0\": no bundles found for package {PKG:?} matching version \"<1.0.0 >=2.0.0\""),
    );
    // TestDowngradeFound: SelfCertified, <1.0.2 from 1.0.2 -> 0.1.0.
    let (code, v) = c.run(
        &ce(&[], "<1.0.2", "SelfCertified", ""),
        &["--installed", "1.0.2"],
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["upgrades"][0]["to"], pkg_v("0.1.0"), "{v:#}");
    // TestDowngradeNotFound
    expect_error(
        &c,
        &ce(&[], ">0.1.0 <1.0.0", "SelfCertified", ""),
        &["--installed", "1.0.2"],
        &format!("error upgrading from currently installed version \"1.0.2\": no bundles found for package {PKG:?} matching version \">0.1.0 <1.0.0\""),
    );
}

#[test]
fn catalog_selectors() {
    // TestInvalidClusterExtensionCatalogMatchExpressions
    let c = abc();
    expect_error(
        &c,
        &ce(
            &[],
            "",
            "CatalogProvided",
            "{matchExpressions: [{key: name, operator: bad, values: [value]}]}",
        ),
        &[],
        "desired catalog selector is invalid: \"bad\" is not a valid label selector operator",
    );
    // TestInvalidClusterExtensionCatalogMatchLabelsName
    let (code, v) = c.run(
        &ce(&[], "", "CatalogProvided", "{matchLabels: {'': value}}"),
        &[],
    );
    assert_eq!(code, 1);
    assert!(
        v["end"].as_str().is_some_and(
            |e| e.starts_with("desired catalog selector is invalid: key: Invalid value:")
        ),
        "{v:#}"
    );
    // TestInvalidClusterExtensionCatalogMatchLabelsValue
    let (code, v) = c.run(
        &ce(
            &[],
            "",
            "CatalogProvided",
            "{matchLabels: {name: '&value'}}",
        ),
        &[],
    );
    assert_eq!(code, 1);
    assert!(
        v["end"].as_str().is_some_and(|e| e
            .starts_with("desired catalog selector is invalid: values[0][name]: Invalid value:")),
        "{v:#}"
    );
    // TestClusterExtensionMatchLabel: two catalogs with the package, the
    // selector picks b.
    let two = Case::new(&[("a", gen_package(PKG)), ("b", gen_package(PKG))]);
    let pick_b = "{matchLabels: {olm.operatorframework.io/metadata.name: b}}";
    let (code, v) = two.run(&ce(&[], "", "CatalogProvided", pick_b), &[]);
    assert_eq!(code, 0, "{v:#}");
    assert!(
        v["install"][0]["channel"]
            .as_str()
            .is_some_and(|c| c.contains("catalog b")),
        "{v:#}"
    );
    // Without the selector the two are ambiguous.
    expect_error(
        &two,
        &cp(&[], ""),
        &[],
        &format!(
            "found bundles for package {PKG:?} in multiple catalogs with the same priority [a b]"
        ),
    );
    // TestClusterExtensionNoMatchLabel
    let ab = Case::new(&[("a", other()), ("b", gen_package(PKG))]);
    expect_error(
        &ab,
        &ce(
            &[],
            "",
            "CatalogProvided",
            "{matchLabels: {olm.operatorframework.io/metadata.name: a}}",
        ),
        &[],
        &format!("no bundles found for package {PKG:?}"),
    );
    // Labels given on the command line; matchExpressions.
    let (code, v) = two.run(
        &ce(
            &[],
            "",
            "CatalogProvided",
            "{matchExpressions: [{key: tier, operator: In, values: [gold]}]}",
        ),
        &["--catalog-labels", "a=tier=gold,region=eu"],
    );
    assert_eq!(code, 0, "{v:#}");
    assert!(
        v["install"][0]["channel"]
            .as_str()
            .is_some_and(|c| c.contains("catalog a")),
        "{v:#}"
    );
}

#[test]
fn priorities_deprecations_and_ambiguity() {
    // TestUnequalPriority: a (priority 1) has 1.0.0, b (0) has 1.1.0.
    let c = Case::new(&[
        ("a", flat_package(PKG, &["1.0.0"], &[])),
        ("b", flat_package(PKG, &["1.1.0"], &[])),
    ]);
    expect_bundle(&c, &cp(&[], ""), &["--catalog-priority", "a=1"], "1.0.0");
    // TestMultiplePriority: a=1, b=0, c=1 -> ambiguous, all three named.
    let c = Case::new(&[
        ("a", gen_package(PKG)),
        ("b", gen_package(PKG)),
        ("c", gen_package(PKG)),
    ]);
    expect_error(
        &c,
        &cp(&[], ">=1.0.0 <=1.0.1"),
        &["--catalog-priority", "a=1", "--catalog-priority", "c=1"],
        &format!("found bundles for package {PKG:?} matching version \">=1.0.0 <=1.0.1\" in multiple catalogs with the same priority [a b c]"),
    );
    // TestPackageVariationsBetweenCatalogs
    let c = Case::new(&[
        ("a", other()),
        ("b", flat_package(PKG, &["1.0.0"], &["1.0.0"])),
        ("c", flat_package(PKG, &["1.0.1"], &["1.0.1"])),
        ("d", flat_package(PKG, &["1.0.2"], &[])),
        ("e", flat_package(PKG, &["1.0.3"], &["1.0.3"])),
        ("f", flat_package(PKG, &["1.0.4", "1.0.5"], &[])),
    ]);
    // deprecated in all but one catalog: the non-deprecated one.
    expect_bundle(&c, &cp(&[], ">=1.0.0 <=1.0.3"), &[], "1.0.2");
    // found and deprecated in multiple catalogs
    expect_error(
        &c,
        &cp(&[], ">=1.0.0 <=1.0.1"),
        &[],
        &format!("found bundles for package {PKG:?} matching version \">=1.0.0 <=1.0.1\" in multiple catalogs with the same priority [b c]"),
    );
    // found and not deprecated in multiple catalogs
    expect_error(
        &c,
        &cp(&[], ">=1.0.0 <=1.0.4"),
        &[],
        &format!("found bundles for package {PKG:?} matching version \">=1.0.0 <=1.0.4\" in multiple catalogs with the same priority [d f]"),
    );
    // highest semver bundle is chosen when candidates are all from the same catalog
    expect_bundle(&c, &cp(&[], ">=1.0.4 <=1.0.5"), &[], "1.0.5");
    let (_, v) = c.run(&cp(&[], ">=1.0.0 <=1.0.4"), &[]);
    assert!(
        v["hint"]
            .as_str()
            .is_some_and(|h| h.contains("--catalog-priority")),
        "{v:#}"
    );
}

#[test]
fn command_line_errors() {
    let c = abc();
    let f = c.dir.path().join("ce.yaml");
    std::fs::write(&f, cp(&[], "")).expect("write");
    let f = f.to_str().expect("utf-8");
    let dir = |p: &Path| p.to_string_lossy().into_owned();
    let a = format!("a={}", dir(&c.catalogs[0].1));
    for (args, what) in [
        (vec!["--catalog", "=x"], "NAME=VALUE"),
        (vec!["--catalog", &a, "--catalog", &a], "given twice"),
        (
            vec!["--catalog", &a, "--catalog-priority", "a=high"],
            "integer",
        ),
        (
            vec!["--catalog", &a, "--catalog-priority", "z=1"],
            "no --catalog z",
        ),
        (
            vec!["--catalog", &a, "--catalog-labels", "a=novalue"],
            "KEY=VALUE",
        ),
        (
            vec!["--catalog", &a, "--catalog-availability", "a=Off"],
            "not Available or Unavailable",
        ),
        (
            vec!["--catalog", &a, "--catalog-availability", "z=Unavailable"],
            "no --catalog z",
        ),
    ] {
        let mut argv = vec!["graph", "rehearse", "--cluster-extension", f];
        argv.extend(args);
        let (code, _, err) = run(&argv);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(what), "{what}: {err}");
    }
}

/// The text output: OLM's error on its line, the hint on the next.
#[test]
fn text_output_puts_the_hint_on_its_own_line() {
    let c = abc();
    let f = c.dir.path().join("ce.yaml");
    std::fs::write(&f, cp(&[], "4.0.0")).expect("write");
    let cat = format!("c={}", c.catalogs[2].1.display());
    let (code, out, err) = run(&[
        "graph",
        "rehearse",
        "--cluster-extension",
        f.to_str().expect("utf-8"),
        "--catalog",
        &cat,
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(&format!(
            "  not installable: no bundles found for package {PKG:?} matching version \"4.0.0\"\n  hint: the package has versions"
        )),
        "{out}"
    );
}

/// operator-controller `catalogmetadata/filter/successors_test.go`
/// TestSuccessorsPredicate: from each installed bundle, the successor OLM
/// v1 moves to (the highest of the successors and the installed version).
#[test]
fn successors_predicate() {
    let p = "test-package";
    let mut text = format!(
        "---\nschema: olm.package\nname: {p}\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: {p}\nname: stable\nentries:\n- name: {p}.v2.0.0\n- {{name: {p}.v2.1.0, replaces: {p}.v2.0.0}}\n- {{name: {p}.v2.2.0, replaces: {p}.v2.1.0, skips: ['{p}.v2.0.0+1']}}\n- name: {p}.v2.2.1\n- {{name: {p}.v2.3.0, replaces: {p}.v2.2.0, skips: [{p}.v2.2.1]}}\n- {{name: {p}.v2.4.0, skipRange: '>=2.3.0 <2.4.0'}}\n"
    );
    for v in [
        "2.0.0", "2.0.0+1", "2.1.0", "2.2.0", "2.2.1", "2.3.0", "2.4.0",
    ] {
        text.push_str(&bundle(p, v));
    }
    let c = Case::new(&[("a", text)]);
    let ce_text = cp(&[], "").replace(PKG, p);
    for (name, installed, to) in [
        ("respect replaces directive from catalog", "2.0.0", "2.1.0"),
        ("respect skips directive from catalog", "2.2.1", "2.3.0"),
        ("respect skipRange directive from catalog", "2.3.0", "2.4.0"),
        // 2.1.0 replaces 2.0.0, not 2.0.0+1: build metadata counts.
        ("installed bundle matcher is exact", "2.0.0+1", "2.2.0"),
    ] {
        let inst = format!("{p}.v{installed}");
        let (code, v) = c.run(&ce_text, &["--installed", &inst]);
        assert_eq!(code, 0, "{name}: {v:#}");
        assert_eq!(v["install"][0]["bundle"], inst, "{name}: {v:#}");
        assert_eq!(
            v["upgrades"][0]["to"],
            format!("{p}.v{to}"),
            "{name}: {v:#}"
        );
    }
}

/// A package `pkg-a` in channel `alpha`: 1.0.0, then 2.0.0 replacing it
/// with the dependency property `prop` (value `value`, flow YAML).
fn dependent_upgrade(prop: &str, value: &str) -> String {
    let mut s = format!(
        "---\nschema: olm.package\nname: {PKG}\ndefaultChannel: alpha\n---\nschema: olm.channel\npackage: {PKG}\nname: alpha\nentries:\n- name: {PKG}.v1.0.0\n- {{name: {PKG}.v2.0.0, replaces: {PKG}.v1.0.0}}\n"
    );
    s.push_str(&bundle(PKG, "1.0.0"));
    s.push_str(&bundle(PKG, "2.0.0"));
    s.push_str(&format!("- type: {prop}\n  value: {value}\n"));
    s
}

/// operator-controller `resolve/validation_test.go` TestNoDependencyValidation,
/// through `Resolve` (which validates whatever it resolves): each dependency
/// property refuses the bundle with operator-controller's message, on the
/// install and on an upgrade alike (exit 1; the explanation is the hint).
#[test]
fn no_dependency_validation_refuses_install_and_upgrade() {
    for (prop, value) in [
        (
            "olm.package.required",
            "{packageName: other, versionRange: '>=1.0.0'}",
        ),
        (
            "olm.gvk.required",
            "{group: example.com, version: v1, kind: Other}",
        ),
        (
            "olm.constraint",
            "{failureMessage: needs other, package: {packageName: other, versionRange: '>=1.0.0'}}",
        ),
    ] {
        let c = Case::new(&[("a", dependent_upgrade(prop, value))]);
        let want = format!(
            "validating bundle \"{PKG}.v2.0.0\": bundle \"{PKG}.v2.0.0\" has a dependency declared via property {prop:?} which is currently not supported"
        );
        // Install: the highest bundle is the one refused; no fallback.
        let (code, v) = c.run(&cp(&[], ""), &[]);
        assert_eq!(code, 1, "{prop}: {v:#}");
        assert_eq!(v["end"], want, "{prop}: {v:#}");
        assert!(
            v["hint"]
                .as_str()
                .is_some_and(|h| h.contains("does not resolve dependencies")),
            "{v:#}"
        );
        // "package with no dependencies": 1.0.0 installs.
        expect_bundle(&c, &cp(&[], "1.0.0"), &[], "1.0.0");
        // Upgrade from the installed 1.0.0: refused the same way, exit 1.
        let (code, v) = c.run(&cp(&[], ""), &["--installed", "1.0.0"]);
        assert_eq!(code, 1, "{prop}: {v:#}");
        assert_eq!(v["installable"], false, "{v:#}");
        assert_eq!(v["end"], want, "{prop}: {v:#}");
        assert!(
            v["hint"].as_str().is_some_and(|h| h.contains(&format!(
                "the upgrade {PKG}.v1.0.0 -> {PKG}.v2.0.0 is refused"
            ))),
            "{v:#}"
        );
    }
}

/// TestSuccessorsPredicate "installed bundle not found", and resolving
/// from an installed bundle the catalog no longer has (the cluster's
/// `status.install.bundle`, `--installed NAME@VERSION`): successors by the
/// catalog's replaces/skips (by name) and skipRange (by version); any
/// version with SelfCertified.
#[test]
fn installed_bundle_absent_from_the_catalogs() {
    let p = "test-package";
    let mut text = format!(
        "---\nschema: olm.package\nname: {p}\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: {p}\nname: stable\nentries:\n- {{name: {p}.v2.1.0, replaces: {p}.v2.0.0}}\n- {{name: {p}.v2.4.0, skipRange: '>=2.3.0 <2.4.0'}}\n- {{name: {p}.v3.0.0, skips: [{p}.v2.9.0-old]}}\n"
    );
    for v in ["2.1.0", "2.4.0", "3.0.0"] {
        text.push_str(&bundle(p, v));
    }
    let c = Case::new(&[("a", text)]);
    let cp_ = cp(&[], "").replace(PKG, p);
    // "installed bundle not found": no successor, and no bundle of its
    // version: OLM's resolve fails.
    let (code, v) = c.run(&cp_, &["--installed", &format!("{p}.v9.0.0@9.0.0")]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(
        v["end"],
        format!("error upgrading from currently installed version \"9.0.0\": no bundles found for package {p:?}"),
        "{v:#}"
    );
    // By name (replaces), by version (skipRange), by name (skips).
    for (installed, to) in [
        (format!("{p}.v2.0.0@2.0.0"), "2.1.0"),
        (format!("{p}.v2.3.5@2.3.5"), "2.4.0"),
        (format!("{p}.v2.9.0-old@2.9.0"), "3.0.0"),
    ] {
        let (code, v) = c.run(&cp_, &["--installed", &installed]);
        assert_eq!(code, 0, "{installed}: {v:#}");
        assert_eq!(v["alreadyInstalled"], true, "{v:#}");
        let inst_name = installed.split('@').next().unwrap_or_default();
        assert_eq!(v["install"][0]["bundle"], inst_name, "{v:#}");
        assert_eq!(v["upgrades"][0]["from"], inst_name, "{v:#}");
        assert_eq!(
            v["upgrades"][0]["to"],
            format!("{p}.v{to}"),
            "{installed}: {v:#}"
        );
    }
    // The name counts: 2.0.0 under another name is no bundle's replaces,
    // and no skipRange admits 2.0.0.
    let (code, v) = c.run(&cp_, &["--installed", &format!("{p}.v2.0.0-rebuilt@2.0.0")]);
    assert_eq!(code, 1, "{v:#}");
    // SelfCertified: any version the filters admit (the highest).
    let sc = ce(&[], "", "SelfCertified", "").replace(PKG, p);
    let (code, v) = c.run(&sc, &["--installed", &format!("{p}.v9.0.0@9.0.0")]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["upgrades"][0]["to"], format!("{p}.v3.0.0"), "{v:#}");
    // A bare version the catalogs lack is not guessed at: a cluster always
    // knows what it has installed, so this is a usage error (exit 2) that
    // says how to name it, not an OLM verdict.
    let (code, err) = c.run_err(&cp_, &["--installed", "9.0.0"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--installed \"9.0.0\": not a bundle of package")
            && err.contains("\nhint: ")
            && err.contains("NAME@VERSION"),
        "{err}"
    );
    // A version that is not semver, as operator-controller parses it.
    let (code, err) = c.run_err(&cp_, &["--installed", &format!("{p}.vX@v2.0")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a semantic version"), "{err}");
}

/// TestAllCatalogsDisabled, TestSomeCatalogsDisabled: a ClusterCatalog
/// with `availabilityMode: Unavailable` is left out of resolution.
#[test]
fn unavailable_catalogs_are_left_out() {
    // TestAllCatalogsDisabled
    let c = Case::new(&[("a", gen_package(PKG)), ("b", gen_package(PKG))]);
    let (code, v) = c.run(
        &cp(&[], ">=1.0.0"),
        &[
            "--catalog-availability",
            "a=Unavailable",
            "--catalog-availability",
            "b=Unavailable",
        ],
    );
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(
        v["end"],
        format!("no bundles found for package {PKG:?} matching version \">=1.0.0\""),
        "{v:#}"
    );
    assert!(
        v["hint"]
            .as_str()
            .is_some_and(|h| h.contains("Unavailable")),
        "{v:#}"
    );
    // TestSomeCatalogsDisabled: the enabled catalog (priority 1) resolves
    // 3.0.0.
    let (code, v) = c.run(
        &cp(&[], ">=1.0.0"),
        &[
            "--catalog-priority",
            "a=1",
            "--catalog-availability",
            "a=Available",
            "--catalog-availability",
            "b=Unavailable",
        ],
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(resolved(&v), pkg_v("3.0.0"), "{v:#}");
    // Equal priorities: ambiguous while both are available, resolved when
    // one is not (the disabled one would otherwise tie).
    let (code, v) = c.run(&cp(&[], ">=1.0.0"), &[]);
    assert_eq!(code, 1, "{v:#}");
    expect_bundle(
        &c,
        &cp(&[], ">=1.0.0"),
        &["--catalog-availability", "a=Unavailable"],
        "3.0.0",
    );
    let (code, v) = c.run(
        &cp(&[], ">=1.0.0"),
        &["--catalog-availability", "a=Unavailable"],
    );
    assert_eq!(code, 0);
    assert_eq!(v["install"][0]["channel"], "gamma (catalog b)", "{v:#}");
}

/// The text output of a rehearsal refused after upgrades: the upgrades
/// OLM makes, then OLM's error and the hint.
#[test]
fn text_output_shows_the_upgrades_before_a_refusal() {
    let mut text = dependent_upgrade("olm.gvk.required", "{group: a, version: v1, kind: B}");
    text = text.replace(
        &format!("- name: {PKG}.v1.0.0\n"),
        &format!("- name: {PKG}.v1.0.0\n- {{name: {PKG}.v1.5.0, replaces: {PKG}.v1.0.0}}\n"),
    );
    text = text.replace(
        &format!("{{name: {PKG}.v2.0.0, replaces: {PKG}.v1.0.0}}"),
        &format!("{{name: {PKG}.v2.0.0, replaces: {PKG}.v1.5.0}}"),
    );
    text.push_str(&bundle(PKG, "1.5.0"));
    let c = Case::new(&[("a", text)]);
    let f = c.dir.path().join("ce.yaml");
    std::fs::write(&f, cp(&[], "")).expect("write");
    let cat = format!("a={}", c.catalogs[0].1.display());
    let (code, out, err) = run(&[
        "graph",
        "rehearse",
        "--cluster-extension",
        f.to_str().expect("utf-8"),
        "--catalog",
        &cat,
        "--installed",
        &format!("{PKG}.v0.9.0@0.9.0"),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    // 0.9.0 is in no catalog and nothing succeeds it: not installable.
    assert!(
        out.contains("not installable: error upgrading from currently installed version \"0.9.0\""),
        "{out}"
    );
    let (code, out, err) = run(&[
        "graph",
        "rehearse",
        "--cluster-extension",
        f.to_str().expect("utf-8"),
        "--catalog",
        &cat,
        "--installed",
        "1.0.0",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(&format!(
            "  1. upgrade {PKG}: {PKG}.v1.0.0 -> {PKG}.v1.5.0 (replaces, channel alpha)\n  not installable: validating bundle \"{PKG}.v2.0.0\""
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "\n  hint: the upgrade {PKG}.v1.5.0 -> {PKG}.v2.0.0 is refused"
        )),
        "{out}"
    );
}
