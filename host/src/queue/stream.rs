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

    /// Acknowledges and deletes an entry whose work needs no record (stale or duplicate).
    pub async fn ack(&self, entry: &Entry) -> Result<()> {
        redis::pipe()
            .xack(&self.ready, GROUP, &[&entry.id])
            .ignore()
            .xdel(&self.ready, &[&entry.id])
            .ignore()
            .query_async::<()>(&mut self.store.conn())
            .await?;
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

    /// Entries in the ready stream (including those being worked on) and scheduled retries.
    pub async fn depth(&self) -> Result<(u64, u64)> {
        let (ready, scheduled): (u64, u64) =
            redis::pipe().xlen(&self.ready).zcard(&self.scheduled).query_async(&mut self.store.conn()).await?;
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
