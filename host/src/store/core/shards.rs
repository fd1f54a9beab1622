//! Which slots' masters have their replicas now, from `CLUSTER SHARDS` (one command, any
//! node, whatever the client's map of the slots): a shard counts its master — if online —
//! and its replicas that are online.

use redis::Value;

use super::conn::Conn;
use super::reply::{self, Named};

/// A range of slots (inclusive) and the online replicas of its master (`None`: the master
/// itself is not online).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardReplicas {
    pub first: u16,
    pub last: u16,
    pub replicas: Option<u32>,
}

/// The online replicas of the master of every slot: on a cluster from `CLUSTER SHARDS` (any
/// node answers; no command is routed by a map of the slots that may be stale), on one Redis
/// from its `INFO replication` (all slots).
pub async fn look(conn: &mut Conn) -> redis::RedisResult<Vec<ShardReplicas>> {
    match conn {
        Conn::Single(conn) => {
            let text: String = redis::cmd("INFO").arg("replication").query_async(conn).await?;
            let n = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("connected_slaves:"))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            Ok(vec![ShardReplicas { first: 0, last: 16383, replicas: Some(n) }])
        }
        Conn::Cluster(conn) => {
            let reply: Value = redis::cmd("CLUSTER").arg("SHARDS").query_async(conn).await?;
            Ok(read(reply))
        }
    }
}

/// Reads a `CLUSTER SHARDS` reply (RESP2 lists of names and values, or RESP3 maps); a shard
/// that cannot be read counts as none.
pub fn read(reply: Value) -> Vec<ShardReplicas> {
    let Value::Array(shards) = reply else { return Vec::new() };
    let mut out = Vec::new();
    for shard in shards {
        let Ok(mut shard) = Named::from_value(shard, "CLUSTER SHARDS") else { continue };
        let slots: Vec<u16> = shard.list("slots").iter().filter_map(reply::int).map(|n| n as u16).collect();
        let nodes: Vec<Named> =
            shard.list("nodes").into_iter().filter_map(|n| Named::from_value(n, "CLUSTER SHARDS").ok()).collect();
        let is = |node: &Named, name: &str, value: &str| node.text(name).as_deref() == Some(value);
        let master_online = nodes.iter().any(|n| is(n, "role", "master") && is(n, "health", "online"));
        let replicas = nodes.iter().filter(|n| is(n, "role", "replica") && is(n, "health", "online")).count() as u32;
        for pair in slots.chunks(2) {
            if let [first, last] = pair {
                out.push(ShardReplicas { first: *first, last: *last, replicas: master_online.then_some(replicas) });
            }
        }
    }
    out
}

/// The online replicas of the master of `slot`, as `shards` say.
pub fn replicas_of(shards: &[ShardReplicas], slot: u16) -> Option<u32> {
    shards.iter().find(|s| (s.first..=s.last).contains(&slot)).and_then(|s| s.replicas)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::BulkString(text.as_bytes().to_vec())
    }

    fn node(role: &str, health: &str) -> Value {
        Value::Array(vec![s("id"), s("abc"), s("port"), Value::Int(7000), s("role"), s(role), s("health"), s(health)])
    }

    #[test]
    fn a_shard_counts_its_online_replicas_while_its_master_is_online() {
        let reply = Value::Array(vec![
            Value::Array(vec![
                s("slots"),
                Value::Array(vec![Value::Int(0), Value::Int(5460)]),
                s("nodes"),
                Value::Array(vec![node("master", "online"), node("replica", "online")]),
            ]),
            // Failed over: the new master, and the old one failed (now listed as a replica).
            Value::Array(vec![
                s("slots"),
                Value::Array(vec![Value::Int(5461), Value::Int(10922)]),
                s("nodes"),
                Value::Array(vec![node("master", "online"), node("replica", "failed")]),
            ]),
            // Its master failed, not yet replaced.
            Value::Array(vec![
                s("slots"),
                Value::Array(vec![Value::Int(10923), Value::Int(16383)]),
                s("nodes"),
                Value::Array(vec![node("master", "failed"), node("replica", "online")]),
            ]),
        ]);
        let shards = read(reply);
        assert_eq!(replicas_of(&shards, 100), Some(1));
        assert_eq!(replicas_of(&shards, 6000), Some(0));
        assert_eq!(replicas_of(&shards, 16383), None);
        assert_eq!(replicas_of(&read(Value::Nil), 1), None);
    }

    #[test]
    fn a_resp3_reply_of_maps_reads_the_same() {
        let node = |role: &str, health: &str| {
            Value::Map(vec![
                (s("role"), s(role)),
                (s("health"), Value::VerbatimString { format: redis::VerbatimFormat::Text, text: health.into() }),
            ])
        };
        let reply = Value::Array(vec![Value::Map(vec![
            (s("slots"), Value::Array(vec![Value::Int(0), Value::Int(99), Value::Int(200), Value::Int(299)])),
            (
                s("nodes"),
                Value::Array(vec![node("master", "online"), node("replica", "online"), node("replica", "loading")]),
            ),
        ])]);
        let shards = read(reply);
        assert_eq!(shards.len(), 2);
        assert_eq!(replicas_of(&shards, 50), Some(1));
        assert_eq!(replicas_of(&shards, 250), Some(1));
        assert_eq!(replicas_of(&shards, 150), None);
    }
}
