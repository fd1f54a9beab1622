//! Which slots' masters have their replicas now, from `CLUSTER SHARDS` (one command, any
//! node, whatever the client's map of the slots): a shard counts its master — if online —
//! and its replicas that are online.

use redis::Value;

use super::reply::{Named, text};

/// A range of slots (inclusive) and the online replicas of its master (`None`: the master
/// itself is not online).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardReplicas {
    pub first: u16,
    pub last: u16,
    pub replicas: Option<u32>,
}

/// Reads a `CLUSTER SHARDS` reply (each shard and node as named fields, [`Named`]).
pub fn read(reply: Value) -> Vec<ShardReplicas> {
    let Value::Array(shards) = reply else { return Vec::new() };
    let named = |value: Value| Named::from_value(value, "CLUSTER SHARDS").ok();
    let mut out = Vec::new();
    for mut shard in shards.into_iter().filter_map(named) {
        let slots: Vec<u16> = shard.list("slots").into_iter().filter_map(|n| text(n)?.parse().ok()).collect();
        let nodes: Vec<Named> = shard.list("nodes").into_iter().filter_map(named).collect();
        let is = |node: &Named, name: &str, value: &str| node.text(name).as_deref() == Some(value);
        let online = |node: &&Named| is(node, "health", "online");
        let master_online = nodes.iter().filter(|n| is(n, "role", "master")).any(|n| online(&n));
        let replicas = nodes.iter().filter(|n| is(n, "role", "replica")).filter(online).count() as u32;
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
        // The same on a RESP3 connection: maps instead of lists of names and values.
        let map_node = |role: &str| Value::Map(vec![(s("role"), s(role)), (s("health"), s("online"))]);
        let resp3 = Value::Array(vec![Value::Map(vec![
            (s("slots"), Value::Array(vec![Value::Int(0), Value::Int(16383)])),
            (s("nodes"), Value::Array(vec![map_node("master"), map_node("replica"), map_node("replica")])),
        ])]);
        assert_eq!(replicas_of(&read(resp3), 42), Some(2));
    }
}
