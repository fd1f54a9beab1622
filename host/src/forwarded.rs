//! The client's address behind the operator's own proxies (contract §9 "Hardening",
//! `WEIR_TRUSTED_PROXIES`): for a connection from a trusted address, the right-most address
//! of `X-Forwarded-For` (or, without it, of `Forwarded`'s `for=`) that is not itself
//! trusted; from any other address those headers are ignored — anyone can write them.
//! Every per-address rule counts this address, so one client sending slowly behind a load
//! balancer does not stand for every other client behind it.

use std::net::IpAddr;

use http::HeaderMap;
use ipnet::IpNet;

/// The address a request's per-address rules count (the listener puts it in the
/// request's extensions beside `web::Peer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ClientAddr(pub IpAddr);

/// The client's address of a request from `peer` with `headers`, `trusted` being the
/// proxies whose forwarding headers are believed.
pub(crate) fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let peer = canonical(peer);
    let is_trusted = |addr: &IpAddr| trusted.iter().any(|net| net.contains(addr));
    if !is_trusted(&peer) {
        return peer;
    }
    let hops = forwarded_for(headers);
    // From the right: each hop was written by the one after it; the first that is not a
    // trusted proxy is the client. A hop that is not an address (`unknown`, an obfuscated
    // name) ends the walk: the proxy that wrote it is the last address known.
    let mut client = peer;
    for hop in hops.iter().rev() {
        match hop {
            Some(addr) if is_trusted(addr) => client = *addr,
            Some(addr) => return *addr,
            None => return client,
        }
    }
    client
}

/// The addresses of `X-Forwarded-For`, or else of `Forwarded`'s `for=`, in order (`None`
/// for a hop that is not an address).
fn forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let values = |name: &str| -> Vec<String> {
        headers.get_all(name).iter().filter_map(|v| v.to_str().ok()).map(str::to_owned).collect()
    };
    let xff = values("x-forwarded-for");
    if !xff.is_empty() {
        return xff.iter().flat_map(|v| v.split(',')).map(|hop| address(hop.trim())).collect();
    }
    values("forwarded")
        .iter()
        .flat_map(|v| v.split(','))
        .filter_map(|element| {
            element.split(';').find_map(|pair| {
                let (name, value) = pair.trim().split_once('=')?;
                name.trim().eq_ignore_ascii_case("for").then(|| address(value.trim().trim_matches('"')))
            })
        })
        .collect()
}

/// An address as a hop writes it: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1` or
/// `[2001:db8::1]:4711`.
fn address(hop: &str) -> Option<IpAddr> {
    if let Ok(addr) = hop.parse::<IpAddr>() {
        return Some(canonical(addr));
    }
    if let Ok(socket) = hop.parse::<std::net::SocketAddr>() {
        return Some(canonical(socket.ip()));
    }
    hop.strip_prefix('[').and_then(|rest| rest.split_once(']')).and_then(|(inner, _)| inner.parse().ok())
}

/// An IPv4 address mapped into IPv6 as the IPv4 address it is.
fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, value.parse().unwrap());
        }
        map
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn from_a_trusted_proxy_the_right_most_untrusted_hop_is_the_client() {
        let trusted: Vec<IpNet> = vec!["10.0.0.0/8".parse().unwrap()];
        let chain = headers(&[("x-forwarded-for", "203.0.113.9, 198.51.100.7, 10.0.0.3")]);
        assert_eq!(client_address(ip("10.0.0.2"), &chain, &trusted), ip("198.51.100.7"));
        // Two header lines read as one list.
        let split = headers(&[("x-forwarded-for", "203.0.113.9"), ("x-forwarded-for", "10.1.2.3")]);
        assert_eq!(client_address(ip("10.0.0.2"), &split, &trusted), ip("203.0.113.9"));
        let forwarded = headers(&[("forwarded", r#"for=192.0.2.60;proto=http, for="[2001:db8::7]:4711""#)]);
        assert_eq!(client_address(ip("10.0.0.2"), &forwarded, &trusted), ip("2001:db8::7"));
        let ported = headers(&[("x-forwarded-for", "192.0.2.61:5555")]);
        assert_eq!(client_address(ip("10.0.0.2"), &ported, &trusted), ip("192.0.2.61"));
    }

    #[test]
    fn from_anyone_else_the_headers_are_ignored() {
        let trusted: Vec<IpNet> = vec!["10.0.0.0/8".parse().unwrap()];
        let forged = headers(&[("x-forwarded-for", "203.0.113.9")]);
        assert_eq!(client_address(ip("198.51.100.1"), &forged, &trusted), ip("198.51.100.1"));
        assert_eq!(client_address(ip("10.0.0.2"), &forged, &[]), ip("10.0.0.2"), "no proxy trusted by default");
    }

    #[test]
    fn a_hop_that_is_no_address_or_only_proxies_leave_the_last_proxy_known() {
        let trusted: Vec<IpNet> = vec!["10.0.0.0/8".parse().unwrap()];
        let unknown = headers(&[("x-forwarded-for", "unknown, 10.0.0.5")]);
        assert_eq!(client_address(ip("10.0.0.2"), &unknown, &trusted), ip("10.0.0.5"));
        let proxies = headers(&[("x-forwarded-for", "10.0.0.9, 10.0.0.5")]);
        assert_eq!(client_address(ip("10.0.0.2"), &proxies, &trusted), ip("10.0.0.9"));
        assert_eq!(client_address(ip("10.0.0.2"), &HeaderMap::new(), &trusted), ip("10.0.0.2"));
        let mapped = headers(&[("x-forwarded-for", "::ffff:192.0.2.1")]);
        assert_eq!(client_address(ip("::ffff:10.0.0.2"), &mapped, &trusted), ip("192.0.2.1"));
    }
}
