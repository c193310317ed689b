//! The SQLite index backend: answers as `opm registry serve` does
//! (operator-registry's `pkg/sqlite/query.go`), per call, from SQLite.
//!
//! The index is only ever read (read-only connection). opm's schema has no
//! index on the columns the calls look up (a channel's entries, a bundle's
//! properties, who provides a GVK), so at start the small tables are copied,
//! through the one reader of opm's tables (`index::tables`), into a private
//! lookup database in the temporary directory, with indexes on those
//! columns; every call then reads a few rows of it. Memory stays the same
//! whatever the size of the index: the rows live on disk (and in the page
//! cache), not in this process. The `operatorbundle.bundle` and `csv`
//! columns, which hold most of an index's bytes, are read from the index
//! when a call needs a bundle's manifests.
//!
//! Where no temporary directory can be made (a container whose image has no
//! `/tmp`, or a read-only root file system without an `emptyDir` there), the
//! lookup database is kept in memory instead: it serves the same, with
//! memory that grows with the index again (about what the tables take).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::Error;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use serde_json::Value;

use super::model::*;
use crate::gojson;
use crate::index::tables;
use crate::proto;

/// How lookup directories are named: the prefix, the server's process id,
/// a dash and a random part (so that a server killed with SIGKILL has its
/// directory removed by the next one, `index::db::remove_orphans`).
const LOOKUP_PREFIX: &str = "olm-catalog-lookup-";

/// The lookup tables: opm's tables as `index::tables` reads them (text
/// whatever the storage class, NULL names as ""), so that SQL comparisons and
/// orderings here are those of the strings. A table that the former
/// in-memory maps keyed by name has a primary key and is written with
/// `INSERT OR REPLACE`: the later row wins, as it did in the map.
const LOOKUP_SCHEMA: &str = "
CREATE TABLE package (name TEXT PRIMARY KEY, default_channel TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE channel (package TEXT, name TEXT, head TEXT NOT NULL,
  PRIMARY KEY (package, name)) WITHOUT ROWID;
CREATE TABLE entry (id INTEGER PRIMARY KEY, channel TEXT NOT NULL, package TEXT NOT NULL,
  bundle TEXT NOT NULL, replaces INTEGER, depth INTEGER);
CREATE TABLE bundle (name TEXT PRIMARY KEY, version TEXT, path TEXT) WITHOUT ROWID;
CREATE TABLE prop (kind TEXT NOT NULL, value TEXT NOT NULL, bundle TEXT NOT NULL,
  version TEXT, path TEXT);
CREATE TABLE dep (kind TEXT NOT NULL, value TEXT NOT NULL, bundle TEXT NOT NULL,
  version TEXT, path TEXT);
CREATE TABLE plural (grp TEXT, version TEXT, kind TEXT, plural TEXT NOT NULL,
  PRIMARY KEY (grp, version, kind)) WITHOUT ROWID;
CREATE TABLE details (name TEXT PRIMARY KEY, skiprange TEXT NOT NULL,
  has_bundle INTEGER NOT NULL) WITHOUT ROWID;
";

/// Created after the rows are in (faster than keeping them up to date).
const LOOKUP_INDEXES: &str = "
CREATE INDEX entry_member ON entry (package, channel, bundle);
CREATE INDEX entry_bundle ON entry (bundle);
CREATE INDEX entry_replaces ON entry (replaces);
CREATE INDEX prop_bundle ON prop (bundle);
CREATE INDEX prop_gvk ON prop (value) WHERE kind = 'olm.gvk';
CREATE INDEX dep_bundle ON dep (bundle);
";

/// Where the lookup tables live.
#[derive(Clone)]
enum LookupDb {
    /// A file in a private temporary directory, removed with it (shared
    /// with the details thread).
    File {
        path: PathBuf,
        _dir: Arc<tempfile::TempDir>,
    },
    /// A shared-cache in-memory database, when no temporary directory can
    /// be made; it lives while a connection to it is open.
    Memory { uri: String },
}

impl LookupDb {
    /// A connection (creating the database when `create`).
    fn open(&self, create: bool) -> rusqlite::Result<Connection> {
        let conn = match self {
            LookupDb::File { path, .. } => {
                let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                if create {
                    flags |= OpenFlags::SQLITE_OPEN_CREATE;
                }
                Connection::open_with_flags(path, flags)?
            }
            LookupDb::Memory { uri } => Connection::open_with_flags(
                uri,
                OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_CREATE
                    | OpenFlags::SQLITE_OPEN_URI
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?,
        };
        // Only the details thread writes after start; WAL lets calls read
        // meanwhile, the timeout covers its commit.
        conn.busy_timeout(std::time::Duration::from_secs(30))?;
        conn.set_prepared_statement_cache_capacity(32);
        Ok(conn)
    }

    /// What to name in messages.
    fn describe(&self) -> String {
        match self {
            LookupDb::File { path, .. } => path.display().to_string(),
            LookupDb::Memory { .. } => "(in memory)".into(),
        }
    }
}

/// A connection to the index and one to the lookup tables.
struct Conns {
    index: Connection,
    lookup: Connection,
}

/// A SQLite index being served.
pub struct SqliteRegistry {
    /// The index (or the migrated copy of it).
    path: PathBuf,
    /// Set once the `details` lookup table is filled (a background thread
    /// fills it after start: reading those columns walks the whole file).
    details: Arc<OnceLock<Result<(), String>>>,
    /// Connections for calls; sqlite connections are not Sync.
    pool: Mutex<Vec<Conns>>,
    /// Counts for the start message.
    summary: String,
    /// A connection that keeps an in-memory lookup database alive whatever
    /// happens to the pool's (unused for a file).
    _keeper: Mutex<Option<Connection>>,
    /// The lookup database; after `pool` and `_keeper` so that the
    /// connections close before its directory goes.
    lookup: LookupDb,
    /// The migrated copy `path` names, if the index had an older schema.
    _copy: Option<tempfile::TempPath>,
}

/// A property or dependency row as the calls read it.
struct PropRow {
    kind: String,
    value: String,
    version: Option<String>,
    path: Option<String>,
}

/// One entry of a package's channel providing a GVK.
struct Providing {
    package: String,
    channel: String,
    bundle: String,
    /// Name of the bundle of the entry it replaces ("" when none).
    replaces: String,
    /// NULL reads as 0.
    depth: i64,
    /// The bundle has an `operatorbundle` row.
    has_row: bool,
    /// The package's default channel, when the package has a row.
    default_channel: Option<String>,
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

/// Manifest bytes a ListBundles must send before it hands its memory back.
const RELEASE_AFTER_BYTES: usize = 4 << 20;

/// Hands the memory of a finished bulk read back to the system: SQLite's
/// page caches (the index's and the lookup database's pages are on disk and
/// in the OS page cache anyway) and what malloc keeps of freed temporaries,
/// so that idle memory does not depend on the size of the index.
fn release_memory(conns: &[&Connection]) {
    for c in conns {
        let _ = c.execute_batch("PRAGMA shrink_memory;");
    }
    super::model::trim_heap();
}

/// The error of a failed lookup-table write.
fn lookup_error(lookup: &LookupDb, e: &rusqlite::Error) -> Error {
    Error::io(
        format!(
            "writing serve's lookup tables {} (the temporary directory must be writable)",
            lookup.describe()
        ),
        std::io::Error::other(e.to_string()),
    )
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
fn legacy_apis(rows: &[(String, String)]) -> Vec<Gvk> {
    let mut out = Vec::new();
    for (kind, value) in rows {
        if kind != "olm.gvk" {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(value) else {
            break;
        };
        out.push(Gvk::from_gvk(&crate::bundle::Gvk::from_json(&v), ""));
    }
    out
}

/// Every (type, value), duplicates dropped (ListBundles' join).
fn distinct(rows: &[(String, String)]) -> Vec<(Str, Str)> {
    let mut seen = HashSet::new();
    rows.iter()
        .filter(|r| seen.insert(*r))
        .map(|(k, v)| (s(k), s(v)))
        .collect()
}

/// Copies the tables the calls read from the index (`src`) into the new
/// lookup database `lk`, then indexes them.
fn build_lookup(src: &Connection, lk: &mut Connection) -> rusqlite::Result<()> {
    // A throwaway file: no journal while it is built (a failed build is
    // discarded), WAL afterwards so calls read while the details thread
    // writes.
    lk.query_row("PRAGMA journal_mode = OFF", [], |_| Ok(()))?;
    lk.execute_batch("PRAGMA synchronous = OFF;")?;
    lk.execute_batch(LOOKUP_SCHEMA)?;
    let tx = lk.transaction()?;
    {
        let mut ins = tx.prepare("INSERT OR REPLACE INTO package VALUES (?1, ?2)")?;
        tables::each_package(src, |p| {
            ins.execute(params![p.name, p.default_channel]).map(drop)
        })?;
        let mut ins = tx.prepare("INSERT OR REPLACE INTO channel VALUES (?1, ?2, ?3)")?;
        tables::each_channel(src, |c| {
            ins.execute(params![c.package, c.name, c.head]).map(drop)
        })?;
        let mut ins = tx.prepare("INSERT INTO entry VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
        tables::each_entry(src, |e| {
            ins.execute(params![
                e.id, e.channel, e.package, e.bundle, e.replaces, e.depth
            ])
            .map(drop)
        })?;
        let mut ins = tx.prepare("INSERT OR REPLACE INTO bundle VALUES (?1, ?2, ?3)")?;
        tables::each_bundle_key(src, |k| {
            ins.execute(params![k.name, k.version, k.bundle_path])
                .map(drop)
        })?;
        for (table, into) in [
            (tables::PropTable::Properties, "prop"),
            (tables::PropTable::Dependencies, "dep"),
        ] {
            let mut ins = tx.prepare(&format!("INSERT INTO {into} VALUES (?1, ?2, ?3, ?4, ?5)"))?;
            tables::each_prop(src, table, |p| {
                ins.execute(params![p.kind, p.value, p.bundle, p.version, p.path])
                    .map(drop)
            })?;
        }
        let mut ins = tx.prepare("INSERT OR REPLACE INTO plural VALUES (?1, ?2, ?3, ?4)")?;
        for ((g, v, k), p) in tables::read_plurals(src)? {
            ins.execute(params![g, v, k, p])?;
        }
    }
    tx.execute_batch(LOOKUP_INDEXES)?;
    tx.commit()?;
    lk.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
}

/// Fills the `details` lookup table from the index's `operatorbundle`
/// columns stored after the manifests.
fn fill_details(path: &Path, lookup: &LookupDb) -> Result<(), String> {
    let src = open(path).map_err(|e| format!("{e:#}"))?;
    let fill = || -> rusqlite::Result<()> {
        let mut lk = lookup.open(false)?;
        let tx = lk.transaction()?;
        {
            let mut ins = tx.prepare("INSERT OR REPLACE INTO details VALUES (?1, ?2, ?3)")?;
            tables::each_bundle_details(&src, |(name, d)| {
                ins.execute(params![name, d.skip_range, d.has_bundle])
                    .map(drop)
            })?;
        }
        tx.commit()
    };
    let done = fill().map_err(|e| e.to_string());
    drop(src);
    release_memory(&[]);
    done
}

impl SqliteRegistry {
    /// Opens an index and copies what the calls look up into a private
    /// lookup database; fails with a clear message when the file is
    /// missing, not SQLite, or not an operator-registry index.
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

        let tmp = std::env::temp_dir();
        crate::index::db::remove_orphans(&tmp, LOOKUP_PREFIX);
        let lookup = match tempfile::Builder::new()
            .prefix(&format!("{LOOKUP_PREFIX}{}-", std::process::id()))
            .tempdir_in(&tmp)
        {
            Ok(dir) => LookupDb::File {
                path: dir.path().join("lookup.db"),
                _dir: Arc::new(dir),
            },
            Err(_) => {
                static NEXT: std::sync::atomic::AtomicUsize =
                    std::sync::atomic::AtomicUsize::new(0);
                let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                LookupDb::Memory {
                    uri: format!(
                        "file:{LOOKUP_PREFIX}{}-{n}?mode=memory&cache=shared",
                        std::process::id()
                    ),
                }
            }
        };
        let mut lk = lookup.open(true).map_err(|e| lookup_error(&lookup, &e))?;
        if let Err(e) = build_lookup(&conn, &mut lk) {
            // Tell a failed read of the index from a failed write here.
            let read = tables::read_packages(&conn)
                .and_then(|_| tables::read_entries(&conn).map(drop))
                .and_then(|_| tables::read_props(&conn, tables::PropTable::Properties).map(drop));
            return Err(match read {
                Err(e) => sql(&e),
                Ok(()) => match &e {
                    rusqlite::Error::SqliteFailure(..) => lookup_error(&lookup, &e),
                    _ => sql(&e),
                },
            });
        }
        let summary = lk
            .query_row(
                "SELECT (SELECT count(*) FROM package), (SELECT count(*) FROM channel), \
                 (SELECT count(*) FROM bundle), (SELECT count(*) FROM entry)",
                [],
                |r| {
                    Ok(format!(
                        "SQLite index: {} packages, {} channels, {} bundles, {} channel entries",
                        r.get::<_, i64>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, i64>(3)?
                    ))
                },
            )
            .map_err(|e| lookup_error(&lookup, &e))?;

        release_memory(&[&conn, &lk]);
        let details: Arc<OnceLock<Result<(), String>>> = Arc::new(OnceLock::new());
        match &lookup {
            LookupDb::File { .. } => {
                let (details, path, lookup) = (details.clone(), path.to_path_buf(), lookup.clone());
                std::thread::spawn(move || {
                    details.get_or_init(|| fill_details(&path, &lookup)).is_ok()
                });
            }
            // An in-memory database's writer would lock readers out of its
            // tables: filled before the first call instead.
            LookupDb::Memory { .. } => {
                let _ = details.get_or_init(|| fill_details(path, &lookup));
            }
        }

        let keeper = match &lookup {
            LookupDb::Memory { .. } => {
                Some(lookup.open(false).map_err(|e| lookup_error(&lookup, &e))?)
            }
            LookupDb::File { .. } => None,
        };
        Ok(SqliteRegistry {
            path: path.to_path_buf(),
            details,
            pool: Mutex::new(vec![Conns {
                index: conn,
                lookup: lk,
            }]),
            summary,
            _keeper: Mutex::new(keeper),
            lookup,
            _copy: copy,
        })
    }

    /// Runs `f` on a pooled pair of connections (opened when none is free).
    fn with<T>(&self, f: impl FnOnce(&Conns) -> QueryResult<T>) -> QueryResult<T> {
        let conns = self.pool.lock().ok().and_then(|mut p| p.pop());
        let conns = match conns {
            Some(c) => c,
            None => Conns {
                index: open(&self.path).map_err(|e| QueryError(format!("{e:#}")))?,
                lookup: self.lookup.open(false).map_err(|e| self.failed(&e))?,
            },
        };
        let out = f(&conns);
        if let Ok(mut p) = self.pool.lock() {
            if p.len() < 8 {
                p.push(conns);
            }
        }
        out
    }

    /// A failed read of the lookup tables or of the index.
    fn failed(&self, e: &rusqlite::Error) -> QueryError {
        QueryError(format!("reading SQLite index {}: {e}", self.path.display()))
    }

    /// Waits for the `details` lookup table.
    fn details(&self) -> QueryResult<()> {
        self.details
            .get_or_init(|| fill_details(&self.path, &self.lookup))
            .clone()
            .map_err(|e| QueryError(format!("reading SQLite index {}: {e}", self.path.display())))
    }

    /// Reads one row's `skiprange` and `bundle` columns.
    fn read_row(&self, c: &Conns, name: &str) -> QueryResult<(String, Option<String>)> {
        match tables::read_range_and_bundle(&c.index, name) {
            Ok(Some(x)) => Ok(x),
            Ok(None) => Ok((String::new(), None)),
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

    /// A bundle's `version` and `bundlepath` (`None` when it has no row).
    fn bundle_row(
        &self,
        c: &Conns,
        name: &str,
    ) -> QueryResult<Option<(Option<String>, Option<String>)>> {
        c.lookup
            .prepare_cached("SELECT version, path FROM bundle WHERE name = ?1")
            .and_then(|mut st| {
                st.query_row([name], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .map_err(|e| self.failed(&e))
    }

    /// A bundle's `prop` or `dep` rows in table order.
    fn prop_rows(&self, c: &Conns, table: &str, name: &str) -> QueryResult<Vec<PropRow>> {
        let sql = format!(
            "SELECT kind, value, version, path FROM {table} WHERE bundle = ?1 ORDER BY rowid"
        );
        c.lookup
            .prepare_cached(&sql)
            .and_then(|mut st| {
                st.query_map([name], |r| {
                    Ok(PropRow {
                        kind: r.get(0)?,
                        value: r.get(1)?,
                        version: r.get(2)?,
                        path: r.get(3)?,
                    })
                })?
                .collect()
            })
            .map_err(|e| self.failed(&e))
    }

    /// The answer's form of an `olm.gvk` value, with the `api` table's
    /// plural; `None` when the value does not decode.
    fn gvk_with_plural(&self, c: &Conns, value: &str) -> QueryResult<Option<Gvk>> {
        let Ok(v) = serde_json::from_str::<Value>(value) else {
            return Ok(None);
        };
        let g = crate::bundle::Gvk::from_json(&v);
        let plural: Option<String> = c
            .lookup
            .prepare_cached(
                "SELECT plural FROM plural WHERE grp = ?1 AND version = ?2 AND kind = ?3",
            )
            .and_then(|mut st| {
                st.query_row(params![g.group, g.version, g.kind], |r| r.get(0))
                    .optional()
            })
            .map_err(|e| self.failed(&e))?;
        Ok(Some(Gvk::from_gvk(&g, plural.as_deref().unwrap_or(""))))
    }

    /// `SELECT DISTINCT type, value ... WHERE name=? AND (version=? OR NULL) AND (path=? OR NULL)`.
    fn filtered(rows: &[PropRow], version: &str, path: &str) -> Vec<(Str, Str)> {
        let mut seen = HashSet::new();
        rows.iter()
            .filter(|p| p.version.as_deref().is_none_or(|v| v == version))
            .filter(|p| p.path.as_deref().is_none_or(|v| v == path))
            .filter(|p| seen.insert((&p.kind, &p.value)))
            .map(|p| (s(&p.kind), s(&p.value)))
            .collect()
    }

    /// A GetBundle-style answer for `bundle` in a channel.
    fn full_bundle(
        &self,
        c: &Conns,
        name: &str,
        pkg: &str,
        ch: &str,
    ) -> QueryResult<proto::Bundle> {
        let (skip_range, text) = self.read_row(c, name)?;
        self.bundle_answer(c, name, pkg, ch, &skip_range, text.as_deref())
    }

    /// A GetBundle-style answer from a row's `skiprange` and `bundle`.
    fn bundle_answer(
        &self,
        c: &Conns,
        name: &str,
        pkg: &str,
        ch: &str,
        skip_range: &str,
        text: Option<&str>,
    ) -> QueryResult<proto::Bundle> {
        let row = self.bundle_row(c, name)?;
        let (version, path) = match &row {
            Some((v, p)) => (v.clone().unwrap_or_default(), p.clone().unwrap_or_default()),
            None => (String::new(), String::new()),
        };
        let (csv_json, object) = Self::manifests(text)?;
        let properties = self.prop_rows(c, "prop", name)?;
        let dependencies = self.prop_rows(c, "dep", name)?;
        // GetApisForEntry: every olm.gvk property, the olm.gvk dependencies
        // once per value; only for a bundle with a row.
        let (mut provided, mut required) = (Vec::new(), Vec::new());
        if row.is_some() {
            for p in properties.iter().filter(|p| p.kind == "olm.gvk") {
                provided.extend(self.gvk_with_plural(c, &p.value)?);
            }
            let mut seen = HashSet::new();
            for p in dependencies.iter() {
                if p.kind == "olm.gvk" && seen.insert(&p.value) {
                    required.extend(self.gvk_with_plural(c, &p.value)?);
                }
            }
        }
        let data = BundleData {
            name: s(name),
            bundle_path: s(&path),
            version: s(&version),
            provided,
            required,
            dependencies: Self::filtered(&dependencies, &version, &path),
            properties: Self::filtered(&properties, &version, &path),
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
    fn is_member(&self, c: &Conns, pkg: &str, channel: &str, bundle: &str) -> QueryResult<bool> {
        c.lookup
            .prepare_cached(
                "SELECT 1 FROM entry WHERE package = ?1 AND channel = ?2 AND bundle = ?3 LIMIT 1",
            )
            .and_then(|mut st| st.exists([pkg, channel, bundle]))
            .map_err(|e| self.failed(&e))
    }

    /// Entries whose bundle has the `olm.gvk` property with exactly opm's
    /// value, in entry order.
    fn providing(
        &self,
        c: &Conns,
        group: &str,
        version: &str,
        kind: &str,
    ) -> QueryResult<Vec<Providing>> {
        let value = gvk_value(group, version, kind);
        c.lookup
            .prepare_cached(
                "SELECT e.package, e.channel, e.bundle, IFNULL(r.bundle, ''), IFNULL(e.depth, 0), \
                 EXISTS (SELECT 1 FROM bundle b WHERE b.name = e.bundle), p.default_channel \
                 FROM entry e LEFT JOIN entry r ON r.id = e.replaces \
                 LEFT JOIN package p ON p.name = e.package \
                 WHERE e.bundle IN (SELECT bundle FROM prop WHERE kind = 'olm.gvk' AND value = ?1) \
                 ORDER BY e.id",
            )
            .and_then(|mut st| {
                st.query_map([value], |r| {
                    Ok(Providing {
                        package: r.get(0)?,
                        channel: r.get(1)?,
                        bundle: r.get(2)?,
                        replaces: r.get(3)?,
                        depth: r.get(4)?,
                        has_row: r.get(5)?,
                        default_channel: r.get(6)?,
                    })
                })?
                .collect()
            })
            .map_err(|e| self.failed(&e))
    }

    /// `GROUP BY package_name, channel_name` with `MIN(depth)`: the first
    /// entry of least depth per channel, channels in key order.
    fn min_depth_per_channel(rows: Vec<Providing>) -> Vec<Providing> {
        let mut best: BTreeMap<(String, String), Providing> = BTreeMap::new();
        for e in rows {
            match best.get(&(e.package.clone(), e.channel.clone())) {
                Some(b) if b.depth <= e.depth => {}
                _ => {
                    best.insert((e.package.clone(), e.channel.clone()), e);
                }
            }
        }
        best.into_values().collect()
    }

    /// ListBundles from one connection pair, each row handed to `each` as
    /// it is built.
    fn list_bundles_with(
        &self,
        c: &Conns,
        each: &mut dyn FnMut(proto::Bundle) -> bool,
    ) -> QueryResult<()> {
        let failed = |e: rusqlite::Error| self.failed(&e);
        let lk = &c.lookup;
        // What one pass needs, read for this call only.
        let entries: Vec<tables::EntryRow> = lk
            .prepare("SELECT id, channel, package, bundle, replaces, depth FROM entry ORDER BY id")
            .and_then(|mut st| {
                st.query_map([], |r| {
                    Ok(tables::EntryRow {
                        id: r.get(0)?,
                        channel: r.get(1)?,
                        package: r.get(2)?,
                        bundle: r.get(3)?,
                        replaces: r.get(4)?,
                        depth: r.get(5)?,
                    })
                })?
                .collect()
            })
            .map_err(failed)?;
        let edges = tables::entry_edges(&entries);
        let packages: HashSet<String> = lk
            .prepare("SELECT name FROM package")
            .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
            .map_err(failed)?;
        type Row = (Option<String>, Option<String>);
        let bundles: HashMap<String, Row> = lk
            .prepare("SELECT name, version, path FROM bundle")
            .and_then(|mut st| {
                st.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
                    .collect()
            })
            .map_err(failed)?;
        let details: HashMap<String, (String, bool)> = lk
            .prepare("SELECT name, skiprange, has_bundle FROM details")
            .and_then(|mut st| {
                st.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
                    .collect()
            })
            .map_err(failed)?;
        let grouped = |table: &str| -> QueryResult<HashMap<String, Vec<(String, String)>>> {
            let mut out: HashMap<String, Vec<(String, String)>> = HashMap::new();
            let mut st = lk
                .prepare(&format!(
                    "SELECT bundle, kind, value FROM {table} ORDER BY rowid"
                ))
                .map_err(failed)?;
            let mut rows = st.query([]).map_err(failed)?;
            while let Some(r) = rows.next().map_err(failed)? {
                let bundle: String = r.get(0).map_err(failed)?;
                out.entry(bundle)
                    .or_default()
                    .push((r.get(1).map_err(failed)?, r.get(2).map_err(failed)?));
            }
            Ok(out)
        };
        let properties = grouped("prop")?;
        let dependencies = grouped("dep")?;

        // One bundle per (name, version, path, channel), as opm's map keys them.
        let mut seen = HashSet::new();
        let none = (String::new(), false);
        let no_rows = Vec::new();
        let no_edges = tables::EntryEdges::default();
        for e in &entries {
            if !packages.contains(&e.package) {
                continue;
            }
            let Some((Some(version), Some(path))) = bundles.get(&e.bundle) else {
                continue;
            };
            if !seen.insert((&e.bundle, &e.channel)) {
                continue;
            }
            let (skip_range, has_bundle) = details.get(&e.bundle).unwrap_or(&none);
            // The query's own replaces and skips, read from the entries (not
            // the operatorbundle columns); no skip entry, no skips.
            let edge = edges
                .get(&(e.package.clone(), e.channel.clone(), e.bundle.clone()))
                .unwrap_or(&no_edges);
            let skips: Vec<Str> = edge.skips.iter().map(|x| s(x)).collect();
            let props = properties.get(&e.bundle).unwrap_or(&no_rows);
            let deps = dependencies.get(&e.bundle).unwrap_or(&no_rows);
            let data = BundleData {
                name: s(&e.bundle),
                bundle_path: s(path),
                version: s(version),
                // buildLegacyProvidedAPIs/buildLegacyRequiredAPIs: from every
                // olm.gvk row, without plural.
                provided: legacy_apis(props),
                required: legacy_apis(deps),
                dependencies: distinct(deps),
                properties: distinct(props),
                manifests: Manifests::None,
                deprecation: None,
            };
            let mut b = BundleView {
                data: &data,
                package: &e.package,
                channel: &e.channel,
                skip_range,
                replaces: edge.replaces.as_deref().unwrap_or(""),
                skips: &skips,
                with_apis: true,
            }
            .to_proto(None);
            if path.is_empty() && *has_bundle {
                // Without an image reference the manifests are the only way
                // to the bundle's content, so opm sends them.
                let (_, text) = self.read_row(c, &e.bundle)?;
                let (csv, objects) = Self::manifests(text.as_deref())?;
                b.csv_json = csv;
                b.object = objects;
            }
            if !each(b) {
                break;
            }
        }
        Ok(())
    }
}

impl Registry for SqliteRegistry {
    fn list_packages(&self) -> QueryResult<Vec<String>> {
        self.with(|c| {
            c.lookup
                .prepare_cached("SELECT name FROM package ORDER BY name")
                .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
                .map_err(|e| self.failed(&e))
        })
    }

    fn get_package(&self, name: &str) -> QueryResult<proto::Package> {
        self.with(|c| {
            let def: Option<String> = c
                .lookup
                .prepare_cached("SELECT default_channel FROM package WHERE name = ?1")
                .and_then(|mut st| st.query_row([name], |r| r.get(0)).optional())
                .map_err(|e| self.failed(&e))?;
            let Some(def) = def else {
                return err(format!("package {name} not found"));
            };
            let channels: Vec<proto::Channel> = c
                .lookup
                .prepare_cached("SELECT name, head FROM channel WHERE package = ?1 ORDER BY name")
                .and_then(|mut st| {
                    st.query_map([name], |r| {
                        Ok(proto::Channel {
                            name: r.get(0)?,
                            csv_name: r.get(1)?,
                            deprecation: None,
                        })
                    })?
                    .collect()
                })
                .map_err(|e| self.failed(&e))?;
            if channels.is_empty() {
                // The query joins package with channel: no channel, no row.
                return err(format!("package {name} not found"));
            }
            Ok(proto::Package {
                name: name.to_string(),
                channels,
                default_channel_name: def,
                deprecation: None,
            })
        })
    }

    fn get_bundle(&self, pkg: &str, channel: &str, csv: &str) -> QueryResult<proto::Bundle> {
        self.with(|c| {
            let found =
                self.bundle_row(c, csv)?.is_some() && self.is_member(c, pkg, channel, csv)?;
            if !found {
                return err(format!("no entry found for {pkg} {channel} {csv}"));
            }
            self.full_bundle(c, csv, pkg, channel)
        })
    }

    fn get_bundle_for_channel(&self, pkg: &str, channel: &str) -> QueryResult<proto::Bundle> {
        // opm's query joins the channel's head with its operatorbundle row
        // and answers that row's name and `csv` column as stored, nothing
        // else (pkg/sqlite/query.go GetBundleForChannel).
        self.with(|c| {
            let head: Option<String> = c
                .lookup
                .prepare_cached(
                    "SELECT c.head FROM channel c JOIN bundle b ON b.name = c.head \
                     WHERE c.package = ?1 AND c.name = ?2",
                )
                .and_then(|mut st| st.query_row([pkg, channel], |r| r.get(0)).optional())
                .map_err(|e| self.failed(&e))?;
            let Some(h) = head else {
                return err(format!("no entry found for {pkg} {channel}"));
            };
            let csv = match tables::read_content(&c.index, &h) {
                Ok(row) => row.and_then(|(csv, _)| csv),
                Err(e) => return err(e.to_string()),
            };
            Ok(proto::Bundle {
                csv_name: h,
                csv_json: csv.unwrap_or_default(),
                ..Default::default()
            })
        })
    }

    fn get_channel_entries_that_replace(&self, csv: &str) -> QueryResult<Vec<proto::ChannelEntry>> {
        // An entry replaces `csv` when the entry its `replaces` names has
        // that bundle; "" also matches entries that replace nothing.
        let sql = if csv.is_empty() {
            "SELECT e.package, e.channel, e.bundle FROM entry e \
             LEFT JOIN entry r ON r.id = e.replaces WHERE IFNULL(r.bundle, '') = ?1 ORDER BY e.id"
        } else {
            "SELECT e.package, e.channel, e.bundle FROM entry r \
             JOIN entry e ON e.replaces = r.id WHERE r.bundle = ?1 ORDER BY e.id"
        };
        let rows: Vec<(String, String, String)> = self.with(|c| {
            c.lookup
                .prepare_cached(sql)
                .and_then(|mut st| {
                    st.query_map([csv], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                        .collect()
                })
                .map_err(|e| self.failed(&e))
        })?;
        let mut seen = HashSet::new();
        let out: Vec<proto::ChannelEntry> = rows
            .iter()
            .filter(|r| seen.insert(*r))
            .map(|(p, ch, b)| entry(p, ch, b, csv))
            .collect();
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
        self.with(|c| {
            let replacing: Option<String> = c
                .lookup
                .prepare_cached(
                    "SELECT e.bundle FROM entry r JOIN entry e ON e.replaces = r.id \
                     WHERE r.bundle = ?1 AND r.package = ?2 AND r.channel = ?3 \
                     AND EXISTS (SELECT 1 FROM bundle b WHERE b.name = e.bundle) \
                     ORDER BY e.id LIMIT 1",
                )
                .and_then(|mut st| st.query_row([csv, pkg, channel], |r| r.get(0)).optional())
                .map_err(|e| self.failed(&e))?;
            match replacing {
                Some(b) => self.full_bundle(c, &b, pkg, channel),
                None => err(format!("no entry found for {pkg} {channel}")),
            }
        })
    }

    fn get_channel_entries_that_provide(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> QueryResult<Vec<proto::ChannelEntry>> {
        let rows = self.with(|c| self.providing(c, group, version, kind))?;
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for e in &rows {
            if seen.insert((&e.package, &e.channel, &e.bundle, &e.replaces)) {
                out.push(entry(&e.package, &e.channel, &e.bundle, &e.replaces));
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
        let rows = self.with(|c| self.providing(c, group, version, kind))?;
        let out: Vec<proto::ChannelEntry> = Self::min_depth_per_channel(rows)
            .into_iter()
            .map(|e| entry(&e.package, &e.channel, &e.bundle, &e.replaces))
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
        self.with(|c| {
            let in_default: Vec<Providing> = self
                .providing(c, group, version, kind)?
                .into_iter()
                .filter(|e| e.has_row && e.default_channel.as_ref() == Some(&e.channel))
                .collect();
            let first = Self::min_depth_per_channel(in_default).into_iter().next();
            let none = || {
                err(format!(
                    "no entry found that provides {group} {version} {kind}"
                ))
            };
            let Some(e) = first else { return none() };
            match self.read_row(c, &e.bundle)? {
                (range, Some(text)) => {
                    self.bundle_answer(c, &e.bundle, &e.package, &e.channel, &range, Some(&text))
                }
                // `bundle` NULL: opm's query answers "no entry".
                (_, None) => none(),
            }
        })
    }

    fn list_bundles(&self, each: &mut dyn FnMut(proto::Bundle) -> bool) -> QueryResult<()> {
        self.details()?;
        self.with(|c| {
            // Manifest bytes sent: the temporaries of a call grow with them.
            let mut sent = 0usize;
            let mut counted = |b: proto::Bundle| {
                sent += b.csv_json.len() + b.object.iter().map(String::len).sum::<usize>();
                each(b)
            };
            let out = self.list_bundles_with(c, &mut counted);
            // After a bulk read, hand its memory back so that idle memory
            // does not depend on the index's size. After a small one there
            // is little to hand back, and trimming would cost the caller
            // ~0.3 ms, a third of a short ListBundles (BENCHMARKS.md).
            if sent >= RELEASE_AFTER_BYTES {
                release_memory(&[&c.index, &c.lookup]);
            }
            out
        })
    }

    fn summary(&self) -> String {
        self.summary.clone()
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
