//! Sources (contract §10): what Weir checks of a webhook a provider sends it. One module per
//! provider kind behind one seam ([`Provider`]: its signature rule, its delivery id, its
//! event's action) and one line each in [`KINDS`], with the field table of the settings a kind
//! takes (`hmac`, `basic`, `api_key`); `forward` is the form a source's request takes as an
//! event, and what its deliveries send back out.
//!
//! Nothing here keeps state or speaks to the store: the domain (`crate::domain::sources`)
//! reads a source, hands its secrets here, and stores what is accepted.

pub(crate) mod forward;
mod generic;
mod github;
pub(crate) mod inbound;
mod provider;
mod shopify;
mod slack;
mod standard;
mod stripe;
mod twilio;

#[cfg(test)]
mod tests;

pub(crate) use self::inbound::{Algorithm, Encoding, Inbound, Key, Refusal, Scheme, body_digest};
pub(crate) use self::provider::{GENERIC_ACTION, Provider};
use crate::kinds::{Field, Rule, Secret, Table};

/// Where a kind's secret comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SecretFrom {
    /// The request's `secret` (required).
    Secret,
    /// A secret field of the kind's settings object (`basic.password`, `api_key.key`).
    Setting(&'static str),
    /// It has none.
    Nothing,
}

/// A kind of source as the API names it (`type`).
#[derive(Debug)]
pub(crate) struct SourceKind {
    pub name: &'static str,
    /// The fields of its settings object (named as the kind), when it takes one.
    pub table: Table,
    pub secret: SecretFrom,
    pub provider: &'static dyn Provider,
}

const NO_FIELDS: &[Field] = &[];
const HEADER: Rule = Rule::Text { max: 100, empty: false };

const HMAC_FIELDS: &[Field] = &[
    Field::new("header", "Header", HEADER).required().help("The header holding the signature").example("X-Signature"),
    Field::new("algorithm", "Algorithm", Rule::Text { max: 6, empty: false }).help("sha256 (default), sha1 or sha512"),
    Field::new("encoding", "Encoding", Rule::Text { max: 6, empty: false }).help("hex (default) or base64"),
    Field::new("prefix", "Prefix", Rule::Text { max: 32, empty: true })
        .help("Text before the signature, as sha256=")
        .example("sha256="),
];

const BASIC_FIELDS: &[Field] = &[
    Field::new("username", "User name", Rule::Text { max: 200, empty: false }).required(),
    Field::new("password", "Password", Rule::Text { max: 1024, empty: false }).required().secret(Secret::Whole),
];

const API_KEY_FIELDS: &[Field] = &[
    Field::new("header", "Header", HEADER).required().help("The header holding the key").example("X-Api-Key"),
    Field::new("key", "Key", Rule::Text { max: 1024, empty: false }).required().secret(Secret::Whole),
];

const fn provider(
    name: &'static str,
    label: &'static str,
    help: &'static str,
    provider: &'static dyn Provider,
) -> SourceKind {
    SourceKind { name, table: Table { label, help, fields: NO_FIELDS }, secret: SecretFrom::Secret, provider }
}

/// Every kind of source, in the order forms list them.
pub(crate) const KINDS: &[SourceKind] = &[
    provider(
        "stripe",
        "Stripe",
        "The endpoint's signing secret (whsec_…), checked against Stripe-Signature",
        &stripe::Stripe,
    ),
    provider("github", "GitHub", "The webhook's secret, checked against X-Hub-Signature-256", &github::GitHub),
    provider("shopify", "Shopify", "The app's client secret, checked against X-Shopify-Hmac-Sha256", &shopify::Shopify),
    provider("slack", "Slack", "The app's signing secret, checked against X-Slack-Signature", &slack::Slack),
    provider("twilio", "Twilio", "The account's auth token, checked against X-Twilio-Signature", &twilio::Twilio),
    provider(
        "standard_webhooks",
        "Standard Webhooks",
        "The sender's secret (whsec_…), checked against webhook-signature",
        &standard::StandardWebhooks,
    ),
    SourceKind {
        name: "hmac",
        table: Table { label: "HMAC", help: "An HMAC of the body under the secret, in a header", fields: HMAC_FIELDS },
        secret: SecretFrom::Secret,
        provider: &generic::GenericHmac,
    },
    SourceKind {
        name: "basic",
        table: Table { label: "Basic auth", help: "HTTP Basic credentials", fields: BASIC_FIELDS },
        secret: SecretFrom::Setting("password"),
        provider: &generic::Basic,
    },
    SourceKind {
        name: "api_key",
        table: Table { label: "API key", help: "A key in a header", fields: API_KEY_FIELDS },
        secret: SecretFrom::Setting("key"),
        provider: &generic::ApiKey,
    },
    SourceKind {
        name: "none",
        table: Table { label: "None", help: "Anyone who has the URL", fields: NO_FIELDS },
        secret: SecretFrom::Nothing,
        provider: &generic::Open,
    },
];

/// The kind named `name`.
pub(crate) fn kind(name: &str) -> Option<&'static SourceKind> {
    KINDS.iter().find(|k| k.name == name)
}

/// What a verified request is: the id duplicates are told apart by (the provider's delivery
/// id, else the body's SHA-256) and its action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Named {
    pub dedup_id: String,
    pub action: String,
}

impl SourceKind {
    /// Verifies `request` with `key`; its name when it passes.
    pub(crate) fn accept(&self, request: &Inbound<'_>, key: &Key<'_>) -> Result<Named, Refusal> {
        self.provider.verify(request, key)?;
        let dedup_id = match self.provider.delivery_id(request) {
            Some(id) => format!("id:{id}"),
            None => body_digest(request.body),
        };
        let action = self.provider.action(request).filter(|a| !a.is_empty()).unwrap_or_else(|| GENERIC_ACTION.into());
        Ok(Named { dedup_id, action: action.chars().take(200).collect() })
    }
}
