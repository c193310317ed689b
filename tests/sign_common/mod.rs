//! Shared by the sign_* tests: a real `docker-registry` on a loopback port,
//! test images pushed with oci-client, and running the built binary.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

/// Debian's distribution registry.
pub const REGISTRY_BIN: &str = "/usr/bin/docker-registry";

/// A registry process serving a temporary directory; killed on drop.
pub struct Registry {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    _dir: tempfile::TempDir,
}

impl Registry {
    /// Starts a registry on a free loopback port and waits until it answers.
    pub fn start() -> Registry {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port();
        let addr = format!("127.0.0.1:{port}");
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {addr}\n",
                dir.path().join("data").display()
            ),
        )
        .expect("write config");
        let child = Command::new(REGISTRY_BIN)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start /usr/bin/docker-registry (apt install docker-registry)");
        let mut reg = Registry {
            child,
            addr,
            _dir: dir,
        };
        reg.wait_ready();
        reg
    }

    fn wait_ready(&mut self) {
        // Readiness poll, not a timing assertion: the generous bound only
        // keeps a broken registry from hanging the suite.
        for _ in 0..400 {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("docker-registry exited early: {status}");
            }
            if std::net::TcpStream::connect(&self.addr).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("docker-registry did not start listening on {}", self.addr);
    }

    /// `127.0.0.1:PORT/<repo>:<tag>`.
    pub fn image(&self, repo: &str, tag: &str) -> String {
        format!("{}/{repo}:{tag}", self.addr)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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
