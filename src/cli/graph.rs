//! `graph` and `render-template` commands.
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use super::common::CliReporter;
use super::{CmdResult, EXIT_FINDINGS};
use olm_catalog::diag::{self, Format, Level};
use olm_catalog::graph::{checks, draw, load, path, template, Mode};

/// `graph` subcommands.
#[derive(Subcommand)]
pub enum GraphCommand {
    /// Check the upgrade graphs of package directories, templates or FBC
    #[command(after_help = "Examples:\n  olm-catalog graph check operators/etcd\n  \
olm-catalog graph check --mode semver --output sarif operators/*\n  \
olm-catalog graph check catalog/   # an FBC directory\n  \
olm-catalog graph check -o html operators/etcd > report.html\n\n\
A package directory is operators/<pkg>: version subdirectories holding bundles, and an optional \
ci.yaml whose updateGraph (replaces-mode, semver-mode) gives the mode unless --mode does. \
FBC-enabled packages without a mode are checked through their catalog template.\n\
Exit codes: 0 no findings, 1 findings (errors or warnings; only errors with --errors-only), \
2 usage or I/O failure.")]
    Check(CheckArgs),
    /// Draw the upgrade graph of a package as Mermaid, DOT, JSON, SVG or HTML
    #[command(
        after_help = "Examples:\n  olm-catalog graph render operators/etcd -o mermaid\n  \
olm-catalog graph render operators/etcd -o svg > etcd.svg\n  \
olm-catalog graph render catalog/ -o html > graph.html\n\n\
-o svg and -o html are laid out here (no Graphviz): one lane per channel, bundles by version, \
replaces solid, skips dashed, skipRange written under its bundle, channel heads in a blue \
border, the default channel starred, deprecated bundles and channels grey; for bundle \
directories, an edge with an unsafe CRD change (as graph check finds) is red, its rules in \
its tooltip."
    )]
    Render(RenderArgs),
    /// Print the upgrade steps OLM takes from an installed version
    #[command(
        after_help = "Examples:\n  olm-catalog graph path operators/etcd --from 0.9.0\n  \
olm-catalog graph path operators/etcd --from 0.9.0 --to 0.9.4 --channel singlenamespace-alpha\n\n\
From the installed bundle OLM picks the channel entry that replaces it, skips it, or whose \
olm.skipRange admits its version, and repeats until the channel head. --olm v0 (default) \
follows OLM v0: only the channel's replaces chain, the entry closest to the head first; --olm v1 \
follows OLM v1: every channel (or --channel), every entry, the highest version first. Each step \
lists what changes in the CRDs between its two bundles (unsafe changes as errors, safe additions \
summarised) when the bundles are directories.\n\
Exit codes: 0 path printed, 1 no path to --to, 2 usage or I/O failure."
    )]
    Path(PathArgs),
    // ---- rehearse (issue 19) ----
    /// Rehearse what OLM would install and upgrade for a Subscription or ClusterExtension
    #[command(
        after_help = "Examples:\n  olm-catalog graph rehearse --subscription sub.yaml catalog/\n  \
olm-catalog graph rehearse --cluster-extension ce.yaml index.db -o json\n\n\
CATALOG is an FBC directory or file, or an SQLite index database. With --subscription (OLM v0) \
OLM installs the channel head (or startingCSV), with the dependencies its olm.package.required, \
olm.gvk.required and olm.constraint properties name, then takes one replaces/skips/skipRange hop \
at a time; installPlanApproval: Manual stops after the install. --subscription repeats (resolved \
together, as in one namespace); --installed CSV[@PACKAGE][=BUNDLE] puts a CSV on the cluster \
first (BUNDLE: a bundle directory or image to read it from). With --cluster-extension (OLM v1) \
it installs the highest version its version range and channels admit and then moves to the \
highest successor; bundles with dependencies are refused, as OLM v1 does. Several ClusterCatalogs: \
--catalog NAME=SOURCE (repeat), with --catalog-priority NAME=N, --catalog-labels NAME=k=v,... and \
--catalog-availability NAME=Unavailable (left out); the ClusterExtension's selector picks among them, \
then deprecation and priority, and two picks at one priority are an error naming the catalogs, as \
operator-controller resolves. --installed NAME@VERSION starts from a bundle the catalogs may no longer \
have. An installed bundle with no successor the filters admit, or a resolved bundle with \
dependencies, is not installable (exit 1), as OLM's resolve fails.\n\
Exit codes: 0 installable, 1 not installable (the failing constraint is named), 2 usage or I/O failure."
    )]
    Rehearse(RehearseArgs),
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
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "human"
    )]
    pub output: CheckFormat,
    /// Exit 1 only when there are errors; warnings are still reported
    #[arg(long)]
    pub errors_only: bool,
    /// Skip the CRD upgrade-safety checks of every upgrade edge (on by default)
    #[arg(long)]
    pub no_crd_checks: bool,
    /// Whose CRD upgrade-safety rules: OLM v1's preflight (descriptions not
    /// checked, enum values added allowed, served versions not compared with
    /// a conversion webhook) or crdify's own defaults
    #[arg(long, value_enum, value_name = "CONFIG", default_value = "olm-v1")]
    pub crd_checks: olm_catalog::graph::crd_safety::CrdChecks,
    /// Exit 1 on any finding (the default; kept for older scripts)
    #[arg(long, hide = true, conflicts_with = "errors_only")]
    pub strict: bool,
}

/// Output formats of `graph check`: the reports' formats, and a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    /// For people: rustc-style with source lines (`text` is another name).
    #[value(alias = "text")]
    Human,
    /// A JSON report (schema/findings.schema.json).
    Json,
    /// SARIF 2.1.0, for code-scanning uploads.
    Sarif,
    /// One HTML page: each package's upgrade graph beside its findings.
    Html,
}

/// `graph render`.
#[derive(Args)]
pub struct RenderArgs {
    /// Package directory, template file, or FBC file/directory
    #[arg(value_name = "PACKAGE_DIR")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub source: SourceArgs,
    /// Output format (--format is an older name)
    #[arg(
        long = "output",
        short = 'o',
        alias = "format",
        value_enum,
        default_value = "mermaid"
    )]
    pub format: draw::DrawFormat,
}

/// Output formats of `graph path`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PathFormat {
    /// One numbered line per step, with why OLM takes it.
    Text,
    /// The path as a JSON object.
    Json,
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
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "text"
    )]
    pub output: PathFormat,
    /// Older name of `-o json`
    #[arg(long, hide = true)]
    pub json: bool,
    /// The package to follow, when the catalog holds several
    #[arg(long, value_name = "NAME")]
    pub package: Option<String>,
    /// Whose successor rules to follow: v0 (Subscriptions) or v1 (ClusterExtensions)
    #[arg(long, value_enum, default_value = "v0")]
    pub olm: OlmVersion,
    /// Whose CRD upgrade-safety rules judge each step's CRD changes, as
    /// `graph check --crd-checks`: OLM v1's preflight or crdify's own defaults
    #[arg(long, value_enum, value_name = "CONFIG", default_value = "olm-v1")]
    pub crd_checks: olm_catalog::graph::crd_safety::CrdChecks,
}

/// `--olm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OlmVersion {
    /// OLM v0 (operator-lifecycle-manager, Subscriptions).
    V0,
    /// OLM v1 (operator-controller, ClusterExtensions).
    V1,
}

impl OlmVersion {
    fn rules(self) -> olm_catalog::graph::successors::Olm {
        match self {
            OlmVersion::V0 => olm_catalog::graph::successors::Olm::V0,
            OlmVersion::V1 => olm_catalog::graph::successors::Olm::V1,
        }
    }
}

/// `graph rehearse`.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("request").required(true).args(["subscription", "cluster_extension"])))]
pub struct RehearseArgs {
    /// Catalog: FBC directory or file, SQLite index database, or an index
    /// or catalog image (registry or oci:DIR[:TAG])
    #[arg(value_name = "CATALOG", required_unless_present = "catalogs")]
    pub catalog: Option<String>,
    /// With --cluster-extension: a ClusterCatalog NAME and what it serves
    /// (as CATALOG); repeat for several, resolved as a cluster does
    #[arg(
        long = "catalog",
        value_name = "NAME=SOURCE",
        conflicts_with = "catalog"
    )]
    pub catalogs: Vec<String>,
    /// The spec.priority of a --catalog (default 0; the higher wins)
    #[arg(long, value_name = "NAME=N", requires = "catalogs")]
    pub catalog_priority: Vec<String>,
    /// The labels of a --catalog, for the ClusterExtension's selector
    /// (olm.operatorframework.io/metadata.name=NAME is always set)
    #[arg(long, value_name = "NAME=K=V,...", requires = "catalogs")]
    pub catalog_labels: Vec<String>,
    /// The spec.availabilityMode of a --catalog (default Available); an
    /// Unavailable catalog is left out of resolution, as operator-controller does
    #[arg(long, value_name = "NAME=Available|Unavailable", requires = "catalogs")]
    pub catalog_availability: Vec<String>,
    /// A Subscription (YAML): OLM v0's rules; repeat to resolve several
    /// together, as OLM does in one namespace
    #[arg(long, value_name = "FILE")]
    pub subscription: Vec<PathBuf>,
    /// A ClusterExtension (YAML): OLM v1's rules
    #[arg(long, value_name = "FILE")]
    pub cluster_extension: Option<PathBuf>,
    /// What is installed already. With --cluster-extension: the bundle
    /// (version or name), or NAME@VERSION as the cluster records it (also
    /// for a bundle the catalogs no longer have); the rehearsal reconciles
    /// from it. With
    /// --subscription: a CSV on the cluster, as CSV[@PACKAGE][=BUNDLE]
    /// (BUNDLE: a bundle directory or image to read its APIs and
    /// dependencies from, for a CSV the catalog lacks); repeatable
    #[arg(long, value_name = "INSTALLED")]
    pub installed: Vec<String>,
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "text"
    )]
    pub output: PathFormat,
    #[command(flatten)]
    pub registry: super::image::RegistryFlags,
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
            GraphCommand::Rehearse(a) => a.run(),
        }
    }
}

impl CheckArgs {
    fn run(self) -> CmdResult {
        // A path that does not exist is a usage error; a tree of packages
        // (`operators/`) is each of its packages.
        for d in &self.dirs {
            if !d.exists() {
                anyhow::bail!("{}: no such file or directory", d.display());
            }
        }
        let dirs = load::expand_package_trees(&self.dirs).map_err(anyhow::Error::msg)?;
        let opts = checks::CheckOptions {
            mode: self.source.mode,
            catalog: self.source.catalog.clone(),
            crds: !self.no_crd_checks,
            crd_checks: self.crd_checks,
        };
        let fails = |f: &diag::Finding| f.level == Level::Error || !self.errors_only || self.strict;
        let format = match self.output {
            CheckFormat::Human => Format::Human,
            CheckFormat::Json => Format::Json,
            CheckFormat::Sarif => Format::Sarif,
            CheckFormat::Html => {
                let (page, reports) = olm_catalog::graph::check_html::check_page(&dirs, &opts);
                std::io::stdout()
                    .lock()
                    .write_all(page.as_bytes())
                    .context("writing the report")?;
                let failing = reports.iter().flat_map(|r| &r.findings).any(fails);
                return Ok(if failing { EXIT_FINDINGS } else { 0 });
            }
        };
        // Packages are checked in parallel and each report is written, in
        // argument order, as soon as it is ready: a whole catalog tree never
        // sits in memory. A package that cannot be read is one finding for
        // it; the others are still checked.
        let stdout = std::io::stdout().lock();
        let mut out = diag::ReportWriter::new(std::io::BufWriter::new(stdout), format)
            .color(super::common::color_stdout())
            .rules_help(&checks::rule_help);
        let mut failing = false;
        checks::check_packages_each(&dirs, &opts, |report| {
            failing |= report.findings.iter().any(fails);
            out.write(&report)
        })
        .and_then(|()| out.finish())
        .and_then(|mut w| w.flush())
        .context("writing the report")?;
        Ok(if failing { EXIT_FINDINGS } else { 0 })
    }
}

impl PathArgs {
    fn run(self) -> CmdResult {
        let mut graphs = load_one(&self.dir, &self.source)?;
        if let Some(p) = &self.package {
            let names: Vec<String> = graphs.iter().map(|g| g.package.clone()).collect();
            graphs.retain(|g| g.package == *p);
            if graphs.is_empty() {
                anyhow::bail!(
                    "{} has no package {p} (packages: {})",
                    self.dir.display(),
                    names.join(", ")
                );
            }
        }
        if graphs.len() > 1 {
            anyhow::bail!(
                "{} holds {} packages; give one package's directory or file, or --package",
                self.dir.display(),
                graphs.len()
            );
        }
        let g = &graphs[0];
        let json = self.json || self.output == PathFormat::Json;
        let mut result = path::upgrade_path_with(
            g,
            &self.from,
            self.to.as_deref(),
            self.channel.as_deref(),
            self.olm.rules(),
        );
        if let Ok(p) = &mut result {
            path::annotate_crd_changes_with(g, p, self.crd_checks);
        }
        // A version the package does not have is only worth a path when a
        // skipRange admits it (an installed version since removed from the
        // catalog); else it is most likely a typo.
        if let Ok(p) = &result {
            if p.steps.is_empty() && !in_package(g, &self.from) {
                result = Err(olm_catalog::graph::Error::Unknown(format!(
                    "version {} is not in package {} (versions: {}), and no bundle of channel {} replaces, skips or admits it",
                    self.from,
                    g.package,
                    versions_of(g),
                    p.channel
                )));
            }
        }
        match result {
            Ok(p) if json => {
                println!("{}", serde_json::to_string_pretty(&p)?);
                Ok(0)
            }
            Ok(p) => {
                println!(
                    "package {}, {} {}, from {} (OLM {} rules):",
                    g.package,
                    if p.channel.contains(", ") {
                        "channels"
                    } else {
                        "channel"
                    },
                    p.channel,
                    self.from,
                    p.olm.as_str()
                );
                if p.steps.is_empty() {
                    println!("  no upgrade steps");
                }
                // One note for all the steps when none could be compared
                // for the same reason (a file-based catalog).
                let same_crd_note = p.steps.len() > 1
                    && p.steps.iter().all(|s| {
                        s.crd_changes.as_ref().is_some_and(|c| !c.compared)
                            && s.crd_changes.as_ref().map(|c| &c.note)
                                == p.steps[0].crd_changes.as_ref().map(|c| &c.note)
                    });
                for (i, s) in p.steps.iter().enumerate() {
                    let why = match s.kind {
                        olm_catalog::graph::EdgeKind::Replaces => {
                            format!("{} replaces {}", s.to, s.from)
                        }
                        olm_catalog::graph::EdgeKind::Skips => format!("{} skips {}", s.to, s.from),
                        olm_catalog::graph::EdgeKind::SkipRange => {
                            let r = g
                                .channel(&s.channel)
                                .and_then(|c| c.entry(&s.to))
                                .map(|e| e.skip_range.clone())
                                .unwrap_or_default();
                            format!("{}'s skipRange `{r}` admits {}", s.to, s.from)
                        }
                    };
                    let alt = if s.alternatives.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " (also possible, less preferred: {})",
                            s.alternatives.join(", ")
                        )
                    };
                    println!("  {}. {} -> {}: {why}{alt}", i + 1, s.from, s.to);
                    if !same_crd_note {
                        print_crd_changes(s.crd_changes.as_ref());
                    }
                }
                if let Some(n) = p
                    .steps
                    .first()
                    .and_then(|s| s.crd_changes.as_ref())
                    .and_then(|c| c.note.as_ref())
                    .filter(|_| same_crd_note)
                {
                    println!("  CRDs of every step: {n}");
                }
                println!("  end: {}", p.end);
                Ok(0)
            }
            Err(e) => {
                if json {
                    println!("{}", serde_json::json!({ "error": e.to_string() }));
                } else {
                    println!("{e}");
                }
                Ok(EXIT_FINDINGS)
            }
        }
    }
}

/// The CRD changes of one step, indented under it.
fn print_crd_changes(c: Option<&path::CrdChanges>) {
    let Some(c) = c else { return };
    if let Some(n) = &c.note {
        println!("     CRDs: {n}");
    }
    if !c.compared {
        return;
    }
    if c.unsafe_changes.is_empty() && c.safe.is_empty() {
        println!("     CRDs: nothing unsafe, nothing added");
    }
    for f in &c.unsafe_changes {
        let lvl = match f.level {
            Level::Error => "error",
            _ => "warning",
        };
        let at = f
            .location
            .as_ref()
            .map(|l| format!(" ({}:{})", l.file.display(), l.line))
            .unwrap_or_default();
        // The label repeats the step; keep what follows it.
        let msg = f
            .message
            .split_once("): ")
            .map(|x| x.1)
            .unwrap_or(&f.message);
        println!("     CRDs {lvl} [{}]: {msg}{at}", f.rule);
    }
    if c.unsafe_changes.iter().any(|f| f.level == Level::Error) {
        println!(
            "     (OLM v1's CRD upgrade-safety preflight refuses this step; OLM v0 applies it)"
        );
    }
    for s in &c.safe {
        println!("     CRDs safe: {s}");
    }
}

// ---- rehearse (issue 19) ----

impl RehearseArgs {
    fn run(self) -> CmdResult {
        let opts = olm_catalog::ops::rehearse::RehearseOptions {
            catalog: self.catalog,
            catalogs: self.catalogs,
            catalog_priority: self.catalog_priority,
            catalog_labels: self.catalog_labels,
            catalog_availability: self.catalog_availability,
            subscriptions: self.subscription,
            cluster_extension: self.cluster_extension,
            installed: self.installed,
            registry: self.registry.options()?,
        };
        let r = olm_catalog::ops::rehearse::rehearse(&opts)?;
        let text = match self.output {
            PathFormat::Json => format!("{}\n", serde_json::to_string_pretty(&r)?),
            PathFormat::Text => olm_catalog::resolve::render_text(&r),
        };
        std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .context("writing output")?;
        Ok(if r.installable { 0 } else { EXIT_FINDINGS })
    }
}

/// Whether `from` names a bundle of the package, by CSV name or version.
fn in_package(g: &olm_catalog::graph::PackageGraph, from: &str) -> bool {
    if g.bundles.contains_key(from) {
        return true;
    }
    let Ok(v) = semver::Version::parse(from.trim_start_matches('v')) else {
        return false;
    };
    g.bundles.values().any(|b| {
        b.version
            .as_ref()
            .is_some_and(|bv| bv.cmp_precedence(&v).is_eq())
    })
}

/// The package's versions, lowest first, for messages (at most ten).
fn versions_of(g: &olm_catalog::graph::PackageGraph) -> String {
    let mut vs: Vec<&semver::Version> = g
        .bundles
        .values()
        .filter_map(|b| b.version.as_ref())
        .collect();
    vs.sort();
    vs.dedup();
    let mut shown: Vec<String> = vs.iter().take(10).map(|v| v.to_string()).collect();
    if vs.len() > 10 {
        shown.push(format!("and {} more", vs.len() - 10));
    }
    shown.join(", ")
}

/// Output formats of `render-template` (opm's `-o json|yaml|mermaid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RenderOutput {
    /// A stream of JSON objects (opm's default).
    Json,
    /// YAML documents separated by `---`.
    Yaml,
    /// The channels as a Mermaid graph, as `opm alpha render-graph` draws them.
    Mermaid,
}

/// `render-template`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  olm-catalog render-template operators/kube-green/catalog-templates/basic-template.yaml -o yaml\n  \
olm-catalog render-template semver semver.yaml --bundles-from operators/my-operator\n  \
olm-catalog render-template < template.yaml   # type from the template's schema, read from stdin\n\n\
TYPE is basic (olm.template.basic), semver (olm.semver) or substitutes (olm.template.substitutes); \
without it (or with `auto`) the type is the template's `schema` field, matched regardless of case, \
as opm v1.73.0 does. FILE `-` or no FILE reads standard input.\n\
Bundle images are resolved offline: an image whose tag is T is the bundle directory DIR/T \
(--bundles-from DIR; default: the directory above the template's directory, or the current \
directory for standard input). Images given only by digest are resolved through --images-from. \
An image oci:LAYOUT:TAG is read from that OCI layout; with --pull every image is pulled from its \
registry, as opm does. Rendered bundles keep the template's image references and, as opm \
writes them by default, one olm.bundle.object property per manifest; --migrate-level \
bundle-object-to-csv-metadata puts one olm.csv.metadata in their place (what the community \
pipeline's catalogs hold)."
)]
pub struct RenderTemplateArgs {
    /// [TYPE] [FILE]: template type (basic, semver, substitutes or auto) and
    /// template file; either may be left out
    #[arg(value_name = "TYPE|FILE", num_args = 0..=2)]
    pub args: Vec<String>,
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "json"
    )]
    pub output: RenderOutput,
    /// Directory whose subdirectory T is the bundle of an image tagged T
    #[arg(long, value_name = "DIR")]
    pub bundles_from: Option<PathBuf>,
    /// An FBC file or directory whose olm.bundle objects name the bundle of
    /// each image reference, to resolve images given only by digest
    #[arg(long, value_name = "FBC")]
    pub images_from: Option<PathBuf>,
    /// Pull every bundle image from its registry, as opm does, instead of
    /// reading bundle directories (credentials as for `index add`)
    #[arg(long, conflicts_with_all = ["bundles_from", "images_from"])]
    pub pull: bool,
    /// Run opm's migrations on the rendered bundles up to this level: none
    /// (opm's default), bundle-object-to-csv-metadata, all (opm's
    /// --migrate-level)
    #[arg(long, value_name = "LEVEL", default_value = "none")]
    pub migrate_level: String,
    // How to reach the registries of pulled bundle images.
    #[command(flatten)]
    pub registry: super::image::RegistryFlags,
}

/// `render-template`'s arguments as opm reads them: `(type, file)`, `None`
/// for auto-detection, `-` for standard input.
fn template_args(args: &[String]) -> anyhow::Result<(Option<template::Kind>, String)> {
    let kind = |t: &str| -> anyhow::Result<Option<template::Kind>> {
        if t == "auto" {
            return Ok(None);
        }
        template::Kind::from_type(t).map(Some).ok_or_else(|| {
            anyhow::anyhow!(
                "invalid template type {t:?}, must be one of: auto, {}",
                template::Kind::ALL
                    .map(template::Kind::type_name)
                    .join(", ")
            )
        })
    };
    Ok(match args {
        [] => (None, "-".into()),
        [one] if one == "auto" || template::Kind::from_type(one).is_some() => {
            (kind(one)?, "-".into())
        }
        [one] => (None, one.clone()),
        [t, file] => (kind(t)?, file.clone()),
        _ => anyhow::bail!("render-template takes at most two arguments: [TYPE] [FILE]"),
    })
}

impl RenderTemplateArgs {
    /// Renders the template to stdout.
    pub fn run(self) -> CmdResult {
        use olm_catalog::ops::template::{render_template, TemplateInput, TemplateOptions};
        let (kind, file) = template_args(&self.args)?;
        anyhow::ensure!(
            !(file == "-" && self.registry.password_stdin),
            "--password-stdin and a template on standard input both want stdin; give the template as a FILE"
        );
        let input = if file == "-" {
            let mut t = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut t)
                .context("reading the template from standard input")?;
            TemplateInput::Text(t)
        } else {
            TemplateInput::File(PathBuf::from(&file))
        };
        let opts = TemplateOptions {
            input,
            kind,
            bundles_from: self.bundles_from,
            images_from: self.images_from,
            pull: self.pull,
            registry: self.registry.options()?,
            migrate_level: self.migrate_level,
        };
        let cfg = render_template(&opts, &CliReporter)?;
        let path = match &opts.input {
            TemplateInput::File(p) => p.clone(),
            TemplateInput::Text(_) => PathBuf::from("<stdin>"),
        };
        let out = match self.output {
            RenderOutput::Json => template::write(&cfg, template::OutputFormat::Json),
            RenderOutput::Yaml => template::write(&cfg, template::OutputFormat::Yaml),
            RenderOutput::Mermaid => draw::draw(
                &olm_catalog::graph::PackageGraph::from_fbc(&cfg, &path),
                draw::DrawFormat::Mermaid,
            ),
        }
        .map_err(anyhow::Error::msg)?;
        std::io::stdout()
            .lock()
            .write_all(out.as_bytes())
            .context("writing output")?;
        Ok(0)
    }
}

/// The template types a catalog converts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ConvertType {
    /// olm.template.basic: bundles reduced to their images
    Basic,
    /// olm.template.substitutes: bundles whole, no substitutions yet
    Substitutes,
}

/// Output formats of `convert-template` (opm's `-o json|yaml`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ConvertOutput {
    /// Indented JSON, as opm prints it (its default).
    Json,
    /// YAML after a `---` line.
    Yaml,
}

/// `convert-template`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  olm-catalog convert-template basic catalog/etcd/catalog.yaml -o yaml > etcd-template.yaml\n  \
olm-catalog render catalog/ | olm-catalog convert-template substitutes\n\n\
Every object of the catalog stream becomes an entry of the template, in order; a basic template \
keeps only each bundle's schema and image (render-template renders the rest again from the image). \
The output is byte for byte what opm v1.73.0's `opm alpha convert-template` prints. FILE `-` or no \
FILE reads standard input; a directory is not read (give one file, or pipe `olm-catalog render DIR`)."
)]
pub struct ConvertTemplateArgs {
    /// The template type to make
    #[arg(value_name = "TYPE", value_enum)]
    pub kind: ConvertType,
    /// The FBC file (`-` or none: standard input)
    #[arg(value_name = "FILE")]
    pub file: Option<String>,
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "json"
    )]
    pub output: ConvertOutput,
}

impl ConvertTemplateArgs {
    /// Prints the template made of the catalog.
    pub fn run(self) -> CmdResult {
        use olm_catalog::graph::convert;
        let (text, path) = match self.file.as_deref() {
            None | Some("-") => {
                let mut t = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut t)
                    .context("reading the catalog from standard input")?;
                (t, PathBuf::from("<stdin>"))
            }
            Some(f) => {
                let path = PathBuf::from(f);
                let t = std::fs::read_to_string(&path)
                    .with_context(|| format!("reading {}", path.display()))?;
                (t, path)
            }
        };
        let kind = match self.kind {
            ConvertType::Basic => template::Kind::Basic,
            ConvertType::Substitutes => template::Kind::Substitutes,
        };
        let converted = convert::convert(kind, &text, &path)?;
        let mut out = match self.output {
            ConvertOutput::Json => converted.to_json(),
            ConvertOutput::Yaml => converted.to_yaml(),
        };
        out.push('\n');
        std::io::stdout()
            .lock()
            .write_all(out.as_bytes())
            .context("writing output")?;
        Ok(0)
    }
}
