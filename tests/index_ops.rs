//! `deprecatetruncate`, `olm.substitutesFor`, `prune-stranded`, `export`
//! and `--from-fbc` deprecations, on small generated bundles, against
//! operator-registry's rules (pkg/sqlite/load.go `DeprecateBundle`,
//! `addSubstitutesFor`, `rmStrandedBundles`; pkg/lib/registry
//! `DeprecateFromRegistry`; pkg/sqlite/deprecate.go `MaybeRemovePackages`).
use crate::common;

use common::rows;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes a bundle directory `root/<name>` and returns it.
#[allow(clippy::too_many_arguments)]
fn bundle(
    root: &Path,
    pkg: &str,
    name: &str,
    version: &str,
    channels: &str,
    default: Option<&str>,
    replaces: Option<&str>,
    extra_annotations: &[(&str, &str)],
) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("manifests")).expect("mkdir");
    std::fs::create_dir_all(dir.join("metadata")).expect("mkdir");
    let mut ann = String::new();
    for (k, v) in extra_annotations {
        ann.push_str(&format!("    {k}: '{v}'\n"));
    }
    let csv = format!(
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: {name}\n  annotations:\n    capabilities: Basic Install\n{ann}spec:\n  version: {version}\n  displayName: Demo\n{}  install:\n    strategy: deployment\n    spec:\n      deployments:\n      - name: op\n        spec:\n          selector: {{matchLabels: {{app: op}}}}\n          template:\n            metadata: {{labels: {{app: op}}}}\n            spec:\n              containers:\n              - name: op\n                image: example.invalid/op:{version}\n",
        replaces
            .map(|r| format!("  replaces: {r}\n"))
            .unwrap_or_default()
    );
    std::fs::write(dir.join("manifests/csv.yaml"), csv).expect("csv");
    let mut a = format!(
        "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: {pkg}\n  operators.operatorframework.io.bundle.channels.v1: {channels}\n"
    );
    if let Some(d) = default {
        a.push_str(&format!(
            "  operators.operatorframework.io.bundle.channel.default.v1: {d}\n"
        ));
    }
    std::fs::write(dir.join("metadata/annotations.yaml"), a).expect("ann");
    dir
}

use common::olm;

fn ok(o: std::process::Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn fails(o: std::process::Output) -> String {
    assert!(!o.status.success(), "expected a failure");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn set(items: &[&[&str]]) -> BTreeSet<Vec<String>> {
    items
        .iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect()
}

const ENTRIES: &str = "SELECT e.channel_name, e.operatorbundle_name, coalesce(r.operatorbundle_name, ''), e.depth FROM channel_entry e LEFT JOIN channel_entry r ON r.entry_id = e.replaces";

/// p: stable (default) 1.0.0 <- 1.1.0 <- 1.2.0 <- 1.3.0; channel old holds
/// 1.0.0 <- 1.1.0 too (1.1.0 heads it).
fn chain(root: &Path) -> Vec<PathBuf> {
    vec![
        bundle(
            root,
            "p",
            "p.v1.0.0",
            "1.0.0",
            "stable,old",
            Some("stable"),
            None,
            &[],
        ),
        bundle(
            root,
            "p",
            "p.v1.1.0",
            "1.1.0",
            "stable,old",
            Some("stable"),
            Some("p.v1.0.0"),
            &[],
        ),
        bundle(
            root,
            "p",
            "p.v1.2.0",
            "1.2.0",
            "stable",
            Some("stable"),
            Some("p.v1.1.0"),
            &[],
        ),
        bundle(
            root,
            "p",
            "p.v1.3.0",
            "1.3.0",
            "stable",
            Some("stable"),
            Some("p.v1.2.0"),
            &[],
        ),
    ]
}

fn build(db: &Path, dirs: &[PathBuf]) {
    let mut args = vec![
        "index".to_string(),
        "add".into(),
        "-d".into(),
        db.display().to_string(),
        "--bundle-image-prefix".into(),
        "quay.invalid/p".into(),
    ];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(olm(&a));
}

fn dump(db: &Path) -> Vec<BTreeSet<Vec<String>>> {
    [
        ENTRIES,
        "SELECT * FROM channel",
        "SELECT * FROM package",
        "SELECT name FROM operatorbundle",
        "SELECT * FROM properties",
        "SELECT * FROM deprecated",
    ]
    .iter()
    .map(|q| rows(db, q))
    .collect()
}

#[test]
fn deprecatetruncate_follows_opm_deprecate_bundle() {
    let t = tempfile::tempdir().expect("tmp");
    let dirs = chain(t.path());
    let db = t.path().join("index.db");
    build(&db, &dirs);
    let d = db.to_str().expect("utf-8");
    assert_eq!(
        rows(&db, ENTRIES),
        set(&[
            &["old", "p.v1.1.0", "p.v1.0.0", "0"],
            &["old", "p.v1.0.0", "", "1"],
            &["stable", "p.v1.3.0", "p.v1.2.0", "0"],
            &["stable", "p.v1.2.0", "p.v1.1.0", "1"],
            &["stable", "p.v1.1.0", "p.v1.0.0", "2"],
            &["stable", "p.v1.0.0", "", "3"],
        ])
    );

    // The default channel's head, or anything whose tail holds it, is refused
    // and nothing changes.
    let before = dump(&db);
    let e = fails(olm(&[
        "index",
        "deprecatetruncate",
        "-d",
        d,
        "--bundles",
        "quay.invalid/p:p.v1.3.0",
    ]));
    assert!(e.contains("head of its package's default channel"), "{e}");
    assert_eq!(dump(&db), before);
    let e = fails(olm(&[
        "index",
        "deprecatetruncate",
        "-d",
        d,
        "--bundles",
        "quay.invalid/p:nope",
    ]));
    assert!(e.contains("not in the index"), "{e}");
    assert_eq!(dump(&db), before);

    // Deprecate 1.2.0: below it, 1.1.0 and 1.0.0 lose their stable entries
    // but stay, as they are also in channel old; 1.2.0 keeps an edgeless
    // tombstone entry and gets olm.deprecated.
    ok(olm(&[
        "index",
        "deprecatetruncate",
        "-d",
        d,
        "--bundles",
        "quay.invalid/p:p.v1.2.0",
    ]));
    assert_eq!(
        rows(&db, ENTRIES),
        set(&[
            &["old", "p.v1.1.0", "p.v1.0.0", "0"],
            &["old", "p.v1.0.0", "", "1"],
            &["stable", "p.v1.3.0", "p.v1.2.0", "0"],
            &["stable", "p.v1.2.0", "", "1"],
        ])
    );
    assert_eq!(
        rows(&db, "SELECT name FROM operatorbundle"),
        set(&[&["p.v1.0.0"], &["p.v1.1.0"], &["p.v1.2.0"], &["p.v1.3.0"]])
    );
    assert_eq!(
        rows(&db, "SELECT operatorbundle_name, value, operatorbundle_version, operatorbundle_path FROM properties WHERE type = 'olm.deprecated'"),
        set(&[&["p.v1.2.0", "{}", "1.2.0", "quay.invalid/p:p.v1.2.0"]])
    );
    assert_eq!(rows(&db, "SELECT * FROM deprecated"), set(&[&["p.v1.2.0"]]));
    assert_eq!(rows(&db, "PRAGMA foreign_key_check"), BTreeSet::new());

    // Deprecate old's head 1.1.0 (by CSV name): its channel goes; 1.0.0,
    // in no channel but 1.1.0's, is removed.
    let out = ok(olm(&[
        "index",
        "deprecatetruncate",
        "-d",
        d,
        "--bundles",
        "p.v1.1.0",
    ]));
    assert!(out.contains("removed 1 below them: p.v1.0.0"), "{out}");
    assert_eq!(
        rows(&db, ENTRIES),
        set(&[
            &["stable", "p.v1.3.0", "p.v1.2.0", "0"],
            &["stable", "p.v1.2.0", "", "1"]
        ])
    );
    assert_eq!(rows(&db, "SELECT name FROM channel"), set(&[&["stable"]]));
    // 1.1.0 is in no channel now, but deprecated bundles survive
    // prune-stranded (opm keeps them so their deprecation is remembered).
    ok(olm(&["index", "prune-stranded", "-d", d]));
    assert_eq!(
        rows(&db, "SELECT name FROM operatorbundle"),
        set(&[&["p.v1.1.0"], &["p.v1.2.0"], &["p.v1.3.0"]])
    );

    // A later add walks the chain and stops at the deprecated bundle.
    let next = bundle(
        t.path(),
        "p",
        "p.v1.4.0",
        "1.4.0",
        "stable",
        Some("stable"),
        Some("p.v1.3.0"),
        &[],
    );
    build(&db, &[next]);
    assert_eq!(
        rows(&db, ENTRIES),
        set(&[
            &["stable", "p.v1.4.0", "p.v1.3.0", "0"],
            &["stable", "p.v1.3.0", "p.v1.2.0", "1"],
            &["stable", "p.v1.2.0", "", "2"],
        ])
    );
    // Rendered, 1.2.0 carries olm.deprecated.
    let r = olm(&["render", d]);
    let text = String::from_utf8_lossy(&r.stdout).into_owned();
    assert!(text.contains("\"olm.deprecated\""), "{text}");
}

#[test]
fn deprecatetruncate_allow_package_removal_needs_every_channel_head() {
    let t = tempfile::tempdir().expect("tmp");
    let mut dirs = chain(t.path());
    dirs.push(bundle(
        t.path(),
        "q",
        "q.v1.0.0",
        "1.0.0",
        "stable",
        Some("stable"),
        None,
        &[],
    ));
    let db = t.path().join("index.db");
    build(&db, &dirs);
    let d = db.to_str().expect("utf-8");
    let before = dump(&db);
    let e = fails(olm(&[
        "index",
        "deprecatetruncate",
        "-d",
        d,
        "--allow-package-removal",
        "--bundles",
        "quay.invalid/p:p.v1.3.0",
    ]));
    assert!(
        e.contains("also deprecate p.v1.1.0, head of channel old"),
        "{e}"
    );
    assert_eq!(dump(&db), before);
    let out = ok(olm(&[
        "index",
        "deprecatetruncate",
        "-d",
        d,
        "--allow-package-removal",
        "--bundles",
        "quay.invalid/p:p.v1.3.0,quay.invalid/p:p.v1.1.0",
    ]));
    assert!(out.contains("removed package(s): p"), "{out}");
    assert_eq!(rows(&db, "SELECT name FROM package"), set(&[&["q"]]));
    assert_eq!(
        rows(&db, "SELECT name FROM operatorbundle"),
        set(&[&["q.v1.0.0"]])
    );
    assert_eq!(rows(&db, "SELECT * FROM deprecated"), BTreeSet::new());
}

#[test]
fn substitutes_for_needs_enable_alpha_and_rewires_like_opm() {
    let t = tempfile::tempdir().expect("tmp");
    let r = t.path();
    let dirs = [
        bundle(r, "s", "s.v1", "1.0.0", "stable", Some("stable"), None, &[]),
        bundle(
            r,
            "s",
            "s.v2",
            "2.0.0",
            "stable",
            Some("stable"),
            Some("s.v1"),
            &[],
        ),
        // A rebuild of 2.0.0 that takes its place.
        bundle(
            r,
            "s",
            "s.v2-fix",
            "2.0.0+1",
            "stable",
            Some("stable"),
            Some("s.v1"),
            &[("olm.substitutesFor", "s.v2")],
        ),
        // Written against 2.0.0; opm points it at the substitute.
        bundle(
            r,
            "s",
            "s.v3",
            "3.0.0",
            "stable",
            Some("stable"),
            Some("s.v2"),
            &[],
        ),
    ];
    let db = t.path().join("index.db");
    let d = db.to_str().expect("utf-8");
    let mut args = vec!["index", "add", "-d", d];
    let paths: Vec<String> = dirs.iter().map(|p| p.display().to_string()).collect();
    args.extend(paths.iter().map(String::as_str));
    let e = fails(olm(&args));
    assert!(e.contains("--enable-alpha"), "{e}");
    assert!(!db.exists());
    args.push("--enable-alpha");
    ok(olm(&args));
    assert_eq!(
        rows(&db, "SELECT name, coalesce(replaces,''), coalesce(skips,''), coalesce(substitutesfor,'') FROM operatorbundle"),
        set(&[
            &["s.v1", "", "", ""],
            &["s.v2", "s.v1", "", ""],
            &["s.v2-fix", "s.v1", "s.v2", "s.v2"],
            &["s.v3", "s.v2-fix", "", ""],
        ])
    );
    assert_eq!(
        rows(&db, ENTRIES),
        set(&[
            &["stable", "s.v3", "s.v2-fix", "0"],
            &["stable", "s.v2", "", "2"],
            &["stable", "s.v2-fix", "s.v2", "2"],
            &["stable", "s.v2-fix", "s.v1", "1"],
            &["stable", "s.v1", "", "3"],
        ])
    );
}

#[test]
fn from_fbc_keeps_bundle_deprecations_and_warns_of_the_rest() {
    let t = tempfile::tempdir().expect("tmp");
    let fbc = t.path().join("cat");
    std::fs::create_dir_all(&fbc).expect("mkdir");
    let bundle = |v: &str, extra: &str| {
        format!("---\nschema: olm.bundle\npackage: d\nname: d.v{v}\nimage: quay.invalid/d:{v}\nproperties:\n- type: olm.package\n  value: {{packageName: d, version: {v}}}\n{extra}")
    };
    let yaml = format!(
        "---\nschema: olm.package\nname: d\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: d\nname: stable\nentries:\n- name: d.v0.9.0\n- name: d.v1.0.0\n  replaces: d.v0.9.0\n- name: d.v1.1.0\n  replaces: d.v1.0.0\n{}{}{}---\nschema: olm.deprecations\npackage: d\nentries:\n- reference: {{schema: olm.bundle, name: d.v1.0.0}}\n  message: use 1.1.0\n- reference: {{schema: olm.bundle, name: d.v1.1.0}}\n  message: head\n- reference: {{schema: olm.bundle, name: d.v9.0.0}}\n  message: missing\n- reference: {{schema: olm.package}}\n  message: package gone\n- reference: {{schema: olm.channel, name: stable}}\n  message: channel gone\n---\nschema: olm.deprecations\npackage: other\nentries:\n- reference: {{schema: olm.bundle, name: o.v1}}\n  message: elsewhere\n",
        // olm.deprecated: what rendering a truncated index gives.
        bundle("0.9.0", "- type: olm.deprecated\n  value: {}\n"),
        bundle("1.0.0", ""),
        bundle("1.1.0", ""),
    );
    std::fs::write(fbc.join("catalog.yaml"), yaml).expect("write");
    let db = t.path().join("index.db");
    let d = db.to_str().expect("utf-8");
    let out = ok(olm(&[
        "index",
        "add",
        "-d",
        d,
        "--from-fbc",
        fbc.to_str().expect("utf-8"),
    ]));
    for w in [
        "warning: package d: olm.deprecations: 1 bundle deprecation kept as `deprecated` rows without its message",
        "warning: package d: olm.deprecations: bundle d.v1.1.0 heads a channel, its deprecation not imported",
        "warning: package d: olm.deprecations: bundle d.v9.0.0 is not in the package",
        "warning: package d: olm.deprecations: the package's deprecation (\"package gone\") not imported",
        "warning: package d: olm.deprecations: deprecation of channel stable (\"channel gone\") not imported",
        "warning: package other: olm.deprecations of 1 bundle not imported: the catalog has no such package",
    ] {
        assert!(out.contains(w), "missing {w:?} in {out}");
    }
    assert_eq!(
        rows(&db, ENTRIES),
        set(&[
            &["stable", "d.v1.1.0", "d.v1.0.0", "0"],
            &["stable", "d.v1.0.0", "d.v0.9.0", "1"],
            &["stable", "d.v0.9.0", "", "2"]
        ])
    );
    assert_eq!(
        rows(&db, "SELECT * FROM deprecated"),
        set(&[&["d.v0.9.0"], &["d.v1.0.0"]])
    );
    assert_eq!(
        rows(
            &db,
            "SELECT operatorbundle_name, value FROM properties WHERE type = 'olm.deprecated'"
        ),
        set(&[&["d.v0.9.0", "{}"], &["d.v1.0.0", "{}"]])
    );
}

#[test]
fn export_of_cleared_bundles_names_the_bundle_and_the_fix() {
    let t = tempfile::tempdir().expect("tmp");
    let r = t.path();
    let dirs = [
        bundle(
            r,
            "e",
            "e.v1.0.0",
            "1.0.0",
            "stable",
            Some("stable"),
            None,
            &[],
        ),
        bundle(
            r,
            "e",
            "e.v1.1.0",
            "1.1.0",
            "stable",
            Some("stable"),
            None,
            &[],
        ),
    ];
    let d_keep = r.join("keep.db");
    let d_clear = r.join("clear.db");
    // Loopback port 1: nothing listens, so the pull fails at once.
    for (db, extra) in [(&d_keep, Some("--keep-content")), (&d_clear, None)] {
        let mut args = vec![
            "index".to_string(),
            "add".into(),
            "-d".into(),
            db.display().to_string(),
            "--mode".into(),
            "semver".into(),
            "--bundle-image-prefix".into(),
            "127.0.0.1:1/none/e".into(),
        ];
        args.extend(extra.map(String::from));
        args.extend(dirs.iter().map(|p| p.display().to_string()));
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(olm(&a));
    }
    let out = r.join("out");
    let o = out.to_str().expect("utf-8");
    ok(olm(&[
        "index",
        "export",
        "-d",
        d_keep.to_str().expect("utf-8"),
        "--package",
        "e",
        "--to",
        o,
    ]));
    assert!(out.join("e/package.yaml").is_file());
    assert!(out.join("e/1.0.0/manifests").is_dir());
    assert!(out.join("e/1.1.0/metadata/annotations.yaml").is_file());
    let e = fails(olm(&[
        "index",
        "export",
        "-d",
        d_clear.to_str().expect("utf-8"),
        "--package",
        "e",
        "--to",
        r.join("out2").to_str().expect("utf-8"),
    ]));
    assert!(
        e.contains("bundle e.v1.0.0 has no manifests in the index")
            && e.contains("127.0.0.1:1/none/e:e.v1.0.0")
            && e.contains("--keep-content"),
        "{e}"
    );
}

/// p (the chain above) and q: stable 2.0.0 <- 2.1.0, with images.
fn two_packages(r: &Path) -> (PathBuf, Vec<PathBuf>) {
    let db = r.join("two.db");
    let mut dirs = chain(r);
    dirs.push(bundle(
        r,
        "q",
        "q.v2.0.0",
        "2.0.0",
        "stable",
        Some("stable"),
        None,
        &[],
    ));
    dirs.push(bundle(
        r,
        "q",
        "q.v2.1.0",
        "2.1.0",
        "stable",
        Some("stable"),
        Some("q.v2.0.0"),
        &[],
    ));
    build(&db, &dirs);
    (db, dirs)
}

fn rows_of(db: &Path, table: &str) -> BTreeSet<Vec<String>> {
    rows(db, &format!("SELECT * FROM {table}"))
}

/// Every table, every column.
fn everything(db: &Path) -> Vec<BTreeSet<Vec<String>>> {
    [
        "operatorbundle",
        "package",
        "channel",
        "channel_entry",
        "api",
        "api_provider",
        "api_requirer",
        "related_image",
        "properties",
        "dependencies",
        "deprecated",
    ]
    .iter()
    .map(|t| rows_of(db, t))
    .collect()
}

#[test]
fn rm_packages_removes_the_package_and_nothing_else() {
    let t = tempfile::tempdir().expect("tmp");
    let (db, _) = two_packages(t.path());
    let d = db.to_str().expect("utf-8");
    let before = everything(&db);
    let e = fails(olm(&["index", "rm", "-d", d, "--packages", "q,nope"]));
    assert!(
        e.contains("package nope is not in the index") && e.contains("packages: p, q"),
        "{e}"
    );
    assert_eq!(everything(&db), before, "a refused rm changes nothing");
    let e = ok(olm(&["index", "rm", "-d", d, "--packages", "q"]));
    assert!(e.contains("removed package(s): q"), "{e}");
    assert_eq!(rows(&db, "SELECT name FROM package"), set(&[&["p"]]));
    assert_eq!(
        rows(&db, "SELECT name FROM operatorbundle"),
        set(&[&["p.v1.0.0"], &["p.v1.1.0"], &["p.v1.2.0"], &["p.v1.3.0"]])
    );
    for t in ["properties", "related_image", "channel_entry", "channel"] {
        let col = if t == "channel" || t == "channel_entry" {
            "package_name"
        } else {
            "operatorbundle_name"
        };
        assert!(
            rows(&db, &format!("SELECT * FROM {t} WHERE {col} LIKE 'q%'")).is_empty(),
            "{t} keeps rows of q"
        );
    }
}

#[test]
fn prune_keeps_only_the_given_packages() {
    let t = tempfile::tempdir().expect("tmp");
    let (db, _) = two_packages(t.path());
    let d = db.to_str().expect("utf-8");
    let before = everything(&db);
    let e = fails(olm(&["index", "prune", "-d", d, "--keep", "nope"]));
    assert!(
        e.contains("package nope to keep is not in the index; nothing was changed"),
        "{e}"
    );
    assert_eq!(everything(&db), before);
    let e = ok(olm(&["index", "prune", "-d", d, "--keep", "q"]));
    assert!(e.contains("pruned 1 package(s): p"), "{e}");
    assert_eq!(rows(&db, "SELECT name FROM package"), set(&[&["q"]]));
    assert_eq!(
        rows(&db, "SELECT name FROM operatorbundle"),
        set(&[&["q.v2.0.0"], &["q.v2.1.0"]])
    );
    // Keeping everything removes nothing.
    let before = everything(&db);
    ok(olm(&["index", "prune", "-d", d, "--keep", "q"]));
    assert_eq!(everything(&db), before);
}

#[test]
fn list_packages_channels_and_bundles_as_table_and_json() {
    let t = tempfile::tempdir().expect("tmp");
    let (db, _) = two_packages(t.path());
    let d = db.to_str().expect("utf-8");
    let out = |what: &str, fmt: &str| {
        let o = olm(&["index", "list", what, "-d", d, "-o", fmt]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let table = out("packages", "table");
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| {
            l.split("  ")
                .filter(|c| !c.is_empty())
                .map(str::trim)
                .collect()
        })
        .collect();
    assert_eq!(
        lines,
        vec![
            vec![
                "PACKAGE",
                "DEFAULT CHANNEL",
                "CHANNELS",
                "BUNDLES",
                "ADD MODE"
            ],
            vec!["p", "stable", "2", "4", "replaces"],
            vec!["q", "stable", "1", "2", "replaces"],
        ]
    );
    let json: serde_json::Value = serde_json::from_str(&out("packages", "json")).expect("json");
    assert_eq!(
        json,
        serde_json::json!([
            {"package": "p", "default_channel": "stable", "channels": 2, "bundles": 4, "add_mode": "replaces"},
            {"package": "q", "default_channel": "stable", "channels": 1, "bundles": 2, "add_mode": "replaces"},
        ])
    );
    let json: serde_json::Value = serde_json::from_str(&out("channels", "json")).expect("json");
    assert_eq!(
        json,
        serde_json::json!([
            {"package": "p", "channel": "old", "head": "p.v1.1.0", "default": false},
            {"package": "p", "channel": "stable", "head": "p.v1.3.0", "default": true},
            {"package": "q", "channel": "stable", "head": "q.v2.1.0", "default": true},
        ])
    );
    let table = out("channels", "table");
    assert!(
        table
            .lines()
            .next()
            .is_some_and(|h| h.starts_with("PACKAGE  CHANNEL  HEAD"))
            && table
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>()
                    == ["p", "stable", "p.v1.3.0", "yes"]),
        "{table}"
    );
    let json: serde_json::Value = serde_json::from_str(&out("bundles", "json")).expect("json");
    let rows = json.as_array().expect("array");
    assert_eq!(rows.len(), 8, "{json}");
    assert!(
        rows.contains(&serde_json::json!({
            "package": "p", "channel": "stable", "name": "p.v1.2.0", "version": "1.2.0",
            "image": "quay.invalid/p:p.v1.2.0", "replaces": "p.v1.1.0"
        })),
        "{json}"
    );
    let table = out("bundles", "table");
    assert_eq!(table.lines().count(), 9, "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == [
                    "q",
                    "stable",
                    "q.v2.1.0",
                    "2.1.0",
                    "q.v2.0.0",
                    "quay.invalid/p:q.v2.1.0"
                ]),
        "{table}"
    );
}

#[test]
fn bundles_flags_and_bundles_file_add_the_same_as_arguments() {
    let t = tempfile::tempdir().expect("tmp");
    let r = t.path();
    let dirs = chain(r);
    let by_args = r.join("args.db");
    build(&by_args, &dirs);
    let by_flags = r.join("flags.db");
    let mut a = vec![
        "index".to_string(),
        "add".into(),
        "-d".into(),
        by_flags.display().to_string(),
        "--bundle-image-prefix".into(),
        "quay.invalid/p".into(),
    ];
    for d in &dirs {
        a.push("--bundles".into());
        a.push(d.display().to_string());
    }
    ok(olm(&a.iter().map(String::as_str).collect::<Vec<_>>()));
    let by_file = r.join("file.db");
    let list = r.join("bundles.txt");
    let mut text = String::from("# bundles of p\n\n");
    for d in &dirs[..2] {
        text.push_str(&format!("  {}  \n\n", d.display()));
    }
    std::fs::write(&list, text).expect("list");
    ok(olm(&[
        "index",
        "add",
        "-d",
        by_file.to_str().expect("utf-8"),
        "--bundle-image-prefix",
        "quay.invalid/p",
        "--bundles-file",
        list.to_str().expect("utf-8"),
        "--bundles",
        dirs[2].to_str().expect("utf-8"),
        dirs[3].to_str().expect("utf-8"),
    ]));
    assert_eq!(everything(&by_flags), everything(&by_args));
    assert_eq!(everything(&by_file), everything(&by_args));
    let missing = r.join("missing.txt");
    let e = fails(olm(&[
        "index",
        "add",
        "-d",
        r.join("x.db").to_str().expect("utf-8"),
        "--bundles-file",
        missing.to_str().expect("utf-8"),
    ]));
    assert!(e.contains("missing.txt"), "{e}");
    assert!(!r.join("x.db").exists());
}

#[test]
fn refused_edges_name_the_problem_and_change_nothing() {
    let t = tempfile::tempdir().expect("tmp");
    let r = t.path();
    let (db, _) = two_packages(r);
    let d = db.to_str().expect("utf-8");
    let before = everything(&db);
    let add = |dir: &Path| {
        fails(olm(&[
            "index",
            "add",
            "-d",
            d,
            "--bundle-image-prefix",
            "quay.invalid/p",
            dir.to_str().expect("utf-8"),
        ]))
    };
    // replaces names a bundle the index does not have.
    let gone = bundle(
        &r.join("x"),
        "p",
        "p.v2.0.0",
        "2.0.0",
        "stable",
        Some("stable"),
        Some("p.v1.9.0"),
        &[],
    );
    let e = add(&gone);
    assert!(
        e.contains("p.v2.0.0 replaces p.v1.9.0, which is not in the index"),
        "{e}"
    );
    assert_eq!(everything(&db), before);
    // An edge into another package.
    let cross = bundle(
        &r.join("y"),
        "q",
        "q.v3.0.0",
        "3.0.0",
        "stable",
        Some("stable"),
        Some("p.v1.3.0"),
        &[],
    );
    let e = add(&cross);
    assert!(
        e.contains("bundle p.v1.3.0 belongs to package p on index, cannot be added as an edge for package q"),
        "{e}"
    );
    assert_eq!(everything(&db), before);
    // A replaces cycle among new bundles: c.v1 <- c.v2 <- c.v1.
    let c1 = bundle(
        &r.join("z"),
        "c",
        "c.v1.0.0",
        "1.0.0",
        "stable",
        Some("stable"),
        Some("c.v2.0.0"),
        &[],
    );
    let c2 = bundle(
        &r.join("z"),
        "c",
        "c.v2.0.0",
        "2.0.0",
        "stable",
        Some("stable"),
        Some("c.v1.0.0"),
        &[],
    );
    let e = fails(olm(&[
        "index",
        "add",
        "-d",
        d,
        c1.to_str().expect("utf-8"),
        c2.to_str().expect("utf-8"),
    ]));
    assert!(
        e.contains("package c, channel stable: replaces cycle") && e.contains("Cycle detected"),
        "{e}"
    );
    assert_eq!(everything(&db), before);
}

#[test]
fn export_then_add_gives_the_same_rows() {
    let t = tempfile::tempdir().expect("tmp");
    let r = t.path();
    let corpus = common::corpus().join("operators");
    let db = r.join("a.db");
    for pkg in ["node-healthcheck-operator", "pelorus-operator"] {
        let mut dirs: Vec<String> = std::fs::read_dir(corpus.join(pkg))
            .expect("pkg")
            .map(|e| e.expect("e").path())
            .filter(|p| p.join("manifests").is_dir())
            .map(|p| p.display().to_string())
            .collect();
        dirs.sort();
        let mut a = vec!["index", "add", "-d", db.to_str().expect("utf-8")];
        a.extend(["--keep-content", "--permissive"]);
        a.extend(dirs.iter().map(String::as_str));
        ok(olm(&a));
    }
    let out = r.join("export");
    // An existing, non-empty --to is refused before anything is written.
    std::fs::create_dir_all(out.join("keep")).expect("mkdir");
    let e = fails(olm(&[
        "index",
        "export",
        "-d",
        db.to_str().expect("utf-8"),
        "--to",
        out.to_str().expect("utf-8"),
    ]));
    assert!(e.contains("output directory is not empty"), "{e}");
    std::fs::remove_dir(out.join("keep")).expect("rm");
    ok(olm(&[
        "index",
        "export",
        "-d",
        db.to_str().expect("utf-8"),
        "--to",
        out.to_str().expect("utf-8"),
    ]));
    let leftovers: Vec<_> = std::fs::read_dir(r)
        .expect("dir")
        .map(|e| e.expect("e").file_name())
        .filter(|n| n.to_string_lossy().starts_with(".olm-catalog-export-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let deps = std::fs::read_to_string(
        out.join("node-healthcheck-operator/0.8.0/metadata/dependencies.yaml"),
    )
    .expect("dependencies.yaml is written back");
    assert!(
        deps.contains("olm.gvk") && deps.contains("self-node-remediation.medik8s.io"),
        "{deps}"
    );
    let db2 = r.join("b.db");
    for pkg in ["node-healthcheck-operator", "pelorus-operator"] {
        let mut dirs: Vec<String> = std::fs::read_dir(out.join(pkg))
            .expect("exported package")
            .map(|e| e.expect("e").path())
            .filter(|p| p.join("manifests").is_dir())
            .map(|p| p.display().to_string())
            .collect();
        dirs.sort();
        let mut a = vec!["index", "add", "-d", db2.to_str().expect("utf-8")];
        a.extend(["--keep-content", "--permissive"]);
        a.extend(dirs.iter().map(String::as_str));
        ok(olm(&a));
    }
    // Bundles left in no channel (--permissive) are not exported: the
    // package-manifest layout, like FBC, has no place for them.
    let in_channels = "operatorbundle_name IN (SELECT operatorbundle_name FROM channel_entry)";
    for q in [
        format!("SELECT type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path FROM properties WHERE {in_channels}"),
        format!("SELECT type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path FROM dependencies WHERE {in_channels}"),
        "SELECT name, default_channel FROM package".into(),
        "SELECT name, package_name, head_operatorbundle_name FROM channel".into(),
        ENTRIES.into(),
        format!("SELECT * FROM api_provider WHERE {in_channels}"),
        format!("SELECT * FROM api_requirer WHERE {in_channels}"),
        format!("SELECT * FROM related_image WHERE {in_channels}"),
        "SELECT name, version, replaces, skips, skiprange, bundlepath, csv FROM operatorbundle WHERE name IN (SELECT operatorbundle_name FROM channel_entry)".into(),
    ] {
        assert_eq!(rows(&db, &q), rows(&db2, &q), "{q}");
    }
    // Dependencies are a list: the same number of rows, not just the same set.
    let count = format!("SELECT count(*) FROM dependencies WHERE {in_channels}");
    assert_eq!(rows(&db, &count), rows(&db2, &count));
}

/// A bundle the replaces walk strands stays in the index with no channel;
/// `index list bundles` shows it (channel empty) instead of hiding it.
#[test]
fn list_bundles_shows_bundles_in_no_channel() {
    let t = tempfile::tempdir().expect("tmp");
    let v1 = bundle(
        t.path(),
        "lone",
        "lone.v1.0.0",
        "1.0.0",
        "stable",
        None,
        None,
        &[],
    );
    // 2.0.0 replaces nothing: opm's walk from the head never reaches 1.0.0.
    let v2 = bundle(
        t.path(),
        "lone",
        "lone.v2.0.0",
        "2.0.0",
        "stable",
        None,
        None,
        &[],
    );
    let db = t.path().join("index.db");
    let db_s = db.to_str().expect("utf-8");
    ok(olm(&[
        "index",
        "add",
        "-d",
        db_s,
        v1.to_str().expect("utf-8"),
    ]));
    // opm refuses an add that strands a bundle unless --permissive.
    let v2_s = v2.to_str().expect("utf-8");
    ok(olm(&["index", "add", "-d", db_s, v2_s, "--permissive"]));
    let out = olm(&["index", "list", "bundles", "-d", db_s, "-o", "json"]);
    ok(out.clone());
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let got: Vec<(String, String, String)> = rows
        .as_array()
        .expect("array")
        .iter()
        .map(|r| {
            let f = |k: &str| r[k].as_str().unwrap_or("?").to_string();
            (f("channel"), f("name"), f("version"))
        })
        .collect();
    assert_eq!(
        got,
        [
            ("stable".into(), "lone.v2.0.0".into(), "2.0.0".into()),
            (String::new(), "lone.v1.0.0".into(), "1.0.0".into()),
        ]
    );
}

/// opm's loader refuses a bundle whose `olm.properties`
/// annotation does not decode; so does `index add`, naming file and line,
/// and the index is left as it was.
#[test]
fn a_properties_annotation_that_does_not_decode_is_refused() {
    let t = tempfile::tempdir().expect("tmp");
    let good = bundle(
        t.path(),
        "props",
        "props.v1.0.0",
        "1.0.0",
        "stable",
        None,
        None,
        &[],
    );
    let bad = bundle(
        t.path(),
        "props",
        "props.v1.1.0",
        "1.1.0",
        "stable",
        None,
        Some("props.v1.0.0"),
        &[(
            "olm.properties",
            r#"[{"type": "olm.gvk", "value": "not an object"}]"#,
        )],
    );
    let db = t.path().join("index.db");
    let db_s = db.to_str().expect("utf-8");
    ok(olm(&[
        "index",
        "add",
        "-d",
        db_s,
        good.to_str().expect("utf-8"),
    ]));
    let before = std::fs::read(&db).expect("read");
    let e = fails(olm(&[
        "index",
        "add",
        "-d",
        db_s,
        bad.to_str().expect("utf-8"),
    ]));
    assert!(
        e.contains("props.v1.1.0/manifests/csv.yaml:7:")
            && e.contains("olm.properties] does not decode: [0].value: expected an object"),
        "{e}"
    );
    assert_eq!(std::fs::read(&db).expect("read"), before);
}

/// `sqlite_master` as (type, name, table, sql) in creation order, without
/// our own bookkeeping table.
fn master(db: &Path) -> Vec<Vec<String>> {
    common::table_text(db, "sqlite_master", &[])
        .into_iter()
        .map(|r| vec![r[0].clone(), r[1].clone(), r[2].clone(), r[4].clone()])
        .filter(|r| r[2] != "olm_catalog_package")
        .collect()
}

/// A new database has opm's schema at migration 013 exactly as the real
/// opm's `index.db` has it (same statements in the same order, triggers
/// included), version 13; our add-mode bookkeeping is in a table of its own.
#[test]
fn new_databases_have_opm_schema_exactly() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dirs = chain(tmp.path());
    let db = tmp.path().join("index.db");
    let dbs = db.to_str().expect("utf-8");
    let mut args = vec!["index", "add", "--database", dbs];
    let paths: Vec<&str> = dirs.iter().map(|p| p.to_str().expect("utf-8")).collect();
    args.extend(&paths);
    ok(olm(&args));
    let golden = common::golden().join("sqlite/etcd/index.db");
    assert_eq!(master(&db), master(&golden));
    assert_eq!(
        rows(&db, "SELECT version FROM schema_migrations"),
        set(&[&["13"]])
    );
    assert_eq!(
        rows(
            &db,
            "SELECT package_name, add_mode FROM olm_catalog_package"
        ),
        set(&[&["p", "replaces"]])
    );
    let o = olm(&["index", "list", "packages", "-o", "json", "--database", dbs]);
    let listed = String::from_utf8_lossy(&o.stdout);
    assert!(listed.contains("\"add_mode\": \"replaces\""), "{listed}");
}

/// The same bundles give the same database bytes, whatever the time (the
/// migration timestamp is fixed: SOURCE_DATE_EPOCH or the epoch), and so
/// the same index image digest: a new database and an add on top of it, run
/// twice a second apart (opm's timestamp had one-second resolution).
#[test]
fn same_bundles_give_the_same_database_bytes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dirs = chain(tmp.path());
    let paths: Vec<&str> = dirs.iter().map(|p| p.to_str().expect("utf-8")).collect();
    let extra = bundle(
        tmp.path(),
        "q",
        "q.v1.0.0",
        "1.0.0",
        "stable",
        Some("stable"),
        None,
        &[],
    );
    let mut out = Vec::new();
    for (name, epoch) in [("a.db", None), ("b.db", None), ("c.db", Some("1700000000"))] {
        if !out.is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(1100));
        }
        let db = tmp.path().join(name);
        for add in [&paths[..], &[extra.to_str().expect("utf-8")][..]] {
            let mut cmd = Command::new(common::bin());
            cmd.args(["index", "add", "--database", db.to_str().expect("utf-8")])
                .args(add);
            match epoch {
                Some(e) => cmd.env("SOURCE_DATE_EPOCH", e),
                None => cmd.env_remove("SOURCE_DATE_EPOCH"),
            };
            ok(cmd.output().expect("run"));
        }
        out.push(std::fs::read(&db).expect("read"));
    }
    assert!(out[0] == out[1], "two builds of the same bundles differ");
    assert!(out[0] != out[2], "SOURCE_DATE_EPOCH is recorded");
    // And so the same index image.
    let digest = |name: &str| -> String {
        let layout = format!(
            "oci:{}:v1",
            tmp.path().join(format!("{name}.oci")).display()
        );
        let db = tmp.path().join(name);
        let o = olm(&[
            "index",
            "build",
            "--database",
            db.to_str().expect("utf-8"),
            "--base",
            "scratch",
            "--tag",
            &layout,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        out.rsplit('@').next().expect("digest").trim().to_string()
    };
    let (a, b) = (digest("a.db"), digest("b.db"));
    assert!(a.starts_with("sha256:"), "{a}");
    assert_eq!(a, b, "the same index image digest");
    assert_eq!(
        rows(
            &tmp.path().join("c.db"),
            "SELECT version, timestamp FROM schema_migrations"
        ),
        set(&[&["13", "2023-11-14 22:13:20"]])
    );
}

/// The lookup indexes an add creates inside its transaction are gone once
/// it commits, and when it fails: the database keeps opm's indexes only,
/// whether it was new or opm built it.
#[test]
fn add_leaves_no_index_of_its_own() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let golden = common::golden().join("sqlite/etcd/index.db");
    // Our bookkeeping table (and its primary key) is not opm's.
    let indexes = |db: &Path| {
        rows(
            db,
            "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name != 'olm_catalog_package'",
        )
    };
    let want = indexes(&golden);
    assert!(want.iter().any(|r| r[0] == "pk"), "{want:?}");
    let dirs = chain(tmp.path());
    let paths: Vec<&str> = dirs.iter().map(|p| p.to_str().expect("utf-8")).collect();
    let db = tmp.path().join("new.db");
    let dbs = db.to_str().expect("utf-8");
    let mut args = vec!["index", "add", "--database", dbs];
    args.extend(&paths[..1]);
    ok(olm(&args));
    assert_eq!(indexes(&db), want);
    // An add into an existing database, then one that fails (the bundle is
    // already there) and rolls back.
    let mut args = vec!["index", "add", "--database", dbs];
    args.extend(&paths[1..]);
    ok(olm(&args));
    assert_eq!(indexes(&db), want);
    let mut args = vec!["index", "add", "--database", dbs];
    args.extend(&paths[..1]);
    fails(olm(&args));
    assert_eq!(indexes(&db), want);
    let opm = tmp.path().join("opm.db");
    std::fs::copy(&golden, &opm).expect("copy");
    let opms = opm.to_str().expect("utf-8");
    let mut args = vec!["index", "add", "--database", opms];
    args.extend(&paths);
    ok(olm(&args));
    assert_eq!(indexes(&opm), want);
    // The library's add (no CLI, no ops) leaves none either.
    let lib = tmp.path().join("lib.db");
    let mut idx = olm_catalog::index::Index::create_new(&lib).expect("create");
    let records = dirs
        .iter()
        .map(|d| {
            let b = olm_catalog::bundle::Bundle::load_dir(d).expect("load");
            let r = olm_catalog::index::record::BundleRecord::from_bundle(&b, "").expect("record");
            (d.display().to_string(), r)
        })
        .collect();
    idx.add_bundles(records, &olm_catalog::index::AddOptions::default())
        .expect("add");
    idx.finish().expect("finish");
    assert_eq!(indexes(&lib), want);
}

/// opm's own `index.db` (etcd, built by opm v1.26.5) is extended and cut
/// down in place: add of another package, rm of etcd; the schema stays
/// opm's (version 13, triggers, no column of ours), and opm's triggers do
/// not take other bundles' API rows with them.
#[test]
fn add_and_rm_on_an_opm_built_index_keep_opm_schema() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let golden = common::golden().join("sqlite/etcd/index.db");
    let db = tmp.path().join("index.db");
    std::fs::copy(&golden, &db).expect("copy");
    let dbs = db.to_str().expect("utf-8");
    let dirs = chain(tmp.path());
    let mut args = vec!["index", "add", "--database", dbs];
    let paths: Vec<&str> = dirs.iter().map(|p| p.to_str().expect("utf-8")).collect();
    args.extend(&paths);
    ok(olm(&args));
    assert_eq!(master(&db), master(&golden));
    assert_eq!(
        rows(&db, "SELECT version FROM schema_migrations"),
        set(&[&["13"]])
    );
    assert_eq!(
        rows(
            &db,
            "SELECT count(*) FROM operatorbundle WHERE name LIKE 'etcdoperator%'"
        ),
        set(&[&["6"]])
    );
    // Removing one etcd bundle's rows must not cascade through opm's
    // triggers into the others' api_provider rows.
    ok(olm(&["index", "rm", "--database", dbs, "--packages", "p"]));
    assert_eq!(master(&db), master(&golden));
    assert_eq!(
        common::table_text(&db, "api_provider", &[]).len(),
        common::table_text(&golden, "api_provider", &[]).len()
    );
    let o = olm(&["render", dbs, "-o", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    common::assert_render_matches(
        &String::from_utf8_lossy(&o.stdout),
        &common::golden().join("sqlite/etcd/render.json"),
        &[],
    );
    ok(olm(&[
        "index",
        "rm",
        "--database",
        dbs,
        "--packages",
        "etcd",
    ]));
    assert_eq!(
        rows(&db, "SELECT count(*) FROM operatorbundle"),
        set(&[&["0"]])
    );
    assert_eq!(master(&db), master(&golden));
}

/// Databases of earlier olm-catalog releases (version 14: a package.add_mode
/// column, no triggers) are read as they are and moved to opm's layout by
/// the next write, keeping the add modes; an older opm version (12) gets
/// opm's migration 013 in place.
#[test]
fn legacy_and_older_databases_are_migrated_on_write() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dirs = chain(tmp.path());
    let paths: Vec<&str> = dirs.iter().map(|p| p.to_str().expect("utf-8")).collect();
    let db = tmp.path().join("legacy.db");
    let dbs = db.to_str().expect("utf-8");
    let mut args = vec!["index", "add", "--database", dbs];
    args.extend(&paths[..2]);
    ok(olm(&args));
    // Turn it into what olm-catalog wrote before.
    {
        let c = rusqlite::Connection::open(&db).expect("open");
        c.execute_batch(
            "DROP TRIGGER api_provider_cleanup; DROP TRIGGER api_requirer_cleanup;
             ALTER TABLE package ADD COLUMN add_mode TEXT;
             UPDATE package SET add_mode = (SELECT add_mode FROM olm_catalog_package WHERE package_name = package.name);
             DROP TABLE olm_catalog_package;
             UPDATE schema_migrations SET version = 14;",
        )
        .expect("legacy");
    }
    let o = olm(&["index", "list", "packages", "-o", "json", "--database", dbs]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("\"add_mode\": \"replaces\""),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let mut args = vec!["index", "add", "--database", dbs];
    args.extend(&paths[2..]);
    ok(olm(&args));
    // opm's statements; the triggers come last here (created by the move).
    let golden = common::golden().join("sqlite/etcd/index.db");
    let sorted = |mut v: Vec<Vec<String>>| {
        v.sort();
        v
    };
    assert_eq!(sorted(master(&db)), sorted(master(&golden)));
    assert_eq!(
        rows(&db, "SELECT version FROM schema_migrations"),
        set(&[&["13"]])
    );
    assert_eq!(
        rows(
            &db,
            "SELECT package_name, add_mode FROM olm_catalog_package"
        ),
        set(&[&["p", "replaces"]])
    );

    // Version 12 (no migration 013 yet): a deprecation of a bundle that is
    // gone is dropped by 013 on the next write.
    {
        let c = rusqlite::Connection::open(&db).expect("open");
        c.execute_batch(
            "INSERT INTO deprecated VALUES ('gone.v0.0.1'); UPDATE schema_migrations SET version = 12;",
        )
        .expect("v12");
    }
    // Readers see it migrated, the file stays as it is.
    let before = std::fs::read(&db).expect("read");
    ok(olm(&["render", dbs, "-o", "json"]));
    assert_eq!(before, std::fs::read(&db).expect("read"));
    ok(olm(&["index", "rm", "--database", dbs, "--packages", "p"]));
    assert_eq!(
        rows(&db, "SELECT version FROM schema_migrations"),
        set(&[&["13"]])
    );
    assert_eq!(rows(&db, "SELECT count(*) FROM deprecated"), set(&[&["0"]]));
}

/// opm's index.db turned back into schema version 9 (before migrations
/// 010-013: olm.package properties without the bundle path, no
/// `substitutesfor` column, no `deprecated` table) is read through a
/// migrated copy (render equals opm's render.json, the file is untouched)
/// and migrated in place by a write: opm's tables, paths filled in again.
#[test]
fn opm_version_9_database_is_read_and_migrated_like_opm() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let golden = common::golden().join("sqlite/etcd");
    let db = tmp.path().join("index.db");
    std::fs::copy(golden.join("index.db"), &db).expect("copy");
    {
        let c = rusqlite::Connection::open(&db).expect("open");
        c.execute_batch(
            "ALTER TABLE operatorbundle DROP COLUMN substitutesfor;
             DROP TABLE deprecated;
             UPDATE properties SET operatorbundle_path = NULL WHERE type = 'olm.package';
             UPDATE schema_migrations SET version = 9;",
        )
        .expect("version 9");
    }
    let dbs = db.to_str().expect("utf-8");
    let before = std::fs::read(&db).expect("read");
    let o = olm(&["render", dbs, "-o", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    common::assert_render_matches(
        &String::from_utf8_lossy(&o.stdout),
        &golden.join("render.json"),
        &[],
    );
    assert_eq!(
        before,
        std::fs::read(&db).expect("read"),
        "readers leave the file"
    );

    let dirs = chain(tmp.path());
    let mut args = vec!["index", "add", "--database", dbs];
    let paths: Vec<&str> = dirs.iter().map(|p| p.to_str().expect("utf-8")).collect();
    args.extend(&paths);
    ok(olm(&args));
    let sorted = |mut v: Vec<Vec<String>>| {
        v.sort();
        v
    };
    assert_eq!(
        sorted(master(&db)),
        sorted(master(&golden.join("index.db")))
    );
    assert_eq!(
        rows(&db, "SELECT version FROM schema_migrations"),
        set(&[&["13"]])
    );
    assert_eq!(
        rows(
            &db,
            "SELECT count(*) FROM properties WHERE type = 'olm.package' AND operatorbundle_path IS NULL AND operatorbundle_name LIKE 'etcd%'"
        ),
        set(&[&["0"]]),
        "migration 010 gave the olm.package rows their bundle path back"
    );
}

/// A tree with one broken bundle of each kind, each with a bundle that
/// replaces it, plus a package with nothing wrong.
fn broken_tree(root: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    // Good package.
    dirs.push(bundle(
        root,
        "good",
        "good.v1.0.0",
        "1.0.0",
        "stable",
        Some("stable"),
        None,
        &[],
    ));
    dirs.push(bundle(
        root,
        "good",
        "good.v1.1.0",
        "1.1.0",
        "stable",
        Some("stable"),
        Some("good.v1.0.0"),
        &[],
    ));
    // Bad YAML: a.v1.1.0's CSV does not parse; a.v1.0.0 stays.
    dirs.push(bundle(
        root,
        "a",
        "a.v1.0.0",
        "1.0.0",
        "stable",
        Some("stable"),
        None,
        &[],
    ));
    let bad = bundle(
        root,
        "a",
        "a.v1.1.0",
        "1.1.0",
        "stable",
        Some("stable"),
        Some("a.v1.0.0"),
        &[],
    );
    std::fs::write(
        bad.join("manifests/csv.yaml"),
        "kind: ClusterServiceVersion\nmetadata: [unclosed\n",
    )
    .expect("write");
    dirs.push(bad);
    // Broken replaces: b.v2.0.0 names b.v1.9.9, which is nowhere; b.v2.1.0
    // replaces b.v2.0.0 and goes with it; b.v1.0.0 stays.
    dirs.push(bundle(
        root,
        "b",
        "b.v1.0.0",
        "1.0.0",
        "stable",
        Some("stable"),
        None,
        &[],
    ));
    dirs.push(bundle(
        root,
        "b",
        "b.v2.0.0",
        "2.0.0",
        "stable",
        Some("stable"),
        Some("b.v1.9.9"),
        &[],
    ));
    dirs.push(bundle(
        root,
        "b",
        "b.v2.1.0",
        "2.1.0",
        "stable",
        Some("stable"),
        Some("b.v2.0.0"),
        &[],
    ));
    // Duplicate CSV name: c.v1.1.0 in two folders; c.v1.2.0 replaces it.
    dirs.push(bundle(
        root,
        "c",
        "c.v1.0.0",
        "1.0.0",
        "stable",
        Some("stable"),
        None,
        &[],
    ));
    let d1 = bundle(
        root,
        "c",
        "c.v1.1.0",
        "1.1.0",
        "stable",
        Some("stable"),
        Some("c.v1.0.0"),
        &[],
    );
    let d2 = root.join("c-copy");
    std::fs::create_dir_all(d2.join("manifests")).expect("mkdir");
    std::fs::create_dir_all(d2.join("metadata")).expect("mkdir");
    for f in ["manifests/csv.yaml", "metadata/annotations.yaml"] {
        std::fs::copy(d1.join(f), d2.join(f)).expect("copy");
    }
    dirs.push(d1);
    dirs.push(d2);
    dirs.push(bundle(
        root,
        "c",
        "c.v1.2.0",
        "1.2.0",
        "stable",
        Some("stable"),
        Some("c.v1.1.0"),
        &[],
    ));
    // Invalid dependencies.yaml: the whole package d (its one bundle).
    let d = bundle(
        root,
        "d",
        "d.v1.0.0",
        "1.0.0",
        "stable",
        Some("stable"),
        None,
        &[],
    );
    std::fs::write(
        d.join("metadata/dependencies.yaml"),
        "dependencies:\n- type: olm.package\n  value: {packageName: x\n",
    )
    .expect("write");
    dirs.push(d);
    // No CSV: e.v1.1.0 holds only a ConfigMap.
    dirs.push(bundle(
        root,
        "e",
        "e.v1.0.0",
        "1.0.0",
        "stable",
        Some("stable"),
        None,
        &[],
    ));
    let e = bundle(
        root,
        "e",
        "e.v1.1.0",
        "1.1.0",
        "stable",
        Some("stable"),
        Some("e.v1.0.0"),
        &[],
    );
    std::fs::write(
        e.join("manifests/csv.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    )
    .expect("write");
    dirs.push(e);
    // A package whose add fails as a whole: f.v2.0.0 heads stable and does
    // not replace f.v1.0.0 ("add prunes bundle").
    dirs.push(bundle(
        root,
        "f",
        "f.v1.0.0",
        "1.0.0",
        "stable",
        Some("stable"),
        None,
        &[],
    ));
    dirs.push(bundle(
        root,
        "f",
        "f.v2.0.0",
        "2.0.0",
        "stable",
        Some("stable"),
        None,
        &[],
    ));
    dirs
}

#[test]
fn keep_going_leaves_out_broken_bundles_and_what_needs_them() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dirs = broken_tree(&tmp.path().join("tree"));
    let db = tmp.path().join("index.db");
    let mut args = vec![
        "index".to_string(),
        "add".into(),
        "-d".into(),
        db.display().to_string(),
    ];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();

    // Without --keep-going: refused, nothing written.
    let err = fails(olm(&a));
    assert!(!db.exists(), "a refused add wrote {}: {err}", db.display());

    let mut kg = a.clone();
    kg.extend(["--keep-going", "-o", "json"]);
    let out = olm(&kg);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");

    // What was indexed.
    assert_eq!(
        rows(&db, "SELECT name FROM operatorbundle"),
        set(&[
            &["a.v1.0.0"],
            &["b.v1.0.0"],
            &["c.v1.0.0"],
            &["e.v1.0.0"],
            &["good.v1.0.0"],
            &["good.v1.1.0"],
        ])
    );
    assert_eq!(
        rows(&db, "SELECT name, default_channel FROM package"),
        set(&[
            &["a", "stable"],
            &["b", "stable"],
            &["c", "stable"],
            &["e", "stable"],
            &["good", "stable"],
        ])
    );
    assert_eq!(
        rows(&db, ENTRIES),
        set(&[
            &["stable", "a.v1.0.0", "", "0"],
            &["stable", "b.v1.0.0", "", "0"],
            &["stable", "c.v1.0.0", "", "0"],
            &["stable", "e.v1.0.0", "", "0"],
            &["stable", "good.v1.1.0", "good.v1.0.0", "0"],
            &["stable", "good.v1.0.0", "", "1"],
        ])
    );
    // Nothing of a left-out bundle in any table.
    for t in [
        "related_image",
        "properties",
        "dependencies",
        "api_provider",
        "channel_entry",
    ] {
        let q = format!("SELECT operatorbundle_name FROM {t} WHERE operatorbundle_name NOT IN (SELECT name FROM operatorbundle)");
        assert!(rows(&db, &q).is_empty(), "{t} has rows of left-out bundles");
    }

    // What was reported: (file's last component, bundle, reason part, dependents).
    let left = report["left_out"].as_array().expect("left_out");
    let find = |file_end: &str| -> &serde_json::Value {
        left.iter()
            .find(|l| l["file"].as_str().is_some_and(|f| f.ends_with(file_end)))
            .unwrap_or_else(|| panic!("no entry for {file_end} in {report:#}"))
    };
    let bad_yaml = find("/a.v1.1.0");
    assert!(
        bad_yaml["reason"]
            .as_str()
            .expect("reason")
            .contains("csv.yaml"),
        "{bad_yaml}"
    );
    let broken = find("/b.v2.0.0");
    assert_eq!(broken["bundle"], "b.v2.0.0");
    assert!(
        broken["reason"]
            .as_str()
            .expect("reason")
            .contains("b.v1.9.9"),
        "{broken}"
    );
    assert_eq!(broken["dependents"], serde_json::json!(["b.v2.1.0"]));
    let dependent = find("/b.v2.1.0");
    assert!(
        dependent["reason"]
            .as_str()
            .expect("reason")
            .contains("left out"),
        "{dependent}"
    );
    for f in ["/c.v1.1.0", "/c-copy"] {
        let dup = find(f);
        assert!(
            dup["reason"]
                .as_str()
                .expect("reason")
                .contains("duplicate CSV name"),
            "{dup}"
        );
        assert_eq!(dup["dependents"], serde_json::json!(["c.v1.2.0"]), "{dup}");
    }
    let deps = find("/d.v1.0.0");
    assert!(
        deps["reason"]
            .as_str()
            .expect("reason")
            .contains("dependencies.yaml"),
        "{deps}"
    );
    let no_csv = find("/e.v1.1.0");
    assert!(
        no_csv["reason"]
            .as_str()
            .expect("reason")
            .contains("no ClusterServiceVersion"),
        "{no_csv}"
    );
    let pkg = left
        .iter()
        .find(|l| l["package"] == "f")
        .unwrap_or_else(|| panic!("no entry for package f in {report:#}"));
    assert_eq!(pkg["bundle"], "");
    assert!(
        pkg["reason"]
            .as_str()
            .expect("reason")
            .contains("add prunes"),
        "{pkg}"
    );
    assert_eq!(
        pkg["dependents"],
        serde_json::json!(["f.v1.0.0", "f.v2.0.0"])
    );
    assert_eq!(left.len(), 9, "{report:#}");
    assert_eq!(
        report["added"],
        serde_json::json!([
            "a.v1.0.0",
            "b.v1.0.0",
            "c.v1.0.0",
            "e.v1.0.0",
            "good.v1.0.0",
            "good.v1.1.0"
        ])
    );
    // The summary on stderr.
    assert!(
        stderr.contains("added 6 bundle(s) to 5 package(s)"),
        "{stderr}"
    );
    assert!(stderr.contains("left out 10 bundle(s)"), "{stderr}");
    assert!(stderr.contains("left out bundle b.v2.0.0:"), "{stderr}");

    // Nothing left out: exit 0, same rows as a plain add of the good part.
    let db2 = tmp.path().join("good.db");
    let good: Vec<String> = dirs
        .iter()
        .filter(|d| d.ends_with("good.v1.0.0") || d.ends_with("good.v1.1.0"))
        .map(|d| d.display().to_string())
        .collect();
    let mut g = vec!["index", "add", "--keep-going", "-d"];
    let db2s = db2.display().to_string();
    g.push(&db2s);
    g.extend(good.iter().map(String::as_str));
    ok(olm(&g));
}
