//! Whether history already has an event id: asked for every event published with an id of
//! the publisher's (an id already accepted creates nothing new, contract §5, also once its
//! event moved). One question per publish would cost PostgreSQL a statement each (~150 µs
//! of its CPU on the bench's load); instead the questions that arrive while one statement
//! is in flight go together in the next (group commit, as `store::core::batch` does for
//! Redis), in one prepared statement on a connection of the task's own, which reads only
//! the primary key's index.

use std::collections::HashSet;
use std::sync::{Arc, Weak};

use tokio::sync::{mpsc, oneshot};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Statement};

use super::db::{History, KnownAsk as Ask};
use super::error::HistoryError;
use crate::store::core::keys::day_of;

/// History's part that this file holds (a view: it borrows the handle).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Known<'a>(&'a History);

impl<'a> Known<'a> {
    /// This part of `history` for `history`.
    pub(crate) fn of(history: &'a History) -> Self {
        Known(history)
    }
}

/// The most ids one statement asks about.
const MAX: usize = 1024;

impl Known<'_> {
    /// Whether history has the event of `digest` (`store::core::keys::event_digest`),
    /// accepted within the last `days` days.
    pub(crate) async fn event_known(&self, digest: [u8; 16], days: u32) -> Result<bool, HistoryError> {
        let asks = self.0.known.get_or_init(|| start(self.0.me.clone(), days));
        let (reply, answer) = oneshot::channel();
        let stopped = || HistoryError::Unavailable("the process is stopping".to_owned());
        asks.send((digest, reply)).map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    /// Which of `digests` history has, accepted on a day from `oldest` to `newest`, asked
    /// on the task's own connection with its statement prepared once (PostgreSQL plans a
    /// statement over every day's partition: a generic plan saves that each time).
    async fn known_digests(
        &self,
        session: &mut Option<(Client, Statement, Vec<u32>)>,
        digests: &[[u8; 16]],
        oldest: u32,
        newest: u32,
    ) -> Result<HashSet<[u8; 16]>, HistoryError> {
        let classes = self.0.classes();
        if session.as_ref().is_none_or(|(client, _, prepared_for)| client.is_closed() || *prepared_for != classes) {
            self.0.migrate().await?;
            let client = self.0.connect().await?;
            // Every retention class's days (`super::classes`); prepared again when one is added.
            let sql = format!(
                "SELECT DISTINCT digest FROM {s}.events WHERE digest = ANY($1) AND {within}",
                s = self.0.schema,
                within = super::classes::day_within(&classes, "$2", "$3"),
            );
            let statement =
                self.0.timed(client.prepare_typed(&sql, &[Type::BYTEA_ARRAY, Type::INT4, Type::INT4])).await?;
            *session = Some((client, statement, classes));
        }
        let Some((client, statement, _)) = session.as_ref() else { return Ok(HashSet::new()) };
        let wanted: Vec<&[u8]> = digests.iter().map(<[u8; 16]>::as_slice).collect();
        let (oldest, newest) = (oldest as i32, newest as i32);
        let rows = self.0.timed(client.query(statement, &[&wanted, &oldest, &newest])).await;
        if rows.is_err() {
            // Reconnected and prepared again next time (the server may have restarted).
            *session = None;
        }
        Ok(rows?.iter().filter_map(|r| r.get::<_, &[u8]>(0).try_into().ok()).collect())
    }
}

/// The task answering the questions, in batches of what waits; it ends with its history.
fn start(history: Weak<History>, days: u32) -> mpsc::UnboundedSender<Ask> {
    let (asks, mut waiting) = mpsc::unbounded_channel::<Ask>();
    tokio::spawn(async move {
        let mut batch = Vec::with_capacity(MAX);
        let mut session = None;
        while waiting.recv_many(&mut batch, MAX).await > 0 {
            let Some(history) = history.upgrade() else { return };
            answer(&history, &mut session, days, std::mem::take(&mut batch)).await;
        }
    });
    asks
}

async fn answer(
    history: &Arc<History>,
    session: &mut Option<(Client, Statement, Vec<u32>)>,
    days: u32,
    batch: Vec<Ask>,
) {
    let today = day_of(crate::time::now_millis());
    let digests: Vec<[u8; 16]> = batch.iter().map(|(d, _)| *d).collect();
    let found = Known::of(history).known_digests(session, &digests, today.saturating_sub(days), today + 1).await;
    for (digest, reply) in batch {
        let _ = reply.send(found.as_ref().map(|f| f.contains(&digest)).map_err(Clone::clone));
    }
}
