//! The `weir` binary: operator commands (contract §1), the managed Redis, and a mistyped
//! `WEIR_` variable refused by every command.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::http::Http;
use crate::support::redis::RedisServer;
use crate::support::temp_dir;
use crate::support::weir::WeirBuilder;

fn admin(env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = crate::support::weir::weir_command();
    command.arg("admin").args(args).env_clear().env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("run weir admin")
}

fn json_out(output: &Output) -> Value {
    assert!(output.status.success(), "failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("stdout is JSON")
}

async fn token_request(base: &str, id: &str, secret: &str) -> (u16, Value) {
    let resp = Http::new(base)
        .post("/oauth/token")
        .form(&[("grant_type", "client_credentials"), ("client_id", id), ("client_secret", secret)])
        .send()
        .await;
    let body = serde_json::from_slice(&resp.body).unwrap_or(Value::Null);
    (resp.status, body)
}

#[tokio::test]
async fn admin_commands_print_the_contract_json() {
    let redis = RedisServer::start();
    let url = redis.url();
    let env = [("WEIR_REDIS_URL", url.as_str()), ("WEIR_REDIS_PREFIX", "cli")];

    let org = json_out(&admin(&env, &["org", "create", "--name", "Acme Ltd", "--plan", "free"]));
    let org_id = org["id"].as_str().unwrap();
    assert!(org_id.starts_with("org_"));
    assert_eq!(org["name"], "Acme Ltd");
    assert_eq!(org["plan"], "free");
    assert_eq!(org["api_integrations"], false);
    let keys: Vec<&str> = org.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 4, "{org}");

    let upgraded = json_out(&admin(&env, &["org", "set-plan", org_id, "--plan", "pro"]));
    assert_eq!(upgraded["plan"], "pro");
    assert_eq!(upgraded["api_integrations"], true);
    assert_eq!(upgraded["id"], org["id"]);

    let client = json_out(&admin(&env, &["client", "create", "--org", org_id, "--name", "Zapier", "--admin"]));
    assert!(client["client_id"].as_str().unwrap().starts_with("cli_"));
    assert!(client["client_secret"].as_str().unwrap().len() >= 40);
    assert_eq!(client["org_id"], org["id"]);
    assert_eq!(client["name"], "Zapier");
    assert_eq!(client["admin"], true);
    assert_eq!(client["publisher"], false);
    let publisher = json_out(&admin(&env, &["client", "create", "--org", org_id, "--name", "App", "--publisher"]));
    assert_eq!(publisher["admin"], false);
    assert_eq!(publisher["publisher"], true);

    // The printed credentials work against a running Weir on the same Redis.
    let weir = WeirBuilder::new(&url).env("WEIR_REDIS_PREFIX", "cli").start().await;
    let id = client["client_id"].as_str().unwrap();
    let secret = client["client_secret"].as_str().unwrap();
    let (status, body) = token_request(&weir.base, id, secret).await;
    assert_eq!(status, 200, "{body}");
    let token = body["access_token"].as_str().unwrap().to_owned();
    weir.http().get("/api/v2/webhooks").bearer(&token).send().await.expect(200);

    let revoked = json_out(&admin(&env, &["client", "revoke", id]));
    assert_eq!(revoked, serde_json::json!({"client_id": id, "revoked": true}));
    weir.http().get("/api/v2/webhooks").bearer(&token).send().await.expect(401);
    assert_eq!(token_request(&weir.base, id, secret).await.0, 401);

    // Listings: organisations, one organisation, its clients (never a secret).
    let orgs = json_out(&admin(&env, &["org", "list"]));
    assert_eq!(orgs, serde_json::json!([upgraded]));
    assert_eq!(json_out(&admin(&env, &["org", "show", org_id])), upgraded);
    let clients = json_out(&admin(&env, &["client", "list", "--org", org_id]));
    let clients = clients.as_array().unwrap();
    assert_eq!(clients.len(), 2);
    let zapier = clients.iter().find(|c| c["client_id"] == id).expect("listed");
    assert_eq!(
        (zapier["name"].as_str(), zapier["admin"].as_bool(), zapier["revoked"].as_bool()),
        (Some("Zapier"), Some(true), Some(true))
    );
    // Where it stands against its plan, as the API's usage shows it.
    let usage = json_out(&admin(&env, &["org", "usage", org_id]));
    assert_eq!(usage["plan"], "pro");
    assert_eq!(usage["webhooks"], serde_json::json!({"used": 0, "limit": 500}), "{usage}");
    assert_eq!(usage["events"]["used"], 0);
    assert!(!admin(&env, &["org", "usage", "org_nope"]).status.success());
    let app = clients.iter().find(|c| c["client_id"] == publisher["client_id"]).expect("listed");
    assert_eq!((app["publisher"].as_bool(), app["revoked"].as_bool()), (Some(true), Some(false)));
    for client in clients {
        assert!(client.get("client_secret").is_none() && !client.to_string().contains(secret), "{client}");
    }
}

#[test]
fn admin_errors_go_to_stderr_with_a_non_zero_exit() {
    let redis = RedisServer::start();
    let url = redis.url();
    let env = [("WEIR_REDIS_URL", url.as_str())];
    let cases: &[(&[&str], &str)] = &[
        (&["org", "set-plan", "org_nope", "--plan", "pro"], "no organisation org_nope"),
        (&["client", "create", "--org", "org_nope", "--name", "x"], "no organisation org_nope"),
        (&["client", "revoke", "cli_nope"], "no client cli_nope"),
        (&["org", "show", "org_nope"], "no organisation org_nope"),
        (&["client", "list", "--org", "org_nope"], "no organisation org_nope"),
        (&["user", "list", "--org", "../etc"], "no organisation ../etc"),
        (&["org", "create", "--name", "  ", "--plan", "pro"], "--name"),
        (&["org", "create", "--name", "x", "--plan", "gold"], "no plan `gold` in the configuration (plans: free, pro)"),
    ];
    for (args, needle) in cases {
        let output = admin(&env, args);
        assert!(!output.status.success(), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    let output =
        admin(&[("WEIR_REDIS_URL", "redis://127.0.0.1:1")], &["org", "create", "--name", "x", "--plan", "pro"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot reach Redis"));
    let output = admin(&[("WEIR_DELIVERY_TIMEOUT", "ten")], &["org", "create", "--name", "x", "--plan", "pro"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("WEIR_DELIVERY_TIMEOUT"));
}

#[test]
fn admin_filter_test_checks_a_filter_and_tries_it_on_an_event_without_redis() {
    // No Redis anywhere (an unreachable URL): the command needs none.
    let env = [("WEIR_REDIS_URL", "redis://127.0.0.1:1")];
    let filter = r#"report_export.exportable.type == "Form" && creator.id in ["usr_1"]"#;
    let checked = json_out(&admin(&env, &["filter", "test", filter]));
    assert_eq!(checked["valid"], true);
    let bound = checked["cost_bound_us"].as_u64();
    assert!(bound.is_some_and(|us| (1..=30_000).contains(&us)), "{checked}");
    assert!(checked.get("match").is_none(), "no event, no verdict: {checked}");

    let dir = temp_dir("filter-test");
    for (name, exportable, creator, selected) in
        [("form", "Form", "usr_1", true), ("asset", "Asset", "usr_1", false), ("other", "Form", "usr_9", false)]
    {
        let path = dir.join(format!("{name}.json"));
        let event = crate::support::weir::export_event("rex_1", (exportable, "frm_1"), creator);
        std::fs::write(&path, event.to_string()).unwrap();
        let tried = json_out(&admin(&env, &["filter", "test", filter, "--event", path.to_str().unwrap()]));
        assert_eq!(tried["match"], selected, "{name}: {tried}");
        assert_eq!(tried["error"], Value::Null, "{name}: {tried}");
    }
    // A missing field is an evaluation error: not selected, and said why.
    let path = dir.join("form.json");
    let tried = json_out(&admin(&env, &["filter", "test", "work_order.id == 'x'", "--event", path.to_str().unwrap()]));
    assert_eq!(tried["match"], false);
    assert!(tried["error"].as_str().is_some_and(|e| !e.is_empty()), "{tried}");

    // Refused as saving it would be: exit 1, the position on stderr, nothing on stdout.
    let refused = admin(&env, &["filter", "test", "creator.id == "]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(refused.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("line 1, column"), "{stderr}");
    let unknown = admin(&env, &["filter", "test", "secret.value == 'x'"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("secret"));
    // An event that is not JSON, or not there.
    let not_json = dir.join("not.json");
    std::fs::write(&not_json, "{nope").unwrap();
    let tried = json_out(&admin(&env, &["filter", "test", filter, "--event", not_json.to_str().unwrap()]));
    assert!(tried["error"].as_str().is_some_and(|e| e.contains("not JSON")), "{tried}");
    let missing = admin(&env, &["filter", "test", filter, "--event", dir.join("none.json").to_str().unwrap()]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read the event"));
}

fn managed_env(dir: &Path) -> Vec<(String, String)> {
    vec![("WEIR_DATA_DIR".into(), dir.display().to_string())]
}

#[tokio::test]
async fn managed_redis_is_started_shared_with_admin_and_keeps_data_across_restarts() {
    let dir = temp_dir("managed");
    let env = managed_env(&dir);
    let env_ref: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();

    // A data directory that holds no Weir data: admin refuses (exit 2) and creates nothing.
    let refused = admin(&env_ref, &["org", "list"]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains(&dir.display().to_string()) && stderr.contains("WEIR_DATA_DIR"), "{stderr}");
    assert!(!dir.join("redis").exists(), "admin created nothing");

    let builder = WeirBuilder::shared()
        .without("WEIR_REDIS_URL")
        .without("WEIR_REDIS_PREFIX")
        .env("WEIR_DATA_DIR", &dir.display().to_string());
    let mut serve = builder.spawn();
    serve.wait_ready().await;
    assert!(dir.join("redis").join("appendonlydir").exists(), "AOF persistence is on");
    // While serve runs, admin uses the same Redis.
    let org = json_out(&admin(&env_ref, &["org", "create", "--name", "During", "--plan", "pro"]));
    let org_id = org["id"].as_str().unwrap().to_owned();
    let client = json_out(&admin(&env_ref, &["client", "create", "--org", &org_id, "--name", "c", "--admin"]));
    let (id, secret) =
        (client["client_id"].as_str().unwrap().to_owned(), client["client_secret"].as_str().unwrap().to_owned());
    assert_eq!(token_request(&serve.base, &id, &secret).await.0, 200);
    let status = serve.signal("TERM");
    assert!(status.success(), "clean exit on SIGTERM: {status:?}");
    assert!(
        !crate::support::weir::socket_answers(&dir.join("redis/redis.sock")).await,
        "managed redis stopped with serve"
    );

    // No server running: admin starts a temporary Redis on the existing data, writes, and
    // shuts it down again.
    let later = json_out(&admin(&env_ref, &["org", "create", "--name", "After", "--plan", "free"]));
    assert!(!crate::support::weir::socket_answers(&dir.join("redis/redis.sock")).await, "temporary redis stopped");
    let orgs = json_out(&admin(&env_ref, &["org", "list"]));
    let names: Vec<&str> = orgs.as_array().unwrap().iter().map(|o| o["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["During", "After"]);
    assert_eq!(json_out(&admin(&env_ref, &["org", "show", later["id"].as_str().unwrap()])), later);

    // A new serve finds every record again.
    let serve = builder.spawn();
    serve.wait_ready().await;
    assert_eq!(token_request(&serve.base, &id, &secret).await.0, 200);
}

#[test]
fn serve_without_redis_explains_what_to_do() {
    let dir = temp_dir("noredis");
    let output = crate::support::weir::weir_command()
        .arg("serve")
        .env_clear()
        .env("PATH", "/nonexistent")
        .env("WEIR_DATA_DIR", dir.display().to_string())
        .env("WEIR_LISTEN", "127.0.0.1:0")
        .output()
        .expect("run weir serve");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("redis-server") && stderr.contains("WEIR_REDIS_URL"), "{stderr}");

    let output = crate::support::weir::weir_command()
        .arg("serve")
        .env_clear()
        .env("WEIR_REDIS_URL", "redis://127.0.0.1:1")
        .env("WEIR_LISTEN", "127.0.0.1:0")
        .output()
        .expect("run weir serve");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot reach Redis"));
}

#[tokio::test]
async fn users_are_created_with_a_password_from_standard_input() {
    use std::io::Write;
    let redis = RedisServer::start();
    let url = redis.url();
    let env = [("WEIR_REDIS_URL", url.as_str()), ("WEIR_REDIS_PREFIX", "users")];
    let org = json_out(&admin(&env, &["org", "create", "--name", "Acme", "--plan", "free"]));
    let org_id = org["id"].as_str().unwrap();
    let create = |email: &str, password: &str, admin_flag: bool| {
        let mut command = crate::support::weir::weir_command();
        command.arg("admin").args(["user", "create", "--org", org_id, "--email", email]).env_clear();
        if admin_flag {
            command.arg("--admin");
        }
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(format!("{password}\n").as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let user = json_out(&create("Ada@Example.com", "correct horse battery", true));
    assert!(user["id"].as_str().unwrap().starts_with("usr_"));
    assert_eq!(user["email"], "ada@example.com");
    assert_eq!(user["org_id"], org["id"]);
    assert_eq!(user["admin"], true);
    assert_eq!(user.as_object().unwrap().len(), 4);
    let reader = json_out(&create("reader@example.com", "another long password", false));
    assert_eq!(reader["admin"], false);
    for (email, password, needle) in [
        ("ada@example.com", "correct horse battery", "already exists"),
        ("short@example.com", "short", "at least 10 characters"),
        ("not-an-email", "correct horse battery", "not an email address"),
    ] {
        let out = create(email, password, false);
        assert!(!out.status.success());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(needle),
            "{email}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The password is stored only as an Argon2id hash.
    let mut conn = redis.conn();
    let stored: String = redis::cmd("HGET")
        .arg(weir::store::Keys::new("users", 1).user(user["org_id"].as_str().unwrap(), user["id"].as_str().unwrap()))
        .arg("password_hash")
        .query(&mut conn)
        .unwrap();
    assert!(stored.starts_with("$argon2id$") && !stored.contains("correct horse"));
    // Listed without any password hash.
    let users = json_out(&admin(&env, &["user", "list", "--org", org_id]));
    let listed: Vec<(&str, bool)> =
        users.as_array().unwrap().iter().map(|u| (u["email"].as_str().unwrap(), u["admin"] == true)).collect();
    assert_eq!(listed.len(), 2, "{users}");
    assert!(listed.contains(&("ada@example.com", true)) && listed.contains(&("reader@example.com", false)));
    assert!(!users.to_string().contains("argon2"), "{users}");
    assert!(users.as_array().unwrap().iter().all(|u| u.as_object().unwrap().len() == 4), "{users}");
}

#[tokio::test]
async fn a_mistyped_weir_variable_stops_serve_and_admin_naming_the_closest_setting() {
    let builder = WeirBuilder::shared().env("WEIR_EGRES_PROXY", "http://127.0.0.1:3128");
    for args in [vec!["serve"], vec!["admin", "org", "list"]] {
        let mut command = crate::support::weir::weir_command();
        command.args(&args);
        for (name, value) in builder.vars() {
            command.env(name, value);
        }
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("WEIR_EGRES_PROXY") && stderr.contains("WEIR_EGRESS_PROXY"), "{stderr}");
    }
}
