//! Registry addresses: `etcd://`, `redis://`, `zk://` and `postgres://` URLs.

use ferroflake_lease::LeaseError;
use ferroflake_store_address::{redact, StoreUrl};

/// A parsed registry address.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreAddress {
    /// `etcd://host:port[/prefix]`: keys live under `prefix` (default `/ferroflake/lease`).
    Etcd {
        /// `http://host:port`, as the client wants it.
        endpoint: String,
        /// Key prefix, starting with `/`, without a trailing `/`.
        prefix: String,
    },
    /// `redis://host:port[/db][?prefix=NAME]`: keys are `ferroflake:NAME:...` (default
    /// NAME `lease`) in database `db` (default 0).
    Redis {
        /// `redis://host:port/db`, as the client wants it.
        url: String,
        /// Key prefix, ending with `:`.
        prefix: String,
    },
    /// `zk://host:port[/chroot]`: znodes live under `chroot` (default `/ferroflake/lease`).
    ZooKeeper {
        /// `host:port`, as the client wants it.
        hosts: String,
        /// Base path, starting with `/`, without a trailing `/`.
        root: String,
    },
    /// `postgres://user@host:port/db[?table=NAME]`: one table (default
    /// `ferroflake_leases`), created if missing.
    Postgres {
        /// The connection URL without `table`.
        url: String,
        /// Table name: lowercase letters, digits and `_`.
        table: String,
    },
}

/// What locates a server registry's records ([`Registry::locator`]): the backend, its
/// address without a password, and its namespace.
///
/// [`Registry::locator`]: ferroflake_lease::Registry::locator
pub(crate) fn locator(name: &str, address: &str, namespace: &str) -> String {
    format!("{name} {} {namespace}", redact(address))
}

impl StoreAddress {
    /// The [`locator`] of the registry at this address.
    pub(crate) fn locator(&self) -> String {
        match self {
            StoreAddress::Etcd { endpoint, prefix } => locator("etcd", endpoint, prefix),
            StoreAddress::Redis { url, prefix } => locator("redis", url, prefix),
            StoreAddress::ZooKeeper { hosts, root } => locator("zookeeper", hosts, root),
            StoreAddress::Postgres { url, table } => locator("postgres", url, table),
        }
    }

    /// The backend's name, as its registry's [`Registry::name`](ferroflake_lease::Registry::name)
    /// gives it: "etcd", "redis", "zookeeper" or "postgres".
    pub fn name(&self) -> &'static str {
        match self {
            StoreAddress::Etcd { .. } => "etcd",
            StoreAddress::Redis { .. } => "redis",
            StoreAddress::ZooKeeper { .. } => "zookeeper",
            StoreAddress::Postgres { .. } => "postgres",
        }
    }

    /// The address' scheme and the cargo feature of this crate that carries its client.
    pub fn feature(&self) -> (&'static str, &'static str) {
        match self {
            StoreAddress::Etcd { .. } => ("etcd", "etcd"),
            StoreAddress::Redis { .. } => ("redis", "redis"),
            StoreAddress::ZooKeeper { .. } => ("zk", "zookeeper"),
            StoreAddress::Postgres { .. } => ("postgres", "postgres"),
        }
    }

    /// Parses `address`.
    ///
    /// # Errors
    /// [`LeaseError::BadAddress`] saying what is wrong.
    pub fn parse(address: &str) -> Result<StoreAddress, LeaseError> {
        let bad = |detail: &str| LeaseError::BadAddress {
            address: redact(address),
            detail: detail.into(),
        };
        let url = StoreUrl::parse(address).map_err(|e| bad(&e))?;
        let (host, path) = (url.host(), url.path());
        match url.scheme() {
            "etcd" => {
                url.allow_only(&[]).map_err(|e| bad(&e))?;
                let port = url.port_or(2379);
                Ok(StoreAddress::Etcd {
                    endpoint: format!("http://{host}:{port}"),
                    prefix: tree_path(path, "/ferroflake/lease").map_err(bad)?,
                })
            }
            "zk" => {
                url.allow_only(&[]).map_err(|e| bad(&e))?;
                let port = url.port_or(2181);
                Ok(StoreAddress::ZooKeeper {
                    hosts: format!("{host}:{port}"),
                    root: tree_path(path, "/ferroflake/lease").map_err(bad)?,
                })
            }
            "redis" => {
                url.allow_only(&["prefix"]).map_err(|e| bad(&e))?;
                let (url, prefix) = url.redis("lease").map_err(|e| bad(&e))?;
                // What the client would refuse at connect is refused here, at once.
                #[cfg(feature = "redis")]
                crate::redis::client(&url)?;
                Ok(StoreAddress::Redis { url, prefix })
            }
            "postgres" | "postgresql" => {
                url.allow_only(&["table", "connect_timeout", "sslmode", "application_name"])
                    .map_err(|e| bad(&e))?;
                let (url, table) = url.sql("ferroflake_leases").map_err(|e| bad(&e))?;
                #[cfg(feature = "postgres")]
                crate::postgres::client_config(&url)?;
                Ok(StoreAddress::Postgres { url, table })
            }
            other => Err(bad(&format!(
                "unknown scheme {other:?}: use etcd://, redis://, zk:// or postgres://"
            ))),
        }
    }
}

/// A store path for etcd keys or znodes: `/a/b`, plain characters only.
fn tree_path(path: &str, default: &str) -> Result<String, &'static str> {
    if path.is_empty() {
        return Ok(default.into());
    }
    let ok = path.split('/').skip(1).all(|part| {
        !part.is_empty()
            && part != "."
            && part != ".."
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    });
    if ok {
        Ok(path.into())
    } else {
        Err("the path must be /name[/name...] of letters, digits, '_', '-' or '.'")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state file records the locator: it tells databases and namespaces apart, and holds
    /// no password.
    #[test]
    fn locators_tell_registries_apart_without_their_passwords() {
        let locator = |address: &str| StoreAddress::parse(address).unwrap().locator();
        let zero = locator("redis://:hunter2@127.0.0.1:6379/0");
        assert!(!zero.contains("hunter2"), "{zero}");
        assert_ne!(zero, locator("redis://:hunter2@127.0.0.1:6379/1"));
        assert_ne!(
            zero,
            locator("redis://:hunter2@127.0.0.1:6379/0?prefix=other")
        );
        let pg = locator("postgres://u:hunter2@127.0.0.1:5432/db?table=a");
        assert!(!pg.contains("hunter2"), "{pg}");
        assert_ne!(
            pg,
            locator("postgres://u:hunter2@127.0.0.1:5432/db?table=b")
        );
    }

    fn bad(address: &str) -> bool {
        matches!(
            StoreAddress::parse(address),
            Err(LeaseError::BadAddress { .. })
        )
    }

    #[test]
    fn parses_each_scheme() {
        assert_eq!(
            StoreAddress::parse("etcd://127.0.0.1:12379/app/ids").unwrap(),
            StoreAddress::Etcd {
                endpoint: "http://127.0.0.1:12379".into(),
                prefix: "/app/ids".into()
            }
        );
        assert_eq!(
            StoreAddress::parse("etcd://db1").unwrap(),
            StoreAddress::Etcd {
                endpoint: "http://db1:2379".into(),
                prefix: "/ferroflake/lease".into()
            }
        );
        assert_eq!(
            StoreAddress::parse("redis://127.0.0.1:16379/2?prefix=t1").unwrap(),
            StoreAddress::Redis {
                url: "redis://127.0.0.1:16379/2".into(),
                prefix: "ferroflake:t1:".into()
            }
        );
        assert_eq!(
            StoreAddress::parse("zk://127.0.0.1:12181/svc").unwrap(),
            StoreAddress::ZooKeeper {
                hosts: "127.0.0.1:12181".into(),
                root: "/svc".into()
            }
        );
        assert_eq!(
            StoreAddress::parse("postgres://postgres@127.0.0.1:15432/app?table=ids_a").unwrap(),
            StoreAddress::Postgres {
                url: "postgres://postgres@127.0.0.1:15432/app".into(),
                table: "ids_a".into()
            }
        );
    }

    #[test]
    fn rejects_what_it_cannot_use() {
        assert!(bad("http://127.0.0.1:2379"));
        assert!(bad("/var/lib/ferroflake"));
        assert!(bad("etcd://"));
        assert!(bad("etcd://h:1/a//b"));
        assert!(bad("etcd://h:1/a?x=1"));
        assert!(bad("redis://h:1/notadb"));
        assert!(bad("redis://h:1/0?prefix=a:b"));
        assert!(bad("zk://h:1/a%2Fb"));
        assert!(bad("zk://h:1/a b"));
        assert!(bad("postgres://u@h:1/db?table=Robert');DROP"));
        assert!(bad("postgres://u@h:1"));
        assert!(bad("etcd://h:99999"));
    }
}
