//! Pull+unpack benchmark: `cargo bench --bench oci_pull -- REFS_FILE [CONCURRENCY]`
//! pulls every image reference listed in REFS_FILE (one a line) into
//! bundles, handling each and dropping it as `index add` does, and prints
//! the wall time. `scripts/bench-oci.sh` drives it (and measures peak RSS).
use std::time::Instant;

use futures::StreamExt as _;
use olm_catalog::oci::progress::ProgressMode;
use olm_catalog::oci::{pull_bundle_stream, RegistryClient};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(file) = args.first() else {
        // `cargo test --all-targets` and a bare `cargo bench` run this
        // with no arguments: nothing to measure is not a failure.
        eprintln!("usage: oci_pull REFS_FILE [CONCURRENCY] (driven by scripts/bench-oci.sh); nothing to measure");
        std::process::exit(0);
    };
    let concurrency: usize = args.get(1).and_then(|c| c.parse().ok()).unwrap_or(16);
    let refs: Vec<String> = match std::fs::read_to_string(file) {
        Ok(t) => t
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(String::from)
            .collect(),
        Err(e) => {
            eprintln!("{file}: {e}");
            std::process::exit(2);
        }
    };
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("runtime: {e}");
            std::process::exit(2);
        }
    };
    let start = Instant::now();
    let (ok, manifests, failed) = rt.block_on(async {
        let client = match RegistryClient::from_environment() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        };
        let mut stream = Box::pin(pull_bundle_stream(
            client,
            refs.clone(),
            concurrency,
            ProgressMode::Off,
        ));
        let (mut ok, mut manifests, mut failed) = (0usize, 0usize, 0usize);
        while let Some(r) = stream.next().await {
            match r {
                Ok(p) => {
                    ok += 1;
                    manifests += p.bundle.manifests.len();
                }
                Err(e) => {
                    failed += 1;
                    eprintln!("{e}");
                }
            }
        }
        (ok, manifests, failed)
    });
    let secs = start.elapsed().as_secs_f64();
    println!("pulled {ok} bundles ({manifests} manifests), {failed} failed, concurrency {concurrency}: {secs:.2} s");
    if failed > 0 {
        std::process::exit(1);
    }
}
