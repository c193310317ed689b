//! `index add` of bundle image references: bundles pushed to a real
//! registry (Debian's docker-registry on loopback) are pulled, unpacked and
//! loaded; the index records each bundle by its image reference, as opm does.
use crate::common;
use crate::registry;

use std::process::Command;

use registry::Registry;

use common::olm;

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

/// `index add REF... --username U --password-stdin --tag REF` against a
/// registry that requires credentials for everything: the password is read
/// once and serves the pulls and the push; without `--tag` it serves the
/// pulls (the one registry the images come from).
#[test]
fn index_add_with_credentials_pulls_and_pushes() {
    let reg = Registry::start_with_auth("olm", "s3cret");
    let tmp = tempfile::tempdir().expect("tempdir");
    let creds = ["--username", "olm", "--password-stdin"];
    let mut refs = Vec::new();
    for v in ["1.0.0", "1.0.1"] {
        let dir = common::fixtures().join("graph/pkg-semver").join(v);
        let r = format!("{}/demo/demo-bundle:v{v}", reg.host());
        let mut args = vec!["bundle", "build", dir.to_str().expect("utf-8"), "--tag", &r];
        args.extend(creds);
        args.push("-q");
        let (code, _, err) = common::run_cli(&args, &[], Some("s3cret\n"));
        assert_eq!(code, 0, "{err}");
        refs.push(r);
    }
    let db = tmp.path().join("index.db");
    let db = db.to_str().expect("utf-8");
    let index_ref = format!("{}/demo/catalog:auth", reg.host());
    let mut args = vec!["index", "add", "--database", db, "--mode", "semver"];
    args.extend(refs.iter().map(String::as_str));
    args.extend(["--tag", &index_ref, "-q"]);

    // No credentials: a clear auth error, no database written.
    let (code, _, err) = common::run_cli(&args, &[], None);
    assert_eq!(code, 2);
    assert!(err.contains("authentication to"), "{err}");
    assert!(!std::path::Path::new(db).exists());

    args.extend(creds);
    let (code, out, err) = common::run_cli(&args, &[], Some("s3cret\n"));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&format!("{index_ref}@sha256:")), "{out}");
    let inspect = registry::skopeo(&[
        "inspect",
        "--tls-verify=false",
        "--creds",
        "olm:s3cret",
        &format!("docker://{index_ref}"),
    ]);
    assert!(
        inspect.contains("operators.operatorframework.io.index.database.v1"),
        "{inspect}"
    );

    // Without --tag the credential is for the images' registry.
    let db2 = tmp.path().join("index2.db");
    let db2 = db2.to_str().expect("utf-8");
    let mut args = vec!["index", "add", "--database", db2, "--mode", "semver"];
    args.extend(refs.iter().map(String::as_str));
    args.extend(creds);
    let (code, _, err) = common::run_cli(&args, &[], Some("s3cret\n"));
    assert_eq!(code, 0, "{err}");
    let conn = rusqlite::Connection::open(db2).expect("open index");
    let n: i64 = conn
        .query_row("SELECT count(*) FROM operatorbundle", [], |r| r.get(0))
        .expect("count");
    assert_eq!(n, 2);

    // A wrong password is named as such.
    let db3 = tmp.path().join("index3.db");
    let db3 = db3.to_str().expect("utf-8");
    let mut args = vec!["index", "add", "--database", db3];
    args.push(refs[0].as_str());
    args.extend(creds);
    let (code, _, err) = common::run_cli(&args, &[], Some("wrong\n"));
    assert_eq!(code, 2);
    assert!(
        err.contains("rejected the credentials of user `olm`"),
        "{err}"
    );
}

/// Pushes a bundle image whose layer has `extra` entries beside a valid
/// bundle (the etcd-like fixture's files), built by hand as an attacker would.
async fn push_crafted_bundle(reference: &str, extra: &dyn Fn(&mut tar::Builder<Vec<u8>>)) {
    use olm_catalog::oci::build::{BlobItem, BlobSource, ImageSet};
    use olm_catalog::oci::media::{self, Descriptor, Format, ImageManifest};
    let dir = common::fixtures().join("graph/pkg-semver/1.0.0");
    let mut b = tar::Builder::new(Vec::new());
    for rel in [
        "manifests/demo.clusterserviceversion.yaml",
        "metadata/annotations.yaml",
    ] {
        let data = std::fs::read(dir.join(rel)).expect("fixture");
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, rel, data.as_slice()).expect("append");
    }
    extra(&mut b);
    let tar_bytes = b.into_inner().expect("tar");
    let blob = olm_catalog::oci::layer::gzip(&tar_bytes).expect("gzip");
    let layer = Descriptor::of(Format::Oci.layer_gzip(), &blob);
    let config = serde_json::json!({
        "architecture": "amd64", "os": "linux",
        "config": {"Labels": {
            "operators.operatorframework.io.bundle.package.v1": "demo",
            "operators.operatorframework.io.bundle.channels.v1": "stable",
            "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
            "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
            "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
        }},
        "rootfs": {"type": "layers", "diff_ids": [media::sha256_digest(&tar_bytes)]},
    });
    let config_bytes = media::to_json_bytes(&config);
    let config_desc = Descriptor::of(Format::Oci.config(), &config_bytes);
    let manifest = ImageManifest {
        schema_version: 2,
        media_type: Some(Format::Oci.manifest().to_string()),
        artifact_type: None,
        config: config_desc.clone(),
        layers: vec![layer.clone()],
        subject: None,
        annotations: None,
    };
    let top_bytes = media::to_json_bytes(&manifest);
    let set = ImageSet {
        blobs: vec![
            BlobItem {
                descriptor: layer,
                source: BlobSource::Data(olm_catalog::oci::BlobBody::from(blob)),
            },
            BlobItem {
                descriptor: config_desc,
                source: BlobSource::Data(olm_catalog::oci::BlobBody::from(config_bytes)),
            },
        ],
        children: Vec::new(),
        top: Descriptor::of(Format::Oci.manifest(), &top_bytes),
        top_bytes,
    };
    let client = olm_catalog::oci::RegistryClient::from_environment().expect("client");
    let dest: olm_catalog::oci::ImageRef = reference.parse().expect("ref");
    olm_catalog::oci::push_image(
        &client,
        &set,
        &dest,
        olm_catalog::oci::progress::ProgressMode::Off,
    )
    .await
    .expect("push the crafted image");
}

/// Malicious bundle images in a registry: a symbolic link and a hard link
/// leaving the bundle, and `..` in a name. `index add` names the image and
/// the problem, exits 2, and leaves the index as it was.
#[test]
fn malicious_bundle_images_leave_the_index_unchanged() {
    let reg = Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let good = format!("{}/demo/good:v1", reg.host());
    rt.block_on(push_crafted_bundle(&good, &|_| {}));
    let db = tmp.path().join("index.db");
    let db = db.to_str().expect("utf-8");
    let o = olm(&["index", "add", "--database", db, "--mode", "semver", &good]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let before = std::fs::read(db).expect("read db");

    let symlink = format!("{}/demo/evil:symlink", reg.host());
    rt.block_on(push_crafted_bundle(&symlink, &|b| {
        let mut h = tar::Header::new_gnu();
        h.set_size(0);
        h.set_entry_type(tar::EntryType::Symlink);
        b.append_link(&mut h, "manifests/passwd.yaml", "../../../etc/passwd")
            .expect("link");
    }));
    let hardlink = format!("{}/demo/evil:hardlink", reg.host());
    rt.block_on(push_crafted_bundle(&hardlink, &|b| {
        let mut h = tar::Header::new_gnu();
        h.set_size(5);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, "etc/secret", &b"s3cr3"[..])
            .expect("append");
        let mut h = tar::Header::new_gnu();
        h.set_size(0);
        h.set_entry_type(tar::EntryType::Link);
        b.append_link(&mut h, "manifests/secret.yaml", "etc/secret")
            .expect("link");
    }));
    let dotdot = format!("{}/demo/evil:dotdot", reg.host());
    rt.block_on(push_crafted_bundle(&dotdot, &|b| {
        let mut h = tar::Header::new_gnu();
        h.set_size(1);
        h.set_entry_type(tar::EntryType::Regular);
        let name = b"manifests/../../../tmp/x";
        h.as_old_mut().name[..name.len()].copy_from_slice(name);
        h.set_cksum();
        b.append(&h, &b"x"[..]).expect("append");
    }));
    for (reference, why) in [
        (&symlink, "outside"),
        (&hardlink, "hard link"),
        (&dotdot, ".."),
    ] {
        let o = olm(&[
            "index",
            "add",
            "--database",
            db,
            "--mode",
            "semver",
            reference,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{reference}: {err}");
        assert!(
            err.contains(reference.as_str()) && err.contains(why),
            "{reference}: {err}"
        );
        assert_eq!(
            before,
            std::fs::read(db).expect("read db"),
            "{reference} changed the index"
        );
    }
}

/// The rows of opm's tables in `db`, image references rewritten to opm's
/// golden registry (`127.0.0.1:5000`); channel entries by names (their ids
/// follow Go's map order in opm).
fn opm_tables(db: &std::path::Path, host: &str) -> Vec<(&'static str, Vec<Vec<String>>)> {
    let replace = [(host, "127.0.0.1:5000")];
    let mut out = Vec::new();
    for t in [
        "operatorbundle",
        "package",
        "channel",
        "api",
        "api_provider",
        "api_requirer",
        "related_image",
        "dependencies",
        "deprecated",
    ] {
        let mut rows = common::table_text(db, t, &replace);
        rows.sort();
        out.push((t, rows));
    }
    let entries: Vec<Vec<String>> = common::rows(
        db,
        "SELECT e.channel_name, e.package_name, e.operatorbundle_name, coalesce(r.operatorbundle_name, 'NULL'), e.depth
         FROM channel_entry e LEFT JOIN channel_entry r ON r.entry_id = e.replaces",
    )
    .into_iter()
    .collect();
    out.push(("channel_entry", entries));
    out
}

/// `index add` of the golden packages' bundle images, pushed by our `bundle
/// build` to a local registry in `bundle-images.txt` order with opm's mode
/// (etcd: replaces, ack-ecr-controller: semver), gives opm's `index.db`
/// table by table and opm's `render.json`. One difference is kept on
/// purpose (docs/index.md): opm writes another identical `olm.package`
/// row each time a channel walk visits a bundle; here each property row is
/// written once (opm's readers `SELECT DISTINCT` them). csv/bundle are TEXT
/// here and BLOB in opm's file: the same bytes.
#[test]
fn index_add_from_images_gives_opm_golden_tables_and_render() {
    let reg = Registry::start();
    let host = reg.host();
    let tmp = tempfile::tempdir().expect("tempdir");
    for (pkg, mode) in [("etcd", "replaces"), ("ack-ecr-controller", "semver")] {
        let golden = common::golden().join("sqlite").join(pkg);
        let list = std::fs::read_to_string(golden.join("bundle-images.txt")).expect("list");
        let mut lines = String::new();
        let mut refs = Vec::new();
        for l in list.lines().filter(|l| !l.trim().is_empty()) {
            let tagged = l.split('@').next().expect("ref");
            let version = tagged.rsplit(':').next().expect("tag");
            let dir = common::corpus().join("operators").join(pkg).join(version);
            let r = tagged.replace("127.0.0.1:5000", &host);
            lines.push_str(&format!("{} {r}\n", dir.display()));
            refs.push(r);
        }
        let file = tmp.path().join(format!("{pkg}.txt"));
        std::fs::write(&file, lines).expect("bundles file");
        let o = olm(&[
            "bundle",
            "build",
            "--bundles-file",
            file.to_str().expect("utf-8"),
            "-q",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let db = tmp.path().join(format!("{pkg}.db"));
        let mut args = vec![
            "index",
            "add",
            "--database",
            db.to_str().expect("utf-8"),
            "--mode",
            mode,
        ];
        args.extend(refs.iter().map(String::as_str));
        let o = olm(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

        let opm_db = golden.join("index.db");
        let ours = opm_tables(&db, &host);
        let theirs = opm_tables(&opm_db, &host);
        for ((t, a), (_, b)) in ours.iter().zip(&theirs) {
            assert!(
                a == b,
                "{pkg}: table {t} differs from opm's:\nours: {a:#?}\nopm:  {b:#?}"
            );
        }
        // properties: the same rows; opm's extra copies are olm.package rows.
        let replace = [(host.as_str(), "127.0.0.1:5000")];
        let a = common::table_text(&db, "properties", &replace);
        let b = common::table_text(&opm_db, "properties", &replace);
        let set =
            |v: &Vec<Vec<String>>| v.iter().cloned().collect::<std::collections::BTreeSet<_>>();
        assert_eq!(set(&a), set(&b), "{pkg}: properties");
        assert_eq!(a.len(), set(&a).len(), "{pkg}: each property row once");
        let mut extra = b.clone();
        for row in set(&b) {
            let i = extra.iter().position(|r| *r == row).expect("row");
            extra.remove(i);
        }
        assert!(
            extra.iter().all(|r| r[0] == "olm.package"),
            "{pkg}: opm's duplicates are olm.package rows: {extra:?}"
        );
        // The same schema and version as opm's.
        let version = common::table_text(&db, "schema_migrations", &[]);
        assert_eq!(version, [["13", "1970-01-01 00:00:00"]]);

        let o = olm(&["render", db.to_str().expect("utf-8"), "-o", "json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        common::assert_render_matches(
            &String::from_utf8_lossy(&o.stdout),
            &golden.join("render.json"),
            &replace,
        );
    }
}
