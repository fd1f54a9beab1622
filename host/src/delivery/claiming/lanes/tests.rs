use crate::store::queue::claim::Member;

use super::*;

fn waiting(n: usize) -> Waiting {
    Waiting {
        partition: Partition(0),
        member: Member { delivery: format!("dlv_{n}"), org: "org_1".into(), event: format!("evt_{n}") },
    }
}

/// Claims what `webhook` has room for from an endless queue; returns how many started.
fn claim(lanes: &Lanes, webhook: &str, next: &mut usize) -> usize {
    let room = lanes.reserve(webhook).room;
    let list: Vec<Waiting> = (*next..*next + room).map(waiting).collect();
    *next += room;
    lanes.claimed(webhook, room, list).len()
}

#[test]
fn a_new_lane_starts_one_attempt_and_successes_widen_it_up_to_the_cap() {
    let lanes = Lanes::new(4, 8);
    let mut next = 0;
    assert_eq!(lanes.reserve("w").room, 1, "nothing known yet: one attempt, nothing waiting");
    lanes.claimed("w", 1, vec![waiting(0)]);
    next += 1;
    assert_eq!(lanes.reserve("w").room, 0);
    for _ in 0..10 {
        assert_eq!(lanes.signal("w", Signal::Success), None);
        lanes.release("w", false);
        claim(&lanes, "w", &mut next);
    }
    assert_eq!(lanes.in_flight("w"), 4, "the window stops at the cap");
    assert_eq!(lanes.reserve("w").room, 0, "four in flight and four waiting");
}

#[test]
fn failures_halve_the_window_and_one_at_a_window_of_one_turns_to_probing_until_a_success() {
    let lanes = Lanes::new(8, 8);
    for _ in 0..8 {
        lanes.signal("w", Signal::Success);
    }
    assert_eq!(lanes.signal("w", Signal::Failed("HTTP 500".into())), None, "8 → 4");
    lanes.signal("w", Signal::Failed("HTTP 500".into()));
    lanes.signal("w", Signal::Failed("HTTP 500".into()));
    let probing = lanes.signal("w", Signal::Failed("HTTP 500".into()));
    assert!(matches!(probing, Some(EndpointChange::Probing { reason, .. }) if reason == "HTTP 500"));
    assert_eq!(lanes.signal("w", Signal::Failed("HTTP 500".into())), None, "said once");
    let mut next = 0;
    assert_eq!(claim(&lanes, "w", &mut next), 1, "probing: one attempt, nothing waiting");
    assert_eq!(lanes.reserve("w").room, 0);
    assert!(matches!(lanes.signal("w", Signal::Success), Some(EndpointChange::Healthy { .. })));
}

#[test]
fn no_answer_turns_a_healthy_lane_to_probing_at_once() {
    let lanes = Lanes::new(16, 8);
    for _ in 0..16 {
        lanes.signal("w", Signal::Success);
    }
    let change = lanes.signal("w", Signal::NoAnswer("timed out after 10s".into()));
    assert!(matches!(change, Some(EndpointChange::Probing { .. })));
    let mut next = 0;
    assert_eq!(claim(&lanes, "w", &mut next), 1);
}

#[test]
fn suspect_lanes_wait_for_the_slow_share_and_healthy_ones_do_not() {
    let lanes = Lanes::new(4, 2);
    let mut next = 0;
    for hook in ["hang1", "hang2"] {
        assert_eq!(claim(&lanes, hook, &mut next), 1);
        lanes.became_slow(hook);
    }
    lanes.signal("hang3", Signal::NoAnswer("connection refused".into()));
    assert_eq!(lanes.reserve("hang3").room, 0, "probing, and the slow share is full");
    for _ in 0..4 {
        lanes.signal("ok", Signal::Success);
    }
    assert_eq!(claim(&lanes, "ok", &mut next), 4, "a healthy lane is not held by the slow share");
    lanes.release("hang1", true);
    assert_eq!(lanes.reserve("hang3").room, 1, "a slow attempt ended: room again");
    assert_eq!(lanes.sweep().slow, 1);
}

#[test]
fn a_pause_holds_every_claim_of_the_webhook_until_it_ends() {
    let lanes = Lanes::new(4, 8);
    let until_ms = crate::time::now_millis() + 150;
    let change = lanes.signal("w", Signal::Pause { until_ms, reason: "HTTP 429".into() });
    assert!(matches!(change, Some(EndpointChange::Paused { .. })));
    assert_eq!(lanes.paused_until("w"), Some(until_ms));
    assert_eq!(lanes.reserve("w").room, 0);
    assert_eq!(lanes.claimed("w", 0, vec![waiting(1)]), Vec::new(), "nothing starts while paused");
    assert_eq!(lanes.sweep().paused, 1);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(lanes.paused_until("w"), None);
    assert_eq!(lanes.release("w", false).next, vec![waiting(1)], "the waiting one starts once it ends");
}

#[test]
fn a_state_found_by_another_process_is_taken_up_only_when_newer() {
    let lanes = Lanes::new(8, 8);
    for _ in 0..8 {
        lanes.signal("w", Signal::Success);
    }
    let probing = EndpointFields { probing: true, since_ms: Some(5), ..EndpointFields::default() };
    lanes.learned("w", Some(20), &probing);
    assert_eq!(lanes.reserve("w"), Room { room: 1, rate_limit: Some(20), proven: false });
    lanes.claimed("w", 1, Vec::new());
    let healthy = EndpointFields { since_ms: Some(6), ..EndpointFields::default() };
    lanes.learned("w", None, &healthy);
    assert!(lanes.reserve("w").room >= 2, "healthy again");
    assert!(!lanes.probing("w"));
    lanes.learned("w", None, &probing);
    assert!(!lanes.probing("w"), "an older state is not taken");
}

#[test]
fn a_rate_wait_holds_claims_and_shutdown_takes_the_waiting_deliveries() {
    let lanes = Lanes::new(1, 8);
    lanes.limited("missing", Duration::from_secs(1));
    lanes.signal("w", Signal::Success);
    lanes.reserve("w");
    lanes.claimed("w", 2, vec![waiting(1), waiting(2)]);
    lanes.limited("w", Duration::from_secs(60));
    assert_eq!(lanes.reserve("w").room, 0);
    assert_eq!(lanes.take_waiting(), vec![("w".to_owned(), waiting(2))]);
}
