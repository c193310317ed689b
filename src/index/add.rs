//! `index add`: opm's loading rules (pkg/sqlite/load.go, pkg/registry/populator.go).

use std::collections::{BTreeMap, BTreeSet};

use super::error::{bail, fail, Context, Fail, Res};
use rusqlite::{params, OptionalExtension, Transaction};

use super::overwrite::{overwrite_plan, remove_overwritten_channel_head, semver_refusal};
use super::record::BundleRecord;
use super::sanity::check_image_not_in_index;
use crate::fbc::ChannelEntry;
use crate::graph::modes::{self, Mode};

/// Options of an add.
#[derive(Clone, Debug)]
pub struct AddOptions {
    /// The add mode.
    pub mode: Mode,
    /// Keep the `csv` and `bundle` columns of bundles that are not a channel
    /// head (opm clears them after a semver-mode add).
    pub keep_content: bool,
    /// Keep an add that leaves bundles outside every channel (opm's
    /// `--permissive`: it reports "add prunes bundle" and keeps the rows);
    /// without it such an add is refused and nothing changes.
    pub permissive: bool,
    /// Allow `olm.substitutesFor` (opm's `--enable-alpha`).
    pub enable_alpha: bool,
    /// Leave out what cannot be added (and what depends on it) and add the
    /// rest, instead of refusing the whole add (`add_records_keep_going`).
    pub keep_going: bool,
    /// opm's `--overwrite-latest`: a bundle whose CSV name is in the index
    /// (added from an image) replaces it, when it heads every channel it is
    /// in; one per package (`overwrite_plan`).
    pub overwrite_latest: bool,
}

impl Default for AddOptions {
    fn default() -> Self {
        AddOptions {
            mode: Mode::Replaces,
            keep_content: false,
            permissive: false,
            enable_alpha: false,
            keep_going: false,
            overwrite_latest: false,
        }
    }
}

/// What an add did.
#[derive(Clone, Debug, Default)]
pub struct AddReport {
    /// Bundles added, in the order they were applied.
    pub added: Vec<String>,
    /// Packages touched.
    pub packages: BTreeSet<String>,
    /// With `permissive`: what opm's "add prunes bundle" check found (the
    /// bundles are kept, in no channel; `index prune-stranded` removes them).
    pub stranded: Vec<String>,
    /// With `keep_going`: what was left out, and why.
    pub left_out: Vec<LeftOut>,
}

/// A bundle or package that an add with `keep_going` left out.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LeftOut {
    /// The bundle directory or image (for a package: its bundles' files,
    /// comma-separated).
    pub file: String,
    /// The bundle (CSV name) when known; empty for a whole package or a
    /// bundle that could not be read.
    pub bundle: String,
    /// The package when known.
    pub package: String,
    /// Why it was left out.
    pub reason: String,
    /// Bundles of this add left out because they need this one (their
    /// `replaces` chain goes through it), or, for a package, its bundles.
    pub dependents: Vec<String>,
}

/// `NULL` for an empty string, as opm's `sqlString` does.
fn nullable(s: &str) -> Option<&str> {
    if s.is_empty() {
        None
    } else {
        Some(s)
    }
}

/// Inserts the rows of one bundle (opm's `addOperatorBundle`, `addAPIs`,
/// `addDependencies`, `addBundleProperties`).
pub fn insert_bundle(tx: &Transaction<'_>, b: &BundleRecord) -> Res<()> {
    use super::error::{Error, Fail};
    // The image first: opm's sanity check reports it before the version,
    // and its exit code (2) is the one a re-added image gets.
    check_image_not_in_index(tx, b)?;
    let exists: Option<String> = tx
        .query_row(
            "SELECT name FROM operatorbundle WHERE name = ?",
            [&b.name],
            |r| r.get(0),
        )
        .optional()?;
    if exists.is_some() {
        let pkg: Option<String> = tx
            .query_row(
                "SELECT package_name FROM channel_entry WHERE operatorbundle_name = ? LIMIT 1",
                [&b.name],
                |r| r.get(0),
            )
            .optional()?;
        return Err(Fail::Typed(Error::PackageVersionAlreadyAdded(format!(
            "bundle {} is already in the index{}; remove it first (`index rm`) or bump its version (opm refuses this too: \"Bundle already added that provides package and csv\")",
            b.name,
            pkg.map(|p| format!(" (package {p})")).unwrap_or_default()
        ))));
    }
    tx.prepare_cached(
        "insert into operatorbundle(name, csv, bundle, bundlepath, version, skiprange, replaces, skips, substitutesfor) values(?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )?
    .execute(params![
        b.name,
        // A bundle without manifests (an FBC bundle whose content was
        // cleared before it was rendered) stays cleared: NULL, as opm's
        // ClearNonHeadBundles leaves it.
        nullable(&b.csv_json),
        nullable(&b.bundle_json),
        b.bundle_path,
        b.version,
        b.skip_range,
        b.replaces,
        b.skips.join(","),
        b.substitutes_for
    ])?;
    {
        let mut img =
            tx.prepare_cached("insert into related_image(image, operatorbundle_name) values(?,?)")?;
        // opm's `Bundle.Images`: the bundle image itself, the operator
        // (deployment) images and the related images, as a set.
        let mut images: BTreeSet<&str> = b.images.iter().map(String::as_str).collect();
        if !b.bundle_path.is_empty() {
            images.insert(&b.bundle_path);
        }
        for i in images {
            img.execute(params![i, b.name])?;
        }
    }
    let version = nullable(&b.version);
    let path = nullable(&b.bundle_path);
    {
        let mut dep = tx.prepare_cached(
            "insert into dependencies(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) values(?, ?, ?, ?, ?)",
        )?;
        for (t, v) in &b.dependencies {
            dep.execute(params![t, v, b.name, version, path])?;
        }
        let mut prop = tx.prepare_cached(
            "insert into properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) values(?, ?, ?, ?, ?)",
        )?;
        for (t, v) in &b.properties {
            prop.execute(params![t, v, b.name, version, path])?;
        }
        // opm adds the olm.package property when it first puts a bundle in
        // a channel; one-by-one adds make every bundle a head once, so every
        // bundle gets it, stranded or not.
        if !b.properties.iter().any(|(t, _)| t == "olm.package") {
            let v = package_property(&b.package, &b.version);
            prop.execute(params!["olm.package", v, b.name, version, path])?;
        }
        // A bundle deprecated before (the `deprecated` table outlives its
        // rows) gets its olm.deprecated property back, as opm re-adds it.
        if is_deprecated(tx, &b.name)? && !b.properties.iter().any(|(t, _)| t == DEPRECATED_TYPE) {
            prop.execute(params![DEPRECATED_TYPE, "{}", b.name, version, path])?;
        }
    }
    {
        let mut api = tx.prepare_cached(
            "insert or ignore into api(group_name, version, kind, plural) values(?, ?, ?, ?)",
        )?;
        let mut prov = tx.prepare_cached(
            "insert into api_provider(group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path) values(?, ?, ?, ?, ?, ?)",
        )?;
        for a in &b.provided {
            api.execute(params![a.gvk.group, a.gvk.version, a.gvk.kind, a.plural])?;
            prov.execute(params![
                a.gvk.group,
                a.gvk.version,
                a.gvk.kind,
                b.name,
                version,
                path
            ])?;
        }
        let mut req = tx.prepare_cached(
            "insert into api_requirer(group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path) values(?, ?, ?, ?, ?, ?)",
        )?;
        for a in &b.required {
            api.execute(params![a.gvk.group, a.gvk.version, a.gvk.kind, a.plural])?;
            req.execute(params![
                a.gvk.group,
                a.gvk.version,
                a.gvk.kind,
                b.name,
                version,
                path
            ])?;
        }
    }
    Ok(())
}

/// Indexes on the columns an add looks rows up by. opm's schema has none
/// there, so every lookup scanned its table and adds slowed down as the
/// database grew. They live only inside the write transaction
/// ([`with_lookup_indexes`]): the database
/// written keeps opm's schema byte for byte.
const LOOKUP_INDEXES: &[(&str, &str)] = &[
    (
        "olm_catalog_lookup_bundlepath",
        "operatorbundle(bundlepath)",
    ),
    (
        "olm_catalog_lookup_entry_package",
        "channel_entry(package_name, channel_name)",
    ),
    (
        "olm_catalog_lookup_entry_bundle",
        "channel_entry(operatorbundle_name)",
    ),
    // The foreign key channel_entry.replaces: deleting a package's entries
    // looks up the entries that replace each one.
    (
        "olm_catalog_lookup_entry_replaces",
        "channel_entry(replaces)",
    ),
    (
        "olm_catalog_lookup_properties_bundle",
        "properties(operatorbundle_name)",
    ),
];

/// Runs `add` in the open transaction with the lookup indexes in place,
/// and drops them again when it succeeds (a failed add rolls the whole
/// transaction back, indexes included).
pub(crate) fn with_lookup_indexes<T, E: From<super::Error>>(
    tx: &Transaction<'_>,
    add: impl FnOnce(&Transaction<'_>) -> Result<T, E>,
) -> Result<T, E> {
    let sql = |stmt: String| {
        tx.execute_batch(&stmt)
            .map_err(|e| E::from(super::Error::sqlite("the lookup indexes of the add", &e)))
    };
    for (name, on) in LOOKUP_INDEXES {
        sql(format!("CREATE INDEX IF NOT EXISTS {name} ON {on};"))?;
    }
    let out = add(tx)?;
    for (name, _) in LOOKUP_INDEXES {
        sql(format!("DROP INDEX IF EXISTS {name};"))?;
    }
    Ok(out)
}

/// The property type opm gives deprecated bundles.
pub const DEPRECATED_TYPE: &str = "olm.deprecated";

/// Whether the `deprecated` table names the bundle.
pub fn is_deprecated(tx: &Transaction<'_>, name: &str) -> Res<bool> {
    Ok(tx
        .prepare_cached("SELECT EXISTS(SELECT 1 FROM deprecated WHERE operatorbundle_name = ?)")?
        .query_row([name], |r| r.get(0))?)
}

/// How channel entries are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `addPackageChannels` (replaces mode): walk each head's `replaces`
    /// columns, each skip as a pair of entries at the current depth; the
    /// walk stops at a deprecated bundle.
    Replaces,
    /// `AddPackageChannelsFromGraph` (semver modes): the graph's chain,
    /// synthetic skip pairs below the node's depth.
    Graph,
}

/// The depth opm gives channel heads in every mode (`startDepth`; older
/// opm used 1 in semver modes).
pub const START_DEPTH: i64 = 0;

/// The edges of one bundle in one channel.
#[derive(Clone, Debug, Default)]
pub struct Edges {
    /// The bundle it replaces.
    pub replaces: String,
    /// The bundles it skips.
    pub skips: Vec<String>,
}

fn add_entry(
    tx: &Transaction<'_>,
    channel: &str,
    package: &str,
    bundle: &str,
    depth: i64,
) -> Res<i64> {
    tx.prepare_cached(
        "insert into channel_entry(channel_name, package_name, operatorbundle_name, depth) values(?, ?, ?, ?)",
    )?
    .execute(params![channel, package, bundle, depth])?;
    Ok(tx.last_insert_rowid())
}

fn set_replaces(tx: &Transaction<'_>, entry: i64, replaces: i64) -> Res<()> {
    tx.prepare_cached("update channel_entry set replaces = ? where entry_id = ?")?
        .execute(params![replaces, entry])?;
    Ok(())
}

/// Writes the entries of one channel from its head, walking `edges`. With
/// `strict`, a replaced bundle missing from `edges` is an error (opm's
/// "replaces nonexistent bundle"); otherwise the walk ends there, as an FBC
/// entry may replace a bundle that is not in the catalog. In the replaces
/// layout the walk stops below a deprecated bundle, as opm's does.
pub fn write_channel(
    tx: &Transaction<'_>,
    layout: Layout,
    package: &str,
    channel: &str,
    head: &str,
    edges: &BTreeMap<String, Edges>,
    strict: bool,
) -> Res<()> {
    let mut visited = BTreeSet::new();
    visited.insert(head.to_string());
    let mut current = head.to_string();
    match layout {
        Layout::Replaces => {
            let mut current_id = add_entry(tx, channel, package, head, START_DEPTH)?;
            let mut depth = START_DEPTH + 1;
            loop {
                if is_deprecated(tx, &current)? {
                    // Truncated below a deprecated bundle.
                    break;
                }
                let e = edges.get(&current).cloned().unwrap_or_default();
                for skip in &e.skips {
                    let skipped = add_entry(tx, channel, package, skip, depth)?;
                    let synth = add_entry(tx, channel, package, &current, depth)?;
                    set_replaces(tx, synth, skipped)?;
                    depth += 1;
                }
                if e.replaces.is_empty() {
                    break;
                }
                let replaced = add_entry(tx, channel, package, &e.replaces, depth)?;
                if !visited.insert(e.replaces.clone()) {
                    bail!(
                        "package {package}, channel {channel}: replaces cycle: {current} replaces {}, which is already in the chain (opm: \"Cycle detected\")",
                        e.replaces
                    );
                }
                set_replaces(tx, current_id, replaced)?;
                if !edges.contains_key(&e.replaces) {
                    if strict {
                        bail!(
                            "package {package}, channel {channel}: {current} replaces {}, which is not in the index; add {} first, or fix spec.replaces (opm: \"Invalid bundle {head}, replaces nonexistent bundle {}\")",
                            e.replaces, e.replaces, e.replaces
                        );
                    }
                    break;
                }
                current_id = replaced;
                current = e.replaces.clone();
                depth += 1;
            }
        }
        Layout::Graph => {
            let mut depth = START_DEPTH;
            let mut previous: Option<i64> = None;
            loop {
                let id = add_entry(tx, channel, package, &current, depth)?;
                if let Some(p) = previous {
                    set_replaces(tx, p, id)?;
                }
                let e = edges.get(&current).cloned().unwrap_or_default();
                let mut synthetic: Vec<&String> = e.skips.iter().collect();
                let next = if !e.replaces.is_empty() && edges.contains_key(&e.replaces) {
                    Some(e.replaces.clone())
                } else {
                    if !e.replaces.is_empty() {
                        synthetic.push(&e.replaces);
                    }
                    None
                };
                for (sd, s) in (depth + 1..).zip(synthetic) {
                    let sid = add_entry(tx, channel, package, s, sd)?;
                    let nid = add_entry(tx, channel, package, &current, sd)?;
                    set_replaces(tx, nid, sid)?;
                }
                let Some(next) = next else { break };
                if !visited.insert(next.clone()) {
                    bail!("package {package}, channel {channel}: replaces cycle at {next}");
                }
                current = next;
                previous = Some(id);
                depth += 1;
            }
        }
    }
    Ok(())
}

/// A package's channels as they will be written.
#[derive(Clone, Debug, Default)]
pub struct PackageGraph {
    /// Package name.
    pub name: String,
    /// Default channel.
    pub default_channel: String,
    /// Channel name to head bundle.
    pub heads: BTreeMap<String, String>,
    /// Channel name to the edges of its bundles.
    pub edges: BTreeMap<String, BTreeMap<String, Edges>>,
}

/// Replaces the package's rows in `package`, `channel` and `channel_entry`.
/// In the replaces layout a channel whose head is deprecated is left out,
/// as opm's `addPackageChannels` does.
pub fn write_package(
    tx: &Transaction<'_>,
    layout: Layout,
    g: &PackageGraph,
    strict: bool,
    add_mode: Option<&str>,
) -> Res<()> {
    tx.execute(
        "delete from channel_entry where package_name = ?",
        [&g.name],
    )?;
    tx.execute("delete from channel where package_name = ?", [&g.name])?;
    tx.execute("delete from package where name = ?", [&g.name])?;
    let mut heads: BTreeMap<&String, &String> = BTreeMap::new();
    for (ch, head) in &g.heads {
        if layout == Layout::Replaces && is_deprecated(tx, head)? {
            continue;
        }
        heads.insert(ch, head);
    }
    if !heads.contains_key(&g.default_channel) {
        bail!(
            "package {}: default channel {:?} has no bundle (channels: {}); set {} on the newest bundle (opm: \"no default channel specified for {}\")",
            g.name,
            g.default_channel,
            heads.keys().map(|c| c.as_str()).collect::<Vec<_>>().join(", "),
            crate::bundle::keys::DEFAULT_CHANNEL,
            g.name
        );
    }
    // The package row references its default channel: insert it without
    // one, then the channels, then set it (as opm does).
    tx.execute("insert into package(name) values(?)", params![g.name])?;
    if let Some(mode) = add_mode {
        super::schema::set_add_mode(tx, &g.name, mode)?;
    }
    for (ch, head) in &heads {
        tx.execute(
            "insert into channel(name, package_name, head_operatorbundle_name) values(?, ?, ?)",
            params![ch, g.name, head],
        )?;
    }
    tx.execute(
        "update package set default_channel = ? where name = ?",
        params![g.default_channel, g.name],
    )?;
    let empty = BTreeMap::new();
    for (ch, head) in heads {
        let edges = g.edges.get(ch).unwrap_or(&empty);
        write_channel(tx, layout, &g.name, ch, head, edges, strict)?;
    }
    ensure_package_properties(tx, &g.name)?;
    Ok(())
}

/// Adds the `olm.package` property of every bundle of the package that has
/// none (opm's `addPackageProperty`). opm adds one row per visit, so its
/// tables hold duplicates that its queries hide with `SELECT DISTINCT`; one
/// row per bundle reads the same.
pub fn ensure_package_properties(tx: &Transaction<'_>, package: &str) -> Res<()> {
    let mut stmt = tx.prepare_cached(
        "SELECT DISTINCT o.name, o.version, o.bundlepath FROM channel_entry c JOIN operatorbundle o ON o.name = c.operatorbundle_name
         WHERE c.package_name = ? AND NOT EXISTS (SELECT 1 FROM properties p WHERE p.type = 'olm.package' AND p.operatorbundle_name = o.name)",
    )?;
    let rows: Vec<(String, Option<String>, Option<String>)> = stmt
        .query_map([package], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    for (name, version, path) in rows {
        let v = version.unwrap_or_default();
        let value = package_property(package, &v);
        tx.prepare_cached("insert into properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path) values(?, ?, ?, ?, ?)")?
            .execute(params!["olm.package", value, name, nullable(&v), path.as_deref().and_then(nullable)])?;
    }
    Ok(())
}

/// `{"packageName":..,"version":..}` (registry.PackageProperty).
pub fn package_property(package: &str, version: &str) -> String {
    let mut m = serde_json::Map::new();
    m.insert("packageName".into(), package.into());
    m.insert("version".into(), version.into());
    crate::gojson::to_string(&serde_json::Value::Object(m))
}

/// A bundle of the package already in the index, as opm's
/// `ListRegistryBundles` returns it: channels from its channel entries.
struct Existing {
    name: String,
    version: String,
    replaces: String,
    skips: Vec<String>,
    skip_range: String,
    channels: BTreeSet<String>,
}

/// The package's bundles in table order (opm's `ListRegistryBundles`: every
/// bundle with a channel entry in the package; its channels from all its
/// entries).
fn existing_bundles(tx: &Transaction<'_>, package: &str) -> Res<Vec<Existing>> {
    let mut stmt = tx.prepare(
        "SELECT o.name, o.version, o.replaces, o.skips, o.skiprange FROM operatorbundle o
         WHERE o.name IN (SELECT operatorbundle_name FROM channel_entry WHERE package_name = ?) ORDER BY o.rowid",
    )?;
    let mut out = Vec::new();
    let rows = stmt.query_map([package], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<String>>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, Option<String>>(4)?,
        ))
    })?;
    for row in rows {
        let (name, version, replaces, skips, skip_range) = row?;
        out.push(Existing {
            name,
            version: version.unwrap_or_default(),
            replaces: replaces.unwrap_or_default(),
            skips: split_skips(skips.as_deref()),
            skip_range: skip_range.unwrap_or_default(),
            channels: BTreeSet::new(),
        });
    }
    let mut ch = tx
        .prepare("SELECT DISTINCT channel_name FROM channel_entry WHERE operatorbundle_name = ?")?;
    for e in &mut out {
        e.channels = ch
            .query_map([&e.name], |r| r.get::<_, String>(0))?
            .collect::<Result<_, _>>()?;
    }
    Ok(out)
}

/// The skips column split on commas.
pub fn split_skips(s: Option<&str>) -> Vec<String> {
    s.filter(|s| !s.is_empty())
        .map(|s| s.split(',').map(String::from).collect())
        .unwrap_or_default()
}

/// A version as opm's `SemverPackageManifest` reads it: empty is
/// `0.0.0-z`, anything else must be semver.
fn manifest_version(name: &str, raw: &str) -> Res<semver::Version> {
    let raw = if raw.is_empty() { "0.0.0-z" } else { raw };
    semver::Version::parse(raw).map_err(|e| {
        fail!(
            "error parsing bundle {name} version {raw}: {e} (opm orders a package's bundles by semver to pick channel heads)"
        )
    })
}

/// Orders a batch by version (build metadata as opm compares it), then name:
/// opm applies a batch in map order, so any order it may take is allowed;
/// ascending versions give the same result as one add per bundle, oldest
/// first.
fn version_order(records: &mut [BundleRecord]) {
    records.sort_by(|a, b| match (a.semver(), b.semver()) {
        (Some(x), Some(y)) => modes::build_id_compare(&x, &y)
            .unwrap_or_else(|_| x.cmp(&y))
            .then(a.name.cmp(&b.name)),
        _ => a.name.cmp(&b.name),
    });
}

/// The nodes of each channel of the package as opm's graph loader sees them
/// (one per entry name).
fn channel_nodes(tx: &Transaction<'_>, package: &str) -> Res<BTreeMap<String, BTreeSet<String>>> {
    let mut st = tx.prepare(
        "SELECT DISTINCT channel_name, operatorbundle_name FROM channel_entry WHERE package_name = ?",
    )?;
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for row in st.query_map([package], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })? {
        let (c, b) = row?;
        out.entry(c).or_default().insert(b);
    }
    Ok(out)
}

/// opm's `checkForBundles`: after an add, every bundle the package had in a
/// channel, and every added bundle in each of its channels, must be
/// reachable from the channel head along the new entries; deprecated
/// bundles are exempt. Returns what opm reports as "add prunes bundle".
fn pruned_bundles(
    tx: &Transaction<'_>,
    package: &str,
    expected: &BTreeMap<String, BTreeSet<String>>,
) -> Res<Vec<String>> {
    let mut out = Vec::new();
    for (channel, names) in expected {
        let head: Option<String> = tx
            .query_row(
                "SELECT head_operatorbundle_name FROM channel WHERE package_name = ? AND name = ?",
                params![package, channel],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        let mut reachable = BTreeSet::new();
        if let Some(h) = &head {
            let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            let mut st = tx.prepare_cached(
                "SELECT e.operatorbundle_name, r.operatorbundle_name FROM channel_entry e JOIN channel_entry r ON r.entry_id = e.replaces WHERE e.package_name = ? AND e.channel_name = ?",
            )?;
            for row in st.query_map(params![package, channel], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })? {
                let (from, to) = row?;
                edges.entry(from).or_default().insert(to);
            }
            let mut stack = vec![h.clone()];
            while let Some(n) = stack.pop() {
                if reachable.insert(n.clone()) {
                    if let Some(next) = edges.get(&n) {
                        stack.extend(next.iter().cloned());
                    }
                }
            }
        }
        for n in names {
            if reachable.contains(n) {
                continue;
            }
            let deprecated: bool = tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM properties WHERE operatorbundle_name = ? AND type = ?)",
                params![n, DEPRECATED_TYPE],
                |r| r.get(0),
            )?;
            if !deprecated {
                out.push(format!(
                    "{n} from channel {channel} (head {})",
                    head.as_deref().unwrap_or("none")
                ));
            }
        }
    }
    Ok(out)
}

/// opm's `ValidateEdgeBundlePackage`: a bundle, and every bundle it
/// replaces or skips, belongs to one package only.
fn check_edge_packages(tx: &Transaction<'_>, records: &[BundleRecord]) -> Res<()> {
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for r in records {
        let names = r
            .skips
            .iter()
            .map(String::as_str)
            .chain([r.replaces.as_str(), r.name.as_str()])
            .filter(|n| !n.is_empty());
        for n in names {
            if let Some(p) = seen.get(n) {
                if *p != r.package {
                    let mut pkgs = [*p, r.package.as_str()];
                    pkgs.sort();
                    bail!(
                        "bundle {n} must belong to exactly one package, found on: {} and {} (a bundle may only replace or skip bundles of its own package)",
                        pkgs[0], pkgs[1]
                    );
                }
            }
            seen.insert(n, &r.package);
        }
    }
    let mut st = tx.prepare_cached(
        "SELECT package_name FROM channel_entry WHERE operatorbundle_name = ? AND package_name != ? LIMIT 1",
    )?;
    for (n, p) in seen {
        let other: Option<String> = st.query_row(params![n, p], |r| r.get(0)).optional()?;
        if let Some(o) = other {
            bail!("bundle {n} belongs to package {o} on index, cannot be added as an edge for package {p}");
        }
    }
    Ok(())
}

/// Adds `records` to the index in the open transaction.
pub fn add_records(
    tx: &Transaction<'_>,
    mut records: Vec<BundleRecord>,
    opts: &AddOptions,
) -> Res<AddReport> {
    let mut report = AddReport::default();
    // opm checks the overwrites before anything else (two bundles of one
    // name that both overwrite are its "more than one bundle" refusal).
    let plan = if opts.overwrite_latest {
        overwrite_plan(tx, &records.iter().collect::<Vec<_>>())?
    } else {
        BTreeMap::new()
    };
    let mut seen = BTreeSet::new();
    for r in &records {
        if !seen.insert(r.name.clone()) {
            bail!(
                "bundle {} is given twice in this add (bundle names are CSV names and must be unique)",
                r.name
            );
        }
        check_alpha(r, opts)?;
    }
    check_edge_packages(tx, &records)?;
    let mut by_pkg: BTreeMap<String, Vec<BundleRecord>> = BTreeMap::new();
    for r in records.drain(..) {
        by_pkg.entry(r.package.clone()).or_default().push(r);
    }
    let mut pruned = Vec::new();
    for (pkg, recs) in by_pkg {
        let overwritten = plan.get(&pkg).map(String::as_str);
        let (added, p) = add_package(tx, &pkg, recs, opts, overwritten)?;
        report.added.extend(added);
        pruned.extend(p);
        report.packages.insert(pkg);
    }
    if !pruned.is_empty() {
        if !opts.permissive {
            bail!("{}", prunes_message(&pruned, opts.mode));
        }
        report.stranded = pruned;
    }
    if !opts.keep_content && opts.mode != Mode::Replaces {
        clear_non_head_bundles(tx)?;
    }
    Ok(report)
}

/// How many bundles an "add prunes" message names before "and N more".
pub const PRUNED_SHOWN: usize = 5;

/// The first [`PRUNED_SHOWN`] of `items` joined by "; ", then "and N more"
/// when there are more (a package of hundreds of bundles made this one
/// line of tens of kilobytes).
pub fn first_few(items: &[String]) -> String {
    let mut s = items
        .iter()
        .take(PRUNED_SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if items.len() > PRUNED_SHOWN {
        s.push_str(&format!("; and {} more", items.len() - PRUNED_SHOWN));
    }
    s
}

fn prunes_message(pruned: &[String], mode: Mode) -> String {
    let fix = if mode == Mode::Replaces {
        "if the package orders its bundles by version (its ci.yaml says updateGraph: semver-mode, or its CSVs set no spec.replaces), add it with --mode semver; else fix spec.replaces/spec.skips so the channel head reaches them; or pass --permissive to keep the add with these bundles in no channel, as opm --permissive does"
    } else {
        "fix the versions or spec.skips so the highest version of each channel reaches them, or pass --permissive to keep the add with these bundles in no channel, as opm --permissive does"
    };
    format!(
        "add prunes {} bundle(s) from their channels, so opm refuses it: {} (this may be due to an incorrect channel head: the highest version of a channel heads it and only what it replaces or skips, directly or down its chain, stays in the channel). Likely fix: {fix}",
        pruned.len(),
        first_few(pruned)
    )
}

fn check_alpha(r: &BundleRecord, opts: &AddOptions) -> Res<()> {
    if !r.substitutes_for.is_empty() && !opts.enable_alpha {
        bail!(
            "bundle {}: olm.substitutesFor ({}) is an alpha feature; pass --enable-alpha to use it (opm: \"SubstitutesFor is an alpha-only feature\")",
            r.name,
            r.substitutes_for
        );
    }
    Ok(())
}

/// `add_records` that goes on past what cannot be added: each record comes
/// with its source (directory or image) and `left_out` holds what could not
/// be read. A bundle is left out when its CSV name is given twice, is
/// already in the index, or (replaces mode) its `replaces` names a bundle
/// that is neither in the index nor added; bundles whose `replaces` names a
/// bundle left out follow it. A package whose add fails is rolled back to
/// where it started (a savepoint) and left out whole. Everything else is
/// added in the same transaction.
pub fn add_records_keep_going(
    tx: &Transaction<'_>,
    records: Vec<(String, BundleRecord)>,
    mut left_out: Vec<LeftOut>,
    opts: &AddOptions,
) -> Res<AddReport> {
    let mut report = AddReport::default();
    let mut keep: Vec<Option<(String, BundleRecord)>> = records.into_iter().map(Some).collect();
    let out = |file: &str, r: &BundleRecord, reason: String| LeftOut {
        file: file.to_string(),
        bundle: r.name.clone(),
        package: r.package.clone(),
        reason,
        dependents: Vec::new(),
    };
    // Names given more than once: none of them is added (which one is meant
    // cannot be told).
    let mut files_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (f, r) in keep.iter().flatten() {
        files_of.entry(r.name.clone()).or_default().push(f.clone());
    }
    let mut in_index = tx.prepare("SELECT EXISTS(SELECT 1 FROM operatorbundle WHERE name = ?)")?;
    for slot in keep.iter_mut() {
        let Some((f, r)) = slot.as_ref() else {
            continue;
        };
        let files = &files_of[&r.name];
        let reason = if files.len() > 1 {
            let others: Vec<&str> = files
                .iter()
                .filter(|o| *o != f)
                .map(String::as_str)
                .collect();
            Some(format!(
                "duplicate CSV name: {} is also the CSV name of {} (bundle names must be unique; none of them is added)",
                r.name,
                others.join(", ")
            ))
        } else if !opts.overwrite_latest
            && in_index.query_row([&r.name], |row| row.get::<_, bool>(0))?
        {
            Some(format!(
                "bundle {} is already in the index; remove it first (`index rm`) or bump its version",
                r.name
            ))
        } else {
            check_alpha(r, opts).err().map(|e| e.to_string())
        };
        if let Some(reason) = reason {
            left_out.push(out(f, r, reason));
            *slot = None;
        }
    }
    // Replaces chains: a bundle whose replaces names a bundle that is not
    // there (or was left out) is left out, until nothing changes.
    if opts.mode == Mode::Replaces {
        loop {
            let present: BTreeSet<String> =
                keep.iter().flatten().map(|(_, r)| r.name.clone()).collect();
            let mut changed = false;
            for slot in keep.iter_mut() {
                let Some((f, r)) = slot.as_ref() else {
                    continue;
                };
                if r.replaces.is_empty()
                    || present.contains(&r.replaces)
                    || in_index.query_row([&r.replaces], |row| row.get::<_, bool>(0))?
                {
                    continue;
                }
                let mut needed = false;
                for dep in left_out.iter_mut().filter(|l| l.bundle == r.replaces) {
                    dep.dependents.push(r.name.clone());
                    needed = true;
                }
                let reason = if needed {
                    format!("replaces {}, which is left out (see its entry)", r.replaces)
                } else {
                    format!(
                        "broken replaces: spec.replaces names {}, which is neither in the index nor in this add (opm: \"replaces nonexistent bundle\")",
                        r.replaces
                    )
                };
                left_out.push(out(f, r, reason));
                *slot = None;
                changed = true;
            }
            if !changed {
                break;
            }
        }
    }
    drop(in_index);
    // Dependents of dependents, so each entry names everything that went
    // with it.
    close_dependents(&mut left_out);
    let mut by_pkg: BTreeMap<String, Vec<(String, BundleRecord)>> = BTreeMap::new();
    for (f, r) in keep.into_iter().flatten() {
        by_pkg.entry(r.package.clone()).or_default().push((f, r));
    }
    for (pkg, items) in by_pkg {
        let files: Vec<String> = items.iter().map(|(f, _)| f.clone()).collect();
        let mut names: Vec<String> = items.iter().map(|(_, r)| r.name.clone()).collect();
        names.sort();
        let recs: Vec<BundleRecord> = items.into_iter().map(|(_, r)| r).collect();
        tx.execute_batch("SAVEPOINT olm_catalog_package")?;
        let result = overwrite_plan(tx, &recs.iter().collect::<Vec<_>>())
            .and_then(|plan| Ok((plan, check_edge_packages(tx, &recs)?)))
            .and_then(|(plan, ())| {
                let overwritten = plan.get(&pkg).map(String::as_str);
                add_package(tx, &pkg, recs, opts, overwritten)
            })
            .and_then(|(added, pruned)| {
                if !pruned.is_empty() && !opts.permissive {
                    bail!("{}", prunes_message(&pruned, opts.mode));
                }
                Ok((added, pruned))
            });
        match result {
            Ok((added, pruned)) => {
                tx.execute_batch("RELEASE olm_catalog_package")?;
                report.added.extend(added);
                report.stranded.extend(pruned);
                report.packages.insert(pkg);
            }
            Err(e) => {
                tx.execute_batch("ROLLBACK TO olm_catalog_package; RELEASE olm_catalog_package")?;
                left_out.push(LeftOut {
                    file: common_dir(&files).unwrap_or_else(|| files.join(", ")),
                    bundle: String::new(),
                    package: pkg.clone(),
                    reason: format!("package {pkg} cannot be added: {e:#}"),
                    dependents: names,
                });
            }
        }
    }
    if !opts.keep_content && opts.mode != Mode::Replaces {
        clear_non_head_bundles(tx)?;
    }
    report.left_out = left_out;
    Ok(report)
}

/// The directory all of `files` are in (a package directory), if they are
/// more than one and share one.
fn common_dir(files: &[String]) -> Option<String> {
    if files.len() < 2 {
        return None;
    }
    let mut prefix: Vec<std::path::Component<'_>> =
        std::path::Path::new(&files[0]).components().collect();
    for f in &files[1..] {
        let n = prefix
            .iter()
            .zip(std::path::Path::new(f).components())
            .take_while(|(a, b)| *a == b)
            .count();
        prefix.truncate(n);
    }
    let p: std::path::PathBuf = prefix.iter().collect();
    let s = p.display().to_string();
    (!s.is_empty() && s != "/" && s != ".").then_some(s)
}

/// Extends each entry's dependents with the dependents of its dependents.
fn close_dependents(left_out: &mut [LeftOut]) {
    let direct: BTreeMap<String, Vec<String>> = left_out
        .iter()
        .filter(|l| !l.bundle.is_empty())
        .map(|l| (l.bundle.clone(), l.dependents.clone()))
        .collect();
    for l in left_out.iter_mut() {
        let mut all: BTreeSet<String> = BTreeSet::new();
        let mut stack = l.dependents.clone();
        while let Some(n) = stack.pop() {
            if all.insert(n.clone()) {
                stack.extend(direct.get(&n).cloned().unwrap_or_default());
            }
        }
        l.dependents = all.into_iter().collect();
    }
}

/// Adds one package's new bundles; returns the bundles added and what
/// opm's "add prunes bundle" check found.
fn add_package(
    tx: &Transaction<'_>,
    pkg: &str,
    mut recs: Vec<BundleRecord>,
    opts: &AddOptions,
    overwritten: Option<&str>,
) -> Res<(Vec<String>, Vec<String>)> {
    let mode_name = opts.mode.as_str();
    let mut added = Vec::new();
    version_order(&mut recs);
    if let Some(old) = overwritten {
        if opts.mode == Mode::Replaces {
            remove_overwritten_channel_head(tx, pkg, old)?;
        } else if let Some(r) = recs.iter().find(|r| r.name == old) {
            return Err(semver_refusal(tx, opts.mode, r)?);
        }
    }
    // What opm's checkForBundles expects afterwards: the channels the
    // package had, and each new bundle in each of its channels. After an
    // overwrite only the new bundles, as opm checks: the old head's
    // replaces and skips go with it.
    let mut expected = if overwritten.is_some() {
        BTreeMap::new()
    } else {
        channel_nodes(tx, pkg)?
    };
    for r in &recs {
        for c in &r.channels {
            expected
                .entry(c.clone())
                .or_default()
                .insert(r.name.clone());
        }
    }
    let existing = existing_bundles(tx, pkg)?;
    let prior_default: Option<String> = tx
        .query_row(
            "SELECT default_channel FROM package WHERE name = ?",
            [pkg],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    for r in &recs {
        insert_bundle(tx, r).with_context(|| format!("adding {}", r.name))?;
        if opts.enable_alpha {
            add_substitutes_for(tx, r).with_context(|| format!("adding {}", r.name))?;
        }
        added.push(r.name.clone());
    }
    let graph;
    let layout;
    match opts.mode {
        Mode::Replaces => {
            layout = Layout::Replaces;
            graph = replaces_graph(tx, pkg, &existing, &recs, prior_default.as_deref())?;
        }
        Mode::Semver | Mode::SemverSkipPatch => {
            layout = Layout::Graph;
            graph = semver_graph(opts.mode, pkg, &existing, &recs, prior_default.as_deref())?;
        }
    }
    write_package(tx, layout, &graph, true, Some(mode_name))?;
    let pruned = pruned_bundles(tx, pkg, &expected)?;
    Ok((added, pruned))
}

/// Replaces mode (opm's `loadManifestsReplaces`): channel heads and the
/// default channel from `SemverPackageManifest` over the package's bundles
/// and the new ones; the entries are then walked from each head through the
/// `replaces` and `skips` columns.
fn replaces_graph(
    tx: &Transaction<'_>,
    pkg: &str,
    existing: &[Existing],
    recs: &[BundleRecord],
    prior_default: Option<&str>,
) -> Res<PackageGraph> {
    let mut mbs = Vec::new();
    for e in existing {
        mbs.push((
            modes::ModeBundle {
                name: e.name.clone(),
                package: pkg.to_string(),
                version: manifest_version(&e.name, &e.version)?,
                channels: e.channels.iter().cloned().collect(),
                default_channel: prior_default.map(String::from),
                replaces: String::new(),
                skips: Vec::new(),
                skip_range: String::new(),
            },
            prior_default.unwrap_or("").to_string(),
        ));
    }
    for r in recs {
        mbs.push((
            modes::ModeBundle {
                name: r.name.clone(),
                package: pkg.to_string(),
                version: manifest_version(&r.name, &r.version)?,
                channels: r.channels.clone(),
                default_channel: r.default_channel.clone(),
                replaces: String::new(),
                skips: Vec::new(),
                skip_range: String::new(),
            },
            r.default_channel.clone().unwrap_or_default(),
        ));
    }
    let inputs: Vec<(&modes::ModeBundle, Vec<String>, String)> = mbs
        .iter()
        .map(|(b, d)| (b, b.channels.clone(), d.clone()))
        .collect();
    let (heads, default_channel) =
        modes::semver_package_manifest(&inputs).map_err(|e| fail!("package {pkg}: {e}"))?;
    // Edges from the columns (after substitutesFor rewrote them), of the
    // bundles the heads reach: the channel walk reads no others, and
    // reading the whole table for each package made a streamed add of many
    // packages quadratic.
    let edges = reachable_edges(tx, heads.values())?;
    Ok(PackageGraph {
        name: pkg.to_string(),
        default_channel,
        edges: heads.keys().map(|c| (c.clone(), edges.clone())).collect(),
        heads,
    })
}

/// The `replaces` and `skips` columns of the bundles reachable from `heads`
/// through them; a name with no row is left out, as the walk expects of a
/// bundle missing from the index.
fn reachable_edges<'a>(
    tx: &Transaction<'_>,
    heads: impl Iterator<Item = &'a String>,
) -> Res<BTreeMap<String, Edges>> {
    let mut edges: BTreeMap<String, Edges> = BTreeMap::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut todo: Vec<String> = heads.cloned().collect();
    let mut st = tx.prepare_cached("SELECT replaces, skips FROM operatorbundle WHERE name = ?")?;
    while let Some(n) = todo.pop() {
        if !seen.insert(n.clone()) {
            continue;
        }
        let row: Option<(Option<String>, Option<String>)> = st
            .query_row([&n], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((rep, sk)) = row else { continue };
        let e = Edges {
            replaces: rep.unwrap_or_default(),
            skips: split_skips(sk.as_deref()),
        };
        todo.extend(e.skips.iter().cloned());
        if !e.replaces.is_empty() {
            todo.push(e.replaces.clone());
        }
        edges.insert(n, e);
    }
    Ok(edges)
}

/// Semver modes (opm's `loadManifestsSemver`, one bundle at a time): the
/// package's bundles replayed in version order with the package's default
/// channel, then the new ones.
fn semver_graph(
    mode: Mode,
    pkg: &str,
    existing: &[Existing],
    recs: &[BundleRecord],
    prior_default: Option<&str>,
) -> Res<PackageGraph> {
    let mut old = Vec::new();
    for e in existing {
        let version = semver::Version::parse(&e.version).map_err(|err| {
            fail!(
                "bundle {} in the index has version {:?}, not semver ({err}); semver modes need semver versions",
                e.name, e.version
            )
        })?;
        old.push(modes::ModeBundle {
            name: e.name.clone(),
            package: pkg.to_string(),
            version,
            channels: e.channels.iter().cloned().collect(),
            default_channel: prior_default.map(String::from),
            replaces: e.replaces.clone(),
            skips: e.skips.clone(),
            skip_range: e.skip_range.clone(),
        });
    }
    old.sort_by(|a, b| {
        a.version
            .cmp_precedence(&b.version)
            .then(a.name.cmp(&b.name))
    });
    let mut mbs = old;
    for r in recs {
        let version = r.semver().ok_or_else(|| {
            fail!(
                "bundle {}: spec.version {:?} is not semver; --mode {} orders bundles by semver",
                r.name,
                r.version,
                mode.as_str()
            )
        })?;
        mbs.push(modes::ModeBundle {
            name: r.name.clone(),
            package: pkg.to_string(),
            version,
            channels: r.channels.clone(),
            default_channel: r.default_channel.clone(),
            replaces: r.replaces.clone(),
            skips: r.skips.clone(),
            skip_range: r.skip_range.clone(),
        });
    }
    let outcome = modes::build(mode, &mbs)
        .map_err(|e| fail!("package {pkg}: {e}"))?
        .remove(pkg)
        .ok_or_else(|| fail!("package {pkg}: no channels"))?;
    let mut graph = PackageGraph {
        name: pkg.to_string(),
        default_channel: outcome.default_channel,
        ..Default::default()
    };
    for (c, ch) in outcome.channels {
        graph.heads.insert(c.clone(), ch.head);
        graph.edges.insert(c, entries_to_edges(&ch.entries));
    }
    Ok(graph)
}

/// Names of the bundles whose `substitutesfor` is `name`.
fn substitutions_of(tx: &Transaction<'_>, name: &str) -> Res<Vec<String>> {
    let mut st = tx.prepare_cached("SELECT name FROM operatorbundle WHERE substitutesfor = ?")?;
    let v = st
        .query_map([name], |r| r.get::<_, Option<String>>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(v.into_iter().flatten().filter(|s| !s.is_empty()).collect())
}

/// The `substitutesfor` of `name` ("" if none).
fn substitution(tx: &Transaction<'_>, name: &str) -> Res<String> {
    Ok(tx
        .prepare_cached("SELECT substitutesfor FROM operatorbundle WHERE name = ?")?
        .query_row([name], |r| r.get::<_, Option<String>>(0))
        .optional()?
        .flatten()
        .unwrap_or_default())
}

fn bundle_columns(tx: &Transaction<'_>, name: &str) -> Res<(String, Vec<String>, String)> {
    let row: Option<(Option<String>, Option<String>, Option<String>)> = tx
        .prepare_cached("SELECT replaces, skips, version FROM operatorbundle WHERE name = ?")?
        .query_row([name], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let Some((rep, sk, v)) = row else {
        bail!("no bundle found for bundlename {name}");
    };
    Ok((
        rep.unwrap_or_default(),
        split_skips(sk.as_deref()),
        v.unwrap_or_default(),
    ))
}

/// Adds `skips` (without duplicates) to the skips column of `name`.
fn append_skips(tx: &Transaction<'_>, skips: &[String], name: &str) -> Res<()> {
    let (_, mut current, _) = bundle_columns(tx, name)?;
    let had: BTreeSet<String> = current.iter().cloned().collect();
    for s in skips {
        if !had.contains(s) {
            current.push(s.clone());
        }
    }
    tx.prepare_cached("update operatorbundle set skips = ? where name = ?")?
        .execute(params![current.join(","), name])?;
    Ok(())
}

/// opm's `addSubstitutesFor` (with `--enable-alpha`): a bundle that
/// substitutes for another takes its place in the graph. Whatever replaced
/// the substituted bundle now replaces the substitute; of several
/// substitutes for one bundle the highest version wins and skips the
/// others; the substitute skips what it substitutes for, down the chain.
fn add_substitutes_for(tx: &Transaction<'_>, b: &BundleRecord) -> Res<()> {
    let csv = b.name.as_str();
    let mut replaces = b.replaces.clone();
    let mut skips = b.skips.clone();
    if !b.substitutes_for.is_empty() {
        tx.prepare_cached("update operatorbundle set replaces = ? where replaces = ?")?
            .execute(params![csv, b.substitutes_for])?;
        let mut others: std::collections::VecDeque<String> =
            substitutions_of(tx, &b.substitutes_for)?.into();
        while let Some(other) = others.pop_front() {
            if other == csv {
                continue;
            }
            let (_, _, raw) = bundle_columns(tx, &other)?;
            let theirs = semver::Version::parse(&raw)
                .map_err(|e| fail!("bundle {other}: version {raw:?}: {e}"))?;
            let ours = semver::Version::parse(&b.version)
                .map_err(|e| fail!("bundle {csv}: version {:?}: {e}", b.version))?;
            match modes::build_id_compare(&theirs, &ours).map_err(Fail::msg)? {
                std::cmp::Ordering::Less => {
                    // The other substitute is older: this one substitutes for it.
                    tx.prepare_cached(
                        "update operatorbundle set substitutesfor = ? where name = ?",
                    )?
                    .execute(params![other, csv])?;
                    others.extend(substitutions_of(tx, &other)?);
                }
                std::cmp::Ordering::Greater => {
                    // The other is newer: it substitutes for this one and skips it.
                    tx.prepare_cached(
                        "update operatorbundle set substitutesfor = ? where name = ?",
                    )?
                    .execute(params![csv, other])?;
                    let mut s = skips.clone();
                    s.push(csv.to_string());
                    append_skips(tx, &s, &other)?;
                    if substitutions_of(tx, csv)?.len() > 1 {
                        bail!("more than one substitution points to {csv}");
                    }
                }
                std::cmp::Ordering::Equal => {
                    bail!("cannot determine latest substitution because of duplicate versions ({csv} and {other} both substitute for {})", b.substitutes_for);
                }
            }
        }
    }
    // This bundle skips what it substitutes for, and what that substitutes
    // for, and so on.
    let mut sf = substitution(tx, csv)?;
    let mut guard = BTreeSet::new();
    while !sf.is_empty() && guard.insert(sf.clone()) {
        skips.push(sf.clone());
        sf = substitution(tx, &sf)?;
    }
    // opm stops quietly (leaving the columns as they are) wherever two
    // bundles substitute for the same one.
    let mut subs = substitutions_of(tx, csv)?;
    if subs.len() > 1 {
        return Ok(());
    }
    // Substitutes added before this bundle take over its skips.
    let mut guard = BTreeSet::new();
    while let Some(first) = subs.first().cloned() {
        if !guard.insert(first.clone()) {
            break;
        }
        let mut s = skips.clone();
        s.push(csv.to_string());
        append_skips(tx, &s, &first)?;
        subs = substitutions_of(tx, &first)?;
        if subs.len() > 1 {
            return Ok(());
        }
    }
    // Skipping a substituted bundle also skips its substitutes.
    if !skips.is_empty() {
        let mut all: Vec<String> = Vec::new();
        for skip in &skips {
            if !all.contains(skip) {
                all.push(skip.clone());
            }
            let mut subs = substitutions_of(tx, skip)?;
            if subs.len() > 1 {
                return Ok(());
            }
            let mut guard = BTreeSet::new();
            while !subs.is_empty() {
                let s = subs.remove(0);
                if s != csv && guard.insert(s.clone()) {
                    if !all.contains(&s) {
                        all.push(s.clone());
                    }
                    subs = substitutions_of(tx, &s)?;
                    if subs.len() > 1 {
                        return Ok(());
                    }
                }
            }
        }
        skips = all;
    }
    // Replacing a substituted bundle means replacing its newest substitute.
    if !replaces.is_empty() {
        let mut subs = substitutions_of(tx, &replaces)?;
        let mut guard = BTreeSet::new();
        while let Some(first) = subs.first().cloned() {
            if !guard.insert(first.clone()) {
                break;
            }
            replaces = first;
            subs = substitutions_of(tx, &replaces)?;
            if subs.len() > 1 {
                return Ok(());
            }
        }
    }
    tx.prepare_cached("update operatorbundle set replaces = ?, skips = ? where name = ?")?
        .execute(params![replaces, skips.join(","), csv])?;
    Ok(())
}

/// The entry no other entry replaces or skips (the newest if several).
pub fn channel_head(entries: &[ChannelEntry]) -> Option<String> {
    let mut pointed: BTreeSet<&str> = BTreeSet::new();
    for e in entries {
        if !e.replaces.is_empty() {
            pointed.insert(&e.replaces);
        }
        for s in &e.skips {
            pointed.insert(s);
        }
    }
    entries
        .iter()
        .rev()
        .find(|e| !pointed.contains(e.name.as_str()))
        .map(|e| e.name.clone())
}

/// Edges by bundle name from FBC entries.
pub fn entries_to_edges(entries: &[ChannelEntry]) -> BTreeMap<String, Edges> {
    entries
        .iter()
        .map(|e| {
            (
                e.name.clone(),
                Edges {
                    replaces: e.replaces.clone(),
                    skips: e.skips.clone(),
                },
            )
        })
        .collect()
}

/// opm's `ClearNonHeadBundles` (after semver-mode adds): drop the manifests
/// of bundles that have an image reference and head no channel (OLM pulls
/// those from the image).
pub fn clear_non_head_bundles(tx: &Transaction<'_>) -> Res<usize> {
    Ok(tx.execute(
        "update operatorbundle set bundle = null, csv = null
         where (bundlepath != null or bundlepath != '')
         and name not in (select operatorbundle.name from operatorbundle join channel on channel.head_operatorbundle_name = operatorbundle.name)",
        [],
    )?)
}
