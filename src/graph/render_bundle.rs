//! A bundle directory as an `olm.bundle` object, as `opm render` writes it
//! for a bundle image with the `bundle-object-to-csv-metadata` migration
//! (what the community pipeline's catalogs hold): the render of
//! [`crate::fbc::from_bundle`] (the properties derived once, in
//! [`crate::bundle::properties`]) followed by that migration
//! ([`crate::fbc::migrate`]), which puts `olm.csv.metadata` in place of the
//! `olm.bundle.object` properties.

use super::Error;
use crate::fbc::{self, migrate, DeclarativeConfig};

/// The `olm.bundle` object for a bundle directory pulled from `image`.
pub fn bundle_to_fbc(bundle: &crate::bundle::Bundle, image: &str) -> Result<fbc::Bundle, Error> {
    let b =
        fbc::from_bundle::bundle_to_fbc(bundle, image).map_err(|e| Error::Render(e.to_string()))?;
    let mut cfg = DeclarativeConfig {
        bundles: vec![b],
        ..DeclarativeConfig::default()
    };
    migrate::bundle_object_to_csv_metadata(&mut cfg).map_err(|e| Error::Render(e.to_string()))?;
    Ok(cfg.bundles.remove(0))
}
