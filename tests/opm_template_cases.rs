//! opm v1.73.0's own template tests, case by case, as `render-template`
//! command lines (operator-registry `alpha/template/semver/semver_test.go`,
//! `alpha/template/substitutes/substitutes_test.go`,
//! `alpha/template/registry_test.go`): every table case with a
//! command-line equivalent, with the expectation the Go test asserts.
//! `docs/opm-tests.md` lists them, and the cases left out with the
//! reason.
//!
//! Where a Go test hands a function a half-built state (unlinked channels,
//! a config with no package), the case here is the template that makes
//! that state, rendered whole. Bundle images resolve offline to bundle
//! directories the tests write (`--bundles-from`: the directory named by
//! the image's tag), standing in for the Go tests' mock bundle renderers.
use std::collections::BTreeMap;
use std::path::Path;

use crate::common::{self, run};

/// One bundle directory `root/dir` of package `pkg`: a CSV named `name`
/// at `version` (quoted: prereleases and build metadata stay strings),
/// with `release` when given and `spec_extra` (YAML lines at `spec:`'s
/// indentation) added.
fn bundle(root: &Path, dir: &str, pkg: &str, name: &str, version: &str, spec_extra: &str) {
    let d = root.join(dir);
    std::fs::create_dir_all(d.join("manifests")).expect("mkdir");
    std::fs::create_dir_all(d.join("metadata")).expect("mkdir");
    std::fs::write(
        d.join("manifests/csv.yaml"),
        format!(
            "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n\
metadata:\n  name: {name}\nspec:\n  version: \"{version}\"\n{spec_extra}"
        ),
    )
    .expect("write csv");
    std::fs::write(
        d.join("metadata/annotations.yaml"),
        format!(
            "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  \
operators.operatorframework.io.bundle.manifests.v1: manifests/\n  \
operators.operatorframework.io.bundle.metadata.v1: metadata/\n  \
operators.operatorframework.io.bundle.package.v1: {pkg}\n  \
operators.operatorframework.io.bundle.channels.v1: stable\n"
        ),
    )
    .expect("write annotations");
}

/// `render-template ARGS... FILE --bundles-from DIR` of `template` (written
/// to a file in `dir`): (exit code, stdout, stderr).
fn render(dir: &Path, args: &[&str], template: &str) -> (i32, String, String) {
    let file = dir.join("template.yaml");
    std::fs::write(&file, template).expect("write template");
    let mut all = vec!["render-template"];
    all.extend(args);
    let file = file.to_str().expect("utf-8");
    let dir = dir.to_str().expect("utf-8");
    all.extend([file, "--bundles-from", dir]);
    run(&all)
}

/// A channel entry as `name<replaces[skip,...]` (parts only when set) and
/// `{skipRange}` when set.
fn entry_text(e: &serde_json::Value) -> String {
    let s = |k: &str| e[k].as_str().unwrap_or("").to_string();
    let mut t = s("name");
    if !s("replaces").is_empty() {
        t.push('<');
        t.push_str(&s("replaces"));
    }
    if let Some(skips) = e["skips"].as_array() {
        let skips: Vec<&str> = skips.iter().filter_map(|v| v.as_str()).collect();
        t.push_str(&format!("[{}]", skips.join(",")));
    }
    if !s("skipRange").is_empty() {
        t.push_str(&format!("{{{}}}", s("skipRange")));
    }
    t
}

/// The channels of a rendered JSON stream: name to entries as
/// [`entry_text`], in the order written.
fn channels(out: &str) -> BTreeMap<String, Vec<String>> {
    common::json_stream(out)
        .iter()
        .filter(|o| o["schema"] == "olm.channel")
        .map(|o| {
            let entries = o["entries"].as_array().cloned().unwrap_or_default();
            (
                o["name"].as_str().unwrap_or("").to_string(),
                entries.iter().map(entry_text).collect(),
            )
        })
        .collect()
}

/// The `olm.package` object of a rendered JSON stream.
fn package(out: &str) -> serde_json::Value {
    common::json_stream(out)
        .into_iter()
        .find(|o| o["schema"] == "olm.package")
        .expect("an olm.package")
}

/// Channels written as `(name, "entry; entry; ...")`.
fn want(chs: &[(&str, &str)]) -> BTreeMap<String, Vec<String>> {
    chs.iter()
        .map(|(n, es)| {
            (
                n.to_string(),
                es.split(';').map(|e| e.trim().to_string()).collect(),
            )
        })
        .collect()
}

// ---- semver_test.go -----------------------------------------------------

/// A semver template of package `a` whose bundles `a-v<version>` are
/// images tagged with their names, with the bundle directories written.
fn semver_template(dir: &Path, header: &str, candidate: &[&str], stable: &[&str]) -> String {
    let mut t = format!("schema: olm.semver\n{header}");
    for (channel, versions) in [("candidate", candidate), ("stable", stable)] {
        if versions.is_empty() {
            continue;
        }
        t.push_str(&format!("{channel}:\n  bundles:\n"));
        for v in versions {
            let name = format!("a-v{v}");
            bundle(dir, &name, "a", &name, v, "");
            t.push_str(&format!("  - image: repo/origin:{name}\n"));
        }
    }
    t
}

const MAJOR: &str = "generateMajorChannels: true\ngenerateMinorChannels: false\n";

/// `TestLinkChannels`: major channels of the stable archetype, linked with
/// no edge between one major channel and the next, nor across archetypes.
#[test]
fn semver_link_channels() {
    let stable_v1 = "a-v1.1.0; a-v1.2.1<a-v1.1.0; a-v1.3.1<a-v1.2.1[a-v1.1.0]";
    let stable_v0 = "a-v0.1.0; a-v0.1.1[a-v0.1.0]";
    // (case, candidate versions, stable versions, channels)
    type Case<'a> = (
        &'a str,
        &'a [&'a str],
        &'a [&'a str],
        Vec<(&'a str, &'a str)>,
    );
    let cases: [Case; 4] = [
        (
            "No edges between successive major channels",
            &[],
            &[
                "0.1.0", "0.1.1", "1.1.0", "1.2.1", "1.3.1", "2.1.0", "2.1.1", "2.3.1", "2.3.2",
            ],
            vec![
                ("stable-v0", stable_v0),
                ("stable-v1", stable_v1),
                (
                    "stable-v2",
                    "a-v2.1.0; a-v2.1.1[a-v2.1.0]; a-v2.3.1; a-v2.3.2<a-v2.1.1[a-v2.1.0,a-v2.3.1]",
                ),
            ],
        ),
        (
            "No edges between successive major channels where last edge is X change",
            &[],
            &["0.1.0", "0.1.1", "1.1.0", "1.2.1", "1.3.1", "2.1.0"],
            vec![
                ("stable-v0", stable_v0),
                ("stable-v1", stable_v1),
                ("stable-v2", "a-v2.1.0"),
            ],
        ),
        (
            "No edges between successive major channels where last edge is archetype change",
            &["2.3.2"],
            &["1.1.0", "1.2.1", "1.3.1", "2.1.0", "2.1.1", "2.3.1"],
            vec![
                ("candidate-v2", "a-v2.3.2"),
                ("stable-v1", stable_v1),
                (
                    "stable-v2",
                    "a-v2.1.0; a-v2.1.1[a-v2.1.0]; a-v2.3.1<a-v2.1.1[a-v2.1.0]",
                ),
            ],
        ),
        (
            "Minimum viable major channel",
            &[],
            &["0.1.0"],
            vec![("stable-v0", "a-v0.1.0")],
        ),
    ];
    for (name, candidate, stable, chs) in cases {
        let tmp = tempfile::tempdir().expect("tempdir");
        let t = semver_template(tmp.path(), MAJOR, candidate, stable);
        let (code, out, err) = render(tmp.path(), &[], &t);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(channels(&out), want(&chs), "{name}");
    }
}

/// The bundles of `TestGenerateChannels` (prereleases among them).
const GENERATE_VERSIONS: [&str; 16] = [
    "0.1.0",
    "0.1.1",
    "1.1.0",
    "1.2.1",
    "1.3.1",
    "2.1.0",
    "1.3.1-beta",
    "2.1.1",
    "2.3.1",
    "2.3.2",
    "3.1.0",
    "3.1.1",
    "1.3.1-alpha",
    "1.4.1",
    "1.4.1-beta1",
    "1.4.1-beta2",
];

/// `TestGenerateChannels`: minor channels linked across minor versions,
/// major channels not linked to each other, both kinds at once, and the
/// default channel by the type preference.
#[test]
fn semver_generate_channels() {
    let v1_3 =
        "a-v1.3.1-alpha; a-v1.3.1-beta; a-v1.3.1<a-v1.2.1[a-v1.1.0,a-v1.3.1-alpha,a-v1.3.1-beta]";
    let v1_4 = "a-v1.4.1-beta1; a-v1.4.1-beta2; a-v1.4.1<a-v1.3.1[a-v1.1.0,a-v1.2.1,a-v1.3.1-alpha,a-v1.3.1-beta,a-v1.4.1-beta1,a-v1.4.1-beta2]";
    let v2_3 = "a-v2.3.1; a-v2.3.2<a-v2.1.1[a-v2.1.0,a-v2.3.1]";
    let major_v1 = format!("a-v1.1.0; a-v1.2.1<a-v1.1.0; {v1_3}; {v1_4}");
    let major_v2 = format!("a-v2.1.0; a-v2.1.1[a-v2.1.0]; {v2_3}");
    let major = vec![
        ("stable-v0", "a-v0.1.0; a-v0.1.1[a-v0.1.0]"),
        ("stable-v1", major_v1.as_str()),
        ("stable-v2", major_v2.as_str()),
        ("stable-v3", "a-v3.1.0; a-v3.1.1[a-v3.1.0]"),
    ];
    let minor = vec![
        ("stable-v0.1", "a-v0.1.0; a-v0.1.1[a-v0.1.0]"),
        ("stable-v1.1", "a-v1.1.0"),
        ("stable-v1.2", "a-v1.2.1<a-v1.1.0"),
        ("stable-v1.3", v1_3),
        ("stable-v1.4", v1_4),
        ("stable-v2.1", "a-v2.1.0; a-v2.1.1[a-v2.1.0]"),
        ("stable-v2.3", v2_3),
        ("stable-v3.1", "a-v3.1.0; a-v3.1.1[a-v3.1.0]"),
    ];
    let both: Vec<(&str, &str)> = minor.iter().chain(major.iter()).copied().collect();
    let cases = [
        (
            "Edges between minor channels",
            "generateMinorChannels: true\ngenerateMajorChannels: false\ndefaultChannelTypePreference: minor\n",
            "stable-v3.1",
            &minor,
        ),
        (
            "No edges between major channels",
            "generateMinorChannels: false\ngenerateMajorChannels: true\ndefaultChannelTypePreference: major\n",
            "stable-v3",
            &major,
        ),
        (
            "Preference for minor default channel",
            "generateMinorChannels: true\ngenerateMajorChannels: true\ndefaultChannelTypePreference: minor\n",
            "stable-v3.1",
            &both,
        ),
        (
            "Preference for major default channel",
            "generateMinorChannels: true\ngenerateMajorChannels: true\ndefaultChannelTypePreference: major\n",
            "stable-v3",
            &both,
        ),
    ];
    let tmp = tempfile::tempdir().expect("tempdir");
    for (name, header, default, chs) in cases {
        let t = semver_template(tmp.path(), header, &[], &GENERATE_VERSIONS);
        let (code, out, err) = render(tmp.path(), &[], &t);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(channels(&out), want(chs), "{name}");
        assert_eq!(package(&out)["defaultChannel"], default, "{name}");
    }
}

/// `TestGetVersionsFromStandardChannel` ("sunny day case"): every stable
/// bundle is read with its version, and the package name is learned from
/// the bundles.
#[test]
fn semver_versions_from_the_stable_channel() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let versions = [
        "0.1.0",
        "0.1.1",
        "1.1.0",
        "1.2.1",
        "1.3.1",
        "2.1.0",
        "2.1.1",
        "2.3.1",
        "2.3.2",
        "1.3.1-alpha",
    ];
    let t = semver_template(tmp.path(), "", &[], &versions);
    let (code, out, err) = render(tmp.path(), &[], &t);
    assert_eq!(code, 0, "{err}");
    assert_eq!(package(&out)["name"], "a");
    let mut in_channels: Vec<String> = channels(&out)
        .into_iter()
        .inspect(|(c, _)| assert!(c.starts_with("stable-"), "{c}"))
        .flat_map(|(_, es)| es)
        .map(|e| e.split(['<', '[']).next().unwrap_or("").to_string())
        .collect();
    in_channels.sort();
    let mut names: Vec<String> = versions.iter().map(|v| format!("a-v{v}")).collect();
    names.sort();
    assert_eq!(in_channels, names);
}

/// `TestPopulatePackageMetadata`: the package takes the description and the
/// first icon of the default channel's head, each only when it has one.
#[test]
fn semver_package_metadata_from_the_head() {
    let icon = |data: &str, mt: &str| format!("  - base64data: {data}\n    mediatype: {mt}\n");
    // (case, bundles as (version, spec lines), want description, want icon)
    type Case<'a> = (
        &'a str,
        Vec<(&'a str, String)>,
        Option<&'a str>,
        Option<serde_json::Value>,
    );
    let cases: Vec<Case> = vec![
        (
            "successfully populate icon and description from head bundle",
            vec![
                (
                    "1.0.0",
                    format!(
                        "  description: Old description\n  icon:\n{}",
                        icon("b2xkZGF0YQ==", "image/png")
                    ),
                ),
                (
                    "1.1.0",
                    format!(
                        "  description: Test operator provides awesome functionality\n  icon:\n{}",
                        icon("aGVsbG93b3JsZA==", "image/svg+xml")
                    ),
                ),
            ],
            Some("Test operator provides awesome functionality"),
            Some(
                serde_json::json!({"base64data": "aGVsbG93b3JsZA==", "mediatype": "image/svg+xml"}),
            ),
        ),
        (
            "CSV has no description",
            vec![(
                "1.0.0",
                format!("  icon:\n{}", icon("aGVsbG8=", "image/png")),
            )],
            None,
            Some(serde_json::json!({"base64data": "aGVsbG8=", "mediatype": "image/png"})),
        ),
        (
            "CSV has no icon",
            vec![("1.0.0", "  description: Test description\n".to_string())],
            Some("Test description"),
            None,
        ),
        (
            "CSV has empty description",
            vec![(
                "1.0.0",
                format!(
                    "  description: \"\"\n  icon:\n{}",
                    icon("aGVsbG8=", "image/png")
                ),
            )],
            None,
            Some(serde_json::json!({"base64data": "aGVsbG8=", "mediatype": "image/png"})),
        ),
        (
            "CSV has empty icons array",
            vec![(
                "1.0.0",
                "  description: Test description\n  icon: []\n".to_string(),
            )],
            Some("Test description"),
            None,
        ),
        (
            "CSV has multiple icons - uses first one",
            vec![(
                "1.0.0",
                format!(
                    "  description: Test description\n  icon:\n{}{}",
                    icon("Zmlyc3Q=", "image/png"),
                    icon("c2Vjb25k", "image/svg+xml")
                ),
            )],
            Some("Test description"),
            Some(serde_json::json!({"base64data": "Zmlyc3Q=", "mediatype": "image/png"})),
        ),
    ];
    for (name, bundles, description, want_icon) in cases {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut t = format!("schema: olm.semver\n{MAJOR}stable:\n  bundles:\n");
        for (v, spec) in &bundles {
            let b = format!("test-operator-v{v}");
            bundle(tmp.path(), &b, "test-operator", &b, v, spec);
            t.push_str(&format!("  - image: quay.io/test/operator:{b}\n"));
        }
        let (code, out, err) = render(tmp.path(), &[], &t);
        assert_eq!(code, 0, "{name}: {err}");
        let pkg = package(&out);
        assert_eq!(pkg["defaultChannel"], "stable-v1", "{name}");
        assert_eq!(pkg["description"].as_str(), description, "{name}: {pkg}");
        assert_eq!(pkg.get("icon").cloned(), want_icon, "{name}: {pkg}");
    }
}

/// `TestBailOnVersionBuildMetadata`: bundles whose versions differ only by
/// build metadata cannot be ordered, and the render fails.
#[test]
fn semver_bails_on_versions_differing_only_by_build_metadata() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = semver_template(
        tmp.path(),
        "",
        &[],
        &[
            "0.1.0",
            "0.1.1",
            "1.1.0",
            "1.2.1",
            "1.3.1",
            "2.1.0",
            "2.1.1",
            "2.3.1",
            "2.3.2",
            "1.3.1-alpha",
            "1.3.1-alpha+2001Jan21",
            "1.3.1-alpha+2003May06",
        ],
    );
    let (code, out, err) = render(tmp.path(), &[], &t);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("differ only by build metadata"), "{err}");
}

/// `TestReadFile`: the template's fields as opm reads them: a valid one
/// renders; an unknown field, a default-channel preference for a kind not
/// generated and an unknown preference are errors naming the problem.
#[test]
fn semver_read_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let images = |vs: &[&str]| -> String {
        vs.iter()
            .map(|v| format!("        - image: quay.io/foo/olm:testoperator.v{v}\n"))
            .collect()
    };
    let all = [
        "0.1.0", "0.1.1", "0.1.2", "0.1.3", "0.2.0", "0.2.1", "0.2.2", "0.3.0", "1.0.0", "1.0.1",
        "1.1.0",
    ];
    for v in all {
        let n = format!("testoperator.v{v}");
        bundle(tmp.path(), &n, "testoperator", &n, v, "");
    }
    let channels = format!(
        "candidate:\n    bundles:\n{}fast:\n    bundles:\n{}stable:\n    bundles:\n{}",
        images(&all),
        images(&["0.2.1", "0.2.2", "0.3.0", "1.0.1", "1.1.0"]),
        images(&["1.0.1"])
    );
    let template = |major: &str, minor: &str, pref: &str| {
        format!(
            "---\nschema: olm.semver\ngenerateMajorChannels: {major}\ngenerateMinorChannels: {minor}\n\
defaultChannelTypePreference: {pref}\n{channels}"
        )
    };
    let (code, _, err) = render(tmp.path(), &[], &template("true", "true", "minor"));
    assert_eq!(code, 0, "valid: {err}");
    let unknown_prefix = format!(
        "---\nschema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\n{channels}\
invalid:\n    bundles:\n{}",
        images(&["1.0.1"])
    );
    for (name, t, says) in [
        (
            "unknown channel prefix",
            unknown_prefix,
            "unknown field \"invalid\"",
        ),
        (
            "generate/default mismatch, minor/major",
            template("true", "false", "minor"),
            "schema attribute mismatch",
        ),
        (
            "generate/default mismatch, major/minor",
            template("false", "true", "major"),
            "schema attribute mismatch",
        ),
        (
            "unknown defaultchanneltypepreference",
            template("false", "true", "foo"),
            "unknown DefaultChannelTypePreference",
        ),
    ] {
        let (code, out, err) = render(tmp.path(), &[], &t);
        assert_eq!(code, 2, "{name}: {out}{err}");
        assert!(err.contains(says), "{name}: {err}");
    }
}

// ---- substitutes_test.go ------------------------------------------------

/// The bundle directories the substitutions of the substitutes cases name:
/// `quay.io/test/testoperator-bundle:v<version>-<release>` is bundle
/// `testoperator-v<version>-<release>` (version and release, as the Go
/// tests' mock renders it).
fn substitute_bundles(dir: &Path) {
    for (version, release) in [
        ("1.0.0", "alpha"),
        ("1.1.0", "alpha"),
        ("1.2.0", "alpha"),
        ("1.3.0", "alpha"),
    ] {
        let name = format!("testoperator-v{version}-{release}");
        bundle(
            dir,
            &format!("v{version}-{release}"),
            "testoperator",
            &name,
            version,
            &format!("  release: {release}\n"),
        );
    }
}

/// An `olm.bundle` entry of package `testoperator` (or `pkg`): name,
/// version, release (empty for none), image tag.
fn sub_bundle(pkg: &str, name: &str, version: &str, release: &str, tag: &str) -> serde_json::Value {
    let mut value = serde_json::json!({"packageName": pkg, "version": version});
    if !release.is_empty() {
        value["release"] = release.into();
    }
    serde_json::json!({
        "schema": "olm.bundle",
        "name": name,
        "package": pkg,
        "image": format!("quay.io/test/{pkg}-bundle:{tag}"),
        "properties": [{"type": "olm.package", "value": value}],
    })
}

/// A plain bundle `testoperator.v<version>`.
fn plain(version: &str) -> serde_json::Value {
    sub_bundle(
        "testoperator",
        &format!("testoperator.v{version}"),
        version,
        "",
        &format!("v{version}"),
    )
}

/// A release bundle `testoperator-v<version>-<release>`.
fn released(version: &str, release: &str, tag: &str) -> serde_json::Value {
    sub_bundle(
        "testoperator",
        &format!("testoperator-v{version}-{release}"),
        version,
        release,
        tag,
    )
}

fn pkg_entry(description: Option<&str>) -> serde_json::Value {
    let mut p = serde_json::json!({"schema": "olm.package", "name": "testoperator", "defaultChannel": "stable"});
    if let Some(d) = description {
        p["description"] = d.into();
    }
    p
}

fn channel_entry(name: &str, entries: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"schema": "olm.channel", "name": name, "package": "testoperator", "entries": entries})
}

/// A substitutes template (JSON) of `entries` and `substitutions`
/// (`(name, base)`).
fn substitutes_template(entries: &[serde_json::Value], substitutions: &[(&str, &str)]) -> String {
    let subs: Vec<serde_json::Value> = substitutions
        .iter()
        .map(|(n, b)| serde_json::json!({"name": n, "base": b}))
        .collect();
    serde_json::json!({
        "schema": "olm.template.substitutes",
        "entries": entries,
        "substitutions": subs,
    })
    .to_string()
}

const IMG: &str = "quay.io/test/testoperator-bundle";

/// `TestParseSpec`: what the substitutes template reads. The successes
/// with entries that are not a catalog (a channel whose package is
/// missing) parse, and the render then refuses the entries; the errors
/// name the problem.
#[test]
fn substitutes_parse_spec() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let channel_blob = "\nschema: olm.template.substitutes\nentries:\n  - schema: olm.channel\n    name: stable\n    package: testoperator\n    blob: '{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"testoperator\",\"entries\":[{\"name\":\"testoperator.v1.0.0\"}]}'\nsubstitutions:\n  - name: testoperator.v1.1.0\n    base: testoperator.v1.0.0\n";
    let multiple =
        format!("{channel_blob}  - name: testoperator.v1.2.0\n    base: testoperator.v1.1.0\n");
    for (name, t) in [
        (
            "Success/valid template with substitutions",
            channel_blob.to_string(),
        ),
        ("Success/multiple substitutions", multiple),
    ] {
        let (code, out, err) = render(tmp.path(), &["substitutes"], &t);
        assert_eq!(code, 2, "{name}: {out}");
        assert!(!err.contains("unable to parse template"), "{name}: {err}");
        assert!(err.contains("entries are not valid FBC"), "{name}: {err}");
    }
    let (code, out, err) = render(
        tmp.path(),
        &["substitutes"],
        "\nschema: olm.template.substitutes\nentries: []\nsubstitutions: []\n",
    );
    assert_eq!(code, 0, "Success/empty template: {err}");
    assert!(common::json_stream(&out).is_empty(), "{out}");
    for (name, t, says) in [
        (
            "Error/invalid schema",
            "\nschema: olm.template.invalid\nentries: []\nsubstitutions: []\n",
            "template has unknown schema",
        ),
        (
            "Error/missing schema",
            "\nentries: []\nsubstitutions: []\n",
            "template has unknown schema",
        ),
        (
            "Error/invalid YAML",
            "\nschema: olm.template.substitutes\nentries: [\nsubstitutions: []\n",
            "decoding template schema",
        ),
    ] {
        let (code, out, err) = render(tmp.path(), &["substitutes"], t);
        assert_eq!(code, 2, "{name}: {out}");
        assert!(err.contains(says), "{name}: {err}");
    }
}

/// A substitutes case: entries, substitutions, and either the channels
/// expected (`Ok`) or a text the error contains (`Err`, empty for any).
type SubCase<'a> = (
    &'a str,
    Vec<serde_json::Value>,
    Vec<(&'a str, &'a str)>,
    Result<Vec<(&'a str, &'a str)>, &'a str>,
);

fn run_substitutes_cases(cases: Vec<SubCase>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    substitute_bundles(tmp.path());
    for (name, entries, subs, expect) in cases {
        let t = substitutes_template(&entries, &subs);
        let (code, out, err) = render(tmp.path(), &[], &t);
        match expect {
            Ok(chs) => {
                assert_eq!(code, 0, "{name}: {err}");
                assert_eq!(channels(&out), want(&chs), "{name}");
            }
            Err(says) => {
                assert_eq!(code, 2, "{name}: {out}");
                assert!(err.contains(says), "{name}: {err}");
            }
        }
    }
}

/// `TestRender`: substitutions applied in order over a catalog given as
/// entries; invalid substitutions are errors naming the problem.
#[test]
fn substitutes_render() {
    let two = || {
        vec![
            pkg_entry(Some("testoperator operator")),
            channel_entry(
                "stable",
                serde_json::json!([{"name": "testoperator.v1.0.0"}, {"name": "testoperator.v1.1.0", "replaces": "testoperator.v1.0.0"}]),
            ),
            plain("1.0.0"),
            plain("1.1.0"),
        ]
    };
    let one = || {
        vec![
            pkg_entry(Some("testoperator operator")),
            channel_entry(
                "stable",
                serde_json::json!([{"name": "testoperator.v1.0.0"}]),
            ),
            plain("1.0.0"),
        ]
    };
    let a12 = format!("{IMG}:v1.2.0-alpha");
    let a13 = format!("{IMG}:v1.3.0-alpha");
    let a11 = format!("{IMG}:v1.1.0-alpha");
    let mut three = two();
    three[1] = channel_entry(
        "stable",
        serde_json::json!([{"name": "testoperator.v1.0.0"}, {"name": "testoperator.v1.1.0", "replaces": "testoperator.v1.0.0"}, {"name": "testoperator.v1.2.0", "replaces": "testoperator.v1.1.0"}]),
    );
    three.push(plain("1.2.0"));
    let cases: Vec<SubCase> = vec![
        (
            "Success/render with single substitution",
            two(),
            vec![(&a11, "testoperator.v1.1.0")],
            Ok(vec![(
                "stable",
                "testoperator.v1.0.0; testoperator.v1.1.0; testoperator-v1.1.0-alpha<testoperator.v1.0.0[testoperator.v1.1.0]",
            )]),
        ),
        (
            "Success/render with multiple substitutions",
            two(),
            vec![
                (&a12, "testoperator.v1.1.0"),
                (&a13, "testoperator-v1.2.0-alpha"),
            ],
            Ok(vec![(
                "stable",
                "testoperator.v1.0.0; testoperator.v1.1.0; testoperator-v1.2.0-alpha; testoperator-v1.3.0-alpha<testoperator.v1.0.0[testoperator.v1.1.0,testoperator-v1.2.0-alpha]",
            )]),
        ),
        (
            "Success/render with no substitutions",
            one(),
            vec![],
            Ok(vec![("stable", "testoperator.v1.0.0")]),
        ),
        (
            "Error/render with substitution that has no matching base",
            one(),
            vec![(&a12, "nonexistent.v1.0.0")],
            Err(""),
        ),
        (
            "Error/render with invalid substitution (empty name)",
            two(),
            vec![("", "testoperator.v1.1.0")],
            Err("substitution name cannot be empty"),
        ),
        (
            "Error/render with invalid substitution (empty base)",
            two(),
            vec![(&a12, "")],
            Err("substitution base cannot be empty"),
        ),
        (
            "Error/render with invalid substitution (same name and base)",
            two(),
            vec![("testoperator.v1.1.0", "testoperator.v1.1.0")],
            Err("substitution name and base cannot be the same"),
        ),
        (
            "Error/render with duplicate base in substitutions",
            two(),
            vec![(&a12, "testoperator.v1.1.0"), (&a13, "testoperator.v1.1.0")],
            Err("cannot reuse the same substitution base"),
        ),
        (
            "Error/render with same substitution name for different bases",
            three,
            vec![(&a13, "testoperator.v1.1.0"), (&a13, "testoperator.v1.2.0")],
            Err("cannot reuse the same substitution"),
        ),
    ];
    run_substitutes_cases(cases);
}

/// `TestProcessSubstitution`, each config given as the template's entries:
/// the substitute takes the base's edges and skips it, the base keeps
/// none, and entries that replaced or skipped the base now name the
/// substitute.
#[test]
fn substitutes_process_substitution() {
    let alpha_pair = |extra: serde_json::Value| {
        let mut second = serde_json::json!({"name": "testoperator-v1.1.0-alpha", "replaces": "testoperator-v1.0.0-alpha"});
        if let (Some(s), Some(e)) = (second.as_object_mut(), extra.as_object()) {
            s.extend(e.clone());
        }
        serde_json::json!([{"name": "testoperator-v1.0.0-alpha"}, second])
    };
    let alpha_bundles = || {
        vec![
            released("1.0.0", "alpha", "v1.0.0"),
            released("1.1.0", "alpha", "v1.1.0-alpha"),
        ]
    };
    let a12 = format!("{IMG}:v1.2.0-alpha");
    let a11 = format!("{IMG}:v1.1.0-alpha");
    let mut replaces = vec![
        pkg_entry(Some("testoperator operator")),
        channel_entry("stable", alpha_pair(serde_json::json!({}))),
    ];
    replaces.extend(alpha_bundles());
    let mut skips = vec![
        pkg_entry(Some("testoperator operator")),
        channel_entry(
            "stable",
            alpha_pair(
                serde_json::json!({"skips": ["testoperator-v0.9.0-alpha"], "skipRange": ">=0.9.0 <1.1.0"}),
            ),
        ),
    ];
    skips.extend(alpha_bundles());
    let mut two_channels = vec![
        pkg_entry(None),
        channel_entry("stable", alpha_pair(serde_json::json!({}))),
        channel_entry("beta", alpha_pair(serde_json::json!({}))),
    ];
    two_channels.extend(alpha_bundles());
    let substituted = "testoperator-v1.0.0-alpha; testoperator-v1.1.0-alpha; testoperator-v1.2.0-alpha<testoperator-v1.0.0-alpha[testoperator-v1.1.0-alpha]";
    let cases: Vec<SubCase> = vec![
        (
            "Success/substitution with replaces relationship",
            replaces,
            vec![(&a12, "testoperator-v1.1.0-alpha")],
            Ok(vec![("stable", substituted)]),
        ),
        (
            "Success/substitution with skips and skipRange",
            skips,
            vec![(&a12, "testoperator-v1.1.0-alpha")],
            Ok(vec![(
                "stable",
                "testoperator-v1.0.0-alpha; testoperator-v1.1.0-alpha; testoperator-v1.2.0-alpha<testoperator-v1.0.0-alpha[testoperator-v0.9.0-alpha,testoperator-v1.1.0-alpha]{>=0.9.0 <1.1.0}",
            )]),
        ),
        (
            "Error/substitution with no matching base",
            vec![
                pkg_entry(None),
                channel_entry("stable", serde_json::json!([{"name": "testoperator.v1.0.0"}])),
                plain("1.0.0"),
            ],
            vec![(&a12, "nonexistent.v1.0.0")],
            Err(""),
        ),
        (
            "Success/substitution with multiple channels",
            two_channels,
            vec![(&a12, "testoperator-v1.1.0-alpha")],
            Ok(vec![("beta", substituted), ("stable", substituted)]),
        ),
        (
            "Success/substitution updates existing references",
            vec![
                pkg_entry(None),
                channel_entry(
                    "stable",
                    serde_json::json!([{"name": "testoperator.v1.0.0"}, {"name": "testoperator.v1.1.0", "replaces": "testoperator.v1.0.0"}, {"name": "testoperator.v1.2.0", "replaces": "testoperator.v1.1.0"}]),
                ),
                plain("1.0.0"),
                plain("1.1.0"),
                plain("1.2.0"),
            ],
            vec![(&a11, "testoperator.v1.1.0")],
            Ok(vec![(
                "stable",
                "testoperator.v1.0.0; testoperator.v1.1.0; testoperator.v1.2.0<testoperator-v1.1.0-alpha[testoperator.v1.1.0]; testoperator-v1.1.0-alpha<testoperator.v1.0.0[testoperator.v1.1.0]",
            )]),
        ),
    ];
    run_substitutes_cases(cases);
}

/// `TestBoundaryCases` with a command-line form: entries that are not a
/// catalog, substitutions missing a name or base or naming the base, a
/// base that is not in the catalog, a substitute not above its base.
#[test]
fn substitutes_boundary_cases() {
    let foreign = || sub_bundle("test", "test.v0.9.0", "0.9.0", "", "v0.9.0");
    let a12 = format!("{IMG}:v1.2.0-alpha");
    let a11 = format!("{IMG}:v1.1.0-alpha");
    let test_config = || {
        vec![
            pkg_entry(None),
            channel_entry(
                "stable",
                serde_json::json!([{"name": "testoperator.v1.0.0"}, {"name": "testoperator.v1.1.0", "replaces": "testoperator.v1.0.0"}, {"name": "testoperator.v1.2.0", "replaces": "testoperator.v1.1.0", "skips": ["testoperator.v1.0.0"]}]),
            ),
            plain("1.0.0"),
            plain("1.1.0"),
            plain("1.2.0"),
        ]
    };
    let test_alpha = "quay.io/test/test-bundle:v1.0.0-alpha".to_string();
    let cases: Vec<SubCase> = vec![
        (
            "Error/empty DeclarativeConfig",
            vec![foreign()],
            vec![(&test_alpha, "test.v0.9.0")],
            Err("unknown package"),
        ),
        (
            "Error/DeclarativeConfig with empty channels",
            vec![foreign()],
            vec![(&test_alpha, "test.v0.9.0")],
            Err("unknown package"),
        ),
        (
            "Error/channel with empty entries",
            vec![
                pkg_entry(None),
                channel_entry("stable", serde_json::json!([])),
                foreign(),
            ],
            vec![(&test_alpha, "test.v0.9.0")],
            Err("unknown package"),
        ),
        (
            "Error/substitution with empty name",
            test_config(),
            vec![("", "testoperator.v1.1.0")],
            Err("substitution name cannot be empty"),
        ),
        (
            "Error/substitution with empty base",
            test_config(),
            vec![(&a12, "")],
            Err("substitution base cannot be empty"),
        ),
        (
            "Error/substitution with same name and base",
            test_config(),
            vec![(&a11, &a11)],
            Err("substitution name and base cannot be the same"),
        ),
        (
            "Success/template with nil context",
            vec![
                pkg_entry(Some("testoperator operator")),
                channel_entry(
                    "stable",
                    serde_json::json!([{"name": "testoperator-v1.0.0-alpha"}]),
                ),
                released("1.0.0", "alpha", "v1.0.0"),
            ],
            vec![],
            Ok(vec![("stable", "testoperator-v1.0.0-alpha")]),
        ),
        (
            "Error/substitution with invalid declarative config - missing package",
            vec![
                pkg_entry(None),
                channel_entry(
                    "stable",
                    serde_json::json!([{"name": "testoperator.v1.0.0"}]),
                ),
                plain("1.0.0"),
                plain("1.1.0"),
            ],
            vec![(&a11, "testoperator.v1.0.0")],
            Err("not found in any channel entries"),
        ),
        (
            "Error/base bundle does not exist in catalog",
            vec![
                pkg_entry(None),
                channel_entry(
                    "stable",
                    serde_json::json!([{"name": "testoperator.v1.1.0"}]),
                ),
                plain("1.1.0"),
            ],
            vec![(&a12, "testoperator.v1.0.0")],
            Err("does not exist in catalog"),
        ),
        (
            "Error/substitute bundle version not greater than base bundle",
            vec![
                pkg_entry(None),
                channel_entry(
                    "stable",
                    serde_json::json!([{"name": "testoperator-v1.2.0-beta"}]),
                ),
                released("1.2.0", "beta", "v1.2.0-beta"),
            ],
            vec![(&a12, "testoperator-v1.2.0-beta")],
            Err("is not less than"),
        ),
    ];
    run_substitutes_cases(cases);
}

// ---- registry_test.go ---------------------------------------------------

/// `TestTemplateRegistry_CreateTemplateBySchema`, `_CreateTemplateByType`,
/// `TestUnknownSchemaError_Error` and `_RenderBundlePropagation`, through
/// `render-template`'s type detection: a template of a known schema goes
/// to that template (which reads it; here, the semver template refusing a
/// field it does not know), an unknown or missing schema and text that is
/// not YAML are refused by the detection with opm's words; a type named on
/// the command line must be one of the three.
#[test]
fn registry_detects_the_template_type() {
    let tmp = tempfile::tempdir().expect("tempdir");
    bundle(
        tmp.path(),
        "v1.0.0",
        "example",
        "example.v1.0.0",
        "1.0.0",
        "",
    );
    for (name, t) in [
        (
            "create template from valid YAML input",
            "schema: olm.semver\nbundles:\n  - image: example.com/bundle:v1.0.0",
        ),
        (
            "create template from valid JSON input",
            r#"{"schema": "olm.semver", "bundles": [{"image": "example.com/bundle:v1.0.0"}]}"#,
        ),
    ] {
        let (code, out, err) = render(tmp.path(), &[], t);
        assert_eq!(code, 2, "{name}: {out}");
        assert!(!err.contains("auto-detecting"), "{name}: {err}");
        assert!(err.contains("unknown field \"bundles\""), "{name}: {err}");
    }
    for (name, t, says) in [
        (
            "error on unregistered schema",
            "schema: olm.unknown",
            "unknown template schema: olm.unknown",
        ),
        (
            "complex schema name (UnknownSchemaError)",
            "schema: custom.template.v1.0",
            "unknown template schema: custom.template.v1.0",
        ),
        (
            "error on missing schema field",
            "bundles: []",
            "missing required 'schema' field",
        ),
        (
            "error on invalid YAML",
            r"schema: olm.semver\n\tinvalid: [unclosed",
            "decoding template input",
        ),
    ] {
        let (code, out, err) = render(tmp.path(), &[], t);
        assert_eq!(code, 2, "{name}: {out}");
        assert!(err.contains(says), "{name}: {err}");
    }
    // CreateTemplateByType: a registered type renders; an unknown one is
    // refused naming it.
    let semver = "schema: olm.semver\nstable:\n  bundles:\n  - image: example.com/bundle:v1.0.0\n";
    let basic = "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: example\n  defaultChannel: stable\n- schema: olm.channel\n  package: example\n  name: stable\n  entries:\n  - name: example.v1.0.0\n- schema: olm.bundle\n  image: example.com/bundle:v1.0.0\n";
    for (name, ty, t) in [
        ("create template for registered type", "semver", semver),
        (
            "create template for multiple registered types",
            "basic",
            basic,
        ),
    ] {
        let (code, by_type, err) = render(tmp.path(), &[ty], t);
        assert_eq!(code, 0, "{name}: {err}");
        // RenderBundlePropagation: by type and by schema, the bundle image
        // is rendered through the same renderer, its reference kept.
        let (code, by_schema, err) = render(tmp.path(), &[], t);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(by_type, by_schema, "{name}");
        let images: Vec<serde_json::Value> = common::json_stream(&by_type)
            .into_iter()
            .filter(|o| o["schema"] == "olm.bundle")
            .map(|o| o["image"].clone())
            .collect();
        assert_eq!(images, ["example.com/bundle:v1.0.0"], "{name}");
    }
    let (code, out, err) = render(tmp.path(), &["unknown"], semver);
    assert_eq!(code, 2, "error on unregistered type: {out}");
    assert!(
        err.contains("invalid template type \"unknown\""),
        "error on unregistered type: {err}"
    );
}
