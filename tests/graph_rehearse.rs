//! `graph rehearse` and `graph path --olm`: what OLM v0 and OLM v1 would
//! install and upgrade, on fixtures with dependencies across packages
//! (`fixtures/rehearse/`, written by its `gen.py`) and on the shared
//! corpus's v4.18 catalog.

use crate::common::{self, run};
use serde_json::Value;

fn fixture_catalog() -> String {
    common::fixtures()
        .join("rehearse/deps/catalog.yaml")
        .to_string_lossy()
        .into_owned()
}

fn request(name: &str) -> String {
    common::fixtures()
        .join("rehearse/requests")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Runs `graph rehearse` with `-o json`; (exit code, the JSON).
fn rehearse(flag: &str, file: &str, catalog: &str, more: &[&str]) -> (i32, Value) {
    let mut args = vec!["graph", "rehearse", flag, file, catalog, "-o", "json"];
    args.extend_from_slice(more);
    let (code, out, err) = run(&args);
    let v = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    (code, v)
}

fn names(v: &Value, key: &str, field: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} in {v}"))
        .iter()
        .map(|x| x[field].as_str().unwrap_or("").to_string())
        .collect()
}

fn upgrades(v: &Value) -> Vec<(String, String, String)> {
    v["upgrades"]
        .as_array()
        .expect("upgrades")
        .iter()
        .map(|u| {
            (
                u["package"].as_str().unwrap_or("").to_string(),
                u["from"].as_str().unwrap_or("").to_string(),
                u["to"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// app 2.0.0 needs db in >=2.0.0 <3.0.0 and a Cache; cache and othercache
/// both provide one, and OLM v0's order (default channels, then package
/// name) picks cache.
#[test]
fn subscription_installs_dependencies_from_other_packages() {
    let (code, v) = rehearse(
        "--subscription",
        &request("sub-app.yaml"),
        &fixture_catalog(),
        &[],
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["installable"], true);
    assert_eq!(
        names(&v, "install", "bundle"),
        ["app.v2.0.0", "cache.v1.0.0", "db.v2.1.0"]
    );
    let db = &v["install"][2];
    assert_eq!(db["requiredBy"], "app.v2.0.0");
    assert_eq!(db["requirement"], "package db in range >=2.0.0 <3.0.0");
    assert_eq!(
        v["install"][1]["requirement"],
        "an operator providing example.com/v1 Cache"
    );
    assert!(upgrades(&v).is_empty(), "{v:#}");
    assert_eq!(
        v["end"],
        "app.v2.0.0 is the head of channel stable; no more upgrades"
    );
    // The text form says the same.
    let (code, text, _) = run(&[
        "graph",
        "rehearse",
        "--subscription",
        &request("sub-app.yaml"),
        &fixture_catalog(),
    ]);
    assert_eq!(code, 0);
    assert!(
        text.contains("install dependency db.v2.1.0 (db 2.1.0, channel stable) for app.v2.0.0: package db in range >=2.0.0 <3.0.0"),
        "{text}"
    );
}

/// From startingCSV app.v1.0.0 (needs db 1.x): one hop at a time; app
/// 2.0.0 needs db 2.x, so db's own Subscription moves in the same round,
/// and the Cache provider is installed then.
#[test]
fn upgrades_take_one_hop_and_move_dependencies_with_them() {
    let (code, v) = rehearse(
        "--subscription",
        &request("sub-app-from-1.0.0.yaml"),
        &fixture_catalog(),
        &[],
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(names(&v, "install", "bundle"), ["app.v1.0.0", "db.v1.3.0"]);
    let ups = upgrades(&v);
    let want = [
        ("app", "app.v1.0.0", "app.v1.1.0"),
        ("app", "app.v1.1.0", "app.v2.0.0"),
        ("db", "db.v1.3.0", "db.v2.1.0"),
    ];
    assert_eq!(
        ups,
        want.map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    );
    assert_eq!(v["upgrades"][1]["round"], 2);
    assert_eq!(v["upgrades"][2]["round"], 2);
    assert_eq!(
        names(&v["upgrades"][1], "newDependencies", "bundle"),
        ["cache.v1.0.0"]
    );
    assert_eq!(v["upgrades"][0]["kind"], "replaces");
}

/// The exact failing constraints, all of them, and exit 1.
#[test]
fn unsatisfiable_dependencies_name_the_constraint() {
    let (code, v) = rehearse(
        "--subscription",
        &request("sub-needy-2.0.0.yaml"),
        &fixture_catalog(),
        &[],
    );
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["installable"], false);
    let end = v["end"].as_str().expect("end");
    assert!(end.starts_with("constraints not satisfiable: "), "{end}");
    assert!(
        end.contains("bundle needy.v2.0.0 requires an operator providing an API with group: example.com, version: v1, kind: Foo: no bundle in the catalog provides example.com/v1 Foo"),
        "{end}"
    );
    assert!(
        end.contains("bundle needy.v2.0.0 requires an operator with package: bar and with version in range: >=2.0.0 <3.0.0: package bar has no version in >=2.0.0 <3.0.0; it has 1.2.0, 1.3.0"),
        "{end}"
    );
    let (code, text, _) = run(&[
        "graph",
        "rehearse",
        "--subscription",
        &request("sub-needy-2.0.0.yaml"),
        &fixture_catalog(),
    ]);
    assert_eq!(code, 1);
    assert!(
        text.contains("not installable: constraints not satisfiable"),
        "{text}"
    );
}

/// The head's dependencies fail: the solver falls back to the next entry
/// of the chain, as OLM v0 does, and says what it passed over.
#[test]
fn a_head_that_cannot_be_satisfied_makes_olm_install_an_older_entry() {
    let (code, v) = rehearse(
        "--subscription",
        &request("sub-needy.yaml"),
        &fixture_catalog(),
        &[],
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(names(&v, "install", "bundle"), ["needy.v1.0.0"]);
    assert_eq!(names(&v, "passedOver", "bundle"), ["needy.v2.0.0"]);
    assert!(upgrades(&v).is_empty());
    let notes = v["notes"].to_string();
    assert!(notes.contains("needy stays at needy.v1.0.0"), "{notes}");
}

#[test]
fn manual_approval_stops_after_the_install() {
    let (code, v) = rehearse(
        "--subscription",
        &request("sub-app-manual.yaml"),
        &fixture_catalog(),
        &[],
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(names(&v, "install", "bundle"), ["app.v1.0.0", "db.v1.3.0"]);
    assert!(upgrades(&v).is_empty());
    assert_eq!(
        v["end"],
        "waiting for approval of the upgrade app.v1.0.0 -> app.v1.1.0"
    );
}

/// A downgrade edge makes the upgrades loop: the rehearsal stops there.
#[test]
fn upgrades_that_loop_stop() {
    let (code, v) = rehearse(
        "--subscription",
        &request("sub-loopy.yaml"),
        &fixture_catalog(),
        &[],
    );
    assert_eq!(code, 0, "{v:#}");
    let tos: Vec<String> = upgrades(&v).into_iter().map(|u| u.2).collect();
    assert_eq!(tos, ["loopy.v2.0.0", "loopy.v1.0.0"]);
    assert!(
        v["end"]
            .as_str()
            .is_some_and(|e| e.starts_with("the upgrades loop back to loopy.v1.0.0")),
        "{v}"
    );
}

/// olm.constraint `any`, a channel that does not exist.
#[test]
fn compound_constraints_and_missing_channels() {
    let (code, v) = rehearse(
        "--subscription",
        &request("sub-anyone.yaml"),
        &fixture_catalog(),
        &[],
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        names(&v, "install", "bundle"),
        ["anyone.v1.0.0", "db.v2.1.0"]
    );
    let (code, v) = rehearse(
        "--subscription",
        &request("sub-missing-channel.yaml"),
        &fixture_catalog(),
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(
        v["end"],
        "constraints not satisfiable: no operators found in channel fast of package app in the catalog referenced by subscription app (hint: the package has channels stable)"
    );
}

/// operator-controller's upgrade-support example (`skippy`): 1.2.0 is
/// admitted by its skipRange but skipped by the head. OLM v0 leaves it out
/// of the channel and walks 1.0.0 -> 1.1.0 -> 1.3.0; OLM v1 takes the
/// highest successor, 1.2.0, then 1.3.0, and searches every channel, so it
/// goes on to the candidate channel's 2.0.0.
#[test]
fn olm_v0_and_v1_successors_differ() {
    let cat = fixture_catalog();
    let path = |olm: &str| -> Vec<(String, String)> {
        let (code, out, err) = run(&[
            "graph",
            "path",
            &cat,
            "--package",
            "skippy",
            "--from",
            "1.0.0",
            "--olm",
            olm,
            "-o",
            "json",
        ]);
        assert_eq!(code, 0, "{out}{err}");
        let v: Value = serde_json::from_str(&out).expect("json");
        assert_eq!(v["olm"], olm);
        v["steps"]
            .as_array()
            .expect("steps")
            .iter()
            .map(|s| {
                (
                    s["to"].as_str().unwrap_or("").to_string(),
                    s["kind"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        path("v0"),
        [
            pair("skippy.v1.1.0", "replaces"),
            pair("skippy.v1.3.0", "replaces")
        ]
    );
    assert_eq!(
        path("v1"),
        [
            pair("skippy.v1.2.0", "skipRange"),
            pair("skippy.v1.3.0", "skips"),
            pair("skippy.v2.0.0", "replaces")
        ]
    );
    // The rehearsals agree with the paths: a Subscription from 1.0.0, and a
    // ClusterExtension (version 1.x) reconciling from an installed 1.0.0.
    let (code, v) = rehearse(
        "--subscription",
        &request("sub-skippy-from-1.0.0.yaml"),
        &cat,
        &[],
    );
    assert_eq!(code, 0);
    let tos: Vec<String> = upgrades(&v).into_iter().map(|u| u.2).collect();
    assert_eq!(tos, ["skippy.v1.1.0", "skippy.v1.3.0"]);
    let (code, v) = rehearse(
        "--cluster-extension",
        &request("ce-skippy-any.yaml"),
        &cat,
        &["--installed", "1.0.0"],
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["alreadyInstalled"], true);
    let tos: Vec<String> = upgrades(&v).into_iter().map(|u| u.2).collect();
    // 2.0.0 is outside the version range 1.x.
    assert_eq!(tos, ["skippy.v1.2.0", "skippy.v1.3.0"]);
}

#[test]
fn cluster_extension_rules() {
    let cat = fixture_catalog();
    // The highest version the range and channels admit.
    let (code, v) = rehearse("--cluster-extension", &request("ce-skippy.yaml"), &cat, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["olm"], "v1");
    assert_eq!(names(&v, "install", "bundle"), ["skippy.v1.2.0"]);
    // OLM v1 refuses bundles with dependencies, with its own words.
    let (code, v) = rehearse("--cluster-extension", &request("ce-app.yaml"), &cat, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        v["end"],
        "validating bundle \"app.v2.0.0\": bundle \"app.v2.0.0\" has a dependency declared via property \"olm.gvk.required\" which is currently not supported"
    );
    // Nothing in range: which versions there are.
    let (code, v) = rehearse(
        "--cluster-extension",
        &request("ce-skippy-none.yaml"),
        &cat,
        &[],
    );
    assert_eq!(code, 1);
    // operator-controller's text, word for word; the explanation apart.
    assert_eq!(
        v["end"],
        "no bundles found for package \"skippy\" matching version \">=3.0.0\""
    );
    assert_eq!(
        v["hint"],
        "the package has versions 1.0.0, 1.1.0, 1.2.0, 1.3.0, 2.0.0"
    );
}

#[test]
fn bad_requests_are_usage_errors() {
    let cat = fixture_catalog();
    let (code, _, err) = run(&["graph", "rehearse", &cat]);
    assert_eq!(code, 2, "{err}");
    let t = tempfile::tempdir().expect("tmp");
    let bad = t.path().join("sub.yaml");
    std::fs::write(&bad, "kind: Subscription\nspec:\n  channel: [stable\n").expect("write");
    let (code, _, err) = run(&[
        "graph",
        "rehearse",
        "--subscription",
        bad.to_str().expect("utf-8"),
        &cat,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("sub.yaml"), "{err}");
    std::fs::write(
        &bad,
        "kind: ClusterExtension\nspec:\n  packageName: skippy\n  version: '>=1.0 garbage'\n",
    )
    .expect("write");
    let (code, v) = rehearse(
        "--cluster-extension",
        bad.to_str().expect("utf-8"),
        &cat,
        &[],
    );
    assert_eq!(code, 1);
    assert!(
        v["end"]
            .as_str()
            .is_some_and(|e| e.starts_with("desired version range \">=1.0 garbage\" is invalid")),
        "{v}"
    );
}

/// `graph path` lists what changes in the CRDs on each step: the unsafe
/// change `graph check` reports and the safe additions.
#[test]
fn graph_path_shows_crd_changes_per_step() {
    let pkg = common::fixtures().join("crd-safety/pkg");
    let (code, out, err) = run(&[
        "graph",
        "path",
        pkg.to_str().expect("utf-8"),
        "--from",
        "0.1.0",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    let c = &v["steps"][0]["crdChanges"];
    assert_eq!(c["compared"], true);
    assert_eq!(c["unsafe"][0]["rule"], "crd-upgrade-maximum-tightened");
    assert!(
        c["unsafe"][0]["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("field ^.spec.size: maximum decreased from 10 to 8")),
        "{c}"
    );
    let safe: Vec<&str> = c["safe"]
        .as_array()
        .expect("safe")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        safe,
        [
            "CRD widgets.example.com version v1: field ^.spec.color added",
            "CRD widgets.example.com version v1: field ^.spec.mode: enum values \"Medium\" added",
            "CRD widgets.example.com: version v2 added (served)",
        ]
    );
    let (code, text, _) = run(&[
        "graph",
        "path",
        pkg.to_str().expect("utf-8"),
        "--from",
        "0.1.0",
    ]);
    assert_eq!(code, 0);
    assert!(
        text.contains("CRDs error [crd-upgrade-maximum-tightened]: CRD widgets.example.com: version v1: field ^.spec.size: maximum decreased from 10 to 8"),
        "{text}"
    );
    assert!(
        text.contains("CRDs safe: CRD widgets.example.com: version v2 added (served)"),
        "{text}"
    );
    // A file-based catalog has no CRD files: said once.
    let (code, text, _) = run(&[
        "graph",
        "path",
        &fixture_catalog(),
        "--package",
        "app",
        "--from",
        "1.0.0",
    ]);
    assert_eq!(code, 0);
    assert_eq!(text.matches("not compared").count(), 1, "{text}");
}

/// A corpus package's path: kepler-operator 0.22.0 -> 0.23.0 changes the
/// `maxTerminated` default (500 -> 0) in two CRDs (checked by hand in
/// docs/graph.md); the other hops change nothing unsafe.
#[test]
fn graph_path_crd_changes_on_the_corpus() {
    let pkg = common::corpus().join("operators/kepler-operator");
    let (code, out, err) = run(&[
        "graph",
        "path",
        pkg.to_str().expect("utf-8"),
        "--from",
        "0.21.0",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    let per_step: Vec<(String, Vec<String>)> = v["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["to"].as_str().unwrap_or("").to_string(),
                s["crdChanges"]["unsafe"]
                    .as_array()
                    .expect("unsafe")
                    .iter()
                    .map(|f| f["rule"].as_str().unwrap_or("").to_string())
                    .collect(),
            )
        })
        .collect();
    let rule = "crd-upgrade-default-changed".to_string();
    assert_eq!(
        per_step,
        [
            ("kepler-operator.v0.22.0".to_string(), vec![]),
            (
                "kepler-operator.v0.23.0".to_string(),
                vec![rule.clone(), rule]
            ),
            ("kepler-operator.v0.24.0".to_string(), vec![]),
        ]
    );
    assert!(
        v["steps"][1]["crdChanges"]["unsafe"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("maxTerminated: default changed from 500 to 0")),
        "{v}"
    );
}

/// The real v4.18 catalog: koku-metrics-operator from its first bundle
/// takes every hop `graph path` lists; rabbitmq-messaging-topology-operator
/// needs rabbitmq-cluster-operator, which this catalog does not have, so
/// OLM v0 passes over every entry that needs it and installs 1.14.2, the
/// newest without that dependency.
#[test]
fn rehearsal_on_the_corpus_catalog() {
    let cat = common::corpus().join("catalogs/v4.18");
    let cat = cat.to_str().expect("utf-8");
    let t = tempfile::tempdir().expect("tmp");
    let sub = t.path().join("koku.yaml");
    std::fs::write(
        &sub,
        "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata:\n  name: koku\nspec:\n  name: koku-metrics-operator\n  channel: beta\n  startingCSV: koku-metrics-operator.v0.9.0\n",
    )
    .expect("write");
    let (code, v) = rehearse("--subscription", sub.to_str().expect("utf-8"), cat, &[]);
    assert_eq!(code, 0, "{v:#}");
    let (code, out, _) = run(&[
        "graph",
        "path",
        &format!("{cat}/koku-metrics-operator"),
        "--from",
        "0.9.0",
        "-o",
        "json",
    ]);
    assert_eq!(code, 0);
    let p: Value = serde_json::from_str(&out).expect("json");
    let path_steps: Vec<(String, String)> = p["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["from"].as_str().unwrap_or("").into(),
                s["to"].as_str().unwrap_or("").into(),
            )
        })
        .collect();
    let hops: Vec<(String, String)> = upgrades(&v).into_iter().map(|u| (u.1, u.2)).collect();
    assert_eq!(hops, path_steps);
    assert_eq!(hops.len(), 34);
    assert_eq!(
        v["end"],
        "koku-metrics-operator.v4.4.1 is the head of channel beta; no more upgrades"
    );

    let sub = t.path().join("rabbit.yaml");
    std::fs::write(
        &sub,
        "kind: Subscription\nmetadata:\n  name: topology\nspec:\n  name: rabbitmq-messaging-topology-operator\n",
    )
    .expect("write");
    let (code, v) = rehearse("--subscription", sub.to_str().expect("utf-8"), cat, &[]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(
        names(&v, "install", "bundle"),
        ["rabbitmq-messaging-topology-operator.v1.14.2"]
    );
    let passed = names(&v, "passedOver", "bundle");
    assert_eq!(passed.len(), 7, "{passed:?}");
    assert_eq!(passed[0], "rabbitmq-messaging-topology-operator.v1.19.3");
    let why = v["passedOver"][0]["reason"].as_str().expect("reason");
    assert!(
        why.contains("requires an operator with package: rabbitmq-cluster-operator and with version in range: >2.0.0: the catalog has no package rabbitmq-cluster-operator"),
        "{why}"
    );
    assert!(
        why.contains("no bundle in the catalog provides rabbitmq.com/v1beta1 RabbitmqCluster"),
        "{why}"
    );
}

/// An SQLite index as opm wrote it (opm-golden) is a catalog too.
#[test]
fn rehearsal_on_an_sqlite_index() {
    let db = common::golden().join("sqlite/etcd/index.db");
    let t = tempfile::tempdir().expect("tmp");
    let sub = t.path().join("etcd.yaml");
    std::fs::write(
        &sub,
        "kind: Subscription\nmetadata:\n  name: etcd\nspec:\n  name: etcd\n  channel: singlenamespace-alpha\n  startingCSV: etcdoperator.v0.9.0\n",
    )
    .expect("write");
    let (code, v) = rehearse(
        "--subscription",
        sub.to_str().expect("utf-8"),
        db.to_str().expect("utf-8"),
        &[],
    );
    assert_eq!(code, 0, "{v:#}");
    let tos: Vec<String> = upgrades(&v).into_iter().map(|u| u.2).collect();
    assert_eq!(tos, ["etcdoperator.v0.9.2", "etcdoperator.v0.9.4"]);
}

/// A long chain of dependencies (each package requires the next; the last
/// package's channel has two entries): round 0 installs all of them, the
/// last at its channel head, and each becomes a Subscription with one
/// candidate, so the next round moves nothing. Thousands of such
/// Subscriptions once took a copy of the solver's queue each (gigabytes at
/// 3,000); each is now taken in place.
#[test]
fn a_long_dependency_chain_installs_in_order() {
    let t = tempfile::tempdir().expect("tempdir");
    let n = 150;
    let mut fbc = String::new();
    let bundle = |p: &str, v: &str, next: Option<String>| {
        let mut props = vec![
            serde_json::json!({"type": "olm.package", "value": {"packageName": p, "version": v}}),
        ];
        if let Some(next) = next {
            props.push(serde_json::json!({"type": "olm.package.required", "value": {"packageName": next, "versionRange": ">=1.0.0"}}));
        }
        serde_json::json!({"schema": "olm.bundle", "name": format!("{p}.v{v}"), "package": p, "image": format!("example.com/{p}:{v}"), "properties": props}).to_string()
    };
    for i in 0..n {
        let p = format!("p{i}");
        let next = (i + 1 < n).then(|| format!("p{}", i + 1));
        fbc.push_str(&format!(
            "{{\"schema\":\"olm.package\",\"name\":\"{p}\",\"defaultChannel\":\"stable\"}}\n"
        ));
        let mut entries = vec![serde_json::json!({"name": format!("{p}.v1.0.0")})];
        fbc.push_str(&bundle(&p, "1.0.0", next.clone()));
        fbc.push('\n');
        if i + 1 == n {
            entries.push(serde_json::json!({"name": format!("{p}.v1.1.0"), "replaces": format!("{p}.v1.0.0")}));
            fbc.push_str(&bundle(&p, "1.1.0", None));
            fbc.push('\n');
        }
        fbc.push_str(
            &serde_json::json!({"schema": "olm.channel", "name": "stable", "package": p, "entries": entries})
                .to_string(),
        );
        fbc.push('\n');
    }
    let cat = t.path().join("catalog.json");
    std::fs::write(&cat, fbc).expect("write");
    let sub = t.path().join("sub.yaml");
    std::fs::write(
        &sub,
        "kind: Subscription\nmetadata:\n  name: p0\nspec:\n  name: p0\n  channel: stable\n  startingCSV: p0.v1.0.0\n",
    )
    .expect("write");
    let (code, v) = rehearse(
        "--subscription",
        sub.to_str().expect("utf-8"),
        cat.to_str().expect("utf-8"),
        &[],
    );
    assert_eq!(code, 0, "{v:#}");
    let installed = names(&v, "install", "bundle");
    assert_eq!(installed.len(), n, "{installed:?}");
    assert_eq!(installed[0], "p0.v1.0.0");
    // The head of the last channel is what OLM resolves for the last
    // dependency in round 0.
    assert_eq!(installed[n - 1], format!("p{}.v1.1.0", n - 1));
    assert_eq!(
        v["install"][n - 1]["requiredBy"],
        format!("p{}.v1.0.0", n - 2)
    );
    assert!(upgrades(&v).is_empty(), "{v:#}");
}
