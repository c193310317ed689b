//! `bundle build` of many bundles in one call (`DIR... --tag-template`,
//! `--bundles-file`), against a real registry, read back with skopeo.
use crate::common;
use crate::registry;

use std::path::{Path, PathBuf};

use registry::{skopeo, Registry};

fn bundle(rel: &str) -> PathBuf {
    common::corpus().join("operators").join(rel)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn run(args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    common::run_cli(args, &[], stdin)
}

fn inspect(reference: &str) -> serde_json::Value {
    serde_json::from_str(&skopeo(&[
        "inspect",
        "--tls-verify=false",
        &format!("docker://{reference}"),
    ]))
    .expect("json")
}

#[test]
fn many_bundles_in_one_call() {
    let reg = Registry::start();
    let host = reg.host();
    let dirs = [
        bundle("etcd/0.9.0"),
        bundle("etcd/0.9.2"),
        bundle("etcd/0.9.4"),
        bundle("etcd/0.6.1"),
    ];
    let template = format!("{host}/{{package}}-bundle:v{{version}}");
    let mut args = vec!["bundle", "build"];
    args.extend(dirs.iter().map(|d| s(d)));
    args.extend(["--tag-template", &template, "--jobs", "3"]);
    let (code, out, err) = run(&args, None);
    assert_eq!(code, 0, "{err}");
    // One REF@DIGEST line per bundle, in the order given.
    let lines: Vec<(&str, &str)> = out
        .lines()
        .map(|l| l.rsplit_once('@').expect("REF@DIGEST"))
        .collect();
    let want: Vec<String> = ["0.9.0", "0.9.2", "0.9.4", "0.6.1"]
        .iter()
        .map(|v| format!("{host}/etcd-bundle:v{v}"))
        .collect();
    assert_eq!(lines.iter().map(|l| l.0).collect::<Vec<_>>(), want, "{out}");
    // Plain progress lines without a terminal, and a summary.
    assert!(err.contains("bundles: 4/4"), "{err}");
    assert!(err.contains("pushed 4 bundle image(s)"), "{err}");

    // The same image as a one-bundle build, and what the registry holds.
    let (code, single, err) = run(
        &[
            "bundle",
            "build",
            s(&dirs[2]),
            "--tag",
            &format!("{host}/single/etcd:x"),
            "-q",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(single.trim().rsplit_once('@').expect("@").1, lines[2].1);
    for (reference, digest) in &lines {
        let v = inspect(reference);
        assert_eq!(v["Digest"], *digest, "{reference}");
        assert_eq!(
            v["Labels"]["operators.operatorframework.io.bundle.package.v1"],
            "etcd"
        );
    }

    // A bundles file: comments, a line with its own REF, lines using the
    // template ({dir} here), read from stdin.
    let list = format!(
        "# bundles to publish\n{}  {host}/pinned/etcd:fixed\n\n{}\n",
        s(&dirs[0]),
        s(&dirs[1])
    );
    let (code, out, err) = run(
        &[
            "bundle",
            "build",
            "--bundles-file",
            "-",
            "--tag-template",
            &format!("{host}/bydir/{{package}}:{{dir}}"),
            "-q",
        ],
        Some(&list),
    );
    assert_eq!(code, 0, "{err}");
    let refs: Vec<&str> = out
        .lines()
        .map(|l| l.rsplit_once('@').expect("@").0)
        .collect();
    assert_eq!(
        refs,
        vec![
            format!("{host}/pinned/etcd:fixed"),
            format!("{host}/bydir/etcd:0.9.2")
        ]
    );
    assert_eq!(
        inspect(&format!("{host}/pinned/etcd:fixed"))["Digest"],
        lines[0].1
    );
}

#[test]
fn a_failing_bundle_is_named_and_the_others_are_pushed() {
    let reg = Registry::start();
    let host = reg.host();
    let tmp = tempfile::tempdir().expect("tmp");
    // A bundle whose annotations lack the package.
    let broken = tmp.path().join("broken");
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(broken.join(sub)).expect("mkdir");
    }
    for entry in std::fs::read_dir(bundle("etcd/0.9.4/manifests")).expect("read") {
        let p = entry.expect("entry").path();
        std::fs::copy(
            &p,
            broken.join("manifests").join(p.file_name().expect("name")),
        )
        .expect("copy");
    }
    std::fs::write(
        broken.join("metadata/annotations.yaml"),
        "annotations:\n  operators.operatorframework.io.bundle.channels.v1: alpha\n",
    )
    .expect("write");
    let list = format!(
        "{}\n{}\n{} 127.0.0.1:1/nowhere/etcd:x\n",
        s(&bundle("etcd/0.9.2")),
        s(&broken),
        s(&bundle("etcd/0.9.4")),
    );
    let file = tmp.path().join("bundles.txt");
    std::fs::write(&file, list).expect("write");
    let (code, out, err) = run(
        &[
            "bundle",
            "build",
            "--bundles-file",
            s(&file),
            "--tag-template",
            &format!("{host}/{{package}}/bundle:{{dir}}"),
            "-q",
        ],
        None,
    );
    assert_eq!(code, 2, "{err}");
    // The good bundle is pushed; each failure names its directory.
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with(&format!("{host}/etcd/bundle:0.9.2@sha256:")),
        "{out}"
    );
    assert!(
        err.contains(&format!("error: {}", broken.display()))
            && err.contains("operators.operatorframework.io.bundle.package.v1"),
        "{err}"
    );
    assert!(
        err.contains(&format!("error: {}", bundle("etcd/0.9.4").display()))
            && err.contains("127.0.0.1:1")
            && err.contains("unreachable"),
        "{err}"
    );
    assert!(err.contains("2 of 3 bundle(s) failed"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn usage_errors_are_explained() {
    let a = bundle("etcd/0.9.2");
    let b = bundle("etcd/0.9.4");
    let (code, _, err) = run(&["bundle", "build", s(&a), s(&b)], None);
    assert_eq!(code, 2);
    assert!(err.contains("--tag-template"), "{err}");

    let (code, _, err) = run(
        &[
            "bundle",
            "build",
            s(&a),
            s(&b),
            "--tag-template",
            "r/{name}:x",
        ],
        None,
    );
    assert_eq!(code, 2);
    assert!(err.contains("unknown placeholder {name}"), "{err}");

    let (code, _, err) = run(&["bundle", "build", s(&a), s(&b), "--tag", "r/x:y"], None);
    assert_eq!(code, 2, "--tag with several bundles must be refused: {err}");

    // Two bundles, one destination: the second is refused, naming the
    // first (with --jobs 1 the order is fixed).
    let reg = Registry::start();
    let (code, out, err) = run(
        &[
            "bundle",
            "build",
            s(&a),
            s(&b),
            "--tag-template",
            &format!("{}/{{package}}-bundle:latest", reg.host()),
            "--jobs",
            "1",
            "-q",
        ],
        None,
    );
    assert_eq!(code, 2);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        err.contains(&format!("also the destination of {}", a.display())),
        "{err}"
    );

    // A bundles-file line with three fields names its line.
    let tmp = tempfile::tempdir().expect("tmp");
    let file = tmp.path().join("list");
    std::fs::write(&file, format!("{} a b\n", s(&a))).expect("write");
    let (code, _, err) = run(&["bundle", "build", "--bundles-file", s(&file)], None);
    assert_eq!(code, 2);
    assert!(err.contains(&format!("{}:1", file.display())), "{err}");
}
