//! `index add` across add orders and modes, with expectations derived here
//! from opm's rules (operator-registry pkg/registry/bundlegraphloader.go,
//! pkg/sqlite/graphloader.go, pkg/sqlite/load.go) and the corpus bundle
//! directories:
//!
//! * `--mode semver-skippatch` on a corpus package with patch releases,
//!   against a replay of `AddBundleToGraph` (skip-patch),
//!   `AddPackageChannelsFromGraph` and `SQLGraphLoader.GraphFromEntries`;
//! * incremental adds (one bundle per call, in version order and shuffled)
//!   give the same tables as one call, in replaces and semver modes;
//! * one call with the bundles in any order gives the same tables;
//! * semver modes: the default channel is the one the latest added bundle
//!   names (`AddBundleToGraph` overwrites it with every non-empty
//!   annotation);
//! * properties of the CSV's `olm.properties` annotation
//!   keep their bytes (opm marshals a `json.RawMessage`).
use crate::common;

use common::rows;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// What the tests here need of a bundle directory.
#[derive(Clone, Debug)]
struct Dir {
    dir: PathBuf,
    name: String,
    version: semver::Version,
    channels: Vec<String>,
    default: Option<String>,
}

fn yaml_docs(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read yaml");
    let mut out = Vec::new();
    for doc in yaml_serde::Deserializer::from_str(&text) {
        if let Ok(v) = <Value as serde::Deserialize>::deserialize(doc) {
            if !v.is_null() {
                out.push(v);
            }
        }
    }
    out
}

fn s(v: &Value, p: &str) -> String {
    v.pointer(p)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn read_dir_bundle(dir: &Path) -> Dir {
    let ann = yaml_docs(&dir.join("metadata/annotations.yaml"))
        .into_iter()
        .next()
        .expect("annotations");
    let a = |k: &str| s(&ann, &format!("/annotations/{k}"));
    let mut csv = Value::Null;
    for e in std::fs::read_dir(dir.join("manifests")).expect("manifests") {
        let p = e.expect("e").path();
        for doc in yaml_docs(&p) {
            if doc["kind"] == "ClusterServiceVersion" {
                csv = doc;
            }
        }
    }
    Dir {
        dir: dir.to_path_buf(),
        name: s(&csv, "/metadata/name"),
        version: semver::Version::parse(&s(&csv, "/spec/version")).expect("semver"),
        channels: a("operators.operatorframework.io.bundle.channels.v1")
            .split(',')
            .map(|c| c.trim().to_string())
            .collect(),
        default: Some(a(
            "operators.operatorframework.io.bundle.channel.default.v1",
        ))
        .filter(|d| !d.is_empty()),
    }
}

/// The package's bundles in version order.
fn package_dirs(pkg: &str) -> Vec<Dir> {
    let mut out: Vec<Dir> = common::package_bundle_dirs(pkg)
        .iter()
        .map(|p| read_dir_bundle(p))
        .collect();
    out.sort_by(|a, b| a.version.cmp(&b.version));
    out
}

fn add(db: &Path, args: &[&str], dirs: &[&Dir]) -> std::process::Output {
    Command::new(common::bin())
        .args(["index", "add", "--database"])
        .arg(db)
        .args(args)
        .args(dirs.iter().map(|d| &d.dir))
        .output()
        .expect("run")
}

fn ok(o: &std::process::Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Entries as (channel, bundle, replaced bundle, depth).
const ENTRIES: &str = "SELECT e.channel_name, e.operatorbundle_name, coalesce(r.operatorbundle_name, ''), e.depth FROM channel_entry e LEFT JOIN channel_entry r ON r.entry_id = e.replaces";

/// Every table's rows (channel entries without their ids).
fn snapshot(db: &Path) -> BTreeMap<&'static str, BTreeSet<Vec<String>>> {
    let mut out = BTreeMap::new();
    for t in [
        "operatorbundle",
        "package",
        "channel",
        "api",
        "api_provider",
        "api_requirer",
        "related_image",
        "properties",
        "dependencies",
        "deprecated",
    ] {
        out.insert(t, rows(db, &format!("SELECT * FROM {t}")));
    }
    out.insert("channel_entry", rows(db, ENTRIES));
    out
}

fn assert_same(a: &Path, b: &Path, what: &str) {
    let (x, y) = (snapshot(a), snapshot(b));
    for (t, rows) in &x {
        assert_eq!(rows, &y[t], "{what}: table {t}");
    }
}

/// A fixed-seed shuffle (xorshift), so failures reproduce.
fn shuffled<T: Clone>(items: &[T], seed: u64) -> Vec<T> {
    let mut v = items.to_vec();
    let mut x = seed.max(1);
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
    v
}

const PREFIX: &str = "example.invalid/b";

/// opm's semver modes for bundles added one at a time in `dirs` order:
/// `GraphFromEntries` reads the channel back from its entries (every entry
/// name is a node, each entry's replaces an edge), `AddBundleToGraph` puts
/// the new bundle after the highest lower version (skip-patch: it also
/// replaces the lower patches of its major.minor and what they replaced,
/// which leave the graph), `AddPackageChannelsFromGraph` writes the chain
/// from the head at depth 0 with the edges to nodes no longer in the graph
/// as pairs of entries one deeper each. Returns channel → entries
/// (bundle, replaced, depth), the default channel, or opm's error.
#[allow(clippy::type_complexity)]
fn opm_semver(
    dirs: &[&Dir],
    skippatch: bool,
) -> Result<(BTreeMap<String, BTreeSet<(String, String, i64)>>, String), String> {
    let version: BTreeMap<&str, &semver::Version> =
        dirs.iter().map(|d| (d.name.as_str(), &d.version)).collect();
    let mut entries: BTreeMap<String, Vec<(String, Option<usize>, i64)>> = BTreeMap::new();
    let mut default = String::new();
    for d in dirs {
        if let Some(x) = &d.default {
            default = x.clone();
        }
        if default.is_empty() {
            assert_eq!(
                d.channels.len(),
                1,
                "default channel inferred from one channel"
            );
            default = d.channels[0].clone();
        }
        for c in &d.channels {
            // Read back.
            let mut nodes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            let es = entries.get(c).cloned().unwrap_or_default();
            for (n, _, _) in &es {
                nodes.entry(n.clone()).or_default();
            }
            let mut head_candidates: BTreeSet<String> = nodes.keys().cloned().collect();
            for (n, r, _) in &es {
                if let Some(r) = r {
                    let t = es[*r].0.clone();
                    head_candidates.remove(&t);
                    nodes.entry(n.clone()).or_default().insert(t);
                }
            }
            let mut head = head_candidates.into_iter().next().unwrap_or_default();
            // AddBundleToGraph.
            let mut replaces = BTreeSet::new();
            if nodes.is_empty() {
                head = d.name.clone();
            } else {
                let v = &d.version;
                let behind = nodes
                    .keys()
                    .filter(|n| version[n.as_str()] < v)
                    .max_by(|a, b| version[a.as_str()].cmp(version[b.as_str()]))
                    .cloned();
                let ahead = nodes
                    .keys()
                    .filter(|n| version[n.as_str()] > v)
                    .min_by(|a, b| version[a.as_str()].cmp(version[b.as_str()]))
                    .cloned();
                let candidates: Vec<String> = if skippatch {
                    nodes
                        .keys()
                        .filter(|n| {
                            let x = version[n.as_str()];
                            x.major == v.major && x.minor == v.minor && x < v
                        })
                        .cloned()
                        .collect()
                } else {
                    vec![]
                };
                replaces.extend(candidates.iter().cloned());
                if let Some(b) = behind {
                    replaces.insert(b);
                }
                match ahead {
                    Some(a) => {
                        nodes.insert(a, [d.name.clone()].into());
                    }
                    None => head = d.name.clone(),
                }
                for cand in &candidates {
                    if let Some(r) = nodes.remove(cand) {
                        replaces.extend(r);
                    }
                }
            }
            nodes.insert(d.name.clone(), replaces);
            // AddPackageChannelsFromGraph.
            let mut out: Vec<(String, Option<usize>, i64)> = Vec::new();
            let mut current = head.clone();
            let mut depth = 0;
            let mut previous: Option<usize> = None;
            loop {
                out.push((current.clone(), None, depth));
                let id = out.len() - 1;
                if let Some(p) = previous {
                    out[p].1 = Some(id);
                }
                let reps = nodes.get(&current).cloned().unwrap_or_default();
                let next: Vec<&String> = reps.iter().filter(|r| nodes.contains_key(*r)).collect();
                let synthesized = reps.iter().filter(|r| !nodes.contains_key(*r));
                for (sd, syn) in (depth + 1..).zip(synthesized) {
                    out.push((syn.clone(), None, sd));
                    out.push((current.clone(), Some(out.len() - 1), sd));
                }
                // Several: Go's map order picks one and the others are
                // left out, so the depth check below fails; follow the
                // highest.
                let Some(n) = next
                    .iter()
                    .max_by(|a, b| version[a.as_str()].cmp(version[b.as_str()]))
                else {
                    if depth != nodes.len() as i64 - 1 {
                        return Err(format!("adding bundle {}: Invalid graph", d.name));
                    }
                    break;
                };
                current = n.to_string();
                previous = Some(id);
                depth += 1;
            }
            entries.insert(c.clone(), out);
        }
    }
    let rows = entries
        .into_iter()
        .map(|(c, es)| {
            let set = es
                .iter()
                .map(|(n, r, d)| {
                    (
                        n.clone(),
                        r.map(|i| es[i].0.clone()).unwrap_or_default(),
                        *d,
                    )
                })
                .collect();
            (c, set)
        })
        .collect();
    Ok((rows, default))
}

fn entries_of(db: &Path) -> BTreeMap<String, BTreeSet<(String, String, i64)>> {
    let mut out: BTreeMap<String, BTreeSet<(String, String, i64)>> = BTreeMap::new();
    for r in rows(db, ENTRIES) {
        out.entry(r[0].clone()).or_default().insert((
            r[1].clone(),
            r[2].clone(),
            r[3].parse().expect("depth"),
        ));
    }
    out
}

#[test]
fn semver_skippatch_follows_opm_rule() {
    // Packages with patch releases in one channel. Each prefix of the
    // version order is added in one call and compared with the rule: the
    // last add of a patch shows the skip-patch pairs; a later add reads the
    // graph back with the skipped patch as a node again, which opm either
    // chains (0.2.0 first in its channel) or refuses as an invalid graph.
    let mut differs = 0;
    let mut refused = 0;
    for pkg in [
        "machine-deletion-remediation",
        "fence-agents-remediation",
        "node-maintenance-operator",
    ] {
        let dirs = package_dirs(pkg);
        let refs: Vec<&Dir> = dirs.iter().collect();
        let t = tempfile::tempdir().expect("tmp");
        for k in 1..=refs.len() {
            let part = &refs[..k];
            let db = t.path().join(format!("{k}.db"));
            let o = add(
                &db,
                &[
                    "--mode",
                    "semver-skippatch",
                    "--bundle-image-prefix",
                    PREFIX,
                ],
                part,
            );
            let what = format!("{pkg} first {k}");
            match opm_semver(part, true) {
                Ok((want, default)) => {
                    ok(&o);
                    assert_eq!(entries_of(&db), want, "{what}");
                    if opm_semver(part, false).map(|p| p.0) != Ok(want.clone()) {
                        differs += 1;
                    }
                    assert_eq!(
                        rows(&db, "SELECT p.name, p.default_channel, m.add_mode FROM package p LEFT JOIN olm_catalog_package m ON m.package_name = p.name"),
                        [vec![pkg.to_string(), default, "semver-skippatch".into()]].into(),
                        "{what}"
                    );
                    // Heads keep their manifests, the rest are cleared.
                    let heads: BTreeSet<String> = want
                        .values()
                        .flat_map(|es| es.iter().filter(|e| e.2 == 0).map(|e| e.0.clone()))
                        .collect();
                    let kept: BTreeSet<String> = rows(
                        &db,
                        "SELECT name FROM operatorbundle WHERE csv IS NOT NULL AND bundle IS NOT NULL",
                    )
                    .into_iter()
                    .map(|r| r[0].clone())
                    .collect();
                    assert_eq!(kept, heads, "{what}");
                }
                Err(e) => {
                    refused += 1;
                    assert!(!o.status.success(), "{what}: opm refuses: {e}");
                    let msg = String::from_utf8_lossy(&o.stderr);
                    let bundle = e
                        .split_whitespace()
                        .nth(2)
                        .unwrap_or_default()
                        .trim_end_matches(':');
                    assert!(
                        msg.contains("Invalid graph") && msg.contains(bundle),
                        "{what}: {e} / {msg}"
                    );
                    assert!(!db.exists(), "{what}: a refused add writes nothing");
                }
            }
        }
    }
    assert!(differs > 0 && refused > 0, "{differs} {refused}");
}

/// Adds `dirs` one per call; in replaces mode a bundle whose `replaces`
/// is not in the index yet is refused (as opm refuses it) and retried after
/// the others.
fn add_one_by_one(db: &Path, args: &[&str], dirs: &[&Dir]) {
    let mut pending: Vec<&Dir> = dirs.to_vec();
    while !pending.is_empty() {
        let mut left = Vec::new();
        for d in &pending {
            let o = add(db, args, &[d]);
            if !o.status.success() {
                let msg = String::from_utf8_lossy(&o.stderr);
                assert!(
                    msg.contains("which is not in the index"),
                    "{}: {msg}",
                    d.name
                );
                left.push(*d);
            }
        }
        assert!(left.len() < pending.len(), "no progress: {left:?}");
        pending = left;
    }
}

#[test]
fn incremental_adds_equal_one_call() {
    for (pkg, mode) in [
        ("etcd", "replaces"),
        ("cockroachdb", "replaces"),
        ("pelorus-operator", "replaces"),
        ("debezium-operator", "replaces"),
        ("machine-deletion-remediation", "semver"),
        ("node-maintenance-operator", "semver"),
        ("fence-agents-remediation", "semver"),
    ] {
        let dirs = package_dirs(pkg);
        let refs: Vec<&Dir> = dirs.iter().collect();
        let args = ["--mode", mode, "--bundle-image-prefix", PREFIX];
        let t = tempfile::tempdir().expect("tmp");
        let one = t.path().join("one.db");
        ok(&add(&one, &args, &refs));
        let ordered = t.path().join("ordered.db");
        for d in &refs {
            ok(&add(&ordered, &args, &[d]));
        }
        assert_same(
            &one,
            &ordered,
            &format!("{pkg}: one by one in version order"),
        );
        for seed in [7, 1234] {
            let db = t.path().join(format!("shuffled-{seed}.db"));
            let order = shuffled(&refs, seed);
            add_one_by_one(&db, &args, &order);
            assert_same(&one, &db, &format!("{pkg}: one by one, seed {seed}"));
        }
        if mode == "semver" {
            // And what opm's rules give, whatever the order.
            let (want, _) = opm_semver(&refs, false).expect("semver");
            assert_eq!(entries_of(&one), want, "{pkg}");
        }
    }
}

#[test]
fn batch_in_any_order_equals_version_order() {
    let cases: &[(&str, &str, bool)] = &[
        ("clickhouse", "replaces", false),
        ("cockroachdb", "replaces", false),
        ("dapr-kubernetes-operator", "replaces", false),
        ("hawtio-operator", "replaces", false),
        ("skupper-operator", "replaces", false),
        ("stolostron-engine", "replaces", false),
        // opm refuses these in replaces mode ("add prunes bundle").
        ("aqua", "replaces", true),
        ("kaoto-operator", "replaces", true),
        ("self-node-remediation", "semver", false),
        ("ack-ecr-controller", "semver", false),
    ];
    for (pkg, mode, permissive) in cases {
        let dirs = package_dirs(pkg);
        let refs: Vec<&Dir> = dirs.iter().collect();
        let mut args = vec!["--mode", *mode, "--bundle-image-prefix", PREFIX];
        if *permissive {
            args.push("--permissive");
        }
        let t = tempfile::tempdir().expect("tmp");
        let base = t.path().join("base.db");
        ok(&add(&base, &args, &refs));
        for seed in [3, 99] {
            let db = t.path().join(format!("s{seed}.db"));
            ok(&add(&db, &args, &shuffled(&refs, seed)));
            assert_same(&base, &db, &format!("{pkg} seed {seed}"));
        }
    }
}

/// A copy of a corpus bundle with new channel annotations.
fn relabel(src: &Dir, to: &Path, channels: &str, default: Option<&str>) -> Dir {
    std::fs::create_dir_all(to.join("manifests")).expect("mkdir");
    std::fs::create_dir_all(to.join("metadata")).expect("mkdir");
    for e in std::fs::read_dir(src.dir.join("manifests")).expect("manifests") {
        let p = e.expect("e").path();
        std::fs::copy(&p, to.join("manifests").join(p.file_name().expect("name"))).expect("copy");
    }
    let pkg = s(
        &yaml_docs(&src.dir.join("metadata/annotations.yaml"))[0],
        "/annotations/operators.operatorframework.io.bundle.package.v1",
    );
    let mut ann = format!(
        "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: {pkg}\n  operators.operatorframework.io.bundle.channels.v1: {channels}\n"
    );
    if let Some(d) = default {
        ann.push_str(&format!(
            "  operators.operatorframework.io.bundle.channel.default.v1: {d}\n"
        ));
    }
    std::fs::write(to.join("metadata/annotations.yaml"), ann).expect("write");
    read_dir_bundle(to)
}

#[test]
fn semver_default_channel_is_the_latest_added_bundles() {
    let dirs = package_dirs("machine-deletion-remediation");
    let t = tempfile::tempdir().expect("tmp");
    let old = dirs
        .iter()
        .find(|d| d.version == semver::Version::new(0, 3, 0))
        .expect("0.3.0");
    let new = dirs
        .iter()
        .find(|d| d.version == semver::Version::new(0, 4, 0))
        .expect("0.4.0");
    let old = relabel(old, &t.path().join("old"), "stable,fast", Some("fast"));
    let new = relabel(new, &t.path().join("new"), "stable,fast", Some("stable"));
    for mode in ["semver", "semver-skippatch"] {
        let args = ["--mode", mode];
        // Newest first, then the older one, which names another default:
        // AddBundleToGraph takes the latest added bundle's annotation.
        let db = t.path().join(format!("{mode}-a.db"));
        ok(&add(&db, &args, &[&new]));
        ok(&add(&db, &args, &[&old]));
        let (_, want) = opm_semver(&[&new, &old], mode != "semver").expect("opm");
        assert_eq!(want, "fast");
        assert_eq!(
            rows(&db, "SELECT default_channel FROM package"),
            [vec![want]].into(),
            "{mode}"
        );
        // In version order the newest names it.
        let db = t.path().join(format!("{mode}-b.db"));
        ok(&add(&db, &args, &[&old]));
        ok(&add(&db, &args, &[&new]));
        assert_eq!(
            rows(&db, "SELECT default_channel FROM package"),
            [vec!["stable".to_string()]].into(),
            "{mode}"
        );
        // A bundle without the annotation keeps the package's default.
        let plain = relabel(
            &dirs[dirs.len() - 1],
            &t.path().join(format!("{mode}-plain")),
            "stable,fast",
            None,
        );
        ok(&add(&db, &args, &[&plain]));
        assert_eq!(
            rows(&db, "SELECT default_channel FROM package"),
            [vec!["stable".to_string()]].into(),
            "{mode}"
        );
    }
}

#[test]
fn csv_properties_annotation_keeps_its_bytes() {
    let dirs = package_dirs("machine-deletion-remediation");
    let t = tempfile::tempdir().expect("tmp");
    let src = &dirs[0];
    let to = t.path().join("b");
    let d = relabel(src, &to, "stable", Some("stable"));
    // Add the annotation to the CSV (JSON inside a YAML single-quoted
    // string): keys out of order, spaces, characters Go escapes.
    let annotation = r#"[{"type": "example.com/x", "value": {"zeta": 1, "alpha": "<a&b>", "mid": [ 1, {"y": true, "b": null} ]}}, {"type":"olm.maxOpenShiftVersion","value":"4.16"}, {"type":"example.com/t"}]"#;
    let csv_path = std::fs::read_dir(to.join("manifests"))
        .expect("manifests")
        .map(|e| e.expect("e").path())
        .find(|p| p.to_string_lossy().contains("clusterserviceversion"))
        .expect("csv file");
    let text = std::fs::read_to_string(&csv_path).expect("csv");
    let marker = "metadata:\n  annotations:\n";
    assert!(text.contains(marker), "CSV layout");
    let text = text.replacen(
        marker,
        &format!("{marker}    olm.properties: '{annotation}'\n"),
        1,
    );
    std::fs::write(&csv_path, text).expect("write");
    let db = t.path().join("index.db");
    ok(&add(&db, &["--mode", "replaces"], &[&d]));
    let got = rows(
        &db,
        &format!(
            "SELECT type, value FROM properties WHERE operatorbundle_name = '{}' AND type NOT IN ('olm.package', 'olm.gvk')",
            d.name
        ),
    );
    // json.Marshal(RawMessage): compacted, key order kept, <>& escaped; a
    // missing value is null.
    let want: BTreeSet<Vec<String>> = [
        vec![
            "example.com/x".to_string(),
            r#"{"zeta":1,"alpha":"\u003ca\u0026b\u003e","mid":[1,{"y":true,"b":null}]}"#
                .to_string(),
        ],
        vec!["olm.maxOpenShiftVersion".into(), r#""4.16""#.into()],
        vec!["example.com/t".into(), "null".into()],
    ]
    .into();
    assert_eq!(got, want);
}
