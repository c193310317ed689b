//! # olm-catalog
//!
//! Validate, graph, index, image, sign and serve OLM (Operator Lifecycle
//! Manager) operator catalogs: what `opm`, `operator-sdk bundle validate`,
//! `crane`/`skopeo` and `cosign` do, in one daemonless library and binary.
//!
//! Data flows one way, and each module knows only the modules before it:
//!
//! ```text
//! yaml, diag, gojson,      foundations: located YAML, findings, Go-style JSON
//!   goyaml, semver_range,   and YAML as opm writes it, blang/semver ranges,
//!   reference, par,         image references by distribution's grammar,
//!   k8s_names               ordered parallel work in a bounded window,
//!                           Kubernetes name rules in apimachinery's words
//!   -> bundle               load a bundle directory into a model
//!   -> fbc                  the file-based catalog model (declcfg)
//!   -> validate | graph     check bundles; build, check and template upgrade graphs
//!   -> resolve              rehearse OLM's resolution (v0 Subscriptions, v1
//!                           ClusterExtensions) on catalogs and their graphs
//!   -> index                the SQLite index opm reads; render and migrate
//!   -> oci                  bundle and index images, registries, OCI layouts
//!   -> sign                 cosign-compatible signatures
//!   -> serve                the catalog over gRPC (api.Registry)
//!   -> ops                  the use cases: one function per command, options
//!                           in, `ops::Error` out (what the CLI calls),
//!                           `catalog mirror` among them
//! ```
//!
//! ## Using the library
//!
//! Cargo features choose the stacks that are built; all are on by default.
//! With `default-features = false` the crate is the modules up to
//! `validate`, `graph` and `resolve` (no tokio, HTTP, TLS, SQLite, gRPC or
//! clap); `sqlite` adds `index`, `registry` adds `oci` and `sign`, `serve`
//! adds `serve` and `proto`, `cli` the binary (and clap's `ValueEnum` on
//! the option enums its flags take).
//!
//! Start with [`bundle::Bundle::load_dir`] and [`validate::validate_dir`]
//! (problems in a bundle are [`diag::Finding`]s in a [`diag::Report`], not
//! errors), [`fbc::DeclarativeConfig::load_path`],
//! [`graph::PackageGraph::from_fbc`]; then `index::Index`,
//! `oci::RegistryClient`, `sign::Target` and `serve::serve`. Each module
//! has one error type to match: [`bundle::LoadError`], [`fbc::FbcError`],
//! [`graph::Error`], [`resolve::Error`], `index::Error`, `oci::OciError`,
//! `sign::Error`, `serve::Error`, and `ops::Error` for the use cases. No rusqlite or clap
//! type is part of the API, and the library does not use anyhow.
//! `docs/architecture.md` ("Using the library") has the full table.
#![warn(missing_docs)]

pub mod bundle;
pub mod diag;
pub mod fbc;
pub mod gojson;
pub mod goyaml;
pub mod graph;
#[cfg(feature = "sqlite")]
pub mod index;
pub mod k8s_names;
#[cfg(feature = "registry")]
pub mod oci;
// The use cases reach every module, images and SQLite included.
#[cfg(feature = "serve")]
pub mod ops;
pub mod par;
pub mod reference;
pub mod resolve;
pub mod semver_range;
#[cfg(feature = "serve")]
pub mod serve;
#[cfg(feature = "registry")]
pub mod sign;
pub mod validate;
pub mod yaml;

/// Code generated from `schema/registry.proto` (package `api`).
#[cfg(feature = "serve")]
#[allow(missing_docs, clippy::all)]
pub mod proto {
    tonic::include_proto!("api");

    /// The encoded file descriptor set of `schema/registry.proto`, for server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        include_bytes!(concat!(env!("OUT_DIR"), "/registry_descriptor.bin"));
}
