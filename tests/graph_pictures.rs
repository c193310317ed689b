//! Pictures of upgrade graphs (`graph render -o svg|html`), looked at in
//! headless Chromium: what the browser lays out, not only what we wrote.

use std::path::Path;

use crate::browser;
use crate::common::{self, run};

fn golden_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/graph_pictures")
}

fn render(dir: &Path, format: &str) -> String {
    let d = dir.to_string_lossy();
    let (code, out, err) = run(&["graph", "render", &d, "-o", format]);
    assert_eq!(code, 0, "graph render -o {format} {d}: {err}");
    out
}

/// The fixture package of the CRD checks: three bundles in one channel,
/// 0.2.0 -> 0.3.0 (replaces) and 0.1.0 -> 0.3.0 (skipRange) tighten a
/// maximum, which `graph check` reports. The fixture's CRDs serve versions
/// with different schemas and no conversion webhook, which OLM v1's
/// served-version check (crdify) finds on every edge; this copy converts
/// by webhook, as OLM v1 then skips that check, so 0.1.0 -> 0.2.0 is the
/// safe edge of the picture. Copied once per test process.
fn widget() -> std::path::PathBuf {
    static COPY: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    COPY.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("tmp");
        let src = common::fixtures().join("crd-safety/pkg");
        for entry in walkdir::WalkDir::new(&src) {
            let entry = entry.expect("walk fixture");
            let rel = entry.path().strip_prefix(&src).expect("under fixture");
            let dst = tmp.path().join("widget").join(rel);
            if entry.file_type().is_dir() {
                std::fs::create_dir_all(&dst).expect("mkdir");
                continue;
            }
            let mut text = std::fs::read_to_string(entry.path()).expect("read fixture");
            if rel.ends_with("widgets.crd.yaml") {
                text = text.replacen(
                    "\nspec:\n",
                    "\nspec:\n  conversion:\n    strategy: Webhook\n    webhook:\n      \
                     conversionReviewVersions: [v1]\n      clientConfig:\n        service: \
                     {name: widget-webhook, namespace: default, path: /convert}\n",
                    1,
                );
            }
            std::fs::write(&dst, text).expect("write copy");
        }
        tmp
    })
    .path()
    .join("widget")
}

/// The SVG of one package is byte for byte the committed golden file, and
/// the same on every run. `OLM_CATALOG_BLESS=1` rewrites the golden file
/// (review the picture before committing it).
#[test]
fn svg_of_the_widget_package_is_the_golden_file() {
    let svg = render(&widget(), "svg");
    assert_eq!(svg, render(&widget(), "svg"), "same input, same bytes");
    let golden = golden_dir().join("widget.svg");
    if std::env::var_os("OLM_CATALOG_BLESS").is_some() {
        std::fs::write(&golden, &svg).expect("bless");
    }
    let want = std::fs::read_to_string(&golden).expect("golden svg");
    assert!(svg == want, "SVG differs from {}:\n{svg}", golden.display());
}

/// Chromium draws every bundle of the package, the unsafe edges red with
/// the rule in their tooltip, the safe one not, and logs nothing.
#[test]
fn chromium_draws_every_bundle_and_the_unsafe_edges_red() {
    let tmp = tempfile::tempdir().expect("tmp");
    let svg_file = tmp.path().join("widget.svg");
    std::fs::write(&svg_file, render(&widget(), "svg")).expect("write svg");
    // The SVG alone, as a browser opens the file.
    let page = browser::load(&browser::file_url(&svg_file));
    assert!(page.console.is_empty(), "console: {:?}", page.console);
    for b in ["widget.v0.1.0", "widget.v0.2.0", "widget.v0.3.0"] {
        assert!(
            page.dom.contains(&format!("data-bundle=\"{b}\"")),
            "{b} missing"
        );
    }
    let console = browser::screenshot(
        &browser::file_url(&svg_file),
        &tmp.path().join("widget.png"),
        800,
        240,
    );
    assert!(console.is_empty(), "console: {console:?}");
    // The HTML page, measured in the browser.
    let (probe, console) = browser::probe(&render(&widget(), "html"), tmp.path());
    assert!(console.is_empty(), "console: {console:?}");
    let bundles = probe["bundles"].as_array().expect("bundles");
    let names: Vec<&str> = bundles.iter().filter_map(|b| b["name"].as_str()).collect();
    assert_eq!(names, ["widget.v0.1.0", "widget.v0.2.0", "widget.v0.3.0"]);
    for b in bundles {
        let w = b["box"][2].as_i64().unwrap_or(0);
        assert!(w > 20, "bundle drawn with no width: {b}");
    }
    assert!(bundles[2]["cls"].as_str().unwrap_or("").contains("head"));
    let red = "rgb(208, 2, 27)";
    let edges = probe["edges"].as_array().expect("edges");
    let edge = |from: &str, to: &str| {
        edges
            .iter()
            .find(|e| e["from"] == from && e["to"] == to)
            .unwrap_or_else(|| panic!("no edge {from} -> {to}: {edges:?}"))
    };
    let unsafe_replaces = edge("widget.v0.2.0", "widget.v0.3.0");
    assert_eq!(unsafe_replaces["stroke"], red);
    let title = unsafe_replaces["title"].as_str().unwrap_or("");
    assert!(
        title.contains("crd-upgrade-maximum-tightened")
            && title.contains("maximum decreased from 20 to 8"),
        "{title}"
    );
    let unsafe_range = edge("widget.v0.1.0", "widget.v0.3.0");
    assert_eq!(unsafe_range["stroke"], red);
    assert!(unsafe_range["cls"]
        .as_str()
        .unwrap_or("")
        .contains("skipRange"));
    let safe = edge("widget.v0.1.0", "widget.v0.2.0");
    assert_ne!(
        safe["stroke"], red,
        "0.1.0 -> 0.2.0 changes no CRD unsafely"
    );
}

/// A corpus package with 41 bundles in 6 channels: every bundle is drawn,
/// in its channel's lane, and no two bundle boxes overlap on screen.
#[test]
fn a_large_package_is_drawn_without_overlaps() {
    let dir = common::corpus().join("operators/aqua");
    let tmp = tempfile::tempdir().expect("tmp");
    let (probe, console) = browser::probe(&render(&dir, "html"), tmp.path());
    assert!(console.is_empty(), "console: {console:?}");
    let json = render(&dir, "json");
    let graphs: serde_json::Value = serde_json::from_str(&json).expect("json");
    let bundles = probe["bundles"].as_array().expect("bundles");
    let mut want = 0;
    for ch in graphs[0]["channels"].as_array().expect("channels") {
        let cname = ch["name"].as_str().unwrap_or("");
        for e in ch["entries"].as_array().expect("entries") {
            want += 1;
            let name = e["name"].as_str().unwrap_or("");
            assert!(
                bundles
                    .iter()
                    .any(|b| b["name"] == name && b["channel"] == cname),
                "{name} of channel {cname} not drawn"
            );
        }
    }
    assert!(want >= 40, "aqua has {want} entries");
    let boxes: Vec<[i64; 4]> = bundles
        .iter()
        .map(|b| {
            let v: Vec<i64> = (0..4).map(|i| b["box"][i].as_i64().unwrap_or(0)).collect();
            [v[0], v[1], v[2], v[3]]
        })
        .collect();
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            let apart = a[0] + a[2] <= b[0]
                || b[0] + b[2] <= a[0]
                || a[1] + a[3] <= b[1]
                || b[1] + b[3] <= a[1];
            assert!(apart, "bundle boxes overlap: {a:?} {b:?}");
        }
    }
}

/// `graph check -o html`: one page, each package's picture beside its
/// findings; a package that cannot be read has its finding and no picture.
#[test]
fn check_report_page_shows_each_package_beside_its_findings() {
    let tmp = tempfile::tempdir().expect("tmp");
    let missing = tmp.path().join("empty-pkg");
    std::fs::create_dir(&missing).expect("mkdir");
    let w = widget();
    let (code, page, err) = run(&[
        "graph",
        "check",
        "-o",
        "html",
        &w.to_string_lossy(),
        &missing.to_string_lossy(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    let html_file = tmp.path().join("report.html");
    std::fs::write(&html_file, &page).expect("write");
    let console = browser::screenshot(
        &browser::file_url(&html_file),
        &tmp.path().join("report.png"),
        1000,
        700,
    );
    assert!(console.is_empty(), "console: {console:?}");
    let dom = browser::load(&browser::file_url(&html_file)).dom;
    // Two sections; the widget's picture and its CRD findings beside it.
    assert_eq!(
        dom.matches("<section class=\"package\"").count(),
        2,
        "{dom}"
    );
    let widget_section =
        &dom[dom.find("id=\"s0\"").expect("s0")..dom.find("id=\"s1\"").expect("s1")];
    assert!(widget_section.contains("<svg"));
    assert!(widget_section.contains("crd-upgrade-maximum-tightened"));
    assert!(widget_section.contains("<div class=\"rule-findings error\">"));
    let empty_section = &dom[dom.find("id=\"s1\"").expect("s1")..];
    assert!(!empty_section.contains("<svg"));
    assert!(empty_section.contains("graph-package-unreadable"));
    let (probe, console) = browser::probe(&page, tmp.path());
    assert!(console.is_empty(), "console: {console:?}");
    assert_eq!(probe["svgs"], 1);
    let red: Vec<_> = probe["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .filter(|e| e["stroke"] == "rgb(208, 2, 27)")
        .map(|e| {
            (
                e["from"].as_str().unwrap_or(""),
                e["to"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        red,
        [
            ("widget.v0.1.0", "widget.v0.3.0"),
            ("widget.v0.2.0", "widget.v0.3.0")
        ]
    );
    // The same findings as the JSON report.
    let (_, json, _) = run(&["graph", "check", "-o", "json", &w.to_string_lossy()]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let n = v["reports"][0]["findings"]
        .as_array()
        .map_or(0, |a| a.len());
    assert!(n > 0);
    assert_eq!(listed(widget_section), n, "{json}");
}

/// How many findings a `graph check -o html` page (or part of one) lists:
/// the package's own, each an `li.finding`, and its edges', each an item
/// of a `ul.items` (its place and rule said above it).
fn listed(html: &str) -> usize {
    let own = html.matches("<li class=\"finding").count();
    let of_edges: usize = html
        .split("<ul class=\"items\">")
        .skip(1)
        .map(|list| {
            list[..list.find("</ul>").unwrap_or(list.len())]
                .matches("<li>")
                .count()
        })
        .sum();
    own + of_edges
}

/// `serve CATALOG --http ADDR` running on a free loopback port; killed on drop.
struct Served {
    child: std::process::Child,
    base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(catalog: &Path) -> Served {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new(common::bin())
        .arg("serve")
        .arg(catalog)
        .args(["--address", "127.0.0.1", "--http", "127.0.0.1:0"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start serve");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    let addr = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(rest) = line.strip_prefix("serving catalogd HTTP API on ") {
                    break rest.split_whitespace().next().unwrap_or("").to_string();
                }
                seen.push(line);
            }
            _ => panic!("serve did not start: {}", seen.join("\n")),
        }
    };
    // Keep reading stderr so that the server never blocks on it.
    std::thread::spawn(move || for _ in lines {});
    Served {
        child,
        base: format!("http://{addr}"),
    }
}

/// The pages of `serve --http` in Chromium: `/` lists every package with
/// its icon, a package page holds the graph (every bundle of the package)
/// and each bundle's details; nothing is fetched from elsewhere and the
/// browser logs nothing.
#[test]
fn served_pages_list_the_packages_and_draw_each_graph() {
    let catalog = common::corpus().join("catalogs/v4.18");
    let s = serve(&catalog);
    let tmp = tempfile::tempdir().expect("tmp");
    let index = browser::load(&format!("{}/", s.base));
    assert!(index.console.is_empty(), "console: {:?}", index.console);
    let pkgs: Vec<String> = std::fs::read_dir(&catalog)
        .expect("catalog")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(pkgs.len() >= 5);
    for p in &pkgs {
        assert!(
            index
                .dom
                .contains(&format!("<a href=\"/packages/{p}\">{p}</a>")),
            "{p} not listed"
        );
    }
    assert!(index
        .dom
        .contains("<img class=\"icon\" alt=\"\" src=\"data:image/"));
    for url in ["src=\"http", "href=\"http", "<script"] {
        assert!(!index.dom.contains(url), "{url} in the index page");
    }
    // kube-green: its page in the browser.
    let url = format!("{}/packages/kube-green", s.base);
    let console = browser::screenshot(&url, &tmp.path().join("kube-green.png"), 1200, 900);
    assert!(console.is_empty(), "console: {console:?}");
    let page = browser::load(&url);
    assert!(page.console.is_empty(), "console: {:?}", page.console);
    let dom = &page.dom;
    let graph = &dom[dom.find("<div class=\"graph\">").expect("the graph")..];
    let graph = &graph[..graph.find("</svg>").expect("svg end")];
    let cfg = olm_catalog::fbc::DeclarativeConfig::load_path(&catalog.join("kube-green"))
        .expect("kube-green catalog");
    assert!(!cfg.bundles.is_empty());
    for b in &cfg.bundles {
        assert!(
            graph.contains(&format!("data-bundle=\"{}\"", b.name)),
            "{} not in the graph",
            b.name
        );
        assert!(
            dom.contains(&format!(
                "<section class=\"bundle\" id=\"bundle-{}\"",
                b.name
            )),
            "{} has no details",
            b.name
        );
    }
    // The CSV description, rendered from Markdown.
    assert!(
        dom.contains("<summary>Description</summary><div class=\"description\"><"),
        "no description"
    );
    assert!(dom.contains("<summary>Related images</summary>"));
    assert!(!dom.contains("<script"));
    // An unknown package is a 404 (the API paths: tests/serve_http.rs).
    let missing = browser::load(&format!("{}/packages/no-such-package", s.base));
    assert!(
        missing.dom.contains("404 page not found"),
        "{}",
        missing.dom
    );
}

/// Channels in [`wide_package`], and CRD fields its upgrade removes.
const WIDE_CHANNELS: usize = 40;
const WIDE_FIELDS: usize = 400;

/// A package made at run time whose one upgrade (0.1.0 -> 0.2.0, in
/// [`WIDE_CHANNELS`] channels) removes [`WIDE_FIELDS`] CRD fields: one
/// edge with hundreds of findings, drawn in every lane (what strimzi's 38
/// channels did with its 1689 findings of one edge: a 20 MB picture).
fn wide_package(root: &Path) -> std::path::PathBuf {
    let pkg = root.join("wide");
    let channels: Vec<String> = (0..WIDE_CHANNELS).map(|i| format!("c{i:02}")).collect();
    for (version, fields, replaces) in [
        ("0.1.0", WIDE_FIELDS, None),
        ("0.2.0", 0, Some("wide.v0.1.0")),
    ] {
        let properties: String = (0..fields)
            .map(|i| format!("              removedfield{i:04}:\n                type: string\n"))
            .collect();
        write_crd_bundle(
            &pkg.join(version),
            "wide",
            &channels,
            version,
            replaces,
            &format!(
                "  - name: v1\n    served: true\n    storage: true\n    schema:\n      \
                 openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            \
                 type: object\n            properties:\n              kept:\n                type: string\n{properties}"
            ),
        );
    }
    pkg
}

/// Writes a bundle directory of `package` at `version` in `channels` (the
/// first the default), whose CSV replaces `replaces` and whose CRD
/// `gadgets.example.com` has `crd_versions` (the YAML list under
/// `spec.versions`).
fn write_crd_bundle(
    dir: &Path,
    package: &str,
    channels: &[String],
    version: &str,
    replaces: Option<&str>,
    crd_versions: &str,
) {
    std::fs::create_dir_all(dir.join("manifests")).expect("mkdir");
    std::fs::create_dir_all(dir.join("metadata")).expect("mkdir");
    std::fs::write(
        dir.join("metadata/annotations.yaml"),
        format!(
            "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  \
             operators.operatorframework.io.bundle.manifests.v1: manifests/\n  \
             operators.operatorframework.io.bundle.metadata.v1: metadata/\n  \
             operators.operatorframework.io.bundle.package.v1: {package}\n  \
             operators.operatorframework.io.bundle.channels.v1: {}\n  \
             operators.operatorframework.io.bundle.channel.default.v1: {}\n",
            channels.join(","),
            channels[0]
        ),
    )
    .expect("annotations");
    let replaces = replaces.map_or(String::new(), |r| format!("  replaces: {r}\n"));
    std::fs::write(
        dir.join(format!("manifests/{package}.clusterserviceversion.yaml")),
        format!(
            "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n\
             metadata:\n  name: {package}.v{version}\nspec:\n  version: {version}\n  \
             displayName: {package}\n{replaces}"
        ),
    )
    .expect("csv");
    std::fs::write(
        dir.join("manifests/gadgets.crd.yaml"),
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
             metadata:\n  name: gadgets.example.com\nspec:\n  group: example.com\n  \
             names:\n    kind: Gadget\n    listKind: GadgetList\n    plural: gadgets\n    \
             singular: gadget\n  scope: Namespaced\n  versions:\n{crd_versions}"
        ),
    )
    .expect("crd");
}

/// An edge with hundreds of findings, drawn in forty lanes: the picture
/// stays small (its tooltip gives the count and the first findings), and
/// `graph check -o html` lists every finding once, under the edge.
#[test]
fn an_edge_with_many_findings_in_many_channels_stays_small() {
    const MIB: usize = 1 << 20;
    let tmp = tempfile::tempdir().expect("tmp");
    let pkg = wide_package(tmp.path());
    let p = pkg.to_string_lossy();
    let (code, json, err) = run(&["graph", "check", "-o", "json", &p]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let findings = v["reports"][0]["findings"].as_array().expect("findings");
    let removed = |f: &&serde_json::Value| f["rule"] == "crd-upgrade-field-removed";
    assert_eq!(
        findings.iter().filter(removed).count(),
        WIDE_FIELDS,
        "{json}"
    );

    let svg = render(&pkg, "svg");
    assert!(svg.len() <= MIB / 4, "the SVG is {} bytes", svg.len());
    let unsafe_edges: Vec<&str> = svg
        .split("<path class=\"edge replaces unsafe\"")
        .skip(1)
        .collect();
    assert_eq!(unsafe_edges.len(), WIDE_CHANNELS, "one red edge a lane");
    let title = &unsafe_edges[0][unsafe_edges[0].find("<title>").expect("title")..];
    let title = &title[..title.find("</title>").expect("title end")];
    assert!(
        title.contains(&format!("{WIDE_FIELDS} findings")),
        "{title}"
    );
    for i in 0..3 {
        assert!(
            title.contains(&format!("crd-upgrade-field-removed: CRD gadgets.example.com: version v1: field ^.spec.removedfield{i:04}")),
            "finding {i} not in {title}"
        );
    }
    assert!(!title.contains("removedfield0003"), "{title}");
    assert!(
        title.contains(&format!("and {} more", WIDE_FIELDS - 3)),
        "{title}"
    );
    assert!(
        !title.contains("channels c00"),
        "the edge named once: {title}"
    );

    let (code, page, err) = run(&["graph", "check", "-o", "html", &p]);
    assert_eq!(code, 1, "{err}");
    assert!(page.len() <= MIB / 4, "the page is {} bytes", page.len());
    let list = &page[page.find("<div class=\"findings\">").expect("findings")..];
    assert_eq!(
        list.matches("<h3 class=\"edge-findings\" id=").count(),
        1,
        "one list for the edge"
    );
    assert!(list.contains(&format!(
        "channels {}: upgrade wide.v0.1.0 -&gt; wide.v0.2.0 (replaces): {} findings",
        (0..WIDE_CHANNELS)
            .map(|i| format!("c{i:02}"))
            .collect::<Vec<_>>()
            .join(", "),
        findings.len()
    )));
    for i in 0..WIDE_FIELDS {
        assert_eq!(
            list.matches(&format!("field ^.spec.removedfield{i:04} "))
                .count(),
            1,
            "removedfield{i:04} listed once"
        );
    }
    assert_eq!(listed(list), findings.len());

    // It reads well: the browser draws it and logs nothing.
    let html_file = tmp.path().join("wide.html");
    std::fs::write(&html_file, &page).expect("write");
    let console = browser::screenshot(
        &browser::file_url(&html_file),
        &tmp.path().join("wide.png"),
        1200,
        900,
    );
    assert!(console.is_empty(), "console: {console:?}");
}

/// The package [`strimzi_shaped`] makes: its name, bundles and channels
/// (strimzi-kafka-operator's 60 bundles and 38 channels: `stable` and one
/// channel per late minor version, each holding every bundle up to it).
const SHAPED: &str = "shaped-cluster-operator-for-kafka";
const SHAPED_BUNDLES: usize = 60;
const SHAPED_CHANNELS: usize = 38;
/// Every this many bundles the CRD breaks; each break touches this many
/// fields: a third removed, a third with a lower maximum, a third turned
/// from integer into string.
const SHAPED_EVERY: usize = 5;
const SHAPED_FIELDS: usize = 60;
/// From this bundle on, the CRD also serves v2, every field a string,
/// without a conversion webhook.
const SHAPED_SERVED_FROM: usize = 50;

/// A package made at run time in the shape of strimzi-kafka-operator, the
/// largest picture of community-operators-prod: 60 bundles in 38 channels
/// (a lane for each, ~40 bundles a lane), a replaces chain in which every
/// [`SHAPED_EVERY`]th upgrade changes the CRD unsafely (findings of four
/// rules, most sharing one long help; 1,480 in all, the served-version
/// ones at one upgrade), each unsafe edge drawn in up to 38 lanes. Before
/// the pictures and pages were made smaller, its SVG, `graph check -o html`
/// page and `serve --http` package page were 1.23, 1.76 and 1.16 MB.
fn strimzi_shaped(root: &Path) -> std::path::PathBuf {
    let pkg = root.join(SHAPED);
    let first = SHAPED_BUNDLES + 2 - SHAPED_CHANNELS;
    // Field -> (type, maximum) of bundle i's CRD (version v1).
    let schema = |i: usize| {
        let e = i / SHAPED_EVERY;
        let mut props = std::collections::BTreeMap::new();
        for j in 0..SHAPED_FIELDS {
            props.insert(format!("batch{e:02}field{j:03}"), ("integer", Some(100)));
            if e > 0 {
                let kept = match j % 3 {
                    0 => None,
                    1 => Some(("integer", Some(50))),
                    _ => Some(("string", None)),
                };
                if let Some(k) = kept {
                    props.insert(format!("batch{:02}field{j:03}", e - 1), k);
                }
            }
        }
        props
    };
    let version = |name: &str, storage: bool, props: &[(String, (&str, Option<i32>))]| {
        let mut v = format!(
            "  - name: {name}\n    served: true\n    storage: {storage}\n    schema:\n      \
             openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            \
             type: object\n            properties:\n"
        );
        for (field, (ty, max)) in props {
            v.push_str(&format!(
                "              {field}:\n                type: {ty}\n"
            ));
            if let Some(m) = max {
                v.push_str(&format!("                maximum: {m}\n"));
            }
        }
        v
    };
    for i in 1..=SHAPED_BUNDLES {
        let mut channels = vec!["stable".to_string()];
        channels.extend((i.max(first)..=SHAPED_BUNDLES).map(|k| format!("shaped-0.{k}.x")));
        let replaces = (i > 1).then(|| format!("{SHAPED}.v0.{}.0", i - 1));
        let v1: Vec<_> = schema(i).into_iter().collect();
        let mut versions = version("v1", true, &v1);
        if i >= SHAPED_SERVED_FROM {
            let v2: Vec<_> = v1
                .iter()
                .map(|(f, _)| (f.clone(), ("string", None)))
                .collect();
            versions.push_str(&version("v2", false, &v2));
        }
        write_crd_bundle(
            &pkg.join(format!("0.{i}.0")),
            SHAPED,
            &channels,
            &format!("0.{i}.0"),
            replaces.as_deref(),
            &versions,
        );
    }
    pkg
}

/// The findings a `graph check -o html` page lists under its edges, as
/// the browser reads them: for each item, its edge's heading, its rule
/// group's level, rule and help, its place (file and scope) and its text;
/// and for each red edge of the picture, its ends, its tooltip and the
/// text of what it links to.
const LISTED: &str = r#"
  var out = { items: [], links: [] };
  document.querySelectorAll('ul.items > li').forEach(function (li) {
    var place = li.parentElement.closest('li.place');
    var group = place.closest('div.rule-findings');
    var h = group.previousElementSibling;
    while (h && h.tagName !== 'H3') { h = h.previousElementSibling; }
    var p = group.querySelector('p');
    var help = p.querySelector('span.muted');
    var where = Array.prototype.filter.call(place.childNodes, function (n) { return n.nodeName !== 'UL'; })
      .map(function (n) { return n.textContent; }).join('');
    out.items.push({ edge: h ? h.textContent : '', level: p.querySelector('strong').textContent,
      rule: p.querySelector('code').textContent, hint: help ? help.textContent.replace(/^help: /, '') : null,
      place: where, item: li.textContent, color: getComputedStyle(li).color });
  });
  document.querySelectorAll('path.edge.unsafe').forEach(function (e) {
    var a = e.closest('a');
    var target = a ? document.getElementById(a.getAttribute('href').slice(1)) : null;
    out.links.push({ from: e.getAttribute('data-from'), to: e.getAttribute('data-to'),
      title: e.querySelector('title').textContent, target: target ? target.textContent : null });
  });
  return out;
"#;

/// A finding as (level, rule, message, file, line, column, hint).
type Listed = (String, String, String, String, u64, u64, String);

/// What [`LISTED`] read, each item as the finding it stands for: its
/// message is its edge's label, the scope of its place and its text.
fn listed_findings(items: &[serde_json::Value]) -> Vec<Listed> {
    let s = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
    let mut out: Vec<Listed> = items
        .iter()
        .map(|it| {
            let edge = s(&it["edge"]);
            let (label, _count) = edge.rsplit_once(": ").expect("heading LABEL: N findings");
            let place = s(&it["place"]);
            let place = place
                .strip_prefix("in ")
                .and_then(|p| p.strip_suffix(':'))
                .unwrap_or_else(|| panic!("place {place:?}"));
            let (file, scope) = place.split_once(", ").unwrap_or((place, ""));
            let item = s(&it["item"]);
            let (at, rest) = item.split_once(": ").expect("LINE:COLUMN: text");
            let (line, column) = at.split_once(':').expect("LINE:COLUMN");
            let message = if scope.is_empty() {
                format!("{label}: {rest}")
            } else {
                format!("{label}: {scope}: {rest}")
            };
            (
                s(&it["level"]),
                s(&it["rule"]),
                message,
                file.to_string(),
                line.parse().expect("line"),
                column.parse().expect("column"),
                s(&it["hint"]),
            )
        })
        .collect();
    out.sort();
    out
}

/// `curl URL`: the body, as served.
fn http_get(url: &str) -> Vec<u8> {
    let out = std::process::Command::new("curl")
        .args(["-sSf", "--max-time", "60", url])
        .output()
        .expect("run curl (apt-get install curl)");
    assert!(
        out.status.success(),
        "curl {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// strimzi-kafka-operator's shape ([`strimzi_shaped`]): the SVG, the
/// `graph check -o html` page and the package page of `serve --http` stay
/// under 1 MiB each, with nothing lost: the SVG's red edges give the count
/// and first findings, the page lists each finding once (level, rule,
/// message, file:line:column and help, read back from the browser's DOM
/// and compared with the JSON report) and each red edge of its picture
/// links to its edge's list.
#[test]
fn a_strimzi_shaped_package_stays_under_a_mebibyte_in_every_picture_and_page() {
    const MIB: usize = 1 << 20;
    let tmp = tempfile::tempdir().expect("tmp");
    let pkg = strimzi_shaped(tmp.path());
    let p = pkg.to_string_lossy();
    let (code, json, err) = run(&["graph", "check", "-o", "json", &p]);
    assert_eq!(code, 1, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    let findings = v["reports"][0]["findings"].as_array().expect("findings");
    let rules: std::collections::BTreeSet<&str> =
        findings.iter().filter_map(|f| f["rule"].as_str()).collect();
    assert_eq!(
        rules.into_iter().collect::<Vec<_>>(),
        [
            "crd-served-version-incompatible",
            "crd-upgrade-field-removed",
            "crd-upgrade-maximum-tightened",
            "crd-upgrade-type-changed"
        ]
    );
    assert!(findings.len() > 1000, "{} findings", findings.len());

    // The picture: every red edge's tooltip gives the count and the
    // first findings.
    let svg = render(&pkg, "svg");
    assert!(svg.len() <= MIB, "the SVG is {} bytes", svg.len());
    let red: Vec<&str> = svg
        .split("<path class=\"edge replaces unsafe\"")
        .skip(1)
        .collect();
    assert!(red.len() > 200, "{} red edges", red.len());
    for e in &red {
        let title = &e[e.find("<title>").expect("title")..e.find("</title>").expect("end")];
        assert!(title.contains(" findings\ncrd-"), "{title}");
    }

    // graph check's page: every finding once, with all it says.
    let (code, page, err) = run(&["graph", "check", "-o", "html", &p]);
    assert_eq!(code, 1, "{err}");
    assert!(page.len() <= MIB, "the page is {} bytes", page.len());
    let groups = page.matches("<div class=\"rule-findings ").count();
    let hints: std::collections::BTreeSet<&str> =
        findings.iter().filter_map(|f| f["hint"].as_str()).collect();
    let said: usize = hints.iter().map(|h| page.matches(h).count()).sum();
    assert_eq!(said, groups, "each help said once, by its rule's group");
    let (dom, console) = browser::evaluate(&page, tmp.path(), LISTED);
    assert!(console.is_empty(), "console: {console:?}");
    let items = dom["items"].as_array().expect("items");
    let root = format!("{p}/");
    let mut want: Vec<Listed> = findings
        .iter()
        .map(|f| {
            let s = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
            let file = s(&f["location"]["file"]);
            (
                s(&f["level"]),
                s(&f["rule"]),
                s(&f["message"]),
                file.strip_prefix(&root).unwrap_or(&file).to_string(),
                f["location"]["line"].as_u64().unwrap_or(0),
                f["location"]["column"].as_u64().unwrap_or(0),
                s(&f["hint"]),
            )
        })
        .collect();
    want.sort();
    let got = listed_findings(items);
    assert_eq!(got.len(), want.len(), "one item a finding");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
    assert!(
        items.iter().all(|i| i["color"] == "rgb(165, 29, 45)"),
        "errors in red"
    );
    let links = dom["links"].as_array().expect("links");
    assert_eq!(links.len(), red.len(), "the page draws the same red edges");
    for l in links {
        let (from, to) = (
            l["from"].as_str().unwrap_or(""),
            l["to"].as_str().unwrap_or(""),
        );
        let target = l["target"].as_str().unwrap_or("");
        assert!(
            target.contains(&format!("upgrade {from} -> {to} (replaces): ")),
            "{from} -> {to} links to {target:?}"
        );
        let title = l["title"].as_str().unwrap_or("");
        assert!(title.contains(" findings\ncrd-"), "{title}");
    }

    // serve --http: the package page of an index of it.
    let db = tmp.path().join("index.db");
    let (code, _, err) = run(&["index", "add", "-d", &db.to_string_lossy(), &p]);
    assert_eq!(code, 0, "{err}");
    let s = serve(&db);
    let served = http_get(&format!("{}/packages/{SHAPED}", s.base));
    assert!(
        served.len() <= MIB,
        "the package page is {} bytes",
        served.len()
    );
    let served = String::from_utf8_lossy(&served);
    for i in 1..=SHAPED_BUNDLES {
        assert!(
            served.contains(&format!("data-bundle=\"{SHAPED}.v0.{i}.0\"")),
            "bundle {i} not drawn"
        );
    }
    assert_eq!(
        served.matches("<g class=\"lane").count(),
        SHAPED_CHANNELS,
        "a lane a channel"
    );
}
