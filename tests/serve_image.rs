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
