//! A real headless Chromium for tests, driven through chromedriver's W3C WebDriver
//! protocol (JSON over HTTP). Screenshots go to `target/browser-screenshots/`.

use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use super::http::Http;
use super::{eventually, free_port, temp_dir};

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A browser session; closed (and chromedriver stopped) when dropped.
pub struct Browser {
    driver: Child,
    http: Http,
    session: String,
    pub screenshots: PathBuf,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium window of `width` × `height`.
    pub async fn start(width: u32, height: u32) -> Browser {
        Browser::open(width, height, None).await
    }

    /// A phone: a viewport `width` CSS px wide (a desktop window is never under ~500 px), as
    /// Chromium's device emulation draws it.
    pub async fn phone(width: u32, height: u32) -> Browser {
        let metrics = json!({"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2.0}});
        Browser::open(width.max(500), height, Some(metrics)).await
    }

    async fn open(width: u32, height: u32, emulation: Option<Value>) -> Browser {
        let port = free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            // Its own process group, so that dropping the session stops Chromium too (it
            // would outlive chromedriver otherwise).
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver (scripts/setup.sh --tests installs chromium and chromium-driver)");
        let http = Http::new(&format!("http://127.0.0.1:{port}"));
        eventually("chromedriver ready", Duration::from_secs(20), async || {
            let ready = http.get("/status").send_raw().await.ok()?;
            (ready == 200).then_some(())
        })
        .await;
        let profile = temp_dir("chromium");
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--disable-quic", "--no-first-run", format!("--window-size={width},{height}"),
                    format!("--user-data-dir={}", profile.display()),
                ],
            },
        }}});
        let mut caps = caps;
        if let Some(emulation) = emulation {
            caps["capabilities"]["alwaysMatch"]["goog:chromeOptions"]["mobileEmulation"] = emulation;
        }
        let resp = http.post("/session").json(&caps).send().await;
        assert_eq!(resp.status, 200, "cannot start Chromium: {}", resp.text());
        let session = resp.json()["value"]["sessionId"].as_str().expect("session id").to_owned();
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("target/browser-screenshots");
        std::fs::create_dir_all(&root).unwrap();
        Browser { driver, http, session, screenshots: root }
    }

    async fn call(&self, method: hyper::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("/session/{}{path}", self.session);
        let request = self.http.request(method, &url);
        let resp = match body {
            Some(b) => request.json(&b).send().await,
            None => request.send().await,
        };
        assert_eq!(resp.status, 200, "WebDriver {path}: {}", resp.text());
        resp.json()["value"].clone()
    }

    /// A Chrome DevTools command (through chromedriver's `goog/cdp/execute`).
    pub async fn cdp(&self, command: &str, params: Value) -> Value {
        self.call(hyper::Method::POST, "/goog/cdp/execute", Some(json!({"cmd": command, "params": params}))).await
    }

    /// Makes the pages see `prefers-color-scheme: dark` (or `light`).
    pub async fn prefer_scheme(&self, scheme: &str) {
        let features = json!([{"name": "prefers-color-scheme", "value": scheme}]);
        self.cdp("Emulation.setEmulatedMedia", json!({"features": features})).await;
    }

    pub async fn goto(&self, url: &str) {
        self.call(hyper::Method::POST, "/url", Some(json!({"url": url}))).await;
    }

    pub async fn url(&self) -> String {
        self.call(hyper::Method::GET, "/url", None).await.as_str().unwrap_or_default().to_owned()
    }

    /// The element matching `css` (waits a little for it).
    pub async fn find(&self, css: &str) -> String {
        eventually(&format!("element {css}"), Duration::from_secs(10), async || self.try_find(css).await).await
    }

    pub async fn try_find(&self, css: &str) -> Option<String> {
        let url = format!("/session/{}/element", self.session);
        let resp = self.http.post(&url).json(&json!({"using": "css selector", "value": css})).send().await;
        (resp.status == 200).then(|| resp.json()["value"][ELEMENT].as_str().unwrap_or_default().to_owned())
    }

    pub async fn click(&self, css: &str) {
        let id = self.find(css).await;
        self.call(hyper::Method::POST, &format!("/element/{id}/click"), Some(json!({}))).await;
    }

    /// Clears a field and types into it.
    pub async fn fill(&self, css: &str, text: &str) {
        let id = self.find(css).await;
        self.call(hyper::Method::POST, &format!("/element/{id}/clear"), Some(json!({}))).await;
        self.call(hyper::Method::POST, &format!("/element/{id}/value"), Some(json!({"text": text}))).await;
    }

    /// Presses keys (e.g. "\u{E004}" is Tab) in the focused element.
    pub async fn keys(&self, text: &str) {
        let actions = text
            .chars()
            .flat_map(|c| {
                [json!({"type": "keyDown", "value": c.to_string()}), json!({"type": "keyUp", "value": c.to_string()})]
            })
            .collect::<Vec<_>>();
        self.call(
            hyper::Method::POST,
            "/actions",
            Some(json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})),
        )
        .await;
    }

    pub async fn text(&self, css: &str) -> String {
        let id = self.find(css).await;
        self.call(hyper::Method::GET, &format!("/element/{id}/text"), None)
            .await
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// The visible text of the page.
    pub async fn page_text(&self) -> String {
        self.run("return document.body.innerText;").await.as_str().unwrap_or_default().to_owned()
    }

    /// Runs JavaScript in the page; returns its result.
    pub async fn run(&self, script: &str) -> Value {
        self.call(hyper::Method::POST, "/execute/sync", Some(json!({"script": script, "args": []}))).await
    }

    /// Works inside the page's `index`th frame from now on.
    pub async fn frame(&self, index: u32) {
        self.call(hyper::Method::POST, "/frame", Some(json!({"id": index}))).await;
    }

    /// Works in the top-level page again.
    pub async fn top(&self) {
        self.call(hyper::Method::POST, "/frame", Some(json!({"id": null}))).await;
    }

    /// A cookie's value.
    pub async fn cookie(&self, name: &str) -> Option<String> {
        let url = format!("/session/{}/cookie/{name}", self.session);
        let resp = self.http.get(&url).send().await;
        (resp.status == 200).then(|| resp.json()["value"]["value"].as_str().unwrap_or_default().to_owned())
    }

    /// Saves a PNG screenshot as `target/browser-screenshots/{name}.png`.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let data = self.call(hyper::Method::GET, "/screenshot", None).await;
        let png = base64::engine::general_purpose::STANDARD.decode(data.as_str().unwrap_or_default()).unwrap();
        let path = self.screenshots.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let group = format!("-{}", self.driver.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
