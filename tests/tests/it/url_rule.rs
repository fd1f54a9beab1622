//! The webhook URL rule through the API (contract §2).

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::support::weir::WeirBuilder;

#[tokio::test]
async fn every_non_public_range_is_refused_on_create_and_patch() {
    let weir = WeirBuilder::shared().env("WEIR_ALLOW_PRIVATE_TARGETS", "").start().await;
    let t = weir.tenant(Plan::pro()).await;
    let refused = [
        "http://0.0.0.0/",
        "http://0.1.2.3/",
        "http://10.0.0.1/",
        "http://10.255.255.255/",
        "http://100.64.0.1/",
        "http://100.127.255.254/",
        "http://127.0.0.1/",
        "http://127.1.2.3:8080/x",
        "http://169.254.169.254/latest/meta-data",
        "http://172.16.0.1/",
        "http://172.31.255.255/",
        "http://192.0.0.8/",
        "http://192.0.2.1/",
        "http://192.168.1.1/",
        "http://198.18.0.1/",
        "http://198.19.255.255/",
        "http://198.51.100.7/",
        "http://203.0.113.9/",
        "http://224.0.0.1/",
        "http://239.255.255.250/",
        "http://240.0.0.1/",
        "http://255.255.255.255/",
        "http://[::]/",
        "http://[::1]/",
        "http://[fc00::1]/",
        "http://[fd12:3456::1]/",
        "http://[fe80::1]/",
        "http://[ff02::1]/",
        "http://[2001:db8::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:10.0.0.1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://[64:ff9b::7f00:1]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://017700000001/",
        "http://127.1/",
        "http://localhost:8080/hook",
        "http://LOCALHOST/",
    ];
    for url in refused {
        let resp = t.admin.post("/api/v2/webhooks", &json!({"url": url, "subscribed_actions": []})).await;
        assert_eq!(resp.status, 422, "{url} should be refused: {}", resp.text());
        assert_eq!(resp.error_fields(), vec!["url"], "{url}");
        let message = resp.json()["error"]["details"][0]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("not a public address"), "{url}: {message}");
    }
    let form = [
        ("ftp://example.com/", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("https://user:pass@93.184.216.34/", "user name"),
        ("https://user@93.184.216.34/", "user name"),
        ("not a url", "absolute"),
        ("https://no-such-host.invalid/", "does not resolve"),
    ];
    for (url, needle) in form {
        let resp = t.admin.post("/api/v2/webhooks", &json!({"url": url, "subscribed_actions": []})).await.expect(422);
        let message = resp.json()["error"]["details"][0]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(needle), "{url}: {message}");
    }
    // Public literal addresses pass, IPv4 and IPv6.
    for url in ["https://93.184.216.34/hook", "https://[2606:4700:4700::1111]:8443/hook", "http://[::ffff:8.8.8.8]/"] {
        t.admin.post("/api/v2/webhooks", &json!({"url": url, "subscribed_actions": []})).await.expect(201);
    }
    // PATCH applies the same rule.
    let w = t.admin.create_webhook("https://93.184.216.34/", &[]).await;
    let path = format!("/api/v2/webhooks/{}", w["id"].as_str().unwrap());
    let resp = t.admin.patch(&path, &json!({"url": "http://[::1]:9/"})).await.expect(422);
    assert_eq!(resp.error_fields(), vec!["url"]);
}

#[tokio::test]
async fn exempt_ranges_are_allowed_and_nothing_else() {
    let weir = WeirBuilder::shared().env("WEIR_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8,fd00::/8").start().await;
    let t = weir.tenant(Plan::pro()).await;
    for url in ["http://127.0.0.1:9/", "http://[::ffff:127.0.0.1]:9/", "http://[fd00::5]/"] {
        t.admin.post("/api/v2/webhooks", &json!({"url": url, "subscribed_actions": []})).await.expect(201);
    }
    for url in ["http://10.0.0.1/", "http://[::1]/", "http://[fc00::1]/", "http://169.254.169.254/"] {
        t.admin.post("/api/v2/webhooks", &json!({"url": url, "subscribed_actions": []})).await.expect(422);
    }
}
