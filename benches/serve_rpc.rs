//! gRPC latency of a running `olm-catalog serve`, measured with a native
//! (tonic) client: `cargo bench --bench serve_rpc -- ADDR [CALLS]`.
//!
//! Prints the median of CALLS ListBundles calls (every message decoded)
//! and of 10×CALLS GetBundleForChannel calls over every (package, channel).
//! A Python grpcio client spends ~0.15 ms per streamed message in the
//! interpreter, which hides the server's own time on a 1000-message
//! ListBundles; this client does not. `tests/python/bench_serve.py
//! --native` runs it next to the Python figures.
use std::time::{Duration, Instant};

use olm_catalog::proto::registry_client::RegistryClient;
use olm_catalog::proto::{
    GetBundleInChannelRequest, GetPackageRequest, ListBundlesRequest, ListPackageRequest,
};

fn median_ms(mut xs: Vec<Duration>) -> f64 {
    xs.sort();
    xs.get(xs.len() / 2)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(f64::NAN)
}

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("serve_rpc: {what}: {e}");
    std::process::exit(2);
}

async fn run(addr: String, calls: usize) {
    let mut client = match RegistryClient::connect(format!("http://{addr}")).await {
        Ok(c) => c.max_decoding_message_size(64 << 20),
        Err(e) => fail("connecting", e),
    };
    let mut lists = Vec::new();
    let mut messages = 0usize;
    let mut bytes = 0usize;
    for _ in 0..calls + 1 {
        let t = Instant::now();
        let mut stream = match client.list_bundles(ListBundlesRequest {}).await {
            Ok(r) => r.into_inner(),
            Err(e) => fail("ListBundles", e),
        };
        let (mut n, mut size) = (0, 0);
        loop {
            match stream.message().await {
                Ok(Some(b)) => {
                    n += 1;
                    size += prost::Message::encoded_len(&b);
                }
                Ok(None) => break,
                Err(e) => fail("ListBundles stream", e),
            }
        }
        lists.push(t.elapsed());
        (messages, bytes) = (n, size);
    }
    lists.remove(0); // the first call warms the connection
    let mut requests = Vec::new();
    let mut pkgs = match client.list_packages(ListPackageRequest {}).await {
        Ok(r) => r.into_inner(),
        Err(e) => fail("ListPackages", e),
    };
    let mut names = Vec::new();
    while let Ok(Some(p)) = pkgs.message().await {
        names.push(p.name);
    }
    for name in names {
        let p = match client
            .get_package(GetPackageRequest { name: name.clone() })
            .await
        {
            Ok(r) => r.into_inner(),
            Err(e) => fail("GetPackage", e),
        };
        for c in p.channels {
            requests.push(GetBundleInChannelRequest {
                pkg_name: name.clone(),
                channel_name: c.name,
            });
        }
    }
    if requests.is_empty() {
        fail("GetBundleForChannel", "the catalog has no channels");
    }
    let mut heads = Vec::new();
    for i in 0..calls * 10 {
        let req = requests[i % requests.len()].clone();
        let t = Instant::now();
        #[allow(deprecated)]
        if let Err(e) = client.get_bundle_for_channel(req).await {
            fail("GetBundleForChannel", e);
        }
        heads.push(t.elapsed());
    }
    println!(
        "native ListBundles         median {:6.2} ms ({} calls, {} messages, {:.1} MiB)",
        median_ms(lists),
        calls,
        messages,
        bytes as f64 / 1048576.0
    );
    println!(
        "native GetBundleForChannel median {:6.3} ms ({} calls)",
        median_ms(heads),
        calls * 10
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(addr) = args.first().cloned() else {
        // `cargo test --all-targets` and a bare `cargo bench` run this
        // with no arguments: nothing to measure is not a failure.
        eprintln!(
            "usage: serve_rpc ADDR [CALLS] (driven by scripts/bench-serve.sh); nothing to measure"
        );
        std::process::exit(0);
    };
    let calls = args.get(1).and_then(|c| c.parse().ok()).unwrap_or(30);
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(run(addr, calls)),
        Err(e) => fail("runtime", e),
    }
}
