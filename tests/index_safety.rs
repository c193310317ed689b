//! Safety of the index commands that write: SIGKILL in the middle of a
//! write (found by polling for SQLite's rollback journal, which exists from
//! the first changed page until the commit, and stays behind after a kill),
//! injected failures, leftovers of killed runs, the file mode of new
//! databases, second writers, and files that are not opm indexes.
use crate::common;

use common::package_bundle_dirs as bundle_dirs;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rusqlite::Connection;

fn cmd(args: &[&str], db: &Path, dirs: &[PathBuf]) -> Command {
    let mut c = Command::new(common::bin());
    c.args(args)
        .arg("--database")
        .arg(db)
        .args(dirs)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn run(args: &[&str], db: &Path, dirs: &[PathBuf]) -> (bool, String) {
    let o = cmd(args, db, dirs).output().expect("run");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn ok(args: &[&str], db: &Path, dirs: &[PathBuf]) {
    let (s, e) = run(args, db, dirs);
    assert!(s, "{args:?}: {e}");
}

/// Every row of every table, as text: the database's whole content.
fn dump(db: &Path) -> BTreeMap<String, Vec<String>> {
    let c = Connection::open(db).expect("open");
    let tables: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("tables");
    let mut out = BTreeMap::new();
    for t in tables {
        let mut st = c.prepare(&format!("SELECT * FROM \"{t}\"")).expect("p");
        let n = st.column_count();
        let mut rows: Vec<String> = st
            .query_map([], |r| {
                Ok((0..n)
                    .map(|i| format!("{:?}", r.get_ref(i).expect("col")))
                    .collect::<Vec<_>>()
                    .join("|"))
            })
            .expect("q")
            .collect::<Result<_, _>>()
            .expect("rows");
        rows.sort();
        out.insert(t, rows);
    }
    out
}

fn integrity_ok(db: &Path) {
    let c = Connection::open(db).expect("open after kill");
    let ic: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check");
    assert_eq!(ic, "ok");
}

fn journal(db: &Path) -> PathBuf {
    let mut j = db.as_os_str().to_owned();
    j.push("-journal");
    PathBuf::from(j)
}

/// Waits until `found` holds (polling every 200 µs), then `delay`, then
/// SIGKILLs the child. Returns whether `found` held before the kill.
fn kill_when(child: &mut Child, found: impl Fn() -> bool, delay: Duration) -> bool {
    let start = Instant::now();
    let mut seen = false;
    while start.elapsed() < Duration::from_secs(120) {
        if found() {
            seen = true;
            break;
        }
        if child.try_wait().expect("try_wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    if seen {
        std::thread::sleep(delay);
    }
    let _ = child.kill();
    let _ = child.wait();
    seen
}

/// A trigger that burns about 50-100 ms of CPU per row, so that a write
/// lasts long enough to be killed at several points. It changes nothing.
fn slow_trigger(db: &Path, event: &str, table: &str) {
    let c = Connection::open(db).expect("open");
    c.execute_batch(&format!(
        "CREATE TRIGGER olm_test_slow AFTER {event} ON {table} BEGIN
           SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000) SELECT x FROM c);
         END;"
    ))
    .expect("trigger");
}

fn drop_trigger(db: &Path, name: &str) {
    let c = Connection::open(db).expect("open");
    c.execute_batch(&format!("DROP TRIGGER {name}"))
        .expect("drop trigger");
}

/// Kills `args` on `db` at several points after its write has begun and
/// checks each time that the database is intact and holds exactly its old
/// content.
fn kill_mid_write(args: &[&str], db: &Path, dirs: &[PathBuf], delays_ms: &[u64]) {
    let before = dump(db);
    for &delay_ms in delays_ms {
        let mut child = cmd(args, db, dirs).spawn().expect("spawn");
        let j = journal(db);
        let seen = kill_when(&mut child, || j.exists(), Duration::from_millis(delay_ms));
        assert!(seen, "{args:?}: the write never began");
        // A commit deletes the journal; a killed write leaves it (hot).
        assert!(
            j.exists(),
            "{args:?}: killed {delay_ms} ms into the write, but the write had already finished"
        );
        integrity_ok(db);
        assert_eq!(
            dump(db),
            before,
            "{args:?}: content changed after a kill {delay_ms} ms into the write"
        );
    }
}

fn base_index(dir: &Path) -> PathBuf {
    let db = dir.join("index.db");
    ok(
        &["index", "add", "--mode", "replaces"],
        &db,
        &bundle_dirs("etcd"),
    );
    ok(
        &["index", "add", "--mode", "semver"],
        &db,
        &bundle_dirs("kube-green"),
    );
    db
}

#[test]
fn killed_add_to_an_existing_index_leaves_the_old_content() {
    let t = tempfile::tempdir().expect("tmp");
    let db = base_index(t.path());
    let dirs = bundle_dirs("node-healthcheck-operator");
    // Without help: kill as soon as the journal shows up.
    let before = dump(&db);
    let mut child = cmd(&["index", "add", "--mode", "semver"], &db, &dirs)
        .spawn()
        .expect("spawn");
    let j = journal(&db);
    assert!(kill_when(&mut child, || j.exists(), Duration::ZERO));
    integrity_ok(&db);
    let after = dump(&db);
    if after != before {
        // The write finished between the poll and the kill: then it is whole.
        let ob = &after["operatorbundle"];
        assert_eq!(
            ob.len(),
            before["operatorbundle"].len() + dirs.len(),
            "partial content after a kill"
        );
        return;
    }
    // Several kill points, with each inserted bundle slowed down.
    slow_trigger(&db, "INSERT", "operatorbundle");
    let delays = [0, 30, 150, 500];
    kill_mid_write(&["index", "add", "--mode", "semver"], &db, &dirs, &delays);
    kill_mid_write(
        &["index", "add", "--mode", "replaces", "--permissive"],
        &db,
        &dirs,
        &delays,
    );
}

#[test]
fn killed_build_of_a_new_index_leaves_no_database_and_is_cleaned_up() {
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("new.db");
    let dirs = bundle_dirs("node-healthcheck-operator");
    let temps = |suffix: &str| -> Vec<String> {
        std::fs::read_dir(t.path())
            .expect("dir")
            .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".olm-catalog-index-new.db-") && n.ends_with(suffix))
            .collect()
    };
    for delay_ms in [0u64, 5, 20] {
        let mut child = cmd(&["index", "add", "--mode", "semver"], &db, &dirs)
            .spawn()
            .expect("spawn");
        let seen = kill_when(
            &mut child,
            || !temps(".db.tmp-journal").is_empty(),
            Duration::from_millis(delay_ms),
        );
        assert!(seen, "the build never began");
        if db.exists() {
            // Killed after the rename: then the database is whole.
            integrity_ok(&db);
            assert_eq!(dump(&db)["operatorbundle"].len(), dirs.len());
            std::fs::remove_file(&db).expect("rm");
        }
    }
    assert!(
        !temps(".db.tmp").is_empty(),
        "a killed build leaves its temporary file"
    );
    // The next run removes the leftovers: their lock is held by no one.
    ok(
        &["index", "add", "--mode", "replaces"],
        &t.path().join("other.db"),
        &bundle_dirs("etcd"),
    );
    assert!(temps(".db.tmp").is_empty(), "{:?}", temps(""));
    assert!(temps(".db.tmp-journal").is_empty(), "{:?}", temps(""));
}

#[test]
fn a_live_build_of_the_same_new_index_is_reported_as_locked() {
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("new.db");
    // Another process building new.db: its temporary file, flock-ed.
    let live = t.path().join(".olm-catalog-index-new.db-abcdef.db.tmp");
    let f = std::fs::File::create(&live).expect("create");
    use std::os::fd::AsRawFd;
    // SAFETY: flock on an open descriptor.
    assert_eq!(
        unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    let (s, e) = run(&["index", "add"], &db, &bundle_dirs("etcd"));
    assert!(!s);
    assert!(
        e.contains("new.db: database is locked by another process"),
        "{e}"
    );
    assert!(!db.exists());
    assert!(live.exists(), "a live build's file is left alone");
    // Another database in the same directory is not affected.
    ok(
        &["index", "add"],
        &t.path().join("b.db"),
        &bundle_dirs("etcd"),
    );
    assert!(live.exists(), "a live build's file is left alone");
    drop(f);
    ok(&["index", "add"], &db, &bundle_dirs("etcd"));
    assert!(!live.exists(), "a dead build's file is removed");
}

#[test]
fn two_builds_of_the_same_new_index_one_wins_the_other_is_told_it_is_locked() {
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("new.db");
    let dirs = bundle_dirs("etcd");
    let a = cmd(&["index", "add"], &db, &dirs).spawn().expect("a");
    let b = cmd(&["index", "add"], &db, &dirs).spawn().expect("b");
    let outs = [
        a.wait_with_output().expect("a"),
        b.wait_with_output().expect("b"),
    ];
    let won = outs.iter().filter(|o| o.status.success()).count();
    // Whichever way they overlap, one wins: if the second starts after the
    // first has finished, it is refused for bundles already present.
    assert_eq!(won, 1);
    let lost = outs.iter().find(|o| !o.status.success()).expect("loser");
    let e = String::from_utf8_lossy(&lost.stderr);
    assert!(
        e.contains("database is locked by another process") || e.contains("already"),
        "{e}"
    );
    integrity_ok(&db);
    assert_eq!(dump(&db)["operatorbundle"].len(), dirs.len());
}

#[test]
fn new_index_files_get_0644_less_the_umask() {
    let t = tempfile::tempdir().expect("tmp");
    for (umask, want) in [("022", 0o644), ("027", 0o640), ("077", 0o600)] {
        let db = t.path().join(format!("u{umask}.db"));
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
            .arg(common::bin())
            .args(["index", "add", "--database"])
            .arg(&db)
            .args(bundle_dirs("etcd"))
            .output()
            .expect("run");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mode = std::fs::metadata(&db).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, want, "umask {umask}: mode {mode:o}");
    }
}

#[test]
fn killed_rm_prune_and_deprecatetruncate_leave_the_old_content() {
    let t = tempfile::tempdir().expect("tmp");
    let db = base_index(t.path());
    slow_trigger(&db, "DELETE", "channel_entry");
    let delays = [0, 20, 60];
    kill_mid_write(&["index", "rm", "--packages", "etcd"], &db, &[], &delays);
    kill_mid_write(
        &["index", "prune", "--keep", "kube-green"],
        &db,
        &[],
        &delays,
    );
    // Deprecating 0.9.2 deletes a few entries only: kill early.
    kill_mid_write(
        &[
            "index",
            "deprecatetruncate",
            "--bundles",
            "etcdoperator.v0.9.2",
        ],
        &db,
        &[],
        &[0, 5],
    );
}

#[test]
fn failed_rm_prune_and_deprecatetruncate_change_nothing() {
    let t = tempfile::tempdir().expect("tmp");
    let db = base_index(t.path());
    let before = dump(&db);
    let c = Connection::open(&db).expect("open");
    // Fails the last step of each command, after its other changes.
    c.execute_batch(
        "CREATE TRIGGER olm_test_fail_pkg BEFORE DELETE ON package BEGIN SELECT RAISE(ABORT, 'injected failure'); END;
         CREATE TRIGGER olm_test_fail_dep BEFORE INSERT ON deprecated BEGIN SELECT RAISE(ABORT, 'injected failure'); END;",
    )
    .expect("triggers");
    drop(c);
    for args in [
        &["index", "rm", "--packages", "etcd"][..],
        &["index", "prune", "--keep", "kube-green"],
        &[
            "index",
            "deprecatetruncate",
            "--bundles",
            "etcdoperator.v0.9.2",
        ],
    ] {
        let (s, e) = run(args, &db, &[]);
        assert!(!s, "{args:?}");
        assert!(e.contains("injected failure"), "{args:?}: {e}");
        integrity_ok(&db);
        assert_eq!(dump(&db), before, "{args:?} left changes behind");
    }
    drop_trigger(&db, "olm_test_fail_pkg");
    drop_trigger(&db, "olm_test_fail_dep");
    // Without the triggers the same commands work.
    ok(
        &[
            "index",
            "deprecatetruncate",
            "--bundles",
            "etcdoperator.v0.9.2",
        ],
        &db,
        &[],
    );
    ok(&["index", "rm", "--packages", "etcd"], &db, &[]);
}

/// An index of an older opm schema (here version 12) is read as it is and
/// migrated by a write in the write's own transaction (opm migrates on
/// open, as a separate step): a write that fails leaves the old schema and
/// rows, one that succeeds leaves version 13.
#[test]
fn older_schema_versions_are_migrated_by_the_write_that_changes_them() {
    let t = tempfile::tempdir().expect("tmp");
    let db = base_index(t.path());
    let c = Connection::open(&db).expect("open");
    c.execute_batch("UPDATE schema_migrations SET version = 12")
        .expect("downgrade");
    drop(c);
    let before = dump(&db);
    // etcd is in the index already: the add fails after the migration ran.
    let (s, e) = run(&["index", "add"], &db, &bundle_dirs("etcd"));
    assert!(!s, "adding etcd twice must fail");
    assert!(e.contains("already in the index"), "{e}");
    assert_eq!(dump(&db), before, "a failed write leaves the old schema");
    let o = Command::new(common::bin())
        .arg("render")
        .arg(&db)
        .output()
        .expect("render");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(dump(&db), before, "readers do not change the file");
    ok(&["index", "rm", "--packages", "etcd"], &db, &[]);
    let c = Connection::open(&db).expect("open");
    let v: i64 = c
        .query_row("SELECT version FROM schema_migrations", [], |r| r.get(0))
        .expect("version");
    assert_eq!(v, 13);
}

#[test]
fn foreign_and_corrupt_files_get_a_clear_error() {
    let t = tempfile::tempdir().expect("tmp");
    let text = t.path().join("notes.db");
    std::fs::write(
        &text,
        b"this is not sqlite at all, just text padding padding",
    )
    .expect("w");
    let (s, e) = run(&["index", "add"], &text, &bundle_dirs("etcd"));
    assert!(!s);
    assert!(
        e.contains("notes.db: not an opm index database: the file is not an SQLite database"),
        "{e}"
    );
    let (s, e) = run(&["index", "list", "packages"], &text, &[]);
    assert!(!s);
    assert!(e.contains("notes.db: not an opm index database"), "{e}");
    let o = Command::new(common::bin())
        .arg("render")
        .arg(&text)
        .output()
        .expect("render");
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("notes.db: unsupported file type (text): render reads an SQLite index database"),
        "{e}"
    );

    // An SQLite database that is not an index.
    let other = t.path().join("other.db");
    Connection::open(&other)
        .expect("open")
        .execute_batch("CREATE TABLE t(x)")
        .expect("create");
    let (s, e) = run(&["index", "rm", "--packages", "x"], &other, &[]);
    assert!(!s);
    assert!(
        e.contains("other.db: not an opm index database: it is an SQLite database without the table(s) operatorbundle"),
        "{e}"
    );

    // An index whose pages were overwritten.
    let db = t.path().join("index.db");
    ok(&["index", "add"], &db, &bundle_dirs("etcd"));
    let mut bytes = std::fs::read(&db).expect("read");
    for b in bytes.iter_mut().skip(100).take(8000) {
        *b = 0xa5;
    }
    std::fs::write(&db, &bytes).expect("write");
    let (s, e) = run(&["index", "list", "bundles"], &db, &[]);
    assert!(!s);
    assert!(
        e.contains(
            "index.db: not an opm index database: the file is not an SQLite database or is corrupt"
        ),
        "{e}"
    );
}

#[test]
fn a_database_created_meanwhile_is_not_replaced_and_the_builder_is_told_it_is_locked() {
    let t = tempfile::tempdir().expect("tmp");
    let other = t.path().join("other.db");
    ok(&["index", "add"], &other, &bundle_dirs("etcd"));
    let db = t.path().join("new.db");
    let dirs = bundle_dirs("node-healthcheck-operator");
    let child = cmd(&["index", "add", "--mode", "semver"], &db, &dirs)
        .spawn()
        .expect("spawn");
    // Once its build has begun, another process puts a database there.
    let start = Instant::now();
    let building = || {
        std::fs::read_dir(t.path())
            .expect("dir")
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".db.tmp-journal"))
    };
    while !building() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_micros(100));
    }
    std::fs::copy(&other, &db).expect("copy");
    let o = child.wait_with_output().expect("wait");
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{e}");
    assert!(
        e.contains("new.db: database is locked by another process"),
        "{e}"
    );
    assert_eq!(dump(&db), dump(&other), "the other database was replaced");
    let leftovers: Vec<_> = std::fs::read_dir(t.path())
        .expect("dir")
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with(".olm-catalog-index-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
