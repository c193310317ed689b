//! `serve --http`: catalogd's HTTP API (operator-controller
//! `internal/catalogd/server/handlers.go`), checked from the outside with
//! curl and with a Python urllib client (tests/python/catalogd_client.py),
//! on a small catalog written here, on the corpus's kube-green catalog, and
//! on opm's own SQLite index (against what `opm render` gave for it).

use crate::common;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running `olm-catalog serve`, killed when dropped.
struct Served {
    child: Child,
    http: String,
    grpc: Option<String>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `serve CATALOG ARGS…` and waits for the addresses it prints.
fn start(catalog: &Path, args: &[&str]) -> Served {
    let mut child = Command::new(common::bin())
        .arg("serve")
        .arg(catalog)
        .args(["--address", "127.0.0.1"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start olm-catalog serve");
    let stderr = child.stderr.take().expect("stderr");
    let log = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let log = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line.clone());
                log.lock().expect("log").push(line);
            }
        });
    }
    let want_grpc = !args.contains(&"--http") || args.contains(&"--port");
    let (mut http, mut grpc) = (None, None);
    while http.is_none() || (want_grpc && grpc.is_none()) {
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(line) => {
                if let Some(rest) = line.strip_prefix("serving catalogd HTTP API on ") {
                    http = rest.split_whitespace().next().map(String::from);
                }
                if let Some(rest) = line.strip_prefix("serving api.Registry on ") {
                    grpc = Some(rest.trim().to_string());
                }
            }
            Err(_) => panic!(
                "serve did not start: {}",
                log.lock().expect("log").join("\n")
            ),
        }
    }
    Served {
        child,
        http: format!("http://{}", http.expect("http address")),
        grpc,
        log,
    }
}

/// One answer as curl saw it.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// `curl ARGS URL`, headers and body kept apart, the body as sent (no decoding).
fn curl(url: &str, args: &[&str]) -> Answer {
    let dir = tempfile::tempdir().expect("tempdir");
    let (hdr, body) = (dir.path().join("h"), dir.path().join("b"));
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "60", "-D"])
        .arg(&hdr)
        .arg("-o")
        .arg(&body)
        .args(["-w", "%{http_code}"])
        .args(args)
        .arg(url)
        .output()
        .expect("run curl (apt-get install curl)");
    assert!(
        out.status.success(),
        "curl {url} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("status");
    let headers = std::fs::read_to_string(&hdr)
        .expect("headers")
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = std::fs::read(&body).unwrap_or_default();
    if args.contains(&"-I") {
        // curl writes a HEAD answer's headers where the body would go.
        let head = std::fs::read(&hdr).unwrap_or_default();
        if body.starts_with(&head) {
            body.drain(..head.len());
        }
    }
    Answer {
        status,
        headers,
        body,
    }
}

fn gunzip(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(b)
        .read_to_end(&mut out)
        .expect("gzip body");
    out
}

/// A catalog of two files (YAML documents, then a JSON stream) with
/// HTML-special characters, numbers Go writes as float64, a deprecation and
/// an object of another schema.
fn write_catalog(dir: &Path) -> PathBuf {
    let root = dir.join("catalog");
    std::fs::create_dir_all(root.join("a")).expect("mkdir");
    std::fs::create_dir_all(root.join("b")).expect("mkdir");
    let long = "etcd is a distributed key value store. ".repeat(40);
    std::fs::write(
        root.join("a/etcd.yaml"),
        format!(
            "---\nschema: olm.package\nname: etcd\ndefaultChannel: alpha\ndescription: \"etcd <3 & friends. {long}\"\n\
             ---\nschema: olm.channel\npackage: etcd\nname: alpha\nentries:\n  - name: etcd.v0.9.2\n    replaces: etcd.v0.9.0\n  - name: etcd.v0.9.0\n\
             ---\nschema: olm.bundle\npackage: etcd\nname: etcd.v0.9.0\nimage: quay.io/x/etcd:90\nproperties:\n  - type: olm.package\n    value: {{packageName: etcd, version: 0.9.0}}\n\
             ---\nschema: olm.bundle\npackage: etcd\nname: etcd.v0.9.2\nimage: quay.io/x/etcd:92\nproperties:\n  - type: olm.package\n    value: {{packageName: etcd, version: 0.9.2}}\n  - type: example.weight\n    value: {{big: 12345678901234567890, f: 1.50, e: 1.0e+21}}\n"
        ),
    )
    .expect("write");
    std::fs::write(
        root.join("b/more.json"),
        concat!(
            "{\"schema\":\"olm.deprecations\",\"package\":\"etcd\",\"entries\":[{\"reference\":{\"schema\":\"olm.bundle\",\"name\":\"etcd.v0.9.0\"},\"message\":\"use 0.9.2\"}]}\n",
            "{\"schema\":\"olm.package\",\"name\":\"other\",\"defaultChannel\":\"stable\"}\n",
            "{\"schema\":\"olm.channel\",\"package\":\"other\",\"name\":\"stable\",\"entries\":[{\"name\":\"other.v1\"}]}\n",
            "{\"schema\":\"olm.bundle\",\"package\":\"other\",\"name\":\"other.v1\",\"image\":\"quay.io/x/other:1\",\"properties\":[{\"type\":\"olm.package\",\"value\":{\"packageName\":\"other\",\"version\":\"1.0.0\"}}]}\n",
            "{\"schema\":\"example.note\",\"name\":\"etcd\",\"note\":\"x\"}\n",
        ),
    )
    .expect("write");
    root
}

/// Runs tests/python/catalogd_client.py against a server.
fn run_python_client(env: &[(&str, &str)]) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/catalogd_client.py");
    let out = Command::new("python3")
        .arg(&script)
        .envs(env.iter().copied())
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python client failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn all_is_every_object_as_catalogd_stores_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cat = write_catalog(dir.path());
    let s = start(&cat, &["--http", "127.0.0.1:0"]);
    let a = curl(&format!("{}/api/v1/all", s.http), &[]);
    assert_eq!(a.status, 200);
    assert_eq!(a.header("Content-Type"), Some("application/jsonl"));
    assert_eq!(a.header("Accept-Ranges"), Some("bytes"));
    assert_eq!(a.header("Vary"), Some("Accept-Encoding"));
    assert!(a
        .header("Last-Modified")
        .is_some_and(|v| v.ends_with(" GMT")));
    assert_eq!(
        a.header("Content-Length"),
        Some(a.body.len().to_string().as_str())
    );
    let text = a.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 9, "{text}");
    assert!(text.ends_with('\n'));
    // Files in path order, documents in file order; every object re-encoded
    // by Go's json.Encoder over a map: sorted keys, no HTML escaping,
    // numbers as float64.
    assert!(lines[0]
        .starts_with("{\"defaultChannel\":\"alpha\",\"description\":\"etcd <3 & friends. etcd is"));
    assert!(lines[0].ends_with("\",\"name\":\"etcd\",\"schema\":\"olm.package\"}"));
    assert_eq!(
        lines[3],
        "{\"image\":\"quay.io/x/etcd:92\",\"name\":\"etcd.v0.9.2\",\"package\":\"etcd\",\"properties\":[\
         {\"type\":\"olm.package\",\"value\":{\"packageName\":\"etcd\",\"version\":\"0.9.2\"}},\
         {\"type\":\"example.weight\",\"value\":{\"big\":12345678901234567000,\"e\":1e+21,\"f\":1.5}}],\"schema\":\"olm.bundle\"}"
    );
    assert_eq!(
        lines[4],
        "{\"entries\":[{\"message\":\"use 0.9.2\",\"reference\":{\"name\":\"etcd.v0.9.0\",\"schema\":\"olm.bundle\"}}],\"package\":\"etcd\",\"schema\":\"olm.deprecations\"}"
    );
    assert_eq!(
        lines[8],
        "{\"name\":\"etcd\",\"note\":\"x\",\"schema\":\"example.note\"}"
    );
    // The same under the ClusterCatalog path.
    let b = curl(&format!("{}/catalogs/catalog/api/v1/all", s.http), &[]);
    assert_eq!((b.status, b.body), (200, a.body.clone()));
    // HEAD: the headers of GET, no body.
    let h = curl(&format!("{}/api/v1/all", s.http), &["-I"]);
    assert_eq!(h.status, 200);
    assert_eq!(
        h.header("Content-Length"),
        Some(a.body.len().to_string().as_str())
    );
    assert_eq!(h.header("Content-Type"), Some("application/jsonl"));
    assert!(h.body.is_empty());
    // One byte range, as http.ServeContent answers it.
    let r = curl(
        &format!("{}/api/v1/all", s.http),
        &["-H", "Range: bytes=0-9"],
    );
    assert_eq!(r.status, 206);
    assert_eq!(
        r.header("Content-Range"),
        Some(format!("bytes 0-9/{}", a.body.len()).as_str())
    );
    assert_eq!(r.body, a.body[..10]);
    let r = curl(
        &format!("{}/api/v1/all", s.http),
        &["-H", &format!("Range: bytes={}-", a.body.len())],
    );
    assert_eq!(r.status, 416);
    assert_eq!(
        r.header("Content-Range"),
        Some(format!("bytes */{}", a.body.len()).as_str())
    );
    assert_eq!(r.text(), "invalid range: failed to overlap\n");
    // Several ranges: multipart/byteranges, one part per range.
    let r = curl(
        &format!("{}/api/v1/all", s.http),
        &["-H", "Range: bytes=0-4, 10-14"],
    );
    assert_eq!(r.status, 206);
    let ct = r.header("Content-Type").expect("Content-Type").to_string();
    let boundary = ct
        .strip_prefix("multipart/byteranges; boundary=")
        .expect("multipart");
    let n = a.body.len();
    let want = format!(
        "--{boundary}\r\nContent-Range: bytes 0-4/{n}\r\nContent-Type: application/jsonl\r\n\r\n{}\r\n\
         --{boundary}\r\nContent-Range: bytes 10-14/{n}\r\nContent-Type: application/jsonl\r\n\r\n{}\r\n--{boundary}--\r\n",
        String::from_utf8_lossy(&a.body[0..5]),
        String::from_utf8_lossy(&a.body[10..15])
    );
    assert_eq!(r.text(), want);
    assert_eq!(
        r.header("Content-Length"),
        Some(want.len().to_string().as_str())
    );
}

#[test]
fn metas_filters_as_catalogd_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cat = write_catalog(dir.path());
    let s = start(&cat, &["--http", "127.0.0.1:0"]);
    let all = curl(&format!("{}/api/v1/all", s.http), &[]).text();
    let objects: Vec<(serde_json::Value, &str)> = all
        .lines()
        .map(|l| (serde_json::from_str(l).expect("json line"), l))
        .collect();
    let field = |o: &serde_json::Value, k: &str| o[k].as_str().unwrap_or("").to_string();
    // Every combination of the three filters, with values the catalog has
    // and one it does not.
    let schemas = [
        "",
        "olm.package",
        "olm.channel",
        "olm.bundle",
        "olm.deprecations",
        "example.note",
        "none",
    ];
    let packages = ["", "etcd", "other", "none"];
    let names = ["", "etcd", "alpha", "etcd.v0.9.2", "other.v1", "none"];
    for schema in schemas {
        for package in packages {
            for name in names {
                let mut q = Vec::new();
                for (k, v) in [("schema", schema), ("package", package), ("name", name)] {
                    if !v.is_empty() {
                        q.push(format!("{k}={v}"));
                    }
                }
                let url = format!("{}/api/v1/metas?{}", s.http, q.join("&"));
                let a = curl(&url, &[]);
                assert_eq!(a.status, 200, "{url}");
                assert_eq!(a.header("Content-Type"), Some("application/jsonl"), "{url}");
                // `package` is the object's own field: an olm.package has
                // none, so a package filter never selects it.
                let want: String = objects
                    .iter()
                    .filter(|(o, _)| {
                        (schema.is_empty() || field(o, "schema") == schema)
                            && (package.is_empty() || field(o, "package") == package)
                            && (name.is_empty() || field(o, "name") == name)
                    })
                    .map(|(_, l)| format!("{l}\n"))
                    .collect();
                assert_eq!(a.text(), want, "{url}");
            }
        }
    }
    // Empty values are no filter; a repeated one counts once, the first.
    let a = curl(
        &format!("{}/api/v1/metas?schema=&package=&name=", s.http),
        &[],
    );
    assert_eq!(a.text(), all);
    let a = curl(
        &format!("{}/api/v1/metas?name=other.v1&name=etcd", s.http),
        &[],
    );
    assert_eq!(a.text().lines().count(), 1);
    assert!(a.text().contains("\"name\":\"other.v1\""));
    // Percent-escapes and '+' are decoded as Go decodes a query.
    let a = curl(
        &format!("{}/api/v1/metas?schema=olm%2Epackage", s.http),
        &[],
    );
    assert_eq!(a.text().lines().count(), 2);
    // An unknown parameter is a bad request, even an empty one.
    for q in ["foo=bar", "schema=olm.package&Package=etcd", "limit="] {
        let a = curl(&format!("{}/api/v1/metas?{q}", s.http), &[]);
        assert_eq!(a.status, 400, "{q}");
        assert_eq!(a.text(), "400 Bad Request\n");
        assert_eq!(a.header("Content-Type"), Some("text/plain; charset=utf-8"));
    }
    // HEAD: content type and date, no body.
    let h = curl(
        &format!("{}/api/v1/metas?schema=olm.bundle", s.http),
        &["-I"],
    );
    assert_eq!(h.status, 200);
    assert_eq!(h.header("Content-Type"), Some("application/jsonl"));
    assert!(h.header("Last-Modified").is_some());
    assert!(h.body.is_empty());
}

#[test]
fn gzip_conditional_requests_and_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cat = write_catalog(dir.path());
    let s = start(
        &cat,
        &["--http", "127.0.0.1:0", "--catalog-name", "operatorhubio"],
    );
    let base = &s.http;
    let plain = curl(&format!("{base}/api/v1/all"), &[]);
    assert!(plain.body.len() >= 1024);

    // gzip when asked, for responses of 1024 bytes and more.
    let gz = curl(
        &format!("{base}/api/v1/all"),
        &["-H", "Accept-Encoding: gzip"],
    );
    assert_eq!(gz.status, 200);
    assert_eq!(gz.header("Content-Encoding"), Some("gzip"));
    assert_eq!(gz.header("Accept-Ranges"), None);
    assert_eq!(gz.header("Vary"), Some("Accept-Encoding"));
    assert_eq!(gunzip(&gz.body), plain.body);
    let gz = curl(
        &format!("{base}/api/v1/metas?schema=olm.package"),
        &["-H", "Accept-Encoding: br, gzip;q=0.8"],
    );
    assert_eq!(gz.header("Content-Encoding"), Some("gzip"));
    assert!(gunzip(&gz.body).starts_with(b"{\"defaultChannel\":\"alpha\""));
    // Small answers, refused gzip, HEAD and ranges stay plain.
    let small = curl(
        &format!("{base}/api/v1/metas?name=other.v1"),
        &["-H", "Accept-Encoding: gzip"],
    );
    assert_eq!(small.header("Content-Encoding"), None);
    assert!(small.text().contains("other.v1"));
    let refused = curl(
        &format!("{base}/api/v1/all"),
        &["-H", "Accept-Encoding: gzip;q=0"],
    );
    assert_eq!(refused.header("Content-Encoding"), None);
    assert_eq!(refused.body, plain.body);
    let head = curl(
        &format!("{base}/api/v1/all"),
        &["-I", "-H", "Accept-Encoding: gzip"],
    );
    assert_eq!(head.header("Content-Encoding"), None);
    let part = curl(
        &format!("{base}/api/v1/all"),
        &["-H", "Accept-Encoding: gzip", "-H", "Range: bytes=0-2047"],
    );
    assert_eq!((part.status, part.header("Content-Encoding")), (206, None));
    // curl --compressed decodes it.
    let out = Command::new("curl")
        .args(["-sS", "--compressed"])
        .arg(format!("{base}/api/v1/all"))
        .output()
        .expect("curl");
    assert_eq!(out.stdout, plain.body);

    // Last-Modified / If-Modified-Since: 304 with no body, for both endpoints.
    let lm = plain
        .header("Last-Modified")
        .expect("Last-Modified")
        .to_string();
    for path in ["/api/v1/all", "/api/v1/metas?schema=olm.bundle"] {
        let nm = curl(
            &format!("{base}{path}"),
            &["-H", &format!("If-Modified-Since: {lm}")],
        );
        assert_eq!(nm.status, 304, "{path}");
        assert!(nm.body.is_empty());
        assert_eq!(nm.header("Content-Type"), None);
        assert_eq!(nm.header("Last-Modified"), Some(lm.as_str()));
        let old = curl(
            &format!("{base}{path}"),
            &["-H", "If-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT"],
        );
        assert_eq!(old.status, 200, "{path}");
        assert!(!old.body.is_empty());
        let star = curl(&format!("{base}{path}"), &["-H", "If-None-Match: *"]);
        assert_eq!(star.status, 304, "{path}");
        let ius = curl(
            &format!("{base}{path}"),
            &["-H", "If-Unmodified-Since: Sat, 01 Jan 2000 00:00:00 GMT"],
        );
        assert_eq!(ius.status, 412, "{path}");
        let head = curl(
            &format!("{base}{path}"),
            &["-I", "-H", &format!("If-Modified-Since: {lm}")],
        );
        assert_eq!(head.status, 304, "{path}");
    }
    // A date /all cannot read is ignored (http.ServeContent); catalogd's
    // metas handler answers it with a 500.
    let bad = "If-Modified-Since: yesterday";
    assert_eq!(
        curl(&format!("{base}/api/v1/all"), &["-H", bad]).status,
        200
    );
    let m = curl(&format!("{base}/api/v1/metas"), &["-H", bad]);
    assert_eq!(
        (m.status, m.text().as_str()),
        (500, "500 Internal Server Error\n")
    );

    // Paths, methods and names.
    // (`/` is the list of packages: tests/graph_pictures.rs.)
    for path in [
        "/api/v1",
        "/api/v1/all/",
        "/api/v2/all",
        "/catalogs/operatorhubio/api/v1/graphql",
    ] {
        let a = curl(&format!("{base}{path}"), &[]);
        assert_eq!(
            (a.status, a.text().as_str()),
            (404, "404 page not found\n"),
            "{path}"
        );
    }
    for method in ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"] {
        let a = curl(&format!("{base}/api/v1/all"), &["-X", method]);
        assert_eq!(
            (a.status, a.text().as_str()),
            (405, "Method Not Allowed\n"),
            "{method}"
        );
        let a = curl(
            &format!("{base}/catalogs/operatorhubio/api/v1/metas"),
            &["-X", method],
        );
        assert_eq!(a.status, 405, "{method}");
    }
    let named = curl(
        &format!("{base}/catalogs/operatorhubio/api/v1/metas?name=etcd"),
        &[],
    );
    assert_eq!((named.status, named.text().lines().count()), (200, 2));
    let other = curl(&format!("{base}/catalogs/catalog/api/v1/all"), &[]);
    assert_eq!(
        (other.status, other.text().as_str()),
        (404, "404 Not Found\n")
    );
    let bad = curl(&format!("{base}/catalogs/Bad_Name/api/v1/all"), &[]);
    assert_eq!(bad.status, 400);
    assert!(
        bad.text()
            .starts_with("invalid catalog name: a lowercase RFC 1123 subdomain"),
        "{}",
        bad.text()
    );
    // ServeMux sends a client to the clean path.
    let r = curl(&format!("{base}/api//v1/./all?x=1"), &[]);
    assert_eq!(r.status, 301);
    assert_eq!(r.header("Location"), Some("/api/v1/all?x=1"));
    drop(s);
}

#[test]
fn python_client_and_grpc_side_by_side() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cat = write_catalog(dir.path());
    let s = start(&cat, &["--port", "0", "--http", "127.0.0.1:0"]);
    let grpc = s.grpc.clone().expect("gRPC address");
    run_python_client(&[
        ("OLM_CATALOG_HTTP", &s.http),
        ("OLM_CATALOG_FBC_DIR", &cat.to_string_lossy()),
        ("OLM_CATALOG_GRPC", &grpc),
    ]);
    // --http alone serves no gRPC.
    let only = start(&cat, &["--http", "127.0.0.1:0"]);
    assert!(only.grpc.is_none());
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !only
            .log
            .lock()
            .expect("log")
            .iter()
            .any(|l| l.contains("api.Registry")),
        "gRPC served without --port"
    );
}

#[test]
fn kube_green_catalog_is_served_object_for_object() {
    let cat = common::corpus().join("catalogs/v4.18/kube-green");
    let s = start(&cat, &["--http", "127.0.0.1:0"]);
    run_python_client(&[
        ("OLM_CATALOG_HTTP", &s.http),
        ("OLM_CATALOG_FBC_DIR", &cat.to_string_lossy()),
    ]);
}

/// A SQLite index is served as its rendered FBC: the objects `opm render
/// index.db` gave for opm's own index (../shared/opm-golden/sqlite/etcd).
#[test]
fn sqlite_index_is_served_as_opm_renders_it() {
    let golden = common::golden().join("sqlite/etcd");
    let s = start(&golden.join("index.db"), &["--http", "127.0.0.1:0"]);
    let a = curl(&format!("{}/api/v1/all", s.http), &[]);
    assert_eq!(a.status, 200);
    let ours: Vec<serde_json::Value> = a
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let render = std::fs::read_to_string(golden.join("render.json")).expect("render.json");
    let theirs: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&render)
        .into_iter::<serde_json::Value>()
        .map(|v| v.expect("render.json object"))
        .collect();
    // Property order is left out: opm v1.26.5, which wrote render.json, puts
    // olm.gvk before olm.package; the order is the render module's business.
    let norm = |v: &serde_json::Value| {
        let mut v = v.clone();
        if let Some(props) = v.get_mut("properties").and_then(|p| p.as_array_mut()) {
            props.sort_by_key(|p| p.to_string());
        }
        v
    };
    assert_eq!(ours.len(), theirs.len());
    for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        assert!(norm(o) == norm(t), "object {i} differs from opm render's");
    }
}

#[test]
fn bad_flags_are_usage_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cat = write_catalog(dir.path());
    let cat = cat.to_string_lossy();
    let (code, _, err) = common::run_cli(&["serve", &cat, "--http", "nowhere"], &[], None);
    assert_eq!(code, 2);
    assert!(err.contains("--http nowhere"), "{err}");
    let (code, _, err) = common::run_cli(
        &["serve", &cat, "--http", ":0", "--catalog-name", "Not_Valid"],
        &[],
        None,
    );
    assert_eq!(code, 2);
    assert!(err.contains("invalid catalog name"), "{err}");
}

/// `--watch` reloads the HTTP content too (new objects, new Last-Modified),
/// and SIGTERM stops an HTTP-only server with exit code 0.
#[test]
fn watch_reloads_and_sigterm_stops() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cat = write_catalog(dir.path());
    let mut s = start(
        &cat,
        &[
            "--http",
            "127.0.0.1:0",
            "--watch",
            "--watch-interval",
            "100",
        ],
    );
    let before = curl(&format!("{}/api/v1/all", s.http), &[]);
    // Last-Modified has whole seconds: make the reload land in a later one.
    std::thread::sleep(Duration::from_millis(1100));
    std::fs::write(
        cat.join("b/zz.json"),
        "{\"schema\":\"example.note\",\"name\":\"later\"}\n",
    )
    .expect("write");
    let mut after = None;
    for _ in 0..300 {
        let a = curl(&format!("{}/api/v1/metas?name=later", s.http), &[]);
        if !a.body.is_empty() {
            after = Some(a);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let after =
        after.unwrap_or_else(|| panic!("not reloaded: {}", s.log.lock().expect("log").join("\n")));
    assert_eq!(
        after.text(),
        "{\"name\":\"later\",\"schema\":\"example.note\"}\n"
    );
    assert_ne!(
        after.header("Last-Modified"),
        before.header("Last-Modified")
    );
    // The old date is now stale: no 304 for it.
    let lm = before.header("Last-Modified").expect("Last-Modified");
    let a = curl(
        &format!("{}/api/v1/all", s.http),
        &["-H", &format!("If-Modified-Since: {lm}")],
    );
    assert_eq!(a.status, 200);

    let pid = s.child.id() as libc::pid_t;
    // SAFETY: signals the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let mut status = None;
    for _ in 0..600 {
        if let Some(st) = s.child.try_wait().expect("wait") {
            status = Some(st);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = status.expect("serve did not stop on SIGTERM");
    assert_eq!(status.code(), Some(0));
}

/// `serve IMAGE --http`: an index image (here an OCI layout) is unpacked and
/// its database served as its rendered FBC, the same objects the database
/// itself gives.
#[test]
fn image_catalog_is_served_over_http() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("index.db");
    let layout = format!("oci:{}:v1", tmp.path().join("layout").display());
    let bundles: Vec<_> = ["1.0.0", "1.0.1", "1.1.0"]
        .iter()
        .map(|v| common::fixtures().join("graph/pkg-semver").join(v))
        .collect();
    let o = Command::new(common::bin())
        .args(["index", "add", "--database"])
        .arg(&db)
        .args(["--mode", "semver"])
        .args(&bundles)
        .args(["--tag", &layout, "-q"])
        .output()
        .expect("index add");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let from_image = start(Path::new(&layout), &["--http", "127.0.0.1:0"]);
    assert!(from_image
        .log
        .lock()
        .expect("log")
        .iter()
        .any(|l| l.contains("unpacked the catalog of")));
    let from_db = start(&db, &["--http", "127.0.0.1:0"]);
    let a = curl(&format!("{}/api/v1/all", from_image.http), &[]);
    let b = curl(&format!("{}/api/v1/all", from_db.http), &[]);
    assert_eq!(a.status, 200);
    assert_eq!(a.text(), b.text());
    let pkgs = curl(
        &format!("{}/api/v1/metas?schema=olm.package", from_image.http),
        &[],
    );
    assert_eq!(pkgs.text().lines().count(), 1);
    assert!(pkgs.text().contains("\"name\":\"demo\""), "{}", pkgs.text());
}
