//! Listing deliveries newest first from their day indexes (`P:{q}:od:{org}:{day}` and
//! `P:{q}:wd:{wh}:{day}`, `store::core::keys`) across every partition, with a cursor that says
//! where each partition stands.

use crate::store::core::base::Base;
use crate::store::core::keys::Partition;
use crate::store::error::Result;
use crate::store::error::StoreError;
use crate::store::queue::cursor::{Cursor, Position};
use crate::store::queue::deliveries::Rows;
use crate::store::queue::index::IndexHeads;
use crate::store::queue::index::MovedIndexes;
use crate::store::queue::row::field;
use crate::store::queue::status::Status;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct Listings {
    base: Base,
}

impl Listings {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> Listings {
        Listings { base: base.clone() }
    }
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

/// What a listing reads of a delivery to filter it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub status: Status,
    pub action: String,
    pub webhook: String,
}

impl Listed {
    /// What a listing reads of a row, from its status, action and webhook fields; `None`
    /// when the status is none a row has.
    pub fn of(status: Option<&str>, action: Option<String>, webhook: Option<String>) -> Option<Listed> {
        let status = Status::stored(status)?;
        Some(Listed { status, action: action.unwrap_or_default(), webhook: webhook.unwrap_or_default() })
    }

    /// What a listing reads of a row kept as its fields (name, value), as history keeps it.
    pub fn of_fields(fields: &[(String, Vec<u8>)]) -> Option<Listed> {
        let get =
            |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, v)| String::from_utf8_lossy(v).into_owned());
        Listed::of(get(field::STATUS).as_deref(), get(field::ACTION), get(field::WEBHOOK))
    }
}

/// Where rows that left Redis can be read (history in PostgreSQL, `crate::history`): what
/// a listing reads of each of `ids` (`None`: not there either).
pub trait MovedRows: MovedIndexes {
    fn listed<'a>(&'a self, ids: &'a [String]) -> futures_util::future::BoxFuture<'a, Result<Vec<Option<Listed>>>>;
}

/// How far a listing reaches: a page of at most `limit`, looking at no more than about
/// `scan` entries and no day before `oldest_day`; rows that left Redis read from `moved`.
#[derive(Clone, Copy)]
pub struct Reach<'a> {
    pub limit: usize,
    pub scan: usize,
    pub oldest_day: u32,
    pub moved: Option<&'a dyn MovedRows>,
}

impl std::fmt::Debug for Reach<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reach")
            .field("limit", &self.limit)
            .field("scan", &self.scan)
            .field("oldest_day", &self.oldest_day)
            .field("moved", &self.moved.is_some())
            .finish()
    }
}

/// Which index a listing reads.
#[derive(Debug, Clone, Copy)]
pub enum Index<'a> {
    Org(&'a str),
    Webhook(&'a str),
}

/// The newest day a delivery listing's cursor may stand on: today, or tomorrow on a clock a
/// little ahead.
pub fn newest_day() -> u32 {
    crate::store::core::keys::day_of(crate::time::now_millis()) + 1
}

impl Listings {
    fn index_key(&self, p: Partition, index: Index<'_>, day: u32) -> String {
        match index {
            Index::Org(org) => self.base.keys().org_deliveries(p, org, day),
            Index::Webhook(wh) => self.base.keys().webhook_deliveries(p, wh, day),
        }
    }

    /// A page of delivery ids from an index across every partition, newest first, from
    /// `cursor` (a [`Cursor`]'s text; `None`: the newest), keeping those `filter` accepts,
    /// as far as `reach` says. Returns the ids and the cursor to continue from (`None` at
    /// the end).
    pub async fn list_deliveries(
        &self,
        index: Index<'_>,
        filter: Filter<'_>,
        cursor: Option<&str>,
        reach: Reach<'_>,
    ) -> Result<(Vec<String>, Option<String>)> {
        let Reach { limit, scan, oldest_day, moved } = reach;
        let partitions = self.base.keys().partition_count();
        let today = crate::store::core::keys::day_of(crate::time::now_millis());
        let mut cursor = match cursor {
            Some(text) => Cursor::parse(text, partitions, newest_day()).unwrap_or_else(|| Cursor::done(partitions)),
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
                        self.read_back((Partition(i as u16), index), position, buffer, (batch, oldest_day), moved).await
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
            let mut fields = self.listing_fields(&ids).await?;
            if let Some(moved) = moved {
                let missing: Vec<usize> = (0..ids.len()).filter(|&i| fields[i].is_none()).collect();
                if !missing.is_empty() {
                    let wanted: Vec<String> = missing.iter().map(|&i| ids[i].clone()).collect();
                    for (&i, found) in missing.iter().zip(moved.listed(&wanted).await?) {
                        fields[i] = found;
                    }
                }
            }
            for ((i, at, id), f) in candidates.into_iter().zip(fields) {
                scanned += 1;
                // Listed (or passed over): the partition continues below it.
                if let Some(position) = cursor.0[i].as_mut() {
                    position.end = Some(at);
                }
                if let Some(listed) = f
                    && filter.keeps(listed.status, &listed.action, &listed.webhook)
                {
                    kept.push(id);
                    if kept.len() == limit {
                        return Ok((kept, cursor.text_unless_exhausted()));
                    }
                }
            }
            if scanned >= scan {
                return Ok((kept, cursor.text_unless_exhausted()));
            }
        }
    }

    /// Reads the next entries of one partition going back in time into `buffer` (oldest
    /// first), moving to earlier days as they run out; `position` becomes `None` past
    /// `oldest_day`.
    async fn read_back(
        &self,
        (p, index): (Partition, Index<'_>),
        position: &mut Option<Position>,
        buffer: &mut Vec<(u64, String)>,
        (batch, oldest_day): (u64, u32),
        moved: Option<&dyn MovedRows>,
    ) -> Result<()> {
        while let Some(at) = *position {
            if at.bucket < oldest_day {
                *position = None;
                break;
            }
            let key = self.index_key(p, index, at.bucket);
            let (end, entries) = match moved {
                Some(moved) => IndexHeads::of(&self.base).index_back(p, &key, at.end, batch, moved).await?,
                None => IndexHeads::of(&self.base).index_here(&key, at.end, batch).await?,
            };
            if entries.is_empty() {
                let below = match at.bucket.checked_sub(1) {
                    Some(from) if from >= oldest_day => {
                        IndexHeads::of(&self.base)
                            .newest_filled(p, |day| self.index_key(p, index, day), from, oldest_day)
                            .await?
                    }
                    _ => None,
                };
                *position = below.map(|bucket| Position { bucket, end: None });
                continue;
            }
            *position = Some(Position { bucket: at.bucket, end: Some(end) });
            buffer.extend(entries.into_iter().map(|(place, entry)| {
                (place, crate::store::core::keys::delivery_of_entry(&String::from_utf8_lossy(&entry)))
            }));
            break;
        }
        Ok(())
    }

    /// Status, action and webhook of deliveries (for filtering), `None` for expired ones.
    async fn listing_fields(&self, ids: &[String]) -> Result<Vec<Option<Listed>>> {
        let by_partition = Rows::of(&self.base).by_partition(ids);
        let reads = by_partition.iter().map(|(p, at)| async move {
            let mut pipe = redis::pipe();
            for &i in at {
                pipe.cmd("HMGET")
                    .arg(self.base.keys().delivery(*p, &ids[i]))
                    .arg(field::STATUS)
                    .arg(field::ACTION)
                    .arg(field::WEBHOOK)
                    .arg(field::ORG);
            }
            let rows: Vec<Vec<Option<String>>> = self.base.conn().query_reads(&pipe).await?;
            Ok::<_, StoreError>(at.iter().copied().zip(rows).collect::<Vec<_>>())
        });
        let mut out = vec![None; ids.len()];
        for part in futures_util::future::try_join_all(reads).await? {
            for (i, row) in part {
                let Ok([status, action, webhook, org]) = <[Option<String>; 4]>::try_from(row) else { continue };
                if org.is_some() {
                    out[i] = Listed::of(status.as_deref(), action, webhook);
                }
            }
        }
        Ok(out)
    }
}
