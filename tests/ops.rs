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
