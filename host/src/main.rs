//! The `weir` binary: see `weir --help`.

fn main() -> std::process::ExitCode {
    weir::cli::main()
}
