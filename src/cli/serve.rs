//! `serve` command.
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::CmdResult;
use olm_catalog::serve::{serve, CatalogSource, ServeOptions};

/// `serve`.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
olm-catalog serve index.db\n  \
olm-catalog serve catalog/ --address 0.0.0.0 --port 50051\n  \
olm-catalog serve /database/index.db --watch\n  \
olm-catalog serve quay.io/me/catalog:v1                # pull an index or catalog image\n  \
olm-catalog serve oci:oci-images:index                 # an image in an OCI layout\n  \
olm-catalog serve catalog/ --http :8080                # catalogd's HTTP API only\n  \
olm-catalog serve catalog/ --port 50051 --http :8080   # gRPC and HTTP side by side\n\n\
An image (one that is not an existing path) is pulled once and the catalog its
labels name is served: the index database (operators.operatorframework.io.index.database.v1)
or the FBC directory (operators.operatorframework.io.index.configs.v1). The registry
flags (--username, --password-stdin, --insecure, --ca-file) say how to reach it.

Check it with grpcurl (reflection is on, no proto file needed):\n  \
grpcurl -plaintext localhost:50051 list\n  \
grpcurl -plaintext -d '{\"name\":\"etcd\"}' localhost:50051 api.Registry/GetPackage\n\n\
and the HTTP API with curl:\n  \
curl --compressed 'http://localhost:8080/api/v1/metas?schema=olm.package'")]
pub struct ServeArgs {
    /// Catalog: a SQLite index (index.db), a file-based catalog directory,
    /// or an index or catalog image to pull and serve: a registry reference
    /// (quay.io/org/catalog:v1) or an OCI layout (oci:DIR:TAG)
    #[arg(value_name = "CATALOG|IMAGE")]
    pub catalog: String,
    /// Address to listen on (the index image passes 0.0.0.0)
    #[arg(long, default_value = "127.0.0.1")]
    pub address: IpAddr,
    /// gRPC port to listen on (OLM probes 50051); default 50051, and with
    /// --http only when given
    #[arg(long, short = 'p', value_name = "PORT")]
    pub port: Option<u16>,
    /// Also (or, without --port, only) serve catalogd's HTTP API
    /// (/api/v1/all, /api/v1/metas) on HOST:PORT, :PORT or PORT (on --address)
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// ClusterCatalog name the HTTP API also answers under, at /catalogs/NAME/api/v1/...
    #[arg(long, default_value = "catalog", value_name = "NAME")]
    pub catalog_name: String,
    /// Reload the catalog, without a restart, when it changes on disk
    #[arg(long)]
    pub watch: bool,
    /// How often --watch looks at the catalog, in milliseconds
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub watch_interval: u64,
    /// Longest time a call may take, in seconds (a client's deadline may be shorter)
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    pub timeout: u64,
    /// Largest response message, in MiB
    #[arg(long, default_value_t = 64, value_name = "MIB")]
    pub max_message_size: usize,
    /// Stop serving (exit 0) after this many seconds, finishing calls in
    /// flight as on SIGTERM (opm registry serve's --timeout-seconds)
    #[arg(long, value_name = "SECONDS")]
    pub stop_after: Option<u64>,
    // How to reach the registry of an image catalog.
    #[command(flatten)]
    pub registry: super::image::RegistryFlags,
}

impl ServeArgs {
    /// Loads the catalog and serves it until SIGTERM or SIGINT.
    pub fn run(self) -> CmdResult {
        let http = match &self.http {
            Some(a) => Some(http_addr(a, self.address)?),
            None => None,
        };
        if let Some(msg) = olm_catalog::serve::http::catalog_name_error(&self.catalog_name) {
            anyhow::bail!("--catalog-name {}: {msg}", self.catalog_name);
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(16)
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        // An image reference (not a path on disk): unpack its catalog first.
        // The unpacked files live as long as `_image`.
        let (source, _image) = if olm_catalog::serve::image::is_image_ref(&self.catalog) {
            let image: olm_catalog::oci::ImageRef = self.catalog.parse()?;
            let client = self.registry.client(&image)?;
            let cat = runtime.block_on(olm_catalog::serve::image::fetch_catalog_with(
                &client,
                &self.catalog,
            ))?;
            eprintln!("unpacked the catalog of {} ({})", self.catalog, cat.digest);
            (cat.source.clone(), Some(cat))
        } else {
            (CatalogSource::detect(&self.catalog)?, None)
        };
        let opts = ServeOptions {
            addr: SocketAddr::new(self.address, self.port.unwrap_or(50051)),
            grpc: http.is_none() || self.port.is_some(),
            http,
            http_catalog_name: self.catalog_name.clone(),
            watch: self
                .watch
                .then(|| Duration::from_millis(self.watch_interval.max(50))),
            request_timeout: Duration::from_secs(self.timeout.max(1)),
            // Requests are a few names; nothing legitimate is bigger.
            max_request_bytes: 64 * 1024,
            max_response_bytes: self.max_message_size.max(1) * 1024 * 1024,
            drain_timeout: Duration::from_secs(10),
            stop_after: self.stop_after.map(Duration::from_secs),
        };
        runtime.block_on(serve(source, opts))?;
        Ok(0)
    }
}

/// `--http`: HOST:PORT, :PORT or PORT (the last two on `--address`).
fn http_addr(arg: &str, address: IpAddr) -> anyhow::Result<SocketAddr> {
    if let Ok(a) = arg.parse::<SocketAddr>() {
        return Ok(a);
    }
    let port = arg.strip_prefix(':').unwrap_or(arg);
    match port.parse::<u16>() {
        Ok(p) => Ok(SocketAddr::new(address, p)),
        Err(_) => anyhow::bail!("--http {arg}: expected HOST:PORT, :PORT or PORT"),
    }
}
