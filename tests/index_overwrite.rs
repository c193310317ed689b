//! `index add --overwrite-latest` (and opm's `index add`/`registry add
//! --overwrite-latest` through the personality): opm v1.73.0's tests of it
//! ported as command-level cases. The bundles are the small fixtures under
//! `fixtures/overwrite/` (written for these tests: `kv` and `mon` stand for
//! upstream's etcd and prometheus bundles, `tp` for its generated testpkg,
//! `one`/`two`/`wr`/`ch`/`pd` for the packages of
//! `TestRemoveOverwrittenChannelHead`); a directory `X-overwrite` holds the
//! same CSV name as `X` with other content. Each is pushed as an image to a
//! real registry on loopback, since opm overwrites only bundles added as
//! images.
//!
//! - pkg/registry/populator_test.go `TestOverwrite`: every case.
//! - pkg/registry/populator_test.go `TestAddAfterDeprecate`: the cases that
//!   overwrite (`OverwriteDeprecatedChannelHead`,
//!   `OverwriteDeprecatedChannelHeadWithReplaces`,
//!   `OverwriteAboveDeprecated`); its `OverwriteLatest` case hands the
//!   populator an overwrite map without adding anything, which no command
//!   line can do.
//! - pkg/sqlite/load_test.go `TestRemoveOverwrittenChannelHead`: the
//!   removal alone is not a command, so each case overwrites the bundle it
//!   removes and checks the package the add writes after the removal (the
//!   removal's effects show through: a default channel kept, a channel
//!   head moved to what the old head replaced, stale skip entries reading
//!   as channel members).
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::{self, olm};
use crate::registry::Registry;

/// A registry with fixture bundles pushed as `HOST/test/NAME:v1`.
struct Images {
    reg: Registry,
    pushed: BTreeSet<String>,
}

impl Images {
    fn new() -> Images {
        Images {
            reg: Registry::start(),
            pushed: BTreeSet::new(),
        }
    }

    fn prefix(&self) -> String {
        format!("{}/test/", self.reg.host())
    }

    /// The reference of fixture `name`, built and pushed on first use.
    fn image(&mut self, name: &str) -> String {
        let r = format!("{}{name}:v1", self.prefix());
        if self.pushed.insert(name.to_string()) {
            let dir = common::fixtures().join("overwrite").join(name);
            let o = olm(&[
                "bundle",
                "build",
                dir.to_str().expect("utf-8"),
                "--tag",
                &r,
                "-q",
            ]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        r
    }

    /// `index add --database DB [extra] IMAGES...`: (exit code, stderr).
    fn add(&mut self, db: &Path, names: &[&str], extra: &[&str]) -> (i32, String) {
        let refs: Vec<String> = names.iter().map(|n| self.image(n)).collect();
        let mut args = vec!["index", "add", "--database", db.to_str().expect("utf-8")];
        args.extend(extra);
        args.extend(refs.iter().map(String::as_str));
        let (code, _, err) = common::run(&args);
        (code, err)
    }

    fn ok(&mut self, db: &Path, names: &[&str], extra: &[&str]) {
        let (code, err) = self.add(db, names, extra);
        assert_eq!(code, 0, "add {names:?}: {err}");
    }

    /// `index deprecatetruncate` of fixture images.
    fn deprecate(&mut self, db: &Path, names: &[&str]) {
        let refs: Vec<String> = names.iter().map(|n| self.image(n)).collect();
        let mut args = vec![
            "index",
            "deprecatetruncate",
            "--database",
            db.to_str().expect("utf-8"),
        ];
        for r in &refs {
            args.extend(["--bundles", r.as_str()]);
        }
        let (code, _, err) = common::run(&args);
        assert_eq!(code, 0, "deprecatetruncate {names:?}: {err}");
    }

    /// The fixture name of an image reference.
    fn name_of(&self, bundlepath: &str) -> String {
        bundlepath
            .strip_prefix(&self.prefix())
            .and_then(|s| s.strip_suffix(":v1"))
            .unwrap_or(bundlepath)
            .to_string()
    }

    /// What opm's tests read back with `ListBundles`: each bundle (by
    /// fixture name) with each channel it has an entry in.
    fn remaining(&self, db: &Path) -> BTreeSet<String> {
        common::rows(
            db,
            "SELECT DISTINCT o.bundlepath, e.channel_name FROM channel_entry e JOIN operatorbundle o ON o.name = e.operatorbundle_name",
        )
        .into_iter()
        .map(|r| format!("{}/{}", self.name_of(&r[0]), r[1]))
        .collect()
    }

    /// The bundles (fixture name/channel) with the `olm.deprecated` property.
    fn deprecated(&self, db: &Path) -> BTreeSet<String> {
        common::rows(
            db,
            "SELECT DISTINCT o.bundlepath, e.channel_name FROM channel_entry e JOIN operatorbundle o ON o.name = e.operatorbundle_name
             JOIN properties p ON p.operatorbundle_name = o.name WHERE p.type = 'olm.deprecated'",
        )
        .into_iter()
        .map(|r| format!("{}/{}", self.name_of(&r[0]), r[1]))
        .collect()
    }
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Package → its channels with entries (`GetChannelEntriesFromPackage`).
fn pkg_channels(db: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in common::rows(
        db,
        "SELECT DISTINCT package_name, channel_name FROM channel_entry",
    ) {
        out.entry(r[0].clone()).or_default().insert(r[1].clone());
    }
    out
}

fn channels(items: &[(&str, &[&str])]) -> BTreeMap<String, BTreeSet<String>> {
    items
        .iter()
        .map(|(p, cs)| (p.to_string(), set(cs)))
        .collect()
}

/// Package → default channel.
fn defaults(db: &Path) -> BTreeMap<String, String> {
    common::rows(
        db,
        "SELECT name, COALESCE(default_channel, 'NULL') FROM package",
    )
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect()
}

fn pairs(items: &[(&str, &str)]) -> BTreeMap<String, String> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// Channel heads as `package/channel` → CSV name.
fn heads(db: &Path, package: &str) -> BTreeMap<String, String> {
    common::rows(
        db,
        &format!(
            "SELECT name, COALESCE(head_operatorbundle_name, 'NULL') FROM channel WHERE package_name = '{package}'"
        ),
    )
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect()
}

/// Every row of every table (the database's whole content).
fn dump(db: &Path) -> BTreeMap<String, BTreeSet<Vec<String>>> {
    let tables = common::rows(
        db,
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
    );
    tables
        .into_iter()
        .map(|t| {
            let rows = common::table_text(db, &t[0], &[]).into_iter().collect();
            (t[0].clone(), rows)
        })
        .collect()
}

fn db_in(tmp: &tempfile::TempDir) -> PathBuf {
    tmp.path().join("index.db")
}

// ---------------------------------------------------------------------
// pkg/registry/populator_test.go TestOverwrite

const KV: &[&str] = &["kv.0.9.0", "kv.0.9.2"];
const MON: &[&str] = &["mon.0.14.0", "mon.0.15.0", "mon.0.22.2"];

/// TestOverwrite/DefaultBehavior: without the flag, bundles whose replaces
/// is not in the index are refused, and nothing changes.
#[test]
fn overwrite_default_behavior() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    im.ok(&db, &["mon.0.14.0"], &[]);
    let before = dump(&db);
    let (code, err) = im.add(&db, &["kv.0.9.2", "mon.0.22.2"], &[]);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("replaces nonexistent bundle"), "{err}");
    assert_eq!(
        dump(&db),
        before,
        "a refused add leaves the index as it was"
    );
    assert_eq!(im.remaining(&db), set(&["mon.0.14.0/preview"]));
    assert_eq!(pkg_channels(&db), channels(&[("mon", &["preview"])]));
    assert_eq!(defaults(&db), pairs(&[("mon", "preview")]));
}

/// TestOverwrite/SimpleCsvChange: kv.v0.9.0 heads all three of its
/// channels and is replaced by another image of the same name, with a new
/// bundle of another package in the same add.
#[test]
fn overwrite_simple_csv_change() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    im.ok(&db, &["kv.0.9.0", "mon.0.14.0", "mon.0.15.0"], &[]);
    im.ok(
        &db,
        &["kv.0.9.0-overwrite", "mon.0.22.2"],
        &["--overwrite-latest"],
    );
    assert_eq!(
        im.remaining(&db),
        set(&[
            "kv.0.9.0-overwrite/alpha",
            "kv.0.9.0-overwrite/beta",
            "kv.0.9.0-overwrite/stable",
            "mon.0.22.2/preview",
            "mon.0.15.0/preview",
            "mon.0.15.0/stable",
            "mon.0.14.0/preview",
            "mon.0.14.0/stable",
        ])
    );
    assert_eq!(
        pkg_channels(&db),
        channels(&[
            ("kv", &["alpha", "beta", "stable"]),
            ("mon", &["preview", "stable"])
        ])
    );
    assert_eq!(
        defaults(&db),
        pairs(&[("kv", "stable"), ("mon", "preview")])
    );
    // The old image is gone with its rows.
    let paths = common::rows(&db, "SELECT bundlepath FROM operatorbundle");
    assert!(
        !paths.iter().any(|p| p[0].ends_with("/kv.0.9.0:v1")),
        "{paths:?}"
    );
    let images = common::rows(&db, "SELECT image FROM related_image");
    assert!(
        !images.iter().any(|p| p[0].ends_with("/kv.0.9.0:v1")),
        "{images:?}"
    );
}

/// TestOverwrite/ChannelRemove: the new kv.v0.9.2 is in alpha only; stable
/// falls back to kv.v0.9.0 and the default follows the new annotation.
#[test]
fn overwrite_channel_remove() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    im.ok(
        &db,
        &["kv.0.9.0", "kv.0.9.2", "mon.0.14.0", "mon.0.15.0"],
        &[],
    );
    im.ok(
        &db,
        &["kv.0.9.2-overwrite", "mon.0.22.2"],
        &["--overwrite-latest"],
    );
    assert_eq!(
        im.remaining(&db),
        set(&[
            "kv.0.9.0/alpha",
            "kv.0.9.0/beta",
            "kv.0.9.0/stable",
            "kv.0.9.2-overwrite/alpha",
            "mon.0.14.0/preview",
            "mon.0.14.0/stable",
            "mon.0.15.0/preview",
            "mon.0.15.0/stable",
            "mon.0.22.2/preview",
        ])
    );
    assert_eq!(
        pkg_channels(&db),
        channels(&[
            ("kv", &["alpha", "beta", "stable"]),
            ("mon", &["preview", "stable"])
        ])
    );
    assert_eq!(defaults(&db), pairs(&[("kv", "alpha"), ("mon", "preview")]));
    assert_eq!(
        heads(&db, "kv"),
        pairs(&[
            ("alpha", "kv.v0.9.2"),
            ("beta", "kv.v0.9.0"),
            ("stable", "kv.v0.9.0")
        ])
    );
}

/// TestOverwrite/OverwriteBundle/ChannelSwitch: mon.v0.22.2 moves from
/// preview to a new channel alpha; preview is headed by what it replaced.
#[test]
fn overwrite_channel_switch() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    im.ok(&db, MON, &[]);
    im.ok(
        &db,
        &["kv.0.9.0", "kv.0.9.2", "mon.0.22.2-overwrite"],
        &["--overwrite-latest"],
    );
    assert_eq!(
        im.remaining(&db),
        set(&[
            "kv.0.9.0/alpha",
            "kv.0.9.0/beta",
            "kv.0.9.0/stable",
            "kv.0.9.2/alpha",
            "kv.0.9.2/stable",
            "mon.0.14.0/preview",
            "mon.0.14.0/stable",
            "mon.0.15.0/preview",
            "mon.0.15.0/stable",
            "mon.0.22.2-overwrite/alpha",
            "mon.0.15.0/alpha",
            "mon.0.14.0/alpha",
        ])
    );
    assert_eq!(
        pkg_channels(&db),
        channels(&[
            ("kv", &["alpha", "beta", "stable"]),
            ("mon", &["alpha", "preview", "stable"])
        ])
    );
    assert_eq!(defaults(&db), pairs(&[("kv", "alpha"), ("mon", "preview")]));
    assert_eq!(
        heads(&db, "mon"),
        pairs(&[
            ("alpha", "mon.v0.22.2"),
            ("preview", "mon.v0.15.0"),
            ("stable", "mon.v0.15.0")
        ])
    );
}

/// TestOverwrite/OverwriteBundle/DefaultChannelChange: the new head names
/// another default channel, which the package takes.
#[test]
fn overwrite_default_channel_change() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    im.ok(&db, &["mon.0.14.0", "mon.0.15.0"], &[]);
    im.ok(
        &db,
        &["kv.0.9.0", "kv.0.9.2", "mon.0.15.0-overwrite"],
        &["--overwrite-latest"],
    );
    assert_eq!(
        im.remaining(&db),
        set(&[
            "kv.0.9.0/alpha",
            "kv.0.9.0/beta",
            "kv.0.9.0/stable",
            "kv.0.9.2/alpha",
            "kv.0.9.2/stable",
            "mon.0.14.0/preview",
            "mon.0.14.0/stable",
            "mon.0.15.0-overwrite/preview",
            "mon.0.15.0-overwrite/stable",
        ])
    );
    assert_eq!(defaults(&db), pairs(&[("kv", "alpha"), ("mon", "stable")]));
}

/// TestOverwrite/OverwriteBundle/NonLatestOverwrite: mon.v0.15.0 heads
/// stable but mon.v0.22.2 replaces it in preview: refused (opm's exit 1
/// through the personality), and nothing of the add is written.
#[test]
fn overwrite_non_latest_is_refused() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    im.ok(&db, MON, &[]);
    let before = dump(&db);
    let (code, err) = im.add(
        &db,
        &["kv.0.9.0", "kv.0.9.2", "mon.0.15.0-overwrite"],
        &["--overwrite-latest"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "Cannot overwrite a bundle that is not at the head of a channel using --overwrite-latest"
        ),
        "{err}"
    );
    assert_eq!(
        dump(&db),
        before,
        "a refused add leaves the index as it was"
    );
    assert_eq!(
        im.remaining(&db),
        set(&[
            "mon.0.14.0/preview",
            "mon.0.14.0/stable",
            "mon.0.15.0/preview",
            "mon.0.15.0/stable",
            "mon.0.22.2/preview",
        ])
    );
    assert_eq!(defaults(&db), pairs(&[("mon", "preview")]));

    // The same through opm's personality: exit 1, as opm's main gives an
    // OverwriteErr.
    let refs: Vec<String> = ["kv.0.9.0", "kv.0.9.2", "mon.0.15.0-overwrite"]
        .iter()
        .map(|n| im.image(n))
        .collect();
    let (code, _, err) = common::run(&[
        "opm",
        "registry",
        "add",
        "-d",
        db.to_str().expect("utf-8"),
        "-b",
        &refs.join(","),
        "--overwrite-latest",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not at the head of a channel"), "{err}");
    assert_eq!(dump(&db), before);
}

/// TestOverwrite/OverwriteBundle/MultipleOverwrites: one overwrite in each
/// of two packages, in one add.
#[test]
fn overwrite_multiple_packages() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    let mut first = KV.to_vec();
    first.extend(MON);
    im.ok(&db, &first, &[]);
    im.ok(
        &db,
        &["kv.0.9.2-overwrite", "mon.0.22.2-overwrite"],
        &["--overwrite-latest"],
    );
    assert_eq!(
        im.remaining(&db),
        set(&[
            "kv.0.9.0/alpha",
            "kv.0.9.0/beta",
            "kv.0.9.0/stable",
            "kv.0.9.2-overwrite/alpha",
            "mon.0.14.0/preview",
            "mon.0.14.0/stable",
            "mon.0.15.0/preview",
            "mon.0.15.0/stable",
            "mon.0.22.2-overwrite/alpha",
            "mon.0.15.0/alpha",
            "mon.0.14.0/alpha",
        ])
    );
    assert_eq!(
        pkg_channels(&db),
        channels(&[
            ("kv", &["alpha", "beta", "stable"]),
            ("mon", &["alpha", "preview", "stable"])
        ])
    );
    assert_eq!(defaults(&db), pairs(&[("kv", "alpha"), ("mon", "preview")]));
}

/// TestOverwrite/OverwriteBundle/MultipleOverwritesPerPackage: two images
/// of kv.v0.9.2 in one add: refused, nothing written; through the opm
/// personality too (exit 1).
#[test]
fn overwrite_twice_in_one_package_is_refused() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    let mut first = KV.to_vec();
    first.extend(MON);
    im.ok(&db, &first, &[]);
    let before = dump(&db);
    // A second image of the same bundle directory.
    let other = format!("{}again/kv.0.9.2-overwrite:v1", im.prefix());
    let dir = common::fixtures().join("overwrite/kv.0.9.2-overwrite");
    let o = olm(&[
        "bundle",
        "build",
        dir.to_str().expect("utf-8"),
        "--tag",
        &other,
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let one = im.image("kv.0.9.2-overwrite");
    let (code, _, err) = common::run(&[
        "index",
        "add",
        "--database",
        db.to_str().expect("utf-8"),
        "--overwrite-latest",
        &one,
        &other,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("Cannot overwrite more than one bundle at a time for a given package using --overwrite-latest"),
        "{err}"
    );
    assert_eq!(dump(&db), before);
}

// ---------------------------------------------------------------------
// pkg/registry/populator_test.go TestAddAfterDeprecate (overwrite cases)

const TP: &[&str] = &[
    "tp.0.1.0", "tp.0.1.1", "tp.0.2.0", "tp.0.2.1", "tp.0.2.2", "tp.0.3.0",
];

/// OverwriteDeprecatedChannelHead: tp.v0.3.0, deprecated (its channel
/// truncated below it), is overwritten by a bundle that replaces nothing;
/// the new one is not deprecated.
#[test]
fn overwrite_deprecated_channel_head() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    im.ok(&db, TP, &[]);
    im.deprecate(&db, &["tp.0.3.0"]);
    im.ok(&db, &["tp.0.3.0-overwrite"], &["--overwrite-latest"]);
    assert_eq!(
        im.remaining(&db),
        set(&[
            "tp.0.1.0/0.1",
            "tp.0.1.0/0.2",
            "tp.0.1.1/0.1",
            "tp.0.2.0/0.2",
            "tp.0.2.1/0.2",
            "tp.0.2.2/0.2",
            "tp.0.3.0-overwrite/0.3",
        ])
    );
    assert_eq!(im.deprecated(&db), set(&[]));
    assert_eq!(
        common::rows(&db, "SELECT operatorbundle_name FROM deprecated"),
        BTreeSet::new()
    );
    assert_eq!(
        pkg_channels(&db),
        channels(&[("tp", &["0.1", "0.2", "0.3"])])
    );
}

/// OverwriteDeprecatedChannelHeadWithReplaces: the new tp.v0.3.0 replaces
/// tp.v0.2.0, so channel 0.3 walks down to tp.v0.1.0 again.
#[test]
fn overwrite_deprecated_channel_head_with_replaces() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    im.ok(&db, TP, &[]);
    im.deprecate(&db, &["tp.0.3.0"]);
    im.ok(
        &db,
        &["tp.0.3.0-overwrite-replaces-0.2.0"],
        &["--overwrite-latest"],
    );
    assert_eq!(
        im.remaining(&db),
        set(&[
            "tp.0.1.0/0.1",
            "tp.0.1.0/0.2",
            "tp.0.1.0/0.3",
            "tp.0.1.1/0.1",
            "tp.0.2.0/0.2",
            "tp.0.2.0/0.3",
            "tp.0.2.1/0.2",
            "tp.0.2.2/0.2",
            "tp.0.3.0-overwrite-replaces-0.2.0/0.3",
        ])
    );
    assert_eq!(im.deprecated(&db), set(&[]));
    assert_eq!(
        pkg_channels(&db),
        channels(&[("tp", &["0.1", "0.2", "0.3"])])
    );
}

/// OverwriteAboveDeprecated: tp.v0.3.1 heads channel 0.3 above the
/// deprecated tp.v0.3.0, which stays (deprecated) below the new head.
#[test]
fn overwrite_above_deprecated() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    let mut first = TP.to_vec();
    first.push("tp.0.3.1");
    im.ok(&db, &first, &[]);
    im.deprecate(&db, &["tp.0.3.0"]);
    im.ok(&db, &["tp.0.3.1-overwrite"], &["--overwrite-latest"]);
    assert_eq!(
        im.remaining(&db),
        set(&[
            "tp.0.1.0/0.1",
            "tp.0.1.0/0.2",
            "tp.0.1.1/0.1",
            "tp.0.2.0/0.2",
            "tp.0.2.1/0.2",
            "tp.0.2.2/0.2",
            "tp.0.3.0/0.3",
            "tp.0.3.1-overwrite/0.3",
        ])
    );
    assert_eq!(im.deprecated(&db), set(&["tp.0.3.0/0.3"]));
    assert_eq!(
        pkg_channels(&db),
        channels(&[("tp", &["0.1", "0.2", "0.3"])])
    );
}

// ---------------------------------------------------------------------
// pkg/sqlite/load_test.go TestRemoveOverwrittenChannelHead

/// ChannelHead/SingleBundlePackage: the only bundle of `one` (heading a
/// and b) is replaced; package `two` is untouched, the default kept.
#[test]
fn remove_head_single_bundle_package() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    im.ok(&db, &["one.a", "two.b"], &[]);
    im.ok(&db, &["one.a-overwrite"], &["--overwrite-latest"]);
    assert_eq!(
        im.remaining(&db),
        set(&[
            "one.a-overwrite/a",
            "one.a-overwrite/b",
            "two.b/a",
            "two.b/b"
        ])
    );
    assert_eq!(defaults(&db), pairs(&[("one", "a"), ("two", "a")]));
}

/// ChannelHead/WithReplacement: wr.a heads a but wr.aa replaces it in b:
/// refused, nothing changes.
#[test]
fn remove_head_with_replacement_is_refused() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    im.ok(&db, &["wr.a", "wr.aa"], &[]);
    let before = dump(&db);
    let (code, err) = im.add(&db, &["wr.a-overwrite"], &["--overwrite-latest"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not at the head of a channel"), "{err}");
    assert!(err.contains("wr.a is below wr.aa in channel b"), "{err}");
    assert_eq!(dump(&db), before);
    assert_eq!(im.remaining(&db), set(&["wr.a/a", "wr.a/b", "wr.aa/b"]));
}

/// ChannelHead: ch.a heads a and b, replacing ch.b and skipping ch.c. The
/// removal moves the heads of a and b to ch.b and leaves ch.c's skip
/// entries in them, so the add that follows reads ch.c as a member of b
/// (its highest version there): opm's outcome, reproduced. The new ch.a is
/// in a only.
#[test]
fn remove_head_moves_heads_to_what_it_replaced() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    im.ok(&db, &["ch.a", "ch.b", "ch.c", "ch.d"], &[]);
    assert_eq!(
        im.remaining(&db),
        set(&[
            "ch.a/a", "ch.a/b", "ch.b/a", "ch.b/b", "ch.b/d", "ch.c/a", "ch.c/b", "ch.c/c",
            "ch.d/d"
        ])
    );
    im.ok(&db, &["ch.a-overwrite"], &["--overwrite-latest"]);
    assert_eq!(
        im.remaining(&db),
        set(&[
            "ch.a-overwrite/a",
            "ch.b/a",
            "ch.b/d",
            "ch.c/b",
            "ch.c/c",
            "ch.d/d"
        ])
    );
    assert_eq!(
        heads(&db, "ch"),
        pairs(&[("a", "ch.a"), ("b", "ch.c"), ("c", "ch.c"), ("d", "ch.d")])
    );
    assert_eq!(defaults(&db), pairs(&[("ch", "a")]));
}

/// PersistDefaultChannel: pd.a alone heads the default channel a; the
/// removal keeps the channel (no head) so the package and its default
/// survive, and the new pd.a heads it again.
#[test]
fn remove_head_persists_the_default_channel() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    im.ok(&db, &["pd.a", "pd.b"], &[]);
    assert_eq!(defaults(&db), pairs(&[("pd", "a")]));
    im.ok(&db, &["pd.a-overwrite"], &["--overwrite-latest"]);
    assert_eq!(im.remaining(&db), set(&["pd.a-overwrite/a", "pd.b/b"]));
    assert_eq!(defaults(&db), pairs(&[("pd", "a")]));
    assert_eq!(heads(&db, "pd"), pairs(&[("a", "pd.a"), ("b", "pd.b")]));
}

// ---------------------------------------------------------------------
// The other refusals of opm's overwrite path

/// A bundle added from a directory has no image: opm's "only supported
/// when using bundle images". In a semver mode opm does not remove the old
/// head and fails; so does this, with opm's message. The same image again
/// is opm's "already exists" (exit 2 through the personality). Each leaves
/// the index as it was.
#[test]
fn overwrite_refusals() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");

    let db = tmp.path().join("dirs.db");
    let dir = common::fixtures().join("overwrite/pd.a");
    let o = olm(&[
        "index",
        "add",
        "--database",
        db.to_str().expect("utf-8"),
        dir.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = dump(&db);
    let (code, err) = im.add(&db, &["pd.a-overwrite"], &["--overwrite-latest"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("index add --overwrite-latest is only supported when using bundle images"),
        "{err}"
    );
    assert_eq!(dump(&db), before);

    let db = tmp.path().join("semver.db");
    im.ok(&db, &["pd.a", "pd.b"], &["--mode", "semver"]);
    let before = dump(&db);
    let (code, err) = im.add(
        &db,
        &["pd.a-overwrite"],
        &["--overwrite-latest", "--mode", "semver"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("Bundle version 1.0.1 already added to index"),
        "{err}"
    );
    assert_eq!(dump(&db), before);
    // The mode the package was added with applies without --mode too.
    let (code, err) = im.add(&db, &["pd.a-overwrite"], &["--overwrite-latest"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--mode semver"), "{err}");
    assert_eq!(dump(&db), before);

    let db = tmp.path().join("same.db");
    im.ok(&db, &["pd.a", "pd.b"], &[]);
    let before = dump(&db);
    let same = im.image("pd.a");
    let (code, _, err) = common::run(&[
        "opm",
        "registry",
        "add",
        "-d",
        db.to_str().expect("utf-8"),
        "-b",
        &same,
        "--overwrite-latest",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("already exists"), "{err}");
    assert_eq!(dump(&db), before);

    // Without the flag an existing CSV name stays opm's "Bundle already
    // added" (exit 3 through the personality).
    let new = im.image("pd.a-overwrite");
    let (code, _, err) = common::run(&[
        "opm",
        "registry",
        "add",
        "-d",
        db.to_str().expect("utf-8"),
        "-b",
        &new,
    ]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(dump(&db), before);
}

/// With --keep-going an overwrite refusal leaves its package out and the
/// rest goes in (exit 1); an overwrite that passes its checks is applied.
#[test]
fn overwrite_with_keep_going_leaves_the_refused_package_out() {
    let mut im = Images::new();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = db_in(&tmp);
    let mut first = MON.to_vec();
    first.push("pd.a");
    first.push("pd.b");
    im.ok(&db, &first, &[]);
    let (code, err) = im.add(
        &db,
        &["mon.0.15.0-overwrite", "pd.a-overwrite", "kv.0.9.0"],
        &["--overwrite-latest", "--keep-going"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("package mon") && err.contains("not at the head of a channel"),
        "{err}"
    );
    let remaining = im.remaining(&db);
    for want in [
        "mon.0.15.0/preview",
        "mon.0.22.2/preview",
        "pd.a-overwrite/a",
        "pd.b/b",
        "kv.0.9.0/stable",
    ] {
        assert!(remaining.contains(want), "{want}: {remaining:?}");
    }
    assert!(!remaining.contains("pd.a/a"), "{remaining:?}");
}
