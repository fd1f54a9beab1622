use serde_json::Value;

use super::*;

#[test]
fn the_envelope_is_the_documents_shape_with_every_string_escaped() {
    let snapshot = RawValue::from_string("{\"id\":\"wo_1\",\"title\":\"Pump \\\"A\\\"\"}".into()).unwrap();
    let mut event = Event {
        id: "evt_1".into(),
        fresh_id: false,
        action: "work_order_deleted".into(),
        created_at: "2026-11-25T10:00:00.000Z".into(),
        creator_id: "usr_1".into(),
        creator_name: "Zoë \"Z\" \\ O'Neil\n".into(),
        subject_type: "WorkOrder".into(),
        subject_id: "wo_1".into(),
        deleted: true,
        snapshot_key: "work_order",
        snapshot: std::borrow::Cow::Borrowed(&snapshot),
        trace: None,
        test: false,
        source: None,
    };
    let envelope = event.envelope("org_1");
    assert_eq!(
        envelope,
        "{\"id\":\"evt_1\",\"action\":\"work_order_deleted\",\"created_at\":\"2026-11-25T10:00:00.000Z\",\
         \"organisation\":{\"id\":\"org_1\"},\"creator\":{\"id\":\"usr_1\",\"name\":\"Zoë \\\"Z\\\" \\\\ O'Neil\\n\"},\
         \"subject\":{\"type\":\"WorkOrder\",\"id\":\"wo_1\",\"deleted\":true},\
         \"work_order\":{\"id\":\"wo_1\",\"title\":\"Pump \\\"A\\\"\"}}"
    );
    let parsed: Value = serde_json::from_str(&envelope).unwrap();
    assert_eq!(parsed["creator"]["name"], "Zoë \"Z\" \\ O'Neil\n");
    event.deleted = false;
    let parsed: Value = serde_json::from_str(&event.envelope("org_1")).unwrap();
    assert_eq!(parsed["subject"], serde_json::json!({"type": "WorkOrder", "id": "wo_1"}));
}

#[test]
fn weirs_own_creator_id_is_refused_however_it_is_written() {
    for id in ["weir", "Weir", "WEIR", "weir ", " weir", "weir\u{200b}", "w\u{200d}eir", "\u{feff}WeIr", "we\u{00ad}ir"]
    {
        assert!(super::validate::is_reserved_creator(id), "{id:?}");
    }
    for id in ["weird", "usr_weir", "wier", "w eir x"] {
        assert!(!super::validate::is_reserved_creator(id), "{id:?}");
    }
}

/// `offload` with every thread busy (each with a job of another organisation, waiting for
/// the returned sender to be dropped).
async fn every_thread_held(offload: &std::sync::Arc<crate::offload::Offload>) -> std::sync::mpsc::Sender<()> {
    let (release, waiting) = std::sync::mpsc::channel::<()>();
    let waiting = std::sync::Arc::new(std::sync::Mutex::new(waiting));
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    for i in 0..threads {
        let (started, running) = tokio::sync::oneshot::channel();
        let (offload, waiting) = (offload.clone(), waiting.clone());
        tokio::spawn(async move {
            offload
                .run(&format!("org_busy{i}"), move || {
                    let _ = started.send(());
                    // Waits until `release` is dropped (then every holder ends).
                    let _ = waiting.lock().map(|w| w.recv());
                })
                .await
        });
        running.await.expect("a holder started");
    }
    release
}

fn work_order(title: &str) -> bytes::Bytes {
    serde_json::to_vec(&serde_json::json!({"action": "work_order_created", "creator": {"id": "u", "name": "A"},
        "subject": {"type": "WorkOrder", "id": "wo_1"}, "work_order": {"id": "wo_1", "title": title}}))
    .unwrap()
    .into()
}

#[tokio::test]
async fn a_large_event_is_read_and_compressed_on_the_tenant_threads_and_a_small_one_where_it_is_asked() {
    use std::time::Duration;

    use super::publishing::encode_on;
    use super::validate::read_on;
    use crate::offload::LARGE_INPUT;
    use crate::store::events::stored::StoredEvent;

    let offload = std::sync::Arc::new(crate::offload::Offload::new());
    let release = every_thread_held(&offload).await;
    let (small, large) = (work_order("Pump"), work_order(&"ab".repeat(LARGE_INPUT)));
    // Every thread busy: a small event is read and stored at once; a large one waits its turn.
    let read = read_on(&offload, "org_1", &small).await.expect("valid");
    assert_eq!(read.snapshot.get(), r#"{"id":"wo_1","title":"Pump"}"#);
    let stored = |envelope: String| {
        std::sync::Arc::new(StoredEvent { created_at: String::new(), envelope, accepted_ms: 1, trace: None })
    };
    let small_stored = stored(read.envelope("org_1"));
    assert_eq!(encode_on(&offload, "org_1", &small_stored).await, small_stored.encode());
    let waiting = tokio::time::timeout(Duration::from_millis(300), read_on(&offload, "org_1", &large)).await;
    assert!(waiting.is_err(), "a large event waited for a tenant thread");
    let large_stored = stored(String::from_utf8(large.to_vec()).unwrap());
    let waiting = tokio::time::timeout(Duration::from_millis(300), encode_on(&offload, "org_1", &large_stored)).await;
    assert!(waiting.is_err(), "a large event's compression waited for a tenant thread");
    drop(release);
    let read = read_on(&offload, "org_1", &large).await.expect("valid");
    let title = "ab".repeat(LARGE_INPUT);
    assert_eq!(read.snapshot.get(), format!(r#"{{"id":"wo_1","title":"{title}"}}"#), "the same snapshot, read there");
    assert!(matches!(read.snapshot, std::borrow::Cow::Owned(_)));
    assert_eq!(encode_on(&offload, "org_1", &large_stored).await, large_stored.encode());
    let bad = read_on(&offload, "org_1", &bytes::Bytes::from(vec![b'['; LARGE_INPUT])).await.unwrap_err();
    assert_eq!(bad.0[0].field, "body", "{bad:?}");
}
