//! Command-line interface. Each command group lives in its own file; this one
//! only wires them together, prints errors and maps results to exit codes.
//!
//! Exit codes, for every command: 0 success (no errors found), 1 the check
//! found errors (or, for `verify`, nothing verified), 2 usage, input or I/O
//! failure.

use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

mod attest;
mod catalog;
mod common;
mod gate;
mod graph;
mod image;
mod index;
mod opm;
mod probe;
mod serve;
mod sign;
mod validate;

/// What a command returns: its exit code, or an error that exits 2.
pub type CmdResult = anyhow::Result<u8>;

/// Exit code when a check found errors.
#[allow(dead_code)]
pub const EXIT_FINDINGS: u8 = 1;

#[derive(Parser)]
#[command(
    name = "olm-catalog",
    version,
    about = "Validate, graph, index, build, sign and serve OLM operator catalogs",
    long_about = "olm-catalog does what opm, `operator-sdk bundle validate`, crane/skopeo and cosign \
do for operator catalogs, in one binary that needs no container daemon (linked dynamically \
against the C library only: glibc's libc, libm, libgcc_s; see the README).\n\n\
Run as `opm` (a link named opm, or `olm-catalog opm ...`) it accepts opm v1.73.0's command \
lines: see docs/from-opm.md.\n\n\
Exit codes: 0 success, 1 errors found, 2 usage or I/O failure.",
    after_help = "Examples:\n  olm-catalog bundle validate fixtures/bundles/good/memcached-operator-0.0.2\n  \
olm-catalog index add --database index.db --mode semver bundles/*\n  \
olm-catalog serve index.db --port 50051"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    global: common::GlobalArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Validate and build operator bundles
    #[command(
        subcommand,
        after_help = "Examples:\n  olm-catalog bundle validate operators/mypkg/*\n  \
olm-catalog bundle build operators/mypkg/1.0.0 --tag quay.io/me/mypkg-bundle:v1.0.0"
    )]
    Bundle(BundleCommand),
    /// Build, check, draw and explain upgrade graphs
    #[command(
        subcommand,
        after_help = "Examples:\n  olm-catalog graph check operators/etcd\n  \
olm-catalog graph render operators/etcd --format mermaid"
    )]
    Graph(graph::GraphCommand),
    /// Build file-based catalog images (or a Dockerfile for them); filter and compare catalogs
    #[command(
        subcommand,
        after_help = "Examples:\n  olm-catalog catalog build catalog/ --tag quay.io/me/catalog:v1\n  \
olm-catalog catalog build catalog/ --tag oci:out/catalog:v1 --base quay.io/operator-framework/opm:v1.73.0\n  \
olm-catalog catalog generate-dockerfile catalog/"
    )]
    Catalog(catalog::CatalogCommand),
    /// Render a catalog template (basic, semver, substitutes; type detected from its schema) to FBC
    RenderTemplate(graph::RenderTemplateArgs),
    /// Turn a file-based catalog into a basic or substitutes template, like `opm alpha convert-template`
    ConvertTemplate(graph::ConvertTemplateArgs),
    /// Build and maintain SQLite index databases and index images
    #[command(
        subcommand,
        after_help = "Examples:\n  olm-catalog index add --database index.db --mode semver operators/mypkg/*/\n  \
olm-catalog index list bundles --database index.db"
    )]
    Index(IndexCommand),
    /// Write an olm.package object (name, default channel, description, icon), like `opm init`
    Init(index::InitArgs),
    /// Render an index, bundle directory or FBC directory as an FBC stream
    Render(index::RenderArgs),
    /// Convert a SQLite index into a file-based catalog directory
    Migrate(index::MigrateArgs),
    /// Validate a file-based catalog directory, like `opm validate`
    Validate(index::ValidateArgs),
    /// Serve a catalog over gRPC (api.Registry, health, reflection)
    Serve(serve::ServeArgs),
    /// Sign images with cosign-compatible signatures, or generate a key pair
    Sign(sign::SignArgs),
    /// Verify cosign-compatible signatures of an image
    Verify(sign::VerifyArgs),
    /// Attach a signed in-toto attestation to an image (cosign attest --key)
    Attest(attest::AttestArgs),
    /// Verify an image's in-toto attestations (cosign verify-attestation --key)
    VerifyAttestation(attest::VerifyAttestationArgs),
    /// Verify a Sigstore bundle (keyless or keyed) over a file or digest, offline
    VerifyBlob(sign::VerifyBlobArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completion(common::CompletionArgs),
    /// Write man pages for every command into a directory
    Man(common::ManArgs),
    /// Run an opm v1.73.0 command line, as the executable does when started as `opm`
    // Hidden: its grammar is opm's, not this CLI's (tests/cli_conventions.rs
    // walks every visible command); the top-level help names it.
    #[command(
        hide = true,
        disable_help_flag = true,
        after_help = "Examples:\n  olm-catalog opm index add --bundles quay.io/me/op-bundle:v1 --tag quay.io/me/index:v1\n  \
olm-catalog opm alpha render-template semver -o yaml < semver.yaml\n  \
olm-catalog opm serve /configs --cache-dir=/tmp/cache\n\n\
`olm-catalog opm --help` lists opm's commands; docs/from-opm.md gives each one's native form."
    )]
    Opm(opm::OpmArgs),
}

#[derive(Subcommand)]
enum BundleCommand {
    /// Validate bundle directories (operator-framework/api's rules and more)
    Validate(validate::ValidateArgs),
    /// Build bundle images from bundle directories (one, or many in one call)
    Build(image::BundleBuildArgs),
    /// Write a bundle image's files (manifests/, metadata/) into a directory
    Unpack(image::BundleUnpackArgs),
}

#[derive(Subcommand)]
enum IndexCommand {
    #[command(flatten)]
    Database(index::IndexCommand),
    /// Build an index image from a SQLite index database
    Build(image::IndexBuildArgs),
}

/// Parses arguments, runs the command and maps the outcome to an exit code.
pub fn main() -> ExitCode {
    // Started as /bin/grpc_health_probe (a link in the images we build).
    if probe::invoked_as_probe() {
        let args: Vec<String> = std::env::args_os()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        return ExitCode::from(probe::run(&args));
    }
    // Started as /bin/opm, or as `olm-catalog opm ...`: opm's grammar.
    if opm::invoked_as_opm() {
        return opm::main(std::env::args_os().skip(1).collect());
    }
    if std::env::args_os().nth(1).is_some_and(|a| a == "opm") {
        return opm::main(std::env::args_os().skip(2).collect());
    }
    // The global flags are read first, so that commands' arguments can
    // use them as they are built (see `common`).
    let parsed = Cli::command().try_get_matches().and_then(|m| {
        common::set_globals(common::GlobalArgs::from_arg_matches(&m)?);
        Cli::from_arg_matches(&m)
    });
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    finish(dispatch(cli))
}

/// Runs a native command line (`args` without the program name) as if it
/// had been typed: how the opm personality reaches each use case through
/// the one native command that implements it. A native line that does not
/// parse is a bug of the translation, reported as an error.
pub(crate) fn run_native<I, S>(args: I) -> CmdResult
where
    I: IntoIterator<Item = S>,
    S: Into<std::ffi::OsString> + Clone,
{
    let argv = std::iter::once(std::ffi::OsString::from("olm-catalog"))
        .chain(args.into_iter().map(Into::into));
    let cli = Cli::try_parse_from(argv).map_err(|e| anyhow::anyhow!("{}", e.render()))?;
    dispatch(cli)
}

/// Runs the parsed command.
fn dispatch(cli: Cli) -> CmdResult {
    match cli.command {
        Command::Bundle(BundleCommand::Validate(a)) => a.run(),
        Command::Bundle(BundleCommand::Build(a)) => a.run(),
        Command::Bundle(BundleCommand::Unpack(a)) => a.run(),
        Command::Catalog(c) => c.run(),
        Command::Graph(c) => c.run(),
        Command::RenderTemplate(a) => a.run(),
        Command::ConvertTemplate(a) => a.run(),
        Command::Index(IndexCommand::Database(c)) => c.run(),
        Command::Index(IndexCommand::Build(a)) => a.run(),
        Command::Init(a) => a.run(),
        Command::Render(a) => a.run(),
        Command::Migrate(a) => a.run(),
        Command::Validate(a) => a.run(),
        Command::Serve(a) => a.run(),
        Command::Sign(a) => a.run(),
        Command::Verify(a) => a.run(),
        Command::Attest(a) => a.run(),
        Command::VerifyAttestation(a) => a.run(),
        Command::VerifyBlob(a) => a.run(),
        Command::Completion(a) => a.run(Cli::command()),
        Command::Man(a) => a.run(Cli::command()),
        // Reached only through `run_native`: `main` hands `opm` to the
        // personality before parsing.
        Command::Opm(a) => opm::run_args(a),
    }
}

/// Prints a command's error (with its causes) and maps the outcome to the
/// exit code: 0/1 as the command said, 2 for an error.
fn finish(result: CmdResult) -> ExitCode {
    finish_with(result, 2)
}

/// [`finish`] with the exit code of an error given (opm exits 1).
fn finish_with(result: CmdResult, error_code: u8) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        // The reader went away (`| head`): what it wanted was written.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        // The signature gate refused an image: not verified, as cosign exits.
        Err(e) if is_unverified(&e) => {
            print_error(&e);
            ExitCode::from(EXIT_FINDINGS)
        }
        Err(e) => {
            print_error(&e);
            ExitCode::from(error_code)
        }
    }
}

/// Whether `e` is the signature gate's refusal.
fn is_unverified(e: &anyhow::Error) -> bool {
    e.downcast_ref::<olm_catalog::ops::Error>()
        .is_some_and(|o| matches!(o.root(), olm_catalog::ops::Error::Unverified { .. }))
}

/// Prints an error and its causes on stderr.
fn print_error(e: &anyhow::Error) {
    eprintln!("error: {e}");
    // A cause whose text the message already holds is not repeated.
    let mut said = e.to_string();
    for cause in e.chain().skip(1) {
        let cause = cause.to_string();
        if !said.contains(&cause) {
            eprintln!("  caused by: {cause}");
            said.push_str(&cause);
        }
    }
}

/// Whether writing to a closed pipe is what failed.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
