//! Graph rules, modes and templates on small hand-written fixtures
//! (fixtures/graph): the cases tests/graph_checks.rs does not cover.
use crate::common;
use crate::registry;

use std::collections::BTreeMap;

use olm_catalog::fbc::{self, DeclarativeConfig};
use olm_catalog::graph::{checks, draw, load, path, template, EdgeKind, Mode, PackageGraph};

fn fbc_graphs(file: &str) -> BTreeMap<String, PackageGraph> {
    let p = common::fixtures().join("graph").join(file);
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

use common::run;

#[test]
fn no_head_and_invalid_version_fire() {
    let gs = fbc_graphs("rules-more.yaml");
    // Every entry is replaced by the other: a cycle, so no head.
    assert_eq!(rules_of(&gs["nohead"]), ["graph-cycle", "graph-no-head"]);
    // `1.0` is not semver.
    let fs = checks::check(&gs["badversion"]);
    assert_eq!(rules_of(&gs["badversion"]), ["graph-version-invalid"]);
    assert!(fs[0].message.contains("`1.0`"), "{}", fs[0].message);
    assert!(fs[0].location.is_some());
}

/// With two heads there is no single head to walk from; the stranded
/// check walks from both and still finds the island the heads never lead
/// from.
#[test]
fn stranded_bundles_are_found_when_a_channel_has_two_heads() {
    let gs = fbc_graphs("rules-more.yaml");
    let g = &gs["split"];
    assert_eq!(
        rules_of(g),
        [
            "graph-cycle",
            "graph-multiple-heads",
            "graph-stranded-bundle"
        ]
    );
    let mut stranded: Vec<String> = checks::check(g)
        .into_iter()
        .filter(|f| f.rule == "graph-stranded-bundle")
        .map(|f| f.message)
        .collect();
    stranded.sort();
    assert_eq!(stranded.len(), 2, "{stranded:?}");
    assert!(stranded[0].contains("split.v3.0.0"), "{}", stranded[0]);
    assert!(stranded[1].contains("split.v4.0.0"), "{}", stranded[1]);
    assert!(
        stranded[0].contains("any of its heads (split.v1.0.0, split.v2.0.0)"),
        "{}",
        stranded[0]
    );
}

/// 1.2.0 replaces and skips 1.1.0: one head, no finding. OLM v1 walks
/// 1.0.0 -> 1.1.0 -> 1.2.0 (the replaces edge is the one named); OLM v0
/// leaves the skipped 1.1.0 out of the channel (`sortChannel`), so nothing
/// takes 1.0.0 further.
#[test]
fn skip_of_a_bundle_that_is_also_replaced() {
    let gs = fbc_graphs("rules-more.yaml");
    let g = &gs["skipboth"];
    let ch = g.channel("stable").expect("stable");
    assert_eq!(ch.head().expect("one head").name, "skipboth.v1.2.0");
    assert!(checks::check(g).is_empty(), "{:#?}", checks::check(g));
    let edges: Vec<(String, String, EdgeKind)> = g
        .edges(ch)
        .into_iter()
        .map(|e| (e.from, e.to, e.kind))
        .collect();
    assert_eq!(
        edges,
        [
            (
                "skipboth.v1.0.0".into(),
                "skipboth.v1.1.0".into(),
                EdgeKind::Replaces
            ),
            (
                "skipboth.v1.1.0".into(),
                "skipboth.v1.2.0".into(),
                EdgeKind::Replaces
            ),
            (
                "skipboth.v1.1.0".into(),
                "skipboth.v1.2.0".into(),
                EdgeKind::Skips
            ),
        ]
    );
    let p = path::upgrade_path(g, "1.0.0", None, None).expect("path");
    assert!(p.steps.is_empty(), "{p:?}");
    assert!(
        p.end
            .starts_with("only skipboth.v1.1.0 (skipped by skipboth.v1.2.0) would take"),
        "{}",
        p.end
    );
    let p = path::upgrade_path_with(
        g,
        "1.0.0",
        None,
        None,
        olm_catalog::graph::successors::Olm::V1,
    )
    .expect("path");
    let steps: Vec<(&str, &str, EdgeKind)> = p
        .steps
        .iter()
        .map(|s| (s.from.as_str(), s.to.as_str(), s.kind))
        .collect();
    assert_eq!(
        steps,
        [
            ("skipboth.v1.0.0", "skipboth.v1.1.0", EdgeKind::Replaces),
            ("skipboth.v1.1.0", "skipboth.v1.2.0", EdgeKind::Replaces),
        ]
    );
}

/// Pre-release and build-metadata versions in paths and downgrade checks.
#[test]
fn prerelease_and_build_metadata_in_paths_and_checks() {
    let gs = fbc_graphs("prerelease.yaml");
    let g = &gs["pre"];
    // Only the `down` channel's 1.4.1 -> 1.4.1-beta2 is a downgrade: a
    // pre-release is lower than its release, and 1.4.1+2 has the same
    // precedence as 1.4.1 (build metadata does not count).
    let fs = checks::check(g);
    assert_eq!(rules_of(g), ["graph-downgrade-edge"], "{fs:#?}");
    assert_eq!(fs.len(), 1);
    assert!(fs[0].message.contains("channel down"), "{}", fs[0].message);
    // From 1.4.1-beta1, 1.4.1-beta2 replaces it and 1.4.1's skipRange
    // `>=1.3.0 <1.4.1` admits it (blang ranges admit pre-releases): OLM
    // takes the highest, 1.4.1, then the rebuild 1.4.1+2 that replaces it.
    let p = path::upgrade_path(g, "pre.v1.4.1-beta1", None, Some("stable")).expect("path");
    let steps: Vec<(&str, &str, EdgeKind)> = p
        .steps
        .iter()
        .map(|s| (s.from.as_str(), s.to.as_str(), s.kind))
        .collect();
    assert_eq!(
        steps,
        [
            ("pre.v1.4.1-beta1", "pre.v1.4.1", EdgeKind::SkipRange),
            ("pre.v1.4.1", "pre.v1.4.1-rebuild2", EdgeKind::Replaces),
        ]
    );
    assert_eq!(p.steps[0].alternatives, ["pre.v1.4.1-beta2"]);
    // The head is the rebuild.
    let ch = g.channel("stable").expect("stable");
    assert_eq!(ch.head().expect("head").name, "pre.v1.4.1-rebuild2");
}

#[test]
fn duplicate_and_unreadable_bundles_in_a_package_directory() {
    let dir = common::fixtures().join("graph/pkg-broken");
    let g = load::load_package_dir(&dir, None).expect("loads");
    let rules = rules_of(&g);
    for r in ["graph-duplicate-bundle", "graph-bundle-unreadable"] {
        assert!(rules.contains(&r.to_string()), "{r}: {rules:?}");
    }
    let fs = checks::check(&g);
    let unreadable = fs
        .iter()
        .find(|f| f.rule == "graph-bundle-unreadable")
        .expect("unreadable");
    assert!(
        unreadable
            .location
            .as_ref()
            .is_some_and(|l| l.file.to_string_lossy().contains("2.0.0")),
        "{unreadable:?}"
    );
    let dup = fs
        .iter()
        .find(|f| f.rule == "graph-duplicate-bundle")
        .expect("dup");
    assert!(dup.message.contains("brk.v1.0.0"), "{}", dup.message);
    // The other definition is named, and two entries of one name are a
    // duplicate, not two heads.
    assert!(
        dup.related
            .iter()
            .any(|l| l.file.to_string_lossy().contains("1.0.0/manifests")),
        "{dup:?}"
    );
    assert!(
        !rules.contains(&"graph-multiple-heads".to_string()),
        "{rules:?}"
    );
}

/// Replaces mode: opm adds 0.9.0, then 1.0.0 (which replaces nothing, so
/// the walk from the new head 1.0.0 leaves 0.9.0 out), then 1.1.0 and
/// 1.2.0 along the replaces chain. The graph is what opm writes; 0.9.0 is
/// reported as pruned.
#[test]
fn replaces_mode_walk_prunes_the_bundle_off_the_chain() {
    let dir = common::fixtures().join("graph/pkg-replaces");
    let g = load::load_package_dir(&dir, None).expect("loads");
    assert_eq!(g.mode, Some(Mode::Replaces));
    assert!(g.mode_error.is_none(), "{:?}", g.mode_error);
    let ch = g.channel("stable").expect("stable");
    let mut e: Vec<(&str, &str)> = ch
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e.replaces.as_str()))
        .collect();
    e.sort();
    assert_eq!(
        e,
        [
            ("rep.v1.0.0", ""),
            ("rep.v1.1.0", "rep.v1.0.0"),
            ("rep.v1.2.0", "rep.v1.1.0")
        ]
    );
    assert_eq!(g.pruned, [("stable".to_string(), "rep.v0.9.0".to_string())]);
    let fs = checks::check(&g);
    assert_eq!(fs.len(), 1, "{fs:#?}");
    assert_eq!(fs[0].rule, "graph-stranded-bundle");
    assert!(fs[0].message.contains("rep.v0.9.0"), "{}", fs[0].message);
    assert!(fs[0].location.is_some());
}

/// semver-skippatch on the semver fixture directory (opm
/// `BundleGraphLoader.AddBundleToGraph` with skippatch): each added bundle
/// replaces the greatest lower version of its channel, plus every lower
/// patch of its own major.minor, whose nodes it takes over. Adding 1.0.1:
/// its replaced set is {1.0.0}, both the greatest lower version and its
/// lower patch, so one edge, written as `replaces`. 1.1.0 and 2.0.0-rc.1
/// have no lower patch of their own minor: plain replaces of the greatest
/// lower version (1.0.1, 1.1.0).
#[test]
fn semver_skippatch_on_a_package_directory() {
    let dir = common::fixtures().join("graph/pkg-semver");
    let g = load::load_package_dir(&dir, Some(Mode::SemverSkipPatch)).expect("loads");
    assert_eq!(g.mode, Some(Mode::SemverSkipPatch));
    let ch = g.channel("stable").expect("stable");
    let e: Vec<(&str, &str, Vec<&str>)> = ch
        .entries
        .iter()
        .map(|e| {
            (
                e.name.as_str(),
                e.replaces.as_str(),
                e.skips.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        e,
        [
            ("demo.v1.0.0", "", vec![]),
            ("demo.v1.0.1", "demo.v1.0.0", vec![]),
            ("demo.v1.1.0", "demo.v1.0.1", vec![]),
            ("demo.v2.0.0-rc.1", "demo.v1.1.0", vec![]),
        ]
    );
    assert_eq!(ch.head().expect("head").name, "demo.v2.0.0-rc.1");
}

#[test]
fn check_exits_1_on_warnings_unless_errors_only() {
    let warn = common::fixtures().join("graph/warn-only.yaml");
    let warn = warn.to_str().expect("utf8");
    let (code, out, _) = run(&["graph", "check", warn]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("warning[graph-skips-missing]"), "{out}");
    let (code, out, _) = run(&["graph", "check", "--errors-only", warn]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("warning[graph-skips-missing]"), "{out}");
    // Errors still fail with --errors-only.
    let rules = common::fixtures().join("graph/rules.yaml");
    let (code, _, _) = run(&[
        "graph",
        "check",
        "--errors-only",
        rules.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 1);
    // Clean: 0. Usage: 2.
    let clean = common::fixtures().join("graph/pkg-semver");
    let (code, out, _) = run(&["graph", "check", clean.to_str().expect("utf8")]);
    assert_eq!(code, 0, "{out}");
    let (code, _, _) = run(&["graph", "check"]);
    assert_eq!(code, 2);
    let (_, help, _) = run(&["graph", "check", "--help"]);
    assert!(help.contains("--errors-only"), "{help}");
}

#[test]
fn render_json_and_dot() {
    let p = common::fixtures().join("graph/rules-more.yaml");
    let p = p.to_str().expect("utf8");
    let (code, out, err) = run(&["graph", "render", p, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let pkgs = v.as_array().expect("array");
    let skipboth = pkgs
        .iter()
        .find(|p| p["package"] == "skipboth")
        .expect("skipboth");
    assert_eq!(skipboth["defaultChannel"], "stable");
    let ch = &skipboth["channels"][0];
    assert_eq!(ch["name"], "stable");
    assert_eq!(ch["head"], "skipboth.v1.2.0");
    assert_eq!(ch["entries"].as_array().expect("entries").len(), 3);
    assert_eq!(
        ch["edges"],
        serde_json::json!([
            {"from": "skipboth.v1.0.0", "to": "skipboth.v1.1.0", "kind": "replaces"},
            {"from": "skipboth.v1.1.0", "to": "skipboth.v1.2.0", "kind": "replaces"},
            {"from": "skipboth.v1.1.0", "to": "skipboth.v1.2.0", "kind": "skips"},
        ])
    );
    // A channel with two heads has none in JSON.
    let split = pkgs
        .iter()
        .find(|p| p["package"] == "split")
        .expect("split");
    assert!(split["channels"][0]["head"].is_null());
    let (code, out, err) = run(&["graph", "render", p, "--format", "dot"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("digraph upgrades {\n"), "{out}");
    assert!(out.trim_end().ends_with('}'), "{out}");
    assert!(
        out.contains(
            "\"skipboth/stable/skipboth.v1.2.0\" [label=\"skipboth.v1.2.0\", style=bold];"
        ),
        "{out}"
    );
    assert!(
        out.contains("\"skipboth/stable/skipboth.v1.1.0\" -> \"skipboth/stable/skipboth.v1.2.0\" [label=\"skips\", style=dashed];"),
        "{out}"
    );
    assert!(
        out.contains("label=\"skipboth / stable (default)\";"),
        "{out}"
    );
    // Mermaid of an invalid version fails as opm does: exit 2.
    let (code, _, err) = run(&["graph", "render", p, "--format", "mermaid"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("invalid version"), "{err}");
    // The library call agrees.
    let gs: Vec<PackageGraph> = fbc_graphs("rules-more.yaml").into_values().collect();
    assert!(draw::draw(&gs, draw::DrawFormat::Json).is_ok());
}

// ---- semver template -------------------------------------------------

/// A renderer for images `example.com/<pkg>:v<version>` that makes the
/// bundle `<pkg>.v<version>` with that version, as the bundle directories
/// would.
fn fake_render(image: &str) -> Result<fbc::Bundle, olm_catalog::graph::Error> {
    let (repo, tag) = image.rsplit_once(':').ok_or("no tag")?;
    let pkg = repo.rsplit('/').next().ok_or("no repo")?;
    let version = tag.strip_prefix('v').ok_or("tag without v")?;
    // Build metadata is not allowed in a CSV name; write it as `-build`.
    let name = format!("{pkg}.v{}", version.replace('+', "-build"));
    Ok(fbc::Bundle {
        schema: "olm.bundle".into(),
        name,
        package: pkg.into(),
        image: image.into(),
        properties: vec![fbc::Property::new(
            "olm.package",
            serde_json::json!({"packageName": pkg, "version": version}),
        )],
        ..fbc::Bundle::default()
    })
}

fn semver_template(head: &str, archetypes: &[(&str, &[&str])]) -> String {
    let mut s = format!("schema: olm.semver\n{head}");
    for (arch, versions) in archetypes {
        s.push_str(&format!("{arch}:\n  bundles:\n"));
        for v in *versions {
            s.push_str(&format!("  - image: example.com/a:v{v}\n"));
        }
    }
    s
}

type Entries = Vec<(String, String, Vec<String>)>;

fn render(text: &str) -> Result<(String, BTreeMap<String, Entries>), String> {
    let cfg = template::render_semver(text, std::path::Path::new("t.yaml"), &fake_render)
        .map_err(|e| e.to_string())?;
    let mut chans = BTreeMap::new();
    for c in &cfg.channels {
        chans.insert(
            c.name.clone(),
            c.entries
                .iter()
                .map(|e| (e.name.clone(), e.replaces.clone(), e.skips.clone()))
                .collect(),
        );
    }
    Ok((cfg.packages[0].default_channel.clone(), chans))
}

fn ent(name: &str, replaces: &str, skips: &[&str]) -> (String, String, Vec<String>) {
    (
        name.into(),
        replaces.into(),
        skips.iter().map(|s| s.to_string()).collect(),
    )
}

const PRE: &[&str] = &[
    "1.4.1",
    "1.3.1-beta",
    "1.4.1-beta2",
    "1.3.1",
    "1.3.1-alpha",
    "1.4.1-beta1",
];

/// Pre-releases in minor channels (the cases of opm's own semver tests,
/// 1.3.1-alpha/beta and 1.4.1-beta1/2, worked out by hand): within a
/// minor, entries by version; the minor's last entry skips every lower one
/// of the same major seen so far and replaces the previous minor's last.
#[test]
fn semver_template_prereleases_in_minor_channels() {
    let (default, ch) = render(&semver_template("", &[("stable", PRE)])).expect("renders");
    assert_eq!(
        ch["stable-v1.3"],
        [
            ent("a.v1.3.1-alpha", "", &[]),
            ent("a.v1.3.1-beta", "", &[]),
            ent("a.v1.3.1", "", &["a.v1.3.1-alpha", "a.v1.3.1-beta"]),
        ]
    );
    assert_eq!(
        ch["stable-v1.4"],
        [
            ent("a.v1.4.1-beta1", "", &[]),
            ent("a.v1.4.1-beta2", "", &[]),
            ent(
                "a.v1.4.1",
                "a.v1.3.1",
                &[
                    "a.v1.3.1-alpha",
                    "a.v1.3.1-beta",
                    "a.v1.4.1-beta1",
                    "a.v1.4.1-beta2"
                ]
            ),
        ]
    );
    assert_eq!(ch.len(), 2);
    // The newest channel by the version it was created at (1.4.1-beta1).
    assert_eq!(default, "stable-v1.4");
}

/// The same bundles in one major channel: the same edges, one channel.
#[test]
fn semver_template_prereleases_in_a_major_channel() {
    let (default, ch) = render(&semver_template(
        "generateMajorChannels: true\n",
        &[("stable", PRE)],
    ))
    .expect("renders");
    assert_eq!(ch.len(), 1);
    assert_eq!(default, "stable-v1");
    let names: Vec<&str> = ch["stable-v1"].iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "a.v1.3.1-alpha",
            "a.v1.3.1-beta",
            "a.v1.3.1",
            "a.v1.4.1-beta1",
            "a.v1.4.1-beta2",
            "a.v1.4.1"
        ]
    );
    assert_eq!(
        ch["stable-v1"][2],
        ent("a.v1.3.1", "", &["a.v1.3.1-alpha", "a.v1.3.1-beta"])
    );
    assert_eq!(ch["stable-v1"][5].1, "a.v1.3.1");
}

/// defaultChannelTypePreference decides between the major and the minor
/// channel created by the same bundle; set to a kind that is not generated,
/// it is an error, as in opm.
#[test]
fn semver_template_default_channel_type_preference() {
    let both = "generateMajorChannels: true\ngenerateMinorChannels: true\n";
    let v: &[&str] = &["1.0.0", "1.0.1"];
    let (d, ch) = render(&semver_template(
        &format!("{both}defaultChannelTypePreference: major\n"),
        &[("stable", v)],
    ))
    .expect("renders");
    assert_eq!(d, "stable-v1");
    assert_eq!(ch.keys().collect::<Vec<_>>(), ["stable-v1", "stable-v1.0"]);
    let (d, _) = render(&semver_template(
        &format!("{both}defaultChannelTypePreference: minor\n"),
        &[("stable", v)],
    ))
    .expect("renders");
    assert_eq!(d, "stable-v1.0");
    // Unset: minor when minor channels are generated.
    let (d, _) = render(&semver_template(both, &[("stable", v)])).expect("renders");
    assert_eq!(d, "stable-v1.0");
    // Unset with only major channels: major.
    let (d, _) = render(&semver_template(
        "generateMajorChannels: true\n",
        &[("stable", v)],
    ))
    .expect("renders");
    assert_eq!(d, "stable-v1");
    let e = render(&semver_template(
        "generateMajorChannels: true\ndefaultChannelTypePreference: minor\n",
        &[("stable", v)],
    ))
    .expect_err("mismatch");
    assert_eq!(e, "schema attribute mismatch: DefaultChannelTypePreference set to 'minor' doesn't make sense if not generating minor-version channels");
    // Neither generate option: minor channels only, so `major` mismatches.
    let e = render(&semver_template(
        "defaultChannelTypePreference: major\n",
        &[("stable", v)],
    ))
    .expect_err("mismatch");
    assert_eq!(e, "schema attribute mismatch: DefaultChannelTypePreference set to 'major' doesn't make sense if not generating major-version channels");
    let e = render(&semver_template(
        "defaultChannelTypePreference: patch\n",
        &[("stable", v)],
    ))
    .expect_err("unknown");
    assert!(
        e.to_string()
            .contains("unknown DefaultChannelTypePreference"),
        "{e}"
    );
}

/// Candidate and fast archetypes: edges never cross archetypes, and the
/// default channel is the most stable archetype's, whatever its version.
#[test]
fn semver_template_fast_archetype_and_default_channel() {
    let cand: &[&str] = &["1.0.0", "1.0.1", "1.1.0"];
    let fast: &[&str] = &["1.0.1"];
    let (d, ch) =
        render(&semver_template("", &[("candidate", cand), ("fast", fast)])).expect("renders");
    assert_eq!(
        ch["candidate-v1.0"],
        [ent("a.v1.0.0", "", &[]), ent("a.v1.0.1", "", &["a.v1.0.0"])]
    );
    assert_eq!(
        ch["candidate-v1.1"],
        [ent("a.v1.1.0", "a.v1.0.1", &["a.v1.0.0"])]
    );
    assert_eq!(ch["fast-v1.0"], [ent("a.v1.0.1", "", &[])]);
    assert_eq!(ch.len(), 3);
    // fast outranks candidate even at a lower version.
    assert_eq!(d, "fast-v1.0");
    // candidate 2.0.0 vs stable 1.0.0: stable wins.
    let (d, _) = render(&semver_template(
        "",
        &[("candidate", &["2.0.0"]), ("stable", &["1.0.0"])],
    ))
    .expect("renders");
    assert_eq!(d, "stable-v1.0");
    // candidate only: a candidate channel.
    let (d, _) = render(&semver_template("", &[("candidate", &["2.0.0"])])).expect("renders");
    assert_eq!(d, "candidate-v2.0");
}

/// Versions differing only in build metadata cannot be ordered: opm's
/// message quotes the version and the version it collides with, wrapped in
/// the post-processing prefix.
#[test]
fn semver_template_build_metadata_error() {
    let e = render(&semver_template(
        "",
        &[("stable", &["1.3.1-alpha", "1.3.1-alpha+2001Jan21", "1.3.1"])],
    ))
    .expect_err("build metadata");
    assert_eq!(
        e,
        "render: unable to post-process bundle info: encountered bundle versions which differ only by build metadata, which cannot be ordered: bundle version \"1.3.1-alpha+2001Jan21\" cannot be compared to \"1.3.1-alpha\""
    );
    // Two collisions are aggregated in brackets.
    let e = render(&semver_template(
        "",
        &[(
            "stable",
            &[
                "1.3.1-alpha",
                "1.3.1-alpha+2001Jan21",
                "1.3.1-alpha+2003May06",
            ],
        )],
    ))
    .expect_err("build metadata");
    assert!(
        e.to_string().ends_with(": [bundle version \"1.3.1-alpha+2001Jan21\" cannot be compared to \"1.3.1-alpha\", bundle version \"1.3.1-alpha+2003May06\" cannot be compared to \"1.3.1-alpha\"]"),
        "{e}"
    );
    // One build of a version is fine, in another archetype too.
    assert!(render(&semver_template(
        "",
        &[("candidate", &["1.0.0+1"]), ("stable", &["1.0.0+2"])]
    ))
    .is_ok());
}

/// A basic template's bundle entry is valid as opm's isBundleTemplate
/// says: an image and no package, properties or relatedImages; a name, or
/// empty lists, do not matter.
#[test]
fn basic_template_bundle_entries() {
    let p = std::path::Path::new("basic.yaml");
    let ok = "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: a\n  defaultChannel: stable\n- schema: olm.bundle\n  name: whatever\n  image: example.com/a:v1.0.0\n  properties: []\n  relatedImages: []\n  package: ''\n";
    let (_, images) = template::basic_parts(ok, p).expect("accepted");
    assert_eq!(images, ["example.com/a:v1.0.0"]);
    for bad in [
        "  package: a\n",
        "  properties:\n  - type: olm.package\n    value: {}\n",
        "  relatedImages:\n  - image: x\n",
    ] {
        let text = format!(
            "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: example.com/a:v1.0.0\n{bad}"
        );
        let e = template::basic_parts(&text, p).expect_err(bad);
        assert!(
            e.to_string().starts_with(
                "basic.yaml:3:3: entries[0]: unexpected fields present in basic template bundle"
            ),
            "{e}"
        );
    }
    let no_image = "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  name: a.v1\n";
    assert!(template::basic_parts(no_image, p).is_err());
}

// ---- one reading of templates; one bad package is one finding ---------

/// `graph check` over a tree of packages: a template written with
/// capitalised field names (`Schema: olm.semver`, as opm's README writes
/// them and Go's decoding reads them) is read as render-template reads it,
/// and a package that cannot be read at all is one error finding for that
/// package, at its template's line, while the other packages are checked:
/// exit 1, not 2.
#[test]
fn graph_check_reads_capitalised_templates_and_goes_on_past_a_bad_package() {
    let tree = common::fixtures().join("graph/tree");
    let (code, out, err) = run(&["graph", "check", "-o", "json", tree.to_str().expect("utf8")]);
    assert_eq!(code, 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let reports = v["reports"].as_array().expect("reports");
    assert_eq!(reports.len(), 2, "{out}");
    let bad = &reports[0];
    assert!(
        bad["subject"]
            .as_str()
            .expect("subject")
            .ends_with("pkg-bad"),
        "{out}"
    );
    let f = &bad["findings"][0];
    assert_eq!(f["rule"], "graph-package-unreadable", "{out}");
    assert_eq!(f["level"], "error", "{out}");
    assert!(
        f["message"]
            .as_str()
            .expect("message")
            .contains("unknown template schema: olm.template.fancy"),
        "{out}"
    );
    assert!(
        f["location"]["file"]
            .as_str()
            .expect("file")
            .ends_with("template.yaml"),
        "{out}"
    );
    assert_eq!(f["location"]["line"], 2, "{out}");
    let good = &reports[1];
    assert_eq!(
        good["subject"]
            .as_str()
            .map(|s| s.contains("(package capital)")),
        Some(true),
        "{out}"
    );
    assert_eq!(good["findings"].as_array().map(Vec::len), Some(0), "{out}");
    // The package alone is clean; the graph is the template's.
    let pkg = tree.join("pkg-capital");
    let (code, out, err) = run(&["graph", "check", pkg.to_str().expect("utf8")]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, _) = run(&[
        "graph",
        "render",
        "--format",
        "json",
        pkg.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("stable-v1"), "{out}");
    // A path that does not exist is still a usage error.
    let (code, _, err) = run(&["graph", "check", tree.join("nope").to_str().expect("utf8")]);
    assert_eq!(code, 2, "{err}");
}

/// `render-template` as opm v1.73.0: the type comes from the schema when
/// it is not given (`render-template FILE`, `render-template auto FILE`,
/// standard input), the explicit form still works and must match the
/// schema; the semver template's package takes `description` and `icon`
/// from the default channel's head (operator-registry #1933; the icon is
/// the first, its base64 read as Go reads it); `olm.package` carries the
/// CSV's `spec.release` (#1792; a number written as its digits, #1909).
#[test]
fn render_template_detects_the_type_and_fills_the_package_from_the_head() {
    let tree = common::fixtures().join("graph/tree/pkg-capital");
    let t = tree.join("catalog-templates/semver.yaml");
    let t = t.to_str().expect("utf8");
    let dir = tree.to_str().expect("utf8");
    let (code, auto, err) = run(&["render-template", t, "--bundles-from", dir]);
    assert_eq!(code, 0, "{err}");
    let (code, named, _) = run(&["render-template", "auto", t, "--bundles-from", dir]);
    assert_eq!(code, 0);
    let (code, explicit, _) = run(&["render-template", "semver", t, "--bundles-from", dir]);
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(t).expect("read");
    let (code, stdin, err) = common::run_cli(
        &["render-template", "--bundles-from", dir],
        &[],
        Some(&text),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(auto, named);
    assert_eq!(auto, explicit);
    assert_eq!(auto, stdin);
    let objs: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&auto)
        .into_iter()
        .collect::<Result<_, _>>()
        .expect("json stream");
    let pkg = &objs[0];
    assert_eq!(pkg["schema"], "olm.package");
    assert_eq!(pkg["defaultChannel"], "stable-v1");
    assert_eq!(pkg["description"], "Capital keys, read as opm reads them.");
    assert_eq!(
        pkg["icon"],
        serde_json::json!({"base64data": "PHN2Zz48L3N2Zz4=", "mediatype": "image/svg+xml"})
    );
    let ch = &objs[1];
    assert_eq!(ch["name"], "stable-v1");
    assert_eq!(
        ch["entries"],
        serde_json::json!([{"name": "capital.v1.0.0"}, {"name": "capital.v1.1.0", "replaces": "capital.v1.0.0"}])
    );
    let package_prop = |b: &serde_json::Value| {
        b["properties"]
            .as_array()
            .expect("properties")
            .iter()
            .find(|p| p["type"] == "olm.package")
            .expect("olm.package")["value"]
            .clone()
    };
    assert_eq!(
        package_prop(&objs[2]),
        serde_json::json!({"packageName": "capital", "version": "1.0.0"})
    );
    assert_eq!(
        package_prop(&objs[3]),
        serde_json::json!({"packageName": "capital", "version": "1.1.0", "release": "2"})
    );
    // An explicit type must be the template's, and an unknown one is a
    // usage error naming the types.
    let (code, _, err) = run(&["render-template", "basic", t, "--bundles-from", dir]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "template has unknown schema (\"olm.semver\"), should be \"olm.template.basic\""
        ),
        "{err}"
    );
    let (code, _, err) = run(&["render-template", "fancy", t]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "invalid template type \"fancy\", must be one of: auto, basic, semver, substitutes"
        ),
        "{err}"
    );
    // Mermaid, as opm's `-o mermaid`.
    let (code, out, _) = run(&["render-template", t, "--bundles-from", dir, "-o", "mermaid"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("graph LR"), "{out}");
}

/// `olm.template.substitutes` (operator-registry v1.73.0): the substitute
/// takes the base's place and edges, skips the base, and the base keeps
/// none; a substitute that is not above its base is refused.
#[test]
fn substitutes_template() {
    let file = common::fixtures().join("graph/substitutes.yaml");
    let text = std::fs::read_to_string(&file).expect("read");
    // The substitute without its `release: 2`: opm v1.73.0 refuses a
    // bundle with a release whose name is not <package>-v<version>-<release>
    // (capital.v1.1.0), and the template validates its result.
    let tmp = tempfile::tempdir().expect("tmp");
    let bundles = tmp.path().join("pkg-capital");
    common::copy_dir(&common::fixtures().join("graph/tree/pkg-capital"), &bundles);
    let csv = bundles.join("1.1.0/manifests/capital.clusterserviceversion.yaml");
    let with_release = std::fs::read_to_string(&csv).expect("read");
    std::fs::write(&csv, with_release.replace("  release: 2\n", "")).expect("write");
    let render = template::dir_renderer(&bundles);
    assert_eq!(
        template::detect_kind(&text, &file).expect("kind"),
        template::Kind::Substitutes
    );
    // With it, the result is refused as opm refuses it.
    let e = template::render(
        &text,
        &file,
        &template::dir_renderer(&common::fixtures().join("graph/tree/pkg-capital")),
    )
    .expect_err("release without a normalized name");
    assert!(
        e.to_string()
            .contains("does not match normalized name \"capital-v1.1.0-2\""),
        "{e}"
    );
    let cfg = template::render(&text, &file, &render).expect("renders");
    let entries: Vec<String> = cfg.channels[0]
        .entries
        .iter()
        .map(|e| format!("{}<{}{:?}{}", e.name, e.replaces, e.skips, e.skip_range))
        .collect();
    assert_eq!(
        entries,
        [
            "capital.v0.9.0<[]",
            "capital.v1.0.0<[]",
            "capital.v1.1.0<capital.v0.9.0[\"capital.v1.0.0\"]<1.0.0"
        ]
    );
    let names: Vec<&str> = cfg.bundles.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        ["capital.v0.9.0", "capital.v1.0.0", "capital.v1.1.0"]
    );
    // The substitute must be above its base (version, then release).
    let back = text.replace(
        "- name: example.com/capital:1.1.0\n  base: capital.v1.0.0",
        "- name: example.com/capital:1.0.0\n  base: capital.v1.0.0",
    );
    let e = template::render(&back, &file, &render).expect_err("not above");
    assert!(
        e.to_string().contains("base bundle \"capital.v1.0.0\" is not less than substitute bundle \"example.com/capital:1.0.0\""),
        "{e}"
    );
    // One base, one substitution.
    let twice = format!("{text}- name: example.com/capital:1.1.0\n  base: capital.v1.0.0\n");
    let e = template::render(&twice, &file, &render).expect_err("reused base");
    assert!(
        e.to_string()
            .contains("cannot reuse the same substitution base \"capital.v1.0.0\""),
        "{e}"
    );
    // The entries must be valid FBC.
    let broken = text.replace("  - name: capital.v0.9.0\n", "");
    let e = template::render(&broken, &file, &render).expect_err("invalid entries");
    assert!(
        e.to_string()
            .starts_with("render: entries are not valid FBC"),
        "{e}"
    );
}

/// One reading everywhere: a basic template's keys, and its entries'
/// fields, match regardless of case as opm's `declcfg.Meta` and Go's
/// decoding read them; keys of one entry that differ only in case are an
/// error, as opm's `extractUniqueMetaKeys` says.
#[test]
fn basic_template_keys_regardless_of_case() {
    let p = std::path::Path::new("basic.yaml");
    let text = "Schema: olm.template.basic\nEntries:\n- Schema: olm.package\n  Name: a\n  DefaultChannel: stable\n- Schema: olm.channel\n  Package: a\n  Name: stable\n  Entries:\n  - Name: a.v1.0.0\n    SkipRange: '<1.0.0'\n- Schema: olm.bundle\n  Image: example.com/a:v1.0.0\n- Schema: my.custom\n  Name: x\n";
    let (cfg, images) = template::basic_parts(text, p).expect("read");
    // An object of another schema is kept as written (opm keeps its blob).
    assert_eq!(
        cfg.others,
        [serde_json::json!({"Schema": "my.custom", "Name": "x"})]
    );
    assert_eq!(images, ["example.com/a:v1.0.0"]);
    assert_eq!(cfg.packages[0].default_channel, "stable");
    assert_eq!(cfg.channels[0].entries[0].name, "a.v1.0.0");
    assert_eq!(cfg.channels[0].entries[0].skip_range, "<1.0.0");
    assert_eq!(
        template::detect_kind(text, p).ok(),
        Some(template::Kind::Basic)
    );
    let dup = "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: a\n  Name: b\n";
    let e = template::basic_parts(dup, p).expect_err("duplicate");
    assert!(
        e.to_string().contains("duplicate keys for key \"name\""),
        "{e}"
    );
    let e = template::detect_kind("entries: []\n", p).expect_err("no schema");
    assert!(
        e.to_string()
            .ends_with("template input missing required 'schema' field"),
        "{e}"
    );
}

/// Bundle images of a template resolved through the oci module, as opm
/// pulls them: `oci:LAYOUT:TAG` references from an OCI layout on disk, and
/// with `--pull` registry references (a real registry on loopback). The
/// result is what the bundle directories give, with the image references
/// as written in the template.
#[test]
fn render_template_pulls_bundle_images_from_a_layout_or_a_registry() {
    let pkg = common::fixtures().join("graph/tree/pkg-capital");
    let tmp = tempfile::tempdir().expect("tempdir");
    let layout = tmp.path().join("layout");
    let reg = registry::Registry::start();
    for v in ["1.0.0", "1.1.0"] {
        let dir = pkg.join(v);
        for tag in [
            format!("oci:{}:{v}", layout.display()),
            reg.image("capital", v),
        ] {
            let (code, out, err) = run(&[
                "bundle",
                "build",
                dir.to_str().expect("utf8"),
                "--tag",
                &tag,
            ]);
            assert_eq!(code, 0, "{out}{err}");
        }
    }
    let text = std::fs::read_to_string(pkg.join("catalog-templates/semver.yaml")).expect("read");
    let (code, want, err) = run(&[
        "render-template",
        pkg.join("catalog-templates/semver.yaml")
            .to_str()
            .expect("utf8"),
        "--bundles-from",
        pkg.to_str().expect("utf8"),
    ]);
    assert_eq!(code, 0, "{err}");
    for (prefix, extra) in [
        (format!("oci:{}:", layout.display()), None),
        (reg.image("capital", ""), Some("--pull")),
    ] {
        let t = tmp.path().join("t.yaml");
        std::fs::write(&t, text.replace("example.com/capital:", &prefix)).expect("write");
        let mut args = vec!["render-template", t.to_str().expect("utf8")];
        args.extend(extra);
        let (code, got, err) = run(&args);
        assert_eq!(code, 0, "{prefix}: {err}");
        assert_eq!(
            got,
            want.replace("example.com/capital:", &prefix),
            "{prefix}"
        );
    }
    // A reference that does not resolve names the image.
    let t = tmp.path().join("t.yaml");
    let missing = text
        .replace("example.com/capital:1.1.0", &reg.image("capital", "9.9.9"))
        .replace("example.com/capital:", &reg.image("capital", ""));
    std::fs::write(&t, missing).expect("write");
    let (code, _, err) = run(&["render-template", t.to_str().expect("utf8"), "--pull"]);
    assert_eq!(code, 2);
    assert!(err.contains(&reg.image("capital", "9.9.9")), "{err}");
}

/// `graph check` of an FBC-enabled package whose semver template pins its
/// images by digest: the digests name no directory, so they are matched to
/// bundle directories through the repository's rendered catalog of the
/// package (`catalogs/<catalog>/<pkg>` beside `operators/<pkg>`).
#[test]
fn graph_check_resolves_template_digests_through_the_rendered_catalog() {
    let pkg = common::fixtures().join("graph/repo/operators/capital");
    let (code, out, err) = run(&["graph", "check", pkg.to_str().expect("utf8")]);
    assert_eq!(code, 0, "{out}{err}");
    let g = load::load_graphs(&pkg, None, None).expect("loads");
    assert_eq!(g[0].default_channel, "stable-v1");
    let edges: Vec<String> = g[0].channels[0]
        .entries
        .iter()
        .map(|e| format!("{}<{}", e.name, e.replaces))
        .collect();
    assert_eq!(edges, ["capital.v1.0.0<", "capital.v1.1.0<capital.v1.0.0"]);
    // Without that catalog the digests cannot be resolved: one finding.
    let tmp = tempfile::tempdir().expect("tempdir");
    let copy = tmp.path().join("capital");
    common::copy_dir(&pkg, &copy);
    let (code, out, _) = run(&["graph", "check", copy.to_str().expect("utf8")]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("graph-package-unreadable"), "{out}");
    assert!(out.contains("no tag (only a digest)"), "{out}");
}

// ---- CRD upgrade safety (fixtures/crd-safety, made by its gen.py) ----

fn crd_fixture(name: &str) -> std::path::PathBuf {
    common::fixtures().join("crd-safety").join(name)
}

/// The findings without crdify's served-version comparison: the base CRD
/// serves v1alpha1 and v1 with different schemas and no conversion
/// webhook, which that comparison reports on every change to v1 (it is
/// covered by `olm_v1_crdify_cases::served_versions`).
fn same_version(fs: Vec<olm_catalog::diag::Finding>) -> Vec<olm_catalog::diag::Finding> {
    fs.into_iter()
        .filter(|f| f.rule != "crd-served-version-incompatible")
        .collect()
}

/// Each fixture is the base CRD with one unsafe change: comparing base ->
/// fixture gives exactly that rule, once, located in both files.
#[test]
fn each_unsafe_crd_change_is_its_own_rule() {
    use olm_catalog::graph::crd_safety;
    let base = crd_fixture("base");
    let rules: Vec<&str> = crd_safety::RULES
        .iter()
        .map(|(r, _)| *r)
        .filter(|r| *r != "crd-upgrade-uncomparable")
        // Ported from crdify and operator-controller, with their own
        // fixtures: tests/olm_v1_crdify_cases.rs.
        .filter(|r| {
            ![
                "crd-upgrade-description-changed",
                "crd-upgrade-one-of-changed",
                "crd-upgrade-unhandled",
                "crd-served-version-incompatible",
            ]
            .contains(r)
        })
        .collect();
    for rule in rules {
        let dir = crd_fixture(rule.trim_start_matches("crd-upgrade-"));
        let fs = same_version(crd_safety::compare_dirs(&base, &dir));
        let got: Vec<&str> = fs.iter().map(|f| f.rule.as_str()).collect();
        assert_eq!(got, [rule], "{}: {fs:#?}", dir.display());
        let f = &fs[0];
        assert_eq!(f.level, olm_catalog::diag::Level::Error);
        assert!(f.message.contains("widgets.example.com"), "{}", f.message);
        let new_at = f.location.as_ref().expect("new location");
        assert!(new_at.file.starts_with(&dir), "{new_at:?}");
        assert!(new_at.line > 0, "{rule}: {new_at:?}");
        let old_at = f.related.first().expect("old location");
        assert!(old_at.file.starts_with(&base), "{old_at:?}");
        assert!(old_at.line > 0, "{rule}: {old_at:?}");
    }
}

#[test]
fn crd_changes_that_are_safe_give_nothing_and_fields_and_lines_are_named() {
    use olm_catalog::graph::crd_safety;
    let base = crd_fixture("base");
    // Description changed, enum value added, optional field added, bounds
    // loosened, a new served version.
    assert!(same_version(crd_safety::compare_dirs(&base, &crd_fixture("safe"))).is_empty());
    assert!(crd_safety::compare_dirs(&base, &base).is_empty());
    // Field path, version and both lines.
    let fs = same_version(crd_safety::compare_dirs(
        &base,
        &crd_fixture("maximum-tightened"),
    ));
    assert!(
        fs[0]
            .message
            .contains("version v1: field ^.spec.size: maximum decreased from 10 to 8"),
        "{}",
        fs[0].message
    );
    assert_eq!(fs[0].location.as_ref().map(|l| l.line), Some(42));
    assert_eq!(fs[0].related[0].line, 42);
    // A removed field points at its parent in the new CRD, the field in the old.
    let fs = same_version(crd_safety::compare_dirs(
        &base,
        &crd_fixture("field-removed"),
    ));
    assert!(
        fs[0].message.contains("field ^.spec.extra removed"),
        "{}",
        fs[0].message
    );
    assert_eq!(fs[0].related[0].line, 70);
    // A CRD file that does not parse: said, with where.
    let fs = crd_safety::compare_dirs(&base, &crd_fixture("uncomparable"));
    assert_eq!(fs.len(), 1, "{fs:#?}");
    assert_eq!(fs[0].rule, "crd-upgrade-uncomparable");
    assert!(
        fs[0].message.contains("widgets.crd.yaml:"),
        "{}",
        fs[0].message
    );
}

/// `graph check` compares the CRDs of every edge: replaces, skipRange.
#[test]
fn graph_check_compares_crds_on_every_edge() {
    let pkg = crd_fixture("pkg");
    let pkg = pkg.to_str().expect("utf-8");
    let (code, out, err) = run(&["graph", "check", "-o", "json", pkg]);
    assert_eq!(code, 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let msgs: Vec<String> = v["reports"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["findings"].as_array().cloned().unwrap_or_default())
        .filter(|f| f["rule"] == "crd-upgrade-maximum-tightened")
        .map(|f| f["message"].as_str().unwrap_or("").to_string())
        .collect();
    // 0.2.0 -> 0.3.0 (replaces) and 0.1.0 -> 0.3.0 (skipRange); 0.1.0 ->
    // 0.2.0 only loosens.
    assert_eq!(msgs.len(), 2, "{msgs:#?}");
    assert!(
        msgs.iter()
            .any(|m| m.contains("widget.v0.2.0 -> widget.v0.3.0 (replaces)")),
        "{msgs:#?}"
    );
    assert!(
        msgs.iter()
            .any(|m| m.contains("widget.v0.1.0 -> widget.v0.3.0 (skipRange)")),
        "{msgs:#?}"
    );
    let (code, out, _) = run(&["graph", "check", "--no-crd-checks", pkg]);
    assert_eq!(code, 0, "{out}");
}

/// `bundle validate NEW --previous OLD`.
#[test]
fn bundle_validate_previous_compares_crds() {
    let base = crd_fixture("base");
    let new = crd_fixture("scope-changed");
    let (code, out, err) = run(&[
        "bundle",
        "validate",
        new.to_str().expect("utf-8"),
        "--previous",
        base.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("crd-upgrade-scope-changed"), "{out}");
    // --previous takes one bundle.
    let (code, _, err) = run(&[
        "bundle",
        "validate",
        new.to_str().expect("utf-8"),
        new.to_str().expect("utf-8"),
        "--previous",
        base.to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 2, "{err}");
}

/// Every package of the shared corpus: CRD findings per rule, as recorded
/// in tests/data/crd_safety_counts.tsv (reviewed samples in docs/graph.md).
#[test]
fn corpus_crd_upgrade_safety_counts() {
    use olm_catalog::graph::crd_safety;
    let ops = common::corpus().join("operators");
    let mut pkgs: Vec<_> = std::fs::read_dir(&ops)
        .expect("operators/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    pkgs.sort();
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for p in &pkgs {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Ok(graphs) = load::load_graphs(p, None, None) else {
            continue;
        };
        for g in &graphs {
            for f in crd_safety::check_graph(g) {
                *counts.entry((name.clone(), f.rule)).or_default() += 1;
            }
        }
    }
    let got: String = counts
        .iter()
        .map(|((p, r), n)| format!("{p}\t{r}\t{n}\n"))
        .collect();
    let file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/crd_safety_counts.tsv");
    if std::env::var_os("OLM_CATALOG_BLESS").is_some() {
        std::fs::write(&file, &got).expect("write");
    }
    let want = std::fs::read_to_string(&file).expect("tests/data/crd_safety_counts.tsv");
    assert_eq!(
        got, want,
        "per package and rule; OLM_CATALOG_BLESS=1 rewrites after review"
    );
}

/// An edge from a newer to an older version is a graph-downgrade-edge
/// warning, not an upgrade whose CRDs are compared.
#[test]
fn crd_checks_skip_downgrade_edges() {
    use olm_catalog::graph::crd_safety;
    let mut g = load::load_graphs(&crd_fixture("pkg"), None, None)
        .expect("loads")
        .remove(0);
    let before = same_version(crd_safety::check_graph(&g)).len();
    assert_eq!(before, 2);
    // 0.1.0 skips 0.2.0: going back from 0.2.0 would lower the maximum
    // from 20 to 10 and drop an enum value, and is not checked.
    let ch = &mut g.channels[0];
    let e = ch
        .entries
        .iter_mut()
        .find(|e| e.name == "widget.v0.1.0")
        .expect("0.1.0");
    e.skips.push("widget.v0.2.0".into());
    assert_eq!(same_version(crd_safety::check_graph(&g)).len(), before);
    assert!(checks::check(&g)
        .iter()
        .any(|f| f.rule == "graph-downgrade-edge"));
}

/// `graph` errors are a type a caller can match, and say what the command
/// line prints: a missing path, YAML that does not parse (file, line,
/// column), a `ci.yaml` setting the graph cannot use, a channel the package
/// does not have.
#[test]
fn graph_errors_are_typed() {
    use olm_catalog::graph::{load, path, Error};
    let t = tempfile::tempdir().expect("tmp");
    let missing = t.path().join("nothing");
    let e = load::load_graphs(&missing, None, None).expect_err("missing");
    assert!(
        matches!(&e, Error::NotFound { path } if *path == missing),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        format!("{}: no such file or directory", missing.display())
    );

    let tpl = t.path().join("t.yaml");
    std::fs::write(&tpl, "schema: olm.semver\nstable: [\n").expect("write");
    let e = template::detect_kind(&std::fs::read_to_string(&tpl).expect("read"), &tpl)
        .expect_err("bad yaml");
    assert!(
        matches!(&e, Error::Yaml { path, line: 3, .. } if *path == tpl),
        "{e:?}"
    );
    assert!(
        e.to_string().starts_with(&format!("{}:3:", tpl.display())),
        "{e}"
    );

    let pkg = t.path().join("pkg");
    std::fs::create_dir(&pkg).expect("mkdir");
    std::fs::write(pkg.join("ci.yaml"), "updateGraph: sideways\n").expect("write");
    let e = load::CiConfig::read(&pkg).expect_err("bad mode");
    assert!(
        matches!(&e, Error::Package { path, .. } if *path == pkg.join("ci.yaml")),
        "{e}"
    );
    assert!(e.to_string().contains("updateGraph `sideways`"), "{e}");

    let fbc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/graph/rules.yaml");
    let g = load::load_graphs(&fbc, None, None)
        .expect("loads")
        .remove(0);
    let e = path::upgrade_path(&g, "0.0.1", None, Some("no-such-channel")).expect_err("channel");
    assert!(matches!(e, Error::Unknown(_)), "{e}");
}
