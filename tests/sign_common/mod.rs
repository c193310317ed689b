//! Shared by the sign_* tests: test images pushed with oci-client to the
//! shared real registry helper, and running the built binary.
#![allow(dead_code)]

pub mod pki;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

/// The registry helper every test shares (Debian's docker-registry on a
/// free loopback port).
pub use crate::registry::Registry;

/// An oci-client over plain HTTP.
pub fn oci_client() -> Client {
    Client::new(ClientConfig {
        protocol: ClientProtocol::Http,
        ..Default::default()
    })
}

/// Pushes a small one-layer image whose content depends on `seed`; returns
/// its manifest digest.
pub async fn push_test_image(reference: &str, seed: &str) -> String {
    let r: Reference = reference.parse().expect("reference");
    let layer = ImageLayer::oci_v1(format!("layer for {seed}\n").into_bytes(), None);
    let config = Config::oci_v1(
        format!(r#"{{"architecture":"amd64","os":"linux","config":{{"Labels":{{"seed":"{seed}"}}}},"rootfs":{{"type":"layers","diff_ids":[]}}}}"#)
            .into_bytes(),
        None,
    );
    let client = oci_client();
    client
        .push(&r, &[layer], config, &RegistryAuth::Anonymous, None)
        .await
        .expect("push test image");
    client
        .fetch_manifest_digest(&r, &RegistryAuth::Anonymous)
        .await
        .expect("digest")
}

pub use crate::registry::client;

/// The signing target `image` names, through [`client`].
pub fn target(image: &str) -> olm_catalog::sign::Target {
    olm_catalog::sign::Target::parse(image, &client()).expect("target")
}

/// The referrers index of `digest` in `image`'s repository.
pub async fn referrers(image: &str, digest: &str) -> serde_json::Value {
    let olm_catalog::oci::ImageRef::Registry { repo, .. } = image.parse().expect("ref") else {
        panic!("{image} is not a registry reference");
    };
    client().referrers(&repo, digest).await.expect("referrers")
}

/// Runs the binary with `COSIGN_PASSWORD` set (unless `None`) and no stdin.
pub fn run(args: &[&str], password: Option<&str>, cwd: &Path) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_olm-catalog"));
    cmd.args(args).current_dir(cwd).stdin(Stdio::null());
    // An isolated Docker config so a developer's credentials never leak in.
    cmd.env("DOCKER_CONFIG", cwd.join("docker-config"));
    match password {
        Some(p) => cmd.env("COSIGN_PASSWORD", p),
        None => cmd.env_remove("COSIGN_PASSWORD"),
    };
    cmd.output().expect("run olm-catalog")
}

/// stdout and stderr as text, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Generates `<dir>/<prefix>.key` and `.pub` with the binary.
pub fn generate_keys(dir: &Path, prefix: &str, password: &str) -> (PathBuf, PathBuf) {
    let out = run(
        &["sign", "generate-key-pair", "--output-prefix", prefix],
        Some(password),
        dir,
    );
    assert!(out.status.success(), "generate-key-pair: {}", text(&out));
    (
        dir.join(format!("{prefix}.key")),
        dir.join(format!("{prefix}.pub")),
    )
}
