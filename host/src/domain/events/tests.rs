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
        snapshot: &snapshot,
        trace: None,
        test: false,
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
