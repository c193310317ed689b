//! The signature gate (`--require-signature POLICY` on `index add`,
//! `catalog build`, `catalog mirror`) and `catalog verify`, through the
//! binary against a real loopback registry: bundle images built with
//! `bundle build`, signed with `sign --key`, judged by ClusterImagePolicy
//! files; a refused image leaves the database and the registry's tags as
//! they were.

use crate::common;
use crate::registry::Registry;
use crate::sign_common::{generate_keys, run, text};

use std::path::Path;

const PASSWORD: &str = "gate pw";

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A ClusterImagePolicy covering the registry `host` with `authority` (YAML
/// lines indented for `authorities:`).
pub(crate) fn policy(dir: &Path, name: &str, host: &str, authority: &str) -> std::path::PathBuf {
    let p = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &p,
        format!(
            "apiVersion: policy.sigstore.dev/v1beta1
kind: ClusterImagePolicy
metadata:
  name: {name}
spec:
  images:
  - glob: \"{host}/**\"
  authorities:
{authority}"
        ),
    )
    .expect("write policy");
    p
}

/// A key authority for the PEM public key at `public`.
fn key_authority(name: &str, public: &Path) -> String {
    let pem = std::fs::read_to_string(public).expect("public key");
    let body: String = pem.lines().map(|l| format!("        {l}\n")).collect();
    format!("  - name: {name}\n    key:\n      data: |\n{body}")
}

/// The tags of `repo` (empty when it does not exist).
fn tags(reg: &Registry, repo: &str) -> Vec<String> {
    let out = std::process::Command::new("skopeo")
        .args([
            "list-tags",
            "--tls-verify=false",
            &format!("docker://{}/{repo}", reg.host()),
        ])
        .output()
        .expect("run skopeo");
    if !out.status.success() {
        return Vec::new();
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let mut t: Vec<String> = v["Tags"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    t.sort();
    t
}

/// Builds the memcached fixture bundle into `image`.
pub(crate) fn build_bundle(image: &str, d: &Path) {
    let bundle = common::fixtures().join("bundles/good/memcached-operator-0.0.2");
    let out = run(
        &["bundle", "build", path(&bundle), "--tag", image, "-q"],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// A file-based catalog whose bundles are `images`, in `dir`.
fn fbc(dir: &Path, images: &[&str]) {
    std::fs::create_dir_all(dir).expect("mkdir");
    let mut lines =
        vec![r#"{"schema":"olm.package","name":"gated","defaultChannel":"stable"}"#.to_string()];
    let entries: Vec<String> = (0..images.len())
        .map(|i| {
            if i == 0 {
                format!(r#"{{"name":"gated.v{}.0.0"}}"#, i + 1)
            } else {
                format!(
                    r#"{{"name":"gated.v{}.0.0","replaces":"gated.v{i}.0.0"}}"#,
                    i + 1
                )
            }
        })
        .collect();
    lines.push(format!(
        r#"{{"schema":"olm.channel","package":"gated","name":"stable","entries":[{}]}}"#,
        entries.join(",")
    ));
    for (i, image) in images.iter().enumerate() {
        lines.push(format!(
            r#"{{"schema":"olm.bundle","package":"gated","name":"gated.v{n}.0.0","image":"{image}","properties":[{{"type":"olm.package","value":{{"packageName":"gated","version":"{n}.0.0"}}}}]}}"#,
            n = i + 1
        ));
    }
    std::fs::write(dir.join("catalog.json"), lines.join("\n") + "\n").expect("write fbc");
}

#[test]
fn the_gate_lets_signed_bundles_in_and_stops_at_the_first_other() {
    let reg = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (key, public) = generate_keys(d, "release", PASSWORD);
    let (_, stranger) = generate_keys(d, "stranger", PASSWORD);
    let signed = reg.image("gate/signed", "v1");
    let unsigned = reg.image("gate/unsigned", "v1");
    build_bundle(&signed, d);
    build_bundle(&unsigned, d);
    let out = run(&["sign", &signed, "--key", path(&key)], Some(PASSWORD), d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let host = reg.host();
    let good = policy(d, "release", &host, &key_authority("release-key", &public));
    let wrong = policy(
        d,
        "stranger",
        &host,
        &key_authority("stranger-key", &stranger),
    );
    let keyless = policy(
        d,
        "keyless",
        &host,
        "  - keyless:\n      identities:\n      - issuer: https://token.actions.githubusercontent.com\n        subject: https://github.com/example/op/.github/workflows/release.yaml@refs/heads/main\n",
    );
    let elsewhere = policy(d, "elsewhere", "quay.io", &key_authority("k", &public));

    // index add: the signed image goes in.
    let db = d.join("index.db");
    let out = run(
        &[
            "index",
            "add",
            "--mode",
            "semver",
            "-d",
            path(&db),
            &signed,
            "--require-signature",
            path(&good),
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("signature verified"),
        "{}",
        text(&out)
    );
    let before = std::fs::read(&db).expect("db");

    // Each refusal: exit 1, the image and the reason named, nothing written.
    let fresh = d.join("fresh.db");
    for (policy, image, db, reason) in [
        (&good, &unsigned, &db, "unsigned: no signature found"),
        (&wrong, &signed, &fresh, "does not match"),
        (&keyless, &signed, &fresh, "not keyless"),
        (&elsewhere, &signed, &fresh, "no policy in"),
    ] {
        let out = run(
            &[
                "index",
                "add",
                "--mode",
                "semver",
                "-d",
                path(db),
                image,
                "--require-signature",
                path(policy),
            ],
            None,
            d,
        );
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(image.as_str()) && err.contains(reason),
            "{}",
            text(&out)
        );
    }
    assert_eq!(
        std::fs::read(&db).expect("db"),
        before,
        "the database changed"
    );
    assert!(!fresh.exists(), "a refused add created a database");

    // Directories have no signature to check.
    let bundle_dir = common::fixtures().join("bundles/good/memcached-operator-0.0.2");
    let out = run(
        &[
            "index",
            "add",
            "--mode",
            "semver",
            "-d",
            path(&fresh),
            path(&bundle_dir),
            "--require-signature",
            path(&good),
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));

    // catalog verify: a table, JSON, exit 1 when one fails.
    let out = run(
        &["catalog", "verify", path(&db), "--policy", path(&good)],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.starts_with("IMAGE"), "{table}");
    assert!(
        table.contains(&signed) && table.contains("key release-key") && table.contains("verified"),
        "{table}"
    );

    let mixed = d.join("mixed");
    fbc(&mixed, &[&signed, &unsigned]);
    let out = run(
        &[
            "catalog",
            "verify",
            path(&mixed),
            "--policy",
            path(&good),
            "-o",
            "json",
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let verdicts: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(verdicts[0]["image"], signed.as_str());
    assert_eq!(verdicts[0]["verified"], true);
    assert!(verdicts[0]["digest"]
        .as_str()
        .is_some_and(|d| d.starts_with("sha256:")));
    assert_eq!(verdicts[1]["image"], unsigned.as_str());
    assert_eq!(verdicts[1]["verified"], false);
    assert!(
        verdicts[1]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("unsigned")),
        "{verdicts}"
    );
    let out = run(
        &["catalog", "verify", path(&db), "--policy", path(&wrong)],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("FAILED"),
        "{}",
        text(&out)
    );

    // catalog build: the unsigned bundle stops it before anything is pushed.
    let out = run(
        &[
            "catalog",
            "build",
            path(&mixed),
            "--tag",
            &reg.image("gate/catalog", "v1"),
            "--base",
            "scratch",
            "--require-signature",
            path(&good),
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(unsigned.as_str()),
        "{}",
        text(&out)
    );
    assert!(
        tags(&reg, "gate/catalog").is_empty(),
        "a refused build pushed"
    );
    let only_signed = d.join("only-signed");
    fbc(&only_signed, &[&signed]);
    let out = run(
        &[
            "catalog",
            "build",
            path(&only_signed),
            "--tag",
            &reg.image("gate/catalog", "v1"),
            "--base",
            "scratch",
            "--require-signature",
            path(&good),
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(tags(&reg, "gate/catalog"), ["v1"]);

    // catalog mirror: refused before the output directory or any copy.
    let out_dir = d.join("mirror-out");
    let out = run(
        &[
            "catalog",
            "mirror",
            path(&mixed),
            "--to",
            &format!("{host}/mirror"),
            "--output-dir",
            path(&out_dir),
            "--require-signature",
            path(&good),
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(!out_dir.exists(), "a refused mirror wrote its output");
    assert!(
        tags(&reg, "mirror/gate/signed").is_empty(),
        "a refused mirror copied"
    );
    let out = run(
        &[
            "catalog",
            "mirror",
            path(&only_signed),
            "--to",
            &format!("{host}/mirror"),
            "--output-dir",
            path(&out_dir),
            "--require-signature",
            path(&good),
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(out_dir.join("mapping.txt").is_file());
}

#[test]
fn a_policy_file_that_is_not_understood_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let p = d.join("p.yaml");
    std::fs::write(
        &p,
        "apiVersion: policy.sigstore.dev/v1beta1\nkind: ClusterImagePolicy\nmetadata: {name: kms}\nspec:\n  images: [{glob: '**'}]\n  authorities:\n  - key: {kms: 'awskms:///alias/x'}\n",
    )
    .expect("write");
    std::fs::write(d.join("index.db"), b"").expect("touch");
    let out = run(
        &["catalog", "verify", "index.db", "--policy", path(&p)],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("key.kms is not supported"),
        "{}",
        text(&out)
    );
}
