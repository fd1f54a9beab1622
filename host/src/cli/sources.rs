//! `weir admin source …`: an organisation's sources as an operator looks at them — never a
//! secret nor an ingest URL (those are the organisation's), with how their latest requests
//! went.

use clap::Subcommand;
use serde_json::json;

use crate::store::{Store, StoreError};

#[derive(Debug, Subcommand)]
pub(super) enum SourceCommand {
    /// An organisation's sources, newest first, with the outcomes of their latest requests.
    List {
        #[arg(long = "org", value_name = "ORG_ID")]
        org_id: String,
    },
}

impl SourceCommand {
    /// The organisation it is about (the caller checks it is one).
    pub(super) fn org_id(&self) -> &str {
        let SourceCommand::List { org_id } = self;
        org_id
    }
}

pub(super) async fn execute(store: &Store, command: SourceCommand) -> Result<serde_json::Value, StoreError> {
    let SourceCommand::List { org_id } = command;
    let records = store.sources();
    let listings = store.source_requests();
    let (sources, _) = records.list(&org_id, None, 100).await?;
    let mut out = Vec::with_capacity(sources.len());
    for source in sources {
        let requests = listings.latest(&org_id, &source.id).await?;
        let count = |outcome: &str| requests.iter().filter(|r| r.outcome == outcome).count();
        out.push(json!({
            "id": source.id,
            "name": source.name,
            "type": source.kind,
            "created_at": source.created_at,
            "latest_requests": {
                "accepted": count("accepted"),
                "duplicate": count("duplicate"),
                "rejected": count("rejected"),
                "last_at": requests.first().map(|r| r.received_at.clone()),
            },
        }));
    }
    Ok(serde_json::Value::Array(out))
}
