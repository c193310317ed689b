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
use super::{unsupported, TlsFlags};

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
    /// Loads the catalog as `olm-catalog render` does and prints opm's table.
    fn run(self, tls: &TlsFlags) -> CmdResult {
        let index_ref = match &self {
            ListCommand::Packages { index_ref }
            | ListCommand::Channels { index_ref, .. }
            | ListCommand::Bundles { index_ref, .. } => index_ref.clone(),
        };
        let flags = super::index::registry_flags(tls);
        let cfg = flags.load_catalog(&index_ref)?;
        let only = |name: &str, want: &Option<String>| want.as_deref().is_none_or(|w| w == name);
        let check_package = |want: &Option<String>| -> anyhow::Result<()> {
            if let Some(p) = want {
                anyhow::ensure!(
                    cfg.packages.iter().any(|x| &x.name == p),
                    "package {p:?} not found"
                );
            }
            Ok(())
        };
        let mut rows: Vec<Vec<String>> = Vec::new();
        match &self {
            ListCommand::Packages { .. } => {
                rows.push(vec![
                    "NAME".into(),
                    "DISPLAY NAME".into(),
                    "DEFAULT CHANNEL".into(),
                ]);
                let mut pkgs: Vec<&olm_catalog::fbc::Package> = cfg.packages.iter().collect();
                pkgs.sort_by(|a, b| a.name.cmp(&b.name));
                for p in pkgs {
                    rows.push(vec![
                        p.name.clone(),
                        display_name(&cfg, p),
                        p.default_channel.clone(),
                    ]);
                }
            }
            ListCommand::Channels { package, .. } => {
                check_package(package)?;
                rows.push(vec!["PACKAGE".into(), "CHANNEL".into(), "HEAD".into()]);
                let mut chans: Vec<&olm_catalog::fbc::Channel> = cfg
                    .channels
                    .iter()
                    .filter(|c| only(&c.package, package))
                    .collect();
                chans.sort_by(|a, b| (&a.package, &a.name).cmp(&(&b.package, &b.name)));
                for c in chans {
                    let heads = c.heads();
                    let head = match heads.as_slice() {
                        [one] => one.to_string(),
                        [] => "ERROR: no channel head found in graph".to_string(),
                        many => format!(
                            "ERROR: multiple channel heads found in graph: {}",
                            many.join(", ")
                        ),
                    };
                    rows.push(vec![c.package.clone(), c.name.clone(), head]);
                }
            }
            ListCommand::Bundles { package, .. } => {
                check_package(package)?;
                rows.push(
                    [
                        "PACKAGE",
                        "CHANNEL",
                        "BUNDLE",
                        "REPLACES",
                        "SKIPS",
                        "SKIP RANGE",
                        "IMAGE",
                    ]
                    .map(String::from)
                    .to_vec(),
                );
                let images: std::collections::BTreeMap<(&str, &str), &str> = cfg
                    .bundles
                    .iter()
                    .map(|b| ((b.package.as_str(), b.name.as_str()), b.image.as_str()))
                    .collect();
                let mut body = Vec::new();
                for c in cfg.channels.iter().filter(|c| only(&c.package, package)) {
                    for e in &c.entries {
                        body.push(vec![
                            c.package.clone(),
                            c.name.clone(),
                            e.name.clone(),
                            e.replaces.clone(),
                            e.skips.join(","),
                            e.skip_range.clone(),
                            images
                                .get(&(c.package.as_str(), e.name.as_str()))
                                .map(|s| s.to_string())
                                .unwrap_or_default(),
                        ]);
                    }
                }
                body.sort_by(|a, b| (&a[0], &a[1], &a[2]).cmp(&(&b[0], &b[1], &b[2])));
                rows.extend(body);
            }
        }
        write_table(&rows)?;
        Ok(0)
    }
}

/// opm's `getDisplayName`: `spec.displayName` of the CSV of the default
/// channel's head ("" when anything is missing).
fn display_name(
    cfg: &olm_catalog::fbc::DeclarativeConfig,
    pkg: &olm_catalog::fbc::Package,
) -> String {
    use base64::Engine as _;
    let Some(channel) = cfg
        .channels
        .iter()
        .find(|c| c.package == pkg.name && c.name == pkg.default_channel)
    else {
        return String::new();
    };
    let heads = channel.heads();
    let [head] = heads.as_slice() else {
        return String::new();
    };
    let Some(bundle) = cfg
        .bundles
        .iter()
        .find(|b| b.package == pkg.name && b.name == *head)
    else {
        return String::new();
    };
    let from_csv = |csv: &serde_json::Value| csv["spec"]["displayName"].as_str().map(String::from);
    if let Some(name) = bundle
        .csv_json
        .as_deref()
        .and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok())
        .and_then(|v| from_csv(&v))
    {
        return name;
    }
    for p in &bundle.properties {
        match p.kind.as_str() {
            "olm.bundle.object" => {
                let csv = p.value["data"]
                    .as_str()
                    .and_then(|d| base64::engine::general_purpose::STANDARD.decode(d).ok())
                    .and_then(|d| serde_json::from_slice::<serde_json::Value>(&d).ok())
                    .filter(|v| v["kind"] == "ClusterServiceVersion");
                if let Some(name) = csv.as_ref().and_then(from_csv) {
                    return name;
                }
            }
            "olm.csv.metadata" => {
                if let Some(name) = p.value["displayName"].as_str() {
                    return name.to_string();
                }
            }
            _ => {}
        }
    }
    String::new()
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
        use olm_catalog::graph::draw::{mermaid_with, MermaidOptions};
        let package = self.package_name.as_deref().filter(|p| !p.is_empty());
        let opts = MermaidOptions {
            min_edge: self.minimum_edge.filter(|e| !e.is_empty()),
            package_filter: package.is_some(),
            // opm's render-graph draws v0 semantics only when asked.
            v0_semantics: self.draw_v0_semantics == Some(true),
        };
        let flags = super::index::registry_flags(tls);
        let mut out = String::new();
        for r in &self.refs {
            let mut cfg = flags.load_catalog(r)?;
            if let Some(p) = package {
                cfg.packages.retain(|x| x.name == p);
                cfg.channels.retain(|x| x.package == p);
                cfg.bundles.retain(|x| x.package == p);
                cfg.deprecations.retain(|x| x.package == p);
                cfg.others.clear();
            }
            let graphs = olm_catalog::graph::PackageGraph::from_fbc(&cfg, std::path::Path::new(r));
            out.push_str(&mermaid_with(&graphs, &opts).map_err(anyhow::Error::msg)?);
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

/// Rules of the native validator that opm's image validator does not run
/// as errors (pkg/lib/bundle/validate.go at v1.73.0 runs
/// operator-registry's own bundle validator, pkg/lib/validation, not
/// operator-framework/api's): a CRD the CSV does not own is a warning there
/// (validate_test.go, "extra crd": no error), and duplicate CRDs, service
/// account conflicts and the bundle size are not checked.
const NOT_IN_OPM_IMAGE_VALIDATOR: &[&str] = &[
    "bundle-crd-not-in-csv",
    "bundle-crd-duplicate",
    "bundle-service-account-conflict",
    "bundle-size-exceeded",
];

/// Whether opm's `ValidateBundleFormat`/`ValidateBundleContent` (with the
/// optional validators `bundle_objects` says) fail on `f`: errors of the
/// reference and loading rules, operator-framework/api's object rules
/// with `bundle-objects`, and the optional suites run; never the blind
/// spots (rules opm does not have).
fn fails_opm(f: &olm_catalog::diag::Finding, bundle_objects: bool) -> bool {
    use olm_catalog::validate::rules::{self, Origin};
    if f.level != olm_catalog::diag::Level::Error
        || NOT_IN_OPM_IMAGE_VALIDATOR.contains(&f.rule.as_str())
    {
        return false;
    }
    match rules::rule(&f.rule).map(|r| r.origin) {
        Some(Origin::BlindSpot) => false,
        Some(Origin::NotSdkDefault) => bundle_objects,
        // The reference and loading rules, and the optional suites asked for.
        _ => true,
    }
}

/// Whether a rule is one of opm's `ValidateBundleFormat` (layout,
/// annotations, dependencies) rather than `ValidateBundleContent`.
fn is_format_rule(rule: &str) -> bool {
    rule.starts_with("annotation")
        || rule.starts_with("dependency")
        || matches!(rule, "bundle-no-manifests-dir" | "bundle-no-metadata-dir")
}

/// Validates the unpacked bundle `dir` as opm's image validator does with
/// `optional` (opm's `--optional-validators`: comma-separated,
/// `operatorhub` and `bundle-objects`; other names ignored, as opm's
/// `parseOptions` does): the native validator's findings, of which those
/// opm would report decide. The error is opm's `ValidationError` text
/// (`Bundle validation errors: A,B`) with each finding's file inside the
/// bundle, behind `bundle format|content validation failed: ` when
/// `prefixed` (unpack's wording).
fn validate_as_opm(dir: &std::path::Path, optional: &str, prefixed: bool) -> anyhow::Result<()> {
    let keys: Vec<&str> = optional.split(',').map(str::trim).collect();
    let mut options = olm_catalog::validate::Options::default();
    if keys.contains(&"operatorhub") {
        options.optional.push("operatorhub".to_string());
    }
    let bundle_objects = keys.contains(&"bundle-objects");
    let report = olm_catalog::validate::validate_dir(dir, &options);
    let failing: Vec<&olm_catalog::diag::Finding> = report
        .findings
        .iter()
        .filter(|f| fails_opm(f, bundle_objects))
        .collect();
    // opm stops after the format checks when they fail.
    let format: Vec<_> = failing
        .iter()
        .copied()
        .filter(|f| is_format_rule(&f.rule))
        .collect();
    let (stage, shown) = if format.is_empty() {
        ("content", failing)
    } else {
        ("format", format)
    };
    if shown.is_empty() {
        return Ok(());
    }
    let texts: Vec<String> = shown
        .iter()
        .map(|f| {
            let place = f.location.as_ref().map(|l| {
                let file = l.file.strip_prefix(dir).unwrap_or(&l.file).display();
                if l.line > 0 {
                    format!("{file}:{}: ", l.line)
                } else {
                    format!("{file}: ")
                }
            });
            format!("{}{} [{}]", place.unwrap_or_default(), f.message, f.rule)
        })
        .collect();
    let text = format!("Bundle validation errors: {}", texts.join(","));
    if prefixed {
        anyhow::bail!("bundle {stage} validation failed: {text}")
    }
    anyhow::bail!("{text}")
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
    validate_as_opm(tmp.path(), &a.optional_validators, false)?;
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
        validate_as_opm(dir, "", true).map_err(|e| olm_catalog::ops::Error::Source(e.to_string()))
    })?;
    Ok(0)
}

/// The annotation keys of a bundle (pkg/lib/bundle/constants.go), in the
/// order opm's `GenerateDockerfile` writes their labels.
const MEDIATYPE_LABEL: &str = "operators.operatorframework.io.bundle.mediatype.v1";
const MANIFESTS_LABEL: &str = "operators.operatorframework.io.bundle.manifests.v1";
const METADATA_LABEL: &str = "operators.operatorframework.io.bundle.metadata.v1";
const PACKAGE_LABEL: &str = "operators.operatorframework.io.bundle.package.v1";
const CHANNELS_LABEL: &str = "operators.operatorframework.io.bundle.channels.v1";
const CHANNEL_DEFAULT_LABEL: &str = "operators.operatorframework.io.bundle.channel.default.v1";

/// `opm alpha bundle generate -d DIR -p PKG -c CHANNELS [-e DEFAULT]
/// [--base-image IMG]` (pkg/lib/bundle/generate.go `GenerateFunc` at
/// v1.73.0, which the command calls with overwrite on): writes
/// `metadata/annotations.yaml` beside DIR and `bundle.Dockerfile` in the
/// current directory, text for text as opm writes them.
fn generate_bundle(a: &BundleDirArgs, overwrite: bool) -> anyhow::Result<PathBuf> {
    let Some(directory) = a.directory.as_ref().filter(|d| !d.as_os_str().is_empty()) else {
        anyhow::bail!("required flag(s) \"directory\" not set");
    };
    let given = |v: &Option<String>| v.clone().filter(|v| !v.is_empty());
    let base_image = a
        .base_image
        .clone()
        .unwrap_or_else(|| "scratch".to_string());
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let directory = clean(&cwd.join(directory));
    let output_dir = a
        .output_dir
        .as_ref()
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| clean(&cwd.join(d)));
    anyhow::ensure!(
        directory.exists(),
        "stat {}: no such file or directory",
        directory.display()
    );
    let media_type = media_type(&directory)?;
    let (mut package, mut channels, mut default_channel) =
        (given(&a.package), given(&a.channels), given(&a.default));
    if package.is_none() || channels.is_none() {
        // opm reads them from the package manifest beside the bundle.
        let inferred = infer_from_package_dir(&directory).map_err(|e| {
            anyhow::anyhow!(
                "please manually input channels and packageName, error interpreting bundle from directory {}, {e}",
                directory.display()
            )
        })?;
        if channels.is_none() {
            anyhow::ensure!(
                !inferred.channels.is_empty(),
                "error interpreting channels, please manually input channels instead"
            );
            channels = Some(inferred.channels.join(","));
        }
        if package.is_none() {
            package = Some(inferred.package);
        }
        if default_channel.is_none() {
            default_channel = Some(inferred.default_channel);
        }
    }
    let package = package.unwrap_or_default();
    let channels = channels.unwrap_or_default();
    let default_channel = default_channel.unwrap_or_default();
    // GenerateAnnotations: yaml.v3 with 2-space indent, keys sorted.
    let mut annotations: Vec<(&str, &str)> = vec![
        (MEDIATYPE_LABEL, media_type),
        (MANIFESTS_LABEL, "manifests/"),
        (METADATA_LABEL, "metadata/"),
        (PACKAGE_LABEL, &package),
        (CHANNELS_LABEL, &channels),
    ];
    if !default_channel.is_empty() {
        annotations.push((CHANNEL_DEFAULT_LABEL, &default_channel));
    }
    let mut sorted = annotations.clone();
    sorted.sort();
    let mut yaml = String::from("annotations:\n");
    for (k, v) in &sorted {
        yaml.push_str(&format!("  {k}: {}\n", yaml_scalar(v)));
    }
    // CopyYamlOutput: the metadata directory beside the manifests one, or,
    // with --output-dir, both under it (the manifests copied there).
    let (parent, manifests) = match &output_dir {
        None => (
            directory.parent().unwrap_or(&directory).to_path_buf(),
            directory.clone(),
        ),
        Some(out) => {
            let manifests = out.join("manifests");
            copy_manifest_dir(&directory, &manifests, overwrite)?;
            (out.clone(), manifests)
        }
    };
    let metadata = parent.join("metadata");
    std::fs::create_dir_all(&metadata)
        .with_context(|| format!("creating {}", metadata.display()))?;
    let annotations_file = metadata.join("annotations.yaml");
    if overwrite || !annotations_file.exists() {
        std::fs::write(&annotations_file, yaml)
            .with_context(|| format!("writing {}", annotations_file.display()))?;
    } else {
        // ValidateAnnotations: each expected annotation, with its value.
        let text = std::fs::read_to_string(&annotations_file)
            .with_context(|| format!("reading {}", annotations_file.display()))?;
        let existing: yaml_serde::Value = yaml_serde::from_str(&text)
            .with_context(|| format!("parsing {}", annotations_file.display()))?;
        let mut errs = Vec::new();
        for (k, v) in &sorted {
            match existing["annotations"][*k].as_str() {
                None => errs.push(format!("Missing field: {k}")),
                Some(have) if have != *v => errs.push(format!(
                    "Expect field {k:?} to have value {v:?} instead of {have:?}"
                )),
                Some(_) => {}
            }
        }
        anyhow::ensure!(errs.is_empty(), "[{}]", errs.join(", "));
    }
    // GenerateDockerfile.
    let mut dockerfile = format!("FROM {base_image}\n\n");
    for (k, v) in &annotations {
        dockerfile.push_str(&format!("LABEL {k}={v}\n"));
    }
    if !default_channel.is_empty() {
        dockerfile.push('\n');
    }
    dockerfile.push_str(&format!(
        "COPY {} /manifests/\nCOPY {} /metadata/\n",
        relative(&cwd, &manifests),
        relative(&cwd, &metadata)
    ));
    let out = cwd.join("bundle.Dockerfile");
    if overwrite || !out.exists() {
        std::fs::write(&out, dockerfile).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(parent)
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
    if a.base_image.as_deref().is_some_and(|b| b != "scratch") {
        return Err(unsupported(
            "alpha bundle build --base-image",
            "bundle images are built FROM scratch; build bundle.Dockerfile with a container tool for another base",
        ));
    }
    let root = generate_bundle(a, a.overwrite == Some(true))?;
    let mut argv = vec![
        "bundle".to_string(),
        "build".to_string(),
        format!("--tag={tag}"),
    ];
    argv.extend(tls.native()?);
    argv.push("--".to_string());
    argv.push(root.display().to_string());
    let code = run_native(argv)?;
    if code == 0 {
        eprintln!("built {tag} without {tool} and pushed it");
    }
    Ok(code)
}

/// opm's `GetMediaType`: helm for a chart directory, registry+v1 when a
/// file of the directory (not its subdirectories) is a
/// ClusterServiceVersion, else plain; no file at all is an error.
fn media_type(dir: &std::path::Path) -> anyhow::Result<&'static str> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            files.push(entry.path());
        }
    }
    anyhow::ensure!(
        !files.is_empty(),
        "The directory {} contains no yaml files",
        dir.display()
    );
    if dir.join("Chart.yaml").is_file() {
        return Ok("helm");
    }
    for f in &files {
        let text = std::fs::read_to_string(f)
            .map_err(|_| anyhow::anyhow!("Unable to read file {} in bundle", f.display()))?;
        if first_document(&text).is_some_and(|v| v["kind"] == "ClusterServiceVersion") {
            return Ok("registry+v1");
        }
    }
    Ok("plain")
}

/// A string as yaml.v3 writes it: plain when it reads back as the same
/// string, else double-quoted.
fn yaml_scalar(v: &str) -> String {
    let plain = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/+,-".contains(c))
        && v.starts_with(|c: char| c.is_ascii_alphabetic())
        && !matches!(
            v.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        );
    if plain {
        v.to_string()
    } else {
        serde_json::to_string(v).unwrap_or_else(|_| format!("{v:?}"))
    }
}

/// What opm's `bundleDirInterpreter` reads from a package-manifest layout
/// (`PKG/x.package.yaml` beside one directory per bundle).
struct InferredBundle {
    package: String,
    channels: Vec<String>,
    default_channel: String,
}

/// The first YAML or JSON document of a text, as opm's decoders read one
/// (`YAMLOrJSONDecoder.Decode` once).
fn first_document(text: &str) -> Option<yaml_serde::Value> {
    let doc = yaml_serde::Deserializer::from_str(text).next()?;
    serde::Deserialize::deserialize(doc).ok()
}

/// [`first_document`] of a file; `None` when it cannot be read either.
fn first_document_of(path: &std::path::Path) -> Option<yaml_serde::Value> {
    first_document(&std::fs::read_to_string(path).ok()?)
}

/// A bundle directory's CSV (`ReadCSVFromBundleDirectory`): the one file
/// of the directory whose first document is a ClusterServiceVersion;
/// (name, replaces and skips).
fn read_csv(dir: &std::path::Path) -> anyhow::Result<(String, Vec<String>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("error reading bundle directory {}", dir.display()))?
        .filter_map(Result::ok)
        .filter(|e| !e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    files.sort();
    let mut found = None;
    for f in files {
        let Some(doc) = first_document_of(&f) else {
            continue;
        };
        if doc["kind"].as_str() != Some("ClusterServiceVersion") {
            continue;
        }
        anyhow::ensure!(
            found.is_none(),
            "more than one ClusterServiceVersion is found in bundle"
        );
        let name = doc["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut edges: Vec<String> = doc["spec"]["skips"]
            .as_sequence()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        if let Some(r) = doc["spec"]["replaces"].as_str().filter(|r| !r.is_empty()) {
            edges.push(r.to_string());
        }
        found = Some((name, edges));
    }
    found.ok_or_else(|| {
        anyhow::anyhow!("no ClusterServiceVersion object found in {}", dir.display())
    })
}

/// opm's `NewBundleDirInterperter`: the bundle's CSV, the package manifest
/// of the directory above, and the channels whose graph (from each
/// channel's `currentCSV` through every `replaces` and `skips` of the
/// package's bundle directories) holds the bundle, sorted.
fn infer_from_package_dir(bundle_dir: &std::path::Path) -> anyhow::Result<InferredBundle> {
    let (csv_name, _) = read_csv(bundle_dir)
        .map_err(|e| anyhow::anyhow!("error loading CSV from bundle directory, {e}"))?;
    let pkg_dir = bundle_dir.join("..");
    let mut entries: Vec<(PathBuf, bool)> = std::fs::read_dir(&pkg_dir)
        .with_context(|| format!("error reading from {} directory", pkg_dir.display()))?
        .filter_map(Result::ok)
        .map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_dir())))
        .collect();
    entries.sort();
    let mut edges: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (dir, _) in entries.iter().filter(|(_, is_dir)| *is_dir) {
        let (name, e) = read_csv(dir).map_err(|e| {
            anyhow::anyhow!("error getting CSVs from bundles in the package directory, {e}")
        })?;
        edges.insert(name, e);
    }
    let manifest = entries
        .iter()
        .filter(|(_, is_dir)| !*is_dir)
        .filter_map(|(f, _)| first_document_of(f))
        .find(|d| d["packageName"].as_str().is_some_and(|n| !n.is_empty()))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "error parsing package.yaml file in the package root directory, valid PackageManifest YAML file not found in {}",
                pkg_dir.display()
            )
        })?;
    let mut channels = Vec::new();
    for ch in manifest["channels"].as_sequence().into_iter().flatten() {
        let (Some(name), Some(head)) = (ch["name"].as_str(), ch["currentCSV"].as_str()) else {
            continue;
        };
        let mut seen = std::collections::BTreeSet::new();
        let mut todo = vec![head.to_string()];
        while let Some(n) = todo.pop() {
            if seen.insert(n.clone()) {
                todo.extend(edges.get(&n).into_iter().flatten().cloned());
            }
        }
        if seen.contains(&csv_name) {
            channels.push(name.to_string());
        }
    }
    channels.sort();
    Ok(InferredBundle {
        package: manifest["packageName"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        channels,
        default_channel: manifest["defaultChannel"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    })
}

/// opm's `copyManifestDir`: the files of `from` into `to` (made if
/// missing; an existing file kept unless `overwrite`), and, as opm does,
/// each subdirectory's files into `to/<from's name>`.
fn copy_manifest_dir(
    from: &std::path::Path,
    to: &std::path::Path,
    overwrite: bool,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    let mut entries: Vec<(PathBuf, bool)> = std::fs::read_dir(from)
        .with_context(|| format!("reading {}", from.display()))?
        .filter_map(Result::ok)
        .map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_dir())))
        .collect();
    entries.sort();
    for (path, is_dir) in entries {
        let Some(name) = path.file_name() else {
            continue;
        };
        if is_dir {
            let nested = to.join(from.file_name().unwrap_or_default());
            copy_manifest_dir(&path, &nested, overwrite)?;
            continue;
        }
        let dest = to.join(name);
        if dest.exists() && !overwrite {
            continue;
        }
        std::fs::copy(&path, &dest)
            .with_context(|| format!("copying {} to {}", path.display(), dest.display()))?;
    }
    Ok(())
}

/// Go's `filepath.Clean` of an absolute path: `.` and `..` resolved
/// lexically.
fn clean(p: &std::path::Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Go's `filepath.Rel(base, target)` of two clean absolute paths, with
/// forward slashes.
fn relative(base: &std::path::Path, target: &std::path::Path) -> String {
    let b: Vec<_> = base.components().collect();
    let t: Vec<_> = target.components().collect();
    let common = b.iter().zip(&t).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = std::iter::repeat_n("..".to_string(), b.len() - common).collect();
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}
