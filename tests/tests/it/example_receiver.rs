//! `examples/receiver`: a subscriber that verifies signatures and dedupes deliveries.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};
use weir::store::tenants::orgs::Plan;

use crate::support::http::Http;
use crate::support::weir::{Weir, work_order_event};
use crate::support::{eventually, free_port};

pub struct ExampleReceiver {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    pub base: String,
}

impl ExampleReceiver {
    pub async fn start(secret: &str, port: u16, download_dir: Option<&std::path::Path>) -> ExampleReceiver {
        let exe = crate::support::weir::weir_binary().with_file_name("weir-receiver");
        let mut command = Command::new(exe);
        command.arg("--listen").arg(format!("127.0.0.1:{port}")).arg("--secret").arg(secret);
        if let Some(dir) = download_dir {
            command.arg("--download-dir").arg(dir);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("weir-receiver built");
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let base = format!("http://127.0.0.1:{port}");
        eventually("receiver listening", Duration::from_secs(10), async || {
            tokio::net::TcpStream::connect(("127.0.0.1", port)).await.ok().map(|_| ())
        })
        .await;
        ExampleReceiver { child, lines, base }
    }

    /// The next line printed, as JSON.
    pub async fn next(&mut self, timeout: Duration) -> Option<Value> {
        let line = tokio::time::timeout(timeout, self.lines.next_line()).await.ok()?.ok()??;
        serde_json::from_str(&line).ok()
    }
}

impl Drop for ExampleReceiver {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

#[tokio::test]
async fn the_example_receiver_verifies_signatures_and_dedupes() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/hook");
    let webhook = t.admin.create_webhook(&url, &["work_order_created"]).await;
    let mut receiver = ExampleReceiver::start(webhook["signing_secret"].as_str().unwrap(), port, None).await;

    let event_id = t.publisher.publish(&work_order_event("wo_9")).await;
    let line = receiver.next(Duration::from_secs(10)).await.expect("a verified delivery");
    assert_eq!(line["event"]["id"], event_id);
    assert_eq!(line["attempt"], "1");
    let delivery = line["delivery"].as_str().unwrap().to_owned();
    // It says which signature it verified and shows the request's headers.
    assert_eq!(line["verified"], "webhook-signature");
    assert_eq!(line["headers"]["webhook-id"], delivery.as_str());
    assert_eq!(line["headers"]["x-webhook-delivery"], delivery.as_str());

    // A retry of the same delivery is acknowledged but not processed twice. (Once Weir has
    // recorded the first attempt: the receiver logs it before Weir reads the answer, and a
    // retry of a delivery still in flight is merged into it.)
    eventually("the first attempt recorded", Duration::from_secs(10), async || {
        let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{delivery}")).await.json();
        (d["status"] == "succeeded").then_some(())
    })
    .await;
    t.admin.post(&format!("/api/v2/webhook_deliveries/{delivery}/retry"), &json!({})).await.expect(202);
    let d = eventually("retry answered", Duration::from_secs(10), async || {
        let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{delivery}")).await.json();
        (d["attempts"].as_array()?.len() == 2 && d["status"] == "succeeded").then_some(d)
    })
    .await;
    assert_eq!(d["attempts"][1]["response_body"], "{\"duplicate\":true}");

    // A forged or altered request is refused.
    let http = Http::new(&receiver.base);
    let body = serde_json::to_vec(&json!({"id": "evt_forged"})).unwrap();
    let resp = http
        .post("/hook")
        .header("x-webhook-signature", &"0".repeat(64))
        .header("x-webhook-delivery", "dlv_x")
        .raw("application/json", body)
        .send()
        .await;
    assert_eq!(resp.status, 401);
    // So is a delivery signed with another webhook's secret.
    let other = t.admin.create_webhook(&url, &["defect_created"]).await;
    t.publisher
        .publish(&json!({"action": "defect_created", "creator": {"id": "u", "name": "n"}, "subject": {"type": "Defect", "id": "d"}, "defect": {}}))
        .await;
    let d = t.admin.settled(other["id"].as_str().unwrap(), 1).await.remove(0);
    assert_eq!(d["attempts"][0]["status_code"], 401);
    assert!(receiver.next(Duration::from_millis(300)).await.is_none(), "nothing else was accepted");
}
