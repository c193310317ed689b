//! `index add --overwrite-latest`: opm's rules for replacing a channel head
//! by a bundle of the same CSV name (pkg/lib/registry/registry.go
//! `populate`, pkg/registry/populator.go `globalSanityCheck` and
//! `loadManifests`, pkg/sqlite/load.go `RemoveOverwrittenChannelHead`, at
//! v1.73.0).
//!
//! [`overwrite_plan`] checks an add and says which bundle each package
//! overwrites; in replaces mode [`remove_overwritten_channel_head`] takes
//! the old bundle out before the add writes the package again, in the
//! add's transaction; in the semver modes [`semver_refusal`] gives the
//! error opm's semver path ends in.

use std::collections::BTreeMap;

use rusqlite::{params, OptionalExtension, Transaction};

use super::error::{Error, Fail, Res};
use super::record::BundleRecord;
use super::sanity::check_image_not_in_index;
use crate::graph::modes::Mode;

fn refuse(m: String) -> Fail {
    Fail::Typed(Error::Overwrite(m))
}

/// opm's `populate` and `globalSanityCheck` with overwrite on: for each
/// package, the CSV name its add overwrites (the first added bundle whose
/// name is in the index, as opm removes `overwrittenBundles[pkg][0]`).
///
/// Refused ([`Error::Overwrite`]): a bundle of that name in the index
/// without a bundle image ("index add --overwrite-latest is only supported
/// when using bundle images"); one in another package (opm would delete it
/// from that package; here it is refused); one that does not head every
/// channel it is in ("Cannot overwrite a bundle that is not at the head of
/// a channel"); two overwrites in one package ("Cannot overwrite more than
/// one bundle at a time"). An added image already in the index is
/// [`Error::BundleImageAlreadyAdded`], checked here before the old bundle
/// (and its image) leaves the index. opm skips its whole sanity check when
/// a package holds a bundle with an empty image path (its
/// `GetBundlePathsForPackage` fails) or the first image of its map is of a
/// new package; here the checks always run.
pub fn overwrite_plan(
    tx: &Transaction<'_>,
    records: &[&BundleRecord],
) -> Res<BTreeMap<String, String>> {
    let mut plan: BTreeMap<String, String> = BTreeMap::new();
    for r in records {
        let path: Option<Option<String>> = tx
            .prepare_cached("SELECT bundlepath FROM operatorbundle WHERE name = ? LIMIT 1")?
            .query_row([&r.name], |row| row.get(0))
            .optional()?;
        let Some(path) = path else { continue };
        if path.unwrap_or_default().is_empty() {
            return Err(refuse(format!(
                "index add --overwrite-latest is only supported when using bundle images: {} is in the index without a bundle image (added from a directory); remove its package (`index rm`) and add it again instead",
                r.name
            )));
        }
        let other: Option<String> = tx
            .prepare_cached(
                "SELECT package_name FROM channel_entry WHERE operatorbundle_name = ? AND package_name != ? LIMIT 1",
            )?
            .query_row(params![r.name, r.package], |row| row.get(0))
            .optional()?;
        if let Some(other) = other {
            return Err(refuse(format!(
                "cannot overwrite {}: it is a bundle of package {other} in the index, not of {} (--overwrite-latest replaces a bundle of the package it is added to)",
                r.name, r.package
            )));
        }
        plan.entry(r.package.clone())
            .or_insert_with(|| r.name.clone());
    }
    if plan.is_empty() {
        // Nothing to overwrite: opm's sanity check runs as without the flag.
        return Ok(plan);
    }
    let mut overwritten: BTreeMap<&str, &str> = BTreeMap::new();
    for r in records {
        check_image_not_in_index(tx, r)?;
        let channels: Vec<String> = tx
            .prepare_cached("SELECT name FROM channel WHERE package_name = ? ORDER BY name")?
            .query_map([&r.package], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        let mut heads = false;
        for channel in channels {
            let member: bool = tx
                .prepare_cached(
                    "SELECT EXISTS(SELECT 1 FROM channel_entry WHERE package_name = ? AND channel_name = ? AND operatorbundle_name = ?)",
                )?
                .query_row(params![r.package, channel, r.name], |row| row.get(0))?;
            if !member {
                continue;
            }
            // opm's GetBundleThatReplaces: any entry of the bundle in the
            // channel that another entry replaces (a skip pair counts).
            let by: Option<String> = tx
                .prepare_cached(
                    "SELECT r.operatorbundle_name FROM channel_entry e JOIN channel_entry r ON r.replaces = e.entry_id
                     WHERE e.operatorbundle_name = ? AND e.package_name = ? AND e.channel_name = ? LIMIT 1",
                )?
                .query_row(params![r.name, r.package, channel], |row| row.get(0))
                .optional()?;
            if let Some(by) = by {
                return Err(refuse(format!(
                    "Cannot overwrite a bundle that is not at the head of a channel using --overwrite-latest: {} is below {by} in channel {channel} of package {}",
                    r.name, r.package
                )));
            }
            heads = true;
        }
        if heads {
            if let Some(first) = overwritten.insert(&r.package, &r.name) {
                return Err(refuse(format!(
                    "Cannot overwrite more than one bundle at a time for a given package using --overwrite-latest: {first} and {} of package {}",
                    r.name, r.package
                )));
            }
        }
    }
    Ok(plan)
}

/// opm's `RemoveOverwrittenChannelHead`: takes `bundle` out of `package`
/// before the add writes the package again. Each channel it heads is
/// headed by what it replaced; a default channel it heads alone keeps its
/// row with no head (so that the package row, which references it,
/// stays); any other channel it heads alone goes, with its entries (the
/// schema's cascade). Its rows (and, by cascade, its properties,
/// dependencies and related images) and its `deprecated` row are deleted,
/// so the new bundle is not deprecated.
pub fn remove_overwritten_channel_head(
    tx: &Transaction<'_>,
    package: &str,
    bundle: &str,
) -> Res<()> {
    // Nothing may replace it ([`overwrite_plan`] checked this per channel).
    let replaced: Option<(String, String)> = tx
        .query_row(
            "SELECT DISTINCT operatorbundle.name, channel_entry.channel_name FROM channel_entry
             LEFT OUTER JOIN channel_entry replaces ON replaces.replaces = channel_entry.entry_id
             INNER JOIN operatorbundle ON replaces.operatorbundle_name = operatorbundle.name
             WHERE channel_entry.package_name = ? AND channel_entry.operatorbundle_name = ? LIMIT 1",
            params![package, bundle],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if let Some((by, channel)) = replaced {
        return Err(refuse(format!(
            "cannot overwrite bundle {bundle} from package {package}: replaced by {by} on channel {channel}"
        )));
    }
    // Per channel, what its shallowest entry replaces (SQLite takes the
    // bare column from the row of min(depth), as opm's query relies on).
    let moves: Vec<(Option<String>, String)> = tx
        .prepare(
            "SELECT replaces.name, channel_entry.channel_name, min(depth) FROM channel_entry
             LEFT JOIN (SELECT entry_id, name FROM channel_entry INNER JOIN operatorbundle ON channel_entry.operatorbundle_name = operatorbundle.name) AS replaces
             ON channel_entry.replaces = replaces.entry_id
             WHERE channel_entry.package_name = ? AND channel_entry.operatorbundle_name = ?
             GROUP BY channel_name",
        )?
        .query_map(params![package, bundle], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (replaces, channel) in moves {
        match replaces.filter(|r| !r.is_empty()) {
            Some(replaces) => {
                tx.execute(
                    "UPDATE channel SET head_operatorbundle_name = ? WHERE package_name = ? AND name = ? AND head_operatorbundle_name = ?",
                    params![replaces, package, channel, bundle],
                )?;
            }
            None => {
                tx.execute(
                    "UPDATE channel SET head_operatorbundle_name = NULL WHERE name = ? AND package_name = ? AND name IN (SELECT default_channel FROM package WHERE name = ?)",
                    params![channel, package, package],
                )?;
            }
        }
    }
    // opm's rmBundle, then its deprecated row.
    for sql in [
        "DELETE FROM operatorbundle WHERE operatorbundle.name = ?",
        "DELETE FROM api_provider WHERE api_provider.operatorbundle_name = ?",
        "DELETE FROM api_requirer WHERE api_requirer.operatorbundle_name = ?",
        "DELETE FROM channel_entry WHERE channel_entry.operatorbundle_name = ?",
        "DELETE FROM deprecated WHERE deprecated.operatorbundle_name = ?",
    ] {
        tx.execute(sql, [bundle])?;
    }
    Ok(())
}

/// What opm's semver path (`loadManifestsSemver`, which does not remove the
/// overwritten head) ends in for the bundle `r` whose name is in the index:
/// `AddBundleToGraph` refuses a version a node of one of its channels has
/// ("Bundle version V already added to index"); otherwise the insert of a
/// second row of that name fails.
pub fn semver_refusal(tx: &Transaction<'_>, mode: Mode, r: &BundleRecord) -> Res<Fail> {
    let mut same_version = false;
    if let Some(v) = r.semver() {
        let mut st = tx.prepare_cached(
            "SELECT DISTINCT o.version FROM channel_entry e JOIN operatorbundle o ON o.name = e.operatorbundle_name
             WHERE e.package_name = ? AND e.channel_name = ?",
        )?;
        for channel in &r.channels {
            let versions: Vec<Option<String>> = st
                .query_map(params![r.package, channel], |row| row.get(0))?
                .collect::<Result<_, _>>()?;
            same_version |= versions
                .iter()
                .flatten()
                .filter_map(|s| semver::Version::parse(s).ok())
                .any(|n| n.cmp_precedence(&v).is_eq());
        }
    }
    let opm = if same_version {
        format!("Bundle version {} already added to index", r.version)
    } else {
        format!(
            "error loading bundle {} into db: UNIQUE constraint failed: operatorbundle.name",
            r.name
        )
    };
    Ok(refuse(format!(
        "cannot overwrite {} in --mode {}: opm replaces a channel head in replaces mode only, and in the semver modes keeps the old bundle and fails (\"{opm}\"); remove the package (`index rm`) and add its bundles again",
        r.name,
        mode.as_str()
    )))
}
