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

use super::error::{DbError, Res};

/// The `schema_migrations` version this tool writes: opm's last migration
/// (013). Older versions are migrated before a write (see
/// `index/schema.rs`).
pub const SCHEMA_VERSION: i64 = super::schema::OPM_VERSION;

/// Start of the names of temporary databases (see the module docs).
pub const TEMP_PREFIX: &str = ".olm-catalog-index-";

/// End of the names of temporary databases.
pub const TEMP_SUFFIX: &str = ".db.tmp";

/// Tables every opm index has since migration 000.
const BASE_TABLES: &[&str] = &[
    "operatorbundle",
    "package",
    "channel",
    "channel_entry",
    "api",
];

/// Tables every opm index has at version 13.
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
    "deprecated",
    "schema_migrations",
];

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
        source: super::error::SqliteError::new(&e),
    }
}

/// Runs `f` with the connection's triggers off, for statements that delete
/// `api_provider`/`api_requirer` rows (directly or by cascade). opm's schema
/// has two triggers (migration 007) that delete an `api` row when such a row
/// goes and no row of the *cross join* of both tables names that API: with
/// no `api_requirer` rows that is always, and the `api` row's `ON DELETE
/// CASCADE` then deletes every other bundle's `api_provider` rows of that
/// API. The triggers stay in the schema (opm runs them); our deletes skip
/// them and remove unused `api` rows themselves. Statements must be
/// prepared inside `f` (SQLite codes triggers into a statement when it is
/// prepared).
pub(crate) fn without_triggers<T>(conn: &Connection, f: impl FnOnce() -> Res<T>) -> Res<T> {
    use rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER as TRIGGERS;
    conn.set_db_config(TRIGGERS, false)?;
    let out = f();
    conn.set_db_config(TRIGGERS, true)?;
    out
}

/// An open index database.
pub struct Index {
    /// The connection.
    pub(crate) conn: Connection,
    /// The path it was opened from (for messages).
    pub path: PathBuf,
    /// Where the file goes once committed, when this is a new database built
    /// in a temporary file.
    pending_rename: Option<(tempfile::TempPath, PathBuf)>,
    /// Whether the next write must first bring the schema to opm's
    /// version 13 (see [`super::schema`]).
    upgrade: bool,
    /// A migrated private copy of an older database that a reader reads.
    _copy: Option<tempfile::TempPath>,
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

fn table_names(conn: &Connection, path: &Path) -> Result<Vec<String>, DbError> {
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .map_err(|e| map_err(path, e))?;
    let names: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .map_err(|e| map_err(path, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| map_err(path, e))?;
    Ok(names)
}

fn require_tables(conn: &Connection, path: &Path, tables: &[&str]) -> Result<(), DbError> {
    let names = table_names(conn, path)?;
    let missing: Vec<&str> = tables
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
    Ok(())
}

/// Checks that the file is an opm index of a schema version opm wrote (or
/// olm-catalog's former 14) and returns that version; -1 for a database
/// without `schema_migrations` rows, as opm reads it (every migration
/// applies).
fn check_index(conn: &Connection, path: &Path) -> Result<i64, DbError> {
    require_tables(conn, path, BASE_TABLES)?;
    let version = super::schema::version(conn)
        .map_err(|e| map_err(path, e))?
        .unwrap_or(-1);
    if version > super::schema::LEGACY_VERSION {
        return Err(DbError::NotAnIndex {
            path: path.to_path_buf(),
            reason: format!(
                "its schema version is {version}, newer than any opm wrote ({SCHEMA_VERSION}, opm v1.73.0's last migration)"
            ),
        });
    }
    Ok(version)
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
    /// Opens an existing index read-only. A database of an older schema
    /// (opm before migration 013) is read through a private copy that opm's
    /// migrations bring to version 13, so every reader sees one schema.
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
        let version = check_index(&conn, path)?;
        if version < SCHEMA_VERSION {
            drop(conn);
            return Index::open_migrated_copy(path);
        }
        require_tables(&conn, path, REQUIRED_TABLES)?;
        Ok(Index {
            conn,
            path: path.to_path_buf(),
            pending_rename: None,
            upgrade: false,
            _copy: None,
            temp_lock: None,
        })
    }

    /// A migrated copy of an older database (see [`Index::open_read`]).
    fn open_migrated_copy(path: &Path) -> Result<Index, DbError> {
        let copy = migrated_copy(path)?;
        let conn = Connection::open_with_flags(
            &copy,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| map_err(path, e))?;
        require_tables(&conn, path, REQUIRED_TABLES)?;
        Ok(Index {
            conn,
            path: path.to_path_buf(),
            pending_rename: None,
            upgrade: false,
            _copy: Some(copy),
            temp_lock: None,
        })
    }

    /// Opens an existing index for writing. A database of an older schema
    /// is brought to opm's version 13 in the first write's transaction.
    pub fn open_write(path: &Path) -> Result<Index, DbError> {
        if !path.is_file() {
            return Err(DbError::Missing(path.to_path_buf()));
        }
        let conn = Connection::open(path).map_err(|e| map_err(path, e))?;
        configure(&conn, path)?;
        let version = check_index(&conn, path)?;
        if version == SCHEMA_VERSION {
            require_tables(&conn, path, REQUIRED_TABLES)?;
        }
        Ok(Index {
            conn,
            path: path.to_path_buf(),
            pending_rename: None,
            upgrade: version != SCHEMA_VERSION,
            _copy: None,
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
        super::schema::create(&conn).map_err(|e| map_err(path, e))?;
        Ok(Index {
            conn,
            path: path.to_path_buf(),
            pending_rename: Some((tmp, path.to_path_buf())),
            upgrade: false,
            _copy: None,
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
    /// Opening the transaction, migrating the schema and committing fail
    /// with an [`super::Error`] (as `E`).
    pub(crate) fn write<T, E: From<super::Error>>(
        &mut self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let path = self.path.clone();
        let db = |e| E::from(super::Error::Db(map_err(&path, e)));
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db)?;
        if self.upgrade {
            super::schema::upgrade(&tx).map_err(|e| {
                E::from(super::Error::Migrate {
                    path: path.clone(),
                    version: SCHEMA_VERSION,
                    source: Box::new(e),
                })
            })?;
        }
        let out = f(&tx)?;
        tx.commit().map_err(db)?;
        self.upgrade = false;
        Ok(out)
    }

    /// Puts a newly created database in place (no-op for existing ones).
    pub fn finish(self) -> Result<(), DbError> {
        let Index {
            conn,
            path,
            pending_rename,
            temp_lock,
            ..
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

/// For a reader that opens `path` itself (`serve`): when it is an opm index
/// of a schema older than version 13, a migrated private copy to open
/// instead (removed when the returned path is dropped). `None` when the file
/// is current, or not an index at all (the reader reports that).
#[cfg(feature = "serve")]
pub fn migrated_copy_if_old(path: &Path) -> Result<Option<tempfile::TempPath>, DbError> {
    let Ok(conn) = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) else {
        return Ok(None);
    };
    match check_index(&conn, path) {
        Ok(v) if v < SCHEMA_VERSION => {
            drop(conn);
            migrated_copy(path).map(Some)
        }
        _ => Ok(None),
    }
}

/// How migrated copies are named: the prefix, the owner's process id, a
/// dash and a random part.
const MIGRATED_PREFIX: &str = "olm-catalog-migrated-";

/// Removes the entries of `dir` named `PREFIX<pid>-…` whose process is
/// gone (files and directories). A temporary file is removed when its
/// owner drops it, but an owner killed with SIGKILL cannot; the next one
/// cleans up, so the temporary directory does not fill with index-sized
/// files. Used for migrated copies, `serve`'s lookup tables and the
/// catalogs it unpacks from images.
pub(crate) fn remove_orphans(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if pid > 0 && !process_alive(pid) {
            let path = entry.path();
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
        }
    }
}

/// Whether a process with this id exists (signal 0 checks without
/// sending; EPERM means it exists under another user).
fn process_alive(pid: libc::pid_t) -> bool {
    // SAFETY: kill with signal 0 sends nothing; it only checks the pid.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// A private copy of `path` in the temporary directory, brought to opm's
/// schema version 13 by opm's migrations.
fn migrated_copy(path: &Path) -> Result<tempfile::TempPath, DbError> {
    let io = |e| DbError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    remove_orphans(&std::env::temp_dir(), MIGRATED_PREFIX);
    let tmp = tempfile::Builder::new()
        .prefix(&format!("{MIGRATED_PREFIX}{}-", std::process::id()))
        .suffix(".db")
        .tempfile()
        .map_err(io)?
        .into_temp_path();
    std::fs::copy(path, &tmp).map_err(io)?;
    let mut conn = Connection::open(&tmp).map_err(|e| map_err(path, e))?;
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER,
        false,
    )
    .map_err(|e| map_err(path, e))?;
    let tx = conn.transaction().map_err(|e| map_err(path, e))?;
    super::schema::upgrade(&tx).map_err(|e| DbError::NotAnIndex {
        path: path.to_path_buf(),
        reason: format!("migrating a copy to opm's schema version {SCHEMA_VERSION} failed: {e:#}"),
    })?;
    tx.commit().map_err(|e| map_err(path, e))?;
    Ok(tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orphaned_migrated_copies_are_removed_and_live_ones_kept() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut child = std::process::Command::new("true").spawn().expect("spawn");
        let dead = child.id();
        child.wait().expect("wait");
        let file = |name: String| {
            let p = dir.path().join(name);
            std::fs::write(&p, b"x").expect("write");
            p
        };
        let orphan = file(format!("{MIGRATED_PREFIX}{dead}-abc.db"));
        let ours = file(format!("{MIGRATED_PREFIX}{}-def.db", std::process::id()));
        let other = file("olm-catalog-migrated-notapid.db".into());
        let orphan_dir = dir.path().join(format!("{MIGRATED_PREFIX}{dead}-dir"));
        std::fs::create_dir(&orphan_dir).expect("mkdir");
        file(format!("{MIGRATED_PREFIX}{dead}-dir/lookup.db"));
        remove_orphans(dir.path(), MIGRATED_PREFIX);
        assert!(!orphan.exists());
        assert!(!orphan_dir.exists());
        assert!(ours.exists());
        assert!(other.exists());
    }
}
