//! `opm alpha ...` (cmd/opm/alpha at v1.73.0): `render-template` as the
//! native `render-template`, `list` as opm's tables over any catalog
//! source, `convert-template` as the native `convert-template`, `bundle
//! unpack|validate` as the native `bundle unpack` and `bundle validate` with
//! opm's validators deciding the exit code.
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;

use clap::{Args, Subcommand};

use super::super::{run_native, CmdResult};
use super::TlsFlags;

/// `opm alpha` subcommands.
#[derive(Subcommand)]
pub enum AlphaCommand {
    /// Render a catalog template type
    RenderTemplate(RenderTemplateArgs),
    /// List contents of an index
    #[command(subcommand)]
    List(ListCommand),
    /// Generate mermaid-formatted view of upgrade graph of operators in an index
    RenderGraph(RenderGraphArgs),
    /// Convert existing FBC to a supported template type
    #[command(subcommand)]
    ConvertTemplate(ConvertTemplateCommand),
    /// Operator bundle commands
    #[command(subcommand)]
    Bundle(BundleCommand),
}

impl AlphaCommand {
    /// Runs the subcommand.
    pub fn run(self, tls: &TlsFlags) -> CmdResult {
        match self {
            AlphaCommand::RenderTemplate(a) => a.run(tls),
            AlphaCommand::List(c) => c.run(tls),
            AlphaCommand::RenderGraph(a) => a.run(tls),
            AlphaCommand::ConvertTemplate(c) => c.run(),
            AlphaCommand::Bundle(c) => match c {
                BundleCommand::Validate(a) => validate_bundle_image(&a, tls),
                BundleCommand::Build(a) => build_bundle(&a, tls),
                BundleCommand::Generate(a) => generate_bundle(&a, true).map(|_| 0),
                BundleCommand::Unpack(a) => unpack_bundle_image(&a, tls),
            },
        }
    }
}

/// `opm alpha render-template [TYPE] [FILE]`.
#[derive(Args)]
pub struct RenderTemplateArgs {
    /// [TYPE] [FILE]: basic, semver or substitutes, and the template (`-` or none: stdin)
    #[arg(num_args = 0..=2, value_name = "TYPE|FILE")]
    args: Vec<String>,
    /// Output format (json|yaml|mermaid)
    #[arg(long, short = 'o', default_value = "json")]
    output: String,
    /// Name of the last migration to run (default: none)
    #[arg(long, value_name = "LEVEL")]
    migrate_level: Option<String>,
}

impl RenderTemplateArgs {
    /// Runs `olm-catalog render-template ... --pull` (opm pulls every bundle image).
    fn run(self, tls: &TlsFlags) -> CmdResult {
        if !matches!(self.output.as_str(), "json" | "yaml" | "mermaid") {
            anyhow::bail!(
                "invalid --output value {:?}, expected (json|yaml|mermaid)",
                self.output
            );
        }
        let mut argv = vec![
            "render-template".to_string(),
            format!("--output={}", self.output),
            "--pull".to_string(),
        ];
        if let Some(l) = self.migrate_level.filter(|l| !l.is_empty()) {
            argv.push(format!("--migrate-level={l}"));
        }
        argv.extend(tls.native()?);
        argv.push("--".to_string());
        argv.extend(self.args);
        run_native(argv)
    }
}

/// `opm alpha list` subcommands.
#[derive(Subcommand)]
pub enum ListCommand {
    /// List packages in an index
    Packages {
        /// An index or catalog image, FBC directory or SQLite file
        #[arg(value_name = "indexRef")]
        index_ref: String,
    },
    /// List package channels in an index
    Channels {
        /// An index or catalog image, FBC directory or SQLite file
        #[arg(value_name = "indexRef")]
        index_ref: String,
        /// Only this package's channels
        #[arg(value_name = "packageName")]
        package: Option<String>,
    },
    /// List package bundles in an index
    Bundles {
        /// An index or catalog image, FBC directory or SQLite file
        #[arg(value_name = "indexRef")]
        index_ref: String,
        /// Only this package's bundles
        #[arg(value_name = "packageName")]
        package: Option<String>,
    },
}

/// opm's tables: Go's `tabwriter` with padding 2 (each column as wide as
/// its widest cell plus two spaces; the last column not padded).
fn write_table(rows: &[Vec<String>]) -> std::io::Result<()> {
    let cols = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..cols)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for r in rows {
        let mut line = String::new();
        for (i, cell) in r.iter().enumerate() {
            if i + 1 < cols {
                line.push_str(&format!("{cell:<w$}", w = widths[i] + 2));
            } else {
                line.push_str(cell);
            }
        }
        writeln!(out, "{line}")?;
    }
    out.flush()
}

impl ListCommand {
    /// Loads the catalog as `olm-catalog render` does and prints opm's
    /// table of `ops::list`'s rows.
    fn run(self, tls: &TlsFlags) -> CmdResult {
        use olm_catalog::ops::list::{self, BundleRow, ChannelRow, PackageRow};
        let index_ref = match &self {
            ListCommand::Packages { index_ref }
            | ListCommand::Channels { index_ref, .. }
            | ListCommand::Bundles { index_ref, .. } => index_ref.clone(),
        };
        let flags = super::index::registry_flags(tls);
        let cfg = flags.load_catalog(&index_ref)?;
        let table = |header: &[&str], body: Vec<Vec<String>>| {
            let mut rows = vec![header.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
            rows.extend(body);
            rows
        };
        let rows = match &self {
            ListCommand::Packages { .. } => table(
                &PackageRow::HEADER,
                list::packages(&cfg).iter().map(PackageRow::cells).collect(),
            ),
            ListCommand::Channels { package, .. } => table(
                &ChannelRow::HEADER,
                list::channels(&cfg, package.as_deref())?
                    .iter()
                    .map(ChannelRow::cells)
                    .collect(),
            ),
            ListCommand::Bundles { package, .. } => table(
                &BundleRow::HEADER,
                list::bundles(&cfg, package.as_deref())?
                    .iter()
                    .map(BundleRow::cells)
                    .collect(),
            ),
        };
        write_table(&rows)?;
        Ok(0)
    }
}

/// `opm alpha render-graph [index-image | fbc-dir]`.
#[derive(Args)]
pub struct RenderGraphArgs {
    /// Index image or FBC directory
    #[arg(required = true)]
    refs: Vec<String>,
    /// The channel edge to be used as the lower bound of the upgrade graph
    #[arg(long)]
    minimum_edge: Option<String>,
    /// A specific package name to filter output
    #[arg(long, short = 'p')]
    package_name: Option<String>,
    /// Whether to indicate OLMv0 semantics in the output
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    draw_v0_semantics: Option<bool>,
}

impl RenderGraphArgs {
    /// Loads the catalog and draws its channels as Mermaid, with the graph
    /// writer of `render-template -o mermaid` (opm's one MermaidWriter).
    fn run(self, tls: &TlsFlags) -> CmdResult {
        use olm_catalog::ops::render::{render_graph, RenderGraphOptions};
        let opts = RenderGraphOptions {
            // opm's flags default to "": none.
            package: self.package_name.filter(|p| !p.is_empty()),
            minimum_edge: self.minimum_edge.filter(|e| !e.is_empty()),
            // opm's render-graph draws v0 semantics only when asked.
            v0_semantics: self.draw_v0_semantics == Some(true),
        };
        let flags = super::index::registry_flags(tls);
        let mut out = String::new();
        for r in &self.refs {
            let cfg = flags.load_catalog(r)?;
            out.push_str(&render_graph(cfg, std::path::Path::new(r), &opts)?);
        }
        std::io::stdout().lock().write_all(out.as_bytes())?;
        Ok(0)
    }
}

/// `opm alpha convert-template` subcommands.
#[derive(Subcommand)]
pub enum ConvertTemplateCommand {
    /// Generate a basic template from existing FBC
    Basic(ConvertArgs),
    /// Generate a substitutes template from existing FBC
    Substitutes(ConvertArgs),
}

impl ConvertTemplateCommand {
    /// Runs the native `convert-template TYPE [FILE] -o FORMAT`.
    fn run(self) -> CmdResult {
        let (kind, a) = match self {
            ConvertTemplateCommand::Basic(a) => ("basic", a),
            ConvertTemplateCommand::Substitutes(a) => ("substitutes", a),
        };
        if !matches!(a.output.as_str(), "json" | "yaml") {
            anyhow::bail!(
                "invalid --output value {:?}, expected (json|yaml)",
                a.output
            );
        }
        let mut argv = vec![
            "convert-template".to_string(),
            kind.to_string(),
            format!("--output={}", a.output),
            "--".to_string(),
        ];
        argv.extend(a.file);
        run_native(argv)
    }
}

/// `opm alpha convert-template basic|substitutes [<fbc-file> | -]`.
#[derive(Args)]
pub struct ConvertArgs {
    /// The FBC file (`-` or none: stdin)
    file: Option<String>,
    /// Output format (json|yaml)
    #[arg(long, short = 'o', default_value = "json")]
    output: String,
}

/// `opm alpha bundle` subcommands.
#[derive(Subcommand)]
pub enum BundleCommand {
    /// Build operator bundle image
    Build(BundleDirArgs),
    /// Generate operator bundle metadata and Dockerfile
    Generate(BundleDirArgs),
    /// Validate bundle image
    Validate(BundleValidateArgs),
    /// Unpack the content of an operator bundle
    Unpack(BundleUnpackArgs),
}

/// `opm alpha bundle build|generate`.
#[derive(Args)]
pub struct BundleDirArgs {
    /// The directory where bundle manifests for a specific version are located
    #[arg(long, short = 'd')]
    directory: Option<PathBuf>,
    /// The image tag applied to the bundle image (build)
    #[arg(long, short = 't')]
    tag: Option<String>,
    /// The name of the package that bundle image belongs to
    #[arg(long, short = 'p')]
    package: Option<String>,
    /// The list of channels that bundle image belongs to
    #[arg(long, short = 'c')]
    channels: Option<String>,
    /// Tool to build container images (build)
    #[arg(long, short = 'b')]
    image_builder: Option<String>,
    /// The default channel for the bundle image
    #[arg(long, short = 'e')]
    default: Option<String>,
    /// Allow overwriting annotations.yaml locally if existed (build)
    #[arg(long, short = 'o', num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    overwrite: Option<bool>,
    /// Optional output directory for operator manifests
    #[arg(long, short = 'u')]
    output_dir: Option<PathBuf>,
    /// Use a custom image pullspec as the base bundle image
    #[arg(long)]
    base_image: Option<String>,
}

/// `opm alpha bundle validate` (cmd/opm/alpha/bundle/validate.go).
#[derive(Args)]
pub struct BundleValidateArgs {
    /// The path of a registry to pull from, image name and its tag that present the bundle image (e.g. quay.io/test/test-operator:latest)
    #[arg(long, short = 't')]
    tag: Option<String>,
    /// Tool used to pull and unpack bundle images. One of: [none, docker, podman]
    #[arg(long, short = 'b', default_value = "docker")]
    image_builder: String,
    /// Specifies optional validations to be run. One or more of: [operatorhub, bundle-objects]
    #[arg(long, short = 'o', default_value = "")]
    optional_validators: String,
}

/// `opm alpha bundle unpack BUNDLE_NAME[:TAG|@DIGEST]`
/// (cmd/opm/alpha/bundle/unpack.go).
#[derive(Args)]
pub struct BundleUnpackArgs {
    /// The bundle image
    #[arg(value_name = "BUNDLE_NAME[:TAG|@DIGEST]")]
    image: String,
    /// Use plain HTTP (deprecated: use --use-http and --skip-tls-verify)
    #[arg(short = 's', num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    skip_tls_short: Option<bool>,
    /// Enable debug log output (the global --debug)
    #[arg(short = 'd', num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    debug_short: Option<bool>,
    /// Disable bundle validation
    #[arg(long, short = 'v', num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    skip_validation: Option<bool>,
    /// File path of a root CA to use when communicating with image registries
    #[arg(long, short = 'c')]
    root_ca: Option<PathBuf>,
    /// Directory in which to unpack operator bundle content
    #[arg(long, short = 'o', default_value = "./")]
    out: PathBuf,
}

/// `opm alpha bundle validate -t IMAGE [-b none|docker|podman] [-o
/// operatorhub,bundle-objects]` (cmd/opm/alpha/bundle/validate.go): pulls
/// and unpacks the image into a temporary directory
/// (`ops::image::unpack_image_to_temp`) and validates it there; exit 0
/// when opm's validators find no error, else 1. opm pulls with the tool
/// `-b` names (`none`: containers/image; a name it does not know is
/// `none` too, containertools.NewContainerTool); here the image is always
/// pulled without a daemon.
fn validate_bundle_image(a: &BundleValidateArgs, tls: &TlsFlags) -> CmdResult {
    eprintln!(
        "Command \"validate\" is deprecated, This subcommand is deprecated and will be removed in a future release. Migrate to operator-sdk bundle validate"
    );
    let Some(tag) = a.tag.as_deref() else {
        anyhow::bail!("required flag(s) \"tag\" not set");
    };
    let registry = super::index::registry_flags(tls).options()?;
    let (tmp, _) = olm_catalog::ops::image::unpack_image_to_temp(tag, &registry)?;
    if matches!(a.image_builder.as_str(), "docker" | "podman") {
        eprintln!("pulled {tag} without {}", a.image_builder);
    }
    olm_catalog::ops::bundle::validate_as_opm(tmp.path(), &a.optional_validators)?;
    eprintln!("All validation tests have been completed successfully");
    Ok(0)
}

/// `opm alpha bundle unpack IMAGE [-o DIR] [-v] [-c CA] [-s]`
/// (cmd/opm/alpha/bundle/unpack.go): `ops::image::unpack_bundle_image`
/// (the native `bundle unpack`), with opm's bundle validation in between
/// unless `--skip-validation`. opm's TLS flag rules
/// (cmd/opm/internal/util.GetTLSOptions) are checked first.
fn unpack_bundle_image(a: &BundleUnpackArgs, tls: &TlsFlags) -> CmdResult {
    // unpack's own -s/--skip-tls and -c/--root-ca, over the root flags.
    let tls = TlsFlags {
        skip_tls: a.skip_tls_short.or(tls.skip_tls),
        ca_file: a
            .root_ca
            .clone()
            .filter(|p| !p.as_os_str().is_empty())
            .or_else(|| tls.ca_file.clone()),
        ..tls.clone()
    };
    tls.check(true)?;
    let registry = super::index::registry_flags(&tls).options()?;
    let validate = a.skip_validation != Some(true);
    olm_catalog::ops::image::unpack_bundle_image(&a.image, &a.out, &registry, &mut |dir| {
        if !validate {
            eprintln!("skipping bundle validation");
            return Ok(());
        }
        olm_catalog::ops::bundle::validate_as_opm(dir, "").map_err(|e| {
            olm_catalog::ops::Error::Source(format!(
                "bundle {} validation failed: {e}",
                e.stage.as_str()
            ))
        })
    })?;
    Ok(0)
}

/// `opm alpha bundle generate -d DIR -p PKG -c CHANNELS [-e DEFAULT]
/// [--base-image IMG]` (`ops::bundle::generate`, which opm's command calls
/// with overwrite on; `build` only with `-o`).
fn generate_bundle(
    a: &BundleDirArgs,
    overwrite: bool,
) -> anyhow::Result<olm_catalog::ops::bundle::Generated> {
    let Some(directory) = a.directory.as_ref().filter(|d| !d.as_os_str().is_empty()) else {
        anyhow::bail!("required flag(s) \"directory\" not set");
    };
    let opts = olm_catalog::ops::bundle::GenerateOptions {
        directory: directory.clone(),
        package: a.package.clone(),
        channels: a.channels.clone(),
        default_channel: a.default.clone(),
        output_dir: a.output_dir.clone(),
        base_image: a.base_image.clone(),
        overwrite,
        work_dir: std::env::current_dir().context("reading the current directory")?,
    };
    Ok(olm_catalog::ops::bundle::generate(&opts)?)
}

/// `opm alpha bundle build -d DIR -t TAG -p PKG -c CH [-e DEF] [-b TOOL]
/// [-o]` (pkg/lib/bundle/build.go `BuildFunc`): generates as `alpha bundle
/// generate` does (overwriting only with `-o`), then builds the bundle
/// image of DIR's parent (manifests/ and metadata/) without a daemon and
/// pushes it to TAG (`olm-catalog bundle build`), where opm runs `TOOL
/// build -f bundle.Dockerfile -t TAG .`.
fn build_bundle(a: &BundleDirArgs, tls: &TlsFlags) -> CmdResult {
    let Some(tag) = a.tag.clone().filter(|t| !t.is_empty()) else {
        anyhow::bail!("required flag(s) \"tag\" not set");
    };
    let tool = a.image_builder.clone().unwrap_or_else(|| "docker".into());
    anyhow::ensure!(
        matches!(tool.as_str(), "docker" | "podman" | "buildah"),
        "{tool} is not supported image builder"
    );
    let generated = generate_bundle(a, a.overwrite == Some(true))?;
    let root = generated.root;
    let mut argv = vec![
        "bundle".to_string(),
        "build".to_string(),
        format!("--tag={tag}"),
    ];
    // The FROM of bundle.Dockerfile: the base's layers and config first.
    if generated.base_image != "scratch" {
        argv.push(format!("--base={}", generated.base_image));
    }
    argv.extend(tls.native()?);
    argv.push("--".to_string());
    argv.push(root.display().to_string());
    let code = run_native(argv)?;
    if code == 0 {
        eprintln!("built {tag} without {tool} and pushed it");
    }
    Ok(code)
}
