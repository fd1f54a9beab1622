use super::slots::SLOTS;
use super::*;

#[test]
fn slots_follow_the_hash_tag() {
    // Known values of Redis Cluster's key slot function.
    assert_eq!(slot("foo"), 12182);
    assert_eq!(slot("{user1000}.following"), slot("{user1000}.followers"));
    assert_eq!(slot("{}foo"), slot("{}foo"), "an empty tag hashes the whole key");
    assert_ne!(slot("a{}b"), slot("{}"));
}

#[test]
fn everything_of_a_partition_shares_its_slot_and_partitions_spread_evenly() {
    let keys = Keys::new("weir", 16);
    for p in keys.partitions() {
        let s = slot(&keys.ready(p));
        assert_eq!(slot(&keys.event(p, "org_1", "evt_1")), s);
        assert_eq!(slot(&keys.delivery(p, "dlv_1")), s);
        assert_eq!(slot(&keys.webhook_queue(p, "wh_1")), s);
        assert_eq!(slot(&keys.org_deliveries(p, "org_1", 20_000)), s);
        assert_eq!(slot(&keys.webhook_new(p, "wh_1")), s);
        assert_eq!(slot(&keys.snapshots(p, "org_1")), s);
        assert_eq!(slot(&keys.event_log(p, "org_1", 495_000)), s);
        assert_eq!(u32::from(s) / (SLOTS / 16), u32::from(p.0), "partition {p:?} in its slice");
    }
    // Three masters with the default contiguous ranges: at most 6 of 16 partitions each.
    let mut per_master = [0; 3];
    for p in keys.partitions() {
        per_master[usize::from(slot(&keys.ready(p))) * 3 / 16384] += 1;
    }
    assert!(per_master.iter().all(|n| (5..=6).contains(n)), "{per_master:?}");
}

#[test]
fn an_organisations_keys_share_a_slot() {
    let keys = Keys::new("weir", 4);
    let s = slot(&keys.org("org_1"));
    for key in [
        keys.webhooks("org_1"),
        keys.webhook("org_1", "wh_1"),
        keys.subscribers("org_1", "a"),
        keys.plugin("org_1", "plg_1"),
    ] {
        assert_eq!(slot(&key), s, "{key}");
    }
    assert_eq!(slot(&keys.client("cli_1")), slot(&keys.token("cli_1", "abc")));
    assert_eq!(slot(&keys.replay("wh_1")), slot(&keys.replay_jobs()));
}

#[test]
fn events_about_one_record_share_a_partition() {
    let keys = Keys::new("weir", 16);
    let p = keys.partition_of_subject("org_1", "WorkOrder", "wo_1");
    assert_eq!(p, keys.partition_of_subject("org_1", "WorkOrder", "wo_1"));
    let spread: std::collections::HashSet<_> =
        (0..200).map(|i| keys.partition_of_subject("org_1", "WorkOrder", &format!("wo_{i}"))).collect();
    assert_eq!(spread.len(), 16, "one organisation's records use every partition");
}

#[test]
fn keys_are_spelled_as_the_layout_says() {
    // A stored data set is found by these exact names: building them differently must not
    // change one byte.
    let keys = Keys::new("weir", 1);
    let p = Partition(0);
    assert_eq!(keys.meta(), "weir:meta");
    assert_eq!(keys.org("org_1"), "weir:{org_1}:org");
    assert_eq!(keys.webhook("org_1", "wh_1"), "weir:{org_1}:wh:wh_1");
    assert_eq!(keys.ready(p), format!("weir:{}:ready", partition_tag(0, 1)));
    assert!(keys.ready(p).starts_with("weir:{p0."), "{}", keys.ready(p));
    assert_eq!(keys.delivery(p, "01ABC"), format!("weir:{}:d:01ABC", partition_tag(0, 1)));
}
