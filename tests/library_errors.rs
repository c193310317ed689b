//! The library's errors are enums a caller can match, one per module, and
//! they keep naming the file or package that failed.

use std::path::Path;

use olm_catalog::{fbc, graph, index, ops, serve, sign};

use crate::common;

#[test]
fn serve_names_a_missing_or_inconsistent_catalog() {
    match serve::CatalogSource::detect("/nonexistent/catalog") {
        Err(serve::Error::Missing { what, path }) => {
            assert_eq!(what, "catalog");
            assert_eq!(path, Path::new("/nonexistent/catalog"));
        }
        other => panic!("expected Missing, got {other:?}"),
    }

    let tmp = tempfile::tempdir().expect("tmp");
    std::fs::write(
        tmp.path().join("catalog.json"),
        "{\"schema\":\"olm.package\",\"name\":\"a\"}\n{\"schema\":\"olm.package\",\"name\":\"a\"}\n",
    )
    .expect("write");
    let err = match serve::CatalogSource::Fbc(tmp.path().to_path_buf()).load() {
        Err(e) => e,
        Ok(_) => panic!("a package defined twice must not load"),
    };
    match &err {
        serve::Error::InvalidCatalog { path, source } => {
            assert_eq!(path, tmp.path());
            assert!(
                matches!(&**source, serve::Error::Inconsistent(m) if m.contains("\"a\" is defined more than once")),
                "{source:?}"
            );
        }
        other => panic!("expected InvalidCatalog, got {other:?}"),
    }
    assert_eq!(
        olm_catalog::diag::with_causes(&err),
        format!(
            "invalid catalog {}: package \"a\" is defined more than once",
            tmp.path().display()
        )
    );
}

#[test]
fn index_errors_say_what_is_not_there() {
    let tmp = tempfile::tempdir().expect("tmp");
    let missing = tmp.path().join("index.db");
    assert!(matches!(
        index::Index::open_read(&missing),
        Err(index::DbError::Missing(p)) if p == missing
    ));

    let text = tmp.path().join("notes.txt");
    std::fs::write(&text, "hello").expect("write");
    match index::render::render_file(&text) {
        Err(index::Error::UnsupportedFile { path, kind }) => {
            assert_eq!(path, text);
            assert_eq!(kind, "text");
        }
        other => panic!("expected UnsupportedFile, got {other:?}"),
    }

    // A typed error from inside a write comes back out of it as itself.
    let mut idx = index::Index::create_new(&missing).expect("create");
    match idx.remove_packages(&["nope".to_string()]) {
        Err(index::Error::NotInIndex(m)) => assert!(m.contains("package nope"), "{m}"),
        other => panic!("expected NotInIndex, got {other:?}"),
    }
}

#[test]
fn index_open_names_a_file_that_is_not_an_index() {
    let tmp = tempfile::tempdir().expect("tmp");
    let text = tmp.path().join("notes.db");
    std::fs::write(
        &text,
        "not a database, just text that is long enough for a header",
    )
    .expect("write");
    match index::Index::open_read(&text) {
        Err(index::DbError::NotAnIndex { path, reason }) => {
            assert_eq!(path, text);
            assert!(reason.contains("not an SQLite database"), "{reason}");
        }
        other => panic!("expected NotAnIndex, got {:?}", other.map(|_| ())),
    }
    // The use case keeps the index's error as its cause.
    let err = ops::index::remove_packages(&text, &["etcd".to_string()]).expect_err("not an index");
    let ops::Error::Index(cause) = err.root() else {
        panic!("expected ops::Error::Index, got {err:?}");
    };
    assert!(
        matches!(cause, index::Error::Db(index::DbError::NotAnIndex { .. })),
        "{cause:?}"
    );
}

#[test]
fn index_add_of_a_bundle_that_does_not_fit_is_a_conflict() {
    let tmp = tempfile::tempdir().expect("tmp");
    let db = tmp.path().join("index.db");
    // rep.v1.1.0 replaces rep.v1.0.0, which the new index does not have.
    let bundle = common::fixtures().join("graph/pkg-replaces/1.1.0");
    let opts = ops::index::AddOptions {
        database: db.clone(),
        bundles: vec![bundle],
        ..Default::default()
    };
    let err = ops::index::add(&opts, None, &ops::Silent).expect_err("replaces a missing bundle");
    let ops::Error::Index(cause) = err.root() else {
        panic!("expected ops::Error::Index, got {err:?}");
    };
    match cause {
        index::Error::Conflict(m) => {
            assert!(m.contains("rep.v1.1.0 replaces rep.v1.0.0"), "{m}")
        }
        other => panic!("expected index::Error::Conflict, got {other:?}"),
    }
    // A new database is put in place only when the add succeeds.
    assert!(!db.exists());

    // The same through the index itself: the variant, no downcast.
    let b = olm_catalog::bundle::Bundle::load_dir(&opts.bundles[0]).expect("bundle");
    let record =
        index::record::BundleRecord::from_bundle(&b, "quay.invalid/rep:1.1.0").expect("record");
    let mut idx = index::Index::create_new(&db).expect("create");
    match idx.add_bundles(
        vec![(opts.bundles[0].display().to_string(), record)],
        &index::AddOptions::default(),
    ) {
        Err(index::Error::Conflict(m)) => {
            assert!(m.contains("rep.v1.1.0 replaces rep.v1.0.0"), "{m}")
        }
        other => panic!("expected index::Error::Conflict, got {other:?}"),
    }
}

#[test]
fn graph_template_errors_say_which_part_failed() {
    let tmp = tempfile::tempdir().expect("tmp");
    // A bundle image the renderer cannot resolve offline: a Render error
    // naming the image.
    let template = tmp.path().join("basic.yaml");
    std::fs::write(
        &template,
        "schema: olm.template.basic\nentries:\n  - schema: olm.package\n    name: demo\n    defaultChannel: stable\n  - schema: olm.bundle\n    image: example.com/demo@sha256:00\n",
    )
    .expect("write");
    let render = graph::template::dir_renderer(tmp.path());
    let text = std::fs::read_to_string(&template).expect("read");
    match graph::template::render(&text, &template, &render) {
        Err(graph::Error::Render(m)) => assert!(m.contains("example.com/demo@sha256:00"), "{m}"),
        other => panic!("expected Render, got {other:?}"),
    }
    // Through the use case, the same error is ops::Error::Graph.
    let opts = ops::template::TemplateOptions {
        input: ops::template::TemplateInput::File(template.clone()),
        kind: None,
        bundles_from: Some(tmp.path().to_path_buf()),
        images_from: None,
        pull: false,
        registry: Default::default(),
        migrate_level: String::new(),
    };
    match ops::template::render_template(&opts, &ops::Silent) {
        Err(ops::Error::Graph(graph::Error::Render(_))) => {}
        other => panic!("expected Graph(Render), got {other:?}"),
    }
    // Build ids opm cannot compare (a leading zero is no pre-release).
    let (a, b): (semver::Version, semver::Version) = (
        "1.0.0+01".parse().expect("semver"),
        "1.0.0+02".parse().expect("semver"),
    );
    match graph::modes::build_id_compare(&a, &b) {
        Err(graph::Error::BuildId { version, .. }) => assert_eq!(version, "1.0.0+01"),
        other => panic!("expected BuildId, got {other:?}"),
    }
}

#[test]
fn fbc_refuses_a_package_name_that_leaves_the_directory() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut cfg = fbc::DeclarativeConfig::default();
    cfg.packages.push(fbc::Package {
        name: "../escape".to_string(),
        ..Default::default()
    });
    match fbc::write::write_dir(&cfg, fbc::write::OutputFormat::Json, tmp.path()) {
        Err(fbc::FbcError::UnsafePackageName(name)) => assert_eq!(name, "../escape"),
        other => panic!("expected UnsafePackageName, got {other:?}"),
    }
}

#[test]
fn sign_names_a_directory_that_is_not_a_layout() {
    let tmp = tempfile::tempdir().expect("tmp");
    let client = olm_catalog::oci::RegistryClient::new(olm_catalog::oci::ClientOptions::default())
        .expect("client");
    let target =
        sign::Target::parse(&format!("oci:{}", tmp.path().display()), &client).expect("parse");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    match rt.block_on(target.resolve_digest()) {
        Err(sign::Error::NotALayout(dir)) => assert_eq!(dir, tmp.path()),
        other => panic!("expected NotALayout, got {other:?}"),
    }
}

/// The parsers a library user calls directly answer with their module's
/// error type, not a bare string.
#[test]
fn parsers_answer_with_their_modules_error_types() {
    let mut cfg = fbc::DeclarativeConfig::default();
    assert!(matches!(
        cfg.push_object(serde_json::json!({"name": "no-schema"})),
        Err(fbc::FbcError::InvalidObject(m)) if m.contains("schema")
    ));
    assert!(matches!(
        cfg.push_object(serde_json::json!({"schema": "olm.package", "name": 3})),
        Err(fbc::FbcError::InvalidObject(m)) if m.contains("olm.package")
    ));
    assert!(matches!(
        fbc::migrate::migrate(&mut cfg, "split-icon"),
        Err(fbc::FbcError::UnknownMigrationLevel { level, .. }) if level == "split-icon"
    ));
    let range = olm_catalog::semver_range::Range::parse(">=1.0 <2.0.0").expect_err("short");
    assert_eq!(range.text, ">=1.0 <2.0.0");
    assert!(range.message.contains("`>=1.0`"), "{range}");
    assert!(matches!(
        sign::payload::parse_annotations(&["novalue".to_string()]),
        Err(sign::Error::Annotation(m)) if m.contains("novalue")
    ));
    assert!(matches!(
        sign::payload::SimpleSigning::parse(b"{}"),
        Err(sign::Error::Payload(_))
    ));
    let f = Path::new("sub.yaml");
    assert!(matches!(
        olm_catalog::resolve::Subscription::parse("kind: Subscription\nspec:\n  channel: x\n", f),
        Err(olm_catalog::resolve::Error::Request(m)) if m.contains("sub.yaml") && m.contains("spec.name")
    ));
    let b = olm_catalog::bundle::Bundle::from_files(Path::new("empty"), Vec::new());
    assert!(matches!(
        fbc::from_bundle::bundle_to_fbc(&b, ""),
        Err(fbc::FbcError::Bundle(m)) if m.contains("empty")
    ));
    assert!(matches!(
        index::record::BundleRecord::from_bundle(&b, ""),
        Err(index::Error::Bundle(_))
    ));
}
