//! Registries as they are met outside a laptop: HTTPS with a private CA,
//! docker credential helpers, a base image on one registry and the index on
//! another, and zstd layers written by skopeo. All against real Debian
//! docker-registry processes on loopback.
use crate::common;
use crate::registry;

use std::path::{Path, PathBuf};
use std::process::Command;

use registry::{skopeo, Registry};

fn etcd() -> PathBuf {
    common::corpus().join("operators/etcd/0.9.4")
}

fn run(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> (i32, String, String) {
    common::run_cli(args, env, stdin)
}

fn digest_of(stdout: &str) -> String {
    stdout
        .trim()
        .rsplit_once('@')
        .expect("ref@digest on stdout")
        .1
        .to_string()
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn openssl(args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .output()
        .expect("run openssl (apt-get install -y openssl)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A private CA and a server certificate for 127.0.0.1 that it signed:
/// (ca.pem, server.pem, server.key).
fn make_certs(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let p = |n: &str| dir.join(n);
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    let (ca_key, ca_pem) = (p("ca.key"), p("ca.pem"));
    ca.extend([
        "-nodes",
        "-keyout",
        path_str(&ca_key),
        "-out",
        path_str(&ca_pem),
        "-days",
        "2",
        "-subj",
        "/CN=olm-catalog test CA",
    ]);
    openssl(&ca);
    let (key, csr, cert, ext) = (
        p("server.key"),
        p("server.csr"),
        p("server.pem"),
        p("ext.cnf"),
    );
    let mut req = vec!["req"];
    req.extend(ec);
    req.extend([
        "-nodes",
        "-keyout",
        path_str(&key),
        "-out",
        path_str(&csr),
        "-subj",
        "/CN=127.0.0.1",
    ]);
    openssl(&req);
    std::fs::write(
        &ext,
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .expect("ext");
    openssl(&[
        "x509",
        "-req",
        "-in",
        path_str(&csr),
        "-CA",
        path_str(&ca_pem),
        "-CAkey",
        path_str(&ca_key),
        "-CAcreateserial",
        "-out",
        path_str(&cert),
        "-days",
        "2",
        "-extfile",
        path_str(&ext),
    ]);
    (ca_pem, cert, key)
}

#[test]
fn https_with_a_private_ca() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (ca, cert, key) = make_certs(tmp.path());
    let reg = Registry::start_tls(&cert, &key);
    let host = reg.host();
    let dir = etcd();
    let tag = format!("{host}/etcd/bundle:tls");
    let build = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec!["bundle", "build", path_str(&dir), "--tag", &tag, "-q"];
        args.extend_from_slice(extra);
        run(&args, env, None)
    };

    // Not trusted: a clear error naming the certificate problem, with the
    // ways out; no fallback to plain HTTP on a TLS port.
    let (code, _, err) = build(&[], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("TLS certificate of {host} not accepted"))
            && err.contains("UnknownIssuer")
            && err.contains("--ca-file")
            && err.contains("--insecure"),
        "unclear TLS error: {err}"
    );
    assert!(!err.contains("HTTP request to an HTTPS server"), "{err}");

    // --insecure accepts it.
    let (code, out, err) = build(&["--insecure"], &[]);
    assert_eq!(code, 0, "{err}");
    let digest = digest_of(&out);

    // The CA, given with --ca-file or SSL_CERT_FILE, verifies it.
    let (code, out, err) = build(&["--ca-file", path_str(&ca)], &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(digest_of(&out), digest);
    let (code, out, err) = build(&[], &[("SSL_CERT_FILE", path_str(&ca))]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(digest_of(&out), digest);

    // A file that is not PEM is named.
    let bad = tmp.path().join("bad.pem");
    std::fs::write(&bad, "not a certificate").expect("write");
    let (code, _, err) = build(&["--ca-file", path_str(&bad)], &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--ca-file") && err.contains("bad.pem"),
        "{err}"
    );

    // skopeo, trusting the same CA, reads what was pushed.
    let certs_dir = tmp.path().join("certs.d");
    std::fs::create_dir_all(&certs_dir).expect("mkdir");
    std::fs::copy(&ca, certs_dir.join("ca.crt")).expect("copy");
    let v: serde_json::Value = serde_json::from_str(&skopeo(&[
        "inspect",
        "--cert-dir",
        path_str(&certs_dir),
        &format!("docker://{tag}"),
    ]))
    .expect("json");
    assert_eq!(v["Digest"], digest.as_str());

    // Pulling (index add) honours --ca-file too.
    let db = tmp.path().join("index.db");
    let (code, _, err) = run(
        &[
            "index",
            "add",
            "--database",
            path_str(&db),
            "--mode",
            "semver",
            &tag,
            "--ca-file",
            path_str(&ca),
        ],
        &[],
        None,
    );
    assert_eq!(code, 0, "{err}");
}

/// Writes `docker-credential-NAME` into `bin`: it logs each request to
/// `log` and answers `user`/`secret` for `host`, "not found" otherwise.
fn write_helper(bin: &Path, name: &str, host: &str, user: &str, secret: &str, log: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let path = bin.join(format!("docker-credential-{name}"));
    std::fs::write(
        &path,
        format!(
            r#"#!/bin/sh
[ "$1" = get ] || {{ echo "unsupported: $1" >&2; exit 1; }}
read -r server
echo "$server" >> '{log}'
if [ "$server" = '{host}' ]; then
  printf '{{"ServerURL":"%s","Username":"{user}","Secret":"{secret}"}}\n' "$server"
else
  echo "credentials not found in native keychain"
  exit 1
fi
"#,
            log = log.display()
        ),
    )
    .expect("helper");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn docker_credential_helpers() {
    let reg = Registry::start_with_auth("olm", "s3cret");
    let host = reg.host();
    let tmp = tempfile::tempdir().expect("tmp");
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let log = tmp.path().join("helper.log");
    write_helper(&bin, "good", &host, "olm", "s3cret", &log);
    write_helper(&bin, "wrongpw", &host, "olm", "nope", &log);
    write_helper(&bin, "elsewhere", "quay.io", "olm", "s3cret", &log);
    // A helper that breaks: its message must reach the user.
    {
        use std::os::unix::fs::PermissionsExt as _;
        let p = bin.join("docker-credential-broken");
        std::fs::write(&p, "#!/bin/sh\necho 'keychain is locked' >&2\nexit 3\n").expect("w");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let docker = tmp.path().join("docker");
    std::fs::create_dir_all(&docker).expect("mkdir");
    let push = |config: &str, tag: &str| {
        std::fs::write(docker.join("config.json"), config).expect("config");
        let _ = std::fs::remove_file(&log);
        run(
            &[
                "bundle",
                "build",
                path_str(&etcd()),
                "--tag",
                &format!("{host}/{tag}"),
                "-q",
            ],
            &[("DOCKER_CONFIG", path_str(&docker)), ("PATH", &path)],
            None,
        )
    };
    let asked = || std::fs::read_to_string(&log).unwrap_or_default();

    // credHelpers for this registry.
    let (code, out, err) = push(
        &format!(r#"{{"credHelpers":{{"{host}":"good"}}}}"#),
        "etcd/bundle:helper",
    );
    assert_eq!(code, 0, "{err}");
    // Asked once for the whole push (the answer is cached per registry),
    // with the registry host on stdin.
    assert_eq!(asked(), format!("{host}\n"));
    let digest = digest_of(&out);

    // credsStore, with the empty `auths` entry `docker login` leaves.
    let (code, _, err) = push(
        &format!(r#"{{"auths":{{"{host}":{{}}}},"credsStore":"good"}}"#),
        "etcd/bundle:store",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(asked(), format!("{host}\n"));

    // A per-registry helper wins over the default store.
    let (code, _, err) = push(
        &format!(r#"{{"credHelpers":{{"{host}":"good"}},"credsStore":"wrongpw"}}"#),
        "etcd/bundle:precedence",
    );
    assert_eq!(code, 0, "{err}");

    // The helper's password is wrong: the registry's refusal names the user.
    let (code, _, err) = push(
        &format!(r#"{{"credHelpers":{{"{host}":"wrongpw"}}}}"#),
        "etcd/bundle:x",
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("rejected the credentials of user `olm`"),
        "{err}"
    );

    // A store with nothing for this registry: "none were found".
    let (code, _, err) = push(r#"{"credsStore":"elsewhere"}"#, "etcd/bundle:x");
    assert_eq!(code, 2);
    assert!(err.contains("none were found"), "{err}");
    assert_eq!(asked(), format!("{host}\n"));

    // A helper that is not installed, and one that fails, are named.
    let (code, _, err) = push(
        &format!(r#"{{"credHelpers":{{"{host}":"missing"}}}}"#),
        "etcd/bundle:x",
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("docker-credential-missing") && err.contains("not on PATH"),
        "{err}"
    );
    let (code, _, err) = push(
        &format!(r#"{{"credHelpers":{{"{host}":"broken"}}}}"#),
        "etcd/bundle:x",
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("docker-credential-broken") && err.contains("keychain is locked"),
        "{err}"
    );

    let v: serde_json::Value = serde_json::from_str(&skopeo(&[
        "inspect",
        "--tls-verify=false",
        "--creds",
        "olm:s3cret",
        &format!("docker://{host}/etcd/bundle:helper"),
    ]))
    .expect("json");
    assert_eq!(v["Digest"], digest.as_str());
}

fn sqlite_index(dir: &Path) -> PathBuf {
    let db = dir.join("index.db");
    let (code, _, err) = run(
        &[
            "index",
            "add",
            "--database",
            path_str(&db),
            "--mode",
            "semver",
            path_str(&etcd()),
        ],
        &[],
        None,
    );
    assert_eq!(code, 0, "{err}");
    db
}

#[test]
fn base_image_on_another_registry() {
    // The base on registry A (anonymous); the index goes to registry B,
    // which wants credentials: blobs cannot be mounted across registries,
    // so the base's layers are copied, and the credentials given are B's.
    let a = Registry::start();
    let b = Registry::start_with_auth("olm", "s3cret");
    let tmp = tempfile::tempdir().expect("tmp");
    let base = format!("{}/base/image:1", a.host());
    let (code, _, err) = run(
        &["bundle", "build", path_str(&etcd()), "--tag", &base, "-q"],
        &[],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let base_manifest: serde_json::Value = serde_json::from_str(&skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{base}"),
    ]))
    .expect("json");
    let base_layer = base_manifest["layers"][0]["digest"]
        .as_str()
        .expect("layer")
        .to_string();

    let db = sqlite_index(tmp.path());
    let dest = format!("{}/catalog/index:v1", b.host());
    let (code, out, err) = run(
        &[
            "index",
            "build",
            "--database",
            path_str(&db),
            "--base",
            &base,
            "--tag",
            &dest,
            "--username",
            "olm",
            "--password-stdin",
        ],
        &[],
        Some("s3cret\n"),
    );
    assert_eq!(code, 0, "{err}");
    let digest = digest_of(&out);

    // Registry B has every blob: skopeo copies the image out of it alone.
    let layout = tmp.path().join("copy");
    skopeo(&[
        "copy",
        "--src-tls-verify=false",
        "--src-creds",
        "olm:s3cret",
        &format!("docker://{dest}"),
        &format!("oci:{}:v1", layout.display()),
    ]);
    let manifest: serde_json::Value = serde_json::from_str(&skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        "--creds",
        "olm:s3cret",
        &format!("docker://{dest}"),
    ]))
    .expect("json");
    let layers: Vec<&str> = manifest["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .map(|l| l["digest"].as_str().expect("digest"))
        .collect();
    assert_eq!(layers.len(), 2, "{manifest}");
    assert_eq!(layers[0], base_layer, "the base layer is first, unchanged");
    assert!(b.blob_file(&base_layer).is_file());
    let inspected: serde_json::Value = serde_json::from_str(&skopeo(&[
        "inspect",
        "--tls-verify=false",
        "--creds",
        "olm:s3cret",
        &format!("docker://{dest}"),
    ]))
    .expect("json");
    assert_eq!(inspected["Digest"], digest.as_str());

    // The credentials were B's alone: without them B refuses, by name.
    let (code, _, err) = run(
        &[
            "index",
            "build",
            "--database",
            path_str(&db),
            "--base",
            &base,
            "--tag",
            &format!("{}/catalog/index:v2", b.host()),
        ],
        &[],
        None,
    );
    assert_eq!(code, 2, "B without credentials must refuse");
    assert!(
        err.contains(&b.host()) && err.contains("none were found"),
        "{err}"
    );
}

#[test]
fn zstd_layers_written_by_skopeo_are_pulled() {
    // skopeo recompresses only when it uploads the layer, not when the
    // destination registry has (or can mount) the gzip one: two registries.
    let reg = Registry::start();
    let other = Registry::start();
    let tmp = tempfile::tempdir().expect("tmp");
    let gz = format!("{}/etcd/bundle:gzip", reg.host());
    let zst = format!("{}/etcd/bundle:zstd", other.host());
    let (code, _, err) = run(
        &["bundle", "build", path_str(&etcd()), "--tag", &gz, "-q"],
        &[],
        None,
    );
    assert_eq!(code, 0, "{err}");
    skopeo(&[
        "copy",
        "--src-tls-verify=false",
        "--dest-tls-verify=false",
        "--dest-compress-format",
        "zstd",
        &format!("docker://{gz}"),
        &format!("docker://{zst}"),
    ]);
    let manifest: serde_json::Value = serde_json::from_str(&skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{zst}"),
    ]))
    .expect("json");
    assert_eq!(
        manifest["layers"][0]["mediaType"], "application/vnd.oci.image.layer.v1.tar+zstd",
        "skopeo did not write a zstd layer: {manifest}"
    );

    // Both images give the same index rows.
    let mut listings = Vec::new();
    for (name, reference) in [("gz", &gz), ("zstd", &zst)] {
        let db = tmp.path().join(format!("{name}.db"));
        let (code, _, err) = run(
            &[
                "index",
                "add",
                "--database",
                path_str(&db),
                "--mode",
                "semver",
                reference,
            ],
            &[],
            None,
        );
        assert_eq!(code, 0, "index add {reference}: {err}");
        let (code, out, err) = run(
            &[
                "index",
                "list",
                "bundles",
                "--database",
                path_str(&db),
                "-o",
                "json",
            ],
            &[],
            None,
        );
        assert_eq!(code, 0, "{err}");
        listings.push(out.replace(reference.as_str(), "REF"));
    }
    assert_eq!(listings[0], listings[1]);
    assert!(
        listings[0].contains("etcdoperator.v0.9.4"),
        "{}",
        listings[0]
    );
}
