//! `weir admin …`: operator commands against the store, printing JSON.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use clap::Subcommand;

use super::filter_test::filter_test;
use super::logging::init_logging;
use crate::auth::{CLIENT_SECRET_PREFIX, secrets};
use crate::config::Config;
use crate::domain::filtering::Filtering;
use crate::domain::replay::{ReplayError, Replayer};
use crate::store::Store;
use crate::store::core::managed::ForCommand;

/// A failed admin command: the message for stderr.
#[derive(Debug, thiserror::Error)]
enum AdminError {
    #[error("{0}")]
    Usage(String),
    #[error("no organisation {0}")]
    NoOrg(String),
    #[error("no client {0}")]
    NoClient(String),
    #[error("a user with email {0} already exists")]
    EmailTaken(String),
    #[error("{0}")]
    Replay(String),
    #[error("{0}")]
    Store(#[from] crate::store::StoreError),
    #[error("{0}")]
    Managed(#[from] crate::store::core::managed::ManagedError),
}

#[derive(Debug, Subcommand)]
pub(super) enum AdminCommand {
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
    /// Webhooks.
    Webhook {
        #[command(subcommand)]
        command: WebhookCommand,
    },
    /// Sources: where providers deliver an organisation's incoming webhooks.
    Source {
        #[command(subcommand)]
        command: super::sources::SourceCommand,
    },
    /// Webhooks' filters (CEL expressions).
    Filter {
        #[command(subcommand)]
        command: FilterCommand,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum FilterCommand {
    /// Check a filter as saving it on a webhook would (exit 1 with the position of what is
    /// wrong) and, given an event's envelope, say whether it selects it (as `POST
    /// /api/v2/filters/test`). Needs no Redis.
    Test {
        /// The expression, e.g. 'creator.id in ["usr_1", "usr_2"]'.
        filter: String,
        /// A file holding the event's envelope (JSON, as delivered), or `-` for standard
        /// input.
        #[arg(long, value_name = "FILE")]
        event: Option<std::path::PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum WebhookCommand {
    /// Replay the events accepted in a window to a webhook (as `POST
    /// /api/v2/webhooks/{id}/replay`), waiting until every one is queued.
    Replay {
        webhook_id: String,
        #[arg(long = "org", value_name = "ORG_ID")]
        org_id: String,
        /// RFC 3339, within WEIR_EVENT_RETENTION.
        #[arg(long)]
        since: String,
        /// RFC 3339 (default: now).
        #[arg(long)]
        until: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum UserCommand {
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
pub(super) enum OrgCommand {
    /// Create an organisation.
    Create {
        #[arg(long)]
        name: String,
        /// A plan of the configuration (`[plans.<name>]`; shipped: free, pro).
        #[arg(long)]
        plan: String,
    },
    /// Change an organisation's plan.
    SetPlan {
        org_id: String,
        /// A plan of the configuration (`[plans.<name>]`; shipped: free, pro).
        #[arg(long)]
        plan: String,
    },
    /// Every organisation, oldest first.
    List,
    /// One organisation.
    Show { org_id: String },
    /// Where an organisation stands against its plan (as `GET /api/v2/usage`).
    Usage { org_id: String },
}

#[derive(Debug, Subcommand)]
pub(super) enum ClientCommand {
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

pub(super) async fn run(config: Config, command: AdminCommand) -> ExitCode {
    init_logging("warn", config.log_format);
    if let AdminCommand::Filter { command: FilterCommand::Test { filter, event } } = &command {
        return print(filter_test(filter, event.as_deref()).map_err(AdminError::Usage));
    }
    crate::service::install_crypto_provider();
    let mut config = config;
    let managed = match config.store_settings() {
        Some(_) => None,
        None if !config.managed_redis_dir().is_dir() => {
            eprintln!(
                "weir admin: {} (WEIR_DATA_DIR) holds no Weir data: {} does not exist. Refusing to start an \
                 empty Redis there; run `weir serve` with this WEIR_DATA_DIR first, or set WEIR_DATA_DIR \
                 (or WEIR_REDIS_URL) to the installation to manage.",
                config.data_dir.display(),
                config.managed_redis_dir().display()
            );
            return ExitCode::from(2);
        }
        None => match ForCommand::open(&config.managed_redis_dir()).await {
            Ok(managed) => {
                config.redis_url = Some(managed.url());
                Some(managed)
            }
            Err(e) => {
                eprintln!("weir admin: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let settings = config.store_settings();
    let result = match settings {
        Some(settings) => match Store::connect(&settings).await {
            Ok(store) => execute(&store, &config, command).await,
            Err(e) => Err(AdminError::Usage(format!("cannot reach Redis at {}: {e}", settings.target.describe()))),
        },
        None => Err(AdminError::Usage("no Redis to use".into())),
    };
    if let Some(managed) = managed {
        managed.close().await;
    }
    print(result)
}

fn print(result: Result<serde_json::Value, AdminError>) -> ExitCode {
    match result {
        Ok(value) => {
            println!("{value}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("weir admin: {e}");
            ExitCode::FAILURE
        }
    }
}

fn non_empty(what: &str, value: &str) -> Result<String, AdminError> {
    let trimmed = value.trim();
    if trimmed.is_empty() || trimmed.chars().count() > 200 {
        return Err(AdminError::Usage(format!("{what} must be 1 to 200 characters")));
    }
    Ok(trimmed.to_owned())
}

/// Refuses an organisation id that names no organisation (checked by shape first: ids
/// become parts of keys).
async fn known_org(store: &Store, org_id: &str) -> Result<(), AdminError> {
    if !crate::ids::is_valid(crate::ids::Kind::Org, org_id) || store.orgs().get_org(org_id).await?.is_none() {
        return Err(AdminError::NoOrg(org_id.to_owned()));
    }
    Ok(())
}

/// `weir admin webhook replay`: a replay run to its end.
async fn replay(
    store: &Store,
    config: &Config,
    (org_id, webhook_id): (&str, &str),
    (since, until): (String, Option<String>),
) -> Result<serde_json::Value, AdminError> {
    known_org(store, org_id).await?;
    let history = crate::history::History::configured(config, store.prefix())
        .map_err(|e| AdminError::Usage(format!("history in PostgreSQL: {e}")))?;
    let retentions = (config.delivery_retention, config.event_retention);
    let moved = crate::service::doors::moved(store, history.as_ref(), retentions);
    let filtering = Filtering::new(std::sync::Arc::new(crate::filters::Evaluator::new()), None);
    // No workers here to tell: the serving processes' find the work within their poll.
    let replayer = Replayer::new(crate::service::doors::replays(store), (&moved, &filtering), None, &config.plans);
    let mut body = serde_json::Map::new();
    body.insert("since".into(), json!(since));
    if let Some(until) = until {
        body.insert("until".into(), json!(until));
    }
    // To the end: an operator's command waits for its work.
    let done = replayer.request(org_id, webhook_id, body, Duration::from_secs(24 * 3600)).await;
    match done {
        Ok(view) => Ok(json!(view)),
        Err(ReplayError::Store(e)) => Err(e.into()),
        Err(ReplayError::Invalid(invalid)) => Err(AdminError::Replay(
            invalid.0.iter().map(|e| format!("--{} {}", e.field, e.message)).collect::<Vec<_>>().join("; "),
        )),
        Err(e) => Err(AdminError::Replay(format!("webhook {webhook_id}: {e}"))),
    }
}

/// `weir admin user create`: a person who signs in, the password read from standard input.
async fn create_user(store: &Store, org_id: &str, email: String, admin: bool) -> Result<serde_json::Value, AdminError> {
    let email = email.trim().to_owned();
    let valid = email.len() <= crate::store::tenants::users::MAX_EMAIL_BYTES
        && email.split_once('@').is_some_and(|(local, domain)| !local.is_empty() && domain.contains('.'))
        && !email.chars().any(|c| c.is_whitespace() || c.is_control());
    if !valid {
        return Err(AdminError::Usage(format!("--email `{email}` is not an email address")));
    }
    known_org(store, org_id).await?;
    let mut password = String::new();
    std::io::stdin()
        .read_line(&mut password)
        .map_err(|e| AdminError::Usage(format!("cannot read the password from standard input: {e}")))?;
    let password = password.trim_end_matches(['\n', '\r']);
    if password.chars().count() < crate::auth::passwords::MIN_LENGTH {
        return Err(AdminError::Usage(format!(
            "the password (standard input) must be at least {} characters",
            crate::auth::passwords::MIN_LENGTH
        )));
    }
    let hash =
        crate::auth::passwords::hash(password).ok_or_else(|| AdminError::Usage("cannot hash the password".into()))?;
    let user = store.users().create_user(org_id, &email, admin, &hash).await?.ok_or(AdminError::EmailTaken(email))?;
    Ok(json!(user))
}

async fn execute(store: &Store, config: &Config, command: AdminCommand) -> Result<serde_json::Value, AdminError> {
    match command {
        // (Answered before Redis is reached, by `run`; the same here.)
        AdminCommand::Filter { command: FilterCommand::Test { filter, event } } => {
            filter_test(&filter, event.as_deref()).map_err(AdminError::Usage)
        }
        AdminCommand::Webhook { command: WebhookCommand::Replay { webhook_id, org_id, since, until } } => {
            replay(store, config, (&org_id, &webhook_id), (since, until)).await
        }
        AdminCommand::Org { command: OrgCommand::Create { name, plan } } => {
            let plan = super::plans::configured(config, &plan).map_err(AdminError::Usage)?;
            let org = store.orgs().create_org(&non_empty("--name", &name)?, plan).await?;
            Ok(super::plans::org_view(config, &org))
        }
        AdminCommand::Org { command: OrgCommand::SetPlan { org_id, plan } } => {
            let plan = super::plans::configured(config, &plan).map_err(AdminError::Usage)?;
            known_org(store, &org_id).await?;
            let org = store.plan_changes().set_org_plan(&org_id, plan).await?.ok_or(AdminError::NoOrg(org_id))?;
            Ok(super::plans::org_view(config, &org))
        }
        AdminCommand::Client { command: ClientCommand::Create { org_id, name, admin, publisher } } => {
            let name = non_empty("--name", &name)?;
            known_org(store, &org_id).await?;
            let secret = secrets::generate(CLIENT_SECRET_PREFIX);
            let client =
                store.clients().create_client(&org_id, &name, admin, publisher, &secrets::hash(&secret)).await?;
            Ok(json!({
                "client_id": client.client_id,
                "client_secret": secret,
                "org_id": client.org_id,
                "name": client.name,
                "admin": client.admin,
                "publisher": client.publisher,
            }))
        }
        AdminCommand::User { command: UserCommand::Create { org_id, email, admin } } => {
            create_user(store, &org_id, email, admin).await
        }
        AdminCommand::Source { command } => {
            known_org(store, command.org_id()).await?;
            Ok(super::sources::execute(store, command).await?)
        }
        AdminCommand::Org { command: OrgCommand::List } => {
            let orgs = store.orgs().list_orgs().await?;
            Ok(serde_json::Value::Array(orgs.iter().map(|o| super::plans::org_view(config, o)).collect()))
        }
        AdminCommand::Org { command: OrgCommand::Show { org_id } } => {
            known_org(store, &org_id).await?;
            Ok(super::plans::org_view(config, &store.orgs().get_org(&org_id).await?.ok_or(AdminError::NoOrg(org_id))?))
        }
        AdminCommand::Org { command: OrgCommand::Usage { org_id } } => {
            known_org(store, &org_id).await?;
            Ok(json!(crate::service::doors::usage(store, &config.plans).of(&org_id).await?))
        }
        AdminCommand::Client { command: ClientCommand::List { org_id } } => {
            known_org(store, &org_id).await?;
            Ok(json!(store.clients().list_clients(&org_id).await?))
        }
        AdminCommand::User { command: UserCommand::List { org_id } } => {
            known_org(store, &org_id).await?;
            Ok(json!(store.users().list_users(&org_id).await?))
        }
        AdminCommand::Client { command: ClientCommand::Revoke { client_id } } => {
            if !crate::ids::is_valid(crate::ids::Kind::Client, &client_id)
                || !store.clients().revoke_client(&client_id).await?
            {
                return Err(AdminError::NoClient(client_id));
            }
            Ok(json!({"client_id": client_id, "revoked": true}))
        }
    }
}
