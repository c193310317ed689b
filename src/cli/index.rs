//! `index`, `render`, `migrate` and `validate` commands.
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};

use super::CmdResult;
use olm_catalog::fbc::write::OutputFormat;
use olm_catalog::graph::modes::Mode;
use olm_catalog::index;
use olm_catalog::ops::{self, catalog_source::SourceKind};

use super::common::CliReporter;

/// `index` subcommands that work on a database.
#[derive(Subcommand)]
pub enum IndexCommand {
    /// Add bundle directories (or a file-based catalog) to an index database
    #[command(
        after_help = "Examples:\n  olm-catalog index add --database index.db --mode semver bundles/etcd/*\n  \
olm-catalog index add --database index.db --bundle-image-prefix quay.io/me/etcd-bundle bundles/etcd/0.9.4\n  \
olm-catalog index add --database index.db --from-fbc catalog/\n  \
olm-catalog index add --database index.db quay.io/me/etcd-bundle:v0.9.4 --tag quay.io/me/catalog:v1 --sign --key cosign.key"
    )]
    Add(Box<AddArgs>),
    /// Remove packages and their bundles
    #[command(
        after_help = "Example:\n  olm-catalog index rm --database index.db --packages etcd --packages prometheus"
    )]
    Rm(RmArgs),
    /// Keep only the given packages
    #[command(after_help = "Example:\n  olm-catalog index prune --database index.db --keep etcd")]
    Prune(PruneArgs),
    /// Remove bundles that are in no channel
    #[command(after_help = "Example:\n  olm-catalog index prune-stranded --database index.db")]
    PruneStranded(DbArg),
    /// Deprecate bundles and remove everything below them in their upgrade chain
    #[command(
        after_help = "Example:\n  olm-catalog index deprecatetruncate --database index.db --bundles quay.io/me/etcd-bundle:0.9.2"
    )]
    Deprecatetruncate(DeprecateArgs),
    /// Write a package as package-manifest directories
    #[command(
        after_help = "Example:\n  olm-catalog index export --database index.db --package etcd --to out/"
    )]
    Export(ExportArgs),
    /// List packages, channels or bundles
    #[command(
        after_help = "Examples:\n  olm-catalog index list packages --database index.db\n  olm-catalog index list bundles --database index.db -o json"
    )]
    List(ListArgs),
}

/// `--database`.
#[derive(Args)]
pub struct DbArg {
    /// Index database file
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
}

/// `index add`.
#[derive(Args)]
pub struct AddArgs {
    /// Index database file (created if missing)
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
    /// How channels are wired: CSV replaces/skips, or semantic-version order.
    /// Without it each package is added in its ci.yaml's updateGraph mode
    /// (package directories), else the mode it was added with, else replaces
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Bundle directories, package directories (holding version folders and
    /// ci.yaml) or bundle image references (registry/repo:tag, oci:DIR:TAG)
    pub bundles: Vec<PathBuf>,
    /// More bundle directories or images (repeatable, or comma-separated as
    /// opm's --bundles takes them)
    #[arg(
        long = "bundles",
        short = 'b',
        value_name = "DIR",
        action = clap::ArgAction::Append,
        value_delimiter = ','
    )]
    pub bundle_flags: Vec<PathBuf>,
    /// A file with one bundle directory per line (no command-line length limit)
    #[arg(long, value_name = "FILE")]
    pub bundles_file: Option<PathBuf>,
    /// Record bundle images as PREFIX:<directory name> (the bundlepath column)
    #[arg(long, value_name = "PREFIX")]
    pub bundle_image_prefix: Option<String>,
    /// The image of one bundle: DIR=REF or CSVNAME=REF (repeatable)
    #[arg(long, value_name = "DIR=REF")]
    pub bundle_image: Vec<String>,
    /// Keep the csv and bundle columns of bundles that head no channel
    /// (semver modes clear them, as opm does)
    #[arg(long)]
    pub keep_content: bool,
    /// Keep an add that leaves bundles in no channel (opm refuses it with
    /// "add prunes bundle"; --permissive keeps it, as opm --permissive does)
    #[arg(long)]
    pub permissive: bool,
    /// Allow bundles with the olm.substitutesFor annotation (opm --enable-alpha)
    #[arg(long)]
    pub enable_alpha: bool,
    /// Leave out bundles and packages that cannot be added (and the bundles
    /// whose replaces chain needs them), add the rest, report what was left
    /// out and exit 1
    #[arg(long)]
    pub keep_going: bool,
    /// Replace bundles already in the index by the bundles of the same CSV
    /// name given (opm --overwrite-latest): each must head every channel it
    /// is in, was added from an image, one per package, replaces mode only
    #[arg(long)]
    pub overwrite_latest: bool,
    /// Report format: a summary on stderr, or a JSON report on stdout
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "text"
    )]
    pub output: AddFormat,
    /// Add a file-based catalog directory instead of bundle directories
    #[arg(long, value_name = "DIR")]
    pub from_fbc: Option<PathBuf>,
    /// With --tag, also build and push the index image (as `index build`)
    #[command(flatten)]
    pub image: super::image::CatalogImageArgs,
    #[command(flatten)]
    pub gate: super::gate::SignatureGateArgs,
}

/// Output of `index add`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AddFormat {
    /// A summary on stderr.
    Text,
    /// A JSON report on stdout (the summary still goes to stderr).
    Json,
}

/// `index rm`.
#[derive(Args)]
pub struct RmArgs {
    /// Index database file
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
    /// Packages to remove (repeatable or comma-separated)
    #[arg(long, alias = "operators", required = true, value_delimiter = ',')]
    pub packages: Vec<String>,
}

/// `index prune`.
#[derive(Args)]
pub struct PruneArgs {
    /// Index database file
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
    /// Packages to keep (repeatable or comma-separated)
    #[arg(long, short = 'p', required = true, value_delimiter = ',')]
    pub keep: Vec<String>,
}

/// `index deprecatetruncate`.
#[derive(Args)]
pub struct DeprecateArgs {
    /// Index database file
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
    /// Bundle images or CSV names (repeatable)
    #[arg(long, short = 'b', value_delimiter = ',')]
    pub bundles: Vec<String>,
    /// A file with one bundle reference per line
    #[arg(long, value_name = "FILE")]
    pub bundles_file: Option<PathBuf>,
    /// When a default channel head is given with the heads of all other
    /// channels of its package, remove the package (opm --allow-package-removal)
    #[arg(long)]
    pub allow_package_removal: bool,
}

/// `index export`.
#[derive(Args)]
pub struct ExportArgs {
    /// Index database file
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
    /// Packages to export (repeatable or comma-separated; all if omitted)
    #[arg(long, value_delimiter = ',')]
    pub package: Vec<String>,
    /// Output directory
    #[arg(long, default_value = "downloaded")]
    pub to: PathBuf,
    // How to reach the registries of bundles whose manifests the index no
    // longer holds (their images are pulled).
    #[command(flatten)]
    pub registry: super::image::RegistryFlags,
}

/// Table or JSON.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ListFormat {
    /// Aligned columns.
    Table,
    /// A JSON array.
    Json,
}

/// `index list`.
#[derive(Args)]
pub struct ListArgs {
    /// What to list
    #[arg(value_enum)]
    pub what: ops::index::ListWhat,
    /// Index database file
    #[arg(long, short = 'd', default_value = "index.db")]
    pub database: PathBuf,
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "table"
    )]
    pub output: ListFormat,
}

fn read_lines(file: &PathBuf) -> anyhow::Result<Vec<String>> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect())
}

/// The bundle arguments of `index add`, in order: arguments, `--bundles`,
/// then the lines of `--bundles-file`.
fn add_bundles(args: &AddArgs) -> anyhow::Result<Vec<PathBuf>> {
    let mut all: Vec<PathBuf> = args.bundles.clone();
    all.extend(args.bundle_flags.iter().cloned());
    if let Some(f) = &args.bundles_file {
        all.extend(read_lines(f)?.into_iter().map(PathBuf::from));
    }
    Ok(all)
}

/// `--bundle-image-prefix` and `--bundle-image DIR=REF`.
fn image_naming(args: &AddArgs) -> anyhow::Result<index::record::ImageNaming> {
    let mut naming = index::record::ImageNaming {
        prefix: args.bundle_image_prefix.clone(),
        explicit: BTreeMap::new(),
    };
    for spec in &args.bundle_image {
        let Some((k, v)) = spec.split_once('=') else {
            bail!("--bundle-image {spec:?}: expected DIR=REF or CSVNAME=REF");
        };
        naming
            .explicit
            .insert(k.trim_end_matches('/').to_string(), v.to_string());
    }
    Ok(naming)
}

/// The registry client of an `index add`: one for the pulls, the base and
/// the push, so `--password-stdin` is read once and its credential serves
/// every request to its registry (see `RegistryArgs::client_for_command`).
fn add_client(
    args: &AddArgs,
    images: &[String],
) -> anyhow::Result<Option<olm_catalog::oci::RegistryClient>> {
    if images.is_empty() && args.image.tag.is_none() {
        return Ok(None);
    }
    let (dest, base) = args.image.dest_and_base()?;
    let mut sources: Vec<olm_catalog::oci::ImageRef> =
        images.iter().map(|r| r.parse()).collect::<Result<_, _>>()?;
    sources.extend(base);
    Ok(Some(
        args.image
            .registry
            .client_for_command(dest.as_ref(), &sources)?,
    ))
}

/// Reports bundles an `index rm` or `prune` also removed.
fn report_stranded(stranded: &[String]) {
    if !stranded.is_empty() {
        super::common::note(format!(
            "also removed {} bundle(s) left in no channel: {}",
            stranded.len(),
            stranded.join(", ")
        ));
    }
}

/// Prints what an add left out, one line each.
fn report_left_out(left_out: &[index::LeftOut]) {
    for l in left_out {
        let what = if !l.bundle.is_empty() {
            format!("bundle {}", l.bundle)
        } else if !l.package.is_empty() {
            format!("package {}", l.package)
        } else {
            "bundle".to_string()
        };
        let deps = if l.dependents.is_empty() {
            String::new()
        } else {
            format!(" (left out with it: {})", l.dependents.join(", "))
        };
        eprintln!("left out {what}: {}: {}{deps}", l.file, l.reason);
    }
}

impl AddArgs {
    fn run(self) -> CmdResult {
        let a = self;
        let gate = a.gate.gate()?;
        let bundles = if a.from_fbc.is_none() {
            add_bundles(&a)?
        } else {
            Vec::new()
        };
        let images = ops::index::bundle_images(&bundles);
        let client = add_client(&a, &images)?;
        a.image.load_signing_key()?;
        if let Some(g) = &gate {
            // Every bundle image is verified before the database is opened.
            let checked = match &a.from_fbc {
                Some(dir) => {
                    ops::gate::bundle_images(&olm_catalog::fbc::DeclarativeConfig::load_path(dir)?)
                }
                None => {
                    if let Some(dir) = bundles
                        .iter()
                        .find(|b| !olm_catalog::oci::looks_like_image_ref(&b.to_string_lossy()))
                    {
                        anyhow::bail!(
                            "--require-signature checks bundle images; {} is a directory (push it as an image and add the image)",
                            dir.display()
                        );
                    }
                    images.clone()
                }
            };
            let gate_client = match &client {
                Some(c) => c.clone(),
                None => a.image.registry.client_for(&[])?,
            };
            super::gate::require(Some(g), &checked, &gate_client)?;
        }
        let opts = ops::index::AddOptions {
            database: a.database.clone(),
            mode: a.mode,
            bundles,
            naming: image_naming(&a)?,
            keep_content: a.keep_content,
            permissive: a.permissive,
            enable_alpha: a.enable_alpha,
            keep_going: a.keep_going,
            overwrite_latest: a.overwrite_latest,
            from_fbc: a.from_fbc.clone(),
        };
        let outcome = ops::index::add(&opts, client.as_ref(), &CliReporter)?;
        for w in &outcome.warnings {
            eprintln!("warning: {w}");
        }
        report_left_out(outcome.left_out());
        super::common::note(format!("{}: {}", a.database.display(), outcome.summary));
        if a.output == AddFormat::Json {
            let mut report = serde_json::Map::new();
            match &outcome.added {
                ops::index::Added::Fbc { packages } => {
                    report.insert("packages".into(), serde_json::json!(packages));
                }
                ops::index::Added::Bundles(r) => {
                    report.insert("added".into(), serde_json::json!(r.added));
                    report.insert("packages".into(), serde_json::json!(r.packages));
                    report.insert("stranded".into(), serde_json::json!(r.stranded));
                    report.insert("left_out".into(), serde_json::json!(r.left_out));
                }
            }
            report.insert(
                "database".into(),
                serde_json::json!(a.database.display().to_string()),
            );
            println!("{}", serde_json::to_string_pretty(&report)?);
        }
        let code = match a.image.tag.clone() {
            Some(tag) => a
                .image
                .build_and_push_with(&a.database, &tag, client.as_ref())?,
            None => 0,
        };
        Ok(if outcome.left_out().is_empty() {
            code
        } else {
            code.max(1)
        })
    }
}

impl IndexCommand {
    /// Runs the subcommand.
    pub fn run(self) -> CmdResult {
        match self {
            IndexCommand::Add(a) => a.run(),
            IndexCommand::Rm(a) => {
                let r = ops::index::remove_packages(&a.database, &a.packages)?;
                super::common::note(format!("removed package(s): {}", r.packages.join(", ")));
                report_stranded(&r.stranded);
                Ok(0)
            }
            IndexCommand::Prune(a) => {
                let r = ops::index::prune(&a.database, &a.keep)?;
                super::common::note(format!(
                    "pruned {} package(s): {}",
                    r.packages.len(),
                    r.packages.join(", ")
                ));
                report_stranded(&r.stranded);
                Ok(0)
            }
            IndexCommand::PruneStranded(a) => {
                let r = ops::index::prune_stranded(&a.database)?;
                super::common::note(format!(
                    "removed {} stranded bundle(s){}",
                    r.len(),
                    if r.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", r.join(", "))
                    }
                ));
                Ok(0)
            }
            IndexCommand::Deprecatetruncate(a) => {
                let mut refs = a.bundles.clone();
                if let Some(f) = &a.bundles_file {
                    refs.extend(read_lines(f)?);
                }
                let r =
                    ops::index::deprecate_truncate(&a.database, &refs, a.allow_package_removal)?;
                if !r.packages.is_empty() {
                    super::common::note(format!("removed package(s): {}", r.packages.join(", ")));
                }
                super::common::note(format!(
                    "deprecated {} bundle(s){}; removed {} below them{}",
                    r.deprecated.len(),
                    if r.deprecated.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", r.deprecated.join(", "))
                    },
                    r.removed.len(),
                    if r.removed.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", r.removed.join(", "))
                    }
                ));
                Ok(0)
            }
            IndexCommand::Export(a) => {
                let opts = ops::index::ExportOptions {
                    database: a.database,
                    packages: a.package,
                    to: a.to,
                    registry: a.registry.options()?,
                };
                ops::index::export(&opts, &CliReporter)?;
                Ok(0)
            }
            IndexCommand::List(a) => {
                let listing = ops::index::list(&ops::index::ListOptions {
                    database: a.database,
                    what: a.what,
                })?;
                let json = serde_json::to_string_pretty(&listing)?;
                let rows = listing.table();
                let mut out = std::io::stdout().lock();
                match a.output {
                    ListFormat::Json => writeln!(out, "{json}")?,
                    ListFormat::Table => {
                        let widths: Vec<usize> = (0..rows[0].len())
                            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
                            .collect();
                        for r in &rows {
                            let line: Vec<String> = r
                                .iter()
                                .zip(&widths)
                                .map(|(c, w)| format!("{c:<w$}"))
                                .collect();
                            writeln!(out, "{}", line.join("  ").trim_end())?;
                        }
                    }
                }
                Ok(0)
            }
        }
    }
}

/// `render`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  olm-catalog render index.db > catalog.json\n  \
olm-catalog render bundles/etcd/0.9.4 -o yaml\n  olm-catalog render catalog/\n  \
olm-catalog render quay.io/me/etcd-bundle:v0.9.4 oci:out/catalog:v1"
)]
pub struct RenderArgs {
    /// Index databases, bundle directories or FBC directories
    #[arg(required = true)]
    pub source: Vec<String>,
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "json"
    )]
    pub output: OutputFormat,
    /// Image reference to record for a rendered bundle directory
    #[arg(long)]
    pub bundle_image: Option<String>,
    /// Run opm's migrations up to this level: none, bundle-object-to-csv-metadata, all
    #[arg(long, value_name = "LEVEL", default_value = "none")]
    pub migrate_level: String,
    /// The image recorded for each rendered bundle directory, from a
    /// template of {{.Package}}, {{.Name}} and {{.Version}} (opm's
    /// --alpha-image-ref-template), e.g. quay.io/me/{{.Package}}-bundle:v{{.Version}}
    #[arg(long, value_name = "TEMPLATE", conflicts_with = "bundle_image")]
    pub alpha_image_ref_template: Option<String>,
    // How to reach the registries of bundle and catalog images.
    #[command(flatten)]
    pub registry: super::image::RegistryFlags,
}

impl RenderArgs {
    /// Runs `render`.
    pub fn run(self) -> CmdResult {
        let images: Vec<olm_catalog::oci::ImageRef> = self
            .source
            .iter()
            .filter(|s| SourceKind::of(s) == SourceKind::Image)
            .filter_map(|s| s.parse().ok())
            .collect();
        let has_image = self
            .source
            .iter()
            .any(|s| SourceKind::of(s) == SourceKind::Image);
        let client = if has_image {
            Some(self.registry.client_for_command(None, &images)?)
        } else {
            None
        };
        let opts = ops::render::RenderOptions {
            source: ops::SourceOptions {
                bundle_image: self.bundle_image.clone(),
                client,
            },
            migrate_level: self.migrate_level.clone(),
            image_ref_template: self.alpha_image_ref_template.clone(),
        };
        let stdout = std::io::stdout();
        let mut w = std::io::BufWriter::new(stdout.lock());
        ops::render::render_to(&self.source, &opts, self.output, &mut w)?;
        w.flush()?;
        Ok(0)
    }
}

/// `migrate`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  olm-catalog migrate index.db catalog/ -o yaml\n  \
olm-catalog migrate old-catalog/ catalog/ --migrate-level bundle-object-to-csv-metadata\n  \
olm-catalog migrate quay.io/me/index:v1 catalog/"
)]
pub struct MigrateArgs {
    /// Index database, FBC directory, or index or catalog image
    pub source: String,
    /// Output directory (one <package>/catalog.json per package)
    pub out_dir: PathBuf,
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "json"
    )]
    pub output: OutputFormat,
    /// Run opm's migrations up to this level: none, bundle-object-to-csv-metadata, all
    #[arg(long, value_name = "LEVEL", default_value = "none")]
    pub migrate_level: String,
    // How to reach the registry of an index or catalog image.
    #[command(flatten)]
    pub registry: super::image::RegistryFlags,
}

impl MigrateArgs {
    /// Runs `migrate`.
    pub fn run(self) -> CmdResult {
        let client = if SourceKind::of(&self.source) == SourceKind::Image {
            let sources: Vec<olm_catalog::oci::ImageRef> =
                self.source.parse().into_iter().collect();
            Some(self.registry.client_for_command(None, &sources)?)
        } else {
            None
        };
        let opts = ops::render::MigrateOptions {
            source: self.source,
            out_dir: self.out_dir,
            format: self.output,
            migrate_level: self.migrate_level,
            client,
        };
        ops::render::migrate(&opts, &CliReporter)?;
        Ok(0)
    }
}

/// `validate`.
#[derive(Args)]
#[command(after_help = "Examples:\n  olm-catalog validate catalog/ -o json\n  \
olm-catalog validate --strict catalog/\n\n\
Errors are exactly what opm v1.73.0 refuses a catalog for; the checks opm does not make are \
warnings, errors too with --strict. Every file under DIR is catalog content (JSON or YAML), \
except .indexignore files and the files their gitignore-style patterns exclude. Exit codes: \
0 no errors, 1 errors found, 2 usage or I/O failure. Rules: docs/validate.md.")]
pub struct ValidateArgs {
    /// FBC directory
    pub dir: PathBuf,
    /// Also fail on warnings: the checks opm does not make (an empty
    /// related image, an icon without a media type, ...). Without it the
    /// verdict is opm v1.73.0's.
    #[arg(long)]
    pub strict: bool,
    /// Output format of findings (--format is an older name). json and
    /// yaml carry `opm validate -o json|yaml`'s `passed` and
    /// `error.message` beside the findings report.
    #[arg(
        long = "output",
        short = 'o',
        alias = "format",
        value_enum,
        default_value = "human"
    )]
    pub format: ValidateFormat,
}

/// The output formats of `validate`: the findings formats, and YAML as
/// `opm validate -o yaml` offers.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ValidateFormat {
    /// For people: rustc-style with source lines (`text` is another name).
    #[value(alias = "text")]
    Human,
    /// The JSON findings report with opm's `passed` and `error.message`.
    Json,
    /// The same object as YAML.
    Yaml,
    /// SARIF 2.1.0, for code-scanning uploads.
    Sarif,
}

impl ValidateArgs {
    /// Runs `validate`.
    pub fn run(self) -> CmdResult {
        let opts = ops::fbc::ValidateOptions {
            dir: self.dir,
            strict: self.strict,
        };
        let reports = [ops::fbc::validate(&opts)?];
        let text = match self.format {
            ValidateFormat::Human => olm_catalog::diag::render_human(&reports, false),
            ValidateFormat::Json => {
                let value = ops::fbc::opm_validate_value(&reports);
                let mut s = serde_json::to_string_pretty(&value)?;
                s.push('\n');
                s
            }
            ValidateFormat::Yaml => {
                olm_catalog::goyaml::to_string(&ops::fbc::opm_validate_value(&reports))
            }
            ValidateFormat::Sarif => olm_catalog::diag::render_sarif(&reports, &|_| None),
        };
        print!("{text}");
        Ok(if reports[0].errors() > 0 { 1 } else { 0 })
    }
}

/// `init`.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  olm-catalog init etcd --default-channel stable --description README.md --icon icon.png > catalog/etcd/index.json\n  \
olm-catalog init etcd -c stable -o yaml"
)]
pub struct InitArgs {
    /// Package name
    pub package: String,
    /// The channel that subscriptions will default to if unspecified
    #[arg(long, short = 'c', value_name = "CHANNEL", default_value = "")]
    pub default_channel: String,
    /// Path to the package's icon (an image: PNG, JPEG, GIF, WebP, BMP, TIFF, ICO, PSD or SVG)
    #[arg(long, short = 'i', value_name = "FILE")]
    pub icon: Option<PathBuf>,
    /// Path to the operator's README.md (or other documentation); no `-d`
    /// (opm's), which is `--database` in every olm-catalog command
    #[arg(long, value_name = "FILE")]
    pub description: Option<PathBuf>,
    /// Output format
    #[arg(
        long,
        short = 'o',
        value_name = "FORMAT",
        value_enum,
        default_value = "json"
    )]
    pub output: OutputFormat,
}

impl InitArgs {
    /// Runs `init`: writes one `olm.package` object, as `opm init` does.
    pub fn run(self) -> CmdResult {
        let opts = ops::fbc::InitOptions {
            package: self.package,
            default_channel: self.default_channel,
            icon: self.icon,
            description: self.description,
        };
        let cfg = ops::fbc::init(&opts)?;
        let stdout = std::io::stdout();
        let mut w = std::io::BufWriter::new(stdout.lock());
        olm_catalog::fbc::write::write(&cfg, self.output, &mut w)?;
        w.flush()?;
        Ok(0)
    }
}
