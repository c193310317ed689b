//! A bundle directory as an `olm.bundle` object, as `opm render` writes it
//! for a bundle image with no migrations: opm's default, and what opm
//! v1.73.0's `alpha render-template` writes for a template's bundle images
//! unless `--migrate-level` asks for more. The object is
//! [`crate::fbc::from_bundle`]'s (the properties derived once, in
//! [`crate::bundle::properties`]), with one `olm.bundle.object` per
//! manifest; a caller that wants the `bundle-object-to-csv-metadata`
//! migration (what the community pipeline's catalogs hold) runs
//! [`crate::fbc::migrate`] on it.

use super::Error;
use crate::fbc;

/// The `olm.bundle` object for a bundle directory pulled from `image`.
pub fn bundle_to_fbc(bundle: &crate::bundle::Bundle, image: &str) -> Result<fbc::Bundle, Error> {
    fbc::from_bundle::bundle_to_fbc(bundle, image).map_err(|e| Error::Render(e.to_string()))
}
