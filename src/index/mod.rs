//! The SQLite index database that opm and OLM read: creating it with opm's
//! schema, adding bundles with opm's rules, removing, pruning, deprecating,
//! exporting and converting to and from file-based catalogs.

pub mod add;
pub(crate) mod db;
mod error;
pub mod fbc_import;
pub mod ops;
pub mod record;
pub mod render;
pub mod schema;
pub(crate) mod tables;

pub use db::{Index, SCHEMA_VERSION};
pub use error::{DbError, Error, Result, SqliteError};
