//! The `olm-catalog` command: a thin layer over the library.
mod cli;

/// mimalloc rather than glibc's malloc: the located YAML trees are millions of
/// small allocations (see Cargo.toml and BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
