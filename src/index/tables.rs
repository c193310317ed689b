//! The one reader of opm's index tables, used by `render` (and what builds
//! on it: `migrate`, `index export`) and by `serve`'s SQLite backend, so the
//! two read the same rows the same way and cannot drift.
//!
//! Every text column is read with [`text`], whatever its storage class: opm
//! (Go `database/sql`) writes `operatorbundle.csv`/`.bundle` and the values
//! of `olm.gvk` dependencies as BLOBs, this tool as TEXT.
//!
//! The readers are split by cost. [`read_graph`] reads what is small and
//! needed at once (packages, channels, entries, the bundles' keys from opm's
//! `pk` index, properties, dependencies, APIs, related images); the
//! `operatorbundle` columns stored after `csv` and `bundle`
//! ([`read_bundle_details`]) need a walk over every row's manifests, and
//! the manifests themselves ([`read_content`]) are read per bundle.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{Connection, OptionalExtension};

use super::column::{text, text_or_empty};

/// A `package` row.
#[derive(Clone, Debug)]
pub struct PackageRow {
    /// `name`.
    pub name: String,
    /// `default_channel` (NULL reads as "").
    pub default_channel: String,
}

/// A `channel` row.
#[derive(Clone, Debug)]
pub struct ChannelRow {
    /// `package_name`.
    pub package: String,
    /// `name`.
    pub name: String,
    /// `head_operatorbundle_name` (NULL reads as "").
    pub head: String,
}

/// A `channel_entry` row.
#[derive(Clone, Debug)]
pub struct EntryRow {
    /// `entry_id`.
    pub id: i64,
    /// `channel_name`.
    pub channel: String,
    /// `package_name`.
    pub package: String,
    /// `operatorbundle_name`.
    pub bundle: String,
    /// `replaces` (an entry id).
    pub replaces: Option<i64>,
    /// `depth`; NULL is `None`.
    pub depth: Option<i64>,
}

/// The `operatorbundle` columns opm's `pk` index holds.
#[derive(Clone, Debug)]
pub struct BundleKey {
    /// `name`.
    pub name: String,
    /// `version`.
    pub version: Option<String>,
    /// `bundlepath`.
    pub bundle_path: Option<String>,
}

/// A `properties` or `dependencies` row.
#[derive(Clone, Debug)]
pub struct PropRow {
    /// `type`.
    pub kind: String,
    /// `value`.
    pub value: String,
    /// `operatorbundle_name`.
    pub bundle: String,
    /// `operatorbundle_version` (what `serve` answers; render reads the
    /// bundle's own properties).
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub version: Option<String>,
    /// `operatorbundle_path`, as `version`.
    #[cfg_attr(not(feature = "serve"), allow(dead_code))]
    pub path: Option<String>,
}

/// An `api_provider` or `api_requirer` row: (bundle, group, version, kind).
pub type ApiRow = (String, String, String, String);

/// The index's tables except the `operatorbundle` columns stored after the
/// manifests (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Graph {
    /// `package`, by name.
    pub packages: Vec<PackageRow>,
    /// `channel`.
    pub channels: Vec<ChannelRow>,
    /// `channel_entry`, by id.
    pub entries: Vec<EntryRow>,
    /// `operatorbundle` keys.
    pub bundles: Vec<BundleKey>,
    /// `properties`, in table order.
    pub properties: Vec<PropRow>,
    /// `dependencies`, in table order.
    pub dependencies: Vec<PropRow>,
    /// `api_provider`.
    pub provided: Vec<ApiRow>,
    /// `api_requirer`.
    pub required: Vec<ApiRow>,
    /// `related_image`: (bundle, image).
    pub related_images: Vec<(String, String)>,
}

fn collect<T>(
    conn: &Connection,
    sql: &str,
    f: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<Option<T>>,
) -> rusqlite::Result<Vec<T>> {
    gather(|sink| each(conn, sql, f, sink))
}

/// What a row-by-row reader (`each_*`) hands over, gathered: the `read_*`
/// form of each reader.
fn gather<T, C: Default + Extend<T>>(
    each: impl FnOnce(&mut dyn FnMut(T) -> rusqlite::Result<()>) -> rusqlite::Result<()>,
) -> rusqlite::Result<C> {
    let mut out = C::default();
    each(&mut |x| {
        out.extend(std::iter::once(x));
        Ok(())
    })?;
    Ok(out)
}

/// Hands every row `f` makes something of to `sink`, one at a time (what
/// `serve` copies without holding a whole table).
fn each<T>(
    conn: &Connection,
    sql: &str,
    mut f: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<Option<T>>,
    mut sink: impl FnMut(T) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let mut st = conn.prepare(sql)?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        if let Some(x) = f(r)? {
            sink(x)?;
        }
    }
    Ok(())
}

/// `package` rows by name.
pub fn read_packages(conn: &Connection) -> rusqlite::Result<Vec<PackageRow>> {
    gather(|sink| each_package(conn, sink))
}

/// [`read_packages`], row by row.
pub fn each_package(
    conn: &Connection,
    sink: impl FnMut(PackageRow) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    each(
        conn,
        "SELECT name, default_channel FROM package ORDER BY name",
        |r| {
            Ok(text(r, 0)?.map(|name| PackageRow {
                name,
                default_channel: text(r, 1).ok().flatten().unwrap_or_default(),
            }))
        },
        sink,
    )
}

/// `channel` rows.
pub fn read_channels(conn: &Connection) -> rusqlite::Result<Vec<ChannelRow>> {
    gather(|sink| each_channel(conn, sink))
}

/// [`read_channels`], row by row.
pub fn each_channel(
    conn: &Connection,
    sink: impl FnMut(ChannelRow) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    each(
        conn,
        "SELECT package_name, name, head_operatorbundle_name FROM channel",
        |r| {
            Ok(Some(ChannelRow {
                package: text_or_empty(r, 0)?,
                name: text_or_empty(r, 1)?,
                head: text_or_empty(r, 2)?,
            }))
        },
        sink,
    )
}

/// `channel_entry` rows by id.
pub fn read_entries(conn: &Connection) -> rusqlite::Result<Vec<EntryRow>> {
    gather(|sink| each_entry(conn, sink))
}

/// [`read_entries`], row by row.
pub fn each_entry(
    conn: &Connection,
    sink: impl FnMut(EntryRow) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    each(
        conn,
        "SELECT entry_id, channel_name, package_name, operatorbundle_name, replaces, depth \
         FROM channel_entry ORDER BY entry_id",
        |r| {
            Ok(Some(EntryRow {
                id: r.get(0)?,
                channel: text_or_empty(r, 1)?,
                package: text_or_empty(r, 2)?,
                bundle: text_or_empty(r, 3)?,
                replaces: r.get(4)?,
                depth: r.get(5)?,
            }))
        },
        sink,
    )
}

/// `operatorbundle` keys, answered from opm's `pk` index (name, version,
/// bundlepath) without touching the rows.
pub fn read_bundle_keys(conn: &Connection) -> rusqlite::Result<Vec<BundleKey>> {
    gather(|sink| each_bundle_key(conn, sink))
}

/// [`read_bundle_keys`], row by row.
pub fn each_bundle_key(
    conn: &Connection,
    sink: impl FnMut(BundleKey) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    each(
        conn,
        "SELECT name, version, bundlepath FROM operatorbundle",
        |r| {
            Ok(text(r, 0)?.map(|name| BundleKey {
                name,
                version: text(r, 1).ok().flatten(),
                bundle_path: text(r, 2).ok().flatten(),
            }))
        },
        sink,
    )
}

/// `properties` or `dependencies` rows in table order; rows without type,
/// value or bundle name are skipped (opm's scans stop at them).
pub fn read_props(conn: &Connection, table: PropTable) -> rusqlite::Result<Vec<PropRow>> {
    gather(|sink| each_prop(conn, table, sink))
}

/// [`read_props`], row by row.
pub fn each_prop(
    conn: &Connection,
    table: PropTable,
    sink: impl FnMut(PropRow) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    let sql = format!(
        "SELECT type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path FROM {} ORDER BY rowid",
        table.name()
    );
    each(
        conn,
        &sql,
        |r| {
            let (Some(kind), Some(value), Some(bundle)) = (text(r, 0)?, text(r, 1)?, text(r, 2)?)
            else {
                return Ok(None);
            };
            Ok(Some(PropRow {
                kind,
                value,
                bundle,
                version: text(r, 3)?,
                path: text(r, 4)?,
            }))
        },
        sink,
    )
}

/// The two tables of (type, value) rows.
#[derive(Clone, Copy, Debug)]
pub enum PropTable {
    /// `properties`.
    Properties,
    /// `dependencies`.
    Dependencies,
}

impl PropTable {
    fn name(self) -> &'static str {
        match self {
            PropTable::Properties => "properties",
            PropTable::Dependencies => "dependencies",
        }
    }
}

/// `api`: (group, version, kind) -> plural.
#[cfg(feature = "serve")]
pub fn read_plurals(
    conn: &Connection,
) -> rusqlite::Result<BTreeMap<(String, String, String), String>> {
    Ok(collect(
        conn,
        "SELECT group_name, version, kind, plural FROM api",
        |r| {
            Ok(match (text(r, 0)?, text(r, 1)?, text(r, 2)?, text(r, 3)?) {
                (Some(g), Some(v), Some(k), Some(p)) => Some(((g, v, k), p)),
                _ => None,
            })
        },
    )?
    .into_iter()
    .collect())
}

/// `api_provider` (`required` false) or `api_requirer` rows.
pub fn read_api_rows(conn: &Connection, required: bool) -> rusqlite::Result<Vec<ApiRow>> {
    let table = if required {
        "api_requirer"
    } else {
        "api_provider"
    };
    collect(
        conn,
        &format!("SELECT operatorbundle_name, group_name, version, kind FROM {table}"),
        |r| {
            Ok(Some((
                text_or_empty(r, 0)?,
                text_or_empty(r, 1)?,
                text_or_empty(r, 2)?,
                text_or_empty(r, 3)?,
            )))
        },
    )
}

/// `related_image`: (bundle, image), rows with NULLs skipped.
pub fn read_related_images(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    collect(
        conn,
        "SELECT operatorbundle_name, image FROM related_image",
        |r| Ok(text(r, 0)?.zip(text(r, 1)?)),
    )
}

/// Everything [`Graph`] holds.
pub fn read_graph(conn: &Connection) -> rusqlite::Result<Graph> {
    Ok(Graph {
        packages: read_packages(conn)?,
        channels: read_channels(conn)?,
        entries: read_entries(conn)?,
        bundles: read_bundle_keys(conn)?,
        properties: read_props(conn, PropTable::Properties)?,
        dependencies: read_props(conn, PropTable::Dependencies)?,
        provided: read_api_rows(conn, false)?,
        required: read_api_rows(conn, true)?,
        related_images: read_related_images(conn)?,
    })
}

/// The `operatorbundle` columns stored after the manifests.
#[derive(Clone, Debug, Default)]
pub struct BundleDetails {
    /// `skiprange` (NULL reads as "").
    pub skip_range: String,
    /// `bundle` is not NULL.
    pub has_bundle: bool,
    /// `csv` is not NULL.
    pub has_csv: bool,
}

/// [`BundleDetails`] of every bundle, by name.
pub fn read_bundle_details(conn: &Connection) -> rusqlite::Result<BTreeMap<String, BundleDetails>> {
    gather(|sink| each_bundle_details(conn, sink))
}

/// [`read_bundle_details`], row by row in table order (a name seen twice:
/// the later row is the one the map keeps).
pub fn each_bundle_details(
    conn: &Connection,
    sink: impl FnMut((String, BundleDetails)) -> rusqlite::Result<()>,
) -> rusqlite::Result<()> {
    each(
        conn,
        "SELECT name, skiprange, bundle IS NOT NULL, csv IS NOT NULL FROM operatorbundle",
        |r| {
            Ok(text(r, 0)?.map(|name| {
                (
                    name,
                    BundleDetails {
                        skip_range: text(r, 1).ok().flatten().unwrap_or_default(),
                        has_bundle: r.get(2).unwrap_or(false),
                        has_csv: r.get(3).unwrap_or(false),
                    },
                )
            }))
        },
        sink,
    )
}

/// One bundle's manifests: (`csv`, `bundle`), each `None` when NULL;
/// `None` when no such bundle.
pub fn read_content(
    conn: &Connection,
    name: &str,
) -> rusqlite::Result<Option<(Option<String>, Option<String>)>> {
    conn.prepare_cached("SELECT csv, bundle FROM operatorbundle WHERE name = ? LIMIT 1")?
        .query_row([name], |r| Ok((text(r, 0)?, text(r, 1)?)))
        .optional()
}

/// One bundle's `skiprange` and `bundle` (what a GetBundle answer reads
/// from the row); `None` when no such bundle.
#[cfg(feature = "serve")]
pub fn read_range_and_bundle(
    conn: &Connection,
    name: &str,
) -> rusqlite::Result<Option<(String, Option<String>)>> {
    conn.prepare_cached("SELECT skiprange, bundle FROM operatorbundle WHERE name = ? LIMIT 1")?
        .query_row([name], |r| Ok((text_or_empty(r, 0)?, text(r, 1)?)))
        .optional()
}

/// A bundle's edges in one channel, read from the channel entries as opm's
/// `ListBundles` query does (`listBundlesQuery`): the chain runs from the
/// entries at the lowest depth of the whole table through their
/// `replaces`; a bundle replaces the greatest name its chain entries
/// replace, and skips what its other entries replace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryEdges {
    /// What its chain entries replace (the greatest name); `None` when none.
    pub replaces: Option<String>,
    /// What its other entries replace, in entry order; empty when none
    /// (opm's `skips` column of the query is then NULL: no skips at all).
    pub skips: Vec<String>,
}

/// (package, channel, bundle) -> edges, for every entry of the table.
pub fn entry_edges(entries: &[EntryRow]) -> BTreeMap<(String, String, String), EntryEdges> {
    let by_id: BTreeMap<i64, &EntryRow> = entries.iter().map(|e| (e.id, e)).collect();
    let tip = entries.iter().filter_map(|e| e.depth).min();
    let mut chain: BTreeSet<i64> = entries
        .iter()
        .filter(|e| tip.is_some() && e.depth == tip)
        .map(|e| e.id)
        .collect();
    let mut stack: Vec<i64> = chain.iter().copied().collect();
    while let Some(id) = stack.pop() {
        if let Some(r) = by_id.get(&id).and_then(|e| e.replaces) {
            if chain.insert(r) {
                stack.push(r);
            }
        }
    }
    let mut out: BTreeMap<(String, String, String), EntryEdges> = BTreeMap::new();
    for e in entries {
        let edges = out
            .entry((e.package.clone(), e.channel.clone(), e.bundle.clone()))
            .or_default();
        let Some(rep) = e.replaces.and_then(|r| by_id.get(&r)).map(|r| &r.bundle) else {
            continue;
        };
        if chain.contains(&e.id) {
            // SQL max() over the names.
            if edges.replaces.as_ref().is_none_or(|r| rep > r) {
                edges.replaces = Some(rep.clone());
            }
        } else if !edges.skips.contains(rep) {
            edges.skips.push(rep.clone());
        }
    }
    out
}
