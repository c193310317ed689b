//! `opm serve` (cmd/opm/serve/serve.go at v1.73.0) and `opm registry
//! serve` (cmd/opm/registry/serve.go), as `olm-catalog serve`.
//!
//! The serve cache (`--cache-dir`, `--cache-only`,
//! `--cache-enforce-integrity`) is `ops::serve::prepare`.
use std::path::{Path, PathBuf};

use clap::Args;
use olm_catalog::ops::serve::CacheOptions;

use super::super::{run_native, CmdResult};

/// `opm serve <source_path>`.
#[derive(Args)]
pub struct ServeArgs {
    /// The file-based catalog directory
    #[arg(value_name = "source_path")]
    source: PathBuf,
    /// Port number to serve on
    #[arg(long, short = 'p', default_value = "50051")]
    port: String,
    /// Path to a container termination log file
    #[arg(long, short = 't', default_value = "/dev/termination-log")]
    termination_log: PathBuf,
    /// Address of startup profiling endpoint (addr:port format)
    #[arg(long, value_name = "ADDR")]
    pprof_addr: Option<String>,
    /// Capture pprof CPU profiles
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    pprof_capture_profiles: Option<bool>,
    /// If set, sync and persist server cache directory
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Sync the serve cache and exit without serving
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    cache_only: Option<bool>,
    /// Exit with error if cache is not present or has been invalidated (default: true when
    /// --cache-dir is set and --cache-only is false, false otherwise)
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    cache_enforce_integrity: Option<bool>,
}

/// The native port of opm's `-p` (a string in opm).
fn port(p: &str) -> anyhow::Result<u16> {
    p.parse::<u16>()
        .map_err(|_| anyhow::anyhow!("failed to listen: invalid port {p:?}"))
}

/// Writes a failure to the termination log, as opm's log hook does (best
/// effort: the file exists only in a pod).
fn termination_log(path: &Path, result: &CmdResult) {
    if let Err(e) = result {
        if path.parent().is_some_and(Path::is_dir) {
            let _ = std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, format!("{e:#}\n").as_bytes()));
        }
    }
}

impl ServeArgs {
    /// Checks or rebuilds the cache as opm does, then (unless
    /// `--cache-only`) runs `olm-catalog serve DIR --address 0.0.0.0`.
    pub fn run(self) -> CmdResult {
        let result = self.serve();
        termination_log(&self.termination_log, &result);
        result
    }

    fn serve(&self) -> CmdResult {
        if self.pprof_addr.as_deref().is_some_and(|a| !a.is_empty())
            || self.pprof_capture_profiles == Some(true)
        {
            eprintln!("warning: no pprof endpoint: olm-catalog has no Go profiler (--pprof-addr and --pprof-capture-profiles do nothing)");
        }
        let port = port(&self.port)?;
        let opts = CacheOptions {
            source: self.source.clone(),
            cache_dir: self.cache_dir.clone(),
            cache_only: self.cache_only == Some(true),
            enforce_integrity: self.cache_enforce_integrity,
        };
        if !olm_catalog::ops::serve::prepare(&opts)? {
            return Ok(0);
        }
        run_native([
            "serve".to_string(),
            "--address=0.0.0.0".to_string(),
            format!("--port={port}"),
            "--".to_string(),
            self.source.display().to_string(),
        ])
    }
}

/// `opm registry serve`.
#[derive(Args)]
pub struct RegistryServeArgs {
    /// Relative path to sqlite db
    #[arg(long, short = 'd', default_value = "bundles.db")]
    database: PathBuf,
    /// Port number to serve on
    #[arg(long, short = 'p', default_value = "50051")]
    port: String,
    /// Path to a container termination log file
    #[arg(long, short = 't', default_value = "/dev/termination-log")]
    termination_log: PathBuf,
    /// Do not attempt to migrate to the latest db revision when starting
    /// (olm-catalog never changes the database it serves)
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    skip_migrate: Option<bool>,
    /// Timeout in seconds: the server stops (exit 0) after it. This flag will be removed later
    #[arg(long, default_value = "infinite", value_name = "SECONDS")]
    timeout_seconds: String,
}

impl RegistryServeArgs {
    /// Runs `olm-catalog serve DB --address 0.0.0.0`.
    pub fn run(self) -> CmdResult {
        let result = self.serve();
        termination_log(&self.termination_log, &result);
        result
    }

    fn serve(&self) -> CmdResult {
        // opm's AfterFunc: after the timeout the server stops gracefully
        // and the command exits 0. The timeout is a 16-bit count of seconds
        // (strconv.ParseUint(timeout, 10, 16)).
        let timeout = match self.timeout_seconds.as_str() {
            "infinite" => None,
            t => Some(
                t.parse::<u16>()
                    .map_err(|e| anyhow::anyhow!("strconv.ParseUint: parsing {t:?}: {e}"))?,
            ),
        };
        let port = port(&self.port)?;
        anyhow::ensure!(
            self.database.is_file(),
            "unable to open database {}: no such file",
            self.database.display()
        );
        let mut argv = vec![
            "serve".to_string(),
            "--address=0.0.0.0".to_string(),
            format!("--port={port}"),
        ];
        if let Some(seconds) = timeout {
            eprintln!("Keeping server open for {seconds} seconds");
            argv.push(format!("--stop-after={seconds}"));
        }
        argv.push("--".to_string());
        argv.push(self.database.display().to_string());
        run_native(argv)
    }
}
