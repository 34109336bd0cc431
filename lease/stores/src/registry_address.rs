//! Registry addresses as users write them (`--lease URL` in the CLI and the service, and
//! the registry argument of the C, Python and Node faces): an embedded registry's
//! directory, or a store URL.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ferroflake_lease::{EmbeddedRegistry, LeaseConfig, LeaseError, Registry};
use ferroflake_store_address::{redact, scheme_of};

/// Schemes served by this crate's backends (each behind its cargo feature).
const STORE_SCHEMES: [&str; 5] = ["etcd", "redis", "zk", "postgres", "postgresql"];

/// Schemes of a ferroflake service's registry (the `remote` feature).
const SERVICE_SCHEMES: [&str; 2] = ["ferroflake+http", "ferroflake+https"];

/// Whether `address` names a ferroflake service (by its scheme, in any case).
pub(crate) fn names_a_service(address: &str) -> bool {
    scheme_of(address).is_some_and(|scheme| {
        SERVICE_SCHEMES
            .iter()
            .any(|s| s.eq_ignore_ascii_case(scheme))
    })
}

/// Where a registry is, before it is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryAddress {
    /// The embedded registry in its default directory, with the checks that the default
    /// needs (see [`EmbeddedRegistry::open_default`]): what a face uses when no address is
    /// given.
    Default,
    /// The embedded registry in this directory.
    Embedded(PathBuf),
    /// A store address for ferroflake-lease-stores.
    Store(String),
    /// `ferroflake+http://host:port[,host:port...]/` (or `ferroflake+https://`): the lease
    /// registry of a ferroflake service, called over HTTP on the first of its servers that
    /// answers ([`RemoteRegistry`](ferroflake_remote::RemoteRegistry), with the `remote`
    /// feature).
    Service(String),
}

impl RegistryAddress {
    /// Reads `--lease`: `file:///abs/path` or an absolute path is embedded; a store scheme
    /// is a store; `ferroflake+http://` and `ferroflake+https://` are a service. Refused: anything else with a scheme (`ftp://x`, and `mailto:x`: a
    /// `name:` prefix that looks like a scheme is not taken for a directory), relative paths
    /// (processes started in different directories would use different registries and
    /// could lease the same node id), the filesystem root, and a path that exists but is not
    /// a directory, or lies under a file.
    pub fn parse(address: &str) -> Result<Self, LeaseError> {
        let bad = |detail: String| LeaseError::BadAddress {
            address: redact(address),
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
            return Self::embedded(Path::new(path)).map_err(bad);
        }
        if let Some(scheme) = scheme_of(address) {
            if names_a_service(address) {
                // Read whole now (with the feature), as a store address is.
                #[cfg(feature = "remote")]
                ferroflake_remote::ServiceAddress::parse(address).map_err(&bad)?;
                return Ok(RegistryAddress::Service(address.to_owned()));
            }
            let rest = &address[scheme.len() + 1..];
            if STORE_SCHEMES.contains(&scheme) && rest.starts_with("//") {
                // Read whole now, so that a mistake stops the start rather than every
                // later attempt to connect.
                crate::StoreAddress::parse(address)?;
                return Ok(RegistryAddress::Store(address.to_owned()));
            }
            if STORE_SCHEMES.contains(&scheme) || scheme == "file" {
                return Err(bad(format!(
                    "a {scheme}: address is written {scheme}://... (e.g. {})",
                    if scheme == "file" {
                        "file:///dir"
                    } else {
                        "redis://127.0.0.1:6379"
                    }
                )));
            }
            return Err(bad(format!(
                "unknown scheme {scheme:?} (expected an absolute directory path, file:///dir, \
                 etcd://, redis://, zk://, postgres:// or ferroflake+http://); for a \
                 directory whose name contains a colon, give its absolute path"
            )));
        }
        Self::embedded(Path::new(address)).map_err(bad)
    }

    /// An embedded registry's directory, checked: absolute, not the root, and a directory
    /// if it exists (else creatable: no ancestor is a file).
    fn embedded(dir: &Path) -> Result<Self, String> {
        if !dir.is_absolute() {
            let example = ferroflake_store_address::meant_here(&dir.to_string_lossy());
            return Err(format!(
                "a relative path names a different registry in each working directory; \
                 give an absolute path{example}"
            ));
        }
        let resolved = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        if resolved.parent().is_none() {
            return Err(
                "the filesystem root cannot hold a registry; name a directory of its own".into(),
            );
        }
        // The nearest part of the path that exists must be a directory: name it if not.
        if let Some(existing) = dir.ancestors().find(|p| std::fs::metadata(p).is_ok()) {
            if !existing.is_dir() {
                return Err(if existing == dir {
                    "it exists and is not a directory".to_owned()
                } else {
                    format!("{} is not a directory", existing.display())
                });
            }
        }
        Ok(RegistryAddress::Embedded(dir.to_path_buf()))
    }

    /// How messages name this registry, any password hidden.
    pub fn describe(&self) -> String {
        match self {
            RegistryAddress::Default => format!(
                "the embedded registry at {}",
                EmbeddedRegistry::default_dir().display()
            ),
            RegistryAddress::Embedded(dir) => format!("the embedded registry at {}", dir.display()),
            RegistryAddress::Store(url) => format!("the registry at {}", redact(url)),
            RegistryAddress::Service(address) => {
                format!("the registry of the service at {}", redact(address))
            }
        }
    }

    /// Refuses a registry this build leaves out, without connecting to anything: for a
    /// program that reads its settings before it starts.
    ///
    /// # Errors
    /// [`LeaseError::NotBuilt`], as [`open`](Self::open) would say it.
    pub fn built(&self) -> Result<(), LeaseError> {
        let (scheme, feature) = match self {
            RegistryAddress::Default | RegistryAddress::Embedded(_) => return Ok(()),
            RegistryAddress::Service(_) => ("ferroflake+http", "remote"),
            RegistryAddress::Store(url) => crate::StoreAddress::parse(url)?.feature(),
        };
        let built = match feature {
            "etcd" => cfg!(feature = "etcd"),
            "redis" => cfg!(feature = "redis"),
            "zookeeper" => cfg!(feature = "zookeeper"),
            "postgres" => cfg!(feature = "postgres"),
            _ => cfg!(feature = "remote"),
        };
        if built {
            return Ok(());
        }
        Err(LeaseError::NotBuilt {
            scheme: scheme.into(),
            feature: feature.into(),
        })
    }

    /// Opens the registry; fails closed if it cannot be reached.
    pub fn open(&self) -> Result<Arc<dyn Registry>, LeaseError> {
        match self {
            RegistryAddress::Default => Ok(Arc::new(EmbeddedRegistry::open_default()?)),
            RegistryAddress::Embedded(dir) => Ok(Arc::new(EmbeddedRegistry::open(dir)?)),
            RegistryAddress::Store(url) => crate::connect(url),
            RegistryAddress::Service(address) => crate::connect_service(address),
        }
    }

    /// Opens the registry for a holder with `config`: as [`open`](Self::open) does,
    /// except that with a [state file](ferroflake_lease::LeaseConfig::state_file), a server
    /// that cannot be reached now is connected at the first call that finds it up, so that
    /// a restart during an outage gets as far as the file and resumes its claim there.
    /// Settings that cannot work are refused first, before a directory is made or a
    /// server connected to.
    pub fn open_for(&self, config: &LeaseConfig) -> Result<Arc<dyn Registry>, LeaseError> {
        config.validate()?;
        match (self.open(), self) {
            (Err(LeaseError::Unavailable { .. }), RegistryAddress::Store(url))
                if config.state_file.is_some() =>
            {
                let parsed = crate::StoreAddress::parse(url)?;
                Ok(Arc::new(crate::deferred::Deferred::new(
                    url,
                    parsed.name(),
                    parsed.locator(),
                )))
            }
            (opened, _) => opened,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RegistryAddress;
    use ferroflake_lease::LeaseError;
    use std::path::PathBuf;

    #[test]
    fn settings_that_cannot_work_are_refused_before_anything_opens() {
        let dir = tempfile::tempdir().unwrap();
        let registry = dir.path().join("not-yet");
        let address = RegistryAddress::Embedded(registry.clone());
        let mut config = ferroflake_lease::LeaseConfig::default();
        config.ttl = std::time::Duration::from_millis(1);
        let refused = address.open_for(&config).map(|_| ()).unwrap_err();
        assert!(
            matches!(refused, LeaseError::InvalidConfig { .. }),
            "{refused}"
        );
        assert!(!registry.exists(), "the registry directory was made");
        config.ttl = ferroflake_lease::LeaseConfig::default().ttl;
        address.open_for(&config).unwrap();
        assert!(registry.exists());
    }

    fn refused(address: &str) -> String {
        RegistryAddress::parse(address).unwrap_err().to_string()
    }

    #[test]
    fn reads_paths_files_and_stores() {
        assert_eq!(
            RegistryAddress::parse("/x/y").unwrap(),
            RegistryAddress::Embedded(PathBuf::from("/x/y"))
        );
        assert_eq!(
            RegistryAddress::parse("/x/a:b").unwrap(),
            RegistryAddress::Embedded(PathBuf::from("/x/a:b"))
        );
        assert_eq!(
            RegistryAddress::parse("file:///x").unwrap(),
            RegistryAddress::Embedded(PathBuf::from("/x"))
        );
        assert_eq!(
            RegistryAddress::parse("etcd://127.0.0.1:2379/p").unwrap(),
            RegistryAddress::Store("etcd://127.0.0.1:2379/p".into())
        );
        let service = "ferroflake+https://ids-a:8443,ids-b:8443/?token_file=/run/t";
        assert_eq!(
            RegistryAddress::parse(service).unwrap(),
            RegistryAddress::Service(service.into())
        );
        assert!(RegistryAddress::parse(service)
            .unwrap()
            .describe()
            .contains("ids-a:8443,ids-b:8443"));
        assert!(RegistryAddress::parse("file://host/x").is_err());
        assert!(refused("ftp://x").contains("unknown scheme"));
        assert!(RegistryAddress::parse("").is_err());
    }

    /// An address a store's client would refuse (a bad parameter value), or with a
    /// parameter nobody reads, is refused when read, not at every attempt to connect, and
    /// the refusal does not quote the password the address carries.
    #[cfg(all(feature = "postgres", feature = "redis"))]
    #[test]
    fn an_address_the_client_refuses_is_refused_when_read_without_its_password() {
        for address in [
            "postgres://u:SeCrEtXYZ@127.0.0.1:1/db?sslmode=bogus",
            "postgres://u:SeCrEtXYZ@127.0.0.1:1/db?connect_timeout=abc",
            "redis://:SeCrEtXYZ@127.0.0.1:1/x",
            "redis://:SeCrEtXYZ@127.0.0.1:1/0?foo=bar",
            "etcd://127.0.0.1:1?x=y",
            "zk://127.0.0.1:1/x?y=z",
        ] {
            // Refused as read, before any attempt to connect.
            let Err(e) = RegistryAddress::parse(address) else {
                panic!("{address} was accepted");
            };
            assert!(matches!(e, LeaseError::BadAddress { .. }), "{e:?}");
            let shown = e.to_string();
            assert!(!shown.contains("SeCrEtXYZ"), "{shown}");
            if address.contains("SeCrEtXYZ") {
                assert!(shown.contains("***"), "{shown}");
            }
        }
    }

    /// A service address that cannot work is refused when read, and the refusal quotes
    /// no token written into it by mistake.
    #[cfg(feature = "remote")]
    #[test]
    fn a_service_address_that_cannot_work_is_refused_when_read() {
        for address in [
            "ferroflake+http://",
            "ferroflake+http://a:1/?token=SeCrEtXYZ",
            "ferroflake+http://SeCrEtXYZ@a:1/",
            "ferroflake+http://a:1/?nope=1",
        ] {
            let Err(e) = RegistryAddress::parse(address) else {
                panic!("{address} was accepted");
            };
            assert!(matches!(e, LeaseError::BadAddress { .. }), "{e:?}");
            assert!(!e.to_string().contains("SeCrEtXYZ"), "{e}");
        }
    }

    #[test]
    fn refuses_scheme_like_prefixes_relative_paths_the_root_and_files() {
        assert!(refused("mailto:x").contains("unknown scheme \"mailto\""));
        assert!(refused("a+b.c-d:x").contains("unknown scheme"));
        assert!(refused("redis:127.0.0.1").contains("redis://"));
        assert!(refused("file:/x").contains("file:///dir"));
        assert!(refused("rel").contains("relative path"));
        assert!(refused("./rel").contains("relative path"));
        for root in ["/", "//", "/.", "/tmp/..", "file:///"] {
            assert!(refused(root).contains("filesystem root"), "{root}");
        }
        let file = tempfile::NamedTempFile::new().unwrap();
        let path = file.path().to_str().unwrap().to_owned();
        assert!(refused(&path).contains("not a directory"));
        let under = format!("{path}/leases");
        assert!(refused(&under).contains(&format!("{path} is not a directory")));
    }
}
