//! `opm index ...` (cmd/opm/index at v1.73.0) and the database commands
//! of `opm registry ...` (cmd/opm/registry), as `olm-catalog index ...`.
//!
//! opm's index commands work in a build context (`ops::build_context`):
//! the database of `--from-index` (or a new one) is copied to
//! `database/index.db`, changed, and an `index.Dockerfile` is written
//! beside it; `--generate` stops there (in the current directory),
//! otherwise the context is a temporary directory and the container tool
//! builds `--tag` from it. Here the image is built without a daemon
//! (`olm-catalog index build`) and then handed to the container tool with
//! `load` when its daemon answers (`ops::image::load_into_container_tool`),
//! or pushed to `--tag` when none does.
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{Args, Subcommand};
use olm_catalog::ops::build_context::{self, ContextOptions, DEFAULT_TAG};

use super::super::{run_native, CmdResult};
use super::{slice, unsupported, TlsFlags};

/// A Go boolean flag (`--x`, `--x=true|false`).
fn on(flag: Option<bool>) -> bool {
    flag == Some(true)
}

/// `opm index` subcommands.
#[derive(Subcommand)]
pub enum IndexCommand {
    /// Add operator bundles to an index
    Add(Box<IndexAddArgs>),
    /// Delete an entire operator from an index
    Rm(Box<IndexRmArgs>),
    /// Prune an index of all but specified packages
    Prune(Box<IndexPruneArgs>),
    /// Prune an index of stranded bundles
    PruneStranded(Box<IndexPruneStrandedArgs>),
    /// Deprecate and truncate operator bundles from an index
    Deprecatetruncate(Box<IndexDeprecateArgs>),
    /// Export an operator from an index image into the appregistry format
    Export(IndexExportArgs),
}

/// The build-context flags of `opm index add|rm|prune|prune-stranded|deprecatetruncate`.
#[derive(Args, Clone, Default)]
pub struct ImageFlags {
    /// If enabled, just creates the dockerfile and saves it to local disk
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    generate: Option<bool>,
    /// If generating the dockerfile, this flag is used to (optionally) specify a dockerfile name
    #[arg(long, short = 'd', value_name = "FILE")]
    out_dockerfile: Option<String>,
    /// Container image for on-image `opm` command (the base of the index image)
    #[arg(long, short = 'i', value_name = "IMAGE")]
    binary_image: Option<String>,
    /// Tool to interact with container images (save, build, etc.). One of: [docker, podman]
    #[arg(long, short = 'c', value_name = "TOOL")]
    container_tool: Option<String>,
    /// Custom tag for container image being built
    #[arg(long, short = 't', value_name = "TAG")]
    tag: Option<String>,
}

/// `--build-tool` and `--pull-tool` (on add, rm and deprecatetruncate).
#[derive(Args, Clone, Default)]
pub struct ToolFlags {
    /// Tool to build container images. One of: [docker, podman]. Defaults to podman
    #[arg(long, short = 'u', value_name = "TOOL")]
    build_tool: Option<String>,
    /// Tool to pull container images. One of: [none, docker, podman] (images are pulled
    /// without a daemon whatever the tool)
    #[arg(long, short = 'p', value_name = "TOOL")]
    pull_tool: Option<String>,
}

/// `opm index add`.
#[derive(Args)]
pub struct IndexAddArgs {
    /// Comma separated list of bundles to add
    #[arg(long, short = 'b', required = true, value_delimiter = ',', num_args = 1,
          action = clap::ArgAction::Append, value_name = "BUNDLES", allow_hyphen_values = false)]
    bundles: Vec<String>,
    /// Previous index to add to
    #[arg(long, short = 'f', value_name = "INDEX")]
    from_index: Option<String>,
    /// Allow registry load errors
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    permissive: Option<bool>,
    /// Graph update mode that defines how channel graphs are updated. One of: [replaces, semver, semver-skippatch]
    #[arg(long, default_value = "replaces")]
    mode: String,
    /// Overwrite the latest bundles (channel heads) with those of the same csv name given by --bundles
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL", hide = true)]
    overwrite_latest: Option<bool>,
    /// Enable unsupported alpha features of the OPM CLI
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL", hide = true)]
    enable_alpha: Option<bool>,
    #[command(flatten)]
    image: ImageFlags,
    #[command(flatten)]
    tools: ToolFlags,
}

/// `opm index rm`.
#[derive(Args)]
pub struct IndexRmArgs {
    /// Comma separated list of operators to delete
    #[arg(
        long,
        short = 'o',
        required = true,
        value_delimiter = ',',
        value_name = "OPERATORS"
    )]
    operators: Vec<String>,
    /// Previous index to delete from
    #[arg(long, short = 'f', required = true, value_name = "INDEX")]
    from_index: String,
    /// Allow registry load errors (nothing is loaded from a registry here)
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    permissive: Option<bool>,
    #[command(flatten)]
    image: ImageFlags,
    #[command(flatten)]
    tools: ToolFlags,
}

/// `opm index prune`.
#[derive(Args)]
pub struct IndexPruneArgs {
    /// Comma separated list of packages to keep
    #[arg(
        long,
        short = 'p',
        required = true,
        value_delimiter = ',',
        value_name = "PACKAGES"
    )]
    packages: Vec<String>,
    /// Index to prune
    #[arg(long, short = 'f', required = true, value_name = "INDEX")]
    from_index: String,
    /// Allow registry load errors (nothing is loaded from a registry here)
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    permissive: Option<bool>,
    #[command(flatten)]
    image: ImageFlags,
}

/// `opm index prune-stranded`.
#[derive(Args)]
pub struct IndexPruneStrandedArgs {
    /// Index to prune
    #[arg(long, short = 'f', required = true, value_name = "INDEX")]
    from_index: String,
    #[command(flatten)]
    image: ImageFlags,
}

/// `opm index deprecatetruncate`.
#[derive(Args)]
pub struct IndexDeprecateArgs {
    /// Comma separated list of bundles to deprecate
    #[arg(
        long,
        short = 'b',
        required = true,
        value_delimiter = ',',
        value_name = "BUNDLES"
    )]
    bundles: Vec<String>,
    /// Previous index to deprecate from
    #[arg(long, short = 'f', value_name = "INDEX")]
    from_index: Option<String>,
    /// Allow registry load errors (nothing is loaded from a registry here)
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    permissive: Option<bool>,
    /// Removes the entire package if the heads of all channels in the package are deprecated
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    allow_package_removal: Option<bool>,
    #[command(flatten)]
    image: ImageFlags,
    #[command(flatten)]
    tools: ToolFlags,
}

/// `opm index export`.
#[derive(Args)]
pub struct IndexExportArgs {
    /// Index to get package from
    #[arg(long, short = 'i', required = true, value_name = "INDEX")]
    index: String,
    /// Comma separated list of packages to export
    #[arg(long, short = 'p', value_delimiter = ',', value_name = "PACKAGES")]
    package: Vec<String>,
    /// Deprecated, please use --package option instead
    #[arg(long, short = 'o', value_delimiter = ',', hide = true)]
    xpackage: Vec<String>,
    /// Directory where downloaded operator bundle(s) will be stored
    #[arg(long, short = 'f', default_value = "downloaded", value_name = "DIR")]
    download_folder: PathBuf,
    /// Tool to interact with container images. One of: [none, docker, podman]
    #[arg(long, short = 'c', default_value = "none", value_name = "TOOL")]
    container_tool: String,
}

impl IndexCommand {
    /// Runs the subcommand in opm's build context.
    pub fn run(self, tls: &TlsFlags) -> CmdResult {
        match self {
            IndexCommand::Add(a) => {
                check_tools(&a.image, Some(&a.tools))?;
                let mut native = vec![
                    "index".to_string(),
                    "add".to_string(),
                    format!("--mode={}", a.mode),
                ];
                if on(a.permissive) {
                    native.push("--permissive".into());
                }
                if on(a.enable_alpha) {
                    native.push("--enable-alpha".into());
                }
                if on(a.overwrite_latest) {
                    native.push("--overwrite-latest".into());
                }
                native.extend(tls.native()?);
                for b in slice(&a.bundles) {
                    native.push(format!("--bundles={b}"));
                }
                in_context(
                    &a.image,
                    Some(&a.tools),
                    a.from_index.as_deref(),
                    tls,
                    |db| {
                        let mut argv = native;
                        argv.push(format!("--database={}", db.display()));
                        add_permissively(argv, on(a.permissive))
                    },
                )
            }
            IndexCommand::Rm(a) => {
                check_tools(&a.image, Some(&a.tools))?;
                let packages = slice(&a.operators);
                in_context(&a.image, Some(&a.tools), Some(&a.from_index), tls, |db| {
                    let mut argv = vec![
                        "index".to_string(),
                        "rm".to_string(),
                        format!("--database={}", db.display()),
                    ];
                    argv.extend(packages.iter().map(|p| format!("--packages={p}")));
                    run_native(argv)
                })
            }
            IndexCommand::Prune(a) => {
                check_tools(&a.image, None)?;
                let keep = slice(&a.packages);
                in_context(&a.image, None, Some(&a.from_index), tls, |db| {
                    let mut argv = vec![
                        "index".to_string(),
                        "prune".to_string(),
                        format!("--database={}", db.display()),
                    ];
                    argv.extend(keep.iter().map(|p| format!("--keep={p}")));
                    run_native(argv)
                })
            }
            IndexCommand::PruneStranded(a) => {
                check_tools(&a.image, None)?;
                in_context(&a.image, None, Some(&a.from_index), tls, |db| {
                    run_native([
                        "index".to_string(),
                        "prune-stranded".to_string(),
                        format!("--database={}", db.display()),
                    ])
                })
            }
            IndexCommand::Deprecatetruncate(a) => {
                check_tools(&a.image, Some(&a.tools))?;
                let bundles = slice(&a.bundles);
                let remove = on(a.allow_package_removal);
                in_context(
                    &a.image,
                    Some(&a.tools),
                    a.from_index.as_deref(),
                    tls,
                    |db| {
                        let mut argv = vec![
                            "index".to_string(),
                            "deprecatetruncate".to_string(),
                            format!("--database={}", db.display()),
                        ];
                        if remove {
                            argv.push("--allow-package-removal".into());
                        }
                        argv.extend(bundles.iter().map(|b| format!("--bundles={b}")));
                        run_native(argv)
                    },
                )
            }
            IndexCommand::Export(a) => {
                check_tool_name(&a.container_tool, &["none", "docker", "podman"])?;
                let tmp = tempfile::tempdir().context("making a working directory")?;
                let db = tmp.path().join("index.db");
                build_context::fetch_database(&a.index, &db, &registry_flags(tls).options()?)?;
                let mut argv = vec![
                    "index".to_string(),
                    "export".to_string(),
                    format!("--database={}", db.display()),
                    format!("--to={}", a.download_folder.display()),
                ];
                let mut packages = slice(&a.package);
                packages.extend(slice(&a.xpackage));
                argv.extend(packages.iter().map(|p| format!("--package={p}")));
                argv.extend(tls.native()?);
                run_native(argv)
            }
        }
    }
}

/// A tool name opm accepts.
fn check_tool_name(tool: &str, allowed: &[&str]) -> anyhow::Result<()> {
    anyhow::ensure!(
        tool.is_empty() || allowed.contains(&tool),
        "unrecognized container-tool option: {tool}"
    );
    Ok(())
}

fn check_tools(image: &ImageFlags, tools: Option<&ToolFlags>) -> anyhow::Result<()> {
    if let Some(t) = &image.container_tool {
        check_tool_name(t, &["none", "docker", "podman"])?;
    }
    if let Some(t) = tools {
        if let Some(b) = &t.build_tool {
            check_tool_name(b, &["docker", "podman"])?;
        }
        if let Some(p) = &t.pull_tool {
            check_tool_name(p, &["none", "docker", "podman"])?;
        }
    }
    Ok(())
}

/// Runs `change` on the database of opm's build context (`--from-index`'s,
/// or a new one), writes the Dockerfile, and builds the image unless
/// `--generate`.
fn in_context(
    image: &ImageFlags,
    tools: Option<&ToolFlags>,
    from_index: Option<&str>,
    tls: &TlsFlags,
    change: impl FnOnce(&Path) -> CmdResult,
) -> CmdResult {
    let generate = on(image.generate);
    let opts = ContextOptions {
        generate,
        from_index: from_index.map(str::to_string),
        out_dockerfile: image.out_dockerfile.as_ref().map(PathBuf::from),
        binary_image: image.binary_image.clone().unwrap_or_default(),
        registry: registry_flags(tls).options()?,
    };
    let context = build_context::open(&opts)?;
    let code = change(context.database())?;
    if code != 0 {
        return Ok(code);
    }
    context.write_dockerfile()?;
    if generate {
        return Ok(0);
    }
    let tag = image
        .tag
        .clone()
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| DEFAULT_TAG.to_string());
    build_image(context.database(), &tag, image, tools, tls)
}

/// The native registry flags of opm's TLS flags.
pub fn registry_flags(tls: &TlsFlags) -> super::super::image::RegistryFlags {
    super::super::image::RegistryFlags::with_tls(
        on(tls.use_http) || on(tls.skip_tls_verify) || on(tls.skip_tls),
        tls.ca_file.clone(),
    )
}

/// The container tool that would build (opm: --build-tool, else
/// --container-tool, else podman).
fn build_tool(image: &ImageFlags, tools: Option<&ToolFlags>) -> String {
    tools
        .and_then(|t| t.build_tool.clone())
        .or_else(|| image.container_tool.clone())
        .filter(|t| !t.is_empty() && t != "none")
        .unwrap_or_else(|| "podman".to_string())
}

/// Builds the index image of `db` without a daemon; loads it into the
/// container tool when that answers, else pushes it to `tag`.
fn build_image(
    db: &Path,
    tag: &str,
    image: &ImageFlags,
    tools: Option<&ToolFlags>,
    tls: &TlsFlags,
) -> CmdResult {
    let tool = build_tool(image, tools);
    let base = image
        .binary_image
        .clone()
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| "self".to_string());
    let mut argv = vec![
        "index".to_string(),
        "build".to_string(),
        format!("--database={}", db.display()),
        format!("--base={base}"),
    ];
    argv.extend(tls.native()?);
    if olm_catalog::ops::image::container_tool_answers(&tool) {
        let layout = tempfile::tempdir().context("making a directory for the image")?;
        let dir = layout.path().join("layout");
        argv.push(format!("--tag=oci:{}:latest", dir.display()));
        let code = run_native(argv)?;
        if code != 0 {
            return Ok(code);
        }
        olm_catalog::ops::image::load_into_container_tool(&dir, "latest", tag, &tool)?;
        eprintln!("built {tag} without a daemon and loaded it into {tool} ({tool} load)");
        return Ok(0);
    }
    // No daemon: push (or, for opm's default local tag, an OCI layout).
    let dest = if image.tag.as_deref().is_some_and(|t| !t.is_empty()) {
        tag.to_string()
    } else {
        "oci:operator-registry-index:latest".to_string()
    };
    argv.push(format!("--tag={dest}"));
    let code = run_native(argv)?;
    if code == 0 {
        eprintln!("{tool} is not available (no answer to `{tool} info`): built {tag} without a daemon and wrote it to {dest}");
    }
    Ok(code)
}

/// Runs a native `index add`; with opm's `--permissive`, a failed add is a
/// warning and the command goes on (pkg/lib/registry `AddToRegistry` logs
/// populate's error and returns nil): the database stays as it was (our
/// add is one transaction), and `index add --tag` still builds the image.
fn add_permissively(argv: Vec<String>, permissive: bool) -> CmdResult {
    match run_native(argv) {
        Ok(code) if code != 0 && permissive => {
            eprintln!("warning: permissive mode enabled: the add found problems (above); the database is unchanged");
            Ok(0)
        }
        Err(e) if permissive => {
            eprintln!("warning: permissive mode enabled: {e:#}; the database is unchanged");
            Ok(0)
        }
        other => other,
    }
}

/// `opm registry` subcommands.
#[derive(Subcommand)]
pub enum RegistryCommand {
    /// Add operator bundles to operator registry DB
    Add(RegistryAddArgs),
    /// Remove operator from operator registry DB
    Rm(RegistryRmArgs),
    /// Prune an operator registry DB of all but specified packages
    Prune(RegistryPruneArgs),
    /// Prune an operator registry DB of stranded bundles
    PruneStranded(RegistryDbArgs),
    /// Deprecate operator bundles from an operator registry DB
    Deprecatetruncate(RegistryDeprecateArgs),
    /// Serve an operator-registry database
    Serve(super::serve::RegistryServeArgs),
    /// Mirror an operator-registry catalog
    #[command(hide = true)]
    Mirror(RegistryMirrorArgs),
}

/// `opm registry add`.
#[derive(Args)]
pub struct RegistryAddArgs {
    /// Relative path to database file
    #[arg(long, short = 'd', default_value = "bundles.db")]
    database: PathBuf,
    /// Comma separated list of links to bundle image
    #[arg(long, short = 'b', value_delimiter = ',', value_name = "IMAGES")]
    bundle_images: Vec<String>,
    /// Allow registry load errors
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    permissive: Option<bool>,
    /// Graph update mode. One of: [replaces, semver, semver-skippatch]
    #[arg(long, default_value = "replaces")]
    mode: String,
    /// Tool to interact with container images. One of: [none, docker, podman] (images are
    /// pulled without a daemon whatever the tool)
    #[arg(long, short = 'c', default_value = "none", value_name = "TOOL")]
    container_tool: String,
    /// Overwrite the latest bundles (channel heads) with those of the same csv name
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL", hide = true)]
    overwrite_latest: Option<bool>,
    /// Enable unsupported alpha features of the OPM CLI
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL", hide = true)]
    enable_alpha: Option<bool>,
}

/// `opm registry rm`.
#[derive(Args)]
pub struct RegistryRmArgs {
    /// Relative path to database file
    #[arg(long, short = 'd', default_value = "bundles.db")]
    database: PathBuf,
    /// Comma separated list of package names to be deleted
    #[arg(long, short = 'o', required = true, value_delimiter = ',')]
    packages: Vec<String>,
    /// Allow registry load errors (nothing is loaded from a registry here)
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    permissive: Option<bool>,
}

/// `opm registry prune`.
#[derive(Args)]
pub struct RegistryPruneArgs {
    /// Relative path to database file
    #[arg(long, short = 'd', default_value = "bundles.db")]
    database: PathBuf,
    /// Comma separated list of package names to be kept
    #[arg(long, short = 'p', required = true, value_delimiter = ',')]
    packages: Vec<String>,
    /// Allow registry load errors (nothing is loaded from a registry here)
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    permissive: Option<bool>,
}

/// `opm registry prune-stranded`.
#[derive(Args)]
pub struct RegistryDbArgs {
    /// Relative path to database file
    #[arg(long, short = 'd', default_value = "bundles.db")]
    database: PathBuf,
}

/// `opm registry deprecatetruncate`.
#[derive(Args)]
pub struct RegistryDeprecateArgs {
    /// Relative path to database file
    #[arg(long, short = 'd', default_value = "index.db")]
    database: PathBuf,
    /// Comma separated list of links to bundle image
    #[arg(long, short = 'b', value_delimiter = ',', value_name = "IMAGES")]
    bundle_images: Vec<String>,
    /// Allow registry load errors (nothing is loaded from a registry here)
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    permissive: Option<bool>,
    /// Removes the entire package if the heads of all channels in the package are deprecated
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true",
          value_parser = clap::builder::BoolishValueParser::new(), value_name = "BOOL")]
    allow_package_removal: Option<bool>,
}

/// `opm registry mirror [src image] [dest image]`: defined in opm v1.73.0
/// (cmd/opm/registry/mirror.go, hidden and deprecated) but never added to
/// `opm registry`, so opm answers it with its help; refused here
/// (docs/from-opm.md says why).
#[derive(Args)]
pub struct RegistryMirrorArgs {
    /// Source index image
    src: String,
    /// Destination
    dest: String,
}

impl RegistryCommand {
    /// Runs the subcommand on its database file.
    pub fn run(self, tls: &TlsFlags) -> CmdResult {
        match self {
            RegistryCommand::Add(a) => {
                check_tool_name(&a.container_tool, &["none", "docker", "podman"])?;
                let mut argv = vec![
                    "index".to_string(),
                    "add".to_string(),
                    format!("--database={}", a.database.display()),
                    format!("--mode={}", a.mode),
                ];
                if on(a.permissive) {
                    argv.push("--permissive".into());
                }
                if on(a.enable_alpha) {
                    argv.push("--enable-alpha".into());
                }
                if on(a.overwrite_latest) {
                    argv.push("--overwrite-latest".into());
                }
                argv.extend(tls.native()?);
                argv.extend(
                    slice(&a.bundle_images)
                        .iter()
                        .map(|b| format!("--bundles={b}")),
                );
                add_permissively(argv, on(a.permissive))
            }
            RegistryCommand::Rm(a) => {
                let mut argv = vec![
                    "index".to_string(),
                    "rm".to_string(),
                    format!("--database={}", a.database.display()),
                ];
                argv.extend(slice(&a.packages).iter().map(|p| format!("--packages={p}")));
                run_native(argv)
            }
            RegistryCommand::Prune(a) => {
                let mut argv = vec![
                    "index".to_string(),
                    "prune".to_string(),
                    format!("--database={}", a.database.display()),
                ];
                argv.extend(slice(&a.packages).iter().map(|p| format!("--keep={p}")));
                run_native(argv)
            }
            RegistryCommand::PruneStranded(a) => run_native([
                "index".to_string(),
                "prune-stranded".to_string(),
                format!("--database={}", a.database.display()),
            ]),
            RegistryCommand::Deprecatetruncate(a) => {
                let mut argv = vec![
                    "index".to_string(),
                    "deprecatetruncate".to_string(),
                    format!("--database={}", a.database.display()),
                ];
                if on(a.allow_package_removal) {
                    argv.push("--allow-package-removal".into());
                }
                argv.extend(
                    slice(&a.bundle_images)
                        .iter()
                        .map(|b| format!("--bundles={b}")),
                );
                run_native(argv)
            }
            RegistryCommand::Serve(a) => a.run(),
            RegistryCommand::Mirror(a) => Err(unsupported(
                format!("registry mirror {} {}", a.src, a.dest),
                "opm v1.73.0 has no such command (cmd/opm/registry/mirror.go defines it, but \
`opm registry` never adds it: opm prints `opm registry`'s help and exits 0, mirroring nothing), \
so there is no behaviour to match; to copy a catalog's images to another registry use \
`olm-catalog catalog mirror SRC --to DEST`",
            )),
        }
    }
}
