//! Misbehaves as its config says: `{"mode": "...", "n": N}`. Used by Weir's tests to show
//! each limit holds (within and beyond) and each forbidden capability is refused.

use std::hint::black_box;
use std::sync::atomic::{AtomicU8, Ordering};

wit_bindgen::generate!({ path: "../../../wit", world: "filter" });

use weir::plugin::host::log;
use weir::plugin::types::{Delivery, Header, Level};

struct Hostile;

/// Pages of initialised data (in the memory image) and of zeroed data, for `scatter`.
const PAGE: usize = 4096;
const SCATTER_PAGES: usize = 160;
static IMAGE: [AtomicU8; SCATTER_PAGES * PAGE] = [const { AtomicU8::new(7) }; SCATTER_PAGES * PAGE];
static ZEROED: [AtomicU8; SCATTER_PAGES * PAGE] = [const { AtomicU8::new(0) }; SCATTER_PAGES * PAGE];

/// Writes one byte in every other page of both arrays (160 separate runs of dirty pages),
/// first counting those that still hold an earlier call's write: a fresh instance must
/// find none.
fn scatter() -> usize {
    let mut stale = 0;
    for (pages, pristine) in [(&IMAGE, 7), (&ZEROED, 0)] {
        for at in (0..SCATTER_PAGES * PAGE).step_by(2 * PAGE) {
            if pages[at].swap(0xEE, Ordering::Relaxed) != pristine {
                stale += 1;
            }
        }
    }
    stale
}

fn config_value(config: &str, key: &str) -> Option<String> {
    let at = config.find(&format!("\"{key}\""))?;
    let rest = config[at + key.len() + 2..].trim_start().strip_prefix(':')?.trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        return s.split('"').next().map(str::to_owned);
    }
    Some(rest.chars().take_while(|c| c.is_ascii_digit()).collect())
}

fn deliver(body: Option<String>) -> Verdict {
    Verdict::Deliver(Delivery { body, headers: Vec::new() })
}

fn recurse(depth: u64) -> u64 {
    if depth == 0 {
        return 0;
    }
    let local = [depth; 16];
    black_box(&local);
    recurse(depth - 1) + black_box(local[3])
}

impl Guest for Hostile {
    fn handle(event: &Event, config: String) -> Verdict {
        let mode = config_value(&config, "mode").unwrap_or_default();
        let n: u64 = config_value(&config, "n").and_then(|v| v.parse().ok()).unwrap_or(0);
        match mode.as_str() {
            "spin" => {
                let mut x: u64 = 1;
                for i in 0..n {
                    x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
                }
                log(Level::Info, &format!("spun {n} times: {x}"));
                deliver(None)
            }
            "forever" => loop {
                black_box(());
            },
            "alloc" => {
                let mut v: Vec<u8> = Vec::new();
                v.resize((n as usize) * 1024 * 1024, 1);
                log(Level::Info, &format!("allocated {} MiB", v.len() / 1024 / 1024));
                deliver(None)
            }
            "recurse" => deliver(Some(format!("{{\"depth\":{}}}", recurse(n)))),
            "panic" => panic!("boom"),
            "output" => deliver(Some(format!("\"{}\"", "x".repeat(n as usize)))),
            "not_json" => deliver(Some("this is not JSON".into())),
            "env" => deliver(Some(format!("{{\"home\":\"{}\"}}", std::env::var("HOME").unwrap_or_default()))),
            "file" => {
                deliver(Some(format!("{{\"passwd\":{}}}", std::fs::read("/etc/passwd").map(|b| b.len()).unwrap_or(0))))
            }
            "clock" => deliver(Some(format!("{:?}", std::time::SystemTime::now()))),
            "random" => {
                let map: std::collections::HashMap<u8, u8> = std::collections::HashMap::new();
                deliver(Some(format!("{}", map.len())))
            }
            "log" => {
                for i in 0..n {
                    log(Level::Warn, &format!("line {i}"));
                }
                deliver(None)
            }
            "print" => {
                println!("hello from stdout");
                eprintln!("hello from stderr");
                deliver(None)
            }
            "host_calls" => {
                let mut total = 0;
                for _ in 0..n {
                    total += event.body().len();
                }
                deliver(Some(format!("{{\"read\":{total}}}")))
            }
            "headers" => Verdict::Deliver(Delivery {
                body: Some("{\"rewritten\":true}".into()),
                headers: vec![
                    Header { name: "X-Webhook-Signature".into(), value: "forged".into() },
                    Header { name: "X-Team".into(), value: "ops".into() },
                ],
            }),
            "echo" => deliver(Some(format!(
                "{{\"action\":\"{}\",\"org\":\"{}\",\"creator\":\"{}\",\"subject\":\"{}/{}\",\"title\":{}}}",
                event.action(),
                event.organisation_id(),
                event.creator_id(),
                event.subject_type(),
                event.subject_id(),
                event.get("/work_order/title").unwrap_or_else(|| "null".into())
            ))),
            "drop" => Verdict::Drop("dropped on purpose".into()),
            "scatter" => deliver(Some(format!("{{\"stale\":{}}}", scatter()))),
            _ => deliver(None),
        }
    }
}

export!(Hostile);
