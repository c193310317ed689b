//! Interoperability with an implementation nobody here wrote: sigstore-rs
//! (`sigstore` crate, cosign feature), against a real loopback registry.
//!
//! - signatures `olm-catalog sign` makes verify with sigstore-rs;
//! - signatures sigstore-rs makes and pushes verify with `olm-catalog verify`;
//! - encrypted keys made by either decrypt with the other;
//! - tampered payloads, signatures and digests are refused by both.

use crate::sign_common;

use std::collections::HashMap;
use std::path::Path;

use olm_catalog::sign::{PrivateKey, PublicKey, SIGNATURE_ANNOTATION};
use sigstore::cosign::constraint::{AnnotationMarker, PrivateKeySigner};
use sigstore::cosign::verification_constraint::{
    AnnotationVerifier, PublicKeyVerifier, VerificationConstraintVec,
};
use sigstore::cosign::{
    verify_constraints, ClientBuilder, Constraint, CosignCapabilities, SignatureLayer,
};
use sigstore::crypto::signing_key::SigStoreKeyPair;
use sigstore::crypto::SigningScheme;
use sigstore::registry::{Auth, ClientConfig, ClientProtocol, OciReference};

use sign_common::{generate_keys, push_test_image, run, target, text, Registry};

const PASSWORD: &str = "correct horse battery staple";

fn sigstore_client() -> sigstore::cosign::Client {
    ClientBuilder::default()
        .with_oci_client_config(ClientConfig {
            protocol: ClientProtocol::Http,
            ..Default::default()
        })
        .build()
        .expect("sigstore client")
}

/// sigstore-rs's verdict: Ok(number of trusted layers) when the public key
/// (and annotations) constraints are satisfied.
async fn sigstore_verify(
    image: &str,
    public_pem: &str,
    annotations: &[(&str, &str)],
) -> Result<usize, String> {
    let mut client = sigstore_client();
    let reference: OciReference = image.parse().expect("reference");
    let layers = client
        .trusted_signature_layers(&Auth::Anonymous, &reference)
        .await
        .map_err(|e| format!("trusted_signature_layers: {e}"))?;
    let mut constraints: VerificationConstraintVec = vec![Box::new(
        PublicKeyVerifier::new(
            public_pem.as_bytes(),
            &SigningScheme::ECDSA_P256_SHA256_ASN1,
        )
        .expect("PublicKeyVerifier"),
    )];
    if !annotations.is_empty() {
        constraints.push(Box::new(AnnotationVerifier {
            annotations: annotations
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }));
    }
    verify_constraints(&layers, constraints.iter())
        .map(|()| layers.len())
        .map_err(|e| format!("unsatisfied: {e:?}"))
}

fn olm_verify(
    dir: &Path,
    image: &str,
    public: &Path,
    annotations: &[&str],
) -> std::process::Output {
    let mut args = vec!["verify", image, "--key", public.to_str().expect("utf8")];
    for a in annotations {
        args.push("-a");
        args.push(a);
    }
    run(&args, None, dir)
}

fn olm_sign(dir: &Path, image: &str, key: &Path, annotations: &[&str]) {
    let mut args = vec!["sign", image, "--key", key.to_str().expect("utf8")];
    for a in annotations {
        args.push("-a");
        args.push(a);
    }
    let out = run(&args, Some(PASSWORD), dir);
    assert!(out.status.success(), "sign: {}", text(&out));
}

#[tokio::test]
async fn olm_signature_verifies_with_sigstore_rs() {
    let reg = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let (key, public) = generate_keys(dir.path(), "release", PASSWORD);
    let image = reg.image("operators/etcd-bundle", "v0.9.4");
    let digest = push_test_image(&image, "etcd").await;

    olm_sign(dir.path(), &image, &key, &["team=olm", "build=42"]);

    let public_pem = std::fs::read_to_string(&public).expect("pub");
    let n = sigstore_verify(&image, &public_pem, &[("team", "olm")])
        .await
        .expect("sigstore-rs verifies olm-catalog's signature");
    assert_eq!(n, 1);
    // An annotation that was not signed is refused by sigstore-rs too.
    assert!(sigstore_verify(&image, &public_pem, &[("team", "other")])
        .await
        .is_err());

    // Our own verifier agrees, by tag and by digest.
    for r in [
        image.clone(),
        format!("{}/operators/etcd-bundle@{digest}", reg.host()),
    ] {
        let out = olm_verify(dir.path(), &r, &public, &["team=olm"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let payloads: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(
            payloads[0]["critical"]["image"]["docker-manifest-digest"],
            digest.as_str()
        );
        assert_eq!(payloads[0]["optional"]["build"], "42");
    }

    // A key that did not sign: both refuse.
    let (_, stranger) = generate_keys(dir.path(), "stranger", "x");
    let stranger_pem = std::fs::read_to_string(&stranger).expect("pub");
    assert!(sigstore_verify(&image, &stranger_pem, &[]).await.is_err());
    let out = olm_verify(dir.path(), &image, &stranger, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
}

#[tokio::test]
async fn sigstore_rs_signature_verifies_with_olm_and_signatures_accumulate() {
    let reg = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let (key_path, public) = generate_keys(dir.path(), "cosign", PASSWORD);
    let image = reg.image("operators/index", "latest");
    let digest = push_test_image(&image, "index").await;

    // sigstore-rs loads the key olm-catalog generated, signs and pushes.
    let pem = std::fs::read(&key_path).expect("key");
    let pair = SigStoreKeyPair::from_encrypted_pem(&pem, PASSWORD.as_bytes())
        .expect("sigstore-rs decrypts olm-catalog's key");
    let signer = pair
        .to_sigstore_signer(&SigningScheme::ECDSA_P256_SHA256_ASN1)
        .expect("signer");
    let mut client = sigstore_client();
    let reference: OciReference = image.parse().expect("reference");
    let (sig_ref, source_digest) = client
        .triangulate(&reference, &Auth::Anonymous)
        .await
        .expect("triangulate");
    assert_eq!(source_digest, digest);
    let mut layer = SignatureLayer::new_unsigned(&reference, &source_digest).expect("layer");
    let marker = AnnotationMarker::new(HashMap::from([(
        "origin".to_string(),
        "sigstore-rs".to_string(),
    )]));
    assert!(marker.add_constraint(&mut layer).expect("annotate"));
    assert!(PrivateKeySigner::new_with_signer(signer)
        .add_constraint(&mut layer)
        .expect("sign"));
    client
        .push_signature(None, &Auth::Anonymous, &sig_ref, vec![layer])
        .await
        .expect("push_signature");

    let out = olm_verify(dir.path(), &image, &public, &["origin=sigstore-rs"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let payloads: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(payloads.as_array().expect("array").len(), 1);
    assert_eq!(
        payloads[0]["critical"]["image"]["docker-manifest-digest"],
        digest.as_str()
    );

    // olm-catalog adds its signature beside sigstore-rs's, not over it.
    olm_sign(dir.path(), &image, &key_path, &["origin=olm"]);
    let public_pem = std::fs::read_to_string(&public).expect("pub");
    assert_eq!(
        sigstore_verify(&image, &public_pem, &[])
            .await
            .expect("both"),
        2
    );
    let out = olm_verify(dir.path(), &image, &public, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let payloads: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(payloads.as_array().expect("array").len(), 2);
    // Only the sigstore-rs one carries origin=sigstore-rs.
    let out = olm_verify(dir.path(), &image, &public, &["origin=sigstore-rs"]);
    let payloads: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(payloads.as_array().expect("array").len(), 1);
}

#[tokio::test]
async fn encrypted_keys_load_both_ways() {
    // olm-catalog -> sigstore-rs
    let ours = PrivateKey::generate().expect("generate");
    let pem = ours.to_encrypted_pem(PASSWORD.as_bytes()).expect("encrypt");
    let theirs = SigStoreKeyPair::from_encrypted_pem(pem.as_bytes(), PASSWORD.as_bytes())
        .expect("sigstore-rs decrypts");
    // (sigstore-rs writes CRLF line ends; compare the keys, not the text.)
    let their_public =
        PublicKey::from_pem(&theirs.public_key_to_pem().expect("pem"), "theirs").expect("parse");
    assert_eq!(their_public, ours.public_key());
    assert!(SigStoreKeyPair::from_encrypted_pem(pem.as_bytes(), b"wrong").is_err());

    // sigstore-rs -> olm-catalog
    let made = SigningScheme::ECDSA_P256_SHA256_ASN1
        .create_signer()
        .expect("signer")
        .to_sigstore_keypair()
        .expect("pair");
    let encrypted = made
        .private_key_to_encrypted_pem(PASSWORD.as_bytes())
        .expect("encrypt");
    let loaded = PrivateKey::from_encrypted_pem(&encrypted, PASSWORD.as_bytes(), "sigstore.key")
        .expect("olm-catalog decrypts sigstore-rs's key");
    let public = PublicKey::from_pem(&made.public_key_to_pem().expect("pem"), "sigstore.pub")
        .expect("olm-catalog reads sigstore-rs's public key");
    assert_eq!(loaded.public_key(), public);
    let err =
        PrivateKey::from_encrypted_pem(&encrypted, b"wrong", "sigstore.key").expect_err("wrong");
    assert!(err.to_string().contains("wrong password"), "{err}");

    // The older COSIGN label loads too (same envelope, older cosign).
    let cosign_label = encrypted.replace("SIGSTORE PRIVATE KEY", "COSIGN PRIVATE KEY");
    PrivateKey::from_encrypted_pem(&cosign_label, PASSWORD.as_bytes(), "old.key")
        .expect("old label");
}

#[tokio::test]
async fn sigstore_rs_key_signs_with_olm_catalog() {
    let reg = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let made = SigningScheme::ECDSA_P256_SHA256_ASN1
        .create_signer()
        .expect("signer")
        .to_sigstore_keypair()
        .expect("pair");
    let key = dir.path().join("theirs.key");
    std::fs::write(
        &key,
        made.private_key_to_encrypted_pem(PASSWORD.as_bytes())
            .expect("pem")
            .as_bytes(),
    )
    .expect("write");
    let image = reg.image("op/bundle", "v1");
    push_test_image(&image, "theirs").await;
    olm_sign(dir.path(), &image, &key, &[]);
    let public_pem = made.public_key_to_pem().expect("pem");
    sigstore_verify(&image, &public_pem, &[])
        .await
        .expect("verifies");
}

/// Rewrites the signature image of `image` with `edit`, through the library.
async fn tamper(
    image: &str,
    from_digest: &str,
    to_digest: &str,
    edit: impl FnOnce(&mut olm_catalog::sign::SignatureImage),
) {
    let store = target(image);
    let mut sigs = store.load_signatures(from_digest).await.expect("load");
    assert!(!sigs.layers.is_empty());
    edit(&mut sigs);
    store
        .store_signatures(to_digest, &sigs)
        .await
        .expect("store");
}

#[tokio::test]
async fn tampering_is_refused_by_both() {
    let reg = Registry::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let (key, public) = generate_keys(dir.path(), "cosign", PASSWORD);
    let public_pem = std::fs::read_to_string(&public).expect("pub");

    // 1. Tampered payload (stored under its own new digest, so only the
    //    signature can catch it).
    let a = reg.image("t/payload", "v1");
    let a_digest = push_test_image(&a, "payload").await;
    olm_sign(dir.path(), &a, &key, &["env=prod"]);
    tamper(&a, &a_digest, &a_digest, |s| {
        let l = &mut s.layers[0];
        let text = String::from_utf8(l.payload.clone())
            .expect("utf8")
            .replace("prod", "dev!");
        l.payload = text.into_bytes();
        l.digest = olm_catalog::oci::media::sha256_digest(&l.payload);
    })
    .await;
    assert!(
        sigstore_verify(&a, &public_pem, &[]).await.is_err(),
        "sigstore-rs accepted a tampered payload"
    );
    let out = olm_verify(dir.path(), &a, &public, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("signature does not match"),
        "{}",
        text(&out)
    );

    // 2. Tampered signature.
    let b = reg.image("t/signature", "v1");
    let b_digest = push_test_image(&b, "signature").await;
    olm_sign(dir.path(), &b, &key, &[]);
    tamper(&b, &b_digest, &b_digest, |s| {
        let sig = s.layers[0]
            .annotations
            .get_mut(SIGNATURE_ANNOTATION)
            .expect("sig");
        // Flip one base64 character in the middle of the DER signature.
        let mut chars: Vec<char> = sig.chars().collect();
        let i = chars.len() / 2;
        chars[i] = if chars[i] == 'A' { 'B' } else { 'A' };
        *sig = chars.into_iter().collect();
    })
    .await;
    assert!(
        sigstore_verify(&b, &public_pem, &[]).await.is_err(),
        "sigstore-rs accepted a tampered signature"
    );
    let out = olm_verify(dir.path(), &b, &public, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    // 3. A valid signature, but for another digest: copy image C's signature
    //    to image D's `.sig` tag.
    let c = reg.image("t/digest", "c");
    let c_digest = push_test_image(&c, "c").await;
    let d = reg.image("t/digest", "d");
    let d_digest = push_test_image(&d, "d").await;
    assert_ne!(c_digest, d_digest);
    olm_sign(dir.path(), &c, &key, &[]);
    tamper(&c, &c_digest, &d_digest, |_| {}).await;
    let store = target(&d);
    assert_eq!(
        store
            .load_signatures(&d_digest)
            .await
            .expect("load")
            .layers
            .len(),
        1
    );
    assert!(
        sigstore_verify(&d, &public_pem, &[]).await.is_err(),
        "sigstore-rs accepted another digest's signature"
    );
    let out = olm_verify(dir.path(), &d, &public, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("not this image"), "{}", text(&out));
    // C itself still verifies.
    assert_eq!(
        olm_verify(dir.path(), &c, &public, &[]).status.code(),
        Some(0)
    );
}

/// The key files sigstore-rs ships as test data: made by cosign and Go
/// sigstore, not by anyone here. Read from the dev-dependency's source in
/// the cargo registry, so nothing is copied into this repository.
fn sigstore_rs_test_keys() -> std::path::PathBuf {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let src = cargo_home.join("registry/src");
    for index in std::fs::read_dir(&src).expect("cargo registry sources") {
        let dir = index
            .expect("entry")
            .path()
            .join("sigstore-0.15.0/tests/data/keys");
        if dir.is_dir() {
            return dir;
        }
    }
    panic!("sigstore-0.15.0 sources not found under {}", src.display());
}

#[tokio::test]
async fn keys_made_by_cosign_sign_images_that_sigstore_rs_verifies() {
    let keys = sigstore_rs_test_keys();
    // cosign generate-key-pair with an empty password (N = 2^16), and Go
    // sigstore's older "ENCRYPTED COSIGN PRIVATE KEY" with password 123.
    for (file, password) in [
        ("cosign_generated_encrypted_empty_private.key", ""),
        ("ecdsa_encrypted_private.key", "123"),
    ] {
        let pem = std::fs::read_to_string(keys.join(file)).expect("key");
        let ours = PrivateKey::from_encrypted_pem(&pem, password.as_bytes(), file)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        let theirs = SigStoreKeyPair::from_encrypted_pem(pem.as_bytes(), password.as_bytes())
            .expect("sigstore-rs reads it");
        let their_public =
            PublicKey::from_pem(&theirs.public_key_to_pem().expect("pem"), file).expect("pub");
        assert_eq!(ours.public_key(), their_public, "{file}");

        let reg = Registry::start();
        let dir = tempfile::tempdir().expect("tempdir");
        let image = reg.image("cosign/made", "v1");
        push_test_image(&image, file).await;
        let out = run(
            &[
                "sign",
                &image,
                "--key",
                keys.join(file).to_str().expect("utf8"),
            ],
            Some(password),
            dir.path(),
        );
        assert!(out.status.success(), "{file}: {}", text(&out));
        let public_pem = ours.public_key().to_pem().expect("pem");
        sigstore_verify(&image, &public_pem, &[])
            .await
            .unwrap_or_else(|e| panic!("{file}: {e}"));
    }

    // cosign-format keys of other algorithms: refused by name.
    for (file, algorithm) in [
        ("ed25519_encrypted_private.key", "Ed25519"),
        ("rsa_encrypted_private.key", "RSA"),
    ] {
        let pem = std::fs::read_to_string(keys.join(file)).expect("key");
        let err = PrivateKey::from_encrypted_pem(&pem, b"123", file).expect_err(file);
        assert!(
            err.to_string()
                .contains(&format!("unsupported key algorithm {algorithm}")),
            "{file}: {err}"
        );
    }
}
