//! `opm serve` (cmd/opm/serve/serve.go at v1.73.0) and `opm registry
//! serve` (cmd/opm/registry/serve.go), as `olm-catalog serve`.
//!
//! opm's serve cache (`--cache-dir`) is a pre-built store its server
//! loads; ours loads the catalog itself at start, so the cache here is
//! what makes opm's integrity rules hold: `--cache-only` checks that the
//! catalog loads and records its digest in `<cache-dir>/olm-catalog.digest`;
//! with integrity enforced (opm's default when `--cache-dir` is given
//! without `--cache-only`) `serve` refuses a missing or stale digest, as
//! opm refuses a missing or stale cache.
use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Args;
use sha2::{Digest as _, Sha256};

use super::super::{run_native, CmdResult};

/// The file holding the catalog's digest in a cache directory.
pub const CACHE_DIGEST_FILE: &str = "olm-catalog.digest";

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

/// The digest of a catalog directory: every regular file under it (links
/// followed), by relative path, in path order.
pub fn catalog_digest(dir: &Path) -> anyhow::Result<String> {
    let mut hasher = Sha256::new();
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for entry in walkdir::WalkDir::new(dir).follow_links(true) {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        if entry.file_type().is_file() {
            let rel = entry
                .path()
                .strip_prefix(dir)
                .unwrap_or(entry.path())
                .to_string_lossy()
                .into_owned();
            files.push((rel, entry.path().to_path_buf()));
        }
    }
    files.sort();
    for (rel, path) in files {
        let mut data = Vec::new();
        std::fs::File::open(&path)
            .and_then(|mut f| f.read_to_end(&mut data))
            .with_context(|| format!("reading {}", path.display()))?;
        hasher.update(rel.as_bytes());
        hasher.update([0]);
        hasher.update((data.len() as u64).to_le_bytes());
        hasher.update(&data);
    }
    Ok(format!("sha256:{}", hex::encode(hasher.finalize())))
}

/// Loads the catalog as the server does at start; its first error, if any.
fn load_catalog(dir: &Path) -> anyhow::Result<()> {
    let report = olm_catalog::ops::image::validate_catalog(dir);
    if let Some(f) = report
        .findings
        .iter()
        .find(|f| f.level == olm_catalog::diag::Level::Error)
    {
        anyhow::bail!("{}", f.message);
    }
    Ok(())
}

/// opm's `store.CheckIntegrity`: the digest recorded in the cache is the
/// catalog's.
fn check_integrity(cache_dir: &Path, source: &Path) -> anyhow::Result<()> {
    let file = cache_dir.join(CACHE_DIGEST_FILE);
    let recorded = std::fs::read_to_string(&file)
        .map_err(|e| anyhow::anyhow!("read existing cache digest: {}: {e}", file.display()))?;
    let computed = catalog_digest(source).context("compute digest")?;
    let recorded = recorded.trim();
    anyhow::ensure!(
        recorded == computed,
        "cache requires rebuild: cache reports digest as {recorded:?}, but computed digest is {computed:?}"
    );
    Ok(())
}

/// opm's `cache.LoadOrRebuild`: the catalog loads; its digest is recorded.
fn rebuild(cache_dir: &Path, source: &Path) -> anyhow::Result<()> {
    load_catalog(source)?;
    let digest = catalog_digest(source).context("compute digest")?;
    std::fs::create_dir_all(cache_dir)
        .with_context(|| format!("init cache: {}", cache_dir.display()))?;
    let file = cache_dir.join(CACHE_DIGEST_FILE);
    std::fs::write(&file, format!("{digest}\n"))
        .with_context(|| format!("store digest: {}", file.display()))?;
    Ok(())
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
        let cache_only = self.cache_only == Some(true);
        let enforce = self
            .cache_enforce_integrity
            .unwrap_or(self.cache_dir.is_some() && !cache_only);
        let port = port(&self.port)?;
        match &self.cache_dir {
            None if enforce => {
                anyhow::bail!("--cache-dir must be specified with --cache-enforce-integrity")
            }
            None => load_catalog(&self.source)
                .map_err(|e| anyhow::anyhow!("failed to load or rebuild cache: {e}"))?,
            Some(dir) if enforce => check_integrity(dir, &self.source)
                .map_err(|e| anyhow::anyhow!("integrity check failed: {e:#}"))?,
            Some(dir) => rebuild(dir, &self.source)
                .map_err(|e| anyhow::anyhow!("failed to load or rebuild cache: {e:#}"))?,
        }
        if cache_only {
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
