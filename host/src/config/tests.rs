use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use crate::store::queue::rate::RateLimit;

use super::*;

fn load(env: &[(&str, &str)]) -> Result<Config, ConfigError> {
    let env: HashMap<String, String> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    load_with(None, |k| env.get(k).cloned())
}

#[test]
fn defaults_match_the_contract() {
    let c = load(&[]).unwrap();
    assert_eq!(c.redis_url, None);
    assert_eq!(c.data_dir, PathBuf::from("./weir-data"));
    assert_eq!(c.listen, "127.0.0.1:8080".parse().unwrap());
    assert_eq!(c.public_url(), "http://127.0.0.1:8080");
    assert_eq!(c.token_ttl, Duration::from_secs(7200));
    let expected: Vec<Duration> = ["5s", "5m", "30m", "2h", "5h", "10h", "14h", "20h", "24h"]
        .iter()
        .map(|s| duration::parse(s).unwrap())
        .collect();
    assert_eq!(c.retry_schedule, expected);
    assert_eq!(c.deactivate_after_failures, 10);
    assert_eq!(c.deactivate_after, Duration::from_secs(5 * 86_400));
    assert_eq!(c.delivery_timeout, Duration::from_secs(10));
    assert_eq!(c.export_url_ttl, Duration::from_secs(15 * 60));
    assert!(c.allow_private_targets.is_empty());
    assert!(c.trusted_proxies.is_empty());
    assert!(c.tls.is_none());
    assert_eq!(c.takeover_after, Duration::from_secs(30));
    let limits = c.plugin_limits();
    assert_eq!(limits.fuel, 10_000_000);
    assert_eq!(limits.timeout, Duration::from_millis(50));
    assert_eq!(limits.memory, 64 * 1024 * 1024);
    assert_eq!(limits.max_output, 1024 * 1024);
    assert!(c.workers);
    assert_eq!(c.api_rate_limit, None);
    assert_eq!(c.log_format, LogFormat::Text);
}

#[test]
fn log_format_is_text_or_json() {
    assert_eq!(load(&[("WEIR_LOG_FORMAT", "json")]).unwrap().log_format, LogFormat::Json);
    let err = load(&[("WEIR_LOG_FORMAT", "yaml")]).unwrap_err().to_string();
    assert!(err.contains("WEIR_LOG_FORMAT") && err.contains("yaml"), "{err}");
}

#[test]
fn an_api_rate_limit_has_a_burst_of_one_second_unless_given() {
    let c = load(&[("WEIR_API_RATE_LIMIT", "20")]).unwrap();
    assert_eq!(c.api_rate_limit, Some(RateLimit { per_second: 20, burst: 20 }));
    let c = load(&[("WEIR_API_RATE_LIMIT", "20"), ("WEIR_API_RATE_BURST", "5")]).unwrap();
    assert_eq!(c.api_rate_limit, Some(RateLimit { per_second: 20, burst: 5 }));
    let err = load(&[("WEIR_API_RATE_LIMIT", "-1")]).unwrap_err().to_string();
    assert!(err.contains("WEIR_API_RATE_LIMIT"), "{err}");
}

#[test]
fn booleans_accept_common_spellings() {
    assert!(!load(&[("WEIR_WORKERS", "false")]).unwrap().workers);
    assert!(!load(&[("WEIR_WORKERS", "0")]).unwrap().workers);
    assert!(load(&[("WEIR_WORKERS", "yes")]).unwrap().workers);
    assert!(load(&[("WEIR_WORKERS", "maybe")]).unwrap_err().to_string().contains("true or false"));
}

#[test]
fn every_default_key_is_known_and_every_key_is_documented() {
    let table: toml::Table = toml::from_str(DEFAULT_TOML).unwrap();
    for key in table.keys().filter(|k| *k != "plans") {
        assert!(KEYS.contains(&key.as_str()), "{key} is not in KEYS");
    }
    for key in KEYS {
        assert!(DEFAULT_TOML.contains(key), "{key} is not documented in config.default.toml");
    }
}

#[test]
fn environment_overrides_defaults() {
    let c = load(&[
        ("WEIR_REDIS_URL", "redis://127.0.0.1:7000"),
        ("WEIR_LISTEN", "0.0.0.0:9000"),
        ("WEIR_RETRY_SCHEDULE", "100ms, 1s,2s"),
        ("WEIR_ALLOW_PRIVATE_TARGETS", "10.1.0.0/16, 127.0.0.1,fd00::/8"),
        ("WEIR_TOKEN_TTL", "60"),
        ("WEIR_DEACTIVATE_AFTER_FAILURES", "3"),
        ("WEIR_DELIVERY_TIMEOUT", "2s"),
    ])
    .unwrap();
    assert_eq!(c.redis_url.as_deref(), Some("redis://127.0.0.1:7000"));
    assert_eq!(c.listen.port(), 9000);
    assert_eq!(c.retry_schedule.len(), 3);
    assert_eq!(c.retry_schedule[0], Duration::from_millis(100));
    assert_eq!(c.allow_private_targets.len(), 3);
    assert_eq!(c.allow_private_targets[1].to_string(), "127.0.0.1/32");
    assert_eq!(c.token_ttl, Duration::from_secs(60));
    assert_eq!(c.deactivate_after_failures, 3);
    assert_eq!(c.delivery_timeout, Duration::from_secs(2));
}

#[test]
fn file_overrides_defaults_and_env_overrides_file() {
    let mut file = tempfile();
    writeln!(file.1, "delivery_timeout = \"3s\"\nlisten = \"127.0.0.1:1234\"").unwrap();
    let env: HashMap<String, String> = [("WEIR_LISTEN".to_string(), "127.0.0.1:4321".to_string())].into();
    let c = load_with(Some(&file.0), |k| env.get(k).cloned()).unwrap();
    assert_eq!(c.delivery_timeout, Duration::from_secs(3));
    assert_eq!(c.listen.port(), 4321);
    std::fs::remove_file(&file.0).unwrap();
}

#[test]
fn the_otel_table_gives_the_otel_variables_and_a_set_variable_wins() {
    let mut file = tempfile();
    writeln!(
        file.1,
        "[otel]\nOTEL_EXPORTER_OTLP_ENDPOINT = \"http://127.0.0.1:4318\"\nOTEL_BSP_SCHEDULE_DELAY = 100\nOTEL_SERVICE_NAME = \"from-file\""
    )
    .unwrap();
    let env: HashMap<String, String> = [("OTEL_SERVICE_NAME".to_string(), "from-env".to_string())].into();
    let c = load_with(Some(&file.0), |k| env.get(k).cloned()).unwrap();
    let get = |k: &str| c.otel.get(k).map(String::as_str);
    assert_eq!(get("OTEL_EXPORTER_OTLP_ENDPOINT"), Some("http://127.0.0.1:4318"));
    assert_eq!(get("OTEL_BSP_SCHEDULE_DELAY"), Some("100"));
    assert_eq!(get("OTEL_SERVICE_NAME"), Some("from-env"));
    // Nothing set anywhere: nothing.
    assert!(load_with(None, |_| None).unwrap().otel.is_empty());
    std::fs::remove_file(&file.0).unwrap();
    let mut file = tempfile();
    writeln!(file.1, "[otel]\nOTEL_EXPORTER_OTLP_ENDPIONT = \"http://127.0.0.1:4318\"").unwrap();
    let err = load_with(Some(&file.0), |_| None).unwrap_err();
    assert!(err.to_string().contains("OTEL_EXPORTER_OTLP_ENDPIONT"), "{err}");
    std::fs::remove_file(&file.0).unwrap();
}

#[test]
fn unknown_file_keys_are_refused() {
    let mut file = tempfile();
    writeln!(file.1, "delivery_timout = \"3s\"").unwrap();
    let err = load_with(Some(&file.0), |_| None).unwrap_err();
    assert!(err.to_string().contains("unknown setting `delivery_timout`"), "{err}");
    std::fs::remove_file(&file.0).unwrap();
}

#[test]
fn errors_name_the_variable() {
    let cases: &[(&str, &str, &str)] = &[
        ("WEIR_DELIVERY_TIMEOUT", "10", "unit"),
        ("WEIR_DELIVERY_TIMEOUT", "0s", "greater than zero"),
        ("WEIR_LISTEN", "localhost", "not an address"),
        ("WEIR_RETRY_SCHEDULE", "5s,,5m", "empty duration"),
        ("WEIR_ALLOW_PRIVATE_TARGETS", "10.0.0.0/33", "not a CIDR"),
        ("WEIR_TRUSTED_PROXIES", "10.0.0.0/8, proxy", "not a CIDR"),
        ("WEIR_DEACTIVATE_AFTER_FAILURES", "-1", "whole number"),
        ("WEIR_DEACTIVATE_AFTER_FAILURES", "0", "between 1"),
        ("WEIR_REDIS_URL", "http://x", "redis://"),
        ("WEIR_PUBLIC_URL", "ftp://x", "http(s)"),
        ("WEIR_TLS_CERT", "/tmp/c.pem", "tls_key"),
        ("WEIR_TOKEN_TTL", "soon", "not a duration"),
    ];
    for (var, value, needle) in cases {
        let err = load(&[(var, value)]).unwrap_err().to_string();
        assert!(err.contains(needle), "{var}={value}: {err}");
        if !needle.starts_with("tls") {
            assert!(err.starts_with(var), "{var}={value}: {err}");
        }
    }
}

#[test]
fn retention_must_outlast_retries() {
    let err = load(&[("WEIR_DELIVERY_RETENTION", "1d")]).unwrap_err().to_string();
    assert!(err.contains("outlast"), "{err}");
    assert!(load(&[("WEIR_DELIVERY_RETENTION", "1h"), ("WEIR_RETRY_SCHEDULE", "1s,2s")]).is_ok());
}

#[test]
fn public_url_follows_tls() {
    let c = load(&[("WEIR_TLS_CERT", "c.pem"), ("WEIR_TLS_KEY", "k.pem")]).unwrap();
    assert_eq!(c.public_url(), "https://127.0.0.1:8080");
    let c = load(&[("WEIR_PUBLIC_URL", "https://hooks.example.com/")]).unwrap();
    assert_eq!(c.public_url(), "https://hooks.example.com");
}

fn tempfile() -> (PathBuf, std::fs::File) {
    let path = std::env::temp_dir().join(format!("weir-config-{}.toml", crate::ids::new(crate::ids::Kind::Event)));
    let file = std::fs::File::create(&path).unwrap();
    (path, file)
}

#[test]
fn deactivate_after_may_be_zero() {
    let c = load(&[("WEIR_DEACTIVATE_AFTER", "0s")]).unwrap();
    assert_eq!(c.deactivate_after, Duration::ZERO);
    let err = load(&[("WEIR_DEACTIVATE_AFTER", "-1s")]).unwrap_err().to_string();
    assert!(err.starts_with("WEIR_DEACTIVATE_AFTER"), "{err}");
}

#[test]
fn runtime_threads_default_to_half_the_cores_and_may_be_set() {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    assert_eq!(load(&[]).unwrap().runtime_threads, (cores / 2).max(1));
    assert_eq!(load(&[("WEIR_RUNTIME_THREADS", "3")]).unwrap().runtime_threads, 3);
    let err = load(&[("WEIR_RUNTIME_THREADS", "many")]).unwrap_err().to_string();
    assert!(err.contains("WEIR_RUNTIME_THREADS"), "{err}");
}

#[test]
fn event_retention_defaults_to_a_week_follows_a_shorter_delivery_retention_and_must_fit() {
    assert_eq!(load(&[]).unwrap().event_retention, Duration::from_secs(7 * 86_400));
    let short = [("WEIR_DELIVERY_RETENTION", "1h"), ("WEIR_RETRY_SCHEDULE", "1s,2s")];
    assert_eq!(load(&short).unwrap().event_retention, Duration::from_secs(3600), "the default follows");
    assert_eq!(load(&[("WEIR_EVENT_RETENTION", "0s")]).unwrap().event_retention, Duration::ZERO);
    let err = load(&[short[0], short[1], ("WEIR_EVENT_RETENTION", "2h")]).unwrap_err().to_string();
    assert!(err.starts_with("WEIR_EVENT_RETENTION") && err.contains("delivery_retention"), "{err}");
}

#[test]
fn an_unknown_weir_variable_is_refused_with_the_closest_name() {
    use super::check_variables;
    assert!(check_variables(["PATH", "WEIR_LISTEN", "WEIR_LOG", "WEIR_EGRESS_PROXY", "HOME"]).is_ok());
    let err = check_variables(["WEIR_EGRES_PROXY"]).unwrap_err().to_string();
    assert!(err.contains("WEIR_EGRES_PROXY") && err.contains("did you mean WEIR_EGRESS_PROXY?"), "{err}");
    let err = check_variables(["WEIR_REDIS_URLS", "WEIR_LISTEN"]).unwrap_err().to_string();
    assert!(err.contains("did you mean WEIR_REDIS_URL?"), "{err}");
    let err = check_variables(["WEIR_SOMETHING_ELSE_ENTIRELY"]).unwrap_err().to_string();
    assert!(err.contains("WEIR_SOMETHING_ELSE_ENTIRELY") && !err.contains("did you mean"), "{err}");
}

#[test]
fn the_egress_proxy_and_the_secret_key_are_read_and_checked() {
    let c = load(&[("WEIR_EGRESS_PROXY", "http://u:p@127.0.0.1:3128"), ("WEIR_SECRET_KEY", "0123456789abcdef0123")])
        .unwrap();
    let proxy = c.egress_proxy.clone().unwrap();
    assert_eq!(proxy.address, "127.0.0.1:3128");
    assert!(proxy.authorization.is_some());
    assert!(c.secret_key.is_some());
    let shown = format!("{c:?}");
    assert!(!shown.contains("0123456789abcdef") && !shown.contains("dTpw"), "{shown}");
    assert!(load(&[]).unwrap().egress_proxy.is_none());
    let err = load(&[("WEIR_EGRESS_PROXY", "socks5://127.0.0.1:1080")]).unwrap_err().to_string();
    assert!(err.contains("WEIR_EGRESS_PROXY"), "{err}");
    let err = load(&[("WEIR_SECRET_KEY", "short")]).unwrap_err().to_string();
    assert!(err.contains("WEIR_SECRET_KEY") && err.contains("16"), "{err}");
}
