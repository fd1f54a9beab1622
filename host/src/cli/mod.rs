//! The `weir` command line: `weir serve` and the operator commands `weir admin …`
//! (contract §1). Admin commands talk to Redis directly, print JSON on stdout, and exit
//! non-zero with a message on stderr when they fail.

mod admin;
mod serve;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use crate::config::{Config, LogFormat};
use crate::store::orgs::Plan;

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
}

#[derive(Debug, Subcommand)]
enum AdminCommand {
    /// Organisations (tenants).
    Org {
        #[command(subcommand)]
        command: OrgCommand,
    },
    /// API clients (OAuth 2.0 client credentials).
    Client {
        #[command(subcommand)]
        command: ClientCommand,
    },
    /// People who sign in to Settings > Webhooks.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
}

#[derive(Debug, Subcommand)]
enum UserCommand {
    /// Create a user; the password is read from standard input.
    Create {
        #[arg(long = "org", value_name = "ORG_ID")]
        org_id: String,
        #[arg(long)]
        email: String,
        /// May change webhooks (others may only look).
        #[arg(long)]
        admin: bool,
    },
    /// Users of an organisation (never a password hash).
    List {
        #[arg(long = "org", value_name = "ORG_ID")]
        org_id: String,
    },
}

#[derive(Debug, Subcommand)]
enum OrgCommand {
    /// Create an organisation.
    Create {
        #[arg(long)]
        name: String,
        #[arg(long, value_enum)]
        plan: PlanArg,
    },
    /// Change an organisation's plan.
    SetPlan {
        org_id: String,
        #[arg(long, value_enum)]
        plan: PlanArg,
    },
    /// Every organisation, oldest first.
    List,
    /// One organisation.
    Show { org_id: String },
}

#[derive(Debug, Subcommand)]
enum ClientCommand {
    /// Create an API client; its secret is printed once and stored only as a hash.
    Create {
        #[arg(long = "org", value_name = "ORG_ID")]
        org_id: String,
        #[arg(long)]
        name: String,
        /// May manage webhooks, deliveries and plugins.
        #[arg(long)]
        admin: bool,
        /// May publish events.
        #[arg(long)]
        publisher: bool,
    },
    /// Revoke a client; its tokens stop working at once.
    Revoke { client_id: String },
    /// Clients of an organisation (never a secret).
    List {
        #[arg(long = "org", value_name = "ORG_ID")]
        org_id: String,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum PlanArg {
    Free,
    Pro,
}

impl From<PlanArg> for Plan {
    fn from(p: PlanArg) -> Plan {
        match p {
            PlanArg::Free => Plan::Free,
            PlanArg::Pro => Plan::Pro,
        }
    }
}

/// The entry point of the `weir` binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match Config::load(cli.config.as_deref()) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("weir: configuration error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut builder = match config.runtime_threads {
        1 => tokio::runtime::Builder::new_current_thread(),
        n => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n);
            b
        }
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("weir: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match cli.command {
        Command::Serve => runtime.block_on(serve::serve(config)),
        Command::Admin { command } => runtime.block_on(admin::run(config, command)),
    }
}

/// Logging to stderr, filtered by `WEIR_LOG` (default `default`), as text (colours only on
/// a terminal) or one JSON object a line (`WEIR_LOG_FORMAT`).
fn init_logging(default: &str, format: LogFormat) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_env("WEIR_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).try_init(),
        // Fields at the top level, beside `timestamp`, `level`, `target` and `message`.
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).try_init(),
    };
}
