//! One set of CLI conventions (issue 21): every command's `--help` spells
//! the shared flags the same way, and the cases the issue listed behave.
use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

fn olm(args: &[&str]) -> (i32, String, String) {
    common::run_cli(args, &[], None)
}

/// One option line of a help text: `-o, --output <FORMAT>  text`.
#[derive(Debug, Clone, PartialEq)]
struct Opt {
    short: Option<char>,
    long: Option<String>,
    value: Option<String>,
}

/// A command's options and subcommands, read from its `-h` output.
fn parse_help(text: &str) -> (Vec<Opt>, Vec<String>) {
    let mut opts = Vec::new();
    let mut subs = Vec::new();
    let mut section = "";
    for line in text.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            section = line;
            continue;
        }
        let t = line.trim_start();
        let spec = t.split("  ").next().unwrap_or("");
        match section {
            "Commands:" if line.starts_with("  ") && !line.starts_with("   ") => {
                let name = spec.split_whitespace().next().unwrap_or("");
                if !name.is_empty() && name != "help" {
                    subs.push(name.to_string());
                }
            }
            "Options:" if t.starts_with('-') => {
                let mut o = Opt {
                    short: None,
                    long: None,
                    value: None,
                };
                for tok in spec.split([',', ' ']).filter(|s| !s.is_empty()) {
                    if let Some(l) = tok.strip_prefix("--") {
                        // A repeatable switch is shown `--verbose...`.
                        o.long = Some(l.trim_end_matches("...").to_string());
                    } else if let Some(s) = tok.strip_prefix('-') {
                        o.short = s.chars().next();
                    } else if tok.starts_with('<') || tok.starts_with('[') {
                        o.value = Some(tok.to_string());
                    }
                }
                opts.push(o);
            }
            _ => {}
        }
    }
    (opts, subs)
}

/// Every command path (`["graph", "check"]`) with its options, read by
/// walking `-h` from the top.
fn all_commands() -> BTreeMap<String, Vec<Opt>> {
    let mut out = BTreeMap::new();
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    while let Some(path) = todo.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("-h");
        let (code, text, err) = olm(&args);
        assert_eq!(code, 0, "{args:?} -h: {err}");
        let (opts, subs) = parse_help(&text);
        for s in subs {
            let mut p = path.clone();
            p.push(s);
            todo.push(p);
        }
        out.insert(path.join(" "), opts);
    }
    out
}

fn has_long(opts: &[Opt], long: &str) -> Option<Opt> {
    opts.iter()
        .find(|o| o.long.as_deref() == Some(long))
        .cloned()
}

#[test]
fn every_command_spells_the_shared_flags_the_same() {
    let commands = all_commands();
    // The walk really went down: the leaves the issue names are there.
    for c in [
        "bundle validate",
        "bundle build",
        "graph check",
        "graph render",
        "graph path",
        "index add",
        "index rm",
        "index export",
        "index build",
        "validate",
        "sign generate-key-pair",
        "verify",
        "completion",
        "man",
    ] {
        assert!(
            commands.contains_key(c),
            "no command {c:?} in {:?}",
            commands.keys()
        );
    }
    let mut problems = Vec::new();
    // The commands whose --format is a storage format, not an output format.
    let storage_format = [
        "bundle build",
        "index build",
        "index add",
        "catalog build",
        "sign",
        "attest",
    ];
    let registry = ["username", "password-stdin", "ca-file", "insecure"];
    for (cmd, opts) in &commands {
        let short = |c: char| opts.iter().find(|o| o.short == Some(c)).cloned();
        // Global flags, on every command.
        match has_long(opts, "color") {
            Some(o) if o.value.as_deref() == Some("<WHEN>") && o.short.is_none() => {}
            o => problems.push(format!("{cmd}: --color <WHEN> expected, got {o:?}")),
        }
        for (c, l) in [('q', "quiet"), ('v', "verbose")] {
            match has_long(opts, l) {
                Some(o) if o.short == Some(c) && o.value.is_none() => {}
                o => problems.push(format!("{cmd}: -{c}, --{l} expected, got {o:?}")),
            }
        }
        // -o is --output, and --output is -o and a format.
        if let Some(o) = short('o') {
            if o.long.as_deref() != Some("output") {
                problems.push(format!("{cmd}: -o is not --output: {o:?}"));
            }
        }
        if let Some(o) = has_long(opts, "output") {
            if o.short != Some('o') || o.value.as_deref() != Some("<FORMAT>") {
                problems.push(format!(
                    "{cmd}: --output must be -o, --output <FORMAT>: {o:?}"
                ));
            }
        }
        if has_long(opts, "format").is_some() && !storage_format.contains(&cmd.as_str()) {
            problems.push(format!(
                "{cmd}: --format shown; output formats are -o/--output"
            ));
        }
        for old in ["json", "allow-insecure-registry", "color-output"] {
            if has_long(opts, old).is_some() {
                problems.push(format!("{cmd}: --{old} shown"));
            }
        }
        // -d is --database, and --database is -d.
        if let Some(o) = short('d') {
            if o.long.as_deref() != Some("database") {
                problems.push(format!("{cmd}: -d is not --database: {o:?}"));
            }
        }
        if let Some(o) = has_long(opts, "database") {
            if o.short != Some('d') {
                problems.push(format!("{cmd}: --database without -d"));
            }
        }
        // The registry flags come as one set.
        let present: Vec<&str> = registry
            .iter()
            .copied()
            .filter(|l| has_long(opts, l).is_some())
            .collect();
        if !present.is_empty() && present.len() != registry.len() {
            problems.push(format!(
                "{cmd}: registry flags {present:?}, not all of {registry:?}"
            ));
        }
        if let Some(o) = has_long(opts, "password-stdin") {
            if o.value.is_some() || o.short.is_some() {
                problems.push(format!("{cmd}: --password-stdin is a plain switch: {o:?}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn output_formats_are_dash_o_and_old_spellings_still_work() {
    let pkg = common::fixtures().join("graph/pkg-semver");
    let p = pkg.to_str().expect("utf-8");
    let (c1, dot, _) = olm(&["graph", "render", p, "-o", "dot"]);
    let (c2, dot_old, _) = olm(&["graph", "render", p, "--format", "dot"]);
    assert_eq!((c1, c2), (0, 0));
    assert!(dot.starts_with("digraph"), "{dot}");
    assert_eq!(dot, dot_old);

    let (c1, json, _) = olm(&["graph", "path", p, "--from", "1.0.1", "-o", "json"]);
    let (c2, json_old, _) = olm(&["graph", "path", p, "--from", "1.0.1", "--json"]);
    assert_eq!((c1, c2), (0, 0));
    let v: serde_json::Value = serde_json::from_str(&json).expect("graph path -o json is JSON");
    assert!(v.get("steps").is_some(), "{v}");
    assert_eq!(json, json_old);

    // validate: -o, --output, and the older --format; `text` is human.
    let t = tempfile::tempdir().expect("tmp");
    std::fs::write(
        t.path().join("c.yaml"),
        "schema: olm.package\nname: p\ndefaultChannel: missing\n",
    )
    .expect("write");
    let d = t.path().to_str().expect("utf-8");
    let outs: Vec<(i32, String)> = [
        ["validate", d, "-o", "json"],
        ["validate", d, "--output", "json"],
        ["validate", d, "--format", "json"],
    ]
    .iter()
    .map(|a| {
        let (c, o, _) = olm(a);
        (c, o)
    })
    .collect();
    assert_eq!(outs[0].0, 1, "{}", outs[0].1);
    serde_json::from_str::<serde_json::Value>(&outs[0].1).expect("validate -o json is JSON");
    assert!(outs.iter().all(|o| *o == outs[0]), "{outs:?}");
    let (c, human, _) = olm(&["validate", d, "-o", "text"]);
    assert_eq!(c, 1);
    assert!(human.contains("error"), "{human}");

    // -o no longer means --package/--packages.
    let (c, _, err) = olm(&["index", "export", "-d", "x.db", "-o", "etcd"]);
    assert_eq!(c, 2, "{err}");
    let (c, _, err) = olm(&["index", "rm", "-d", "x.db", "-o", "etcd"]);
    assert_eq!(c, 2, "{err}");
}

fn has_escape(s: &str) -> bool {
    s.contains('\u{1b}')
}

/// Runs `cmd` under a pseudo-terminal (util-linux `script`), so that
/// `--color auto` sees a terminal. Returns what the terminal showed.
fn on_terminal(cmd: &str, no_color: bool) -> String {
    let mut c = std::process::Command::new("script");
    c.args(["-q", "-e", "-c", cmd, "/dev/null"]);
    if no_color {
        c.env("NO_COLOR", "1");
    } else {
        c.env_remove("NO_COLOR");
    }
    let out = c
        .output()
        .expect("run `script` (util-linux) for a pseudo-terminal");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn graph_check_colour_follows_color_and_no_color() {
    let pkg = common::fixtures().join("graph/pkg-broken");
    let p = pkg.to_str().expect("utf-8");
    let (c, out, _) = olm(&["graph", "check", p, "--color", "always"]);
    assert_eq!(c, 1);
    assert!(has_escape(&out), "--color always colours: {out}");
    let (_, out, _) = common::run_cli(
        &["graph", "check", p, "--color", "always"],
        &[("NO_COLOR", "1")],
        None,
    );
    assert!(has_escape(&out), "--color always wins over NO_COLOR");
    let (_, out, _) = olm(&["graph", "check", p]);
    assert!(!has_escape(&out), "a pipe is not coloured: {out}");
    // On a terminal: coloured, unless NO_COLOR is set or --color never.
    let bin = common::bin();
    let cmd = format!("{} graph check {p}", bin.display());
    assert!(
        has_escape(&on_terminal(&cmd, false)),
        "a terminal is coloured"
    );
    let shown = on_terminal(&cmd, true);
    assert!(shown.contains("error"), "{shown}");
    assert!(!has_escape(&shown), "NO_COLOR=1 on a terminal: {shown}");
    assert!(!has_escape(&on_terminal(
        &format!("{cmd} --color never"),
        false
    )));
    // The global flags go before or after the command's name.
    let (c, out, _) = olm(&["--color", "always", "graph", "check", p]);
    assert_eq!(c, 1);
    assert!(has_escape(&out));
    let (c, _, _) = olm(&["-q", "graph", "check", p]);
    assert_eq!(c, 1);
    let (c, _, err) = olm(&["graph", "check", p, "-q", "-v"]);
    assert_eq!(c, 2, "-q and -v conflict: {err}");
}

#[test]
fn bundle_validate_lists_skipped_paths_with_global_verbose() {
    let good = common::fixtures().join("bundles/good/memcached-operator-0.0.2");
    let g = good.to_str().expect("utf-8");
    let f = common::fixtures().join("graph/rules.yaml");
    let f = f.to_str().expect("utf-8");
    let (c, out, _) = olm(&["bundle", "validate", "--skip-non-bundles", g, f]);
    assert_eq!(c, 0, "{out}");
    assert!(out.contains("(-v lists them)"), "{out}");
    for args in [
        ["bundle", "validate", "--skip-non-bundles", "-v", g, f],
        ["-v", "bundle", "validate", "--skip-non-bundles", g, f],
    ] {
        let (c, out, _) = olm(&args);
        assert_eq!(c, 0, "{out}");
        assert!(out.contains(&format!("skipped {f}")), "{args:?}: {out}");
    }
}

#[test]
fn completion_scripts_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (c, out, err) = olm(&["completion", shell]);
        assert_eq!(c, 0, "{shell}: {err}");
        for word in ["olm-catalog", "render-template", "password-stdin"] {
            assert!(out.contains(word), "{shell} completion lacks {word}");
        }
    }
    // bash reads the bash script without a syntax error.
    let (_, script, _) = olm(&["completion", "bash"]);
    let t = tempfile::tempdir().expect("tmp");
    let f = t.path().join("olm-catalog.bash");
    std::fs::write(&f, &script).expect("write");
    let st = std::process::Command::new("bash")
        .arg("-n")
        .arg(&f)
        .status()
        .expect("bash");
    assert!(st.success());
    let (c, _, err) = olm(&["completion", "tcsh"]);
    assert_eq!(c, 2, "{err}");
}

#[test]
fn man_pages_for_every_command() {
    let t = tempfile::tempdir().expect("tmp");
    let dir = t.path().join("man1");
    let (c, _, err) = olm(&["man", dir.to_str().expect("utf-8")]);
    assert_eq!(c, 0, "{err}");
    let commands = all_commands();
    for cmd in commands.keys() {
        let name = if cmd.is_empty() {
            "olm-catalog".to_string()
        } else {
            format!("olm-catalog-{}", cmd.replace(' ', "-"))
        };
        let page = std::fs::read_to_string(dir.join(format!("{name}.1")))
            .unwrap_or_else(|e| panic!("{name}.1: {e}"));
        assert!(
            page.starts_with(".ie") || page.contains(".TH"),
            "{name}.1: {page}"
        );
        assert!(page.contains("color"), "{name}.1 lists the global flags");
    }
    let pages = std::fs::read_dir(&dir).expect("man dir").count();
    assert_eq!(pages, commands.len(), "one page per command, no help pages");
    // A directory that cannot be made is an I/O failure.
    let file = t.path().join("file");
    std::fs::write(&file, "").expect("write");
    let (c, _, _) = olm(&["man", file.join("x").to_str().expect("utf-8")]);
    assert_eq!(c, 2);
}

#[test]
fn graph_path_from_a_version_not_in_the_package_fails() {
    let pkg = common::fixtures().join("graph/pkg-semver");
    let p = pkg.to_str().expect("utf-8");
    let (c, out, _) = olm(&["graph", "path", p, "--from", "9.9.9"]);
    assert_eq!(c, 1, "{out}");
    assert!(
        out.contains("version 9.9.9 is not in package demo"),
        "{out}"
    );
    assert!(!out.contains("no upgrade steps"), "{out}");
    let (c, out, _) = olm(&["graph", "path", p, "--from", "9.9.9", "-o", "json"]);
    assert_eq!(c, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert!(
        v["error"]
            .as_str()
            .is_some_and(|e| e.contains("not in package")),
        "{v}"
    );
    // A version the package has still gives its path.
    let (c, out, _) = olm(&["graph", "path", p, "--from", "1.0.0"]);
    assert_eq!(c, 0, "{out}");
}

#[test]
fn validate_of_a_missing_path_is_an_io_failure() {
    let (c, out, err) = olm(&["validate", "/nonexistent/catalog"]);
    assert_eq!(c, 2, "{out}{err}");
    assert!(err.contains("/nonexistent/catalog"), "{err}");
    // Its cause is said once.
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(Path::new("/nonexistent/catalog").metadata().is_err());
}

#[test]
fn quiet_keeps_notes_off_stderr() {
    let t = tempfile::tempdir().expect("tmp");
    let prefix = t.path().join("k");
    let p = prefix.to_str().expect("utf-8");
    let env = [("COSIGN_PASSWORD", "pw")];
    let (c, _, err) = common::run_cli(
        &["sign", "generate-key-pair", "--output-prefix", p],
        &env,
        None,
    );
    assert_eq!(c, 0, "{err}");
    assert!(err.contains("Private key written"), "{err}");
    let (c, _, err) = common::run_cli(
        &[
            "-q",
            "sign",
            "generate-key-pair",
            "--output-prefix",
            p,
            "--force",
        ],
        &env,
        None,
    );
    assert_eq!(c, 0, "{err}");
    assert_eq!(err, "", "-q: nothing on stderr");
    assert!(prefix.with_extension("pub").is_file());
}

#[test]
fn add_prunes_error_names_a_few_bundles_and_the_likely_fix() {
    // ack-ecr-controller's CSVs set no spec.replaces (its ci.yaml says
    // semver-mode): in replaces mode only each channel head stays.
    let dirs = common::package_bundle_dirs("ack-ecr-controller");
    assert!(dirs.len() > 20, "{}", dirs.len());
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("i.db");
    let mut args = vec![
        "index".to_string(),
        "add".to_string(),
        "-d".to_string(),
        db.display().to_string(),
        "--mode".to_string(),
        "replaces".to_string(),
    ];
    args.extend(dirs.iter().map(|d| d.display().to_string()));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let (c, out, err) = olm(&argv);
    assert_ne!(c, 0, "{out}{err}");
    let line = err
        .lines()
        .find(|l| l.contains("add prunes"))
        .unwrap_or_else(|| panic!("no prunes error: {err}"));
    let n: usize = line
        .split("add prunes ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no count: {line}"));
    assert!(n > 5, "{line}");
    assert_eq!(line.matches(" from channel ").count(), 5, "{line}");
    assert!(line.contains(&format!("and {} more", n - 5)), "{line}");
    assert!(line.contains("--mode semver"), "{line}");
    assert!(line.contains("--permissive"), "{line}");
    assert!(line.len() < 2000, "{} bytes: {line}", line.len());
    assert!(!db.exists(), "a refused add leaves no database");
}

#[test]
fn render_names_the_yaml_error_of_a_bundle() {
    let t = tempfile::tempdir().expect("tmp");
    let b = t.path().join("bad");
    std::fs::create_dir_all(b.join("manifests")).expect("mkdir");
    std::fs::create_dir_all(b.join("metadata")).expect("mkdir");
    std::fs::write(
        b.join("metadata/annotations.yaml"),
        "annotations:\n  operators.operatorframework.io.bundle.package.v1: p\n  operators.operatorframework.io.bundle.channels.v1: stable\n",
    )
    .expect("write");
    let csv = b.join("manifests/p.v1.0.0.clusterserviceversion.yaml");
    std::fs::write(
        &csv,
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: p.v1.0.0\n  bad: [unclosed\nspec:\n  version: 1.0.0\n",
    )
    .expect("write");
    let dir = b.to_str().expect("utf-8");
    let (c, out, err) = olm(&["render", dir]);
    assert_eq!(c, 2, "{out}{err}");
    assert!(!err.contains("no ClusterServiceVersion"), "{err}");
    assert!(err.contains("not valid YAML"), "{err}");
    // FILE:LINE:COLUMN, the file named once.
    let at = format!("{}:", csv.display());
    assert!(err.contains(&at), "{err}");
    let rest = &err[err.find(&at).expect("file") + at.len()..];
    let mut parts = rest.splitn(3, ':');
    for what in ["line", "column"] {
        let n = parts.next().unwrap_or("");
        assert!(n.parse::<u32>().is_ok_and(|n| n > 0), "{what} in {err}");
    }
    assert_eq!(
        err.matches("clusterserviceversion.yaml").count(),
        1,
        "{err}"
    );
    // index add says the same.
    let db = t.path().join("i.db");
    let (c, _, err2) = olm(&["index", "add", "-d", db.to_str().expect("utf-8"), dir]);
    assert_eq!(c, 2, "{err2}");
    assert!(
        err2.contains(&at) && err2.contains("not valid YAML"),
        "{err2}"
    );
}

#[test]
fn bundle_build_without_tag_keeps_packages_apart() {
    // Two packages' bundles in directories of the same name.
    let ops = common::corpus().join("operators");
    let t = tempfile::tempdir().expect("tmp");
    let mut refs = Vec::new();
    for (pkg, ver) in [("etcd", "0.9.4"), ("cockroachdb", "5.0.3")] {
        let to = t.path().join(pkg).join("same");
        common::copy_dir(&ops.join(pkg).join(ver), &to);
        let o = std::process::Command::new(common::bin())
            .args(["bundle", "build"])
            .arg(&to)
            .current_dir(t.path())
            .env("HOME", "/nonexistent")
            .output()
            .expect("run");
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(
            o.status.success(),
            "{pkg}: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            out.starts_with(&format!("oci:oci-images:bundle-{pkg}-same@sha256:")),
            "{out}"
        );
        refs.push(out.trim().to_string());
    }
    // Both images are still there, each under its own tag.
    let index = std::fs::read_to_string(t.path().join("oci-images/index.json")).expect("index");
    for pkg in ["etcd", "cockroachdb"] {
        assert!(index.contains(&format!("bundle-{pkg}-same")), "{index}");
    }
    assert_ne!(refs[0], refs[1]);
}

#[test]
fn migrate_to_a_bad_path_names_the_destination() {
    let t = tempfile::tempdir().expect("tmp");
    let db = t.path().join("i.db");
    let dbs = db.to_str().expect("utf-8");
    let bundle = common::corpus().join("operators/etcd/0.6.1");
    let (c, _, err) = olm(&["index", "add", "-d", dbs, bundle.to_str().expect("utf-8")]);
    assert_eq!(c, 0, "{err}");
    let file = t.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let missing = t.path().join("no/such/dir/out");
    for dest in [missing.clone(), file.join("out"), file.clone()] {
        let d = dest.to_str().expect("utf-8");
        let (c, out, err) = olm(&["migrate", dbs, d]);
        assert_eq!(c, 2, "{d}: {out}{err}");
        assert!(err.contains(&format!("{d}:")), "{d}: {err}");
        assert!(!err.contains(".olm-catalog-migrate"), "{d}: {err}");
    }
    assert!(!missing.parent().expect("parent").exists());
    assert_eq!(std::fs::read_to_string(&file).expect("file"), "x");
    // And where it can write, it does.
    let good = t.path().join("out");
    let (c, _, err) = olm(&["migrate", dbs, good.to_str().expect("utf-8")]);
    assert_eq!(c, 0, "{err}");
    assert!(good.join("etcd").is_dir());
}

#[test]
fn serve_help_says_it_takes_images() {
    let (c, out, err) = olm(&["serve", "--help"]);
    assert_eq!(c, 0, "{err}");
    assert!(out.contains("<CATALOG|IMAGE>"), "{out}");
    assert!(out.contains("oci:DIR:TAG"), "{out}");
    assert!(out.contains("registry reference"), "{out}");
    assert!(out.contains("olm-catalog serve quay.io/"), "{out}");
}

#[test]
fn readme_says_what_the_binary_links() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    // The binary is dynamically linked against glibc: README must not
    // call it static, and says what it needs.
    assert!(
        !readme.contains("One static binary"),
        "README calls it static"
    );
    assert!(readme.contains("glibc 2.34"), "README names its C library");
    let exe = std::fs::read(common::bin()).expect("binary");
    // An ELF with a PT_INTERP (dynamically linked) names its loader.
    let dynamic = exe.windows(b"ld-linux".len()).any(|w| w == b"ld-linux");
    assert!(
        dynamic,
        "the binary is static now: README's 'What the binary needs' is out of date"
    );
}

#[test]
fn quiet_silences_the_index_notes() {
    let t = tempfile::tempdir().expect("tmp");
    let bundle = common::corpus().join("operators/etcd/0.6.1");
    let b = bundle.to_str().expect("utf-8");
    for quiet in [false, true] {
        let db = t.path().join(format!("q{quiet}.db"));
        let d = db.to_str().expect("utf-8");
        let to = t.path().join(format!("export-{quiet}"));
        let to_s = to.to_str().expect("utf-8");
        let steps: Vec<Vec<&str>> = vec![
            vec!["index", "add", "-d", d, b],
            vec!["index", "export", "-d", d, "--to", to_s],
            vec!["index", "rm", "-d", d, "--packages", "etcd"],
            vec!["index", "prune-stranded", "-d", d],
        ];
        for step in steps {
            let mut args = step.clone();
            if quiet {
                args.insert(0, "-q");
            }
            let (c, out, err) = olm(&args);
            assert_eq!(c, 0, "{args:?}: {out}{err}");
            if quiet {
                assert_eq!(err, "", "{args:?}: -q leaves stderr empty");
            } else {
                assert_ne!(err, "", "{args:?}: a note without -q");
            }
        }
        assert!(to.join("etcd").is_dir(), "{}", to.display());
    }
}
