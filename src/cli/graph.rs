//! `graph` and `render-template` commands.
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use super::{CmdResult, EXIT_FINDINGS};
use olm_catalog::diag::{self, Format, Level, Report};
use olm_catalog::graph::{checks, draw, load, path, template, Mode};

/// `graph` subcommands.
#[derive(Subcommand)]
pub enum GraphCommand {
    /// Check the upgrade graphs of package directories, templates or FBC
    #[command(after_help = "Examples:\n  olm-catalog graph check operators/etcd\n  \
olm-catalog graph check --mode semver --output sarif operators/*\n  \
olm-catalog graph check catalog/   # an FBC directory\n\n\
A package directory is operators/<pkg>: version subdirectories holding bundles, and an optional \
ci.yaml whose updateGraph (replaces-mode, semver-mode) gives the mode unless --mode does. \
FBC-enabled packages without a mode are checked through their catalog template.\n\
Exit codes: 0 no findings, 1 findings (errors or warnings; only errors with --errors-only), \
2 usage or I/O failure.")]
    Check(CheckArgs),
    /// Draw the upgrade graph of a package as Mermaid, DOT or JSON
    #[command(
        after_help = "Examples:\n  olm-catalog graph render operators/etcd --format mermaid\n  \
olm-catalog graph render operators/etcd --format dot | dot -Tsvg > etcd.svg"
    )]
    Render(RenderArgs),
    /// Print the upgrade steps OLM takes from an installed version
    #[command(
        after_help = "Examples:\n  olm-catalog graph path operators/etcd --from 0.9.0\n  \
olm-catalog graph path operators/etcd --from 0.9.0 --to 0.9.4 --channel singlenamespace-alpha\n\n\
From the installed bundle OLM picks the channel entry that replaces it, skips it, or whose \
olm.skipRange admits its version, the highest first, and repeats until the channel head.\n\
Exit codes: 0 path printed, 1 no path to --to, 2 usage or I/O failure."
    )]
    Path(PathArgs),
}

/// Where graphs come from, shared by the subcommands.
#[derive(Args)]
pub struct SourceArgs {
    /// Add mode for bundle directories (default: ci.yaml's updateGraph, else replaces)
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// For FBC-enabled packages: the catalog whose template to use (default: the newest mapped)
    #[arg(long, value_name = "NAME")]
    pub catalog: Option<String>,
}

/// `graph check`.
#[derive(Args)]
pub struct CheckArgs {
    /// Package directories, template files, or FBC files/directories
    #[arg(required = true, value_name = "PACKAGE_DIR")]
    pub dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format
    #[arg(long, short = 'o', value_enum, default_value = "human")]
    pub output: Format,
    /// Exit 1 only when there are errors; warnings are still reported
    #[arg(long)]
    pub errors_only: bool,
    /// Exit 1 on any finding (the default; kept for older scripts)
    #[arg(long, hide = true, conflicts_with = "errors_only")]
    pub strict: bool,
}

/// `graph render`.
#[derive(Args)]
pub struct RenderArgs {
    /// Package directory, template file, or FBC file/directory
    #[arg(value_name = "PACKAGE_DIR")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Drawing format
    #[arg(long, value_enum, default_value = "mermaid")]
    pub format: draw::DrawFormat,
}

/// `graph path`.
#[derive(Args)]
pub struct PathArgs {
    /// Package directory, template file, or FBC file/directory
    #[arg(value_name = "PACKAGE_DIR")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Installed version (or CSV name)
    #[arg(long, value_name = "VERSION")]
    pub from: String,
    /// Stop at this version (or CSV name); fail if it is not reached
    #[arg(long, value_name = "VERSION")]
    pub to: Option<String>,
    /// Channel to follow (default: the package's default channel)
    #[arg(long)]
    pub channel: Option<String>,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

fn load_one(
    dir: &std::path::Path,
    source: &SourceArgs,
) -> anyhow::Result<Vec<olm_catalog::graph::PackageGraph>> {
    let graphs = load::load_graphs(dir, source.mode, source.catalog.as_deref())
        .map_err(anyhow::Error::msg)?;
    if graphs.is_empty() {
        anyhow::bail!("{}: no package found", dir.display());
    }
    Ok(graphs)
}

impl GraphCommand {
    /// Runs the subcommand.
    pub fn run(self) -> CmdResult {
        match self {
            GraphCommand::Check(a) => a.run(),
            GraphCommand::Render(a) => {
                let graphs = load_one(&a.dir, &a.source)?;
                let text = draw::draw(&graphs, a.format).map_err(anyhow::Error::msg)?;
                std::io::stdout()
                    .lock()
                    .write_all(text.as_bytes())
                    .context("writing output")?;
                Ok(0)
            }
            GraphCommand::Path(a) => a.run(),
        }
    }
}

impl CheckArgs {
    fn run(self) -> CmdResult {
        // Packages are independent: load and check them in parallel, then
        // report in argument order (and the first failing argument's error).
        let per_dir: Vec<anyhow::Result<Vec<Report>>> = {
            use rayon::prelude::*;
            self.dirs
                .par_iter()
                .map(|dir| {
                    let graphs = load_one(dir, &self.source)?;
                    Ok(graphs
                        .iter()
                        .map(|g| {
                            let mut report = Report {
                                subject: format!("{} (package {})", dir.display(), g.package),
                                findings: checks::check(g),
                            };
                            report.sort();
                            report
                        })
                        .collect())
                })
                .collect()
        };
        let mut reports = Vec::new();
        for r in per_dir {
            reports.extend(r?);
        }
        let out = match self.output {
            Format::Human => {
                use std::io::IsTerminal as _;
                diag::render_human(&reports, std::io::stdout().is_terminal())
            }
            Format::Json => diag::render_json(&reports),
            Format::Sarif => diag::render_sarif(&reports, &checks::rule_help),
        };
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(out.as_bytes())
            .context("writing the report")?;
        let failing = reports
            .iter()
            .flat_map(|r| &r.findings)
            .any(|f| f.level == Level::Error || !self.errors_only || self.strict);
        Ok(if failing { EXIT_FINDINGS } else { 0 })
    }
}

impl PathArgs {
    fn run(self) -> CmdResult {
        let graphs = load_one(&self.dir, &self.source)?;
        if graphs.len() > 1 {
            anyhow::bail!(
                "{} holds {} packages; give one package's directory or file",
                self.dir.display(),
                graphs.len()
            );
        }
        let g = &graphs[0];
        let result = path::upgrade_path(g, &self.from, self.to.as_deref(), self.channel.as_deref());
        match result {
            Ok(p) if self.json => {
                println!("{}", serde_json::to_string_pretty(&p)?);
                Ok(0)
            }
            Ok(p) => {
                println!(
                    "package {}, channel {}, from {}:",
                    g.package, p.channel, self.from
                );
                if p.steps.is_empty() {
                    println!("  no upgrade steps");
                }
                for (i, s) in p.steps.iter().enumerate() {
                    let why = match s.kind {
                        olm_catalog::graph::EdgeKind::Replaces => {
                            format!("{} replaces {}", s.to, s.from)
                        }
                        olm_catalog::graph::EdgeKind::Skips => format!("{} skips {}", s.to, s.from),
                        olm_catalog::graph::EdgeKind::SkipRange => {
                            let r = g
                                .channel(&p.channel)
                                .and_then(|c| c.entry(&s.to))
                                .map(|e| e.skip_range.clone())
                                .unwrap_or_default();
                            format!("{}'s skipRange `{r}` admits {}", s.to, s.from)
                        }
                    };
                    let alt = if s.alternatives.is_empty() {
                        String::new()
                    } else {
                        format!(" (also possible, lower: {})", s.alternatives.join(", "))
                    };
                    println!("  {}. {} -> {}: {why}{alt}", i + 1, s.from, s.to);
                }
                println!("  end: {}", p.end);
                Ok(0)
            }
            Err(e) => {
                if self.json {
                    println!("{}", serde_json::json!({ "error": e }));
                } else {
                    println!("{e}");
                }
                Ok(EXIT_FINDINGS)
            }
        }
    }
}

/// Template kinds of `render-template`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TemplateKind {
    /// olm.template.basic
    Basic,
    /// olm.semver
    Semver,
}

/// `render-template`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  olm-catalog render-template basic operators/kube-green/catalog-templates/basic-template.yaml -o yaml\n  \
olm-catalog render-template semver semver.yaml --bundles-from operators/my-operator\n\n\
Bundle images are resolved offline: an image whose tag is T is the bundle directory DIR/T \
(--bundles-from DIR; default: the directory above the template's directory). Images given only \
by digest cannot be resolved this way. Rendered bundles keep the template's image references."
)]
pub struct RenderTemplateArgs {
    /// Template kind
    #[arg(value_enum)]
    pub kind: TemplateKind,
    /// Template file
    pub file: PathBuf,
    /// Output format
    #[arg(long, short = 'o', value_enum, default_value = "json")]
    pub output: template::OutputFormat,
    /// Directory whose subdirectory T is the bundle of an image tagged T
    #[arg(long, value_name = "DIR")]
    pub bundles_from: Option<PathBuf>,
    /// An FBC file or directory whose olm.bundle objects name the bundle of
    /// each image reference, to resolve images given only by digest
    #[arg(long, value_name = "FBC")]
    pub images_from: Option<PathBuf>,
}

impl RenderTemplateArgs {
    /// Renders the template to stdout.
    pub fn run(self) -> CmdResult {
        let text = std::fs::read_to_string(&self.file)
            .with_context(|| format!("reading {}", self.file.display()))?;
        let dir = match &self.bundles_from {
            Some(d) => d.clone(),
            None => self
                .file
                .canonicalize()
                .ok()
                .and_then(|p| p.parent().and_then(|p| p.parent()).map(PathBuf::from))
                .unwrap_or_else(|| PathBuf::from(".")),
        };
        let known = match &self.images_from {
            Some(p) => template::image_names(
                &olm_catalog::fbc::DeclarativeConfig::load_path(p).map_err(anyhow::Error::msg)?,
            ),
            None => Default::default(),
        };
        let render = template::dir_renderer_with(&dir, known);
        if self.kind == TemplateKind::Semver
            && template::parse_semver(&text, &self.file).is_ok_and(|t| t.avoid_skip_patch)
        {
            eprintln!("warning: {}", template::AVOID_SKIP_PATCH_WARNING);
        }
        let cfg = match self.kind {
            TemplateKind::Basic => template::render_basic(&text, &self.file, &render),
            TemplateKind::Semver => template::render_semver(&text, &self.file, &render),
        }
        .map_err(anyhow::Error::msg)?;
        let out = template::write(&cfg, self.output).map_err(anyhow::Error::msg)?;
        std::io::stdout()
            .lock()
            .write_all(out.as_bytes())
            .context("writing output")?;
        Ok(0)
    }
}
