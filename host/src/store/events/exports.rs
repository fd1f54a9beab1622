//! Report exports and the record snapshots they are built from (keys: `store::core::keys`).
//!
//! An export is a hash: `id`, `org_id`, `client_id`, `client_name`, `status`, `format`,
//! `exportable_type`, `exportable_id`, `created_at`, `completed_at`, `download_url`,
//! `error`, `published`; the built file is kept as long as its link is valid. Exports to
//! build wait in a lease queue (`lua/lease.lua`): a builder that dies leaves its export to
//! be taken over when the lease ends.
//!
//! Snapshots are kept by the publish script (`store::events::publish`), the newest by event time, in
//! the partition of the record; a `deleted` subject removes the record's snapshot (with
//! history, leaves a tombstone [`Pointer`]). No copy is made: the newest event about each
//! record keeps no TTL instead (it gets it back when it is superseded). With history in
//! PostgreSQL a pointer moves with its event (`history::mover`), and readers take the
//! newer of Redis's and history's (`domain::moved`).

use std::collections::HashMap;

use redis::AsyncCommands;

use crate::store::core::base::Base;
use crate::store::core::keys::Partition;
use crate::store::core::scripts::{EXPORT_CREATE, SNAPSHOT_FORGET, SNAPSHOT_MOVED};
use crate::store::error::Result;
use crate::store::events::stored::StoredEvent;

/// The concern's handle: what it reads and writes, over the store's connection and key layout.
#[derive(Debug, Clone)]
pub struct ExportRecords {
    base: Base,
}

impl ExportRecords {
    /// This concern over `base`.
    pub(crate) fn of(base: &Base) -> ExportRecords {
        ExportRecords { base: base.clone() }
    }
}

/// A report export, as stored.
#[derive(Debug, Clone)]
pub struct Export {
    pub id: String,
    /// `queued`, `building`, `completed` or `failed`.
    pub status: String,
    /// `pdf`, `csv` or `json`.
    pub format: String,
    pub exportable: Exportable,
    pub created_at: String,
    pub completed_at: Option<String>,
    pub download_url: Option<String>,
    pub error: Option<String>,
    pub org_id: String,
    pub client_id: String,
    pub client_name: String,
    pub published: bool,
}

/// The record an export is of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exportable {
    pub kind: String,
    pub id: String,
}

fn from_fields(f: &HashMap<String, String>) -> Export {
    let text = |name: &str| f.get(name).cloned().unwrap_or_default();
    let optional = |name: &str| f.get(name).filter(|v| !v.is_empty()).cloned();
    Export {
        id: text("id"),
        status: text("status"),
        format: text("format"),
        exportable: Exportable { kind: text("exportable_type"), id: text("exportable_id") },
        created_at: text("created_at"),
        completed_at: optional("completed_at"),
        download_url: optional("download_url"),
        error: optional("error"),
        org_id: text("org_id"),
        client_id: text("client_id"),
        client_name: text("client_name"),
        published: text("published") == "1",
    }
}

/// A record's pointer to its newest event, as its organisation's snapshots hash keeps it in
/// partition `p`: `<ms> <event id>`, or `<ms>d <event id>` for a deletion (a tombstone, kept
/// with history in PostgreSQL only: it moves there with its event and hides older pointers
/// that moved before).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    pub p: Partition,
    /// The event's time (ms): the newest wins.
    pub ms: u64,
    pub event_id: String,
    /// The record was deleted.
    pub gone: bool,
    /// The value as stored (moving compares it).
    pub value: String,
}

impl Pointer {
    /// Reads a stored value (`None`: no pointer).
    pub fn parse(p: Partition, value: String) -> Option<Pointer> {
        let (ms, event) = value.split_once(' ')?;
        let (ms, gone) = match ms.strip_suffix('d') {
            Some(ms) => (ms, true),
            None => (ms, false),
        };
        let (ms, event_id) = (ms.parse().ok()?, event.to_owned());
        Some(Pointer { p, ms, event_id, gone, value })
    }
}

/// The snapshot of a record of type `kind` that an event carries, as JSON text.
pub fn snapshot_of(kind: &str, event: &StoredEvent) -> Option<String> {
    let snapshot_key = crate::catalog::snapshot_key_of_type(kind)?;
    let parsed: HashMap<String, Box<serde_json::value::RawValue>> =
        serde_json::from_str(&event.envelope).unwrap_or_default();
    parsed.get(snapshot_key).map(|raw| raw.get().to_owned())
}

impl ExportRecords {
    /// The newest pointer to a record's newest event in Redis. It is looked for in every
    /// partition (the newest wins): an event published while its record's partition could
    /// not acknowledge writes went to another one (`events::standby`).
    pub async fn newest_pointer(&self, org_id: &str, kind: &str, id: &str) -> Result<Option<Pointer>> {
        let field = format!("{kind}:{id}");
        let reads = self.base.keys().partitions().map(|p| {
            let field = field.clone();
            async move {
                let value: Option<String> = self.base.conn().hget(self.base.keys().snapshots(p, org_id), field).await?;
                Ok::<_, crate::store::error::StoreError>(value.and_then(|v| Pointer::parse(p, v)))
            }
        });
        let pointers = futures_util::future::try_join_all(reads).await?;
        Ok(pointers.into_iter().flatten().max_by_key(|pointer| pointer.ms))
    }

    /// The pointers of records (organisation, `Type:id`) in partition `p`, in one round trip.
    pub async fn pointers(&self, p: Partition, records: &[(&str, &str)]) -> Result<Vec<Option<Pointer>>> {
        if records.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for (org, subject) in records {
            pipe.hget(self.base.keys().snapshots(p, org), *subject);
        }
        let values: Vec<Option<String>> = pipe.query_async(&mut self.base.conn()).await?;
        Ok(values.into_iter().map(|v| v.and_then(|v| Pointer::parse(p, v))).collect())
    }

    /// One step of a scan of `org`'s pointers in partition `p` from `cursor`: the next
    /// cursor (0 when the scan is over) and the records' pointers read (values that are no
    /// pointer are left out).
    pub async fn scan_pointers(
        &self,
        p: Partition,
        org: &str,
        cursor: u64,
        count: usize,
    ) -> Result<(u64, Vec<(String, Pointer)>)> {
        let (next, flat): (u64, Vec<String>) = redis::cmd("HSCAN")
            .arg(self.base.keys().snapshots(p, org))
            .arg(cursor)
            .arg("COUNT")
            .arg(count)
            .query_async(&mut self.base.conn())
            .await?;
        let mut read = Vec::with_capacity(flat.len() / 2);
        let mut pairs = flat.into_iter();
        while let (Some(subject), Some(value)) = (pairs.next(), pairs.next()) {
            if let Some(pointer) = Pointer::parse(p, value) {
                read.push((subject, pointer));
            }
        }
        Ok((next, read))
    }

    /// Whether each event (organisation, event id) is stored in partition `p`, in one
    /// round trip.
    pub async fn events_here(&self, p: Partition, events: &[(&str, &str)]) -> Result<Vec<bool>> {
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for (org, event) in events {
            pipe.exists(self.base.keys().event(p, org, event));
        }
        Ok(pipe.query_async(&mut self.base.conn()).await?)
    }

    /// Whether partition `p`'s pointers were swept (`history::sweep`).
    pub async fn pointers_swept(&self, p: Partition) -> Result<bool> {
        Ok(self.base.conn().exists(self.base.keys().pointers_swept(p)).await?)
    }

    /// Notes that partition `p`'s pointers were swept.
    pub async fn mark_pointers_swept(&self, p: Partition) -> Result<()> {
        let _: () = self.base.conn().set(self.base.keys().pointers_swept(p), 1).await?;
        Ok(())
    }

    /// Forgets pointers of partition `p` that moved to history (organisation, `Type:id`,
    /// the pointer moved), each only if it is unchanged. How many were forgotten.
    pub async fn forget_moved_pointers(&self, p: Partition, moved: &[(&str, &str, Pointer)]) -> Result<usize> {
        if moved.is_empty() {
            return Ok(0);
        }
        let mut call = SNAPSHOT_MOVED.call();
        let mut places: HashMap<&str, usize> = HashMap::new();
        for (org, subject, pointer) in moved {
            let next = places.len() + 1;
            let place = *places.entry(org).or_insert_with(|| {
                call.key(&self.base.keys().snapshots(p, org));
                next
            });
            call.arg(place).arg(*subject).arg(&pointer.value);
        }
        Ok(call.run::<i64>(&mut self.base.conn()).await?.max(0) as usize)
    }

    /// After a deletion of `subject` (`Type:id`, event time `deleted_ms`) was published,
    /// forgets the record's older snapshot pointers in the partitions `ps`: the record's own
    /// partition and its standbys, where a failover may have left one (`events::standby`).
    /// How many were forgotten.
    pub async fn forget_snapshot_in(
        &self,
        ps: &[Partition],
        org_id: &str,
        subject: &str,
        deleted_ms: u64,
    ) -> Result<usize> {
        let calls = ps.iter().map(|p| async move {
            let mut call = SNAPSHOT_FORGET.call();
            call.key(&self.base.keys().snapshots(*p, org_id)).key(&self.base.keys().released_events(*p));
            call.arg(subject).arg(deleted_ms).arg(org_id);
            call.run::<i64>(&mut self.base.conn()).await
        });
        let forgotten = futures_util::future::try_join_all(calls).await?;
        Ok(forgotten.into_iter().filter(|n| *n > 0).count())
    }

    /// Stores a new export and queues it.
    pub async fn create_export(&self, export: &Export, keep_ms: u64) -> Result<()> {
        let fields: [(&str, &str); 9] = [
            ("id", &export.id),
            ("org_id", &export.org_id),
            ("client_id", &export.client_id),
            ("client_name", &export.client_name),
            ("status", &export.status),
            ("format", &export.format),
            ("exportable_type", &export.exportable.kind),
            ("exportable_id", &export.exportable.id),
            ("created_at", &export.created_at),
        ];
        let key = self.base.keys().export(&export.id);
        let mut call = EXPORT_CREATE.call();
        call.key(&key).key(&self.base.keys().export_jobs()).arg(keep_ms).arg(&export.id).arg(crate::time::now_millis());
        for (k, v) in fields {
            call.arg(k).arg(v);
        }
        let _: i64 = call.run(&mut self.base.conn()).await?;
        self.base.acknowledged(&key).await
    }

    /// An export of any organisation (the builder checks it against the record).
    pub async fn export_any_org(&self, id: &str) -> Result<Option<Export>> {
        let fields: HashMap<String, String> = self.base.conn().hgetall(self.base.keys().export(id)).await?;
        Ok((!fields.is_empty()).then(|| from_fields(&fields)))
    }

    /// The organisation's export.
    pub async fn get_export(&self, org_id: &str, id: &str) -> Result<Option<Export>> {
        Ok(self.export_any_org(id).await?.filter(|e| e.org_id == org_id))
    }

    /// Sets fields of an export that exists.
    pub async fn set_export_fields(&self, id: &str, fields: &[(&str, &str)]) -> Result<()> {
        let mut call = crate::store::core::scripts::SET_IF_EXISTS.call();
        call.key(&self.base.keys().export(id));
        for (k, v) in fields {
            call.arg(*k).arg(*v);
        }
        let _: i64 = call.run(&mut self.base.conn()).await?;
        Ok(())
    }

    /// Stores a built file with its lifetime, and marks the export completed.
    pub async fn complete_export(
        &self,
        id: &str,
        file: &[u8],
        ttl_ms: u64,
        completed_at: &str,
        url: &str,
    ) -> Result<()> {
        redis::pipe()
            .atomic()
            .cmd("SET")
            .arg(self.base.keys().export_file(id))
            .arg(file)
            .arg("PX")
            .arg(ttl_ms)
            .ignore()
            .hset_multiple(
                self.base.keys().export(id),
                &[("status", "completed"), ("completed_at", completed_at), ("download_url", url), ("error", "")],
            )
            .ignore()
            .query_async::<()>(&mut self.base.conn())
            .await?;
        Ok(())
    }

    /// A built file, while its link is valid.
    pub async fn export_file(&self, id: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.base.conn().get(self.base.keys().export_file(id)).await?)
    }

    /// The key that signs download links, made on first use and shared through Redis.
    pub async fn export_link_key(&self) -> Result<Vec<u8>> {
        let key = self.base.keys().export_link_secret();
        let fresh: [u8; 32] = rand::random();
        let _: Option<String> =
            redis::cmd("SET").arg(&key).arg(hex::encode(fresh)).arg("NX").query_async(&mut self.base.conn()).await?;
        let stored: String = self.base.conn().get(&key).await?;
        Ok(hex::decode(stored).unwrap_or_default())
    }
}
