//! `olm-catalog bundle validate` run as a process: exit codes, the three
//! output formats, argument order, non-bundle paths and selectors.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixture(rel: &str) -> PathBuf {
    common::fixtures().join("bundles").join(rel)
}

fn run(args: &[&str], dirs: &[&Path]) -> Output {
    let mut cmd = Command::new(common::bin());
    cmd.args(["bundle", "validate"]).args(args).args(dirs);
    cmd.env_remove("NO_COLOR");
    cmd.output().expect("run olm-catalog")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 output")
}

const GOOD: &str = "good/memcached-operator-0.0.2";
const BLIND: &str = "bad/blind-spots";
const BROKEN: &str = "bad/broken-yaml";

#[test]
fn exit_codes() {
    let good = fixture(GOOD);
    let o = run(&[], &[&good]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("1 checked: 0 errors, 0 warnings"));

    let o = run(&[], &[&good, &fixture(BLIND)]);
    assert_eq!(o.status.code(), Some(1));

    // A missing path is an I/O failure (2), but the others are still reported.
    let o = run(&[], &[&good, Path::new("/nonexistent/bundle")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).contains("2 checked"));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/bundle"));

    // Usage errors.
    assert_eq!(run(&[], &[]).status.code(), Some(2));
    assert_eq!(run(&["--output", "xml"], &[&good]).status.code(), Some(2));
    let o = run(&["--select-optional", "name=nope"], &[&good]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("matches no optional suite"));
    assert_eq!(
        run(&["--k8s-version", "latest"], &[&good]).status.code(),
        Some(2)
    );
    assert_ne!(
        run(
            &[
                "--select-optional",
                "suite=operatorframework",
                "--k8s-version",
                "1.25"
            ],
            &[&good]
        )
        .status
        .code(),
        Some(2)
    );
}

#[test]
fn human_output_shows_source_lines() {
    let o = run(&[], &[&fixture(BLIND)]);
    let out = stdout(&o);
    assert!(
        out.contains(
            "error[csv-version-not-semver]: spec.version `1.2` is not a strict semantic version"
        ),
        "{out}"
    );
    assert!(
        out.contains("memcached-operator.clusterserviceversion.yaml:21:12"),
        "{out}"
    );
    assert!(
        out.contains("   21 |   version: 1.2\n      |            ^^^\n"),
        "{out}"
    );
    assert!(out.contains("operator-sdk bundle validate does not check this"));
    // Not a terminal: no color unless asked.
    assert!(!out.contains('\x1b'));
    let colored = stdout(&run(&["--color", "always"], &[&fixture(BLIND)]));
    assert!(colored.contains("\x1b[31;1merror"));

    let out = stdout(&run(&[], &[&fixture(BROKEN)]));
    assert!(out.contains("error[yaml-syntax]"), "{out}");
    assert!(
        out.contains("clusterserviceversion.yaml:20:1"),
        "the tab itself: {out}"
    );
    assert!(out.contains("YAML forbids tabs"));
}

/// Checks `v` against the subset of JSON Schema that schema/findings.schema.json
/// uses (type, required, properties, additionalProperties, items, $ref, enum,
/// const, minimum, minLength).
fn conforms(v: &Value, schema: &Value, root: &Value, at: &str) -> Result<(), String> {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        return conforms(v, &root["$defs"][name], root, at);
    }
    if let Some(c) = schema.get("const") {
        if v != c {
            return Err(format!("{at}: expected {c}"));
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            return Err(format!("{at}: {v} not in {e:?}"));
        }
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => {
            let obj = v.as_object().ok_or(format!("{at}: not an object"))?;
            for req in schema["required"].as_array().into_iter().flatten() {
                let k = req.as_str().unwrap_or_default();
                if !obj.contains_key(k) {
                    return Err(format!("{at}: missing {k}"));
                }
            }
            let props = schema["properties"].as_object();
            for (k, val) in obj {
                match props.and_then(|p| p.get(k)) {
                    Some(s) => conforms(val, s, root, &format!("{at}.{k}"))?,
                    None if schema["additionalProperties"] == Value::Bool(false) => {
                        return Err(format!("{at}: unexpected key {k}"))
                    }
                    None => {}
                }
            }
        }
        Some("array") => {
            let items = v.as_array().ok_or(format!("{at}: not an array"))?;
            for (i, item) in items.iter().enumerate() {
                conforms(item, &schema["items"], root, &format!("{at}[{i}]"))?;
            }
        }
        Some("integer") => {
            let n = v.as_i64().ok_or(format!("{at}: not an integer"))?;
            if let Some(min) = schema.get("minimum").and_then(Value::as_i64) {
                if n < min {
                    return Err(format!("{at}: below minimum"));
                }
            }
        }
        Some("string") => {
            let s = v.as_str().ok_or(format!("{at}: not a string"))?;
            if schema
                .get("minLength")
                .and_then(Value::as_u64)
                .is_some_and(|m| (s.len() as u64) < m)
            {
                return Err(format!("{at}: too short"));
            }
        }
        _ => {}
    }
    Ok(())
}

#[test]
fn json_output_follows_the_schema() {
    let schema: Value =
        serde_json::from_str(include_str!("../schema/findings.schema.json")).expect("schema");
    let dirs = [fixture(GOOD), fixture(BLIND), fixture(BROKEN)];
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    let o = run(&["--output", "json"], &refs);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    conforms(&v, &schema, &schema, "$").expect("conforms to schema/findings.schema.json");
    assert_eq!(v["summary"]["checked"], 3);
    // Reports in argument order.
    let subjects: Vec<&str> = v["reports"]
        .as_array()
        .expect("reports")
        .iter()
        .map(|r| r["subject"].as_str().unwrap_or(""))
        .collect();
    for (s, d) in subjects.iter().zip(&dirs) {
        assert_eq!(*s, d.display().to_string());
    }
    let f = &v["reports"][1]["findings"];
    assert!(f
        .as_array()
        .expect("findings")
        .iter()
        .any(|x| x["rule"] == "csv-replaces-self" && x["location"]["line"] == 22));
}

#[test]
fn sarif_output() {
    let o = run(&["-o", "sarif"], &[&fixture(BLIND)]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("sarif json");
    assert_eq!(v["version"], "2.1.0");
    let run0 = &v["runs"][0];
    let rules = run0["tool"]["driver"]["rules"].as_array().expect("rules");
    assert!(rules
        .iter()
        .all(|r| r["shortDescription"]["text"].is_string()));
    let results = run0["results"].as_array().expect("results");
    assert!(!results.is_empty());
    for r in results {
        let idx = r["ruleIndex"].as_u64().expect("index") as usize;
        assert_eq!(rules[idx]["id"], r["ruleId"]);
        assert!(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].is_string());
    }
    assert!(results
        .iter()
        .any(|r| r["ruleId"] == "csv-version-not-semver"
            && r["locations"][0]["physicalLocation"]["region"]["startLine"] == 21));
}

/// What operator-sdk fails as "unable to find a csv": each named path that
/// is not a bundle fails (exit 1) with a `not-a-bundle` error.
#[test]
fn a_path_that_is_not_a_bundle_fails() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = tmp.path();
    std::fs::write(t.join("ci.yaml"), "reviewers: []\n").expect("write");
    std::fs::create_dir(t.join("empty")).expect("mkdir");
    std::fs::create_dir(t.join("catalog-templates")).expect("mkdir");
    std::fs::write(
        t.join("catalog-templates/v4.18.yaml"),
        "schema: olm.semver\n",
    )
    .expect("write");
    // A package folder (VERSION/ inside) and the nested layout
    // VERSION/certification/{manifests,metadata}.
    common::copy_dir(&fixture(GOOD), &t.join("pkg/0.0.2"));
    common::copy_dir(&fixture(GOOD), &t.join("1.22.0/certification"));
    let cases: &[(&str, &str)] = &[
        ("ci.yaml", "is a file, not a bundle directory"),
        ("empty", "is an empty directory, not a bundle"),
        (
            "catalog-templates",
            "has no manifests/ or metadata/ directory",
        ),
        ("pkg", "its subdirectory 0.0.2/ is a bundle"),
        ("1.22.0", "its subdirectory certification/ is a bundle"),
    ];
    for (rel, says) in cases {
        let o = run(&["--color", "never"], &[&t.join(rel)]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "{rel}: {out}");
        assert!(out.contains("error[not-a-bundle]"), "{rel}: {out}");
        assert!(out.contains(says), "{rel}: {out}");
        assert!(out.contains("unable to find a csv"), "{rel}: {out}");
        assert!(
            out.contains("1 checked: 1 error, 0 warnings"),
            "{rel}: {out}"
        );
    }
    // With the nested bundle named, it passes.
    let o = run(&[], &[&t.join("1.22.0/certification")]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// `bundle validate --skip-non-bundles operators/*/*`: the glob also picks
/// up ci.yaml and template folders; they are skipped, counted, and listed
/// with -v, while the bundles are checked as usual.
#[test]
fn skip_non_bundles_over_a_glob() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = tmp.path();
    std::fs::write(t.join("ci.yaml"), "reviewers: []\n").expect("write");
    std::fs::create_dir(t.join("catalog-templates")).expect("mkdir");
    let (file, templates, good) = (
        t.join("ci.yaml"),
        t.join("catalog-templates"),
        fixture(GOOD),
    );

    let o = run(&["--skip-non-bundles"], &[&good, &file, &templates]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(!out.contains("not-a-bundle"), "{out}");
    assert!(out.contains("1 checked: 0 errors, 0 warnings"), "{out}");
    assert!(
        out.contains("2 skipped: not bundles (-v lists them)"),
        "{out}"
    );

    let o = run(&["--skip-non-bundles", "-v"], &[&good, &file, &templates]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains(&format!("skipped {}: ", file.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!("skipped {}: ", templates.display())),
        "{out}"
    );
    assert!(out.contains("2 skipped: not bundles\n"), "{out}");

    // Errors of the bundles still fail the run.
    let o = run(&["--skip-non-bundles"], &[&fixture(BLIND), &file]);
    assert_eq!(o.status.code(), Some(1));

    // JSON stays to its schema; the count goes to stderr.
    let o = run(&["--skip-non-bundles", "-o", "json"], &[&good, &file]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["summary"]["checked"], 1);
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 skipped: not bundle"));

    // Nothing but non-bundles: nothing was validated, which must not pass.
    let o = run(&["--skip-non-bundles"], &[&file, &templates]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no bundle among the 2 paths"));

    // A missing path is never skipped: it is an I/O failure.
    let o = run(&["--skip-non-bundles"], &[&good, &t.join("nope")]);
    assert_eq!(o.status.code(), Some(2));
}

/// Many inputs, some unreadable or broken: each bad one is a finding for
/// it, and every other input is still validated and reported.
#[test]
fn one_bad_bundle_among_many_is_one_finding() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = tmp.path();
    // A bundle whose manifests/ is a broken symbolic link.
    common::copy_dir(&fixture(GOOD), &t.join("dangling"));
    std::fs::remove_dir_all(t.join("dangling/manifests")).expect("rm");
    std::os::unix::fs::symlink(t.join("gone"), t.join("dangling/manifests")).expect("symlink");
    // A bundle whose CSV is not UTF-8.
    common::copy_dir(&fixture(GOOD), &t.join("binary"));
    std::fs::write(
        t.join("binary/manifests/memcached-operator.clusterserviceversion.yaml"),
        b"kind: \xff\xfe\n",
    )
    .expect("write");
    let good = fixture(GOOD);
    let broken = fixture(BROKEN);
    let (dangling, binary) = (t.join("dangling"), t.join("binary"));
    let dirs: [&Path; 5] = [&dangling, &good, &broken, &binary, &good];
    let o = run(&["-o", "json"], &dirs);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    let reports = v["reports"].as_array().expect("reports");
    assert_eq!(reports.len(), 5, "every input has its report");
    let rules = |i: usize| -> Vec<String> {
        reports[i]["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| f["rule"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert!(
        rules(0).contains(&"bundle-unreadable".to_string()),
        "{:?}",
        rules(0)
    );
    assert!(rules(1).is_empty(), "{:?}", rules(1));
    assert!(
        rules(2).contains(&"yaml-syntax".to_string()),
        "{:?}",
        rules(2)
    );
    assert!(
        rules(3).contains(&"file-not-utf8".to_string()),
        "{:?}",
        rules(3)
    );
    assert!(rules(4).is_empty(), "{:?}", rules(4));
    for i in 0..5 {
        assert_eq!(
            reports[i]["subject"].as_str(),
            Some(dirs[i].display().to_string().as_str()),
            "reports keep argument order"
        );
    }
}

#[test]
fn output_is_deterministic() {
    let dirs = [fixture(BLIND), fixture(BROKEN), fixture(GOOD)];
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    for fmt in ["human", "json", "sarif"] {
        let a = run(&["-o", fmt], &refs).stdout;
        let b = run(&["-o", fmt], &refs).stdout;
        assert_eq!(a, b, "{fmt} output differs between runs");
    }
}

#[test]
fn sarif_uris_are_encoded_and_absolute_paths_are_file_uris() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("my bundle#1");
    common::copy_dir(&fixture(BLIND), &dir);
    // Absolute: a file:// URI, percent-encoded.
    let o = run(&["-o", "sarif"], &[&dir]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("sarif json");
    let results = v["runs"][0]["results"].as_array().expect("results");
    for r in results {
        let art = &r["locations"][0]["physicalLocation"]["artifactLocation"];
        let uri = art["uri"].as_str().expect("uri");
        assert!(uri.starts_with("file:///"), "{uri}");
        assert!(uri.contains("my%20bundle%231/"), "{uri}");
        assert!(!uri.contains(' ') && !uri.contains('#'), "{uri}");
        let region = &r["locations"][0]["physicalLocation"]["region"];
        if !region["endColumn"].is_null() {
            assert_eq!(region["endLine"], region["startLine"], "{region}");
        }
    }
    // Relative: relative to %SRCROOT%.
    let o = Command::new(env!("CARGO_BIN_EXE_olm-catalog"))
        .current_dir(tmp.path())
        .args(["bundle", "validate", "-o", "sarif", "my bundle#1"])
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&o.stdout).expect("sarif json");
    let art = &v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(art["uriBaseId"], "%SRCROOT%");
    assert!(
        art["uri"]
            .as_str()
            .expect("uri")
            .starts_with("my%20bundle%231/"),
        "{art}"
    );
}

/// The subcommands listed under "Commands:" in a help text.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A description wrapped onto its own line is indented further.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

#[test]
fn every_command_help_has_an_example() {
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    let mut missing = Vec::new();
    let mut seen = 0;
    while let Some(path) = todo.pop() {
        let o = Command::new(env!("CARGO_BIN_EXE_olm-catalog"))
            .args(&path)
            .arg("--help")
            .output()
            .expect("runs");
        let help = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(o.status.success(), "{path:?} --help failed");
        seen += 1;
        if !help.contains("Example") {
            missing.push(path.join(" "));
        }
        for sub in subcommands(&help) {
            let mut p = path.clone();
            p.push(sub);
            todo.push(p);
        }
    }
    assert!(seen > 10, "walked only {seen} commands");
    assert!(missing.is_empty(), "--help without an example: {missing:?}");
}

#[cfg(unix)]
#[test]
fn a_fifo_in_manifests_does_not_hang_the_command() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("b");
    common::copy_dir(&fixture(GOOD), &dir);
    let fifo = dir.join("manifests/pipe.yaml");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo")
        .success());
    let mut child = Command::new(env!("CARGO_BIN_EXE_olm-catalog"))
        .args(["bundle", "validate", "-o", "json"])
        .arg(&dir)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert_eq!(status.code(), Some(1));
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("bundle validate hangs on a FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().expect("stdout"), &mut out)
        .expect("read");
    assert!(out.contains("\"file-not-regular\""), "{out}");
}

/// Bundles are validated in parallel and each report written as soon as it
/// is ready: over more paths than that window, in every format, the output
/// is byte for byte all the reports collected in argument order and
/// rendered at once.
#[test]
fn streamed_output_is_the_collected_reports_rendered() {
    use olm_catalog::{diag, validate};
    let mut dirs = Vec::new();
    for _ in 0..8 {
        for rel in [BLIND, GOOD, BROKEN, "good/under-indented-quotes"] {
            dirs.push(fixture(rel));
        }
    }
    let reports = validate::validate_dirs(&dirs, &validate::Options::default());
    let help = |id: &str| {
        validate::rules::summary(id).or_else(|| olm_catalog::graph::crd_safety::rule_help(id))
    };
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    for (fmt, want) in [
        ("human", diag::render_human(&reports, false)),
        ("json", diag::render_json(&reports)),
        ("sarif", diag::render_sarif(&reports, &help)),
    ] {
        let o = run(&["--color", "never", "-o", fmt], &refs);
        assert_eq!(o.status.code(), Some(1), "{fmt}");
        assert!(
            stdout(&o) == want,
            "{fmt}: streamed output differs from the rendered reports"
        );
    }
}

/// A reader that goes away (`| head`) stops the output, not the verdict:
/// the exit code is still 1 for a bundle with errors.
#[test]
fn a_closed_stdout_keeps_the_exit_code() {
    let dirs: Vec<PathBuf> = (0..20).map(|_| fixture(BLIND)).collect();
    let mut child = Command::new(common::bin())
        .args(["bundle", "validate"])
        .args(&dirs)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run olm-catalog");
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("wait");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
