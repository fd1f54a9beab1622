//! The `weir` binary: see `weir --help`.

/// mimalloc: Weir allocates many small, short-lived buffers per request and delivery; it
/// measured markedly faster than the system allocator here (see the README's benchmark).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    weir::cli::main()
}
