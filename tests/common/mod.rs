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

/// Runs the binary with `args` in the test's own environment; its output.
pub fn olm(args: &[&str]) -> std::process::Output {
    std::process::Command::new(bin())
        .args(args)
        .output()
        .expect("run olm-catalog")
}

/// [`olm`] as (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = olm(args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
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
        // A command may fail (or finish) before it reads its input: a
        // closed pipe is its answer, not the test's failure.
        if let Err(e) = child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
        {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
        }
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("wait for olm-catalog");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every row of `table` in the SQLite file `db` (rowid order), each column as
/// text whatever its storage class (opm writes some TEXT columns as BLOBs;
/// NULL as "NULL"), with `replace` applied to each value (e.g. an image
/// prefix).
pub fn table_text(db: &Path, table: &str, replace: &[(&str, &str)]) -> Vec<Vec<String>> {
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open");
    let mut st = c
        .prepare(&format!("SELECT * FROM {table} ORDER BY rowid"))
        .expect("prepare");
    let n = st.column_count();
    st.query_map([], |r| {
        Ok((0..n)
            .map(|i| {
                let mut v = match r.get_ref(i).expect("col") {
                    rusqlite::types::ValueRef::Null => "NULL".to_string(),
                    rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                    rusqlite::types::ValueRef::Real(v) => v.to_string(),
                    rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
                        String::from_utf8_lossy(t).into_owned()
                    }
                };
                for (a, b) in replace {
                    v = v.replace(a, b);
                }
                v
            })
            .collect())
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

/// The objects of a JSON stream (what `render -o json` writes).
pub fn json_stream(text: &str) -> Vec<serde_json::Value> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<serde_json::Value>()
        .collect::<Result<_, _>>()
        .expect("a JSON stream")
}

/// Checks that the FBC stream `ours` (after `replace` on every string)
/// holds the objects of opm's `render.json` at `golden`, item by item:
/// same set of (schema, package, name), and each object equal.
pub fn assert_render_matches(ours: &str, golden: &Path, replace: &[(&str, &str)]) {
    fn key(v: &serde_json::Value) -> (String, String, String) {
        let f = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
        let pkg = if f("schema") == "olm.package" {
            f("name")
        } else {
            f("package")
        };
        (f("schema"), pkg, f("name"))
    }
    fn rewrite(v: &mut serde_json::Value, replace: &[(&str, &str)]) {
        match v {
            serde_json::Value::String(s) => {
                for (a, b) in replace {
                    *s = s.replace(a, b);
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| rewrite(x, replace)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|x| rewrite(x, replace)),
            _ => {}
        }
    }
    // The golden files come from opm v1.26.5, whose render put a bundle's
    // olm.bundle.object properties in manifest order (renderBundleObjects);
    // v1.73.0, the behaviour matched here, keeps the model's order (every
    // property sorted by type, then value) and moves them to the end
    // (moveBundleObjectsToEndOfPropertySlices). Only that order differs.
    fn objects_in_value_order(v: &mut serde_json::Value) {
        if let Some(props) = v.get_mut("properties").and_then(|p| p.as_array_mut()) {
            let n = props
                .iter()
                .filter(|p| p["type"] == "olm.bundle.object")
                .count();
            let start = props.len() - n;
            if props[start..]
                .iter()
                .all(|p| p["type"] == "olm.bundle.object")
            {
                props[start..]
                    .sort_by_key(|p| p["value"]["data"].as_str().unwrap_or("").to_string());
            }
        }
    }
    let want: std::collections::BTreeMap<_, _> =
        json_stream(&std::fs::read_to_string(golden).expect("golden render.json"))
            .into_iter()
            .map(|mut v| {
                objects_in_value_order(&mut v);
                (key(&v), v)
            })
            .collect();
    let got: std::collections::BTreeMap<_, _> = json_stream(ours)
        .into_iter()
        .map(|mut v| {
            rewrite(&mut v, replace);
            (key(&v), v)
        })
        .collect();
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "the same packages, channels and bundles as opm render"
    );
    let short = |v: Option<&serde_json::Value>| {
        let s = v.map(|v| v.to_string()).unwrap_or_else(|| "(none)".into());
        if s.chars().count() > 1500 {
            format!("{}…", s.chars().take(1500).collect::<String>())
        } else {
            s
        }
    };
    let mut diffs = Vec::new();
    for (k, w) in &want {
        let g = &got[k];
        if g == w {
            continue;
        }
        let mut fields: std::collections::BTreeSet<&String> = std::collections::BTreeSet::new();
        if let (Some(go), Some(wo)) = (g.as_object(), w.as_object()) {
            fields.extend(go.keys().chain(wo.keys()));
            for f in fields {
                if go.get(f) != wo.get(f) {
                    diffs.push(format!(
                        "{k:?} field {f}:\nours: {}\nopm:  {}",
                        short(go.get(f)),
                        short(wo.get(f))
                    ));
                }
            }
        }
    }
    assert!(
        diffs.is_empty(),
        "differs from opm render:\n{}",
        diffs.join("\n")
    );
}

/// Copies the directory tree `from` to `to` (made if missing), following
/// symbolic links.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).expect("copy");
        }
    }
}
