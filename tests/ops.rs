//! The use cases of `olm_catalog::ops`, called as a library (no binary):
//! their logic and the errors a caller matches.

use olm_catalog::ops::{
    self,
    catalog_source::{self, SourceKind, SourceOptions},
};

use crate::common;

#[test]
fn catalog_source_reads_bundle_and_fbc_directories_and_concatenates_them() {
    let bundle = common::fixtures().join("bundles/good/memcached-operator-0.0.2");
    let bundle = bundle.to_string_lossy().into_owned();
    assert_eq!(SourceKind::of(&bundle), SourceKind::BundleDir);
    let opts = SourceOptions {
        bundle_image: Some("quay.io/me/memcached-bundle:v0.0.2".into()),
        client: None,
    };
    let cfg = catalog_source::load(&bundle, &opts).expect("bundle directory");
    assert_eq!(cfg.bundles.len(), 1);
    assert!(cfg.packages.is_empty() && cfg.channels.is_empty());
    assert_eq!(cfg.bundles[0].image, "quay.io/me/memcached-bundle:v0.0.2");

    // An FBC directory is read as it is.
    let catalog = common::corpus().join("catalogs/v4.18/kepler-operator");
    let catalog = catalog.to_string_lossy().into_owned();
    assert_eq!(SourceKind::of(&catalog), SourceKind::CatalogDir);
    let fbc = catalog_source::load(&catalog, &SourceOptions::default()).expect("catalog");
    assert_eq!(fbc.packages.len(), 1);
    assert_eq!(fbc.packages[0].name, "kepler-operator");
    assert!(!fbc.bundles.is_empty());

    // load_all concatenates, in order.
    let both = catalog_source::load_all(&[catalog.clone(), bundle.clone()], &opts).expect("both");
    assert_eq!(both.bundles.len(), fbc.bundles.len() + 1);
    assert_eq!(
        both.bundles.last().map(|b| b.name.as_str()),
        Some(cfg.bundles[0].name.as_str())
    );
}

#[test]
fn catalog_source_errors_say_what_failed() {
    let missing = "/nonexistent/olm-catalog/source";
    let err = catalog_source::load(missing, &SourceOptions::default()).expect_err("missing");
    assert!(matches!(err, ops::Error::Source(_)), "{err:?}");
    assert!(err.to_string().contains(missing), "{err}");

    // An image needs a registry client; none is made behind the caller's back.
    let image = "oci:/nonexistent/layout:v1";
    assert_eq!(SourceKind::of(image), SourceKind::Image);
    let err = catalog_source::load(image, &SourceOptions::default()).expect_err("no client");
    assert!(matches!(err, ops::Error::Usage(_)), "{err:?}");

    // A catalog file with a syntax error is an FBC error naming the file.
    let tmp = tempfile::tempdir().expect("tmp");
    std::fs::write(tmp.path().join("catalog.json"), "{\"schema\": ").expect("write");
    let dir = tmp.path().to_string_lossy().into_owned();
    let err = catalog_source::load(&dir, &SourceOptions::default()).expect_err("bad json");
    assert!(matches!(err.root(), ops::Error::Fbc(_)), "{err:?}");
    assert!(err.to_string().contains("catalog.json"), "{err}");
}

/// The multi-arch check and `render-template --pull` take the one set of
/// registry flags: against a registry that needs a password they fail
/// without `--username/--password-stdin` and read the images with them;
/// `--insecure` is accepted and `--ca-file` is read.
#[test]
fn multiarch_check_and_render_template_pull_use_the_registry_flags() {
    let reg = crate::registry::Registry::start_with_auth("alice", "s3cret");
    let creds = ["--username", "alice", "--password-stdin"];
    let pw = Some("s3cret\n");
    let pkg = common::fixtures().join("graph/tree/pkg-capital");
    for v in ["1.0.0", "1.1.0"] {
        let dir = pkg.join(v);
        let tag = reg.image("capital", v);
        let mut args = vec![
            "bundle",
            "build",
            dir.to_str().expect("utf8"),
            "--tag",
            &tag,
            "-q",
        ];
        args.extend(creds);
        let (code, out, err) = common::run_cli(&args, &[], pw);
        assert_eq!(code, 0, "{out}{err}");
    }

    // render-template --pull.
    let tmp = tempfile::tempdir().expect("tempdir");
    let text = std::fs::read_to_string(pkg.join("catalog-templates/semver.yaml")).expect("read");
    let (code, want, err) = common::run_cli(
        &[
            "render-template",
            pkg.join("catalog-templates/semver.yaml")
                .to_str()
                .expect("utf8"),
            "--bundles-from",
            pkg.to_str().expect("utf8"),
        ],
        &[],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let prefix = reg.image("capital", "");
    let t = tmp.path().join("t.yaml");
    std::fs::write(&t, text.replace("example.com/capital:", &prefix)).expect("write");
    let t = t.to_str().expect("utf8");
    let (code, _, err) = common::run_cli(&["render-template", t, "--pull"], &[], None);
    assert_eq!(code, 2, "no credentials: {err}");
    assert!(err.contains("authentication to"), "{err}");
    let mut args = vec!["render-template", t, "--pull", "--insecure"];
    args.extend(creds);
    let (code, got, err) = common::run_cli(&args, &[], pw);
    assert_eq!(code, 0, "{err}");
    assert_eq!(got, want.replace("example.com/capital:", &prefix));
    let bad_ca = tmp.path().join("bad.pem");
    std::fs::write(&bad_ca, "not a certificate").expect("write");
    let bad_ca = bad_ca.to_str().expect("utf8");
    let (code, _, err) = common::run_cli(
        &["render-template", t, "--pull", "--ca-file", bad_ca],
        &[],
        None,
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--ca-file") && err.contains("bad.pem"),
        "{err}"
    );

    // The multi-arch check, with the pushed image as the operator image.
    let good = common::fixtures().join("bundles/good/memcached-operator-0.0.2");
    let bundle = tmp.path().join("bundle");
    common::copy_dir(&good, &bundle);
    let csv = bundle.join("manifests/memcached-operator.clusterserviceversion.yaml");
    let image = reg.image("capital", "1.0.0");
    let fixture_image = "quay.io/example/memcached-operator@sha256:0f5d3f7a2b1c4e6d8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f";
    let csv_text = std::fs::read_to_string(&csv).expect("csv");
    assert!(csv_text.contains(fixture_image));
    std::fs::write(&csv, csv_text.replace(fixture_image, &image)).expect("write csv");
    let bundle = bundle.to_str().expect("utf8");
    let validate = [
        "bundle",
        "validate",
        "--select-optional",
        "name=multiarch",
        "-o",
        "json",
        bundle,
    ];
    let multiarch = |out: &str| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(out).expect("json report");
        v["reports"][0]["findings"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|f| f["rule"].as_str().map(String::from))
            .filter(|r| r.starts_with("multiarch-"))
            .collect()
    };
    let (_, out, err) = common::run_cli(&validate, &[], None);
    assert_eq!(
        multiarch(&out),
        ["multiarch-image-uninspectable"],
        "{out}{err}"
    );
    assert!(out.contains("authentication to"), "{out}");
    let mut args = validate.to_vec();
    args.extend(creds);
    args.push("--insecure");
    let (code, out, err) = common::run_cli(&args, &[], pw);
    assert_eq!(code, 0, "{out}{err}");
    assert!(multiarch(&out).is_empty(), "{out}");
    let mut args = validate.to_vec();
    args.extend(["--ca-file", bad_ca]);
    let (code, _, err) = common::run_cli(&args, &[], None);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--ca-file") && err.contains("bad.pem"),
        "{err}"
    );
}

#[test]
fn index_add_rm_prune_and_export_as_library_calls() {
    let tmp = tempfile::tempdir().expect("tmp");
    let db = tmp.path().join("index.db");
    let graph = common::fixtures().join("graph");
    // Package directories: each in its ci.yaml mode; a broken bundle is
    // left out with keep_going and the rest goes in; pkg-replaces strands
    // 0.9.0, which permissive keeps (with a warning).
    let opts = ops::index::AddOptions {
        database: db.clone(),
        bundles: vec![
            graph.join("pkg-replaces"),
            graph.join("pkg-semver"),
            common::fixtures().join("bundles/bad/broken-yaml"),
        ],
        keep_going: true,
        keep_content: true,
        permissive: true,
        ..Default::default()
    };
    let out = ops::index::add(&opts, None, &ops::Silent).expect("add");
    let ops::index::Added::Bundles(report) = &out.added else {
        panic!("bundles expected: {out:?}");
    };
    assert_eq!(
        report.packages.iter().cloned().collect::<Vec<_>>(),
        ["demo", "rep"]
    );
    assert_eq!(out.left_out().len(), 1, "{out:?}");
    assert_eq!(report.stranded.len(), 1, "{out:?}");
    assert!(report.stranded[0].starts_with("rep.v0.9.0 "), "{out:?}");
    assert!(out.warnings[0].contains("rep.v0.9.0"), "{out:?}");
    assert!(out.left_out()[0].file.ends_with("broken-yaml"), "{out:?}");
    assert!(
        out.summary.starts_with(&format!(
            "added {} bundle(s) to 2 package(s): demo, rep",
            report.added.len()
        )),
        "{}",
        out.summary
    );
    let modes: Vec<Vec<String>> = common::rows(
        &db,
        "SELECT package_name, add_mode FROM olm_catalog_package",
    )
    .into_iter()
    .collect();
    assert_eq!(
        modes,
        [["demo", "semver"], ["rep", "replaces"]],
        "{modes:?}"
    );

    // Without --keep-going the broken bundle fails the add: a Bundle error,
    // and the database is as it was.
    let before = std::fs::read(&db).expect("db");
    let err = ops::index::add(
        &ops::index::AddOptions {
            keep_going: false,
            ..opts.clone()
        },
        None,
        &ops::Silent,
    )
    .expect_err("broken bundle");
    assert!(matches!(err.root(), ops::Error::Bundle(_)), "{err:?}");
    assert_eq!(std::fs::read(&db).expect("db"), before);

    // Nothing to add is a usage error.
    let err = ops::index::add(
        &ops::index::AddOptions {
            database: db.clone(),
            ..Default::default()
        },
        None,
        &ops::Silent,
    )
    .expect_err("no bundles");
    assert!(matches!(err, ops::Error::Usage(_)), "{err:?}");

    // Export: a non-empty destination is refused, then a fresh one written.
    let busy = tmp.path().join("busy");
    std::fs::create_dir(&busy).expect("mkdir");
    std::fs::write(busy.join("x"), "x").expect("write");
    let export = |to: &std::path::Path| {
        ops::index::export(
            &ops::index::ExportOptions {
                database: db.clone(),
                packages: vec!["rep".into()],
                to: to.to_path_buf(),
                registry: Default::default(),
            },
            &ops::Silent,
        )
    };
    let err = export(&busy).expect_err("not empty");
    assert!(matches!(err, ops::Error::Destination(_)), "{err:?}");
    let to = tmp.path().join("exported");
    let written = export(&to).expect("export");
    assert_eq!(written.len(), 1);
    assert_eq!(written[0].package, "rep");
    assert_eq!(written[0].pulled, 0);
    assert!(to.join("rep/package.yaml").is_file());

    // rm and prune report what they removed.
    let pruned = ops::index::prune(&db, &["rep".into()]).expect("prune");
    assert_eq!(pruned.packages, ["demo"]);
    let removed = ops::index::remove_packages(&db, &["rep".into()]).expect("rm");
    assert_eq!(removed.packages, ["rep"]);
    assert!(common::rows(&db, "SELECT name FROM package").is_empty());
}

#[test]
fn which_registry_gets_an_explicit_credential() {
    use olm_catalog::oci::ImageRef;
    use olm_catalog::ops::registry::{credential_host_of, credential_hosts};
    let r = |s: &str| -> ImageRef { s.parse().expect("ref") };
    // The destination's registry, whatever the sources.
    let hosts = credential_hosts(Some(&r("quay.io/me/idx:v1")), &[r("ghcr.io/a/b:v1")]);
    assert_eq!(hosts.expect("dest"), ["quay.io"]);
    // No registry destination: the one registry the sources come from.
    let layout = r("oci:/tmp/layout:v1");
    let hosts = credential_hosts(
        Some(&layout),
        &[r("ghcr.io/a/b:v1"), r("ghcr.io/a/c:v2"), layout.clone()],
    );
    assert_eq!(hosts.expect("one source registry"), ["ghcr.io"]);
    // Several, or none: refused, never guessed.
    for sources in [
        vec![r("ghcr.io/a/b:v1"), r("quay.io/a/c:v1")],
        vec![layout.clone()],
    ] {
        let err = credential_hosts(None, &sources).expect_err("ambiguous");
        assert!(matches!(err, ops::Error::Usage(_)), "{err:?}");
    }
    assert!(credential_host_of(&layout).is_err());
    assert_eq!(
        credential_host_of(&r("127.0.0.1:5000/x:y")).expect("host"),
        ["127.0.0.1:5000"]
    );
}

#[test]
fn migrate_refuses_bundles_and_bundle_lists_name_their_line() {
    let tmp = tempfile::tempdir().expect("tmp");
    let bundle = common::fixtures().join("graph/pkg-semver/1.0.0");
    let err = ops::render::migrate(
        &ops::render::MigrateOptions {
            source: bundle.to_string_lossy().into_owned(),
            out_dir: tmp.path().join("out"),
            format: olm_catalog::fbc::write::OutputFormat::Json,
            migrate_level: "none".into(),
            client: None,
        },
        &ops::Silent,
    )
    .expect_err("a bundle");
    assert!(matches!(err, ops::Error::Source(_)), "{err:?}");
    assert!(!tmp.path().join("out").exists());

    let jobs = ops::image::parse_bundle_list(
        "# bundles\na quay.io/me/a:v1\n\nb quay.io/me/a:v1\n",
        "list.txt",
        None,
    )
    .expect("list");
    assert_eq!(jobs.len(), 2);
    let err = ops::image::check_bundle_jobs(&jobs).expect_err("same destination twice");
    assert!(err.to_string().contains("quay.io/me/a:v1"), "{err}");
    let err = ops::image::parse_bundle_list("a\n", "list.txt", None).expect_err("no ref");
    assert!(err.to_string().starts_with("list.txt:1:"), "{err}");
    assert_eq!(
        ops::image::bundle_job_hosts(&jobs, Some("127.0.0.1:5000/{package}:v{version}")),
        ["127.0.0.1:5000", "quay.io"]
    );
}

/// The serve cache of `opm serve --cache-dir` as a library call: the
/// digest recorded by a rebuild is trusted, a changed catalog is refused
/// as stale, and integrity without a cache directory is a typed error.
#[test]
fn serve_cache_rebuilds_checks_and_refuses_a_stale_digest() {
    use ops::serve::{prepare, CacheError, CacheFault, CacheOptions};
    let tmp = tempfile::tempdir().expect("tempdir");
    let catalog = tmp.path().join("catalog");
    let src = common::corpus().join("catalogs/v4.18/kepler-operator");
    std::fs::create_dir_all(&catalog).expect("mkdir");
    for e in std::fs::read_dir(&src).expect("read") {
        let p = e.expect("entry").path();
        if p.is_file() {
            std::fs::copy(&p, catalog.join(p.file_name().expect("name"))).expect("copy");
        }
    }
    let cache = tmp.path().join("cache");
    let mut opts = CacheOptions {
        source: catalog.clone(),
        cache_dir: Some(cache.clone()),
        cache_only: true,
        enforce_integrity: None,
    };
    assert!(
        !prepare(&opts).expect("cache-only rebuild"),
        "cache-only does not serve"
    );
    let recorded =
        std::fs::read_to_string(cache.join(ops::serve::CACHE_DIGEST_FILE)).expect("digest file");
    assert_eq!(
        recorded.trim(),
        ops::serve::catalog_digest(&catalog).expect("digest")
    );
    opts.cache_only = false;
    assert!(prepare(&opts).expect("integrity holds"));
    std::fs::write(catalog.join("extra.json"), "{}").expect("change the catalog");
    match prepare(&opts) {
        Err(ops::Error::Cache(CacheError::Integrity(CacheFault::Stale { .. }))) => {}
        other => panic!("expected a stale cache, got {other:?}"),
    }
    opts.cache_dir = None;
    opts.enforce_integrity = Some(true);
    assert!(matches!(
        prepare(&opts),
        Err(ops::Error::Cache(CacheError::NoCacheDir))
    ));
}

/// `opm alpha bundle generate` as a library call: the annotations and
/// Dockerfile written, and opm's refusals as typed errors.
#[test]
fn bundle_generate_writes_opm_files_and_types_its_refusals() {
    use ops::bundle::{generate, GenerateError, GenerateOptions};
    let tmp = tempfile::tempdir().expect("tempdir");
    let manifests = tmp.path().join("bundle/manifests");
    std::fs::create_dir_all(&manifests).expect("mkdir");
    let src = common::corpus().join("operators/etcd/0.9.4/manifests");
    for e in std::fs::read_dir(&src).expect("read") {
        let p = e.expect("entry").path();
        std::fs::copy(&p, manifests.join(p.file_name().expect("name"))).expect("copy");
    }
    let mut opts = GenerateOptions {
        directory: "bundle/manifests".into(),
        package: Some("etcd".into()),
        channels: Some("alpha".into()),
        base_image: Some("quay.io/me/base:v1".into()),
        work_dir: tmp.path().to_path_buf(),
        ..Default::default()
    };
    let generated = generate(&opts).expect("generate");
    assert_eq!(generated.root, tmp.path().join("bundle"));
    assert!(generated
        .labels
        .contains(&(ops::bundle::MEDIATYPE_LABEL.into(), "registry+v1".into())));
    let dockerfile = std::fs::read_to_string(&generated.dockerfile).expect("Dockerfile");
    assert!(
        dockerfile.starts_with("FROM quay.io/me/base:v1\n"),
        "{dockerfile}"
    );
    // Other channels, without overwrite: opm's ValidateAnnotations.
    opts.channels = Some("beta".into());
    match generate(&opts) {
        Err(ops::Error::Generate(GenerateError::Annotations(problems))) => {
            assert_eq!(problems.len(), 1, "{problems:?}")
        }
        other => panic!("expected disagreeing annotations, got {other:?}"),
    }
    opts.directory = "missing".into();
    assert!(matches!(
        generate(&opts),
        Err(ops::Error::Generate(GenerateError::Missing(_)))
    ));
}

/// `ops::list` (opm's `alpha list` tables) and `ops::render::render_graph`
/// (what `alpha render-graph` draws) on a corpus catalog directory of
/// several packages: the rows, their order and cells, and the typed errors.
#[test]
fn list_rows_and_render_graph_selection_of_a_catalog() {
    use olm_catalog::fbc::{Channel, ChannelEntry};
    use ops::list::{self, BundleRow, ChannelHead, ChannelRow, ListError};
    use ops::render::{render_graph, render_graph_packages, RenderGraphOptions};

    let dir = common::corpus().join("catalogs/v4.18");
    let cfg =
        catalog_source::load(&dir.to_string_lossy(), &SourceOptions::default()).expect("catalog");
    assert!(cfg.packages.len() > 1, "{:?}", cfg.packages);

    // Packages: every one, by name, with the display name of the default
    // channel head's CSV.
    let packages = list::packages(&cfg);
    let names: Vec<&str> = packages.iter().map(|r| r.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert_eq!(names.len(), cfg.packages.len());
    let row = |name: &str| packages.iter().find(|r| r.name == name).expect(name);
    assert_eq!(
        row("kube-green").cells(),
        ["kube-green", "kube-green", "alpha"]
    );
    assert_eq!(row("kepler-operator").display_name, "Kepler");

    // Channels of one package, with its head.
    let channels = list::channels(&cfg, Some("kube-green")).expect("channels");
    assert_eq!(
        channels,
        [ChannelRow {
            package: "kube-green".into(),
            channel: "alpha".into(),
            head: ChannelHead::One("kube-green.v0.7.1".into()),
        }]
    );
    assert_eq!(
        channels[0].cells(),
        ["kube-green", "alpha", "kube-green.v0.7.1"]
    );
    let all = list::channels(&cfg, None).expect("all channels");
    assert_eq!(all.len(), cfg.channels.len());

    // Bundles: one row per channel entry, by package, channel and bundle,
    // with the image of the package's bundle of that name.
    let bundles = list::bundles(&cfg, Some("kube-green")).expect("bundles");
    let entries: usize = cfg
        .channels
        .iter()
        .filter(|c| c.package == "kube-green")
        .map(|c| c.entries.len())
        .sum();
    assert_eq!(bundles.len(), entries);
    let keys: Vec<_> = bundles.iter().map(|r| (&r.channel, &r.bundle)).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    for r in &bundles {
        let b = cfg
            .bundles
            .iter()
            .find(|b| b.package == r.package && b.name == r.bundle)
            .expect("bundle of the entry");
        assert_eq!(r.image, b.image, "{r:?}");
    }
    let second = bundles
        .iter()
        .find(|r| r.bundle == "kube-green.v0.3.1")
        .expect("v0.3.1");
    assert_eq!(second.replaces, "kube-green.v0.3.0");
    assert_eq!(second.cells().len(), BundleRow::HEADER.len());

    // A package the catalog does not have is a typed error.
    for err in [
        list::channels(&cfg, Some("no-such")).map(|_| ()),
        list::bundles(&cfg, Some("no-such")).map(|_| ()),
    ] {
        match err {
            Err(ops::Error::List(ListError::PackageNotFound(p))) => assert_eq!(p, "no-such"),
            other => panic!("{other:?}"),
        }
    }

    // A channel without one head says so in its cell.
    let entry = |name: &str, replaces: &str| ChannelEntry {
        name: name.into(),
        replaces: replaces.into(),
        ..Default::default()
    };
    let two = Channel {
        entries: vec![entry("a", ""), entry("b", "")],
        ..Default::default()
    };
    assert_eq!(
        ChannelHead::of(&two).to_string(),
        "ERROR: multiple channel heads found in graph: a, b"
    );
    let cycle = Channel {
        entries: vec![entry("a", "b"), entry("b", "a")],
        ..Default::default()
    };
    assert_eq!(ChannelHead::of(&cycle), ChannelHead::None);

    // render-graph: every package's graph, or only the one asked for.
    let graphs = |package| render_graph_packages(cfg.clone(), &dir, package);
    assert_eq!(graphs(None).len(), cfg.packages.len());
    let only: Vec<String> = graphs(Some("kube-green"))
        .into_iter()
        .map(|g| g.package)
        .collect();
    assert_eq!(only, ["kube-green"]);
    assert!(graphs(Some("not-there")).is_empty());
    let opts = RenderGraphOptions {
        package: Some("kube-green".into()),
        ..Default::default()
    };
    let text = render_graph(cfg.clone(), &dir, &opts).expect("mermaid");
    assert!(text.starts_with("graph LR\n"), "{text}");
    assert!(text.contains("%% package \"kube-green\"\n"), "{text}");
    assert_eq!(text.matches("%% package ").count(), 1, "{text}");
    let opts = RenderGraphOptions {
        minimum_edge: Some("x".into()),
        ..Default::default()
    };
    match render_graph(cfg, &dir, &opts) {
        Err(ops::Error::Graph(olm_catalog::graph::Error::Draw(m))) => {
            assert!(m.contains("unknown minimum edge name"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}
