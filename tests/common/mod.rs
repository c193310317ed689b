//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The community-operators-prod corpus. CI has it beside the clone at
/// `../shared`; `OLM_CATALOG_CORPUS` overrides. Missing corpus fails the test:
/// nothing is skipped.
pub fn corpus() -> PathBuf {
    if let Ok(p) = std::env::var("OLM_CATALOG_CORPUS") {
        return PathBuf::from(p);
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for base in manifest.ancestors().skip(1) {
        let p = base.join("shared/corpus/community-operators-prod");
        if p.is_dir() {
            return p;
        }
    }
    panic!(
        "corpus not found: expected ../shared/corpus/community-operators-prod beside the repository \
         (or set OLM_CATALOG_CORPUS)"
    );
}

/// What the real opm answered (`../shared/opm-golden`, see its README); CI has
/// it beside the clone like the corpus, `OLM_CATALOG_GOLDEN` overrides.
/// Missing golden data fails the test.
pub fn golden() -> PathBuf {
    if let Ok(p) = std::env::var("OLM_CATALOG_GOLDEN") {
        return PathBuf::from(p);
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for base in manifest.ancestors().skip(1) {
        let p = base.join("shared/opm-golden");
        if p.is_dir() {
            return p;
        }
    }
    panic!("golden data not found: expected ../shared/opm-golden beside the repository (or set OLM_CATALOG_GOLDEN)");
}

/// The bundle directories of corpus package `pkg`, sorted by path: each
/// `VERSION/` holding `manifests/`, or `VERSION/bundle/` where the bundle
/// sits one level deeper (rabbitmq-messaging-topology-operator).
pub fn package_bundle_dirs(pkg: &str) -> Vec<PathBuf> {
    let dir = corpus().join("operators").join(pkg);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).expect("package dir") {
        let p = e.expect("entry").path();
        if p.join("manifests").is_dir() {
            out.push(p);
        } else if p.join("bundle/manifests").is_dir() {
            out.push(p.join("bundle"));
        }
    }
    out.sort();
    out
}

/// [`package_bundle_dirs`] of every corpus package, packages by name.
pub fn corpus_bundle_dirs() -> Vec<PathBuf> {
    let mut pkgs: Vec<String> = std::fs::read_dir(corpus().join("operators"))
        .expect("corpus operators")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    pkgs.sort();
    pkgs.iter().flat_map(|p| package_bundle_dirs(p)).collect()
}

/// The rows `sql` selects from the SQLite file `db`, every column as text
/// (NULL as "NULL"), as a set: table contents compared whatever their order.
pub fn rows(db: &Path, sql: &str) -> BTreeSet<Vec<String>> {
    let c = rusqlite::Connection::open(db).expect("open");
    let mut st = c.prepare(sql).expect("prepare");
    let n = st.column_count();
    st.query_map([], |r| {
        Ok((0..n)
            .map(|i| match r.get_ref(i).expect("col") {
                rusqlite::types::ValueRef::Null => "NULL".to_string(),
                rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                rusqlite::types::ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
                other => format!("{other:?}"),
            })
            .collect())
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

/// The repository's fixtures directory.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The built `olm-catalog` binary.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_olm-catalog"))
}

/// Runs the binary with `args` and `stdin`, in an environment with no
/// registry credentials or CA settings of its own (HOME points nowhere) plus
/// `env`. Returns (exit code, stdout, stderr).
pub fn run_cli(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> (i32, String, String) {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env_remove("REGISTRY_AUTH_FILE")
        .env_remove("DOCKER_CONFIG")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR")
        .env("HOME", "/nonexistent")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("run olm-catalog");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("wait for olm-catalog");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
