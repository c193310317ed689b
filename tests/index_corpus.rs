//! Index builds from the real corpus, checked table by table against opm's
//! rules and the corpus's FBC catalogs.
use crate::common;

use common::package_bundle_dirs as bundle_dirs;

use common::rows;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use rusqlite::Connection;

fn add(db: &Path, mode: &str, dirs: &[PathBuf], extra: &[&str]) -> std::process::Output {
    Command::new(common::bin())
        .args(["index", "add", "--database"])
        .arg(db)
        .args(["--mode", mode])
        .args(extra)
        .args(dirs)
        .output()
        .expect("run")
}

fn ok(o: std::process::Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Entries as (channel, bundle, replaced bundle, depth): entry ids differ by insertion order only.
const ENTRIES: &str = "SELECT e.channel_name, e.operatorbundle_name, coalesce(r.operatorbundle_name, ''), e.depth FROM channel_entry e LEFT JOIN channel_entry r ON r.entry_id = e.replaces";

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn etcd_replaces_mode_tables_follow_opm_rules() {
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("index.db");
    ok(add(&db, "replaces", &bundle_dirs("etcd"), &[]));
    // package: default channel from the annotations of the bundles.
    assert_eq!(
        rows(&db, "SELECT p.name, p.default_channel, m.add_mode FROM package p LEFT JOIN olm_catalog_package m ON m.package_name = p.name"),
        [s(&["etcd", "singlenamespace-alpha", "replaces"])].into()
    );
    // channel: each channel's head is the newest bundle listing it.
    assert_eq!(
        rows(&db, "SELECT name, head_operatorbundle_name FROM channel"),
        [
            s(&["alpha", "etcdoperator.v0.6.1"]),
            s(&["clusterwide-alpha", "etcdoperator.v0.9.4-clusterwide"]),
            s(&["singlenamespace-alpha", "etcdoperator.v0.9.4"]),
        ]
        .into()
    );
    // channel_entry: the head at depth 0, then each spec.replaces one deeper.
    assert_eq!(
        rows(&db, ENTRIES),
        [
            s(&["alpha", "etcdoperator.v0.6.1", "", "0"]),
            s(&[
                "clusterwide-alpha",
                "etcdoperator.v0.9.4-clusterwide",
                "etcdoperator.v0.9.2-clusterwide",
                "0"
            ]),
            s(&[
                "clusterwide-alpha",
                "etcdoperator.v0.9.2-clusterwide",
                "etcdoperator.v0.9.0",
                "1"
            ]),
            s(&["clusterwide-alpha", "etcdoperator.v0.9.0", "", "2"]),
            s(&[
                "singlenamespace-alpha",
                "etcdoperator.v0.9.4",
                "etcdoperator.v0.9.2",
                "0"
            ]),
            s(&[
                "singlenamespace-alpha",
                "etcdoperator.v0.9.2",
                "etcdoperator.v0.9.0",
                "1"
            ]),
            s(&["singlenamespace-alpha", "etcdoperator.v0.9.0", "", "2"]),
        ]
        .into()
    );
    // operatorbundle: one row per CSV; version, replaces from the CSV; the
    // csv column is Go json.Encoder output (newline-terminated); no image.
    let ob = rows(&db, "SELECT name, version, coalesce(replaces,''), bundlepath, substr(csv, -1) = char(10), csv LIKE '{\"apiVersion\":\"operators.coreos.com/v1alpha1\",\"kind\":\"ClusterServiceVersion\"%' FROM operatorbundle");
    assert_eq!(ob.len(), 6);
    assert!(
        ob.contains(&s(&[
            "etcdoperator.v0.9.4",
            "0.9.4",
            "etcdoperator.v0.9.2",
            "",
            "1",
            "1"
        ])),
        "{ob:?}"
    );
    // api_provider: every CRD version of the bundle, with NULL path (no image).
    let prov = rows(&db, "SELECT group_name, version, kind, operatorbundle_version, operatorbundle_path FROM api_provider WHERE operatorbundle_name = 'etcdoperator.v0.9.4'");
    assert!(
        prov.contains(&s(&[
            "etcd.database.coreos.com",
            "v1beta2",
            "EtcdCluster",
            "0.9.4",
            "NULL"
        ])),
        "{prov:?}"
    );
    assert_eq!(
        rows(&db, "SELECT plural FROM api WHERE kind = 'EtcdCluster'"),
        [s(&["etcdclusters"])].into()
    );
    // properties: olm.gvk per provided API and one olm.package per bundle.
    let pk = rows(&db, "SELECT value FROM properties WHERE type = 'olm.package' AND operatorbundle_name = 'etcdoperator.v0.9.4'");
    assert_eq!(
        pk,
        [s(&[r#"{"packageName":"etcd","version":"0.9.4"}"#])].into()
    );
    let gvk = rows(&db, "SELECT value FROM properties WHERE type = 'olm.gvk' AND operatorbundle_name = 'etcdoperator.v0.9.4'");
    assert!(gvk.contains(&s(&[
        r#"{"group":"etcd.database.coreos.com","kind":"EtcdCluster","version":"v1beta2"}"#
    ])));
    // related_image: the operator's deployment image.
    let imgs = rows(
        &db,
        "SELECT image FROM related_image WHERE operatorbundle_name = 'etcdoperator.v0.9.4'",
    );
    assert!(!imgs.is_empty());
    let ic = rows(&db, "PRAGMA integrity_check");
    assert_eq!(ic, [s(&["ok"])].into());
    // A second add of a bundle already present is refused and changes nothing.
    let before = rows(&db, ENTRIES);
    let o = add(&db, "replaces", &bundle_dirs("etcd")[..1], &[]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("already in the index"));
    assert_eq!(rows(&db, ENTRIES), before);
}

fn catalog(pkg: &str) -> Vec<serde_json::Value> {
    let p = common::corpus()
        .join("catalogs/v4.18")
        .join(pkg)
        .join("catalog.yaml");
    let mut cfg = olm_catalog::fbc::DeclarativeConfig::default();
    cfg.parse_str(&std::fs::read_to_string(&p).expect("catalog"), &p)
        .expect("parse");
    cfg.bundles
        .iter()
        .map(|b| serde_json::to_value(b).expect("json"))
        .collect()
}

#[test]
fn kube_green_matches_the_corpus_catalog() {
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("index.db");
    let cat = catalog("kube-green");
    // Record the images the real catalog uses.
    let mut extra = Vec::new();
    for b in &cat {
        extra.push(format!(
            "--bundle-image={}={}",
            b["name"].as_str().expect("name"),
            b["image"].as_str().expect("image")
        ));
    }
    let extra_ref: Vec<&str> = extra.iter().map(String::as_str).collect();
    ok(add(&db, "replaces", &bundle_dirs("kube-green"), &extra_ref));
    let mut expect_bundles = BTreeSet::new();
    let mut expect_gvk = BTreeSet::new();
    for b in &cat {
        let name = b["name"].as_str().expect("n").to_string();
        let mut version = String::new();
        for p in b["properties"].as_array().expect("props") {
            match p["type"].as_str() {
                Some("olm.package") => {
                    version = p["value"]["version"].as_str().expect("v").to_string()
                }
                Some("olm.gvk") => {
                    expect_gvk.insert(vec![
                        name.clone(),
                        p["value"]["group"].as_str().expect("g").into(),
                        p["value"]["version"].as_str().expect("v").into(),
                        p["value"]["kind"].as_str().expect("k").into(),
                    ]);
                }
                _ => {}
            }
        }
        expect_bundles.insert(vec![
            name,
            version,
            b["image"].as_str().expect("i").to_string(),
        ]);
    }
    assert_eq!(
        rows(&db, "SELECT name, version, bundlepath FROM operatorbundle"),
        expect_bundles
    );
    assert_eq!(
        rows(
            &db,
            "SELECT operatorbundle_name, group_name, version, kind FROM api_provider"
        ),
        expect_gvk
    );
    // Channel entries: what the catalog's channel says replaces what.
    let p = common::corpus().join("catalogs/v4.18/kube-green/catalog.yaml");
    let mut cfg = olm_catalog::fbc::DeclarativeConfig::default();
    cfg.parse_str(&std::fs::read_to_string(&p).expect("c"), &p)
        .expect("p");
    let mut expect_edges = BTreeSet::new();
    for c in &cfg.channels {
        for e in &c.entries {
            expect_edges.insert(vec![c.name.clone(), e.name.clone(), e.replaces.clone()]);
        }
    }
    let got: BTreeSet<Vec<String>> = rows(&db, ENTRIES)
        .into_iter()
        .map(|mut r| {
            r.pop();
            r
        })
        .collect();
    assert_eq!(got, expect_edges);
    // Rendered, the index gives the catalog's channels back.
    let out = Command::new(common::bin())
        .arg("render")
        .arg(&db)
        .output()
        .expect("render");
    assert!(out.status.success());
    let mut rendered = olm_catalog::fbc::DeclarativeConfig::default();
    rendered
        .parse_str(
            &String::from_utf8_lossy(&out.stdout),
            Path::new("render.json"),
        )
        .expect("parse render");
    let norm = |cs: &[olm_catalog::fbc::Channel]| -> BTreeMap<String, Vec<(String, String)>> {
        cs.iter()
            .map(|c| {
                let mut v: Vec<_> = c
                    .entries
                    .iter()
                    .map(|e| (e.name.clone(), e.replaces.clone()))
                    .collect();
                v.sort();
                (c.name.clone(), v)
            })
            .collect()
    };
    assert_eq!(norm(&rendered.channels), norm(&cfg.channels));
    assert_eq!(
        rendered.packages[0].default_channel,
        cfg.packages[0].default_channel
    );
}

#[test]
fn semver_mode_orders_channels_by_version() {
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("index.db");
    ok(add(
        &db,
        "semver",
        &bundle_dirs("fence-agents-remediation"),
        &[],
    ));
    assert_eq!(
        rows(&db, "SELECT m.add_mode FROM package p LEFT JOIN olm_catalog_package m ON m.package_name = p.name"),
        [s(&["semver"])].into()
    );
    // Along each channel's replaces chain, versions strictly decrease.
    let c = Connection::open(&db).expect("open");
    let chains = rows(&db, "SELECT e.channel_name, ov.version, orr.version FROM channel_entry e JOIN channel_entry r ON r.entry_id = e.replaces JOIN operatorbundle ov ON ov.name = e.operatorbundle_name JOIN operatorbundle orr ON orr.name = r.operatorbundle_name WHERE e.depth < r.depth");
    assert!(!chains.is_empty());
    for r in chains {
        let a = semver::Version::parse(&r[1]).expect("v");
        let b = semver::Version::parse(&r[2]).expect("v");
        assert!(a > b, "{r:?}");
    }
    // Heads are the highest version of each channel.
    let heads = rows(&db, "SELECT c.name, o.version FROM channel c JOIN operatorbundle o ON o.name = c.head_operatorbundle_name");
    for h in heads {
        let max: String = c.query_row("SELECT o.version FROM channel_entry e JOIN operatorbundle o ON o.name = e.operatorbundle_name WHERE e.channel_name = ?", [&h[0]], |r| r.get(0)).expect("q");
        let _ = max;
        let all = rows(&db, &format!("SELECT o.version FROM channel_entry e JOIN operatorbundle o ON o.name = e.operatorbundle_name WHERE e.channel_name = '{}'", h[0]));
        let top = all
            .iter()
            .map(|v| semver::Version::parse(&v[0]).expect("v"))
            .max()
            .expect("max");
        assert_eq!(semver::Version::parse(&h[1]).expect("v"), top);
    }
}

const TABLES: &[&str] = &[
    // `bundle` is compared as a set of objects: render gives them in opm
    // v1.73.0's order (properties sorted by value), not the manifests'.
    "SELECT name, csv, bundlepath, skiprange, version, replaces, skips FROM operatorbundle",
    "SELECT name, default_channel FROM package",
    "SELECT name, package_name, head_operatorbundle_name FROM channel",
    ENTRIES,
    "SELECT image, operatorbundle_name FROM related_image",
    "SELECT group_name, version, kind, operatorbundle_name FROM api_provider",
    "SELECT group_name, version, kind, operatorbundle_name FROM api_requirer",
    "SELECT type, value, operatorbundle_name FROM properties",
    "SELECT type, value, operatorbundle_name FROM dependencies",
];

#[test]
fn sqlite_to_fbc_to_sqlite_keeps_content() {
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("a.db");
    for p in ["etcd", "stolostron-engine", "alibaba-cloud-csi-operator"] {
        // alibaba's 0.1.14 replaces nothing older than 0.1.11: opm refuses
        // the add ("add prunes bundle") unless --permissive.
        ok(add(
            &db,
            "replaces",
            &bundle_dirs(p),
            &["--keep-content", "--permissive"],
        ));
    }
    let out = t.path().join("fbc");
    let o = Command::new(common::bin())
        .arg("migrate")
        .arg(&db)
        .arg(&out)
        .output()
        .expect("migrate");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = Command::new(common::bin())
        .arg("validate")
        .arg(&out)
        .output()
        .expect("validate");
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stdout));
    let db2 = t.path().join("b.db");
    let o = Command::new(common::bin())
        .args(["index", "add", "--database"])
        .arg(&db2)
        .arg("--from-fbc")
        .arg(&out)
        .output()
        .expect("add");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Stranded bundles are in no channel, so FBC cannot carry them.
    let stranded = "('alibaba-cloud-csi-operator.v0.1.9','alibaba-cloud-csi-operator.v0.1.10')";
    for q in TABLES {
        let filt = |db: &Path| -> BTreeSet<Vec<String>> {
            rows(db, q)
                .into_iter()
                .filter(|r| !r.iter().any(|c| stranded.contains(&format!("'{c}'"))))
                .collect()
        };
        assert_eq!(filt(&db), filt(&db2), "table query: {q}");
    }
    let objects = |db: &Path| -> BTreeSet<(String, Vec<String>)> {
        rows(db, "SELECT name, coalesce(bundle, '') FROM operatorbundle")
            .into_iter()
            .filter(|r| !stranded.contains(&format!("'{}'", r[0])))
            .map(|r| {
                let mut objs: Vec<String> = serde_json::Deserializer::from_str(&r[1])
                    .into_iter::<serde_json::Value>()
                    .map(|v| v.expect("json").to_string())
                    .collect();
                objs.sort();
                (r[0].clone(), objs)
            })
            .collect()
    };
    assert!(
        objects(&db) == objects(&db2),
        "the same manifests per bundle"
    );
}

#[test]
fn batch_add_in_any_order_equals_one_by_one_in_version_order() {
    let t = tempfile::tempdir().expect("tmp");
    let mut dirs = bundle_dirs("alibaba-cloud-csi-operator");
    let batch = t.path().join("batch.db");
    dirs.reverse();
    // opm refuses both ways ("add prunes bundle"): 0.1.9 and 0.1.10 end up
    // in no channel.
    let refused = add(&batch, "replaces", &dirs, &[]);
    assert!(!refused.status.success());
    let msg = String::from_utf8_lossy(&refused.stderr);
    assert!(
        msg.contains("add prunes 2 bundle(s)")
            && msg.contains("alibaba-cloud-csi-operator.v0.1.9 from channel stable")
            && msg.contains("alibaba-cloud-csi-operator.v0.1.10 from channel stable"),
        "{msg}"
    );
    assert!(!batch.exists(), "a refused add leaves no database");
    ok(add(&batch, "replaces", &dirs, &["--permissive"]));
    let single = t.path().join("single.db");
    let mut by_version = dirs.clone();
    by_version.sort_by_key(|d| {
        semver::Version::parse(&d.file_name().expect("n").to_string_lossy()).expect("v")
    });
    for d in &by_version {
        ok(add(
            &single,
            "replaces",
            std::slice::from_ref(d),
            &["--permissive"],
        ));
    }
    for q in TABLES {
        assert_eq!(rows(&batch, q), rows(&single, q), "{q}");
    }
}

#[test]
fn killed_add_leaves_the_old_content() {
    // `index add` parses every bundle before it opens the database, so a
    // kill at a fixed time mostly lands before the write. Kill once the
    // write has begun instead: SQLite's rollback journal exists from the
    // first changed page until the commit (tests/index_safety.rs does the
    // same with slowed-down writes, at more kill points, for every command).
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("index.db");
    ok(add(&db, "replaces", &bundle_dirs("etcd"), &[]));
    let before: Vec<_> = TABLES.iter().map(|q| rows(&db, q)).collect();
    let dirs = bundle_dirs("gitlab-operator-kubernetes");
    let journal = t.path().join("index.db-journal");
    let mut mid_write = 0;
    for delay_us in [0u64, 0, 500, 2000, 5000] {
        let mut child = Command::new(common::bin())
            .args(["index", "add", "--mode", "semver", "--database"])
            .arg(&db)
            .args(&dirs)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn");
        let start = std::time::Instant::now();
        while !journal.exists()
            && child.try_wait().expect("try_wait").is_none()
            && start.elapsed() < std::time::Duration::from_secs(120)
        {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        std::thread::sleep(std::time::Duration::from_micros(delay_us));
        // SIGKILL: no chance to clean up.
        let _ = child.kill();
        let _ = child.wait();
        // A commit deletes the journal; a killed write leaves it behind.
        if journal.exists() {
            mid_write += 1;
        }
        let c = Connection::open(&db).expect("open after kill");
        let ic: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("ic");
        assert_eq!(ic, "ok");
        drop(c);
        let after: Vec<_> = TABLES.iter().map(|q| rows(&db, q)).collect();
        if after != before {
            // The add committed before the kill; then it must be complete.
            let n = rows(
                &db,
                "SELECT count(*) FROM operatorbundle WHERE name LIKE 'gitlab-operator-kubernetes%'",
            );
            assert_eq!(
                n,
                [vec![dirs.len().to_string()]].into(),
                "partial content after a kill {delay_us} µs into the write"
            );
            break;
        }
    }
    eprintln!("{mid_write} kill(s) landed during the write");
    assert!(mid_write > 0, "no kill landed during the write");
}

#[test]
fn second_writer_is_told_the_database_is_locked() {
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("index.db");
    ok(add(&db, "replaces", &bundle_dirs("etcd"), &[]));
    let c = Connection::open(&db).expect("open");
    c.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let o = add(&db, "replaces", &bundle_dirs("clickhouse"), &[]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("database is locked by another process"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    c.execute_batch("ROLLBACK").expect("unlock");
    let foreign = t.path().join("foreign.db");
    std::fs::write(
        &foreign,
        b"this is not sqlite at all, just text padding padding",
    )
    .expect("w");
    let o = Command::new(common::bin())
        .arg("render")
        .arg(&foreign)
        .output()
        .expect("render");
    assert!(!o.status.success());
}

/// Package directories as arguments: each package in its ci.yaml's mode
/// (etcd: replaces-mode, fence-agents-remediation: semver-mode), in one
/// call, gives what adding each separately in its mode gives.
#[test]
fn package_directories_are_added_each_in_its_ci_yaml_mode() {
    let t = tempfile::tempdir().expect("tmp");
    let ops = common::corpus().join("operators");
    let one = t.path().join("one.db");
    let o = Command::new(common::bin())
        .args(["index", "add", "--database"])
        .arg(&one)
        .arg(ops.join("etcd"))
        .arg(ops.join("fence-agents-remediation"))
        .output()
        .expect("run");
    ok(o);
    let sep = t.path().join("separate.db");
    ok(add(&sep, "replaces", &bundle_dirs("etcd"), &[]));
    ok(add(
        &sep,
        "semver",
        &bundle_dirs("fence-agents-remediation"),
        &[],
    ));
    for q in [
        ENTRIES,
        "SELECT name, csv, bundle, bundlepath, version, skiprange, replaces, skips FROM operatorbundle",
        "SELECT * FROM package",
        "SELECT * FROM channel",
        "SELECT * FROM properties",
        "SELECT * FROM dependencies",
        "SELECT * FROM related_image",
        "SELECT * FROM api_provider",
        "SELECT * FROM api_requirer",
        "SELECT * FROM olm_catalog_package",
    ] {
        assert_eq!(rows(&one, q), rows(&sep, q), "{q}");
    }
    assert_eq!(
        rows(
            &one,
            "SELECT package_name, add_mode FROM olm_catalog_package"
        ),
        [
            s(&["etcd", "replaces"]),
            s(&["fence-agents-remediation", "semver"])
        ]
        .into()
    );
    // --mode forces one mode for every package directory.
    let forced = t.path().join("forced.db");
    let o = Command::new(common::bin())
        .args(["index", "add", "--mode", "semver", "--database"])
        .arg(&forced)
        .arg(ops.join("fence-agents-remediation"))
        .arg(ops.join("etcd"))
        .output()
        .expect("run");
    ok(o);
    assert_eq!(
        rows(&forced, "SELECT DISTINCT add_mode FROM olm_catalog_package"),
        [s(&["semver"])].into()
    );
    // A package already in the index keeps the mode it was added with.
    let later = t.path().join("later.db");
    let dirs = bundle_dirs("fence-agents-remediation");
    ok(add(&later, "semver", &dirs[..dirs.len() - 1], &[]));
    let o = Command::new(common::bin())
        .args(["index", "add", "--database"])
        .arg(&later)
        .arg(&dirs[dirs.len() - 1])
        .output()
        .expect("run");
    ok(o);
    let whole = t.path().join("whole.db");
    ok(add(&whole, "semver", &dirs, &[]));
    assert_eq!(rows(&later, ENTRIES), rows(&whole, ENTRIES));
}

/// Package directories are written one after another in one transaction: a
/// package that fails after others were written leaves no database behind
/// without --keep-going; with it, the others are kept and the bad package
/// (an unknown updateGraph) is reported.
#[test]
fn a_bad_package_directory_after_good_ones() {
    let t = tempfile::tempdir().expect("tmp");
    let ops = common::corpus().join("operators");
    let bad = t.path().join("zz-bad");
    let v = bad.join("1.0.0");
    std::fs::create_dir_all(v.join("manifests")).expect("mkdir");
    std::fs::write(bad.join("ci.yaml"), "updateGraph: sideways-mode\n").expect("ci");
    let db = t.path().join("index.db");
    let run = |extra: &[&str]| {
        Command::new(common::bin())
            .args(["index", "add", "--database"])
            .arg(&db)
            .args(extra)
            .arg(ops.join("etcd"))
            .arg(&bad)
            .output()
            .expect("run")
    };
    let o = run(&[]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("sideways-mode"), "{err}");
    assert!(!db.exists(), "a refused add left {}", db.display());
    let o = run(&["--keep-going", "-o", "json"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(report["packages"], serde_json::json!(["etcd"]));
    let left = report["left_out"].as_array().expect("left_out");
    assert_eq!(left.len(), 1, "{report:#}");
    assert!(left[0]["file"].as_str().expect("file").ends_with("zz-bad"));
    assert_eq!(
        rows(&db, "SELECT DISTINCT package_name FROM channel_entry"),
        [s(&["etcd"])].into()
    );
}

/// Bundle directories given one by one (here interleaved, through
/// --bundles-file) are grouped by package from their annotations and read,
/// written and dropped a package at a time: the index is the one an add per
/// package gives. With --keep-going a bad bundle among them is reported and
/// the rest is added, whether its annotations name a package (a broken CSV
/// in etcd's group) or not (no metadata/, read with the ungrouped batch).
#[test]
fn bundle_directories_one_by_one_are_added_package_by_package() {
    let t = tempfile::tempdir().expect("tmp");
    let etcd = bundle_dirs("etcd");
    let clickhouse = bundle_dirs("clickhouse");
    let sep = t.path().join("separate.db");
    ok(add(&sep, "replaces", &etcd, &[]));
    ok(add(&sep, "replaces", &clickhouse, &[]));

    // A broken copy of etcd 0.9.4 (same annotations, CSV that does not
    // parse), and a folder with a CSV but no metadata/.
    let broken = t.path().join("broken-etcd");
    std::fs::create_dir_all(broken.join("manifests")).expect("mkdir");
    std::fs::create_dir_all(broken.join("metadata")).expect("mkdir");
    let src = common::corpus().join("operators/etcd/0.9.4");
    std::fs::copy(
        src.join("metadata/annotations.yaml"),
        broken.join("metadata/annotations.yaml"),
    )
    .expect("copy");
    std::fs::write(
        broken.join("manifests/csv.yaml"),
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: [unclosed\n",
    )
    .expect("write");
    let bare = t.path().join("no-metadata");
    std::fs::create_dir_all(bare.join("manifests")).expect("mkdir");
    std::fs::copy(
        src.join("manifests/etcdoperator.v0.9.4.clusterserviceversion.yaml"),
        bare.join("manifests/csv.yaml"),
    )
    .expect("copy");

    // Interleaved: the two packages alternate, the bad ones in between.
    let mut dirs: Vec<PathBuf> = Vec::new();
    for i in 0..etcd.len().max(clickhouse.len()) {
        dirs.extend(clickhouse.get(i).cloned());
        if i == 2 {
            dirs.push(broken.clone());
            dirs.push(bare.clone());
        }
        dirs.extend(
            etcd.len()
                .checked_sub(i + 1)
                .and_then(|j| etcd.get(j))
                .cloned(),
        );
    }
    let list = t.path().join("bundles.txt");
    let text: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    std::fs::write(&list, text.join("\n")).expect("list");

    let run = |db: &Path, extra: &[&str]| {
        Command::new(common::bin())
            .args(["index", "add", "--database"])
            .arg(db)
            .args(extra)
            .arg("--bundles-file")
            .arg(&list)
            .output()
            .expect("run")
    };
    // Without --keep-going the bad bundles refuse the add: nothing written.
    let refused = t.path().join("refused.db");
    let o = run(&refused, &[]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        !refused.exists(),
        "a refused add left {}",
        refused.display()
    );

    let db = t.path().join("one.db");
    let o = run(&db, &["--keep-going", "-o", "json"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        report["packages"],
        serde_json::json!(["clickhouse", "etcd"])
    );
    assert_eq!(
        report["added"].as_array().expect("added").len(),
        etcd.len() + clickhouse.len()
    );
    let left = report["left_out"].as_array().expect("left_out");
    let files: BTreeSet<&str> = left
        .iter()
        .map(|l| l["file"].as_str().expect("file"))
        .collect();
    assert_eq!(
        files,
        [
            broken.to_str().expect("utf-8"),
            bare.to_str().expect("utf-8")
        ]
        .into(),
        "{report:#}"
    );
    for q in [
        ENTRIES,
        "SELECT name, csv, bundle, bundlepath, version, skiprange, replaces, skips FROM operatorbundle",
        "SELECT * FROM package",
        "SELECT * FROM channel",
        "SELECT * FROM properties",
        "SELECT * FROM related_image",
        "SELECT * FROM api_provider",
        "SELECT * FROM olm_catalog_package",
    ] {
        assert_eq!(rows(&db, q), rows(&sep, q), "{q}");
    }
}
