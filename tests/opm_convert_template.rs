//! `opm alpha convert-template basic|substitutes` (issue 27) and the native
//! `convert-template`: a catalog made back into a template. opm v1.73.0 has
//! no unit test of the converter (`alpha/template/converter`); what it
//! prints follows from `basic.FromReader`, `substitutes.FromReader`,
//! `declcfg.Meta` and `Converter.Convert` at that tag, and the strongest
//! check is the round trip: the basic template of a real catalog renders
//! back (from the corpus's bundle directories) to that catalog, byte for
//! byte.
use crate::common;

use std::path::PathBuf;

/// Runs `olm-catalog opm ARGS` (the opm personality, as a link named
/// `opm` runs it) or the native `olm-catalog ARGS`, with `stdin`.
fn run(as_opm: bool, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let argv: Vec<&str> = as_opm
        .then_some("opm")
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    common::run_cli(&argv, &[], stdin)
}

/// The corpus catalogs the real pipeline made: (package, catalog file).
fn corpus_catalogs() -> Vec<(String, PathBuf)> {
    let root = common::corpus().join("catalogs/v4.18");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&root).expect("corpus catalogs") {
        let dir = e.expect("entry").path();
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name")
            .to_string();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("package catalog")
            .map(|e| e.expect("entry").path())
            .filter(|p| {
                matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("yaml" | "yml" | "json")
                )
            })
            .collect();
        files.sort();
        assert_eq!(
            files.len(),
            1,
            "{}: one catalog file expected",
            dir.display()
        );
        out.push((name, files.remove(0)));
    }
    out.sort();
    assert_eq!(out.len(), 7, "the corpus has 7 catalogs");
    out
}

#[test]
fn basic_template_of_each_corpus_catalog_renders_back_to_it() {
    for (pkg, catalog) in corpus_catalogs() {
        let file = catalog.to_str().expect("utf-8 path");
        let (code, template, err) = run(true, &["alpha", "convert-template", "basic", file], None);
        assert_eq!(code, 0, "{pkg}: {err}");
        // Go's MarshalIndent with four spaces, struct fields in order.
        assert!(
            template
                .starts_with("{\n    \"schema\": \"olm.template.basic\",\n    \"entries\": [\n"),
            "{pkg}: {}",
            &template[..template.len().min(200)]
        );
        assert!(template.ends_with("\n    ]\n}\n"), "{pkg}");
        let v: serde_json::Value = serde_json::from_str(&template).expect("one JSON value");
        let entries = v["entries"].as_array().expect("entries");
        let (code, rendered, err) = run(false, &["render", file, "-o", "json"], None);
        assert_eq!(code, 0, "{pkg}: {err}");
        let objects = common::json_stream(&rendered);
        let bundles = objects
            .iter()
            .filter(|o| o["schema"] == "olm.bundle")
            .count();
        assert_eq!(entries.len(), objects.len(), "{pkg}: one entry per object");
        for e in entries.iter().filter(|e| e["schema"] == "olm.bundle") {
            let keys: Vec<&String> = e.as_object().expect("object").keys().collect();
            assert_eq!(
                keys,
                ["image", "schema"],
                "{pkg}: bundles keep schema and image"
            );
        }
        assert!(
            template
                .contains("{\n            \"schema\": \"olm.bundle\",\n            \"image\": \""),
            "{pkg}: a bundle entry is schema then image, as Go's struct order"
        );
        assert_eq!(
            entries
                .iter()
                .filter(|e| e["schema"] == "olm.bundle")
                .count(),
            bundles
        );

        // Rendered again from the corpus's bundle directories with the
        // pipeline's migration (`--migrate-level
        // bundle-object-to-csv-metadata`: its catalogs hold
        // olm.csv.metadata), the template is the catalog: byte for byte in
        // YAML, the form the corpus's pipeline wrote it in, and as JSON
        // values. (JSON output
        // differs in key order: opm writes the `olm.csv.metadata` it builds
        // from bundles in its Go structs' field order, and a catalog read
        // from a file with its keys sorted.)
        let tmp = tempfile::tempdir().expect("tempdir");
        let t = tmp.path().join("basic.json");
        std::fs::write(&t, &template).expect("write template");
        let bundles_dir = common::corpus().join("operators").join(&pkg);
        let again = |format: &str| {
            let (code, out, err) = run(
                false,
                &[
                    "render-template",
                    t.to_str().expect("utf-8"),
                    "--images-from",
                    file,
                    "--bundles-from",
                    bundles_dir.to_str().expect("utf-8"),
                    "--migrate-level",
                    "bundle-object-to-csv-metadata",
                    "-o",
                    format,
                ],
                None,
            );
            assert_eq!(code, 0, "{pkg}: {err}");
            out
        };
        assert!(
            common::json_stream(&again("json")) == objects,
            "{pkg}: the round trip changed the catalog"
        );
        let (code, rendered_yaml, err) = run(false, &["render", file, "-o", "yaml"], None);
        assert_eq!(code, 0, "{pkg}: {err}");
        assert!(
            again("yaml") == rendered_yaml,
            "{pkg}: the round trip changed the catalog's YAML"
        );
    }
}

#[test]
fn stdin_dash_file_and_native_forms_agree_and_yaml_is_the_json_read_back() {
    let (_, catalog) = corpus_catalogs().remove(3);
    let file = catalog.to_str().expect("utf-8");
    let text = std::fs::read_to_string(&catalog).expect("read catalog");
    let (c1, from_file, e1) = run(
        true,
        &["alpha", "convert-template", "substitutes", file],
        None,
    );
    let (c2, from_stdin, e2) = run(
        true,
        &["alpha", "convert-template", "substitutes"],
        Some(&text),
    );
    let (c3, from_dash, e3) = run(
        true,
        &["alpha", "convert-template", "substitutes", "-"],
        Some(&text),
    );
    let (c4, native, e4) = run(false, &["convert-template", "substitutes", file], None);
    assert_eq!((c1, c2, c3, c4), (0, 0, 0, 0), "{e1}{e2}{e3}{e4}");
    assert_eq!(from_file, from_stdin);
    assert_eq!(from_file, from_dash);
    assert_eq!(from_file, native);
    // A substitutes template keeps every object whole and has no
    // substitutions yet.
    assert!(
        from_file.ends_with("\n    ],\n    \"substitutions\": []\n}\n"),
        "{}",
        &from_file[from_file.len().saturating_sub(200)..]
    );
    let v: serde_json::Value = serde_json::from_str(&from_file).expect("JSON");
    assert_eq!(v["schema"], "olm.template.substitutes");
    let (_, rendered, _) = run(false, &["render", file, "-o", "json"], None);
    let mut objects = common::json_stream(&rendered);
    let mut entries = v["entries"].as_array().expect("entries").clone();
    let key = |o: &serde_json::Value| o.to_string();
    objects.sort_by_key(key);
    entries.sort_by_key(key);
    assert_eq!(
        entries, objects,
        "substitutes entries are the catalog's objects"
    );

    let (c, yaml, err) = run(
        true,
        &[
            "alpha",
            "convert-template",
            "substitutes",
            "-o",
            "yaml",
            file,
        ],
        None,
    );
    assert_eq!(c, 0, "{err}");
    assert!(yaml.starts_with("---\nentries:\n- "), "{}", &yaml[..80]);
    // sigs.k8s.io/yaml's output, then Println's newline: one blank line.
    assert!(yaml.ends_with("schema: olm.template.substitutes\nsubstitutions: []\n\n"));
    let back: serde_json::Value = yaml_serde::from_str(&yaml).expect("YAML");
    assert_eq!(back, v, "the YAML holds the same template");
}

#[test]
fn go_decoding_of_metas_shows_in_the_output() {
    // Keys sorted, numbers as float64s, HTML characters escaped by
    // MarshalIndent, bundles cut to schema then image (a missing image is
    // ""), objects of other schemas and without a schema kept.
    let input = "schema: olm.bundle\nname: a.v1\npackage: a\nimage: r/a<b>&c:1\n---\n\
schema: olm.bundle\nname: a.v2\n---\n\
zeta: 1\nalpha: 12345678901234567890\nschema: x.custom\n---\n\
note: no schema\n";
    let (code, out, err) = run(true, &["alpha", "convert-template", "basic"], Some(input));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        r#"{
    "schema": "olm.template.basic",
    "entries": [
        {
            "schema": "olm.bundle",
            "image": "r/a\u003cb\u003e\u0026c:1"
        },
        {
            "schema": "olm.bundle",
            "image": ""
        },
        {
            "alpha": 12345678901234567000,
            "schema": "x.custom",
            "zeta": 1
        },
        {
            "note": "no schema"
        }
    ]
}
"#
    );
    // No objects at all: Go's nil slice.
    let (code, out, _) = run(true, &["alpha", "convert-template", "basic"], Some(""));
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "{\n    \"schema\": \"olm.template.basic\",\n    \"entries\": null\n}\n"
    );
}

#[test]
fn bad_input_fails_as_opm_fails() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("missing.yaml");
    let cases: Vec<(Vec<String>, Option<&str>, &str)> = vec![
        (
            vec!["-o".into(), "xml".into()],
            Some("schema: x\n"),
            "invalid --output value \"xml\", expected (json|yaml)",
        ),
        (
            vec![missing.to_string_lossy().into_owned()],
            None,
            "missing.yaml",
        ),
        (
            vec![],
            Some("schema: olm.bundle\nimage: [1]\n"),
            "parse bundle",
        ),
        (
            vec![],
            Some("schema: x\nSchema: y\n"),
            "duplicate keys for key \"schema\"",
        ),
        (
            vec![],
            Some("name: {a: 1}\n"),
            "expected value for key \"name\" to be a string",
        ),
        (vec![], Some("schema: x\n  bad: [\n"), "<stdin>"),
    ];
    for (extra, stdin, says) in cases {
        let mut args = vec!["alpha", "convert-template", "basic"];
        args.extend(extra.iter().map(String::as_str));
        let (code, out, err) = run(true, &args, stdin);
        assert_eq!(code, 1, "{args:?}: opm exits 1: {err}");
        assert!(
            out.is_empty(),
            "{args:?}: nothing printed on failure: {out}"
        );
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // The native command: a usage error is exit 2, bad input too (I/O).
    let (code, _, err) = run(false, &["convert-template", "semver"], Some(""));
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run(false, &["convert-template", "basic", "-o", "xml"], Some(""));
    assert_eq!(code, 2, "{err}");
}
