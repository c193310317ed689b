//! `bundle validate` command.
use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::{CmdResult, EXIT_FINDINGS};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use olm_catalog::diag::{self, Format};
use olm_catalog::oci::{self, media, ImageRef};
use olm_catalog::ops::registry::{ImageClients, RegistryOptions};
use olm_catalog::validate::optional::multiarch::{ImagePlatform, ImagePlatforms};
use olm_catalog::validate::{self, select, Options};

/// `bundle validate`.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
olm-catalog bundle validate ./bundle\n  \
olm-catalog bundle validate operators/*/*             # many bundles, checked in parallel\n  \
olm-catalog bundle validate --skip-non-bundles -v operators/*/*   # a tree with ci.yaml and template folders\n  \
olm-catalog bundle validate ./bundle --select-optional suite=operatorframework\n  \
olm-catalog bundle validate ./bundle --select-optional name=alpha-deprecated-apis --k8s-version 1.25\n  \
olm-catalog bundle validate ./bundle --output sarif > findings.sarif\n\n\
Exit codes: 0 no errors (warnings allowed), 1 errors found, 2 usage or I/O failure \
(a path that does not exist, a file that cannot be read: rule io-error). A folder without manifests/ or metadata/ that \
holds a package manifest (package.yaml, *.package.yaml) gets the package manifest checks; any other \
path that is not a bundle (a file, an empty or other folder) is an error (not-a-bundle), as in \
operator-sdk. With --skip-non-bundles such paths are skipped instead: counted in the summary, \
listed with -v; if every path is skipped, nothing was validated and the exit code is 1. Rules and \
their origins: docs/validate.md.")]
pub struct ValidateArgs {
    /// Bundle directories (each holding manifests/ and metadata/)
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Run optional suites picked by a label selector, as operator-sdk does:
    /// `name=operatorhub`, `name=good-practices`, `name=alpha-deprecated-apis`,
    /// `name=standardcategories`, `name=standardcapabilities`, or
    /// `suite=operatorframework` for all of them; `name=multiarch` reads
    /// the platforms of the CSV's images from their registries. Repeatable (ORed).
    #[arg(long = "select-optional", value_name = "SELECTOR")]
    pub select_optional: Vec<String>,
    /// Kubernetes version the bundle targets, for alpha-deprecated-apis (e.g. 1.25)
    #[arg(long = "k8s-version", value_name = "VERSION")]
    pub k8s_version: Option<String>,
    /// Skip paths that are not bundles (files such as ci.yaml, folders
    /// without manifests/ or metadata/) instead of failing them: for a glob
    /// that walks a tree. They are counted in the summary; -v lists them.
    #[arg(long = "skip-non-bundles")]
    pub skip_non_bundles: bool,
    /// The bundle directory this one upgrades from: also check that OLM
    /// could upgrade its CRDs to this bundle's (CRD upgrade safety, rules
    /// crd-upgrade-*, crd-served-version-incompatible). Takes exactly one bundle DIR.
    #[arg(long, value_name = "OLD_DIR")]
    pub previous: Option<PathBuf>,
    /// With --previous: whose CRD upgrade-safety rules (OLM v1's preflight,
    /// or crdify's own defaults)
    #[arg(
        long,
        value_enum,
        value_name = "CONFIG",
        default_value = "olm-v1",
        requires = "previous"
    )]
    pub crd_checks: olm_catalog::graph::crd_safety::CrdChecks,
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "human"
    )]
    pub output: Format,
    // How the multi-arch check (`--select-optional name=multiarch`) reaches
    // the registries of the CSV's images.
    #[command(flatten)]
    pub registry: super::image::RegistryFlags,
}

/// Checks `--k8s-version`: `1.25`, `1.25.3` or `v1.25.3`.
fn check_k8s_version(v: &str) -> anyhow::Result<()> {
    let t = v.strip_prefix('v').unwrap_or(v);
    let parts: Vec<&str> = t.split('.').collect();
    if (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        Ok(())
    } else {
        anyhow::bail!("--k8s-version `{v}`: expected a Kubernetes version such as 1.25 or 1.25.3")
    }
}

impl ValidateArgs {
    /// Validates every directory and prints the findings.
    pub fn run(self) -> CmdResult {
        let optional =
            select::select_optional(&self.select_optional).map_err(anyhow::Error::msg)?;
        if let Some(v) = &self.k8s_version {
            check_k8s_version(v)?;
        }
        let image_platforms: Option<Arc<dyn ImagePlatforms>> =
            if optional.iter().any(|s| s == "multiarch") {
                Some(Arc::new(RegistryPlatforms::new(self.registry.options()?)?))
            } else {
                None
            };
        let options = Options {
            optional,
            k8s_version: self.k8s_version.clone(),
            image_platforms,
        };
        if let Some(prev) = &self.previous {
            if self.dirs.len() != 1 {
                anyhow::bail!(
                    "--previous compares one bundle with the one before it: give exactly one DIR"
                );
            }
            if !prev.is_dir() {
                anyhow::bail!("--previous {}: no such directory", prev.display());
            }
        }
        let missing: Vec<&PathBuf> = self.dirs.iter().filter(|d| !d.exists()).collect();
        let help = |id: &str| {
            validate::rules::summary(id).or_else(|| olm_catalog::graph::crd_safety::rule_help(id))
        };
        // Bundles are validated in parallel and each report is written, in
        // argument order, as soon as it is ready: a whole catalog tree never
        // sits in memory. What the exit code and the notes below need is
        // kept aside: skipped paths and io-error messages (few).
        let stdout = PipeTolerant::new(std::io::stdout().lock());
        let mut out = diag::ReportWriter::new(std::io::BufWriter::new(stdout), self.output)
            .color(super::common::color_stdout())
            .rules_help(&help);
        let mut skipped: Vec<(String, String)> = Vec::new();
        let mut io_failures: Vec<String> = Vec::new();
        let mut first = true;
        let written = validate::validate_dirs_each(&self.dirs, &options, |mut report| {
            if self.skip_non_bundles && validate::is_non_bundle(&report) {
                let why = report.findings.first().map(|f| f.message.clone());
                skipped.push((report.subject, why.unwrap_or_default()));
                return Ok(());
            }
            if let (Some(prev), true) = (&self.previous, first) {
                report
                    .findings
                    .extend(olm_catalog::graph::crd_safety::compare_dirs_with(
                        prev,
                        &self.dirs[0],
                        self.crd_checks,
                    ));
                report.sort();
            }
            first = false;
            io_failures.extend(
                report
                    .findings
                    .iter()
                    .filter(|f| f.rule == "io-error")
                    .map(|f| f.message.clone()),
            );
            out.write(&report)
        });
        let summary = out.summary();
        let mut stdout = match written.and_then(|()| out.finish()) {
            Ok(w) => w,
            Err(e) => anyhow::bail!("writing the report: {e}"),
        };
        let verbose = super::common::verbosity() > 0;
        if !skipped.is_empty() {
            // Human output says it after the summary; machine formats keep
            // stdout to their schema, so there it goes to stderr.
            let mut note = String::new();
            if verbose {
                for (subject, why) in &skipped {
                    note.push_str(&format!("skipped {subject}: {why}\n"));
                }
            }
            note.push_str(&format!(
                "{} skipped: not bundle{}{}\n",
                skipped.len(),
                if skipped.len() == 1 { "" } else { "s" },
                if verbose { "" } else { " (-v lists them)" }
            ));
            if self.output == Format::Human {
                if let Err(e) = stdout.write_all(note.as_bytes()) {
                    anyhow::bail!("writing the report: {e}");
                }
            } else {
                let _ = std::io::stderr().write_all(note.as_bytes());
            }
        }
        if let Err(e) = stdout.flush() {
            anyhow::bail!("writing the report: {e}");
        }
        if !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(|p| p.display().to_string()).collect();
            anyhow::bail!("no such file or directory: {}", names.join(", "));
        }
        // A file that could not be read is an I/O failure, not a finding
        // about the bundle: exit 2, after printing every report.
        if !io_failures.is_empty() {
            anyhow::bail!("I/O failure: {}", io_failures.join("; "));
        }
        if summary.checked == 0 && !skipped.is_empty() {
            // `--skip-non-bundles` over paths none of which is a bundle: a
            // wrong path or glob must not pass silently.
            eprintln!(
                "no bundle among the {} path{} given: nothing was validated",
                skipped.len(),
                if skipped.len() == 1 { "" } else { "s" }
            );
            return Ok(EXIT_FINDINGS);
        }
        Ok(if summary.errors > 0 { EXIT_FINDINGS } else { 0 })
    }
}

/// Standard output that turns quiet once its reader is gone: a closed pipe
/// (`| head`) is not a failure of the validation, which goes on to its exit
/// code; other write errors are returned.
struct PipeTolerant<W: Write> {
    inner: W,
    closed: bool,
}

impl<W: Write> PipeTolerant<W> {
    fn new(inner: W) -> PipeTolerant<W> {
        PipeTolerant {
            inner,
            closed: false,
        }
    }

    fn tolerate(&mut self, r: std::io::Result<()>) -> std::io::Result<()> {
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => r,
        }
    }
}

impl<W: Write> Write for PipeTolerant<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.closed {
            let r = self.inner.write_all(buf);
            self.tolerate(r)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.inner.flush();
        self.tolerate(r)
    }
}

/// Image platforms read from registries with the OCI client (the registry
/// flags, auth files and credential helpers), each image once per run.
struct RegistryPlatforms {
    clients: ImageClients,
    runtime: tokio::runtime::Runtime,
    cache: Mutex<HashMap<String, Result<Vec<ImagePlatform>, String>>>,
}

impl RegistryPlatforms {
    fn new(opts: RegistryOptions) -> anyhow::Result<RegistryPlatforms> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| anyhow::anyhow!("starting the async runtime: {e}"))?;
        Ok(RegistryPlatforms {
            clients: ImageClients::new(opts)?,
            runtime,
            cache: Mutex::new(HashMap::new()),
        })
    }
}

impl ImagePlatforms for RegistryPlatforms {
    fn platforms(&self, image: &str) -> Result<Vec<ImagePlatform>, String> {
        if let Some(hit) = self.cache.lock().ok().and_then(|c| c.get(image).cloned()) {
            return hit;
        }
        let got = self.runtime.block_on(read_platforms(&self.clients, image));
        if let Ok(mut c) = self.cache.lock() {
            c.insert(image.to_string(), got.clone());
        }
        got
    }
}

/// The platforms of an image index's entries, or of a single manifest's
/// config. Index entries for attestations (`unknown/unknown`) are left out.
async fn read_platforms(clients: &ImageClients, image: &str) -> Result<Vec<ImagePlatform>, String> {
    let src: ImageRef = image.parse().map_err(|e: oci::OciError| e.to_string())?;
    let client = &clients.client_for(&src).map_err(|e| e.to_string())?;
    let (bytes, media_type, _) = oci::transfer::fetch_manifest(client, &src)
        .await
        .map_err(|e| e.to_string())?;
    if media::is_index(&media_type) {
        let index: media::ImageIndex =
            serde_json::from_slice(&bytes).map_err(|e| format!("{image}: index: {e}"))?;
        return Ok(index
            .manifests
            .iter()
            .filter_map(|d| d.platform.as_ref())
            .filter(|p| p.architecture != "unknown")
            .map(|p| ImagePlatform {
                os: p.os.clone(),
                architecture: p.architecture.clone(),
            })
            .collect());
    }
    let manifest: media::ImageManifest =
        serde_json::from_slice(&bytes).map_err(|e| format!("{image}: manifest: {e}"))?;
    let config = oci::transfer::fetch_blob(
        client,
        &src,
        &manifest.config,
        oci::transfer::MAX_CONFIG,
        None,
    )
    .await
    .map_err(|e| e.to_string())?;
    let config: serde_json::Value =
        serde_json::from_slice(&config).map_err(|e| format!("{image}: config: {e}"))?;
    let field = |k: &str| {
        config
            .get(k)
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string()
    };
    Ok(vec![ImagePlatform {
        os: field("os"),
        architecture: field("architecture"),
    }])
}
