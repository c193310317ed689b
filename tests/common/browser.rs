//! Headless Chromium for the tests of pictures and pages: load a file or
//! URL, read back the DOM it built, take a screenshot, and collect what the
//! page logged to its console. Chromium is installed by
//! scripts/install-test-deps.sh (Debian's `chromium`); missing, the test
//! fails: nothing is skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Chromium binary: `OLM_CATALOG_CHROMIUM`, else `chromium` or
/// `chromium-browser` on PATH.
pub fn chromium() -> PathBuf {
    if let Ok(p) = std::env::var("OLM_CATALOG_CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "chromium not found on PATH: run scripts/install-test-deps.sh (Debian's chromium), \
         or set OLM_CATALOG_CHROMIUM"
    );
}

/// What a page became in the browser.
pub struct Page {
    /// The DOM after loading (and after the page's scripts ran), serialised.
    pub dom: String,
    /// What the page wrote to its console, errors included (uncaught
    /// exceptions, console.error): one line each.
    pub console: Vec<String>,
}

fn run(args: &[&str]) -> (String, String) {
    let profile = tempfile::tempdir().expect("profile dir");
    // Output goes to files, not pipes: Chromium's helper processes may keep
    // a pipe open after the browser exits, and reading it to its end would
    // wait for them.
    let out_file = profile.path().join("stdout");
    let err_file = profile.path().join("stderr");
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--disable-extensions",
            "--disable-background-networking",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!(
            "--user-data-dir={}",
            profile.path().join("p").display()
        ))
        .args(args)
        .stdout(std::fs::File::create(&out_file).expect("stdout file"))
        .stderr(std::fs::File::create(&err_file).expect("stderr file"))
        .spawn()
        .expect("run chromium");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait chromium") {
            break st;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} did not finish in 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let stdout = std::fs::read_to_string(&out_file).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_file).unwrap_or_default();
    assert!(
        status.success(),
        "chromium {args:?} failed: {status}\n{stderr}"
    );
    (stdout, stderr)
}

/// The console lines of chromium's log (`...:INFO:CONSOLE...] "message", source: ...`).
fn console_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect()
}

/// A `file://` URL for `path`.
pub fn file_url(path: &Path) -> String {
    let abs = std::fs::canonicalize(path).expect("canonical path");
    format!("file://{}", abs.display())
}

/// Loads `url` and returns its DOM and console.
pub fn load(url: &str) -> Page {
    let (dom, log) = run(&["--dump-dom", url]);
    Page {
        dom,
        console: console_lines(&log),
    }
}

/// Takes a `width`x`height` screenshot of `url` into `png`; returns the
/// console lines of that load.
pub fn screenshot(url: &str, png: &Path, width: u32, height: u32) -> Vec<String> {
    let (_, log) = run(&[
        &format!("--screenshot={}", png.display()),
        &format!("--window-size={width},{height}"),
        url,
    ]);
    let bytes = std::fs::read(png).expect("screenshot written");
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 1000,
        "{} is not a PNG of a drawn page ({} bytes)",
        png.display(),
        bytes.len()
    );
    console_lines(&log)
}

/// What [`probe`] measures, the body of a JavaScript function returning
/// it: for each `g.bundle`, its `data-bundle`, its lane's `data-channel`
/// and its box on screen; for each `path.edge`, its ends, classes,
/// computed stroke colour and `<title>`; whether each `img` loaded; the
/// number of `svg` elements.
const PROBE: &str = r#"
  function box(e) { var r = e.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)]; }
  var out = { bundles: [], edges: [], images: [], svgs: document.querySelectorAll('svg').length };
  document.querySelectorAll('g.bundle').forEach(function (g) {
    var lane = g.closest('g.lane');
    out.bundles.push({ name: g.getAttribute('data-bundle'), channel: lane ? lane.getAttribute('data-channel') : null, cls: g.getAttribute('class'), box: box(g.querySelector('rect')) });
  });
  document.querySelectorAll('path.edge').forEach(function (p) {
    var t = p.querySelector('title');
    out.edges.push({ from: p.getAttribute('data-from'), to: p.getAttribute('data-to'), cls: p.getAttribute('class'), stroke: getComputedStyle(p).stroke, title: t ? t.textContent : '' });
  });
  document.querySelectorAll('img').forEach(function (i) { out.images.push({ src: i.getAttribute('src').slice(0, 40), loaded: i.complete && i.naturalWidth > 0 }); });
  return out;
"#;

/// Loads the HTML page `html` (written to `dir`) with [`PROBE`] appended
/// and returns what it measured, and the page's console.
pub fn probe(html: &str, dir: &Path) -> (serde_json::Value, Vec<String>) {
    evaluate(html, dir, PROBE)
}

/// Loads the HTML page `html` (written to `dir`) with a script appended
/// that runs `body`, the body of a JavaScript function, once the page is
/// laid out, and returns what it returned (as JSON, through base64 in a
/// `<pre id="probe">` of the DOM) and the page's console.
pub fn evaluate(html: &str, dir: &Path, body: &str) -> (serde_json::Value, Vec<String>) {
    let script = format!(
        "<script>\n(function () {{\n  var out = (function () {{{body}}})();\n  \
         var pre = document.createElement('pre');\n  pre.id = 'probe';\n  \
         pre.textContent = btoa(unescape(encodeURIComponent(JSON.stringify(out))));\n  \
         document.body.appendChild(pre);\n}})();\n</script>"
    );
    let page = match html.rfind("</body>") {
        Some(i) => format!("{}{script}{}", &html[..i], &html[i..]),
        None => format!("{html}{script}"),
    };
    let file = dir.join("probe.html");
    std::fs::write(&file, page).expect("write probe page");
    let p = load(&file_url(&file));
    let start = p.dom.find("<pre id=\"probe\">").expect("probe ran") + "<pre id=\"probe\">".len();
    let end = start + p.dom[start..].find("</pre>").expect("probe end");
    use base64::Engine as _;
    let json = base64::engine::general_purpose::STANDARD
        .decode(p.dom[start..end].trim())
        .expect("probe base64");
    (
        serde_json::from_slice(&json).expect("probe json"),
        p.console,
    )
}
