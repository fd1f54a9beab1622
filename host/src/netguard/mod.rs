//! The webhook URL rule (contract §2): `http` or `https`, a host, no user-info, and every
//! address the host resolves to is public (or exempt through `WEIR_ALLOW_PRIVATE_TARGETS`).
//!
//! The rule runs when a webhook is created or changed, and again before every delivery
//! attempt; the sender then connects to exactly the addresses vetted here, so a DNS answer
//! that changes between check and connect (rebinding) cannot reach a private address.

pub(crate) mod ranges;
pub(crate) mod suffixes;

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use ipnet::IpNet;
use url::{Host, Url};

/// Longest webhook URL accepted.
pub(crate) const MAX_URL_LEN: usize = 2048;

/// Why a URL is not an acceptable delivery target. The messages are shown to API clients.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UrlError {
    #[error("must be an absolute http or https URL")]
    Malformed,
    #[error("must use the http or https scheme")]
    Scheme,
    #[error("must name a host")]
    NoHost,
    #[error("must not contain a user name or password")]
    UserInfo,
    #[error("must be at most {MAX_URL_LEN} characters")]
    TooLong,
    #[error("must name a port from 1 to 65535")]
    Port,
    #[error("host `{0}` does not resolve")]
    Unresolvable(String),
    #[error("resolves to {0}, which is not a public address")]
    NotPublic(IpAddr),
}

/// The URL rule with this installation's exemptions.
#[derive(Debug, Clone, Default)]
pub(crate) struct UrlRule {
    exempt: Vec<IpNet>,
}

/// A URL that passed the rule, with the addresses to connect to.
#[derive(Debug, Clone)]
pub(crate) struct Vetted {
    pub url: Url,
    pub addrs: Vec<SocketAddr>,
}

impl UrlRule {
    pub(crate) fn new(exempt: Vec<IpNet>) -> UrlRule {
        UrlRule { exempt }
    }

    /// Checks the URL's form (scheme, host, user-info, length) without resolving it.
    pub(crate) fn parse(&self, text: &str) -> Result<Url, UrlError> {
        if text.len() > MAX_URL_LEN {
            return Err(UrlError::TooLong);
        }
        let url = Url::parse(text).map_err(|_| UrlError::Malformed)?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(UrlError::Scheme);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlError::UserInfo);
        }
        if url.port() == Some(0) {
            return Err(UrlError::Port);
        }
        match url.host() {
            None => Err(UrlError::NoHost),
            Some(Host::Domain("")) => Err(UrlError::NoHost),
            Some(_) => Ok(url),
        }
    }

    /// Checks the URL's form, resolves its host and checks every address.
    pub(crate) async fn vet(&self, text: &str) -> Result<Vetted, UrlError> {
        let url = self.parse(text)?;
        let port = url.port_or_known_default().ok_or(UrlError::Malformed)?;
        let addrs: Vec<SocketAddr> = match url.host() {
            Some(Host::Ipv4(ip)) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
            Some(Host::Ipv6(ip)) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
            Some(Host::Domain(name)) => resolve(name, port).await?,
            None => return Err(UrlError::NoHost),
        };
        for addr in &addrs {
            if !ranges::is_allowed(addr.ip(), &self.exempt) {
                return Err(UrlError::NotPublic(addr.ip()));
            }
        }
        Ok(Vetted { url, addrs })
    }
}

impl UrlRule {
    /// Resolves a broker's host and checks every address as [`UrlRule::vet`] does a URL's.
    pub(crate) async fn vet_host(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, UrlError> {
        if port == 0 {
            return Err(UrlError::Port);
        }
        let addrs = match host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) if host.is_empty() => return Err(UrlError::NoHost),
            Err(_) => resolve(host, port).await?,
        };
        for addr in &addrs {
            if !ranges::is_allowed(addr.ip(), &self.exempt) {
                return Err(UrlError::NotPublic(addr.ip()));
            }
        }
        Ok(addrs)
    }
}

async fn resolve(name: &str, port: u16) -> Result<Vec<SocketAddr>, UrlError> {
    let lookup = tokio::net::lookup_host((name, port));
    let addrs: Vec<SocketAddr> = match tokio::time::timeout(Duration::from_secs(5), lookup).await {
        Ok(Ok(addrs)) => addrs.collect(),
        _ => return Err(UrlError::Unresolvable(name.to_owned())),
    };
    if addrs.is_empty() {
        return Err(UrlError::Unresolvable(name.to_owned()));
    }
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_rules() {
        let rule = UrlRule::default();
        assert_eq!(rule.parse("ftp://example.com/").unwrap_err(), UrlError::Scheme);
        assert_eq!(rule.parse("javascript:alert(1)").unwrap_err(), UrlError::Scheme);
        assert_eq!(rule.parse("example.com/hook").unwrap_err(), UrlError::Malformed);
        assert_eq!(rule.parse("https://user:pw@example.com/").unwrap_err(), UrlError::UserInfo);
        assert_eq!(rule.parse("https://user@example.com/").unwrap_err(), UrlError::UserInfo);
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_LEN));
        assert_eq!(rule.parse(&long).unwrap_err(), UrlError::TooLong);
        assert!(rule.parse("https://example.com:8443/hooks?x=1").is_ok());
        assert_eq!(rule.parse("https://example.com:0/").unwrap_err(), UrlError::Port);
        assert!(rule.parse("https://example.com:65535/").is_ok());
        assert_eq!(rule.parse("https://example.com:65536/").unwrap_err(), UrlError::Malformed);
    }

    #[tokio::test]
    async fn literal_addresses_are_checked_without_dns() {
        let rule = UrlRule::default();
        for url in [
            "http://127.0.0.1/",
            "http://[::1]/",
            "http://10.0.0.1/",
            "http://[::ffff:127.0.0.1]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://0/",
        ] {
            assert!(matches!(rule.vet(url).await, Err(UrlError::NotPublic(_))), "{url}");
        }
        let ok = rule.vet("https://93.184.216.34:8443/x").await.unwrap();
        assert_eq!(ok.addrs, vec!["93.184.216.34:8443".parse().unwrap()]);
    }

    #[tokio::test]
    async fn hostnames_resolving_to_loopback_are_refused() {
        let rule = UrlRule::default();
        assert!(matches!(rule.vet("http://localhost:9/").await, Err(UrlError::NotPublic(_))));
        let exempt = UrlRule::new(vec!["127.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()]);
        let vetted = exempt.vet("http://localhost:9/").await.unwrap();
        assert!(vetted.addrs.iter().all(|a| a.ip().is_loopback()));
    }

    #[tokio::test]
    async fn unresolvable_hosts_are_refused() {
        let rule = UrlRule::default();
        let err = rule.vet("http://no-such-host.invalid/").await.unwrap_err();
        assert_eq!(err, UrlError::Unresolvable("no-such-host.invalid".into()));
    }
}
