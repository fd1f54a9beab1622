//! A source's requests with history in PostgreSQL and a broker behind Weir (contract §10 with
//! §8 and §9): a request forwarded to a NATS JetStream subject carries the provider's body
//! byte for byte and `X-Weir-Source` as message headers; its event and delivery move to
//! PostgreSQL and read back the same; the provider sending it again after the move is still
//! the same event, delivered once.

use std::time::Duration;

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::destinations::{messages, stream};
use crate::support::eventually;
use crate::support::nats::NatsServer;
use crate::support::postgres;
use crate::support::weir::WeirBuilder;

#[tokio::test]
async fn a_sources_request_goes_to_a_broker_moves_to_history_and_stays_one_event() {
    let nats = NatsServer::start(None);
    let js = nats.client().await;
    let inbound = stream(&js, "INBOUND", "inbound.>").await;
    let pg = postgres::shared();
    let builder = WeirBuilder::shared().env("WEIR_HISTORY_URL", &pg.url()).env("WEIR_HISTORY_HOT", "1s");
    let schema = postgres::schema(&builder.prefix());
    let weir = builder.start().await;
    let t = weir.tenant(Plan::pro()).await;
    let made = t
        .admin
        .post("/api/v2/sources", &json!({"type": "api_key", "api_key": {"header": "X-Api-Key", "key": "k-1"}}))
        .await
        .expect(201)
        .json();
    let (id, url) = (made["id"].as_str().unwrap(), made["ingest_url"].as_str().unwrap());
    let path = &url[url.find("/in/").unwrap()..];
    let body = json!({"subscribed_sources": [id], "destination": {"type": "nats", "url": nats.url(None), "subject": "inbound.partner"}});
    let hook = t.admin.post("/api/v2/webhooks", &body).await.expect(201).json();
    let hook = hook["id"].as_str().unwrap();
    let sent = "order=42&state=paid";
    let post = || weir.http().post(path).raw("application/x-www-form-urlencoded", sent).header("x-api-key", "k-1");
    let first = post().send().await.expect(200).json();
    let event = first["id"].as_str().unwrap().to_owned();

    let got = messages(&inbound, 1).await;
    assert_eq!(got[0].payload.as_ref(), sent.as_bytes(), "the body byte for byte");
    let headers = got[0].headers.as_ref().expect("headers");
    assert_eq!(headers.get("x-weir-source").map(|v| v.as_str()), Some(id));
    assert_eq!(headers.get("content-type").map(|v| v.as_str()), Some("application/x-www-form-urlencoded"));
    assert_eq!(headers.get("x-api-key").map(|v| v.as_str()), Some("k-1"), "the provider's headers");

    let delivered = t.admin.settled(hook, 1).await.remove(0);
    let delivery = delivered["id"].as_str().unwrap();
    eventually("the event and its delivery moved to PostgreSQL", Duration::from_secs(30), async || {
        let moved = pg.count(&format!("SELECT count(*) FROM {schema}.deliveries WHERE id = '{delivery}'")).await;
        (moved == 1).then_some(())
    })
    .await;
    let read = t.admin.get(&format!("/api/v2/webhook_deliveries/{delivery}")).await.expect(200).json();
    assert_eq!(read, delivered, "read from history as from Redis");
    let again = post().send().await.expect(200).json();
    assert_eq!(again["id"], event.as_str(), "sent again: the same event");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(t.admin.deliveries_of(hook).await.len(), 1, "delivered once");
    let logged = t.admin.get("/api/v2/events?action=source_event").await.expect(200).json();
    assert_eq!(logged["data"].as_array().map(Vec::len), Some(1), "one event in the log: {logged}");
    assert_eq!(logged["data"][0]["source"], id);
}
