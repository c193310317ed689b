//! The SQLite index backend: answers as `opm registry serve` does
//! (operator-registry's `pkg/sqlite/query.go`), from tables read into memory
//! once. The index is only ever read here (read-only connection); the
//! `operatorbundle.bundle` column, which holds most of an index's bytes, is
//! read when a call needs a bundle's manifests.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::Error;
use rusqlite::{Connection, OpenFlags};
use serde_json::Value;

use super::model::*;
use crate::gojson;
use crate::index::tables;
use crate::proto;

/// One `channel_entry` row.
struct EntryRow {
    id: i64,
    channel: Str,
    package: Str,
    bundle: Str,
    replaces: Option<i64>,
    depth: i64,
}

/// The columns of an `operatorbundle` row that opm's `pk` index holds:
/// read at start from the index alone.
struct BundleRow {
    version: Option<Str>,
    bundle_path: Option<Str>,
}

/// The columns stored after `csv` and `bundle` in an `operatorbundle` row.
///
/// SQLite lays a row out column after column, so reaching them means walking
/// the overflow pages of the manifests: the whole file. They are read in the
/// background after start (ListBundles needs them) and per row when a call
/// reads that row's manifests anyway.
struct BundleDetails {
    skip_range: Str,
    /// `bundle` is not NULL.
    has_bundle: bool,
}

type Details = Arc<OnceLock<Result<HashMap<Str, BundleDetails>, String>>>;

/// Reads [`BundleDetails`] of every bundle.
fn read_details(path: &Path) -> Result<HashMap<Str, BundleDetails>, String> {
    let conn = open(path).map_err(|e| format!("{e:#}"))?;
    let rows = tables::read_bundle_details(&conn).map_err(|e| e.to_string())?;
    Ok(rows
        .into_iter()
        .map(|(name, d)| {
            (
                s(&name),
                BundleDetails {
                    skip_range: s(&d.skip_range),
                    has_bundle: d.has_bundle,
                },
            )
        })
        .collect())
}

/// A SQLite index held in memory.
pub struct SqliteRegistry {
    path: PathBuf,
    /// package name -> default channel (NULL reads as "").
    packages: BTreeMap<Str, Str>,
    /// (package, channel) -> head bundle name.
    channels: BTreeMap<(Str, Str), Str>,
    entries: Vec<EntryRow>,
    entry_by_id: HashMap<i64, usize>,
    /// Every (package, channel, bundle) that has a channel entry: the
    /// membership GetBundle and GetBundleForChannel join on, without a scan.
    members: HashSet<(Str, Str, Str)>,
    /// (package, channel, bundle) -> replaces and skips as opm's ListBundles
    /// query reads them from the entries.
    edges: HashMap<(Str, Str, Str), (Str, Vec<Str>)>,
    bundles: HashMap<Str, BundleRow>,
    details: Details,
    /// Bundle name -> `GetApisForEntry` answer with an empty manifest set.
    apis: HashMap<Str, (Vec<Gvk>, Vec<Gvk>)>,
    /// Bundle name -> ListBundles' provided and required GVKs (no plural).
    legacy_gvks: HashMap<Str, (Vec<Gvk>, Vec<Gvk>)>,
    /// Bundle name -> every (type, value, version, path) property row.
    properties: HashMap<Str, Vec<PropRow>>,
    dependencies: HashMap<Str, Vec<PropRow>>,
    /// Connections for reading manifests; sqlite connections are not Sync.
    pool: Mutex<Vec<Connection>>,
    /// The migrated copy `path` names, if the index had an older schema.
    _copy: Option<tempfile::TempPath>,
}

struct PropRow {
    kind: Str,
    value: Str,
    version: Option<String>,
    path: Option<String>,
}

fn open(path: &Path) -> super::Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| {
        Error::Index(crate::index::Error::sqlite(
            format!("opening SQLite index {}", path.display()),
            &e,
        ))
    })?;
    Ok(conn)
}

/// The `properties.value` opm queries for: `json.Marshal` of a Go map, keys sorted.
fn gvk_value(group: &str, version: &str, kind: &str) -> String {
    gojson::to_string(&serde_json::json!({"group": group, "kind": kind, "version": version}))
}

/// Go's yaml-or-json stream decoding of `operatorbundle.bundle`, each object
/// marshalled again (`registry.BundleStringToAPIBundle`).
fn split_bundle(text: &str) -> Result<(String, Vec<String>), String> {
    // What opm and `index add` store is already in that form: pass it on.
    if let Some(values) = gojson::canonical_values(text) {
        let csv = values
            .iter()
            .rfind(|v| v.kind == Some("ClusterServiceVersion"))
            .map(|v| v.text.to_string())
            .unwrap_or_default();
        return Ok((csv, values.iter().map(|v| v.text.to_string()).collect()));
    }
    let mut csv = String::new();
    let mut objects = Vec::new();
    let trimmed = text.trim_start();
    let values: Vec<Value> = if trimmed.starts_with('{') {
        serde_json::Deserializer::from_str(trimmed)
            .into_iter::<Value>()
            .collect::<Result<_, _>>()
            .map_err(|e| format!("error decoding bundle: {e}"))?
    } else {
        crate::yaml::parse_documents(text)
            .map_err(|e| format!("error decoding bundle: {}", e.message))?
            .into_iter()
            .map(|d| d.root.to_json())
            .filter(|v| !v.is_null())
            .collect()
    };
    for v in values {
        let json = gojson::to_string(&v);
        if v.get("kind").and_then(Value::as_str) == Some("ClusterServiceVersion") {
            csv = json.clone();
        }
        objects.push(json);
    }
    Ok((csv, objects))
}

/// The GVKs of a bundle's `olm.gvk` property or dependency rows, as opm's
/// ListBundles builds its legacy `providedApis`/`requiredApis`: every row
/// (before duplicates are dropped), no plural; a value that does not decode
/// ends the list (the error is ignored).
fn legacy_apis(rows: Option<&Vec<PropRow>>) -> Vec<Gvk> {
    let mut out = Vec::new();
    for p in rows.into_iter().flatten() {
        if &*p.kind != "olm.gvk" {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(&p.value) else {
            break;
        };
        out.push(Gvk::from_gvk(&crate::bundle::Gvk::from_json(&v), ""));
    }
    out
}

/// (properties, dependencies, plurals) of an index: read on a second
/// thread at start, beside the channel tables.
type PropTables = (
    HashMap<Str, Vec<PropRow>>,
    HashMap<Str, Vec<PropRow>>,
    HashMap<(String, String, String), String>,
);

fn read_prop_tables(path: &Path) -> super::Result<PropTables> {
    let conn = open(path)?;
    let sql = |e: &rusqlite::Error| Error::sqlite(path, e);
    let read_props = |table| -> super::Result<HashMap<Str, Vec<PropRow>>> {
        let mut out: HashMap<Str, Vec<PropRow>> = HashMap::new();
        for p in tables::read_props(&conn, table).map_err(|e| sql(&e))? {
            out.entry(s(&p.bundle)).or_default().push(PropRow {
                kind: s(&p.kind),
                value: s(&p.value),
                version: p.version,
                path: p.path,
            });
        }
        Ok(out)
    };
    let properties = read_props(tables::PropTable::Properties)?;
    let dependencies = read_props(tables::PropTable::Dependencies)?;
    let plurals = tables::read_plurals(&conn)
        .map_err(|e| sql(&e))?
        .into_iter()
        .collect();
    Ok((properties, dependencies, plurals))
}

impl SqliteRegistry {
    /// Opens an index and reads its tables; fails with a clear message when
    /// the file is missing, not SQLite, or not an operator-registry index.
    pub fn load(path: &Path) -> super::Result<SqliteRegistry> {
        if !path.is_file() {
            return Err(Error::Missing {
                what: "SQLite index",
                path: path.to_path_buf(),
            });
        }
        // An index of an older opm schema is served from a copy that opm's
        // migrations bring to version 13 (one schema for every reader).
        let copy = crate::index::db::migrated_copy_if_old(path).map_err(crate::index::Error::Db)?;
        let path: &Path = copy.as_deref().unwrap_or(path);
        let conn = open(path)?;
        let sql = |e: &rusqlite::Error| Error::sqlite(path, e);
        let tables: HashSet<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type='table'")
            .and_then(|mut st| {
                st.query_map([], |r| r.get::<_, String>(0))?
                    .collect::<Result<_, _>>()
            })
            .map_err(|e| sql(&e))?;
        for t in [
            "package",
            "channel",
            "channel_entry",
            "operatorbundle",
            "properties",
            "dependencies",
            "api",
        ] {
            if !tables.contains(t) {
                return Err(Error::NotAnIndex {
                    path: path.to_path_buf(),
                    table: t,
                });
            }
        }

        let side = {
            let path = path.to_path_buf();
            std::thread::spawn(move || read_prop_tables(&path))
        };
        let packages: BTreeMap<Str, Str> = tables::read_packages(&conn)
            .map_err(|e| sql(&e))?
            .into_iter()
            .map(|p| (s(&p.name), s(&p.default_channel)))
            .collect();
        let channels: BTreeMap<(Str, Str), Str> = tables::read_channels(&conn)
            .map_err(|e| sql(&e))?
            .into_iter()
            .map(|c| ((s(&c.package), s(&c.name)), s(&c.head)))
            .collect();
        let rows = tables::read_entries(&conn).map_err(|e| sql(&e))?;
        // Entry names repeat a lot: intern them.
        let mut interned: HashSet<Str> = HashSet::new();
        let mut intern = |v: &str| -> Str {
            if let Some(x) = interned.get(v) {
                return x.clone();
            }
            let x = s(v);
            interned.insert(x.clone());
            x
        };
        let mut edges = HashMap::new();
        for ((p, c, b), e) in tables::entry_edges(&rows) {
            edges.insert(
                (intern(&p), intern(&c), intern(&b)),
                (
                    intern(e.replaces.as_deref().unwrap_or("")),
                    e.skips.iter().map(|x| intern(x)).collect(),
                ),
            );
        }
        let entries: Vec<EntryRow> = rows
            .iter()
            .map(|e| EntryRow {
                id: e.id,
                channel: intern(&e.channel),
                package: intern(&e.package),
                bundle: intern(&e.bundle),
                replaces: e.replaces,
                depth: e.depth.unwrap_or(0),
            })
            .collect();
        drop(rows);
        let entry_by_id = entries.iter().enumerate().map(|(i, e)| (e.id, i)).collect();
        let members = entries
            .iter()
            .map(|e| (e.package.clone(), e.channel.clone(), e.bundle.clone()))
            .collect();

        let mut bundles = HashMap::new();
        for k in tables::read_bundle_keys(&conn).map_err(|e| sql(&e))? {
            bundles.insert(
                intern(&k.name),
                BundleRow {
                    version: k.version.map(|x| s(&x)),
                    bundle_path: k.bundle_path.map(|x| s(&x)),
                },
            );
        }

        let (properties, dependencies, plurals) = side.join().map_err(|_| {
            Error::io(
                format!("reading SQLite index {}", path.display()),
                std::io::Error::other("reader thread failed"),
            )
        })??;

        // GetApisForEntry depends on the entry's bundle name only.
        let mut apis = HashMap::new();
        let mut legacy_gvks = HashMap::new();
        let gvk = |v: &str, plurals: &HashMap<(String, String, String), String>| -> Option<Gvk> {
            let g = crate::bundle::Gvk::from_json(&serde_json::from_str(v).ok()?);
            let key = (g.group.clone(), g.version.clone(), g.kind.clone());
            Some(Gvk::from_gvk(
                &g,
                plurals.get(&key).map_or("", String::as_str),
            ))
        };
        for name in bundles.keys() {
            let provided: Vec<Gvk> = properties
                .get(name)
                .into_iter()
                .flatten()
                .filter(|p| &*p.kind == "olm.gvk")
                .filter_map(|p| gvk(&p.value, &plurals))
                .collect();
            let mut seen = HashSet::new();
            let required: Vec<Gvk> = dependencies
                .get(name)
                .into_iter()
                .flatten()
                .filter(|p| &*p.kind == "olm.gvk" && seen.insert(p.value.clone()))
                .filter_map(|p| gvk(&p.value, &plurals))
                .collect();
            apis.insert(name.clone(), (provided, required));
            legacy_gvks.insert(
                name.clone(),
                (
                    legacy_apis(properties.get(name)),
                    legacy_apis(dependencies.get(name)),
                ),
            );
        }

        let details: Details = Arc::new(OnceLock::new());
        {
            let (details, path) = (details.clone(), path.to_path_buf());
            std::thread::spawn(move || details.get_or_init(|| read_details(&path)).is_ok());
        }

        Ok(SqliteRegistry {
            path: path.to_path_buf(),
            details,
            packages,
            channels,
            entries,
            entry_by_id,
            members,
            edges,
            bundles,
            apis,
            legacy_gvks,
            properties,
            dependencies,
            pool: Mutex::new(vec![conn]),
            _copy: copy,
        })
    }

    /// `SELECT DISTINCT type, value ... WHERE name=? AND (version=? OR NULL) AND (path=? OR NULL)`.
    fn filtered(rows: Option<&Vec<PropRow>>, version: &str, path: &str) -> Vec<(Str, Str)> {
        let mut seen = HashSet::new();
        rows.into_iter()
            .flatten()
            .filter(|p| p.version.as_deref().is_none_or(|v| v == version))
            .filter(|p| p.path.as_deref().is_none_or(|v| v == path))
            .filter(|p| seen.insert((p.kind.clone(), p.value.clone())))
            .map(|p| (p.kind.clone(), p.value.clone()))
            .collect()
    }

    /// Every row, deduplicated (ListBundles' join).
    fn all(rows: Option<&Vec<PropRow>>) -> Vec<(Str, Str)> {
        let mut seen = HashSet::new();
        rows.into_iter()
            .flatten()
            .filter(|p| seen.insert((p.kind.clone(), p.value.clone())))
            .map(|p| (p.kind.clone(), p.value.clone()))
            .collect()
    }

    /// The details of every bundle (waits for the background read).
    fn details(&self) -> QueryResult<&HashMap<Str, BundleDetails>> {
        self.details
            .get_or_init(|| read_details(&self.path))
            .as_ref()
            .map_err(|e| QueryError(format!("reading SQLite index {}: {e}", self.path.display())))
    }

    /// Reads one row's `skiprange` and `bundle` columns.
    fn read_row(&self, name: &str) -> QueryResult<(String, Option<String>)> {
        let conn = self.pool.lock().ok().and_then(|mut p| p.pop());
        let conn = match conn {
            Some(c) => c,
            None => open(&self.path).map_err(|e| QueryError(format!("{e:#}")))?,
        };
        let row = tables::read_range_and_bundle(&conn, name);
        if let Ok(mut p) = self.pool.lock() {
            if p.len() < 8 {
                p.push(conn);
            }
        }
        match row {
            Ok(Some(x)) => Ok(x),
            Ok(None) => Ok((String::new(), None)),
            Err(e) => err(e.to_string()),
        }
    }

    /// Reads one row's `csv` column.
    fn read_csv(&self, name: &str) -> QueryResult<Option<String>> {
        let conn = self.pool.lock().ok().and_then(|mut p| p.pop());
        let conn = match conn {
            Some(c) => c,
            None => open(&self.path).map_err(|e| QueryError(format!("{e:#}")))?,
        };
        let row = tables::read_content(&conn, name);
        if let Ok(mut p) = self.pool.lock() {
            if p.len() < 8 {
                p.push(conn);
            }
        }
        match row {
            Ok(Some((csv, _))) => Ok(csv),
            Ok(None) => Ok(None),
            Err(e) => err(e.to_string()),
        }
    }

    /// Splits a `bundle` column into the CSV and every object, as opm's
    /// `BundleStringToAPIBundle` does.
    fn manifests(text: Option<&str>) -> QueryResult<(String, Vec<String>)> {
        match text {
            Some(t) if !t.is_empty() => split_bundle(t).map_err(QueryError),
            _ => Ok((String::new(), Vec::new())),
        }
    }

    /// A GetBundle-style answer for `bundle` in a channel.
    fn full_bundle(&self, name: &str, pkg: &str, ch: &str) -> QueryResult<proto::Bundle> {
        let (skip_range, text) = self.read_row(name)?;
        self.bundle_answer(name, pkg, ch, &skip_range, text.as_deref())
    }

    /// A GetBundle-style answer from a row's `skiprange` and `bundle`.
    fn bundle_answer(
        &self,
        name: &str,
        pkg: &str,
        ch: &str,
        skip_range: &str,
        text: Option<&str>,
    ) -> QueryResult<proto::Bundle> {
        let row = self.bundles.get(name);
        let version = row
            .and_then(|r| r.version.as_deref())
            .unwrap_or("")
            .to_string();
        let path = row
            .and_then(|r| r.bundle_path.as_deref())
            .unwrap_or("")
            .to_string();
        let (csv_json, object) = Self::manifests(text)?;
        let (provided, required) = self.apis.get(name).cloned().unwrap_or_default();
        let data = BundleData {
            name: s(name),
            bundle_path: s(&path),
            version: s(&version),
            provided,
            required,
            dependencies: Self::filtered(self.dependencies.get(name), &version, &path),
            properties: Self::filtered(self.properties.get(name), &version, &path),
            manifests: Manifests::None,
            deprecation: None,
        };
        let mut b = BundleView {
            data: &data,
            package: pkg,
            channel: ch,
            skip_range,
            replaces: "",
            skips: &[],
            with_apis: true,
        }
        .to_proto(None);
        b.csv_json = csv_json;
        b.object = object;
        Ok(b)
    }

    /// Whether `bundle` has an entry in the package's channel.
    fn is_member(&self, pkg: &str, channel: &str, bundle: &str) -> bool {
        self.members.contains(&(s(pkg), s(channel), s(bundle)))
    }

    fn replaces_name(&self, e: &EntryRow) -> &str {
        e.replaces
            .and_then(|id| self.entry_by_id.get(&id))
            .map(|i| &*self.entries[*i].bundle)
            .unwrap_or("")
    }

    /// Entries whose bundle has the `olm.gvk` property with exactly opm's value.
    fn providing(&self, group: &str, version: &str, kind: &str) -> Vec<&EntryRow> {
        let value = gvk_value(group, version, kind);
        let names: HashSet<&str> = self
            .properties
            .iter()
            .filter(|(_, rows)| {
                rows.iter()
                    .any(|p| &*p.kind == "olm.gvk" && *p.value == *value)
            })
            .map(|(n, _)| &**n)
            .collect();
        self.entries
            .iter()
            .filter(|e| names.contains(&*e.bundle))
            .collect()
    }

    /// `GROUP BY package_name, channel_name` with `MIN(depth)`: the first
    /// entry of least depth per channel, channels in key order.
    fn min_depth_per_channel(rows: Vec<&EntryRow>) -> Vec<&EntryRow> {
        let mut best: BTreeMap<(&str, &str), &EntryRow> = BTreeMap::new();
        for e in rows {
            let k = (&*e.package, &*e.channel);
            match best.get(&k) {
                Some(b) if b.depth <= e.depth => {}
                _ => {
                    best.insert(k, e);
                }
            }
        }
        best.into_values().collect()
    }
}

impl Registry for SqliteRegistry {
    fn list_packages(&self) -> Vec<String> {
        self.packages.keys().map(|k| k.to_string()).collect()
    }

    fn get_package(&self, name: &str) -> QueryResult<proto::Package> {
        let Some(def) = self.packages.get(name) else {
            return err(format!("package {name} not found"));
        };
        let channels: Vec<proto::Channel> = self
            .channels
            .range((s(name), s(""))..)
            .take_while(|((p, _), _)| &**p == name)
            .map(|((_, c), head)| proto::Channel {
                name: c.to_string(),
                csv_name: head.to_string(),
                deprecation: None,
            })
            .collect();
        if channels.is_empty() {
            // The query joins package with channel: no channel, no row.
            return err(format!("package {name} not found"));
        }
        Ok(proto::Package {
            name: name.to_string(),
            channels,
            default_channel_name: def.to_string(),
            deprecation: None,
        })
    }

    fn get_bundle(&self, pkg: &str, channel: &str, csv: &str) -> QueryResult<proto::Bundle> {
        let found = self.bundles.contains_key(csv) && self.is_member(pkg, channel, csv);
        if !found {
            return err(format!("no entry found for {pkg} {channel} {csv}"));
        }
        self.full_bundle(csv, pkg, channel)
    }

    fn get_bundle_for_channel(&self, pkg: &str, channel: &str) -> QueryResult<proto::Bundle> {
        // opm's query joins the channel's head with its operatorbundle row
        // and answers that row's name and `csv` column as stored, nothing
        // else (pkg/sqlite/query.go GetBundleForChannel).
        let head = self.channels.get(&(s(pkg), s(channel)));
        let Some(h) = head.filter(|h| self.bundles.contains_key(*h)) else {
            return err(format!("no entry found for {pkg} {channel}"));
        };
        let csv = self.read_csv(h)?;
        Ok(proto::Bundle {
            csv_name: h.to_string(),
            csv_json: csv.unwrap_or_default(),
            ..Default::default()
        })
    }

    fn get_channel_entries_that_replace(&self, csv: &str) -> QueryResult<Vec<proto::ChannelEntry>> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for e in &self.entries {
            if self.replaces_name(e) == csv
                && seen.insert((e.package.clone(), e.channel.clone(), e.bundle.clone()))
            {
                out.push(entry(&e.package, &e.channel, &e.bundle, csv));
            }
        }
        if out.is_empty() {
            return err(format!("no channel entries found that replace {csv}"));
        }
        Ok(out)
    }

    fn get_bundle_that_replaces(
        &self,
        csv: &str,
        pkg: &str,
        channel: &str,
    ) -> QueryResult<proto::Bundle> {
        let ids: HashSet<i64> = self
            .entries
            .iter()
            .filter(|e| &*e.bundle == csv && &*e.package == pkg && &*e.channel == channel)
            .map(|e| e.id)
            .collect();
        let replacing = self.entries.iter().find(|e| {
            e.replaces.is_some_and(|r| ids.contains(&r)) && self.bundles.contains_key(&e.bundle)
        });
        match replacing {
            Some(e) => self.full_bundle(&e.bundle, pkg, channel),
            None => err(format!("no entry found for {pkg} {channel}")),
        }
    }

    fn get_channel_entries_that_provide(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> QueryResult<Vec<proto::ChannelEntry>> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for e in self.providing(group, version, kind) {
            let r = self.replaces_name(e);
            if seen.insert((e.package.clone(), e.channel.clone(), e.bundle.clone(), s(r))) {
                out.push(entry(&e.package, &e.channel, &e.bundle, r));
            }
        }
        if out.is_empty() {
            return err(format!(
                "no channel entries found that provide {group} {version} {kind}"
            ));
        }
        Ok(out)
    }

    fn get_latest_channel_entries_that_provide(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> QueryResult<Vec<proto::ChannelEntry>> {
        let out: Vec<proto::ChannelEntry> =
            Self::min_depth_per_channel(self.providing(group, version, kind))
                .into_iter()
                .map(|e| entry(&e.package, &e.channel, &e.bundle, self.replaces_name(e)))
                .collect();
        if out.is_empty() {
            return err(format!(
                "no channel entries found that provide {group} {version} {kind}"
            ));
        }
        Ok(out)
    }

    fn get_default_bundle_that_provides(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> QueryResult<proto::Bundle> {
        let in_default: Vec<&EntryRow> = self
            .providing(group, version, kind)
            .into_iter()
            .filter(|e| self.bundles.contains_key(&e.bundle))
            .filter(|e| {
                self.packages
                    .get(&e.package)
                    .is_some_and(|d| *d == e.channel)
            })
            .collect();
        let first = Self::min_depth_per_channel(in_default).into_iter().next();
        let none = || {
            err(format!(
                "no entry found that provides {group} {version} {kind}"
            ))
        };
        let Some(e) = first else { return none() };
        match self.read_row(&e.bundle)? {
            (range, Some(text)) => {
                self.bundle_answer(&e.bundle, &e.package, &e.channel, &range, Some(&text))
            }
            // `bundle` NULL: opm's query answers "no entry".
            (_, None) => none(),
        }
    }

    fn list_bundles(&self) -> QueryResult<Vec<proto::Bundle>> {
        // One bundle per (name, version, path, channel), as opm's map keys them.
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let details = self.details()?;
        let none = BundleDetails {
            skip_range: s(""),
            has_bundle: false,
        };
        let no_edges = (s(""), Vec::new());
        for e in &self.entries {
            if !self.packages.contains_key(&e.package) {
                continue;
            }
            let Some(row) = self.bundles.get(&e.bundle) else {
                continue;
            };
            let (Some(version), Some(path)) = (&row.version, &row.bundle_path) else {
                continue;
            };
            if !seen.insert((e.bundle.clone(), e.channel.clone())) {
                continue;
            }
            let more = details.get(&e.bundle).unwrap_or(&none);
            // The query's own replaces and skips, read from the entries (not
            // the operatorbundle columns); no skip entry, no skips.
            let (replaces, skips) = self
                .edges
                .get(&(e.package.clone(), e.channel.clone(), e.bundle.clone()))
                .unwrap_or(&no_edges);
            let legacy = self.legacy_gvks.get(&e.bundle).cloned().unwrap_or_default();
            let data = BundleData {
                name: e.bundle.clone(),
                bundle_path: path.clone(),
                version: version.clone(),
                // buildLegacyProvidedAPIs/buildLegacyRequiredAPIs: from every
                // olm.gvk row, without plural.
                provided: legacy.0,
                required: legacy.1,
                dependencies: Self::all(self.dependencies.get(&e.bundle)),
                properties: Self::all(self.properties.get(&e.bundle)),
                manifests: Manifests::None,
                deprecation: None,
            };
            let mut b = BundleView {
                data: &data,
                package: &e.package,
                channel: &e.channel,
                skip_range: &more.skip_range,
                replaces,
                skips,
                with_apis: true,
            }
            .to_proto(None);
            if path.is_empty() && more.has_bundle {
                // Without an image reference the manifests are the only way
                // to the bundle's content, so opm sends them.
                let (_, text) = self.read_row(&e.bundle)?;
                let (csv, objects) = Self::manifests(text.as_deref())?;
                b.csv_json = csv;
                b.object = objects;
            }
            out.push(b);
        }
        Ok(out)
    }

    fn summary(&self) -> String {
        format!(
            "SQLite index: {} packages, {} channels, {} bundles, {} channel entries",
            self.packages.len(),
            self.channels.len(),
            self.bundles.len(),
            self.entries.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gvk_value_is_go_map_marshal() {
        assert_eq!(
            gvk_value("etcd.database.coreos.com", "v1beta2", "EtcdCluster"),
            r#"{"group":"etcd.database.coreos.com","kind":"EtcdCluster","version":"v1beta2"}"#
        );
    }

    #[test]
    fn bundle_column_splits_into_objects() {
        let (csv, objs) = split_bundle(
            r#"{"kind":"CustomResourceDefinition","apiVersion":"v1"}{"kind":"ClusterServiceVersion","metadata":{"name":"a<b"}}"#,
        )
        .expect("split");
        assert_eq!(objs.len(), 2);
        assert_eq!(
            csv,
            r#"{"kind":"ClusterServiceVersion","metadata":{"name":"a\u003cb"}}"#
        );
    }
}
