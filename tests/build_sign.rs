//! `bundle build --sign` and `index build --sign`: what is pushed is signed
//! by digest, and a bad key stops the build before anything is written.
use crate::common;
use crate::registry;

use std::process::Command;

use registry::Registry;

fn run(args: &[&str], password: &str) -> std::process::Output {
    Command::new(common::bin())
        .args(args)
        .env("COSIGN_PASSWORD", password)
        .output()
        .expect("run olm-catalog")
}

#[test]
fn build_then_sign_and_refuse_a_wrong_password_before_pushing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let prefix = tmp.path().join("k");
    let prefix = prefix.to_str().expect("utf-8 path");
    let o = run(
        &["sign", "generate-key-pair", "--output-prefix", prefix],
        "pw",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let key = format!("{prefix}.key");
    let public = format!("{prefix}.pub");
    let bundle = common::fixtures().join("bundles/good/memcached-operator-0.0.2");
    let bundle = bundle.to_str().expect("utf-8 path");
    let layout = tmp.path().join("layout");
    let dest = format!("oci:{}:bundle", layout.display());

    let o = run(
        &[
            "bundle", "build", bundle, "--tag", &dest, "-q", "--sign", "--key", &key,
        ],
        "pw",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pushed = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let digest = pushed.rsplit_once('@').expect("ref@digest").1.to_string();

    let o = run(&["verify", &dest, "--key", &public], "");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let payloads: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json payloads");
    assert_eq!(
        payloads[0]["critical"]["image"]["docker-manifest-digest"],
        serde_json::json!(digest)
    );

    // A wrong password fails before the push: the layout gains no new tag.
    let before = std::fs::read_to_string(layout.join("index.json")).expect("index.json");
    let other = format!("oci:{}:other", layout.display());
    let o = run(
        &[
            "bundle", "build", bundle, "--tag", &other, "-q", "--sign", "--key", &key,
        ],
        "wrong",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("wrong password"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let after = std::fs::read_to_string(layout.join("index.json")).expect("index.json");
    assert_eq!(before, after);

    // --sign without --key is a usage error.
    let o = run(
        &["bundle", "build", bundle, "--tag", &other, "--sign"],
        "pw",
    );
    assert_eq!(o.status.code(), Some(2));
}

/// The tags of `repo` on `reg`, through the registry API (empty when the
/// repository does not exist).
fn tags(reg: &Registry, repo: &str, creds: &str) -> Vec<String> {
    let out = Command::new("skopeo")
        .args([
            "list-tags",
            "--tls-verify=false",
            "--creds",
            creds,
            &format!("docker://{}/{repo}", reg.host()),
        ])
        .output()
        .expect("run skopeo");
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("NAME_UNKNOWN") || err.contains("name unknown") || err.contains("404"),
            "skopeo list-tags: {err}"
        );
        return Vec::new();
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("tags json");
    let mut tags: Vec<String> = v["Tags"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    tags.sort();
    tags
}

/// A registry that needs a password, used as a new user would:
/// `bundle build --username --password-stdin --sign` pushes and signs with
/// the same credential (one registry stack under both), `index add --tag
/// --sign` too, and plain `sign`/`verify` find the credential in
/// REGISTRY_AUTH_FILE. A key password that is wrong leaves no tag.
#[test]
fn push_and_sign_against_a_password_registry() {
    let reg = Registry::start_with_auth("alice", "s3cret");
    let tmp = tempfile::tempdir().expect("tempdir");
    let prefix = tmp.path().join("cosign");
    let prefix = prefix.to_str().expect("utf-8 path");
    let o = run(
        &["sign", "generate-key-pair", "--output-prefix", prefix],
        "pw",
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let key = format!("{prefix}.key");
    let public = format!("{prefix}.pub");
    let creds = ["--username", "alice", "--password-stdin"];
    let pw = [("COSIGN_PASSWORD", "pw")];

    // bundle build --tag REG/me/b:v1 --username alice --password-stdin --sign
    let bundle = common::fixtures().join("graph/pkg-semver/1.0.0");
    let bundle = bundle.to_str().expect("utf-8 path");
    let b = format!("{}/me/b:v1", reg.host());
    let mut args = vec![
        "bundle", "build", bundle, "--tag", &b, "-q", "--sign", "--key", &key,
    ];
    args.extend(creds);
    let (code, out, err) = common::run_cli(&args, &pw, Some("s3cret\n"));
    assert_eq!(code, 0, "{err}");
    let digest = out
        .trim()
        .rsplit_once('@')
        .expect("ref@digest")
        .1
        .to_string();
    let sig_tag = olm_catalog::sign::signature_tag(&digest);
    assert_eq!(
        tags(&reg, "me/b", "alice:s3cret"),
        vec![sig_tag.clone(), "v1".to_string()]
    );

    // verify with the same flags.
    let mut args = vec!["verify", &b, "--key", &public];
    args.extend(creds);
    let (code, out, err) = common::run_cli(&args, &[], Some("s3cret\n"));
    assert_eq!(code, 0, "{err}");
    let payloads: serde_json::Value = serde_json::from_str(&out).expect("json payloads");
    assert_eq!(
        payloads[0]["critical"]["image"]["docker-manifest-digest"],
        serde_json::json!(digest)
    );
    assert_eq!(
        payloads[0]["critical"]["identity"]["docker-reference"],
        serde_json::json!(format!("{}/me/b", reg.host()))
    );

    // Without credentials the registry refuses, and says so.
    let (code, _, err) = common::run_cli(&["verify", &b, "--key", &public], &[], None);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("authentication to"), "{err}");

    // Plain sign/verify with REGISTRY_AUTH_FILE.
    let auth_file = tmp.path().join("auth.json");
    let encoded =
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, "alice:s3cret");
    std::fs::write(
        &auth_file,
        format!(r#"{{"auths":{{"{}":{{"auth":"{encoded}"}}}}}}"#, reg.host()),
    )
    .expect("auth file");
    let auth_env = [
        ("REGISTRY_AUTH_FILE", auth_file.to_str().expect("utf-8")),
        ("COSIGN_PASSWORD", "pw"),
    ];
    let (code, _, err) = common::run_cli(
        &["sign", &b, "--key", &key, "-a", "stage=release"],
        &auth_env,
        None,
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = common::run_cli(
        &["verify", &b, "--key", &public, "-a", "stage=release"],
        &auth_env,
        None,
    );
    assert_eq!(code, 0, "{err}");
    let payloads: serde_json::Value = serde_json::from_str(&out).expect("json payloads");
    assert_eq!(payloads.as_array().expect("array").len(), 1, "{out}");

    // index add REF --tag REG/me/catalog:v1 --sign, same credential for the
    // pull, the push and the signature.
    let db = tmp.path().join("index.db");
    let db = db.to_str().expect("utf-8");
    let catalog = format!("{}/me/catalog:v1", reg.host());
    let mut args = vec![
        "index",
        "add",
        "--database",
        db,
        "--mode",
        "semver",
        &b,
        "--tag",
        &catalog,
        "--base",
        "scratch",
        "-q",
        "--sign",
        "--key",
        &key,
    ];
    args.extend(creds);
    let (code, out, err) = common::run_cli(&args, &pw, Some("s3cret\n"));
    assert_eq!(code, 0, "{err}");
    let index_digest = out
        .trim()
        .rsplit_once('@')
        .expect("ref@digest")
        .1
        .to_string();
    let (code, out, err) =
        common::run_cli(&["verify", &catalog, "--key", &public], &auth_env, None);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&index_digest), "{out}");

    // Several bundles with a template, each signed before its tag moves.
    let one = common::fixtures().join("graph/pkg-semver/1.0.1");
    let template = format!("{}/me/many:{{dir}}", reg.host());
    let mut args = vec![
        "bundle",
        "build",
        bundle,
        one.to_str().expect("utf-8"),
        "--tag-template",
        &template,
        "-q",
        "--sign",
        "--key",
        &key,
    ];
    args.extend(creds);
    let (code, out, err) = common::run_cli(&args, &pw, Some("s3cret\n"));
    assert_eq!(code, 0, "{err}");
    for line in out.lines() {
        let (image, _) = line.rsplit_once('@').expect("ref@digest");
        let (code, _, err) = common::run_cli(&["verify", image, "--key", &public], &auth_env, None);
        assert_eq!(code, 0, "{image}: {err}");
    }
    assert_eq!(tags(&reg, "me/many", "alice:s3cret").len(), 4);

    // A wrong key password: nothing is pushed, no tag appears.
    let other = format!("{}/me/other:v1", reg.host());
    let mut args = vec![
        "bundle", "build", bundle, "--tag", &other, "-q", "--sign", "--key", &key,
    ];
    args.extend(creds);
    let (code, _, err) = common::run_cli(&args, &[("COSIGN_PASSWORD", "wrong")], Some("s3cret\n"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("wrong password"), "{err}");
    assert!(tags(&reg, "me/other", "alice:s3cret").is_empty());

    // index add --tag --sign with a wrong key password: stopped before the
    // database is written, and no tag.
    let db2 = tmp.path().join("index2.db");
    let db2 = db2.to_str().expect("utf-8");
    let other = format!("{}/me/other-catalog:v1", reg.host());
    let mut args = vec![
        "index",
        "add",
        "--database",
        db2,
        "--mode",
        "semver",
        &b,
        "--tag",
        &other,
        "--base",
        "scratch",
        "-q",
        "--sign",
        "--key",
        &key,
    ];
    args.extend(creds);
    let (code, _, err) = common::run_cli(&args, &[("COSIGN_PASSWORD", "wrong")], Some("s3cret\n"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("wrong password"), "{err}");
    assert!(!std::path::Path::new(db2).exists());
    assert!(tags(&reg, "me/other-catalog", "alice:s3cret").is_empty());
}
