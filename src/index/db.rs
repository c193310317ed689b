//! Opening, creating and safely writing index databases.
//!
//! Every write happens inside one SQLite transaction (`BEGIN IMMEDIATE`,
//! rollback journal): if the process fails or is killed, SQLite rolls the
//! hot journal back on the next open and the file holds its old content. A
//! new database is built in a temporary file next to the target and renamed
//! over it only after the commit, so a killed `index add` leaves no file at
//! all.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, TransactionBehavior};

/// The schema (opm's migrations 000..014 in their final shape).
pub const SCHEMA_SQL: &str = include_str!("../../schema/index.sql");

/// The `schema_migrations` version the schema corresponds to.
pub const SCHEMA_VERSION: i64 = 14;

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
    /// Another process holds the write lock.
    #[error("{0}: database is locked by another process (another index command is writing it); try again when it has finished")]
    Locked(PathBuf),
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

/// An open index database.
pub struct Index {
    /// The connection.
    pub conn: Connection,
    /// The path it was opened from (for messages).
    pub path: PathBuf,
    /// Where the file goes once committed, when this is a new database built
    /// in a temporary file.
    pending_rename: Option<(tempfile::TempPath, PathBuf)>,
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
        Some(v) if v >= 9 => {}
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
        Ok(Index {
            conn,
            path: path.to_path_buf(),
            pending_rename: None,
        })
    }

    /// Opens `path` for writing, or, when it does not exist, creates a new
    /// database in a temporary file beside it that [`Index::finish`] renames
    /// into place.
    pub fn open_or_create(path: &Path) -> Result<Index, DbError> {
        if path.exists() && !is_empty_file(path) {
            return Index::open_write(path);
        }
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let tmp = tempfile::Builder::new()
            .prefix(".olm-catalog-index-")
            .suffix(".db.tmp")
            .tempfile_in(&dir)
            .map_err(|e| DbError::Io {
                path: dir.clone(),
                source: e,
            })?
            .into_temp_path();
        let conn = Connection::open(&tmp).map_err(|e| map_err(path, e))?;
        configure(&conn, path)?;
        conn.execute_batch(SCHEMA_SQL)
            .map_err(|e| map_err(path, e))?;
        Ok(Index {
            conn,
            path: path.to_path_buf(),
            pending_rename: Some((tmp, path.to_path_buf())),
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
        } = self;
        drop(conn);
        if let Some((tmp, target)) = pending_rename {
            if target.exists() && !is_empty_file(&target) {
                return Err(DbError::Io {
                    path: target,
                    source: std::io::Error::new(
                        std::io::ErrorKind::AlreadyExists,
                        "another process created this file meanwhile; the new index was discarded",
                    ),
                });
            }
            tmp.persist(&target).map_err(|e| DbError::Io {
                path: path.clone(),
                source: e.error,
            })?;
        }
        Ok(())
    }
}
