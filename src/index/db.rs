//! Opening, creating and safely writing index databases.
//!
//! Every write happens inside one SQLite transaction (`BEGIN IMMEDIATE`,
//! rollback journal): if the process fails or is killed, SQLite rolls the
//! hot journal back on the next open and the file holds its old content. A
//! new database is built in a temporary file next to the target and renamed
//! over it only after the commit, so a killed `index add` leaves no file at
//! all.
//!
//! Temporary files are named `.olm-catalog-index-<target>-XXXXXX.db.tmp`
//! and carry a `flock` for as long as their builder lives. The next command
//! creating a database in that directory removes such files (and their
//! `-journal`) whose lock nobody holds, that is, leftovers of killed runs;
//! one whose lock is held and whose target is the same database makes it
//! fail with "database is locked by another process".

use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

/// The schema (opm's migrations 000..014 in their final shape).
pub const SCHEMA_SQL: &str = include_str!("../../schema/index.sql");

/// The `schema_migrations` version the schema corresponds to.
pub const SCHEMA_VERSION: i64 = 14;

/// Start of the names of temporary databases (see the module docs).
pub const TEMP_PREFIX: &str = ".olm-catalog-index-";

/// End of the names of temporary databases.
pub const TEMP_SUFFIX: &str = ".db.tmp";

/// Tables every opm index has.
const REQUIRED_TABLES: &[&str] = &[
    "operatorbundle",
    "package",
    "channel",
    "channel_entry",
    "api",
    "api_provider",
    "api_requirer",
    "related_image",
    "properties",
    "dependencies",
    "schema_migrations",
];

/// Why a database could not be used.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Another process holds the write lock, or is creating the same new
    /// database.
    #[error("{0}: database is locked by another process (another index command is writing it); try again when it has finished")]
    Locked(PathBuf),
    /// An opm index with an older schema, which this tool reads but does
    /// not write.
    #[error("{path}: schema version {version} is older than {SCHEMA_VERSION}, the only version this tool writes (opm's migrations 010 to 014 add columns, the deprecated table and rows); nothing was changed. Convert it: `olm-catalog migrate {path} catalog/` then `olm-catalog index add --database new.db --from-fbc catalog/`, or let opm v1.73.0 or earlier migrate it (any `opm registry add` does)", path = path.display())]
    OldSchema {
        /// The file.
        path: PathBuf,
        /// Its `schema_migrations` version.
        version: i64,
    },
    /// Not an SQLite file, or not an opm index.
    #[error("{path}: not an opm index database: {reason}")]
    NotAnIndex {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The file does not exist.
    #[error("{0}: no such index database")]
    Missing(PathBuf),
    /// Any other SQLite error.
    #[error("{path}: {source}")]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// The error.
        source: rusqlite::Error,
    },
    /// An I/O error.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn map_err(path: &Path, e: rusqlite::Error) -> DbError {
    if is_busy(&e) {
        return DbError::Locked(path.to_path_buf());
    }
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        if matches!(
            f.code,
            rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt
        ) {
            return DbError::NotAnIndex {
                path: path.to_path_buf(),
                reason: format!("the file is not an SQLite database or is corrupt ({e})"),
            };
        }
    }
    DbError::Sqlite {
        path: path.to_path_buf(),
        source: e,
    }
}

/// A text column as opm's Go code reads it into a string, whatever the
/// value's storage class: opm (Go `database/sql`) writes `[]byte` values such
/// as `operatorbundle.csv` and `.bundle` as BLOBs, this tool as TEXT; both
/// give their bytes. NULL gives `None`; a number its decimal form, as Go's
/// `Scan` into a string gives it.
pub fn text(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Null => None,
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(match std::str::from_utf8(b) {
            Ok(s) => s.to_owned(),
            // Go keeps the bytes; the closest string here.
            Err(_) => String::from_utf8_lossy(b).into_owned(),
        }),
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
    })
}

/// [`text`], NULL read as the empty string (Go's `sql.NullString.String`).
pub fn text_or_empty(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<String> {
    Ok(text(r, i)?.unwrap_or_default())
}

/// An open index database.
pub struct Index {
    /// The connection.
    pub conn: Connection,
    /// The path it was opened from (for messages).
    pub path: PathBuf,
    /// Where the file goes once committed, when this is a new database built
    /// in a temporary file.
    pending_rename: Option<(tempfile::TempPath, PathBuf)>,
    /// The temporary file's `flock` (see the module docs); declared last so
    /// that it is released after the connection is closed and the file
    /// removed.
    temp_lock: Option<std::fs::File>,
}

fn configure(conn: &Connection, path: &Path) -> Result<(), DbError> {
    // Fail at once rather than wait: a second writer must be told, not hang.
    conn.busy_timeout(std::time::Duration::from_millis(0))
        .map_err(|e| map_err(path, e))?;
    conn.execute_batch("PRAGMA foreign_keys = ON;")
        .map_err(|e| map_err(path, e))?;
    Ok(())
}

fn check_index(conn: &Connection, path: &Path) -> Result<(), DbError> {
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .map_err(|e| map_err(path, e))?;
    let names: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .map_err(|e| map_err(path, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| map_err(path, e))?;
    let missing: Vec<&str> = REQUIRED_TABLES
        .iter()
        .copied()
        .filter(|t| !names.iter().any(|n| n == t))
        .collect();
    if !missing.is_empty() {
        return Err(DbError::NotAnIndex {
            path: path.to_path_buf(),
            reason: format!(
                "it is an SQLite database without the table(s) {}",
                missing.join(", ")
            ),
        });
    }
    let version: Option<i64> = conn
        .query_row("SELECT max(version) FROM schema_migrations", [], |r| {
            r.get(0)
        })
        .map_err(|e| map_err(path, e))?;
    match version {
        Some(v) if (9..=SCHEMA_VERSION).contains(&v) => {}
        Some(v) if v > SCHEMA_VERSION => {
            return Err(DbError::NotAnIndex {
                path: path.to_path_buf(),
                reason: format!(
                    "its schema version is {v}, newer than the newest this tool knows ({SCHEMA_VERSION}, opm v1.73.0's)"
                ),
            })
        }
        Some(v) => {
            return Err(DbError::NotAnIndex {
                path: path.to_path_buf(),
                reason: format!(
                    "its schema version is {v}; this tool reads versions 9 to {SCHEMA_VERSION} (run `opm registry add` once with a newer opm to migrate it)"
                ),
            })
        }
        None => {
            return Err(DbError::NotAnIndex {
                path: path.to_path_buf(),
                reason: "schema_migrations is empty".into(),
            })
        }
    }
    Ok(())
}

/// Refuses to write a database whose schema is older than the one this
/// tool writes: versions 9 to 13 lack columns and tables (`substitutesfor`,
/// `deprecated`, `add_mode`) and rows opm's data migrations 010 and 013 add.
fn check_writable(conn: &Connection, path: &Path) -> Result<(), DbError> {
    let version: Option<i64> = conn
        .query_row("SELECT max(version) FROM schema_migrations", [], |r| {
            r.get(0)
        })
        .map_err(|e| map_err(path, e))?;
    match version {
        Some(SCHEMA_VERSION) => Ok(()),
        Some(v) => Err(DbError::OldSchema {
            path: path.to_path_buf(),
            version: v,
        }),
        None => Err(DbError::NotAnIndex {
            path: path.to_path_buf(),
            reason: "schema_migrations is empty".into(),
        }),
    }
}

/// `flock(LOCK_EX | LOCK_NB)`: whether the lock was taken.
fn try_flock(f: &std::fs::File) -> bool {
    // SAFETY: flock on a valid, open descriptor; no memory is shared.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Removes leftovers of killed runs from `dir`: temporary databases (and
/// their journals) whose lock no process holds. Returns whether a live
/// process is building `target_name` there. Only files named by
/// [`TEMP_PREFIX`]/[`TEMP_SUFFIX`] are touched.
fn sweep_temps(dir: &Path, target_name: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let same = format!("{TEMP_PREFIX}{target_name}-");
    let mut live = false;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with(TEMP_PREFIX) {
            continue;
        }
        let path = e.path();
        if let Some(main) = name.strip_suffix("-journal") {
            // A journal whose database is gone belongs to no one.
            if main.ends_with(TEMP_SUFFIX) && !dir.join(main).exists() {
                let _ = std::fs::remove_file(&path);
            }
            continue;
        }
        if !name.ends_with(TEMP_SUFFIX) {
            continue;
        }
        let Ok(f) = std::fs::File::open(&path) else {
            continue;
        };
        if try_flock(&f) {
            // Nobody holds it: a killed run's. Remove it while holding the
            // lock, journal first (a database without it is harmless).
            let mut journal = path.clone().into_os_string();
            journal.push("-journal");
            let _ = std::fs::remove_file(PathBuf::from(journal));
            let _ = std::fs::remove_file(&path);
        } else if name
            .strip_prefix(&same)
            .and_then(|r| r.strip_suffix(TEMP_SUFFIX))
            // tempfile's random part: six alphanumerics (so `a.db` is not
            // confused with `a.db-x.db`).
            .is_some_and(|r| r.len() == 6 && r.chars().all(|c| c.is_ascii_alphanumeric()))
        {
            live = true;
        }
    }
    live
}

/// Creates the locked temporary database file for `target` in `dir`, with
/// the permissions SQLite gives new databases (0644 less the umask).
fn create_temp(
    dir: &Path,
    target_name: &str,
) -> Result<(std::fs::File, tempfile::TempPath), DbError> {
    let io = |e| DbError::Io {
        path: dir.to_path_buf(),
        source: e,
    };
    for _ in 0..5 {
        let (file, tmp) = tempfile::Builder::new()
            .prefix(&format!("{TEMP_PREFIX}{target_name}-"))
            .suffix(TEMP_SUFFIX)
            .permissions(std::fs::Permissions::from_mode(0o644))
            .tempfile_in(dir)
            .map_err(io)?
            .into_parts();
        if !try_flock(&file) {
            continue;
        }
        // Another run's sweep may have removed the file between its
        // creation and the lock: then the path names another file, or none.
        let same = match (file.metadata(), std::fs::metadata(&tmp)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        if same {
            return Ok((file, tmp));
        }
    }
    Err(io(std::io::Error::other(
        "could not create a temporary database (removed by another process each time)",
    )))
}

/// An empty file counts as no database (SQLite itself treats it as an
/// empty one; `sqlite3 index.db` leaves such files behind).
fn is_empty_file(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|m| m.len() == 0)
        .unwrap_or(false)
}

impl Index {
    /// Opens an existing index read-only.
    pub fn open_read(path: &Path) -> Result<Index, DbError> {
        if !path.is_file() {
            return Err(DbError::Missing(path.to_path_buf()));
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| map_err(path, e))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(|e| map_err(path, e))?;
        check_index(&conn, path)?;
        Ok(Index {
            conn,
            path: path.to_path_buf(),
            pending_rename: None,
            temp_lock: None,
        })
    }

    /// Opens an existing index for writing.
    pub fn open_write(path: &Path) -> Result<Index, DbError> {
        if !path.is_file() {
            return Err(DbError::Missing(path.to_path_buf()));
        }
        let conn = Connection::open(path).map_err(|e| map_err(path, e))?;
        configure(&conn, path)?;
        check_index(&conn, path)?;
        check_writable(&conn, path)?;
        Ok(Index {
            conn,
            path: path.to_path_buf(),
            pending_rename: None,
            temp_lock: None,
        })
    }

    /// Opens `path` for writing, or, when it does not exist, creates a new
    /// database in a temporary file beside it that [`Index::finish`] renames
    /// into place.
    pub fn open_or_create(path: &Path) -> Result<Index, DbError> {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let target_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "index.db".into());
        let building = sweep_temps(&dir, &target_name);
        if path.exists() && !is_empty_file(path) {
            return Index::open_write(path);
        }
        if building {
            return Err(DbError::Locked(path.to_path_buf()));
        }
        let (lock, tmp) = create_temp(&dir, &target_name)?;
        let conn = Connection::open(&tmp).map_err(|e| map_err(path, e))?;
        configure(&conn, path)?;
        conn.execute_batch(SCHEMA_SQL)
            .map_err(|e| map_err(path, e))?;
        Ok(Index {
            conn,
            path: path.to_path_buf(),
            pending_rename: Some((tmp, path.to_path_buf())),
            temp_lock: Some(lock),
        })
    }

    /// Creates an empty index at `path` in memory-free fashion (tests, migrate).
    pub fn create_new(path: &Path) -> Result<Index, DbError> {
        if path.exists() {
            return Err(DbError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::AlreadyExists,
                    "file exists; refusing to overwrite it",
                ),
            });
        }
        Index::open_or_create(path)
    }

    /// Whether this is a database being created (not yet in place).
    pub fn is_new(&self) -> bool {
        self.pending_rename.is_some()
    }

    /// Runs `f` in one immediate transaction, committed only if it succeeds.
    pub fn write<T>(
        &mut self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| map_err(&path, e))?;
        let out = f(&tx)?;
        tx.commit().map_err(|e| map_err(&path, e))?;
        Ok(out)
    }

    /// Puts a newly created database in place (no-op for existing ones).
    pub fn finish(self) -> Result<(), DbError> {
        let Index {
            conn,
            path,
            pending_rename,
            temp_lock,
        } = self;
        drop(conn);
        if let Some((tmp, target)) = pending_rename {
            if is_empty_file(&target) {
                // An empty file is no database (see `open_or_create`).
                let _ = std::fs::remove_file(&target);
            }
            // Never replace a database another process put there meanwhile:
            // it was building the same file, as a lock would have said.
            if let Err(e) = tmp.persist_noclobber(&target) {
                return Err(if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                    DbError::Locked(target)
                } else {
                    DbError::Io {
                        path,
                        source: e.error,
                    }
                });
            }
        }
        drop(temp_lock);
        Ok(())
    }
}
