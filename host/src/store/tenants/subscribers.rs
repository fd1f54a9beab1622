//! The subscription index as publishing reads it: the active webhooks subscribed to an
//! action (`lua/subscriptions.lua` keeps the sets), their filters, and the organisation's
//! version they were read at.

use std::collections::HashMap;

use crate::store::core::base::Base;
use crate::store::error::Result;
use crate::store::error::StoreError;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Subscriptions {
    base: Base,
}

impl Subscriptions {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Subscriptions {
        Subscriptions { base: base.clone() }
    }
}

/// A webhook an event goes to, as the subscription index names it (`lua/subscriptions.lua`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Subscriber {
    pub webhook: String,
    /// Its deliveries keep their subject's order (`ordering: "subject"`).
    pub ordered: bool,
    /// Its filter, as written (the organisation's filters hash: `lua/webhook_save.lua`).
    pub filter: Option<String>,
}

impl Subscriber {
    /// A member of a subscription set: `wh_…`, or `wh_… subject` when ordered.
    fn of(member: &str) -> Subscriber {
        match member.split_once(' ') {
            Some((webhook, _)) => Subscriber { webhook: webhook.to_owned(), ordered: true, filter: None },
            None => Subscriber { webhook: member.to_owned(), ordered: false, filter: None },
        }
    }
}

/// The active webhooks subscribed to an action, and the organisation's version they were
/// read at (`store::versions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscribers {
    pub list: Vec<Subscriber>,
    pub version: u64,
}

impl Subscriptions {
    /// The active webhooks subscribed to each (organisation, action) pair, in one go (group
    /// commit of concurrent publishes), each with the organisation's version read before
    /// them (`store::versions`): one answer per pair, in order.
    pub async fn subscribers_of(&self, pairs: &[(String, String)]) -> Result<Vec<Result<Subscribers>>> {
        let pipes: Vec<redis::Pipeline> = pairs
            .iter()
            .map(|(org, action)| {
                let mut pipe = redis::pipe();
                pipe.get(self.base.keys().org_version(org));
                pipe.smembers(self.base.keys().subscribers(org, action));
                pipe.hgetall(self.base.keys().filters(org));
                pipe
            })
            .collect();
        let replies = self.base.conn().query_each(&pipes).await?;
        Ok(replies
            .into_iter()
            .zip(pairs)
            .map(|(reply, (org, action))| {
                let mut values = reply?.into_iter();
                let (version, members, filters) = (values.next(), values.next(), values.next());
                let version: Option<u64> =
                    redis::from_redis_value(version.unwrap_or(redis::Value::Nil)).map_err(|e| StoreError::Corrupt {
                        key: self.base.keys().org_version(org),
                        reason: e.to_string(),
                    })?;
                let members: Vec<String> =
                    redis::from_redis_value(members.unwrap_or(redis::Value::Nil)).map_err(|e| StoreError::Corrupt {
                        key: self.base.keys().subscribers(org, action),
                        reason: e.to_string(),
                    })?;
                let mut filters: HashMap<String, String> =
                    redis::from_redis_value(filters.unwrap_or(redis::Value::Nil)).map_err(|e| StoreError::Corrupt {
                        key: self.base.keys().filters(org),
                        reason: e.to_string(),
                    })?;
                let list = members
                    .iter()
                    .map(|m| {
                        let mut subscriber = Subscriber::of(m);
                        subscriber.filter = filters.remove(&subscriber.webhook);
                        subscriber
                    })
                    .collect();
                Ok(Subscribers { list, version: version.unwrap_or(0) })
            })
            .collect())
    }
}
