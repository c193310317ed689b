//! Migrations of file-based catalogs, as opm's `--migrate-level` runs them
//! (operator-registry `alpha/action/migrations`): every migration up to and
//! including the level named, in order.

use base64::Engine as _;
use serde_json::Value;

use super::{DeclarativeConfig, FbcError, Property};

/// The levels known, in the order they run, as opm v1.73.0 lists them;
/// `all` runs every one of them.
pub const LEVELS: [&str; 2] = ["none", BUNDLE_OBJECT_TO_CSV_METADATA];

/// opm's first migration: bundles' `olm.bundle.object` properties give way
/// to one `olm.csv.metadata` property made from the CSV among them.
pub const BUNDLE_OBJECT_TO_CSV_METADATA: &str = "bundle-object-to-csv-metadata";

/// Every migration, whatever the newest is.
pub const ALL: &str = "all";

/// Runs the migrations up to `level` (or all of them for `all`); returns
/// how many bundles changed. Levels of opm releases after v1.73.0 (such as
/// `split-icon`) are unknown here, as they are to opm v1.73.0.
pub fn migrate(cfg: &mut DeclarativeConfig, level: &str) -> Result<usize, FbcError> {
    match level {
        "none" => Ok(0),
        BUNDLE_OBJECT_TO_CSV_METADATA | ALL => bundle_object_to_csv_metadata(cfg),
        l => Err(FbcError::UnknownMigrationLevel {
            level: l.to_string(),
            known: format!("{}, {ALL}", LEVELS.join(", ")),
        }),
    }
}

/// A bundle that already has `olm.csv.metadata` is left as it is, and so is
/// one without an image or without a CSV among its `olm.bundle.object`s
/// (opm's conditions); the others lose every `olm.bundle.object` and get
/// `olm.csv.metadata` last. A CSV object that is not JSON is an error
/// naming the bundle.
pub fn bundle_object_to_csv_metadata(cfg: &mut DeclarativeConfig) -> Result<usize, FbcError> {
    let mut changed = 0;
    for b in &mut cfg.bundles {
        if b.properties.iter().any(|p| p.kind == "olm.csv.metadata") {
            continue;
        }
        if b.image.is_empty() {
            continue;
        }
        let mut csv = None;
        for (i, p) in b.properties.iter().enumerate() {
            if p.kind != "olm.bundle.object" {
                continue;
            }
            let data = p.str_field("data");
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|e| {
                    FbcError::Migration(format!(
                        "bundle {} ({}): property {i} (olm.bundle.object): data is not base64: {e}",
                        b.name, b.package
                    ))
                })?;
            let obj: Value = match serde_json::from_slice(&bytes) {
                Ok(v) => v,
                Err(e) => {
                    // Only the CSV has to be read.
                    if String::from_utf8_lossy(&bytes).contains("ClusterServiceVersion") {
                        return Err(FbcError::Migration(format!(
                            "bundle {} ({}): property {i} (olm.bundle.object): the CSV is not JSON: {e}",
                            b.name, b.package
                        )));
                    }
                    continue;
                }
            };
            if obj.get("kind").and_then(Value::as_str) == Some("ClusterServiceVersion") {
                csv = Some(obj);
            }
        }
        let Some(csv) = csv else {
            continue;
        };
        b.properties.retain(|p| p.kind != "olm.bundle.object");
        b.properties.push(Property::shaped(
            "olm.csv.metadata",
            crate::bundle::csv_metadata::csv_metadata(&csv),
            &crate::bundle::csv_metadata::CSV_METADATA_GO_TYPE,
        ));
        changed += 1;
    }
    Ok(changed)
}
