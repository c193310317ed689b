//! Removing, pruning, deprecating, listing and exporting (pkg/sqlite/remove.go,
//! deprecate.go, stranded.go, pkg/lib/indexer/).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::error::{Context, Fail, Res};

use super::error::{internal, Error, Result};
use rusqlite::{params, OptionalExtension, Transaction};

/// Deletes one bundle and everything that refers to it by name.
fn rm_bundle(tx: &Transaction<'_>, name: &str) -> Res<()> {
    // Without opm's api cleanup triggers (see `db::without_triggers`);
    // unused api rows go in `rm_dangling_apis`.
    super::db::without_triggers(tx, || {
        // Rows whose composite key has a NULL (no version or image) escape
        // the cascade in opm's schema; delete them by name as well.
        for table in [
            "properties",
            "dependencies",
            "api_provider",
            "api_requirer",
            "related_image",
        ] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE operatorbundle_name = ?"),
                [name],
            )?;
        }
        tx.execute("DELETE FROM operatorbundle WHERE name = ?", [name])?;
        Ok(())
    })
}

/// Drops `api` rows no bundle provides or requires any more.
fn rm_dangling_apis(tx: &Transaction<'_>) -> Res<()> {
    tx.execute(
        "DELETE FROM api WHERE NOT EXISTS (SELECT 1 FROM api_provider p WHERE p.group_name = api.group_name AND p.version = api.version AND p.kind = api.kind)
         AND NOT EXISTS (SELECT 1 FROM api_requirer r WHERE r.group_name = api.group_name AND r.version = api.version AND r.kind = api.kind)",
        [],
    )?;
    Ok(())
}

/// Names of all packages.
pub fn package_names(index: &super::Index) -> Result<Vec<String>> {
    names_of_packages(&index.conn)
}

fn names_of_packages(conn: &rusqlite::Connection) -> Result<Vec<String>> {
    internal(|| {
        let mut st = conn.prepare("SELECT name FROM package ORDER BY name")?;
        let v = st
            .query_map([], |r| r.get(0))?
            .collect::<Result<Vec<String>, _>>()?;
        Ok(v)
    })
}

/// Removes bundles by name with their entries.
fn rm_named(tx: &Transaction<'_>, names: &[String]) -> Res<()> {
    for n in names {
        rm_bundle(tx, n)?;
        tx.execute(
            "UPDATE channel_entry SET replaces = NULL WHERE replaces IN (SELECT entry_id FROM channel_entry WHERE operatorbundle_name = ?)",
            [n],
        )?;
        tx.execute(
            "DELETE FROM channel_entry WHERE operatorbundle_name = ?",
            [n],
        )?;
    }
    Ok(())
}

/// opm's `rmStrandedDeprecated`: removes bundles whose `olm.package`
/// property names a package that is gone, and `deprecated` rows of bundles
/// that are gone. Returns the removed bundles.
fn rm_stranded_deprecated(tx: &Transaction<'_>) -> Res<Vec<String>> {
    let orphans: Vec<String> = {
        let mut st = tx.prepare(
            "SELECT DISTINCT p.operatorbundle_name FROM properties p WHERE p.type = 'olm.package'
             AND json_valid(p.value) AND json_extract(p.value, '$.packageName') NOT IN (SELECT name FROM package)
             ORDER BY p.operatorbundle_name",
        )?;
        let v = st.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
        v
    };
    rm_named(tx, &orphans)?;
    tx.execute(
        "DELETE FROM deprecated WHERE operatorbundle_name NOT IN (SELECT name FROM operatorbundle)",
        [],
    )?;
    rm_dangling_apis(tx)?;
    Ok(orphans)
}

/// opm's `RemoveStrandedBundles`: removes bundles in no channel, except
/// deprecated ones (which keep their tombstone), then
/// [`rm_stranded_deprecated`]. Returns the removed names.
fn rm_stranded(tx: &Transaction<'_>) -> Res<Vec<String>> {
    let mut names: Vec<String> = {
        let mut st = tx.prepare(
            "SELECT name FROM operatorbundle WHERE name NOT IN (SELECT operatorbundle_name FROM channel_entry)
             AND name NOT IN (SELECT operatorbundle_name FROM deprecated) ORDER BY name",
        )?;
        let v = st.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
        v
    };
    rm_named(tx, &names)?;
    for o in rm_stranded_deprecated(tx)? {
        if !names.contains(&o) {
            names.push(o);
        }
    }
    Ok(names)
}

/// What `index rm` removed.
#[derive(Clone, Debug, Default)]
pub struct Removed {
    /// Packages removed.
    pub packages: Vec<String>,
    /// Bundles removed besides the packages' own: every bundle left in no
    /// channel, as opm's `index rm` prunes them afterwards.
    pub stranded: Vec<String>,
}

/// `index rm --packages`: removes packages with their bundles, then every
/// bundle left in no channel (opm's `DeleteFromRegistry`: the
/// deprecation-aware `RemovePackage`, then the stranded-bundle remover).
pub(crate) fn remove_packages(tx: &Transaction<'_>, packages: &[String]) -> Result<Removed> {
    internal(|| {
        let known: BTreeSet<String> = names_of_packages(tx)?.into_iter().collect();
        for p in packages {
            if !known.contains(p) {
                return Err(Error::NotInIndex(format!(
                    "package {p} is not in the index (opm: \"no package found for packagename {p}\"; packages: {})",
                    known.iter().cloned().collect::<Vec<_>>().join(", ")
                )).into());
            }
        }
        let mut removed = Removed::default();
        for p in packages {
            // The package's deprecated bundles go with it (their tombstones
            // would otherwise keep them forever).
            tx.execute(
                "DELETE FROM deprecated WHERE operatorbundle_name IN (SELECT operatorbundle_name FROM channel_entry WHERE package_name = ?)",
                [p],
            )?;
            let mut st = tx.prepare(
                "SELECT DISTINCT operatorbundle_name FROM channel_entry WHERE package_name = ?",
            )?;
            let names: Vec<String> = st.query_map([p], |r| r.get(0))?.collect::<Result<_, _>>()?;
            tx.execute("DELETE FROM channel_entry WHERE package_name = ?", [p])?;
            tx.execute("DELETE FROM channel WHERE package_name = ?", [p])?;
            tx.execute("DELETE FROM package WHERE name = ?", [p])?;
            super::schema::forget_package(tx, p)?;
            for n in names {
                // A bundle name can appear in another package only as a skipped
                // synthetic entry; keep bundles another package still uses.
                let used: bool = tx.query_row(
                    "SELECT EXISTS(SELECT 1 FROM channel_entry WHERE operatorbundle_name = ?)",
                    [&n],
                    |r| r.get(0),
                )?;
                if !used {
                    rm_bundle(tx, &n)?;
                }
            }
            removed.packages.push(p.clone());
        }
        removed.stranded = rm_stranded(tx)?;
        Ok(removed)
    })
}

/// `index prune --keep`: removes every package not kept.
pub(crate) fn prune(tx: &Transaction<'_>, keep: &[String]) -> Result<Removed> {
    internal(|| {
        let all = names_of_packages(tx)?;
        for k in keep {
            if !all.contains(k) {
                return Err(Error::NotInIndex(format!(
                    "package {k} to keep is not in the index; nothing was changed"
                ))
                .into());
            }
        }
        let drop: Vec<String> = all.into_iter().filter(|p| !keep.contains(p)).collect();
        Ok(remove_packages(tx, &drop)?)
    })
}

/// `index prune-stranded`: removes bundles that are in no channel (opm's
/// `RemoveStrandedBundles`; deprecated bundles stay).
pub(crate) fn prune_stranded(tx: &Transaction<'_>) -> Result<Vec<String>> {
    internal(|| rm_stranded(tx))
}

/// A bundle below a deprecated one, as opm's `getTailFromBundle` collects
/// it from the channel entries.
#[derive(Clone, Debug, Default)]
struct TailBundle {
    channels: BTreeSet<String>,
    replaces: Vec<String>,
    replaced_by: BTreeSet<String>,
}

/// The deprecated bundle and everything below it along the channel entries
/// (replaces and skips, across channels), with each one's channels.
fn tail_of(tx: &Transaction<'_>, name: &str) -> Res<BTreeMap<String, TailBundle>> {
    let default_head: Option<Option<String>> = tx
        .query_row(
            "SELECT channel.head_operatorbundle_name FROM channel
             JOIN package ON channel.name = package.default_channel AND channel.package_name = package.name
             JOIN channel_entry ON channel.package_name = channel_entry.package_name
             WHERE channel_entry.operatorbundle_name = ? LIMIT 1",
            [name],
            |r| r.get(0),
        )
        .optional()?;
    let Some(Some(default_head)) =
        default_head.filter(|h| h.as_deref().is_some_and(|h| !h.is_empty()))
    else {
        return Err(Error::Deprecate(format!("cannot deprecate {name}: it is in no channel of a package with a default channel (opm: \"could not find default channel head\")")).into());
    };
    let mut st = tx.prepare(
        "WITH RECURSIVE tail(bundle, replaces, replaced_by, channel_name, package_name) AS (
            SELECT e.operatorbundle_name, r.operatorbundle_name, b.operatorbundle_name, e.channel_name, e.package_name
              FROM channel_entry e
              LEFT JOIN channel_entry r ON r.entry_id = e.replaces
              LEFT JOIN channel_entry b ON b.replaces = e.entry_id
             WHERE e.operatorbundle_name = ?1
            UNION
            SELECT e.operatorbundle_name, r.operatorbundle_name, b.operatorbundle_name, e.channel_name, e.package_name
              FROM channel_entry e
              JOIN tail t ON t.replaces = e.operatorbundle_name
              LEFT JOIN channel_entry r ON r.entry_id = e.replaces
              LEFT JOIN channel_entry b ON b.replaces = e.entry_id
        )
        SELECT bundle, channel_name, replaces, replaced_by FROM tail",
    )?;
    let mut out: BTreeMap<String, TailBundle> = BTreeMap::new();
    for row in st.query_map([name], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, Option<String>>(3)?,
        ))
    })? {
        let (b, c, rep, by) = row?;
        let t = out.entry(b).or_default();
        t.channels.insert(c);
        if let Some(r) = rep {
            if !t.replaces.contains(&r) {
                t.replaces.push(r);
            }
        }
        if let Some(x) = by {
            t.replaced_by.insert(x);
        }
    }
    if out.contains_key(&default_head) {
        if default_head == name {
            return Err(Error::Deprecate(format!("cannot deprecate {name}: it is the head of its package's default channel, and deprecating it would remove that channel (opm: ErrRemovingDefaultChannelDuringDeprecation); to remove the whole package, pass --allow-package-removal with the heads of all its channels")).into());
        }
        return Err(Error::Deprecate(format!("cannot deprecate {name}: the head of its package's default channel, {default_head}, is below it and would be removed (opm: ErrRemovingDefaultChannelDuringDeprecation)")).into());
    }
    Ok(out)
}

/// Finds a bundle by image reference (as opm) or CSV name.
fn find_bundle(
    tx: &Transaction<'_>,
    reference: &str,
) -> Res<(String, Option<String>, Option<String>)> {
    let by = |sql: &str| {
        tx.query_row(sql, [reference], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()
    };
    let found = match by(
        "SELECT name, version, bundlepath FROM operatorbundle WHERE bundlepath = ? LIMIT 1",
    )? {
        Some(f) => Some(f),
        None => by("SELECT name, version, bundlepath FROM operatorbundle WHERE name = ? LIMIT 1")?,
    };
    found.ok_or_else(|| {
        Fail::from(Error::NotInIndex(format!("bundle {reference} is not in the index (give its image reference or CSV name; opm: \"target bundlepaths for deprecation missing from registry\")")))
    })
}

/// What `index deprecatetruncate` did.
#[derive(Clone, Debug, Default)]
pub struct Deprecated {
    /// Bundles marked deprecated.
    pub deprecated: Vec<String>,
    /// Bundles removed below them.
    pub removed: Vec<String>,
    /// Packages removed whole (`allow_package_removal`).
    pub packages: Vec<String>,
}

/// `index deprecatetruncate --bundles`: opm's `DeprecateFromRegistry`. With
/// `allow_package_removal`, a package whose default channel head is among
/// `references` is removed whole, provided the heads of all its channels
/// are; then each remaining bundle is deprecated ([`deprecate_truncate`]).
pub(crate) fn deprecate_bundles(
    tx: &Transaction<'_>,
    references: &[String],
    allow_package_removal: bool,
) -> Result<Deprecated> {
    internal(|| {
        let mut out = Deprecated::default();
        let mut found = Vec::new();
        for r in references {
            found.push((r.clone(), find_bundle(tx, r)?.0));
        }
        let mut remaining: Vec<(String, String)> = found.clone();
        if allow_package_removal {
            let names: BTreeSet<&str> = found.iter().map(|(_, n)| n.as_str()).collect();
            let mut packages = BTreeSet::new();
            for (_, n) in &found {
                let p: Option<String> = tx
                    .query_row(
                        "SELECT package.name FROM package JOIN channel ON channel.package_name = package.name AND channel.name = package.default_channel WHERE channel.head_operatorbundle_name = ?",
                        [n],
                        |r| r.get(0),
                    )
                    .optional()?;
                packages.extend(p);
            }
            let mut heads_removed = BTreeSet::new();
            for p in &packages {
                let mut st = tx.prepare(
                    "SELECT name, head_operatorbundle_name FROM channel WHERE package_name = ? ORDER BY name",
                )?;
                let heads: Vec<(String, String)> = st
                    .query_map([p], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<Result<_, _>>()?;
                for (c, h) in heads {
                    if !names.contains(h.as_str()) {
                        return Err(Error::Deprecate(format!("cannot deprecate the default channel head of package {p} without the heads of all its other channels: also deprecate {h}, head of channel {c}")).into());
                    }
                    heads_removed.insert(h);
                }
            }
            if !packages.is_empty() {
                let ps: Vec<String> = packages.into_iter().collect();
                let r = remove_packages(tx, &ps)?;
                out.removed.extend(r.stranded);
                out.packages = r.packages;
            }
            remaining.retain(|(_, n)| !heads_removed.contains(n));
        }
        for (reference, name) in remaining {
            // opm skips bundles that an earlier package removal took away.
            let exists: bool = tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM operatorbundle WHERE name = ?)",
                [&name],
                |r| r.get(0),
            )?;
            if !exists {
                continue;
            }
            out.removed.extend(deprecate_truncate(tx, &reference)?);
            out.deprecated.push(name);
        }
        Ok(out)
    })
}

/// Deprecates one bundle (opm's `DeprecateBundle`): every bundle below it
/// (what it replaces or skips, down the chain) loses its entries in the
/// deprecated bundle's channels, and is removed when it is in no other
/// channel and nothing outside the tail replaces it; the deprecated bundle
/// keeps its entries (a tombstone) without edges, channels it heads are
/// dropped, and it gets the `olm.deprecated` property and a `deprecated`
/// row, so later adds truncate channels there. Refused when the package's
/// default channel head would go. `reference` is a bundle image or a CSV
/// name. Returns the removed bundles.
pub(crate) fn deprecate_truncate(tx: &Transaction<'_>, reference: &str) -> Result<Vec<String>> {
    internal(|| {
        let (name, version, path) = find_bundle(tx, reference)?;
        let tail = tail_of(tx, &name)?;
        let head_channels: BTreeSet<String> = tail
            .get(&name)
            .map(|t| t.channels.clone())
            .unwrap_or_default();
        let mut queue: std::collections::VecDeque<String> = [name.clone()].into();
        let mut seen: BTreeSet<String> = [name.clone()].into();
        let mut removed = Vec::new();
        while let Some(bundle) = queue.pop_front() {
            let Some(t) = tail.get(&bundle) else { continue };
            for b in &t.replaces {
                if seen.insert(b.clone()) {
                    queue.push_back(b.clone());
                }
            }
            if bundle == name {
                continue;
            }
            // Drop its entries in the channels the deprecated bundle is in.
            tx.execute(
                "UPDATE channel_entry SET replaces = NULL WHERE replaces IN (
                    SELECT entry_id FROM channel_entry WHERE operatorbundle_name = ?1
                    AND channel_name IN (SELECT channel_name FROM channel_entry WHERE operatorbundle_name = ?2))",
                params![bundle, name],
            )?;
            tx.execute(
                "DELETE FROM channel_entry WHERE operatorbundle_name = ?1
                 AND channel_name IN (SELECT channel_name FROM channel_entry WHERE operatorbundle_name = ?2)",
                params![bundle, name],
            )?;
            // Keep a bundle that other channels, or bundles outside the tail,
            // still need.
            if !t.channels.is_subset(&head_channels)
                || t.replaced_by.iter().any(|b| !tail.contains_key(b))
            {
                continue;
            }
            tx.execute(
                "UPDATE channel_entry SET replaces = NULL WHERE replaces IN (SELECT entry_id FROM channel_entry WHERE operatorbundle_name = ?)",
                [&bundle],
            )?;
            tx.execute(
                "DELETE FROM channel_entry WHERE operatorbundle_name = ?",
                [&bundle],
            )?;
            let real: bool = tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM operatorbundle WHERE name = ?)",
                [&bundle],
                |r| r.get(0),
            )?;
            rm_bundle(tx, &bundle)?;
            if real {
                removed.push(bundle);
            }
        }
        // No edges out of the deprecated bundle, so adds do not regrow the tail.
        tx.execute(
            "UPDATE channel_entry SET replaces = NULL WHERE operatorbundle_name = ?",
            [&name],
        )?;
        // A channel it heads would still show in consoles: drop it (its
        // entries go with it).
        tx.execute(
            "DELETE FROM channel_entry WHERE (channel_name, package_name) IN (SELECT name, package_name FROM channel WHERE head_operatorbundle_name = ?)",
            [&name],
        )?;
        tx.execute(
            "DELETE FROM channel WHERE head_operatorbundle_name = ?",
            [&name],
        )?;
        let has: bool = tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM properties WHERE type = 'olm.deprecated' AND operatorbundle_name = ?)",
            [&name],
            |r| r.get(0),
        )?;
        if !has {
            tx.execute(
                "insert into properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) values('olm.deprecated', '{}', ?, ?, ?)",
                params![name, version.filter(|v| !v.is_empty()), path.filter(|p| !p.is_empty())],
            )?;
        }
        tx.execute(
            "INSERT OR REPLACE INTO deprecated(operatorbundle_name) VALUES (?)",
            [&name],
        )?;
        removed.extend(rm_stranded_deprecated(tx)?);
        Ok(removed)
    })
}

/// A row of `index list bundles`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BundleRow {
    /// Package.
    pub package: String,
    /// Channel.
    pub channel: String,
    /// CSV name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Bundle image.
    pub image: String,
    /// The bundle it replaces in this channel.
    pub replaces: String,
}

/// A row of `index list channels`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ChannelRow {
    /// Package.
    pub package: String,
    /// Channel.
    pub channel: String,
    /// Head bundle.
    pub head: String,
    /// Whether it is the default channel.
    pub default: bool,
}

/// A row of `index list packages`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PackageRow {
    /// Package.
    pub package: String,
    /// Default channel.
    pub default_channel: String,
    /// Number of channels.
    pub channels: usize,
    /// Number of bundles.
    pub bundles: usize,
    /// `add_mode`.
    pub add_mode: String,
}

/// Lists packages.
pub fn list_packages(index: &super::Index) -> Result<Vec<PackageRow>> {
    let conn = &index.conn;
    internal(|| {
        let mut st = conn.prepare(
            "SELECT p.name, p.default_channel, '',
               (SELECT count(*) FROM channel c WHERE c.package_name = p.name),
               (SELECT count(DISTINCT e.operatorbundle_name) FROM channel_entry e JOIN operatorbundle o ON o.name = e.operatorbundle_name WHERE e.package_name = p.name)
             FROM package p ORDER BY p.name",
        )?;
        let v = st
            .query_map([], |r| {
                Ok(PackageRow {
                    package: r.get(0)?,
                    default_channel: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                    add_mode: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                    channels: r.get::<_, i64>(3)? as usize,
                    bundles: r.get::<_, i64>(4)? as usize,
                })
            })?
            .collect::<Result<Vec<PackageRow>, _>>()?;
        let mut v = v;
        for p in &mut v {
            p.add_mode = super::schema::add_mode(conn, &p.package)?;
        }
        Ok(v)
    })
}

/// Lists channels.
pub fn list_channels(index: &super::Index) -> Result<Vec<ChannelRow>> {
    let conn = &index.conn;
    internal(|| {
        let mut st = conn.prepare(
            "SELECT c.package_name, c.name, c.head_operatorbundle_name, p.default_channel = c.name FROM channel c JOIN package p ON p.name = c.package_name ORDER BY c.package_name, c.name",
        )?;
        let v = st
            .query_map([], |r| {
                Ok(ChannelRow {
                    package: r.get(0)?,
                    channel: r.get(1)?,
                    head: r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                    default: r.get::<_, Option<bool>>(3)?.unwrap_or(false),
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(v)
    })
}

/// Lists bundles per channel (from the rendered catalog), then the bundles
/// in no channel (channel empty): the index holds them, and a listing that
/// hid them would hide why a bundle is not installable.
pub fn list_bundles(index: &super::Index) -> Result<Vec<BundleRow>> {
    internal(|| {
        let cfg = super::render::index_to_fbc(index)?;
        let by_name: BTreeMap<(&str, &str), &crate::fbc::Bundle> = cfg
            .bundles
            .iter()
            .map(|b| ((b.package.as_str(), b.name.as_str()), b))
            .collect();
        let mut out = Vec::new();
        for c in &cfg.channels {
            for e in &c.entries {
                let b = by_name.get(&(c.package.as_str(), e.name.as_str()));
                let version = b
                    .and_then(|b| b.properties.iter().find(|p| p.kind == "olm.package"))
                    .map_or("", |p| p.str_field("version"))
                    .to_string();
                out.push(BundleRow {
                    package: c.package.clone(),
                    channel: c.name.clone(),
                    name: e.name.clone(),
                    version,
                    image: b.map(|b| b.image.clone()).unwrap_or_default(),
                    replaces: e.replaces.clone(),
                });
            }
        }
        // Rendering (like opm's) leaves out bundles in no channel; the
        // operatorbundle table has them (no channel_entry row, so none listed
        // above), their package in an olm.package property.
        let mut st = index.conn.prepare(
            "SELECT b.name, coalesce(b.version, ''), coalesce(b.bundlepath, ''), \
             coalesce((SELECT p.value FROM properties p WHERE p.operatorbundle_name = b.name \
                       AND p.type = 'olm.package' LIMIT 1), '') \
             FROM operatorbundle b \
             WHERE b.name NOT IN (SELECT operatorbundle_name FROM channel_entry) ORDER BY b.name",
        )?;
        let unchannelled = st.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        for u in unchannelled {
            let (name, version, image, package_json) = u?;
            let package = serde_json::from_str::<serde_json::Value>(&package_json)
                .ok()
                .and_then(|v| {
                    crate::gojson::struct_field(&v, "packageName")
                        .and_then(|p| p.as_str())
                        .map(String::from)
                })
                .unwrap_or_default();
            out.push(BundleRow {
                package,
                channel: String::new(),
                name,
                version,
                image,
                replaces: String::new(),
            });
        }
        Ok(out)
    })
}

/// The files of a bundle as its image holds them: path inside the bundle
/// (`manifests/...`, `metadata/...`) and content.
pub type BundleFiles = Vec<(String, Vec<u8>)>;

/// A bundle that `index export` cannot write from the index: its `csv` and
/// `bundle` columns were cleared (opm keeps only channel heads' manifests
/// after semver-mode adds).
#[derive(Clone, Debug)]
pub struct MissingContent {
    /// CSV name.
    pub name: String,
    /// Bundle image, empty if the index records none.
    pub image: String,
}

/// The bundles of `package` whose manifests are not in the index.
pub fn export_missing(index: &super::Index, package: &str) -> Result<Vec<MissingContent>> {
    internal(|| {
        let only: BTreeSet<String> = [package.to_string()].into();
        let cfg = super::render::index_to_fbc_filtered(index, Some(&only))?;
        if cfg.packages.is_empty() {
            return Err(Error::NotInIndex(format!("package {package} is not in the index")).into());
        }
        Ok(cfg
            .bundles
            .iter()
            .filter(|b| b.objects.is_empty())
            .map(|b| MissingContent {
                name: b.name.clone(),
                image: b.image.clone(),
            })
            .collect())
    })
}

/// `index export`: writes a package in the package-manifest layout opm's
/// `index export` writes (`DIR/<package>/package.yaml` and one
/// `DIR/<package>/<version>/` bundle directory per bundle with `manifests/`
/// and `metadata/`). opm pulls every bundle image; here bundles whose
/// manifests are in the index are written from it, and the others from
/// `pulled` (bundle image to its files, see [`export_missing`]).
pub fn export_package(
    index: &super::Index,
    package: &str,
    to: &Path,
    pulled: &BTreeMap<String, BundleFiles>,
) -> Result<Vec<String>> {
    internal(|| {
        let only: BTreeSet<String> = [package.to_string()].into();
        let cfg = super::render::index_to_fbc_filtered(index, Some(&only))?;
        let Some(pkg) = cfg.packages.first() else {
            return Err(Error::NotInIndex(format!("package {package} is not in the index")).into());
        };
        for b in &cfg.bundles {
            if b.objects.is_empty() && !pulled.contains_key(&b.image) {
                return Err(Error::Export(format!(
                    "bundle {} has no manifests in the index (its csv and bundle columns were cleared, as opm clears all but channel heads after semver-mode adds){}; rebuild the index with --keep-content",
                    b.name,
                    if b.image.is_empty() {
                        " and no image to pull them from".to_string()
                    } else {
                        format!(" and its image {} was not pulled", b.image)
                    }
                )).into());
            }
        }
        let root = to.join(package);
        std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
        let mut channels = Vec::new();
        for c in &cfg.channels {
            let head: Option<String> = index
                .conn
                .query_row(
                    "SELECT head_operatorbundle_name FROM channel WHERE package_name = ? AND name = ?",
                    params![package, c.name],
                    |r| r.get(0),
                )
                .optional()?
                .flatten();
            channels
                .push(serde_json::json!({"name": c.name, "currentCSV": head.unwrap_or_default()}));
        }
        let manifest = serde_json::json!({
            "packageName": package,
            "channels": channels,
            "defaultChannel": pkg.default_channel,
        });
        std::fs::write(root.join("package.yaml"), yaml_serde::to_string(&manifest)?)?;
        let mut written = Vec::new();
        for b in &cfg.bundles {
            let version = b
                .properties
                .iter()
                .find(|p| p.kind == "olm.package")
                .map(|p| p.str_field("version"))
                .unwrap_or(&b.name)
                .to_string();
            let dir = root.join(&version);
            if b.objects.is_empty() {
                // As opm's exporter: the image's manifests/ and metadata/ as they are.
                for (rel, data) in pulled.get(&b.image).map(Vec::as_slice).unwrap_or_default() {
                    let safe = rel
                        .split('/')
                        .all(|c| !c.is_empty() && c != "." && c != "..");
                    if !safe {
                        return Err(Error::Export(format!(
                            "bundle image {}: refusing to write {rel:?}",
                            b.image
                        ))
                        .into());
                    }
                    let path = dir.join(rel);
                    if let Some(parent) = path.parent() {
                        std::fs::create_dir_all(parent)?;
                    }
                    std::fs::write(&path, data)
                        .with_context(|| format!("writing {}", path.display()))?;
                }
                written.push(b.name.clone());
                continue;
            }
            let mdir = dir.join("manifests");
            std::fs::create_dir_all(&mdir)?;
            std::fs::create_dir_all(dir.join("metadata"))?;
            for (i, o) in b.objects.iter().enumerate() {
                let v: serde_json::Value = serde_json::from_str(o)?;
                let kind = v
                    .get("kind")
                    .and_then(|k| k.as_str())
                    .unwrap_or("object")
                    .to_lowercase();
                let name = v
                    .pointer("/metadata/name")
                    .and_then(|k| k.as_str())
                    .unwrap_or("unnamed");
                let safe: String = name
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                std::fs::write(
                    mdir.join(format!("{i:02}-{safe}.{kind}.yaml")),
                    yaml_serde::to_string(&v)?,
                )?;
            }
            let chans: Vec<&str> = cfg
                .channels
                .iter()
                .filter(|c| c.entries.iter().any(|e| e.name == b.name))
                .map(|c| c.name.as_str())
                .collect();
            let ann = serde_json::json!({"annotations": {
                crate::bundle::keys::MEDIATYPE: "registry+v1",
                crate::bundle::keys::MANIFESTS: "manifests/",
                crate::bundle::keys::METADATA: "metadata/",
                crate::bundle::keys::PACKAGE: package,
                crate::bundle::keys::CHANNELS: chans.join(","),
                crate::bundle::keys::DEFAULT_CHANNEL: pkg.default_channel,
            }});
            std::fs::write(
                dir.join("metadata/annotations.yaml"),
                yaml_serde::to_string(&ann)?,
            )?;
            let csv: Option<serde_json::Value> = b
                .csv_json
                .as_deref()
                .and_then(|c| serde_json::from_str(c).ok());
            let (properties, dependencies) =
                metadata_lists(&index.conn, &b.name, package, csv.as_ref())?;
            for (file, key, list) in [
                ("properties.yaml", "properties", properties),
                ("dependencies.yaml", "dependencies", dependencies),
            ] {
                if list.is_empty() {
                    continue;
                }
                let doc = serde_json::json!({ key: list });
                std::fs::write(
                    dir.join("metadata").join(file),
                    yaml_serde::to_string(&doc)?,
                )?;
            }
            written.push(b.name.clone());
        }
        Ok(written)
    })
}

/// A `{type, value}` list item of `metadata/properties.yaml` or
/// `metadata/dependencies.yaml`.
fn typed_value(kind: &str, value: &str) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.into()));
    serde_json::json!({"type": kind, "value": v})
}

/// The `properties` and `dependencies` lists of a bundle's `metadata/`
/// files, recovered from its rows: every row except those `index add`
/// derives again from the exported manifests (the bundle's `olm.package`,
/// the CSV's `olm.properties` annotation, one `olm.gvk`
/// per provided or required API) and `olm.deprecated`, which records a
/// `deprecatetruncate` of this index rather than bundle content. Adding the
/// export to a new index gives the same rows.
fn metadata_lists(
    conn: &rusqlite::Connection,
    bundle: &str,
    package: &str,
    csv: Option<&serde_json::Value>,
) -> Res<(Vec<serde_json::Value>, Vec<serde_json::Value>)> {
    use serde_json::{json, Value};
    let gvks = |table: &str| -> Res<Vec<Value>> {
        let mut st = conn.prepare(&format!(
            "SELECT group_name, version, kind FROM {table} WHERE operatorbundle_name = ? ORDER BY rowid"
        ))?;
        let v = st
            .query_map([bundle], |r| {
                Ok(json!({
                    "group": r.get::<_, String>(0)?,
                    "version": r.get::<_, String>(1)?,
                    "kind": r.get::<_, String>(2)?,
                }))
            })?
            .collect::<Result<_, _>>()?;
        Ok(v)
    };
    let rows = |table: &str| -> Res<Vec<(String, String)>> {
        let mut st = conn.prepare(&format!(
            "SELECT type, value FROM {table} WHERE operatorbundle_name = ? ORDER BY rowid"
        ))?;
        let v = st
            // opm writes olm.gvk dependency values as BLOBs.
            .query_map([bundle], |r| {
                Ok((
                    super::column::text_or_empty(r, 0)?,
                    super::column::text_or_empty(r, 1)?,
                ))
            })?
            .collect::<Result<_, _>>()?;
        Ok(v)
    };
    let version = csv
        .and_then(|c| c.pointer("/spec/version"))
        .and_then(Value::as_str)
        .unwrap_or("");
    // Properties are a set: leave out what the add derives anyway.
    let mut derived: Vec<(String, Value)> = vec![(
        "olm.package".into(),
        json!({"packageName": package, "version": version}),
    )];
    if let Some(Value::Array(props)) = csv
        .and_then(|c| c.pointer("/metadata/annotations/operatorframework.io~1properties"))
        .and_then(Value::as_str)
        .and_then(|a| serde_json::from_str::<Value>(a).ok())
    {
        for p in props {
            if let Some(t) = p.get("type").and_then(Value::as_str) {
                derived.push((t.into(), p.get("value").cloned().unwrap_or(Value::Null)));
            }
        }
    }
    derived.extend(
        gvks("api_provider")?
            .into_iter()
            .map(|g| ("olm.gvk".into(), g)),
    );
    let mut properties = Vec::new();
    for (t, v) in rows("properties")? {
        let parsed: Value = serde_json::from_str(&v).unwrap_or(Value::String(v.clone()));
        if t == "olm.deprecated" || derived.iter().any(|(dt, dv)| *dt == t && *dv == parsed) {
            continue;
        }
        properties.push(typed_value(&t, &v));
    }
    // Dependencies are a list: the add appends one olm.gvk per required
    // API to the file's, so take one such row off per required API.
    let mut dependencies: Vec<(String, String)> = rows("dependencies")?;
    for g in gvks("api_requirer")? {
        if let Some(i) = dependencies.iter().rposition(|(t, v)| {
            t == "olm.gvk" && serde_json::from_str::<Value>(v).ok().as_ref() == Some(&g)
        }) {
            dependencies.remove(i);
        }
    }
    let dependencies = dependencies
        .iter()
        .map(|(t, v)| typed_value(t, v))
        .collect();
    Ok((properties, dependencies))
}

/// The writes of this module, each in one transaction of the index,
/// committed only if it succeeds (what `index rm`, `index prune`,
/// `index prune-stranded`, `index deprecatetruncate` and `index add
/// --from-fbc` run; `crate::ops::index` opens the database and calls these).
impl super::Index {
    /// Removes packages with their bundles, then every bundle left in no
    /// channel, as `opm index rm` does. A package not in the index is
    /// [`Error::NotInIndex`].
    pub fn remove_packages(&mut self, packages: &[String]) -> Result<Removed> {
        self.write(|tx| remove_packages(tx, packages))
    }

    /// Keeps only the packages `keep`, as `opm index prune` does.
    pub fn prune(&mut self, keep: &[String]) -> Result<Removed> {
        self.write(|tx| prune(tx, keep))
    }

    /// Removes bundles in no channel; their names.
    pub fn prune_stranded(&mut self) -> Result<Vec<String>> {
        self.write(prune_stranded)
    }

    /// Deprecates bundles (image references or CSV names) and removes
    /// everything below them in their upgrade chains, as
    /// `opm index deprecatetruncate` does; see [`Deprecated`]. A bundle not
    /// in the index is [`Error::NotInIndex`], a deprecation opm refuses
    /// [`Error::Deprecate`].
    pub fn deprecate_bundles(
        &mut self,
        references: &[String],
        allow_package_removal: bool,
    ) -> Result<Deprecated> {
        self.write(|tx| deprecate_bundles(tx, references, allow_package_removal))
    }

    /// Adds bundles in `opts.mode`, as one `opm index add` does, in one
    /// transaction. Each record comes with its source (bundle directory or
    /// image), which names it in [`super::LeftOut`] when `opts.keep_going`
    /// leaves it out. Bundles that do not fit the index (a `replaces` it
    /// lacks, an edge into another package, a cycle, an add that would
    /// strand bundles without `permissive`) are [`Error::Conflict`].
    /// `crate::ops::index::add` reads bundle directories and images, and
    /// picks each package's mode, on top of this.
    pub fn add_bundles(
        &mut self,
        records: Vec<(String, super::record::BundleRecord)>,
        opts: &super::AddOptions,
    ) -> Result<super::AddReport> {
        self.write(|tx| {
            super::add::with_lookup_indexes(tx, |tx| {
                let report = if opts.keep_going {
                    super::add::add_records_keep_going(tx, records, Vec::new(), opts)?
                } else {
                    let records = records.into_iter().map(|(_, r)| r).collect();
                    super::add::add_records(tx, records, opts)?
                };
                Ok::<_, super::Error>(report)
            })
        })
    }

    /// Adds the packages of a file-based catalog (`index add --from-fbc`;
    /// the packages must be new). What SQLite cannot hold is in the
    /// report's warnings; bundles that cannot go in are [`Error::Conflict`].
    pub fn import_fbc(
        &mut self,
        cfg: &crate::fbc::DeclarativeConfig,
    ) -> Result<super::ImportReport> {
        self.write(|tx| super::fbc_import::import(tx, cfg))
    }
}
