//! Command-line interface. Each command group lives in its own file; this one
//! only wires them together, prints errors and maps results to exit codes.
//!
//! Exit codes, for every command: 0 success (no errors found), 1 the check
//! found errors (or, for `verify`, nothing verified), 2 usage, input or I/O
//! failure.

use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

mod catalog;
mod common;
mod graph;
mod image;
mod index;
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
do for operator catalogs, in one static binary that needs no container daemon.\n\n\
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
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completion(common::CompletionArgs),
    /// Write man pages for every command into a directory
    Man(common::ManArgs),
}

#[derive(Subcommand)]
enum BundleCommand {
    /// Validate bundle directories (operator-framework/api's rules and more)
    Validate(validate::ValidateArgs),
    /// Build bundle images from bundle directories (one, or many in one call)
    Build(image::BundleBuildArgs),
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
    let result = match cli.command {
        Command::Bundle(BundleCommand::Validate(a)) => a.run(),
        Command::Bundle(BundleCommand::Build(a)) => a.run(),
        Command::Catalog(c) => c.run(),
        Command::Graph(c) => c.run(),
        Command::RenderTemplate(a) => a.run(),
        Command::Index(IndexCommand::Database(c)) => c.run(),
        Command::Index(IndexCommand::Build(a)) => a.run(),
        Command::Init(a) => a.run(),
        Command::Render(a) => a.run(),
        Command::Migrate(a) => a.run(),
        Command::Validate(a) => a.run(),
        Command::Serve(a) => a.run(),
        Command::Sign(a) => a.run(),
        Command::Verify(a) => a.run(),
        Command::Completion(a) => a.run(Cli::command()),
        Command::Man(a) => a.run(Cli::command()),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        // The reader went away (`| head`): what it wanted was written.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
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
            ExitCode::from(2)
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
