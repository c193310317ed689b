//! Removing, pruning, deprecating, listing and exporting (pkg/sqlite/remove.go,
//! deprecate.go, stranded.go, pkg/lib/indexer/).

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{bail, Context};
use rusqlite::{params, OptionalExtension, Transaction};

/// Deletes one bundle and everything that refers to it by name.
fn rm_bundle(tx: &Transaction<'_>, name: &str) -> anyhow::Result<()> {
    // Rows whose composite key has a NULL (no version or image) escape the
    // cascade in opm's schema; delete them by name as well.
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
}

/// Drops `api` rows no bundle provides or requires any more.
fn rm_dangling_apis(tx: &Transaction<'_>) -> anyhow::Result<()> {
    tx.execute(
        "DELETE FROM api WHERE NOT EXISTS (SELECT 1 FROM api_provider p WHERE p.group_name = api.group_name AND p.version = api.version AND p.kind = api.kind)
         AND NOT EXISTS (SELECT 1 FROM api_requirer r WHERE r.group_name = api.group_name AND r.version = api.version AND r.kind = api.kind)",
        [],
    )?;
    Ok(())
}

/// Names of all packages.
pub fn package_names(conn: &rusqlite::Connection) -> anyhow::Result<Vec<String>> {
    let mut st = conn.prepare("SELECT name FROM package ORDER BY name")?;
    let v = st
        .query_map([], |r| r.get(0))?
        .collect::<Result<Vec<String>, _>>()?;
    Ok(v)
}

/// `index rm --packages`: removes packages with their bundles.
pub fn remove_packages(tx: &Transaction<'_>, packages: &[String]) -> anyhow::Result<Vec<String>> {
    let known: BTreeSet<String> = package_names(tx)?.into_iter().collect();
    for p in packages {
        if !known.contains(p) {
            bail!(
                "package {p} is not in the index (packages: {})",
                known.iter().cloned().collect::<Vec<_>>().join(", ")
            );
        }
    }
    let mut removed = Vec::new();
    for p in packages {
        let mut st = tx.prepare(
            "SELECT DISTINCT operatorbundle_name FROM channel_entry WHERE package_name = ?",
        )?;
        let names: Vec<String> = st.query_map([p], |r| r.get(0))?.collect::<Result<_, _>>()?;
        tx.execute("DELETE FROM channel_entry WHERE package_name = ?", [p])?;
        tx.execute("DELETE FROM channel WHERE package_name = ?", [p])?;
        tx.execute("DELETE FROM package WHERE name = ?", [p])?;
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
        removed.push(p.clone());
    }
    rm_dangling_apis(tx)?;
    Ok(removed)
}

/// `index prune --keep`: removes every package not kept.
pub fn prune(tx: &Transaction<'_>, keep: &[String]) -> anyhow::Result<Vec<String>> {
    let all = package_names(tx)?;
    for k in keep {
        if !all.contains(k) {
            bail!("package {k} to keep is not in the index; nothing was changed");
        }
    }
    let drop: Vec<String> = all.into_iter().filter(|p| !keep.contains(p)).collect();
    remove_packages(tx, &drop)
}

/// `index prune-stranded`: removes bundles that are in no channel.
pub fn prune_stranded(tx: &Transaction<'_>) -> anyhow::Result<Vec<String>> {
    let mut st = tx.prepare(
        "SELECT name FROM operatorbundle WHERE name NOT IN (SELECT operatorbundle_name FROM channel_entry) ORDER BY name",
    )?;
    let names: Vec<String> = st.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    for n in &names {
        rm_bundle(tx, n)?;
    }
    rm_dangling_apis(tx)?;
    Ok(names)
}

/// `index deprecatetruncate --bundles`: marks each bundle deprecated and
/// removes every bundle it replaces or skips, down its replaces chain
/// (opm's `DeprecateBundle`). `reference` is a bundle image or a CSV name.
pub fn deprecate_truncate(tx: &Transaction<'_>, reference: &str) -> anyhow::Result<Vec<String>> {
    let found: Option<(String, Option<String>, Option<String>)> = tx
        .query_row(
            "SELECT name, version, bundlepath FROM operatorbundle WHERE bundlepath = ?1 OR name = ?1 LIMIT 1",
            [reference],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((name, version, path)) = found else {
        bail!("bundle {reference} is not in the index (give its image reference or CSV name)");
    };
    let mut tail = BTreeSet::new();
    let mut next = name.clone();
    let mut guard = BTreeSet::new();
    while guard.insert(next.clone()) {
        let row: Option<(Option<String>, Option<String>)> = tx
            .query_row(
                "SELECT replaces, skips FROM operatorbundle WHERE name = ?",
                [&next],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((replaces, skips)) = row else { break };
        for s in super::add::split_skips(skips.as_deref()) {
            tail.insert(s);
        }
        let Some(r) = replaces.filter(|r| !r.is_empty()) else {
            break;
        };
        let default_head: bool = tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM channel c JOIN package p ON p.name = c.package_name AND p.default_channel = c.name WHERE c.head_operatorbundle_name = ?)",
            [&r],
            |x| x.get(0),
        )?;
        if default_head {
            bail!("cannot deprecate {name}: it would remove {r}, the head of its package's default channel (opm: \"cannot deprecate default channel head\")");
        }
        tail.insert(r.clone());
        next = r;
    }
    tail.remove(&name);
    for b in &tail {
        tx.execute(
            "UPDATE channel_entry SET replaces = NULL WHERE replaces IN (SELECT entry_id FROM channel_entry WHERE operatorbundle_name = ?)",
            [b],
        )?;
        tx.execute(
            "DELETE FROM channel_entry WHERE operatorbundle_name = ?",
            [b],
        )?;
        rm_bundle(tx, b)?;
    }
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
        "INSERT OR IGNORE INTO deprecated(operatorbundle_name) VALUES (?)",
        [&name],
    )?;
    rm_dangling_apis(tx)?;
    Ok(tail.into_iter().collect())
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
pub fn list_packages(conn: &rusqlite::Connection) -> anyhow::Result<Vec<PackageRow>> {
    let mut st = conn.prepare(
        "SELECT p.name, p.default_channel, p.add_mode,
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
        .collect::<Result<_, _>>()?;
    Ok(v)
}

/// Lists channels.
pub fn list_channels(conn: &rusqlite::Connection) -> anyhow::Result<Vec<ChannelRow>> {
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
}

/// Lists bundles per channel (from the rendered catalog).
pub fn list_bundles(index: &super::Index) -> anyhow::Result<Vec<BundleRow>> {
    let cfg = super::render::index_to_fbc(index)?;
    let mut out = Vec::new();
    for c in &cfg.channels {
        for e in &c.entries {
            let b = cfg
                .bundles
                .iter()
                .find(|b| b.name == e.name && b.package == c.package);
            let version = b
                .and_then(|b| b.properties.iter().find(|p| p.kind == "olm.package"))
                .and_then(|p| p.value.get("version").and_then(|v| v.as_str()))
                .unwrap_or("")
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
    Ok(out)
}

/// `index export`: writes a package in the package-manifest layout
/// (`DIR/<package>/package.yaml` and one `DIR/<package>/<version>/`
/// bundle directory per bundle with `manifests/` and `metadata/`).
pub fn export_package(
    index: &super::Index,
    package: &str,
    to: &Path,
) -> anyhow::Result<Vec<String>> {
    let only: BTreeSet<String> = [package.to_string()].into();
    let cfg = super::render::index_to_fbc_filtered(index, Some(&only))?;
    let Some(pkg) = cfg.packages.first() else {
        bail!("package {package} is not in the index");
    };
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
        channels.push(serde_json::json!({"name": c.name, "currentCSV": head.unwrap_or_default()}));
    }
    let manifest = serde_json::json!({
        "packageName": package,
        "channels": channels,
        "defaultChannel": pkg.default_channel,
    });
    std::fs::write(root.join("package.yaml"), yaml_serde::to_string(&manifest)?)?;
    let mut written = Vec::new();
    for b in &cfg.bundles {
        if b.objects.is_empty() {
            bail!(
                "bundle {} has no manifests in the index (opm keeps only channel heads' manifests; rebuild with --keep-content, or pull {})",
                b.name,
                if b.image.is_empty() { "its image" } else { &b.image }
            );
        }
        let version = b
            .properties
            .iter()
            .find(|p| p.kind == "olm.package")
            .and_then(|p| p.value.get("version").and_then(|v| v.as_str()))
            .unwrap_or(&b.name)
            .to_string();
        let dir = root.join(&version);
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
        written.push(b.name.clone());
    }
    Ok(written)
}
