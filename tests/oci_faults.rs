//! Faults against a real registry: the registry dying in the middle of a
//! push, auth failures, bursts of 5xx and dropped connections, and a blob
//! truncated in storage.
use crate::common;
use crate::registry;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

use olm_catalog::oci;
use registry::{skopeo, Registry};

/// What the proxy does with one request.
#[derive(Clone, Debug, PartialEq)]
enum Action {
    Forward,
    /// Answer 503 without asking the registry.
    Fail503,
    /// Close the connection without an answer.
    Reset,
    /// Answer with this status line, headers and body (no blank-line framing
    /// needed: `respond` adds it).
    Respond(u16, String, String),
}

type Rule = Box<dyn FnMut(&str) -> Action + Send>;

/// A tiny HTTP/1.1 proxy on loopback in front of the registry. One request
/// per connection (it forces `Connection: close`), so every request passes
/// through `rule`, which sees the request head (request line and headers).
struct Proxy {
    port: u16,
    seen: Arc<Mutex<Vec<(String, Action)>>>,
}

fn read_head(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).ok()? == 0 {
            return None;
        }
        if head.is_empty() && byte[0] == 0x16 {
            // A TLS ClientHello (the client probing HTTPS): not for us.
            return None;
        }
        head.push(byte[0]);
    }
    Some(head)
}

fn handle(
    mut client: TcpStream,
    backend: u16,
    rule: &Mutex<Rule>,
    seen: &Mutex<Vec<(String, Action)>>,
) {
    let Some(head) = read_head(&mut client) else {
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    let text = String::from_utf8_lossy(&head).into_owned();
    let line = text.lines().next().unwrap_or("").to_string();
    let mut length = 0usize;
    let mut rewritten = String::new();
    for (i, h) in text.split("\r\n").enumerate() {
        if h.is_empty() {
            continue;
        }
        let lower = h.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().expect("content-length");
        }
        assert!(
            !lower.starts_with("transfer-encoding"),
            "proxy: chunked bodies not supported"
        );
        if i > 0 && lower.starts_with("connection:") {
            continue;
        }
        rewritten.push_str(h);
        rewritten.push_str("\r\n");
    }
    rewritten.push_str("Connection: close\r\n\r\n");
    let mut body = vec![0u8; length];
    if client.read_exact(&mut body).is_err() {
        return;
    }
    let action = (rule.lock().expect("rule"))(&text);
    seen.lock().expect("seen").push((line, action.clone()));
    match action {
        Action::Reset => {
            let _ = client.shutdown(Shutdown::Both);
        }
        Action::Respond(status, headers, body) => {
            let _ = client.write_all(
                format!(
                    "HTTP/1.1 {status} X\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
        Action::Fail503 => {
            let _ = client.write_all(
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
        Action::Forward => {
            let Ok(mut up) = TcpStream::connect(("127.0.0.1", backend)) else {
                // Registry gone: the client sees a dropped connection.
                let _ = client.shutdown(Shutdown::Both);
                return;
            };
            if up.write_all(rewritten.as_bytes()).is_err() || up.write_all(&body).is_err() {
                return;
            }
            let mut response = Vec::new();
            let _ = up.read_to_end(&mut response);
            let _ = client.write_all(&response);
        }
    }
}

impl Proxy {
    fn start(backend: u16, rule: Rule) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let port = listener.local_addr().expect("addr").port();
        let rule = Arc::new(Mutex::new(rule));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let seen2 = seen.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { break };
                let rule = rule.clone();
                let seen = seen2.clone();
                std::thread::spawn(move || handle(conn, backend, &rule, &seen));
            }
        });
        Proxy { port, seen }
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn count(&self, action: Action) -> usize {
        self.seen
            .lock()
            .expect("seen")
            .iter()
            .filter(|(_, a)| *a == action)
            .count()
    }

    fn lines(&self) -> Vec<String> {
        self.seen
            .lock()
            .expect("seen")
            .iter()
            .map(|(l, _)| l.clone())
            .collect()
    }
}

fn corpus_bundle(rel: &str) -> std::path::PathBuf {
    common::corpus().join("operators").join(rel)
}

/// Runs `bundle build`; returns (exit code, stdout, stderr).
fn build(
    dir: &Path,
    tag: &str,
    env: &[(&str, &str)],
    extra: &[&str],
    stdin: Option<&str>,
) -> (i32, String, String) {
    let mut args = vec!["bundle", "build", dir.to_str().expect("utf8"), "--tag", tag];
    args.extend_from_slice(extra);
    common::run_cli(&args, env, stdin)
}

fn digest_of(stdout: &str) -> String {
    stdout
        .trim()
        .rsplit_once('@')
        .expect("ref@digest")
        .1
        .to_string()
}

fn tag_digest(host: &str, image: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(&skopeo(&[
        "inspect",
        "--tls-verify=false",
        &format!("docker://{host}/{image}"),
    ]))
    .expect("json");
    v["Digest"].as_str().expect("digest").to_string()
}

#[test]
fn registry_stopped_mid_push_leaves_tag_and_rerun_completes() {
    let reg = Arc::new(Mutex::new(Registry::start()));
    let backend = reg.lock().expect("reg").port();
    let armed = Arc::new(Mutex::new(false));
    // The proxy thread outlives the test: it holds the registry weakly, so
    // the registry is dropped (stopped) when the test ends.
    let (reg2, armed2) = (Arc::downgrade(&reg), armed.clone());
    // When armed, the first blob upload (PUT of an upload session) kills the
    // registry before it is forwarded.
    let proxy = Proxy::start(
        backend,
        Box::new(move |line| {
            let mut a = armed2.lock().expect("armed");
            if *a && line.starts_with("PUT ") && line.contains("/blobs/uploads/") {
                *a = false;
                if let Some(reg) = reg2.upgrade() {
                    reg.lock().expect("reg").stop();
                }
            }
            Action::Forward
        }),
    );
    let host = proxy.host();
    let image = "etcd/bundle:stable";
    let tag = format!("{host}/{image}");
    let (code, out, err) = build(&corpus_bundle("etcd/0.9.2"), &tag, &[], &[], None);
    assert_eq!(code, 0, "{err}");
    let first = digest_of(&out);

    *armed.lock().expect("armed") = true;
    let (code, _, err) = build(&corpus_bundle("etcd/0.9.4"), &tag, &[], &[], None);
    assert_eq!(code, 2, "push must fail with the registry down: {err}");
    assert!(
        err.contains("is unreachable") && err.contains(&host),
        "unclear error: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");

    reg.lock().expect("reg").restart();
    assert_eq!(
        tag_digest(&host, image),
        first,
        "a failed push moved the tag"
    );

    let (code, out, err) = build(&corpus_bundle("etcd/0.9.4"), &tag, &[], &[], None);
    assert_eq!(code, 0, "rerun failed: {err}");
    let second = digest_of(&out);
    assert_ne!(first, second);
    assert_eq!(tag_digest(&host, image), second);
}

#[test]
fn auth_errors_are_clear_and_credentials_work() {
    let reg = Registry::start_with_auth("olm", "s3cret");
    let host = reg.host();
    let dir = corpus_bundle("etcd/0.9.4");
    let tag = format!("{host}/etcd/bundle:auth");

    let (code, _, err) = build(&dir, &tag, &[], &[], None);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!("authentication to {host} failed"))
            && err.contains("none were found"),
        "unclear error without credentials: {err}"
    );

    let (code, _, err) = build(
        &dir,
        &tag,
        &[],
        &["--username", "olm", "--password-stdin"],
        Some("wrong\n"),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("rejected the credentials of user `olm`"),
        "unclear error for a wrong password: {err}"
    );

    let (code, out, err) = build(
        &dir,
        &tag,
        &[],
        &["--username", "olm", "--password-stdin"],
        Some("s3cret\n"),
    );
    assert_eq!(code, 0, "{err}");
    let digest = digest_of(&out);

    // An auth file (podman/skopeo format, like ~/.docker/config.json).
    let tmp = tempfile::tempdir().expect("tmp");
    let auth_file = tmp.path().join("auth.json");
    use base64::Engine as _;
    let token = base64::engine::general_purpose::STANDARD.encode("olm:s3cret");
    std::fs::write(
        &auth_file,
        format!(r#"{{"auths":{{"{host}":{{"auth":"{token}"}}}}}}"#),
    )
    .expect("write");
    let tag2 = format!("{host}/etcd/bundle:authfile");
    let (code, _, err) = build(
        &dir,
        &tag2,
        &[("REGISTRY_AUTH_FILE", auth_file.to_str().expect("utf8"))],
        &[],
        None,
    );
    assert_eq!(code, 0, "{err}");
    // The same file as a docker config.
    std::fs::create_dir_all(tmp.path().join(".docker")).expect("mkdir");
    std::fs::copy(&auth_file, tmp.path().join(".docker/config.json")).expect("copy");
    let (code, _, err) = build(
        &dir,
        &tag2,
        &[("HOME", tmp.path().to_str().expect("utf8"))],
        &[],
        None,
    );
    assert_eq!(code, 0, "{err}");

    let v: serde_json::Value = serde_json::from_str(&skopeo(&[
        "inspect",
        "--tls-verify=false",
        "--creds",
        "olm:s3cret",
        &format!("docker://{tag}"),
    ]))
    .expect("json");
    assert_eq!(v["Digest"], digest.as_str());
}

#[test]
fn bursts_of_5xx_and_resets_are_retried() {
    let reg = Registry::start();
    let failures = Arc::new(Mutex::new(0usize));
    let f2 = failures.clone();
    // Fail the first 2 registry API requests with 503, the next 2 by
    // dropping the connection: 4 failures in a row, within the 5 attempts
    // a request gets.
    let proxy = Proxy::start(
        reg.port(),
        Box::new(move |_line| {
            let mut n = f2.lock().expect("n");
            *n += 1;
            match *n {
                1..=2 => Action::Fail503,
                3..=4 => Action::Reset,
                _ => Action::Forward,
            }
        }),
    );
    let tag = format!("{}/etcd/bundle:retry", proxy.host());
    let (code, out, err) = build(&corpus_bundle("etcd/0.9.4"), &tag, &[], &[], None);
    assert_eq!(code, 0, "5xx burst not retried: {err}");
    assert_eq!(proxy.count(Action::Fail503), 2);
    assert_eq!(proxy.count(Action::Reset), 2);
    assert_eq!(
        tag_digest(&reg.host(), "etcd/bundle:retry"),
        digest_of(&out)
    );
    let _ = failures;

    // A registry that never recovers: a clear error after the retries.
    let broken = Proxy::start(reg.port(), Box::new(|_| Action::Fail503));
    let (code, _, err) = build(
        &corpus_bundle("etcd/0.9.4"),
        &format!("{}/x/y:z", broken.host()),
        &[],
        &[],
        None,
    );
    assert_eq!(code, 2);
    assert!(err.contains("answered HTTP 503"), "{err}");
    assert_eq!(broken.count(Action::Fail503), 5, "expected 5 attempts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_blob_is_rejected_on_pull() {
    let reg = Registry::start();
    let tag = format!("{}/etcd/bundle:trunc", reg.host());
    let (code, _, err) = build(&corpus_bundle("etcd/0.9.4"), &tag, &[], &[], None);
    assert_eq!(code, 0, "{err}");
    let client = oci::RegistryClient::from_environment().expect("client");
    let limits = oci::layer::UnpackLimits::default();
    oci::pull_bundle(&client, &tag, &limits)
        .await
        .expect("intact pull");

    // Cut the layer's data file in the registry's storage in half.
    let raw: serde_json::Value = serde_json::from_str(&skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{tag}"),
    ]))
    .expect("json");
    let layer = raw["layers"][0]["digest"]
        .as_str()
        .expect("digest")
        .to_string();
    let file = reg.blob_file(&layer);
    let data = std::fs::read(&file).expect("blob data");
    std::fs::write(&file, &data[..data.len() / 2]).expect("truncate");

    let err = oci::pull_bundle(&client, &tag, &limits)
        .await
        .expect_err("truncated blob accepted");
    assert!(matches!(err, oci::OciError::DigestMismatch { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains(&layer) && msg.contains("does not match its digest"),
        "{msg}"
    );

    // Same bytes, same length, one bit flipped: rejected too.
    let mut flipped = data.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 1;
    std::fs::write(&file, &flipped).expect("flip");
    let err = oci::pull_bundle(&client, &tag, &limits)
        .await
        .expect_err("corrupt blob accepted");
    assert!(matches!(err, oci::OciError::DigestMismatch { .. }), "{err}");
}

#[test]
fn bearer_token_flow() {
    // The registry behind a proxy that plays a token-auth registry: API calls
    // without the bearer token get a Bearer challenge; the token endpoint
    // hands out the token for the right basic credentials.
    let reg = Registry::start();
    let realm_port = Arc::new(std::sync::OnceLock::<u16>::new());
    let rp = realm_port.clone();
    use base64::Engine as _;
    let basic = format!(
        "authorization: basic {}",
        base64::engine::general_purpose::STANDARD
            .encode("olm:s3cret")
            .to_ascii_lowercase()
    );
    let proxy = Proxy::start(
        reg.port(),
        Box::new(move |head| {
            let lower = head.to_ascii_lowercase();
            if head.starts_with("GET /token?") {
                if lower.contains(&basic)
                    && lower.contains("scope=repository%3aetcd%2fbundle%3apull")
                {
                    return Action::Respond(
                        200,
                        "Content-Type: application/json\r\n".into(),
                        r#"{"token":"tok-123"}"#.into(),
                    );
                }
                return Action::Respond(401, String::new(), String::new());
            }
            if lower.contains("authorization: bearer tok-123") {
                return Action::Forward;
            }
            let port = rp.get().copied().unwrap_or(0);
            Action::Respond(
                401,
                format!(
                    "WWW-Authenticate: Bearer realm=\"http://127.0.0.1:{port}/token\",service=\"test-registry\",scope=\"repository:etcd/bundle:pull\"\r\n"
                ),
                String::new(),
            )
        }),
    );
    realm_port.set(proxy.port).expect("set once");
    let tag = format!("{}/etcd/bundle:bearer", proxy.host());
    let dir = corpus_bundle("etcd/0.9.4");

    let (code, _, err) = build(&dir, &tag, &[], &[], None);
    assert_eq!(code, 2);
    assert!(
        err.contains("token server") && err.contains("requires credentials"),
        "{err}"
    );

    let (code, out, err) = build(
        &dir,
        &tag,
        &[],
        &["--username", "olm", "--password-stdin"],
        Some("s3cret\n"),
    );
    assert_eq!(code, 0, "bearer flow failed: {err}");
    assert_eq!(
        tag_digest(&reg.host(), "etcd/bundle:bearer"),
        digest_of(&out)
    );
    let tokens = proxy
        .lines()
        .iter()
        .filter(|l| l.starts_with("GET /token?"))
        .count();
    // One token per scope, cached: not one per request.
    assert!(
        (1..=4).contains(&tokens),
        "{tokens} token requests: {:?}",
        proxy.lines()
    );
}

#[test]
fn failing_bundle_in_a_batch_keeps_its_tag() {
    // Blob uploads to one repository always fail (503); the other bundles
    // of the batch go through. The failing bundle's tag, pushed before,
    // must not move, and the error names the bundle directory.
    let reg = Registry::start();
    let armed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let armed2 = armed.clone();
    let proxy = Proxy::start(
        reg.port(),
        Box::new(move |head| {
            if armed2.load(std::sync::atomic::Ordering::SeqCst)
                && head.starts_with("PUT /v2/etcd/doomed/blobs/uploads/")
            {
                Action::Fail503
            } else {
                Action::Forward
            }
        }),
    );
    let host = proxy.host();
    let doomed = format!("{host}/etcd/doomed:v1");
    let (code, out, err) = build(&corpus_bundle("etcd/0.9.2"), &doomed, &[], &[], None);
    assert_eq!(code, 0, "{err}");
    let before = digest_of(&out);
    armed.store(true, std::sync::atomic::Ordering::SeqCst);

    let tmp = tempfile::tempdir().expect("tmp");
    let list = tmp.path().join("bundles.txt");
    let ok1 = corpus_bundle("etcd/0.9.0");
    let bad = corpus_bundle("etcd/0.9.4");
    let ok2 = corpus_bundle("etcd/0.6.1");
    std::fs::write(
        &list,
        format!(
            "{} {host}/etcd/ok:a\n{} {doomed}\n{} {host}/etcd/ok:b\n",
            ok1.display(),
            bad.display(),
            ok2.display()
        ),
    )
    .expect("write");
    let (code, stdout, stderr) = common::run_cli(
        &[
            "bundle",
            "build",
            "--bundles-file",
            list.to_str().expect("utf8"),
            "--jobs",
            "3",
            "-q",
        ],
        &[],
        None,
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("error: {} → {doomed}", bad.display())) && stderr.contains("503"),
        "{stderr}"
    );
    assert!(stderr.contains("1 of 3 bundle(s) failed"), "{stderr}");
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert_eq!(
        tag_digest(&reg.host(), "etcd/doomed:v1"),
        before,
        "the tag moved"
    );
    assert!(
        proxy.count(Action::Fail503) >= 5,
        "the upload was retried before giving up"
    );
}

/// A second push of the same image uploads no blob: the client asks (HEAD)
/// and the registry has them all; only the manifest is put again.
#[test]
fn rerun_uploads_no_blob() {
    let reg = Registry::start();
    let proxy = Proxy::start(reg.port(), Box::new(|_| Action::Forward));
    let tag = format!("{}/etcd/bundle:twice", proxy.host());
    let (code, first, err) = build(&corpus_bundle("etcd/0.9.4"), &tag, &[], &[], None);
    assert_eq!(code, 0, "{err}");
    let uploads = |lines: &[String]| {
        lines
            .iter()
            .filter(|l| {
                l.contains("/blobs/uploads/") || (l.starts_with("PUT") && l.contains("/blobs/"))
            })
            .count()
    };
    let before = proxy.lines().len();
    assert!(uploads(&proxy.lines()) > 0, "the first push uploads");
    let (code, second, err) = build(&corpus_bundle("etcd/0.9.4"), &tag, &[], &[], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(first, second);
    let rerun: Vec<String> = proxy.lines()[before..].to_vec();
    assert_eq!(uploads(&rerun), 0, "the rerun uploaded: {rerun:#?}");
    assert!(
        rerun
            .iter()
            .any(|l| l.starts_with("HEAD") && l.contains("/blobs/sha256:")),
        "{rerun:#?}"
    );
    assert_eq!(
        rerun
            .iter()
            .filter(|l| l.starts_with("PUT") && l.contains("/manifests/"))
            .count(),
        1,
        "{rerun:#?}"
    );
}

/// A registry that refuses a cross-repository mount (403: no pull access to
/// the base's repository) gets the base's layers copied instead.
#[test]
fn refused_mount_falls_back_to_a_copy() {
    let reg = Registry::start();
    let proxy = Proxy::start(
        reg.port(),
        Box::new(|head| {
            if head.starts_with("POST") && head.lines().next().unwrap_or("").contains("mount=") {
                Action::Respond(
                    403,
                    String::new(),
                    r#"{"errors":[{"code":"DENIED"}]}"#.into(),
                )
            } else {
                Action::Forward
            }
        }),
    );
    let base = format!("{}/base/image:1", proxy.host());
    let (code, _, err) = build(&corpus_bundle("etcd/0.9.4"), &base, &[], &["-q"], None);
    assert_eq!(code, 0, "{err}");
    let tmp = tempfile::tempdir().expect("tmp");
    let db = tmp.path().join("index.db");
    rusqlite::Connection::open(&db)
        .expect("sqlite")
        .execute_batch("CREATE TABLE t (x TEXT);")
        .expect("sql");
    let dest = format!("{}/catalog/index:v1", proxy.host());
    let (code, out, err) = common::run_cli(
        &[
            "index",
            "build",
            "--database",
            db.to_str().expect("utf8"),
            "--base",
            &base,
            "--tag",
            &dest,
        ],
        &[],
        None,
    );
    assert_eq!(code, 0, "a refused mount must fall back to a copy: {err}");
    assert!(
        proxy.lines().iter().any(|l| l.contains("mount=")),
        "no mount tried"
    );
    assert!(!err.contains("mounted sha256:"), "{err}");
    assert_eq!(tag_digest(&reg.host(), "catalog/index:v1"), digest_of(&out));
}

/// A blob download redirected to plain HTTP on a host that is not loopback
/// is refused (no request leaves loopback: the redirect is refused before
/// any connection); --insecure would follow it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirect_to_remote_plain_http_is_refused() {
    let reg = Registry::start();
    let host = reg.host();
    let dir = corpus_bundle("etcd/0.9.4");
    let tag = format!("{host}/etcd/bundle:redir");
    let (code, _, err) = build(&dir, &tag, &[], &["-q"], None);
    assert_eq!(code, 0, "{err}");
    let proxy = Proxy::start(
        reg.port(),
        Box::new(|head| {
            let line = head.lines().next().unwrap_or("");
            if line.starts_with("GET") && line.contains("/blobs/sha256:") {
                Action::Respond(
                    307,
                    "Location: http://cdn.example.invalid/blob\r\n".into(),
                    String::new(),
                )
            } else {
                Action::Forward
            }
        }),
    );
    let client = oci::RegistryClient::new(oci::ClientOptions {
        credentials: oci::auth::CredentialStore::empty(),
        max_attempts: 1,
        ..oci::ClientOptions::default()
    })
    .expect("client");
    let reference = format!("{}/etcd/bundle:redir", proxy.host());
    let err = oci::pull_bundle(&client, &reference, &oci::layer::UnpackLimits::default())
        .await
        .expect_err("the redirect must be refused");
    let text = format!("{err}");
    assert!(
        text.contains("plain HTTP") && text.contains("cdn.example.invalid"),
        "{text}"
    );
}

/// A registry that refuses the signature (the `sha256-H.sig` manifest) of a
/// `--sign` push: the image is stored by digest, the signature fails, and
/// the tag is left as it was — at the old image for `bundle build`, absent
/// for a first `index build`.
#[test]
fn refused_signature_moves_no_tag() {
    let reg = Registry::start();
    let proxy = Proxy::start(
        reg.port(),
        Box::new(|head| {
            let line = head.lines().next().unwrap_or("");
            if line.starts_with("PUT ") && line.contains("/manifests/sha256-") {
                Action::Respond(
                    403,
                    "Content-Type: application/json\r\n".into(),
                    r#"{"errors":[{"code":"DENIED","message":"signatures are not accepted here"}]}"#
                        .into(),
                )
            } else {
                Action::Forward
            }
        }),
    );
    let host = proxy.host();
    let tmp = tempfile::tempdir().expect("tempdir");
    let prefix = tmp.path().join("cosign");
    let prefix = prefix.to_str().expect("utf-8");
    let pw = [("COSIGN_PASSWORD", "pw")];
    let (code, _, err) = common::run_cli(
        &["sign", "generate-key-pair", "--output-prefix", prefix],
        &pw,
        None,
    );
    assert_eq!(code, 0, "{err}");
    let key = format!("{prefix}.key");
    let sign = ["-q", "--sign", "--key", key.as_str()];

    let image = "etcd/bundle:stable";
    let tag = format!("{host}/{image}");
    let (code, out, err) = build(&corpus_bundle("etcd/0.9.2"), &tag, &[], &["-q"], None);
    assert_eq!(code, 0, "{err}");
    let first = digest_of(&out);
    let (code, out, err) = build(&corpus_bundle("etcd/0.9.4"), &tag, &pw, &sign, None);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("signing") && err.contains("tag was not moved") && err.contains("403"),
        "{err}"
    );
    assert_eq!(
        tag_digest(&host, image),
        first,
        "an unsigned image got the tag"
    );

    // index build --sign of a new repository: no tag at all.
    let db = tmp.path().join("index.db");
    let db = db.to_str().expect("utf-8");
    let semver = common::fixtures().join("graph/pkg-semver/1.0.0");
    let (code, _, err) = common::run_cli(
        &[
            "index",
            "add",
            "--database",
            db,
            "--mode",
            "semver",
            semver.to_str().expect("utf-8"),
        ],
        &[],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let catalog = format!("{host}/me/catalog:v1");
    let mut args = vec![
        "index",
        "build",
        "--database",
        db,
        "--tag",
        &catalog,
        "--base",
        "scratch",
    ];
    args.extend(sign);
    let (code, _, err) = common::run_cli(&args, &pw, None);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("tag was not moved"), "{err}");
    // The registry API: the repository has no tag (distribution answers
    // NAME_UNKNOWN for a repository without tags).
    let out = std::process::Command::new("skopeo")
        .args([
            "list-tags",
            "--tls-verify=false",
            &format!("docker://{}/me/catalog", reg.host()),
        ])
        .output()
        .expect("run skopeo");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        assert!(v["Tags"].as_array().is_none_or(|t| t.is_empty()), "{said}");
    } else {
        assert!(
            said.contains("NAME_UNKNOWN") || said.contains("name unknown") || said.contains("404"),
            "{said}"
        );
    }
}

/// Pushes `reference`: a bundle image whose one layer holds only
/// `manifests/` (the fixture's CSV), its annotations carried as labels
/// alone, as some older build tools made them.
fn push_labels_only_bundle(reference: &str) {
    let csv = std::fs::read(
        common::fixtures().join("graph/pkg-semver/1.0.0/manifests/demo.clusterserviceversion.yaml"),
    )
    .expect("fixture");
    let mut layer = oci::layer::LayerBuilder::new();
    layer.file("manifests/demo.clusterserviceversion.yaml", csv, 0o644);
    let built = layer.build(0).expect("layer");
    let (host, rest) = reference.split_once('/').expect("host/repo:tag");
    let (name, tag) = rest.rsplit_once(':').expect("repo:tag");
    registry::push_one_layer_image(
        host,
        name,
        tag,
        (&built.digest, &built.blob),
        &serde_json::json!({
            "architecture": "amd64", "os": "linux",
            "config": {"Labels": {
                "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
                "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
                "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
                "operators.operatorframework.io.bundle.package.v1": "demo",
                "operators.operatorframework.io.bundle.channels.v1": "stable",
                "operators.operatorframework.io.bundle.channel.default.v1": "stable",
            }},
            "rootfs": {"type": "layers", "diff_ids": [built.diff_id]},
        }),
    );
}

/// The config digest of the image `reference` names.
fn config_digest(reference: &str) -> String {
    let raw: serde_json::Value = serde_json::from_str(&skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        &format!("docker://{reference}"),
    ]))
    .expect("json");
    raw["config"]["digest"]
        .as_str()
        .expect("config digest")
        .to_string()
}

/// `index add` from bundle images asks the registry for each image's
/// manifest and layer, and for its config only when the layer holds no
/// annotations (opm reads `metadata/`, not a bundle image's labels): two
/// requests an image, not three. The labels of a labels-only image still
/// stand in for its annotations.
#[test]
fn index_add_reads_a_config_only_for_its_labels() {
    let reg = Registry::start();
    let proxy = Proxy::start(reg.port(), Box::new(|_| Action::Forward));
    let with_annotations = [
        format!("{}/etcd/bundle:0.9.2", proxy.host()),
        format!("{}/etcd/bundle:0.9.4", proxy.host()),
    ];
    for (version, tag) in ["0.9.2", "0.9.4"].iter().zip(&with_annotations) {
        let (code, _, err) = build(
            &corpus_bundle(&format!("etcd/{version}")),
            tag,
            &[],
            &[],
            None,
        );
        assert_eq!(code, 0, "{err}");
    }
    let labels_only = format!("{}/demo/bundle:1.0.0", proxy.host());
    push_labels_only_bundle(&labels_only);
    let configs: Vec<String> = with_annotations.iter().map(|r| config_digest(r)).collect();
    let labels_config = config_digest(&labels_only);

    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("index.db");
    let db = db.to_str().expect("utf-8");
    let before = proxy.lines().len();
    let mut args = vec!["index", "add", "--database", db, "--mode", "semver"];
    args.extend(with_annotations.iter().map(String::as_str));
    args.push(&labels_only);
    let (code, _, err) = common::run_cli(&args, &[], None);
    assert_eq!(code, 0, "{err}");
    let asked: Vec<String> = proxy.lines()[before..]
        .iter()
        .filter(|l| l.starts_with("GET") && !l.starts_with("GET /v2/ "))
        .cloned()
        .collect();
    for config in &configs {
        assert!(
            !asked.iter().any(|l| l.contains(config.as_str())),
            "the config {config} of an image with annotations was fetched: {asked:#?}"
        );
    }
    assert!(
        asked.iter().any(|l| l.contains(labels_config.as_str())),
        "the labels-only image's config was not fetched: {asked:#?}"
    );
    let blobs = asked.iter().filter(|l| l.contains("/blobs/")).count();
    let manifests = asked.iter().filter(|l| l.contains("/manifests/")).count();
    assert_eq!((manifests, blobs), (3, 4), "{asked:#?}");

    let (code, out, err) = common::run_cli(
        &["index", "list", "bundles", "--database", db, "-o", "json"],
        &[],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).expect("json");
    let demo: Vec<&serde_json::Value> = rows
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["package"] == "demo")
        .collect();
    assert_eq!(demo.len(), 1, "{out}");
    assert_eq!(demo[0]["channel"], "stable", "{out}");
    assert_eq!(demo[0]["image"], labels_only.as_str(), "{out}");
}
