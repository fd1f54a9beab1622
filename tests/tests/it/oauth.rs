//! The token endpoint (service document §5, contract §2).

use std::time::Duration;

use base64::Engine as _;
use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::support::weir::{Weir, WeirBuilder};

#[tokio::test]
async fn client_credentials_in_the_form_give_a_bearer_token() {
    let weir = Weir::start_default().await;
    let org = weir.store.orgs().create_org("Acme", Plan::pro()).await.unwrap();
    let creds = weir.credentials(&org.id, true, false).await;
    let resp = weir
        .http()
        .post("/oauth/token")
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", &creds.client_id),
            ("client_secret", &creds.client_secret),
        ])
        .send()
        .await
        .expect(200);
    assert_eq!(resp.header("cache-control").as_deref(), Some("no-store"));
    let body = resp.json();
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 7200);
    let created = body["created_at"].as_u64().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert!(created.abs_diff(now) < 60);
    let token = body["access_token"].as_str().unwrap();
    assert!(token.len() >= 40);
    weir.http().get("/api/v2/webhooks").bearer(token).send().await.expect(200);
}

#[tokio::test]
async fn client_credentials_in_basic_auth_work_and_both_places_is_an_error() {
    let weir = Weir::start_default().await;
    let org = weir.store.orgs().create_org("Acme", Plan::pro()).await.unwrap();
    let creds = weir.credentials(&org.id, true, false).await;
    let basic =
        base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", creds.client_id, creds.client_secret));
    let resp = weir
        .http()
        .post("/oauth/token")
        .header("authorization", &format!("Basic {basic}"))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .expect(200);
    assert!(resp.json()["access_token"].is_string());

    let resp = weir
        .http()
        .post("/oauth/token")
        .header("authorization", &format!("Basic {basic}"))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", &creds.client_id),
            ("client_secret", &creds.client_secret),
        ])
        .send()
        .await
        .expect(400);
    assert_eq!(resp.json()["error"], "invalid_request");
}

#[tokio::test]
async fn token_errors_follow_rfc_6749() {
    let weir = Weir::start_default().await;
    let org = weir.store.orgs().create_org("Acme", Plan::pro()).await.unwrap();
    let creds = weir.credentials(&org.id, true, false).await;
    let http = weir.http();
    let cases: Vec<(Vec<(&str, &str)>, u16, &str)> = vec![
        (vec![("client_id", &creds.client_id), ("client_secret", &creds.client_secret)], 400, "invalid_request"),
        (
            vec![("grant_type", "password"), ("client_id", &creds.client_id), ("client_secret", &creds.client_secret)],
            400,
            "unsupported_grant_type",
        ),
        (
            vec![("grant_type", "client_credentials"), ("client_id", &creds.client_id), ("client_secret", "wcs_wrong")],
            401,
            "invalid_client",
        ),
        (
            vec![
                ("grant_type", "client_credentials"),
                ("client_id", "cli_nobody"),
                ("client_secret", &creds.client_secret),
            ],
            401,
            "invalid_client",
        ),
        (vec![("grant_type", "client_credentials")], 401, "invalid_client"),
        (vec![("grant_type", "client_credentials"), ("grant_type", "client_credentials")], 400, "invalid_request"),
    ];
    for (form, status, error) in cases {
        let resp = http.post("/oauth/token").form(&form).send().await;
        assert_eq!(resp.status, status, "{form:?}: {}", resp.text());
        assert_eq!(resp.json()["error"], error, "{form:?}");
        assert_eq!(resp.header("cache-control").as_deref(), Some("no-store"));
        if status == 401 {
            assert!(resp.header("www-authenticate").is_some());
        }
    }
    let resp = http.post("/oauth/token").json(&json!({"grant_type": "client_credentials"})).send().await.expect(400);
    assert_eq!(resp.json()["error"], "invalid_request");
}

#[tokio::test]
async fn tokens_expire_after_the_configured_ttl() {
    let weir = WeirBuilder::shared().env("WEIR_TOKEN_TTL", "1").start().await;
    let tenant = weir.tenant(Plan::pro()).await;
    tenant.admin.get("/api/v2/webhooks").await.expect(200);
    tokio::time::sleep(Duration::from_millis(1300)).await;
    let resp = tenant.admin.get("/api/v2/webhooks").await.expect(401);
    assert_eq!(resp.error_code(), "invalid_token");
    assert!(resp.header("www-authenticate").unwrap().starts_with("Bearer"));
}

#[tokio::test]
async fn revoking_a_token_stops_it_and_only_it() {
    let weir = Weir::start_default().await;
    let tenant = weir.tenant(Plan::pro()).await;
    let other_token = weir.token(&tenant.admin.creds).await;
    let http = weir.http();
    // Another client cannot revoke it.
    let stranger = weir.credentials(&tenant.org_id, true, false).await;
    http.post("/oauth/revoke")
        .form(&[
            ("token", &tenant.admin.token),
            ("client_id", &stranger.client_id),
            ("client_secret", &stranger.client_secret),
        ])
        .send()
        .await
        .expect(200);
    tenant.admin.get("/api/v2/webhooks").await.expect(200);
    // Its own client can.
    http.post("/oauth/revoke")
        .form(&[
            ("token", &tenant.admin.token),
            ("client_id", &tenant.admin.creds.client_id),
            ("client_secret", &tenant.admin.creds.client_secret),
        ])
        .send()
        .await
        .expect(200);
    tenant.admin.get("/api/v2/webhooks").await.expect(401);
    http.get("/api/v2/webhooks").bearer(&other_token).send().await.expect(200);
    // Bad client credentials on revoke are refused.
    let resp = http
        .post("/oauth/revoke")
        .form(&[("token", &other_token), ("client_id", &tenant.admin.creds.client_id), ("client_secret", "wcs_nope")])
        .send()
        .await
        .expect(401);
    assert_eq!(resp.json()["error"], "invalid_client");
}

#[tokio::test]
async fn revoking_a_client_kills_its_live_tokens_at_once() {
    let weir = Weir::start_default().await;
    let tenant = weir.tenant(Plan::pro()).await;
    let second = weir.token(&tenant.admin.creds).await;
    assert!(weir.store.clients().revoke_client(&tenant.admin.creds.client_id).await.unwrap());
    tenant.admin.get("/api/v2/webhooks").await.expect(401);
    weir.http().get("/api/v2/webhooks").bearer(&second).send().await.expect(401);
    let resp = weir
        .http()
        .post("/oauth/token")
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", &tenant.admin.creds.client_id),
            ("client_secret", &tenant.admin.creds.client_secret),
        ])
        .send()
        .await
        .expect(401);
    assert_eq!(resp.json()["error"], "invalid_client");
}

#[tokio::test]
async fn secrets_and_tokens_are_stored_only_as_hashes() {
    let weir = Weir::start_default().await;
    let tenant = weir.tenant(Plan::pro()).await;
    let mut conn = crate::support::weir::raw_conn(&weir.builder);
    let keys = crate::support::weir::raw_keys(&weir.builder, &format!("{}:*", weir.builder.prefix()));
    assert!(!keys.is_empty());
    for key in keys {
        let dump: Vec<u8> = redis::cmd("DUMP").arg(&key).query(&mut *conn).unwrap();
        let text = String::from_utf8_lossy(&dump);
        assert!(!text.contains(&tenant.admin.creds.client_secret), "secret stored in clear in {key}");
        assert!(!text.contains(&tenant.admin.token), "token stored in clear in {key}");
        assert!(!key.contains(&tenant.admin.token));
    }
}
