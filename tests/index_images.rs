//! `index add` of bundle image references: bundles pushed to a real
//! registry (Debian's docker-registry on loopback) are pulled, unpacked and
//! loaded; the index records each bundle by its image reference, as opm does.
mod common;
#[path = "common/registry.rs"]
#[allow(dead_code)]
mod registry;

use std::process::Command;

use registry::Registry;

fn olm(args: &[&str]) -> std::process::Output {
    Command::new(common::bin())
        .args(args)
        .output()
        .expect("run olm-catalog")
}

#[test]
fn index_add_pulls_bundle_images_from_a_registry() {
    let reg = Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let versions = ["1.0.0", "1.0.1", "1.1.0"];
    let mut refs = Vec::new();
    for v in versions {
        let dir = common::fixtures().join("graph/pkg-semver").join(v);
        let r = format!("{}/demo/demo-bundle:v{v}", reg.host());
        let o = olm(&[
            "bundle",
            "build",
            dir.to_str().expect("utf-8"),
            "--tag",
            &r,
            "-q",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        refs.push(r);
    }
    let db = tmp.path().join("index.db");
    let db = db.to_str().expect("utf-8");
    let mut args = vec!["index", "add", "--database", db, "--mode", "semver"];
    // Reverse order: the final content must not depend on the order of adds.
    args.extend(refs.iter().rev().map(String::as_str));
    let o = olm(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let conn = rusqlite::Connection::open(db).expect("open index");
    let mut stmt = conn
        .prepare(
            "SELECT name, bundlepath, COALESCE(length(csv), 0) FROM operatorbundle ORDER BY name",
        )
        .expect("query");
    let rows: Vec<(String, String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("rows");
    let names: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names, ["demo.v1.0.0", "demo.v1.0.1", "demo.v1.1.0"]);
    for (i, (_, path, csv_len)) in rows.iter().enumerate() {
        assert_eq!(path, &refs[i], "bundlepath is the image reference");
        // opm clears the CSV of bundles that head no channel in semver mode.
        if i + 1 == rows.len() {
            assert!(*csv_len > 0, "the head keeps its CSV");
        } else {
            assert_eq!(*csv_len, 0, "{} is not a head and has no CSV", rows[i].0);
        }
    }

    // export: the cleared bundles come from their images (as opm's export
    // pulls them), byte for byte as built; the head from the index.
    let out = tmp.path().join("export");
    let o = olm(&[
        "index",
        "export",
        "--database",
        db,
        "--package",
        "demo",
        "--to",
        out.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("2 pulled from their images"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for v in ["1.0.0", "1.0.1"] {
        let src = common::fixtures().join("graph/pkg-semver").join(v);
        for f in [
            "manifests/demo.clusterserviceversion.yaml",
            "metadata/annotations.yaml",
        ] {
            assert_eq!(
                std::fs::read(out.join("demo").join(v).join(f)).expect("exported"),
                std::fs::read(src.join(f)).expect("fixture"),
                "{v}/{f}"
            );
        }
    }
    assert!(out.join("demo/1.1.0/metadata/annotations.yaml").is_file());
    let pkg = std::fs::read_to_string(out.join("demo/package.yaml")).expect("package.yaml");
    assert!(pkg.contains("currentCSV: demo.v1.1.0"), "{pkg}");

    // --tag builds and pushes the index image, --sign signs it.
    let keys = tmp.path().join("k");
    let keys = keys.to_str().expect("utf-8");
    let o = Command::new(common::bin())
        .args(["sign", "generate-key-pair", "--output-prefix", keys])
        .env("COSIGN_PASSWORD", "pw")
        .output()
        .expect("keygen");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let extra = common::fixtures().join("graph/pkg-semver/2.0.0-rc.1");
    let index_ref = format!("{}/demo/catalog:v1", reg.host());
    let key = format!("{keys}.key");
    let o = Command::new(common::bin())
        .args(["index", "add", "--database", db, "--mode", "semver"])
        .arg(&extra)
        .args(["--tag", &index_ref, "-q", "--sign", "--key", &key])
        .env("COSIGN_PASSWORD", "pw")
        .output()
        .expect("index add --tag");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let inspect = registry::skopeo(&[
        "inspect",
        "--tls-verify=false",
        &format!("docker://{index_ref}"),
    ]);
    assert!(
        inspect.contains("operators.operatorframework.io.index.database.v1"),
        "{inspect}"
    );
    let public = format!("{keys}.pub");
    let o = olm(&["verify", &index_ref, "--key", &public]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // A reference that is not there fails cleanly and leaves the index as it was.
    let before = std::fs::read(db).expect("read db");
    let missing = format!("{}/demo/demo-bundle:v9.9.9", reg.host());
    let o = olm(&["index", "add", "--database", db, &missing]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&missing), "{err}");
    assert_eq!(before, std::fs::read(db).expect("read db"));
}
