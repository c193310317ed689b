//! `verify-blob`: Sigstore bundles from public test suites, verified by our
//! binary, offline, with their expected verdicts; sigstore-python as a
//! second verifier on the same bundles; and many mutations of real
//! bundles, each of which must be refused with a reason (exit 1, no panic).
//!
//! The data is upstream's (fixtures/sigstore/README.md): sigstore-conformance's
//! `test/assets/bundle-verify` (a directory per case, `_fail` when it must
//! not verify) and sigstore-python's test assets.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::{json, Value};

use crate::common::{fixtures, run};

const DEFAULT_IDENTITY: &str = "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main";
const DEFAULT_ISSUER: &str = "https://token.actions.githubusercontent.com";

fn sigstore_dir() -> PathBuf {
    fixtures().join("sigstore")
}

/// One conformance case, as the conformance suite's README describes it.
struct Case {
    name: String,
    expect_ok: bool,
    bundle: PathBuf,
    artifact: PathBuf,
    identity: String,
    issuer: String,
    key: Option<PathBuf>,
    trusted_root: Option<PathBuf>,
}

fn conformance_cases() -> Vec<Case> {
    let root = sigstore_dir().join("conformance");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("conformance cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let read = |p: PathBuf, default: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| default.to_string())
    };
    dirs.into_iter()
        .map(|d| {
            let name = d.file_name().unwrap().to_string_lossy().into_owned();
            let artifact = if d.join("artifact").exists() {
                d.join("artifact")
            } else {
                root.join("a.txt")
            };
            Case {
                expect_ok: !name.ends_with("_fail"),
                bundle: d.join("bundle.sigstore.json"),
                artifact,
                identity: read(d.join("identity"), DEFAULT_IDENTITY),
                issuer: read(d.join("issuer"), DEFAULT_ISSUER),
                key: Some(d.join("key.pub")).filter(|p| p.exists()),
                trusted_root: Some(d.join("trusted_root.json")).filter(|p| p.exists()),
                name,
            }
        })
        .collect()
}

/// Runs verify-blob for a case; (exit code, stderr).
fn verify_case(c: &Case, artifact: &str) -> (i32, String) {
    let bundle = c.bundle.to_string_lossy();
    let mut args: Vec<String> = vec!["verify-blob".into(), "--bundle".into(), bundle.into()];
    match &c.key {
        Some(k) => args.extend(["--key".into(), k.to_string_lossy().into_owned()]),
        None => args.extend([
            "--certificate-identity".into(),
            c.identity.clone(),
            "--certificate-oidc-issuer".into(),
            c.issuer.clone(),
        ]),
    }
    if let Some(t) = &c.trusted_root {
        args.extend(["--trusted-root".into(), t.to_string_lossy().into_owned()]);
    }
    args.push(artifact.to_string());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, err) = run(&refs);
    (code, err)
}

#[test]
fn conformance_cases_get_their_verdicts() {
    let cases = conformance_cases();
    assert!(cases.len() > 60, "only {} conformance cases", cases.len());
    let mut wrong = Vec::new();
    for c in &cases {
        let (code, err) = verify_case(c, &c.artifact.to_string_lossy());
        let ok = match (c.expect_ok, code) {
            (true, 0) => true,
            // A refusal is exit 1 with the reason named.
            (false, 1) => err.contains("error: not verified: "),
            // Its key.pub is not a key (broken base64): a usage error, as
            // with cosign, not a verdict.
            (false, 2) if c.name == "managed-key-wrong-key_fail" => {
                err.contains("no PEM PUBLIC KEY block")
            }
            _ => false,
        };
        if !ok {
            wrong.push(format!("{}: exit {code}: {}", c.name, err.trim()));
        }
    }
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
}

#[test]
fn digests_verify_as_files_do() {
    // FILE_OR_DIGEST: a sha256: digest instead of the file, for message
    // signatures and DSSE subjects alike.
    for c in conformance_cases() {
        if !matches!(
            c.name.as_str(),
            "happy-path-v0.1"
                | "happy-path-v0.3"
                | "happy-path-intoto-in-dsse-v3"
                | "managed-key-happy-path"
        ) {
            continue;
        }
        let digest = format!(
            "sha256:{}",
            sha256_hex(&std::fs::read(&c.artifact).expect("artifact"))
        );
        let (code, err) = verify_case(&c, &digest);
        assert_eq!(code, 0, "{}: {err}", c.name);
        let wrong = format!("sha256:{}", "0".repeat(64));
        let (code, err) = verify_case(&c, &wrong);
        assert_eq!(code, 1, "{}: a wrong digest verified: {err}", c.name);
    }
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(data))
}

#[test]
fn json_output_names_the_signer_or_the_reason() {
    let c = conformance_cases()
        .into_iter()
        .find(|c| c.name == "happy-path-v0.3")
        .expect("case");
    let (code, out, err) = run(&[
        "verify-blob",
        "-o",
        "json",
        "--bundle",
        &c.bundle.to_string_lossy(),
        "--certificate-identity-regexp",
        "^https://github.com/sigstore-conformance/",
        "--certificate-oidc-issuer",
        DEFAULT_ISSUER,
        &c.artifact.to_string_lossy(),
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["verified"], true);
    assert_eq!(v["signer"]["identity"], DEFAULT_IDENTITY);
    assert_eq!(v["signer"]["issuer"], DEFAULT_ISSUER);
    assert_eq!(v["signer"]["log_indexes"], json!([79571823]));

    let (code, out, _) = run(&[
        "verify-blob",
        "-o",
        "json",
        "--bundle",
        &c.bundle.to_string_lossy(),
        "--certificate-identity",
        "someone@example.com",
        "--certificate-oidc-issuer",
        DEFAULT_ISSUER,
        &c.artifact.to_string_lossy(),
    ]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["verified"], false);
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("does not match \"someone@example.com\""),
        "{v}"
    );
}

#[test]
fn the_builtin_root_is_the_public_good_one_and_staging_needs_its_own() {
    // bundle-from-wrong-instance_fail is a staging bundle: refused with the
    // built-in (production) root, verified with staging's.
    let c = conformance_cases()
        .into_iter()
        .find(|c| c.name == "bundle-from-wrong-instance_fail")
        .expect("case");
    let (code, err) = verify_case(&c, &c.artifact.to_string_lossy());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("not in the trusted root"), "{err}");
    let staging = Case {
        trusted_root: Some(sigstore_dir().join("python/staging_trusted_root.json")),
        ..c
    };
    let (code, err) = verify_case(&staging, &staging.artifact.to_string_lossy());
    assert_eq!(code, 0, "{err}");
}

#[test]
fn usage_and_io_errors_exit_2() {
    let c = &conformance_cases()[0];
    let bundle = c.bundle.to_string_lossy().into_owned();
    let a = c.artifact.to_string_lossy().into_owned();
    // Neither a key nor an identity.
    let (code, _, _) = run(&["verify-blob", "--bundle", &bundle, &a]);
    assert_eq!(code, 2);
    // A missing artifact, a missing bundle, a bad regular expression.
    let id = ["--certificate-identity", "x"];
    let (code, _, err) = run(&[
        "verify-blob",
        "--bundle",
        &bundle,
        id[0],
        id[1],
        "/nonexistent",
    ]);
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = run(&["verify-blob", "--bundle", "/nonexistent", id[0], id[1], &a]);
    assert_eq!(code, 2);
    let (code, _, _) = run(&[
        "verify-blob",
        "--bundle",
        &bundle,
        "--certificate-identity-regexp",
        "(",
        &a,
    ]);
    assert_eq!(code, 2);
}

/// A mutation of a bundle's JSON, named.
type Mutation = (&'static str, fn(&mut Value));

fn flip_b64(v: &mut Value) {
    let s = v.as_str().expect("base64 string");
    let mut bytes = BASE64.decode(s).expect("base64");
    let i = bytes.len() / 2;
    bytes[i] ^= 0x01;
    *v = Value::String(BASE64.encode(bytes));
}

fn entry(b: &mut Value) -> &mut Value {
    &mut b["verificationMaterial"]["tlogEntries"][0]
}

fn mutations() -> Vec<Mutation> {
    vec![
        ("flip a signature byte", |b| {
            flip_b64(&mut b["messageSignature"]["signature"])
        }),
        ("flip a certificate byte", |b| {
            flip_b64(&mut b["verificationMaterial"]["certificate"]["rawBytes"])
        }),
        ("flip a message digest byte", |b| {
            flip_b64(&mut b["messageSignature"]["messageDigest"]["digest"])
        }),
        ("flip a proof hash byte", |b| {
            flip_b64(&mut entry(b)["inclusionProof"]["hashes"][0])
        }),
        ("flip a root hash byte", |b| {
            flip_b64(&mut entry(b)["inclusionProof"]["rootHash"])
        }),
        ("flip a SET byte", |b| {
            flip_b64(&mut entry(b)["inclusionPromise"]["signedEntryTimestamp"])
        }),
        ("flip a body byte", |b| {
            flip_b64(&mut entry(b)["canonicalizedBody"])
        }),
        ("flip a log id byte", |b| {
            flip_b64(&mut entry(b)["logId"]["keyId"])
        }),
        ("change the checkpoint's root hash line", |b| {
            let cp = entry(b)["inclusionProof"]["checkpoint"]["envelope"]
                .as_str()
                .unwrap()
                .to_string();
            let mut lines: Vec<String> = cp.split('\n').map(str::to_string).collect();
            lines[2] = BASE64.encode([7u8; 32]);
            entry(b)["inclusionProof"]["checkpoint"]["envelope"] = Value::String(lines.join("\n"));
        }),
        ("change the checkpoint's tree size", |b| {
            let cp = entry(b)["inclusionProof"]["checkpoint"]["envelope"]
                .as_str()
                .unwrap()
                .to_string();
            let mut lines: Vec<String> = cp.split('\n').map(str::to_string).collect();
            lines[1] = "1".into();
            entry(b)["inclusionProof"]["checkpoint"]["envelope"] = Value::String(lines.join("\n"));
        }),
        ("drop the checkpoint signature", |b| {
            let cp = entry(b)["inclusionProof"]["checkpoint"]["envelope"]
                .as_str()
                .unwrap()
                .to_string();
            let body = cp.split("\n\n").next().unwrap().to_string() + "\n\n";
            entry(b)["inclusionProof"]["checkpoint"]["envelope"] = Value::String(body);
        }),
        ("truncate the checkpoint", |b| {
            entry(b)["inclusionProof"]["checkpoint"]["envelope"] = json!("rekor.sigstore.dev");
        }),
        ("negative log index", |b| entry(b)["logIndex"] = json!("-1")),
        ("log index not a number", |b| {
            entry(b)["logIndex"] = json!("x1")
        }),
        ("another log index", |b| entry(b)["logIndex"] = json!("1")),
        ("another integrated time", |b| {
            entry(b)["integratedTime"] = json!("1710869187")
        }),
        ("negative integrated time", |b| {
            entry(b)["integratedTime"] = json!("-5")
        }),
        ("proof index past the tree", |b| {
            entry(b)["inclusionProof"]["logIndex"] = json!("99999999999")
        }),
        ("negative tree size", |b| {
            entry(b)["inclusionProof"]["treeSize"] = json!("-3")
        }),
        ("no proof hashes", |b| {
            entry(b)["inclusionProof"]["hashes"] = json!([])
        }),
        ("an extra proof hash", |b| {
            entry(b)["inclusionProof"]["hashes"]
                .as_array_mut()
                .unwrap()
                .push(json!(BASE64.encode([1u8; 32])))
        }),
        ("a short proof hash", |b| {
            entry(b)["inclusionProof"]["hashes"][0] = json!("AAAA")
        }),
        ("no inclusion proof", |b| {
            entry(b).as_object_mut().unwrap().remove("inclusionProof");
        }),
        ("no checkpoint", |b| {
            entry(b)["inclusionProof"]
                .as_object_mut()
                .unwrap()
                .remove("checkpoint");
        }),
        ("no SET and no time", |b| {
            entry(b).as_object_mut().unwrap().remove("inclusionPromise");
        }),
        ("no log entries", |b| {
            b["verificationMaterial"]["tlogEntries"] = json!([])
        }),
        ("another entry kind", |b| {
            entry(b)["kindVersion"]["kind"] = json!("dsse")
        }),
        ("another entry version", |b| {
            entry(b)["kindVersion"]["version"] = json!("0.0.2")
        }),
        ("no certificate", |b| {
            b["verificationMaterial"]
                .as_object_mut()
                .unwrap()
                .remove("certificate");
        }),
        ("an empty certificate chain", |b| {
            let m = b["verificationMaterial"].as_object_mut().unwrap();
            m.remove("certificate");
            m.insert("x509CertificateChain".into(), json!({"certificates": []}));
        }),
        ("the certificate and a public key", |b| {
            b["verificationMaterial"]["publicKey"] = json!({"hint": "x"})
        }),
        ("a public key instead", |b| {
            let m = b["verificationMaterial"].as_object_mut().unwrap();
            m.remove("certificate");
            m.insert("publicKey".into(), json!({"hint": "x"}));
        }),
        ("a truncated certificate", |b| {
            let c = b["verificationMaterial"]["certificate"]["rawBytes"]
                .as_str()
                .unwrap();
            let bytes = BASE64.decode(c).unwrap();
            b["verificationMaterial"]["certificate"]["rawBytes"] =
                json!(BASE64.encode(&bytes[..bytes.len() - 9]));
        }),
        ("a certificate that is not DER", |b| {
            b["verificationMaterial"]["certificate"]["rawBytes"] = json!(BASE64.encode(b"hello"))
        }),
        ("invalid base64 signature", |b| {
            b["messageSignature"]["signature"] = json!("!!!")
        }),
        ("invalid base64 body", |b| {
            entry(b)["canonicalizedBody"] = json!("%%%")
        }),
        ("a body that is not JSON", |b| {
            entry(b)["canonicalizedBody"] = json!(BASE64.encode(b"{not json"))
        }),
        ("no signature", |b| {
            b.as_object_mut().unwrap().remove("messageSignature");
        }),
        (
            "a DSSE envelope too",
            |b| b["dsseEnvelope"] = json!({"payload": "", "payloadType": "x", "signatures": []}),
        ),
        ("wrong media type", |b| {
            b["mediaType"] = json!("application/vnd.dev.sigstore.bundle+json;version=0.4")
        }),
        ("no media type", |b| {
            b.as_object_mut().unwrap().remove("mediaType");
        }),
        ("version 0.1 with a lone certificate", |b| {
            b["mediaType"] = json!("application/vnd.dev.sigstore.bundle+json;version=0.1")
        }),
        ("a SHA-512 digest hint", |b| {
            b["messageSignature"]["messageDigest"]["algorithm"] = json!("SHA2_512")
        }),
        ("no verification material", |b| {
            b.as_object_mut().unwrap().remove("verificationMaterial");
        }),
        ("a timestamp that is not a token", |b| {
            b["verificationMaterial"]["timestampVerificationData"] = json!({"rfc3161Timestamps": [{"signedTimestamp": BASE64.encode(b"\x30\x03\x02\x01\x01")}]})
        }),
        ("a number for a string", |b| {
            b["messageSignature"]["signature"] = json!(5)
        }),
        ("null material", |b| b["verificationMaterial"] = Value::Null),
    ]
}

/// Runs verify-blob on `bundle` (bytes) for the happy-path-v0.3 artifact.
fn verify_bytes(dir: &Path, bundle: &[u8]) -> (i32, String) {
    let path = dir.join("bundle.json");
    std::fs::write(&path, bundle).expect("write");
    let artifact = sigstore_dir().join("conformance/a.txt");
    let (code, _, err) = run(&[
        "verify-blob",
        "--bundle",
        &path.to_string_lossy(),
        "--certificate-identity",
        DEFAULT_IDENTITY,
        "--certificate-oidc-issuer",
        DEFAULT_ISSUER,
        &artifact.to_string_lossy(),
    ]);
    (code, err)
}

#[test]
fn every_mutation_of_a_real_bundle_is_refused_with_a_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let original =
        std::fs::read(sigstore_dir().join("conformance/happy-path-v0.3/bundle.sigstore.json"))
            .expect("bundle");
    let (code, err) = verify_bytes(dir.path(), &original);
    assert_eq!(code, 0, "the unmutated bundle must verify: {err}");
    let base: Value = serde_json::from_slice(&original).expect("json");
    let mut wrong = Vec::new();
    for (name, mutate) in mutations() {
        let mut b = base.clone();
        mutate(&mut b);
        assert_ne!(b, base, "{name} changed nothing");
        let (code, err) = verify_bytes(dir.path(), &serde_json::to_vec(&b).unwrap());
        if code != 1 || !err.contains("error: not verified: ") {
            wrong.push(format!("{name}: exit {code}: {}", err.trim()));
        }
    }
    // Byte-level damage: truncations and garbage.
    for cut in [0, 1, 10, original.len() / 2, original.len() - 2] {
        let (code, err) = verify_bytes(dir.path(), &original[..cut]);
        if code != 1 || !err.contains("malformed bundle") {
            wrong.push(format!("truncated at {cut}: exit {code}: {}", err.trim()));
        }
    }
    for junk in [
        &b"null"[..],
        b"[]",
        b"\xff\xfe",
        b"{}",
        b"{\"mediaType\": 3}",
    ] {
        let (code, err) = verify_bytes(dir.path(), junk);
        if code != 1 {
            wrong.push(format!("{junk:?}: exit {code}: {}", err.trim()));
        }
    }
    assert!(
        wrong.is_empty(),
        "not refused as they should be:\n{}",
        wrong.join("\n")
    );
}

/// Runs sigstore-python on `cases` (keyless ones); its verdicts by name.
fn sigstore_python(cases: &[&Case]) -> Value {
    let input: Vec<Value> = cases
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "bundle": c.bundle,
                "artifact": c.artifact,
                "identity": c.identity,
                "issuer": c.issuer,
                "trusted_root": c.trusted_root.clone().unwrap_or_else(|| {
                    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                        .join("src/sign/sigstore/public_good_trusted_root.json")
                }),
            })
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
            .write_all(serde_json::to_string(&input).unwrap().as_bytes())
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

/// Cases where sigstore-python 4.5.1 and the conformance suite disagree,
/// and we side with the suite (checked: the test fails if either changes):
/// sigstore-python refuses an intoto 0.0.2 entry's integrated time ("only
/// supported for dsse/hashedrekord 0.0.1 types"), and takes a trust root
/// validity end as exclusive for timestamp authorities ("not enough sources
/// of verified time") where the suite says the interval is closed.
const PYTHON_DIFFERS: &[&str] = &[
    "intoto-with-custom-trust-root",
    "trust-root-tsa-validity-end-inclusive",
];

#[test]
fn sigstore_python_agrees_on_every_keyless_case() {
    let cases = conformance_cases();
    let keyless: Vec<&Case> = cases.iter().filter(|c| c.key.is_none()).collect();
    let theirs = sigstore_python(&keyless);
    let mut disagree = Vec::new();
    for c in &keyless {
        let (code, err) = verify_case(c, &c.artifact.to_string_lossy());
        let ours = code == 0;
        let python = theirs[&c.name]["verified"].as_bool().expect("verdict");
        let expected_to_differ = PYTHON_DIFFERS.contains(&c.name.as_str());
        if (ours != python) != expected_to_differ {
            disagree.push(format!(
                "{}: ours {ours} ({}), sigstore-python {python} ({})",
                c.name,
                err.trim(),
                theirs[&c.name]["reason"]
            ));
        }
    }
    assert!(
        disagree.is_empty(),
        "verdicts differ:\n{}",
        disagree.join("\n")
    );
}

/// sigstore-python's own test bundles (staging instance), with the verdicts
/// its test suite expects (test/unit/verify/test_verifier.py, test_models.py).
#[test]
fn sigstore_python_test_bundles() {
    let dir = sigstore_dir().join("python");
    let staging = dir.join("staging_trusted_root.json");
    let with_tsa = dir.join("tsa/staging_with_tsa_trusted_root.json");
    // (bundle, artifact, identity, trusted root, verifies)
    let cases: &[(&str, &str, &str, &Path, bool)] = &[
        (
            "bundle.txt.sigstore",
            "bundle.txt",
            "a@tny.town",
            &staging,
            true,
        ),
        (
            "bundle_v3.txt.sigstore",
            "bundle_v3.txt",
            "william@yossarian.net",
            &staging,
            true,
        ),
        (
            "bundle_v3_alt.txt.sigstore",
            "bundle_v3_alt.txt",
            "william@yossarian.net",
            &staging,
            true,
        ),
        (
            "staging-rekor-v2.txt.sigstore.json",
            "staging-rekor-v2.txt",
            "jku@goto.fi",
            &staging,
            true,
        ),
        (
            "tsa/bundle.txt.sigstore",
            "tsa/bundle.txt",
            "alexis.challande@trailofbits.com",
            &with_tsa,
            true,
        ),
        // The same without its timestamp authority: the integrated time is
        // enough, as for sigstore-python (a timestamp that does not verify
        // is not counted).
        (
            "tsa/bundle.txt.sigstore",
            "tsa/bundle.txt",
            "alexis.challande@trailofbits.com",
            &staging,
            true,
        ),
        (
            "tsa/bundle.duplicate.sigstore",
            "tsa/bundle.txt",
            "alexis.challande@trailofbits.com",
            &with_tsa,
            false,
        ),
        (
            "tsa/bundle.many_timestamp.sigstore",
            "tsa/bundle.txt",
            "alexis.challande@trailofbits.com",
            &with_tsa,
            false,
        ),
        (
            "tsa/bundle.txt.late_timestamp.sigstore",
            "tsa/bundle.txt",
            "alexis.challande@trailofbits.com",
            &with_tsa,
            false,
        ),
        (
            "bundle_cve_2022_36056.txt.sigstore",
            "bundle_cve_2022_36056.txt",
            "william@yossarian.net",
            &staging,
            false,
        ),
        (
            "bundle_invalid_version.txt.sigstore",
            "bundle_invalid_version.txt",
            "william@yossarian.net",
            &staging,
            false,
        ),
        (
            "bundle_no_cert_v1.txt.sigstore",
            "bundle_no_cert_v1.txt",
            "william@yossarian.net",
            &staging,
            false,
        ),
        (
            "bundle_no_checkpoint.txt.sigstore",
            "bundle_no_checkpoint.txt",
            "william@yossarian.net",
            &staging,
            false,
        ),
        (
            "bundle_no_log_entry.txt.sigstore",
            "bundle_no_log_entry.txt",
            "william@yossarian.net",
            &staging,
            false,
        ),
        (
            "bundle_v3_no_signed_time.txt.sigstore.json",
            "bundle_v3_no_signed_time.txt",
            "william@yossarian.net",
            &staging,
            false,
        ),
        // A staging bundle against the built-in production root.
        (
            "bundle_v3.txt.sigstore",
            "bundle_v3.txt",
            "william@yossarian.net",
            Path::new(""),
            false,
        ),
    ];
    let mut wrong = Vec::new();
    for (bundle, artifact, identity, root, verifies) in cases {
        let bundle_path = dir.join(bundle).to_string_lossy().into_owned();
        let artifact_path = dir.join(artifact).to_string_lossy().into_owned();
        let root_path = root.to_string_lossy().into_owned();
        let mut args = vec![
            "verify-blob",
            "--bundle",
            &bundle_path,
            "--certificate-identity",
            identity,
        ];
        if !root_path.is_empty() {
            args.extend(["--trusted-root", &root_path]);
        }
        args.push(&artifact_path);
        let (code, _, err) = run(&args);
        let want = if *verifies { 0 } else { 1 };
        if code != want || (!verifies && !err.contains("error: not verified: ")) {
            wrong.push(format!(
                "{bundle} with {root_path:?}: exit {code}: {}",
                err.trim()
            ));
        }
    }
    assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
}

#[test]
fn a_trusted_root_of_another_type_is_refused() {
    let c = conformance_cases()
        .into_iter()
        .find(|c| c.name == "happy-path-v0.3")
        .expect("case");
    let bad = sigstore_dir().join("python/trusted_root/trustedroot.badtype.json");
    let (code, err) = verify_case(
        &Case {
            trusted_root: Some(bad),
            ..c
        },
        &sigstore_dir().join("conformance/a.txt").to_string_lossy(),
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("trusted root"), "{err}");
}
