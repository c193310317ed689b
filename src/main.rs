//! The `olm-catalog` command: a thin layer over the library.
mod alloc;
mod cli;

#[global_allocator]
static GLOBAL: alloc::ByCommand = alloc::ByCommand;

fn main() -> std::process::ExitCode {
    cli::main()
}
