//! A real registry for tests: Debian's `docker-registry` (distribution 2.8)
//! on a free loopback port, with its own storage and config in a temporary
//! directory. Stopped (killed) on drop; `stop`/`start` keep port and storage,
//! so a test can take it down in the middle of something and bring it back.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Path of the registry binary (`apt-get install docker-registry`).
pub const REGISTRY_BIN: &str = "/usr/bin/docker-registry";

/// A running registry.
pub struct Registry {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a free loopback port");
    l.local_addr().expect("local addr").port()
}

impl Registry {
    /// Starts a registry without auth.
    pub fn start() -> Registry {
        Registry::launch(None, None)
    }

    /// Starts a registry requiring HTTP basic auth (htpasswd, bcrypt) for
    /// `user`/`password`.
    pub fn start_with_auth(user: &str, password: &str) -> Registry {
        let hash = bcrypt::hash(password, 4).expect("bcrypt");
        Registry::launch(Some(format!("{user}:{hash}\n")), None)
    }

    /// Starts a registry serving HTTPS only, with the PEM certificate
    /// (chain) and key files given.
    pub fn start_tls(cert: &Path, key: &Path) -> Registry {
        Registry::launch(None, Some((cert.to_path_buf(), key.to_path_buf())))
    }

    fn launch(htpasswd: Option<String>, tls: Option<(PathBuf, PathBuf)>) -> Registry {
        assert!(
            Path::new(REGISTRY_BIN).exists(),
            "{REGISTRY_BIN} missing: apt-get install -y docker-registry"
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let storage = dir.path().join("storage");
        std::fs::create_dir_all(&storage).expect("storage dir");
        let auth = match htpasswd {
            Some(line) => {
                let path = dir.path().join("htpasswd");
                std::fs::write(&path, line).expect("htpasswd");
                format!(
                    "auth:\n  htpasswd:\n    realm: test-realm\n    path: {}\n",
                    path.display()
                )
            }
            None => String::new(),
        };
        let tls = match tls {
            Some((cert, key)) => format!(
                "  tls:\n    certificate: {}\n    key: {}\n",
                cert.display(),
                key.display()
            ),
            None => String::new(),
        };
        let config = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n{tls}{auth}",
            storage.display()
        );
        std::fs::write(dir.path().join("config.yml"), config).expect("config");
        let mut r = Registry {
            child: None,
            port,
            dir,
        };
        r.start_process();
        r
    }

    fn start_process(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("registry.log"))
            .expect("log file");
        let child = Command::new(REGISTRY_BIN)
            .arg("serve")
            .arg(self.dir.path().join("config.yml"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start docker-registry");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if self.answers() {
                return;
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(|c| c.try_wait()) {
                panic!("docker-registry exited with {status}: {}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "docker-registry did not answer: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether `GET /v2/` gets an HTTP answer (200 or 401; a TLS-only
    /// registry answers plain HTTP with 400, which shows it is up too).
    fn answers(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        if s.write_all(b"GET /v2/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .is_err()
        {
            return false;
        }
        let mut buf = [0u8; 12];
        s.read_exact(&mut buf).is_ok() && buf.starts_with(b"HTTP/1.")
    }

    /// The registry's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `127.0.0.1:PORT/<repo>:<tag>`.
    pub fn image(&self, repo: &str, tag: &str) -> String {
        format!("{}/{repo}:{tag}", self.host())
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The storage root (`docker/registry/v2/...` below it).
    pub fn storage(&self) -> PathBuf {
        self.dir.path().join("storage")
    }

    /// The data file of a blob in storage.
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").expect("sha256 digest");
        self.storage()
            .join("docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }

    /// Kills the registry (storage stays).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it again on the same port and storage.
    pub fn restart(&mut self) {
        self.stop();
        self.start_process();
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs skopeo with `args`; returns stdout, panics with stderr on failure.
pub fn skopeo(args: &[&str]) -> String {
    let out = Command::new("skopeo")
        .args(args)
        .output()
        .expect("run skopeo (apt-get install -y skopeo)");
    assert!(
        out.status.success(),
        "skopeo {:?} failed: {}",
        args,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Our registry client with no credentials (the test registry is open).
pub fn client() -> olm_catalog::oci::RegistryClient {
    olm_catalog::oci::RegistryClient::new(olm_catalog::oci::ClientOptions {
        credentials: olm_catalog::oci::auth::CredentialStore::empty(),
        ..Default::default()
    })
    .expect("registry client")
}

/// Pushes `host/name:tag`, an OCI image built by hand: one gzip layer
/// (`digest` and bytes) and `config` as its config; returns the manifest.
/// For images `bundle build` would not make (labels only, a base with an
/// entrypoint, a layer larger than a test's memory limit).
pub fn push_one_layer_image(
    host: &str,
    name: &str,
    tag: &str,
    layer: (&str, &olm_catalog::oci::BlobBody),
    config: &serde_json::Value,
) -> serde_json::Value {
    use olm_catalog::oci::media::{self, Descriptor};
    let (digest, body) = layer;
    let layer_desc = Descriptor {
        media_type: media::OCI_LAYER_GZIP.into(),
        digest: digest.to_string(),
        size: body.len(),
        platform: None,
        annotations: None,
    };
    let config = serde_json::to_vec(config).expect("config");
    let config_desc = Descriptor::of(media::OCI_CONFIG, &config);
    let manifest = serde_json::json!({
        "schemaVersion": 2, "mediaType": media::OCI_MANIFEST,
        "config": config_desc, "layers": [layer_desc],
    });
    let bytes = serde_json::to_vec(&manifest).expect("manifest");
    let repo = olm_catalog::oci::Repo {
        host: host.into(),
        name: name.into(),
    };
    let client = client();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        client
            .push_blob(&repo, &layer_desc, body, None)
            .await
            .expect("push layer");
        client
            .push_blob(&repo, &config_desc, &config.into(), None)
            .await
            .expect("push config");
        client
            .put_manifest(&repo, tag, media::OCI_MANIFEST, &bytes)
            .await
            .expect("put manifest");
    });
    manifest
}
