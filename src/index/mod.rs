//! The SQLite index database that opm and OLM read: creating it with opm's
//! schema, adding bundles with opm's rules, removing, pruning, deprecating,
//! exporting and converting to and from file-based catalogs.

// The writes, the schema and the database handling work on rusqlite's
// connections and transactions: crate-private, reached through `Index`'s
// methods, `ops`' readers and the use cases of `crate::ops::index`.
pub(crate) mod add;
mod column;
pub(crate) mod db;
mod error;
pub(crate) mod fbc_import;
pub mod ops;
mod overwrite;
pub mod record;
pub mod render;
mod sanity;
pub(crate) mod schema;
pub(crate) mod tables;

pub use add::{AddOptions, AddReport, LeftOut};
pub use db::{Index, SCHEMA_VERSION};
pub use error::{DbError, Error, Result, SqliteError};
pub use fbc_import::ImportReport;
