//! The container image and the compose installation (contract §10 "Images"), built here by
//! `scripts/image.sh` from the binary these tests run (its base images made from Debian's
//! packages when no registry answers): the image reports healthy through its own
//! `HEALTHCHECK`, an organisation made with `weir admin` inside it gets a signed delivery that
//! an independent library verifies, and `SIGTERM` stops it with status 0; `compose.yaml`
//! with its Redis and PostgreSQL delivers too and moves the delivery to its PostgreSQL.
//! Everything a run makes (containers, networks, volumes, the image) is removed after.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::api::{Api, Credentials};
use crate::support::docker::{DOCKER, Dockerd, docker, repo_root, run, wait_healthy};
use crate::support::http::Http;
use crate::support::process::weir_binary;
use crate::support::receiver::{Receiver, Reply};
use crate::support::weir::{WeirBuilder, work_order_event};
use crate::support::{eventually, free_port, python, unique};

/// An organisation made with `weir admin` inside `container`, and an admin and publisher
/// client of it talking to `http`.
async fn tenant_through(container: &str, http: &Http) -> Api {
    let org = docker(&["exec", container, "weir", "admin", "org", "create", "--name", "Acme", "--plan", "pro"]).await;
    let org: Value = serde_json::from_str(&org).expect("the organisation, as JSON");
    let org_id = org["id"].as_str().expect("its id");
    let args = ["exec", container, "weir", "admin", "client", "create", "--org", org_id, "--name", "backend"];
    let client = docker(&[&args[..], &["--admin", "--publisher"]].concat()).await;
    let client: Value = serde_json::from_str(&client).expect("the client, as JSON");
    let creds = Credentials {
        client_id: client["client_id"].as_str().unwrap().to_owned(),
        client_secret: client["client_secret"].as_str().unwrap().to_owned(),
    };
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", creds.client_id.as_str()),
        ("client_secret", creds.client_secret.as_str()),
    ];
    let answer = http.post("/oauth/token").form(&form).send().await.expect(200);
    let token = answer.json()["access_token"].as_str().expect("a token").to_owned();
    Api { http: http.clone(), token, creds }
}

/// Something a run made, removed when the run ends however it ends: the command that
/// removes it (run to its end; a failure is only reported).
struct Made(Vec<String>);

impl Drop for Made {
    fn drop(&mut self) {
        let Some((program, args)) = self.0.split_first() else { return };
        let out = std::process::Command::new(program).args(args).current_dir(repo_root()).output();
        if !out.is_ok_and(|o| o.status.success()) {
            eprintln!("cannot remove what the test made: {:?}", self.0);
        }
    }
}

fn made(command: &[&str]) -> Made {
    Made(command.iter().map(|s| (*s).to_owned()).collect())
}

/// Publishes an event to a new webhook at `receiver_url` and checks that the delivery arrives
/// and verifies with the Standard Webhooks library under the webhook's secret: the webhook.
async fn delivers(api: &Api, receiver: &Receiver, receiver_url: &str) -> Value {
    let hook = api.create_webhook(receiver_url, &["work_order_created"]).await;
    api.publish(&work_order_event("wo_1")).await;
    let got = receiver.wait_for(1, Duration::from_secs(30)).await;
    let headers: serde_json::Map<String, Value> = got[0]
        .headers
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), Value::String(v.to_str().unwrap_or_default().to_owned())))
        .collect();
    let input = json!({"headers": headers, "body": String::from_utf8_lossy(&got[0].body)}).to_string();
    let secret = hook["signing_secret"].as_str().expect("the webhook's secret");
    let verdict: Value = serde_json::from_str(&python::run("verify.py", &[secret], input.as_bytes())).unwrap();
    assert_eq!(verdict["standardwebhooks"], "ok", "{verdict}");
    hook
}

/// The image alone, on the host's network beside the tests' Redis.
async fn the_image(tag: &str) {
    let port = free_port();
    let name = unique("weir-image");
    let mut args: Vec<String> = ["run", "-d", "--name", &name, "--network", "host", "--health-interval", "1s"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    // The tests' settings (their Redis, loopback receivers allowed), but the data directory:
    // the image's own volume.
    let builder = WeirBuilder::shared();
    for (key, value) in builder.vars() {
        if key != "WEIR_DATA_DIR" {
            args.extend(["-e".to_owned(), format!("{key}={value}")]);
        }
    }
    args.extend(["-e".to_owned(), format!("WEIR_LISTEN=127.0.0.1:{port}"), tag.to_owned()]);
    let _container = made(&[DOCKER, "rm", "-f", "-v", &name]);
    docker(&args.iter().map(String::as_str).collect::<Vec<_>>()).await;
    wait_healthy(&name, Duration::from_secs(60)).await;
    let user = docker(&["exec", &name, "id", "-u"]).await;
    assert_ne!(user, "0", "not root");
    let http = Http::new(&format!("http://127.0.0.1:{port}"));
    let api = tenant_through(&name, &http).await;
    let receiver = Receiver::start().await;
    let hook = delivers(&api, &receiver, &receiver.url).await;
    // SIGTERM (docker stop) while an attempt is in flight (its endpoint answers after 1.5 s):
    // the attempt finishes (within the tests' 3 s delivery timeout), then Weir ends on its own,
    // with status 0.
    receiver.set(Reply::Delay(Duration::from_millis(1500), 200));
    api.publish(&work_order_event("wo_2")).await;
    receiver.wait_for(2, Duration::from_secs(20)).await;
    docker(&["stop", "-t", "30", &name]).await;
    let status = docker(&["inspect", "-f", "{{.State.ExitCode}} {{.State.OOMKilled}}", &name]).await;
    assert_eq!(status, "0 false", "stopped by SIGTERM with status 0");
    // Read back by a Weir of the test's own on the same Redis and keys: both succeeded.
    let reader = builder.start().await;
    let api = Api { http: reader.http(), ..api };
    let settled = api.settled(hook["id"].as_str().expect("its id"), 2).await;
    assert!(settled.iter().all(|d| d["status"] == "succeeded"), "the attempt in flight was recorded: {settled:?}");
    // (An attempt abandoned at SIGTERM would have been made again, by the reader.)
    assert_eq!(receiver.count(), 2, "each delivery was sent once");
}

/// `compose.yaml` as shipped, with this run's image and the Redis and PostgreSQL images
/// `scripts/image.sh --services` provides; its receiver on the compose network's gateway.
async fn the_compose_installation(tag: &str) {
    let project = unique("weirc").replace(['-', '_'], "");
    let port = free_port().to_string();
    let bind = format!("127.0.0.1:{port}");
    let env = [
        ("WEIR_IMAGE", tag),
        ("WEIR_REDIS_IMAGE", "weir-local/redis"),
        ("WEIR_POSTGRES_IMAGE", "weir-local/postgres"),
        ("WEIR_BIND", bind.as_str()),
    ];
    // What only a test needs: private receivers (its own, on the gateway), history at once.
    let dir = crate::support::temp_dir("compose");
    let extra = dir.join("test.yaml");
    let settings = "services:\n  weir:\n    environment:\n      WEIR_ALLOW_PRIVATE_TARGETS: 172.16.0.0/12,192.168.0.0/16,10.0.0.0/8\n      WEIR_HISTORY_HOT: 1s\n";
    std::fs::write(&extra, settings).unwrap();
    let extra = extra.display().to_string();
    let compose = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["docker-compose", "-p", &project, "-f", "compose.yaml", "-f", &extra];
        all.extend_from_slice(args);
        all.into_iter().map(str::to_owned).collect()
    };
    // Removed whatever happens: containers, network, volumes (the variables name the images).
    let _installation =
        Made([vec!["env".to_owned()], env_args(&env), compose(&["down", "-v", "--remove-orphans"])].concat());
    let up = compose(&["up", "-d", "--no-build"]);
    run(&up[0], &up[1..].iter().map(String::as_str).collect::<Vec<_>>(), &env).await;
    let container = format!("{project}_weir_1");
    wait_healthy(&container, Duration::from_secs(90)).await;
    let network = format!("{project}_default");
    let gateway = docker(&["network", "inspect", "-f", "{{(index .IPAM.Config 0).Gateway}}", &network]).await;
    let receiver = Receiver::start_on(gateway.parse().expect("the gateway's address")).await;
    let http = Http::new(&format!("http://127.0.0.1:{port}"));
    let api = tenant_through(&container, &http).await;
    delivers(&api, &receiver, &receiver.url).await;
    // Moved to PostgreSQL (history_hot is a second here).
    let postgres = format!("{project}_postgres_1");
    let query = "SELECT count(*) FROM weir.deliveries";
    eventually("the delivery in PostgreSQL", Duration::from_secs(60), async || {
        let out = tokio::process::Command::new(DOCKER)
            .args(["exec", &postgres, "psql", "-U", "weir", "-d", "weir", "-tAc", query])
            .output()
            .await
            .ok()?;
        let rows: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
        (rows >= 1).then_some(())
    })
    .await;
}

/// `NAME=value` for each variable (`env` takes them so, before the command).
fn env_args(env: &[(&str, &str)]) -> Vec<String> {
    env.iter().map(|(k, v)| format!("{k}={v}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_image_and_the_compose_installation_deliver_report_healthy_and_stop_cleanly() {
    let _daemon = Dockerd::ensure();
    let tag = format!("weir-test/{}", unique("image").to_lowercase().replace('_', "-"));
    let binary = weir_binary().display().to_string();
    let _image = made(&[DOCKER, "rmi", &tag]);
    run("scripts/image.sh", &["--binary", &binary, "--tag", &tag, "--services"], &[]).await;
    the_image(&tag).await;
    the_compose_installation(&tag).await;
}
