//! The SQLite index database that opm and OLM read.
