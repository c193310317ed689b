//! opm's check that an added bundle image is new to the index
//! (pkg/registry/populator.go `globalSanityCheck` at v1.73.0), run by an
//! add and, before the old bundle leaves, by its overwrite plan: here, so
//! that `add` uses `overwrite` and `overwrite` does not use `add`.

use rusqlite::{OptionalExtension, Transaction};

use super::error::{Error, Fail, Res};
use super::record::BundleRecord;

/// Refuses a bundle whose image is in the index already (opm's
/// `BundleImageAlreadyAddedErr`; `opm index add` exits 2 on it).
pub(super) fn check_image_not_in_index(tx: &Transaction<'_>, b: &BundleRecord) -> Res<()> {
    if b.bundle_path.is_empty() {
        return Ok(());
    }
    let other: Option<String> = tx
        .query_row(
            "SELECT name FROM operatorbundle WHERE bundlepath = ? LIMIT 1",
            [&b.bundle_path],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(o) = other {
        return Err(Fail::Typed(Error::BundleImageAlreadyAdded(format!(
            "bundle image {} is already in the index as {o}; opm refuses to add an image twice (\"Bundle {} already exists\")",
            b.bundle_path, b.bundle_path
        ))));
    }
    Ok(())
}
