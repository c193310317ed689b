//! `bundle build --sign` and `index build --sign`: what is pushed is signed
//! by digest, and a bad key stops the build before anything is written.
mod common;

use std::process::Command;

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
