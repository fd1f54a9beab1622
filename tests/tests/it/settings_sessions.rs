//! Settings' sessions over raw HTTP: cookies, CSRF, sign-in throttling and password-check
//! limits, notices chosen by the server, organisations apart, and the rate limit's form.

use crate::support::eventually;
use crate::support::http::Http;
use crate::support::receiver::Receiver;
use crate::support::weir::{Weir, WeirBuilder, work_order_event};
use std::time::Duration;
use weir::store::tenants::orgs::Plan;

use crate::settings::{PASSWORD, http_sign_in, set_cookies, user};

#[tokio::test]
async fn sessions_are_httponly_strict_cookies_and_changes_need_the_csrf_token() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "csrf@example.com", true).await;
    let http = weir.http();
    let (resp, session) = http_sign_in(&http, "csrf@example.com", PASSWORD).await;
    assert_eq!(resp.status, 303);
    let cookie = set_cookies(&resp).into_iter().find(|c| c.starts_with("weir_session=")).unwrap();
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/settings"] {
        assert!(cookie.contains(flag), "{cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain HTTP: no Secure flag ({cookie})");
    let (pair, csrf) = session.unwrap();
    let body = |token: &str| {
        vec![
            ("_csrf", token.to_owned()),
            ("url", "http://127.0.0.1:9/x".to_owned()),
            ("subscribed_actions", "form_completed".to_owned()),
        ]
    };
    for bad in ["", "forged"] {
        let form = body(bad);
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let resp = http.post("/settings/webhooks").header("cookie", &pair).form(&pairs).send().await;
        assert_eq!(resp.status, 403, "a POST without the CSRF token is refused");
    }
    assert!(weir.store.webhooks().all_webhooks(&t.org_id).await.unwrap().is_empty());
    let made = t.admin.create_webhook("http://127.0.0.1:9/y", &["form_completed"]).await;
    let rotate = format!("/settings/webhooks/{}/rotate_secret", made["id"].as_str().unwrap());
    let resp =
        http.post(&rotate).header("cookie", &pair).form(&[("_csrf", "forged"), ("grace_period", "0s")]).send().await;
    assert_eq!(resp.status, 403, "rotation needs the CSRF token");
    let after = t.admin.get(&format!("/api/v2/webhooks/{}", made["id"].as_str().unwrap())).await.json();
    assert_eq!(after["signing_secret"], made["signing_secret"]);
    t.admin.delete(&format!("/api/v2/webhooks/{}", made["id"].as_str().unwrap())).await.expect(204);
    let form = body(&csrf);
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let resp = http.post("/settings/webhooks").header("cookie", &pair).form(&pairs).send().await;
    assert_eq!(resp.status, 303, "{}", resp.text());
    assert_eq!(weir.store.webhooks().all_webhooks(&t.org_id).await.unwrap().len(), 1);
    // A stale sign-in form (no weir_login cookie) is refused too.
    let resp = http
        .post("/settings/login")
        .form(&[("_csrf", "x"), ("email", "csrf@example.com"), ("password", PASSWORD)])
        .send()
        .await;
    assert_eq!(resp.status, 403);
}

#[tokio::test]
async fn the_session_cookie_is_secure_under_tls() {
    let ca = crate::support::tls::TestCa::new();
    let weir = WeirBuilder::shared().tls(&ca).start().await;
    let (_, _, page) = eventually("https up", Duration::from_secs(10), async || {
        crate::support::tls::https_get(ca.client_config(&[b"http/1.1"]), weir.addr, "/settings/login").await.ok()
    })
    .await;
    assert!(page.contains("Sign in"));
    let headers =
        crate::support::tls::https_headers(ca.client_config(&[b"http/1.1"]), weir.addr, "/settings/login").await;
    let cookie = headers.iter().find(|c| c.starts_with("weir_login=")).unwrap();
    assert!(cookie.contains("; Secure"), "{cookie}");
}

#[tokio::test]
async fn failed_sign_ins_are_throttled() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "slow@example.com", true).await;
    let http = weir.http();
    for _ in 0..5 {
        let (resp, session) = http_sign_in(&http, "slow@example.com", "wrong password!").await;
        assert_eq!(resp.status, 401);
        assert!(session.is_none());
        assert!(resp.text().contains("Email or password is incorrect."));
    }
    let (resp, session) = http_sign_in(&http, "slow@example.com", PASSWORD).await;
    assert_eq!(resp.status, 429, "even the right password waits out the window");
    assert!(session.is_none());
    assert!(resp.text().contains("Too many failed sign-ins"));
}

/// The sign-in form's CSRF pair: the `weir_login` cookie and the token in the page.
async fn login_form(http: &Http) -> (String, String) {
    let form = http.get("/settings/login").send().await.expect(200);
    let cookie = set_cookies(&form).into_iter().find(|c| c.starts_with("weir_login=")).unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let csrf = form.text().split("name=\"_csrf\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    (cookie, csrf)
}

/// `n` sign-in attempts sent at once; their statuses.
async fn parallel_sign_ins(http: &Http, n: usize, email: impl Fn(usize) -> String) -> Vec<u16> {
    let (cookie, csrf) = login_form(http).await;
    let attempts: Vec<_> = (0..n)
        .map(|i| {
            let (http, cookie, csrf, email) = (http.clone(), cookie.clone(), csrf.clone(), email(i));
            tokio::spawn(async move {
                let form = [("_csrf", csrf.as_str()), ("email", email.as_str()), ("password", "wrong password!")];
                let resp = http.post("/settings/login").header("cookie", &cookie).form(&form).send().await;
                if resp.status == 503 {
                    assert_eq!(resp.header("retry-after").as_deref(), Some("1"));
                }
                resp.status
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for attempt in attempts {
        statuses.push(attempt.await.unwrap());
    }
    statuses
}

#[tokio::test]
async fn parallel_wrong_guesses_cannot_pass_the_throttle_together() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "target@example.com", true).await;
    let http = weir.http();
    let statuses = parallel_sign_ins(&http, 50, |_| "target@example.com".into()).await;
    let checked = statuses.iter().filter(|s| **s == 401).count();
    assert!(statuses.iter().all(|s| [401, 429, 503].contains(s)), "{statuses:?}");
    assert!(checked <= 5, "{checked} of 50 parallel guesses were checked: {statuses:?}");
    assert!(statuses.iter().filter(|s| **s == 429).count() >= 40, "{statuses:?}");
    let (resp, session) = http_sign_in(&http, "target@example.com", PASSWORD).await;
    assert_eq!(resp.status, 429, "the window is used up");
    assert!(session.is_none());
}

#[tokio::test]
async fn password_checks_beyond_the_cores_are_refused_not_queued() {
    let weir = Weir::start_default().await;
    let http = weir.http();
    // Different emails, so the per-email throttle stays out of the way.
    let statuses = parallel_sign_ins(&http, 40, |i| format!("nobody{i}@example.com")).await;
    assert!(statuses.iter().all(|s| [401, 503].contains(s)), "{statuses:?}");
    assert!(statuses.contains(&503), "40 Argon2 checks at once on a few cores: {statuses:?}");
    assert!(statuses.contains(&401), "{statuses:?}");
}

#[tokio::test]
async fn an_email_over_254_bytes_is_refused_before_anything_is_stored() {
    let builder = WeirBuilder::shared();
    let weir = builder.start().await;
    let http = weir.http();
    let (cookie, csrf) = login_form(&http).await;
    let throttle_keys = || crate::support::weir::raw_keys(&builder, &format!("{}:login:*", builder.prefix()));
    for email in [format!("{}@example.com", "a".repeat(243)), format!("{}@example.com", "a".repeat(1_000_000))] {
        let form = [("_csrf", csrf.as_str()), ("email", email.as_str()), ("password", "wrong password!")];
        let resp = http.post("/settings/login").header("cookie", &cookie).form(&form).send().await;
        assert_eq!(resp.status, 400, "{} bytes", email.len());
        assert!(resp.text().contains("at most 254 bytes"));
        assert!(resp.text().len() < 10_000, "the address is not echoed back");
        assert!(throttle_keys().is_empty(), "nothing stored for it");
    }
    // 254 bytes is still an address.
    let email = format!("{}@example.com", "a".repeat(242));
    let form = [("_csrf", csrf.as_str()), ("email", email.as_str()), ("password", "wrong password!")];
    let resp = http.post("/settings/login").header("cookie", &cookie).form(&form).send().await;
    assert_eq!(resp.status, 401);
    assert_eq!(throttle_keys().len(), 1);
}

#[tokio::test]
async fn notices_are_chosen_by_the_server_never_taken_from_the_request() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "notices@example.com", true).await;
    let receiver = Receiver::start().await;
    let hook = t.admin.create_webhook(&receiver.url, &["work_order_created"]).await;
    t.publisher.publish(&work_order_event("wo_1")).await;
    let delivery = t.admin.settled(hook["id"].as_str().unwrap(), 1).await[0]["id"].as_str().unwrap().to_owned();
    let http = weir.http();
    let (_, session) = http_sign_in(&http, "notices@example.com", PASSWORD).await;
    let (pair, _) = session.unwrap();
    let spoof = "Your account is suspended. Call +1 555 0100";
    let query = format!("notice={}", spoof.replace(' ', "%20").replace('+', "%2B"));
    for path in [
        format!("/settings/deliveries/{delivery}"),
        format!("/settings/webhooks/{}", hook["id"].as_str().unwrap()),
        "/settings/webhooks".into(),
    ] {
        let page = http.get(&format!("{path}?{query}")).header("cookie", &pair).send().await.expect(200).text();
        assert!(!page.contains("suspended"), "{path} shows request text");
    }
    // A code the server chose is shown as its fixed text.
    let page =
        http.get(&format!("/settings/deliveries/{delivery}?notice=retried")).header("cookie", &pair).send().await;
    assert!(page.expect(200).text().contains("Retry queued."));
}

#[tokio::test]
async fn other_organisations_webhooks_are_unreachable_and_readers_cannot_change() {
    let weir = Weir::start_default().await;
    let mine = weir.tenant(Plan::pro()).await;
    let theirs = weir.tenant(Plan::pro()).await;
    user(&weir, &mine.org_id, "mine@example.com", true).await;
    user(&weir, &mine.org_id, "reader@example.com", false).await;
    let other = theirs.admin.create_webhook("http://127.0.0.1:9/theirs", &["form_completed"]).await;
    let other_id = other["id"].as_str().unwrap();
    let http = weir.http();
    let (_, session) = http_sign_in(&http, "mine@example.com", PASSWORD).await;
    let (pair, csrf) = session.unwrap();
    let page = http.get(&format!("/settings/webhooks/{other_id}")).header("cookie", &pair).send().await;
    assert_eq!(page.status, 404);
    let list = http.get("/settings/webhooks").header("cookie", &pair).send().await.text();
    assert!(!list.contains(other_id));
    for path in [format!("/settings/webhooks/{other_id}/delete"), format!("/settings/webhooks/{other_id}/active")] {
        let resp = http
            .post(&path)
            .header("cookie", &pair)
            .form(&[("_csrf", csrf.as_str()), ("active", "false")])
            .send()
            .await;
        assert_eq!(resp.status, 404, "{path}");
    }
    assert_eq!(theirs.admin.get(&format!("/api/v2/webhooks/{other_id}")).await.expect(200).json()["active"], true);

    // A non-admin sees the list but cannot change anything.
    mine.admin.create_webhook("http://127.0.0.1:9/mine", &["form_completed"]).await;
    let (_, session) = http_sign_in(&http, "reader@example.com", PASSWORD).await;
    let (reader, reader_csrf) = session.unwrap();
    let list = http.get("/settings/webhooks").header("cookie", &reader).send().await.text();
    assert!(list.contains("127.0.0.1:9/mine") && list.contains("(read only)") && !list.contains("New webhook"));
    let resp = http
        .post("/settings/webhooks")
        .header("cookie", &reader)
        .form(&[
            ("_csrf", reader_csrf.as_str()),
            ("url", "http://127.0.0.1:9/x"),
            ("subscribed_actions", "form_completed"),
        ])
        .send()
        .await;
    assert_eq!(resp.status, 403);
    let _ = work_order_event;
}

#[tokio::test]
async fn the_rate_limit_is_set_and_refused_by_the_apis_rules_and_the_endpoint_state_shows() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    user(&weir, &t.org_id, "rate@example.com", true).await;
    let http = weir.http();
    let (_, session) = http_sign_in(&http, "rate@example.com", PASSWORD).await;
    let (pair, csrf) = session.unwrap();
    let create = |rate: &'static str| {
        vec![
            ("_csrf", csrf.clone()),
            ("url", "http://127.0.0.1:9/x".to_owned()),
            ("subscribed_actions", "form_completed".to_owned()),
            ("rate_limit", rate.to_owned()),
        ]
    };
    for bad in ["0", "10001", "fast"] {
        let form = create(bad);
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let resp = http.post("/settings/webhooks").header("cookie", &pair).form(&pairs).send().await;
        assert_eq!(resp.status, 422, "rate_limit {bad}");
        assert!(resp.text().contains("rate_limit"), "the error names the field");
    }
    let form = create("25");
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let resp = http.post("/settings/webhooks").header("cookie", &pair).form(&pairs).send().await;
    assert_eq!(resp.status, 303, "{}", resp.text());
    let hooks = weir.store.webhooks().all_webhooks(&t.org_id).await.unwrap();
    assert_eq!(hooks[0].rate_limit, Some(25));
    let page = http.get(&format!("/settings/webhooks/{}", hooks[0].id)).header("cookie", &pair).send().await;
    assert!(page.text().contains(r#"name="rate_limit" type="number" min="1" max="10000" step="1" value="25""#));
    let change = weir::store::queue::endpoint::EndpointChange::Probing {
        at_ms: weir::time::now_millis(),
        reason: "timed out after 10s".into(),
    };
    weir.store.endpoint_states().set_endpoint_state(&t.org_id, &hooks[0].id, &change).await.unwrap();
    let list = http.get("/settings/webhooks").header("cookie", &pair).send().await.text();
    assert!(list.contains("probing") && list.contains("timed out after 10s"), "{list}");
}
