//! The `opm` personality: opm v1.73.0's command grammar (its cobra
//! commands under `cmd/opm/`, their flags, short flags, defaults and
//! positional forms) over olm-catalog's own commands.
//!
//! Started under the name `opm` (the images we build ship `/bin/opm`, a
//! link to `/bin/olm-catalog`), or as `olm-catalog opm ...`, the executable
//! parses opm's command line here and maps it onto the native command that
//! implements the same use case (`super::run_native`), so each use case is
//! still written once. What opm does that no native command does (the
//! `index add` build context, `--from-index`, `docker load`, the serve
//! cache, opm's `alpha list` tables) is written here, on library calls.
//!
//! Exit codes are opm's: 0 success, 1 any failure (validation findings
//! too). An opm flag this personality does not implement is refused with
//! exit 2 and the native flag or command that does the job, never ignored.
//! docs/from-opm.md has the table.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Args, FromArgMatches as _, Parser, Subcommand};

use super::CmdResult;

mod alpha;
mod fbc;
mod generate;
mod index;
mod serve;

/// The opm release whose grammar and outputs this personality follows.
pub const OPM_VERSION: &str = "v1.73.0";

/// The executable's name that selects this personality.
pub const OPM_NAME: &str = "opm";

/// Whether the executable was started as `opm` (a link or copy so named).
pub fn invoked_as_opm() -> bool {
    std::env::args_os()
        .next()
        .as_deref()
        .map(std::path::Path::new)
        .and_then(|p| p.file_name())
        .is_some_and(|n| n == OPM_NAME)
}

/// `olm-catalog opm ARGS...`: opm's command line, unparsed (parsed by
/// [`main`]; this only documents the subcommand in native `--help`).
#[derive(Args)]
pub struct OpmArgs {
    /// opm's command and its arguments (`olm-catalog opm --help` lists them)
    #[arg(
        value_name = "OPM_ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<String>,
}

/// Runs `olm-catalog opm ...` reached through the native parser.
pub fn run_args(a: OpmArgs) -> CmdResult {
    run(a.args.into_iter().map(OsString::from).collect())
}

/// An opm flag or command the personality does not implement: exit 2, with
/// what to use instead.
#[derive(Debug)]
pub struct Unsupported {
    /// The opm flag or command, as typed.
    pub what: String,
    /// The native equivalent (or why there is none).
    pub instead: String,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "opm {} is not supported by olm-catalog's opm personality; {}",
            self.what, self.instead
        )
    }
}

impl std::error::Error for Unsupported {}

/// Refuses `what`, naming the native equivalent.
pub fn unsupported(what: impl Into<String>, instead: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Unsupported {
        what: what.into(),
        instead: instead.into(),
    })
}

/// Parses opm's command line (`args` without the program name), runs it
/// and maps the outcome to opm's exit codes.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let argv = std::iter::once(OsString::from(OPM_NAME)).chain(args);
    let parsed = OpmCli::opm_command()
        .try_get_matches_from(argv)
        .and_then(|m| OpmCli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            // cobra exits 1 on a bad command line; --help and --version 0.
            let code = if e.use_stderr() { 1 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = cli.run();
    let code = result.as_ref().err().map_or(1, error_code);
    super::finish_with(result, code)
}

/// The exit code of a failed opm command: opm's `main` (cmd/opm/main.go at
/// v1.73.0) exits 2 when a bundle image is already in the index, 3 when a
/// bundle of the same package and version is, else 1; an opm flag this
/// personality does not implement exits 2.
fn error_code(e: &anyhow::Error) -> u8 {
    use olm_catalog::index::Error as IndexError;
    if e.downcast_ref::<Unsupported>().is_some() {
        return 2;
    }
    let index_error = |cause: &(dyn std::error::Error + 'static)| -> Option<u8> {
        // ops::Error::Index is transparent: its source skips the index
        // error, so it is looked for under the ops error's root too.
        let ix = cause.downcast_ref::<IndexError>().or_else(|| {
            match cause.downcast_ref::<olm_catalog::ops::Error>()?.root() {
                olm_catalog::ops::Error::Index(ix) => Some(ix),
                _ => None,
            }
        })?;
        match ix {
            IndexError::BundleImageAlreadyAdded(_) => Some(2),
            IndexError::PackageVersionAlreadyAdded(_) => Some(3),
            _ => None,
        }
    };
    e.chain().find_map(index_error).unwrap_or(1)
}

/// [`main`] for `olm-catalog opm` reached through the native parser (the
/// error is the native caller's to print).
fn run(args: Vec<OsString>) -> CmdResult {
    let argv = std::iter::once(OsString::from(OPM_NAME)).chain(args);
    let cli = OpmCli::try_parse_from(argv).map_err(|e| anyhow::anyhow!("{}", e.render()))?;
    cli.run()
}

/// opm's root command.
#[derive(Parser)]
#[command(
    name = "opm",
    about = "olm-catalog as opm: opm v1.73.0's command lines (docs/from-opm.md)",
    long_about = "olm-catalog started as opm: it accepts opm v1.73.0's commands, flags and \
positional forms and gives opm's results (files, stdout, exit codes); logs differ. Where opm \
needs a container daemon (index add|rm|prune --tag), the image is built without one and handed \
to docker/podman when its daemon answers, else pushed. docs/from-opm.md lists each command's \
native form.",
    disable_version_flag = true
)]
pub struct OpmCli {
    #[command(subcommand)]
    command: OpmCommand,
    #[command(flatten)]
    tls: TlsFlags,
}

impl OpmCli {
    /// The clap command of opm's grammar.
    fn opm_command() -> clap::Command {
        <Self as clap::CommandFactory>::command()
    }

    fn run(self) -> CmdResult {
        // opm's --debug (more logs) changes no result: accepted, as our
        // notes are on stderr already.
        let tls = self.tls;
        match self.command {
            OpmCommand::Index(c) => c.run(&tls),
            OpmCommand::Registry(c) => c.run(&tls),
            OpmCommand::Alpha(c) => c.run(&tls),
            OpmCommand::Render(a) => a.run(&tls),
            OpmCommand::Validate(a) => a.run(),
            OpmCommand::Init(a) => a.run(),
            OpmCommand::Migrate(a) => a.run(&tls),
            OpmCommand::Serve(a) => a.run(),
            OpmCommand::Generate(c) => c.run(),
            OpmCommand::Version => {
                println!("{}", version_line());
                Ok(0)
            }
            OpmCommand::Completion(a) => a.run(),
        }
    }
}

/// What `opm version` prints: opm's `Version: %#v` line, with the opm
/// release followed and olm-catalog's own version as semver build metadata.
pub fn version_line() -> String {
    format!(
        "Version: version.Version{{OpmVersion:\"{OPM_VERSION}+olm-catalog.{}\", GitCommit:\"\", \
BuildDate:\"\", GoOs:\"{}\", GoArch:\"{}\"}}",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        go_arch(std::env::consts::ARCH)
    )
}

/// Go's GOARCH name of a Rust target architecture.
fn go_arch(arch: &str) -> &str {
    match arch {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "powerpc64" => "ppc64le",
        "x86" => "386",
        other => other,
    }
}

/// opm's root persistent flags, plus the registry flags several opm
/// commands carry (`--ca-file`), accepted on every command.
#[derive(Args, Clone, Default)]
pub struct TlsFlags {
    /// Skip TLS certificate verification for registries (deprecated in opm:
    /// use --use-http and --skip-tls-verify)
    #[arg(long, global = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new(),
          value_name = "BOOL")]
    pub skip_tls: Option<bool>,
    /// Skip TLS certificate verification for container image registries
    #[arg(long, global = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new(),
          value_name = "BOOL")]
    pub skip_tls_verify: Option<bool>,
    /// Use plain HTTP for container image registries
    #[arg(long, global = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new(),
          value_name = "BOOL")]
    pub use_http: Option<bool>,
    /// The root certificates for registries (a PEM file)
    #[arg(long, global = true, value_name = "FILE")]
    pub ca_file: Option<std::path::PathBuf>,
    /// Enable debug logging (-v of the native commands)
    #[arg(long, global = true, num_args = 0..=1, require_equals = true,
          default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new(),
          value_name = "BOOL", hide = true)]
    pub debug: Option<bool>,
}

impl TlsFlags {
    /// opm's `util.GetTLSOptions` checks (cmd/opm/internal/util/util.go at
    /// v1.73.0): `--skip-tls` given together with `--use-http` or
    /// `--skip-tls-verify`; with `both_true`, also `--use-http` and
    /// `--skip-tls-verify` both true (what the commands that call
    /// GetTLSOptions refuse).
    pub fn check(&self, both_true: bool) -> anyhow::Result<()> {
        if self.skip_tls.is_some() && self.use_http.is_some() {
            anyhow::bail!("invalid flag combination: cannot use --use-http with --skip-tls");
        }
        if self.skip_tls.is_some() && self.skip_tls_verify.is_some() {
            anyhow::bail!("invalid flag combination: cannot use --skip-tls-verify with --skip-tls");
        }
        if both_true && self.use_http == Some(true) && self.skip_tls_verify == Some(true) {
            anyhow::bail!(
                "invalid flag combination: --use-http and --skip-tls-verify cannot both be true"
            );
        }
        Ok(())
    }

    /// The native registry flags: `--insecure` for `--use-http`,
    /// `--skip-tls-verify` or `--skip-tls`; `--ca-file`. (`--skip-tls` is
    /// checked against the two others, as [`TlsFlags::check`] says.)
    pub fn native(&self) -> anyhow::Result<Vec<String>> {
        let on = |f: Option<bool>| f == Some(true);
        self.check(false)?;
        let mut out = Vec::new();
        if on(self.use_http) || on(self.skip_tls_verify) || on(self.skip_tls) {
            out.push("--insecure".to_string());
        }
        if let Some(ca) = &self.ca_file {
            out.push("--ca-file".to_string());
            out.push(ca.display().to_string());
        }
        Ok(out)
    }
}

/// opm's commands.
#[derive(Subcommand)]
enum OpmCommand {
    /// Generate operator index container images
    #[command(subcommand)]
    Index(index::IndexCommand),
    /// Interact with operator-registry database
    #[command(subcommand, alias = "reg")]
    Registry(index::RegistryCommand),
    /// Run an alpha subcommand
    #[command(subcommand)]
    Alpha(alpha::AlphaCommand),
    /// Generate a stream of file-based catalog objects from catalogs and bundles
    Render(fbc::RenderArgs),
    /// Validate the declarative index config
    Validate(fbc::ValidateArgs),
    /// Generate an olm.package declarative config blob
    Init(fbc::InitArgs),
    /// Migrate a sqlite-based index image or database file to a file-based catalog
    Migrate(fbc::MigrateArgs),
    /// Serve declarative configs
    Serve(serve::ServeArgs),
    /// Generate various artifacts for file-based catalogs
    #[command(subcommand)]
    Generate(generate::GenerateCommand),
    /// Print the opm version
    Version,
    /// Generate the autocompletion script for the specified shell
    Completion(CompletionArgs),
}

/// `opm completion SHELL`.
#[derive(Args)]
struct CompletionArgs {
    /// bash, zsh, fish or powershell
    shell: clap_complete::Shell,
}

impl CompletionArgs {
    fn run(self) -> CmdResult {
        let mut cmd = OpmCli::opm_command();
        let mut script = Vec::new();
        clap_complete::generate(self.shell, &mut cmd, OPM_NAME, &mut script);
        std::io::Write::write_all(&mut std::io::stdout().lock(), &script)?;
        Ok(0)
    }
}

/// The values of a pflag string slice (`--bundles a,b --bundles c`),
/// already split at commas by clap, trimmed; empty items (`a,,b`) dropped.
pub fn slice(values: &[String]) -> Vec<String> {
    values
        .iter()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect()
}
