//! The manifests an index stores are served without a decode and re-encode
//! when they already are what opm's re-encoding gives (`gojson::canonical_values`).
//! Over every corpus bundle, stored by `olm-catalog index add`, the fast path
//! must accept the stored column and give exactly the objects the decoding
//! path gives.

use crate::common;

use std::process::Command;

use olm_catalog::gojson;

#[test]
fn stored_corpus_manifests_take_the_fast_path_with_the_same_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("index.db");
    let list = dir.path().join("bundles.txt");
    let dirs = common::corpus_bundle_dirs();
    assert!(dirs.len() > 700, "corpus bundles: {}", dirs.len());
    let text: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    std::fs::write(&list, text.join("\n")).expect("write list");
    let out = Command::new(common::bin())
        .args(["index", "add", "-q", "--permissive", "--keep-content", "-d"])
        .arg(&db)
        .arg("--bundles-file")
        .arg(&list)
        .output()
        .expect("run index add");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let conn = rusqlite::Connection::open(&db).expect("open index");
    let mut st = conn
        .prepare(
            "SELECT name, bundle FROM operatorbundle WHERE bundle IS NOT NULL AND bundle != ''",
        )
        .expect("query");
    let rows: Vec<(String, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("read rows");
    assert!(rows.len() > 700, "bundles with manifests: {}", rows.len());
    let mut csvs = 0;
    for (name, column) in &rows {
        let fast = gojson::canonical_values(column)
            .unwrap_or_else(|| panic!("{name}: stored manifests not taken as canonical"));
        let slow: Vec<serde_json::Value> = serde_json::Deserializer::from_str(column)
            .into_iter::<serde_json::Value>()
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(fast.len(), slow.len(), "{name}");
        for (f, v) in fast.iter().zip(&slow) {
            assert_eq!(f.text, gojson::to_string(v), "{name}");
            assert_eq!(
                f.kind,
                v.get("kind").and_then(serde_json::Value::as_str),
                "{name}"
            );
            if f.kind == Some("ClusterServiceVersion") {
                csvs += 1;
            }
        }
    }
    assert!(csvs >= rows.len(), "every bundle has a CSV: {csvs}");
}
