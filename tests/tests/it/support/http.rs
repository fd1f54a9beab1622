//! A small HTTP client for tests (hyper over loopback), with a request builder.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// A response, fully read.
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("response is not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
    }

    /// The `error.code` of a contract error body.
    pub fn error_code(&self) -> String {
        self.json()["error"]["code"].as_str().unwrap_or_default().to_owned()
    }

    /// The fields named in a 422's `details`.
    pub fn error_fields(&self) -> Vec<String> {
        self.json()["error"]["details"]
            .as_array()
            .map(|d| d.iter().filter_map(|e| e["field"].as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    }

    /// Asserts the status, showing the body when it differs.
    #[track_caller]
    pub fn expect(self, status: u16) -> Resp {
        assert_eq!(self.status, status, "unexpected status; body: {}", self.text());
        self
    }
}

/// An HTTP client bound to a base URL.
#[derive(Clone)]
pub struct Http {
    client: Client<HttpConnector, Full<Bytes>>,
    pub base: String,
}

impl Http {
    pub fn new(base: &str) -> Http {
        let client = Client::builder(TokioExecutor::new()).build_http();
        Http { client, base: base.trim_end_matches('/').to_owned() }
    }

    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        RequestBuilder {
            http: self.clone(),
            method,
            url: format!("{}{}", self.base, path),
            headers: HeaderMap::new(),
            body: Bytes::new(),
        }
    }

    pub fn get(&self, path: &str) -> RequestBuilder {
        self.request(Method::GET, path)
    }

    pub fn post(&self, path: &str) -> RequestBuilder {
        self.request(Method::POST, path)
    }

    pub fn patch(&self, path: &str) -> RequestBuilder {
        self.request(Method::PATCH, path)
    }

    pub fn delete(&self, path: &str) -> RequestBuilder {
        self.request(Method::DELETE, path)
    }
}

/// A request being built.
pub struct RequestBuilder {
    http: Http,
    method: Method,
    url: String,
    headers: HeaderMap,
    body: Bytes,
}

impl RequestBuilder {
    pub fn header(mut self, name: &str, value: &str) -> RequestBuilder {
        self.headers.insert(
            HeaderName::from_bytes(name.as_bytes()).expect("header name"),
            HeaderValue::from_str(value).expect("header value"),
        );
        self
    }

    pub fn bearer(self, token: &str) -> RequestBuilder {
        self.header("authorization", &format!("Bearer {token}"))
    }

    pub fn json(self, value: &Value) -> RequestBuilder {
        self.raw("application/json", serde_json::to_vec(value).expect("json"))
    }

    pub fn form(self, pairs: &[(&str, &str)]) -> RequestBuilder {
        let body: String =
            pairs.iter().map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect::<Vec<_>>().join("&");
        self.raw("application/x-www-form-urlencoded", body.into_bytes())
    }

    pub fn raw(mut self, content_type: &str, body: impl Into<Bytes>) -> RequestBuilder {
        self = self.header("content-type", content_type);
        self.body = body.into();
        self
    }

    /// Sends the request; the status, or the transport error.
    pub async fn send_raw(self) -> Result<u16, String> {
        let mut request = Request::builder().method(self.method).uri(&self.url);
        if let Some(headers) = request.headers_mut() {
            *headers = self.headers;
        }
        let request = request.body(Full::new(self.body)).map_err(|e| e.to_string())?;
        let response = self.http.client.request(request).await.map_err(|e| e.to_string())?;
        Ok(response.status().as_u16())
    }

    pub async fn send(self) -> Resp {
        self.send_within(Duration::from_secs(30)).await
    }

    /// [`RequestBuilder::send`], waiting at most `timeout` for the response's head.
    pub async fn send_within(self, timeout: Duration) -> Resp {
        let mut request = Request::builder().method(self.method).uri(&self.url);
        if let Some(headers) = request.headers_mut() {
            *headers = self.headers;
        }
        let request = request.body(Full::new(self.body)).expect("request");
        let response = tokio::time::timeout(timeout, self.http.client.request(request))
            .await
            .unwrap_or_else(|_| panic!("request to {} timed out", self.url))
            .unwrap_or_else(|e| panic!("request to {} failed: {e}", self.url));
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.into_body().collect().await.expect("response body").to_bytes();
        Resp { status, headers, body }
    }
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
