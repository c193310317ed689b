//! The tonic service: `api.Registry` over whatever [`Registry`] is current.

use std::pin::Pin;
use std::sync::{Arc, OnceLock, RwLock};

use futures::Stream;
use tonic::{Request, Response, Status};

use super::model::{QueryError, QueryResult, Registry};
use crate::proto;
use crate::proto::registry_server;

/// The catalog being served; `--watch` swaps it when the file changes.
#[derive(Clone)]
pub struct Current(Arc<RwLock<Served>>);

/// A catalog and what is computed once for it: a served catalog is
/// read-only, so a ListBundles answer, once built, is the answer of every
/// later call until the catalog is swapped.
#[derive(Clone)]
struct Served {
    registry: Arc<dyn Registry>,
    list_bundles: Arc<OnceLock<ListBundlesCache>>,
}

/// The first complete ListBundles answer, kept when its encoded size is at
/// most [`LIST_BUNDLES_CACHE_BYTES`]; `TooLarge` when it was larger (every
/// call then streams from the catalog, as before).
enum ListBundlesCache {
    Kept(Arc<[proto::Bundle]>),
    TooLarge,
}

/// The largest ListBundles answer kept for later calls (encoded bytes). A
/// catalog whose answer is larger, e.g. an index that keeps every bundle's
/// manifests, streams each call from the catalog a batch at a time.
const LIST_BUNDLES_CACHE_BYTES: usize = 64 << 20;

impl Served {
    fn new(registry: Arc<dyn Registry>) -> Served {
        Served {
            registry,
            list_bundles: Arc::new(OnceLock::new()),
        }
    }
}

impl Current {
    /// Starts with `r`.
    pub fn new(r: Arc<dyn Registry>) -> Current {
        Current(Arc::new(RwLock::new(Served::new(r))))
    }

    fn served(&self) -> Served {
        match self.0.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The catalog now; calls in flight keep the one they started with.
    pub fn get(&self) -> Arc<dyn Registry> {
        self.served().registry
    }

    /// Replaces the catalog (and forgets what was computed for the old one).
    pub fn set(&self, r: Arc<dyn Registry>) {
        let served = Served::new(r);
        match self.0.write() {
            Ok(mut g) => *g = served,
            Err(poisoned) => *poisoned.into_inner() = served,
        }
    }
}

/// `api.Registry` implementation.
pub struct RegistryService {
    current: Current,
}

impl RegistryService {
    /// Serves `current`.
    pub fn new(current: Current) -> RegistryService {
        RegistryService { current }
    }
}

/// ListBundles rows go from the query thread to the sender in batches of
/// at most this many rows or [`LIST_BUNDLES_BATCH_BYTES`], and at most
/// [`LIST_BUNDLES_BATCHES_AHEAD`] batches wait: a row at a time, the two
/// threads woke each other for every row, and the context switches were a
/// third of the server's CPU for a ListBundles.
const LIST_BUNDLES_BATCH_ROWS: usize = 16;
/// The encoded size at which a batch is sent before it has its rows (a
/// catalog of bundles without images sends every manifest in its rows).
const LIST_BUNDLES_BATCH_BYTES: usize = 1 << 20;
/// Batches built ahead of what the client has taken.
const LIST_BUNDLES_BATCHES_AHEAD: usize = 2;

/// opm's handlers return Go errors, which grpc-go sends as code Unknown.
fn status(e: QueryError) -> Status {
    Status::unknown(e.0)
}

type Stream_<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

fn stream<T: Send + 'static>(
    items: Result<Vec<T>, Status>,
) -> Result<Response<Stream_<T>>, Status> {
    let items = items?;
    Ok(Response::new(Box::pin(futures::stream::iter(
        items.into_iter().map(Ok),
    ))))
}

/// Runs a query off the async threads: SQLite reads block.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> QueryResult<T> + Send + 'static,
) -> Result<T, Status> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r.map_err(status),
        Err(e) => Err(Status::internal(format!("query task failed: {e}"))),
    }
}

#[tonic::async_trait]
impl registry_server::Registry for RegistryService {
    type ListPackagesStream = Stream_<proto::PackageName>;
    type GetChannelEntriesThatReplaceStream = Stream_<proto::ChannelEntry>;
    type GetChannelEntriesThatProvideStream = Stream_<proto::ChannelEntry>;
    type GetLatestChannelEntriesThatProvideStream = Stream_<proto::ChannelEntry>;
    type ListBundlesStream = Stream_<proto::Bundle>;

    async fn list_packages(
        &self,
        _req: Request<proto::ListPackageRequest>,
    ) -> Result<Response<Self::ListPackagesStream>, Status> {
        let r = self.current.get();
        let names = blocking(move || r.list_packages()).await?;
        stream(Ok(names
            .into_iter()
            .map(|name| proto::PackageName { name })
            .collect()))
    }

    async fn get_package(
        &self,
        req: Request<proto::GetPackageRequest>,
    ) -> Result<Response<proto::Package>, Status> {
        let r = self.current.get();
        let name = req.into_inner().name;
        blocking(move || r.get_package(&name))
            .await
            .map(Response::new)
    }

    async fn get_bundle(
        &self,
        req: Request<proto::GetBundleRequest>,
    ) -> Result<Response<proto::Bundle>, Status> {
        let r = self.current.get();
        let q = req.into_inner();
        blocking(move || r.get_bundle(&q.pkg_name, &q.channel_name, &q.csv_name))
            .await
            .map(Response::new)
    }

    async fn get_bundle_for_channel(
        &self,
        req: Request<proto::GetBundleInChannelRequest>,
    ) -> Result<Response<proto::Bundle>, Status> {
        let r = self.current.get();
        let q = req.into_inner();
        blocking(move || r.get_bundle_for_channel(&q.pkg_name, &q.channel_name))
            .await
            .map(Response::new)
    }

    async fn get_channel_entries_that_replace(
        &self,
        req: Request<proto::GetAllReplacementsRequest>,
    ) -> Result<Response<Self::GetChannelEntriesThatReplaceStream>, Status> {
        let r = self.current.get();
        let csv = req.into_inner().csv_name;
        stream(blocking(move || r.get_channel_entries_that_replace(&csv)).await)
    }

    async fn get_bundle_that_replaces(
        &self,
        req: Request<proto::GetReplacementRequest>,
    ) -> Result<Response<proto::Bundle>, Status> {
        let r = self.current.get();
        let q = req.into_inner();
        blocking(move || r.get_bundle_that_replaces(&q.csv_name, &q.pkg_name, &q.channel_name))
            .await
            .map(Response::new)
    }

    async fn get_channel_entries_that_provide(
        &self,
        req: Request<proto::GetAllProvidersRequest>,
    ) -> Result<Response<Self::GetChannelEntriesThatProvideStream>, Status> {
        let r = self.current.get();
        let q = req.into_inner();
        stream(
            blocking(move || r.get_channel_entries_that_provide(&q.group, &q.version, &q.kind))
                .await,
        )
    }

    async fn get_latest_channel_entries_that_provide(
        &self,
        req: Request<proto::GetLatestProvidersRequest>,
    ) -> Result<Response<Self::GetLatestChannelEntriesThatProvideStream>, Status> {
        let r = self.current.get();
        let q = req.into_inner();
        stream(
            blocking(move || {
                r.get_latest_channel_entries_that_provide(&q.group, &q.version, &q.kind)
            })
            .await,
        )
    }

    async fn get_default_bundle_that_provides(
        &self,
        req: Request<proto::GetDefaultProviderRequest>,
    ) -> Result<Response<proto::Bundle>, Status> {
        let r = self.current.get();
        let q = req.into_inner();
        blocking(move || r.get_default_bundle_that_provides(&q.group, &q.version, &q.kind))
            .await
            .map(Response::new)
    }

    async fn list_bundles(
        &self,
        _req: Request<proto::ListBundlesRequest>,
    ) -> Result<Response<Self::ListBundlesStream>, Status> {
        let Served {
            registry: r,
            list_bundles: cache,
        } = self.current.served();
        if let Some(ListBundlesCache::Kept(rows)) = cache.get() {
            // Each message is cloned as the client takes it: what waits in
            // memory is the one answer, not a copy per call.
            let rows = rows.clone();
            let each = (0..rows.len()).map(move |i| Ok(rows[i].clone()));
            return Ok(Response::new(Box::pin(futures::stream::iter(each))));
        }
        // Rows go out as the query yields them (opm's ListBundles sends each
        // as it is scanned), a batch at a time: the server holds a few
        // batches of them, however large the answer. The first call that
        // completes also keeps the answer, when it is small enough.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<Vec<proto::Bundle>, Status>>(
            LIST_BUNDLES_BATCHES_AHEAD,
        );
        let on_panic = tx.clone();
        let producer = tokio::task::spawn_blocking(move || {
            use prost::Message as _;
            let mut batch = Vec::with_capacity(LIST_BUNDLES_BATCH_ROWS);
            let mut bytes = 0;
            // Kept while it is small enough, unless an earlier call found it
            // too large.
            let mut kept = cache.get().is_none().then(Vec::new);
            let mut kept_bytes = 0;
            let mut client_gone = false;
            // A failed send is a client that went away: stop reading.
            let result = r.list_bundles(&mut |b| {
                let len = b.encoded_len();
                bytes += len;
                kept_bytes += len;
                if kept_bytes > LIST_BUNDLES_CACHE_BYTES {
                    kept = None;
                }
                if let Some(k) = kept.as_mut() {
                    k.push(b.clone());
                }
                batch.push(b);
                if batch.len() < LIST_BUNDLES_BATCH_ROWS && bytes < LIST_BUNDLES_BATCH_BYTES {
                    return true;
                }
                bytes = 0;
                let full =
                    std::mem::replace(&mut batch, Vec::with_capacity(LIST_BUNDLES_BATCH_ROWS));
                client_gone = tx.blocking_send(Ok(full)).is_err();
                !client_gone
            });
            let complete = result.is_ok() && !client_gone;
            // The rows before an error go out first, as opm's do.
            let sent = batch.is_empty() || tx.blocking_send(Ok(batch)).is_ok();
            if let Err(e) = result {
                let _ = tx.blocking_send(Err(status(e)));
            }
            // Only a whole answer is kept: not one cut short by an error or
            // by a client that went away.
            if complete && sent && cache.get().is_none() {
                let _ = cache.set(match kept {
                    Some(rows) => ListBundlesCache::Kept(rows.into()),
                    None => ListBundlesCache::TooLarge,
                });
            }
        });
        tokio::spawn(async move {
            if let Err(e) = producer.await {
                let _ = on_panic
                    .send(Err(Status::internal(format!("query task failed: {e}"))))
                    .await;
            }
        });
        // An error before the first row is the call's answer, as it was when
        // the whole answer was built first.
        // (A batch is never empty: the producer sends only batches with rows.)
        let first = match rx.recv().await {
            None => return Ok(Response::new(Box::pin(futures::stream::empty()))),
            Some(Err(e)) => return Err(e),
            Some(Ok(b)) => b,
        };
        use futures::StreamExt as _;
        let rest = futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        });
        let rows = futures::stream::once(async { Ok(first) })
            .chain(rest)
            .flat_map(|batch| {
                let (rows, error) = match batch {
                    Ok(rows) => (rows, None),
                    Err(e) => (Vec::new(), Some(Err(e))),
                };
                futures::stream::iter(rows.into_iter().map(Ok).chain(error))
            });
        Ok(Response::new(Box::pin(rows)))
    }
}

/// `grpc.health.v1.Health` as opm's `pkg/server/health.go` answers it:
/// SERVING for every service name. OLM's client (`pkg/client` `HealthCheck`)
/// asks for service "Registry", `grpc_health_probe` for "", others for
/// "api.Registry"; a catalog that is being served is healthy for all of them.
///
/// Watch sends SERVING once and keeps the stream open until the server
/// shuts down (opm leaves Watch unimplemented; a watching client is told the
/// same as a checking one, and is not left holding a graceful shutdown).
pub struct HealthService {
    shutdown: tokio::sync::watch::Receiver<bool>,
}

impl HealthService {
    /// Watch streams end when `shutdown` turns true.
    pub fn new(shutdown: tokio::sync::watch::Receiver<bool>) -> HealthService {
        HealthService { shutdown }
    }
}

fn serving() -> tonic_health::pb::HealthCheckResponse {
    tonic_health::pb::HealthCheckResponse {
        status: tonic_health::pb::health_check_response::ServingStatus::Serving as i32,
    }
}

type HealthStream = Stream_<tonic_health::pb::HealthCheckResponse>;

#[tonic::async_trait]
impl tonic_health::pb::health_server::Health for HealthService {
    async fn check(
        &self,
        _req: Request<tonic_health::pb::HealthCheckRequest>,
    ) -> Result<Response<tonic_health::pb::HealthCheckResponse>, Status> {
        Ok(Response::new(serving()))
    }

    type WatchStream = HealthStream;

    async fn watch(
        &self,
        _req: Request<tonic_health::pb::HealthCheckRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        use futures::StreamExt;
        let mut shutdown = self.shutdown.clone();
        let until_shutdown = futures::stream::once(async move {
            // An error means the sender is gone: the server is stopping too.
            let _ = shutdown.wait_for(|stopping| *stopping).await;
        })
        .filter_map(|()| async { None });
        let answers = futures::stream::once(async { Ok(serving()) }).chain(until_shutdown);
        Ok(Response::new(Box::pin(answers)))
    }
}
