//! The ready stream and its neighbours: reading work, taking over a dead worker's work,
//! keeping held work alive, parking and unparking, and moving due retries.

use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::streams::{StreamAutoClaimReply, StreamId, StreamReadOptions, StreamReadReply};
use redis::{AsyncCommands, RedisError, Value};

use super::{GROUP, PARK, Queue, REQUEUE, SCHEDULE, UNPARK};
use crate::store::Result;

/// One stream entry: a delivery to attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The stream entry id (acknowledged once the outcome is recorded).
    pub id: String,
    pub delivery: String,
    pub webhook: String,
}

impl Entry {
    fn from_stream(item: &StreamId) -> Option<Entry> {
        let field = |name: &str| match item.map.get(name) {
            Some(Value::BulkString(bytes)) => String::from_utf8(bytes.clone()).ok(),
            Some(Value::SimpleString(s)) => Some(s.clone()),
            _ => None,
        };
        Some(Entry { id: item.id.clone(), delivery: field("d")?, webhook: field("w")? })
    }
}

fn is_nogroup(e: &RedisError) -> bool {
    e.code() == Some("NOGROUP")
}

/// Stream ids `ms-seq`, compared numerically.
fn parse_id(id: &str) -> (u64, u64) {
    let (ms, seq) = id.split_once('-').unwrap_or((id, "0"));
    (ms.parse().unwrap_or(0), seq.parse().unwrap_or(0))
}

fn older(a: &str, b: &str) -> bool {
    parse_id(a) < parse_id(b)
}

/// The smallest id after `id`.
fn next_id(id: &str) -> String {
    let (ms, seq) = parse_id(id);
    format!("{ms}-{}", seq + 1)
}

impl Queue {
    /// Creates the consumer group (and the stream) if missing. Reading from the start (`0`)
    /// means entries already in a stream whose group was lost are delivered, not skipped.
    pub async fn ensure_group(&self) -> Result<()> {
        let created: std::result::Result<(), RedisError> =
            self.store.conn().xgroup_create_mkstream(&self.ready, GROUP, "0").await;
        match created {
            Ok(()) => Ok(()),
            Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Reads up to `count` new entries for `consumer`, waiting up to `block` for some.
    /// `conn` is a dedicated connection: a blocking read would stall a shared one.
    pub async fn fetch(
        &self,
        conn: &mut ConnectionManager,
        consumer: &str,
        count: usize,
        block: Duration,
    ) -> Result<Vec<Entry>> {
        let options =
            StreamReadOptions::default().group(GROUP, consumer).count(count).block(block.as_millis() as usize);
        let read: std::result::Result<Option<StreamReadReply>, RedisError> =
            conn.xread_options(&[&self.ready], &[">"], &options).await;
        let reply = match read {
            Ok(reply) => reply,
            Err(e) if is_nogroup(&e) => {
                tracing::warn!(
                    "the ready stream's consumer group is missing (Redis restarted empty?); creating it again"
                );
                self.ensure_group().await?;
                return Ok(Vec::new());
            }
            Err(e) => return Err(e.into()),
        };
        Ok(reply
            .map(|r| r.keys.iter().flat_map(|k| k.ids.iter().filter_map(Entry::from_stream)).collect())
            .unwrap_or_default())
    }

    /// Takes over entries idle for at least `min_idle` (their worker died), up to `count`.
    /// Entries whose stream record was deleted meanwhile are dropped from the PEL.
    pub async fn reclaim(&self, consumer: &str, min_idle: Duration, count: usize) -> Result<Vec<Entry>> {
        let reply: std::result::Result<StreamAutoClaimReply, RedisError> = redis::cmd("XAUTOCLAIM")
            .arg(&self.ready)
            .arg(GROUP)
            .arg(consumer)
            .arg(min_idle.as_millis() as u64)
            .arg("0-0")
            .arg("COUNT")
            .arg(count)
            .query_async(&mut self.store.conn())
            .await;
        match reply {
            Ok(reply) => Ok(reply.claimed.iter().filter_map(Entry::from_stream).collect()),
            Err(e) if is_nogroup(&e) => {
                self.ensure_group().await?;
                Ok(Vec::new())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Resets the idle time of entries this worker holds, so no one takes them over.
    pub async fn heartbeat(&self, consumer: &str, ids: &[String]) -> Result<()> {
        for chunk in ids.chunks(500) {
            let mut cmd = redis::cmd("XCLAIM");
            cmd.arg(&self.ready).arg(GROUP).arg(consumer).arg(0);
            for id in chunk {
                cmd.arg(id);
            }
            cmd.arg("JUSTID");
            let _: Value = cmd.query_async(&mut self.store.conn()).await?;
        }
        Ok(())
    }

    /// Acknowledges an entry whose work needs no record (stale or duplicate).
    pub async fn ack(&self, entry: &Entry) -> Result<()> {
        let _: i64 = self.store.conn().xack(&self.ready, GROUP, &[&entry.id]).await?;
        Ok(())
    }

    /// Deletes acknowledged entries from the stream: everything older than both the
    /// oldest entry still pending and the first entry not yet read. Acknowledging does not
    /// delete (that would be one more write per delivery); this runs every few seconds.
    pub async fn trim(&self) -> Result<()> {
        let mut conn = self.store.conn();
        let groups: std::result::Result<redis::streams::StreamInfoGroupsReply, RedisError> =
            conn.xinfo_groups(&self.ready).await;
        let Ok(groups) = groups else { return Ok(()) };
        let Some(group) = groups.groups.iter().find(|g| g.name == GROUP) else { return Ok(()) };
        let pending: redis::streams::StreamPendingReply = conn.xpending(&self.ready, GROUP).await?;
        let oldest_pending = match &pending {
            redis::streams::StreamPendingReply::Data(data) => Some(data.start_id.clone()),
            _ => None,
        };
        // Entries up to `last_delivered_id` were read; the first unread one is just after.
        let first_unread = next_id(&group.last_delivered_id);
        let bound = match oldest_pending {
            Some(p) if older(&p, &first_unread) => p,
            _ => first_unread,
        };
        let _: i64 =
            redis::cmd("XTRIM").arg(&self.ready).arg("MINID").arg("~").arg(bound).query_async(&mut conn).await?;
        Ok(())
    }

    /// Moves an entry to its webhook's parked list (the webhook is at its in-flight cap).
    pub async fn park(&self, entry: &Entry) -> Result<()> {
        let _: i64 = PARK
            .key(&self.ready)
            .key(self.parked_list(&entry.webhook))
            .key(&self.parked)
            .arg(GROUP)
            .arg(&entry.id)
            .arg(&entry.delivery)
            .arg(&entry.webhook)
            .invoke_async(&mut self.store.conn())
            .await?;
        Ok(())
    }

    /// Moves up to `count` parked deliveries of `webhook` back to the stream.
    pub async fn unpark(&self, webhook: &str, count: usize) -> Result<usize> {
        let moved: usize = UNPARK
            .key(self.parked_list(webhook))
            .key(&self.parked)
            .key(&self.ready)
            .arg(webhook)
            .arg(count)
            .invoke_async(&mut self.store.conn())
            .await?;
        Ok(moved)
    }

    /// Webhooks that have parked deliveries.
    pub async fn parked_webhooks(&self) -> Result<Vec<String>> {
        Ok(self.store.conn().smembers(&self.parked).await?)
    }

    /// Gives held entries back to the stream for other workers (on shutdown).
    pub async fn requeue(&self, entries: &[Entry]) -> Result<()> {
        for chunk in entries.chunks(300) {
            let mut invocation = REQUEUE.key(&self.ready);
            invocation.arg(GROUP);
            for e in chunk {
                invocation.arg(&e.id).arg(&e.delivery).arg(&e.webhook);
            }
            let _: i64 = invocation.invoke_async(&mut self.store.conn()).await?;
        }
        Ok(())
    }

    /// Moves due retries to the stream; returns how many moved and when the next is due.
    pub async fn move_due(&self, now_ms: u64, max: usize) -> Result<(usize, Option<u64>)> {
        let (moved, next): (usize, i64) = SCHEDULE
            .key(&self.scheduled)
            .key(&self.ready)
            .arg(self.store.prefix())
            .arg(now_ms)
            .arg(max)
            .invoke_async(&mut self.store.conn())
            .await?;
        Ok((moved, u64::try_from(next).ok()))
    }

    /// Deliveries ready now (not yet read, or being worked on) and scheduled retries.
    pub async fn depth(&self) -> Result<(u64, u64)> {
        let mut conn = self.store.conn();
        let scheduled: u64 = conn.zcard(&self.scheduled).await?;
        let groups: std::result::Result<redis::streams::StreamInfoGroupsReply, RedisError> =
            conn.xinfo_groups(&self.ready).await;
        let ready = match groups {
            Ok(g) => g.groups.iter().find(|g| g.name == GROUP).map_or(0, |g| (g.pending + g.lag.unwrap_or(0)) as u64),
            Err(_) => 0,
        };
        Ok((ready, scheduled))
    }

    /// Forgets consumers that left nothing pending and have been idle longer than `idle`
    /// (processes that ended), so the group does not grow without bound.
    pub async fn forget_idle_consumers(&self, idle: Duration) -> Result<usize> {
        let info: redis::streams::StreamInfoConsumersReply =
            match self.store.conn().xinfo_consumers(&self.ready, GROUP).await {
                Ok(info) => info,
                Err(e) if is_nogroup(&e) => return Ok(0),
                Err(e) => return Err(e.into()),
            };
        let mut removed = 0;
        for consumer in info.consumers {
            if consumer.pending == 0 && consumer.idle as u128 > idle.as_millis() {
                let _: i64 = redis::cmd("XGROUP")
                    .arg("DELCONSUMER")
                    .arg(&self.ready)
                    .arg(GROUP)
                    .arg(&consumer.name)
                    .query_async(&mut self.store.conn())
                    .await?;
                removed += 1;
            }
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_ids_compare_numerically() {
        assert!(older("9-5", "10-0"));
        assert!(older("10-2", "10-10"));
        assert!(!older("10-10", "10-10"));
        assert_eq!(next_id("1700000000000-7"), "1700000000000-8");
        assert_eq!(next_id("0-0"), "0-1");
    }
}
