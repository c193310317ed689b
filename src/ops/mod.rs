//! Use cases built on the modules before: whole-catalog operations that
//! read a catalog, reach registries and write results (`catalog mirror`).

pub mod mirror;
