//! The `weir` command line: `weir serve`, the operator commands `weir admin …` (contract
//! §1), `weir health` (a container's probe) and `weir openapi` (the API's document). Admin
//! commands talk to Redis directly, print JSON on stdout, and exit non-zero with a message
//! on stderr when they fail.

mod admin;
mod filter_test;
mod health;
mod logging;
mod plans;
mod serve;
mod sources;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use admin::AdminCommand;

#[derive(Debug, Parser)]
#[command(name = "weir", version, about = "Webhook subscription and delivery service")]
struct Cli {
    /// TOML configuration file (keys as in config.default.toml); WEIR_* variables override it.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the API, token endpoint, delivery workers and retry scheduler.
    Serve,
    /// Operator commands: organisations, API clients, settings users.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
    /// Ask this installation's `/readyz` (at WEIR_LISTEN); exit 0 when it is ready.
    Health,
    /// Print the OpenAPI document of this version's API (as `GET /api/v2/openapi.json`).
    Openapi,
}

/// The entry point of the `weir` binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match crate::config::load(cli.config.as_deref()) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("weir: configuration error: {e}");
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Command::Serve => match runtime(config.runtime_threads) {
            Ok(runtime) => runtime.block_on(serve::serve(config)),
            Err(code) => code,
        },
        Command::Admin { command } => match runtime(config.runtime_threads) {
            Ok(runtime) => runtime.block_on(admin::run(config, command)),
            Err(code) => code,
        },
        Command::Health => health::run(config.listen),
        Command::Openapi => {
            // (A closed pipe — `weir openapi | head` — is no panic.)
            let written =
                std::io::Write::write_all(&mut std::io::stdout(), crate::api::openapi::document_pretty().as_bytes());
            if written.is_ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
    }
}

/// The async runtime of `threads` workers (1: on the main thread), or the exit code of a
/// runtime that cannot start.
fn runtime(threads: usize) -> Result<tokio::runtime::Runtime, ExitCode> {
    let mut builder = match threads {
        1 => tokio::runtime::Builder::new_current_thread(),
        n => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n);
            b
        }
    };
    builder.enable_all().build().map_err(|e| {
        eprintln!("weir: cannot start the async runtime: {e}");
        ExitCode::FAILURE
    })
}
