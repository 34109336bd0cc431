//! # ferroflake-lease-stores
//!
//! Worker-id lease registries on the coordination stores a deployment already runs:
//! etcd, Redis, ZooKeeper and PostgreSQL. Each implements
//! [`ferroflake_lease::Registry`], so a
//! [`LeasedGenerator`](ferroflake_lease::LeasedGenerator) runs on any of them, and each
//! passes the same conformance suite against a real server.
//!
//! | address | backend |
//! |---|---|
//! | `etcd://host:port[/prefix]` | [`etcd::EtcdRegistry`]: an etcd lease with keepalive per claim |
//! | `redis://host:port[/db][?prefix=NAME]` | [`redis::RedisRegistry`]: `SET NX PX` + token-checked scripts |
//! | `zk://host:port[/chroot]` | [`zookeeper::ZooKeeperRegistry`]: ephemeral claim + persistent mark znodes |
//! | `postgres://user@host:port/db[?table=NAME]` | [`postgres::PostgresRegistry`]: one row per node id |
//! | `ferroflake+http://host:port[,host:port...]/` | [`RemoteRegistry`](ferroflake_remote::RemoteRegistry) (feature `remote`): a ferroflake service's own registry, over HTTP, with failover |
//!
//! Every backend fails closed: [`connect`] gives [`LeaseError::Unavailable`] when the
//! store does not answer within a few seconds, and every later call is bounded in time,
//! so a store lost while running leaves the generator to stop at its local deadline.
//! Every backend reclaims an id after its holder's TTL plus the claimant's quarantine,
//! carries the high-water mark from holder to holder, and records a release's final mark
//! as given, so the next holder starts at once.
//!
//! Each backend reads its records and the store's clock, decides with
//! [`ferroflake_lease::protocol`], and writes only if nothing changed since the read.
//!
//! - **Renewals prove the claim** by its token and expiry
//!   ([`prove_held`](ferroflake_lease::protocol::prove_held)): a missing record is
//!   `Lost { why: Missing }`, another token `Taken`, a passed TTL `Expired`.
//! - **Lost records** (a deleted prefix, table or znode, `FLUSHALL`, a wiped restart): each
//!   namespace has a marker, made atomically when missing; a missing marker starts a floor
//!   of max_ttl + quarantine on the store's clock (etcd: an etcd lease), and claims report
//!   the rest in [`Grant::floor_wait`](ferroflake_lease::Grant::floor_wait). An id below the
//!   marker's count of ids ever claimed with no record gets a floor of its own. Each
//!   namespace also keeps the widest max_ttl + quarantine any claim asked for, and floors
//!   by it, so holders with different TTLs may share one
//!   ([`widest_window`](ferroflake_lease::protocol::widest_window)).
//! - **Restores** that a store shows start a namespace floor too: a Redis restart or
//!   failover, a PostgreSQL lease table restored alone, an etcd snapshot restore (the raft
//!   index goes back), a ZooKeeper restart (a copied-back data directory takes one).
//!   Others need `ferroflake lease restored`.
//! - **Redis must not evict**: a Redis with `maxmemory` and a policy other than
//!   `noeviction` is refused ([`LeaseError::InvalidConfig`]).
//! - **Epochs** are [`next_epoch`](ferroflake_lease::protocol::next_epoch)(recorded, clock
//!   in µs): strictly increasing per id while records survive, and across lost records as
//!   long as the clock does not go back (the store's clock; the claiming host's wall clock
//!   on etcd, which has none).
//!
//! The crate README says how each store holds a claim.
//!
//! ```no_run
//! use ferroflake::{Layout, SystemClock};
//! use ferroflake_lease::{LeaseConfig, LeasedGenerator};
//!
//! let registry = ferroflake_lease_stores::connect("etcd://127.0.0.1:2379/my-service")?;
//! let generator =
//!     LeasedGenerator::start(Layout::twitter(), SystemClock, registry, LeaseConfig::default())?;
//! println!("{}", generator.next_id()?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The registries are blocking, like the trait: each owns a one-thread tokio runtime for
//! its async client. Do not call them from inside an async runtime.
//!
//! ## Features
//!
//! `etcd`, `redis`, `zookeeper`, `postgres`: one backend each; `remote`: the registry of a
//! ferroflake service; `all` (default): all five.
#![warn(missing_docs)]

use std::sync::Arc;

use ferroflake_lease::{LeaseError, Registry};

mod address;
#[cfg(any(
    feature = "etcd",
    feature = "redis",
    feature = "zookeeper",
    feature = "postgres"
))]
mod blocking;
mod deferred;
#[cfg(feature = "etcd")]
pub mod etcd;
#[cfg(any(
    feature = "etcd",
    feature = "redis",
    feature = "zookeeper",
    feature = "postgres"
))]
mod identity;
#[cfg(feature = "zookeeper")]
mod leaf_workers;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(any(feature = "etcd", feature = "redis", feature = "zookeeper"))]
mod record;
#[cfg(feature = "redis")]
pub mod redis;
mod registry_address;
#[cfg(feature = "zookeeper")]
pub mod zookeeper;

pub use address::StoreAddress;
pub use ferroflake_store_address::redact;
#[cfg(feature = "zookeeper")]
pub use leaf_workers::{leaf_workers, LeafWorker};
pub use registry_address::RegistryAddress;

/// The lease registry of the ferroflake service at `address` (`ferroflake+http://`), with
/// the `remote` feature.
///
/// # Errors
/// [`LeaseError::BadAddress`] for an address that cannot work; [`LeaseError::NotBuilt`]
/// in a build without the `remote` feature; [`LeaseError::InvalidConfig`] if its token or CA file cannot be read.
pub fn connect_service(address: &str) -> Result<Arc<dyn Registry>, LeaseError> {
    #[cfg(feature = "remote")]
    {
        Ok(Arc::new(ferroflake_remote::RemoteRegistry::open(address)?))
    }
    #[cfg(not(feature = "remote"))]
    {
        let _ = address;
        Err(LeaseError::NotBuilt {
            scheme: "ferroflake+http".into(),
            feature: "remote".into(),
        })
    }
}

/// Connects to the registry at `address` and checks that it answers (a service's
/// registry, `ferroflake+http://`, is asked nothing until its first call).
///
/// # Errors
/// [`LeaseError::BadAddress`] for an address that is not one of the forms above;
/// [`LeaseError::NotBuilt`] for a backend this build leaves out; [`LeaseError::Unavailable`] if the store cannot be reached
/// within a few seconds.
pub fn connect(address: &str) -> Result<Arc<dyn Registry>, LeaseError> {
    if registry_address::names_a_service(address) {
        return connect_service(address);
    }
    let parsed = StoreAddress::parse(address)?;
    #[allow(unreachable_patterns)]
    match parsed {
        #[cfg(feature = "etcd")]
        StoreAddress::Etcd { endpoint, prefix } => {
            Ok(Arc::new(etcd::EtcdRegistry::connect(&endpoint, &prefix)?))
        }
        #[cfg(feature = "redis")]
        StoreAddress::Redis { url, prefix } => {
            Ok(Arc::new(redis::RedisRegistry::connect(&url, &prefix)?))
        }
        #[cfg(feature = "zookeeper")]
        StoreAddress::ZooKeeper { hosts, root } => Ok(Arc::new(
            zookeeper::ZooKeeperRegistry::connect(&hosts, &root)?,
        )),
        #[cfg(feature = "postgres")]
        StoreAddress::Postgres { url, table } => {
            Ok(Arc::new(postgres::PostgresRegistry::connect(&url, &table)?))
        }
        other => {
            let (scheme, feature) = other.feature();
            Err(LeaseError::NotBuilt {
                scheme: scheme.into(),
                feature: feature.into(),
            })
        }
    }
}
