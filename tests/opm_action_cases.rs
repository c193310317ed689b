//! opm v1.73.0's own action tests, case by case, as command lines
//! (operator-registry `alpha/action/init_test.go`, `migrate_test.go`,
//! `render_test.go` and `alpha/action/migrations/migrations_test.go`):
//! every table case with a command-line equivalent, with the expectation
//! the Go test asserts. `docs/opm-tests.md` lists them, and the
//! cases left out with the reason.
//!
//! The fixtures are ours (`tests/data/opm-actions/`): bundle directories
//! and a file-based catalog with the content the Go tests describe, so
//! that the expected outputs (`expected/`, the Go tests' expectations
//! written as `opm render -o yaml` writes them) hold byte for byte. Images
//! are pushed to a real registry on loopback; its `HOST:PORT` is written
//! `test.registry` in the outputs compared, as the Go tests name it.
use std::path::{Path, PathBuf};

use crate::common::{self, run};
use crate::registry::Registry;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/opm-actions")
}

fn bundle_dir(name: &str) -> String {
    path(&data().join("bundles").join(name))
}

fn path(p: &Path) -> String {
    p.to_str().expect("utf-8 path").to_string()
}

fn expected(name: &str) -> String {
    std::fs::read_to_string(data().join("expected").join(name)).expect("expected output")
}

/// Runs `args`, asserting success; stdout.
fn ok(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// An SQLite index of the bundle directories `dirs` (replaces mode, as the
/// Go tests' `generateSqliteFile` populates it), each recorded under the
/// `test.registry` image the Go tests give it.
fn index_db(at: &Path, dirs: &[(&str, &str)]) -> String {
    let db = path(at);
    let mut args: Vec<String> = ["index", "add", "--database", &db, "--mode", "replaces"]
        .map(String::from)
        .to_vec();
    for (dir, image) in dirs {
        let d = bundle_dir(dir);
        args.push("--bundle-image".into());
        args.push(format!("{d}={image}"));
        args.push(d);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&args);
    db
}

const FOO_V1: (&str, &str) = ("foo-v0.1.0", "test.registry/foo-operator/foo-bundle:v0.1.0");
const FOO_V2: (&str, &str) = ("foo-v0.2.0", "test.registry/foo-operator/foo-bundle:v0.2.0");
const BAR_V1: (&str, &str) = ("bar-v0.1.0", "test.registry/bar-operator/bar-bundle:v0.1.0");
const BAR_V2: (&str, &str) = ("bar-v0.2.0", "test.registry/bar-operator/bar-bundle:v0.2.0");

/// The images of the Go tests' `newRegistry` and `newMigrateRegistry`,
/// pushed to a real registry: bundle images, SQLite index images and an FBC
/// catalog image.
struct Images {
    reg: Registry,
    tmp: tempfile::TempDir,
    /// The SQLite index of foo's two bundles.
    foo_db: String,
    /// The SQLite index of foo's and bar's bundles (`TestMigrate`).
    foo_bar_db: String,
}

impl Images {
    fn push() -> Images {
        let reg = Registry::start();
        let tmp = tempfile::tempdir().expect("tempdir");
        for (dir, repo) in [
            ("foo-v0.1.0", "foo-operator/foo-bundle:v0.1.0"),
            ("foo-v0.2.0", "foo-operator/foo-bundle:v0.2.0"),
            (
                "foo-v0.2.0-no-related-images",
                "foo-operator/foo-bundle-no-csv-related-images:v0.2.0",
            ),
        ] {
            let tag = format!("{}/{repo}", reg.host());
            ok(&["bundle", "build", &bundle_dir(dir), "--tag", &tag, "-q"]);
        }
        let foo_db = index_db(&tmp.path().join("foo.db"), &[FOO_V1, FOO_V2]);
        let foo_bar_db = index_db(
            &tmp.path().join("foo-bar.db"),
            &[FOO_V1, FOO_V2, BAR_V1, BAR_V2],
        );
        for (db, repo) in [
            (&foo_db, "foo-operator/foo-index-sqlite:v0.2.0"),
            (&foo_bar_db, "migrate/catalog:sqlite"),
        ] {
            let tag = format!("{}/{repo}", reg.host());
            ok(&[
                "index",
                "build",
                "--database",
                db,
                "--tag",
                &tag,
                "--base",
                "scratch",
                "-q",
            ]);
        }
        let tag = format!("{}/foo-operator/foo-index-declcfg:v0.2.0", reg.host());
        let catalog = path(&data().join("catalog"));
        ok(&[
            "catalog", "build", &catalog, "--tag", &tag, "--base", "scratch", "-q",
        ]);
        Images {
            reg,
            tmp,
            foo_db,
            foo_bar_db,
        }
    }

    /// The reference of `repo` (`foo-operator/foo-bundle:v0.2.0`) in the
    /// registry.
    fn image(&self, repo: &str) -> String {
        format!("{}/{repo}", self.reg.host())
    }

    /// `text` (YAML as `render -o yaml` writes it) with the registry's
    /// address written `test.registry`. Related images are sorted by image
    /// (opm's order) again: the bundle image was sorted under the
    /// registry's own address.
    fn as_test_registry(&self, text: &str) -> String {
        let text = text.replace(&self.reg.host(), "test.registry");
        let mut out: Vec<String> = Vec::new();
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            out.push(line.to_string());
            if line != "relatedImages:" {
                continue;
            }
            let mut items: Vec<Vec<String>> = Vec::new();
            while let Some(l) = lines.next_if(|l| l.starts_with("- ") || l.starts_with("  ")) {
                match items.last_mut() {
                    Some(item) if l.starts_with("  ") => item.push(l.to_string()),
                    _ => items.push(vec![l.to_string()]),
                }
            }
            items.sort();
            out.extend(items.into_iter().flatten());
        }
        out.iter().map(|l| format!("{l}\n")).collect()
    }
}

// ---- alpha/action/render_test.go: TestRender ---------------------------

/// `TestRender`'s cases without a test-only migration: what `opm render`
/// writes for each kind of source, byte for byte as the Go test's
/// expectation written with `-o yaml`.
#[test]
fn render_cases() {
    let images = Images::push();
    let catalog = path(&data().join("catalog"));
    let cases: [(&str, String, &[&str], &str); 8] = [
        (
            "Success/SqliteIndexImage",
            images.image("foo-operator/foo-index-sqlite:v0.2.0"),
            &[],
            "foo-sqlite.yaml",
        ),
        (
            "Success/SqliteFile",
            images.foo_db.clone(),
            &[],
            "foo-sqlite.yaml",
        ),
        (
            "Success/DeclcfgIndexImage",
            images.image("foo-operator/foo-index-declcfg:v0.2.0"),
            &[],
            "foo-fbc.yaml",
        ),
        (
            "Success/DeclcfgDirectory",
            catalog.clone(),
            &[],
            "foo-fbc.yaml",
        ),
        (
            "Success/BundleImage",
            images.image("foo-operator/foo-bundle:v0.2.0"),
            &[],
            "bundle-image-foo-v0.2.0.yaml",
        ),
        (
            "Success/BundleImageWithNoCSVRelatedImages",
            images.image("foo-operator/foo-bundle-no-csv-related-images:v0.2.0"),
            &[],
            "bundle-image-foo-v0.2.0-no-csv-related-images.yaml",
        ),
        (
            "Success/BundleDirectoryWithImageRefTemplate",
            bundle_dir("foo-v0.2.0"),
            &[
                "--alpha-image-ref-template",
                "test.registry/{{.Package}}-operator/{{.Package}}:v{{.Version}}",
            ],
            "bundle-dir-foo-v0.2.0-image-ref-template.yaml",
        ),
        (
            "Success/BundleDirectory",
            bundle_dir("foo-v0.2.0"),
            &[],
            "bundle-dir-foo-v0.2.0.yaml",
        ),
    ];
    for (name, source, extra, want) in cases {
        let mut args = vec!["render", source.as_str(), "-o", "yaml"];
        args.extend(extra);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(images.as_test_registry(&out), expected(want), "{name}");
    }
    // TestAllowRefMask's All/Allowed: one `render` of every kind of source
    // at once gives the objects of each. (`render` allows every kind; the
    // `*/NotAllowed` cases with a command are `migrate`'s and
    // `render-template`'s, below.)
    let sources = [
        images.image("foo-operator/foo-index-sqlite:v0.2.0"),
        images.foo_db.clone(),
        images.image("foo-operator/foo-index-declcfg:v0.2.0"),
        catalog,
        images.image("foo-operator/foo-bundle:v0.2.0"),
        bundle_dir("foo-v0.2.0"),
    ];
    let mut args = vec!["render", "-o", "yaml"];
    args.extend(sources.iter().map(String::as_str));
    let out = images.as_test_registry(&ok(&args));
    let mut want = String::new();
    for f in [
        "foo-sqlite.yaml",
        "foo-sqlite.yaml",
        "foo-fbc.yaml",
        "foo-fbc.yaml",
        "bundle-image-foo-v0.2.0.yaml",
        "bundle-dir-foo-v0.2.0.yaml",
    ] {
        want.push_str(&expected(f));
    }
    // opm writes the objects of all sources grouped by package, packages
    // first: compare the objects as sets of documents per kind.
    let docs = |t: &str| {
        let mut d: Vec<String> = t.split("---\n").map(String::from).collect();
        d.sort();
        d
    };
    assert_eq!(docs(&out), docs(&want));
}

// ---- alpha/action/migrate_test.go: TestMigrate -------------------------

/// The files of directory `dir`, relative path to content.
fn files(dir: &Path) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("under dir");
                out.insert(
                    path(rel),
                    std::fs::read_to_string(&p).expect("read output file"),
                );
            }
        }
    }
    out
}

/// `TestMigrate`: `migrate -o yaml` of an SQLite index image or file, an
/// FBC image or directory writes one `<package>/catalog.yaml` per package,
/// each exactly the Go test's; a bundle image is not allowed.
#[test]
fn migrate_cases() {
    let images = Images::push();
    let catalog = path(&data().join("catalog"));
    let sqlite = [
        ("foo/catalog.yaml", expected("foo-sqlite.yaml")),
        ("bar/catalog.yaml", expected("bar-sqlite.yaml")),
    ];
    let fbc = [("foo/catalog.yaml", expected("foo-fbc.yaml"))];
    // (case, source, more arguments, files written)
    type Case<'a> = (&'a str, String, &'a [&'a str], &'a [(&'a str, String)]);
    let cases: [Case; 5] = [
        (
            "SqliteImage/Success",
            images.image("migrate/catalog:sqlite"),
            &[],
            &sqlite,
        ),
        (
            "SqliteFile/Success",
            images.foo_bar_db.clone(),
            &[],
            &sqlite,
        ),
        (
            "DeclcfgImage/Success",
            images.image("foo-operator/foo-index-declcfg:v0.2.0"),
            &[],
            &fbc,
        ),
        ("DeclcfgDir/Success", catalog, &[], &fbc),
        // Migrations: nil is no --migrate-level (and `none` is the same).
        (
            "SqliteImage/Success/NoMigrations",
            images.image("migrate/catalog:sqlite"),
            &["--migrate-level", "none"],
            &sqlite,
        ),
    ];
    for (i, (name, source, extra, want)) in cases.iter().enumerate() {
        let out = images.tmp.path().join(format!("out-{i}"));
        let mut args = vec!["migrate", source.as_str(), out.to_str().expect("utf-8")];
        args.extend(["-o", "yaml"]);
        args.extend(extra.iter());
        let (code, _, err) = run(&args);
        assert_eq!(code, 0, "{name}: {err}");
        let got: Vec<(String, String)> = files(&out).into_iter().collect();
        let mut want: Vec<(String, String)> = want
            .iter()
            .map(|(p, t)| (p.to_string(), t.clone()))
            .collect();
        want.sort();
        assert_eq!(got, want, "{name}");
    }
    // BundleImage/Failure (ErrNotAllowed), and TestAllowRefMask's
    // BundleImage/NotAllowed and BundleDir/NotAllowed: migrate's mask
    // leaves bundles out. Nothing is written.
    for (name, source) in [
        (
            "BundleImage/Failure",
            images.image("foo-operator/foo-bundle:v0.1.0"),
        ),
        ("BundleDir/NotAllowed", bundle_dir("foo-v0.1.0")),
    ] {
        let out = images.tmp.path().join("refused");
        let (code, _, err) = run(&["migrate", &source, out.to_str().expect("utf-8")]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains("a bundle"), "{name}: {err}");
        assert!(!out.exists(), "{name}: nothing is written");
    }
}

// ---- alpha/action/migrations/migrations_test.go: TestMigrations --------

/// `TestMigrations`: a bundle whose `olm.bundle.object`s are a CRD written
/// as YAML and a CSV, rendered at each level: `none` changes nothing;
/// `bundle-object-to-csv-metadata` and `all` replace the objects with one
/// `olm.csv.metadata` made from the CSV, last.
#[test]
fn migrations_cases() {
    use base64::Engine as _;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let csv = r#"{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": {"name": "foo.v0.1.0"}, "spec": {"displayName": "Foo Operator", "customresourcedefinitions": {"owned": [{"group": "test.foo", "version": "v1", "kind": "Foo", "name": "foos.test.foo"}]}, "version": "0.1.0", "relatedImages": [{"name": "operator", "image": "test.registry/foo-operator/foo:v0.1.0"}]}}"#;
    let crd = "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: foos.test.foo\nspec:\n  group: test.foo\n  names:\n    kind: Foo\n    plural: foos\n  versions:\n    - name: v1";
    let kept = serde_json::json!([
        {"type": "olm.gvk", "value": {"group": "test.foo", "kind": "Foo", "version": "v1"}},
        {"type": "olm.gvk.required", "value": {"group": "test.bar", "kind": "Bar", "version": "v1alpha1"}},
        {"type": "olm.package", "value": {"packageName": "foo", "version": "0.1.0"}},
        {"type": "olm.package.required", "value": {"packageName": "bar", "versionRange": "<0.1.0"}},
    ]);
    let mut unmigrated = kept.as_array().expect("array").clone();
    unmigrated.push(serde_json::json!({"type": "olm.bundle.object", "value": {"data": b64(crd)}}));
    unmigrated.push(serde_json::json!({"type": "olm.bundle.object", "value": {"data": b64(csv)}}));
    let bundle = |props: Vec<serde_json::Value>| {
        serde_json::json!({
            "schema": "olm.bundle",
            "name": "foo.v0.1.0",
            "package": "foo",
            "image": "quay.io/openshift-community-operators/foo:v0.1.0",
            "properties": props,
        })
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("catalog");
    std::fs::create_dir_all(dir.join("foo")).expect("mkdir");
    std::fs::write(
        dir.join("foo/catalog.json"),
        bundle(unmigrated.clone()).to_string(),
    )
    .expect("write");
    let mut migrated = kept.as_array().expect("array").clone();
    migrated.push(serde_json::json!({"type": "olm.csv.metadata", "value": {
        "apiServiceDefinitions": {},
        "crdDescriptions": {"owned": [{"kind": "Foo", "name": "foos.test.foo", "version": "v1"}]},
        "displayName": "Foo Operator",
        "provider": {},
    }}));
    for (name, level, want) in [
        ("NoMigrations", "none", bundle(unmigrated.clone())),
        (
            "BundleObjectToCSVMetadata",
            "bundle-object-to-csv-metadata",
            bundle(migrated.clone()),
        ),
        ("MigrationSequence", "all", bundle(migrated.clone())),
    ] {
        let out = ok(&["render", &path(&dir), "--migrate-level", level]);
        assert_eq!(
            common::json_stream(&out),
            std::slice::from_ref(&want),
            "{name}"
        );
        // migrate runs the same migrations.
        let to = tmp.path().join(format!("migrated-{level}"));
        ok(&["migrate", &path(&dir), &path(&to), "--migrate-level", level]);
        let written = std::fs::read_to_string(to.join("foo/catalog.json")).expect("written");
        assert_eq!(common::json_stream(&written), [want], "{name} (migrate)");
    }
}

// ---- alpha/action/init_test.go: TestInit -------------------------------

const SVG_ICON: &str = r#"<svg viewBox="0 0 100 100"><circle cx="25" cy="25" r="25"/></svg>"#;

/// `TestInit`: `init` writes the one `olm.package` object the Go test
/// expects; an unreadable description or icon, an icon that is not an
/// image, and an empty icon are errors.
#[test]
fn init_cases() {
    use base64::Engine as _;
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = |name: &str, text: &str| {
        let p = tmp.path().join(name);
        std::fs::write(&p, text).expect("write");
        path(&p)
    };
    let desc = file("desc-foo", "foo");
    let desc_c = file("desc-c", "c");
    let icon = file("icon.svg", SVG_ICON);
    let icon_json = serde_json::json!({
        "base64data": base64::engine::general_purpose::STANDARD.encode(SVG_ICON),
        "mediatype": "image/svg+xml",
    });
    let cases: Vec<(&str, Vec<&str>, serde_json::Value)> = vec![
        (
            "Success/Empty",
            vec![""],
            serde_json::json!({"schema": "olm.package", "name": ""}),
        ),
        (
            "Success/SetPackage",
            vec!["foo"],
            serde_json::json!({"schema": "olm.package", "name": "foo"}),
        ),
        (
            "Success/SetDefaultChannel",
            vec!["", "--default-channel", "foo"],
            serde_json::json!({"schema": "olm.package", "name": "", "defaultChannel": "foo"}),
        ),
        (
            "Success/SetDescription",
            vec!["", "--description", &desc],
            serde_json::json!({"schema": "olm.package", "name": "", "description": "foo"}),
        ),
        (
            "Success/SetIcon",
            vec!["", "--icon", &icon],
            serde_json::json!({"schema": "olm.package", "name": "", "icon": icon_json}),
        ),
        (
            "Success/SetAll",
            vec!["a", "-c", "b", "--description", &desc_c, "-i", &icon],
            serde_json::json!({
                "schema": "olm.package", "name": "a", "defaultChannel": "b",
                "description": "c", "icon": icon_json,
            }),
        ),
    ];
    for (name, extra, want) in cases {
        let mut args = vec!["init"];
        args.extend(extra);
        let out = ok(&args);
        assert_eq!(common::json_stream(&out), [want], "{name}");
    }
    let unreadable = path(tmp.path());
    let not_image = file("icon.txt", "foo");
    let empty = file("icon.empty", "");
    for (name, args, says) in [
        (
            "Fail/ReadDescription",
            ["init", "a", "--description", &unreadable],
            "reading the description",
        ),
        (
            "Fail/ReadIcon",
            ["init", "a", "--icon", &unreadable],
            "reading the icon",
        ),
        (
            "Fail/IconNotImage",
            ["init", "a", "--icon", &not_image],
            "not an image",
        ),
        (
            "Fail/EmptyIcon",
            ["init", "a", "--icon", &empty],
            "not an image",
        ),
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{name}: {out}{err}");
        assert!(out.is_empty(), "{name}: nothing is written: {out}");
        assert!(err.contains(says), "{name}: {err}");
    }
}

/// `TestAllowRefMask`'s `SqliteImage/NotAllowed` and
/// `DeclcfgImage/NotAllowed` where a command has that mask: a template's
/// bundles are rendered with bundle images allowed only, so an index or a
/// catalog image named as a bundle is refused, `not allowed`, as opm
/// refuses it (here from OCI layouts, which `render-template` reads as it
/// would pull them).
#[test]
fn render_template_refuses_index_and_catalog_images() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = index_db(&tmp.path().join("foo.db"), &[FOO_V1, FOO_V2]);
    let layout = path(&tmp.path().join("layout"));
    ok(&[
        "index",
        "build",
        "--database",
        &db,
        "--tag",
        &format!("oci:{layout}:sqlite"),
        "--base",
        "scratch",
        "-q",
    ]);
    ok(&[
        "catalog",
        "build",
        &path(&data().join("catalog")),
        "--tag",
        &format!("oci:{layout}:declcfg"),
        "--base",
        "scratch",
        "-q",
    ]);
    for (name, tag, says) in [
        (
            "SqliteImage/NotAllowed",
            "sqlite",
            "cannot render sqlite image",
        ),
        (
            "DeclcfgImage/NotAllowed",
            "declcfg",
            "cannot render declarative config image",
        ),
    ] {
        let t = tmp.path().join(format!("{tag}.yaml"));
        std::fs::write(
            &t,
            format!("schema: olm.semver\nstable:\n  bundles:\n  - image: oci:{layout}:{tag}\n"),
        )
        .expect("write template");
        let (code, out, err) = run(&["render-template", &path(&t)]);
        assert_eq!(code, 2, "{name}: {out}");
        assert!(err.contains(says), "{name}: {err}");
        assert!(err.contains("not allowed"), "{name}: {err}");
    }
}
