//! The service's address: `ferroflake+http://HOST:PORT[,HOST:PORT...][/PREFIX]` (or
//! `ferroflake+https://`), with the parameters `token_file=PATH` (else the variable
//! [`TOKEN_VARIABLE`]), `ca_file=PATH` (HTTPS: the certificate authority to trust instead
//! of the web's) and `timeout_ms=N` (each request's bound, 2,000 by default).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// The address schemes of the service.
pub const SCHEMES: [&str; 2] = ["ferroflake+http", "ferroflake+https"];

/// Where the bearer token is read from when the address names no `token_file`.
pub const TOKEN_VARIABLE: &str = "FERROFLAKE_TOKEN";

/// Each request's bound unless the address sets `timeout_ms`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(2000);

/// The port of a server named without one: `ferroflake serve`'s default.
const DEFAULT_PORT: u16 = 8080;

/// A parsed service address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceAddress {
    /// Each server's base URL (`http://host:port/prefix`), in the address' order.
    pub(crate) bases: Vec<String>,
    pub(crate) tls: bool,
    pub(crate) token_file: Option<PathBuf>,
    pub(crate) ca_file: Option<PathBuf>,
    pub(crate) timeout: Duration,
}

impl ServiceAddress {
    /// Whether `address` names the service (by its scheme), so that a caller holding
    /// several kinds of address knows to parse it here.
    pub fn names_the_service(address: &str) -> bool {
        ferroflake_store_address::scheme_of(address)
            .is_some_and(|scheme| SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)))
    }

    /// Parses `address`.
    ///
    /// # Errors
    /// Why the address cannot work: another scheme, no server, a server without a host or
    /// with a bad port, a token written into the address (it would show wherever the
    /// address does), an unknown parameter, `ca_file` without HTTPS.
    pub fn parse(address: &str) -> Result<Self, String> {
        let scheme = ferroflake_store_address::scheme_of(address)
            .filter(|_| Self::names_the_service(address))
            .ok_or_else(|| {
                format!(
                    "not a service address: it starts {}",
                    SCHEMES.join(":// or ")
                )
            })?;
        let tls = scheme.eq_ignore_ascii_case("ferroflake+https");
        let rest = address[scheme.len()..]
            .strip_prefix("://")
            .ok_or("the scheme must be followed by ://")?;
        let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, prefix) = match before_query.find('/') {
            Some(slash) => before_query.split_at(slash),
            None => (before_query, ""),
        };
        if authority.contains('@') {
            return Err(format!(
                "a token in the address would show wherever the address does: give it in a \
                 file (token_file=PATH) or in {TOKEN_VARIABLE}"
            ));
        }
        let prefix = prefix.trim_end_matches('/');
        let web = if tls { "https" } else { "http" };
        let bases = authority
            .split(',')
            .map(|server| {
                let (host, port) = host_and_port(server)?;
                Ok(format!("{web}://{host}:{port}{prefix}"))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let mut parsed = ServiceAddress {
            bases,
            tls,
            token_file: None,
            ca_file: None,
            timeout: DEFAULT_TIMEOUT,
        };
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            match &*name {
                "token_file" => parsed.token_file = Some(PathBuf::from(&*value)),
                "ca_file" if tls => parsed.ca_file = Some(PathBuf::from(&*value)),
                "ca_file" => return Err("ca_file is for ferroflake+https:// addresses".into()),
                "timeout_ms" => {
                    let ms: u64 = value
                        .parse()
                        .ok()
                        .filter(|ms| (1..=600_000).contains(ms))
                        .ok_or("timeout_ms must be a whole number of ms from 1 to 600000")?;
                    parsed.timeout = Duration::from_millis(ms);
                }
                "token" => {
                    return Err(format!(
                        "a token in the address would show wherever the address does: give \
                         it in a file (token_file=PATH) or in {TOKEN_VARIABLE}"
                    ))
                }
                other => {
                    return Err(format!(
                        "unknown parameter {other:?}: a service address takes token_file, \
                         ca_file and timeout_ms"
                    ))
                }
            }
        }
        Ok(parsed)
    }
}

/// `host:port`, `host` (the default port) or `[v6]:port`, checked.
fn host_and_port(server: &str) -> Result<(&str, u16), String> {
    let (host, port) = if let Some(v6) = server.strip_prefix('[') {
        let (inside, after) = v6.split_once(']').ok_or("an IPv6 host needs its ]")?;
        let port = match after {
            "" => None,
            _ => Some(after.strip_prefix(':').ok_or("after ] comes :PORT")?),
        };
        (&server[..inside.len() + 2], port)
    } else {
        match server.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (server, None),
        }
    };
    if host.is_empty() || host.contains(['/', '?', '#', ' ']) {
        return Err(format!(
            "{server:?} is not a server: HOST:PORT, servers separated by commas"
        ));
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(port) => port
            .parse()
            .ok()
            .filter(|port| *port > 0)
            .ok_or_else(|| format!("{server:?}: the port must be 1 to 65535"))?,
    };
    Ok((host, port))
}

impl fmt::Display for ServiceAddress {
    /// The servers, as messages name them (an address holds no secret: the token is in a
    /// file or the environment).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.bases.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_prefix_and_parameters_are_read() {
        let a = ServiceAddress::parse(
            "ferroflake+https://ids-a:8443,[::1]:9,ids-c/api/?token_file=/run/t&ca_file=/ca.pem&timeout_ms=500",
        )
        .unwrap();
        assert_eq!(
            a.bases,
            [
                "https://ids-a:8443/api",
                "https://[::1]:9/api",
                "https://ids-c:8080/api"
            ]
        );
        assert_eq!(a.token_file, Some(PathBuf::from("/run/t")));
        assert_eq!(a.ca_file, Some(PathBuf::from("/ca.pem")));
        assert_eq!(a.timeout, Duration::from_millis(500));
        let plain = ServiceAddress::parse("FERROFLAKE+HTTP://127.0.0.1:8080").unwrap();
        assert_eq!(plain.bases, ["http://127.0.0.1:8080"]);
        assert_eq!(plain.timeout, DEFAULT_TIMEOUT);
        assert!(ServiceAddress::names_the_service("ferroflake+http://x"));
        assert!(!ServiceAddress::names_the_service("http://x"));
    }

    #[test]
    fn what_cannot_work_is_refused_with_a_reason() {
        for (address, why) in [
            ("http://a:1", "not a service address"),
            ("ferroflake+http:a:1", "://"),
            ("ferroflake+http://", "is not a server"),
            ("ferroflake+http://a:1,", "is not a server"),
            ("ferroflake+http://a:0", "port"),
            ("ferroflake+http://a:99999", "port"),
            ("ferroflake+http://a:x", "port"),
            ("ferroflake+http://t0ken@a:1", "token_file"),
            ("ferroflake+http://a:1/?token=t0ken", "token_file"),
            ("ferroflake+http://a:1/?ca_file=/c", "https"),
            ("ferroflake+http://a:1/?timeout_ms=0", "timeout_ms"),
            ("ferroflake+http://a:1/?retries=3", "unknown parameter"),
            ("ferroflake+http://[::1:1", "]"),
        ] {
            let e = ServiceAddress::parse(address).unwrap_err();
            assert!(e.contains(why), "{address}: {e}");
            assert!(!e.contains("t0ken"), "{address}: {e}");
        }
    }
}
