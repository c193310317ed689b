//! Upgrade graphs: replaces, skips, olm.skipRange, opm's add modes and catalog templates.

pub mod modes;
