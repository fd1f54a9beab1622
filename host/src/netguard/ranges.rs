//! Which IP addresses count as public (contract §2, URL rule).
//!
//! An address is public unless it falls in one of the special-purpose ranges below, or is
//! an IPv6 form that embeds an IPv4 address (IPv4-mapped, IPv4-translated, IPv4-compatible,
//! NAT64, 6to4)
//! whose IPv4 address is not public.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::IpNet;
#[cfg(test)]
use ipnet::{Ipv4Net, Ipv6Net};

/// IPv4 ranges that are never public.
const V4_BLOCKED: &[(u32, u8)] = &[
    (0x0000_0000, 8),  // 0.0.0.0/8 "this network"
    (0x0A00_0000, 8),  // 10.0.0.0/8 private
    (0x6440_0000, 10), // 100.64.0.0/10 shared address space (CGNAT)
    (0x7F00_0000, 8),  // 127.0.0.0/8 loopback
    (0xA9FE_0000, 16), // 169.254.0.0/16 link-local (cloud metadata lives here)
    (0xAC10_0000, 12), // 172.16.0.0/12 private
    (0xC000_0000, 24), // 192.0.0.0/24 IETF protocol assignments
    (0xC000_0200, 24), // 192.0.2.0/24 TEST-NET-1
    (0xC0A8_0000, 16), // 192.168.0.0/16 private
    (0xC612_0000, 15), // 198.18.0.0/15 benchmarking
    (0xC633_6400, 24), // 198.51.100.0/24 TEST-NET-2
    (0xCB00_7100, 24), // 203.0.113.0/24 TEST-NET-3
    (0xE000_0000, 4),  // 224.0.0.0/4 multicast
    (0xF000_0000, 4),  // 240.0.0.0/4 reserved, and 255.255.255.255 broadcast
];

/// IPv6 ranges that are never public (the embedded-IPv4 forms are handled separately).
const V6_BLOCKED: &[(u128, u8)] = &[
    (0, 128),                     // :: unspecified
    (1, 128),                     // ::1 loopback
    (0xfc00_u128 << 112, 7),      // fc00::/7 unique local
    (0xfe80_u128 << 112, 10),     // fe80::/10 link-local
    (0xff00_u128 << 112, 8),      // ff00::/8 multicast
    (0x2001_0db8_u128 << 96, 32), // 2001:db8::/32 documentation
    (0x2001_0000_u128 << 96, 32), // 2001::/32 Teredo: tunnels to an (obfuscated) IPv4 address
    (0x0100_u128 << 112, 64),     // 100::/64 discard-only
    (0xfec0_u128 << 112, 10),     // fec0::/10 deprecated site-local
];

fn in_v4(ip: Ipv4Addr, (base, len): (u32, u8)) -> bool {
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    (u32::from(ip) & mask) == base
}

fn in_v6(ip: Ipv6Addr, (base, len): (u128, u8)) -> bool {
    let mask = if len == 0 { 0 } else { u128::MAX << (128 - len) };
    (u128::from(ip) & mask) == base
}

/// The IPv4 address an IPv6 address stands for, when it embeds one: IPv4-mapped
/// (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96` and the
/// local-use `64:ff9b:1::/48`) and 6to4 (`2002:aabb:ccdd::/48`).
pub(crate) fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(ip);
    let low32 = Ipv4Addr::from(bits as u32);
    if in_v6(ip, (0xffff_u128 << 32, 96)) {
        return Some(low32);
    }
    // IPv4-translated (SIIT, RFC 2765): `::ffff:0:a.b.c.d`.
    if in_v6(ip, (0xffff_u128 << 48, 96)) {
        return Some(low32);
    }
    if in_v6(ip, (0, 96)) && bits > 1 {
        return Some(low32);
    }
    if in_v6(ip, (0x0064_ff9b_u128 << 96, 96)) {
        return Some(low32);
    }
    if in_v6(ip, (0x0064_ff9b_0001_u128 << 80, 48)) {
        return Some(low32);
    }
    if in_v6(ip, (0x2002_u128 << 112, 16)) {
        return Some(Ipv4Addr::from((bits >> 80) as u32));
    }
    None
}

/// Whether `ip` is a public address under the contract's rule.
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => !V4_BLOCKED.iter().any(|r| in_v4(v4, *r)),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_v4(v6) {
                return is_public(IpAddr::V4(v4));
            }
            !V6_BLOCKED.iter().any(|r| in_v6(v6, *r))
        }
    }
}

/// Whether `ip` is allowed as a delivery target: public, or inside an exempt range
/// (`WEIR_ALLOW_PRIVATE_TARGETS`). An IPv6 form that embeds an IPv4 address is exempt when
/// the IPv4 address is.
pub(crate) fn is_allowed(ip: IpAddr, exempt: &[IpNet]) -> bool {
    if is_public(ip) || exempt.iter().any(|n| n.contains(&ip)) {
        return true;
    }
    if let IpAddr::V6(v6) = ip
        && let Some(v4) = embedded_v4(v6)
    {
        return exempt.iter().any(|n| n.contains(&IpAddr::V4(v4)));
    }
    false
}

/// The blocked ranges, for documentation and tests.
#[cfg(test)]
pub(crate) fn blocked_ranges() -> Vec<IpNet> {
    let v4 = V4_BLOCKED
        .iter()
        .map(|(b, l)| IpNet::V4(Ipv4Net::new(Ipv4Addr::from(*b), *l).expect("static prefix length is valid")));
    let v6 = V6_BLOCKED
        .iter()
        .map(|(b, l)| IpNet::V6(Ipv6Net::new(Ipv6Addr::from(*b), *l).expect("static prefix length is valid")));
    v4.chain(v6).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn teredo_is_blocked_and_6to4_follows_its_ipv4_address() {
        for blocked in ["2001::", "2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "2001:0:4136:e378:8000:63bf:3fff:fdd2"] {
            assert!(!is_public(ip(blocked)), "{blocked} is Teredo");
        }
        // Just outside 2001::/32.
        assert!(is_public(ip("2001:1::1")));
        // 6to4 of loopback, private and metadata addresses; then of a public one.
        for blocked in ["2002:7f00:1::1", "2002:a00:1::", "2002:a9fe:a9fe::1", "2002:c0a8:101::"] {
            assert!(!is_public(ip(blocked)), "{blocked} embeds a non-public IPv4 address");
        }
        assert!(is_public(ip("2002:808:808::1")));
        assert!(is_allowed(ip("2002:7f00:1::1"), &["127.0.0.0/8".parse().unwrap()]));
    }

    #[test]
    fn every_contract_range_is_blocked_at_both_ends() {
        let cases = [
            ("0.0.0.0", "0.255.255.255"),
            ("10.0.0.0", "10.255.255.255"),
            ("100.64.0.0", "100.127.255.255"),
            ("127.0.0.0", "127.255.255.255"),
            ("169.254.0.0", "169.254.255.255"),
            ("172.16.0.0", "172.31.255.255"),
            ("192.0.0.0", "192.0.0.255"),
            ("192.0.2.0", "192.0.2.255"),
            ("192.168.0.0", "192.168.255.255"),
            ("198.18.0.0", "198.19.255.255"),
            ("198.51.100.0", "198.51.100.255"),
            ("203.0.113.0", "203.0.113.255"),
            ("224.0.0.0", "239.255.255.255"),
            ("240.0.0.0", "255.255.255.255"),
            ("::", "::"),
            ("::1", "::1"),
            ("fc00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
            ("fe80::", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
            ("ff00::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
            ("2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"),
        ];
        for (first, last) in cases {
            assert!(!is_public(ip(first)), "{first} should be blocked");
            assert!(!is_public(ip(last)), "{last} should be blocked");
        }
    }

    #[test]
    fn neighbours_of_blocked_ranges_are_public() {
        for s in [
            "1.0.0.0",
            "9.255.255.255",
            "11.0.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "126.255.255.255",
            "128.0.0.0",
            "169.253.255.255",
            "169.255.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.0.1.0",
            "192.0.3.0",
            "192.167.255.255",
            "192.169.0.0",
            "198.17.255.255",
            "198.20.0.0",
            "198.51.99.255",
            "198.51.101.0",
            "203.0.112.255",
            "203.0.114.0",
            "223.255.255.255",
            "8.8.8.8",
            "93.184.216.34",
            "2606:4700:4700::1111",
            "2001:db9::1",
            "fbff::1",
        ] {
            assert!(is_public(ip(s)), "{s} should be public");
        }
    }

    #[test]
    fn embedded_ipv4_forms_follow_the_ipv4_rule() {
        for s in [
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "::ffff:0:127.0.0.1",
            "::ffff:0:a9fe:a9fe",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a00:1",
            "64:ff9b:1::c0a8:1",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
        ] {
            assert!(!is_public(ip(s)), "{s} should be blocked");
        }
        for s in ["::ffff:8.8.8.8", "::ffff:0:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"] {
            assert!(is_public(ip(s)), "{s} should be public");
        }
    }

    #[test]
    fn exemptions_cover_exact_ranges_and_mapped_forms() {
        let exempt: Vec<IpNet> = vec!["127.0.0.0/8".parse().unwrap(), "fd00::/8".parse().unwrap()];
        assert!(is_allowed(ip("127.0.0.1"), &exempt));
        assert!(is_allowed(ip("::ffff:127.0.0.1"), &exempt));
        assert!(is_allowed(ip("fd12::1"), &exempt));
        assert!(!is_allowed(ip("10.0.0.1"), &exempt));
        assert!(!is_allowed(ip("::1"), &exempt));
        assert!(!is_allowed(ip("fc00::1"), &exempt));
        assert!(is_allowed(ip("8.8.8.8"), &[]));
    }

    #[test]
    fn blocked_ranges_are_listed() {
        let ranges = blocked_ranges();
        assert!(ranges.iter().any(|n| n.to_string() == "169.254.0.0/16"));
        assert!(ranges.iter().any(|n| n.to_string() == "fc00::/7"));
        for net in &ranges {
            assert!(!is_public(net.network()), "{net}");
        }
    }
}
