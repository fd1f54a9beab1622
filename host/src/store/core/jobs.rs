//! The lease queues of background jobs (report exports to build, replays to go on with):
//! a sorted set of job ids by when each is due or its lease ends (`lua/claim_jobs.lua`). A
//! worker claims what is due, leasing it; renews the lease while it works; and removes the
//! job when nothing is left to do. A worker that dies leaves its lease to run out, and
//! another takes the job over. One set per kind ([`JobQueue`]); `crate::jobs` runs them.

use std::time::Duration;

use redis::AsyncCommands;

use crate::store::core::base::Base;
use crate::store::core::scripts::CLAIM_JOBS;
use crate::store::error::Result;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Jobs {
    base: Base,
}

impl Jobs {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Jobs {
        Jobs { base: base.clone() }
    }
}

/// A kind of background job, and its queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobQueue {
    /// Report exports to build (and publish).
    Exports,
    /// Replays left to the background, or whose process died.
    Replays,
    /// Partitions whose ended deliveries and accepted events move to history (members are
    /// partition numbers; a mover takes each in turn).
    History,
}

impl Jobs {
    fn job_queue(&self, queue: JobQueue) -> String {
        match queue {
            JobQueue::Exports => self.base.keys().export_jobs(),
            JobQueue::Replays => self.base.keys().replay_jobs(),
            JobQueue::History => self.base.keys().history_jobs(),
        }
    }

    /// Makes each of `ids` a job of `queue` unless it is one already (due at once).
    pub async fn ensure_jobs(&self, queue: JobQueue, ids: &[String]) -> Result<()> {
        let mut cmd = redis::cmd("ZADD");
        cmd.arg(self.job_queue(queue)).arg("NX");
        for id in ids {
            cmd.arg(0).arg(id);
        }
        let _: i64 = cmd.query_async(&mut self.base.conn()).await?;
        Ok(())
    }

    /// Claims up to `n` jobs that are due (or whose lease ran out), leased for `lease`.
    pub async fn claim_jobs(&self, queue: JobQueue, n: usize, lease: Duration) -> Result<Vec<String>> {
        let now = crate::time::now_millis();
        CLAIM_JOBS
            .call()
            .key(&self.job_queue(queue))
            .arg(now)
            .arg(now + lease.as_millis() as u64)
            .arg(n)
            .run(&mut self.base.conn())
            .await
    }

    /// Keeps a claimed job leased for `lease` more (zero: due at once for any worker).
    pub async fn renew_job(&self, queue: JobQueue, id: &str, lease: Duration) -> Result<()> {
        let until = crate::time::now_millis() + lease.as_millis() as u64;
        let _: i64 = redis::cmd("ZADD")
            .arg(self.job_queue(queue))
            .arg("XX")
            .arg(until)
            .arg(id)
            .query_async(&mut self.base.conn())
            .await?;
        Ok(())
    }

    /// A job needs no more work.
    pub async fn job_done(&self, queue: JobQueue, id: &str) -> Result<()> {
        let _: i64 = self.base.conn().zrem(self.job_queue(queue), id).await?;
        Ok(())
    }
}
