//! Report exports and the record snapshots they are built from.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `P:snap:{org}:{Type}:{id}` | hash | the newest event about a record: `at` (event time, ms), `event` (its key; the envelope carries the snapshot, and that event does not expire while it is the newest) |
//! | `P:org:{org}:snaps` | zset | `Type:id` of the organisation's snapshots by last update, to cap their number |
//! | `P:rex:{id}` | hash, TTL | an export: `id`, `org_id`, `client_id`, `client_name`, `status`, `format`, `exportable_type`, `exportable_id`, `created_at`, `completed_at`, `download_url`, `error`, `published` |
//! | `P:rex:{id}:file` | string, TTL | the built file, kept as long as its link is valid |
//! | `P:q:exports` | stream, group `builders` | exports to build (field `x`: the export id) |
//! | `P:secret:export-links` | string | the key that signs download links (made once) |
//!
//! Snapshots are kept by the publish script (`crate::queue`), the newest by event time; a
//! `deleted` subject removes the record's snapshot. No copy is made: the newest event about
//! each record is kept alive instead (its own expiry comes back when it is superseded).

use std::collections::HashMap;
use std::sync::LazyLock;

use redis::AsyncCommands;
use serde::Serialize;

use super::{Result, Store};

/// The consumer group of the export stream.
pub const BUILDERS: &str = "builders";

/// An export as the API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Export {
    pub id: String,
    pub status: String,
    pub format: String,
    pub exportable: Exportable,
    pub created_at: String,
    pub completed_at: Option<String>,
    pub download_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip)]
    pub org_id: String,
    #[serde(skip)]
    pub client_id: String,
    #[serde(skip)]
    pub client_name: String,
    #[serde(skip)]
    pub published: bool,
}

/// The record an export is of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Exportable {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
}

/// Creates an export and queues it for building, in one step.
static CREATE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('XADD', KEYS[2], '*', 'x', ARGV[2])
return 1
",
    )
});

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

impl Store {
    /// The newest snapshot of a record, as JSON text: the snapshot key of the newest event
    /// about it.
    pub async fn snapshot(&self, org_id: &str, kind: &str, id: &str) -> Result<Option<String>> {
        let key = self.key(&["snap", org_id, &format!("{kind}:{id}")]);
        let event: Option<String> = self.conn().hget(key, "event").await?;
        let Some(event) = event else { return Ok(None) };
        let envelope: Option<String> = self.conn().get(&event).await?;
        let Some(envelope) = envelope else { return Ok(None) };
        let Some(snapshot_key) = crate::catalog::snapshot_key_of_type(kind) else { return Ok(None) };
        let parsed: std::collections::HashMap<String, Box<serde_json::value::RawValue>> =
            serde_json::from_str(&envelope).unwrap_or_default();
        Ok(parsed.get(snapshot_key).map(|raw| raw.get().to_owned()))
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
        let mut invocation = CREATE.key(self.key(&["rex", &export.id]));
        invocation.key(self.key(&["q", "exports"])).arg(keep_ms).arg(&export.id);
        for (k, v) in fields {
            invocation.arg(k).arg(v);
        }
        let _: i64 = invocation.invoke_async(&mut self.conn()).await?;
        Ok(())
    }

    /// An export of any organisation (the builder checks it against the record).
    pub async fn export_any_org(&self, id: &str) -> Result<Option<Export>> {
        let fields: HashMap<String, String> = self.conn().hgetall(self.key(&["rex", id])).await?;
        Ok((!fields.is_empty()).then(|| from_fields(&fields)))
    }

    /// The organisation's export.
    pub async fn get_export(&self, org_id: &str, id: &str) -> Result<Option<Export>> {
        Ok(self.export_any_org(id).await?.filter(|e| e.org_id == org_id))
    }

    /// Sets fields of an export that exists.
    pub async fn set_export_fields(&self, id: &str, fields: &[(&str, &str)]) -> Result<()> {
        let key = self.key(&["rex", id]);
        let mut pipe = redis::pipe();
        pipe.atomic().hset_multiple(&key, fields).ignore();
        pipe.query_async::<()>(&mut self.conn()).await?;
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
        let key = self.key(&["rex", id]);
        redis::pipe()
            .atomic()
            .cmd("SET")
            .arg(self.key(&["rex", id, "file"]))
            .arg(file)
            .arg("PX")
            .arg(ttl_ms)
            .ignore()
            .hset_multiple(
                &key,
                &[("status", "completed"), ("completed_at", completed_at), ("download_url", url), ("error", "")],
            )
            .ignore()
            .query_async::<()>(&mut self.conn())
            .await?;
        Ok(())
    }

    /// A built file, while its link is valid.
    pub async fn export_file(&self, id: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.conn().get(self.key(&["rex", id, "file"])).await?)
    }

    /// The key that signs download links, made on first use and shared through Redis.
    pub async fn export_link_key(&self) -> Result<Vec<u8>> {
        let key = self.key(&["secret", "export-links"]);
        let fresh: [u8; 32] = rand::random();
        let _: Option<String> =
            redis::cmd("SET").arg(&key).arg(hex::encode(fresh)).arg("NX").query_async(&mut self.conn()).await?;
        let stored: String = self.conn().get(&key).await?;
        Ok(hex::decode(stored).unwrap_or_default())
    }
}
