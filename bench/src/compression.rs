//! `WEIR_BENCH_ONLY=compression`: the cost and size of storing one event's envelope with each
//! of the two dictionaries (`weir::store::events::stored`): the vocabulary alone (`W3`, what
//! this release writes) and the vocabulary with entropy tables (`W5`, read by this release,
//! written by the next). In process, one thread, each envelope stored and read `n` times
//! (warm caches: the API thread, between requests, has them colder).

use std::time::Instant;

use weir::store::events::stored::{Dictionary, StoredEvent};

/// The envelopes measured: the `1 webhook` load's, the plugin bench's export, and a ~30 KB one.
fn envelopes() -> Vec<(&'static str, String)> {
    let work_order = crate::load::work_order_envelope(812);
    let export = crate::load::export_envelope("rex_1", "frm_1", "usr_bench");
    let rows: Vec<serde_json::Value> = (0..400)
        .map(|i| serde_json::json!({"id": format!("tsk_{i}"), "title": format!("Check valve {i}"), "status": if i % 3 == 0 { "completed" } else { "open" }, "priority": i % 5}))
        .collect();
    let large = serde_json::json!({
        "id": "evt_01M8ZK3QH5T1", "action": "work_order_updated", "created_at": "2026-11-22T11:00:38.123Z",
        "organisation": {"id": "org_01M8AB"}, "creator": {"id": "usr_bench", "name": "Bench Publisher"},
        "subject": {"type": "WorkOrder", "id": "wo_813"},
        "work_order": {"id": "wo_813", "title": "Shutdown", "status": "open", "tasks": rows},
    })
    .to_string();
    vec![("1 webhook load's work order", work_order), ("report export", export), ("work order with 400 tasks", large)]
}

/// Prints the table: per envelope and dictionary, the stored size and the mean time to store
/// (encode) and to read (decode) it.
pub fn print(n: usize) {
    println!("| envelope | bytes | stored with the vocabulary (`W3`) | with entropy tables (`W5`) |");
    println!("|---|---|---|---|");
    for (name, envelope) in envelopes() {
        let event = StoredEvent {
            created_at: "2026-11-22T11:00:38.123Z".into(),
            envelope: envelope.clone(),
            accepted_ms: 1_795_000_000_000,
            trace: None,
        };
        let mut cells = Vec::new();
        for dictionary in [Dictionary::Vocabulary, Dictionary::Tables] {
            let size = event.encode_with(dictionary).len();
            let started = Instant::now();
            let mut total = 0;
            for _ in 0..n {
                total += event.encode_with(dictionary).len();
            }
            let each = started.elapsed().as_secs_f64() * 1e6 / n as f64;
            assert_eq!(total, size * n, "the same envelope stores the same way every time");
            let stored = event.encode_with(dictionary);
            let started = Instant::now();
            for _ in 0..n {
                let read = StoredEvent::decode(&stored).expect("reads back");
                assert_eq!(read.envelope.len(), envelope.len());
            }
            let read = started.elapsed().as_secs_f64() * 1e6 / n as f64;
            cells.push(format!("{size} B; {each:.1} µs to store, {read:.1} to read"));
        }
        println!("| {name} | {} | {} | {} |", envelope.len(), cells[0], cells[1]);
    }
}
