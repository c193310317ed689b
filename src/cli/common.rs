//! Conventions every command shares: the global `--color`, `-q/--quiet`
//! and `-v/--verbose` flags, and the `completion` and `man` commands, which
//! are generated from the same clap definitions as `--help`.
//!
//! Spelling rules (checked by `tests/cli_conventions.rs`): `-o/--output`
//! is always an output format; `--format` is only a storage format that is
//! not output (image media types, signature layout); the registry flags are
//! `--username`, `--password-stdin`, `--ca-file` and `--insecure`.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::OnceLock;

use anyhow::Context as _;
use clap::{Args, ValueEnum};

use super::CmdResult;

/// When to colour human output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set to a non-empty value.
    #[default]
    Auto,
    /// Always (even with NO_COLOR set).
    Always,
    /// Never.
    Never,
}

/// Flags accepted by every command, before or after the command's name.
#[derive(Args, Clone, Debug, Default)]
pub struct GlobalArgs {
    /// Colour human output: auto (on a terminal, unless NO_COLOR is set), always, never
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "auto",
        value_name = "WHEN",
        hide_possible_values = true
    )]
    pub color: ColorChoice,
    /// Print less: no progress or notes on stderr (results and errors still)
    #[arg(long, short, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more on stderr (e.g. which paths were skipped, and why)
    #[arg(long, short, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

static GLOBALS: OnceLock<GlobalArgs> = OnceLock::new();

/// Records the global flags; done once, before any command's arguments
/// are built (so `#[arg(skip = common::quiet())]` sees them).
pub fn set_globals(g: GlobalArgs) {
    let _ = GLOBALS.set(g);
}

fn globals() -> GlobalArgs {
    GLOBALS.get().cloned().unwrap_or_default()
}

/// `-q/--quiet` was given.
pub fn quiet() -> bool {
    globals().quiet
}

/// Prints a note (what a command did: "removed package(s): …") on stderr,
/// unless `-q/--quiet` was given. Warnings and errors are not notes.
pub fn note(line: impl std::fmt::Display) {
    if !quiet() {
        eprintln!("{line}");
    }
}

/// How many times `-v/--verbose` was given.
pub fn verbosity() -> u8 {
    globals().verbose
}

/// Whether to colour text written to a stream, given whether it is a
/// terminal: `--color always|never` decide; `auto` colours a terminal
/// unless NO_COLOR is set to a non-empty value (no-color.org).
pub fn use_color(
    choice: ColorChoice,
    is_terminal: bool,
    no_color: Option<&std::ffi::OsStr>,
) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => is_terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

/// Whether to colour what is written to standard output.
pub fn color_stdout() -> bool {
    use_color(
        globals().color,
        std::io::stdout().is_terminal(),
        std::env::var_os("NO_COLOR").as_deref(),
    )
}

/// `completion SHELL`.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
olm-catalog completion bash > /etc/bash_completion.d/olm-catalog\n  \
olm-catalog completion zsh > \"${fpath[1]}/_olm-catalog\"\n  \
olm-catalog completion fish > ~/.config/fish/completions/olm-catalog.fish")]
pub struct CompletionArgs {
    /// Shell to write the completion script for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

impl CompletionArgs {
    /// Writes the completion script of `cmd` to stdout.
    pub fn run(self, mut cmd: clap::Command) -> CmdResult {
        let name = cmd.get_name().to_string();
        // Made in memory first: clap_complete panics on a failed write.
        let mut script = Vec::new();
        clap_complete::generate(self.shell, &mut cmd, name, &mut script);
        let mut out = std::io::stdout().lock();
        std::io::Write::write_all(&mut out, &script)
            .and_then(|_| std::io::Write::flush(&mut out))
            .context("writing the completion script")?;
        Ok(0)
    }
}

/// `man DIR`.
#[derive(Args)]
#[command(
    after_help = "Example:\n  olm-catalog man /usr/local/share/man/man1 && man olm-catalog-graph-check"
)]
pub struct ManArgs {
    /// Directory to write the pages to (created if missing): olm-catalog.1
    /// and one olm-catalog-COMMAND[-SUBCOMMAND].1 per command
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

impl ManArgs {
    /// Writes one man page per command of `cmd` into the directory.
    pub fn run(self, mut cmd: clap::Command) -> CmdResult {
        // Built, so every page lists the global flags too.
        cmd.build();
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))?;
        let mut written = 0usize;
        write_pages(&self.dir, cmd, &mut written)?;
        if !quiet() {
            eprintln!("wrote {written} man page(s) to {}", self.dir.display());
        }
        Ok(0)
    }
}

/// Writes the page of `cmd` and, recursively, of its subcommands; a
/// subcommand's page is named after its whole path (`olm-catalog-index-add`).
fn write_pages(
    dir: &std::path::Path,
    cmd: clap::Command,
    written: &mut usize,
) -> anyhow::Result<()> {
    walk_pages(dir, cmd, "olm-catalog", written)
}

fn walk_pages(
    dir: &std::path::Path,
    cmd: clap::Command,
    bin: &str,
    written: &mut usize,
) -> anyhow::Result<()> {
    let file = bin.replace(' ', "-");
    let cmd = cmd
        .disable_help_subcommand(true)
        .bin_name(bin)
        .display_name(&file);
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut page)
        .with_context(|| format!("rendering the man page of {bin}"))?;
    let path = dir.join(format!("{file}.1"));
    std::fs::write(&path, page).with_context(|| format!("writing {}", path.display()))?;
    *written += 1;
    for sub in cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        walk_pages(
            dir,
            sub.clone(),
            &format!("{bin} {}", sub.get_name()),
            written,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_is_honoured_only_in_auto() {
        let set = Some(std::ffi::OsStr::new("1"));
        let empty = Some(std::ffi::OsStr::new(""));
        assert!(!use_color(ColorChoice::Auto, true, set));
        assert!(use_color(ColorChoice::Auto, true, empty));
        assert!(use_color(ColorChoice::Auto, true, None));
        assert!(!use_color(ColorChoice::Auto, false, None));
        assert!(use_color(ColorChoice::Always, false, set));
        assert!(!use_color(ColorChoice::Never, true, None));
    }
}

/// The [`olm_catalog::ops::Reporter`] of the command line: notes on stderr
/// unless `-q`, warnings as `warning: …`, progress bars unless `-q`.
#[derive(Clone, Copy, Debug, Default)]
pub struct CliReporter;

impl olm_catalog::ops::Reporter for CliReporter {
    fn note(&self, message: &str) {
        note(message);
    }
    fn warning(&self, message: &str) {
        eprintln!("warning: {message}");
    }
    fn message(&self, message: &str) {
        eprintln!("{message}");
    }
    fn progress(&self) -> olm_catalog::oci::progress::ProgressMode {
        if quiet() {
            olm_catalog::oci::progress::ProgressMode::Off
        } else {
            olm_catalog::oci::progress::ProgressMode::Auto
        }
    }
}

/// A single-threaded async runtime for a command's registry calls.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    use anyhow::Context as _;
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}
