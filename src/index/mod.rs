//! The SQLite index database that opm and OLM read: creating it with opm's
//! schema, adding bundles with opm's rules, removing, pruning, deprecating,
//! exporting and converting to and from file-based catalogs.

pub mod add;
pub mod db;
pub mod fbc_import;
pub mod ops;
pub mod record;
pub mod render;
pub mod schema;
pub mod tables;

pub use db::{DbError, Index};
