//! `attest` / `verify-attestation` (cosign's in-toto attestations with a
//! key) and `sign --new-bundle-format`, through the binary against a real
//! loopback registry; what is stored is read back with skopeo and
//! sigstore-rs, not only with our own reader.

use crate::registry::skopeo;
use crate::sign_common;

use std::path::Path;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::Value;

use sign_common::{client, generate_keys, push_test_image, referrers, run, text, Registry};

const PASSWORD: &str = "attest pw";

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The raw manifest `reference` names, read by skopeo.
fn skopeo_raw(reference: &str) -> Value {
    let raw = skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{reference}"),
    ]);
    serde_json::from_str(&raw).expect("manifest json")
}

/// A blob of `repo` on the registry, through our client (skopeo has no
/// blob reader).
async fn blob(image: &str, layer: &Value) -> Vec<u8> {
    let olm_catalog::oci::ImageRef::Registry { repo, .. } = image.parse().expect("ref") else {
        panic!("not a registry reference");
    };
    let desc = olm_catalog::oci::media::Descriptor {
        media_type: String::new(),
        digest: layer["digest"].as_str().expect("digest").to_string(),
        size: layer["size"].as_u64().expect("size"),
        platform: None,
        annotations: None,
    };
    client()
        .get_blob(&repo, &desc, 1 << 20, None)
        .await
        .expect("blob")
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_attestations_are_stored_as_cosign_stores_them_and_verified() {
    let reg = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (key, public) = generate_keys(d, "cosign", PASSWORD);
    let (_, stranger) = generate_keys(d, "stranger", PASSWORD);
    let image = reg.image("att/op", "v1");
    let digest = push_test_image(&image, "attest").await;
    let provenance = d.join("provenance.json");
    std::fs::write(
        &provenance,
        r#"{"builder":{"id":"https://example.com/ci"},"buildType":"https://example.com/t","invocation":{}}"#,
    )
    .expect("write");

    let out = run(
        &[
            "attest",
            &image,
            "--key",
            path(&key),
            "--predicate",
            path(&provenance),
            "--type",
            "slsaprovenance",
        ],
        Some(PASSWORD),
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let att_tag = format!("{}.att", digest.replace(':', "-"));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&att_tag),
        "{}",
        text(&out)
    );

    // What skopeo reads under the .att tag: one DSSE layer with cosign's
    // annotations.
    let manifest = skopeo_raw(&format!("{}/att/op:{att_tag}", reg.host()));
    let layers = manifest["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 1, "{manifest}");
    assert_eq!(
        layers[0]["mediaType"],
        "application/vnd.dsse.envelope.v1+json"
    );
    assert_eq!(
        layers[0]["annotations"]["predicateType"],
        "https://slsa.dev/provenance/v0.2"
    );
    assert_eq!(
        layers[0]["annotations"]["dev.cosignproject.cosign/signature"],
        ""
    );
    let envelope: Value =
        serde_json::from_slice(&blob(&image, &layers[0]).await).expect("envelope");
    assert_eq!(envelope["payloadType"], "application/vnd.in-toto+json");
    let statement: Value = serde_json::from_slice(
        &BASE64
            .decode(envelope["payload"].as_str().expect("payload"))
            .expect("base64"),
    )
    .expect("statement");
    assert_eq!(statement["_type"], "https://in-toto.io/Statement/v0.1");
    assert_eq!(statement["subject"][0]["digest"]["sha256"], &digest[7..]);
    assert_eq!(
        statement["predicate"]["builder"]["id"],
        "https://example.com/ci"
    );

    // The envelope's signature checks with sigstore-rs's verifier over the
    // DSSE PAE.
    let sig = BASE64
        .decode(envelope["signatures"][0]["sig"].as_str().expect("sig"))
        .expect("sig base64");
    let payload = BASE64
        .decode(envelope["payload"].as_str().expect("payload"))
        .expect("payload");
    sigstore_verifies(&public, &payload, &sig).expect("sigstore-rs verifies the attestation");

    // A second attestation of another type goes beside the first.
    let sbom = d.join("sbom.json");
    std::fs::write(&sbom, r#"{"spdxVersion":"SPDX-2.3","name":"op"}"#).expect("write");
    let out = run(
        &[
            "attest",
            &image,
            "--key",
            path(&key),
            "--predicate",
            path(&sbom),
            "--type",
            "spdxjson",
        ],
        Some(PASSWORD),
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let manifest = skopeo_raw(&format!("{}/att/op:{att_tag}", reg.host()));
    assert_eq!(manifest["layers"].as_array().expect("layers").len(), 2);

    // verify-attestation: every type, or one.
    let out = run(
        &["verify-attestation", &image, "--key", path(&public)],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), 2, "{}", text(&out));
    let out = run(
        &[
            "verify-attestation",
            &image,
            "--key",
            path(&public),
            "--type",
            "spdxjson",
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let only: Value = serde_json::from_slice(&out.stdout).expect("one line");
    assert_eq!(only["predicateType"], "https://spdx.dev/Document");
    assert_eq!(only["predicate"]["name"], "op");
    let out = run(
        &[
            "verify-attestation",
            &image,
            "--key",
            path(&public),
            "--type",
            "slsaprovenance",
            "-o",
            "envelope",
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let env: Value = serde_json::from_slice(&out.stdout).expect("envelope line");
    assert_eq!(env["payloadType"], "application/vnd.in-toto+json");

    // No attestation of the type asked for, or none by this key: exit 1.
    let out = run(
        &[
            "verify-attestation",
            &image,
            "--key",
            path(&public),
            "--type",
            "cyclonedx",
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("found: https://"),
        "{}",
        text(&out)
    );
    let out = run(
        &["verify-attestation", &image, "--key", path(&stranger)],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("does not match"),
        "{}",
        text(&out)
    );
    // Attestations are not image signatures.
    let out = run(&["verify", &image, "--key", path(&public)], None, d);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    // Usage: an unknown type, a predicate its type refuses (before any
    // password is asked: no COSIGN_PASSWORD here).
    let out = run(
        &[
            "attest",
            &image,
            "--key",
            path(&key),
            "--predicate",
            path(&provenance),
            "--type",
            "sbom",
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("invalid predicate type"),
        "{}",
        text(&out)
    );
    let text_file = d.join("notes.txt");
    std::fs::write(&text_file, "not json").expect("write");
    let out = run(
        &[
            "attest",
            &image,
            "--key",
            path(&key),
            "--predicate",
            path(&text_file),
            "--type",
            "cyclonedx",
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not JSON"),
        "{}",
        text(&out)
    );
}

/// sigstore-rs's ECDSA P-256 verifier over the DSSE PAE of an in-toto
/// payload (the PAE as the DSSE spec writes it).
fn sigstore_verifies(public: &Path, payload: &[u8], sig: &[u8]) -> Result<(), String> {
    use sigstore::crypto::{CosignVerificationKey, Signature, SigningScheme};
    let pem = std::fs::read(public).expect("public key");
    let key = CosignVerificationKey::from_pem(&pem, &SigningScheme::ECDSA_P256_SHA256_ASN1)
        .map_err(|e| e.to_string())?;
    let payload_type = "application/vnd.in-toto+json";
    let mut pae = format!(
        "DSSEv1 {} {payload_type} {} ",
        payload_type.len(),
        payload.len()
    )
    .into_bytes();
    pae.extend_from_slice(payload);
    key.verify_signature(Signature::Raw(sig), &pae)
        .map_err(|e| e.to_string())
}

/// The first bundle layer of the referrer `manifest_digest`.
async fn referrer_bundle(image: &str, manifest_digest: &str) -> Vec<u8> {
    let repo_ref = image.rsplit_once(':').expect("tag").0;
    let manifest = skopeo_raw(&format!("{repo_ref}@{manifest_digest}"));
    blob(image, &manifest["layers"][0]).await
}

#[tokio::test(flavor = "multi_thread")]
async fn new_bundle_format_signatures_and_attestations_read_by_sigstore_rs() {
    let reg = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let (key, public) = generate_keys(d, "cosign", PASSWORD);
    let image = reg.image("nbf/op", "v1");
    let digest = push_test_image(&image, "new-bundle-format").await;

    // cosign's spelling of --format bundle.
    let out = run(
        &["sign", &image, "--key", path(&key), "--new-bundle-format"],
        Some(PASSWORD),
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let vex = d.join("vex.json");
    std::fs::write(
        &vex,
        r#"{"@context":"https://openvex.dev/ns/v0.2.0","statements":[]}"#,
    )
    .expect("write");
    let out = run(
        &[
            "attest",
            &image,
            "--key",
            path(&key),
            "--predicate",
            path(&vex),
            "--type",
            "openvex",
            "--new-bundle-format=true",
        ],
        Some(PASSWORD),
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // No .sig or .att tag: two referrers, told apart by predicate type.
    let tags = skopeo(&[
        "list-tags",
        "--tls-verify=false",
        &format!("docker://{}/nbf/op", reg.host()),
    ]);
    assert!(!tags.contains(".sig") && !tags.contains(".att"), "{tags}");
    let index = referrers(&image, &digest).await;
    let entries = index["manifests"].as_array().expect("manifests");
    assert_eq!(entries.len(), 2, "{index}");
    let mut types: Vec<String> = Vec::new();
    for e in entries {
        let m = skopeo_raw(&format!(
            "{}/nbf/op@{}",
            reg.host(),
            e["digest"].as_str().expect("digest")
        ));
        assert_eq!(
            m["artifactType"],
            "application/vnd.dev.sigstore.bundle.v0.3+json"
        );
        assert_eq!(m["subject"]["digest"], digest.as_str());
        types.push(
            m["annotations"]["dev.sigstore.bundle.predicateType"]
                .as_str()
                .expect("predicate type")
                .to_string(),
        );
        // sigstore-rs parses each bundle as its protobuf Bundle (the
        // protobuf-specs JSON mapping), and its verifier checks the DSSE
        // signature with the public key.
        let bundle = referrer_bundle(&image, e["digest"].as_str().expect("digest")).await;
        let parsed: sigstore::bundle::Bundle =
            serde_json::from_slice(&bundle).expect("sigstore-rs reads the bundle");
        let back = serde_json::to_value(&parsed).expect("json");
        assert_eq!(
            back["mediaType"],
            "application/vnd.dev.sigstore.bundle.v0.3+json"
        );
        assert!(
            back["verificationMaterial"]["publicKey"]["hint"].is_string(),
            "{back}"
        );
        let env = &back["dsseEnvelope"];
        let payload = BASE64
            .decode(env["payload"].as_str().expect("payload"))
            .expect("base64");
        let sig = BASE64
            .decode(env["signatures"][0]["sig"].as_str().expect("sig"))
            .expect("base64");
        sigstore_verifies(&public, &payload, &sig).expect("sigstore-rs verifies the bundle");
    }
    types.sort();
    assert_eq!(
        types,
        [
            "https://openvex.dev/ns",
            "https://sigstore.dev/cosign/sign/v1"
        ]
    );

    // verify sees the signature only; verify-attestation the attestation only.
    let out = run(&["verify", &image, "--key", path(&public)], None, d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let payloads: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(payloads.as_array().expect("array").len(), 1);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("rejected"),
        "{}",
        text(&out)
    );
    let out = run(
        &["verify-attestation", &image, "--key", path(&public)],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let st: Value = serde_json::from_slice(&out.stdout).expect("one statement");
    assert_eq!(st["predicateType"], "https://openvex.dev/ns");
    assert_eq!(st["subject"][0]["digest"]["sha256"], &digest[7..]);

    // --new-bundle-format and --format must agree.
    let out = run(
        &[
            "sign",
            &image,
            "--key",
            path(&key),
            "--format",
            "legacy",
            "--new-bundle-format",
        ],
        Some(PASSWORD),
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    // --new-bundle-format=false is the legacy .sig tag.
    let out = run(
        &[
            "sign",
            &image,
            "--key",
            path(&key),
            "--new-bundle-format=false",
        ],
        Some(PASSWORD),
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(".sig"),
        "{}",
        text(&out)
    );
}
