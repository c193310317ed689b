//! Times the optional validation suites over every bundle of the
//! community-operators corpus (loading excluded): prints the median of 15
//! runs. Run with `scripts/bench-optional.sh`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use olm_catalog::bundle::Bundle;
use olm_catalog::validate::optional::{self, SUITES};
use olm_catalog::validate::{Context, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let corpus = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/corpus/community-operators-prod"));
    let mut dirs = Vec::new();
    for pkg in std::fs::read_dir(corpus.join("operators"))? {
        let pkg = pkg?.path();
        if pkg.is_dir() {
            for b in std::fs::read_dir(&pkg)? {
                let b = b?.path();
                if b.join("manifests").is_dir() {
                    dirs.push(b);
                }
            }
        }
    }
    dirs.sort();
    let load = Instant::now();
    let bundles: Vec<Bundle> = dirs
        .iter()
        .map(|d| Bundle::load_dir(d))
        .collect::<Result<_, _>>()?;
    let load = load.elapsed();
    let options = Options {
        optional: SUITES.iter().map(|(n, _)| n.to_string()).collect(),
        k8s_version: Some("1.25".into()),
        ..Options::default()
    };
    let mut times: Vec<Duration> = Vec::new();
    let mut findings = 0;
    for _ in 0..15 {
        let start = Instant::now();
        findings = 0;
        for b in &bundles {
            let ctx = Context {
                bundle: b,
                csv: None,
                options: &options,
            };
            let mut out = Vec::new();
            optional::run(&ctx, &mut out);
            findings += out.len();
        }
        times.push(start.elapsed());
    }
    times.sort();
    let median = times[times.len() / 2];
    println!(
        "{} bundles, {findings} findings: optional suites median {:.1} ms ({:.1} µs/bundle); loading once took {:.0} ms",
        bundles.len(),
        median.as_secs_f64() * 1e3,
        median.as_secs_f64() * 1e6 / bundles.len().max(1) as f64,
        load.as_secs_f64() * 1e3
    );
    Ok(())
}
