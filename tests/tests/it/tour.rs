//! The README's run command and `examples/tour.sh`, exactly as a newcomer uses them.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{free_port, temp_dir, terminal_command};

#[test]
fn the_tour_runs_unchanged_against_the_demo() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    let data = temp_dir("demo");
    let port = free_port();
    let mut demo = terminal_command(root.join("scripts/demo.sh"))
        .env("WEIR_DATA_DIR", &data)
        .env("WEIR_LISTEN", format!("127.0.0.1:{port}"))
        .env("WEIR_LOG", "warn")
        .env("DEMO_RECEIVER", format!("127.0.0.1:{}", free_port()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("scripts/demo.sh");
    let stderr = demo.stderr.take().unwrap();
    let build_output = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let stdout = demo.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let started = Instant::now();
    let mut printed = Vec::new();
    while !printed.iter().any(|l: &String| l.contains("Weir is running")) {
        assert!(started.elapsed() < Duration::from_secs(300), "the demo did not start: {printed:?}");
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
            printed.push(line);
        }
    }
    // The demo prints working credentials and a first curl.
    while let Ok(line) = rx.recv_timeout(Duration::from_millis(300)) {
        printed.push(line);
    }
    let text = printed.join("\n");
    // Offline, it ends in a delivery to the example subscriber, verified, shown whole.
    assert!(text.contains("received event evt_") && text.contains("verified its\nwebhook-signature header"), "{text}");
    assert!(text.contains("webhook-signature: v1,") && text.contains("\"id\": \"wo_demo\""), "{text}");
    assert!(text.contains("admin secret:") && text.contains("curl -s -X POST"), "{text}");
    assert!(text.contains("/settings/login") && text.contains("email admin@demo.example, password "), "{text}");

    let tour = || {
        terminal_command(root.join("examples/tour.sh"))
            .current_dir(&root)
            .env("WEIR_URL", format!("http://127.0.0.1:{port}"))
            .env("WEIR_DATA_DIR", &data)
            .env("RECEIVER_PORT", free_port().to_string())
            .output()
            .expect("examples/tour.sh")
    };
    let first = tour();
    // The tour can be run again: it reuses its webhook and replaces its plugin's version.
    let tour = tour();
    let _ = Command::new("kill").arg("-TERM").arg(demo.id().to_string()).status();
    let _ = demo.wait();
    // test.sh built what the demo runs: the demo compiled nothing.
    let build_output = build_output.join().unwrap();
    assert!(!build_output.contains("Compiling"), "the demo rebuilt:\n{build_output}");
    for run in [&first, &tour] {
        let out = String::from_utf8_lossy(&run.stdout);
        assert!(run.status.success(), "tour failed:\n{out}\n{}", String::from_utf8_lossy(&run.stderr));
    }
    let out = String::from_utf8_lossy(&tour.stdout);
    assert!(out.contains("drop: export of Form frm_tour by someone-else is not in the filter"), "{out}");
    assert!(out.contains(": completed"), "{out}");
    assert!(out.contains("downloaded: ") && out.contains(".pdf"), "{out}");
    assert_eq!(out.matches(" filtered ").count(), 1, "{out}");
    assert!(out.contains("report_export_completed succeeded"), "{out}");
    assert!(out.contains("attempts: 2"), "{out}");
    assert!(out.contains("Tour complete"), "{out}");
}
