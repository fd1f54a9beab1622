//! The client libraries (`clients/`): the committed ones are what the API's document
//! generates (`scripts/clients.sh --check`, so they cannot drift), and each passes its own
//! tests — the shared signature vectors Weir's signer also makes (`sign.rs`), and against a
//! running Weir: a token from client credentials, a webhook to a receiver of its own, an
//! event, the delivery verified with its `verify`, the event read back.

use weir::store::tenants::orgs::Plan;

use crate::support::process::weir_binary;
use crate::support::process::{repo_root, run};
use crate::support::weir::Weir;

/// A running Weir and an admin and publisher client of a new organisation, as the clients'
/// live tests take them.
async fn live() -> (Weir, Vec<(&'static str, String)>) {
    let weir = Weir::start_default().await;
    let t = weir.tenant(Plan::pro()).await;
    let client = weir.client(&t.org_id, true, true).await;
    let env = vec![
        ("WEIR_URL", weir.base.clone()),
        ("WEIR_CLIENT_ID", client.creds.client_id.clone()),
        ("WEIR_CLIENT_SECRET", client.creds.client_secret.clone()),
    ];
    (weir, env)
}

fn borrowed<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_committed_clients_are_what_the_apis_document_generates() {
    let binary = weir_binary().display().to_string();
    let said = run("scripts/clients.sh", &["--check"], &[("WEIR_BINARY", &binary)]).await;
    assert!(said.is_empty(), "it reports on standard error only: {said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_client_passes_its_tests_against_a_running_weir() {
    let (weir, env) = live().await;
    run("clients/typescript/node_modules/.bin/tsc", &["-p", "clients/typescript"], &[]).await;
    let out = run("node", &["--test", "clients/typescript/dist/test/"], &borrowed(&env)).await;
    assert!(out.contains("# fail 0") && out.contains("# pass "), "{out}");
    let passed: u32 = out.lines().find_map(|l| l.strip_prefix("# pass ")).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(passed >= 14, "the vectors and the live tests ran: {out}");
    drop(weir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_passes_its_tests_against_a_running_weir() {
    let (weir, env) = live().await;
    let mut vars = borrowed(&env);
    vars.push(("PYTHONPATH", "clients/python"));
    vars.push(("PYTHONDONTWRITEBYTECODE", "1"));
    let args = ["-m", "unittest", "discover", "-s", "clients/python/tests", "-t", "clients/python", "-v"];
    let out = tokio::process::Command::new("target/pyenv/bin/python")
        .args(args)
        .envs(vars.iter().copied())
        .current_dir(repo_root())
        .output()
        .await
        .expect("python runs");
    // unittest reports on standard error.
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("Ran 4 tests") && said.trim_end().ends_with("OK"), "{said}");
    drop(weir);
}
