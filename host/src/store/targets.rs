//! What a delivery attempt needs of its webhook, read for a batch of attempts at once
//! (`HMGET` of a few fields, not the whole hash).

use super::webhooks::previous_secret;
use super::{Result, Store, StoreError};

/// What an attempt needs of its webhook.
#[derive(Debug, Clone, Default)]
pub struct WebhookTarget {
    pub active: bool,
    pub url: String,
    pub signing_secret: String,
    /// The previous secret and when its grace period ends (ms).
    pub previous_secret: Option<(String, u64)>,
    /// Attachments (JSON), as stored.
    pub plugins: Option<String>,
    /// The webhook has a failure streak (a success must end it).
    pub failing: bool,
}

impl Store {
    /// What attempts need of several webhooks (`None` for one that is gone), read together.
    pub async fn webhook_targets(&self, webhooks: &[(&str, &str)]) -> Result<Vec<Option<WebhookTarget>>> {
        let reads = webhooks.iter().map(|&(org, id)| async move {
            let fields: Vec<Option<String>> = redis::cmd("HMGET")
                .arg(self.keys().webhook(org, id))
                .arg("active")
                .arg("url")
                .arg("signing_secret")
                .arg("plugins")
                .arg("fail_count")
                .arg("previous_secret")
                .arg("previous_secret_expires")
                .query_async(&mut self.conn())
                .await?;
            let Ok([active, url, signing_secret, plugins, fail_count, previous, expires]) =
                <[Option<String>; 7]>::try_from(fields)
            else {
                return Ok(None);
            };
            Ok::<_, StoreError>(url.map(|url| WebhookTarget {
                active: active.as_deref() == Some("1"),
                url,
                signing_secret: signing_secret.unwrap_or_default(),
                previous_secret: previous_secret(previous, expires.as_deref(), crate::time::now_millis()),
                plugins,
                failing: fail_count.is_some_and(|c| c != "0"),
            }))
        });
        futures_util::future::try_join_all(reads).await
    }
}
