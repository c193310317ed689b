//! `catalog build`: images of the shared file-based catalogs
//! (`catalogs/v4.18/*`, made by the real pipeline) pushed to a real registry
//! and written to OCI layouts, read back with skopeo, served, and answering
//! as the directory does; and the `grpc_health_probe` every image we build
//! carries, taken out of a built image and run against a served catalog.
use crate::common;
use crate::registry;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use olm_catalog::proto::registry_client::RegistryClient;
use olm_catalog::proto::{ListBundlesRequest, ListPackageRequest};
use serde_json::Value;

const CONFIGS_LABEL: &str = "operators.operatorframework.io.index.configs.v1";

fn catalog(name: &str) -> PathBuf {
    common::corpus().join("catalogs/v4.18").join(name)
}

fn olm(args: &[&str]) -> std::process::Output {
    Command::new(common::bin())
        .args(args)
        .env("HOME", "/nonexistent")
        .output()
        .expect("run olm-catalog")
}

/// `olm-catalog ARGS`, which must succeed; its stdout.
fn olm_ok(args: &[&str]) -> String {
    let o = olm(args);
    assert!(
        o.status.success(),
        "olm-catalog {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The digest of a `REF@DIGEST` line.
fn digest_of(out: &str) -> String {
    out.trim()
        .rsplit_once('@')
        .map(|(_, d)| d.to_string())
        .unwrap_or_else(|| panic!("no REF@DIGEST in {out:?}"))
}

/// A running `olm-catalog serve CATALOG --port 0`, killed on drop.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(catalog: &str) -> Server {
    let mut child = Command::new(common::bin())
        .args(["serve", catalog, "--port", "0"])
        .env("HOME", "/nonexistent")
        .stderr(Stdio::piped())
        .spawn()
        .expect("start serve");
    let stderr = child.stderr.take().expect("stderr");
    let mut seen = String::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.expect("stderr line");
        seen.push_str(&line);
        seen.push('\n');
        if let Some(a) = line.strip_prefix("serving api.Registry on ") {
            return Server {
                child,
                addr: a.trim().to_string(),
            };
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("serve {catalog} did not start:\n{seen}");
}

/// ListPackages and ListBundles of a served catalog, each sorted.
fn answers(addr: &str) -> (Vec<String>, Vec<String>) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let mut client = RegistryClient::connect(format!("http://{addr}"))
            .await
            .expect("connect")
            .max_decoding_message_size(64 << 20);
        let mut stream = client
            .list_packages(ListPackageRequest {})
            .await
            .expect("ListPackages")
            .into_inner();
        let mut packages = Vec::new();
        while let Some(p) = stream.message().await.expect("stream") {
            packages.push(p.name);
        }
        let mut stream = client
            .list_bundles(ListBundlesRequest {})
            .await
            .expect("ListBundles")
            .into_inner();
        let mut bundles = Vec::new();
        while let Some(b) = stream.message().await.expect("stream") {
            bundles.push(format!("{b:?}"));
        }
        packages.sort();
        bundles.sort();
        (packages, bundles)
    })
}

#[test]
fn catalog_images_of_the_shared_catalogs() {
    let reg = registry::Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let layout = tmp.path().join("layout");
    let layout = layout.to_str().expect("utf-8");
    let keys = tmp.path().join("k");
    let keys = keys.to_str().expect("utf-8");
    let o = Command::new(common::bin())
        .args(["sign", "generate-key-pair", "--output-prefix", keys])
        .env("COSIGN_PASSWORD", "pw")
        .output()
        .expect("keygen");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The largest and the smallest of the seven (each build gzips the
    // runtime layer, the test binary's size: two keep CI time small).
    for name in ["koku-metrics-operator", "ecr-secret-operator"] {
        let dir = catalog(name);
        let dir_s = dir.to_str().expect("utf-8");
        let remote = reg.image(&format!("catalogs/{name}"), "v4.18");
        // Pushed by digest, signed, then tagged (--sign), as index images are.
        let o = Command::new(common::bin())
            .args(["catalog", "build", dir_s, "--tag", &remote, "-q"])
            .args(["--sign", "--key", &format!("{keys}.key")])
            .env("COSIGN_PASSWORD", "pw")
            .env("HOME", "/nonexistent")
            .output()
            .expect("catalog build --sign");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let pushed = digest_of(&String::from_utf8_lossy(&o.stdout));
        olm_ok(&["verify", &remote, "--key", &format!("{keys}.pub")]);
        let local = format!("oci:{layout}:{name}");
        let written = digest_of(&olm_ok(&["catalog", "build", dir_s, "--tag", &local, "-q"]));
        // Reproducible: the same catalog gives the same image, wherever it goes.
        assert_eq!(pushed, written, "{name}: registry and layout digests");
        if name == "ecr-secret-operator" {
            let again = digest_of(&olm_ok(&[
                "catalog",
                "build",
                dir_s,
                "--tag",
                &format!("{local}-again"),
                "-q",
            ]));
            assert_eq!(written, again, "{name}: a second build");
        }

        // skopeo reads both back: the label, entrypoint, command, layers.
        for (src, extra) in [
            (format!("docker://{remote}"), Some("--tls-verify=false")),
            (local.clone(), None),
        ] {
            let mut args = vec!["inspect", "--config"];
            args.extend(extra);
            args.push(&src);
            let config: Value =
                serde_json::from_str(&registry::skopeo(&args)).expect("config JSON");
            let cfg = &config["config"];
            assert_eq!(cfg["Labels"][CONFIGS_LABEL], "/configs", "{src}: {config}");
            assert_eq!(cfg["Entrypoint"][0], "/bin/olm-catalog", "{src}");
            assert_eq!(cfg["Cmd"][1], "/configs", "{src}");
            assert_eq!(cfg["User"], "65532:65532", "{src}");
            let mut args = vec!["inspect", "--raw"];
            args.extend(extra);
            args.push(&src);
            let manifest: Value =
                serde_json::from_str(&registry::skopeo(&args)).expect("manifest JSON");
            let layers = manifest["layers"].as_array().expect("layers");
            assert_eq!(layers.len(), 2, "{src}: runtime and catalog layers");
            assert_eq!(
                config["rootfs"]["diff_ids"].as_array().map(Vec::len),
                Some(2),
                "{src}"
            );
        }

        // The catalog layer holds the directory's files under /configs, byte for byte.
        let files = layout_files(Path::new(layout), name);
        let mut expected = 0;
        for e in walkdir::WalkDir::new(&dir) {
            let e = e.expect("walk");
            if e.file_type().is_file() {
                expected += 1;
                let rel = e.path().strip_prefix(&dir).expect("rel");
                let key = format!("configs/{}", rel.display());
                assert_eq!(
                    files.get(&key).and_then(LayerEntry::data),
                    Some(std::fs::read(e.path()).expect("read").as_slice()),
                    "{name}: {key}"
                );
            }
        }
        let in_image = files
            .keys()
            .filter(|k| k.starts_with("configs/"))
            .filter(|k| files[*k].data().is_some())
            .count();
        assert_eq!(in_image, expected, "{name}: files under /configs");

        // Served from the registry and from the layout, it answers as the directory.
        let want = answers(&serve(dir_s).addr);
        assert!(!want.0.is_empty() && !want.1.is_empty(), "{name}");
        assert_eq!(
            answers(&serve(&remote).addr),
            want,
            "{name} from the registry"
        );
        assert_eq!(answers(&serve(&local).addr), want, "{name} from the layout");
    }

    // An invalid catalog is refused with its file, and nothing is written.
    let bad = tmp.path().join("bad");
    std::fs::create_dir_all(bad.join("pkg")).expect("mkdir");
    std::fs::write(
        bad.join("pkg/catalog.yaml"),
        "schema: olm.package\nname: pkg\ndefaultChannel: stable\n---\nschema: olm.channel\nname: stable\npackage: pkg\nentries: [\n",
    )
    .expect("write");
    let o = olm(&[
        "catalog",
        "build",
        bad.to_str().expect("utf-8"),
        "--tag",
        &format!("oci:{layout}:bad"),
        "-q",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("catalog.yaml"), "{err}");
    let index = std::fs::read_to_string(Path::new(layout).join("index.json")).expect("index");
    assert!(!index.contains("\"bad\""), "{index}");
}

#[test]
fn generate_dockerfile_writes_what_opm_writes() {
    // opm v1.73.0's two-stage Dockerfile (alpha/action/generate_dockerfile.go);
    // tests/opm_personality.rs ports its Go test's table cases.
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("catalog");
    std::fs::create_dir(&dir).expect("mkdir");
    let dir_s = dir.to_str().expect("utf-8");
    olm_ok(&["catalog", "generate-dockerfile", dir_s, "-l", "b=2,a=1"]);
    let text = std::fs::read_to_string(tmp.path().join("catalog.Dockerfile")).expect("written");
    assert_eq!(
        text,
        "# The builder image is expected to contain\n\
         # /bin/opm (with serve subcommand)\n\
         FROM quay.io/operator-framework/opm:latest as builder\n\n\
         # Copy FBC root into image at /configs and pre-populate serve cache\n\
         ADD catalog /configs\n\
         RUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]\n\n\
         FROM quay.io/operator-framework/opm:latest\n\
         # The base image is expected to contain\n\
         # /bin/opm (with serve subcommand) and /bin/grpc_health_probe\n\n\
         # Configure the entrypoint and command\n\
         ENTRYPOINT [\"/bin/opm\"]\n\
         CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]\n\n\
         COPY --from=builder /configs /configs\n\
         COPY --from=builder /tmp/cache /tmp/cache\n\n\
         # Set FBC-specific label for the location of the FBC root directory\n\
         # in the image\n\
         LABEL operators.operatorframework.io.index.configs.v1=/configs\n\n\
         # Set other custom labels\n\
         LABEL \"a\"=\"1\"\n\
         LABEL \"b\"=\"2\"\n"
    );
    // As opm: an existing Dockerfile is not overwritten.
    let o = olm(&["catalog", "generate-dockerfile", dir_s]);
    assert_eq!(o.status.code(), Some(2));
    // Without extra labels it ends at the configs label; -i names the base
    // (and only the base), a trailing slash is cleaned.
    let plain = tmp.path().join("plain");
    std::fs::create_dir(&plain).expect("mkdir");
    olm_ok(&[
        "catalog",
        "generate-dockerfile",
        &format!("{}/", plain.display()),
        "-i",
        "quay.io/operator-framework/opm:v1.73.0",
    ]);
    let text = std::fs::read_to_string(tmp.path().join("plain.Dockerfile")).expect("written");
    assert!(
        text.contains("\nFROM quay.io/operator-framework/opm:latest as builder\n"),
        "{text}"
    );
    assert!(
        text.contains("\nFROM quay.io/operator-framework/opm:v1.73.0\n"),
        "{text}"
    );
    assert!(text.contains("\nADD plain /configs\n"), "{text}");
    assert!(
        text.ends_with("\nLABEL operators.operatorframework.io.index.configs.v1=/configs\n"),
        "{text}"
    );
}

/// An entry of an image's file system.
enum LayerEntry {
    File(Vec<u8>),
    Symlink(String),
    Other,
}

impl LayerEntry {
    fn data(&self) -> Option<&[u8]> {
        match self {
            LayerEntry::File(d) => Some(d),
            _ => None,
        }
    }
}

fn read_blob(layout: &Path, digest: &str) -> Vec<u8> {
    let hex = digest.strip_prefix("sha256:").expect("sha256 digest");
    std::fs::read(layout.join("blobs/sha256").join(hex)).expect("blob")
}

/// Every entry of every layer of image `tag` in the OCI layout, later
/// layers winning, read with tar and flate2 (not the project's code).
fn layout_files(layout: &Path, tag: &str) -> std::collections::BTreeMap<String, LayerEntry> {
    let index: Value =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).expect("index.json"))
            .expect("index JSON");
    let desc = index["manifests"]
        .as_array()
        .expect("manifests")
        .iter()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == tag)
        .unwrap_or_else(|| panic!("no {tag} in {index}"));
    let manifest: Value =
        serde_json::from_slice(&read_blob(layout, desc["digest"].as_str().expect("digest")))
            .expect("manifest");
    let mut out = std::collections::BTreeMap::new();
    for layer in manifest["layers"].as_array().expect("layers") {
        let blob = read_blob(layout, layer["digest"].as_str().expect("digest"));
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(blob.as_slice()));
        for entry in archive.entries().expect("tar") {
            let mut entry = entry.expect("entry");
            let path = entry
                .path()
                .expect("path")
                .to_string_lossy()
                .trim_end_matches('/')
                .to_string();
            let value = match entry.header().entry_type() {
                tar::EntryType::Regular => {
                    let mut data = Vec::new();
                    entry.read_to_end(&mut data).expect("read entry");
                    LayerEntry::File(data)
                }
                tar::EntryType::Symlink => LayerEntry::Symlink(
                    entry
                        .link_name()
                        .expect("link")
                        .expect("link name")
                        .to_string_lossy()
                        .into_owned(),
                ),
                _ => LayerEntry::Other,
            };
            out.insert(path, value);
        }
    }
    out
}

/// Takes /bin/grpc_health_probe out of image `tag` of `layout` into `into`
/// (the link and what it points to, as in the image); returns its path.
fn extract_probe(layout: &Path, tag: &str, into: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let files = layout_files(layout, tag);
    let target = match files.get("bin/grpc_health_probe") {
        Some(LayerEntry::Symlink(t)) => t.clone(),
        Some(LayerEntry::File(_)) => "grpc_health_probe".into(),
        _ => panic!("{tag} has no /bin/grpc_health_probe"),
    };
    let bin = into.join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let data = files
        .get(&format!("bin/{target}"))
        .and_then(LayerEntry::data)
        .unwrap_or_else(|| panic!("{tag}: /bin/grpc_health_probe points to a missing {target}"));
    let exe = bin.join(&target);
    std::fs::write(&exe, data).expect("write");
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let probe = bin.join("grpc_health_probe");
    if target != "grpc_health_probe" {
        std::os::unix::fs::symlink(&target, &probe).expect("symlink");
    }
    probe
}

fn run_probe(probe: &Path, args: &[&str]) -> (i32, String) {
    let o = Command::new(probe).args(args).output().expect("run probe");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn grpc_health_probe_of_built_images() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let layout = tmp.path().join("layout");
    let layout_s = layout.to_str().expect("utf-8");
    let dir = catalog("kube-green");
    let dir_s = dir.to_str().expect("utf-8");
    olm_ok(&[
        "catalog",
        "build",
        dir_s,
        "--tag",
        &format!("oci:{layout_s}:catalog"),
        "-q",
    ]);
    // Index images carry it too.
    let db = tmp.path().join("index.db");
    let db_s = db.to_str().expect("utf-8");
    olm_ok(&["index", "add", "--database", db_s, "--from-fbc", dir_s]);
    olm_ok(&[
        "index",
        "build",
        "--database",
        db_s,
        "--tag",
        &format!("oci:{layout_s}:index"),
        "-q",
    ]);
    let index_probe = extract_probe(&layout, "index", &tmp.path().join("index-fs"));
    let probe = extract_probe(&layout, "catalog", &tmp.path().join("catalog-fs"));
    // /bin/opm, another link to the executable: the opm personality
    // (docs/from-opm.md), so an opm image's CMD runs on these images too.
    for tag in ["catalog", "index"] {
        match layout_files(&layout, tag).get("bin/opm") {
            Some(LayerEntry::Symlink(t)) => assert_eq!(t, "olm-catalog", "{tag}"),
            _ => panic!("{tag} has no /bin/opm link"),
        }
    }
    let opm = tmp.path().join("index-fs/bin/opm");
    std::os::unix::fs::symlink("olm-catalog", &opm).expect("symlink");
    let o = Command::new(&opm).arg("version").output().expect("run opm");
    let version = String::from_utf8_lossy(&o.stdout);
    assert!(
        version.starts_with("Version: version.Version{OpmVersion:\"v1.73.0"),
        "{version}"
    );

    let server = serve(dir_s);
    let port = server.addr.rsplit_once(':').expect("port").1.to_string();
    for p in [&probe, &index_probe] {
        for addr_flag in [format!("-addr=:{port}"), format!("--addr=127.0.0.1:{port}")] {
            let (code, err) = run_probe(p, &[&addr_flag, "-connect-timeout", "5s"]);
            assert_eq!(
                (code, err.as_str()),
                (0, "status: SERVING\n"),
                "{addr_flag}"
            );
        }
    }
    let (code, err) = run_probe(
        &probe,
        &[
            &format!("-addr=localhost:{port}"),
            "-service=api.Registry",
            "-rpc-timeout=2s",
            "-v",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("parsed options:"), "{err}");
    assert!(err.ends_with("status: SERVING\n"), "{err}");
    drop(server);

    // A closed port: connection failure, after the connect timeout.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let (code, err) = run_probe(
        &probe,
        &[
            &format!("-addr=127.0.0.1:{closed}"),
            "-connect-timeout=300ms",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("failed to connect service"), "{err}");
    // Invalid arguments: 1; TLS is refused clearly; an unknown flag is Go's 2.
    let (code, err) = run_probe(&probe, &[]);
    assert_eq!((code, err.as_str()), (1, "error: -addr not specified\n"));
    let (code, err) = run_probe(&probe, &["-addr=:1", "-tls"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not supported"), "{err}");
    let (code, err) = run_probe(&probe, &["-addr=:1", "-bogus"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("flag provided but not defined: -bogus"),
        "{err}"
    );
}

/// Writes `data` as a blob of the OCI layout; its digest.
fn put_blob(layout: &Path, data: &[u8]) -> String {
    use sha2::Digest as _;
    let hex = hex::encode(sha2::Sha256::digest(data));
    std::fs::write(layout.join("blobs/sha256").join(&hex), data).expect("blob");
    format!("sha256:{hex}")
}

/// An opm-like base image in an OCI layout (written here by hand, not by
/// the project): one layer with /bin/opm, entrypoint /bin/opm, a label.
fn opm_like_base(layout: &Path) {
    std::fs::create_dir_all(layout.join("blobs/sha256")).expect("mkdir");
    let mut tar = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(3);
    h.set_mode(0o755);
    h.set_cksum();
    tar.append_data(&mut h, "bin/opm", &b"opm"[..])
        .expect("tar");
    let tar = tar.into_inner().expect("tar");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &tar).expect("gzip");
    let layer = gz.finish().expect("gzip");
    let diff_id = {
        use sha2::Digest as _;
        format!("sha256:{}", hex::encode(sha2::Sha256::digest(&tar)))
    };
    let layer_digest = put_blob(layout, &layer);
    let config = serde_json::json!({
        "architecture": "arm64", "os": "linux",
        "config": {"Entrypoint": ["/bin/opm"], "Labels": {"base.label": "kept"}},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
    })
    .to_string();
    let config_digest = put_blob(layout, config.as_bytes());
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": config_digest, "size": config.len()},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": layer_digest, "size": layer.len()}],
    })
    .to_string();
    let manifest_digest = put_blob(layout, manifest.as_bytes());
    std::fs::write(
        layout.join("oci-layout"),
        r#"{"imageLayoutVersion":"1.0.0"}"#,
    )
    .expect("w");
    let index = serde_json::json!({
        "schemaVersion": 2,
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "digest": manifest_digest, "size": manifest.len(),
                       "annotations": {"org.opencontainers.image.ref.name": "v1"}}],
    });
    std::fs::write(layout.join("index.json"), index.to_string()).expect("w");
}

#[test]
fn catalog_images_on_an_opm_base_and_on_scratch() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = tmp.path().join("base");
    opm_like_base(&base);
    let out = tmp.path().join("out");
    let out_s = out.to_str().expect("utf-8");
    let dir = catalog("kube-green");
    let dir_s = dir.to_str().expect("utf-8");
    let base_ref = format!("oci:{}:v1", base.display());
    olm_ok(&[
        "catalog",
        "build",
        dir_s,
        "--base",
        &base_ref,
        "--tag",
        &format!("oci:{out_s}:opm"),
        "-q",
    ]);
    olm_ok(&[
        "catalog",
        "build",
        dir_s,
        "--base",
        "scratch",
        "--tag",
        &format!("oci:{out_s}:scratch"),
        "-q",
    ]);

    let config: Value = serde_json::from_str(&registry::skopeo(&[
        "inspect",
        "--config",
        &format!("oci:{out_s}:opm"),
    ]))
    .expect("config");
    let cfg = &config["config"];
    // opm generate dockerfile's entrypoint and command; the cache is built at start.
    assert_eq!(
        cfg["Entrypoint"],
        serde_json::json!(["/bin/opm"]),
        "{config}"
    );
    assert_eq!(
        cfg["Cmd"],
        serde_json::json!([
            "serve",
            "/configs",
            "--cache-dir=/tmp/cache",
            "--cache-enforce-integrity=false"
        ])
    );
    assert_eq!(cfg["Labels"][CONFIGS_LABEL], "/configs");
    assert_eq!(cfg["Labels"]["base.label"], "kept");
    assert_eq!(config["architecture"], "arm64", "the base's platform");
    let files = layout_files(&out, "opm");
    assert!(files.get("bin/opm").and_then(LayerEntry::data).is_some());
    assert_eq!(
        files.get("configs/catalog.yaml").and_then(LayerEntry::data),
        Some(
            std::fs::read(dir.join("catalog.yaml"))
                .expect("read")
                .as_slice()
        ),
        "DIR's files under /configs"
    );

    let files = layout_files(&out, "scratch");
    assert!(files.keys().all(|k| k.starts_with("configs")), "data only");
    // Served from the layout, both answer as the directory.
    let want = answers(&serve(dir_s).addr);
    assert_eq!(answers(&serve(&format!("oci:{out_s}:opm")).addr), want);
    assert_eq!(answers(&serve(&format!("oci:{out_s}:scratch")).addr), want);
}

/// `olm-catalog render ARGS`, which must succeed; its stdout.
fn render(args: &[&str]) -> String {
    let mut all = vec!["render"];
    all.extend_from_slice(args);
    olm_ok(&all)
}

#[test]
fn render_of_bundle_and_catalog_images_from_a_registry_and_a_layout() {
    let reg = registry::Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let layout = tmp.path().join("layout");
    let layout = layout.to_str().expect("utf-8");
    // A bundle image, built by us, in the registry and in an OCI layout:
    // rendered as its directory is, with the reference as its image.
    let bundle = common::corpus().join("operators/kube-green/0.4.0");
    let bundle_s = bundle.to_str().expect("utf-8");
    let remote = reg.image("bundles/kube-green", "v0.4.0");
    let local = format!("oci:{layout}:kube-green-bundle");
    for r in [&remote, &local] {
        olm_ok(&["bundle", "build", bundle_s, "--tag", r, "-q"]);
        let want = render(&[bundle_s, "--bundle-image", r]);
        assert!(want.contains(&format!("\"image\": \"{r}\"")), "{want}");
        assert_eq!(render(&[r]), want, "{r}");
        assert_eq!(
            render(&[r, "-o", "yaml"]),
            render(&[bundle_s, "--bundle-image", r, "-o", "yaml"])
        );
    }
    // A catalog image: the catalog under /configs, rendered as the directory.
    let dir = catalog("ecr-secret-operator");
    let dir_s = dir.to_str().expect("utf-8");
    let remote = reg.image("catalogs/ecr-secret-operator", "v4.18");
    let local = format!("oci:{layout}:catalog");
    olm_ok(&["catalog", "build", dir_s, "--tag", &remote, "-q"]);
    olm_ok(&["catalog", "build", dir_s, "--tag", &local, "-q"]);
    let want = render(&[dir_s]);
    assert!(want.contains("\"schema\": \"olm.package\""), "{want}");
    assert_eq!(render(&[&remote]), want);
    assert_eq!(render(&[&local]), want);
    // The same image with zstd layers (as podman or skopeo may recompress
    // it): one layer decoder for bundles and catalogs.
    let zstd_layout = tmp.path().join("zstd");
    let zstd = format!("oci:{}:catalog", zstd_layout.display());
    crate::registry::skopeo(&["copy", "--dest-compress-format", "zstd", &local, &zstd]);
    let manifest = crate::registry::skopeo(&["inspect", "--raw", &zstd]);
    assert!(manifest.contains("tar+zstd"), "{manifest}");
    assert_eq!(render(&[&zstd]), want);
    // An index image: its database, rendered as the database is.
    let db = tmp.path().join("index.db");
    let db_s = db.to_str().expect("utf-8");
    olm_ok(&["index", "add", "--database", db_s, "--from-fbc", dir_s]);
    let index = format!("oci:{layout}:index");
    olm_ok(&["index", "build", "--database", db_s, "--tag", &index, "-q"]);
    assert_eq!(render(&[&index]), render(&[db_s]));
    // Mixed sources, in the order given.
    let both = render(&[&local, bundle_s]);
    assert_eq!(both, format!("{want}{}", render(&[bundle_s])));
    // Not there: exit 2 naming the reference.
    let missing = format!("oci:{layout}:nothing");
    let o = olm(&["render", &missing]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&missing), "{err}");
    // --username for an OCI layout only: a usage error, as in other commands.
    let o = Command::new(common::bin())
        .args(["render", &local, "--username", "u", "--password-stdin"])
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
