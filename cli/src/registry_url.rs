//! `--lease URL`: which registry a command leases its node id from.

use std::path::PathBuf;
use std::sync::Arc;

use ferroflake_lease::{EmbeddedRegistry, LeaseError, Registry};

/// Schemes served by ferroflake-lease-stores (the `stores` feature).
const STORE_SCHEMES: [&str; 5] = ["etcd", "redis", "zk", "postgres", "postgresql"];

/// Where a registry is, before it is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryAddress {
    /// The embedded registry in this directory.
    Embedded(PathBuf),
    /// A store address for ferroflake-lease-stores.
    Store(String),
}

impl RegistryAddress {
    /// Reads `--lease`: `file:///abs/path` or a plain path is embedded; a store scheme is a
    /// store; anything else with `://` is refused.
    pub fn parse(address: &str) -> Result<Self, LeaseError> {
        let bad = |detail: String| LeaseError::BadAddress {
            address: address.to_owned(),
            detail,
        };
        if address.is_empty() {
            return Err(bad("empty address".into()));
        }
        if let Some(path) = address.strip_prefix("file://") {
            if !path.starts_with('/') {
                return Err(bad(
                    "file:// addresses need an absolute path (file:///dir)".into()
                ));
            }
            return Ok(RegistryAddress::Embedded(PathBuf::from(path)));
        }
        match address.split_once("://") {
            Some((scheme, _)) if STORE_SCHEMES.contains(&scheme) => Ok(RegistryAddress::Store(address.to_owned())),
            Some((scheme, _)) => Err(bad(format!(
                "unknown scheme {scheme:?} (expected a path, file://, etcd://, redis://, zk:// or postgres://)"
            ))),
            None => Ok(RegistryAddress::Embedded(PathBuf::from(address))),
        }
    }

    /// How messages name this registry.
    pub fn describe(&self) -> String {
        match self {
            RegistryAddress::Embedded(dir) => format!("the embedded registry at {}", dir.display()),
            RegistryAddress::Store(url) => format!("the registry at {url}"),
        }
    }

    /// Opens the registry; fails closed if it cannot be reached.
    pub fn open(&self) -> Result<Arc<dyn Registry>, LeaseError> {
        match self {
            RegistryAddress::Embedded(dir) => Ok(Arc::new(EmbeddedRegistry::open(dir)?)),
            RegistryAddress::Store(url) => open_store(url),
        }
    }
}

#[cfg(feature = "stores")]
fn open_store(url: &str) -> Result<Arc<dyn Registry>, LeaseError> {
    ferroflake_lease_stores::connect(url)
}

#[cfg(not(feature = "stores"))]
fn open_store(url: &str) -> Result<Arc<dyn Registry>, LeaseError> {
    Err(LeaseError::BadAddress {
        address: url.to_owned(),
        detail: "this ferroflake was built without the store backends; rebuild it with \
                 `cargo install --path cli --features stores` (needs protoc: apt-get install \
                 protobuf-compiler), or use the embedded registry (a directory path)"
            .into(),
    })
}

#[cfg(test)]
mod tests {
    use super::RegistryAddress;
    use std::path::PathBuf;

    #[test]
    fn reads_paths_files_and_stores() {
        assert_eq!(
            RegistryAddress::parse("/x/y").unwrap(),
            RegistryAddress::Embedded(PathBuf::from("/x/y"))
        );
        assert_eq!(
            RegistryAddress::parse("rel").unwrap(),
            RegistryAddress::Embedded(PathBuf::from("rel"))
        );
        assert_eq!(
            RegistryAddress::parse("file:///x").unwrap(),
            RegistryAddress::Embedded(PathBuf::from("/x"))
        );
        assert_eq!(
            RegistryAddress::parse("etcd://127.0.0.1:2379/p").unwrap(),
            RegistryAddress::Store("etcd://127.0.0.1:2379/p".into())
        );
        assert!(RegistryAddress::parse("file://host/x").is_err());
        assert!(RegistryAddress::parse("ftp://x")
            .unwrap_err()
            .to_string()
            .contains("unknown scheme"));
        assert!(RegistryAddress::parse("").is_err());
    }
}
