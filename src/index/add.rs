//! `index add`: opm's loading rules (pkg/sqlite/load.go, pkg/registry/populator.go).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{bail, Context};
use rusqlite::{params, OptionalExtension, Transaction};

use super::record::BundleRecord;
use crate::fbc::ChannelEntry;
use crate::graph::modes::{self, Mode};

/// Options of an add.
#[derive(Clone, Debug)]
pub struct AddOptions {
    /// The add mode.
    pub mode: Mode,
    /// Keep the `csv` and `bundle` columns of bundles that are not a channel
    /// head (opm clears them in semver modes and on incremental adds).
    pub keep_content: bool,
}

/// What an add did.
#[derive(Clone, Debug, Default)]
pub struct AddReport {
    /// Bundles added, in the order they were applied.
    pub added: Vec<String>,
    /// Packages touched.
    pub packages: BTreeSet<String>,
    /// Bundles left in no channel (nothing from a channel head replaces
    /// them); `index prune-stranded` removes them.
    pub stranded: Vec<String>,
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
pub fn insert_bundle(tx: &Transaction<'_>, b: &BundleRecord) -> anyhow::Result<()> {
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
        bail!(
            "bundle {} is already in the index{}; remove it first (`index rm`) or bump its version (opm refuses this too: \"bundle already added\")",
            b.name,
            pkg.map(|p| format!(" (package {p})")).unwrap_or_default()
        );
    }
    if !b.bundle_path.is_empty() {
        let other: Option<String> = tx
            .query_row(
                "SELECT name FROM operatorbundle WHERE bundlepath = ? LIMIT 1",
                [&b.bundle_path],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(o) = other {
            bail!(
                "bundle image {} is already in the index as {o}; opm refuses to add an image twice",
                b.bundle_path
            );
        }
    }
    tx.prepare_cached(
        "insert into operatorbundle(name, csv, bundle, bundlepath, version, skiprange, replaces, skips, substitutesfor) values(?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )?
    .execute(params![
        b.name,
        b.csv_json,
        b.bundle_json,
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
        for i in &b.images {
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
    }
    {
        let mut api = tx.prepare_cached(
            "insert or ignore into api(group_name, version, kind, plural) values(?, ?, ?, ?)",
        )?;
        let mut prov = tx.prepare_cached(
            "insert into api_provider(group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path) values(?, ?, ?, ?, ?, ?)",
        )?;
        for a in &b.provided {
            api.execute(params![a.group, a.version, a.kind, a.plural])?;
            prov.execute(params![a.group, a.version, a.kind, b.name, version, path])?;
        }
        let mut req = tx.prepare_cached(
            "insert into api_requirer(group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path) values(?, ?, ?, ?, ?, ?)",
        )?;
        for a in &b.required {
            api.execute(params![a.group, a.version, a.kind, a.plural])?;
            req.execute(params![a.group, a.version, a.kind, b.name, version, path])?;
        }
    }
    Ok(())
}

/// How channel entries are laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `addPackageChannels` (replaces mode): head at depth 0, each skip as a
    /// pair of entries at the current depth.
    Replaces,
    /// `AddPackageChannelsFromGraph` (semver modes): head at depth 1,
    /// synthetic skip pairs below the node's depth.
    Graph,
}

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
) -> anyhow::Result<i64> {
    tx.prepare_cached(
        "insert into channel_entry(channel_name, package_name, operatorbundle_name, depth) values(?, ?, ?, ?)",
    )?
    .execute(params![channel, package, bundle, depth])?;
    Ok(tx.last_insert_rowid())
}

fn set_replaces(tx: &Transaction<'_>, entry: i64, replaces: i64) -> anyhow::Result<()> {
    tx.prepare_cached("update channel_entry set replaces = ? where entry_id = ?")?
        .execute(params![replaces, entry])?;
    Ok(())
}

/// Writes the entries of one channel from its head, walking `edges`. With
/// `strict`, a replaced bundle missing from `edges` is an error (opm's
/// "specifies replacement that couldn't be found"); otherwise the walk ends
/// there, as an FBC entry may replace a bundle that is not in the catalog.
pub fn write_channel(
    tx: &Transaction<'_>,
    layout: Layout,
    package: &str,
    channel: &str,
    head: &str,
    edges: &BTreeMap<String, Edges>,
    strict: bool,
) -> anyhow::Result<()> {
    let mut visited = BTreeSet::new();
    visited.insert(head.to_string());
    let mut current = head.to_string();
    match layout {
        Layout::Replaces => {
            let mut current_id = add_entry(tx, channel, package, head, 0)?;
            let mut depth = 1;
            loop {
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
                        "package {package}, channel {channel}: replaces cycle: {current} replaces {}, which is already in the chain",
                        e.replaces
                    );
                }
                set_replaces(tx, current_id, replaced)?;
                if !edges.contains_key(&e.replaces) {
                    if strict {
                        bail!(
                            "package {package}, channel {channel}: {current} replaces {}, which is not in the index; add {} first, or fix spec.replaces (opm: \"{head} specifies replacement that couldn't be found\")",
                            e.replaces, e.replaces
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
            let mut depth = 1;
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
pub fn write_package(
    tx: &Transaction<'_>,
    layout: Layout,
    g: &PackageGraph,
    strict: bool,
    add_mode: Option<&str>,
) -> anyhow::Result<()> {
    tx.execute(
        "delete from channel_entry where package_name = ?",
        [&g.name],
    )?;
    tx.execute("delete from channel where package_name = ?", [&g.name])?;
    tx.execute("delete from package where name = ?", [&g.name])?;
    if !g.heads.contains_key(&g.default_channel) {
        bail!(
            "package {}: default channel {:?} has no bundle (channels: {}); set {} on the newest bundle",
            g.name,
            g.default_channel,
            g.heads.keys().cloned().collect::<Vec<_>>().join(", "),
            crate::bundle::keys::DEFAULT_CHANNEL
        );
    }
    // The package row references its default channel: insert it without
    // one, then the channels, then set it (as opm does).
    tx.execute(
        "insert into package(name, add_mode) values(?, ?)",
        params![g.name, add_mode],
    )?;
    for (ch, head) in &g.heads {
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
    for (ch, head) in &g.heads {
        let edges = g.edges.get(ch).unwrap_or(&empty);
        write_channel(tx, layout, &g.name, ch, head, edges, strict)?;
    }
    ensure_package_properties(tx, &g.name)?;
    Ok(())
}

/// Adds the `olm.package` property of every bundle of the package that has
/// none (opm's `addPackageProperty`, once per bundle).
pub fn ensure_package_properties(tx: &Transaction<'_>, package: &str) -> anyhow::Result<()> {
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

/// The bundles the package has in the index: name, version, replaces, skips,
/// skiprange.
struct Existing {
    name: String,
    version: String,
    replaces: String,
    skips: Vec<String>,
    skip_range: String,
    channels: BTreeSet<String>,
}

fn existing_bundles(tx: &Transaction<'_>, package: &str) -> anyhow::Result<Vec<Existing>> {
    let mut stmt = tx.prepare(
        "SELECT DISTINCT o.name, o.version, o.replaces, o.skips, o.skiprange, c.channel_name FROM channel_entry c JOIN operatorbundle o ON o.name = c.operatorbundle_name WHERE c.package_name = ? ORDER BY o.name",
    )?;
    let mut out: BTreeMap<String, Existing> = BTreeMap::new();
    let rows = stmt.query_map([package], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<String>>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, String>(5)?,
        ))
    })?;
    for row in rows {
        let (name, version, replaces, skips, skip_range, channel) = row?;
        let e = out.entry(name.clone()).or_insert_with(|| Existing {
            name,
            version: version.unwrap_or_default(),
            replaces: replaces.unwrap_or_default(),
            skips: split_skips(skips.as_deref()),
            skip_range: skip_range.unwrap_or_default(),
            channels: BTreeSet::new(),
        });
        e.channels.insert(channel);
    }
    Ok(out.into_values().collect())
}

/// The skips column split on commas.
pub fn split_skips(s: Option<&str>) -> Vec<String> {
    s.filter(|s| !s.is_empty())
        .map(|s| s.split(',').map(String::from).collect())
        .unwrap_or_default()
}

/// Orders the bundles of one package so that each comes after the bundles
/// it replaces or skips; otherwise by version, then name. Applying them one
/// by one in this order is what adding them one by one in version order does.
fn apply_order(records: &mut [BundleRecord]) {
    records.sort_by(|a, b| match (a.semver(), b.semver()) {
        (Some(x), Some(y)) => x.cmp(&y).then(a.name.cmp(&b.name)),
        _ => a.name.cmp(&b.name),
    });
    let names: BTreeMap<String, usize> = records
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.clone(), i))
        .collect();
    // Kahn's algorithm, taking the lowest remaining index first.
    let n = records.len();
    let mut indegree = vec![0usize; n];
    let mut after: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, r) in records.iter().enumerate() {
        let mut preds: BTreeSet<usize> = BTreeSet::new();
        if let Some(&j) = names.get(&r.replaces) {
            preds.insert(j);
        }
        for s in &r.skips {
            if let Some(&j) = names.get(s) {
                preds.insert(j);
            }
        }
        preds.remove(&i);
        for j in preds {
            after[j].push(i);
            indegree[i] += 1;
        }
    }
    let mut ready: BTreeSet<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(&i) = ready.iter().next() {
        ready.remove(&i);
        order.push(i);
        for &k in &after[i] {
            indegree[k] -= 1;
            if indegree[k] == 0 {
                ready.insert(k);
            }
        }
    }
    // A cycle leaves some out: keep them in version order at the end; the
    // channel walk reports the cycle.
    for i in 0..n {
        if !order.contains(&i) {
            order.push(i);
        }
    }
    let sorted: Vec<BundleRecord> = order.iter().map(|&i| records[i].clone()).collect();
    records.clone_from_slice(&sorted);
}

/// Adds `records` to the index in the open transaction.
pub fn add_records(
    tx: &Transaction<'_>,
    mut records: Vec<BundleRecord>,
    opts: &AddOptions,
) -> anyhow::Result<AddReport> {
    let mut report = AddReport::default();
    let mut seen = BTreeSet::new();
    for r in &records {
        if !seen.insert(r.name.clone()) {
            bail!(
                "bundle {} is given twice in this add (bundle names are CSV names and must be unique)",
                r.name
            );
        }
    }
    let had_bundles: bool =
        tx.query_row("SELECT EXISTS(SELECT 1 FROM operatorbundle)", [], |r| {
            r.get(0)
        })?;
    let mut by_pkg: BTreeMap<String, Vec<BundleRecord>> = BTreeMap::new();
    for r in records.drain(..) {
        by_pkg.entry(r.package.clone()).or_default().push(r);
    }
    for (pkg, mut recs) in by_pkg {
        apply_order(&mut recs);
        let existing = existing_bundles(tx, &pkg)?;
        let prior_default: Option<String> = tx
            .query_row(
                "SELECT default_channel FROM package WHERE name = ?",
                [&pkg],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        let mode_name = match opts.mode {
            Mode::Replaces => "replaces",
            Mode::Semver => "semver",
            Mode::SemverSkipPatch => "semver-skippatch",
        };
        for r in &recs {
            insert_bundle(tx, r).with_context(|| format!("adding {}", r.name))?;
            report.added.push(r.name.clone());
        }
        // Default channel: the last applied bundle that names one wins, as
        // with one-by-one adds; otherwise the package keeps its own.
        let mut default_channel = prior_default.clone();
        for r in &recs {
            // opm's AnnotationsFile.GetDefaultChannelName: the annotation,
            // or the only channel of a single-channel bundle.
            if let Some(d) = &r.default_channel {
                default_channel = Some(d.clone());
            } else if r.channels.len() == 1 && default_channel.is_none() {
                default_channel = Some(r.channels[0].clone());
            }
        }
        let mut graph = PackageGraph {
            name: pkg.clone(),
            default_channel: String::new(),
            ..Default::default()
        };
        let layout;
        match opts.mode {
            Mode::Replaces => {
                layout = Layout::Replaces;
                let mut heads: BTreeMap<String, String> = BTreeMap::new();
                let mut stmt = tx.prepare(
                    "SELECT name, head_operatorbundle_name FROM channel WHERE package_name = ?",
                )?;
                for row in stmt.query_map([&pkg], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })? {
                    let (c, h) = row?;
                    heads.insert(c, h);
                }
                for r in &recs {
                    for c in &r.channels {
                        heads.insert(c.clone(), r.name.clone());
                    }
                }
                // Edges come from each bundle's own replaces/skips (columns).
                let mut edges: BTreeMap<String, Edges> = BTreeMap::new();
                let mut all = tx.prepare("SELECT name, replaces, skips FROM operatorbundle")?;
                for row in all.query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, Option<String>>(2)?,
                    ))
                })? {
                    let (n, rep, sk) = row?;
                    edges.insert(
                        n,
                        Edges {
                            replaces: rep.unwrap_or_default(),
                            skips: split_skips(sk.as_deref()),
                        },
                    );
                }
                for c in heads.keys() {
                    graph.edges.insert(c.clone(), edges.clone());
                }
                graph.heads = heads;
            }
            Mode::Semver | Mode::SemverSkipPatch => {
                layout = Layout::Graph;
                let mut mbs = Vec::new();
                for e in &existing {
                    let version = semver::Version::parse(&e.version).map_err(|err| {
                        anyhow::anyhow!(
                            "bundle {} in the index has version {:?}, not semver ({err}); semver modes need semver versions",
                            e.name, e.version
                        )
                    })?;
                    mbs.push(modes::ModeBundle {
                        name: e.name.clone(),
                        package: pkg.clone(),
                        version,
                        channels: e.channels.iter().cloned().collect(),
                        default_channel: None,
                        replaces: e.replaces.clone(),
                        skips: e.skips.clone(),
                        skip_range: e.skip_range.clone(),
                    });
                }
                for r in &recs {
                    let version = r.semver().ok_or_else(|| {
                        anyhow::anyhow!(
                            "bundle {}: spec.version {:?} is not semver; --mode {mode_name} orders bundles by semver",
                            r.name, r.version
                        )
                    })?;
                    mbs.push(modes::ModeBundle {
                        name: r.name.clone(),
                        package: pkg.clone(),
                        version,
                        channels: r.channels.clone(),
                        default_channel: r.default_channel.clone(),
                        replaces: r.replaces.clone(),
                        skips: r.skips.clone(),
                        skip_range: r.skip_range.clone(),
                    });
                }
                let entries = modes::channel_entries(opts.mode, &mbs)
                    .map_err(|e| anyhow::anyhow!("package {pkg}: {e}"))?;
                for (c, es) in entries {
                    let head = channel_head(&es)
                        .ok_or_else(|| anyhow::anyhow!("package {pkg}: channel {c} has no head"))?;
                    graph.heads.insert(c.clone(), head);
                    graph.edges.insert(c, entries_to_edges(&es));
                }
            }
        }
        graph.default_channel = default_channel.ok_or_else(|| {
            anyhow::anyhow!(
                "package {pkg}: no default channel: none of its bundles sets {} and the index has none for it",
                crate::bundle::keys::DEFAULT_CHANNEL
            )
        })?;
        write_package(tx, layout, &graph, true, Some(mode_name))?;
        // opm's batch add fails here with "add prunes bundle ... incorrect
        // channel head" when a bundle of the batch ends up in no channel;
        // adding the same bundles one by one succeeds and leaves them
        // stranded. Do what one-by-one adds do, and report them.
        for name in existing
            .iter()
            .map(|e| e.name.clone())
            .chain(recs.iter().map(|r| r.name.clone()))
        {
            let inside: bool = tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM channel_entry WHERE operatorbundle_name = ? AND package_name = ?)",
                params![name, pkg],
                |r| r.get(0),
            )?;
            if !inside {
                report.stranded.push(name);
            }
        }
        report.packages.insert(pkg);
    }
    let clear = !opts.keep_content && (opts.mode != Mode::Replaces || had_bundles);
    if clear {
        clear_non_head_bundles(tx)?;
    }
    Ok(report)
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

/// opm's `ClearNonHeadBundles`: drop the manifests of bundles that have an
/// image reference and head no channel (OLM pulls those from the image).
pub fn clear_non_head_bundles(tx: &Transaction<'_>) -> anyhow::Result<usize> {
    Ok(tx.execute(
        "update operatorbundle set bundle = null, csv = null
         where (bundlepath != null or bundlepath != '')
         and name not in (select operatorbundle.name from operatorbundle join channel on channel.head_operatorbundle_name = operatorbundle.name)",
        [],
    )?)
}
