//! `catalog mirror` between two real registries (Debian's docker-registry
//! twice, on loopback): corpus bundles (kube-green, their images pointed at
//! the source registry) built and pushed with `bundle build`, a multi-arch
//! related image, a catalog as an FBC directory and as an SQLite index; the
//! copies read back with skopeo, by digest.
use crate::common;
use crate::registry;

use std::path::{Path, PathBuf};
use std::process::Command;

use olm_catalog::oci::media::{self, Descriptor};
use olm_catalog::oci::BlobBody;
use olm_catalog::oci::Repo;
use registry::{skopeo, Registry};

fn run_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(common::bin())
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("run olm-catalog");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = common::run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// Pushes a one-layer linux/`arch` image to `repo` with our registry
/// client, the manifest under its digest; the manifest's descriptor.
async fn push_image(
    client: &olm_catalog::oci::RegistryClient,
    repo: &Repo,
    arch: &str,
    layer: Vec<u8>,
) -> Descriptor {
    let layer_desc = Descriptor::of(media::OCI_LAYER_TAR, &layer);
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": arch, "os": "linux",
        "rootfs": {"type": "layers", "diff_ids": [layer_desc.digest]},
    }))
    .expect("config");
    let config_desc = Descriptor::of(media::OCI_CONFIG, &config);
    for (d, data) in [(&layer_desc, layer), (&config_desc, config)] {
        client
            .push_blob(repo, d, &BlobBody::from(data), None)
            .await
            .expect("push blob");
    }
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2, "mediaType": media::OCI_MANIFEST,
        "config": config_desc, "layers": [layer_desc],
    }))
    .expect("manifest");
    let desc = Descriptor::of(media::OCI_MANIFEST, &manifest);
    client
        .put_manifest(repo, &desc.digest, media::OCI_MANIFEST, &manifest)
        .await
        .expect("put manifest");
    desc
}

/// Pushes a two-platform image (an OCI index of linux/amd64 and
/// linux/arm64 images) with our registry client; its index digest.
fn push_multiarch(reg: &Registry, name: &str, tag: &str) -> String {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let client = crate::registry::client();
    let repo = Repo {
        host: reg.host(),
        name: name.to_string(),
    };
    rt.block_on(async {
        let mut entries = Vec::new();
        for arch in ["amd64", "arm64"] {
            let layer = format!("the {arch} layer of {name}\n").into_bytes();
            let mut desc = push_image(&client, &repo, arch, layer).await;
            desc.platform = Some(olm_catalog::oci::media::Platform {
                architecture: arch.into(),
                os: "linux".into(),
                os_version: None,
                os_features: None,
                variant: None,
            });
            entries.push(desc);
        }
        let index = serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2, "mediaType": media::OCI_INDEX, "manifests": entries,
        }))
        .expect("index");
        client
            .put_manifest(&repo, tag, media::OCI_INDEX, &index)
            .await
            .expect("put index");
        media::sha256_digest(&index)
    })
}

/// The source side: kube-green 0.3.0 and 0.3.1 from the corpus, their
/// operator and kube-rbac-proxy images moved to `src` (the proxy a
/// two-platform image, the operators single images), built and pushed.
struct Source {
    bundles: Vec<String>,
    proxy_digest: String,
}

fn prepare_source(src: &Registry, tmp: &Path, sign_first_with: Option<&str>) -> Source {
    let host = src.host();
    let proxy = format!("{host}/kubebuilder/kube-rbac-proxy:v0.5.0");
    let proxy_digest = push_multiarch(src, "kubebuilder/kube-rbac-proxy", "v0.5.0");
    let mut bundles = Vec::new();
    for (i, v) in ["0.3.0", "0.3.1"].into_iter().enumerate() {
        let from = common::corpus().join("operators/kube-green").join(v);
        let dir = tmp.join("bundles").join(v);
        common::copy_dir(&from, &dir);
        let csv = dir.join("manifests/kube-green.clusterserviceversion.yaml");
        let operator = format!("{host}/kubegreen/kube-green:{v}");
        let text = std::fs::read_to_string(&csv)
            .expect("csv")
            .replace(
                &format!("image: kubegreen/kube-green:{v}"),
                &format!("image: {operator}"),
            )
            .replace("gcr.io/kubebuilder/kube-rbac-proxy:v0.5.0", &proxy);
        std::fs::write(&csv, text).expect("write csv");
        // The operator image: any image will do; a bundle image of the
        // etcd corpus package is one (another for each version).
        let etcd = common::corpus().join(["operators/etcd/0.6.1", "operators/etcd/0.9.0"][i]);
        ok(&[
            "bundle",
            "build",
            etcd.to_str().expect("utf-8"),
            "--tag",
            &operator,
            "-q",
        ]);
        let bundle = format!("{host}/kube-green/bundle:v{v}");
        let dir_s = dir.to_str().expect("utf-8");
        match (i, sign_first_with) {
            (0, Some(key)) => {
                let (code, _, err) = run_env(
                    &[
                        "bundle", "build", dir_s, "--tag", &bundle, "-q", "--sign", "--key", key,
                    ],
                    &[("COSIGN_PASSWORD", "pw")],
                );
                assert_eq!(code, 0, "{err}");
            }
            _ => {
                ok(&["bundle", "build", dir_s, "--tag", &bundle, "-q"]);
            }
        }
        bundles.push(bundle);
    }
    Source {
        bundles,
        proxy_digest,
    }
}

/// An SQLite index of the bundles (`index add`) and its FBC (`migrate`).
fn catalogs(src: &Source, tmp: &Path) -> (String, PathBuf) {
    let db = tmp.join("index.db");
    let db_s = db.to_str().expect("utf-8").to_string();
    let mut args = vec![
        "index",
        "add",
        "--database",
        &db_s,
        "--mode",
        "replaces",
        "-q",
    ];
    args.extend(src.bundles.iter().map(String::as_str));
    ok(&args);
    let fbc = tmp.join("fbc");
    ok(&["migrate", &db_s, fbc.to_str().expect("utf-8")]);
    (db_s, fbc)
}

/// `skopeo inspect --raw` of `reference`, and the sha256 of what it read.
fn raw(reference: &str) -> (serde_json::Value, String) {
    let out = Command::new("skopeo")
        .args(["inspect", "--raw", "--tls-verify=false", reference])
        .output()
        .expect("run skopeo");
    assert!(
        out.status.success(),
        "skopeo inspect {reference}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let digest = media::sha256_digest(&out.stdout);
    (
        serde_json::from_slice(&out.stdout).expect("manifest JSON"),
        digest,
    )
}

fn repositories_of(reg: &Registry) -> PathBuf {
    reg.storage().join("docker/registry/v2/repositories")
}

#[test]
fn mirrors_fbc_and_sqlite_catalogs_by_digest_resumably_and_to_oci_layouts() {
    let src = Registry::start();
    let dst = Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let source = prepare_source(&src, tmp.path(), None);
    let (db, fbc) = catalogs(&source, tmp.path());
    // A catalog made by another tool: bundle 0.3.0's relatedImages lost
    // the proxy its deployment runs.
    let cat_file = fbc.join("kube-green/catalog.json");
    let mut objs = common::json_stream(&std::fs::read_to_string(&cat_file).expect("catalog"));
    for o in &mut objs {
        if o["name"] == "kube-green.v0.3.0" {
            let ri = o["relatedImages"].as_array_mut().expect("relatedImages");
            ri.retain(|r| {
                !r["image"]
                    .as_str()
                    .unwrap_or("")
                    .contains("kube-rbac-proxy")
            });
        }
    }
    let text: String = objs
        .iter()
        .map(|o| serde_json::to_string_pretty(o).expect("json") + "\n")
        .collect();
    std::fs::write(&cat_file, text).expect("write catalog");
    let fbc_s = fbc.to_str().expect("utf-8");
    let to = format!("{}/mirror", dst.host());
    let out = tmp.path().join("out");
    let out_s = out.to_str().expect("utf-8");

    // Dry run: lists, copies nothing.
    let (code, stdout, err) = common::run(&[
        "catalog",
        "mirror",
        fbc_s,
        "--to",
        &to,
        "--output-dir",
        out_s,
        "--dry-run",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(stdout.matches("would copy ").count(), 5, "{stdout}");
    assert!(
        !repositories_of(&dst).exists(),
        "a dry run pushed something"
    );

    // The copy.
    let (code, stdout, err) = common::run(&[
        "catalog",
        "mirror",
        fbc_s,
        "--to",
        &to,
        "--output-dir",
        out_s,
        "-o",
        "json",
        "-j",
        "3",
    ]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("report");
    assert_eq!(report["summary"]["copied"], 5, "{report:#}");
    // The proxy's deployment use in 0.3.0 is reported (a warning).
    let missing = report["missing_related_images"]
        .as_array()
        .expect("missing");
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert_eq!(missing[0]["bundle"], "kube-green.v0.3.0");
    assert!(missing[0]["used_by"]
        .as_str()
        .expect("used_by")
        .starts_with("deployment kube-green-controller-manager container"));
    assert!(err.contains("related-images-missing"), "{err}");

    // Read back with skopeo: every image at REGISTRY/PREFIX/PATH@DIGEST,
    // the same digest as the source.
    for img in report["images"].as_array().expect("images") {
        let dest = img["destination"].as_str().expect("destination");
        let digest = img["digest"].as_str().expect("digest");
        let (_, got) = raw(&format!("docker://{dest}"));
        assert_eq!(got, digest, "{dest}");
        let (_, at_src) = raw(&format!(
            "docker://{}",
            img["source"].as_str().expect("src")
        ));
        assert_eq!(at_src, digest);
    }
    // The two-platform proxy, with both its images.
    let proxy_dest = format!("{to}/kubebuilder/kube-rbac-proxy");
    let (index, d) = raw(&format!("docker://{proxy_dest}:v0.5.0"));
    assert_eq!(d, source.proxy_digest);
    let children = index["manifests"].as_array().expect("manifests");
    assert_eq!(children.len(), 2);
    for c in children {
        let cd = c["digest"].as_str().expect("digest");
        assert_eq!(raw(&format!("docker://{proxy_dest}@{cd}")).1, cd);
    }

    // The outputs: the catalog names the copies, by digest.
    let rewritten = std::fs::read_to_string(out.join("catalog/kube-green/catalog.json"))
        .expect("rewritten catalog");
    assert!(!rewritten.contains(&src.host()), "{rewritten}");
    for o in common::json_stream(&rewritten) {
        if o["schema"] == "olm.bundle" {
            let image = o["image"].as_str().expect("image");
            assert!(
                image.starts_with(&format!("{to}/kube-green/bundle@sha256:")),
                "{image}"
            );
        }
    }
    let (code, _, err) = common::run(&["validate", out.join("catalog").to_str().expect("utf-8")]);
    assert_eq!(code, 0, "the rewritten catalog validates: {err}");
    let mapping = std::fs::read_to_string(out.join("mapping.txt")).expect("mapping");
    assert_eq!(mapping.lines().count(), 5, "{mapping}");
    assert!(mapping.contains(&format!(
        "{}/kubebuilder/kube-rbac-proxy@{}={proxy_dest}:v0.5.0\n",
        src.host(),
        source.proxy_digest
    )));
    let idms = std::fs::read_to_string(out.join("idms.yaml")).expect("idms");
    assert!(
        idms.starts_with("apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\n"),
        "{idms}"
    );
    assert_eq!(
        idms.matches("source: ").count(),
        3,
        "one per source repository: {idms}"
    );
    assert!(
        idms.contains(&format!(
            "  - mirrors:\n    - {proxy_dest}\n    source: {}/kubebuilder/kube-rbac-proxy\n",
            src.host()
        )),
        "{idms}"
    );

    // Resumable: a second run copies nothing, and says so.
    let (code, stdout, err) = common::run(&[
        "catalog",
        "mirror",
        fbc_s,
        "--to",
        &to,
        "--output-dir",
        out_s,
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let again: serde_json::Value = serde_json::from_str(&stdout).expect("report");
    assert_eq!(again["summary"]["copied"], 0);
    assert_eq!(again["summary"]["present"], 5);
    assert_eq!(again["summary"]["blobs_copied"], 0);
    assert!(
        err.contains("nothing to copy: all 5 image(s) are already at"),
        "{err}"
    );

    // The SQLite index as the source, to another prefix: its bundles
    // carry their CSVs, which list every deployment image.
    let (code, stdout, err) = common::run(&[
        "catalog",
        "mirror",
        &db,
        "--to",
        &format!("{}/from-index", dst.host()),
        "--output-dir",
        tmp.path().join("out-index").to_str().expect("utf-8"),
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&stdout).expect("report");
    assert_eq!(r["summary"]["copied"], 5, "{r:#}");
    assert!(r["missing_related_images"]
        .as_array()
        .expect("missing")
        .is_empty());
    for img in r["images"].as_array().expect("images") {
        let dest = img["destination"].as_str().expect("destination");
        assert_eq!(
            raw(&format!("docker://{dest}")).1,
            img["digest"].as_str().expect("digest")
        );
    }

    // oci:DIR: one layout per source repository, readable by skopeo.
    let layouts = tmp.path().join("layouts");
    let (code, _, err) = common::run(&[
        "catalog",
        "mirror",
        fbc_s,
        "--to",
        &format!("oci:{}", layouts.display()),
        "--output-dir",
        tmp.path().join("out-oci").to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 0, "{err}");
    let (index, d) = raw(&format!(
        "oci:{}:v0.5.0",
        layouts.join("kubebuilder/kube-rbac-proxy").display()
    ));
    assert_eq!(d, source.proxy_digest);
    assert_eq!(index["manifests"].as_array().expect("manifests").len(), 2);
    let copied = skopeo(&[
        "inspect",
        &format!("oci:{}:v0.3.1", layouts.join("kube-green/bundle").display()),
    ]);
    assert!(
        copied.contains("operators.operatorframework.io.bundle.package.v1"),
        "{copied}"
    );
    assert!(
        !tmp.path().join("out-oci/idms.yaml").exists(),
        "no IDMS for layouts"
    );
}

#[test]
fn verify_key_copies_signed_bundles_with_their_signatures_and_refuses_unsigned_ones() {
    let src = Registry::start();
    let dst = Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let prefix = tmp.path().join("k");
    let prefix = prefix.to_str().expect("utf-8");
    let (code, _, err) = run_env(
        &["sign", "generate-key-pair", "--output-prefix", prefix],
        &[("COSIGN_PASSWORD", "pw")],
    );
    assert_eq!(code, 0, "{err}");
    let key = format!("{prefix}.key");
    let public = format!("{prefix}.pub");
    // 0.3.0 signed, 0.3.1 not.
    let source = prepare_source(&src, tmp.path(), Some(&key));
    let (db, _) = catalogs(&source, tmp.path());
    let to = format!("{}/signed", dst.host());
    let (code, stdout, err) = common::run(&[
        "catalog",
        "mirror",
        &db,
        "--to",
        &to,
        "--output-dir",
        tmp.path().join("out").to_str().expect("utf-8"),
        "--verify-key",
        &public,
        "-o",
        "json",
    ]);
    assert_eq!(code, 1, "an unsigned bundle is a finding: {err}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("report");
    let images = report["images"].as_array().expect("images");
    let by = |source: &str| {
        images
            .iter()
            .find(|i| i["source"] == source)
            .unwrap_or_else(|| panic!("{source} in {images:?}"))
            .clone()
    };
    let signed = by(&source.bundles[0]);
    assert_eq!(signed["status"], "copied", "{signed}");
    let unsigned = by(&source.bundles[1]);
    assert_eq!(unsigned["status"], "refused", "{unsigned}");
    assert!(
        unsigned["error"]
            .as_str()
            .expect("error")
            .contains("unsigned"),
        "{unsigned}"
    );
    assert!(err.contains("mirror-signature"), "{err}");
    // The refused bundle is not at the destination; its related images are.
    let refused_dest = format!("docker://{to}/kube-green/bundle:v0.3.1");
    let out = Command::new("skopeo")
        .args(["inspect", "--raw", "--tls-verify=false", &refused_dest])
        .output()
        .expect("skopeo");
    assert!(!out.status.success(), "the unsigned bundle was copied");
    assert_eq!(
        report["summary"]["copied"], 5,
        "bundle, signature, 3 related: {report:#}"
    );
    // The signature came along, and verifies at the mirror.
    let dest = signed["destination"].as_str().expect("destination");
    let digest = signed["digest"].as_str().expect("digest");
    let sig = by(&format!(
        "{}:{}",
        source.bundles[0].rsplit_once(':').expect("tag").0,
        olm_catalog::sign::signature_tag(digest)
    ));
    assert_eq!(sig["role"], "signature");
    assert_eq!(sig["status"], "copied");
    let (code, _, err) = common::run(&["verify", dest, "--key", &public]);
    assert_eq!(code, 0, "the copy's signature verifies: {err}");
}

/// A layer larger than `transfer::SPOOL_ABOVE` goes through a temporary
/// file (registry -> registry, registry -> layout, layout -> registry), and
/// arrives with its digest: skopeo reads every copy back.
#[test]
fn large_layers_are_copied_through_a_spool() {
    use olm_catalog::oci::copy::Copier;
    use olm_catalog::oci::ImageRef;
    // A third registry for the way back, so that nothing is mounted.
    let (src, dst, back) = (Registry::start(), Registry::start(), Registry::start());
    let client = crate::registry::client();
    let repo = Repo {
        host: src.host(),
        name: "big/layer".into(),
    };
    // Incompressible bytes, past the spool threshold.
    let size = olm_catalog::oci::transfer::SPOOL_ABOVE as usize + 1024 * 1024 + 7;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let layer: Vec<u8> = (0..size)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let layer_desc = Descriptor::of(media::OCI_LAYER_TAR, &layer);
    let top = rt
        .block_on(push_image(&client, &repo, "amd64", layer.clone()))
        .digest;
    let tmp = tempfile::tempdir().expect("tmp");
    let layout = tmp.path().join("layout");
    let hops = [
        (
            format!("{}/big/layer@{top}", src.host()),
            format!("{}/big/copy:v1", dst.host()),
        ),
        (
            format!("{}/big/layer@{top}", src.host()),
            format!("oci:{}:v1", layout.display()),
        ),
        (
            format!("oci:{}@{top}", layout.display()),
            format!("{}/big/back:v1", back.host()),
        ),
    ];
    let copier = Copier::new(client);
    for (from, to) in &hops {
        let (from_ref, to_ref): (ImageRef, ImageRef) =
            (from.parse().expect("ref"), to.parse().expect("ref"));
        let stats = rt
            .block_on(copier.copy(&from_ref, &to_ref))
            .unwrap_or_else(|e| panic!("{from} -> {to}: {e}"));
        assert_eq!(stats.blobs_copied, 2, "{from} -> {to}: {stats:?}");
        let shown = if to.starts_with("oci:") {
            to.clone()
        } else {
            format!("docker://{to}")
        };
        let raw = skopeo(&["inspect", "--raw", "--tls-verify=false", &shown]);
        assert_eq!(media::sha256_digest(raw.as_bytes()), top, "{to}");
        let copied = tmp.path().join(format!("check-{}", to.len()));
        skopeo(&[
            "copy",
            "--src-tls-verify=false",
            &shown,
            &format!("dir:{}", copied.display()),
        ]);
        let hex = layer_desc.digest.trim_start_matches("sha256:");
        let back = std::fs::read(copied.join(hex)).expect("layer read back by skopeo");
        assert!(back == layer, "{to}: the layer differs");
    }
}
