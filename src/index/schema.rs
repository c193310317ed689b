//! The schema of opm's SQLite index: creating it exactly as opm's migrations
//! leave it, reading which version a database has, and bringing an older
//! database to opm's last schema (migration 013) in place before a write, as
//! opm's `SQLLiteMigrator` does on every open for writing.
//!
//! Versions:
//! - 0 to 12: databases of older opm releases. Before a write, opm's
//!   migrations 001..013 (`pkg/sqlite/migrations/`, unchanged up to
//!   v1.73.0) are applied in order, in the write's transaction: their
//!   table changes with opm's statement texts, and their row changes.
//!   Readers apply them to a private copy (see [`Index::open_read`]).
//! - 13: opm's last schema; what this tool writes.
//! - 14: databases of olm-catalog before this layout: opm's schema plus a
//!   `package.add_mode` column and without opm's two triggers. Read as they
//!   are; before a write the column's values move to
//!   [`BOOKKEEPING_TABLE`], the column is dropped, the triggers are created
//!   and the version becomes 13.
//!
//! [`Index::open_read`]: super::Index::open_read

use rusqlite::{params, Connection, OptionalExtension};

use super::error::Res;

/// The schema of a new database (see the file's comments).
pub const SCHEMA_SQL: &str = include_str!("../../schema/index.sql");

/// The `schema_migrations` version opm's last migration (013) records: what
/// this tool writes.
pub const OPM_VERSION: i64 = 13;

/// The version earlier olm-catalog releases wrote (a migration opm never
/// had).
pub const LEGACY_VERSION: i64 = 14;

/// olm-catalog's own table (package add modes), which opm never reads.
pub const BOOKKEEPING_TABLE: &str = "olm_catalog_package";

const BOOKKEEPING_SQL: &str = "CREATE TABLE IF NOT EXISTS olm_catalog_package (
	package_name TEXT PRIMARY KEY,
	add_mode TEXT
);";

/// The `schema_migrations.timestamp` this tool writes: opm's column defaults
/// to the time of the migration, which made two builds of the same bundles
/// differ. Here it is `SOURCE_DATE_EPOCH` (the reproducible-builds
/// convention) when set to a number of seconds, otherwise the Unix epoch,
/// written as SQLite's `CURRENT_TIMESTAMP` writes times.
pub fn migration_timestamp() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
        .unwrap_or(0);
    format_utc(secs)
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of a Unix time.
fn format_utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Creates opm's schema (version 13) and our bookkeeping table in an empty
/// database.
pub fn create(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(SCHEMA_SQL)?;
    set_version(conn, OPM_VERSION)
}

fn set_version(conn: &Connection, version: i64) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM schema_migrations", [])?;
    conn.execute(
        "INSERT INTO schema_migrations(version, timestamp) VALUES (?, ?)",
        params![version, migration_timestamp()],
    )?;
    Ok(())
}

/// The database's `schema_migrations` version, as opm reads it (`SELECT
/// version ... LIMIT 1`); `None` without the table or a row.
pub fn version(conn: &Connection) -> rusqlite::Result<Option<i64>> {
    let has: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations')",
        [],
        |r| r.get(0),
    )?;
    if !has {
        return Ok(None);
    }
    conn.query_row("SELECT version FROM schema_migrations LIMIT 1", [], |r| {
        r.get(0)
    })
    .optional()
}

fn has_column(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM pragma_table_info(?) WHERE name = ?)",
        params![table, column],
        |r| r.get(0),
    )
}

fn has_object(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name = ?)",
        [name],
        |r| r.get(0),
    )
}

/// Brings the database to version 13 (see the module docs). Runs in the
/// caller's transaction, so a failed write leaves the old schema.
pub fn upgrade(conn: &Connection) -> super::Result<()> {
    super::error::internal(|| upgrade_steps(conn))
}

fn upgrade_steps(conn: &Connection) -> Res<()> {
    let v = version(conn)?.unwrap_or(-1);
    if v == OPM_VERSION {
        return Ok(());
    }
    if v == LEGACY_VERSION {
        from_legacy(conn)?;
        return Ok(());
    }
    if v > LEGACY_VERSION {
        return Err(super::Error::UnknownSchemaVersion {
            version: v,
            known: OPM_VERSION,
        }
        .into());
    }
    // Foreign keys are checked at commit (tables are rebuilt in between);
    // renaming a table leaves references to its name alone, as the SQLite
    // opm's migrations were written for did (004 renames every table and
    // drops the old ones).
    conn.execute_batch("PRAGMA defer_foreign_keys = ON; PRAGMA legacy_alter_table = ON;")?;
    // opm's ensureMigrationTable (a database without the table has every
    // migration to run).
    conn.execute_batch(
        "
	CREATE TABLE IF NOT EXISTS schema_migrations (
		version bigint NOT NULL,
        timestamp DATETIME DEFAULT CURRENT_TIMESTAMP
	);
	",
    )?;
    for id in (v + 1)..=OPM_VERSION {
        migrations::up(conn, id).map_err(|e| e.context(format!("opm migration {id:03}")))?;
    }
    conn.execute_batch("PRAGMA legacy_alter_table = OFF;")?;
    set_version(conn, OPM_VERSION)?;
    Ok(())
}

/// Version 14 of earlier olm-catalog releases to opm's 13 with our table.
fn from_legacy(conn: &Connection) -> Res<()> {
    conn.execute_batch(BOOKKEEPING_SQL)?;
    if has_column(conn, "package", "add_mode")? {
        conn.execute(
            "INSERT OR REPLACE INTO olm_catalog_package(package_name, add_mode)
             SELECT name, add_mode FROM package WHERE add_mode IS NOT NULL",
            [],
        )?;
        conn.execute_batch("ALTER TABLE package DROP COLUMN add_mode;")?;
    }
    for (name, sql) in [
        ("api_provider_cleanup", migrations::TRIGGER_PROVIDER),
        ("api_requirer_cleanup", migrations::TRIGGER_REQUIRER),
    ] {
        if !has_object(conn, name)? {
            conn.execute_batch(sql)?;
        }
    }
    set_version(conn, OPM_VERSION)?;
    Ok(())
}

/// Records the mode a package was added with (our bookkeeping).
pub fn set_add_mode(conn: &Connection, package: &str, mode: &str) -> rusqlite::Result<()> {
    conn.execute_batch(BOOKKEEPING_SQL)?;
    conn.execute(
        "INSERT OR REPLACE INTO olm_catalog_package(package_name, add_mode) VALUES (?, ?)",
        params![package, mode],
    )?;
    Ok(())
}

/// Forgets the add mode of a package that is gone.
pub fn forget_package(conn: &Connection, package: &str) -> rusqlite::Result<()> {
    if has_object(conn, BOOKKEEPING_TABLE)? {
        conn.execute(
            "DELETE FROM olm_catalog_package WHERE package_name = ?",
            [package],
        )?;
    }
    Ok(())
}

/// The add mode recorded for a package: our table, or the `package.add_mode`
/// column of a version 14 database; empty when none (opm-built databases).
pub fn add_mode(conn: &Connection, package: &str) -> rusqlite::Result<String> {
    let mut mode: Option<String> = None;
    if has_object(conn, BOOKKEEPING_TABLE)? {
        mode = conn
            .query_row(
                "SELECT add_mode FROM olm_catalog_package WHERE package_name = ?",
                [package],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
    }
    if mode.is_none() && has_column(conn, "package", "add_mode")? {
        mode = conn
            .query_row(
                "SELECT add_mode FROM package WHERE name = ?",
                [package],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
    }
    Ok(mode.unwrap_or_default())
}

/// opm's migrations 001..013: their statements (the texts opm executes, so
/// the schema ends as opm's) and their row changes.
mod migrations {
    use rusqlite::{params, Connection};

    use super::super::error::{bail, Res};
    use serde_json::Value;

    pub const TRIGGER_PROVIDER: &str = "CREATE TRIGGER api_provider_cleanup
		AFTER DELETE ON api_provider
		WHEN NOT EXISTS (SELECT 1 FROM api_provider JOIN api_requirer WHERE 
		    (api_provider.group_name = OLD.group_name AND api_provider.version = OLD.version AND api_provider.kind = OLD.kind) OR 
			(api_requirer.group_name = OLD.group_name AND api_requirer.version = OLD.version AND api_requirer.kind = OLD.kind))
		BEGIN
			DELETE FROM api WHERE group_name = OLD.group_name AND version = OLD.version AND kind = OLD.kind;
		END;";

    pub const TRIGGER_REQUIRER: &str = "CREATE TRIGGER api_requirer_cleanup
		AFTER DELETE ON api_requirer
		WHEN NOT EXISTS (SELECT 1 FROM api_provider JOIN api_requirer WHERE 
		    (api_provider.group_name = OLD.group_name AND api_provider.version = OLD.version AND api_provider.kind = OLD.kind) OR 
			(api_requirer.group_name = OLD.group_name AND api_requirer.version = OLD.version AND api_requirer.kind = OLD.kind))	
		BEGIN
			DELETE FROM api WHERE group_name = OLD.group_name AND version = OLD.version AND kind = OLD.kind;
		END;";

    /// Migration 000's tables (a database without a version).
    const INIT: &str = "
		CREATE TABLE IF NOT EXISTS operatorbundle (
			name TEXT PRIMARY KEY,
			csv TEXT UNIQUE,
			bundle TEXT
		);
		CREATE TABLE IF NOT EXISTS package (
			name TEXT PRIMARY KEY,
			default_channel TEXT,
			FOREIGN KEY(name, default_channel) REFERENCES channel(package_name,name)
		);
		CREATE TABLE IF NOT EXISTS channel (
			name TEXT,
			package_name TEXT,
			head_operatorbundle_name TEXT,
			PRIMARY KEY(name, package_name),
			FOREIGN KEY(package_name) REFERENCES package(name),
			FOREIGN KEY(head_operatorbundle_name) REFERENCES operatorbundle(name)
		);
		CREATE TABLE IF NOT EXISTS channel_entry (
			entry_id INTEGER PRIMARY KEY,
			channel_name TEXT,
			package_name TEXT,
			operatorbundle_name TEXT,
			replaces INTEGER,
			depth INTEGER,
			FOREIGN KEY(replaces) REFERENCES channel_entry(entry_id)  DEFERRABLE INITIALLY DEFERRED,
			FOREIGN KEY(channel_name, package_name) REFERENCES channel(name, package_name)
		);
		CREATE TABLE IF NOT EXISTS api (
			group_name TEXT,
			version TEXT,
			kind TEXT,
			plural TEXT NOT NULL,
			PRIMARY KEY(group_name, version, kind)
		);
		CREATE TABLE IF NOT EXISTS api_provider (
			group_name TEXT,
			version TEXT,
			kind TEXT,
			channel_entry_id INTEGER,
			FOREIGN KEY(channel_entry_id) REFERENCES channel_entry(entry_id),
			FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind)
		);
		";

    const CASCADE_TABLES: [(&str, &str); 7] = [
        (
            "operatorbundle",
            "
		CREATE TABLE operatorbundle (
			name TEXT PRIMARY KEY,
			csv TEXT,
			bundle TEXT,
			bundlepath TEXT);",
        ),
        (
            "package",
            "
		CREATE TABLE package (
			name TEXT PRIMARY KEY,
			default_channel TEXT,
			FOREIGN KEY(name, default_channel) REFERENCES channel(package_name,name) ON DELETE CASCADE
		);",
        ),
        (
            "channel",
            "
		CREATE TABLE channel (
			name TEXT,
			package_name TEXT,
			head_operatorbundle_name TEXT,
			PRIMARY KEY(name, package_name),
			FOREIGN KEY(head_operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE
		);",
        ),
        (
            "channel_entry",
            "
		CREATE TABLE channel_entry (
			entry_id INTEGER PRIMARY KEY,
			channel_name TEXT,
			package_name TEXT,
			operatorbundle_name TEXT,
			replaces INTEGER,
			depth INTEGER,
			FOREIGN KEY(replaces) REFERENCES channel_entry(entry_id) DEFERRABLE INITIALLY DEFERRED, 
			FOREIGN KEY(channel_name, package_name) REFERENCES channel(name, package_name) ON DELETE CASCADE
		);",
        ),
        (
            "api_provider",
            "
		CREATE TABLE api_provider (
			group_name TEXT,
			version TEXT,
			kind TEXT,
			channel_entry_id INTEGER,
			PRIMARY KEY(group_name, version, kind, channel_entry_id),
			FOREIGN KEY(channel_entry_id) REFERENCES channel_entry(entry_id) ON DELETE CASCADE,
			FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind)
		);",
        ),
        (
            "related_image",
            "
		CREATE TABLE related_image (
			image TEXT,
     		operatorbundle_name TEXT,
     		FOREIGN KEY(operatorbundle_name) REFERENCES operatorbundle(name) ON DELETE CASCADE
		);",
        ),
        (
            "api_requirer",
            "
		CREATE TABLE api_requirer (
			group_name TEXT,
			version TEXT,
			kind TEXT,
			channel_entry_id INTEGER,
			PRIMARY KEY(group_name, version, kind, channel_entry_id),
			FOREIGN KEY(channel_entry_id) REFERENCES channel_entry(entry_id) ON DELETE CASCADE,
			FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind)
		);",
        ),
    ];

    fn csv_of(conn: &Connection, name: &str) -> Option<Value> {
        let text: Option<String> = conn
            .query_row(
                "SELECT csv FROM operatorbundle WHERE name = ?",
                [name],
                |r| crate::index::column::text(r, 0),
            )
            .ok()
            .flatten();
        serde_json::from_str(&text?).ok()
    }

    fn bundle_names(conn: &Connection) -> rusqlite::Result<Vec<String>> {
        let mut st = conn.prepare("SELECT DISTINCT name FROM operatorbundle")?;
        let names: Vec<Option<String>> = st
            .query_map([], |r| crate::index::column::text(r, 0))?
            .collect::<Result<_, _>>()?;
        Ok(names.into_iter().flatten().collect())
    }

    fn strs<'a>(v: &'a Value, ptr: &str) -> impl Iterator<Item = &'a Value> {
        v.pointer(ptr)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    }

    fn field<'a>(v: &'a Value, k: &str) -> &'a str {
        v.get(k).and_then(Value::as_str).unwrap_or("")
    }

    /// 001's backfill: the CSV's related images and operator images.
    fn backfill_related_images(conn: &Connection) -> rusqlite::Result<()> {
        for name in bundle_names(conn)? {
            // opm logs a bundle whose CSV does not decode and goes on.
            let Some(csv) = csv_of(conn, &name) else {
                continue;
            };
            let mut images = std::collections::BTreeSet::new();
            for ri in strs(&csv, "/spec/relatedImages") {
                images.insert(field(ri, "image").to_string());
            }
            for d in strs(&csv, "/spec/install/spec/deployments") {
                for kind in ["initContainers", "containers"] {
                    for c in strs(d, &format!("/spec/template/spec/{kind}")) {
                        images.insert(field(c, "image").to_string());
                    }
                }
            }
            for img in images {
                conn.execute(
                    "insert into related_image(image, operatorbundle_name) values(?,?)",
                    params![img, name],
                )?;
            }
        }
        Ok(())
    }

    /// 003's backfill: required CRDs and API services per channel entry.
    fn backfill_required_apis(conn: &Connection) -> rusqlite::Result<()> {
        let mut st = conn.prepare(
            "SELECT DISTINCT channel_entry.entry_id, operatorbundle.name FROM channel_entry
		  INNER JOIN operatorbundle ON operatorbundle.name = channel_entry.operatorbundle_name",
        )?;
        let entries: Vec<(i64, Option<String>)> = st
            .query_map([], |r| Ok((r.get(0)?, crate::index::column::text(r, 1)?)))?
            .collect::<Result<_, _>>()?;
        for (entry, name) in entries {
            let Some(csv) = name.and_then(|n| csv_of(conn, &n)) else {
                continue;
            };
            let mut apis = Vec::new();
            for crd in strs(&csv, "/spec/customresourcedefinitions/required") {
                let (plural, group) = field(crd, "name")
                    .split_once('.')
                    .unwrap_or((field(crd, "name"), ""));
                apis.push((
                    group.to_string(),
                    field(crd, "version").to_string(),
                    field(crd, "kind").to_string(),
                    plural.to_string(),
                ));
            }
            for api in strs(&csv, "/spec/apiservicedefinitions/required") {
                apis.push((
                    field(api, "group").to_string(),
                    field(api, "version").to_string(),
                    field(api, "kind").to_string(),
                    field(api, "name").to_string(),
                ));
            }
            for (g, v, k, p) in apis {
                conn.execute(
                    "insert or replace into api(group_name, version, kind, plural) values(?, ?, ?, ?)",
                    params![g, v, k, p],
                )?;
                conn.execute(
                    "insert into api_requirer(group_name, version, kind, channel_entry_id) values(?, ?, ?, ?)",
                    params![g, v, k, entry],
                )?;
            }
        }
        Ok(())
    }

    /// 005's backfill: version and skipRange from the CSV. (opm's statement
    /// inserts new, nameless rows instead of updating the bundle's; here
    /// the bundle's own row gets them.)
    fn backfill_versioning(conn: &Connection) -> rusqlite::Result<()> {
        for name in bundle_names(conn)? {
            let Some(csv) = csv_of(conn, &name) else {
                continue;
            };
            let range = csv
                .pointer("/metadata/annotations/olm.skipRange")
                .and_then(Value::as_str)
                .unwrap_or("");
            let version = csv
                .pointer("/spec/version")
                .and_then(Value::as_str)
                .unwrap_or("");
            conn.execute(
                "update operatorbundle set version = ?, skiprange = ? where name = ?",
                params![version, range, name],
            )?;
        }
        Ok(())
    }

    /// 007's backfill: replaces and skips from the channel entries (the
    /// least deep entry's replaced bundle is `replaces`, the others skips).
    fn backfill_replaces(conn: &Connection) -> rusqlite::Result<()> {
        for name in bundle_names(conn)? {
            let mut st = conn.prepare(
                "SELECT DISTINCT replaces.operatorbundle_name
		FROM channel_entry
		LEFT OUTER JOIN channel_entry replaces ON channel_entry.replaces = replaces.entry_id
    	WHERE channel_entry.operatorbundle_name = ? 
    	ORDER BY channel_entry.depth ASC",
            )?;
            let found: Vec<Option<String>> = st
                .query_map([&name], |r| crate::index::column::text(r, 0))?
                .collect::<Result<_, _>>()?;
            let mut it = found.into_iter();
            let replaces = it.next().flatten().unwrap_or_default();
            let skips: Vec<String> = it.flatten().collect();
            conn.execute(
                "update operatorbundle SET replaces = ?, skips = ? WHERE name = ?;",
                params![replaces, skips.join(","), name],
            )?;
        }
        Ok(())
    }

    /// Runs opm's migration `id` (1..=13).
    pub fn up(conn: &Connection, id: i64) -> Res<()> {
        match id {
            0 => conn.execute_batch(INIT)?,
            1 => {
                conn.execute_batch(
                    "
		CREATE TABLE IF NOT EXISTS related_image (
			image TEXT,
     		operatorbundle_name TEXT,
     		FOREIGN KEY(operatorbundle_name) REFERENCES operatorbundle(name)
		);
		",
                )?;
                backfill_related_images(conn)?;
            }
            2 => conn.execute_batch(
                "
		ALTER TABLE operatorbundle 
		ADD COLUMN bundlepath TEXT;
		",
            )?,
            3 => {
                conn.execute_batch(
                    "
		CREATE TABLE IF NOT EXISTS api_requirer (
			group_name TEXT,
			version TEXT,
			kind TEXT,
			channel_entry_id INTEGER,
			FOREIGN KEY(channel_entry_id) REFERENCES channel_entry(entry_id),
			FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind)
		);
		",
                )?;
                backfill_required_apis(conn)?;
            }
            4 => {
                for (t, _) in CASCADE_TABLES {
                    conn.execute_batch(&format!("ALTER TABLE {t} RENAME TO {t}_old;"))?;
                }
                for (_, create) in CASCADE_TABLES {
                    conn.execute_batch(create)?;
                }
                for (t, _) in CASCADE_TABLES {
                    conn.execute_batch(&format!(
                        "INSERT INTO {t} SELECT * FROM \"{t}_old\"; DROP TABLE \"{t}_old\";"
                    ))?;
                }
            }
            5 => {
                conn.execute_batch(
                    "
		ALTER TABLE operatorbundle 
		ADD COLUMN skiprange TEXT;

		ALTER TABLE operatorbundle 
		ADD COLUMN version TEXT;
		",
                )?;
                backfill_versioning(conn)?;
            }
            6 => {
                conn.execute_batch(
                    "
		CREATE TABLE api_provider_new (
			group_name TEXT,
			version TEXT,
			kind TEXT,
			operatorbundle_name TEXT,
			operatorbundle_version TEXT,
			operatorbundle_path TEXT,
			FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
			FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind) ON DELETE CASCADE
		);
		CREATE TABLE api_requirer_new (
			group_name TEXT,
			version TEXT,
			kind TEXT,
			operatorbundle_name TEXT,
			operatorbundle_version TEXT,
			operatorbundle_path TEXT,
			FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
			FOREIGN KEY(group_name, version, kind) REFERENCES api(group_name, version, kind) ON DELETE CASCADE
		);
-- 		these three fields are used as the target of a foreign key, so they need an index
		CREATE UNIQUE INDEX pk ON operatorbundle(name, version, bundlepath);
		",
                )?;
                for t in ["api_provider", "api_requirer"] {
                    conn.execute_batch(&format!(
                        "INSERT INTO {t}_new(group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path)
                         SELECT DISTINCT a.group_name, a.version, a.kind, o.name, o.version, o.bundlepath FROM {t} a
                         INNER JOIN channel_entry ON channel_entry.entry_id = a.channel_entry_id
                         INNER JOIN operatorbundle o ON o.name = channel_entry.operatorbundle_name
                         WHERE a.group_name IS NOT NULL AND a.version IS NOT NULL AND a.kind IS NOT NULL AND o.name IS NOT NULL;"
                    ))?;
                }
                conn.execute_batch(
                    "
		DROP TABLE api_provider;
		DROP TABLE api_requirer;
		ALTER TABLE api_provider_new RENAME TO api_provider;
		ALTER TABLE api_requirer_new RENAME TO api_requirer;
		",
                )?;
            }
            7 => {
                conn.execute_batch(
                    "
		ALTER TABLE operatorbundle 
		ADD COLUMN replaces TEXT;

		ALTER TABLE operatorbundle 
		ADD COLUMN skips TEXT;
		",
                )?;
                conn.execute_batch(TRIGGER_PROVIDER)?;
                conn.execute_batch(TRIGGER_REQUIRER)?;
                backfill_replaces(conn)?;
            }
            8 => {
                conn.execute_batch(
                    "
		CREATE TABLE IF NOT EXISTS dependencies (
			type TEXT,
			value TEXT,
			operatorbundle_name TEXT,
			operatorbundle_version TEXT,
			operatorbundle_path TEXT,
			FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE
		);
		",
                )?;
                // One olm.gvk dependency per required API; the value as Go
                // marshals a map (keys sorted), `type` included (009 drops it).
                conn.execute_batch(
                    "INSERT INTO dependencies(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path)
                     SELECT DISTINCT 'olm.gvk', json_object('group', group_name, 'kind', kind, 'type', 'olm.gvk', 'version', version),
                            operatorbundle_name, operatorbundle_version, operatorbundle_path
                     FROM api_requirer
                     WHERE group_name IS NOT NULL AND version IS NOT NULL AND kind IS NOT NULL AND operatorbundle_name IS NOT NULL;",
                )?;
            }
            9 => {
                conn.execute_batch(
                    "
		CREATE TABLE IF NOT EXISTS properties (
			type TEXT,
			value TEXT,
			operatorbundle_name TEXT,
			operatorbundle_version TEXT,
			operatorbundle_path TEXT,
			FOREIGN KEY(operatorbundle_name, operatorbundle_version, operatorbundle_path) REFERENCES operatorbundle(name, version, bundlepath) ON DELETE CASCADE
		);
		",
                )?;
                // olm.package per providing bundle (its package from its
                // channel entries), olm.gvk per provided API.
                conn.execute_batch(
                    "INSERT INTO properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path)
                     SELECT 'olm.package',
                            json_object('packageName', coalesce((SELECT package_name FROM channel_entry WHERE channel_entry.operatorbundle_name = p.operatorbundle_name LIMIT 1), ''), 'version', coalesce(p.operatorbundle_version, '')),
                            p.operatorbundle_name, p.operatorbundle_version, p.operatorbundle_path
                     FROM (SELECT DISTINCT operatorbundle_name, operatorbundle_version, operatorbundle_path FROM api_provider
                           WHERE group_name IS NOT NULL AND version IS NOT NULL AND kind IS NOT NULL AND operatorbundle_name IS NOT NULL) p;
                     INSERT INTO properties(type, value, operatorbundle_name, operatorbundle_version, operatorbundle_path)
                     SELECT DISTINCT 'olm.gvk', json_object('group', group_name, 'kind', kind, 'version', version),
                            operatorbundle_name, operatorbundle_version, operatorbundle_path
                     FROM api_provider
                     WHERE group_name IS NOT NULL AND version IS NOT NULL AND kind IS NOT NULL AND operatorbundle_name IS NOT NULL;",
                )?;
                // Drop `type` from the dependency values. (opm's statement
                // gives every row the first row's value, a subquery without
                // correlation; here each row keeps its own.)
                conn.execute_batch(
                    "UPDATE dependencies SET value = json_remove(value, '$.type') WHERE json_valid(value);",
                )?;
            }
            10 => conn.execute_batch(
                "
		UPDATE properties
		SET operatorbundle_path = (SELECT bundlepath
							FROM operatorbundle
							WHERE operatorbundle_name = operatorbundle.name AND operatorbundle_version = operatorbundle.version)",
            )?,
            11 => conn.execute_batch(
                "
		ALTER TABLE operatorbundle 
		ADD COLUMN substitutesfor TEXT;
		",
            )?,
            12 => conn.execute_batch(
                "
		CREATE TABLE IF NOT EXISTS deprecated (
			operatorbundle_name TEXT PRIMARY KEY
		);
		INSERT OR REPLACE INTO deprecated(operatorbundle_name) SELECT operatorbundle_name FROM properties WHERE properties.type='olm.deprecated';
		",
            )?,
            13 => conn.execute_batch(
                "DELETE FROM deprecated WHERE deprecated.operatorbundle_name NOT IN (SELECT DISTINCT deprecated.operatorbundle_name FROM (deprecated INNER JOIN operatorbundle ON deprecated.operatorbundle_name = operatorbundle.name))",
            )?,
            other => bail!("opm has no migration {other}"),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_civil_utc() {
        assert_eq!(format_utc(0), "1970-01-01 00:00:00");
        assert_eq!(format_utc(1_764_786_266), "2025-12-03 18:24:26");
        assert_eq!(format_utc(951_782_400), "2000-02-29 00:00:00");
    }

    /// A database as opm's first release wrote it (migration 000's tables,
    /// no version) gets every migration's rows: related images, version,
    /// skipRange and required APIs from the stored CSV, APIs by bundle,
    /// replaces from the entries, olm.package/olm.gvk properties, olm.gvk
    /// dependencies without `type`.
    #[test]
    fn migrations_fill_in_rows_of_a_database_of_the_first_schema() {
        let mut c = Connection::open_in_memory().expect("db");
        // The first schema's keys are circular (package <-> channel).
        c.execute_batch("PRAGMA foreign_keys = OFF;").expect("fk");
        migrations::up(&c, 0).expect("000");
        let csv = |name: &str, version: &str| {
            serde_json::json!({
                "kind": "ClusterServiceVersion",
                "metadata": {"name": name, "annotations": {"olm.skipRange": "<1.0.0"}},
                "spec": {
                    "version": version,
                    "relatedImages": [{"name": "r", "image": format!("example.com/rel:{version}")}],
                    "install": {"spec": {"deployments": [{"spec": {"template": {"spec": {
                        "containers": [{"image": format!("example.com/op:{version}")}]}}}}]}},
                    "customresourcedefinitions": {"required": [
                        {"name": "others.other.io", "version": "v1", "kind": "Other"}]}
                }
            })
            .to_string()
        };
        c.execute_batch(&format!(
            "INSERT INTO operatorbundle VALUES ('op.v1', '{}', ''), ('op.v0', '{}', '');
             INSERT INTO package VALUES ('op', 'stable');
             INSERT INTO channel VALUES ('stable', 'op', 'op.v1');
             INSERT INTO channel_entry VALUES (1, 'stable', 'op', 'op.v1', 2, 0), (2, 'stable', 'op', 'op.v0', NULL, 1);
             INSERT INTO api VALUES ('example.com', 'v1', 'Thing', 'things');
             INSERT INTO api_provider VALUES ('example.com', 'v1', 'Thing', 1);",
            csv("op.v1", "1.0.0"),
            csv("op.v0", "0.9.0")
        ))
        .expect("rows");
        // As a writer opens it (see `db::configure`).
        c.execute_batch("PRAGMA foreign_keys = ON;").expect("fk");
        let tx = c.transaction().expect("tx");
        upgrade(&tx).expect("upgrade");
        tx.commit().expect("commit");
        let q = |sql: &str| -> Vec<Vec<String>> {
            let mut st = c.prepare(sql).expect("prepare");
            let n = st.column_count();
            st.query_map([], |r| {
                Ok((0..n)
                    .map(|i| {
                        crate::index::column::text(r, i)
                            .ok()
                            .flatten()
                            .unwrap_or("NULL".into())
                    })
                    .collect())
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
        };
        let v = |rows: &[&[&str]]| -> Vec<Vec<String>> {
            rows.iter()
                .map(|r| r.iter().map(|x| x.to_string()).collect())
                .collect()
        };
        assert_eq!(q("SELECT version FROM schema_migrations"), v(&[&["13"]]));
        assert_eq!(
            q("SELECT name, version, skiprange, replaces, skips FROM operatorbundle ORDER BY name"),
            v(&[&["op.v0", "0.9.0", "<1.0.0", "", ""], &["op.v1", "1.0.0", "<1.0.0", "op.v0", ""]])
        );
        assert_eq!(
            q("SELECT operatorbundle_name, image FROM related_image ORDER BY 1, 2"),
            v(&[
                &["op.v0", "example.com/op:0.9.0"],
                &["op.v0", "example.com/rel:0.9.0"],
                &["op.v1", "example.com/op:1.0.0"],
                &["op.v1", "example.com/rel:1.0.0"]
            ])
        );
        assert_eq!(
            q("SELECT group_name, version, kind, operatorbundle_name, operatorbundle_version, operatorbundle_path FROM api_provider"),
            v(&[&["example.com", "v1", "Thing", "op.v1", "1.0.0", "NULL"]])
        );
        assert_eq!(
            q("SELECT group_name, kind, operatorbundle_name FROM api_requirer ORDER BY 3"),
            v(&[
                &["other.io", "Other", "op.v0"],
                &["other.io", "Other", "op.v1"]
            ])
        );
        assert_eq!(
            q("SELECT type, value, operatorbundle_name FROM properties ORDER BY 1, 2"),
            v(&[
                &[
                    "olm.gvk",
                    r#"{"group":"example.com","kind":"Thing","version":"v1"}"#,
                    "op.v1"
                ],
                &[
                    "olm.package",
                    r#"{"packageName":"op","version":"1.0.0"}"#,
                    "op.v1"
                ]
            ])
        );
        assert_eq!(
            q("SELECT DISTINCT type, value FROM dependencies"),
            v(&[&[
                "olm.gvk",
                r#"{"group":"other.io","kind":"Other","version":"v1"}"#
            ]])
        );
    }

    #[test]
    fn migrations_from_nothing_give_the_schema_of_a_new_database() {
        let a = Connection::open_in_memory().expect("db");
        a.execute_batch(
            "CREATE TABLE schema_migrations (
		version bigint NOT NULL,
        timestamp DATETIME DEFAULT CURRENT_TIMESTAMP
	);",
        )
        .expect("table");
        for id in 0..=OPM_VERSION {
            migrations::up(&a, id).expect("migration");
        }
        let b = Connection::open_in_memory().expect("db");
        create(&b).expect("create");
        let master = |c: &Connection| -> Vec<(String, String, String)> {
            c.prepare("SELECT type, name, coalesce(sql, '') FROM sqlite_master WHERE tbl_name != ? ORDER BY type, name")
                .expect("prepare")
                .query_map([BOOKKEEPING_TABLE], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows")
        };
        assert_eq!(master(&a), master(&b));
    }
}
