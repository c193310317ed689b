//! `validate` on real and broken catalogs.
use crate::common;

use std::process::Command;

#[test]
fn corpus_catalogs_validate_and_broken_ones_do_not() {
    for pkg in ["kube-green", "kepler-operator", "koku-metrics-operator"] {
        let dir = common::corpus().join("catalogs/v4.18").join(pkg);
        let o = Command::new(common::bin())
            .arg("validate")
            .arg(&dir)
            .output()
            .expect("run");
        assert!(
            o.status.success(),
            "{pkg}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
    let t = tempfile::tempdir().expect("tmp");
    std::fs::write(
        t.path().join("c.yaml"),
        "schema: olm.package\nname: p\ndefaultChannel: missing\n---\nschema: olm.channel\nname: a\npackage: p\nentries:\n- name: p.v1\n- name: p.v2\n---\nschema: olm.bundle\nname: p.v1\npackage: p\nimage: x\nproperties:\n- type: olm.package\n  value: {packageName: p, version: 1.0.0}\n",
    )
    .expect("write");
    let o = Command::new(common::bin())
        .arg("validate")
        .arg(t.path())
        .arg("--format")
        .arg("json")
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("not found in channels list"), "{out}");
    assert!(out.contains("multiple channel heads"), "{out}");
    assert!(
        out.contains("\\\"p.v2\\\" not found in package") || out.contains("p.v2"),
        "{out}"
    );
}

#[test]
fn render_of_a_bundle_dir_is_go_indented_json() {
    let dir = common::corpus().join("operators/etcd/0.9.4");
    let o = Command::new(common::bin())
        .arg("render")
        .arg(&dir)
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("{\n    \"schema\": \"olm.bundle\",\n    \"name\": \"etcdoperator.v0.9.4\",\n    \"package\": \"etcd\",\n    \"image\": \"\",\n    \"properties\": ["), "{}", &out[..200.min(out.len())]);
    assert!(out.contains("\"type\": \"olm.bundle.object\""));
}

#[test]
fn init_writes_an_olm_package_as_opm_init() {
    let t = tempfile::tempdir().expect("tmp");
    let readme = t.path().join("README.md");
    std::fs::write(&readme, "# etcd\nA key-value store.\n").expect("write");
    let png = t.path().join("icon.png");
    std::fs::write(&png, [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]).expect("write");
    let (readme_s, png_s) = (
        readme.to_str().expect("utf-8"),
        png.to_str().expect("utf-8"),
    );
    let (code, out, err) = common::run_cli(
        &[
            "init",
            "etcd",
            "--default-channel",
            "stable",
            "--description",
            readme_s,
            "--icon",
            png_s,
        ],
        &[],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "{\n    \"schema\": \"olm.package\",\n    \"name\": \"etcd\",\n    \"defaultChannel\": \"stable\",\n    \"icon\": {\n        \"base64data\": \"iVBORw0KGgo=\",\n        \"mediatype\": \"image/png\"\n    },\n    \"description\": \"# etcd\\nA key-value store.\\n\"\n}\n"
    );
    // YAML, as opm's; no default channel, no icon: left out.
    let (code, out, err) = common::run_cli(
        &["init", "etcd", "--description", readme_s, "-o", "yaml"],
        &[],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "---\ndescription: |\n  # etcd\n  A key-value store.\nname: etcd\nschema: olm.package\n"
    );
    // What init writes, with a channel and a bundle, is a valid catalog.
    let cat = t.path().join("cat");
    std::fs::create_dir(&cat).expect("mkdir");
    let (code, out, err) = common::run_cli(&["init", "p", "-c", "stable", "-i", png_s], &[], None);
    assert_eq!(code, 0, "{err}");
    std::fs::write(cat.join("index.json"), out).expect("write");
    std::fs::write(
        cat.join("rest.yaml"),
        "schema: olm.channel\nname: stable\npackage: p\nentries:\n- name: p.v1\n---\nschema: olm.bundle\nname: p.v1\npackage: p\nimage: x\nproperties:\n- type: olm.package\n  value: {packageName: p, version: 1.0.0}\n",
    )
    .expect("write");
    let (code, out, err) = common::run_cli(&["validate", cat.to_str().expect("utf-8")], &[], None);
    assert_eq!(code, 0, "{out}{err}");
    // An icon that is no image: exit 2, the file named.
    let (code, _, err) = common::run_cli(&["init", "p", "--icon", readme_s], &[], None);
    assert_eq!(code, 2);
    assert!(err.contains("README.md: the icon is not an image"), "{err}");
    let (code, _, err) = common::run_cli(&["init", "p", "-i", "/nonexistent/icon.png"], &[], None);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/icon.png"), "{err}");
    // SVG, which opm's byte sniffing misses, is an image here.
    let svg = t.path().join("icon.svg");
    std::fs::write(
        &svg,
        "<?xml version=\"1.0\"?>\n<!-- logo -->\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
    )
    .expect("write");
    let (code, out, err) = common::run_cli(
        &["init", "p", "-i", svg.to_str().expect("utf-8")],
        &[],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"mediatype\": \"image/svg+xml\""), "{out}");
}

/// A broken catalog: every finding names its file and line, and `-o json`
/// / `-o yaml` carry `opm validate`'s `passed` and `error.message`.
#[test]
fn findings_point_at_file_and_line_and_carry_opms_verdict() {
    let t = tempfile::tempdir().expect("tmp");
    std::fs::write(
        t.path().join("c.yaml"),
        "schema: olm.package\nname: p\ndefaultChannel: missing\n---\nschema: olm.channel\nname: a\npackage: p\nentries:\n- name: p.v1\n- name: p.v2\n  skipRange: '>=1.0.0 <<2'\n---\nschema: olm.bundle\nname: p.v1\npackage: p\nimage: x\nproperties:\n- type: olm.package\n  value: {packageName: p, version: 1.0.x}\n",
    )
    .expect("write");
    std::fs::write(
        t.path().join("d.json"),
        "{\n  \"schema\": \"olm.deprecations\",\n  \"package\": \"p\",\n  \"entries\": [\n    {\"reference\": {\"schema\": \"olm.bundle\", \"name\": \"p.v9\"}, \"message\": \"old\"}\n  ]\n}\n",
    )
    .expect("write");
    let json = |format: &str| {
        let o = Command::new(common::bin())
            .args(["validate", "-o", format])
            .arg(t.path())
            .output()
            .expect("run");
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let out: serde_json::Value = serde_json::from_str(&json("json")).expect("json");
    assert_eq!(out["passed"], false);
    let message = out["error"]["message"].as_str().expect("message");
    let located: Vec<(String, String, u64)> = out["reports"][0]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            let at = &f["location"];
            let file = at["file"].as_str().unwrap_or("-");
            let file = file.rsplit('/').next().unwrap_or(file).to_string();
            (
                f["rule"].as_str().unwrap_or("").to_string(),
                file,
                at["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    for expected in [
        ("fbc-default-channel", "c.yaml", 3),
        ("fbc-entry-unknown-bundle", "c.yaml", 10),
        ("fbc-skip-range", "c.yaml", 11),
        ("fbc-bundle-version", "c.yaml", 19),
        ("fbc-deprecation-reference", "d.json", 5),
    ] {
        let expected = (expected.0.to_string(), expected.1.to_string(), expected.2);
        assert!(located.contains(&expected), "{expected:?} in {located:?}");
    }
    assert!(message.contains("c.yaml:3: "), "{message}");
    assert!(message.contains("not found in channels list"), "{message}");

    let yaml = json("yaml");
    assert!(
        yaml.starts_with("passed: false\n") || yaml.contains("\npassed: false\n"),
        "{yaml}"
    );
    assert!(yaml.contains("error:\n  message: "), "{yaml}");

    // A syntax error is a finding at its line, not a bare message.
    std::fs::write(t.path().join("e.yaml"), "schema: olm.package\nname: [q\n").expect("write");
    let o = Command::new(common::bin())
        .arg("validate")
        .arg(t.path())
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("e.yaml:"), "{out}");

    // And a valid catalog passes with no error object.
    let ok = common::corpus().join("catalogs/v4.18/kube-green");
    let o = Command::new(common::bin())
        .args(["validate", "-o", "json"])
        .arg(&ok)
        .output()
        .expect("run");
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["passed"], true);
    assert!(v.get("error").is_none());
}

/// The findings of the whole catalog read at once, sorted as a report.
fn whole_catalog_findings(dir: &std::path::Path) -> Vec<olm_catalog::diag::Finding> {
    use olm_catalog::fbc::{validate, DeclarativeConfig};
    let (cfg, sources) = DeclarativeConfig::load_path_located(dir).expect("loads");
    sorted(validate::validate_located(&cfg, &sources))
}

fn sorted(findings: Vec<olm_catalog::diag::Finding>) -> Vec<olm_catalog::diag::Finding> {
    let mut r = olm_catalog::diag::Report {
        subject: String::new(),
        findings,
    };
    r.sort();
    r.findings
}

/// validate_path reads a package's files together and the packages one
/// group at a time; its findings are those of reading everything at once,
/// for packages split over files, files holding several packages, and
/// the first unreadable file in path order.
#[test]
fn validation_by_package_group_finds_what_the_whole_catalog_does() {
    use olm_catalog::fbc::validate::validate_path;
    let v418 = common::corpus().join("catalogs/v4.18");
    let by_group = sorted(validate_path(&v418).expect("validates"));
    assert_eq!(by_group, whole_catalog_findings(&v418));

    let t = tempfile::tempdir().expect("tmp");
    let w = |name: &str, text: &str| {
        let path = t.path().join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    // p: package in one file, a channel in another, its bundle in a third
    // that also holds q's package; the channel is declared twice.
    w(
        "a/package.yaml",
        "schema: olm.package\nname: p\ndefaultChannel: stable\n",
    );
    w("b/channel.json", "{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"p\",\"entries\":[{\"name\":\"p.v1\"},{\"name\":\"p.v2\",\"replaces\":\"p.v1\"}]}\n{\"schema\":\"olm.channel\",\"name\":\"stable\",\"package\":\"p\",\"entries\":[{\"name\":\"p.v1\"}]}");
    w("c/mixed.yaml", "schema: olm.bundle\nname: p.v1\npackage: p\nimage: x\nproperties:\n- type: olm.package\n  value: {packageName: p, version: 1.0.0}\n---\nschema: olm.package\nname: q\n");
    // r: a channel of a package declared nowhere.
    w(
        "d/r.yaml",
        "schema: olm.channel\nname: s\npackage: r\nentries:\n- name: r.v1\n",
    );
    let by_group = sorted(validate_path(t.path()).expect("validates"));
    assert!(by_group.len() >= 4, "{by_group:#?}");
    assert_eq!(by_group, whole_catalog_findings(t.path()));

    // Two unreadable files: the first in path order is the finding.
    w("e/bad.yaml", "schema: olm.channel\nname: [\n");
    w(
        "f/bad.json",
        "{\"schema\":\"olm.bundle\",\"name\":5,\"package\":\"p\"}",
    );
    w(
        "c/worse.json",
        "{\"schema\":\"olm.channel\",\"name\":\"x\",\"package\":\"q\",\"entries\":7}",
    );
    let found = validate_path(t.path()).expect("validates");
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].rule, "fbc-load");
    let at = found[0].location.as_ref().expect("placed");
    assert!(at.file.ends_with("c/worse.json"), "{at:?}");
    let whole = olm_catalog::fbc::DeclarativeConfig::load_path_located(t.path())
        .expect_err("the whole catalog does not load");
    assert!(whole.to_string().contains("c/worse.json"), "{whole}");
}

/// A symbolic link to a directory inside a catalog: opm's `fs.WalkDir`
/// does not walk into it and reads it as a file, which fails. `validate`
/// and `catalog build` refuse it the same way (the build would otherwise
/// ship files `validate` never read) unless `.indexignore` excludes it.
#[test]
fn a_linked_directory_is_refused_unless_ignored() {
    let t = tempfile::tempdir().expect("tmp");
    let root = t.path().join("catalog");
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir_all(root.join("etcd")).expect("mkdir");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let kube_green = common::corpus().join("catalogs/v4.18/kube-green/catalog.yaml");
    std::fs::copy(&kube_green, root.join("etcd/catalog.yaml")).expect("copy");
    std::fs::write(elsewhere.join("broken.yaml"), "schema: olm.package\n").expect("write");
    std::os::unix::fs::symlink(&elsewhere, root.join("linked")).expect("symlink");
    let run = |args: &[&str]| {
        let o = Command::new(common::bin())
            .args(args)
            .output()
            .expect("run");
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
        )
    };
    let dir = root.to_str().expect("utf-8");
    let (code, out) = run(&["validate", dir]);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("linked") && out.contains("symbolic link to a directory"),
        "{out}"
    );
    let layout = t.path().join("layout");
    let tag = format!("oci:{}:v1", layout.display());
    let (code, out) = run(&["catalog", "build", dir, "--tag", &tag]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("symbolic link to a directory"), "{out}");
    assert!(!layout.join("index.json").exists(), "nothing built");

    std::fs::write(root.join(".indexignore"), "linked\n").expect("write");
    let (code, out) = run(&["validate", dir]);
    assert_eq!(code, 0, "ignored, the link is not read: {out}");
}

/// opm decodes FBC objects with Go's `encoding/json`, which matches a
/// struct field by a key equal to its name regardless of case (opm keeps
/// this for its docs' upper-camel-case examples): such a catalog validates
/// and renders as the same catalog spelled in lower camel case.
#[test]
fn field_names_match_regardless_of_case_as_go_decodes_them() {
    let lower = "\
schema: olm.package
name: foo
defaultChannel: stable
icon: {base64data: PHN2Zz48L3N2Zz4=, mediatype: image/svg+xml}
---
schema: olm.channel
package: foo
name: stable
entries:
- {name: foo.v0.1.0}
- {name: foo.v0.2.0, replaces: foo.v0.1.0, skipRange: '<0.2.0'}
---
schema: olm.bundle
package: foo
name: foo.v0.1.0
image: quay.io/x/foo-bundle:v0.1.0
properties: [{type: olm.package, value: {packageName: foo, version: 0.1.0}}]
relatedImages: [{name: operator, image: 'quay.io/x/foo:v0.1.0'}]
---
schema: olm.bundle
package: foo
name: foo.v0.2.0
image: quay.io/x/foo-bundle:v0.2.0
properties: [{type: olm.package, value: {packageName: foo, version: 0.2.0}}]
---
schema: olm.deprecations
package: foo
entries:
- {reference: {schema: olm.bundle, name: foo.v0.1.0}, message: old}
";
    let upper = lower
        .replace("schema:", "Schema:")
        .replace("name:", "Name:")
        .replace("package:", "Package:")
        .replace("defaultChannel:", "DefaultChannel:")
        .replace("icon:", "Icon:")
        .replace("base64data:", "Base64Data:")
        .replace("mediatype:", "MediaType:")
        .replace("entries:", "Entries:")
        .replace("replaces:", "Replaces:")
        .replace("skipRange:", "SkipRange:")
        .replace("image:", "Image:")
        .replace("properties:", "Properties:")
        .replace("type:", "Type:")
        .replace("value:", "Value:")
        .replace("relatedImages:", "RelatedImages:")
        .replace("reference:", "Reference:")
        .replace("message:", "Message:")
        // Inside a property's value the keys are the property's own.
        .replace("PackageName:", "packageName:");
    assert_ne!(upper, lower);
    let t = tempfile::tempdir().expect("tmp");
    let render = |text: &str, name: &str| {
        let dir = t.path().join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("catalog.yaml"), text).expect("write");
        let d = dir.to_str().expect("utf-8").to_string();
        let (code, out, err) = common::run(&["validate", &d]);
        assert_eq!(code, 0, "{name}: {out}{err}");
        let (code, out, err) = common::run(&["render", &d, "-o", "json"]);
        assert_eq!(code, 0, "{name}: {err}");
        out
    };
    let want = render(lower, "lower");
    assert!(want.contains("\"defaultChannel\": \"stable\""), "{want}");
    assert!(want.contains("\"skipRange\": \"<0.2.0\""), "{want}");
    assert_eq!(render(&upper, "upper"), want);
}

/// opm decodes property values into Go structs (`property.Parse`), so a
/// value's keys match the struct's field names regardless of case, and
/// render keeps the value as written.
#[test]
fn property_value_fields_match_regardless_of_case_as_opm_decodes_them() {
    let catalog = |pkg: &str, gvk: &str| {
        format!(
            "\
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
- {{name: foo.v0.1.0}}
- {{name: foo.v0.2.0, replaces: foo.v0.1.0}}
---
schema: olm.bundle
package: foo
name: foo.v0.1.0
image: quay.io/x/foo-bundle:v0.1.0
properties:
- {{type: olm.package, value: {{{pkg}, {v}: 0.1.0}}}}
- {{type: olm.gvk, value: {gvk}}}
---
schema: olm.bundle
package: foo
name: foo.v0.2.0
image: quay.io/x/foo-bundle:v0.2.0
properties:
- {{type: olm.package, value: {{{pkg}, {v}: 0.2.0}}}}
",
            v = if pkg.starts_with("packageName") {
                "version"
            } else {
                "Version"
            }
        )
    };
    let t = tempfile::tempdir().expect("tmp");
    let write = |name: &str, text: &str| {
        let dir = t.path().join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("catalog.yaml"), text).expect("write");
        dir.to_str().expect("utf-8").to_string()
    };
    let lower = write(
        "lower",
        &catalog("packageName: foo", "{group: g.io, kind: K, version: v1}"),
    );
    // `\u212A` (Kelvin sign) folds to `k` as Go folds field names.
    let cased = write(
        "cased",
        &catalog(
            "PackageName: foo",
            "{GROUP: g.io, \"\\u212Aind\": K, Version: v1}",
        ),
    );
    for d in [&lower, &cased] {
        let (code, out, err) = common::run(&["validate", d]);
        assert_eq!(code, 0, "{d}: {out}{err}");
        assert!(!out.contains("needs a string"), "{d}: {out}");
    }
    // The value is read, not ignored: another package's name is refused.
    let other = write(
        "other",
        &catalog("PackageName: bar", "{group: g.io, kind: K, version: v1}"),
    );
    let (code, out, _) = common::run(&["validate", &other]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("\\\"bar\\\"") || out.contains("\"bar\""),
        "{out}"
    );
    // A second spelling of a field with the wrong type fails Go's decoding.
    let bad = write(
        "bad",
        &catalog(
            "packageName: foo, PACKAGENAME: 1",
            "{group: g.io, kind: K, version: v1}",
        ),
    );
    let (code, out, _) = common::run(&["validate", &bad]);
    assert_eq!(code, 1, "{out}");
    // The graph reads the versions from the cased values too.
    let path = |d: &str| {
        let (code, out, err) = common::run(&["graph", "path", d, "--from", "0.1.0", "-o", "json"]);
        assert_eq!(code, 0, "{d}: {err}");
        out
    };
    let want = path(&lower);
    assert!(want.contains("0.2.0"), "{want}");
    assert_eq!(path(&cased), want.replace(&lower, &cased));
    // Render keeps each value as written.
    let (code, out, err) = common::run(&["render", &cased, "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"PackageName\": \"foo\""), "{out}");
    assert!(out.contains("\"GROUP\": \"g.io\""), "{out}");
    assert!(out.contains("\"\u{212A}ind\": \"K\""), "{out}");
}

/// opm re-encodes every catalog object from a `map[string]interface{}`
/// (`Meta.UnmarshalJSON`), so a number read from a catalog file, JSON or
/// YAML, is a float64 from then on: `render` writes `1.0` and `1e3` as
/// `1` and `1000`, an integer past 2^53 rounded, and keys sorted.
#[test]
fn catalog_numbers_render_as_opms_float64() {
    let t = tempfile::tempdir().expect("tmp");
    let head = "{\"schema\":\"olm.package\",\"name\":\"foo\",\"defaultChannel\":\"stable\"}\n\
                {\"schema\":\"olm.channel\",\"package\":\"foo\",\"name\":\"stable\",\"entries\":[{\"name\":\"foo.v1.0.0\"}]}\n";
    std::fs::create_dir(t.path().join("json")).expect("mkdir");
    std::fs::write(
        t.path().join("json/c.json"),
        format!(
            "{head}{{\"schema\":\"olm.bundle\",\"package\":\"foo\",\"name\":\"foo.v1.0.0\",\"image\":\"i\",\"properties\":[\
             {{\"type\":\"olm.package\",\"value\":{{\"version\":\"1.0.0\",\"packageName\":\"foo\"}}}},\
             {{\"type\":\"custom\",\"value\":{{\"b\":1.0,\"a\":[1e3,12345678901234567890,4.10,0.5]}}}}]}}\n\
             {{\"schema\":\"x.other\",\"name\":\"o\",\"num\":2.0}}\n"
        ),
    )
    .expect("write");
    std::fs::create_dir(t.path().join("yaml")).expect("mkdir");
    std::fs::write(
        t.path().join("yaml/c.yaml"),
        "schema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v1.0.0\n---\n\
         schema: olm.bundle\npackage: foo\nname: foo.v1.0.0\nimage: i\nproperties:\n- type: olm.package\n  value: {version: 1.0.0, packageName: foo}\n\
         - type: custom\n  value: {b: 1.0, a: [1e3, 12345678901234567890, 4.10, 0.5]}\n---\nschema: x.other\nname: o\nnum: 2.0\n",
    )
    .expect("write");
    let custom = "            \"type\": \"custom\",\n            \"value\": {\n                \"a\": [\n                    1000,\n                    12345678901234567000,\n                    4.1,\n                    0.5\n                ],\n                \"b\": 1\n            }";
    for dir in ["json", "yaml"] {
        let o = Command::new(common::bin())
            .arg("render")
            .arg(t.path().join(dir))
            .output()
            .expect("run");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains(custom), "{dir}: {out}");
        assert!(
            out.contains("\"value\": {\n                \"packageName\": \"foo\",\n                \"version\": \"1.0.0\""),
            "{dir}: {out}"
        );
        assert!(out.contains("\"num\": 2,"), "{dir}: {out}");
    }
}
