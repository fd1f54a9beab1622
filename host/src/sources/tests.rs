//! Each provider's rule against the provider's own examples (its documentation's, or made
//! with its SDK: stripe 16.1.0, slack-sdk 3.48.0, twilio 9.13.0, standardwebhooks 1.1.0), and
//! the same requests changed by one byte, re-timed or signed with another secret.

use http::HeaderMap;

use super::inbound::{Inbound, Key, Refusal};
use super::{Scheme, kind};

fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.append(http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
    }
    map
}

/// The outcome of a request to a source of `kind` with `secret`.
fn check(
    kind_name: &str,
    secret: &str,
    request: (&HeaderMap, &[u8]),
    (url, now): (&str, u64),
) -> Result<super::Named, Refusal> {
    let (headers, body) = request;
    let inbound = Inbound::new(headers, body, url, now);
    let secrets = [secret.to_owned()];
    let key = Key { secrets: &secrets, scheme: &Scheme::Provider };
    kind(kind_name).unwrap().accept(&inbound, &key)
}

const STRIPE_BODY: &[u8] = br#"{"id":"evt_1","type":"invoice.paid"}"#;
const STRIPE_T: u64 = 1_733_133_600;
const STRIPE_V1: &str = "a9b8f9b3167af176a38e7f3b9cc596855238507f3ce7c9657c9d8fbd173733b0";

#[test]
fn stripe_signatures_are_checked_with_any_v1_and_the_timestamp() {
    let header = format!("t={STRIPE_T},v1={STRIPE_V1}");
    let h = headers(&[("stripe-signature", &header)]);
    let named = check("stripe", "whsec_test_secret", (&h, STRIPE_BODY), ("", STRIPE_T + 10)).unwrap();
    assert_eq!(named.action, "invoice.paid");
    assert_eq!(named.dedup_id, "id:evt_1");
    let two = headers(&[("stripe-signature", &format!("t={STRIPE_T},v1={},v1={STRIPE_V1}", "00".repeat(32)))]);
    assert!(check("stripe", "whsec_test_secret", (&two, STRIPE_BODY), ("", STRIPE_T)).is_ok(), "any v1 may match");
    let changed = br#"{"id":"evt_1","type":"invoice.paie"}"#;
    assert!(matches!(check("stripe", "whsec_test_secret", (&h, changed), ("", STRIPE_T)), Err(Refusal::Invalid(_))));
    assert!(matches!(check("stripe", "whsec_other", (&h, STRIPE_BODY), ("", STRIPE_T)), Err(Refusal::Invalid(_))));
    assert_eq!(check("stripe", "whsec_test_secret", (&h, STRIPE_BODY), ("", STRIPE_T + 301)), Err(Refusal::Stale));
    let retimed = headers(&[("stripe-signature", &format!("t={},v1={STRIPE_V1}", STRIPE_T + 1))]);
    assert!(matches!(
        check("stripe", "whsec_test_secret", (&retimed, STRIPE_BODY), ("", STRIPE_T)),
        Err(Refusal::Invalid(_))
    ));
    let none = headers(&[]);
    assert_eq!(
        check("stripe", "whsec_test_secret", (&none, STRIPE_BODY), ("", STRIPE_T)),
        Err(Refusal::Missing("stripe-signature"))
    );
}

#[test]
fn github_signs_the_body_with_sha256() {
    // GitHub's documentation's example.
    let sig = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
    let h = headers(&[("x-hub-signature-256", sig), ("x-github-event", "ping"), ("x-github-delivery", "d-1")]);
    let named = check("github", "It's a Secret to Everybody", (&h, b"Hello, World!"), ("", 0)).unwrap();
    assert_eq!((named.action.as_str(), named.dedup_id.as_str()), ("ping", "id:d-1"));
    assert!(check("github", "It's a Secret to Everybody", (&h, b"Hello, World?"), ("", 0)).is_err());
    assert!(check("github", "another secret", (&h, b"Hello, World!"), ("", 0)).is_err());
}

#[test]
fn github_actions_join_the_event_and_the_bodys_action() {
    let body = br#"{"action":"opened","issue":{}}"#;
    let sig = format!("sha256={}", hex::encode(super::inbound::mac(super::Algorithm::Sha256, b"s", &[body])));
    let h = headers(&[("x-hub-signature-256", &sig), ("x-github-event", "issues")]);
    let named = check("github", "s", (&h, body), ("", 0)).unwrap();
    assert_eq!(named.action, "issues.opened");
    assert!(named.dedup_id.starts_with("sha256:"), "no delivery id: the body's digest");
}

#[test]
fn shopify_signs_the_body_in_base64() {
    let h = headers(&[
        ("x-shopify-hmac-sha256", "1oIAX/T2uqq7ahP60FSiKd+h2+6Syh2zPx6kVql0JGQ="),
        ("x-shopify-topic", "orders/create"),
        ("x-shopify-webhook-id", "w-1"),
    ]);
    let named = check("shopify", "shpss_secret", (&h, STRIPE_BODY), ("", 0)).unwrap();
    assert_eq!((named.action.as_str(), named.dedup_id.as_str()), ("orders/create", "id:w-1"));
    assert!(check("shopify", "shpss_other", (&h, STRIPE_BODY), ("", 0)).is_err());
}

const SLACK_BODY: &str = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";

#[test]
fn slack_signs_version_timestamp_and_body() {
    // Slack's documentation's example.
    let h = headers(&[
        ("x-slack-signature", "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"),
        ("x-slack-request-timestamp", "1531420618"),
    ]);
    let secret = "8f742231b10e8888abcd99yyyzzz85a5";
    let named = check("slack", secret, (&h, SLACK_BODY.as_bytes()), ("", 1_531_420_618)).unwrap();
    assert_eq!(named.action, "source.request", "a slash command has no event type");
    assert_eq!(check("slack", secret, (&h, SLACK_BODY.as_bytes()), ("", 1_531_420_618 + 301)), Err(Refusal::Stale));
    let mut changed = SLACK_BODY.to_owned();
    changed.push('x');
    assert!(check("slack", secret, (&h, changed.as_bytes()), ("", 1_531_420_618)).is_err());
}

#[test]
fn twilio_signs_the_url_and_sorted_parameters_with_sha1() {
    // Twilio's documentation's example.
    let body = "CallSid=CA1234567890ABCDE&Caller=%2B12349013030&Digits=1234&From=%2B12349013030&To=%2B18005551212";
    let url = "https://mycompany.com/myapp.php?foo=1&bar=2";
    let h = headers(&[("x-twilio-signature", "0/KCTR6DLpKmkAf8muzZqo1nDgQ="), ("i-twilio-idempotency-token", "t-1")]);
    let named = check("twilio", "12345", (&h, body.as_bytes()), (url, 0)).unwrap();
    assert_eq!((named.action.as_str(), named.dedup_id.as_str()), ("twilio.request", "id:t-1"));
    let with_port = "https://mycompany.com:443/myapp.php?foo=1&bar=2";
    assert!(check("twilio", "12345", (&h, body.as_bytes()), (with_port, 0)).is_ok(), "the default port written out");
    assert!(check("twilio", "12345", (&h, body.as_bytes()), ("https://other.com/myapp.php?foo=1&bar=2", 0)).is_err());
    assert!(check("twilio", "54321", (&h, body.as_bytes()), (url, 0)).is_err());
}

#[test]
fn standard_webhooks_sign_id_timestamp_and_body() {
    // The specification's example.
    let h = headers(&[
        ("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek"),
        ("webhook-timestamp", "1614265330"),
        ("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="),
    ]);
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let body = br#"{"test": 2432232314}"#;
    let named = check("standard_webhooks", secret, (&h, body), ("", 1_614_265_330)).unwrap();
    assert_eq!(named.dedup_id, "id:msg_p5jXN8AQM9LWM0D4loKWxJek");
    assert_eq!(check("standard_webhooks", secret, (&h, body), ("", 1_614_265_330 - 400)), Err(Refusal::Stale));
    assert!(check("standard_webhooks", "whsec_AAAAAAAAAAAAAAAAAAAAAAAA", (&h, body), ("", 1_614_265_330)).is_err());
    assert!(kind("standard_webhooks").unwrap().provider.secret_problem("not base64!").is_some());
}

#[test]
fn generic_kinds_check_their_settings_in_constant_time() {
    let body = b"{}";
    let mac = hex::encode(super::inbound::mac(super::Algorithm::Sha512, b"k", &[body]));
    let scheme = Scheme::Hmac {
        header: "x-sig".into(),
        algorithm: super::Algorithm::Sha512,
        encoding: super::Encoding::Hex,
        prefix: "sha512=".into(),
    };
    let run = |h: &HeaderMap, scheme: &Scheme, secret: &str, name: &str| {
        let secrets = [secret.to_owned()];
        let inbound = Inbound::new(h, body, "", 0);
        kind(name).unwrap().accept(&inbound, &Key { secrets: &secrets, scheme })
    };
    let h = headers(&[("x-sig", &format!("sha512={mac}"))]);
    assert!(run(&h, &scheme, "k", "hmac").is_ok());
    assert!(run(&h, &scheme, "j", "hmac").is_err());
    let basic = Scheme::Basic { username: "u".into() };
    let auth = headers(&[("authorization", "Basic dTpw")]); // u:p
    assert!(run(&auth, &basic, "p", "basic").is_ok());
    assert!(run(&auth, &basic, "q", "basic").is_err());
    let api = Scheme::ApiKey { header: "x-api-key".into() };
    assert!(run(&headers(&[("x-api-key", "key-1")]), &api, "key-1", "api_key").is_ok());
    assert_eq!(run(&headers(&[]), &api, "key-1", "api_key"), Err(Refusal::Missing("API key")));
    assert!(run(&headers(&[]), &Scheme::Provider, "", "none").is_ok());
}

#[test]
fn an_event_forwards_the_body_byte_for_byte() {
    let h =
        headers(&[("content-type", "application/json"), ("host", "weir"), ("x-a", "1"), ("x-a", "2"), ("cookie", "c")]);
    for body in [r#"{"a": 1}"#, " {\"a\":1}\n", "a=1&b=2", "\"text\"", ""] {
        let arrived = super::forward::Arrived {
            event_id: "evt_1",
            action: "x",
            created_at: "2026-12-02T00:00:00.000Z",
            org_id: "org_1",
            source: ("src_1", "Stripe"),
            headers: &h,
            body,
        };
        let envelope = super::forward::envelope(&arrived);
        let parsed: serde_json::Value = serde_json::from_str(&envelope).unwrap();
        assert_eq!(parsed["source"], "src_1");
        let forwarded = super::forward::forwarded(&envelope).unwrap();
        assert_eq!(forwarded.body, body);
        let names: Vec<&str> = forwarded.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, vec!["content-type", "x-a"], "host and cookies are not passed on");
        assert_eq!(forwarded.headers[1].1, "1, 2");
    }
    assert!(super::forward::forwarded(r#"{"id":"evt_1"}"#).is_none());
}
