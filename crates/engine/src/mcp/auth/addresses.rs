//! Which addresses pipewright's own OAuth requests may reach, as rmcp's
//! discovery allows them (it keeps its policy private): public ones, and
//! private ones (an authorization server at `sso.corp`); loopback ones only
//! when the MCP server itself is on loopback; never link-local (cloud
//! instance metadata), unspecified, broadcast, multicast, documentation or
//! reserved ones. A DNS resolver applies it to what names resolve to, and
//! [`Policy::allows_url`] to IP literals, which reqwest does not resolve.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// The policy for the OAuth requests of the MCP server at one URL.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Policy {
    /// True when the MCP server's own host is a loopback one.
    loopback: bool,
}

/// What an address is, for the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Public,
    Private,
    Loopback,
    Blocked,
}

fn class_v4(ip: Ipv4Addr) -> Class {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Class::Loopback
    } else if ip.is_private() || (a == 100 && (64..=127).contains(&b)) {
        Class::Private
    } else if ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || a >= 240
    {
        Class::Blocked
    } else {
        Class::Public
    }
}

fn class(ip: IpAddr) -> Class {
    match ip {
        IpAddr::V4(v4) => class_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return class_v4(v4);
            }
            let first = v6.segments()[0];
            if v6.is_loopback() {
                Class::Loopback
            } else if first & 0xfe00 == 0xfc00 {
                Class::Private
            } else if v6.is_unspecified()
                || v6.is_multicast()
                || first & 0xffc0 == 0xfe80
                || first == 0x2001 && v6.segments()[1] == 0x0db8
            {
                Class::Blocked
            } else {
                Class::Public
            }
        }
    }
}

/// The host of `url` and the address it is, when it is an IP literal.
fn host(url: &str) -> Option<(String, Option<IpAddr>)> {
    let parsed = reqwest::Url::parse(url).ok()?;
    let host = parsed.host_str()?.to_ascii_lowercase();
    let ip = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok();
    Some((host, ip))
}

impl Policy {
    /// The policy for the MCP server at `server_url`.
    pub(crate) fn for_server(server_url: &str) -> Self {
        let loopback = match host(server_url) {
            Some((_, Some(ip))) => ip.is_loopback(),
            Some((name, None)) => name == "localhost" || name.ends_with(".localhost"),
            None => false,
        };
        Self { loopback }
    }

    fn allows(self, ip: IpAddr) -> bool {
        match class(ip) {
            Class::Public | Class::Private => true,
            Class::Loopback => self.loopback,
            Class::Blocked => false,
        }
    }

    /// True unless `url`'s host is an IP literal the policy refuses.
    pub(crate) fn allows_url(self, url: &str) -> bool {
        match host(url) {
            Some((_, Some(ip))) => self.allows(ip),
            _ => true,
        }
    }
}

impl Resolve for Policy {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = *self;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| policy.allows(a.ip()))
                .collect();
            if kept.is_empty() {
                return Err(format!(
                    "{host} resolves to no address pipewright's OAuth requests may reach"
                )
                .into());
            }
            Ok(Box::new(kept.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("8.8.8.8", true, true)]
    #[case("10.0.0.9", true, true)]
    #[case("100.64.0.1", true, true)]
    #[case("127.0.0.1", false, true)]
    #[case("169.254.169.254", false, false)]
    #[case("0.0.0.0", false, false)]
    #[case("224.0.0.1", false, false)]
    #[case("::1", false, true)]
    #[case("fe80::1", false, false)]
    #[case("fd00::1", true, true)]
    #[case("::ffff:169.254.169.254", false, false)]
    #[case("2606:4700::1111", true, true)]
    fn addresses_are_classed(#[case] ip: &str, #[case] elsewhere: bool, #[case] on_loopback: bool) {
        let ip: IpAddr = ip.parse().expect("ip");
        assert_eq!(
            Policy::for_server("https://mcp.example/mcp").allows(ip),
            elsewhere,
            "{ip}"
        );
        assert_eq!(
            Policy::for_server("http://localhost:3000/mcp").allows(ip),
            on_loopback,
            "{ip}"
        );
    }

    #[test]
    fn ip_literals_in_urls_are_checked() {
        let public = Policy::for_server("https://mcp.example/mcp");
        assert!(!public.allows_url("http://169.254.169.254/token"));
        assert!(!public.allows_url("http://127.0.0.1:8080/token"));
        assert!(public.allows_url("https://sso.corp/token"));
        assert!(
            Policy::for_server("http://127.0.0.1:9/mcp").allows_url("http://127.0.0.1:8080/token")
        );
    }
}
