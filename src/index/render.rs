//! Index and bundle directories as file-based catalogs, the way `opm render`
//! builds them (pkg/sqlite/conversion.go, pkg/api/api_to_model.go,
//! alpha/action/render.go).

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine;
use serde_json::{json, Value};

use super::db::Index;
use super::error::Res;
use super::tables::{self, EntryEdges};
use crate::bundle::Gvk;
use crate::fbc::{self, ChannelEntry, DeclarativeConfig, Property, RelatedImage};
use crate::gojson;

fn parse_value(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.to_string()))
}

/// Splits the `bundle` column (concatenated JSON objects) into objects.
pub fn split_objects(bundle: &str) -> Vec<String> {
    serde_json::Deserializer::from_str(bundle)
        .into_iter::<Value>()
        .filter_map(Result::ok)
        .map(|v| crate::gojson::to_string(&v))
        .collect()
}

/// Per bundle of a channel: its edges.
type ChannelTargets = BTreeMap<String, EntryEdges>;

/// The index as FBC (packages, channels, bundles), as `opm render
/// index.db` gives it.
pub fn index_to_fbc(index: &Index) -> super::Result<DeclarativeConfig> {
    index_to_fbc_filtered(index, None)
}

/// Like [`index_to_fbc`], for the named packages only (all if `None`).
pub fn index_to_fbc_filtered(
    index: &Index,
    only: Option<&BTreeSet<String>>,
) -> super::Result<DeclarativeConfig> {
    let mut cfg = DeclarativeConfig::default();
    for part in index_packages(index, only)? {
        let part = part?;
        cfg.packages.extend(part.packages);
        cfg.channels.extend(part.channels);
        cfg.bundles.extend(part.bundles);
    }
    Ok(cfg)
}

/// The index as FBC one package at a time, in package-name order: each
/// item holds one package, its channels and its bundles (with their
/// manifests), read when the item is. Concatenated, the items are
/// [`index_to_fbc_filtered`]'s catalog; written one by one
/// ([`crate::fbc::write`] groups by package, in name order) they give the
/// same bytes, while memory holds one package's manifests, not the whole
/// index's. Everything but the manifests is read up front.
pub fn index_packages<'a>(
    index: &'a Index,
    only: Option<&BTreeSet<String>>,
) -> super::Result<IndexPackages<'a>> {
    super::error::internal(|| IndexPackages::read(index, only))
}

/// The iterator of [`index_packages`].
pub struct IndexPackages<'a> {
    conn: &'a rusqlite::Connection,
    /// (name, default channel), by name.
    packages: std::vec::IntoIter<(String, String)>,
    /// Bundle name to (bundlepath, version).
    keys: BTreeMap<String, (String, String)>,
    details: BTreeMap<String, tables::BundleDetails>,
    props: BTreeMap<String, Vec<(String, String)>>,
    deps: BTreeMap<String, Vec<(String, String)>>,
    db_images: BTreeMap<String, BTreeSet<String>>,
    provided: BTreeMap<String, BTreeSet<Gvk>>,
    required: BTreeMap<String, BTreeSet<Gvk>>,
    /// (package, channel) to its bundles and their edges.
    members: BTreeMap<(String, String), ChannelTargets>,
    heads: BTreeMap<(String, String), String>,
}

impl Iterator for IndexPackages<'_> {
    type Item = super::Result<DeclarativeConfig>;

    fn next(&mut self) -> Option<Self::Item> {
        let (pkg, default_channel) = self.packages.next()?;
        Some(super::error::internal(|| {
            self.package(&pkg, &default_channel)
        }))
    }
}

impl<'a> IndexPackages<'a> {
    fn read(index: &'a Index, only: Option<&BTreeSet<String>>) -> Res<Self> {
        let conn = &index.conn;
        let graph = tables::read_graph(conn)?;
        let details = tables::read_bundle_details(conn)?;
        let keys: BTreeMap<String, (String, String)> = graph
            .bundles
            .into_iter()
            .map(|k| {
                (
                    k.name,
                    (
                        k.bundle_path.unwrap_or_default(),
                        k.version.unwrap_or_default(),
                    ),
                )
            })
            .collect();
        let mut props: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        for p in graph.properties {
            props.entry(p.bundle).or_default().push((p.kind, p.value));
        }
        let mut deps: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
        for p in graph.dependencies {
            deps.entry(p.bundle).or_default().push((p.kind, p.value));
        }
        let mut db_images: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (n, i) in graph.related_images {
            db_images.entry(n).or_default().insert(i);
        }
        let mut provided: BTreeMap<String, BTreeSet<Gvk>> = BTreeMap::new();
        let mut required: BTreeMap<String, BTreeSet<Gvk>> = BTreeMap::new();
        for (rows_, map) in [
            (graph.provided, &mut provided),
            (graph.required, &mut required),
        ] {
            for (n, g, v, k) in rows_ {
                map.entry(n).or_default().insert(Gvk::new(g, v, k));
            }
        }
        // Entries: channel -> bundle -> its edges, as opm's ListBundles
        // query reads them (see `tables::entry_edges`).
        let mut members: BTreeMap<(String, String), ChannelTargets> = BTreeMap::new();
        for ((p, c, b), edges) in tables::entry_edges(&graph.entries) {
            if keys.contains_key(&b) {
                members.entry((p, c)).or_default().insert(b, edges);
            }
        }
        let packages: Vec<(String, String)> = graph
            .packages
            .into_iter()
            .filter(|p| only.is_none_or(|o| o.contains(&p.name)))
            .map(|p| (p.name, p.default_channel))
            .collect();
        let heads: BTreeMap<(String, String), String> = graph
            .channels
            .into_iter()
            .map(|c| ((c.package, c.name), c.head))
            .collect();
        Ok(IndexPackages {
            conn,
            packages: packages.into_iter(),
            keys,
            details,
            props,
            deps,
            db_images,
            provided,
            required,
            members,
            heads,
        })
    }

    /// The `csv` and `bundle` columns of a bundle (`None` when NULL or
    /// when it has no row).
    fn content(&self, name: &str) -> Res<(Option<String>, Option<String>)> {
        let d = self.details.get(name).cloned().unwrap_or_default();
        Ok(if d.has_csv || d.has_bundle {
            tables::read_content(self.conn, name)?.unwrap_or_default()
        } else {
            (None, None)
        })
    }

    /// One package, its channels and its bundles.
    fn package(&self, pkg: &str, default_channel: &str) -> Res<DeclarativeConfig> {
        let mut cfg = DeclarativeConfig::default();
        let mut icon = None;
        if let Some(head) = self
            .heads
            .get(&(pkg.to_string(), default_channel.to_string()))
        {
            if self.keys.contains_key(head) {
                if let (Some(csv), _) = self.content(head)? {
                    icon = package_icon(&csv);
                }
            }
        }
        cfg.packages.push(fbc::Package {
            schema: fbc::SCHEMA_PACKAGE.into(),
            name: pkg.to_string(),
            default_channel: default_channel.to_string(),
            icon,
            description: String::new(),
            properties: vec![],
        });
        let mut bundles: BTreeSet<&String> = BTreeSet::new();
        for ((p, c), members) in self.members.range((pkg.to_string(), String::new())..) {
            if p != pkg {
                break;
            }
            let mut entries = Vec::new();
            for (b, targets) in members {
                let skip_range = self
                    .details
                    .get(b)
                    .map(|d| d.skip_range.clone())
                    .unwrap_or_default();
                entries.push(entry_of(b, skip_range, targets));
                bundles.insert(b);
            }
            entries.sort_by(|a: &ChannelEntry, b| a.name.cmp(&b.name));
            cfg.channels.push(fbc::Channel {
                schema: fbc::SCHEMA_CHANNEL.into(),
                name: c.clone(),
                package: pkg.to_string(),
                entries,
                properties: vec![],
            });
        }
        for name in bundles {
            cfg.bundles.push(self.bundle(pkg, name)?);
        }
        Ok(cfg)
    }

    /// One bundle of `pkg`, with its manifests.
    fn bundle(&self, pkg: &str, name: &str) -> Res<fbc::Bundle> {
        let (path, version) = self.keys.get(name).cloned().unwrap_or_default();
        let (csv, bundle) = self.content(name)?;
        // (type, value as opm holds it): opm's ListBundles gives each
        // distinct property row once (uniqueProps), and
        // convertAPIBundleToModelProperties builds the rest.
        let mut raw: Vec<(String, String)> = Vec::new();
        let push = |raw: &mut Vec<(String, String)>, t: &str, v: String| {
            if !raw.iter().any(|(rt, rv)| rt == t && *rv == v) {
                raw.push((t.to_string(), v));
            }
        };
        let mut gvks: BTreeSet<Gvk> = BTreeSet::new();
        let mut gvks_required: BTreeSet<Gvk> = BTreeSet::new();
        let mut has_package = false;
        for (t, v) in self.props.get(name).map(Vec::as_slice).unwrap_or(&[]) {
            match t.as_str() {
                "olm.gvk" => {
                    gvks.insert(Gvk::from_json(&parse_value(v)));
                }
                "olm.package" => {
                    has_package = true;
                    push(&mut raw, t, v.clone());
                }
                _ => push(&mut raw, t, v.clone()),
            }
        }
        for (t, v) in self.deps.get(name).map(Vec::as_slice).unwrap_or(&[]) {
            let v = parse_value(v);
            match t.as_str() {
                "olm.gvk" => {
                    gvks_required.insert(Gvk::from_json(&v));
                }
                "olm.package" => push(
                    &mut raw,
                    "olm.package.required",
                    // MustBuildPackageRequired of the decoded property.Package.
                    gojson::to_string(&json!({
                        "packageName": gojson::struct_str(&v, "packageName"),
                        "versionRange": gojson::struct_str(&v, "version"),
                    })),
                ),
                _ => {}
            }
        }
        if !has_package {
            push(
                &mut raw,
                "olm.package",
                gojson::to_string(&json!({"packageName": pkg, "version": version})),
            );
        }
        gvks.extend(self.provided.get(name).cloned().unwrap_or_default());
        gvks_required.extend(self.required.get(name).cloned().unwrap_or_default());
        for g in gvks {
            raw.push(("olm.gvk".into(), g.to_json_string()));
        }
        for g in gvks_required {
            raw.push(("olm.gvk.required".into(), g.to_json_string()));
        }
        let objects = bundle.as_deref().map(split_objects).unwrap_or_default();
        drop(bundle);
        // The bundle objects are built here, keys sorted: their values are
        // made once, not written and read back (they hold every manifest).
        // Their bytes, `{"data":"<base64>"}`, sort as their base64 does.
        let mut object_data: Vec<String> = objects
            .iter()
            .map(|o| base64::engine::general_purpose::STANDARD.encode(o.as_bytes()))
            .collect();
        // opm sorts them by type, then by the value's bytes; the bundle
        // objects then move to the end, in their order: they go last here.
        raw.sort();
        object_data.sort();
        // opm keeps each value as the bytes the index holds (RawMessage).
        let mut out: Vec<Property> = raw
            .iter()
            .map(|(t, v)| Property::from_text(t.as_str(), v, parse_value(v)))
            .chain(
                object_data
                    .into_iter()
                    .map(|data| Property::new("olm.bundle.object", json!({ "data": data }))),
            )
            .collect();
        // opm: the CSV's spec.relatedImages (none when the csv column was
        // cleared), then every image of the related_image table not
        // already there (populateDBRelatedImages), all sorted by image.
        let mut related_images = csv.as_deref().map(csv_related_images).unwrap_or_default();
        for img in self.db_images.get(name).into_iter().flatten() {
            if !related_images.iter().any(|r| r.image == *img) {
                related_images.push(RelatedImage {
                    name: String::new(),
                    image: img.clone(),
                });
            }
        }
        fbc::from_bundle::sort_related_images(&mut related_images);
        fbc::from_bundle::move_objects_to_end(&mut out);
        Ok(fbc::Bundle {
            schema: fbc::SCHEMA_BUNDLE.into(),
            name: name.to_string(),
            package: pkg.to_string(),
            image: path,
            properties: out,
            related_images,
            csv_json: csv.map(|c| c.trim_end().to_string()),
            objects,
        })
    }
}

/// The FBC entry of `name` in a channel (opm's `ListBundles` row: replaces
/// and skips from the entries, skipRange from the bundle).
fn entry_of(name: &str, skip_range: String, edges: &EntryEdges) -> ChannelEntry {
    ChannelEntry {
        name: name.to_string(),
        replaces: edges.replaces.clone().unwrap_or_default(),
        skips: edges.skips.clone(),
        skip_range,
    }
}

/// The package icon from the default channel head's CSV (opm decodes and
/// re-encodes it, dropping spaces if the data does not decode).
fn package_icon(csv: &str) -> Option<fbc::Icon> {
    let v: Value = serde_json::from_str(csv).ok()?;
    let icon = v.pointer("/spec/icon/0")?;
    let data = icon.get("base64data").and_then(Value::as_str).unwrap_or("");
    let media = icon.get("mediatype").and_then(Value::as_str).unwrap_or("");
    let engine = base64::engine::general_purpose::STANDARD;
    let bytes = engine
        .decode(data)
        .or_else(|_| engine.decode(data.replace(' ', "")))
        .ok()?;
    Some(fbc::Icon {
        base64data: engine.encode(bytes),
        mediatype: media.to_string(),
    })
}

/// `spec.relatedImages` of a CSV.
fn csv_related_images(csv: &str) -> Vec<RelatedImage> {
    let Ok(v) = serde_json::from_str::<Value>(csv) else {
        return vec![];
    };
    v.pointer("/spec/relatedImages")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|ri| RelatedImage {
                    name: ri
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    image: ri
                        .get("image")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Whether `path` is an SQLite database by its header (opm's `checkDBFile`):
/// what [`render_file`] renders as an index.
pub fn is_index_file(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && head == SQLITE_MAGIC
}

/// What `render` makes of a file (not a directory): an SQLite index (by its
/// header, as opm's `checkDBFile` sniffs it), or an FBC file by its
/// extension (`.yaml`, `.yml`, `.json`; opm renders FBC directories only).
/// Anything else is refused naming the file and what it looks like, as opm
/// refuses it with "unsupported file type".
pub fn render_file(path: &std::path::Path) -> super::Result<DeclarativeConfig> {
    use std::io::Read;
    let mut head = Vec::with_capacity(512);
    std::fs::File::open(path)
        .and_then(|f| f.take(512).read_to_end(&mut head))
        .map_err(|source| super::Error::Io {
            context: format!("reading {}", path.display()),
            source,
        })?;
    if head.starts_with(SQLITE_MAGIC) {
        let idx = Index::open_read(path)?;
        return index_to_fbc(&idx);
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if matches!(ext.as_str(), "yaml" | "yml" | "json") {
        return Ok(DeclarativeConfig::load_path(path)?);
    }
    let kind = if head.is_empty() {
        "an empty file"
    } else if head.contains(&0)
        || std::str::from_utf8(&head).is_err_and(|e| e.error_len().is_some())
    {
        "binary data"
    } else {
        "text"
    };
    Err(super::Error::UnsupportedFile {
        path: path.to_path_buf(),
        kind,
    })
}
