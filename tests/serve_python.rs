//! Runs the Python gRPC client tests (tests/python, grpcio with stubs
//! generated from schema/registry.proto) against the built binary, so
//! `cargo test` covers them. Missing Python modules fail the test: install
//! them with `pip install -r tests/python/requirements.txt`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A small index in operator-registry's schema (pkg/sqlite/migrations, as of
/// the last migration, 013), written with plain SQL so the test does not depend on
/// our own index writer. Package `etcd`: channel `alpha` (default) is
/// v0.9.2 -> v0.9.0 -> v0.6.1 with v0.9.2 also skipping v0.9.1 (not in the
/// index), channel `beta` is v0.9.0 -> v0.6.1; package `other` has one
/// bundle without an image (its manifests are listed) that requires
/// EtcdCluster. Channel entries are laid out as opm's loader lays them out:
/// one entry per edge, skips included, with the depth from the head.
pub const OPM_SCHEMA: &str = r#"
CREATE TABLE schema_migrations (version bigint NOT NULL, timestamp DATETIME DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE operatorbundle (name TEXT PRIMARY KEY, csv TEXT, bundle TEXT, bundlepath TEXT,
  skiprange TEXT, version TEXT, replaces TEXT, skips TEXT, substitutesfor TEXT);
CREATE TABLE package (name TEXT PRIMARY KEY, default_channel TEXT,
  FOREIGN KEY(name, default_channel) REFERENCES channel(package_name, name) ON DELETE CASCADE);
CREATE TABLE channel (name TEXT, package_name TEXT, head_operatorbundle_name TEXT,
  PRIMARY KEY(name, package_name),
  FOREIGN KEY(head_operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE);
CREATE TABLE channel_entry (entry_id INTEGER PRIMARY KEY, channel_name TEXT, package_name TEXT,
  operatorbundle_name TEXT, replaces INTEGER, depth INTEGER,
  FOREIGN KEY(replaces) REFERENCES channel_entry(entry_id) DEFERRABLE INITIALLY DEFERRED,
  FOREIGN KEY(channel_name, package_name) REFERENCES channel(name, package_name) ON DELETE CASCADE);
CREATE TABLE api (group_name TEXT, version TEXT, kind TEXT, plural TEXT NOT NULL,
  PRIMARY KEY(group_name, version, kind));
CREATE TABLE api_provider (group_name TEXT, version TEXT, kind TEXT, operatorbundle_name TEXT,
  operatorbundle_version TEXT, operatorbundle_path TEXT,
  FOREIGN KEY(operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE,
  FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind) ON DELETE CASCADE);
CREATE TABLE api_requirer (group_name TEXT, version TEXT, kind TEXT, operatorbundle_name TEXT,
  operatorbundle_version TEXT, operatorbundle_path TEXT,
  FOREIGN KEY(operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE,
  FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind) ON DELETE CASCADE);
CREATE TABLE related_image (image TEXT, operatorbundle_name TEXT,
  FOREIGN KEY(operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE);
CREATE TABLE properties (type TEXT, value TEXT, operatorbundle_name TEXT,
  operatorbundle_version TEXT, operatorbundle_path TEXT,
  FOREIGN KEY(operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE);
CREATE TABLE dependencies (type TEXT, value TEXT, operatorbundle_name TEXT,
  operatorbundle_version TEXT, operatorbundle_path TEXT,
  FOREIGN KEY(operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE);
CREATE TABLE deprecated (operatorbundle_name TEXT PRIMARY KEY,
  FOREIGN KEY(operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE);
INSERT INTO schema_migrations (version) VALUES (13);
"#;

const DATA: &str = r#"
INSERT INTO package VALUES ('etcd', 'alpha'), ('other', 'stable');
INSERT INTO channel VALUES ('alpha', 'etcd', 'etcdoperator.v0.9.2'), ('beta', 'etcd', 'etcdoperator.v0.9.0'),
  ('stable', 'other', 'other.v1.0.0');
INSERT INTO operatorbundle VALUES
  ('etcdoperator.v0.9.2', NULL, '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"etcdclusters.etcd.database.coreos.com"}}{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"etcdoperator.v0.9.2"},"spec":{"displayName":"etcd <2>","version":"0.9.2"}}',
   'quay.io/coreos/etcd-operator@sha256:92', '>=0.9.0 <0.9.2', '0.9.2', 'etcdoperator.v0.9.0', 'etcdoperator.v0.9.1', ''),
  ('etcdoperator.v0.9.0', NULL, '{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"etcdoperator.v0.9.0"}}',
   'quay.io/coreos/etcd-operator@sha256:90', '', '0.9.0', 'etcdoperator.v0.6.1', '', ''),
  ('etcdoperator.v0.6.1', NULL, '{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"etcdoperator.v0.6.1"}}',
   'quay.io/coreos/etcd-operator@sha256:61', '', '0.6.1', '', '', ''),
  ('other.v1.0.0', NULL, '{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"other.v1.0.0"}}',
   '', '', '1.0.0', '', '', '');
INSERT INTO channel_entry VALUES
  (1, 'alpha', 'etcd', 'etcdoperator.v0.9.2', 2, 0),
  (2, 'alpha', 'etcd', 'etcdoperator.v0.9.1', NULL, 1),
  (3, 'alpha', 'etcd', 'etcdoperator.v0.9.2', 4, 0),
  (4, 'alpha', 'etcd', 'etcdoperator.v0.9.0', 5, 1),
  (5, 'alpha', 'etcd', 'etcdoperator.v0.6.1', NULL, 2),
  (6, 'beta', 'etcd', 'etcdoperator.v0.9.0', 7, 0),
  (7, 'beta', 'etcd', 'etcdoperator.v0.6.1', NULL, 1),
  (8, 'stable', 'other', 'other.v1.0.0', NULL, 0);
INSERT INTO api VALUES ('etcd.database.coreos.com', 'v1beta2', 'EtcdCluster', 'etcdclusters'),
  ('etcd.database.coreos.com', 'v1beta2', 'EtcdBackup', 'etcdbackups'),
  ('other.io', 'v1', 'Other', 'others');
INSERT INTO properties VALUES
  ('olm.package', '{"packageName":"etcd","version":"0.9.2"}', 'etcdoperator.v0.9.2', '0.9.2', 'quay.io/coreos/etcd-operator@sha256:92'),
  ('olm.gvk', '{"group":"etcd.database.coreos.com","kind":"EtcdCluster","version":"v1beta2"}', 'etcdoperator.v0.9.2', '0.9.2', 'quay.io/coreos/etcd-operator@sha256:92'),
  ('olm.gvk', '{"group":"etcd.database.coreos.com","kind":"EtcdBackup","version":"v1beta2"}', 'etcdoperator.v0.9.2', '0.9.2', 'quay.io/coreos/etcd-operator@sha256:92'),
  ('olm.package', '{"packageName":"etcd","version":"0.9.0"}', 'etcdoperator.v0.9.0', '0.9.0', 'quay.io/coreos/etcd-operator@sha256:90'),
  ('olm.gvk', '{"group":"etcd.database.coreos.com","kind":"EtcdCluster","version":"v1beta2"}', 'etcdoperator.v0.9.0', '0.9.0', 'quay.io/coreos/etcd-operator@sha256:90'),
  ('olm.package', '{"packageName":"etcd","version":"0.6.1"}', 'etcdoperator.v0.6.1', '0.6.1', 'quay.io/coreos/etcd-operator@sha256:61'),
  ('olm.gvk', '{"group":"etcd.database.coreos.com","kind":"EtcdCluster","version":"v1beta2"}', 'etcdoperator.v0.6.1', '0.6.1', 'quay.io/coreos/etcd-operator@sha256:61'),
  ('olm.package', '{"packageName":"other","version":"1.0.0"}', 'other.v1.0.0', '1.0.0', ''),
  ('olm.gvk', '{"group":"other.io","kind":"Other","version":"v1"}', 'other.v1.0.0', '1.0.0', '');
INSERT INTO dependencies VALUES
  ('olm.gvk', '{"group":"etcd.database.coreos.com","kind":"EtcdCluster","version":"v1beta2"}', 'other.v1.0.0', '1.0.0', ''),
  ('olm.package', '{"packageName":"etcd","version":">=0.9.0"}', 'other.v1.0.0', '1.0.0', '');
"#;

/// Writes the test index to `path`.
pub fn write_test_index(path: &Path) {
    let conn = rusqlite::Connection::open(path).expect("create index");
    conn.execute_batch(OPM_SCHEMA).expect("schema");
    // opm's own loader fills tables in whatever order inside one
    // transaction; foreign keys are checked at commit.
    conn.execute_batch(&format!(
        "BEGIN; PRAGMA defer_foreign_keys = ON; {DATA} COMMIT;"
    ))
    .expect("data");
}

fn python_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python")
}

fn require_python_modules() {
    let out = Command::new("python3")
        .args([
            "-c",
            "import grpc, grpc_tools.protoc, grpc_health.v1.health_pb2, grpc_reflection.v1alpha.reflection_pb2, yaml",
        ])
        .output()
        .expect("python3 must be installed to run the gRPC client tests");
    assert!(
        out.status.success(),
        "Python modules for the gRPC client tests are missing; run \
         `pip install -r tests/python/requirements.txt`:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub(crate) fn run_python(module: &str, envs: &[(&str, &Path)]) {
    require_python_modules();
    let mut cmd = Command::new("python3");
    cmd.args(["-m", "unittest", "-v", module])
        .current_dir(python_dir())
        .env("OLM_CATALOG_BIN", common::bin())
        .env("PYTHONDONTWRITEBYTECODE", "1");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run python3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "python tests {module} failed:\n{}\n{stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    // unittest prints "OK" and the count; make sure tests really ran.
    assert!(stderr.contains("\nOK"), "{stderr}");
    assert!(!stderr.contains("Ran 0 tests"), "{stderr}");
}

#[test]
fn fbc_backend_over_corpus_catalogs() {
    let catalogs = common::corpus().join("catalogs/v4.18");
    run_python("test_serve_fbc", &[("OLM_CATALOG_FBC", &catalogs)]);
}

#[test]
fn sqlite_backend_over_test_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("index.db");
    write_test_index(&db);
    run_python("test_serve_sqlite", &[("OLM_CATALOG_SQLITE", &db)]);
}

/// An index built by `olm-catalog index add --from-fbc` from the corpus's
/// real catalogs, served and checked against answers the Python side works
/// out from those catalog files and opm's SQLite rules.
#[test]
fn sqlite_backend_over_corpus_index() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("index.db");
    let catalogs = common::corpus().join("catalogs/v4.18");
    let out = Command::new(common::bin())
        .args(["index", "add", "--database"])
        .arg(&db)
        .arg("--from-fbc")
        .arg(&catalogs)
        .output()
        .expect("run olm-catalog index add");
    assert!(
        out.status.success(),
        "index add --from-fbc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    run_python(
        "test_serve_sqlite_corpus",
        &[("OLM_CATALOG_FBC", &catalogs), ("OLM_CATALOG_SQLITE", &db)],
    );
}

#[test]
fn robustness_shutdown_watch_limits_and_bad_catalogs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("index.db");
    write_test_index(&db);
    let catalogs = common::corpus().join("catalogs/v4.18");
    run_python(
        "test_serve_robust",
        &[
            ("OLM_CATALOG_SQLITE", &db),
            ("OLM_CATALOG_FBC", &catalogs),
            ("OLM_CATALOG_TMP", dir.path()),
        ],
    );
}

/// Runs one class of test_serve_golden: our answers compared item by item
/// with what the real opm answered (../shared/opm-golden, see its README).
fn golden_case(class: &str) {
    golden_case_with(class, &[]);
}

fn golden_case_with(class: &str, extra: &[(&str, &Path)]) {
    let catalogs = common::corpus().join("catalogs/v4.18");
    let golden = common::golden();
    let mut envs: Vec<(&str, &Path)> = vec![
        ("OLM_CATALOG_GOLDEN", &golden),
        ("OLM_CATALOG_FBC", &catalogs),
    ];
    envs.extend_from_slice(extra);
    run_python(&format!("test_serve_golden.{class}"), &envs);
}

/// Where no temporary directory can be made (an image without `/tmp`, a
/// read-only root file system), the SQLite backend keeps its lookup tables
/// and the FBC backend its manifests in memory, and both answer the same.
#[test]
fn golden_sqlite_etcd_answers_as_opm_without_a_temporary_directory() {
    let missing = Path::new("/nonexistent/olm-catalog-test-tmp");
    assert!(!missing.exists());
    golden_case_with(
        "GoldenSqliteEtcd",
        &[("OLM_CATALOG_SERVER_TMPDIR", missing)],
    );
    golden_case_with(
        "GoldenSqliteAckEcr",
        &[("OLM_CATALOG_SERVER_TMPDIR", missing)],
    );
    // The FBC backend keeps its manifests in memory instead of a spool file.
    golden_case_with(
        "GoldenFbcKubeGreen",
        &[("OLM_CATALOG_SERVER_TMPDIR", missing)],
    );
}

/// opm's own etcd index.db (replaces mode), served directly.
#[test]
fn golden_sqlite_etcd_answers_as_opm() {
    golden_case("GoldenSqliteEtcd");
}

/// opm's own ack-ecr-controller index.db (semver mode: manifests NULL for
/// bundles that head no channel), served directly.
#[test]
fn golden_sqlite_ack_ecr_controller_answers_as_opm() {
    golden_case("GoldenSqliteAckEcr");
}

/// The corpus's kube-green FBC, answered as opm v1.73.0 does.
#[test]
fn golden_fbc_kube_green_answers_as_opm() {
    golden_case("GoldenFbcKubeGreen");
}

/// The corpus's kepler-operator FBC, answered as opm v1.73.0 does.
#[test]
fn golden_fbc_kepler_operator_answers_as_opm() {
    golden_case("GoldenFbcKepler");
}

/// The v1.73.0 expectation built from a golden dump, on a case worked by hand.
#[test]
fn golden_v1_73_expectation_is_built_as_opm_builds_it() {
    run_python("test_serve_golden.ExpectV173", &[]);
}
