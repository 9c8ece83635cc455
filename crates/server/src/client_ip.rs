//! Who the client is, for per-address rate limits: the socket peer, unless
//! that peer is a configured trusted proxy, in which case the right-most
//! `X-Forwarded-For` entry that is not itself a trusted proxy. Trusting the
//! header from anyone else would let every request claim a fresh address.

use axum::http::HeaderMap;
use ipnet::IpNet;
use std::net::IpAddr;

pub fn client_ip(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let forwarded = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(",");
    forwarded
        .split(',')
        .rev()
        .filter_map(|s| s.trim().parse::<IpAddr>().ok())
        .find(|ip| !is_trusted(ip))
        .unwrap_or(peer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(xff: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Ok(v) = xff.parse() {
            h.insert("x-forwarded-for", v);
        }
        h
    }

    #[test]
    fn forwarded_for_counts_only_behind_a_trusted_proxy() {
        let proxy: IpAddr = [10, 0, 0, 1].into();
        let trusted: Vec<IpNet> = vec!["10.0.0.0/8".parse().unwrap_or_else(|_| IpNet::default())];
        let h = headers("203.0.113.9, 198.51.100.7, 10.0.0.2");
        assert_eq!(
            client_ip(proxy, &h, &trusted),
            "198.51.100.7".parse::<IpAddr>().unwrap_or(proxy)
        );
        let stranger: IpAddr = [192, 0, 2, 5].into();
        assert_eq!(
            client_ip(stranger, &h, &trusted),
            stranger,
            "an untrusted peer cannot pick its address"
        );
        assert_eq!(client_ip(proxy, &headers("garbage"), &trusted), proxy);
    }
}
