//! Serving a catalog over gRPC: operator-registry's `api.Registry`, the
//! `grpc.health.v1.Health` service (SERVING for any service name, as opm) and server
//! reflection, so OLM's catalog operator, its packageserver and `grpcurl`
//! work unchanged.
//!
//! The catalog is read into memory once at start ([`fbc::FbcRegistry`] for a
//! file-based catalog, [`sqlite::SqliteRegistry`] for a SQLite index); every
//! call is answered from there. [`CatalogSource`] picks the backend from what
//! the argument is, so an image reference can be added as one more variant.

pub mod csv;
pub mod fbc;
pub mod image;
pub mod model;
pub mod service;
pub mod sqlite;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context};

pub use model::Registry;
use service::{Current, HealthService, RegistryService};

/// Where a catalog comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CatalogSource {
    /// An opm SQLite index database (`index.db`).
    Sqlite(PathBuf),
    /// A file-based catalog: a directory of YAML/JSON files, or one file.
    Fbc(PathBuf),
}

/// The first bytes of every SQLite 3 database file.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

impl CatalogSource {
    /// Picks the backend for a command-line argument: a directory is FBC, a
    /// file starting with SQLite's header is an index, any other file is FBC.
    pub fn detect(arg: &str) -> anyhow::Result<CatalogSource> {
        let path = Path::new(arg);
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => Ok(CatalogSource::Fbc(path.to_path_buf())),
            Ok(_) => {
                let mut head = [0u8; 16];
                let n = {
                    use std::io::Read;
                    let mut f = std::fs::File::open(path)
                        .with_context(|| format!("opening catalog {arg}"))?;
                    f.read(&mut head)
                        .with_context(|| format!("reading catalog {arg}"))?
                };
                let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
                if n == 16 && head == SQLITE_MAGIC {
                    Ok(CatalogSource::Sqlite(path.to_path_buf()))
                } else if matches!(ext, "yaml" | "yml" | "json") {
                    Ok(CatalogSource::Fbc(path.to_path_buf()))
                } else {
                    bail!(
                        "catalog {arg} is neither a SQLite index (no SQLite header: corrupt or truncated?) \
                         nor a .yaml/.yml/.json file-based catalog"
                    )
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                bail!("catalog {arg} does not exist")
            }
            Err(e) => Err(e).with_context(|| format!("reading catalog {arg}")),
        }
    }

    /// The file or directory to watch.
    pub fn path(&self) -> &Path {
        match self {
            CatalogSource::Sqlite(p) | CatalogSource::Fbc(p) => p,
        }
    }

    /// Reads the catalog into memory.
    pub fn load(&self) -> anyhow::Result<Arc<dyn Registry>> {
        Ok(match self {
            CatalogSource::Sqlite(p) => Arc::new(sqlite::SqliteRegistry::load(p)?),
            CatalogSource::Fbc(p) => Arc::new(fbc::FbcRegistry::load(p)?),
        })
    }
}

/// How to serve.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Address to listen on.
    pub addr: SocketAddr,
    /// Reload the catalog when its file changes.
    pub watch: Option<Duration>,
    /// Longest a call may run (grpc-timeout from the client may be shorter).
    pub request_timeout: Duration,
    /// Largest request accepted.
    pub max_request_bytes: usize,
    /// Largest response sent.
    pub max_response_bytes: usize,
    /// How long to wait for calls in flight after SIGTERM.
    pub drain_timeout: Duration,
}

/// A fingerprint of the catalog on disk: changes when a file is replaced or written.
fn fingerprint(path: &Path) -> Vec<(PathBuf, u64, Option<SystemTime>)> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(path)
        .sort_by_file_name()
        .into_iter()
        .flatten()
    {
        if let Ok(m) = entry.metadata() {
            if m.is_file() {
                #[cfg(unix)]
                let ino = std::os::unix::fs::MetadataExt::ino(&m);
                #[cfg(not(unix))]
                let ino = 0;
                out.push((
                    entry.path().to_path_buf(),
                    m.len() ^ ino.rotate_left(32),
                    m.modified().ok(),
                ));
            }
        }
    }
    out
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {},
                    _ = tokio::signal::ctrl_c() => {},
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Serves `source` until SIGTERM or SIGINT, then lets calls in flight finish.
pub async fn serve(source: CatalogSource, opts: ServeOptions) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let registry = {
        let source = source.clone();
        tokio::task::spawn_blocking(move || source.load())
            .await
            .context("loading catalog")??
    };
    eprintln!(
        "loaded {} from {} in {} ms",
        registry.summary(),
        source.path().display(),
        started.elapsed().as_millis()
    );
    let current = Current::new(registry);

    let listener = tokio::net::TcpListener::bind(opts.addr)
        .await
        .with_context(|| format!("listening on {}", opts.addr))?;
    let local = listener.local_addr()?;
    let incoming = tonic::transport::server::TcpIncoming::from(listener)
        .with_nodelay(Some(true))
        .with_keepalive(Some(Duration::from_secs(60)));

    // Health answers SERVING for any service name, as opm's does; its Watch
    // streams end when shutdown starts.
    let (stopping_tx, stopping_rx) = tokio::sync::watch::channel(false);
    let health =
        tonic_health::pb::health_server::HealthServer::new(HealthService::new(stopping_rx));
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(crate::proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .context("building reflection service")?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(crate::proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .context("building reflection service")?;

    let registry_svc =
        crate::proto::registry_server::RegistryServer::new(RegistryService::new(current.clone()))
            .max_decoding_message_size(opts.max_request_bytes)
            .max_encoding_message_size(opts.max_response_bytes);

    if let Some(interval) = opts.watch {
        let current = current.clone();
        let source = source.clone();
        tokio::spawn(async move {
            let mut last = fingerprint(source.path());
            loop {
                tokio::time::sleep(interval).await;
                let now = fingerprint(source.path());
                if now == last || now.is_empty() {
                    continue;
                }
                // Let a writer finish before reading: wait until it is stable.
                tokio::time::sleep(interval / 2).await;
                if fingerprint(source.path()) != now {
                    continue;
                }
                last = now;
                let src = source.clone();
                match tokio::task::spawn_blocking(move || src.load()).await {
                    Ok(Ok(r)) => {
                        eprintln!("reloaded {}", r.summary());
                        current.set(r);
                    }
                    Ok(Err(e)) => {
                        eprintln!("reload failed, still serving the previous catalog: {e:#}")
                    }
                    Err(e) => eprintln!("reload failed: {e}"),
                }
            }
        });
    }

    eprintln!("serving api.Registry on {local}");
    let (drain_tx, drain_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tonic::transport::Server::builder()
        .timeout(opts.request_timeout)
        .concurrency_limit_per_connection(256)
        .max_concurrent_streams(Some(256))
        .http2_keepalive_interval(Some(Duration::from_secs(30)))
        .http2_keepalive_timeout(Some(Duration::from_secs(10)))
        .add_service(health)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(registry_svc)
        .serve_with_incoming_shutdown(incoming, async move {
            shutdown_signal().await;
            eprintln!("shutting down: finishing calls in flight");
            let _ = stopping_tx.send(true);
            let _ = drain_tx.send(());
        });
    tokio::pin!(server);
    tokio::select! {
        r = &mut server => r.context("serving")?,
        _ = async {
            let _ = drain_rx.await;
            tokio::time::sleep(opts.drain_timeout).await;
        } => {
            eprintln!("calls still running after {:?}: exiting", opts.drain_timeout);
        }
    }
    Ok(())
}
