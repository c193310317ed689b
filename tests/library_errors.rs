//! The library's errors are enums a caller can match, one per module, and
//! they keep naming the file or package that failed.

use std::path::Path;

use olm_catalog::{fbc, index, serve, sign};

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
    let err = idx
        .write(|tx| Ok(index::ops::remove_packages(tx, &["nope".to_string()])?))
        .expect_err("no such package");
    match err.downcast_ref::<index::Error>() {
        Some(index::Error::NotInIndex(m)) => assert!(m.contains("package nope"), "{m}"),
        other => panic!("expected NotInIndex, got {other:?}"),
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
