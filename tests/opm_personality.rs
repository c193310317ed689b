//! The `opm` personality (issue 27): real opm command lines, run through a
//! link named `opm` to the built binary, give opm's files, stdout and exit
//! codes. Expectations come from `../shared/opm-golden` (what opm v1.26.5
//! wrote for the same bundles) where it has them, else from opm v1.73.0's
//! code and tests (cited at each test).
use crate::common;
use crate::registry::Registry;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A directory holding `opm`, a link to the built binary.
fn opm_link() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let link = dir.path().join("opm");
    std::os::unix::fs::symlink(common::bin(), &link).expect("symlink opm");
    (dir, link)
}

/// Runs `opm ARGS` (through the link) in `cwd` with `stdin`, with a PATH
/// that has no container tool (so nothing depends on a daemon here) and
/// no registry credentials. Returns (exit code, stdout, stderr).
fn opm_in(cwd: &Path, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    use std::io::Write as _;
    let (_keep, opm) = opm_link();
    let empty_path = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(&opm);
    cmd.args(args)
        .current_dir(cwd)
        .env("PATH", empty_path.path())
        .env("HOME", "/nonexistent")
        .env_remove("REGISTRY_AUTH_FILE")
        .env_remove("DOCKER_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run opm");
    if let Some(input) = stdin {
        // A command may fail (or finish) before it reads its input: a
        // closed pipe is its answer, not the test's failure.
        if let Err(e) = child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
        {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
        }
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("wait for opm");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn opm(args: &[&str]) -> (i32, String, String) {
    opm_in(Path::new("."), args, None)
}

/// Pushes the golden etcd bundles (corpus directories) to `reg` as
/// `HOST/cop/etcd-bundle:VERSION`, in `bundle-images.txt` order; their refs.
fn push_etcd_bundles(reg: &Registry, tmp: &Path) -> Vec<String> {
    let golden = common::golden().join("sqlite/etcd");
    let list = std::fs::read_to_string(golden.join("bundle-images.txt")).expect("list");
    let mut lines = String::new();
    let mut refs = Vec::new();
    for l in list.lines().filter(|l| !l.trim().is_empty()) {
        let tagged = l.split('@').next().expect("ref");
        let version = tagged.rsplit(':').next().expect("tag");
        let dir = common::corpus().join("operators/etcd").join(version);
        let r = tagged.replace("127.0.0.1:5000", &reg.host());
        lines.push_str(&format!("{} {r}\n", dir.display()));
        refs.push(r);
    }
    let file = tmp.join("etcd-bundles.txt");
    std::fs::write(&file, lines).expect("bundles file");
    let o = common::olm(&[
        "bundle",
        "build",
        "--bundles-file",
        file.to_str().expect("utf-8"),
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    refs
}

/// The render of `db` with the registry host rewritten to the golden one.
fn render_db(db: &Path) -> String {
    let (code, out, err) = common::run(&["render", db.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    out
}

/// The operator-sdk scaffold's `catalog-build` target
/// (`$(OPM) index add --container-tool docker --mode semver --tag
/// $(CATALOG_IMG) --bundles $(BUNDLE_IMGS) $(FROM_INDEX_OPT)`), with the
/// bundles comma-separated as the Makefile joins them, on a machine with no
/// docker: the index image is built without a daemon and pushed. Its
/// database renders as opm's golden index of the same bundles; the
/// `--from-index` form adds to it; `--generate` leaves opm's files.
#[test]
fn scaffold_catalog_build_with_and_without_from_index() {
    let reg = Registry::start();
    let host = reg.host();
    let tmp = tempfile::tempdir().expect("tempdir");
    let refs = push_etcd_bundles(&reg, tmp.path());
    let golden = common::golden().join("sqlite/etcd");
    let replace = [(host.as_str(), "127.0.0.1:5000")];

    // Without --from-index: the first five bundles (the Makefile's list).
    let first = refs[..5].join(",");
    let v1 = format!("{host}/cop/etcd-index:v1");
    let (code, _, err) = opm_in(
        tmp.path(),
        &[
            "index",
            "add",
            "--container-tool",
            "docker",
            "--mode",
            "replaces",
            "--tag",
            &v1,
            "--bundles",
            &first,
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    // One line says what was done instead of `docker build`.
    assert!(
        err.contains("docker is not available") && err.contains(&v1),
        "{err}"
    );
    // No build context is left behind (opm removes its temporary one).
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(left, ["etcd-bundles.txt"], "{left:?}");

    // With --from-index (the scaffold's FROM_INDEX_OPT), adding the last.
    let v2 = format!("{host}/cop/etcd-index:v2");
    let (code, _, err) = opm_in(
        tmp.path(),
        &[
            "index",
            "add",
            "--container-tool",
            "docker",
            "--mode",
            "replaces",
            "--tag",
            &v2,
            "--bundles",
            &refs[5],
            "--from-index",
            &v1,
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    // The pushed image's database is opm's golden index of all six.
    let work = tmp.path().join("check");
    std::fs::create_dir(&work).expect("mkdir");
    let (code, _, err) = common::run(&["migrate", &v2, work.join("fbc").to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    let (code, ours, err) = common::run(&["render", work.join("fbc").to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    common::assert_render_matches(&ours, &golden.join("render.json"), &replace);

    // --generate (the README's "generate a Dockerfile instead of an
    // image"): database/index.db and index.Dockerfile in the current
    // directory, as opm's buildContext lays them out.
    let gen = tmp.path().join("gen");
    std::fs::create_dir(&gen).expect("mkdir");
    let all = refs.join(",");
    let (code, _, err) = opm_in(
        &gen,
        &[
            "index",
            "add",
            "--bundles",
            &all,
            "--generate",
            "--use-http",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    common::assert_render_matches(
        &render_db(&gen.join("database/index.db")),
        &golden.join("render.json"),
        &replace,
    );
    assert_eq!(
        std::fs::read_to_string(gen.join("index.Dockerfile")).expect("Dockerfile"),
        "FROM quay.io/operator-framework/opm:latest\n\
         LABEL operators.operatorframework.io.index.database.v1=/database/index.db\n\
         ADD database/index.db /database/index.db\n\
         EXPOSE 50051\n\
         ENTRYPOINT [\"/bin/opm\"]\n\
         CMD [\"registry\", \"serve\", \"--database\", \"/database/index.db\"]\n"
    );
    // -d names the Dockerfile, -i its base; -b may repeat.
    let (code, _, err) = opm_in(
        &gen,
        &[
            "index",
            "add",
            "-b",
            &refs[0],
            "-b",
            &refs[1],
            "--generate",
            "-d",
            "custom.Dockerfile",
            "-i",
            "quay.io/operator-framework/opm:v1.73.0",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(gen.join("custom.Dockerfile")).expect("Dockerfile");
    assert!(
        text.starts_with("FROM quay.io/operator-framework/opm:v1.73.0\n"),
        "{text}"
    );
    let (_, listed, _) = opm(&[
        "alpha",
        "list",
        "bundles",
        gen.join("database/index.db").to_str().expect("utf-8"),
    ]);
    // Two bundles, one of them in two channels: a row per channel entry.
    assert_eq!(listed.lines().count(), 4, "{listed}");

    // The other commands on the pushed index: migrate's tree, export's
    // download folder, prune with --generate, registry add.
    let (code, _, err) = opm_in(tmp.path(), &["migrate", &v2, "migrated"], None);
    assert_eq!(code, 0, "{err}");
    assert!(tmp.path().join("migrated/etcd/catalog.json").is_file());
    let (code, _, err) = opm_in(
        tmp.path(),
        &["index", "export", "-i", &v2, "-p", "etcd"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert!(tmp.path().join("downloaded/etcd").is_dir());
    let pruned = tmp.path().join("pruned");
    std::fs::create_dir(&pruned).expect("mkdir");
    let (code, _, err) = opm_in(
        &pruned,
        &["index", "prune", "-f", &v2, "-p", "etcd", "--generate"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    common::assert_render_matches(
        &render_db(&pruned.join("database/index.db")),
        &golden.join("render.json"),
        &replace,
    );
    let (code, _, err) = opm_in(
        tmp.path(),
        &["registry", "add", "-b", &all, "-d", "registry.db"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    common::assert_render_matches(
        &render_db(&tmp.path().join("registry.db")),
        &golden.join("render.json"),
        &replace,
    );
    let (code, _, err) = opm_in(
        tmp.path(),
        &["registry", "rm", "-o", "etcd", "-d", "registry.db"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let (_, packages, _) = opm(&[
        "alpha",
        "list",
        "packages",
        tmp.path().join("registry.db").to_str().expect("utf-8"),
    ]);
    assert_eq!(packages, "NAME  DISPLAY NAME  DEFAULT CHANNEL\n");
}

/// `index add --tag T -c docker` when docker answers: the image is handed
/// to `docker load` as a docker-archive tagged T. No docker daemon runs
/// here, so `docker` is a script whose `info` succeeds and whose `load`
/// gives the archive to skopeo (an independent reader of the format), which
/// copies it to the registry; the copy is then read back as an index image.
#[test]
fn scaffold_catalog_build_loads_into_an_answering_container_tool() {
    let reg = Registry::start();
    let host = reg.host();
    let tmp = tempfile::tempdir().expect("tempdir");
    let refs = push_etcd_bundles(&reg, tmp.path());
    let tools = tmp.path().join("tools");
    std::fs::create_dir(&tools).expect("mkdir");
    let loaded = format!("{host}/cop/loaded:v1");
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\n  info) exit 0 ;;\n  load) [ \"$2\" = -i ] || exit 9\n    \
         exec /usr/bin/skopeo copy -q --dest-tls-verify=false docker-archive:\"$3\" docker://{loaded} ;;\n\
         esac\nexit 8\n"
    );
    let docker = tools.join("docker");
    std::fs::write(&docker, script).expect("write");
    std::fs::set_permissions(&docker, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let (_keep, opm_path) = opm_link();
    let tag = "example.com/me/catalog:v1";
    let o = Command::new(&opm_path)
        .args([
            "index",
            "add",
            "--container-tool",
            "docker",
            "--tag",
            tag,
            "--bundles",
            &refs[..2].join(","),
        ])
        .current_dir(tmp.path())
        .env("PATH", &tools)
        .env("HOME", "/nonexistent")
        .output()
        .expect("run opm");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("loaded it into docker (docker load)"), "{err}");
    // The archive carried the tag docker would list.
    let inspect = crate::registry::skopeo(&[
        "inspect",
        "--tls-verify=false",
        &format!("docker://{loaded}"),
    ]);
    let v: serde_json::Value = serde_json::from_str(&inspect).expect("json");
    assert_eq!(
        v["Labels"]["operators.operatorframework.io.index.database.v1"], "/database/index.db",
        "{inspect}"
    );
    let (code, listed, err) = opm(&["alpha", "list", "packages", &loaded]);
    assert_eq!(code, 0, "{err}");
    assert!(
        listed
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("etcd  ")),
        "{listed}"
    );
}

/// `opm alpha list bundles DB PKG` on opm's own golden index: opm's
/// columns (alpha/action/list.go), sorted by package, channel and bundle,
/// laid out as Go's tabwriter (padding 2) does.
#[test]
fn alpha_list_tables_of_the_golden_index() {
    let db = common::golden().join("sqlite/etcd/index.db");
    let db = db.to_str().expect("utf-8");
    let (code, out, err) = opm(&["alpha", "list", "bundles", db, "etcd"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let cols = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert_eq!(
        cols(lines[0]),
        ["PACKAGE", "CHANNEL", "BUNDLE", "REPLACES", "SKIPS", "SKIP", "RANGE", "IMAGE"]
    );
    // Every channel entry of opm's render, once per channel.
    let render =
        std::fs::read_to_string(common::golden().join("sqlite/etcd/render.json")).expect("render");
    let objects = common::json_stream(&render);
    let entries: usize = objects
        .iter()
        .filter(|o| o["schema"] == "olm.channel")
        .map(|o| o["entries"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(lines.len(), entries + 1, "{out}");
    let mut keys: Vec<(String, String, String)> = lines[1..]
        .iter()
        .map(|l| {
            let c = cols(l);
            (c[0].clone(), c[1].clone(), c[2].clone())
        })
        .collect();
    let sorted = {
        let mut k = keys.clone();
        k.sort();
        k
    };
    assert_eq!(keys, sorted);
    keys.dedup();
    assert_eq!(keys.len(), entries);
    // Columns line up (Go's tabwriter, padding 2): IMAGE, the last
    // column, starts at the same place on every line.
    let at = lines[0].find("IMAGE").expect("IMAGE");
    for l in &lines[1..] {
        assert!(l.len() >= at && l[..at].ends_with("  "), "{l:?}");
        assert!(!l[at..].starts_with(' '), "{l:?}");
    }
    let (code, packages, err) = opm(&["alpha", "list", "packages", db]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        packages.lines().next(),
        Some("NAME  DISPLAY NAME  DEFAULT CHANNEL"),
        "{packages}"
    );
    assert!(
        packages
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("etcd  ")),
        "{packages}"
    );
    let (code, _, err) = opm(&["alpha", "list", "channels", db, "no-such-package"]);
    assert_eq!(code, 1, "{err}");
}

/// OLM's FBC workflow (olm.operatorframework.io "Creating a catalog"):
/// `opm init`, `opm render` of a bundle image, `opm validate`, `opm
/// generate dockerfile`.
#[test]
fn fbc_workflow_init_render_validate_generate() {
    let reg = Registry::start();
    let host = reg.host();
    let tmp = tempfile::tempdir().expect("tempdir");
    let refs = push_etcd_bundles(&reg, tmp.path());
    let catalog = tmp.path().join("etcd-catalog");
    std::fs::create_dir(&catalog).expect("mkdir");

    // opm init etcd --default-channel=alpha --output yaml > etcd-catalog/index.yaml
    let (code, init, err) = opm_in(
        tmp.path(),
        &[
            "init",
            "etcd",
            "--default-channel=alpha",
            "--output",
            "yaml",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        init,
        "---\ndefaultChannel: alpha\nname: etcd\nschema: olm.package\n"
    );
    // opm render IMG --output=yaml --use-http >> etcd-catalog/index.yaml
    let (code, rendered, err) = opm(&["render", &refs[5], "--output=yaml", "--use-http"]);
    assert_eq!(code, 0, "{err}");
    let (code, native, err) = common::run(&["render", &refs[5], "-o", "yaml"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(rendered, native);
    // The bundle is opm's golden one (host rewritten).
    let (_, json, _) = opm(&["render", &refs[5]]);
    let ours = common::json_stream(&json.replace(&host, "127.0.0.1:5000"));
    let golden = common::json_stream(
        &std::fs::read_to_string(common::golden().join("sqlite/etcd/render.json")).expect("golden"),
    );
    let name = ours[0]["name"].as_str().expect("name");
    let theirs = golden
        .iter()
        .find(|o| o["schema"] == "olm.bundle" && o["name"] == name)
        .expect("golden bundle");
    assert_eq!(ours[0]["image"], theirs["image"]);
    assert_eq!(ours[0]["relatedImages"], theirs["relatedImages"]);
    let channel = format!(
        "---\nschema: olm.channel\npackage: etcd\nname: alpha\nentries:\n  - name: {name}\n"
    );
    std::fs::write(
        catalog.join("index.yaml"),
        format!("{init}{rendered}{channel}"),
    )
    .expect("write catalog");

    let dir = catalog.to_str().expect("utf-8");
    let (code, _, err) = opm(&["validate", dir]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = opm(&["validate", dir, "-o", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["passed"], true, "{out}");
    // A channel naming a bundle that is not there: opm exits 1.
    let broken = tmp.path().join("broken");
    std::fs::create_dir(&broken).expect("mkdir");
    std::fs::write(
        broken.join("index.yaml"),
        format!("{init}---\nschema: olm.channel\npackage: etcd\nname: alpha\nentries:\n  - name: nothere.v1\n"),
    )
    .expect("write");
    let (code, _, _) = opm(&["validate", broken.to_str().expect("utf-8")]);
    assert_eq!(code, 1);
    // A file is not a directory.
    let (code, _, err) = opm(&[
        "validate",
        catalog.join("index.yaml").to_str().expect("utf-8"),
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("is not a directory"), "{err}");

    // opm generate dockerfile etcd-catalog
    let (code, _, err) = opm_in(
        tmp.path(),
        &["generate", "dockerfile", "etcd-catalog"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let text =
        std::fs::read_to_string(tmp.path().join("etcd-catalog.Dockerfile")).expect("written");
    assert!(text.starts_with("# The builder image is expected to contain\n# /bin/opm (with serve subcommand)\nFROM quay.io/operator-framework/opm:latest as builder\n"), "{text}");
    // Again: the file exists, opm fails (exit 1) and keeps it.
    let (code, _, err) = opm_in(
        tmp.path(),
        &["generate", "dockerfile", "etcd-catalog"],
        None,
    );
    assert_eq!(code, 1);
    assert!(err.contains("file already exists"), "{err}");
}

/// Catalog pipelines' `opm alpha render-template semver -o yaml < FILE`
/// and `... semver -o yaml -`: the template's bundle images are pulled, as
/// opm pulls them; both forms print the same as the native command.
#[test]
fn render_template_semver_from_stdin() {
    let reg = Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let refs = push_etcd_bundles(&reg, tmp.path());
    let template = format!(
        "schema: olm.semver\nGenerateMajorChannels: true\nGenerateMinorChannels: false\n\
         Stable:\n  Bundles:\n  - Image: {}\n  - Image: {}\n",
        refs[1], refs[2]
    );
    let file = tmp.path().join("semver.yaml");
    std::fs::write(&file, &template).expect("write");
    let (code, redirected, err) = opm_in(
        tmp.path(),
        &["alpha", "render-template", "semver", "-o", "yaml"],
        Some(&template),
    );
    assert_eq!(code, 0, "{err}");
    let (code, dash, err) = opm_in(
        tmp.path(),
        &["alpha", "render-template", "semver", "-o", "yaml", "-"],
        Some(&template),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(redirected, dash);
    let (code, native, err) = common::run(&[
        "render-template",
        "semver",
        file.to_str().expect("utf-8"),
        "-o",
        "yaml",
        "--pull",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(redirected, native);
    // opm's semver template: a stable-v0 channel of both bundles
    // (alpha/template/semver, GenerateMajorChannels).
    assert!(redirected.contains("name: stable-v0\n"), "{redirected}");
    assert!(redirected.contains("schema: olm.bundle\n"), "{redirected}");
    // Type detected from the schema when no type is given.
    let (code, detected, err) = opm_in(
        tmp.path(),
        &["alpha", "render-template", "-o", "yaml", "semver.yaml"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(detected, redirected);
    // --migrate-level (cmd/opm/alpha/template/render.go hands the
    // migrations to the bundle renderer): bundle-object-to-csv-metadata
    // turns each bundle's olm.bundle.object properties into one
    // olm.csv.metadata; the channels are the same.
    let (code, migrated, err) = opm_in(
        tmp.path(),
        &[
            "alpha",
            "render-template",
            "semver",
            "semver.yaml",
            "-o",
            "json",
            "--migrate-level=bundle-object-to-csv-metadata",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let objects = common::json_stream(&migrated);
    let bundles: Vec<&serde_json::Value> = objects
        .iter()
        .filter(|o| o["schema"] == "olm.bundle")
        .collect();
    assert_eq!(bundles.len(), 2, "{migrated}");
    for b in &bundles {
        let types: Vec<&str> = b["properties"]
            .as_array()
            .expect("properties")
            .iter()
            .filter_map(|p| p["type"].as_str())
            .collect();
        assert!(types.contains(&"olm.csv.metadata"), "{types:?}");
        assert!(!types.contains(&"olm.bundle.object"), "{types:?}");
    }
    let (code, native, err) = common::run(&[
        "render-template",
        "semver",
        file.to_str().expect("utf-8"),
        "--pull",
        "--migrate-level",
        "bundle-object-to-csv-metadata",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(migrated, native);
    // An unknown level: opm's "unknown migration level" failure, exit 1.
    let (code, _, err) = opm_in(
        tmp.path(),
        &[
            "alpha",
            "render-template",
            "semver.yaml",
            "--migrate-level",
            "nope",
        ],
        None,
    );
    assert_eq!(code, 1, "{err}");
}

/// `opm alpha render-template basic -o json < FILE` of a template whose
/// bundles are images: opm v1.73.0 renders each with `action.Render` and
/// the migrations of `--migrate-level`, none by default
/// (cmd/opm/alpha/template/render.go), so a bundle is what `opm render
/// IMAGE` writes, its manifests kept as `olm.bundle.object` properties.
/// Checked property for property against opm's own render of the same
/// bundles (golden `sqlite/etcd/render.json`; opm v1.26.5 put the objects
/// in another order, so the properties are compared as sets), and object
/// for object against `render IMAGE`; the native command says the same.
#[test]
fn render_template_keeps_opm_bundle_objects_by_default() {
    let reg = Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let refs = push_etcd_bundles(&reg, tmp.path());
    let template = format!(
        "schema: olm.template.basic\nentries:\n\
         - schema: olm.package\n  name: etcd\n  defaultChannel: alpha\n\
         - schema: olm.channel\n  package: etcd\n  name: alpha\n  entries:\n\
         \x20 - name: etcdoperator.v0.9.0\n\
         \x20 - name: etcdoperator.v0.9.2\n    replaces: etcdoperator.v0.9.0\n\
         - schema: olm.bundle\n  image: {}\n\
         - schema: olm.bundle\n  image: {}\n",
        refs[1], refs[2]
    );
    let file = tmp.path().join("basic.yaml");
    std::fs::write(&file, &template).expect("write");
    let (code, out, err) = opm_in(
        tmp.path(),
        &["alpha", "render-template", "basic", "-o", "json"],
        Some(&template),
    );
    assert_eq!(code, 0, "{err}");
    let (code, native, err) =
        common::run(&["render-template", file.to_str().expect("utf-8"), "--pull"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, native);

    let sorted_properties = |b: &serde_json::Value| {
        let mut p: Vec<String> = b["properties"]
            .as_array()
            .expect("properties")
            .iter()
            .map(|p| p.to_string())
            .collect();
        p.sort();
        p
    };
    let golden = std::fs::read_to_string(common::golden().join("sqlite/etcd/render.json"))
        .expect("render.json");
    let golden = common::json_stream(&golden);
    let objects = common::json_stream(&out);
    let bundles: Vec<&serde_json::Value> = objects
        .iter()
        .filter(|o| o["schema"] == "olm.bundle")
        .collect();
    assert_eq!(bundles.len(), 2, "{out}");
    for (b, image) in bundles.iter().zip(&refs[1..3]) {
        assert_eq!(b["image"], image.as_str());
        let types: Vec<&str> = b["properties"]
            .as_array()
            .expect("properties")
            .iter()
            .filter_map(|p| p["type"].as_str())
            .collect();
        assert!(types.contains(&"olm.bundle.object"), "{types:?}");
        assert!(!types.contains(&"olm.csv.metadata"), "{types:?}");
        let opm = golden
            .iter()
            .find(|g| g["schema"] == "olm.bundle" && g["name"] == b["name"])
            .unwrap_or_else(|| panic!("{}: not in opm's render", b["name"]));
        assert_eq!(
            sorted_properties(b),
            sorted_properties(opm),
            "{}",
            b["name"]
        );
        let (code, rendered, err) = common::run(&["render", image.as_str()]);
        assert_eq!(code, 0, "{err}");
        let rendered = common::json_stream(&rendered);
        assert_eq!(rendered.len(), 1, "{rendered:?}");
        assert_eq!(*b, &rendered[0], "{image}");
    }
    // `--migrate-level none` is the default.
    let (code, none, err) = opm_in(
        tmp.path(),
        &[
            "alpha",
            "render-template",
            "basic.yaml",
            "--migrate-level=none",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(none, out);
}

/// `opm render BUNDLE_DIR --alpha-image-ref-template T`
/// (cmd/opm/render/cmd.go): a bundle directory has no image, so the
/// rendered bundle's `image` is the template filled with the bundle's
/// package, name and version; without the flag it is empty.
#[test]
fn render_alpha_image_ref_template() {
    let dir = common::corpus().join("operators/etcd/0.9.4");
    let dir = dir.to_str().expect("utf-8");
    let (code, out, err) = opm(&[
        "render",
        dir,
        "--alpha-image-ref-template",
        "quay.io/me/{{.Package}}-bundle:v{{.Version}}",
    ]);
    assert_eq!(code, 0, "{err}");
    let objects = common::json_stream(&out);
    let bundle = objects
        .iter()
        .find(|o| o["schema"] == "olm.bundle")
        .expect("a bundle");
    assert_eq!(bundle["image"], "quay.io/me/etcd-bundle:v0.9.4", "{out}");
    let (code, named, err) = opm(&[
        "render",
        dir,
        "--alpha-image-ref-template={{.Name}}",
        "-o",
        "yaml",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(named.contains("image: etcdoperator.v0.9.4\n"), "{named}");
    let (code, plain, err) = opm(&["render", dir]);
    assert_eq!(code, 0, "{err}");
    let plain = common::json_stream(&plain);
    assert_eq!(plain[0]["image"], "", "{plain:?}");
}

/// The serve cache of the catalog image's CMD (`opm serve /configs
/// --cache-dir=/tmp/cache`), pre-built by its Dockerfile's
/// `RUN opm serve /configs --cache-dir=/tmp/cache --cache-only`: the
/// cache-only run exits 0; with integrity enforced (opm's default with
/// --cache-dir) a missing or stale cache is refused with exit 1.
#[test]
fn serve_cache_only_and_integrity() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let configs = tmp.path().join("configs");
    let src = common::corpus().join("catalogs/v4.18/kube-green");
    std::fs::create_dir(&configs).expect("mkdir");
    for e in std::fs::read_dir(&src).expect("ls") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), configs.join(e.file_name())).expect("copy");
    }
    let cache = tmp.path().join("cache");
    let c = configs.to_str().expect("utf-8");
    let cache_flag = format!("--cache-dir={}", cache.display());
    // No cache yet: refused.
    let (code, _, err) = opm(&["serve", c, &cache_flag, "-p", "0"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("integrity check failed"), "{err}");
    let (code, _, err) = opm(&["serve", c, &cache_flag, "--cache-only"]);
    assert_eq!(code, 0, "{err}");
    assert!(cache.join("olm-catalog.digest").is_file());
    // A catalog changed after the cache was built: stale.
    let file = std::fs::read_dir(&configs)
        .expect("ls")
        .next()
        .expect("a file")
        .expect("entry")
        .path();
    let mut text = std::fs::read_to_string(&file).expect("read");
    text.push('\n');
    std::fs::write(&file, text).expect("write");
    let (code, _, err) = opm(&["serve", c, &cache_flag]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cache requires rebuild"), "{err}");
    // --cache-enforce-integrity needs --cache-dir.
    let (code, _, err) = opm(&["serve", c, "--cache-enforce-integrity"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--cache-dir must be specified"), "{err}");
    // A catalog that does not load: no cache.
    let bad = tmp.path().join("bad");
    std::fs::create_dir(&bad).expect("mkdir");
    std::fs::write(
        bad.join("c.yaml"),
        "schema: olm.channel\npackage: p\nname: c\nentries: [{name: x}]\n",
    )
    .expect("write");
    let (code, _, err) = opm(&[
        "serve",
        bad.to_str().expect("utf-8"),
        "--cache-dir",
        tmp.path().join("c2").to_str().expect("utf-8"),
        "--cache-only",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("failed to load or rebuild cache"), "{err}");
}

/// The CMD lines of opm-built images, answered through OLM's gRPC client
/// (the Python client of tests/python) and compared with opm's golden
/// dumps: `opm registry serve --database /database/index.db` (index
/// images) on opm's own etcd index, and `opm serve /configs
/// --cache-dir=/tmp/cache` (catalog images) after the Dockerfile's
/// `--cache-only` run, on the corpus's kube-green catalog.
#[test]
fn image_cmd_lines_answer_as_opm() {
    crate::serve_python::run_python(
        "test_opm_cmd",
        &[
            ("OLM_CATALOG_FBC", &common::corpus().join("catalogs/v4.18")),
            ("OLM_CATALOG_GOLDEN", &common::golden()),
        ],
    );
}

/// `opm version`: opm's line, naming the opm release followed.
#[test]
fn version_and_bad_input() {
    let (code, out, _) = opm(&["version"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("Version: version.Version{OpmVersion:\"v1.73.0+olm-catalog."),
        "{out}"
    );
    // `olm-catalog opm ...` is the same personality.
    let (code, native, _) = common::run(&["opm", "version"]);
    assert_eq!(code, 0);
    assert_eq!(native, out);
    // An opm flag not implemented: exit 2, the native equivalent named.
    let (code, _, err) = opm(&["registry", "mirror", "quay.io/x/a:v1", "quay.io/x/b:v1"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("registry mirror") && err.contains("olm-catalog catalog mirror"),
        "{err}"
    );
    // Why: opm v1.73.0 never registers the command (no behaviour to match).
    assert!(
        err.contains("opm v1.73.0 has no such command") && err.contains("mirroring nothing"),
        "{err}"
    );
    // registry serve --timeout-seconds (cmd/opm/registry/serve.go): a
    // 16-bit count of seconds, else strconv's error (exit 1).
    let (code, _, err) = opm(&[
        "registry",
        "serve",
        "-d",
        "x.db",
        "--timeout-seconds",
        "70000",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("ParseUint"), "{err}");
    // A flag opm does not have either: a usage error, as cobra's (exit 1).
    let (code, _, err) = opm(&["render", "x", "--no-such-flag"]);
    assert_eq!(code, 1, "{err}");
    // index add needs --bundles, as opm's MarkFlagRequired says.
    let (code, _, _) = opm(&["index", "add", "--tag", "x"]);
    assert_eq!(code, 1);
    // An unknown container tool.
    let (code, _, err) = opm(&["index", "add", "-b", "x", "-c", "nerdctl"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("unrecognized container-tool option: nerdctl"),
        "{err}"
    );
}

/// Native `index add --bundles a,b`: opm's comma-separated list.
#[test]
fn native_index_add_takes_comma_separated_bundles() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let pkg = common::fixtures().join("graph/pkg-semver");
    let a = pkg.join("1.0.0");
    let b = pkg.join("1.0.1");
    let db = tmp.path().join("index.db");
    let list = format!("{},{}", a.display(), b.display());
    let (code, _, err) = common::run(&[
        "index",
        "add",
        "--database",
        db.to_str().expect("utf-8"),
        "--mode",
        "semver",
        "--bundles",
        &list,
    ]);
    assert_eq!(code, 0, "{err}");
    let rows = common::rows(&db, "SELECT name FROM operatorbundle");
    assert_eq!(rows.len(), 2, "{rows:?}");
}

// ---- generate dockerfile: opm v1.73.0's alpha/action/generate_dockerfile_test.go ----

/// What the Go test expects for (builder foo, base `base`, dir bar, labels).
fn expected_dockerfile(base: &str, labels: bool) -> String {
    let mut s = String::from(
        "# The builder image is expected to contain\n\
         # /bin/opm (with serve subcommand)\n\
         FROM foo as builder\n\n\
         # Copy FBC root into image at /configs and pre-populate serve cache\n\
         ADD bar /configs\n\
         RUN [\"/bin/opm\", \"serve\", \"/configs\", \"--cache-dir=/tmp/cache\", \"--cache-only\"]\n\n",
    );
    s.push_str(&format!("FROM {base}\n"));
    if base == "scratch" {
        s.push_str(
            "# OLMv0 CatalogSources that use binary-less images must set:\n\
             # spec:\n\
             #   grpcPodConfig:\n\
             #     extractContent:\n\
             #       catalogDir: /configs\n\
             #       cacheDir: /tmp/cache\n",
        );
    } else {
        s.push_str(
            "# The base image is expected to contain\n\
             # /bin/opm (with serve subcommand) and /bin/grpc_health_probe\n\n\
             # Configure the entrypoint and command\n\
             ENTRYPOINT [\"/bin/opm\"]\n\
             CMD [\"serve\", \"/configs\", \"--cache-dir=/tmp/cache\"]\n",
        );
    }
    s.push_str(
        "\nCOPY --from=builder /configs /configs\n\
         COPY --from=builder /tmp/cache /tmp/cache\n\n\
         # Set FBC-specific label for the location of the FBC root directory\n\
         # in the image\n\
         LABEL operators.operatorframework.io.index.configs.v1=/configs\n",
    );
    if labels {
        s.push_str(
            "\n# Set other custom labels\nLABEL \"key1\"=\"value1\"\nLABEL \"key2\"=\"value2\"\n",
        );
    }
    s
}

/// Runs `generate dockerfile` natively and through opm: (code, stderr,
/// Dockerfile text if written). `dir` is `bar` in a fresh directory unless
/// `root` (the Go test's empty IndexDir: `/`, whose name is empty).
fn generate(opm_form: bool, root: bool, flags: &[&str]) -> (i32, String, Option<String>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(tmp.path().join("bar")).expect("mkdir");
    let dir = if root { "/" } else { "bar" };
    let mut args: Vec<&str> = if opm_form {
        vec!["generate", "dockerfile", dir]
    } else {
        vec!["catalog", "generate-dockerfile", dir]
    };
    args.extend(flags);
    let (code, _, err) = if opm_form {
        opm_in(tmp.path(), &args, None)
    } else {
        let o = Command::new(common::bin())
            .args(&args)
            .current_dir(tmp.path())
            .output()
            .expect("run");
        (
            o.status.code().unwrap_or(-1),
            String::new(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let text = std::fs::read_to_string(tmp.path().join("bar.Dockerfile")).ok();
    (code, err, text)
}

/// The eight table cases of TestGenerateDockerfile, each as a command line
/// (native `catalog generate-dockerfile` and `opm generate dockerfile`):
/// BaseImage is `-i`, BuilderImage `-b`, IndexDir the directory's name,
/// ExtraLabels `-l`. Errors exit 2 natively, 1 as opm.
#[test]
fn generate_dockerfile_go_table_cases() {
    let labels = ["-l", "key2=value2,key1=value1"];
    for opm_form in [false, true] {
        let fail = if opm_form { 1 } else { 2 };
        // Fail/EmptyBaseImage and Scratch/Fail/EmptyBaseImage.
        for builder in [&["-i", ""][..], &["-b", "foo", "-i", ""][..]] {
            let mut flags = builder.to_vec();
            flags.extend(labels);
            let (code, err, text) = generate(opm_form, false, &flags);
            assert_eq!(code, fail, "{err}");
            assert!(err.contains("base image is unset"), "{err}");
            assert_eq!(text, None, "nothing written");
        }
        // Fail/EmptyFromDir and Scratch/Fail/EmptyFromDir.
        for base in ["foo", "scratch"] {
            let mut flags = vec!["-b", "foo", "-i", base];
            flags.extend(labels);
            let (code, err, _) = generate(opm_form, true, &flags);
            assert_eq!(code, fail, "{err}");
            assert!(err.contains("index directory is unset"), "{err}");
        }
        // Success/WithoutExtraLabels, Success/WithExtraLabels and their Scratch twins.
        for base in ["foo", "scratch"] {
            for with_labels in [false, true] {
                let mut flags = vec!["-b", "foo", "-i", base];
                if with_labels {
                    flags.extend(labels);
                }
                let (code, err, text) = generate(opm_form, false, &flags);
                assert_eq!(code, 0, "{err}");
                assert_eq!(
                    text.as_deref(),
                    Some(expected_dockerfile(base, with_labels).as_str()),
                    "base {base}, labels {with_labels}, opm {opm_form}"
                );
            }
        }
    }
}

/// The command's own rules (cmd/opm/generate/cmd.go): `scratch` is no
/// builder; `--binary-image` (deprecated) without `--builder-image` names
/// both stages and cannot go with `--base-image`; a bad label is refused.
#[test]
fn generate_dockerfile_command_rules() {
    for opm_form in [false, true] {
        let fail = if opm_form { 1 } else { 2 };
        let (code, err, text) = generate(opm_form, false, &["-b", "scratch"]);
        assert_eq!(code, fail, "{err}");
        assert!(err.contains("invalid builder image: \"scratch\""), "{err}");
        assert_eq!(text, None);
        let (code, err, text) = generate(opm_form, false, &["--binary-image", "foo"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            text.as_deref(),
            Some(expected_dockerfile("foo", false).as_str())
        );
        let (code, _, _) = generate(opm_form, false, &["--binary-image", "foo", "-i", "foo"]);
        assert_ne!(code, 0);
        let (code, err, _) = generate(opm_form, false, &["-l", "novalue"]);
        assert_eq!(code, fail, "{err}");
        assert!(err.contains("invalid label \"novalue\""), "{err}");
        // Defaults: quay.io/operator-framework/opm:latest for both stages.
        let (code, err, text) = generate(opm_form, false, &[]);
        assert_eq!(code, 0, "{err}");
        let text = text.expect("written");
        assert!(
            text.contains("FROM quay.io/operator-framework/opm:latest as builder\n"),
            "{text}"
        );
        assert!(
            text.contains("\nFROM quay.io/operator-framework/opm:latest\n"),
            "{text}"
        );
    }
}

/// `opm alpha render-graph DIR [-p PKG]`: the channels as Mermaid, drawn
/// by the writer of `render-template -o mermaid` (opm's MermaidWriter for
/// both).
#[test]
fn alpha_render_graph_draws_mermaid() {
    let dir = common::corpus().join("catalogs/v4.18/kube-green");
    let dir = dir.to_str().expect("utf-8");
    let (code, out, err) = opm(&["alpha", "render-graph", dir]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("graph LR\n"), "{out}");
    assert!(out.contains("%% package \"kube-green\"\n"), "{out}");
    let (code, same, _) = opm(&["alpha", "render-graph", dir, "-p", "kube-green"]);
    assert_eq!(code, 0);
    assert_eq!(same, out);
    let (code, other, _) = opm(&["alpha", "render-graph", dir, "-p", "not-there"]);
    assert_eq!(code, 0);
    assert!(!other.contains("%% package"), "{other}");
    let (code, _, err) = opm(&["alpha", "render-graph", dir, "--minimum-edge", "x"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("unknown minimum edge name: \"x\""), "{err}");
}

/// The catalog of opm's `buildValidDeclarativeConfig` (alpha/declcfg
/// helpers_test.go at v1.73.0) as far as the graph goes: our own YAML.
const MERMAID_CATALOG: &str = "\
schema: olm.package
name: anakin
defaultChannel: dark
---
schema: olm.channel
package: anakin
name: dark
entries:
- {name: anakin.v0.0.1}
- {name: anakin.v0.1.0, replaces: anakin.v0.0.1}
- {name: anakin.v0.1.1, replaces: anakin.v0.0.1, skips: [anakin.v0.1.0]}
---
schema: olm.channel
package: anakin
name: light
entries:
- {name: anakin.v0.0.1}
- {name: anakin.v0.1.0, replaces: anakin.v0.0.1}
---
schema: olm.bundle
package: anakin
name: anakin.v0.0.1
image: anakin-bundle:v0.0.1
properties: [{type: olm.package, value: {packageName: anakin, version: 0.0.1}}]
---
schema: olm.bundle
package: anakin
name: anakin.v0.1.0
image: anakin-bundle:v0.1.0
properties: [{type: olm.package, value: {packageName: anakin, version: 0.1.0}}]
---
schema: olm.bundle
package: anakin
name: anakin.v0.1.1
image: anakin-bundle:v0.1.1
properties: [{type: olm.package, value: {packageName: anakin, version: 0.1.1}}]
---
schema: olm.deprecations
package: anakin
entries:
- {reference: {schema: olm.bundle, name: anakin.v0.0.1}, message: This bundle version is deprecated}
- {reference: {schema: olm.channel, name: light}, message: This channel is deprecated}
- {reference: {schema: olm.package}, message: This package is deprecated}
---
schema: olm.package
name: boba-fett
defaultChannel: mando
---
schema: olm.channel
package: boba-fett
name: mando
entries:
- {name: boba-fett.v1.0.0}
- {name: boba-fett.v2.0.0, replaces: boba-fett.v1.0.0}
---
schema: olm.bundle
package: boba-fett
name: boba-fett.v1.0.0
image: boba-fett-bundle:v1.0.0
properties: [{type: olm.package, value: {packageName: boba-fett, version: 1.0.0}}]
---
schema: olm.bundle
package: boba-fett
name: boba-fett.v2.0.0
image: boba-fett-bundle:v2.0.0
properties: [{type: olm.package, value: {packageName: boba-fett, version: 2.0.0}}]
";

const MERMAID_HEAD: &str = "graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
";

/// opm's `TestWriteMermaidChannels` (alpha/declcfg/write_test.go at
/// v1.73.0): the writer's default draws v0 semantics, which `render-graph`
/// asks for with `--draw-v0-semantics`; `--minimum-edge` and `-p` filter.
/// Without `--draw-v0-semantics`, render-graph's default, no bundle is
/// marked skipped.
#[test]
fn render_graph_go_table_cases() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("catalog.yaml"), MERMAID_CATALOG).expect("write");
    let dir = tmp.path().to_str().expect("utf-8");
    let anakin_boba = "  %% package \"anakin\"
  subgraph \"anakin\"
    %% channel \"dark\"
    subgraph anakin-dark[\"dark\"]
      anakin-dark-anakin.v0.1.1[\"anakin.v0.1.1\"]
      anakin-dark-anakin.v0.1.0[\"anakin.v0.1.0\"]-- skip --> anakin-dark-anakin.v0.1.1[\"anakin.v0.1.1\"]
      anakin-dark-anakin.v0.0.1[\"anakin.v0.0.1\"]-- replace --> anakin-dark-anakin.v0.1.1[\"anakin.v0.1.1\"]
      anakin-dark-anakin.v0.1.0[\"anakin.v0.1.0\"]
      anakin-dark-anakin.v0.0.1[\"anakin.v0.0.1\"]-- replace --> anakin-dark-anakin.v0.1.0[\"anakin.v0.1.0\"]
      anakin-dark-anakin.v0.0.1[\"anakin.v0.0.1\"]
    end
    %% channel \"light\"
    subgraph anakin-light[\"light\"]
      anakin-light-anakin.v0.1.0[\"anakin.v0.1.0\"]
      anakin-light-anakin.v0.0.1[\"anakin.v0.0.1\"]-- replace --> anakin-light-anakin.v0.1.0[\"anakin.v0.1.0\"]
      anakin-light-anakin.v0.0.1[\"anakin.v0.0.1\"]
    end
  end
";
    let boba = "  %% package \"boba-fett\"
  subgraph \"boba-fett\"
    %% channel \"mando\"
    subgraph boba-fett-mando[\"mando\"]
      boba-fett-mando-boba-fett.v2.0.0[\"boba-fett.v2.0.0\"]
      boba-fett-mando-boba-fett.v1.0.0[\"boba-fett.v1.0.0\"]-- replace --> boba-fett-mando-boba-fett.v2.0.0[\"boba-fett.v2.0.0\"]
      boba-fett-mando-boba-fett.v1.0.0[\"boba-fett.v1.0.0\"]
    end
  end
";
    let deprecated = "style anakin fill:#989695
style anakin-light fill:#DCD0FF
class anakin-dark-anakin.v0.0.1,anakin-light-anakin.v0.0.1 deprecated
";
    // SuccessNoFilters
    let (code, out, err) = opm(&["alpha", "render-graph", dir, "--draw-v0-semantics"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        format!(
            "{MERMAID_HEAD}{anakin_boba}{boba}{deprecated}class anakin-dark-anakin.v0.1.0 skipped
linkStyle 2 stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;
"
        )
    );
    // render-graph's own default: the same graph, nothing marked skipped.
    let (code, plain, err) = opm(&["alpha", "render-graph", dir]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        plain,
        format!("{MERMAID_HEAD}{anakin_boba}{boba}{deprecated}")
    );
    // SuccessMinEdgeFilter
    let (code, out, err) = opm(&[
        "alpha",
        "render-graph",
        dir,
        "--draw-v0-semantics",
        "--minimum-edge",
        "anakin.v0.1.0",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        format!(
            "{MERMAID_HEAD}  %% package \"anakin\"
  subgraph \"anakin\"
    %% channel \"dark\"
    subgraph anakin-dark[\"dark\"]
      anakin-dark-anakin.v0.1.1[\"anakin.v0.1.1\"]
      anakin-dark-anakin.v0.1.0[\"anakin.v0.1.0\"]-- skip --> anakin-dark-anakin.v0.1.1[\"anakin.v0.1.1\"]
      anakin-dark-anakin.v0.1.0[\"anakin.v0.1.0\"]
    end
    %% channel \"light\"
    subgraph anakin-light[\"light\"]
      anakin-light-anakin.v0.1.0[\"anakin.v0.1.0\"]
    end
  end
style anakin fill:#989695
style anakin-light fill:#DCD0FF
class anakin-dark-anakin.v0.1.0 skipped
"
        )
    );
    // SuccessPackageNameFilter
    let (code, out, err) = opm(&[
        "alpha",
        "render-graph",
        dir,
        "--draw-v0-semantics",
        "-p",
        "boba-fett",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, format!("{MERMAID_HEAD}{boba}"));
}

/// opm's own exit codes of an add (cmd/opm/main.go at v1.73.0: the
/// aggregate of pkg/registry/populator.go's sanity check): 2 when a bundle
/// image is already in the index, 3 when another image of the same bundle
/// (package and CSV name) is; the database is left as it was.
#[test]
fn index_add_exit_codes_as_opm_main() {
    let reg = Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let refs = push_etcd_bundles(&reg, tmp.path());
    let (code, _, err) = opm_in(
        tmp.path(),
        &["registry", "add", "-b", &refs[0], "-d", "index.db"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let db = tmp.path().join("index.db");
    let before = render_db(&db);
    // The same image again: BundleImageAlreadyAddedErr, exit 2.
    let (code, _, err) = opm_in(
        tmp.path(),
        &["registry", "add", "-b", &refs[0], "-d", "index.db"],
        None,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("already in the index"), "{err}");
    assert_eq!(render_db(&db), before);
    // The same bundle under another tag: PackageVersionAlreadyAddedErr, 3.
    let version = refs[0].rsplit(':').next().expect("tag");
    let dir = common::corpus().join("operators/etcd").join(version);
    let retagged = format!("{}-again", refs[0]);
    let o = common::olm(&[
        "bundle",
        "build",
        dir.to_str().expect("utf-8"),
        "--tag",
        &retagged,
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (code, _, err) = opm_in(
        tmp.path(),
        &["registry", "add", "-b", &retagged, "-d", "index.db"],
        None,
    );
    assert_eq!(code, 3, "{err}");
    assert_eq!(render_db(&db), before);
    // Any other failure of an add is 1 (an image that is not there).
    let missing = format!("{}/cop/nothere:v1", reg.host());
    let (code, _, _) = opm_in(
        tmp.path(),
        &["registry", "add", "-b", &missing, "-d", "index.db"],
        None,
    );
    assert_eq!(code, 1);
    // With --permissive opm logs populate's error and succeeds
    // (AddToRegistry returns nil): exit 0, a warning, the database as it
    // was (index add shares the mapping).
    for args in [
        vec![
            "registry",
            "add",
            "-b",
            retagged.as_str(),
            "-d",
            "index.db",
            "--permissive",
        ],
        vec![
            "registry",
            "add",
            "-b",
            missing.as_str(),
            "-d",
            "index.db",
            "--permissive",
        ],
    ] {
        let (code, _, err) = opm_in(tmp.path(), &args, None);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(err.contains("permissive mode enabled"), "{err}");
        assert_eq!(render_db(&db), before, "{args:?}");
    }
    // Natively the same failures are exit 2 (usage or input), one code.
    let (code, _, _) = common::run(&[
        "index",
        "add",
        "--database",
        db.to_str().expect("utf-8"),
        "--bundles",
        &refs[0],
    ]);
    assert_eq!(code, 2);
}

/// `opm registry serve -d DB --timeout-seconds N` (cmd/opm/registry/
/// serve.go at v1.73.0): the server answers, then stops by itself after N
/// seconds and the command exits 0, as opm's AfterFunc stops it gracefully.
#[test]
fn registry_serve_stops_after_its_timeout() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
        .to_string();
    let db = common::golden().join("sqlite/etcd/index.db");
    let tmp = tempfile::tempdir().expect("tempdir");
    let log = tmp.path().join("termination-log");
    let (code, _, err) = opm(&[
        "registry",
        "serve",
        "-d",
        db.to_str().expect("utf-8"),
        "-p",
        &port,
        "-t",
        log.to_str().expect("utf-8"),
        "--timeout-seconds",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("as asked: stopping"), "{err}");
    // No failure, nothing in the termination log.
    assert!(!log.exists() || std::fs::read_to_string(&log).expect("read").is_empty());
}

/// `opm alpha bundle generate` (pkg/lib/bundle/generate.go at v1.73.0:
/// `GenerateAnnotations`, `GenerateDockerfile`, overwrite on):
/// `metadata/annotations.yaml` beside the manifests directory (yaml.v3,
/// keys sorted, 2-space indent) and `bundle.Dockerfile` in the current
/// directory, with the COPY paths relative to it.
#[test]
fn alpha_bundle_generate_writes_opm_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_files(
        &common::corpus().join("operators/etcd/0.9.4/manifests"),
        &tmp.path().join("bundle/manifests"),
    );
    let args = [
        "alpha",
        "bundle",
        "generate",
        "-d",
        "./bundle/manifests",
        "-p",
        "etcd",
        "-c",
        "alpha,beta",
        "-e",
        "alpha",
    ];
    let (code, _, err) = opm_in(tmp.path(), &args, None);
    assert_eq!(code, 0, "{err}");
    let p = "operators.operatorframework.io.bundle";
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("bundle/metadata/annotations.yaml"))
            .expect("annotations"),
        format!(
            "annotations:\n  {p}.channel.default.v1: alpha\n  {p}.channels.v1: alpha,beta\n  \
             {p}.manifests.v1: manifests/\n  {p}.mediatype.v1: registry+v1\n  \
             {p}.metadata.v1: metadata/\n  {p}.package.v1: etcd\n"
        )
    );
    let dockerfile = format!(
        "FROM scratch\n\nLABEL {p}.mediatype.v1=registry+v1\nLABEL {p}.manifests.v1=manifests/\n\
         LABEL {p}.metadata.v1=metadata/\nLABEL {p}.package.v1=etcd\nLABEL {p}.channels.v1=alpha,beta\n"
    );
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("bundle.Dockerfile")).expect("Dockerfile"),
        format!(
            "{dockerfile}LABEL {p}.channel.default.v1=alpha\n\n\
             COPY bundle/manifests /manifests/\nCOPY bundle/metadata /metadata/\n"
        )
    );
    // Again without a default channel and from inside the bundle: both
    // files are overwritten; no default label, no blank line before COPY.
    let inside = tmp.path().join("bundle");
    let (code, _, err) = opm_in(
        &inside,
        &[
            "alpha",
            "bundle",
            "generate",
            "--directory=manifests",
            "--package=etcd",
            "--channels=alpha,beta",
            "--base-image=quay.io/me/base:v1",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(inside.join("bundle.Dockerfile")).expect("Dockerfile"),
        format!(
            "{}COPY manifests /manifests/\nCOPY metadata /metadata/\n",
            dockerfile.replace("FROM scratch", "FROM quay.io/me/base:v1")
        )
    );
    let annotations =
        std::fs::read_to_string(inside.join("metadata/annotations.yaml")).expect("annotations");
    assert!(!annotations.contains("channel.default"), "{annotations}");
    // A directory of no files: opm's error, exit 1.
    std::fs::create_dir(tmp.path().join("empty")).expect("mkdir");
    let (code, _, err) = opm_in(
        tmp.path(),
        &[
            "alpha", "bundle", "generate", "-d", "empty", "-p", "x", "-c", "a",
        ],
        None,
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("contains no yaml files"), "{err}");
    // Without -p and -c, and no package manifest above the bundle: opm's
    // error, exit 1.
    let (code, _, err) = opm_in(
        tmp.path(),
        &["alpha", "bundle", "generate", "-d", "bundle/manifests"],
        None,
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("please manually input channels and packageName"),
        "{err}"
    );
}

/// A CSV named `name` replacing `replaces` and skipping `skips`.
fn package_manifest_csv(name: &str, replaces: &str, skips: &[&str]) -> String {
    let mut s = format!(
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\n\
         metadata:\n  name: {name}\nspec:\n  version: {}\n",
        name.trim_start_matches("app.v")
    );
    if !replaces.is_empty() {
        s.push_str(&format!("  replaces: {replaces}\n"));
    }
    if !skips.is_empty() {
        s.push_str(&format!("  skips: [{}]\n", skips.join(", ")));
    }
    s
}

/// `opm alpha bundle generate -d PKG/VERSION` without `-p`/`-c`
/// (pkg/lib/bundle/interpreter.go at v1.73.0): the package name, the
/// channels whose graph (from each `currentCSV` through `replaces` and
/// `skips`) holds the bundle, and the default channel come from the
/// package manifest beside the bundle directories. With `-u/--output-dir`
/// the manifests are copied to OUT/manifests and the metadata written in
/// OUT/metadata, and the Dockerfile copies from there.
#[test]
fn alpha_bundle_generate_infers_from_a_package_manifest() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let pkg = tmp.path().join("app");
    for (dir, csv) in [
        ("1.0.0", package_manifest_csv("app.v1.0.0", "", &[])),
        (
            "1.1.0",
            package_manifest_csv("app.v1.1.0", "app.v1.0.0", &[]),
        ),
        (
            "2.0.0",
            package_manifest_csv("app.v2.0.0", "app.v1.0.0", &["app.v1.1.0"]),
        ),
        ("3.0.0", package_manifest_csv("app.v3.0.0", "", &[])),
    ] {
        std::fs::create_dir_all(pkg.join(dir)).expect("mkdir");
        std::fs::write(pkg.join(dir).join("app.clusterserviceversion.yaml"), csv).expect("csv");
    }
    std::fs::write(
        pkg.join("2.0.0/crd.yaml"),
        "kind: CustomResourceDefinition\n",
    )
    .expect("crd");
    std::fs::write(
        pkg.join("app.package.yaml"),
        "packageName: app\ndefaultChannel: stable\nchannels:\n\
         - {name: stable, currentCSV: app.v2.0.0}\n- {name: fast, currentCSV: app.v1.1.0}\n\
         - {name: next, currentCSV: app.v3.0.0}\n",
    )
    .expect("package.yaml");
    let p = "operators.operatorframework.io.bundle";
    let annotations = |dir: &std::path::Path| {
        std::fs::read_to_string(dir.join("metadata/annotations.yaml")).expect("annotations")
    };
    for (version, channels) in [
        ("1.0.0", "fast,stable"),
        ("1.1.0", "fast,stable"),
        ("2.0.0", "stable"),
    ] {
        let d = format!("app/{version}");
        let (code, _, err) = opm_in(tmp.path(), &["alpha", "bundle", "generate", "-d", &d], None);
        assert_eq!(code, 0, "{version}: {err}");
        assert_eq!(
            annotations(&pkg),
            format!(
                "annotations:\n  {p}.channel.default.v1: stable\n  {p}.channels.v1: {channels}\n  \
                 {p}.manifests.v1: manifests/\n  {p}.mediatype.v1: registry+v1\n  \
                 {p}.metadata.v1: metadata/\n  {p}.package.v1: app\n"
            ),
            "{version}"
        );
        // metadata/ lands beside the bundle directories, where opm, as we
        // do, would then look for a CSV: it goes before the next run.
        std::fs::remove_dir_all(pkg.join("metadata")).expect("rm metadata");
    }
    // -p given, -c inferred; -e given wins.
    let (code, _, err) = opm_in(
        tmp.path(),
        &[
            "alpha",
            "bundle",
            "generate",
            "-d",
            "app/3.0.0",
            "-p",
            "other",
            "-e",
            "next",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let a = annotations(&pkg);
    assert!(a.contains(&format!("{p}.channels.v1: next\n")), "{a}");
    assert!(a.contains(&format!("{p}.package.v1: other\n")), "{a}");
    assert!(
        a.contains(&format!("{p}.channel.default.v1: next\n")),
        "{a}"
    );
    std::fs::remove_dir_all(pkg.join("metadata")).expect("rm metadata");

    // --output-dir: the manifests copied, metadata and Dockerfile there.
    let (code, _, err) = opm_in(
        tmp.path(),
        &[
            "alpha",
            "bundle",
            "generate",
            "-d",
            "app/2.0.0",
            "-u",
            "out",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let out = tmp.path().join("out");
    for f in ["app.clusterserviceversion.yaml", "crd.yaml"] {
        assert_eq!(
            std::fs::read(out.join("manifests").join(f)).expect("copied"),
            std::fs::read(pkg.join("2.0.0").join(f)).expect("source"),
            "{f}"
        );
    }
    assert!(annotations(&out).contains(&format!("{p}.channels.v1: stable\n")));
    let dockerfile =
        std::fs::read_to_string(tmp.path().join("bundle.Dockerfile")).expect("Dockerfile");
    assert!(
        dockerfile.ends_with("COPY out/manifests /manifests/\nCOPY out/metadata /metadata/\n"),
        "{dockerfile}"
    );

    // A bundle directory without a CSV in the package: opm's error.
    std::fs::create_dir_all(pkg.join("junk")).expect("mkdir");
    std::fs::write(pkg.join("junk/readme.txt"), "hello\n").expect("write");
    let (code, _, err) = opm_in(
        tmp.path(),
        &["alpha", "bundle", "generate", "-d", "app/1.0.0"],
        None,
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("error getting CSVs from bundles in the package directory"),
        "{err}"
    );
}

/// `opm alpha bundle build -d DIR -t TAG -p PKG -c CH -e DEF`
/// (pkg/lib/bundle/build.go): generates the annotations and Dockerfile,
/// then builds the image, here without a daemon and pushed to TAG; the
/// pushed image renders as that bundle. An existing annotations.yaml that
/// disagrees is refused without `-o` (ValidateAnnotations), exit 1.
#[test]
fn alpha_bundle_build_pushes_the_generated_bundle() {
    let reg = Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_files(
        &common::corpus().join("operators/etcd/0.9.4/manifests"),
        &tmp.path().join("bundle/manifests"),
    );
    let tag = format!("{}/cop/etcd-generated:v0.9.4", reg.host());
    let build = |channels: &str, extra: &[&str]| {
        let mut args = vec![
            "alpha",
            "bundle",
            "build",
            "-d",
            "bundle/manifests",
            "-t",
            &tag,
            "-p",
            "etcd",
            "-c",
            channels,
            "-e",
            "alpha",
        ];
        args.extend_from_slice(extra);
        opm_in(tmp.path(), &args, None)
    };
    let (code, _, err) = build("alpha", &[]);
    assert_eq!(code, 0, "{err}");
    assert!(tmp.path().join("bundle.Dockerfile").is_file());
    let (code, out, err) = opm(&["render", &tag]);
    assert_eq!(code, 0, "{err}");
    let bundle = &common::json_stream(&out)[0];
    assert_eq!(bundle["package"], "etcd", "{out}");
    assert_eq!(bundle["name"], "etcdoperator.v0.9.4", "{out}");
    assert_eq!(bundle["image"], tag.as_str(), "{out}");
    // Other channels than the annotations.yaml written: refused without -o.
    let (code, _, err) = build("beta", &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("channels.v1"), "{err}");
    let (code, _, err) = build("beta", &["-o"]);
    assert_eq!(code, 0, "{err}");
    let annotations = std::fs::read_to_string(tmp.path().join("bundle/metadata/annotations.yaml"))
        .expect("annotations");
    assert!(annotations.contains("channels.v1: beta\n"), "{annotations}");
}

/// Pushes `HOST/opm-base/base:v1`: one layer (`etc/base-release`), an
/// entrypoint, a label of its own; its manifest.
fn push_base_image(reg: &Registry) -> (String, serde_json::Value) {
    let mut layer = olm_catalog::oci::layer::LayerBuilder::new();
    layer.file("etc/base-release", b"base v1\n".to_vec(), 0o644);
    let built = layer.build(0).expect("layer");
    let manifest = crate::registry::push_one_layer_image(
        &reg.host(),
        "opm-base/base",
        "v1",
        (&built.digest, &built.blob),
        &serde_json::json!({
            "architecture": "amd64", "os": "linux",
            "config": {"Entrypoint": ["/bin/base"], "Labels": {"org.example.base": "v1"}},
            "rootfs": {"type": "layers", "diff_ids": [built.diff_id]},
        }),
    );
    (format!("{}/opm-base/base:v1", reg.host()), manifest)
}

/// `opm alpha bundle build --base-image IMG` (pkg/lib/bundle/build.go:
/// bundle.Dockerfile `FROM IMG`, then the container tool's build): built
/// without a daemon on IMG pulled from the registry and pushed to TAG. Read
/// back with skopeo: IMG's layers first, then the bundle's; IMG's config
/// (entrypoint, its own label) kept and the bundle's labels added; the
/// image still renders as the bundle.
#[test]
fn alpha_bundle_build_on_a_base_image() {
    let reg = Registry::start();
    let (base, base_manifest) = push_base_image(&reg);
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_files(
        &common::corpus().join("operators/etcd/0.9.4/manifests"),
        &tmp.path().join("bundle/manifests"),
    );
    let tag = format!("{}/cop/etcd-on-base:v0.9.4", reg.host());
    let (code, _, err) = opm_in(
        tmp.path(),
        &[
            "alpha",
            "bundle",
            "build",
            "-d",
            "bundle/manifests",
            "-t",
            &tag,
            "-p",
            "etcd",
            "-c",
            "alpha",
            "-e",
            "alpha",
            "--base-image",
            &base,
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let dockerfile =
        std::fs::read_to_string(tmp.path().join("bundle.Dockerfile")).expect("Dockerfile");
    assert!(
        dockerfile.starts_with(&format!("FROM {base}\n")),
        "{dockerfile}"
    );
    let image = format!("docker://{tag}");
    let raw: serde_json::Value = serde_json::from_str(&crate::registry::skopeo(&[
        "inspect",
        "--tls-verify=false",
        "--raw",
        &image,
    ]))
    .expect("manifest JSON");
    let layers = raw["layers"].as_array().expect("layers");
    let base_layers = base_manifest["layers"].as_array().expect("base layers");
    assert_eq!(layers.len(), base_layers.len() + 1, "{raw}");
    for (ours, theirs) in layers.iter().zip(base_layers) {
        assert_eq!(
            ours["digest"], theirs["digest"],
            "base layers come first: {raw}"
        );
    }
    let inspect: serde_json::Value = serde_json::from_str(&crate::registry::skopeo(&[
        "inspect",
        "--tls-verify=false",
        &image,
    ]))
    .expect("inspect JSON");
    let labels = &inspect["Labels"];
    assert_eq!(labels["org.example.base"], "v1", "{inspect}");
    for (k, v) in [
        ("operators.operatorframework.io.bundle.package.v1", "etcd"),
        ("operators.operatorframework.io.bundle.channels.v1", "alpha"),
        (
            "operators.operatorframework.io.bundle.channel.default.v1",
            "alpha",
        ),
        (
            "operators.operatorframework.io.bundle.mediatype.v1",
            "registry+v1",
        ),
        (
            "operators.operatorframework.io.bundle.manifests.v1",
            "manifests/",
        ),
        (
            "operators.operatorframework.io.bundle.metadata.v1",
            "metadata/",
        ),
    ] {
        assert_eq!(labels[k], v, "{k}: {inspect}");
    }
    let config: serde_json::Value = serde_json::from_str(&crate::registry::skopeo(&[
        "inspect",
        "--tls-verify=false",
        "--config",
        &image,
    ]))
    .expect("config JSON");
    assert_eq!(config["config"]["Entrypoint"][0], "/bin/base", "{config}");
    let (code, out, err) = opm(&["render", &tag]);
    assert_eq!(code, 0, "{err}");
    let bundle = &common::json_stream(&out)[0];
    assert_eq!(bundle["name"], "etcdoperator.v0.9.4", "{out}");
}

/// Every file under `dir` (links as `-> target`), by path relative to it.
fn tree(dir: &Path) -> std::collections::BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).expect("read_dir") {
            let p = e.expect("entry").path();
            let rel = p
                .strip_prefix(root)
                .expect("under root")
                .display()
                .to_string();
            let meta = std::fs::symlink_metadata(&p).expect("meta");
            if meta.file_type().is_symlink() {
                let t = std::fs::read_link(&p).expect("link");
                out.insert(rel, format!("-> {}", t.display()));
            } else if meta.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(rel, std::fs::read_to_string(&p).expect("utf-8 file"));
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Builds the bundle directory `dir` into `HOST/opm-bundle/NAME:v1` with
/// the native `bundle build`; its reference.
fn push_bundle_dir(reg: &Registry, dir: &Path, name: &str) -> String {
    let tag = format!("{}/opm-bundle/{name}:v1", reg.host());
    let o = common::olm(&[
        "bundle",
        "build",
        dir.to_str().expect("utf-8"),
        "--tag",
        &tag,
        "-q",
    ]);
    assert!(
        o.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    tag
}

/// Copies the files of `from` into `to` (made if missing).
fn copy_files(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read") {
        let p = e.expect("entry").path();
        std::fs::copy(&p, to.join(p.file_name().expect("name"))).expect("copy");
    }
}

/// A bundle directory under `tmp` named `name`: `manifests` copied from
/// `manifests`, `metadata` from `metadata`.
fn assemble_bundle(tmp: &Path, name: &str, manifests: &Path, metadata: &Path) -> PathBuf {
    let dir = tmp.join(name);
    copy_files(manifests, &dir.join("manifests"));
    copy_files(metadata, &dir.join("metadata"));
    dir
}

/// The corpus's etcd 0.9.4 bundle (what operator-registry's
/// pkg/lib/bundle/testdata/validate bundles are made of), copied to
/// `tmp/name` and changed by `edit`.
fn etcd_case(tmp: &Path, name: &str, edit: &dyn Fn(&Path)) -> PathBuf {
    let etcd = common::corpus().join("operators/etcd/0.9.4");
    let dir = assemble_bundle(tmp, name, &etcd.join("manifests"), &etcd.join("metadata"));
    edit(&dir);
    dir
}

/// Writes `text` to `dir/rel`.
fn write_file(dir: &Path, rel: &str, text: &str) {
    std::fs::write(dir.join(rel), text).expect("write");
}

/// Replaces `from` (which must be there) by `to` in `dir/rel`.
fn replace_in(dir: &Path, rel: &str, from: &str, to: &str) {
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains(from), "{rel} lacks {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
}

/// The etcd CSV's file in a bundle.
const ETCD_CSV: &str = "manifests/etcdoperator.v0.9.4.clusterserviceversion.yaml";

/// validate_test.go's "invalid csv": the CSV without its install modes.
fn drop_install_modes(dir: &Path) {
    replace_in(
        dir,
        ETCD_CSV,
        "  installModes:\n  - supported: true\n    type: OwnNamespace\n  - supported: true\n    \
         type: SingleNamespace\n  - supported: false\n    type: MultiNamespace\n  - supported: \
         false\n    type: AllNamespaces\n",
        "",
    );
}

/// `opm alpha bundle unpack IMAGE [-o DIR]` (cmd/opm/alpha/bundle/unpack.go
/// at v1.73.0): the image's files land in DIR (default `./`, made if
/// missing, merged with what is there) as the bundle directory it was built
/// from; a bundle that fails opm's validation is not written (exit 1)
/// unless `--skip-validation`; an `--out` that is a file and opm's TLS flag
/// conflicts (cmd/opm/internal/util.GetTLSOptions) exit 1. The native
/// `olm-catalog bundle unpack IMAGE DIR` writes the same tree.
#[test]
fn alpha_bundle_unpack_writes_the_bundle_tree() {
    let reg = Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let etcd = common::corpus().join("operators/etcd/0.9.4");
    let good = push_bundle_dir(&reg, &etcd, "etcd");
    let want = tree(&etcd);

    let (code, out, err) = opm_in(
        tmp.path(),
        &["alpha", "bundle", "unpack", &good, "-o", "out"],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "");
    assert_eq!(tree(&tmp.path().join("out")), want);

    // The default --out is the current directory; what is there stays.
    let cwd = tmp.path().join("cwd");
    std::fs::create_dir_all(cwd.join("manifests")).expect("mkdir");
    std::fs::write(cwd.join("manifests/keep.yaml"), "kept: true\n").expect("write");
    // A link where the image has a file is replaced, not written through.
    let outside = tmp.path().join("outside.yaml");
    std::fs::write(&outside, "outside\n").expect("write");
    std::os::unix::fs::symlink(
        &outside,
        cwd.join("manifests/etcdoperator.v0.9.4.clusterserviceversion.yaml"),
    )
    .expect("symlink");
    let (code, _, err) = opm_in(&cwd, &["alpha", "bundle", "unpack", &good], None);
    assert_eq!(code, 0, "{err}");
    let mut merged = want.clone();
    merged.insert("manifests/keep.yaml".into(), "kept: true\n".into());
    assert_eq!(tree(&cwd), merged);
    assert_eq!(
        std::fs::read_to_string(&outside).expect("read"),
        "outside\n"
    );

    // The native form.
    let native = tmp.path().join("native/deeper");
    let (code, _, err) = common::run(&["bundle", "unpack", &good, native.to_str().expect("utf-8")]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(tree(&native), want);

    // A bundle opm's validators fail (validate_test.go "invalid csv": no
    // install modes): nothing written, exit 1; -v skips the validation.
    let bad_dir = etcd_case(tmp.path(), "bad-src", &drop_install_modes);
    let bad = push_bundle_dir(&reg, &bad_dir, "invalid-csv");
    let (code, _, err) = opm_in(
        tmp.path(),
        &["alpha", "bundle", "unpack", &bad, "-o", "bad"],
        None,
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("bundle content validation failed") && err.contains("install modes not found"),
        "{err}"
    );
    assert!(tree(&tmp.path().join("bad")).is_empty());
    let (code, _, err) = opm_in(
        tmp.path(),
        &[
            "alpha",
            "bundle",
            "unpack",
            &bad,
            "-o",
            "bad",
            "--skip-validation",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(tree(&tmp.path().join("bad")), tree(&bad_dir));

    // A bundle whose annotations fail: the format stage.
    let annotations_dir = etcd_case(tmp.path(), "annotations-src", &|d| {
        replace_in(d, "metadata/annotations.yaml", "registry+v1", "registry+v2")
    });
    let annotations = push_bundle_dir(&reg, &annotations_dir, "invalid-annotations");
    let (code, _, err) = opm_in(
        tmp.path(),
        &["alpha", "bundle", "unpack", &annotations, "-o", "ann"],
        None,
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("bundle format validation failed"), "{err}");

    // --out a file; opm's TLS flag rules; one image exactly; a missing image.
    std::fs::write(tmp.path().join("file"), "").expect("write");
    let (code, _, err) = opm_in(
        tmp.path(),
        &["alpha", "bundle", "unpack", &good, "-o", "file"],
        None,
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("out file is not a directory"), "{err}");
    for (flags, says) in [
        (
            &["-s", "--use-http"][..],
            "cannot use --use-http with --skip-tls",
        ),
        (
            &["--skip-tls", "--skip-tls-verify"][..],
            "cannot use --skip-tls-verify with --skip-tls",
        ),
        (
            &["--use-http", "--skip-tls-verify"][..],
            "--use-http and --skip-tls-verify cannot both be true",
        ),
    ] {
        let mut args = vec!["alpha", "bundle", "unpack", good.as_str(), "-o", "tls"];
        args.extend_from_slice(flags);
        let (code, _, err) = opm_in(tmp.path(), &args, None);
        assert_eq!(code, 1, "{flags:?}: {err}");
        assert!(err.contains(says), "{flags:?}: {err}");
    }
    let (code, _, err) = opm_in(tmp.path(), &["alpha", "bundle", "unpack"], None);
    assert_eq!(code, 1, "{err}");
    let (code, _, err) = opm_in(
        tmp.path(),
        &["alpha", "bundle", "unpack", &good, &good],
        None,
    );
    assert_eq!(code, 1, "{err}");
    let missing = format!("{}/opm-bundle/missing:v1", reg.host());
    let (code, _, err) = opm_in(
        tmp.path(),
        &["alpha", "bundle", "unpack", &missing, "-o", "m"],
        None,
    );
    assert_eq!(code, 1, "{err}");
}

/// `opm alpha bundle validate -t IMAGE -b none` on the bundles of
/// operator-registry's pkg/lib/bundle/validate_test.go at v1.73.0, each
/// made as its testdata is (the etcd 0.9.4 bundle with one change; docs/
/// opm-tests.md) and built into an image: exit 0 where the Go test expects
/// no error, else 1 with the error it expects. `-b` takes any tool name
/// (containertools.NewContainerTool: an unknown one is `none`); `--tag` is
/// required; no positional argument is taken; `--optional-validators
/// bundle-objects` adds operator-framework/api's object checks.
#[test]
fn alpha_bundle_validate_ports_operator_registry_cases() {
    let reg = Registry::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let validate = |tag: &str, extra: &[&str]| {
        let mut args = vec!["alpha", "bundle", "validate", "-t", tag];
        args.extend_from_slice(extra);
        opm_in(tmp.path(), &args, None)
    };
    let dependencies =
        |text: &'static str| move |d: &Path| write_file(d, "metadata/dependencies.yaml", text);
    // valid_bundle's objects besides the etcd bundle's own.
    let valid_objects = |d: &Path| {
        write_file(
            d,
            "manifests/etcdconfigmap.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"my-config-map\"\ndata:\n  \
             allowed: '\"true\"'\n  enemies: aliens\n  lives: \"3\"\n",
        );
        write_file(
            d,
            "manifests/etcdpdb.yaml",
            "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: etcd-pdb\n\
             spec:\n  minAvailable: 2\n  selector:\n    matchLabels:\n      app: etcd",
        );
        write_file(
            d,
            "manifests/etcdpriorityclass.yaml",
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: \
             high-priority\nvalue: 1000000\nglobalDefault: false\ndescription: \"This priority \
             class should be used for XYZ service pods only.\"",
        );
        write_file(
            d,
            "manifests/etcdsecret.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: mysecret\ntype: Opaque\ndata:\n  \
             username: YWRtaW4=\n  password: MWYyZDFlMmU2N2Rm\n",
        );
        write_file(
            d,
            "manifests/etcdvpa.yaml",
            "apiVersion: autoscaling.k8s.io/v1\nkind: VerticalPodAutoscaler\nmetadata:\n  name: \
             my-rec-vpa\nspec:\n  targetRef:\n    apiVersion: \"apps/v1\"\n    kind:       \
             Deployment\n    name:       my-etcd-deployment\n  updatePolicy:\n    updateMode: \
             \"Off\"\n",
        );
    };
    type Edit<'a> = Box<dyn Fn(&Path) + 'a>;
    // (testdata bundle, how it is made, exit code, what the error says):
    // TestValidateBundleFormat, TestValidateBundleDependencies,
    // TestValidateBundle_InvalidRegistryVersion, TestValidateBundleContent.
    let table: Vec<(&str, Edit, i32, &[&str])> = vec![
        ("valid_bundle", Box::new(valid_objects), 0, &[]),
        (
            "invalid_gvk_dependency",
            Box::new(dependencies("dependencies:\n  - type: olm.gvk\n")),
            1,
            &["olm.gvk"],
        ),
        (
            "invalid_package_dependency",
            Box::new(dependencies(
                "dependencies:\n  - type: olm.package\n    value:\n      version: \"0.2.0\"\n  \
                 - type: olm.package\n    value:\n      packageName: testoperator\n      \
                 version: \">!0.2.0\"\n  - type: olm.package\n    value:\n      packageName: \
                 testoperator2\n",
            )),
            1,
            &["packageName", ">!0.2.0", "value.version"],
        ),
        (
            "invalid_dependency_type",
            Box::new(dependencies(
                "dependencies:\n  - type: olm.crd\n    value:\n      group: test.coreos.com\n      \
                 version: v1alpha1\n      kind: testcrd\n",
            )),
            1,
            &["olm.crd"],
        ),
        (
            "invalid_label_dependency",
            Box::new(dependencies("dependencies:\n  - type: olm.label\n    value:\n")),
            1,
            &["value.label"],
        ),
        (
            "invalid_annotations_bundle",
            Box::new(|d: &Path| {
                replace_in(d, "metadata/annotations.yaml", "registry+v1", "registry+v2")
            }),
            1,
            &["registry+v2"],
        ),
        (
            "invalid_csv",
            Box::new(drop_install_modes),
            1,
            &["install modes not found"],
        ),
        (
            "invalid_crd",
            Box::new(|d: &Path| {
                let crd = "manifests/etcdrestores.etcd.database.coreos.com.crd.yaml";
                let text = std::fs::read_to_string(d.join(crd)).expect("read");
                write_file(
                    d,
                    crd,
                    &format!("{text}  - name: v1beta2\n    served: true\n    storage: false\n"),
                );
            }),
            1,
            &["must contain unique version names"],
        ),
        (
            "invalid_sa",
            Box::new(|d: &Path| {
                write_file(
                    d,
                    "manifests/etcd.serviceaccount.yaml",
                    "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: etcd\n  namespace: 0",
                )
            }),
            1,
            &["json: cannot unmarshal number into Go struct field ObjectMeta.metadata.namespace of type string"],
        ),
        (
            "invalid_type",
            Box::new(|d: &Path| {
                write_file(
                    d,
                    "manifests/etcd.resourcequota.yaml",
                    "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: etcd\nspec:\n  hard:\n    \
                     requests.cpu: \"1\"\n    requests.memory: 1Gi\n    limits.cpu: \"2\"\n    \
                     limits.memory: 2Gi\n",
                )
            }),
            1,
            &["ResourceQuota is not a supported type for a registry+v1 bundle"],
        ),
        (
            "invalid_bundle",
            Box::new(|d: &Path| {
                std::fs::remove_file(
                    d.join("manifests/etcdclusters.etcd.database.coreos.com.crd.yaml"),
                )
                .expect("remove")
            }),
            1,
            &["owned CRD", "EtcdCluster", "not found in bundle"],
        ),
        // A CRD the CSV does not own: a warning in opm's validator.
        (
            "invalid_bundle_2",
            Box::new(|d: &Path| {
                let from = d.join("manifests/etcdclusters.etcd.database.coreos.com.crd.yaml");
                let text = std::fs::read_to_string(from).expect("read");
                write_file(
                    d,
                    "manifests/etcdwidgets.crd.yaml",
                    &text
                        .replace("etcdclusters", "etcdwidgets")
                        .replace("etcdcluster", "etcdwidget")
                        .replace("EtcdCluster", "EtcdWidget"),
                );
            }),
            0,
            &[],
        ),
        (
            "invalid_annotation_name",
            Box::new(|d: &Path| {
                replace_in(
                    d,
                    ETCD_CSV,
                    "metadata:\n  annotations:\n",
                    "metadata:\n  annotations:\n    olm.operatorgroup: global-operators\n    \
                     olm.operatornamespace: openshift-operators\n    olm.skiprange: '>=4.1.0 \
                     <4.1.2'\n",
                )
            }),
            1,
            &[
                "provided annotation olm.operatorgroup uses wrong case and should be olm.operatorGroup instead",
                "provided annotation olm.operatornamespace uses wrong case and should be olm.operatorNamespace instead",
                "provided annotation olm.skiprange uses wrong case and should be olm.skipRange instead",
            ],
        ),
    ];
    let mut valid_tag = String::new();
    for (i, (case, edit, want_code, says)) in table.iter().enumerate() {
        let dir = etcd_case(tmp.path(), &format!("case-{i}"), edit);
        let tag = push_bundle_dir(&reg, &dir, &format!("case-{i}"));
        let (code, out, err) = validate(&tag, &["-b", "none"]);
        assert_eq!(code, *want_code, "{case}: {err}");
        assert_eq!(out, "", "{case}");
        for s in *says {
            assert!(err.contains(s), "{case}: {s:?} not in {err}");
        }
        if *want_code == 1 {
            assert!(err.contains("Bundle validation errors: "), "{case}: {err}");
        } else {
            assert!(
                err.contains("All validation tests have been completed successfully"),
                "{case}: {err}"
            );
        }
        if *case == "valid_bundle" {
            valid_tag = tag;
        }
        if *case == "invalid_bundle_2" {
            // operator-framework/api's bundle validator (the native one,
            // operator-sdk's) does fail it.
            let (code, out, _) = common::run(&["bundle", "validate", dir.to_str().expect("utf-8")]);
            assert_eq!(code, 1, "{out}");
            assert!(out.contains("bundle-crd-not-in-csv"), "{out}");
        }
    }

    // The image builder: docker (the default) and podman are not needed
    // (PATH has neither here), and a name opm does not know is `none`.
    for b in [
        &[][..],
        &["-b", "podman"][..],
        &["--image-builder", "nerdctl"][..],
    ] {
        let (code, _, err) = validate(&valid_tag, b);
        assert_eq!(code, 0, "{b:?}: {err}");
    }

    // --optional-validators bundle-objects: a PriorityClass that is the
    // global default fails only with it (operator-framework/api object.go).
    let objects = etcd_case(tmp.path(), "objects", &|d| {
        valid_objects(d);
        replace_in(
            d,
            "manifests/etcdpriorityclass.yaml",
            "globalDefault: false",
            "globalDefault: true",
        );
    });
    let tag = push_bundle_dir(&reg, &objects, "objects");
    let (code, _, err) = validate(&tag, &["-b", "none"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = validate(&tag, &["-b", "none", "-o", "bundle-objects"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("priorityclass-global-default"), "{err}");
    // Names opm does not know are ignored (parseOptions).
    let (code, _, err) = validate(&tag, &["-b", "none", "--optional-validators", "nothing"]);
    assert_eq!(code, 0, "{err}");

    // --tag is required (MarkFlagRequired); no argument (cobra.NoArgs); an
    // image that is not there.
    let (code, _, err) = opm_in(
        tmp.path(),
        &["alpha", "bundle", "validate", "-b", "none"],
        None,
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("required flag(s) \"tag\" not set"), "{err}");
    let (code, _, err) = opm_in(
        tmp.path(),
        &["alpha", "bundle", "validate", "-t", &valid_tag, "extra"],
        None,
    );
    assert_eq!(code, 1, "{err}");
    let missing = format!("{}/opm-bundle/missing:v1", reg.host());
    let (code, _, err) = validate(&missing, &["-b", "none"]);
    assert_eq!(code, 1, "{err}");
}

/// `opm alpha bundle validate` on corpus bundles, against what
/// operator-framework/api's validators said of them
/// (`../shared/opm-golden/validate/verdicts.json`, operator-sdk's default
/// set): where they found nothing, opm's validators (a subset) find nothing
/// either; CRD errors fail both; a ServiceAccount named like a deployment's
/// is an error of api's bundle validator, which opm does not run
/// (pkg/lib/bundle/validate.go runs operator-registry's own), so it passes.
#[test]
fn alpha_bundle_validate_agrees_with_the_golden_verdicts() {
    let verdicts: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::golden().join("validate/verdicts.json"))
            .expect("verdicts.json"),
    )
    .expect("json");
    let reg = Registry::start();
    // (corpus folder, what the golden says, opm's exit code)
    let table = [
        ("operators/etcd/0.9.4", false, 0),
        ("operators/ack-ecr-controller/0.0.11", false, 0),
        ("operators/aqua/0.0.1", true, 1),
        ("operators/cockroachdb/2.0.9", true, 1),
        ("operators/hawtio-operator/0.1.0", true, 1),
        (
            "operators/community-windows-machine-config-operator/3.1.0",
            true,
            0,
        ),
        ("operators/node-healthcheck-operator/0.1.1", true, 0),
    ];
    for (i, (folder, golden_error, want)) in table.into_iter().enumerate() {
        assert_eq!(
            verdicts[folder]["error"].as_bool(),
            Some(golden_error),
            "{folder}: {}",
            verdicts[folder]
        );
        if golden_error && want == 0 {
            assert_eq!(
                verdicts[folder]["types"],
                serde_json::json!(["BundleNotValid"]),
                "{folder}"
            );
        }
        let tag = push_bundle_dir(&reg, &common::corpus().join(folder), &format!("golden-{i}"));
        let (code, _, err) = opm(&["alpha", "bundle", "validate", "-t", &tag, "-b", "none"]);
        assert_eq!(code, want, "{folder}: {err}");
    }
}
