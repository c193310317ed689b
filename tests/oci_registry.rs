//! Bundle and index images against a real registry (Debian's
//! docker-registry), read back with skopeo and with our own pull.
use crate::common;
use crate::registry;

use std::path::{Path, PathBuf};

use olm_catalog::bundle::Bundle;
use olm_catalog::oci::{self, ImageRef};
use registry::{skopeo, Registry};

fn etcd() -> PathBuf {
    common::corpus().join("operators/etcd/0.9.4")
}

/// Runs the binary; returns (exit code, stdout, stderr).
fn run(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    common::run_cli(args, env, None)
}

fn build(dir: &Path, tag: &str, extra: &[&str]) -> String {
    let mut args = vec!["bundle", "build", dir.to_str().expect("utf8"), "--tag", tag];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args, &[]);
    assert_eq!(code, 0, "bundle build {tag} failed: {err}");
    let digest = out
        .trim()
        .rsplit_once('@')
        .expect("ref@digest on stdout")
        .1
        .to_string();
    assert!(digest.starts_with("sha256:"), "{out}");
    digest
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).expect("json")
}

fn layout_blob(dir: &Path, digest: &str) -> Vec<u8> {
    std::fs::read(
        dir.join("blobs/sha256")
            .join(digest.trim_start_matches("sha256:")),
    )
    .expect("blob in layout")
}

fn layout_manifest(dir: &Path, tag: &str) -> serde_json::Value {
    let index = json(&std::fs::read_to_string(dir.join("index.json")).expect("index.json"));
    let entry = index["manifests"]
        .as_array()
        .expect("manifests")
        .iter()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == tag)
        .expect("tag in index.json")
        .clone();
    let digest = entry["digest"].as_str().expect("digest");
    serde_json::from_slice(&layout_blob(dir, digest)).expect("manifest json")
}

#[test]
fn bundle_image_is_read_by_skopeo_and_layers_round_trip() {
    let reg = Registry::start();
    let tmp = tempfile::tempdir().expect("tmp");
    let host = reg.host();

    // OCI format, to the registry and to a layout: the same digest.
    let tag = format!("{host}/etcd/etcd-bundle:0.9.4");
    let pushed = build(&etcd(), &tag, &[]);
    let local = tmp.path().join("local");
    let local_digest = build(&etcd(), &format!("oci:{}:v1", local.display()), &[]);
    assert_eq!(pushed, local_digest, "registry and layout builds differ");

    let inspect = json(&skopeo(&[
        "inspect",
        "--tls-verify=false",
        &format!("docker://{tag}"),
    ]));
    assert_eq!(inspect["Digest"], pushed.as_str());
    assert_eq!(
        inspect["Labels"]["operators.operatorframework.io.bundle.package.v1"],
        "etcd"
    );
    assert_eq!(
        inspect["Labels"]["operators.operatorframework.io.bundle.channels.v1"],
        "singlenamespace-alpha"
    );
    assert_eq!(
        inspect["Labels"]["operators.operatorframework.io.bundle.mediatype.v1"],
        "registry+v1"
    );
    assert_eq!(inspect["Layers"].as_array().expect("layers").len(), 1);
    let raw = json(&skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{tag}"),
    ]));
    assert_eq!(
        raw["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        raw["layers"][0]["mediaType"],
        "application/vnd.oci.image.layer.v1.tar+gzip"
    );

    // skopeo copies it out; every blob is byte-identical to what we built.
    let copy = tmp.path().join("copy");
    skopeo(&[
        "copy",
        "--src-tls-verify=false",
        &format!("docker://{tag}"),
        &format!("oci:{}:copied", copy.display()),
    ]);
    let ours = layout_manifest(&local, "v1");
    let theirs = layout_manifest(&copy, "copied");
    assert_eq!(ours, theirs, "skopeo changed the manifest");
    for d in std::iter::once(&ours["config"]).chain(ours["layers"].as_array().expect("layers")) {
        let digest = d["digest"].as_str().expect("digest");
        assert_eq!(
            layout_blob(&local, digest),
            layout_blob(&copy, digest),
            "blob {digest} differs"
        );
    }

    // The layer holds manifests/ and metadata/ at the root, with the bundle's bytes.
    let layer = layout_blob(&copy, ours["layers"][0]["digest"].as_str().expect("digest"));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(layer.as_slice()));
    let mut names = Vec::new();
    for entry in archive.entries().expect("tar") {
        let mut entry = entry.expect("entry");
        let name = entry.path().expect("path").to_string_lossy().into_owned();
        assert_eq!(entry.header().uid().expect("uid"), 0);
        assert_eq!(entry.header().mtime().expect("mtime"), 0);
        if entry.header().entry_type().is_file() {
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut data).expect("read");
            assert_eq!(
                data,
                std::fs::read(etcd().join(&name)).expect("bundle file"),
                "{name}"
            );
        }
        names.push(name);
    }
    assert_eq!(names[0], "manifests/");
    assert!(
        names.contains(&"metadata/annotations.yaml".to_string()),
        "{names:?}"
    );

    // Docker v2 schema 2 with --format docker.
    let dtag = format!("{host}/etcd/etcd-bundle:0.9.4-docker");
    let ddigest = build(&etcd(), &dtag, &["--format", "docker"]);
    assert_ne!(ddigest, pushed);
    let raw = json(&skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{dtag}"),
    ]));
    assert_eq!(
        raw["mediaType"],
        "application/vnd.docker.distribution.manifest.v2+json"
    );
    assert_eq!(
        raw["config"]["mediaType"],
        "application/vnd.docker.container.image.v1+json"
    );
    let inspect = json(&skopeo(&[
        "inspect",
        "--tls-verify=false",
        &format!("docker://{dtag}"),
    ]));
    assert_eq!(inspect["Digest"], ddigest.as_str());
    skopeo(&[
        "copy",
        "--src-tls-verify=false",
        &format!("docker://{dtag}"),
        &format!("dir:{}", tmp.path().join("dcopy").display()),
    ]);
}

#[test]
fn same_bundle_gives_same_digest() {
    let tmp = tempfile::tempdir().expect("tmp");
    let a = build(
        &etcd(),
        &format!("oci:{}:a", tmp.path().join("a").display()),
        &[],
    );
    let b = build(
        &etcd(),
        &format!("oci:{}:b", tmp.path().join("b").display()),
        &[],
    );
    assert_eq!(a, b);

    // A copy with other mtimes and permissions: same digest.
    let copy = tmp.path().join("bundle");
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(copy.join(sub)).expect("mkdir");
        for e in std::fs::read_dir(etcd().join(sub)).expect("read_dir") {
            let e = e.expect("entry");
            let dst = copy.join(sub).join(e.file_name());
            std::fs::copy(e.path(), &dst).expect("copy");
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        }
    }
    let c = build(
        &copy,
        &format!("oci:{}:c", tmp.path().join("c").display()),
        &[],
    );
    assert_eq!(a, c, "file metadata leaked into the image");

    // SOURCE_DATE_EPOCH moves the timestamps, hence the digest.
    let (code, out, err) = run(
        &[
            "bundle",
            "build",
            etcd().to_str().expect("utf8"),
            "--tag",
            &format!("oci:{}:d", tmp.path().join("d").display()),
        ],
        &[("SOURCE_DATE_EPOCH", "1700000000")],
    );
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains(&a), "SOURCE_DATE_EPOCH ignored");
    let m = layout_manifest(&tmp.path().join("d"), "d");
    let config = json(
        &String::from_utf8(layout_blob(
            &tmp.path().join("d"),
            m["config"]["digest"].as_str().expect("d"),
        ))
        .expect("utf8"),
    );
    assert_eq!(config["created"], "2023-11-14T22:13:20Z");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pulled_bundles_match_their_directories() {
    let reg = Registry::start();
    let host = reg.host();
    let tmp = tempfile::tempdir().expect("tmp");
    let corpus = common::corpus().join("operators");
    let dirs = [
        corpus.join("etcd/0.9.4"),
        corpus.join("etcd/0.9.2-clusterwide"),
        corpus.join("kube-green/0.7.0"),
    ];
    let mut refs = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        assert!(d.is_dir(), "{} missing from corpus", d.display());
        let tag = format!("{host}/bundles/b{i}:v1");
        build(d, &tag, &[]);
        refs.push(tag);
    }
    // One from a layout, too.
    let layout = tmp.path().join("layout");
    build(&dirs[0], &format!("oci:{}:etcd", layout.display()), &[]);
    refs.push(format!("oci:{}:etcd", layout.display()));

    // The compressed-size cap is checked from the manifest, before any
    // layer is fetched.
    let client = oci::RegistryClient::from_environment().expect("client");
    let tiny = oci::layer::UnpackLimits {
        max_blob: 100,
        ..oci::layer::UnpackLimits::default()
    };
    let err = oci::pull_bundle(&client, &refs[0], &tiny)
        .await
        .expect_err("layer over the compressed cap");
    assert!(
        matches!(&err, oci::OciError::TooLarge { limit: 100, detail, .. } if detail == "compressed layers"),
        "{err}"
    );

    let off = oci::progress::ProgressMode::Off;
    let pulled = oci::pull_bundles(&client, &refs, 3, off).await;
    assert_eq!(pulled.len(), refs.len());
    for (i, result) in pulled.into_iter().enumerate() {
        let p = result.unwrap_or_else(|e| panic!("pull {}: {e}", refs[i]));
        assert_eq!(p.reference, refs[i]);
        let dir = if i < 3 { &dirs[i] } else { &dirs[0] };
        let want = Bundle::load_dir(dir).expect("load");
        let got = &p.bundle;
        assert_eq!(got.dir, PathBuf::from(&refs[i]));
        assert_eq!(got.package(), want.package());
        assert_eq!(got.channels(), want.channels());
        assert_eq!(got.manifests.len(), want.manifests.len());
        for (g, w) in got.manifest_files.iter().zip(&want.manifest_files) {
            assert_eq!(g.0.rel_path, w.0.rel_path);
            assert_eq!(g.0.text, w.0.text, "{} differs", w.0.rel_path);
        }
        assert_eq!(
            got.annotations.as_ref().map(|a| &a.values),
            want.annotations.as_ref().map(|a| &a.values)
        );
        // The layers hold the annotations: many pulls at once leave the
        // config, and its labels, unread.
        assert!(p.labels.is_none(), "{:?}", p.labels);
    }

    // A missing tag is a clear error naming the image.
    let missing = format!("{host}/bundles/nope:v1");
    let r = oci::pull_bundles(&client, std::slice::from_ref(&missing), 1, off).await;
    let err = r
        .into_iter()
        .next()
        .expect("one")
        .expect_err("must fail")
        .to_string();
    assert!(
        err.contains("bundles/nope") && err.contains("not found"),
        "{err}"
    );
}

fn sqlite_db(path: &Path) {
    let conn = rusqlite::Connection::open(path).expect("sqlite");
    conn.execute_batch("CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('hello');")
        .expect("sql");
}

fn layer_files(blob: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(blob));
    let mut out = Vec::new();
    for entry in archive.entries().expect("tar") {
        let mut entry = entry.expect("entry");
        let name = entry.path().expect("path").to_string_lossy().into_owned();
        let mut data = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut data).expect("read");
        out.push((name, data));
    }
    out
}

#[test]
fn index_image_from_scratch() {
    let reg = Registry::start();
    let tmp = tempfile::tempdir().expect("tmp");
    let db = tmp.path().join("index.db");
    sqlite_db(&db);
    let tag = format!("{}/catalog/index:v1", reg.host());
    let (code, out, err) = run(
        &[
            "index",
            "build",
            "--database",
            db.to_str().expect("utf8"),
            "--tag",
            &tag,
            "--base",
            "scratch",
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&tag), "{out}");
    let inspect = json(&skopeo(&[
        "inspect",
        "--config",
        "--tls-verify=false",
        &format!("docker://{tag}"),
    ]));
    assert_eq!(
        inspect["config"]["Labels"]["operators.operatorframework.io.index.database.v1"],
        "/database/index.db"
    );
    assert_eq!(
        inspect["config"]["Entrypoint"],
        serde_json::json!(["/bin/olm-catalog"])
    );
    assert_eq!(
        inspect["config"]["Cmd"],
        serde_json::json!(["serve", "/database/index.db", "--address", "0.0.0.0"])
    );
    let copy = tmp.path().join("copy");
    skopeo(&[
        "copy",
        "--src-tls-verify=false",
        &format!("docker://{tag}"),
        &format!("oci:{}:x", copy.display()),
    ]);
    let m = layout_manifest(&copy, "x");
    let files = layer_files(&layout_blob(
        &copy,
        m["layers"][0]["digest"].as_str().expect("digest"),
    ));
    let names: Vec<_> = files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(names, vec!["database/", "database/index.db"]);
    assert_eq!(
        files[1].1,
        std::fs::read(&db).expect("db"),
        "database bytes differ"
    );

    // Not a database: a clear error.
    let bogus = tmp.path().join("bogus.db");
    std::fs::write(&bogus, "nope").expect("write");
    let (code, _, err) = run(
        &[
            "index",
            "build",
            "--database",
            bogus.to_str().expect("utf8"),
            "--tag",
            &tag,
        ],
        &[],
    );
    assert_eq!(code, 2);
    assert!(err.contains("not an SQLite database"), "{err}");
}

/// Pushes a two-platform base (each image with one layer) as an OCI index.
async fn push_multiarch_base(host: &str) -> String {
    let client = oci::RegistryClient::from_environment().expect("client");
    let mut descs = Vec::new();
    for arch in ["amd64", "arm64"] {
        let mut opts = oci::BuildOptions::from_env().expect("opts");
        opts.platform.architecture = arch.into();
        // Any image will do as a base: reuse the bundle builder.
        let set = oci::build_bundle_image(&etcd(), &opts)
            .expect("build")
            .image;
        let dest: ImageRef = format!("{host}/base/olm-catalog@{}", set.top.digest)
            .parse()
            .expect("ref");
        oci::push_image(&client, &set, &dest, oci::progress::ProgressMode::Off)
            .await
            .expect("push base");
        let mut d = set.top.clone();
        d.platform = Some(oci::media::Platform {
            architecture: arch.into(),
            os: "linux".into(),
            os_version: None,
            os_features: None,
            variant: None,
        });
        descs.push(d);
    }
    let index = oci::media::ImageIndex {
        schema_version: 2,
        media_type: Some(oci::media::OCI_INDEX.into()),
        manifests: descs,
        annotations: None,
    };
    let repo = oci::Repo {
        host: host.to_string(),
        name: "base/olm-catalog".into(),
    };
    client
        .put_manifest(
            &repo,
            "multi",
            oci::media::OCI_INDEX,
            &oci::media::to_json_bytes(&index),
        )
        .await
        .expect("push index");
    format!("{host}/base/olm-catalog:multi")
}

#[test]
fn index_image_on_multiplatform_base() {
    let reg = Registry::start();
    let host = reg.host();
    let tmp = tempfile::tempdir().expect("tmp");
    let rt = tokio::runtime::Runtime::new().expect("rt");
    let base = rt.block_on(push_multiarch_base(&host));
    let db = tmp.path().join("index.db");
    sqlite_db(&db);
    let tag = format!("{host}/catalog/multi:v1");
    let args = [
        "index",
        "build",
        "--database",
        db.to_str().expect("utf8"),
        "--tag",
        &tag,
        "--base",
        &base,
    ];
    let (code, _, err) = run(&args, &[]);
    assert_eq!(code, 0, "{err}");
    // Same registry, other repository: base layers are mounted, not uploaded.
    assert!(
        err.contains("mounted sha256:"),
        "no cross-repository mount: {err}"
    );
    let raw_text = skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{tag}"),
    ]);
    let raw = json(&raw_text);
    assert_eq!(raw["mediaType"], "application/vnd.oci.image.index.v1+json");
    let platforms: Vec<_> = raw["manifests"]
        .as_array()
        .expect("manifests")
        .iter()
        .map(|m| {
            m["platform"]["architecture"]
                .as_str()
                .expect("arch")
                .to_string()
        })
        .collect();
    assert_eq!(platforms, vec!["amd64", "arm64"]);
    for arch in ["amd64", "arm64"] {
        let cfg = json(&skopeo(&[
            "inspect",
            "--config",
            "--tls-verify=false",
            "--override-arch",
            arch,
            &format!("docker://{tag}"),
        ]));
        assert_eq!(cfg["architecture"], arch);
        // The base's labels stay; the database label is added.
        assert_eq!(
            cfg["config"]["Labels"]["operators.operatorframework.io.bundle.package.v1"],
            "etcd"
        );
        assert_eq!(
            cfg["config"]["Labels"]["operators.operatorframework.io.index.database.v1"],
            "/database/index.db"
        );
        assert_eq!(
            cfg["rootfs"]["diff_ids"]
                .as_array()
                .expect("diff_ids")
                .len(),
            2
        );
    }
    let copy = tmp.path().join("copy");
    skopeo(&[
        "copy",
        "--all",
        "--src-tls-verify=false",
        &format!("docker://{tag}"),
        &format!("oci:{}:all", copy.display()),
    ]);
    // Byte for byte: each platform's base layer is the base's own blob (not
    // re-compressed), and both platforms share one database layer holding
    // the database file as it is.
    let base_copy = tmp.path().join("base-copy");
    skopeo(&[
        "copy",
        "--all",
        "--src-tls-verify=false",
        &format!("docker://{base}"),
        &format!("oci:{}:base", base_copy.display()),
    ]);
    let children = |dir: &Path, tag: &str| -> Vec<serde_json::Value> {
        let index = layout_manifest(dir, tag);
        index["manifests"]
            .as_array()
            .expect("manifests")
            .iter()
            .map(|m| {
                json(
                    &String::from_utf8(layout_blob(dir, m["digest"].as_str().expect("digest")))
                        .expect("utf8"),
                )
            })
            .collect()
    };
    let built = children(&copy, "all");
    let bases = children(&base_copy, "base");
    assert_eq!(built.len(), 2);
    let mut db_layers = Vec::new();
    for (b, base_m) in built.iter().zip(&bases) {
        let base_layer = base_m["layers"][0]["digest"].as_str().expect("digest");
        let layer = b["layers"][0]["digest"].as_str().expect("digest");
        assert_eq!(layer, base_layer);
        assert_eq!(
            layout_blob(&copy, layer),
            layout_blob(&base_copy, base_layer),
            "base layer bytes differ"
        );
        let db_layer = b["layers"][1]["digest"].as_str().expect("digest");
        db_layers.push(layout_blob(&copy, db_layer));
    }
    assert_eq!(
        db_layers[0], db_layers[1],
        "platforms got different database layers"
    );
    let files = layer_files(&db_layers[0]);
    assert_eq!(files[1].1, std::fs::read(&db).expect("db"));

    // A multi-platform base in an OCI layout works too (child manifests are
    // read by digest from blobs/).
    let from_layout = format!("oci:{}:rebased", tmp.path().join("rebased").display());
    let base_layout = format!("oci:{}:all", copy.display());
    let (code, _, err) = run(
        &[
            "index",
            "build",
            "--database",
            db.to_str().expect("utf8"),
            "--tag",
            &from_layout,
            "--base",
            &base_layout,
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let raw2 = json(&skopeo(&["inspect", "--raw", &from_layout]));
    assert_eq!(raw2["manifests"].as_array().expect("manifests").len(), 2);

    // Building again gives the same index digest; to a layout as well.
    let (code, out1, err) = run(&args, &[]);
    assert_eq!(code, 0, "{err}");
    let layout_tag = format!("oci:{}:multi", tmp.path().join("layout").display());
    let (code, out2, err) = run(
        &[
            "index",
            "build",
            "--database",
            db.to_str().expect("utf8"),
            "--tag",
            &layout_tag,
            "--base",
            &base,
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let d1 = out1.trim().rsplit_once('@').expect("digest").1;
    let d2 = out2.trim().rsplit_once('@').expect("digest").1;
    assert_eq!(d1, oci::media::sha256_digest(raw_text.as_bytes()));
    assert_eq!(d1, d2);
}

/// Without --base the index image is based on the project's own image,
/// made from the running executable: it holds /bin/olm-catalog and, for a
/// dynamically linked build, the ELF interpreter and every DT_NEEDED library
/// (recursively); unpacked into a directory, the binary runs through the
/// unpacked loader and libraries (no chroot, no daemon).
#[test]
fn default_base_holds_a_runnable_binary() {
    use olm_catalog::oci::runtime::{elf_deps, library_dirs};
    let tmp = tempfile::tempdir().expect("tmp");
    let db = tmp.path().join("index.db");
    sqlite_db(&db);
    let layout = tmp.path().join("layout");
    let tag = format!("oci:{}:self", layout.display());
    let (code, out, err) = run(
        &[
            "index",
            "build",
            "--database",
            db.to_str().expect("utf8"),
            "--tag",
            &tag,
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let m = layout_manifest(&layout, "self");
    let config = json(
        &String::from_utf8(layout_blob(
            &layout,
            m["config"]["digest"].as_str().expect("digest"),
        ))
        .expect("utf8"),
    );
    assert_eq!(config["config"]["User"], "65532:65532");
    assert_eq!(
        config["config"]["Entrypoint"],
        serde_json::json!(["/bin/olm-catalog"])
    );
    assert_eq!(config["os"], "linux");
    assert_eq!(
        config["rootfs"]["diff_ids"]
            .as_array()
            .expect("diff_ids")
            .len(),
        2
    );
    let layers = m["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 2);

    // Unpack the runtime layer.
    let root = tmp.path().join("root");
    let files = layer_files(&layout_blob(
        &layout,
        layers[0]["digest"].as_str().expect("digest"),
    ));
    for (name, data) in &files {
        let path = root.join(name);
        if name.ends_with('/') {
            std::fs::create_dir_all(&path).expect("mkdir");
        } else {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, data).expect("write");
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    let bin = root.join("bin/olm-catalog");
    assert_eq!(
        std::fs::read(&bin).expect("bin/olm-catalog in the layer"),
        std::fs::read(common::bin()).expect("the binary"),
        "bin/olm-catalog is the running executable"
    );
    let deps = elf_deps(&std::fs::read(&bin).expect("bin")).expect("elf");
    let dirs = library_dirs();
    let find = |name: &str| {
        dirs.iter()
            .map(|d| root.join(d.trim_start_matches('/')).join(name))
            .find(|p| p.is_file())
    };
    // Every library, and every library's libraries, is in the layer.
    let mut queue = deps.needed.clone();
    let mut seen = Vec::new();
    while let Some(name) = queue.pop() {
        if seen.contains(&name) {
            continue;
        }
        let path = find(&name).unwrap_or_else(|| panic!("{name} is not in the layer"));
        queue.extend(
            elf_deps(&std::fs::read(&path).expect("lib"))
                .expect("elf")
                .needed,
        );
        seen.push(name);
    }
    let version = match &deps.interpreter {
        Some(interp) => {
            let loader = root.join(interp.trim_start_matches('/'));
            assert!(
                loader.is_file(),
                "ELF interpreter {interp} is not in the layer"
            );
            let lib_path: Vec<String> = dirs
                .iter()
                .map(|d| root.join(d.trim_start_matches('/')).display().to_string())
                .collect();
            std::process::Command::new(&loader)
                .arg("--library-path")
                .arg(lib_path.join(":"))
                .arg(&bin)
                .arg("--version")
                .env_clear()
                .output()
                .expect("run through the unpacked loader")
        }
        None => std::process::Command::new(&bin)
            .arg("--version")
            .env_clear()
            .output()
            .expect("run the static binary"),
    };
    assert!(
        version.status.success(),
        "{}",
        String::from_utf8_lossy(&version.stderr)
    );
    assert!(
        String::from_utf8_lossy(&version.stdout).contains(env!("CARGO_PKG_VERSION")),
        "{}",
        String::from_utf8_lossy(&version.stdout)
    );

    // Reproducible: the same executable gives the same digest.
    let (code, out2, err) = run(
        &[
            "index",
            "build",
            "--database",
            db.to_str().expect("utf8"),
            "--tag",
            &tag,
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, out2);

    // --platform must match the machine for the default base.
    let (code, _, err) = run(
        &[
            "index",
            "build",
            "--database",
            db.to_str().expect("utf8"),
            "--tag",
            &tag,
            "--platform",
            "linux/s390x",
        ],
        &[],
    );
    if std::env::consts::ARCH != "s390x" {
        assert_eq!(code, 2);
        assert!(
            err.contains("this machine's olm-catalog executable"),
            "{err}"
        );
    }
}

/// `index build --format docker`: Docker media types throughout (a manifest
/// list over a multi-platform base, schema 2 manifests, Docker layer and
/// config types), read by `skopeo inspect` and copied by `skopeo copy`.
#[test]
fn docker_format_index_image() {
    let reg = Registry::start();
    let host = reg.host();
    let tmp = tempfile::tempdir().expect("tmp");
    let rt = tokio::runtime::Runtime::new().expect("rt");
    let base = rt.block_on(push_multiarch_base(&host));
    let db = tmp.path().join("index.db");
    sqlite_db(&db);
    for (tag, base_args) in [
        (
            format!("{host}/catalog/docker:multi"),
            vec!["--base", base.as_str()],
        ),
        (
            format!("{host}/catalog/docker:scratch"),
            vec!["--base", "scratch"],
        ),
    ] {
        let mut args = vec![
            "index",
            "build",
            "--database",
            db.to_str().expect("utf8"),
            "--tag",
            &tag,
            "--format",
            "docker",
        ];
        args.extend(base_args.iter().copied());
        let (code, _, err) = run(&args, &[]);
        assert_eq!(code, 0, "{err}");
        let raw = json(&skopeo(&[
            "inspect",
            "--raw",
            "--tls-verify=false",
            &format!("docker://{tag}"),
        ]));
        let manifests: Vec<serde_json::Value> = if tag.ends_with(":multi") {
            assert_eq!(
                raw["mediaType"],
                "application/vnd.docker.distribution.manifest.list.v2+json"
            );
            raw["manifests"]
                .as_array()
                .expect("manifests")
                .iter()
                .map(|m| {
                    assert_eq!(
                        m["mediaType"],
                        "application/vnd.docker.distribution.manifest.v2+json"
                    );
                    json(&skopeo(&[
                        "inspect",
                        "--raw",
                        "--tls-verify=false",
                        &format!(
                            "docker://{host}/catalog/docker@{}",
                            m["digest"].as_str().expect("digest")
                        ),
                    ]))
                })
                .collect()
        } else {
            vec![raw]
        };
        for m in &manifests {
            assert_eq!(
                m["mediaType"],
                "application/vnd.docker.distribution.manifest.v2+json"
            );
            assert_eq!(
                m["config"]["mediaType"],
                "application/vnd.docker.container.image.v1+json"
            );
            for l in m["layers"].as_array().expect("layers") {
                assert_eq!(
                    l["mediaType"],
                    "application/vnd.docker.image.rootfs.diff.tar.gzip"
                );
            }
        }
        let inspect = json(&skopeo(&[
            "inspect",
            "--tls-verify=false",
            &format!("docker://{tag}"),
        ]));
        assert_eq!(
            inspect["Labels"]["operators.operatorframework.io.index.database.v1"],
            "/database/index.db"
        );
        let copy = tmp.path().join(tag.rsplit_once(':').expect("tag").1);
        skopeo(&[
            "copy",
            "--all",
            "--src-tls-verify=false",
            &format!("docker://{tag}"),
            &format!("dir:{}", copy.display()),
        ]);
        assert!(copy.join("manifest.json").is_file());
    }
}

/// skopeo (containers/image) finds only OCI manifests in a layout's
/// `index.json`: a Docker-format image there would be written but unreadable,
/// so every build refuses the pair with exit 2 and writes nothing.
#[test]
fn docker_format_to_an_oci_layout_is_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let layout = tmp.path().join("layout");
    let dest = format!("oci:{}:v1", layout.display());
    let db = common::golden().join("sqlite/etcd/index.db");
    let fbc = common::corpus().join("catalogs/v4.18/kube-green");
    for args in [
        vec![
            "bundle",
            "build",
            etcd().to_str().expect("utf8"),
            "--tag",
            &dest,
        ],
        vec![
            "index",
            "build",
            "--database",
            db.to_str().expect("utf8"),
            "--tag",
            &dest,
        ],
        vec![
            "catalog",
            "build",
            fbc.to_str().expect("utf8"),
            "--tag",
            &dest,
        ],
    ] {
        let mut args = args.clone();
        args.extend(["--format", "docker"]);
        let (code, _, err) = run(&args, &[]);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("--format oci"), "{err}");
        assert!(!layout.exists(), "{args:?} wrote the layout");
    }
}
