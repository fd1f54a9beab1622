//! Delivery records and reading them (the queue, `store::queue`, changes them).
//!
//! A delivery is a hash in its partition, with one-letter fields (there is one per
//! delivery, kept for `WEIR_DELIVERY_RETENTION`):
//!
//! | field | holds | written by |
//! |---|---|---|
//! | `o`, `w`, `e`, `a` | organisation, webhook, event id, action | publish |
//! | `n` | attempts started (counted when each starts) | claim |
//! | `s` | status once final (absent while pending) | record, retry, webhook off |
//! | `x` | attempts, a JSON array of `[at, status_code, duration_ms, error, response_body]`, `at` in ms after the delivery was made (its id's time) | record |
//! | `l` | number of the latest recorded attempt; `g` its signatures (`delivery::sign::Signatures`: the MACs, raw bytes) | record |
//! | `q` | when the next attempt is due (ms) while a retry waits | record, retry |
//! | `k` | the last place in the retry schedule allowed (set by a manual retry) | retry |
//! | `v` | manual extra attempts made while a retry waited (they take no place in the schedule) | retry |
//! | `m` | the time the waiting retry was due, kept by such an extra attempt until it is recorded | retry, record |
//! | `b`, `h`, `p` | once plugins ran: the rendered body (absent: the envelope), extra headers, plugin outcomes | record |
//! | `r` | why it was dead-lettered | dead letter |
//! | `u` | last change without an attempt (ms); else the latest attempt's end is | record, retry |
//!
//! `created_at` is the time in the delivery's id; the request's other headers follow from
//! the record and the event, so they are not stored.
//!
//! A **plain** record holds exactly `o w e a n`: publish writes four fields, the first load
//! adds `n`, and every other writer adds at least one field of its own and removes none of
//! these. So a record of [`PLAIN_RECORD_FIELDS`] fields is pending and was never recorded,
//! and `load.lua` and `record.lua` tell it by its length (`HLEN`) without reading it (most
//! records are plain when first attempted). A writer that breaks this rule must change it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

pub use super::attempts::attempt_json;
use super::attempts::{attempt_at, attempt_object};
use super::events::StoredEvent;
use super::keys::Partition;
use super::{Result, Store};
use crate::delivery::sign;
use crate::ids::{self, Kind};

/// How many fields a plain record (see above) has: `o w e a` and `n`.
pub const PLAIN_RECORD_FIELDS: usize = 5;

/// A delivery's status (contract §2), shared by the queue and the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Succeeded,
    Failed,
    Filtered,
    Cancelled,
}

impl Status {
    pub fn parse(text: &str) -> Option<Status> {
        Some(match text {
            "pending" => Status::Pending,
            "succeeded" => Status::Succeeded,
            "failed" => Status::Failed,
            "filtered" => Status::Filtered,
            "cancelled" => Status::Cancelled,
            _ => return None,
        })
    }

    /// The status a record's `s` field says: absent or empty is `pending`; `None` when it
    /// cannot be read.
    pub fn stored(s: Option<&str>) -> Option<Status> {
        s.filter(|s| !s.is_empty()).map_or(Some(Status::Pending), Status::parse)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Succeeded => "succeeded",
            Status::Failed => "failed",
            Status::Filtered => "filtered",
            Status::Cancelled => "cancelled",
        }
    }
}

/// The request of a delivery: the exact headers of its latest attempt and the body.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = DeliveryRequest)]
pub struct Request {
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub headers: Box<RawValue>,
    pub body: String,
}

/// A delivery record as the API shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Delivery {
    pub id: String,
    pub webhook_id: String,
    pub event_id: String,
    pub action: String,
    pub status: Status,
    #[schema(value_type = Vec<crate::api::openapi::Attempt>)]
    pub attempts: Vec<Value>,
    pub next_attempt_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    pub request: Request,
    #[schema(value_type = Vec<crate::api::openapi::PluginRun>)]
    pub plugins: Box<RawValue>,
    /// Why the delivery was taken out of the queue without an outcome (a record that could
    /// not be read); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip)]
    #[schema(ignore)]
    pub org_id: String,
}

/// A JSON field of a record; one that cannot be parsed reads as `default` (and is logged),
/// so that one damaged record cannot make a listing fail.
fn raw(key: &str, text: Option<&String>, default: &'static str) -> Box<RawValue> {
    let text = text.filter(|t| !t.is_empty()).map_or(default, |t| t.as_str());
    RawValue::from_string(text.to_owned()).unwrap_or_else(|e| {
        tracing::warn!(%key, error = %e, "a delivery record has a field that is not JSON");
        RawValue::from_string(default.to_owned()).unwrap_or_default()
    })
}

fn millis_text(v: Option<&String>) -> Option<String> {
    v.and_then(|v| v.parse::<u64>().ok()).map(crate::time::format_millis)
}

/// A record read with `HGETALL`: its text fields, and its signatures (`g`, bytes).
#[derive(Debug, Default)]
struct Row {
    fields: HashMap<String, String>,
    signatures: Option<Vec<u8>>,
}

impl Row {
    fn from_raw(raw: HashMap<String, Vec<u8>>) -> Row {
        let mut row = Row::default();
        for (name, value) in raw {
            if name == "g" {
                row.signatures = Some(value);
            } else {
                row.fields.insert(name, String::from_utf8_lossy(&value).into_owned());
            }
        }
        row
    }
}

/// The API's view of a record read with `HGETALL`, with its event (for the body and the
/// timestamp header) when it has no rendered body of its own.
fn delivery_from(key: &str, id: &str, row: &Row, event: Option<&StoredEvent>) -> Delivery {
    let Row { fields: row, signatures } = row;
    let text = |name: &str| row.get(name).cloned().unwrap_or_default();
    let created_ms = ids::millis_of(Kind::Delivery, id).unwrap_or(0);
    let created_at = crate::time::format_millis(created_ms);
    let mut error = row.get("r").filter(|e| !e.is_empty()).cloned();
    let status = Status::stored(row.get("s").map(String::as_str)).unwrap_or_else(|| {
        // A damaged record shows as failed (the workers dead-letter it when they meet it).
        error.get_or_insert_with(|| "the delivery record cannot be read: unknown status".into());
        Status::Failed
    });
    let next_attempt_at = match status {
        Status::Pending => millis_text(row.get("q").filter(|q| !q.is_empty())).or_else(|| Some(created_at.clone())),
        _ => None,
    };
    let stored: Vec<Value> = match row.get("x").filter(|x| !x.is_empty()) {
        None => Vec::new(),
        Some(x) => serde_json::from_str(x).unwrap_or_else(|e| {
            tracing::warn!(%key, error = %e, "a delivery record has attempts that are not JSON");
            Vec::new()
        }),
    };
    let attempts: Vec<Value> = stored.iter().map(|a| attempt_object(created_ms, a)).collect();
    let last: usize = row.get("l").and_then(|n| n.parse().ok()).unwrap_or(0);
    let event_created_at = event.map(|e| e.created_at.clone()).unwrap_or_default();
    let signatures = signatures.as_deref().filter(|_| last > 0).and_then(sign::Signatures::decode);
    let headers = match signatures {
        Some(signatures) => {
            let extra: Vec<(String, String)> =
                row.get("h").and_then(|h| serde_json::from_str(h).ok()).unwrap_or_default();
            // The latest attempt was signed when it started.
            let signed_at = stored.last().and_then(|a| attempt_at(created_ms, a)).unwrap_or(0) / 1000;
            let attempt =
                sign::Attempt { delivery_id: id, number: last, event_created_at: &event_created_at, signed_at };
            let pairs = sign::request_headers(attempt, &signatures, &extra);
            let map: serde_json::Map<String, Value> = pairs.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
            Value::Object(map).to_string()
        }
        None => "{}".to_owned(),
    };
    let body = match row.get("b").filter(|b| !b.is_empty()) {
        Some(body) => body.clone(),
        None => event.map(|e| e.envelope.clone()).unwrap_or_default(),
    };
    Delivery {
        id: id.to_owned(),
        webhook_id: text("w"),
        event_id: text("e"),
        action: text("a"),
        status,
        attempts,
        next_attempt_at,
        updated_at: millis_text(updated_ms(row.get("u"), created_ms, &stored).as_ref())
            .unwrap_or_else(|| created_at.clone()),
        created_at,
        request: Request { headers: raw(key, Some(&headers), "{}"), body },
        plugins: raw(key, row.get("p"), "[]"),
        error,
        org_id: text("o"),
    }
}

/// When a delivery last changed: its latest attempt's end, or `u` when something later
/// changed it without an attempt (a manual retry, its webhook going away).
fn updated_ms(u: Option<&String>, created_ms: u64, stored: &[Value]) -> Option<String> {
    let changed = u.and_then(|u| u.parse::<u64>().ok());
    let attempted =
        stored.last().and_then(|a| Some(attempt_at(created_ms, a)? + a.get(2).and_then(Value::as_u64).unwrap_or(0)));
    changed.max(attempted).map(|ms| ms.to_string())
}

/// Which deliveries a listing keeps.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter<'a> {
    pub status: Option<Status>,
    pub action: Option<&'a str>,
    pub webhook: Option<&'a str>,
}

impl Filter<'_> {
    fn keeps(&self, status: Status, action: &str, webhook: &str) -> bool {
        self.status.is_none_or(|s| s == status)
            && self.action.is_none_or(|a| a == action)
            && self.webhook.is_none_or(|w| w == webhook)
    }
}

/// Which index a listing reads.
#[derive(Debug, Clone, Copy)]
pub enum Index<'a> {
    Org(&'a str),
    Webhook(&'a str),
}

/// Where a listing stands in one partition: the day it reads, and how many of that day's
/// entries (counted from the day's first) are still to be listed — `None`: all of them as
/// the day's list is when first read. Lists only grow at their end (a day goes whole), so
/// a position stays valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Position {
    day: u32,
    end: Option<u64>,
}

/// A listing's cursor: its position in every partition (`None` once one is exhausted). As
/// text: `day.end` (`day.x` for the whole day) or `-` per partition, comma-separated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor(Vec<Option<Position>>);

impl Cursor {
    /// The first page's cursor: every partition from the end of `today`.
    fn start(partitions: u16, today: u32) -> Cursor {
        Cursor((0..partitions).map(|_| Some(Position { day: today, end: None })).collect())
    }

    /// A cursor given back by a client, if it is one of a data set with `partitions`.
    pub fn parse(text: &str, partitions: u16) -> Option<Cursor> {
        let positions: Option<Vec<Option<Position>>> = text
            .split(',')
            .map(|part| match part {
                "-" => Some(None),
                _ => {
                    let (day, end) = part.split_once('.')?;
                    let end = if end == "x" { None } else { Some(end.parse().ok()?) };
                    Some(Some(Position { day: day.parse().ok()?, end }))
                }
            })
            .collect();
        positions.filter(|p| p.len() == usize::from(partitions)).map(Cursor)
    }

    pub fn text(&self) -> String {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|p| match p {
                Some(Position { day, end: Some(end) }) => format!("{day}.{end}"),
                Some(Position { day, end: None }) => format!("{day}.x"),
                None => "-".to_owned(),
            })
            .collect();
        parts.join(",")
    }

    fn exhausted(&self) -> bool {
        self.0.iter().all(Option::is_none)
    }
}

impl Store {
    fn index_key(&self, p: Partition, index: Index<'_>, day: u32) -> String {
        match index {
            Index::Org(org) => self.keys().org_deliveries(p, org, day),
            Index::Webhook(wh) => self.keys().webhook_deliveries(p, wh, day),
        }
    }

    /// The delivery if it exists and belongs to `org_id`.
    pub async fn get_delivery(&self, org_id: &str, id: &str) -> Result<Option<Delivery>> {
        let found = self.get_deliveries(&[id.to_owned()]).await?;
        Ok(found.into_iter().flatten().next().filter(|d| d.org_id == org_id))
    }

    /// The positions of `ids` grouped by the partition each delivery id names (ids of no
    /// partition of this data set are left out).
    fn by_partition(&self, ids: &[String]) -> BTreeMap<Partition, Vec<usize>> {
        let mut by_partition: BTreeMap<Partition, Vec<usize>> = BTreeMap::new();
        for (i, id) in ids.iter().enumerate() {
            if let Some(p) = self.keys().partition_of_delivery(id) {
                by_partition.entry(p).or_default().push(i);
            }
        }
        by_partition
    }

    /// Several deliveries by id (`None` for expired or unknown ones), in order, with their
    /// bodies. Records are read per partition, then the events they need.
    pub async fn get_deliveries(&self, ids: &[String]) -> Result<Vec<Option<Delivery>>> {
        let by_partition = self.by_partition(ids);
        let reads = by_partition.iter().map(|(p, at)| async move {
            let mut pipe = redis::pipe();
            for &i in at {
                pipe.hgetall(self.keys().delivery(*p, &ids[i]));
            }
            // Read alone on a cluster: mid-reshard the slot's records sit on two nodes.
            let raw: Vec<HashMap<String, Vec<u8>>> = self.conn().query_reads(&pipe).await?;
            let rows: Vec<Row> = raw.into_iter().map(Row::from_raw).collect();
            let mut events: HashMap<(String, String), Option<Arc<StoredEvent>>> = HashMap::new();
            for Row { fields: row, .. } in &rows {
                if let (Some(o), Some(e)) = (row.get("o"), row.get("e")) {
                    events.entry((o.clone(), e.clone())).or_default();
                }
            }
            for ((org, evt), slot) in events.iter_mut() {
                if !evt.is_empty() {
                    *slot = self.event(*p, org, evt).await?.map(Arc::new);
                }
            }
            Ok::<_, super::StoreError>(
                at.iter()
                    .zip(rows)
                    .map(|(&i, row)| {
                        let delivery = (!row.fields.is_empty()).then(|| {
                            let event = row
                                .fields
                                .get("o")
                                .zip(row.fields.get("e"))
                                .and_then(|(o, e)| events.get(&(o.clone(), e.clone())).cloned().flatten());
                            delivery_from(&self.keys().delivery(*p, &ids[i]), &ids[i], &row, event.as_deref())
                        });
                        (i, delivery)
                    })
                    .collect::<Vec<_>>(),
            )
        });
        let mut out: Vec<Option<Delivery>> = ids.iter().map(|_| None).collect();
        for part in futures_util::future::try_join_all(reads).await? {
            for (i, delivery) in part {
                out[i] = delivery;
            }
        }
        Ok(out)
    }

    /// A page of delivery ids from an index across every partition, newest first, from
    /// `cursor` (a [`Cursor`]'s text; `None`: the newest), keeping those `filter` accepts —
    /// looking at no more than about `scan` entries and no day before `oldest_day`. Returns
    /// the ids and the cursor to continue from (`None` at the end).
    pub async fn list_deliveries(
        &self,
        index: Index<'_>,
        filter: Filter<'_>,
        cursor: Option<&str>,
        limit: usize,
        scan: usize,
        oldest_day: u32,
    ) -> Result<(Vec<String>, Option<String>)> {
        let partitions = self.keys().partition_count();
        let today = super::keys::day_of(crate::time::now_millis());
        let mut cursor = match cursor {
            Some(text) => {
                Cursor::parse(text, partitions).unwrap_or_else(|| Cursor(vec![None; usize::from(partitions)]))
            }
            None => Cursor::start(partitions, today),
        };
        let batch = limit.clamp(10, 200) as u64;
        // Per partition: the entries read and not yet listed, oldest first, with their place.
        let mut buffers: Vec<Vec<(u64, String)>> = vec![Vec::new(); usize::from(partitions)];
        let mut kept = Vec::new();
        let mut scanned = 0;
        loop {
            let refills =
                cursor.0.iter_mut().zip(buffers.iter_mut()).enumerate().filter(|(_, (_, b))| b.is_empty()).map(
                    |(i, (position, buffer))| async move {
                        self.read_back(Partition(i as u16), index, position, buffer, batch, oldest_day).await
                    },
                );
            futures_util::future::try_join_all(refills).await?;
            // The newest of every partition's next entries, until one partition runs dry.
            let mut candidates: Vec<(usize, u64, String)> = Vec::new();
            while (candidates.len() as u64) < batch {
                let Some(i) = (0..buffers.len())
                    .filter(|i| !buffers[*i].is_empty())
                    .max_by(|a, b| buffers[*a].last().map(|e| &e.1).cmp(&buffers[*b].last().map(|e| &e.1)))
                else {
                    break;
                };
                let (at, id) = buffers[i].pop().unwrap_or_default();
                candidates.push((i, at, id));
                if buffers[i].is_empty() && cursor.0[i].is_some() {
                    break;
                }
            }
            if candidates.is_empty() {
                return Ok((kept, None));
            }
            let ids: Vec<String> = candidates.iter().map(|c| c.2.clone()).collect();
            let fields = self.listing_fields(&ids).await?;
            for ((i, at, id), f) in candidates.into_iter().zip(fields) {
                scanned += 1;
                // Listed (or passed over): the partition continues below it.
                if let Some(position) = cursor.0[i].as_mut() {
                    position.end = Some(at);
                }
                if let Some((status, action, webhook)) = f
                    && filter.keeps(status, &action, &webhook)
                {
                    kept.push(id);
                    if kept.len() == limit {
                        return Ok((kept, (!cursor.exhausted()).then(|| cursor.text())));
                    }
                }
            }
            if scanned >= scan {
                return Ok((kept, (!cursor.exhausted()).then(|| cursor.text())));
            }
        }
    }

    /// Reads the next entries of one partition going back in time into `buffer` (oldest
    /// first), moving to earlier days as they run out; `position` becomes `None` past
    /// `oldest_day`.
    async fn read_back(
        &self,
        p: Partition,
        index: Index<'_>,
        position: &mut Option<Position>,
        buffer: &mut Vec<(u64, String)>,
        batch: u64,
        oldest_day: u32,
    ) -> Result<()> {
        while let Some(at) = *position {
            if at.day < oldest_day {
                *position = None;
                break;
            }
            let key = self.index_key(p, index, at.day);
            // Where the unread part ends: the cursor's position, or the index's length on its
            // first page. Two commands, not a transaction: mid-reshard only a command alone
            // follows its key to the node it moves to (`ASK`). An index only grows at its
            // tail, so positions counted from its head stay valid between them.
            let end: u64 = match at.end {
                Some(end) => end,
                None => redis::cmd("LLEN").arg(&key).query_async(&mut self.conn()).await?,
            };
            let ids: Vec<String> = match end {
                0 => Vec::new(),
                _ => {
                    let start = end.saturating_sub(batch);
                    redis::cmd("LRANGE").arg(&key).arg(start).arg(end - 1).query_async(&mut self.conn()).await?
                }
            };
            if ids.is_empty() {
                *position = Some(Position { day: at.day.saturating_sub(1), end: None }).filter(|_| at.day > 0);
                continue;
            }
            let start = end.saturating_sub(ids.len() as u64);
            *position = Some(Position { day: at.day, end: Some(end) });
            buffer.extend(
                ids.iter().enumerate().map(|(k, entry)| (start + k as u64, super::keys::delivery_of_entry(entry))),
            );
            break;
        }
        Ok(())
    }

    /// Status, action and webhook of deliveries (for filtering), `None` for expired ones.
    async fn listing_fields(&self, ids: &[String]) -> Result<Vec<Option<(Status, String, String)>>> {
        let by_partition = self.by_partition(ids);
        let reads = by_partition.iter().map(|(p, at)| async move {
            let mut pipe = redis::pipe();
            for &i in at {
                pipe.cmd("HMGET").arg(self.keys().delivery(*p, &ids[i])).arg("s").arg("a").arg("w").arg("o");
            }
            let rows: Vec<Vec<Option<String>>> = self.conn().query_reads(&pipe).await?;
            Ok::<_, super::StoreError>(at.iter().copied().zip(rows).collect::<Vec<_>>())
        });
        let mut out = vec![None; ids.len()];
        for part in futures_util::future::try_join_all(reads).await? {
            for (i, row) in part {
                let Ok([status, action, webhook, org]) = <[Option<String>; 4]>::try_from(row) else { continue };
                if org.is_some() {
                    let status = Status::stored(status.as_deref());
                    out[i] = status.map(|s| (s, action.unwrap_or_default(), webhook.unwrap_or_default()));
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_read_back_and_refuse_what_they_are_not() {
        let cursor =
            Cursor(vec![Some(Position { day: 20_415, end: Some(17) }), None, Some(Position { day: 3, end: None })]);
        assert_eq!(cursor.text(), "20415.17,-,3.x");
        assert_eq!(Cursor::parse("20415.17,-,3.x", 3), Some(cursor));
        assert_eq!(Cursor::parse("20415.17", 3), None, "one position per partition");
        assert_eq!(Cursor::parse("dlv_x,-,-", 3), None);
        assert!(Cursor(vec![None, None]).exhausted());
    }
}
