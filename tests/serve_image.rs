//! `serve IMAGE_REF`: an index image pushed to a real registry is fetched,
//! its database unpacked and served; a gRPC client lists its packages.
use crate::common;
use crate::registry;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use olm_catalog::proto::registry_client::RegistryClient;
use olm_catalog::proto::{GetPackageRequest, ListPackageRequest};

#[test]
fn serves_the_catalog_of_an_index_image() {
    let reg = registry::Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("index.db");
    let db = db.to_str().expect("utf-8");
    let image = format!("{}/demo/catalog:v1", reg.host());
    let bundles: Vec<_> = ["1.0.0", "1.0.1", "1.1.0"]
        .iter()
        .map(|v| common::fixtures().join("graph/pkg-semver").join(v))
        .collect();
    let o = Command::new(common::bin())
        .args(["index", "add", "--database", db, "--mode", "semver"])
        .args(&bundles)
        .args(["--tag", &image, "-q"])
        .output()
        .expect("index add");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // What a server killed with SIGKILL left in the temporary directory:
    // the next server removes it (the pid of a process that has ended).
    let server_tmp = tmp.path().join("server-tmp");
    let mut gone = Command::new("true").spawn().expect("true");
    let dead_pid = gone.id();
    gone.wait().expect("wait");
    let orphan = server_tmp.join(format!("olm-catalog-serve-{dead_pid}-AbCdEf"));
    std::fs::create_dir_all(orphan.join("configs")).expect("orphan");
    let mut server = Command::new(common::bin())
        .args(["serve", &image, "--port", "0"])
        .env("TMPDIR", &server_tmp)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start serve");
    let stderr = server.stderr.take().expect("stderr");
    let mut addr = None;
    let mut seen = String::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.expect("stderr line");
        seen.push_str(&line);
        seen.push('\n');
        if let Some(a) = line.strip_prefix("serving api.Registry on ") {
            addr = Some(a.trim().to_string());
            break;
        }
    }
    let addr = addr.unwrap_or_else(|| {
        let _ = server.kill();
        panic!("serve did not start:\n{seen}")
    });
    assert!(seen.contains("unpacked the catalog of"), "{seen}");
    assert!(!orphan.exists(), "the orphan directory is still there");
    let own = format!("olm-catalog-serve-{}-", server.id());
    let names: Vec<String> = std::fs::read_dir(&server_tmp)
        .expect("server tmp")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n.starts_with(&own)), "{names:?}");

    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let (packages, default_channel) = rt.block_on(async {
        let mut client = RegistryClient::connect(format!("http://{addr}"))
            .await
            .expect("connect");
        let mut stream = client
            .list_packages(ListPackageRequest {})
            .await
            .expect("ListPackages")
            .into_inner();
        let mut names = Vec::new();
        while let Some(p) = stream.message().await.expect("stream") {
            names.push(p.name);
        }
        let pkg = client
            .get_package(GetPackageRequest {
                name: "demo".into(),
            })
            .await
            .expect("GetPackage")
            .into_inner();
        (names, pkg.default_channel_name)
    });
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(packages, ["demo"]);
    assert_eq!(default_channel, "stable");

    // An image without a catalog label is refused with a clear message.
    let bundle_ref = format!("{}/demo/bundle:v1", reg.host());
    let dir = common::fixtures().join("bundles/good/memcached-operator-0.0.2");
    let o = Command::new(common::bin())
        .args(["bundle", "build"])
        .arg(&dir)
        .args(["--tag", &bundle_ref, "-q"])
        .output()
        .expect("bundle build");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(common::bin())
        .args(["serve", &bundle_ref, "--port", "0"])
        .output()
        .expect("serve a bundle image");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is not an index or catalog image"), "{err}");
}

/// Bytes no compressor can shrink (xorshift64), `len` of them.
struct Noise {
    state: u64,
    left: u64,
}

impl std::io::Read for Noise {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.left as usize) / 8 * 8;
        let n = if n == 0 {
            buf.len().min(self.left as usize)
        } else {
            n
        };
        for chunk in buf[..n].chunks_mut(8) {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            chunk.copy_from_slice(&self.state.to_le_bytes()[..chunk.len()]);
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// Most bytes of data (heap and anonymous mappings: RLIMIT_DATA) the
/// commands below may take.
const DATA_LIMIT: u64 = 128 << 20;
/// The catalog image's one layer: larger than [`DATA_LIMIT`].
const NOISE_BYTES: u64 = 160 << 20;

/// Pushes a catalog image whose one layer (gzip, stored: incompressible)
/// holds `configs/` (the FBC of `catalog`) and NOISE_BYTES of noise beside
/// it. The layer is built in and pushed from a temporary file.
fn push_large_catalog_image(reg: &registry::Registry, catalog: &std::path::Path) -> (String, u64) {
    let spool = olm_catalog::oci::blob::SpoolWriter::new().expect("spool");
    let gz = flate2::write::GzEncoder::new(spool, flate2::Compression::none());
    let mut tar = tar::Builder::new(gz);
    tar.append_dir_all("configs/kube-green", catalog)
        .expect("catalog into the layer");
    let mut header = tar::Header::new_gnu();
    header.set_size(NOISE_BYTES);
    header.set_mode(0o644);
    let noise = Noise {
        state: 0x9e37_79b9_7f4a_7c15,
        left: NOISE_BYTES,
    };
    tar.append_data(&mut header, "noise/noise.bin", noise)
        .expect("noise into the layer");
    let (layer, digest) = tar
        .into_inner()
        .and_then(|gz| gz.finish())
        .and_then(|spool| spool.finish())
        .expect("layer");
    registry::push_one_layer_image(
        &reg.host(),
        "big/catalog",
        "v1",
        (&digest, &layer),
        &serde_json::json!({
            "architecture": "amd64", "os": "linux",
            "config": {"Labels": {"operators.operatorframework.io.index.configs.v1": "/configs"}},
            "rootfs": {"type": "layers", "diff_ids": []},
        }),
    );
    (format!("{}/big/catalog:v1", reg.host()), layer.len())
}

/// `render IMAGE` and `serve IMAGE` of a catalog image whose layer is larger
/// than the memory the process may take: the layer goes from the registry
/// to a temporary file and is unpacked from there as it is decompressed.
/// (160 MiB through a loopback registry takes a few seconds: a layer larger
/// than the limit is the only way to show that none is held in memory.)
#[test]
fn a_layer_larger_than_memory_is_streamed_to_disk() {
    let reg = registry::Registry::start();
    let catalog = common::corpus().join("catalogs/v4.18/kube-green");
    let (image, layer_size) = push_large_catalog_image(&reg, &catalog);
    assert!(layer_size > DATA_LIMIT, "the layer must not fit the limit");
    let limit = format!("--data={DATA_LIMIT}");
    let tmp = tempfile::tempdir().expect("tempdir");

    // The limit binds: holding the layer in memory fails under it.
    let o = Command::new("prlimit")
        .arg(&limit)
        .args(["--", "python3", "-c"])
        .arg(format!("bytearray({NOISE_BYTES})"))
        .output()
        .expect("prlimit python3");
    assert!(!o.status.success(), "the limit does not bind");

    let o = Command::new("prlimit")
        .arg(&limit)
        .arg("--")
        .arg(common::bin())
        .args(["render", &image, "-o", "json"])
        .env("TMPDIR", tmp.path())
        .output()
        .expect("render IMAGE");
    assert!(
        o.status.success(),
        "render IMAGE under a {DATA_LIMIT}-byte limit: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let direct = common::olm(&["render", catalog.to_str().expect("utf-8"), "-o", "json"]);
    assert!(direct.status.success());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&direct.stdout),
        "the image renders as its catalog directory does"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("tmp")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert!(left.is_empty(), "render left {left:?} behind");

    let mut server = Command::new("prlimit")
        .arg(&limit)
        .arg("--")
        .arg(common::bin())
        .args(["serve", &image, "--port", "0"])
        .env("TMPDIR", tmp.path())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start serve");
    let stderr = server.stderr.take().expect("stderr");
    let mut addr = None;
    let mut seen = String::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.expect("stderr line");
        seen.push_str(&line);
        seen.push('\n');
        if let Some(a) = line.strip_prefix("serving api.Registry on ") {
            addr = Some(a.trim().to_string());
            break;
        }
    }
    let Some(addr) = addr else {
        let _ = server.kill();
        let _ = server.wait();
        panic!("serve IMAGE did not start under the limit:\n{seen}")
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let packages = rt.block_on(async {
        let mut client = RegistryClient::connect(format!("http://{addr}"))
            .await
            .expect("connect");
        let mut stream = client
            .list_packages(ListPackageRequest {})
            .await
            .expect("ListPackages")
            .into_inner();
        let mut names = Vec::new();
        while let Some(p) = stream.message().await.expect("stream") {
            names.push(p.name);
        }
        names
    });
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(packages, ["kube-green"]);
}
