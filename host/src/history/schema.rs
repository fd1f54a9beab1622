//! Weir's tables in PostgreSQL, in a schema of their own (`weir`, or `weir_<prefix>` for
//! another `WEIR_REDIS_PREFIX`, so installations sharing a database stay apart), created
//! and migrated by Weir at start: versioned migrations run under an advisory lock, so
//! several processes may start at once. Both tables are partitioned by day (declarative
//! range partitioning): a day's partition is made before anything is written to it, and
//! retention drops whole days — no bulk `DELETE`, no vacuum debt.
//!
//! | table | key | holds |
//! |---|---|---|
//! | `deliveries` | `id`, `day` (the day the delivery was made: its id's) | `fields`: the delivery's row as Redis kept it (`super::records`) |
//! | `events` | `digest` (`store::core::keys::event_digest`), `day` (the day it was accepted) | `part`: its Redis partition; `stored`: the event's stored form (`store::events::stored`) |
//! | `indexes` | `key` (a day index's or an event log hour's Redis key), `first` (the place of its first entry here), `day` (the index's) | `entries`: a run of the index's entries, joined as their kind says (`store::queue::index::IndexKind`) |
//! | `snapshots` | `key` (a digest of a record's organisation and `Type:id`), `day` (the day its newest event was accepted) | `event`: that event's digest; `ms`: its time; `gone`: the record was deleted (`super::snapshots`) |
//!
//! The keys lead with the id (and digest): an event found by id alone is one index probe
//! per day kept. A plan that keeps deliveries for less than the installation has its
//! deliveries' and events' days apart, as days of their own retention class
//! (`super::classes`).

use std::collections::BTreeSet;

use tokio_postgres::Client;

use super::error::HistoryError;

/// The migrations, in order; the schema's version is how many have run.
const MIGRATIONS: &[&str] = &[
    "
    CREATE TABLE {s}.deliveries (
        day integer NOT NULL,
        id text NOT NULL,
        fields bytea NOT NULL,
        PRIMARY KEY (id, day)
    ) PARTITION BY RANGE (day);
    CREATE TABLE {s}.events (
        day integer NOT NULL,
        digest bytea NOT NULL,
        part smallint NOT NULL,
        stored bytea NOT NULL,
        PRIMARY KEY (digest, day)
    ) PARTITION BY RANGE (day);
",
    "
    CREATE TABLE {s}.indexes (
        day integer NOT NULL,
        key text NOT NULL,
        first bigint NOT NULL,
        entries bytea NOT NULL,
        PRIMARY KEY (key, first, day)
    ) PARTITION BY RANGE (day);
",
    "
    CREATE TABLE {s}.snapshots (
        day integer NOT NULL,
        key bytea NOT NULL,
        event bytea NOT NULL,
        ms bigint NOT NULL,
        gone boolean NOT NULL,
        PRIMARY KEY (key, day)
    ) PARTITION BY RANGE (day);
",
];

/// The partitioned tables (a retention class's days have the first two only).
pub(crate) const TABLES: [&str; 4] = ["deliveries", "events", "indexes", "snapshots"];

/// The schema's name for a key prefix: `weir` for the default, else `weir_` and the
/// prefix's letters, digits and underscores (at most 63 characters, PostgreSQL's limit).
pub(crate) fn schema_name(prefix: &str) -> String {
    if prefix == "weir" {
        return "weir".to_owned();
    }
    let cleaned: String =
        prefix.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    format!("weir_{cleaned}").chars().take(63).collect()
}

/// The advisory lock key of a schema's migrations and partition changes.
fn lock_key(schema: &str) -> i64 {
    let digest = crate::ids::digest(&["weir-history", schema]);
    i64::from_be_bytes(digest[..8].try_into().unwrap_or_default())
}

/// Creates the schema and runs the migrations it lacks, under the schema's advisory lock.
pub(crate) async fn migrate(client: &mut Client, schema: &str) -> Result<(), HistoryError> {
    client.execute("SELECT pg_advisory_lock($1)", &[&lock_key(schema)]).await?;
    let result = async {
        client
            .batch_execute(&format!(
                "CREATE SCHEMA IF NOT EXISTS {schema};
                 CREATE TABLE IF NOT EXISTS {schema}.migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());"
            ))
            .await?;
        let row = client.query_one(&format!("SELECT coalesce(max(version), 0) FROM {schema}.migrations"), &[]).await?;
        let done: i32 = row.get(0);
        for (i, migration) in MIGRATIONS.iter().enumerate().skip(done.max(0) as usize) {
            let version = i as i32 + 1;
            let tx = client.transaction().await?;
            tx.batch_execute(&migration.replace("{s}", schema)).await?;
            tx.execute(&format!("INSERT INTO {schema}.migrations (version) VALUES ($1)"), &[&version]).await?;
            tx.commit().await?;
            tracing::info!(schema, version, "history schema migrated");
        }
        Ok::<_, HistoryError>(())
    }
    .await;
    client.execute("SELECT pg_advisory_unlock($1)", &[&lock_key(schema)]).await?;
    result
}

/// Makes the day partitions of `days` for every table (those missing), under the schema's
/// advisory lock (two processes making one day's would collide).
pub(crate) async fn make_days(client: &mut Client, schema: &str, days: &BTreeSet<u32>) -> Result<(), HistoryError> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&lock_key(schema)]).await?;
    let mut sql = String::new();
    for day in days {
        // A retention class's days are the deliveries' and events' only (`super::classes`).
        let tables = if *day >= super::classes::SPAN { &TABLES[..2] } else { &TABLES[..] };
        for table in tables {
            sql.push_str(&format!(
                "CREATE TABLE IF NOT EXISTS {schema}.{table}_{day} PARTITION OF {schema}.{table} FOR VALUES FROM ({day}) TO ({});\n",
                day + 1
            ));
        }
    }
    tx.batch_execute(&sql).await?;
    tx.commit().await?;
    Ok(())
}

/// The days `table` has a partition for.
pub(crate) async fn days(client: &Client, schema: &str, table: &str) -> Result<Vec<u32>, HistoryError> {
    let rows = client
        .query(
            "SELECT c.relname FROM pg_inherits i
               JOIN pg_class c ON c.oid = i.inhrelid
               JOIN pg_class p ON p.oid = i.inhparent
               JOIN pg_namespace n ON n.oid = p.relnamespace
              WHERE n.nspname = $1 AND p.relname = $2",
            &[&schema, &table],
        )
        .await?;
    let prefix = format!("{table}_");
    Ok(rows.iter().filter_map(|r| r.get::<_, String>(0).strip_prefix(&prefix)?.parse().ok()).collect())
}

/// Drops `table`'s day partitions whose (stored) day `past` says are past their retention
/// (whole days).
pub(crate) async fn drop_days(
    client: &mut Client,
    schema: &str,
    table: &str,
    past: impl Fn(u32) -> bool,
) -> Result<usize, HistoryError> {
    let old: Vec<u32> = days(client, schema, table).await?.into_iter().filter(|d| past(*d)).collect();
    if old.is_empty() {
        return Ok(0);
    }
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&lock_key(schema)]).await?;
    for day in &old {
        tx.batch_execute(&format!("DROP TABLE IF EXISTS {schema}.{table}_{day}")).await?;
    }
    tx.commit().await?;
    Ok(old.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_prefix_has_a_schema_of_its_own_that_postgres_accepts() {
        assert_eq!(schema_name("weir"), "weir");
        assert_eq!(schema_name("t-1A.b"), "weir_t_1a_b");
        assert!(schema_name(&"x".repeat(200)).len() <= 63);
        assert_ne!(lock_key("weir"), lock_key("weir_other"));
    }
}
