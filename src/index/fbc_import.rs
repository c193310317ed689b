//! FBC to SQLite (`index add --from-fbc`): the inverse of render, so that
//! sqlite → FBC → sqlite gives the same rows.

use std::collections::{BTreeMap, BTreeSet};

use super::error::{bail, fail, Context, Res};
use base64::Engine;
use rusqlite::Transaction;
use serde_json::Value;

use super::add::{self, entries_to_edges, Layout, PackageGraph};
use super::record::{ApiKey, BundleRecord};
use crate::bundle::Gvk;
use crate::fbc::DeclarativeConfig;

fn s(v: &Value, k: &str) -> String {
    crate::gojson::struct_str(v, k).to_string()
}

/// Builds the record of an FBC bundle.
fn record_of(
    b: &crate::fbc::Bundle,
    channels: Vec<String>,
    entry: Option<&crate::fbc::ChannelEntry>,
) -> Res<BundleRecord> {
    let mut objects: Vec<Value> = Vec::new();
    for p in b
        .properties
        .iter()
        .filter(|p| p.kind == "olm.bundle.object")
    {
        let data = p.str_field("data");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .with_context(|| format!("bundle {}: olm.bundle.object data is not base64", b.name))?;
        let v: Value = serde_json::from_slice(&bytes)
            .with_context(|| format!("bundle {}: olm.bundle.object data is not JSON", b.name))?;
        objects.push(v);
    }
    let csv = objects
        .iter()
        .find(|o| o.get("kind").and_then(Value::as_str) == Some("ClusterServiceVersion"));
    let mut csv_json = String::new();
    let mut bundle_json = String::new();
    for o in &objects {
        let line = crate::gojson::to_string(o) + "\n";
        bundle_json.push_str(&line);
        if Some(o) == csv {
            csv_json = line;
        }
    }
    let typed = match csv {
        Some(c) => Some(crate::bundle::Csv::from_json(c).map_err(|e| {
            fail!(
                "bundle {}: CSV does not decode at {}: {}",
                b.name,
                e.path,
                e.message
            )
        })?),
        None => None,
    };
    let version = b
        .properties
        .iter()
        .find(|p| p.kind == "olm.package")
        .map(|p| s(&p.value, "version"))
        .unwrap_or_default();
    // Plurals are not in FBC: take them from the CRDs and the CSV when the
    // bundle carries them, else guess the usual lower-case plural.
    let mut plurals: BTreeMap<(String, String), String> = BTreeMap::new();
    for o in &objects {
        if o.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition") {
            let g = o
                .pointer("/spec/group")
                .and_then(Value::as_str)
                .unwrap_or("");
            let k = o
                .pointer("/spec/names/kind")
                .and_then(Value::as_str)
                .unwrap_or("");
            let p = o
                .pointer("/spec/names/plural")
                .and_then(Value::as_str)
                .unwrap_or("");
            plurals.insert((g.into(), k.into()), p.into());
        }
    }
    if let Some(c) = &typed {
        for d in c.spec.crds.owned.iter().chain(&c.spec.crds.required) {
            let (plural, group) = d.plural_and_group();
            plurals
                .entry((group.into(), d.kind.clone().unwrap_or_default()))
                .or_insert_with(|| plural.into());
        }
        for a in c
            .spec
            .api_services
            .owned
            .iter()
            .chain(&c.spec.api_services.required)
        {
            plurals
                .entry((
                    a.group.clone().unwrap_or_default(),
                    a.kind.clone().unwrap_or_default(),
                ))
                .or_insert_with(|| a.name.clone().unwrap_or_default());
        }
    }
    let plural_of = |g: &str, k: &str| {
        plurals
            .get(&(g.to_string(), k.to_string()))
            .cloned()
            .unwrap_or_else(|| format!("{}s", k.to_lowercase()))
    };
    let mut provided = BTreeSet::new();
    let mut required = BTreeSet::new();
    let mut properties = Vec::new();
    let mut dependencies = Vec::new();
    for p in &b.properties {
        match p.kind.as_str() {
            "olm.bundle.object" | "olm.csv.metadata" => {}
            "olm.gvk" => {
                let gvk = Gvk::from_json(&p.value);
                properties.push((p.kind.clone(), gvk.to_json_string()));
                let plural = plural_of(&gvk.group, &gvk.kind);
                provided.insert(ApiKey::new(gvk, plural));
            }
            "olm.gvk.required" => {
                let gvk = Gvk::from_json(&p.value);
                dependencies.push(("olm.gvk".to_string(), gvk.to_json_string()));
                let plural = plural_of(&gvk.group, &gvk.kind);
                required.insert(ApiKey::new(gvk, plural));
            }
            "olm.package.required" => {
                let mut m = serde_json::Map::new();
                m.insert("packageName".into(), s(&p.value, "packageName").into());
                m.insert("version".into(), s(&p.value, "versionRange").into());
                dependencies.push((
                    "olm.package".into(),
                    crate::gojson::to_string(&Value::Object(m)),
                ));
            }
            "olm.constraint" => {
                dependencies.push((p.kind.clone(), crate::gojson::to_string(&p.value)))
            }
            _ => properties.push((p.kind.clone(), crate::gojson::to_string(&p.value))),
        }
    }
    let mut images = BTreeSet::new();
    match &typed {
        Some(c) => {
            for ri in &c.spec.related_images {
                images.extend(ri.image.clone().filter(|i| !i.is_empty()));
            }
            if let Some(install) = &c.spec.install {
                for d in &install.spec.deployments {
                    images.extend(d.images().into_iter().filter(|i| !i.is_empty()));
                }
            }
        }
        None => {
            for ri in &b.related_images {
                if !ri.image.is_empty() && ri.image != b.image {
                    images.insert(ri.image.clone());
                }
            }
        }
    }
    let (replaces, skips) = match &typed {
        Some(c) => (
            c.spec.replaces.clone().unwrap_or_default(),
            c.spec.skips.clone(),
        ),
        None => entry
            .map(|e| (e.replaces.clone(), e.skips.clone()))
            .unwrap_or_default(),
    };
    let skip_range = match &typed {
        Some(c) => c.skip_range().unwrap_or("").to_string(),
        None => entry.map(|e| e.skip_range.clone()).unwrap_or_default(),
    };
    Ok(BundleRecord {
        name: b.name.clone(),
        package: b.package.clone(),
        channels,
        default_channel: None,
        csv_json,
        bundle_json,
        objects: objects.iter().map(crate::gojson::to_string).collect(),
        bundle_path: b.image.clone(),
        version,
        skip_range,
        replaces,
        skips,
        substitutes_for: typed
            .as_ref()
            .and_then(|c| c.annotation("olm.substitutesFor"))
            .unwrap_or("")
            .to_string(),
        images,
        provided,
        required,
        properties,
        dependencies,
    })
}

/// What an FBC import did.
#[derive(Clone, Debug, Default)]
pub struct ImportReport {
    /// Packages added.
    pub packages: Vec<String>,
    /// What the SQLite schema cannot hold and was left out.
    pub warnings: Vec<String>,
}

/// Writes every package of `cfg` into the index (packages must be new).
///
/// `olm.deprecations` keep what opm's SQLite schema can hold: a bundle
/// entry becomes a `deprecated` row and an `olm.deprecated` property, as
/// `deprecatetruncate` leaves them (the message is lost; a later add to the
/// package truncates its channels below that bundle, as opm does after
/// `deprecatetruncate`). A warning names everything left out: messages,
/// package and channel entries (no SQLite form), entries naming a bundle
/// the package lacks, and bundles that head a channel (opm never leaves a
/// deprecated head: its next add would drop the channel). A bundle that
/// carries `olm.deprecated` (what rendering a truncated index gives) gets
/// its `deprecated` row back.
pub(crate) fn import(tx: &Transaction<'_>, cfg: &DeclarativeConfig) -> super::Result<ImportReport> {
    super::error::internal(|| import_steps(tx, cfg))
}

fn import_steps(tx: &Transaction<'_>, cfg: &DeclarativeConfig) -> Res<ImportReport> {
    let mut report = ImportReport::default();
    let mut bundle_deprecations: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for d in &cfg.deprecations {
        for e in &d.entries {
            match e.reference.schema.as_str() {
                "olm.bundle" => {
                    bundle_deprecations
                        .entry(d.package.as_str())
                        .or_default()
                        .insert(e.reference.name.as_str());
                }
                "olm.package" => report.warnings.push(format!(
                    "package {}: olm.deprecations: the package's deprecation ({:?}) not imported: an SQLite index has no package deprecations",
                    d.package, e.message
                )),
                "olm.channel" => report.warnings.push(format!(
                    "package {}: olm.deprecations: deprecation of channel {} ({:?}) not imported: an SQLite index has no channel deprecations",
                    d.package, e.reference.name, e.message
                )),
                other => report.warnings.push(format!(
                    "package {}: olm.deprecations: entry of schema {other:?} not imported",
                    d.package
                )),
            }
        }
    }
    let mut done = Vec::new();
    let mut pkgs: Vec<&crate::fbc::Package> = cfg.packages.iter().collect();
    pkgs.sort_by(|a, b| a.name.cmp(&b.name));
    for p in pkgs {
        let exists: bool = tx.query_row(
            "SELECT EXISTS(SELECT 1 FROM package WHERE name = ?)",
            [&p.name],
            |r| r.get(0),
        )?;
        if exists {
            bail!(
                "package {} is already in the index; remove it first (`index rm --packages {}`)",
                p.name,
                p.name
            );
        }
        let chans: Vec<&crate::fbc::Channel> = cfg
            .channels
            .iter()
            .filter(|c| c.package == p.name)
            .collect();
        let mut membership: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        let mut first_entry: BTreeMap<&str, &crate::fbc::ChannelEntry> = BTreeMap::new();
        let mut graph = PackageGraph {
            name: p.name.clone(),
            default_channel: p.default_channel.clone(),
            ..Default::default()
        };
        for c in &chans {
            for e in &c.entries {
                membership.entry(&e.name).or_default().push(c.name.clone());
                first_entry.entry(&e.name).or_insert(e);
            }
            let head = add::channel_head(&c.entries)
                .ok_or_else(|| fail!("package {}, channel {}: no channel head", p.name, c.name))?;
            graph.heads.insert(c.name.clone(), head);
            graph
                .edges
                .insert(c.name.clone(), entries_to_edges(&c.entries));
        }
        let wanted = bundle_deprecations
            .remove(p.name.as_str())
            .unwrap_or_default();
        let heads: BTreeSet<&str> = graph.heads.values().map(String::as_str).collect();
        let mut deprecated = Vec::new();
        let mut seen = BTreeSet::new();
        let mut kept = 0usize;
        for b in cfg.bundles.iter().filter(|b| b.package == p.name) {
            let channels = membership.get(b.name.as_str()).cloned().unwrap_or_default();
            let mut rec = record_of(b, channels, first_entry.get(b.name.as_str()).copied())?;
            if wanted.contains(b.name.as_str()) {
                seen.insert(b.name.as_str());
                let marked = rec
                    .properties
                    .iter()
                    .any(|(t, _)| t == add::DEPRECATED_TYPE);
                if heads.contains(b.name.as_str()) {
                    if !marked {
                        report.warnings.push(format!(
                            "package {}: olm.deprecations: bundle {} heads a channel, its deprecation not imported (opm never keeps a deprecated channel head in SQLite: the next add would drop the channel)",
                            p.name, b.name
                        ));
                    }
                } else {
                    kept += 1;
                    if !marked {
                        rec.properties
                            .push((add::DEPRECATED_TYPE.to_string(), "{}".to_string()));
                    }
                }
            }
            add::insert_bundle(tx, &rec)?;
            if rec
                .properties
                .iter()
                .any(|(t, _)| t == add::DEPRECATED_TYPE)
            {
                deprecated.push(rec.name.clone());
            }
        }
        for name in wanted.difference(&seen) {
            report.warnings.push(format!(
                "package {}: olm.deprecations: bundle {} is not in the package, its deprecation not imported",
                p.name, name
            ));
        }
        if kept > 0 {
            report.warnings.push(format!(
                "package {}: olm.deprecations: {kept} bundle deprecation{s} kept as `deprecated` rows without {its} message{s} (an SQLite index has no deprecation messages; a later add to the package truncates its channels below {them}, as after deprecatetruncate)",
                p.name,
                s = if kept == 1 { "" } else { "s" },
                its = if kept == 1 { "its" } else { "their" },
                them = if kept == 1 { "it" } else { "them" },
            ));
        }
        add::write_package(tx, Layout::Replaces, &graph, false, None)?;
        // After the channels, so the import gives back what was rendered;
        // later adds truncate at these bundles, as after deprecatetruncate.
        for name in &deprecated {
            tx.execute(
                "INSERT OR REPLACE INTO deprecated(operatorbundle_name) VALUES (?)",
                [name],
            )?;
        }
        done.push(p.name.clone());
    }
    for (pkg, names) in &bundle_deprecations {
        report.warnings.push(format!(
            "package {pkg}: olm.deprecations of {} bundle{} not imported: the catalog has no such package",
            names.len(),
            if names.len() == 1 { "" } else { "s" }
        ));
    }
    report.packages = done;
    Ok(report)
}
