//! The providers' own signing and verifying code (`tests/python/providers.py`: stripe,
//! slack-sdk, twilio, standardwebhooks; `tests/node/github.mjs`: @octokit/webhooks-methods),
//! and requests to a source's ingest URL signed with it.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use super::http::{Http, Resp};
use super::python;

/// The headers `provider`'s code sends with `body` (signed at `timestamp`, Unix seconds).
pub fn sign(provider: &str, secret: &str, (url, timestamp): (&str, u64), body: &str) -> Vec<(String, String)> {
    let text = if provider == "github" {
        let signature = node(&["sign", secret], body).expect("octokit signs");
        json!({"X-Hub-Signature-256": signature, "X-GitHub-Event": "issues", "X-GitHub-Delivery": format!("d-{}", body.len()), "Content-Type": "application/json"}).to_string()
    } else {
        python::run("providers.py", &["sign", provider, secret, url, &timestamp.to_string()], body.as_bytes())
    };
    let headers: serde_json::Map<String, Value> = serde_json::from_str(&text).expect("headers as JSON");
    headers.into_iter().map(|(k, v)| (k, v.as_str().unwrap_or_default().to_owned())).collect()
}

/// Whether `provider`'s code accepts a request (its headers and body) as it arrived.
pub fn verifies(provider: &str, secret: &str, url: &str, (headers, body): (&Value, &str)) -> bool {
    if provider == "github" {
        let signature = headers["x-hub-signature-256"].as_str().unwrap_or_default();
        return node(&["verify", secret, signature], body).is_some();
    }
    let input = json!({"headers": headers, "body": body}).to_string();
    let status = Command::new(python::tool("python"))
        .arg(python::script("providers.py"))
        .args(["verify", provider, secret, url])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().expect("stdin").write_all(input.as_bytes())?;
            child.wait()
        })
        .expect("python runs");
    status.success()
}

/// `node tests/node/github.mjs args…` with `stdin`: its output when it succeeds.
/// GitHub's recorded payload of `event` with `action` (`@octokit/webhooks-examples`).
pub fn github_example(event: &str, action: &str) -> String {
    node(&["example", event, action], "").expect("a recorded GitHub payload")
}

fn node(args: &[&str], stdin: &str) -> Option<String> {
    let mut child = Command::new("node")
        .arg(python::repo().join("tests/node/github.mjs"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node runs");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write stdin");
    let out = child.wait_with_output().expect("node runs");
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// POSTs `body` with `headers` to `path` (an ingest URL's path).
pub async fn deliver(http: &Http, path: &str, headers: &[(String, String)], body: &str) -> Resp {
    let content_type = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        .map_or("application/json", |(_, v)| v.as_str());
    let mut request = http.post(path).raw(content_type, body.to_owned());
    for (name, value) in headers.iter().filter(|(k, _)| !k.eq_ignore_ascii_case("content-type")) {
        request = request.header(name, value);
    }
    request.send().await
}

/// The path of an ingest URL.
pub fn path_of(ingest_url: &str) -> String {
    let at = ingest_url.find("/in/").expect("an ingest URL");
    ingest_url[at..].to_owned()
}
