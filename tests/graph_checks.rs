//! Graph checks, modes, templates and the `graph` commands on small
//! hand-written fixtures (fixtures/graph).
use crate::common;

use std::collections::BTreeMap;

use olm_catalog::fbc::DeclarativeConfig;
use olm_catalog::graph::{checks, load, path, template, BundleInfo, PackageGraph};

fn rules_graphs() -> BTreeMap<String, PackageGraph> {
    let p = common::fixtures().join("graph/rules.yaml");
    let cfg = DeclarativeConfig::load_path(&p).expect("fixture parses");
    PackageGraph::from_fbc(&cfg, &p)
        .into_iter()
        .map(|g| (g.package.clone(), g))
        .collect()
}

fn rules_of(g: &PackageGraph) -> Vec<String> {
    let mut r: Vec<String> = checks::check(g).into_iter().map(|f| f.rule).collect();
    r.sort();
    r.dedup();
    r
}

#[test]
fn each_rule_fires_on_its_fixture_package() {
    let gs = rules_graphs();
    let expect: &[(&str, &[&str])] = &[
        ("heads", &["graph-multiple-heads"]),
        ("cycle", &["graph-cycle", "graph-downgrade-edge"]),
        (
            "missing",
            &["graph-replaces-missing", "graph-skips-missing"],
        ),
        (
            "island",
            &[
                "graph-cycle",
                "graph-downgrade-edge",
                "graph-stranded-bundle",
            ],
        ),
        ("downgrade", &["graph-downgrade-edge"]),
        (
            "ranges",
            &[
                "graph-skiprange-admits-self",
                "graph-skiprange-invalid",
                "graph-skiprange-unsatisfiable",
            ],
        ),
        ("nodefault", &["graph-default-channel-missing"]),
        ("emptydefault", &["graph-default-channel-empty"]),
    ];
    for (pkg, rules) in expect {
        let got = rules_of(&gs[*pkg]);
        assert_eq!(
            got,
            rules.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
            "{pkg}"
        );
    }
    // Every rule id is documented for SARIF.
    for g in gs.values() {
        for f in checks::check(g) {
            assert!(checks::rule_help(&f.rule).is_some(), "{}", f.rule);
        }
    }
}

#[test]
fn multiple_heads_lists_the_other_head_as_related() {
    let gs = rules_graphs();
    let f = checks::check(&gs["heads"])
        .into_iter()
        .next()
        .expect("finding");
    assert!(
        f.message.contains("heads.v1.0.0, heads.v2.0.0"),
        "{}",
        f.message
    );
    assert!(f.location.is_some());
    assert_eq!(f.related.len(), 1);
}

#[test]
fn substitutes_for_cycles_are_found() {
    let mut gs = rules_graphs();
    let mut g = gs.remove("downgrade").expect("pkg");
    // v3 substitutes for v2 while v2 replaces v3: a cycle only through
    // olm.substitutesFor once the downgrade edge is counted.
    g.bundles.insert(
        "downgrade.v3.0.0".into(),
        BundleInfo {
            name: "downgrade.v3.0.0".into(),
            raw_version: "3.0.0".into(),
            version: semver::Version::parse("3.0.0").ok(),
            substitutes_for: "downgrade.v2.0.0".into(),
            ..BundleInfo::default()
        },
    );
    let fs = checks::check(&g);
    assert!(
        fs.iter()
            .any(|f| f.rule == "graph-cycle" && f.message.contains("substitutesFor")),
        "{fs:#?}"
    );
}

#[test]
fn semver_package_dir_gets_computed_edges_not_csv_ones() {
    let dir = common::fixtures().join("graph/pkg-semver");
    let g = load::load_package_dir(&dir, None).expect("loads");
    assert_eq!(g.mode, Some(olm_catalog::graph::Mode::Semver));
    let ch = g.channel("stable").expect("stable");
    let e: Vec<(&str, &str)> = ch
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e.replaces.as_str()))
        .collect();
    assert_eq!(
        e,
        vec![
            ("demo.v1.0.0", ""),
            ("demo.v1.0.1", "demo.v1.0.0"),
            ("demo.v1.1.0", "demo.v1.0.1"),
            ("demo.v2.0.0-rc.1", "demo.v1.1.0"),
        ]
    );
    assert_eq!(ch.head().expect("head").name, "demo.v2.0.0-rc.1");
    assert!(checks::check(&g).is_empty(), "{:#?}", checks::check(&g));
    // Under replaces mode the CSVs' `replaces: demo.v0.0.1` is missing: opm refuses.
    let g = load::load_package_dir(&dir, Some(olm_catalog::graph::Mode::Replaces)).expect("loads");
    let rules = rules_of(&g);
    assert!(
        rules.contains(&"graph-opm-refuses".to_string()),
        "{rules:?}"
    );
    assert!(
        rules.contains(&"graph-replaces-missing".to_string()),
        "{rules:?}"
    );
}

#[test]
fn skip_range_across_channels() {
    // Installed 1.0.0 from another channel: moving to `candidate`, OLM takes
    // the entry whose skipRange admits 1.0.0 even though it is not in the channel.
    let dir = common::fixtures().join("graph/pkg-semver");
    let mut g = load::load_package_dir(&dir, None).expect("loads");
    let mut cand = g.channel("stable").expect("stable").clone();
    cand.name = "candidate".into();
    cand.entries.retain(|e| e.name == "demo.v2.0.0-rc.1");
    cand.entries[0].replaces.clear();
    g.channels.push(cand);
    let p = path::upgrade_path(&g, "1.0.0", None, Some("candidate")).expect("path");
    assert_eq!(p.steps.len(), 1);
    assert_eq!(p.steps[0].to, "demo.v2.0.0-rc.1");
}

#[test]
fn path_names_the_channel_that_holds_the_bundle() {
    let dir = common::fixtures().join("graph/pkg-semver");
    let mut g = load::load_package_dir(&dir, None).expect("loads");
    let mut lonely = g.channel("stable").expect("stable").clone();
    lonely.name = "lonely".into();
    lonely.entries.retain(|e| e.name == "demo.v2.0.0-rc.1");
    let e = &mut lonely.entries[0];
    (e.replaces, e.skips, e.skip_range) = (String::new(), Vec::new(), String::new());
    g.channels.push(lonely);
    let p = path::upgrade_path(&g, "1.0.0", None, Some("lonely")).expect("path");
    assert!(p.steps.is_empty());
    assert!(
        p.end
            .ends_with("so OLM offers no upgrade (it is in channel stable: try --channel)"),
        "{}",
        p.end
    );
}

#[test]
fn semver_template_renders_channels_and_default() {
    let file = common::fixtures().join("graph/semver-template/semver.yaml");
    let text = std::fs::read_to_string(&file).expect("read");
    let bundles = common::fixtures().join("graph/pkg-semver");
    let render = template::dir_renderer(&bundles);
    let cfg = template::render_semver(&text, &file, &render).expect("renders");
    assert_eq!(cfg.packages[0].default_channel, "stable-v1.1");
    let names: Vec<&str> = cfg.channels.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "candidate-v1",
            "candidate-v1.0",
            "candidate-v1.1",
            "candidate-v2",
            "candidate-v2.0",
            "stable-v1",
            "stable-v1.0",
            "stable-v1.1"
        ]
    );
    let v11 = cfg
        .channels
        .iter()
        .find(|c| c.name == "stable-v1.1")
        .expect("ch");
    assert_eq!(v11.entries[0].replaces, "demo.v1.0.1");
    assert_eq!(v11.entries[0].skips, vec!["demo.v1.0.0"]);
    // Rendered bundles keep the template's image references.
    assert!(cfg
        .bundles
        .iter()
        .all(|b| b.image.starts_with("example.com/demo:")));
    // A digest-only image cannot be resolved offline.
    let e = template::resolve_image("example.com/demo@sha256:00", &bundles).expect_err("digest");
    assert!(
        matches!(&e, olm_catalog::graph::Error::Render(m) if m.contains("no tag")),
        "{e}"
    );
}

use common::run;

#[test]
fn cli_exit_codes_and_formats() {
    let fx = common::fixtures().join("graph");
    let rules = fx.join("rules.yaml");
    let (code, out, _) = run(&["graph", "check", rules.to_str().expect("utf8")]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error[graph-multiple-heads]"), "{out}");
    let (code, out, _) = run(&[
        "graph",
        "check",
        "-o",
        "sarif",
        rules.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 1);
    let sarif: serde_json::Value = serde_json::from_str(&out).expect("sarif json");
    assert_eq!(sarif["version"], "2.1.0");
    let pkg = fx.join("pkg-semver");
    let pkg = pkg.to_str().expect("utf8");
    let (code, out, _) = run(&["graph", "check", "-o", "json", pkg]);
    assert_eq!(code, 0, "{out}");
    let (code, _, err) = run(&["graph", "check", "/nonexistent/dir"]);
    assert_eq!(code, 2, "{err}");
    let (code, out, _) = run(&["graph", "render", pkg, "--format", "mermaid"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("graph LR\n"), "{out}");
    // opm draws an edge from the replaced (older) bundle to the entry.
    assert!(out.contains("demo-stable-demo.v1.0.0[\"demo.v1.0.0\"]-- replace --> demo-stable-demo.v1.0.1[\"demo.v1.0.1\"]"), "{out}");
    let (code, out, _) = run(&["graph", "render", pkg, "--format", "dot"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("digraph"), "{out}");
    let (code, out, _) = run(&["graph", "path", pkg, "--from", "1.0.1", "--json"]);
    assert_eq!(code, 0, "{out}");
    let p: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(p["steps"][0]["to"], "demo.v2.0.0-rc.1");
    let (code, out, _) = run(&[
        "graph",
        "path",
        pkg,
        "--from",
        "2.0.0-rc.1",
        "--to",
        "1.0.0",
    ]);
    assert_eq!(code, 1, "{out}");
    let tpl = fx.join("semver-template/semver.yaml");
    let (code, out, err) = run(&[
        "render-template",
        "semver",
        tpl.to_str().expect("utf8"),
        "--bundles-from",
        pkg,
        "-o",
        "yaml",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("defaultChannel: stable-v1.1"), "{out}");
    let (code, out, err) = run(&[
        "render-template",
        "semver",
        tpl.to_str().expect("utf8"),
        "--bundles-from",
        pkg,
    ]);
    assert_eq!(code, 0, "{err}");
    let objs: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&out)
        .into_iter::<serde_json::Value>()
        .collect::<Result<_, _>>()
        .expect("json stream");
    assert_eq!(objs[0]["schema"], "olm.package");
}

/// On an FBC input every finding names the file and the line of the
/// offending entry, field or item (not just the file), in YAML and in a
/// JSON stream alike.
#[test]
fn fbc_findings_name_file_and_line() {
    let p = common::fixtures().join("graph/rules.yaml");
    let text = std::fs::read_to_string(&p).expect("fixture");
    // The same catalog as a JSON stream of objects, four-space indented.
    let cfg = DeclarativeConfig::load_path(&p).expect("parses");
    let dir = tempfile::tempdir().expect("tmp");
    let json_path = dir.path().join("catalog.json");
    let mut json = String::new();
    for o in template::ordered_objects(&cfg) {
        json.push_str(&serde_json::to_string_pretty(&o).expect("json"));
        json.push('\n');
    }
    std::fs::write(&json_path, &json).expect("write");
    for (path, text) in [(p.clone(), text), (json_path.clone(), json)] {
        let graphs = load::load_graphs(&path, None, None).expect("loads");
        let mut seen = 0;
        for g in &graphs {
            for f in checks::check(g) {
                let l = f
                    .location
                    .as_ref()
                    .unwrap_or_else(|| panic!("{f:?}: no location"));
                assert_eq!(l.file, path, "{f:?}");
                assert!(l.line > 0 && l.column > 0, "{}: {f:?}", path.display());
                let line = text.lines().nth(l.line as usize - 1).expect("line exists");
                assert_eq!(l.source_line.as_deref(), Some(line));
                // The line names what the finding is about.
                let about = match f.rule.as_str() {
                    // The package object (it has no defaultChannel line):
                    // its first line, `schema:` in YAML, `{` in JSON.
                    "graph-default-channel-missing" if line.contains('{') => "{",
                    "graph-default-channel-missing" => "schema",
                    // The default channel's own definition, which is empty.
                    "graph-default-channel-empty" => "name",
                    "graph-skiprange-invalid"
                    | "graph-skiprange-unsatisfiable"
                    | "graph-skiprange-admits-self" => "skipRange",
                    "graph-replaces-missing" => "replaces",
                    "graph-skips-missing" => "missing.v0.9.0",
                    _ => "",
                };
                assert!(
                    line.contains(about),
                    "{}: {} at {line:?}",
                    path.display(),
                    f.rule
                );
                seen += 1;
            }
        }
        assert!(seen >= 12, "{}: {seen} findings", path.display());
    }
    // Spot checks on the YAML file: the dangling replaces and skip.
    let graphs = load::load_graphs(&p, None, None).expect("loads");
    let missing = graphs.iter().find(|g| g.package == "missing").expect("pkg");
    let fs = checks::check(missing);
    let at = |rule: &str| {
        fs.iter()
            .find(|f| f.rule == rule)
            .and_then(|f| f.location.as_ref())
            .map(|l| (l.line, l.column))
    };
    assert_eq!(at("graph-replaces-missing"), Some((38, 13)));
    assert_eq!(at("graph-skips-missing"), Some((40, 5)));
}

/// `graph render --format mermaid` writes what `opm alpha render-graph`
/// writes. The expected text is written by hand from operator-registry's
/// `MermaidWriter.WriteChannels` rules:
/// channels by name; entries by decreasing version; per entry its node, then
/// a `skip` edge per skips item, a `skipRange(...)` edge per channel entry
/// the range admits (in channel order), then the `replace` edge, each drawn
/// from the older bundle to the entry; link ids count every edge drawn.
/// A bundle already skipped by a newer entry gets class `skipped`; an edge
/// into a skipped entry, or a second skip of the same bundle, is listed in
/// `linkStyle`.
#[test]
fn mermaid_matches_opm() {
    let p = common::fixtures().join("graph/mermaid/catalog.yaml");
    let graphs = load::load_graphs(&p, None, None).expect("loads");
    let got = olm_catalog::graph::draw::mermaid(&graphs).expect("draws");
    let want = r#"graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
  %% package "mm"
  subgraph "mm"
    %% channel "alpha"
    subgraph mm-alpha["alpha"]
      mm-alpha-mm.v1.0.0["mm.v1.0.0"]
    end
    %% channel "stable"
    subgraph mm-stable["stable"]
      mm-stable-mm.v2.0.0["mm.v2.0.0"]
      mm-stable-mm.v1.1.0["mm.v1.1.0"]-- skip --> mm-stable-mm.v2.0.0["mm.v2.0.0"]
      mm-stable-mm.v1.0.0["mm.v1.0.0"]-- "skipRange(>=1.0.0 <2.0.0)" --> mm-stable-mm.v2.0.0["mm.v2.0.0"]
      mm-stable-mm.v1.2.0["mm.v1.2.0"]-- "skipRange(>=1.0.0 <2.0.0)" --> mm-stable-mm.v2.0.0["mm.v2.0.0"]
      mm-stable-mm.v1.1.0["mm.v1.1.0"]-- "skipRange(>=1.0.0 <2.0.0)" --> mm-stable-mm.v2.0.0["mm.v2.0.0"]
      mm-stable-mm.v1.2.0["mm.v1.2.0"]-- replace --> mm-stable-mm.v2.0.0["mm.v2.0.0"]
      mm-stable-mm.v1.2.0["mm.v1.2.0"]
      mm-stable-mm.v1.1.0["mm.v1.1.0"]-- skip --> mm-stable-mm.v1.2.0["mm.v1.2.0"]
      mm-stable-mm.v1.1.0["mm.v1.1.0"]-- replace --> mm-stable-mm.v1.2.0["mm.v1.2.0"]
      mm-stable-mm.v1.1.0["mm.v1.1.0"]
      mm-stable-mm.v1.0.0["mm.v1.0.0"]-- "skipRange(<1.1.0)" --> mm-stable-mm.v1.1.0["mm.v1.1.0"]
      mm-stable-mm.v1.0.0["mm.v1.0.0"]-- replace --> mm-stable-mm.v1.1.0["mm.v1.1.0"]
      mm-stable-mm.v1.0.0["mm.v1.0.0"]
    end
  end
style mm fill:#989695
style mm-alpha fill:#DCD0FF
class mm-alpha-mm.v1.0.0,mm-stable-mm.v1.0.0 deprecated
class mm-stable-mm.v1.1.0 skipped
linkStyle 5,7,8 stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;
"#;
    assert_eq!(got, want);
    // A skipRange admitting the entry's own version draws a self edge, as
    // opm does; an empty channel is still drawn.
    let cfg = DeclarativeConfig::load_path(&p).expect("parses");
    let mut g = PackageGraph::from_fbc(&cfg, &p).remove(0);
    g.deprecated = Default::default();
    g.channels.retain(|c| c.name == "stable");
    g.channels[0].entries = vec![olm_catalog::graph::Entry::new(
        "mm.v1.0.0",
        "",
        &[],
        "1.0.0",
    )];
    g.channels.push(olm_catalog::graph::Channel {
        name: "empty".into(),
        ..Default::default()
    });
    g.channels.sort_by(|a, b| a.name.cmp(&b.name));
    let got = olm_catalog::graph::draw::mermaid(&[g]).expect("draws");
    let body: Vec<&str> = got.lines().skip(4).collect();
    assert_eq!(
        body,
        [
            "  %% package \"mm\"",
            "  subgraph \"mm\"",
            "    %% channel \"empty\"",
            "    subgraph mm-empty[\"empty\"]",
            "    end",
            "    %% channel \"stable\"",
            "    subgraph mm-stable[\"stable\"]",
            "      mm-stable-mm.v1.0.0[\"mm.v1.0.0\"]",
            "      mm-stable-mm.v1.0.0[\"mm.v1.0.0\"]-- \"skipRange(1.0.0)\" --> mm-stable-mm.v1.0.0[\"mm.v1.0.0\"]",
            "    end",
            "  end",
        ]
    );
    // A bundle whose version is not semver: opm refuses to draw.
    let mut g = PackageGraph::from_fbc(&cfg, &p).remove(0);
    if let Some(b) = g.bundles.get_mut("mm.v1.0.0") {
        b.raw_version = "one".into();
        b.version = None;
    }
    let e = olm_catalog::graph::draw::mermaid(&[g]).expect_err("invalid version");
    assert!(matches!(e, olm_catalog::graph::Error::Draw(_)), "{e}");
    assert!(e.to_string().contains("\"one\""), "{e}");
}

/// The graph reads a CSV pruned to its fields: a syntax error in text it
/// does not read does not stop it, one in a field it reads is reported at
/// its line, and a CSV the pruner does not understand is read whole.
#[test]
#[allow(clippy::result_large_err)] // load_bundle's own Err type
fn bundles_load_from_the_graph_fields_of_their_csv() {
    let tmp = tempfile::tempdir().expect("tmp");
    let bundle = |name: &str, csv: &str| {
        let dir = tmp.path().join(name);
        for (file, text) in [
            ("manifests/csv.yaml", csv),
            (
                "metadata/annotations.yaml",
                "annotations:\n  operators.operatorframework.io.bundle.package.v1: p\n  \
                 operators.operatorframework.io.bundle.channels.v1: stable\n",
            ),
        ] {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, text).expect("write");
        }
        load::load_bundle(&dir)
    };
    let head = "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n\
                metadata:\n  name: p.v1.1.0\n";
    let broken_install = format!(
        "{head}spec:\n  install:\n    spec:\n      a: 1\n     b: 2\n  version: 1.1.0\n  replaces: p.v1.0.0\n"
    );
    let b = bundle("install", &broken_install).expect("the install strategy is not read");
    assert_eq!(b.info.raw_version, "1.1.0");
    assert_eq!(b.entry.replaces, "p.v1.0.0");
    assert_eq!(b.entry.replaces_location.expect("located").line, 11);
    // A flow collection left open is not followed: the whole text is read
    // and its error reported.
    let open_flow = format!("{head}spec:\n  install: [unclosed\n  version: 1.1.0\n");
    let f = bundle("flow", &open_flow).expect_err("read whole");
    assert!(f.message.contains("not valid YAML"), "{}", f.message);

    let broken_replaces = format!("{head}spec:\n  version: 1.1.0\n  replaces: [p.v1.0.0\n");
    let f = bundle("replaces", &broken_replaces).expect_err("replaces does not parse");
    assert_eq!(f.rule, "graph-bundle-unreadable");
    assert!(f.message.contains("not valid YAML"), "{}", f.message);
    let loc = f.location.expect("located");
    assert!(loc.file.ends_with("manifests/csv.yaml"), "{loc:?}");
    assert!(loc.line >= 6, "{loc:?}");

    let json = r#"{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
        "metadata": {"name": "p.v1.2.0"}, "spec": {"version": "1.2.0", "skips": ["p.v1.1.0"]}}"#;
    let b = bundle("json", json).expect("JSON CSVs are read whole");
    assert_eq!(b.entry.skips, ["p.v1.1.0"]);

    // A duplicate key is judged on the whole text: the last value wins.
    let dup = format!("{head}spec:\n  version: 1.0.0\n  icon: [x\n  version: 1.1.0\n");
    let b = bundle("dup", &dup).expect_err("the icon does not parse in the whole text");
    assert!(b.message.contains("not valid YAML"), "{}", b.message);
    let dup = format!("{head}spec:\n  version: 1.0.0\n  version: 1.1.0\n");
    assert_eq!(
        bundle("dup2", &dup).expect("loads").info.raw_version,
        "1.1.0"
    );
}

/// `graph check` writes each package's report as soon as it is ready,
/// packages checked in parallel a few at a time: over more paths than that
/// window, in every format, its output is byte for byte all the reports
/// collected in argument order and rendered at once.
#[test]
fn streamed_check_output_is_the_collected_reports_rendered() {
    use olm_catalog::diag;
    use olm_catalog::graph::checks::{check_path, CheckOptions};
    let fx = common::fixtures().join("graph");
    let mut paths = Vec::new();
    for _ in 0..6 {
        for p in [
            "rules.yaml",
            "pkg-semver",
            "tree/pkg-bad",
            "pkg-replaces",
            "warn-only.yaml",
            "rules-more.yaml",
        ] {
            paths.push(fx.join(p));
        }
    }
    let opts = CheckOptions {
        crds: true,
        ..CheckOptions::default()
    };
    let reports: Vec<diag::Report> = paths.iter().flat_map(|p| check_path(p, &opts)).collect();
    let args: Vec<&str> = paths.iter().map(|p| p.to_str().expect("utf8")).collect();
    for (fmt, want) in [
        ("human", diag::render_human(&reports, false)),
        ("json", diag::render_json(&reports)),
        (
            "sarif",
            diag::render_sarif(&reports, &olm_catalog::graph::checks::rule_help),
        ),
    ] {
        let mut cmd = vec!["graph", "check", "--color", "never", "-o", fmt];
        cmd.extend(&args);
        let (code, out, err) = run(&cmd);
        assert_eq!(code, 1, "{fmt}: {err}");
        assert!(
            out == want,
            "{fmt}: streamed output differs from the rendered reports"
        );
    }
}
