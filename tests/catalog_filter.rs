//! `catalog filter` on the shared v4.18 catalog and on an index built from
//! corpus bundles: what is kept, what is dropped, and that the result is a
//! valid catalog.
use crate::common;
use olm_catalog::fbc::{ChannelEntry, DeclarativeConfig};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn v418() -> std::path::PathBuf {
    common::corpus().join("catalogs/v4.18")
}

fn load(p: &Path) -> DeclarativeConfig {
    DeclarativeConfig::load_path(p).expect("catalog")
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8")
}

/// The entries of `pkg`'s channel `ch`, by name.
fn channel(cfg: &DeclarativeConfig, pkg: &str, ch: &str) -> Vec<ChannelEntry> {
    cfg.channels
        .iter()
        .find(|c| c.package == pkg && c.name == ch)
        .unwrap_or_else(|| panic!("{pkg}/{ch}"))
        .entries
        .clone()
}

fn assert_valid(dir: &Path) {
    let (c, out, err) = common::run(&["validate", s(dir)]);
    assert_eq!(c, 0, "validate {}: {out}{err}", dir.display());
}

#[test]
fn every_v418_package_to_one_channel_is_valid_and_keeps_that_channel() {
    let src = load(&v418());
    let t = tempfile::tempdir().expect("tmp");
    // One channel per package: a channel other than the default where there
    // is one (so the default must be named), else the default.
    let mut chosen: BTreeMap<String, String> = BTreeMap::new();
    for p in &src.packages {
        let names: BTreeSet<&str> = src
            .channels
            .iter()
            .filter(|c| c.package == p.name)
            .map(|c| c.name.as_str())
            .collect();
        let ch = names
            .iter()
            .find(|n| **n != p.default_channel)
            .unwrap_or(&p.default_channel.as_str())
            .to_string();
        chosen.insert(p.name.clone(), ch);
    }
    assert_eq!(chosen.len(), 7);
    let config = serde_json::json!({
        "apiVersion": "olm.operatorframework.io/v1alpha1",
        "kind": "FilterConfiguration",
        "packages": chosen.iter().map(|(p, c)| serde_json::json!({
            "name": p, "defaultChannel": c, "channels": [{"name": c}]
        })).collect::<Vec<_>>(),
    });
    let cfg_file = t.path().join("filter.json");
    std::fs::write(&cfg_file, config.to_string()).expect("write");
    let out = t.path().join("out");
    let (c, stdout, err) = common::run(&[
        "catalog",
        "filter",
        s(&v418()),
        "--config",
        s(&cfg_file),
        "--output-dir",
        s(&out),
        "-o",
        "json",
    ]);
    assert_eq!(c, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("json report");
    assert_valid(&out);
    let got = load(&out);
    assert_eq!(got.packages.len(), 7);
    for (pkg, ch) in &chosen {
        let p = got
            .packages
            .iter()
            .find(|p| &p.name == pkg)
            .expect("package");
        assert_eq!(&p.default_channel, ch, "{pkg}");
        let kept: Vec<&str> = got
            .channels
            .iter()
            .filter(|c| &c.package == pkg)
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(kept, [ch.as_str()], "{pkg}");
        // The channel's entries, less the edges to bundles of the package
        // that only other channels held.
        let before = channel(&src, pkg, ch);
        let members: BTreeSet<&str> = before.iter().map(|e| e.name.as_str()).collect();
        let removed: BTreeSet<&str> = src
            .bundles
            .iter()
            .filter(|b| &b.package == pkg && !members.contains(b.name.as_str()))
            .map(|b| b.name.as_str())
            .collect();
        let expected: Vec<ChannelEntry> = before
            .iter()
            .map(|e| {
                let mut e = e.clone();
                if removed.contains(e.replaces.as_str()) {
                    e.replaces.clear();
                }
                e.skips.retain(|s| !removed.contains(s.as_str()));
                e
            })
            .collect();
        assert_eq!(channel(&got, pkg, ch), expected, "{pkg}/{ch}");
        let bundles: BTreeSet<&str> = got
            .bundles
            .iter()
            .filter(|b| &b.package == pkg)
            .map(|b| b.name.as_str())
            .collect();
        assert_eq!(bundles, members, "{pkg}: bundles are the channel's");
        let r = report["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .find(|r| r["name"] == pkg.as_str())
            .expect("package report");
        assert_eq!(r["keptBundles"], members.len());
        assert_eq!(
            r["removedBundles"].as_array().map(Vec::len),
            Some(removed.len())
        );
    }
    // multi-nic-cni-operator's default (stable) went: the report says so.
    let r = &report["packages"].as_array().expect("packages")[4];
    assert_eq!(r["name"], "multi-nic-cni-operator");
    assert_eq!(r["defaultChannel"], "alpha");
    assert_eq!(r["previousDefaultChannel"], "stable");
    assert_eq!(r["removedChannels"], serde_json::json!(["beta", "stable"]));
}

#[test]
fn every_v418_package_to_a_version_range_keeps_exactly_the_range() {
    let src = load(&v418());
    let ranges = [
        ("ecr-secret-operator", ">=0.4.0"),
        ("kepler-operator", ">=0.21.0"),
        ("koku-metrics-operator", ">=3.0.0"),
        ("kube-green", ">=0.5.0 <0.7.0"),
        ("multi-nic-cni-operator", ">=1.2.0"),
        ("rabbitmq-messaging-topology-operator", ">=1.14.0"),
        ("trident-operator", ">=24.10.0"),
    ];
    let t = tempfile::tempdir().expect("tmp");
    let out = t.path().join("out");
    let catalog = v418();
    let mut args = vec!["catalog", "filter", s(&catalog)];
    for (p, r) in &ranges {
        args.extend(["--package", p, "--versions", r]);
    }
    args.extend(["--output-dir", s(&out)]);
    let (c, _, err) = common::run(&args);
    assert_eq!(c, 0, "{err}");
    assert_valid(&out);
    let got = load(&out);
    let version = |cfg: &DeclarativeConfig, name: &str| {
        cfg.bundles
            .iter()
            .find(|b| b.name == name)
            .and_then(olm_catalog::fbc::filter::bundle_version)
            .expect("version")
    };
    for (pkg, r) in ranges {
        let range = olm_catalog::semver_range::Range::parse(r).expect("range");
        for ch in src.channels.iter().filter(|c| c.package == pkg) {
            // These channels are version-ordered chains: what is kept is
            // exactly what is in range, nothing more.
            let want: Vec<&str> = ch
                .entries
                .iter()
                .filter(|e| range.admits(&version(&src, &e.name)))
                .map(|e| e.name.as_str())
                .collect();
            let kept = channel(&got, pkg, &ch.name);
            let names: Vec<&str> = kept.iter().map(|e| e.name.as_str()).collect();
            assert_eq!(names, want, "{pkg}/{}", ch.name);
            for e in &kept {
                for t in std::iter::once(&e.replaces).chain(&e.skips) {
                    assert!(
                        t.is_empty() || names.contains(&t.as_str()),
                        "{pkg}/{}: {} points to removed {t}",
                        ch.name,
                        e.name
                    );
                }
            }
        }
    }
    // Exact cuts, as the catalog has them.
    let kg = channel(&got, "kube-green", "alpha");
    let kg: Vec<(&str, &str)> = kg
        .iter()
        .map(|e| (e.name.as_str(), e.replaces.as_str()))
        .collect();
    assert_eq!(
        kg,
        [
            ("kube-green.v0.5.0", ""),
            ("kube-green.v0.5.1", "kube-green.v0.5.0"),
            ("kube-green.v0.5.2", "kube-green.v0.5.1"),
            ("kube-green.v0.6.0", "kube-green.v0.5.2"),
        ]
    );
    let ecr = channel(&got, "ecr-secret-operator", "alpha");
    assert_eq!(ecr[0].name, "ecr-secret-operator.v0.5.0");
    assert_eq!(ecr[0].replaces, "ecr-secret-operator.v0.4.1");
    assert_eq!(ecr[0].skips, ["ecr-secret-operator.v0.4.0"]);
    assert_eq!(ecr[2].name, "ecr-secret-operator.v0.4.0");
    assert_eq!(ecr[2].replaces, "");
}

#[test]
fn an_index_built_from_corpus_bundles_filters_to_a_valid_catalog() {
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("index.db");
    let mut args = vec![
        "index".to_string(),
        "add".into(),
        "--database".into(),
        s(&db).into(),
        "--mode".into(),
        "semver".into(),
    ];
    for p in ["etcd", "kube-green"] {
        args.extend(
            common::package_bundle_dirs(p)
                .iter()
                .map(|d| s(d).to_string()),
        );
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (c, _, err) = common::run(&args);
    assert_eq!(c, 0, "{err}");
    let out = t.path().join("out");
    let (c, _, err) = common::run(&[
        "catalog",
        "filter",
        s(&db),
        "--package",
        "etcd",
        "--versions",
        ">=0.9.0",
        "--package",
        "kube-green",
        "--channel",
        "alpha",
        "--versions",
        "0.5.x",
        "--output-dir",
        s(&out),
        "--catalog-format",
        "yaml",
    ]);
    assert_eq!(c, 0, "{err}");
    assert!(out.join("etcd/catalog.yaml").is_file());
    assert_valid(&out);
    // etcd's alpha channel (0.6.1 only) has nothing in range and goes; its
    // default (singlenamespace-alpha) stays.
    assert!(
        err.contains("etcd: kept 2 channel(s), 5 bundle(s); removed 1 channel(s), 1 bundle(s); default channel singlenamespace-alpha\n  removed channels: alpha\n"),
        "{err}"
    );
    assert!(
        err.contains("  channel alpha (0.5.x): head kube-green.v0.5.2, kept 3 entries, removed 7\n    dropped edge: kube-green.v0.5.0 replaces kube-green.v0.4.1 (removed)\n"),
        "{err}"
    );
    let got = load(&out);
    let names: BTreeSet<&str> = got.bundles.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        BTreeSet::from([
            "etcdoperator.v0.9.0",
            "etcdoperator.v0.9.2",
            "etcdoperator.v0.9.2-clusterwide",
            "etcdoperator.v0.9.4",
            "etcdoperator.v0.9.4-clusterwide",
            "kube-green.v0.5.0",
            "kube-green.v0.5.1",
            "kube-green.v0.5.2",
        ])
    );
}

#[test]
fn refusals_name_what_is_wrong_and_write_nothing() {
    let t = tempfile::tempdir().expect("tmp");
    let out = t.path().join("out");
    let src = v418();
    let run = |extra: &[&str]| {
        let mut a = vec!["catalog", "filter", s(&src)];
        a.extend(extra);
        a.extend(["--output-dir", s(&out)]);
        common::run(&a)
    };
    let (c, _, err) = run(&["--package", "multi-nic-cni-operator", "--channel", "beta"]);
    assert_eq!(c, 2);
    assert!(err.contains("package \"multi-nic-cni-operator\": its default channel \"stable\" is filtered away; name a new one among the kept channels (beta) with --default-channel"), "{err}");
    let (c, _, err) = run(&[
        "--package",
        "nope",
        "--package",
        "kube-green",
        "--channel",
        "beta",
    ]);
    assert_eq!(c, 2);
    assert!(
        err.contains("package \"nope\" is not in the catalog"),
        "{err}"
    );
    assert!(
        err.contains("package \"kube-green\" has no channel \"beta\" (it has: alpha)"),
        "{err}"
    );
    let (c, _, err) = run(&["--package", "kube-green", "--versions", ">=9.0.0"]);
    assert_eq!(c, 2);
    assert!(
        err.contains(
            "package \"kube-green\": no bundle of any channel is in version range \">=9.0.0\""
        ),
        "{err}"
    );
    let (c, _, err) = run(&["--package", "kube-green", "--versions", "~1.2.3"]);
    assert_eq!(c, 2);
    assert!(err.contains("invalid version range \"~1.2.3\""), "{err}");
    let (c, _, err) = run(&["--channel", "alpha", "--package", "kube-green"]);
    assert_eq!(c, 2);
    assert!(
        err.contains("--channel alpha: must follow the --package it applies to"),
        "{err}"
    );
    let (c, _, err) = run(&[]);
    assert_eq!(c, 2);
    assert!(err.contains("name the packages to keep"), "{err}");
    assert!(!out.exists(), "nothing written");
    std::fs::create_dir(&out).expect("mkdir");
    std::fs::write(out.join("x"), "").expect("write");
    let (c, _, err) = run(&["--package", "kube-green"]);
    assert_eq!(c, 2);
    assert!(err.contains("output directory is not empty"), "{err}");
}

#[test]
fn a_catalog_image_filters_and_a_whole_package_is_kept_as_it_was() {
    let t = tempfile::tempdir().expect("tmp");
    let image = format!("oci:{}:v1", s(&t.path().join("layout")));
    let (c, _, err) = common::run(&[
        "catalog",
        "build",
        s(&v418()),
        "--tag",
        &image,
        "--base",
        "scratch",
    ]);
    assert_eq!(c, 0, "{err}");
    let out = t.path().join("out");
    let (c, _, err) = common::run(&[
        "catalog",
        "filter",
        &image,
        "--package",
        "trident-operator",
        "--output-dir",
        s(&out),
    ]);
    assert_eq!(c, 0, "{err}");
    // Nothing of trident-operator changed; the six others went.
    let (c, json, err) = common::run(&["catalog", "diff", &image, s(&out), "-o", "json"]);
    assert_eq!(c, 1, "{err}");
    let d: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(d["addedPackages"], serde_json::json!([]));
    assert_eq!(d["changedPackages"], serde_json::json!([]));
    let removed: Vec<&str> = d["removedPackages"]
        .as_array()
        .expect("removed")
        .iter()
        .map(|p| p["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        removed,
        [
            "ecr-secret-operator",
            "kepler-operator",
            "koku-metrics-operator",
            "kube-green",
            "multi-nic-cni-operator",
            "rabbitmq-messaging-topology-operator"
        ]
    );
}
