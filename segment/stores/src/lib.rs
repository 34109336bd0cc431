//! # ferroflake-segment-stores
//!
//! Segment stores on servers, and the store addresses every segment tool takes:
//!
//! | address | store |
//! |---|---|
//! | none | the embedded SQLite file, `segments.db` in `/var/lib/ferroflake` (root) or `~/.local/state/ferroflake` |
//! | `/abs/file.db`, `sqlite:///abs/file.db` | a SQLite file |
//! | `postgres://user@host:port/db[?table=leaf_alloc]` | Leaf's table on PostgreSQL |
//! | `mysql://user[:pw]@host:port/db[?table=leaf_alloc]` | Leaf's table on MySQL or MariaDB |
//! | `redis://host:port[/db][?prefix=segment]` | a hash per key in Redis |
//!
//! Every store passes `ferroflake_segment::conformance` against a real server (see
//! `tests/`).
#![warn(missing_docs)]

mod address;
#[cfg(feature = "mysql")]
mod mysql;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "redis")]
mod redis;
mod sql;

use std::sync::Arc;

pub use address::{redact, StoreAddress, DEFAULT_TABLE};
use ferroflake_segment::host_record::HostRecorded;
use ferroflake_segment::{SegmentError, SegmentStore, SqliteStore};
#[cfg(feature = "mysql")]
pub use mysql::MysqlStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresStore;
#[cfg(feature = "redis")]
pub use redis::RedisStore;

/// Opens the store at `address`, or the embedded SQLite default for `None`, with this
/// host's record of the ranges it takes around it
/// ([`HostRecorded`](ferroflake_segment::host_record)).
///
/// # Errors
/// [`SegmentError::InvalidConfig`] for an address that cannot work or names a store this
/// build leaves out; [`SegmentError::Unavailable`] if the store cannot be reached, or this
/// host's record cannot be kept.
pub fn open(address: Option<&str>) -> Result<Arc<dyn SegmentStore>, SegmentError> {
    let address = match address {
        Some(a) => StoreAddress::parse(a)?,
        None => {
            let store = SqliteStore::open_default()?;
            let identity = sqlite_identity(store.path());
            return recorded(Arc::new(store), &identity);
        }
    };
    open_address(&address)
}

/// Opens a parsed address, as [`open`] does.
///
/// # Errors
/// As [`open`].
pub fn open_address(address: &StoreAddress) -> Result<Arc<dyn SegmentStore>, SegmentError> {
    let store = open_bare(address)?;
    let identity = match address {
        StoreAddress::Sqlite { path } => sqlite_identity(path),
        other => other.to_string(),
    };
    recorded(store, &identity)
}

/// The store alone, without this host's record.
fn open_bare(address: &StoreAddress) -> Result<Arc<dyn SegmentStore>, SegmentError> {
    #[allow(unreachable_patterns)] // with every store feature on
    match address {
        StoreAddress::Sqlite { path } => Ok(Arc::new(SqliteStore::open(path)?)),
        #[cfg(feature = "postgres")]
        StoreAddress::Postgres { url, table } => Ok(Arc::new(PostgresStore::connect(url, table)?)),
        #[cfg(feature = "mysql")]
        StoreAddress::Mysql { url, table } => Ok(Arc::new(MysqlStore::connect(url, table)?)),
        #[cfg(feature = "redis")]
        StoreAddress::Redis { url, prefix } => Ok(Arc::new(RedisStore::connect(url, prefix)?)),
        other => Err(SegmentError::InvalidConfig {
            detail: format!("{other}: this build leaves that store out (enable its feature)"),
        }),
    }
}

fn recorded(
    store: Arc<dyn SegmentStore>,
    identity: &str,
) -> Result<Arc<dyn SegmentStore>, SegmentError> {
    Ok(Arc::new(HostRecorded::new(store, identity)?))
}

/// A SQLite file's identity: its path with every link resolved (it exists once opened).
fn sqlite_identity(path: &std::path::Path) -> String {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    format!("sqlite://{}", real.display())
}
