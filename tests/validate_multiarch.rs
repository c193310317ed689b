//! `bundle validate --select-optional name=multiarch` against a real registry
//! (Debian's docker-registry on loopback): a two-platform operator image (an
//! OCI index of amd64 and arm64) and a single-platform helper image are
//! pushed with the oci module, and the CSV's arch labels are checked against
//! what the registry says.

use crate::common;
use crate::registry;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use olm_catalog::oci::{self, ImageRef};
use registry::Registry;
use serde_json::Value;

const CSV: &str = "manifests/memcached-operator.clusterserviceversion.yaml";
const FIXTURE_IMAGE: &str = "quay.io/example/memcached-operator@sha256:0f5d3f7a2b1c4e6d8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f";

fn good() -> PathBuf {
    common::fixtures().join("bundles/good/memcached-operator-0.0.2")
}

fn platform(arch: &str) -> oci::media::Platform {
    oci::media::Platform {
        architecture: arch.into(),
        os: "linux".into(),
        os_version: None,
        os_features: None,
        variant: None,
    }
}

/// Pushes one image per architecture (any image will do: the bundle builder
/// makes one whose config names the platform); with `index`, tags an OCI
/// index of them, otherwise tags the single image. Returns the reference.
async fn push(host: &str, name: &str, tag: &str, archs: &[&str], index: bool) -> String {
    let client = oci::RegistryClient::from_environment().expect("client");
    let mut descs = Vec::new();
    for arch in archs {
        let mut opts = oci::BuildOptions::from_env().expect("opts");
        opts.platform.architecture = arch.to_string();
        let set = oci::build_bundle_image(&good(), &opts)
            .expect("build")
            .image;
        let reference = if index {
            set.top.digest.clone()
        } else {
            tag.to_string()
        };
        let sep = if index { "@" } else { ":" };
        let dest: ImageRef = format!("{host}/{name}{sep}{reference}")
            .parse()
            .expect("ref");
        oci::push_image(&client, &set, &dest, oci::progress::ProgressMode::Off)
            .await
            .expect("push");
        let mut d = set.top.clone();
        d.platform = Some(platform(arch));
        descs.push(d);
    }
    if index {
        let idx = oci::media::ImageIndex {
            schema_version: 2,
            media_type: Some(oci::media::OCI_INDEX.into()),
            manifests: descs,
            annotations: None,
        };
        let repo = oci::Repo {
            host: host.to_string(),
            name: name.into(),
        };
        client
            .put_manifest(
                &repo,
                tag,
                oci::media::OCI_INDEX,
                &oci::media::to_json_bytes(&idx),
            )
            .await
            .expect("push index");
    }
    format!("{host}/{name}:{tag}")
}

/// A copy of the good bundle whose operator image is `manager`, with the
/// given arch labels and extra related images.
fn bundle(tmp: &Path, manager: &str, archs: &[&str], related: &[&str]) -> PathBuf {
    let dir = tmp.join(format!(
        "b{}",
        fs::read_dir(tmp).map(|d| d.count()).unwrap_or(0)
    ));
    common::copy_dir(&good(), &dir);
    let path = dir.join(CSV);
    let mut text = fs::read_to_string(&path).expect("csv");
    let labels: String = archs
        .iter()
        .map(|a| format!("    operatorframework.io/arch.{a}: supported\n"))
        .collect();
    text = text.replacen(
        "  name: memcached-operator.v0.0.2\n",
        &format!("  name: memcached-operator.v0.0.2\n  labels:\n{labels}"),
        1,
    );
    text = text.replace(FIXTURE_IMAGE, manager);
    let extra: String = related
        .iter()
        .enumerate()
        .map(|(i, r)| format!("  - name: helper{i}\n    image: {r}\n"))
        .collect();
    text = text.replacen(
        "  relatedImages:\n",
        &format!("  relatedImages:\n{extra}"),
        1,
    );
    fs::write(&path, text).expect("write csv");
    dir
}

/// Runs the suite; returns the exit code and the multiarch findings.
fn validate(dir: &Path) -> (i32, Vec<Value>) {
    let out = Command::new(common::bin())
        .args([
            "bundle",
            "validate",
            "--select-optional",
            "name=multiarch",
            "-o",
            "json",
        ])
        .arg(dir)
        .env_remove("REGISTRY_AUTH_FILE")
        .env("HOME", "/nonexistent")
        .output()
        .expect("run olm-catalog");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "json: {e}\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let findings = v["reports"][0]["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f["rule"].as_str().unwrap_or("").starts_with("multiarch-"))
        .collect();
    (out.status.code().unwrap_or(-1), findings)
}

fn rules(findings: &[Value]) -> Vec<(String, String)> {
    let mut r: Vec<(String, String)> = findings
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap_or("").to_string(),
                f["level"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    r.sort();
    r
}

#[test]
fn multiarch_against_a_registry() {
    let reg = Registry::start();
    let host = reg.host();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let manager = rt.block_on(push(
        &host,
        "op/manager",
        "multi",
        &["amd64", "arm64"],
        true,
    ));
    let helper = rt.block_on(push(&host, "op/helper", "amd64", &["amd64"], false));
    let tmp = tempfile::tempdir().expect("tempdir");

    // Labels and images agree: nothing to say.
    let (code, f) = validate(&bundle(tmp.path(), &manager, &["amd64", "arm64"], &[]));
    assert_eq!((code, f.len()), (0, 0), "{f:#?}");

    // The helper image lacks arm64, which the labels promise: an error at
    // the helper's line, and a warning that it lacks what the operator has.
    let dir = bundle(tmp.path(), &manager, &["amd64", "arm64"], &[&helper]);
    let (code, f) = validate(&dir);
    assert_eq!(code, 1, "{f:#?}");
    assert_eq!(
        rules(&f),
        vec![
            (
                "multiarch-image-arch-missing".to_string(),
                "warning".to_string()
            ),
            (
                "multiarch-image-platform-missing".to_string(),
                "error".to_string()
            ),
        ]
    );
    let err = f
        .iter()
        .find(|x| x["rule"] == "multiarch-image-platform-missing")
        .expect("error");
    assert!(
        err["message"]
            .as_str()
            .unwrap_or("")
            .contains("(linux.arm64) was not found"),
        "{err}"
    );
    let text = fs::read_to_string(dir.join(CSV)).expect("csv");
    let helper_line = text
        .lines()
        .position(|l| l.contains(&helper))
        .map(|i| i as u64 + 1);
    assert_eq!(err["location"]["line"].as_u64(), helper_line, "{err}");

    // The operator image runs on arm64 but only amd64 is labelled.
    let (code, f) = validate(&bundle(tmp.path(), &manager, &["amd64"], &[]));
    assert_eq!(code, 0);
    assert_eq!(
        rules(&f),
        vec![(
            "multiarch-arch-label-missing".to_string(),
            "warning".to_string()
        )]
    );
    assert!(
        f[0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("[\"arm64\"]"),
        "{:?}",
        f[0]
    );

    // An image the registry does not have is reported, not guessed about.
    let missing = format!("{host}/op/nothing:here");
    let (code, f) = validate(&bundle(
        tmp.path(),
        &manager,
        &["amd64", "arm64"],
        &[&missing],
    ));
    assert_eq!(code, 0, "{f:#?}");
    assert_eq!(
        rules(&f),
        vec![(
            "multiarch-image-uninspectable".to_string(),
            "warning".to_string()
        )]
    );
}

#[test]
fn multiarch_without_a_registry_reader_says_so() {
    use olm_catalog::validate::{self, select, Options};
    // Picked by name only: suite=operatorframework runs offline.
    assert_eq!(
        select::select_optional(&["name=multiarch".into()]).expect("select"),
        vec!["multiarch"]
    );
    assert!(
        !select::select_optional(&["suite=operatorframework".into()])
            .expect("select")
            .contains(&"multiarch".to_string())
    );
    let options = Options {
        optional: vec!["multiarch".into()],
        ..Options::default()
    };
    let r = validate::validate_dir(&good(), &options);
    let rules: Vec<&str> = r.findings.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(rules, vec!["multiarch-inspector-unavailable"]);
    assert_eq!(r.errors(), 0);
}
