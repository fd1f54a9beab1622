//! Settings > Webhooks in a real browser (headless Chromium through chromedriver), and the
//! session and CSRF rules over raw HTTP. Screenshots land in `target/browser-screenshots/`.

use std::time::Duration;

use serde_json::json;
use weir::store::tenants::orgs::Plan;

use crate::support::browser::Browser;
use crate::support::eventually;
use crate::support::http::{Http, Resp};
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{Weir, WeirBuilder, work_order_event};

pub(crate) const PASSWORD: &str = "correct horse battery";

pub(crate) async fn user(weir: &Weir, org_id: &str, email: &str, admin: bool) {
    let hash = weir::auth::passwords::hash(PASSWORD).unwrap();
    weir.store.create_user(org_id, email, admin, &hash).await.unwrap().expect("new email");
}

pub(crate) async fn sign_in(browser: &Browser, weir: &Weir, email: &str) {
    browser.goto(&format!("{}/settings/webhooks", weir.base)).await;
    assert!(browser.url().await.ends_with("/settings/login"), "signed-out visitors are sent to sign in");
    browser.fill("#email", email).await;
    browser.fill("#password", PASSWORD).await;
    browser.click("button[type=submit]").await;
    eventually("signed in", Duration::from_secs(10), async || {
        browser.url().await.ends_with("/settings/webhooks").then_some(())
    })
    .await;
}

fn set_cookies(resp: &Resp) -> Vec<String> {
    resp.headers.get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).map(str::to_owned).collect()
}

/// Signs in over raw HTTP; returns the session cookie pair and the page's CSRF token.
pub(crate) async fn http_sign_in(http: &Http, email: &str, password: &str) -> (Resp, Option<(String, String)>) {
    let form = http.get("/settings/login").send().await.expect(200);
    let login_cookie = set_cookies(&form).into_iter().find(|c| c.starts_with("weir_login=")).unwrap();
    let login_cookie = login_cookie.split(';').next().unwrap().to_owned();
    let html = form.text();
    let csrf = html.split("name=\"_csrf\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    let resp = http
        .post("/settings/login")
        .header("cookie", &login_cookie)
        .form(&[("_csrf", &csrf), ("email", email), ("password", password)])
        .send()
        .await;
    let session =
        set_cookies(&resp).into_iter().find(|c| c.starts_with("weir_session=") && !c.starts_with("weir_session=;"));
    let Some(session) = session else { return (resp, None) };
    let pair = session.split(';').next().unwrap().to_owned();
    let page = http.get("/settings/webhooks").header("cookie", &pair).send().await.expect(200).text();
    let token = page.split("name=\"_csrf\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    (resp, Some((pair, token)))
}

#[tokio::test]
async fn an_admin_manages_webhooks_from_the_page() {
    let weir = WeirBuilder::shared()
        .env("WEIR_DEACTIVATE_AFTER_FAILURES", "3")
        .env("WEIR_DEACTIVATE_AFTER", "100ms")
        .env("WEIR_RETRY_SCHEDULE", "100ms,100ms,100ms,100ms")
        .start()
        .await;
    let t = weir.tenant(Plan::Pro).await;
    user(&weir, &t.org_id, "ada@example.com", true).await;
    let receiver = Receiver::start().await;
    let browser = Browser::start(1280, 900).await;
    browser.goto(&format!("{}/settings/login", weir.base)).await;
    browser.screenshot("01-sign-in").await;
    sign_in(&browser, &weir, "ada@example.com").await;
    assert!(browser.page_text().await.contains("No webhooks yet."));

    // Create a webhook on the page.
    browser.click("a[href='/settings/webhooks/new']").await;
    browser.fill("#name", "Orders to ERP").await;
    browser.fill("#url", &receiver.url).await;
    browser.click("input[value=work_order_created]").await;
    browser.screenshot("02-new-webhook").await;
    browser.click("main form button[type=submit]").await;
    eventually("created", Duration::from_secs(10), async || {
        browser.page_text().await.contains("Webhook created.").then_some(())
    })
    .await;

    // It is the same resource the API sees, and an API-made one shows on the page.
    let from_page = t.admin.get("/api/v2/webhooks").await.expect(200).json()["data"][0].clone();
    assert_eq!(from_page["name"], "Orders to ERP");
    assert_eq!(from_page["subscribed_actions"], json!(["work_order_created"]));
    let failing = Receiver::replying(Reply::Status(500)).await;
    let api_made = t
        .admin
        .post(
            "/api/v2/webhooks",
            &json!({"name": "Made by the API", "url": failing.url, "subscribed_actions": ["defect_created"]}),
        )
        .await
        .expect(201)
        .json();
    browser.goto(&format!("{}/settings/webhooks", weir.base)).await;
    let list = browser.page_text().await;
    assert!(list.contains("Orders to ERP") && list.contains("Made by the API"), "{list}");
    browser.screenshot("03-webhooks").await;

    // Reveal the signing secret.
    browser.goto(&format!("{}/settings/webhooks/{}", weir.base, from_page["id"].as_str().unwrap())).await;
    browser.click("details summary").await;
    assert_eq!(browser.text("#secret").await, from_page["signing_secret"].as_str().unwrap());

    // Rotate it (the form carries the CSRF token); the old secret signs for the grace period.
    browser.run("document.querySelector('#grace_period').value = '1h'").await;
    browser.click("form[action$='/rotate_secret'] button").await;
    eventually("rotated", Duration::from_secs(10), async || {
        browser.page_text().await.contains("Signing secret rotated.").then_some(())
    })
    .await;
    let rotated = t.admin.get(&format!("/api/v2/webhooks/{}", from_page["id"].as_str().unwrap())).await.json();
    assert_ne!(rotated["signing_secret"], from_page["signing_secret"]);
    let expires = weir::time::parse_rfc3339(rotated["previous_secret_expires_at"].as_str().unwrap()).unwrap();
    assert!(expires.abs_diff(weir::time::now_millis() + 3_600_000) < 10_000, "the chosen grace period");
    browser.click("details summary").await;
    assert_eq!(browser.text("#secret").await, rotated["signing_secret"].as_str().unwrap());
    assert!(browser.text("#previous-secret").await.contains(rotated["previous_secret_expires_at"].as_str().unwrap()));
    browser.screenshot("03b-rotated-secret").await;

    // The API-made webhook fails until it is deactivated; the page says when and why.
    let defect = json!({"action": "defect_created", "creator": {"id": "u", "name": "n"}, "subject": {"type": "Defect", "id": "d1"}, "defect": {}});
    t.publisher.publish(&defect).await;
    let api_id = api_made["id"].as_str().unwrap();
    eventually("deactivated", Duration::from_secs(20), async || {
        let w = t.admin.get(&format!("/api/v2/webhooks/{api_id}")).await.json();
        (w["active"] == false).then_some(())
    })
    .await;
    browser.goto(&format!("{}/settings/webhooks/{api_id}", weir.base)).await;
    let page = browser.page_text().await;
    assert!(page.contains("Deactivated") && page.contains("reason: failing"), "{page}");
    browser.screenshot("04-deactivated").await;
    browser.click("form[action$='/active'] button").await;
    eventually("reactivated", Duration::from_secs(10), async || {
        browser.page_text().await.contains("Webhook reactivated.").then_some(())
    })
    .await;
    assert_eq!(t.admin.get(&format!("/api/v2/webhooks/{api_id}")).await.json()["active"], true);

    // Retry the failed delivery from its page once the endpoint works again.
    failing.set(Reply::Status(200));
    browser.click("a[href^='/settings/deliveries/']").await;
    let delivery_page = browser.page_text().await;
    assert!(delivery_page.contains("failed") && delivery_page.contains("Attempt 1: 500"), "{delivery_page}");
    browser.screenshot("05-delivery").await;
    browser.click("form[action$='/retry'] button").await;
    eventually("retry queued", Duration::from_secs(10), async || {
        browser.page_text().await.contains("Retry queued.").then_some(())
    })
    .await;
    let delivery_id =
        browser.url().await.split("/settings/deliveries/").nth(1).unwrap().split('?').next().unwrap().to_owned();
    eventually("retried delivery succeeded", Duration::from_secs(20), async || {
        let d = t.admin.get(&format!("/api/v2/webhook_deliveries/{delivery_id}")).await.json();
        (d["status"] == "succeeded").then_some(())
    })
    .await;

    // Delete, after confirming.
    browser.goto(&format!("{}/settings/webhooks/{api_id}", weir.base)).await;
    browser.click(&format!("a[href='/settings/webhooks/{api_id}/delete']")).await;
    assert!(browser.page_text().await.contains("cannot be undone"));
    browser.click("form[action$='/delete'] button").await;
    eventually("deleted", Duration::from_secs(10), async || {
        browser.page_text().await.contains("Webhook deleted").then_some(())
    })
    .await;
    t.admin.get(&format!("/api/v2/webhooks/{api_id}")).await.expect(404);

    // Sign out: the pages ask to sign in again.
    browser.click("header form button").await;
    eventually("signed out", Duration::from_secs(10), async || {
        browser.url().await.ends_with("/settings/login").then_some(())
    })
    .await;
    browser.goto(&format!("{}/settings/webhooks", weir.base)).await;
    assert!(browser.url().await.ends_with("/settings/login"));
}

#[tokio::test]
async fn pages_apply_the_apis_rules_and_work_on_the_free_plan() {
    let weir = WeirBuilder::shared().env("WEIR_ALLOW_PRIVATE_TARGETS", "").start().await;
    let t = weir.tenant(Plan::Free).await;
    user(&weir, &t.org_id, "grace@example.com", true).await;
    let browser = Browser::start(1280, 900).await;
    sign_in(&browser, &weir, "grace@example.com").await;
    browser.goto(&format!("{}/settings/webhooks/new", weir.base)).await;
    browser.fill("#url", "http://10.0.0.1/hook").await;
    browser.click("main form button[type=submit]").await;
    let text = eventually("validation shown", Duration::from_secs(10), async || {
        let t = browser.page_text().await;
        t.contains("Please correct").then_some(t)
    })
    .await;
    // The same message the API gives for the same URL.
    assert!(text.contains("url: resolves to 10.0.0.1, which is not a public address"), "{text}");
    assert!(
        browser.run("return document.querySelector('#url').value").await == json!("http://10.0.0.1/hook"),
        "input is kept"
    );
    browser.screenshot("06-validation").await;
    // Nothing was written.
    assert!(weir.store.all_webhooks(&t.org_id).await.unwrap().is_empty());
    // Every form control has a label.
    let unlabelled = browser
        .run("return [...document.querySelectorAll('input:not([type=hidden]), select, textarea')].filter(e => !e.labels || e.labels.length === 0).length")
        .await;
    assert_eq!(unlabelled, json!(0));
}

#[tokio::test]
async fn the_page_is_readable_on_a_phone_and_usable_by_keyboard() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::Pro).await;
    user(&weir, &t.org_id, "phone@example.com", true).await;
    t.admin.post("/api/v2/webhooks", &json!({"name": "A webhook with a rather long name", "url": "http://127.0.0.1:9/a/very/long/path/that/could/overflow/a/small/screen", "subscribed_actions": ["form_completed"]})).await.expect(201);
    let browser = Browser::start(390, 844).await;
    // Sign in with the keyboard only: Tab from the email field to the password field, Enter.
    browser.goto(&format!("{}/settings/login", weir.base)).await;
    browser.fill("#email", "phone@example.com").await;
    browser.keys("\u{E004}").await;
    assert_eq!(browser.run("return document.activeElement.id").await, json!("password"));
    browser.keys(PASSWORD).await;
    browser.keys("\u{E007}").await;
    eventually("signed in", Duration::from_secs(10), async || {
        browser.url().await.ends_with("/settings/webhooks").then_some(())
    })
    .await;
    let overflow = browser.run("return document.documentElement.scrollWidth - window.innerWidth").await;
    assert!(overflow.as_i64().unwrap() <= 0, "no horizontal scrolling on a phone: {overflow}");
    browser.screenshot("07-phone").await;
}

#[tokio::test]
async fn sessions_are_httponly_strict_cookies_and_changes_need_the_csrf_token() {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::Pro).await;
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
    assert!(weir.store.all_webhooks(&t.org_id).await.unwrap().is_empty());
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
    assert_eq!(weir.store.all_webhooks(&t.org_id).await.unwrap().len(), 1);
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
    let t = weir.tenant(Plan::Pro).await;
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
    let t = weir.tenant(Plan::Pro).await;
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
    let t = weir.tenant(Plan::Pro).await;
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
    let mine = weir.tenant(Plan::Pro).await;
    let theirs = weir.tenant(Plan::Pro).await;
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
    let t = weir.tenant(Plan::Pro).await;
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
    let hooks = weir.store.all_webhooks(&t.org_id).await.unwrap();
    assert_eq!(hooks[0].rate_limit, Some(25));
    let page = http.get(&format!("/settings/webhooks/{}", hooks[0].id)).header("cookie", &pair).send().await;
    assert!(page.text().contains(r#"name="rate_limit" type="number" min="1" max="10000" step="1" value="25""#));
    let change = weir::store::queue::endpoint::EndpointChange::Probing {
        at_ms: weir::time::now_millis(),
        reason: "timed out after 10s".into(),
    };
    weir.store.set_endpoint_state(&t.org_id, &hooks[0].id, &change).await.unwrap();
    let list = http.get("/settings/webhooks").header("cookie", &pair).send().await.text();
    assert!(list.contains("probing") && list.contains("timed out after 10s"), "{list}");
}
