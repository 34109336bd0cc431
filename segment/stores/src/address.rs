//! Segment store addresses: the embedded SQLite file, `postgres://`, `mysql://` and
//! `redis://` URLs, written as the lease registries' addresses are.

use std::path::PathBuf;

use ferroflake_segment::SegmentError;
pub use ferroflake_store_address::redact;
use ferroflake_store_address::{meant_here, StoreUrl};

/// The table Leaf uses, and the default for the SQL stores.
pub const DEFAULT_TABLE: &str = "leaf_alloc";

/// A parsed segment store address.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreAddress {
    /// The embedded SQLite store: `sqlite:///abs/file.db`, an absolute path, or (no address)
    /// the per-user default file.
    Sqlite {
        /// The database file.
        path: PathBuf,
    },
    /// `postgres://user@host:port/db[?table=NAME][&accept=lost-writes]` (default table
    /// `leaf_alloc`).
    Postgres {
        /// The connection URL without `table` and `accept`.
        url: String,
        /// Table name: lowercase letters, digits and `_`.
        table: String,
        /// `accept=lost-writes`: the operator accepts a server that may lose commits it
        /// acknowledged (`fsync` off; [`PostgresStore::connect`](crate::PostgresStore::connect)
        /// refuses one otherwise).
        accept_lost_writes: bool,
    },
    /// `mysql://user[:password]@host:port/db[?table=NAME][&accept=lost-writes]` (MySQL or
    /// MariaDB; default table `leaf_alloc`).
    Mysql {
        /// The connection URL without `table` and `accept`.
        url: String,
        /// Table name: lowercase letters, digits and `_`.
        table: String,
        /// `accept=lost-writes`: the operator accepts a server that may lose commits it
        /// acknowledged (`innodb_flush_log_at_trx_commit` other than 1;
        /// [`MysqlStore::connect`](crate::MysqlStore::connect) refuses one otherwise).
        accept_lost_writes: bool,
    },
    /// `redis://host:port[/db][?prefix=NAME][&accept=lost-writes]`: one hash per key,
    /// `ferroflake:NAME:KEY` (default NAME `segment`), in database `db` (default 0).
    Redis {
        /// `redis://host:port/db`, as the client wants it.
        url: String,
        /// Key prefix, ending with `:`.
        prefix: String,
        /// `accept=lost-writes`: the operator accepts a Redis that may lose acknowledged
        /// writes ([`RedisStore::connect`](crate::RedisStore::connect) refuses one
        /// otherwise).
        accept_lost_writes: bool,
    },
    /// `ferroflake+http://host:port[,host:port...]/` (or `ferroflake+https://`): the
    /// segment store of a ferroflake service, its ranges taken over HTTP from the first of
    /// its servers that answers ([`RemoteStore`](ferroflake_remote::RemoteStore), with
    /// the `remote` feature).
    Service {
        /// The address as given (it holds no secret: the token is in a file or the
        /// environment).
        address: String,
    },
}

impl StoreAddress {
    /// Parses `address`.
    ///
    /// # Errors
    /// [`SegmentError::InvalidConfig`] saying what is wrong: a relative path (processes
    /// started in different directories would use different tables), an unknown scheme or
    /// parameter, a table name that is not a plain identifier.
    pub fn parse(address: &str) -> Result<StoreAddress, SegmentError> {
        let shown = redact(address);
        let bad = |detail: &str| SegmentError::InvalidConfig {
            detail: format!("store address {shown:?}: {detail}"),
        };
        if address.is_empty() {
            return Err(bad("empty (give an absolute path or a URL)"));
        }
        if address.starts_with('/') {
            return sqlite_path(address).map_err(bad);
        }
        if ferroflake_store_address::scheme_of(address).is_none() {
            let here = meant_here(address);
            return Err(bad(&format!(
                "a relative path names a different file in each working directory, and two \
                 files hand out the same IDs; give an absolute path{here}"
            )));
        }
        if let Some(rest) = address.strip_prefix("sqlite://") {
            // A URL's `?` and `#` begin parameters, which SQLite would take as part of the
            // file name: a different file from the one the user meant.
            if rest.contains(['?', '#']) {
                return Err(bad(
                    "sqlite:// takes no parameters (a file name with ? or # is given as a \
                     plain absolute path)",
                ));
            }
            return sqlite_path(rest).map_err(bad);
        }
        if is_service(address) {
            #[cfg(feature = "remote")]
            ferroflake_remote::ServiceAddress::parse(address).map_err(|e| bad(&e))?;
            return Ok(StoreAddress::Service {
                address: address.to_owned(),
            });
        }
        const SCHEMES: &str =
            "use an absolute path, sqlite:///file, postgres://, mysql://, redis:// or ferroflake+http://";
        // Named before the URL is read, so that `file:///x` is an unknown scheme rather
        // than a URL without a host.
        let scheme = ferroflake_store_address::scheme_of(address).unwrap_or_default();
        let known = ["postgres", "postgresql", "mysql", "redis"];
        if !known.iter().any(|k| k.eq_ignore_ascii_case(scheme)) {
            return Err(bad(&format!("unknown scheme {scheme:?}: {SCHEMES}")));
        }
        let url = StoreUrl::parse(address).map_err(|e| bad(&format!("{e}: {SCHEMES}")))?;
        match url.scheme() {
            "postgres" | "postgresql" | "mysql" => {
                url.allow_only(&[
                    "table",
                    "accept",
                    "connect_timeout",
                    "sslmode",
                    "application_name",
                ])
                .map_err(|e| bad(&e))?;
                let accept_lost_writes = accepts_lost_writes(&url).map_err(|e| bad(&e))?;
                let (plain, table) = url.sql(DEFAULT_TABLE).map_err(|e| bad(&e))?;
                Ok(if url.scheme() == "mysql" {
                    StoreAddress::Mysql {
                        url: plain,
                        table,
                        accept_lost_writes,
                    }
                } else {
                    StoreAddress::Postgres {
                        url: plain,
                        table,
                        accept_lost_writes,
                    }
                })
            }
            "redis" => {
                url.allow_only(&["prefix", "accept"]).map_err(|e| bad(&e))?;
                let accept_lost_writes = accepts_lost_writes(&url).map_err(|e| bad(&e))?;
                let (url, prefix) = url.redis("segment").map_err(|e| bad(&e))?;
                Ok(StoreAddress::Redis {
                    url,
                    prefix,
                    accept_lost_writes,
                })
            }
            other => Err(bad(&format!("unknown scheme {other:?}: {SCHEMES}"))),
        }
    }
}

impl StoreAddress {
    /// The scheme messages name the store by, and the cargo feature of this crate that
    /// carries its client (`None` for SQLite, always built).
    pub fn feature(&self) -> Option<(&'static str, &'static str)> {
        match self {
            StoreAddress::Sqlite { .. } => None,
            StoreAddress::Postgres { .. } => Some(("postgres", "postgres")),
            StoreAddress::Mysql { .. } => Some(("mysql", "mysql")),
            StoreAddress::Redis { .. } => Some(("redis", "redis")),
            StoreAddress::Service { .. } => Some(("ferroflake+http", "remote")),
        }
    }

    /// Refuses a store this build leaves out, without connecting to anything: for a
    /// program that reads its settings before it starts.
    ///
    /// # Errors
    /// [`SegmentError::NotBuilt`], as [`open`](crate::open) would say it.
    pub fn built(&self) -> Result<(), SegmentError> {
        let built = match self.feature() {
            None => true,
            Some((_, "postgres")) => cfg!(feature = "postgres"),
            Some((_, "mysql")) => cfg!(feature = "mysql"),
            Some((_, "redis")) => cfg!(feature = "redis"),
            Some(_) => cfg!(feature = "remote"),
        };
        if built {
            Ok(())
        } else {
            Err(self.not_built())
        }
    }

    /// The refusal of this store in a build that leaves it out.
    pub(crate) fn not_built(&self) -> SegmentError {
        let (scheme, feature) = self.feature().unwrap_or(("sqlite", "sqlite"));
        SegmentError::NotBuilt {
            scheme: scheme.into(),
            feature: feature.into(),
        }
    }

    /// How messages name the store at `address` (`None`: the embedded default): "the
    /// SQLite file /srv/s.db", or the address with any password hidden.
    pub fn label(address: Option<&str>) -> String {
        match address {
            None => format!(
                "the embedded SQLite file {}",
                ferroflake_segment::SqliteStore::default_path().display()
            ),
            Some(address) => match StoreAddress::parse(address) {
                Ok(StoreAddress::Sqlite { path }) => format!("the SQLite file {}", path.display()),
                _ => redact(address),
            },
        }
    }
}

impl std::fmt::Display for StoreAddress {
    /// The address as a user would write it, password hidden.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreAddress::Sqlite { path } => write!(f, "sqlite://{}", path.display()),
            StoreAddress::Postgres { url, table, .. } | StoreAddress::Mysql { url, table, .. } => {
                write!(f, "{} (table {table})", redact(url))
            }
            StoreAddress::Redis { url, prefix, .. } => {
                write!(f, "{} (prefix {prefix})", redact(url))
            }
            StoreAddress::Service { address } => write!(f, "{}", redact(address)),
        }
    }
}

/// Whether `address` names a ferroflake service (`ferroflake+http://`,
/// `ferroflake+https://`).
fn is_service(address: &str) -> bool {
    ferroflake_store_address::scheme_of(address).is_some_and(|scheme| {
        scheme.eq_ignore_ascii_case("ferroflake+http")
            || scheme.eq_ignore_ascii_case("ferroflake+https")
    })
}

/// Whether the address says `accept=lost-writes`: the one risk a store accepts by name.
fn accepts_lost_writes(url: &StoreUrl) -> Result<bool, String> {
    match url.param("accept") {
        None => Ok(false),
        Some("lost-writes") => Ok(true),
        Some(other) => Err(format!(
            "accept={other:?}: the only risk a store accepts by name is accept=lost-writes"
        )),
    }
}

/// The refusal of a server that may lose writes it acknowledged, unless the address says
/// `accept=lost-writes`: `server` names it, `why` gives the setting found, `fix` the
/// setting that makes it durable.
#[cfg(any(feature = "postgres", feature = "mysql", feature = "redis"))]
pub(crate) fn may_lose_writes(server: &str, why: &str, fix: &str) -> SegmentError {
    SegmentError::InvalidConfig {
        detail: format!(
            "this {server} may lose writes it acknowledged ({why}): after a crash it can come \
             back below IDs it handed out, and each key then stops with REWOUND until an \
             operator recovers it; {fix}, or accept that by adding accept=lost-writes to the \
             address"
        ),
    }
}

/// An absolute file path for the SQLite store.
fn sqlite_path(path: &str) -> Result<StoreAddress, &'static str> {
    if !path.starts_with('/') {
        return Err("the SQLite file needs an absolute path (sqlite:///dir/file.db)");
    }
    if path.ends_with('/') {
        return Err("the SQLite address names a directory, not a file");
    }
    Ok(StoreAddress::Sqlite {
        path: PathBuf::from(path),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(address: &str) -> bool {
        matches!(
            StoreAddress::parse(address),
            Err(SegmentError::InvalidConfig { .. })
        )
    }

    fn refused(address: &str) -> String {
        match StoreAddress::parse(address) {
            Err(e @ SegmentError::InvalidConfig { .. }) => e.to_string(),
            other => panic!("{address:?}: {other:?}"),
        }
    }

    #[test]
    fn refuses_relative_paths_and_says_which_file_they_meant() {
        let message = refused("s.db");
        assert!(message.contains("relative path"), "{message}");
        assert!(message.contains("/s.db)"), "{message}");
        assert!(refused("dir/s.db").contains("relative path"));
        assert!(refused("").contains("empty"));
        assert!(refused("sqlite://s.db").contains("absolute path"));
    }

    #[test]
    fn labels_name_the_file_or_hide_passwords() {
        assert_eq!(
            StoreAddress::label(Some("/srv/s.db")),
            "the SQLite file /srv/s.db"
        );
        let label = StoreAddress::label(Some("postgres://u:secret@h:1/d"));
        assert!(!label.contains("secret"), "{label}");
        assert!(StoreAddress::label(None).starts_with("the embedded SQLite file /"));
    }

    #[test]
    fn every_store_on_a_server_names_its_feature() {
        let features = [
            "postgres://h/d",
            "mysql://h/d",
            "redis://h",
            "ferroflake+http://h:1/",
        ]
        .map(|a| StoreAddress::parse(a).unwrap().feature().unwrap().1);
        assert_eq!(features, ["postgres", "mysql", "redis", "remote"]);
        assert_eq!(StoreAddress::parse("/s.db").unwrap().feature(), None);
    }

    #[test]
    fn parses_each_scheme() {
        assert_eq!(
            StoreAddress::parse("/srv/ids/segments.db").unwrap(),
            StoreAddress::Sqlite {
                path: "/srv/ids/segments.db".into()
            }
        );
        assert_eq!(
            StoreAddress::parse("sqlite:///srv/s.db").unwrap(),
            StoreAddress::Sqlite {
                path: "/srv/s.db".into()
            }
        );
        assert_eq!(
            StoreAddress::parse("postgres://app@db1:5432/ids?table=my_alloc").unwrap(),
            StoreAddress::Postgres {
                url: "postgres://app@db1:5432/ids".into(),
                table: "my_alloc".into(),
                accept_lost_writes: false,
            }
        );
        assert_eq!(
            StoreAddress::parse("mysql://root:pw@127.0.0.1:13306/leaf").unwrap(),
            StoreAddress::Mysql {
                url: "mysql://root:pw@127.0.0.1:13306/leaf".into(),
                table: "leaf_alloc".into(),
                accept_lost_writes: false,
            }
        );
        assert_eq!(
            StoreAddress::parse("redis://127.0.0.1:16379/2?prefix=orders").unwrap(),
            StoreAddress::Redis {
                url: "redis://127.0.0.1:16379/2".into(),
                prefix: "ferroflake:orders:".into(),
                accept_lost_writes: false,
            }
        );
        assert_eq!(
            StoreAddress::parse("redis://cache").unwrap(),
            StoreAddress::Redis {
                url: "redis://cache:6379/0".into(),
                prefix: "ferroflake:segment:".into(),
                accept_lost_writes: false,
            }
        );
        let service = "ferroflake+https://ids-a:8443,ids-b:8443/?token_file=/run/t";
        assert_eq!(
            StoreAddress::parse(service).unwrap(),
            StoreAddress::Service {
                address: service.into()
            }
        );
    }

    #[cfg(feature = "remote")]
    #[test]
    fn a_service_address_that_cannot_work_is_refused_here() {
        assert!(bad("ferroflake+http://"));
        assert!(bad("ferroflake+http://a:1/?token=t"));
        assert!(bad("ferroflake+http://a:1/?nope=1"));
    }

    #[test]
    fn a_redis_that_may_lose_writes_is_accepted_by_name_only() {
        let parsed = StoreAddress::parse("redis://cache/0?prefix=a&accept=lost-writes").unwrap();
        assert!(matches!(
            parsed,
            StoreAddress::Redis {
                accept_lost_writes: true,
                ..
            }
        ));
        assert!(StoreAddress::parse("redis://cache/0?accept=yes").is_err());
    }

    #[test]
    fn passwords_stay_out_of_messages() {
        let address = "mysql://root:s3cret@db/leaf?tabel=x";
        let message = StoreAddress::parse(address).unwrap_err().to_string();
        assert!(
            !message.contains("s3cret") && message.contains("***"),
            "{message}"
        );
        let parsed = StoreAddress::parse("postgres://app:s3cret@db/ids").unwrap();
        assert_eq!(
            parsed.to_string(),
            "postgres://app:***@db/ids (table leaf_alloc)"
        );
    }

    #[test]
    fn refuses_what_cannot_work() {
        for address in [
            "",
            "segments.db",
            "./segments.db",
            "sqlite://relative.db",
            "sqlite:///srv/",
            "sqlite:///srv/s.db?mode=ro",
            "sqlite:///srv/s.db#x",
            "ftp://host/x",
            "postgres://app@db1:5432",
            "postgres://app@db1/ids?table=Leaf",
            "postgres://app@db1/ids?table=a;drop",
            "mysql://root@db/leaf?tabel=x",
            "redis://host/x",
            "redis://host/0?prefix=a:b",
            "redis://host/0?table=x",
        ] {
            assert!(bad(address), "{address:?} should be refused");
        }
        // A scheme this reader does not know is named as such, whatever the URL holds.
        for address in ["file:///srv/s.db", "ftp://host/x", "mailto:x"] {
            assert!(refused(address).contains("unknown scheme"), "{address}");
        }
        // Schemes are case-insensitive, as in any URL.
        assert!(!bad("POSTGRES://app@db1/ids"));
    }
}
