//! Which slots' masters have their replicas now, from `CLUSTER SHARDS` (one command, any
//! node, whatever the client's map of the slots): a shard counts its master — if online —
//! and its replicas that are online.

use redis::Value;

/// A range of slots (inclusive) and the online replicas of its master (`None`: the master
/// itself is not online).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardReplicas {
    pub first: u16,
    pub last: u16,
    pub replicas: Option<u32>,
}

/// Reads a `CLUSTER SHARDS` reply (RESP2 lists of names and values, or RESP3 maps).
pub fn read(reply: &Value) -> Vec<ShardReplicas> {
    let Value::Array(shards) = reply else { return Vec::new() };
    let mut out = Vec::new();
    for shard in shards {
        let slots: Vec<u16> = field(shard, "slots")
            .and_then(as_list)
            .map(|l| l.iter().filter_map(as_int).map(|n| n as u16).collect())
            .unwrap_or_default();
        let nodes = field(shard, "nodes").and_then(as_list).unwrap_or_default();
        let text = |node: &Value, name: &str| field(node, name).and_then(as_text).unwrap_or_default();
        let online = |node: &&Value| text(node, "health") == "online";
        let master_online = nodes.iter().filter(|n| text(n, "role") == "master").any(|n| online(&n));
        let replicas = nodes.iter().filter(|n| text(n, "role") == "replica").filter(online).count() as u32;
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

fn field<'a>(value: &'a Value, name: &str) -> Option<&'a Value> {
    match value {
        Value::Array(items) => {
            items.chunks(2).find(|kv| as_text(&kv[0]).as_deref() == Some(name)).and_then(|kv| kv.get(1))
        }
        Value::Map(pairs) => pairs.iter().find(|(k, _)| as_text(k).as_deref() == Some(name)).map(|(_, v)| v),
        _ => None,
    }
}

fn as_list(value: &Value) -> Option<&[Value]> {
    match value {
        Value::Array(items) => Some(items),
        _ => None,
    }
}

fn as_int(value: &Value) -> Option<i64> {
    match value {
        Value::Int(n) => Some(*n),
        _ => as_text(value)?.parse().ok(),
    }
}

fn as_text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(s) => Some(s.clone()),
        Value::VerbatimString { text, .. } => Some(text.clone()),
        _ => None,
    }
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
        let shards = read(&reply);
        assert_eq!(replicas_of(&shards, 100), Some(1));
        assert_eq!(replicas_of(&shards, 6000), Some(0));
        assert_eq!(replicas_of(&shards, 16383), None);
        assert_eq!(replicas_of(&read(&Value::Nil), 1), None);
    }
}
