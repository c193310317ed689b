//! Keyless `verify IMAGE` and keyless policy authorities, against a real
//! loopback registry:
//!
//! - a real keyless bundle cosign's test suite attaches to an image
//!   (`fixtures/sigstore/cosign/oci-attestation.sigstore.json`, made by the
//!   public-good Fulcio and Rekor, bound to go-containerregistry's empty
//!   image), judged by our bundle-referrer verifier with the built-in root;
//! - keyless signatures on images we push, in both of cosign's places (a
//!   `sha256-H.sig` layer, a bundle referrer), made by a test-time Sigstore
//!   instance (`sign_common::pki`) and judged by us and by a verifier
//!   written by others: sigstore-rs for `.sig` layers, sigstore-python for
//!   bundles; forged and mismatched ones are refused by us (exit 1 and a
//!   reason) and by them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use olm_catalog::oci::media::{self, Descriptor, ImageManifest};
use olm_catalog::oci::{BlobBody, ImageRef};
use olm_catalog::sign::sigstore::{Matcher, TrustedRoot};
use olm_catalog::sign::{
    KeylessVerifier, SignatureImage, SignatureLayer, SimpleSigning, Verifier,
    SIMPLE_SIGNING_MEDIA_TYPE,
};
use serde_json::Value;
use sigstore::cosign::verification_constraint::{
    CertSubjectUrlVerifier, VerificationConstraintVec,
};
use sigstore::cosign::{verify_constraints, ClientBuilder, CosignCapabilities};
use sigstore::registry::{Auth, ClientConfig, ClientProtocol, OciReference};

use crate::common;
use crate::sign_common::pki::{self, LeafSpec, TestPki, ISSUED};
use crate::sign_common::{client, push_test_image, run, text, Registry};

const ID: &str = "https://github.com/example/op/.github/workflows/release.yaml@refs/heads/main";
const ISSUER: &str = "https://token.actions.githubusercontent.com";

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn repo_of(image: &str) -> olm_catalog::oci::Repo {
    match image.parse::<ImageRef>().expect("reference") {
        ImageRef::Registry { repo, .. } => repo,
        ImageRef::Layout { .. } => panic!("{image} is not in a registry"),
    }
}

/// Replaces the `.sig` image of `digest` with one layer: `payload` and
/// `annotations`.
async fn store_sig(
    image: &str,
    digest: &str,
    payload: &[u8],
    annotations: BTreeMap<String, String>,
) {
    let layer = SignatureLayer {
        media_type: SIMPLE_SIGNING_MEDIA_TYPE.to_string(),
        digest: media::sha256_digest(payload),
        payload: payload.to_vec(),
        annotations,
    };
    crate::sign_common::target(image)
        .store_signatures(
            digest,
            &SignatureImage {
                layers: vec![layer],
            },
        )
        .await
        .expect("store .sig");
}

/// Attaches `bundle` to `digest` as cosign v3 does: an OCI 1.1 referrer
/// (artifactType the bundle media type, empty config, one bundle layer,
/// `subject`), listed in the `sha256-H` fallback index (the referrers tag
/// schema) for registries without the referrers API, as Debian's.
async fn attach(image: &str, digest: &str, bundle: &[u8], predicate_type: &str) {
    let repo = repo_of(image);
    let c = client();
    let (subject_bytes, subject_type, _) = c.get_manifest(&repo, digest).await.expect("subject");
    let empty = b"{}".to_vec();
    let bundle_type = "application/vnd.dev.sigstore.bundle.v0.3+json";
    let config = Descriptor::of("application/vnd.oci.empty.v1+json", &empty);
    let layer = Descriptor::of(bundle_type, bundle);
    c.push_blob(&repo, &config, &BlobBody::from(empty), None)
        .await
        .expect("config");
    c.push_blob(&repo, &layer, &BlobBody::from(bundle.to_vec()), None)
        .await
        .expect("bundle");
    let annotations: BTreeMap<String, String> = [
        (
            "dev.sigstore.bundle.content".to_string(),
            "dsse-envelope".to_string(),
        ),
        (
            "dev.sigstore.bundle.predicateType".to_string(),
            predicate_type.to_string(),
        ),
    ]
    .into();
    let manifest = ImageManifest {
        schema_version: 2,
        media_type: Some(media::OCI_MANIFEST.to_string()),
        artifact_type: Some(bundle_type.to_string()),
        config,
        layers: vec![layer],
        subject: Some(Descriptor::of(&subject_type, &subject_bytes)),
        annotations: Some(annotations.clone()),
    };
    let bytes = media::to_json_bytes(&manifest);
    let mdigest = media::sha256_digest(&bytes);
    c.put_manifest(&repo, &mdigest, media::OCI_MANIFEST, &bytes)
        .await
        .expect("referrer");
    let tag = digest.replace(':', "-");
    let mut index = match c.find_manifest(&repo, &tag).await.expect("index") {
        Some((b, _, _)) => serde_json::from_slice::<Value>(&b).expect("index json"),
        None => {
            serde_json::json!({"schemaVersion": 2, "mediaType": media::OCI_INDEX, "manifests": []})
        }
    };
    index["manifests"]
        .as_array_mut()
        .expect("manifests")
        .push(serde_json::json!({
            "mediaType": media::OCI_MANIFEST,
            "digest": mdigest,
            "size": bytes.len(),
            "artifactType": bundle_type,
            "annotations": annotations,
        }));
    c.put_manifest(&repo, &tag, media::OCI_INDEX, index.to_string().as_bytes())
        .await
        .expect("fallback index");
}

/// The in-toto statement cosign v3 signs for an image.
fn statement(digest: &str) -> Vec<u8> {
    serde_json::json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"digest": {"sha256": digest.trim_start_matches("sha256:")}, "annotations": {}}],
        "predicateType": "https://sigstore.dev/cosign/sign/v1",
        "predicate": {},
    })
    .to_string()
    .into_bytes()
}

fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, data).expect("write");
    p
}

/// `olm-catalog verify IMAGE` keyless, with extra arguments.
fn verify(d: &Path, image: &str, root: &Path, identity: &[&str]) -> std::process::Output {
    let mut args = vec!["verify", image, "--trusted-root", path(root)];
    args.extend_from_slice(identity);
    run(&args, None, d)
}

fn exact(id: &str, issuer: &str) -> Vec<String> {
    vec![
        "--certificate-identity".into(),
        id.into(),
        "--certificate-oidc-issuer".into(),
        issuer.into(),
    ]
}

/// sigstore-rs's verdict on the `.sig` signatures of `image`: its cosign
/// client reads the layers, keeps those whose Rekor bundle and Fulcio
/// certificate verify against `pki`, and the constraint checks the identity.
async fn sigstore_rs(image: &str, pki: &TestPki, id: &str, issuer: &str) -> Result<usize, String> {
    let root = sigstore::trust::ManualTrustRoot {
        fulcio_certs: vec![pki.ca_der.clone().into()],
        rekor_keys: [(hex::encode(pki.rekor_log_id()), pki::spki(&pki.rekor_key))].into(),
        ctfe_keys: BTreeMap::new(),
    };
    let mut client = ClientBuilder::default()
        .with_oci_client_config(ClientConfig {
            protocol: ClientProtocol::Http,
            ..Default::default()
        })
        .with_trust_repository(&root)
        .expect("trust root")
        .build()
        .expect("sigstore client");
    let reference: OciReference = image.parse().expect("reference");
    let layers = client
        .trusted_signature_layers(&Auth::Anonymous, &reference)
        .await
        .map_err(|e| format!("trusted_signature_layers: {e}"))?;
    let constraints: VerificationConstraintVec = vec![Box::new(CertSubjectUrlVerifier {
        url: id.to_string(),
        issuer: issuer.to_string(),
    })];
    verify_constraints(&layers, constraints.iter())
        .map(|()| layers.len())
        .map_err(|e| format!("unsatisfied: {e:?}"))
}

/// sigstore-python's verdicts (tests/python/sigstore_verify_cases.py): each
/// case is (name, bundle, artifact, identity, issuer, trusted root).
fn sigstore_python(cases: &[(&str, &Path, &Path, &str, &str, &Path)]) -> Value {
    let input: Vec<Value> = cases
        .iter()
        .map(|(name, bundle, artifact, identity, issuer, root)| {
            serde_json::json!({"name": name, "bundle": bundle, "artifact": artifact,
                "identity": identity, "issuer": issuer, "trusted_root": root})
        })
        .collect();
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/sigstore_verify_cases.py");
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 (pip install -r tests/python/requirements.txt)");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(serde_json::to_string(&input).expect("json").as_bytes())
            .expect("write cases");
    }
    let out = child.wait_with_output().expect("sigstore-python");
    assert!(
        out.status.success(),
        "sigstore-python failed (is `sigstore` installed? tests/python/requirements.txt): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("verdicts")
}

#[test]
fn a_real_keyless_bundle_cosign_attached_to_an_image_binds_to_its_digest() {
    // cosign's pkg/cosign/testdata/oci-attestation.sigstore.json: signed by
    // the public-good Fulcio for cody@soyland.com (GitHub), logged in the
    // public-good Rekor (dsse 0.0.1, inclusion proof and checkpoint),
    // attached by cosign's tests to go-containerregistry's empty.Image.
    let bundle =
        std::fs::read(common::fixtures().join("sigstore/cosign/oci-attestation.sigstore.json"))
            .expect("fixture");
    let image = "sha256:732112270d7e59418a8c080b134b24cabd67d250d0d0147a97ed95ba5c280aa4";
    let other = format!("sha256:{}", "ab".repeat(32));
    let root = Arc::new(TrustedRoot::builtin());
    let check = |id: &str, issuer: &str, digest: &str| {
        KeylessVerifier::new(
            Matcher::Exact(id.into()),
            Some(Matcher::Exact(issuer.into())),
            root.clone(),
        )
        .verify_bundle(&bundle, digest, b"", b"", &BTreeMap::new())
    };
    let signer = check("cody@soyland.com", "https://github.com/login/oauth", image)
        .expect("verifies")
        .expect("names the signer");
    assert_eq!(signer.identity, "cody@soyland.com");
    assert_eq!(
        signer.issuer.as_deref(),
        Some("https://github.com/login/oauth")
    );
    for (id, issuer, digest, why) in [
        (
            "cody@soyland.com",
            "https://github.com/login/oauth",
            other.as_str(),
            "no subject",
        ),
        (
            "someone@else.example",
            "https://github.com/login/oauth",
            image,
            "does not match",
        ),
        (
            "cody@soyland.com",
            "https://accounts.google.com",
            image,
            "OIDC issuer",
        ),
    ] {
        let err = check(id, issuer, digest).expect_err(why);
        assert!(err.contains(why), "{why}: {err}");
    }
}

#[test]
fn keyless_sig_layers_verify_here_and_in_sigstore_rs_and_forgeries_are_refused_by_both() {
    let reg = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let pki = TestPki::new();
    let root = write(d, "trusted_root.json", pki.trusted_root().as_bytes());
    let leaf = pki.leaf(&LeafSpec::new(ID, ISSUER));
    let signed_at = ISSUED + 60;

    let image = reg.image("keyless/sig", "v1");
    let digest = rt.block_on(push_test_image(&image, "keyless sig"));
    let payload =
        SimpleSigning::new(&repo_of(&image).to_string(), &digest, &BTreeMap::new()).to_bytes();
    rt.block_on(store_sig(
        &image,
        &digest,
        &payload,
        pki.sig_layer(&payload, &leaf, signed_at),
    ));

    // Ours: exact, and by regular expression.
    let args = exact(ID, ISSUER);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = verify(d, &image, &root, &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let printed: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        printed[0]["critical"]["image"]["docker-manifest-digest"],
        digest.as_str()
    );
    assert_eq!(printed[0]["optional"]["Subject"], ID);
    assert_eq!(printed[0]["optional"]["Issuer"], ISSUER);
    let out = verify(
        d,
        &image,
        &root,
        &[
            "--certificate-identity-regexp",
            "^https://github.com/example/",
            "--certificate-oidc-issuer-regexp",
            "githubusercontent",
            "-o",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["verified"], true);
    assert_eq!(report["digest"], digest.as_str());
    assert_eq!(report["signatures"][0]["signer"]["identity"], ID);
    assert_eq!(report["signatures"][0]["signer"]["issuer"], ISSUER);
    // Theirs.
    assert_eq!(rt.block_on(sigstore_rs(&image, &pki, ID, ISSUER)), Ok(1));

    // Without --trusted-root, the public-good root does not know this CA.
    let out = run(&["verify", &image, "--certificate-identity", ID], None, d);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    // Forgeries and mismatches: each on its own image, refused by us with
    // the reason, and by sigstore-rs.
    let other_ca = TestPki::new();
    let stranger = other_ca.leaf(&LeafSpec::new(ID, ISSUER));
    let mut not_code_signing = LeafSpec::new(ID, ISSUER);
    not_code_signing.code_signing = false;
    let not_code_signing = pki.leaf(&not_code_signing);
    type Forge<'a> = Box<dyn Fn(&str, &str) -> (Vec<u8>, BTreeMap<String, String>) + 'a>;
    let payload_for = |image: &str, digest: &str| {
        SimpleSigning::new(&repo_of(image).to_string(), digest, &BTreeMap::new()).to_bytes()
    };
    let cases: Vec<(&str, Forge, &str)> = vec![
        (
            "another image's signature",
            Box::new(|image, _| {
                let p = payload_for(image, &format!("sha256:{}", "cd".repeat(32)));
                let a = pki.sig_layer(&p, &leaf, signed_at);
                (p, a)
            }),
            "not this image",
        ),
        (
            "tampered payload",
            Box::new(|image, digest| {
                let p = payload_for(image, digest);
                let a = pki.sig_layer(&p, &leaf, signed_at);
                let mut t = p.clone();
                let at = t.len() - 2;
                t.insert(at, b' ');
                (t, a)
            }),
            "signature does not verify",
        ),
        (
            "bad SET",
            Box::new(|image, digest| {
                let p = payload_for(image, digest);
                let mut a = pki.sig_layer(&p, &leaf, signed_at);
                let mut b: Value =
                    serde_json::from_str(&a["dev.sigstore.cosign/bundle"]).expect("bundle");
                let mut set = B64
                    .decode(b["SignedEntryTimestamp"].as_str().expect("set"))
                    .expect("b64");
                let n = set.len() - 3;
                set[n] ^= 1;
                b["SignedEntryTimestamp"] = B64.encode(set).into();
                a.insert("dev.sigstore.cosign/bundle".into(), b.to_string());
                (p, a)
            }),
            "signed entry timestamp",
        ),
        (
            "logged after the certificate expired",
            Box::new(|image, digest| {
                let p = payload_for(image, digest);
                let a = pki.sig_layer(&p, &leaf, ISSUED + 3600);
                (p, a)
            }),
            "outside the certificate's validity",
        ),
        (
            "certificate from another CA",
            Box::new(|image, digest| {
                let p = payload_for(image, digest);
                let a = pki.sig_layer(&p, &stranger, signed_at);
                (p, a)
            }),
            "does not chain",
        ),
        (
            "no Rekor bundle",
            Box::new(|image, digest| {
                let p = payload_for(image, digest);
                let mut a = pki.sig_layer(&p, &leaf, signed_at);
                a.remove("dev.sigstore.cosign/bundle");
                (p, a)
            }),
            "no transparency log entry",
        ),
        (
            "not a code-signing certificate",
            Box::new(|image, digest| {
                let p = payload_for(image, digest);
                let a = pki.sig_layer(&p, &not_code_signing, signed_at);
                (p, a)
            }),
            "code signing",
        ),
    ];
    for (i, (name, forge, why)) in cases.iter().enumerate() {
        let image = reg.image(&format!("keyless/forged-{i}"), "v1");
        let digest = rt.block_on(push_test_image(&image, name));
        let (p, a) = forge(&image, &digest);
        rt.block_on(store_sig(&image, &digest, &p, a));
        let out = verify(d, &image, &root, &args);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{name}: {}", text(&out));
        let theirs = rt.block_on(sigstore_rs(&image, &pki, ID, ISSUER));
        assert!(
            theirs.is_err() || theirs == Ok(0),
            "{name}: sigstore-rs accepted it: {theirs:?}"
        );
    }

    // The right signature, the wrong identity or issuer.
    for (id, issuer, why) in [
        (
            "https://github.com/example/op/.github/workflows/other.yaml@refs/heads/main",
            ISSUER,
            "does not match",
        ),
        (ID, "https://accounts.google.com", "OIDC issuer"),
    ] {
        let a = exact(id, issuer);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let out = verify(d, &image, &root, &a);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(why),
            "{}",
            text(&out)
        );
        assert!(
            rt.block_on(sigstore_rs(&image, &pki, id, issuer)).is_err(),
            "{id} {issuer}"
        );
    }

    // Usage: no signer, both a key and an identity.
    let out = run(&["verify", &image], None, d);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = run(
        &[
            "verify",
            &image,
            "--key",
            "k.pub",
            "--certificate-identity",
            ID,
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn keyless_bundle_referrers_verify_here_and_in_sigstore_python_and_forgeries_are_refused() {
    let reg = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let pki = TestPki::new();
    let root = write(d, "trusted_root.json", pki.trusted_root().as_bytes());
    let leaf = pki.leaf(&LeafSpec::new(ID, ISSUER));
    let signed_at = ISSUED + 60;
    let args = exact(ID, ISSUER);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let sign_predicate = "https://sigstore.dev/cosign/sign/v1";

    type Forge<'a> = Box<dyn Fn(&str) -> Vec<u8> + 'a>;
    let cases: Vec<(&str, Forge, Option<&str>)> = vec![
        (
            "good",
            Box::new(|digest| pki.bundle(&statement(digest), &leaf, signed_at)),
            None,
        ),
        (
            "statement of another image",
            Box::new(|_| {
                pki.bundle(
                    &statement(&format!("sha256:{}", "ef".repeat(32))),
                    &leaf,
                    signed_at,
                )
            }),
            Some("no subject"),
        ),
        (
            "logged after the certificate expired",
            Box::new(|digest| pki.bundle(&statement(digest), &leaf, ISSUED + 3600)),
            Some("outside the certificate's validity"),
        ),
        (
            "tampered statement",
            Box::new(|digest| {
                let b = pki.bundle(&statement(digest), &leaf, signed_at);
                let mut v: Value = serde_json::from_slice(&b).expect("json");
                let mut st: Value = serde_json::from_slice(&statement(digest)).expect("st");
                st["predicate"] = serde_json::json!({"forged": true});
                v["dsseEnvelope"]["payload"] = B64.encode(st.to_string()).into();
                v.to_string().into_bytes()
            }),
            Some("signature does not verify"),
        ),
        (
            "bad SET",
            Box::new(|digest| {
                let b = pki.bundle(&statement(digest), &leaf, signed_at);
                let mut v: Value = serde_json::from_slice(&b).expect("json");
                let p = "/verificationMaterial/tlogEntries/0/inclusionPromise/signedEntryTimestamp";
                let mut set = B64
                    .decode(v.pointer(p).and_then(Value::as_str).expect("set"))
                    .expect("b64");
                let n = set.len() - 3;
                set[n] ^= 1;
                *v.pointer_mut(p).expect("set") = B64.encode(set).into();
                v.to_string().into_bytes()
            }),
            Some("signed entry timestamp"),
        ),
    ];
    let mut python_cases = Vec::new();
    let mut files = Vec::new();
    for (i, (name, forge, why)) in cases.iter().enumerate() {
        let image = reg.image(&format!("keyless/bundle-{i}"), "v1");
        let digest = rt.block_on(push_test_image(&image, name));
        let bundle = forge(&digest);
        rt.block_on(attach(&image, &digest, &bundle, sign_predicate));
        let out = verify(d, &image, &root, &args);
        match why {
            None => {
                assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out));
                let printed: Value = serde_json::from_slice(&out.stdout).expect("json");
                assert_eq!(printed[0]["predicateType"], sign_predicate, "{printed}");
                assert!(
                    String::from_utf8_lossy(&out.stderr).contains(ID),
                    "{}",
                    text(&out)
                );
            }
            Some(why) => {
                assert_eq!(out.status.code(), Some(1), "{name}: {}", text(&out));
                assert!(
                    String::from_utf8_lossy(&out.stderr).contains(why),
                    "{name}: {}",
                    text(&out)
                );
            }
        }
        // The artifact sigstore-python judges the statement against: the
        // image manifest itself.
        let (manifest, _, _) = rt
            .block_on(client().get_manifest(&repo_of(&image), &digest))
            .expect("manifest");
        let b = write(d, &format!("bundle-{i}.json"), &bundle);
        let m = write(d, &format!("manifest-{i}.json"), &manifest);
        files.push((name.to_string(), b, m, why.is_none()));
    }
    for (name, b, m, _) in &files {
        python_cases.push((
            name.as_str(),
            b.as_path(),
            m.as_path(),
            ID,
            ISSUER,
            root.as_path(),
        ));
    }
    let verdicts = sigstore_python(&python_cases);
    for (name, _, _, good) in &files {
        assert_eq!(
            verdicts[name]["verified"], *good,
            "sigstore-python on {name}: {}",
            verdicts[name]
        );
    }

    // An attestation referrer is not an image signature; a keyed bundle is
    // not keyless.
    let image = reg.image("keyless/attested", "v1");
    let digest = rt.block_on(push_test_image(&image, "attested"));
    let mut st: Value = serde_json::from_slice(&statement(&digest)).expect("st");
    st["predicateType"] = "https://slsa.dev/provenance/v1".into();
    let att = pki.bundle(st.to_string().as_bytes(), &leaf, signed_at);
    rt.block_on(attach(
        &image,
        &digest,
        &att,
        "https://slsa.dev/provenance/v1",
    ));
    let out = verify(d, &image, &root, &args);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no signature found"),
        "{}",
        text(&out)
    );
}

#[test]
fn keyless_policy_authorities_gate_index_add_and_catalog_verify() {
    let reg = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let pki = TestPki::new();
    let root = write(d, "trusted_root.json", pki.trusted_root().as_bytes());
    let leaf = pki.leaf(&LeafSpec::new(ID, ISSUER));

    let signed = reg.image("gate-keyless/signed", "v1");
    crate::sign_gate::build_bundle(&signed, d);
    let digest = rt
        .block_on(crate::sign_common::target(&signed).resolve_digest())
        .expect("digest");
    let payload =
        SimpleSigning::new(&repo_of(&signed).to_string(), &digest, &BTreeMap::new()).to_bytes();
    rt.block_on(store_sig(
        &signed,
        &digest,
        &payload,
        pki.sig_layer(&payload, &leaf, ISSUED + 60),
    ));

    let host = reg.host();
    let authority = |subject: &str| {
        format!("  - name: ci\n    keyless:\n      identities:\n      - issuer: {ISSUER}\n        subjectRegExp: {subject}\n")
    };
    let good = crate::sign_gate::policy(
        d,
        "ci",
        &host,
        &authority("^https://github.com/example/op/"),
    );
    let other = crate::sign_gate::policy(
        d,
        "other",
        &host,
        &authority("^https://github.com/someone-else/"),
    );

    let db = d.join("index.db");
    let add = |policy: &Path, db: &Path| {
        run(
            &[
                "index",
                "add",
                "--mode",
                "semver",
                "-d",
                path(db),
                &signed,
                "--require-signature",
                path(policy),
                "--trusted-root",
                path(&root),
            ],
            None,
            d,
        )
    };
    let out = add(&good, &db);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(ID),
        "{}",
        text(&out)
    );
    let fresh = d.join("fresh.db");
    let out = add(&other, &fresh);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("does not match"),
        "{}",
        text(&out)
    );
    assert!(!fresh.exists(), "a refused add created a database");
    // The built-in public-good root does not trust the test CA.
    let out = run(
        &[
            "index",
            "add",
            "--mode",
            "semver",
            "-d",
            path(&fresh),
            &signed,
            "--require-signature",
            path(&good),
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    let out = run(
        &[
            "catalog",
            "verify",
            path(&db),
            "--policy",
            path(&good),
            "--trusted-root",
            path(&root),
            "-o",
            "json",
        ],
        None,
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let verdicts: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(verdicts[0]["verified"], true);
    assert!(
        verdicts[0]["signer"]
            .as_str()
            .is_some_and(|s| s.contains("keyless ci") && s.contains(ID)),
        "{verdicts}"
    );
}
