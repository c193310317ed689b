//! Serving a catalog over gRPC: operator-registry's `api.Registry`, the
//! `grpc.health.v1.Health` service (SERVING for any service name, as opm) and server
//! reflection, so OLM's catalog operator, its packageserver and `grpcurl`
//! work unchanged.
//!
//! The catalog is read into memory once at start (`serve/fbc.rs` for a
//! file-based catalog, `serve/sqlite.rs` for a SQLite index, whose
//! manifests are read when a call needs them); every call is answered from
//! there. [`CatalogSource`] picks the backend from what
//! the argument is, so an image reference can be added as one more variant.

pub(crate) mod csv;
mod error;
pub(crate) mod fbc;
pub mod http;
pub mod image;
pub(crate) mod model;
pub(crate) mod service;
pub(crate) mod sqlite;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

pub use error::{Error, Result};

pub use model::{QueryError, QueryResult, Registry};
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
    pub fn detect(arg: &str) -> Result<CatalogSource> {
        let path = Path::new(arg);
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => Ok(CatalogSource::Fbc(path.to_path_buf())),
            Ok(_) => {
                let mut head = [0u8; 16];
                let n = {
                    use std::io::Read;
                    let mut f = std::fs::File::open(path)
                        .map_err(|e| Error::io(format!("opening catalog {arg}"), e))?;
                    f.read(&mut head)
                        .map_err(|e| Error::io(format!("reading catalog {arg}"), e))?
                };
                let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
                if n == 16 && head == SQLITE_MAGIC {
                    Ok(CatalogSource::Sqlite(path.to_path_buf()))
                } else if matches!(ext, "yaml" | "yml" | "json") {
                    Ok(CatalogSource::Fbc(path.to_path_buf()))
                } else {
                    Err(Error::UnknownFormat(path.to_path_buf()))
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::Missing {
                what: "catalog",
                path: path.to_path_buf(),
            }),
            Err(e) => Err(Error::io(format!("reading catalog {arg}"), e)),
        }
    }

    /// The file or directory to watch.
    pub fn path(&self) -> &Path {
        match self {
            CatalogSource::Sqlite(p) | CatalogSource::Fbc(p) => p,
        }
    }

    /// Reads the catalog into memory.
    pub fn load(&self) -> Result<Arc<dyn Registry>> {
        Ok(match self {
            CatalogSource::Sqlite(p) => Arc::new(sqlite::SqliteRegistry::load(p)?),
            CatalogSource::Fbc(p) => Arc::new(fbc::FbcRegistry::load(p)?),
        })
    }
}

/// How to serve.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Address the gRPC API listens on.
    pub addr: SocketAddr,
    /// Whether to serve the gRPC API (`--http` alone serves only HTTP).
    pub grpc: bool,
    /// Address catalogd's HTTP API listens on, if it is served.
    pub http: Option<SocketAddr>,
    /// The ClusterCatalog name the HTTP API answers for under `/catalogs/NAME/`.
    pub http_catalog_name: String,
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
    /// Stop by itself after this long, as on SIGTERM (opm's `registry serve
    /// --timeout-seconds`); `None`: serve until a signal.
    pub stop_after: Option<Duration>,
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

/// Serves `source` until SIGTERM or SIGINT, then lets calls in flight finish:
/// the gRPC API, catalogd's HTTP API ([`http`]), or both side by side.
pub async fn serve(source: CatalogSource, opts: ServeOptions) -> Result<()> {
    let loading = |e: tokio::task::JoinError| Error::Server {
        context: "loading catalog".to_string(),
        source: Box::new(e),
    };
    let started = std::time::Instant::now();
    let grpc_load = opts.grpc.then(|| {
        let source = source.clone();
        tokio::task::spawn_blocking(move || source.load())
    });
    let http_load = opts.http.is_some().then(|| {
        let source = source.clone();
        tokio::task::spawn_blocking(move || http::HttpCatalog::load(&source))
    });
    let current = match grpc_load {
        Some(task) => {
            let registry = task.await.map_err(loading)??;
            eprintln!(
                "loaded {} from {} in {} ms",
                registry.summary(),
                source.path().display(),
                started.elapsed().as_millis()
            );
            Some(Current::new(registry))
        }
        None => None,
    };
    let http_current = match http_load {
        Some(task) => {
            let cat = task.await.map_err(loading)??;
            eprintln!(
                "loaded {} objects ({}) for the HTTP API from {} in {} ms",
                cat.len(),
                crate::oci::progress::human_bytes(cat.content().len() as u64),
                source.path().display(),
                started.elapsed().as_millis()
            );
            Some(http::HttpCurrent::new(cat))
        }
        None => None,
    };

    // One stop signal for both servers; health Watch streams end on it too.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stop_after = opts.stop_after;
    tokio::spawn(async move {
        match stop_after {
            Some(after) => tokio::select! {
                _ = shutdown_signal() => {}
                _ = tokio::time::sleep(after) => {
                    eprintln!("served for {after:?}, as asked: stopping");
                }
            },
            None => shutdown_signal().await,
        }
        eprintln!("shutting down: finishing calls in flight");
        let _ = stop_tx.send(true);
    });

    if let Some(interval) = opts.watch {
        let current = current.clone();
        let http_current = http_current.clone();
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
                if let Some(current) = &current {
                    let src = source.clone();
                    match tokio::task::spawn_blocking(move || src.load()).await {
                        Ok(Ok(r)) => {
                            eprintln!("reloaded {}", r.summary());
                            current.set(r);
                        }
                        Ok(Err(e)) => {
                            eprintln!(
                                "reload failed, still serving the previous catalog: {}",
                                crate::diag::with_causes(&e)
                            )
                        }
                        Err(e) => eprintln!("reload failed: {e}"),
                    }
                }
                if let Some(http_current) = &http_current {
                    let src = source.clone();
                    match tokio::task::spawn_blocking(move || http::HttpCatalog::load(&src)).await {
                        Ok(Ok(c)) => {
                            eprintln!("reloaded {} objects for the HTTP API", c.len());
                            http_current.set(c);
                        }
                        Ok(Err(e)) => eprintln!(
                            "HTTP reload failed, still serving the previous catalog: {}",
                            crate::diag::with_causes(&e)
                        ),
                        Err(e) => eprintln!("HTTP reload failed: {e}"),
                    }
                }
            }
        });
    }

    let grpc = match current {
        Some(current) => Some(grpc_server(current, &opts, stop_rx.clone()).await?),
        None => None,
    };
    let http_server = match (http_current, opts.http) {
        (Some(current), Some(addr)) => {
            let listen = |source| Error::Listen {
                addr: format!("{addr} (--http)"),
                source,
            };
            let listener = tokio::net::TcpListener::bind(addr).await.map_err(listen)?;
            eprintln!(
                "serving catalogd HTTP API on {} (/api/v1/all, /api/v1/metas, /catalogs/{}/api/v1/...)",
                listener.local_addr().map_err(listen)?,
                opts.http_catalog_name
            );
            Some(http::run(
                listener,
                current,
                opts.http_catalog_name.clone(),
                stop_rx.clone(),
                opts.drain_timeout,
            ))
        }
        _ => None,
    };
    let grpc_fut = async {
        match grpc {
            Some(f) => f.await,
            None => Ok(()),
        }
    };
    let http_fut = async {
        match http_server {
            Some(f) => f.await,
            None => Ok(()),
        }
    };
    tokio::try_join!(grpc_fut, http_fut)?;
    Ok(())
}

/// Binds the gRPC port and returns the server, which runs until `stop`.
async fn grpc_server(
    current: Current,
    opts: &ServeOptions,
    stop: tokio::sync::watch::Receiver<bool>,
) -> Result<impl std::future::Future<Output = Result<()>>> {
    let listen = |source| Error::Listen {
        addr: opts.addr.to_string(),
        source,
    };
    let listener = tokio::net::TcpListener::bind(opts.addr)
        .await
        .map_err(listen)?;
    let local = listener.local_addr().map_err(listen)?;
    let reflection = |e: tonic_reflection::server::Error| Error::Server {
        context: "building reflection service".to_string(),
        source: Box::new(e),
    };
    let incoming = tonic::transport::server::TcpIncoming::from(listener)
        .with_nodelay(Some(true))
        .with_keepalive(Some(Duration::from_secs(60)));

    // Health answers SERVING for any service name, as opm's does; its Watch
    // streams end when shutdown starts.
    let health =
        tonic_health::pb::health_server::HealthServer::new(HealthService::new(stop.clone()));
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(crate::proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(reflection)?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(crate::proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .map_err(reflection)?;

    let registry_svc =
        crate::proto::registry_server::RegistryServer::new(RegistryService::new(current))
            .max_decoding_message_size(opts.max_request_bytes)
            .max_encoding_message_size(opts.max_response_bytes);

    eprintln!("serving api.Registry on {local}");
    let drain_timeout = opts.drain_timeout;
    let mut stop_serve = stop.clone();
    let mut stop_drain = stop;
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
            http::stopped(&mut stop_serve).await;
        });
    Ok(async move {
        tokio::pin!(server);
        tokio::select! {
            r = &mut server => r.map_err(|e| Error::Server {
                context: "serving".to_string(),
                source: Box::new(e),
            })?,
            _ = async {
                http::stopped(&mut stop_drain).await;
                tokio::time::sleep(drain_timeout).await;
            } => {
                eprintln!("calls still running after {drain_timeout:?}: exiting");
            }
        }
        Ok(())
    })
}
