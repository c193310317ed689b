//! `olm-catalog sign` / `verify` end to end: key generation, bad input,
//! digest pinning, OCI layouts and the bundle (referrer) format, against a
//! real loopback registry.

use crate::sign_common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

use olm_catalog::oci::media::sha256_digest;
use sigstore::crypto::SigningScheme;

use sign_common::{generate_keys, push_test_image, referrers, run, target, text, Registry};

const PASSWORD: &str = "s3cret";

fn path(p: &Path) -> &str {
    p.to_str().expect("utf8 path")
}

#[test]
fn generate_key_pair_writes_cosign_files_and_keeps_existing_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (key, public) = generate_keys(dir.path(), "release", PASSWORD);
    let key_text = std::fs::read_to_string(&key).expect("key");
    assert!(key_text.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"));
    assert!(std::fs::read_to_string(&public)
        .expect("pub")
        .starts_with("-----BEGIN PUBLIC KEY-----\n"));
    let mode = std::fs::metadata(&key).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "private key must be owner-only");

    let again = run(
        &["sign", "generate-key-pair", "--output-prefix", "release"],
        Some("x"),
        dir.path(),
    );
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    assert!(text(&again).contains("already exists"));
    assert_eq!(
        std::fs::read_to_string(&key).expect("key"),
        key_text,
        "key was overwritten"
    );

    // Default prefix is cosign, as with cosign.
    let out = run(&["sign", "generate-key-pair"], Some(""), dir.path());
    assert!(out.status.success(), "{}", text(&out));
    assert!(dir.path().join("cosign.key").is_file() && dir.path().join("cosign.pub").is_file());
}

#[test]
fn password_can_come_from_stdin_when_not_a_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_olm-catalog"))
        .args(["sign", "generate-key-pair", "--output-prefix", "piped"])
        .current_dir(dir.path())
        .env_remove("COSIGN_PASSWORD")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"from-stdin\n")
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{}", text(&out));
    let pem = std::fs::read_to_string(dir.path().join("piped.key")).expect("key");
    olm_catalog::sign::PrivateKey::from_encrypted_pem(&pem, b"from-stdin", "piped.key")
        .expect("password from stdin was used");
}

#[tokio::test]
async fn bad_keys_and_passwords_are_clear_errors() {
    let reg = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (key, public) = generate_keys(d, "cosign", PASSWORD);
    let image = reg.image("bad/input", "v1");
    push_test_image(&image, "bad").await;

    // Wrong password.
    let out = run(&["sign", &image, "--key", path(&key)], Some("not it"), d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("wrong password"), "{}", text(&out));

    // Truncated key file.
    let full = std::fs::read_to_string(&key).expect("key");
    let truncated = d.join("truncated.key");
    std::fs::write(&truncated, &full[..full.len() * 2 / 3]).expect("write");
    let out = run(
        &["sign", &image, "--key", path(&truncated)],
        Some(PASSWORD),
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("truncated"), "{}", text(&out));

    // A public key given as the signing key.
    let out = run(&["sign", &image, "--key", path(&public)], Some(PASSWORD), d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("\"PUBLIC KEY\""), "{}", text(&out));

    // Keys of other algorithms (made by sigstore-rs): P-384 and Ed25519.
    for (name, scheme, algorithm) in [
        ("p384", SigningScheme::ECDSA_P384_SHA384_ASN1, "ECDSA P-384"),
        ("ed25519", SigningScheme::ED25519, "Ed25519"),
    ] {
        let pair = scheme
            .create_signer()
            .expect("signer")
            .to_sigstore_keypair()
            .expect("pair");
        let pub_path = d.join(format!("{name}.pub"));
        std::fs::write(&pub_path, pair.public_key_to_pem().expect("pem")).expect("write");
        let out = run(&["verify", &image, "--key", path(&pub_path)], None, d);
        assert_eq!(out.status.code(), Some(2), "{name}: {}", text(&out));
        assert!(
            text(&out).contains(&format!("unsupported key algorithm {algorithm}")),
            "{name}: {}",
            text(&out)
        );
        let key_path = d.join(format!("{name}.key"));
        std::fs::write(
            &key_path,
            pair.private_key_to_encrypted_pem(PASSWORD.as_bytes())
                .expect("pem")
                .as_str(),
        )
        .expect("write");
        let out = run(
            &["sign", &image, "--key", path(&key_path)],
            Some(PASSWORD),
            d,
        );
        assert_eq!(out.status.code(), Some(2), "{name}: {}", text(&out));
        assert!(text(&out).contains(algorithm), "{name}: {}", text(&out));
    }

    // Not PEM at all.
    let junk = d.join("junk.pub");
    std::fs::write(&junk, "hello\n").expect("write");
    let out = run(&["verify", &image, "--key", path(&junk)], None, d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("not a PEM file"), "{}", text(&out));

    // Malformed annotation argument.
    let out = run(
        &["sign", &image, "--key", path(&key), "-a", "novalue"],
        Some(PASSWORD),
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("key=value"), "{}", text(&out));

    // Nothing signed yet: verify says so and exits 1.
    let out = run(&["verify", &image, "--key", path(&public)], None, d);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("no signature"), "{}", text(&out));

    // No such image, and no registry at all: errors (2), not "unverified".
    let out = run(
        &[
            "verify",
            &reg.image("bad/missing", "v1"),
            "--key",
            path(&public),
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = run(
        &["verify", "127.0.0.1:1/nothing:here", "--key", path(&public)],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[tokio::test]
async fn signatures_pin_the_digest_not_the_tag() {
    let reg = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let (key, public) = generate_keys(dir.path(), "cosign", PASSWORD);
    let image = reg.image("pin/bundle", "stable");
    let first = push_test_image(&image, "first").await;
    let out = run(
        &["sign", &image, "--key", path(&key)],
        Some(PASSWORD),
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out));
    let stored = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(
        stored,
        format!(
            "{}/pin/bundle:{}",
            reg.host(),
            olm_catalog::sign::signature_tag(&first)
        )
    );

    // Move the tag: the signature stays with the first digest.
    let second = push_test_image(&image, "second").await;
    assert_ne!(first, second);
    let out = run(
        &["verify", &image, "--key", path(&public)],
        None,
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let by_digest = format!("{}/pin/bundle@{first}", reg.host());
    let out = run(
        &["verify", &by_digest, "--key", path(&public)],
        None,
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// Writes a one-image OCI layout with the image tagged `tag`; returns its digest.
fn make_layout(dir: &Path, tag: &str) -> String {
    let blobs = dir.join("blobs/sha256");
    std::fs::create_dir_all(&blobs).expect("mkdir");
    let put = |data: &[u8]| -> String {
        let digest = sha256_digest(data);
        std::fs::write(blobs.join(digest.trim_start_matches("sha256:")), data).expect("write blob");
        digest
    };
    let layer = b"not really a tarball";
    let config =
        br#"{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}"#;
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "size": config.len(), "digest": put(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "size": layer.len(), "digest": put(layer)}],
    }))
    .expect("json");
    let digest = put(&manifest);
    std::fs::write(dir.join("oci-layout"), br#"{"imageLayoutVersion":"1.0.0"}"#).expect("write");
    std::fs::write(
        dir.join("index.json"),
        serde_json::to_vec(&serde_json::json!({
            "schemaVersion": 2,
            "manifests": [{
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": digest, "size": manifest.len(),
                "annotations": {"org.opencontainers.image.ref.name": tag},
            }],
        }))
        .expect("json"),
    )
    .expect("write");
    digest
}

#[test]
fn oci_layout_targets_sign_and_verify() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (key, public) = generate_keys(d, "cosign", PASSWORD);
    let (_, stranger) = generate_keys(d, "stranger", PASSWORD);
    let layout = d.join("layout");
    let digest = make_layout(&layout, "v1");
    let target = format!("oci:{}:v1", layout.display());

    // Two different payloads, then the first again: RFC 6979 signatures are
    // deterministic, so the repeat is the same signature and is not added
    // twice (cosign's duplicate detector skips it too).
    for extra in ["run=1", "run=2", "run=1"] {
        let out = run(
            &[
                "sign",
                &target,
                "--key",
                path(&key),
                "-a",
                "stage=ci",
                "-a",
                extra,
            ],
            Some(PASSWORD),
            d,
        );
        assert!(out.status.success(), "{}", text(&out));
    }
    let out = run(
        &["verify", &target, "--key", path(&public), "-a", "stage=ci"],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let payloads: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        payloads.as_array().expect("array").len(),
        2,
        "second signature appended, repeat skipped"
    );
    assert_eq!(
        payloads[0]["critical"]["image"]["docker-manifest-digest"],
        digest.as_str()
    );

    // Without a tag, the single image is meant; the .sig entry does not count.
    let untagged = format!("oci:{}", layout.display());
    let out = run(&["verify", &untagged, "--key", path(&public)], None, d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let out = run(&["verify", &target, "--key", path(&stranger)], None, d);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    // Tamper with a payload blob in place: its digest no longer matches.
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).expect("index"))
            .expect("json");
    let sig_entry = index["manifests"]
        .as_array()
        .expect("manifests")
        .iter()
        .find(|m| {
            m["annotations"]["org.opencontainers.image.ref.name"]
                == olm_catalog::sign::signature_tag(&digest).as_str()
        })
        .expect("signature entry")
        .clone();
    let manifest_path = layout.join("blobs/sha256").join(
        sig_entry["digest"]
            .as_str()
            .expect("d")
            .trim_start_matches("sha256:"),
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(manifest_path).expect("m")).expect("json");
    for l in manifest["layers"].as_array().expect("layers") {
        let p = layout.join("blobs/sha256").join(
            l["digest"]
                .as_str()
                .expect("d")
                .trim_start_matches("sha256:"),
        );
        let text = std::fs::read_to_string(&p)
            .expect("payload")
            .replace("stage", "Stage");
        std::fs::write(&p, text).expect("write");
    }
    let out = run(&["verify", &target, "--key", path(&public)], None, d);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("payload digest"), "{}", text(&out));

    // Unknown tag and non-layout directory are errors.
    let out = run(
        &[
            "verify",
            &format!("oci:{}:nope", layout.display()),
            "--key",
            path(&public),
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = run(
        &[
            "verify",
            &format!("oci:{}", d.display()),
            "--key",
            path(&public),
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[tokio::test]
async fn bundle_format_is_attached_as_referrer_and_verified() {
    let reg = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (key, public) = generate_keys(d, "cosign", PASSWORD);
    let (_, stranger) = generate_keys(d, "stranger", PASSWORD);
    let image = reg.image("bundle/op", "v2");
    let digest = push_test_image(&image, "bundle").await;

    let out = run(
        &[
            "sign",
            &image,
            "--key",
            path(&key),
            "--format",
            "bundle",
            "-a",
            "team=olm",
        ],
        Some(PASSWORD),
        d,
    );
    assert!(out.status.success(), "{}", text(&out));

    // No .sig tag was written: what verifies is the referrer.
    assert!(target(&image)
        .load_signatures(&digest)
        .await
        .expect("load")
        .layers
        .is_empty());
    let referrers = referrers(&image, &digest).await;
    assert_eq!(
        referrers["manifests"].as_array().expect("manifests").len(),
        1
    );
    assert_eq!(
        referrers["manifests"][0]["artifactType"],
        "application/vnd.dev.sigstore.bundle.v0.3+json"
    );

    let out = run(
        &["verify", &image, "--key", path(&public), "-a", "team=olm"],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let payloads: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        payloads[0]["predicateType"],
        "https://sigstore.dev/cosign/sign/v1"
    );
    assert_eq!(
        format!(
            "sha256:{}",
            payloads[0]["subject"][0]["digest"]["sha256"]
                .as_str()
                .expect("hex")
        ),
        digest
    );

    let out = run(
        &["verify", &image, "--key", path(&public), "-a", "team=other"],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = run(&["verify", &image, "--key", path(&stranger)], None, d);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    // A legacy signature beside it: both are found.
    let out = run(&["sign", &image, "--key", path(&key)], Some(PASSWORD), d);
    assert!(out.status.success(), "{}", text(&out));
    let out = run(&["verify", &image, "--key", path(&public)], None, d);
    let payloads: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        payloads.as_array().expect("array").len(),
        2,
        "{}",
        text(&out)
    );

    // Layouts only take the legacy format.
    let layout = d.join("layout");
    make_layout(&layout, "v1");
    let out = run(
        &[
            "sign",
            &format!("oci:{}:v1", layout.display()),
            "--key",
            path(&key),
            "--format",
            "bundle",
        ],
        Some(PASSWORD),
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn help_says_keyless_signing_is_not_supported_and_verify_takes_identities() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(&["sign", "--help"], None, dir.path());
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Keyless signing"),
        "sign --help"
    );
    let out = run(&["verify", "--help"], None, dir.path());
    assert!(out.status.success(), "{}", text(&out));
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--certificate-identity",
        "--certificate-oidc-issuer",
        "--trusted-root",
    ] {
        assert!(help.contains(flag), "verify --help lacks {flag}");
    }
}
